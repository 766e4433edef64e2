"""votum's record archive (spec/70): the election writes it directly or a directory is packed into it;
it unpacks to the same documents, the verifier reads it as a stream, and damage of any kind is refused
with a typed error, while a consistently re-packed forgery is still caught by the proofs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import votum
from typer.testing import CliRunner
from votum.cli import app
from votum.election import ElectionConfig, ElectionResult, run_election, verify_record
from votum.record import documents

EG = votum.Group("eg-4096")


@pytest.fixture(scope="module")
def eg14(tmp_path_factory: pytest.TempPathFactory) -> ElectionResult:
    out = tmp_path_factory.mktemp("rec") / "eg14"
    return run_election(ElectionConfig(ballots=9, contests=2, spoil_rate=0.3, seed=21, out=out))


def _json_files(root: Path) -> dict[str, object]:
    return {str(p.relative_to(root)): json.loads(p.read_text()) for p in root.rglob("*.json")}


def test_pack_unpack_is_lossless_and_the_archive_is_smaller(eg14: ElectionResult, tmp_path: Path) -> None:
    archive = tmp_path / "r.votum"
    packed = votum.record_pack(eg14.record, archive)
    files = _json_files(eg14.record)
    assert packed["frames"] == len(files) and packed["bytes"] == archive.stat().st_size
    assert verify_record(archive) == eg14.expected_counts
    back = tmp_path / "back"
    unpacked = votum.record_unpack(archive, back)
    assert unpacked == packed
    assert _json_files(back) == files  # every document, the same JSON value
    # packing the unpacked copy gives the same archive, chain value included
    again = votum.record_pack(back, tmp_path / "again.votum")
    assert again["chain"] == packed["chain"]
    assert (tmp_path / "again.votum").read_bytes() == archive.read_bytes()
    # numbers as bytes: well under the JSON directory's size
    json_bytes = sum(p.stat().st_size for p in eg14.record.rglob("*.json"))
    assert archive.stat().st_size < 0.6 * json_bytes


def test_election_writes_the_archive_directly(tmp_path: Path) -> None:
    out = tmp_path / "e.votum"
    result = run_election(
        ElectionConfig(ballots=5, contests=1, spoil_rate=0.4, seed=8, out=out, format="votum")
    )
    assert out.is_file() and result.record_bytes == out.stat().st_size
    assert verify_record(out) == result.decrypted_counts == result.expected_counts
    kinds = [k for k, _p, _t in documents(out)]
    assert kinds[:3] == ["manifest", "context", "constants"] and kinds.count("submitted_ballot") == 5
    assert kinds.count("spoiled_ballot") == result.spoiled and kinds[-2:] == ["tally", "coefficients"]
    # a second election replaces the archive; a file that is not an archive is refused untouched
    run_election(ElectionConfig(ballots=2, contests=1, spoil_rate=0.0, seed=9, out=out, format="votum"))
    assert [k for k, _p, _t in documents(out)].count("submitted_ballot") == 2
    other = tmp_path / "notes.txt"
    other.write_text("keep me")
    with pytest.raises(votum.InvalidInput, match="not a votum record archive"):
        run_election(ElectionConfig(ballots=1, out=other, format="votum"))
    assert other.read_text() == "keep me"
    with pytest.raises(votum.InvalidInput, match="format"):
        run_election(ElectionConfig(ballots=1, out=tmp_path / "x", format="xml"))


def test_damaged_archives_are_refused(eg14: ElectionResult, tmp_path: Path) -> None:
    archive = tmp_path / "r.votum"
    votum.record_pack(eg14.record, archive)
    data = archive.read_bytes()
    cases = {
        "flipped byte in a ballot": data[:5000] + bytes([data[5000] ^ 1]) + data[5001:],
        "truncated": data[: len(data) // 2],
        "no trailer": data[:-45],
        "trailing bytes": data + b"\0",
        "not an archive": b"VOTUMREX" + data[8:],
    }
    for name, damaged in cases.items():
        bad = tmp_path / f"{name}.votum"
        bad.write_bytes(damaged)
        with pytest.raises(votum.RecordFormatError):
            verify_record(bad)
        with pytest.raises(votum.RecordFormatError):
            votum.record_unpack(bad, tmp_path / f"{name}-out")
    future = tmp_path / "v2.votum"
    future.write_bytes(data[:9] + b"\x02" + data[10:])
    with pytest.raises(votum.UnsupportedVersion):
        verify_record(future)
    with pytest.raises(OSError):
        votum.RecordReader(tmp_path / "absent.votum")
    with pytest.raises(votum.RecordFormatError, match="truncated"):
        votum.record_check(tmp_path / "truncated.votum")
    assert votum.record_check(archive)["bytes"] == len(data)


def test_a_consistent_forgery_is_caught_by_the_proofs(eg14: ElectionResult, tmp_path: Path) -> None:
    """The chain says the archive is intact, not that the election is right: a ballot altered and
    re-packed gives a well-formed archive that the verifier still refuses, naming the ballot."""
    forged = tmp_path / "forged"
    votum.record_unpack(votum.record_pack(eg14.record, tmp_path / "a.votum") and tmp_path / "a.votum", forged)
    path = sorted((forged / "submitted_ballots").iterdir())[0]
    ballot = json.loads(path.read_text())
    proof = ballot["contests"][0]["ballot_selections"][0]["proof"]
    proof["proof_one_response"] = votum.eg_to_hex(
        (votum.eg_from_hex(proof["proof_one_response"]) + 1) % EG.order
    )
    path.write_text(json.dumps(ballot))
    archive = tmp_path / "forged.votum"
    votum.record_pack(forged, archive)
    with pytest.raises(votum.VerificationFailed, match=f"V-BALLOT-03 fail: .*{path.name}"):
        verify_record(archive)


def test_writer_and_reader_api(tmp_path: Path) -> None:
    path = tmp_path / "w.votum"
    w = votum.RecordWriter(path)
    w.append("manifest", "manifest.json", '{"a": 1}')
    with pytest.raises(votum.RecordFormatError, match="a second manifest"):
        w.append("manifest", "manifest.json", "{}")
    with pytest.raises(votum.RecordFormatError, match="unknown document kind"):
        w.append("ballot", "b.json", "{}")
    with pytest.raises(votum.RecordFormatError, match="not where"):
        w.append("context", "ctx.json", "{}")
    w.append("context", "context.json", json.dumps({"k": "AB" * 40}))
    summary = w.close()
    with pytest.raises(OSError, match="closed"):
        w.close()
    r = votum.RecordReader(path)
    assert r.summary is None
    items = list(r)
    assert items == [
        ("manifest", "manifest.json", '{"a":1}'),
        ("context", "context.json", json.dumps({"k": "AB" * 40}, separators=(",", ":"))),
    ]
    assert r.summary == summary and summary["frames"] == 2 and len(summary["chain"]) == 64


def test_cli_packs_unpacks_and_verifies_archives(eg14: ElectionResult, tmp_path: Path) -> None:
    runner = CliRunner()
    archive = tmp_path / "cli.votum"
    res = runner.invoke(app, ["record", "pack", str(eg14.record), str(archive)])
    assert res.exit_code == 0, res.output
    assert "documents" in res.output
    res = runner.invoke(app, ["verify", str(archive)])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["record", "unpack", str(archive), str(tmp_path / "out")])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["record", "unpack", str(archive), str(tmp_path / "out")])
    assert res.exit_code == 2 and "not empty" in res.output
    res = runner.invoke(app, ["record", "pack", str(tmp_path / "nowhere"), str(tmp_path / "x.votum")])
    assert res.exit_code == 2 and "error" in res.output
