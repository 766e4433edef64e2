"""ElectionGuard 2.x records (spec/65, checks V-EG2-01..19) through votum's front doors.

`votum verify` and `votum.verifier.verify` read egk-ec's published record (vectors/eg2), detected from its
files or named with `--format electionguard2`. The tampered copies are in crates/votum-verify/tests/eg2.rs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner
from votum.cli import app
from votum.verifier import verify

RECORD = Path(__file__).resolve().parent.parent / "vectors" / "eg2" / "egk-ec-all-available"


def test_egk_ecs_record_passes_from_the_command_line_with_its_counts(tmp_path: Path) -> None:
    out = CliRunner().invoke(app, ["verify", "--json", "--dump-intermediates", str(tmp_path), str(RECORD)])
    assert out.exit_code == 0, out.output
    body = json.loads(out.output)
    statuses = {c["id"]: c["status"] for c in body["checks"]}
    assert set(statuses) == {f"V-EG2-{i:02d}" for i in range(1, 20)}
    assert set(statuses.values()) == {"pass"}
    values = json.loads((tmp_path / "intermediates.json").read_text())
    assert values["ballots"] == 42
    assert values["tally"]["contest1"]["selection1"] == 7
    # the result printed is the verified one: contest1's options with their counts, and the tally's digest
    result = body["result"]
    assert result["label"] == "tally.json SHA-256" and len(result["digest"]) == 64
    contest1 = next(c for c in result["contests"] if c["contest_id"] == "contest1")
    assert contest1["selections"][0]["votes"] == 7
    # contest1 is on 25 of the 33 cast ballots (its styles), and its undervotes count those
    assert contest1["notes"][0].startswith("25 ballots cast × 1 votes allowed")
    text = CliRunner().invoke(app, ["verify", str(RECORD)])
    assert text.exit_code == 0 and "tally.json SHA-256" in text.output


def test_a_changed_count_fails_and_a_directory_of_another_kind_is_an_error(tmp_path: Path) -> None:
    record = tmp_path / "record"
    shutil.copytree(RECORD, record)
    tally = json.loads((record / "tally.json").read_text())
    tally["contests"][0]["selections"][0]["tally"] += 1
    (record / "tally.json").write_text(json.dumps(tally))
    report = verify(record, format="electionguard2")
    assert report.not_passed() == ["V-EG2-10"]
    (record / "constants.json").unlink()
    out = CliRunner().invoke(app, ["verify", "--format", "electionguard2", str(record)])
    assert out.exit_code == 1 and "V-EG2-01" in out.output


def test_electionguard_rusts_key_ceremony_artifacts_pass_as_what_they_are(tmp_path: Path) -> None:
    """electionguard-rust's committed example and a run of its own command line (spec/65.10): detected from
    their files, the four checks a key ceremony's artifacts can be held to pass, and the report says the set
    holds no ballot rather than claiming an election's record. A changed guardian key fails V-EG2-02."""
    for name in ("electionguard-rust-example", "electionguard-rust-run"):
        record = RECORD.parent / name
        out = CliRunner().invoke(app, ["verify", "--json", str(record)])
        assert out.exit_code == 0, out.output
        body = json.loads(out.output)
        assert body["form"] == "electionguard-rust" and body["ballots"] == 0
        assert {c["id"]: c["status"] for c in body["checks"]} == {f"V-EG2-0{i}": "pass" for i in range(1, 5)}
    record = tmp_path / "run"
    shutil.copytree(RECORD.parent / "electionguard-rust-run", record)
    key = record / "public" / "guardian_4.public_key_canonical.bin.json"
    doc = json.loads(key.read_text())
    doc["coefficient_commitments"][0], doc["coefficient_commitments"][1] = (
        doc["coefficient_commitments"][1],
        doc["coefficient_commitments"][0],
    )
    key.write_text(json.dumps(doc))
    assert "V-EG2-02" in verify(record, format="electionguard-rust").not_passed()
