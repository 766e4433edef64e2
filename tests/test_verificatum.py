"""Verificatum mix-net sessions (spec/99, checks V-VMN-01..07) through votum's front doors.

`votum verify` and `votum.verifier.verify` read the stored sessions that VMN 3.1.0 wrote
(vectors/verificatum), detected from their files or named with `--format verificatum`. The tampered
copies are in crates/votum-verify/tests/vmn.rs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner
from votum.cli import app
from votum.verifier import verify

VECTORS = Path(__file__).resolve().parent.parent / "vectors" / "verificatum"


def test_a_stored_session_passes_from_the_command_line_and_the_api() -> None:
    out = CliRunner().invoke(app, ["verify", "--json", str(VECTORS / "onpe100")])
    assert out.exit_code == 0, out.output
    body = json.loads(out.output)
    statuses = {c["id"]: c["status"] for c in body["checks"]}
    assert set(statuses) == {f"V-VMN-0{i}" for i in range(1, 8)}
    assert set(statuses.values()) == {"pass"}
    report = verify(VECTORS / "modp", format="verificatum")
    assert report.passed and report.check("V-VMN-03").checked == 1
    # a shuffling session holds no decryption: those checks pass with nothing examined, and say so
    assert report.check("V-VMN-05").checked == 0
    assert "no decryption" in report.check("V-VMN-05").warnings[0][1]


def test_a_session_that_is_not_of_the_kind_named_fails_its_first_check(tmp_path: Path) -> None:
    """`--format verificatum` on a directory without protInfo.xml: V-VMN-01 says why, exit 1."""
    session = tmp_path / "session"
    shutil.copytree(VECTORS / "modp", session)
    (session / "protInfo.xml").unlink()
    report = verify(session, format="verificatum")
    assert not report.passed and report.check("V-VMN-01").status == "error"
    out = CliRunner().invoke(app, ["verify", "--format", "verificatum", str(session)])
    assert out.exit_code == 1 and "V-VMN-01" in out.output


def test_a_reordered_output_fails_the_shuffle_check(tmp_path: Path) -> None:
    """Two ciphertexts of the ModP session's output swapped (their 70-byte leaves, after the two node
    headers): the only proof of shuffle fails, fewer valid proofs than the threshold."""
    session = tmp_path / "session"
    shutil.copytree(VECTORS / "modp", session)
    out_file = session / "dir" / "nizkp" / "default" / "ShuffledCiphertexts.bt"
    data = bytearray(out_file.read_bytes())
    leaf = 5 + 65
    first, second = data[10 : 10 + leaf], data[10 + leaf : 10 + 2 * leaf]
    data[10 : 10 + leaf], data[10 + leaf : 10 + 2 * leaf] = second, first
    out_file.write_bytes(bytes(data))
    report = verify(session)
    assert report.not_passed()[0] == "V-VMN-03"


def test_the_plaintexts_a_session_proves_are_printed_as_vmn_decodes_them() -> None:
    """Issue 41: a mixing session's plaintexts, decoded as VMN's `vmnc -plain` decodes them, are the result
    `votum verify` prints and returns; here a three-party P-224 session of width 2 written by VMN 3.1.0."""
    out = CliRunner().invoke(app, ["verify", "--json", str(VECTORS / "p224w2")])
    assert out.exit_code == 0, out.output
    shown = json.loads(out.stdout)
    [contest] = shown["result"]["contests"]
    rows = {s["name"]: s["votes"] for s in contest["selections"]}
    assert rows == {
        "Alice": 4,
        "Bob": 2,
        "Carol": 1,
        "Dave, candidato con un nombre largo": 1,
        "nulo: marcado dos veces": 1,
        "una papeleta en blanco": 1,
    }
    assert shown["result"]["label"] == "protInfo.xml SHA-256"
    text = CliRunner().invoke(app, ["verify", str(VECTORS / "p224w2")])
    assert text.exit_code == 0 and "Dave, candidato con un nombre largo" in text.output
