"""`votum chvote` and `votum.chvote` (spec/92): the whole election from Python and the command line."""

from __future__ import annotations

import json
import re
from pathlib import Path

import boardfile
import pytest
from typer.testing import CliRunner
from votum.chvote import ChvoteConfig, run_chvote
from votum.cli import app
from votum.errors import InvalidInput


def test_simple_sample_counts_exactly_with_every_step_named(tmp_path: Path) -> None:
    seen: list[str] = []
    record = tmp_path / "election.vchv"
    result = run_chvote(
        ChvoteConfig(voters=20, level=1, election="simple-sample"), seen.append, record=record
    )
    assert result.exact
    assert result.verified is True and result.not_passed == []
    assert record.read_bytes()[:8] == b"VOTUMCHV"
    assert result.confirmed == 20
    # 1-of-3, 1-of-3 and 2-of-10 for two voters: 20 + 20 + 4 selections
    assert sum(result.tally) == 44
    assert result.elections == [(3, 1), (3, 1), (10, 2)]
    names = [s.name for s in result.steps]
    assert names[0] == "creating public parameters" and names[-1] == "tallying"
    assert "voting phase" in names and "mixing" in names and "decryption" in names
    assert seen == [n for n in names if n in seen] + ["writing the record"]  # progress in step order


def test_cli_json_report_and_its_record_verified_again(tmp_path: Path) -> None:
    record = tmp_path / "r.vchv"
    out = CliRunner().invoke(app, ["chvote", "--voters", "5", "--level", "1", "--out", str(record), "--json"])
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["exact"] is True and report["verified"] is True
    assert report["p_bits"] == 1024
    assert sum(report["tally"]) == 5
    again = CliRunner().invoke(app, ["verify", str(record), "--json"])
    assert again.exit_code == 0, again.output
    checks = json.loads(again.stdout)["checks"]
    assert [c["id"] for c in checks] == [f"V-CHV-{i:02d}" for i in range(1, 12)]
    assert all(c["status"] == "pass" for c in checks)
    # issue 43, item 18: the head the election reports is the head the verifier recomputes and prints,
    # what observers compare
    assert len(report["head"]) == 64
    shown = CliRunner().invoke(app, ["verify", str(record)])
    assert f"board head {report['head']}" in " ".join(shown.output.split())
    # a changed count in the result: `votum verify` fails V-CHV-09 and exits 1
    data = bytearray(record.read_bytes())
    data[-20] ^= 1
    record.write_bytes(bytes(data))
    bad = CliRunner().invoke(app, ["verify", str(record), "--json"])
    assert bad.exit_code == 1
    failed = [c["id"] for c in json.loads(bad.stdout)["checks"] if c["status"] != "pass"]
    assert failed


@pytest.mark.parametrize(
    "config",
    [
        ChvoteConfig(voters=0),
        ChvoteConfig(level=3),
        ChvoteConfig(election="GC_CE"),
        ChvoteConfig(authorities=0),
    ],
)
def test_bad_configuration_is_a_typed_error(config: ChvoteConfig) -> None:
    with pytest.raises(InvalidInput):
        run_chvote(config)


def test_cli_bad_input_exits_2() -> None:
    out = CliRunner().invoke(app, ["chvote", "--level", "7"])
    assert out.exit_code == 2
    assert "InvalidInput" in out.output


def test_code_sheets_one_per_voter_owner_only(tmp_path: Path) -> None:
    sheets = tmp_path / "sheets"
    out = CliRunner().invoke(
        app,
        [
            "chvote",
            "--voters",
            "3",
            "--level",
            "1",
            "--out",
            str(tmp_path / "r.vchv"),
            "--sheets",
            str(sheets),
        ],
    )
    assert out.exit_code == 0, out.output
    files = sorted(sheets.iterdir())
    # voters are numbered from 1, as people count them (issue 42, C.12)
    assert [f.name for f in files] == ["voter-000001.html", "voter-000002.html", "voter-000003.html"]
    for n, f in enumerate(files, start=1):
        assert f.stat().st_mode & 0o077 == 0
        html = f.read_text()
        assert f"Code sheet, voter {n}<" in html
        assert "Voting code" in html and "Confirmation code" in html and "Finalization code" in html
        assert html.count("<td>Candidate ") == 3
        # codes are printed for typing: Crockford's base 32 in groups of four, nothing that looks alike
        codes = re.findall(r"<code>([^<]+)</code>", html)
        assert len(codes) == 6
        for code in codes:
            assert re.fullmatch(r"[0-9A-HJKMNP-TV-Z]{1,4}(-[0-9A-HJKMNP-TV-Z]{1,4})*", code), code
    # every sheet's codes are its own
    assert len({f.read_text() for f in files}) == 3


@pytest.mark.parametrize("where", ["parameters", "voter-data", "ballot", "finalizations", "shuffle"])
def test_an_entry_longer_than_its_kind_is_refused_unread(tmp_path: Path, where: str) -> None:
    """Issue 43, item 9, for CHVote records: the verifier read each entry whole (up to 16 GiB) before
    any check. Each entry's length is now bounded by its kind and the parameters (the parameters by
    their own leading numbers) before it is read: a 2 GiB entry (a hole in a sparse file) is refused
    unread."""
    record = tmp_path / "small.vchv"
    run_chvote(ChvoteConfig(voters=6, level=1, election="simple-sample"), record=record)
    boardfile.assert_refused_unread(record, where, "V-CHV-01")
