"""votum's own ElectionGuard 2.x elections (spec/65.7–65.8) through the front door:
`votum election --spec 2.1` writes an egk-ec record on P-256 or the 2.x 4096-bit group and the independent
verifier passes it with the counts the voters cast. The parties' refusals are tested in
crates/votum-eg2/tests/election.rs."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner
from votum.cli import app
from votum.eg2 import Eg2Config, run_eg2_election
from votum.errors import InvalidInput
from votum.verifier import verify


def test_a_p256_election_with_guardians_missing_passes_with_its_counts(tmp_path: Path) -> None:
    out = tmp_path / "record"
    args = ["election", "--spec", "2.1", "--eg2-record", "egk-ec", "--ballots", "30", "--guardians", "4"]
    run = CliRunner().invoke(
        app, [*args, "--quorum", "2", "--missing", "2", "--spoil-rate", "0.1", "--out", str(out), "--json"]
    )
    assert run.exit_code == 0, run.output
    body = json.loads(run.output)
    assert body["verified"] is True
    assert (body["cast"], body["challenged"]) == (27, 3)
    assert len(list((out / "challenged_ballots").glob("dballot-*.json"))) == 3
    config = json.loads((out / "election_config.json").read_text())
    assert (config["number_of_guardians"], config["quorum"]) == (4, 2)
    # the record read again from disk gives the same counts, and a changed count fails its check
    report = verify(out)
    assert report.passed
    counts = report.intermediates["counts"]
    assert counts == body["counts"] and sum(counts.values()) > 0
    # the council contest is on one ward's style only: its undervotes count the ballots that hold it
    holding = report.intermediates["contest_ballots"]
    assert holding["mayor"] == 27 and 0 < holding["council"] < 27
    council = next(c for c in body["result"]["contests"] if c["contest_id"] == "council")
    assert council["notes"][0].startswith(f"{holding['council']} ballots cast × 2 votes allowed")
    tally = json.loads((out / "tally.json").read_text())
    tally["contests"][0]["selections"][0]["tally"] += 1
    (out / "tally.json").write_text(json.dumps(tally))
    assert verify(out).not_passed() == ["V-EG2-10"]


def test_guardians_in_processes_of_their_own_count_what_the_in_process_guardians_count(
    tmp_path: Path,
) -> None:
    """`--guardian-processes` (spec/65.9): each guardian a process on loopback, the coordinator holding no
    secret. The same voters (same seed) give the same counts as the guardians in one process, and the record
    passes the verifier with them; no guardian process outlives the run."""
    out = tmp_path / "apart"
    args = ["election", "--spec", "2.1", "--eg2-record", "egk-ec", "--ballots", "24", "--guardians", "3"]
    run = CliRunner().invoke(
        app,
        [
            *args,
            "--quorum",
            "2",
            "--missing",
            "1",
            "--spoil-rate",
            "0.25",
            "--out",
            str(out),
            "--json",
            "--guardian-processes",
        ],
    )
    assert run.exit_code == 0, run.output
    body = json.loads(run.output)
    assert body["verified"] is True
    assert (body["cast"], body["challenged"]) == (18, 6)
    assert any(s["name"] == "guardians: shares dealt" for s in body["steps"])
    together = run_eg2_election(
        Eg2Config(
            ballots=24,
            guardians=3,
            quorum=2,
            missing=1,
            challenge_rate=0.25,
            out=tmp_path / "together",
            record="egk-ec",
        )
    )
    assert together.counts == body["counts"] and sum(together.counts.values()) > 0
    assert verify(out).intermediates["counts"] == body["counts"]
    # this test's own children only: another pytest worker may be running guardians of its own
    mine = ["pgrep", "-P", str(os.getpid()), "-f", "votum.parties.eg2"]
    left = subprocess.run(mine, capture_output=True, text=True, check=False)
    assert left.stdout.strip() == ""


def test_guardian_processes_are_for_the_2x_election_only() -> None:
    run = CliRunner().invoke(app, ["election", "--guardian-processes", "--ballots", "2"])
    assert run.exit_code != 0 and "2.1" in run.output


def test_a_4096_bit_election_runs_from_the_api(tmp_path: Path) -> None:
    config = Eg2Config(
        ballots=4,
        guardians=3,
        quorum=2,
        missing=1,
        challenge_rate=0.25,
        group="eg2-4096",
        out=tmp_path / "r",
        record="egk-ec",
    )
    result = run_eg2_election(config)
    assert result.verification is not None and result.verification.passed
    assert (result.cast, result.challenged) == (3, 1)
    assert [s.name for s in result.steps][-1] == "verification"


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"group": "ristretto255"}, "p256 or eg2-4096"),
        ({"quorum": 6}, "quorum 6 of 5"),
        ({"missing": 3}, "fewer than the quorum"),
        ({"ballots": 0}, "at least one ballot"),
    ],
)
def test_bad_settings_are_refused_before_anything_is_written(
    tmp_path: Path, change: dict[str, object], words: str
) -> None:
    config = Eg2Config(out=tmp_path / "r", **change)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match=words):
        run_eg2_election(config)
    assert not (tmp_path / "r").exists()


def test_the_command_line_refuses_an_unknown_spec_and_a_cluster(tmp_path: Path) -> None:
    out = CliRunner().invoke(app, ["election", "--spec", "3.0", "--out", str(tmp_path / "r")])
    assert out.exit_code == 2 and "1.0 and 2.1" in out.output
    out = CliRunner().invoke(
        app, ["election", "--spec", "2.1", "--format", "votum", "--out", str(tmp_path / "r")]
    )
    assert out.exit_code == 2 and "no --scheduler or --format" in out.output


def test_challenged_ballots_show_their_write_ins_and_a_status_that_matches_their_votes(
    tmp_path: Path,
) -> None:
    """The contest data (write-ins, status) is encrypted by the device, decrypted by the guardians and opened
    with its MAC; each challenged contest's status agrees with the votes decrypted beside it."""
    config = Eg2Config(ballots=100, challenge_rate=0.25, seed=7, out=tmp_path / "r", record="egk-ec")
    result = run_eg2_election(config)
    assert result.verification is not None and result.verification.passed
    manifest = json.loads((config.out / "manifest.json").read_text())
    allowed = {c["object_id"]: c["votes_allowed"] for c in manifest["contests"]}
    statuses: dict[str, int] = {}
    write_ins = 0
    for path in sorted((config.out / "challenged_ballots").glob("dballot-*.json")):
        for contest in json.loads(path.read_text())["contests"]:
            data = contest["decrypted_contest_data"]["contest_data"]
            votes = sum(s["tally"] for s in contest["selections"]) + len(data["write_ins"])
            want = (
                "null_vote"
                if votes == 0
                else "under_vote"
                if votes < allowed[contest["contest_id"]]
                else "normal"
            )
            assert data["status"] == want, (path.name, contest["contest_id"], data)
            assert all(w.startswith("Write-in ") for w in data["write_ins"])
            statuses[want] = statuses.get(want, 0) + 1
            write_ins += len(data["write_ins"])
    assert write_ins > 0 and set(statuses) == {"normal", "null_vote", "under_vote"}, (statuses, write_ins)


def test_a_2_1_election_with_chained_codes_verifies_and_prints_its_counts(tmp_path: Path) -> None:
    """`--eg2-record 2.1` (spec/66): ElectionGuard 2.1 itself, on the 2.x 4096-bit group with simple chaining
    and pre-encrypted ballots beside the device's (spec/66.10); the verifier's V-EG21 checks pass with the
    counts the voters cast, and a changed count fails V-EG21-10."""
    out = tmp_path / "record"
    args = ["election", "--spec", "2.1", "--eg2-record", "2.1", "--chaining", "--group", "eg2-4096"]
    sizes = ["--ballots", "20", "--guardians", "3", "--quorum", "2", "--missing", "1", "--spoil-rate", "0.2"]
    run = CliRunner().invoke(app, [*args, *sizes, "--pre-encrypted", "5", "--out", str(out), "--json"])
    assert run.exit_code == 0, run.output
    body = json.loads(run.output)
    assert body["verified"] is True and (body["cast"], body["challenged"]) == (20, 5)
    parameters = json.loads((out / "parameters.json").read_text())
    assert parameters["version"] == "v2.1.0" and parameters["group"] == "Integer4096"
    devices = json.loads((out / "devices.json").read_text())
    assert devices[0]["mode"] == 1 and len(devices[0]["ballots"]) == 20
    assert devices[1]["pre_encrypted"] is True and len(devices[1]["ballots"]) == 5
    pre = [c for c in verify(out).checks if c.id in ("V-EG21-15", "V-EG21-16", "V-EG21-17", "V-EG21-18")]
    assert all(c.checked > 0 for c in pre), pre
    report = verify(out)
    assert report.passed and report.readable == "V-EG21-01"
    assert report.intermediates["counts"] == body["counts"]
    assert sum(report.intermediates["counts"].values()) > 0
    tally = json.loads((out / "tally.json").read_text())
    tally["values"][0]["t"] += 1
    (out / "tally.json").write_text(json.dumps(tally))
    assert verify(out).not_passed() == ["V-EG21-10"]
    # the same with each guardian a process of its own (spec/66.12)
    small = ["--ballots", "6", "--guardians", "3", "--quorum", "2", "--missing", "1", "--spoil-rate", "0.2"]
    processes = CliRunner().invoke(
        app, [*args[:-2], *small, "--guardian-processes", "--out", str(tmp_path / "p"), "--json"]
    )
    assert processes.exit_code == 0, processes.output
    assert json.loads(processes.output)["verified"] is True
    # pre-encrypted ballots and the reduced group are 2.1's
    refused = CliRunner().invoke(
        app,
        [
            "election",
            "--spec",
            "2.1",
            "--eg2-record",
            "egk-ec",
            "--pre-encrypted",
            "2",
            "--out",
            str(tmp_path / "q"),
        ],
    )
    assert refused.exit_code != 0 and "--eg2-record 2.1" in refused.output
    refused = CliRunner().invoke(
        app,
        [
            "election",
            "--spec",
            "2.1",
            "--eg2-record",
            "egk-ec",
            "--group",
            "eg2-3072",
            "--out",
            str(tmp_path / "r"),
        ],
    )
    assert refused.exit_code != 0 and "2.1 record only" in refused.output


def test_a_2_1_election_with_contest_data_publishes_the_write_ins_it_was_told_to(tmp_path: Path) -> None:
    """`--contest-data decrypted` (spec/66.11): every contest of the manifest gets its data field and the
    guardians' decryption of every cast ballot's; what the guardians decrypt and what the challenged ballots
    open are the write-ins and statuses the voters made, V-EG21-12 examines each, and a changed D fails it."""
    out = tmp_path / "record"
    args = ["election", "--spec", "2.1", "--eg2-record", "2.1", "--contest-data", "decrypted"]
    run = CliRunner().invoke(
        app, [*args, "--ballots", "40", "--spoil-rate", "0.1", "--out", str(out), "--json"]
    )
    assert run.exit_code == 0, run.output
    # the result lists each contest's decrypted write-ins, as the verifier read them from the record
    written = verify(out).intermediates["write_ins"]
    assert written and all(t.startswith("Write-in ") for texts in written.values() for t in texts)
    notes = {c["contest_id"]: c["notes"] for c in json.loads(run.output)["result"]["contests"]}
    for contest_id, texts in written.items():
        shown = next(n for n in notes[contest_id] if n.startswith("write-ins (decrypted contest data, "))
        assert f"{sum(texts.values()):,}):" in shown and all(repr(t) in shown for t in texts)
    manifest = json.loads((out / "manifest.json").read_text())
    assert all(c["decrypt_contest_data"] is True for c in manifest["contests"])
    assert all(c["contest_data_blocks"] == c["votes_allowed"] + 1 for c in manifest["contests"])
    tally = json.loads((out / "tally.json").read_text())
    texts = [bytes.fromhex(d["D"]) for d in tally["contest_data"]]
    assert any(b"Write-in " in d for d in texts) and all(b"normal" in d or b"_vote" in d for d in texts)
    opened = [json.loads(line) for line in (out / "challenged.jsonl").read_text().splitlines()]
    assert opened and all("data" in c for o in opened for c in o["contests"])
    report = verify(out)
    twelve = next(c for c in report.checks if c.id == "V-EG21-12")
    assert report.passed and twelve.checked == len(tally["contest_data"]) > 0
    d = tally["contest_data"][0]["D"]
    tally["contest_data"][0]["D"] = ("1" if d[0] == "0" else "0") + d[1:]
    (out / "tally.json").write_text(json.dumps(tally))
    assert verify(out).not_passed() == ["V-EG21-12"]
    # contest data is asked for in the 2.1 record, by one of three names
    refused = CliRunner().invoke(
        app,
        [
            "election",
            "--spec",
            "2.1",
            "--eg2-record",
            "egk-ec",
            "--contest-data",
            "encrypted",
            "--out",
            str(tmp_path / "q"),
        ],
    )
    assert refused.exit_code != 0 and "--eg2-record 2.1" in refused.output
    with pytest.raises(InvalidInput, match="contest data 'all'"):
        run_eg2_election(Eg2Config(record="2.1", contest_data="all", out=tmp_path / "r"))
    assert not (tmp_path / "r").exists()


def test_the_toy_parameters_make_a_test_record_only(tmp_path: Path) -> None:
    """The specification's toy parameters (q of 64 bits, spec/66.1): an election on them, with its guardians
    as processes of their own, verifies only as a test's record (`--allow-toy-parameters`, V-EG21-01 then
    a warning); `votum verify` fails it otherwise under V-EG21-01 alone; egk-ec's form is refused."""
    config = Eg2Config(
        ballots=12,
        guardians=3,
        quorum=2,
        missing=1,
        challenge_rate=0.25,
        group="eg2-toy",
        out=tmp_path / "toy",
        processes=True,
        pre_encrypted=4,
        contest_data="decrypted",
    )
    result = run_eg2_election(config)
    assert result.verification is not None and result.verification.passed
    assert result.verification.check("V-EG21-01").warnings
    assert json.loads((tmp_path / "toy" / "parameters.json").read_text())["group"] == "Toy-q64p256"
    plain = CliRunner().invoke(app, ["verify", str(tmp_path / "toy"), "--json"])
    assert plain.exit_code != 0
    failing = [c["id"] for c in json.loads(plain.stdout)["checks"] if c["status"] != "pass"]
    assert failing == ["V-EG21-01"], failing
    assert "for tests only" in plain.stdout
    allowed = CliRunner().invoke(app, ["verify", str(tmp_path / "toy"), "--allow-toy-parameters"])
    assert allowed.exit_code == 0, allowed.output
    with pytest.raises(InvalidInput, match=r"2\.1 record only"):
        run_eg2_election(Eg2Config(group="eg2-toy", record="egk-ec", out=tmp_path / "egk"))
