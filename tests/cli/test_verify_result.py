"""`votum verify` prints the result it verified (spec/50.2): contests with the manifest's names and votes, who
is elected, and the value naming the record checked, which the tests recompute from the spec's formula."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner
from votum import record_pack
from votum.cli import app
from votum.eg import manifest_from_names
from votum.election import ElectionConfig, run_election
from votum.mix import MixConfig, run_mix_election
from votum.record import LAYOUT


def verify_json(record: Path) -> dict[str, Any]:
    out = CliRunner().invoke(app, ["verify", "--json", str(record)])
    assert out.exit_code == 0, out.output
    return dict(json.loads(out.stdout))


def directory_digest(record: Path) -> str:
    """spec/50.2's digest of a record directory, from its files in archive order."""
    digest = bytes(32)
    paths: list[str] = []
    for _kind, folder, name in LAYOUT:
        if not folder:
            if (record / name).is_file():
                paths.append(name)
        elif (record / folder).is_dir():
            paths.extend(f"{folder}/{p.name}" for p in sorted((record / folder).iterdir()))
    for path in paths:
        text = (record / path).read_bytes()
        link = digest + len(path).to_bytes(4, "big") + path.encode() + hashlib.sha256(text).digest()
        digest = hashlib.sha256(link).digest()
    return digest.hex()


@pytest.fixture(scope="module")
def named_election(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("named")
    manifest = folder / "manifest.json"
    manifest.write_text(
        json.dumps(manifest_from_names(["Blue", "Green"], ["Ada Byron", "Grace Hopper", "Alan T"]))
    )
    out = folder / "record"
    run_election(ElectionConfig(ballots=9, spoil_rate=0.0, seed=5, out=out, manifest=manifest))
    return out


def test_an_electionguard_result_has_the_manifests_names_and_the_verified_counts(
    named_election: Path,
) -> None:
    shown = verify_json(named_election)
    result = shown["result"]
    (contest,) = result["contests"]
    names = [s["name"] for s in contest["selections"]]
    assert names == ["Ada Byron", "Grace Hopper", "Alan T"]
    votes = [s["votes"] for s in contest["selections"]]
    # 9 ballots cast, none spoiled, one vote allowed each: the votes and the undervotes add up to 9
    undervotes = next(n for n in contest["notes"] if "undervotes" in n)
    assert undervotes.startswith("9 ballots cast × 1 votes allowed")
    assert sum(votes) + int(undervotes.rsplit(" ", 1)[1]) == 9
    published = json.loads((named_election / "tally.json").read_text())["contests"]
    tallies = [s["tally"] for c in published.values() for s in c["selections"].values()]
    assert sorted(tallies) == sorted(votes)
    top = max(votes)
    elected = [s["name"] for s in contest["selections"] if s["elected"]]
    if votes.count(top) == 1:
        assert elected == [names[votes.index(top)]]
        assert not any(n.startswith("tie") for n in contest["notes"])
    else:
        assert elected == [] and contest["notes"][-1].startswith("tie for the last seat")
    # the digest names this directory as spec/50.2 defines it, and an archive by its own chain
    assert result["label"] == "record digest"
    assert result["digest"] == directory_digest(named_election)
    archive = named_election.parent / "record.votum"
    chain = record_pack(named_election, archive)["chain"]
    packed = verify_json(archive)["result"]
    assert packed["digest"] == chain != result["digest"]
    assert packed["contests"] == result["contests"]
    table = CliRunner().invoke(app, ["verify", str(named_election)])
    assert "Grace Hopper" in table.output and "(verified)" in table.output
    assert f"record digest {result['digest']}" in table.output.replace("\n", "")


def test_a_tampered_record_shows_its_numbers_as_not_verified(named_election: Path, tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "record"
    shutil.copytree(named_election, copy)
    tally = json.loads((copy / "tally.json").read_text())
    contest = next(iter(tally["contests"].values()))
    selection = next(iter(contest["selections"].values()))
    selection["tally"] += 1
    (copy / "tally.json").write_text(json.dumps(tally))
    out = CliRunner().invoke(app, ["verify", str(copy)])
    assert out.exit_code == 1
    # the published counts did not pass: no number is shown as verified
    assert "(verified)" not in out.output


def test_a_mix_result_marks_the_winners_and_names_the_board_head(tmp_path: Path) -> None:
    record = tmp_path / "m.vmix"
    run = run_mix_election(MixConfig(voters=30, candidates=4, rule="irv", seed=3), record=record)
    shown = verify_json(record)
    (contest,) = shown["result"]["contests"]
    elected = [i + 1 for i, s in enumerate(contest["selections"]) if s["elected"]]
    assert elected == run.outcome["winners"]
    assert shown["result"]["label"] == "board head"
    assert shown["result"]["digest"] == run.board_head.hex()
    assert any(n.startswith("exhausted per round") for n in contest["notes"])


def test_findings_are_printed_whole_at_80_columns(named_election: Path, tmp_path: Path) -> None:
    """A failing ballot's file name is never cut off (issue 42, C.4): findings go below the table, whole."""
    import shutil

    copy = tmp_path / "record"
    shutil.copytree(named_election, copy)
    ballot = sorted((copy / "submitted_ballots").iterdir())[0]
    doc = json.loads(ballot.read_text())
    doc["crypto_hash"] = doc["crypto_hash"][:-1] + ("1" if doc["crypto_hash"][-1] != "1" else "2")
    ballot.write_text(json.dumps(doc))
    out = CliRunner().invoke(app, ["verify", str(copy)], terminal_width=80)
    assert out.exit_code == 1
    lines = [line for line in out.output.splitlines() if line.startswith("V-BALLOT-02 ")]
    assert lines, out.output
    assert any(doc["object_id"] in line or ballot.name in line for line in lines), lines
    assert all("…" not in line for line in lines)


def test_the_step_tables_share_one_style(tmp_path: Path) -> None:
    """One unit and one way of printing counts across the commands (issue 42, C.10)."""
    runs = {
        "mix": ["mix", "--voters", "10", "--out", str(tmp_path / "m.vmix")],
        "sv": ["sv", "--voters", "10", "--out", str(tmp_path / "s.vsv")],
        "chvote": ["chvote", "--voters", "3", "--level", "1", "--out", str(tmp_path / "c.vchv")],
    }
    for name, args in runs.items():
        out = CliRunner().invoke(app, args, terminal_width=200)
        assert out.exit_code == 0, (name, out.output)
        assert "total ms" in out.output and "ms / voter" in out.output, name
        assert "µs" not in out.output, name
    chvote = CliRunner().invoke(app, runs["chvote"], terminal_width=200).output
    assert "tally candidate 1: " in chvote and "[" not in chvote.split("tally", 1)[1].splitlines()[0]
