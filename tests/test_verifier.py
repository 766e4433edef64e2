"""The independent verifier (spec/50): untouched records pass every check; each tampering fails the
check that covers it, named by id; garbage is an Error, never a crash or a pass."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner
from votum import record_pack
from votum.cli import app
from votum.election import ElectionConfig, ElectionResult, run_election
from votum.verifier import verify


@pytest.fixture(scope="module")
def election(tmp_path_factory: pytest.TempPathFactory) -> ElectionResult:
    out = tmp_path_factory.mktemp("verifier") / "record"
    # seed 5 gives cast and spoiled ballots in both contests
    return run_election(ElectionConfig(ballots=10, contests=2, spoil_rate=0.3, seed=5, out=out))


def _copy(election: ElectionResult, tmp_path: Path) -> Path:
    root = tmp_path / "record"
    shutil.copytree(election.record, root)
    return root


def _edit(path: Path, change: Callable[[Any], None]) -> None:
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc))


def _bump(hex_text: str) -> str:
    """Another valid-looking number of the same width."""
    last = "1" if hex_text[-1] != "1" else "2"
    return hex_text[:-1] + last


def _spoiled_ballot(root: Path) -> Path:
    for p in sorted((root / "submitted_ballots").iterdir()):
        if json.loads(p.read_text())["state"] == 2:
            return p
    raise AssertionError("the fixture has no spoiled ballot")


def _first_selection(tally: Any) -> Any:
    contest = next(iter(tally["contests"].values()))
    return next(iter(contest["selections"].values()))


def test_an_untouched_record_passes_every_check_in_both_forms(
    election: ElectionResult, tmp_path: Path
) -> None:
    report = verify(election.record)
    assert report.passed, report.not_passed()
    assert report.ballots == 10
    assert report.check("V-BALLOT-03").checked == 10
    assert report.check("V-SPOILED-02").checked == election.spoiled > 0
    assert report.intermediates["counts"] == {
        f"{c}/{s}": election.decrypted_counts.get(s, 0)
        for c, s in (k.split("/") for k in report.intermediates["counts"])
    }
    archive = tmp_path / "record.votum"
    chain = record_pack(election.record, archive)["chain"]
    packed = verify(archive)
    assert packed.passed, packed.not_passed()
    assert packed.form == "votum archive"
    # the same values, but for the digest naming each form (spec/50.2): an archive's is its chain
    assert packed.intermediates.pop("record_digest") == chain
    assert report.intermediates.pop("record_digest") != chain
    assert packed.intermediates == report.intermediates


# each tampering, and the one check it must fail (the others still pass)
def _constants(root: Path) -> None:
    _edit(root / "constants.json", lambda d: d.update(generator=_bump(d["generator"])))


def _spoiled_proof(root: Path) -> None:
    def change(b: Any) -> None:
        proof = b["contests"][0]["ballot_selections"][0]["proof"]
        proof["proof_zero_response"] = _bump(proof["proof_zero_response"])

    _edit(_spoiled_ballot(root), change)


def _contest_proof(root: Path) -> None:
    def change(b: Any) -> None:
        proof = b["contests"][0]["proof"]
        proof["response"] = _bump(proof["response"])

    _edit(_spoiled_ballot(root), change)


def _crypto_hash(root: Path) -> None:
    _edit(_spoiled_ballot(root), lambda b: b.update(crypto_hash=_bump(b["crypto_hash"])))


def _duplicate(root: Path) -> None:
    src = _spoiled_ballot(root)
    shutil.copy(src, src.with_name("submitted_ballot_zz-copy.json"))


def _code_seed(root: Path) -> None:
    _edit(_spoiled_ballot(root), lambda b: b.update(code_seed=_bump(b["code_seed"])))


def _encrypted_tally(root: Path) -> None:
    def change(t: Any) -> None:
        ct = _first_selection(t)["ciphertext"]
        ct["pad"] = _bump(ct["pad"])

    _edit(root / "encrypted_tally.json", change)


def _share_proof(root: Path) -> None:
    def change(t: Any) -> None:
        proof = _first_selection(t)["shares"][0]["proof"]
        proof["response"] = _bump(proof["response"])

    _edit(root / "tally.json", change)


def _recovery_key(root: Path) -> None:
    def change(t: Any) -> None:
        missing = next(s for s in _first_selection(t)["shares"] if s["recovered_parts"])
        part = next(iter(missing["recovered_parts"].values()))
        part["recovery_key"] = _bump(part["recovery_key"])

    _edit(root / "tally.json", change)


def _coefficients(root: Path) -> None:
    _edit(root / "coefficients.json", lambda d: d["coefficients"].update({"guardian-1": "05"}))


def _count(root: Path) -> None:
    _edit(root / "tally.json", lambda t: _first_selection(t).update(tally=_first_selection(t)["tally"] + 1))


def _no_spoiled_decryption(root: Path) -> None:
    victim = sorted((root / "spoiled_ballots").iterdir())[0]
    victim.unlink()


def _spoiled_count(root: Path) -> None:
    victim = sorted((root / "spoiled_ballots").iterdir())[0]
    _edit(victim, lambda t: _first_selection(t).update(tally=_first_selection(t)["tally"] + 1))


@pytest.mark.parametrize(
    ("tamper", "check"),
    [
        (_constants, "V-PARAM-01"),
        (_spoiled_proof, "V-BALLOT-03"),
        (_contest_proof, "V-BALLOT-04"),
        (_crypto_hash, "V-BALLOT-02"),
        (_duplicate, "V-BALLOT-05"),
        (_code_seed, "V-BALLOT-06"),
        (_encrypted_tally, "V-TALLY-01"),
        (_share_proof, "V-DECRYPT-01"),
        (_recovery_key, "V-DECRYPT-02"),
        (_coefficients, "V-DECRYPT-03"),
        (_count, "V-DECRYPT-04"),
        (_no_spoiled_decryption, "V-SPOILED-01"),
        (_spoiled_count, "V-SPOILED-02"),
    ],
)
def test_each_tampering_fails_exactly_its_check(
    election: ElectionResult, tmp_path: Path, tamper: Callable[[Path], None], check: str
) -> None:
    root = _copy(election, tmp_path)
    tamper(root)
    report = verify(root)
    assert report.not_passed() == [check], [(c.id, c.findings) for c in report.checks if c.status != "pass"]
    assert report.check(check).status == "fail"
    assert report.check(check).findings


def test_a_guardian_proof_fails_the_guardian_check(election: ElectionResult, tmp_path: Path) -> None:
    root = _copy(election, tmp_path)
    guardian = sorted((root / "guardians").iterdir())[0]

    def change(g: Any) -> None:
        g["election_proofs"][1]["response"] = _bump(g["election_proofs"][1]["response"])

    _edit(guardian, change)
    report = verify(root)
    assert report.check("V-GUARD-02").status == "fail"
    assert not report.passed


def test_a_changed_base_hash_fails_the_context_checks(election: ElectionResult, tmp_path: Path) -> None:
    root = _copy(election, tmp_path)
    _edit(root / "context.json", lambda c: c.update(crypto_base_hash=_bump(c["crypto_base_hash"])))
    report = verify(root)
    assert {"V-PARAM-03", "V-GUARD-03"} <= set(report.not_passed())


def test_garbage_is_an_error_never_a_crash_or_a_pass(election: ElectionResult, tmp_path: Path) -> None:
    root = _copy(election, tmp_path)
    victim = sorted((root / "submitted_ballots").iterdir())[0]
    victim.write_text('{"object_id": "x", "state": 1, "contests": 7}')
    report = verify(root)
    assert report.check("V-BALLOT-01").status == "error"
    assert not report.passed

    (root / "context.json").write_text("[1, 2")
    assert verify(root).check("V-PARAM-03").status == "error"

    archive = tmp_path / "record.votum"
    record_pack(election.record, archive)
    archive.write_bytes(archive.read_bytes()[:-7])
    truncated = verify(archive)
    assert truncated.check("V-RECORD-01").status == "error"
    assert not truncated.passed

    missing = verify(tmp_path / "nowhere")
    assert missing.check("V-RECORD-01").status == "error"
    assert not missing.passed


def test_cli_reports_json_and_intermediates(election: ElectionResult, tmp_path: Path) -> None:
    runner = CliRunner()
    dump = tmp_path / "dump"
    ok = runner.invoke(app, ["verify", str(election.record), "--json", "--dump-intermediates", str(dump)])
    assert ok.exit_code == 0, ok.output
    report = json.loads(ok.stdout)
    assert {c["status"] for c in report["checks"]} == {"pass"}
    assert json.loads((dump / "intermediates.json").read_text())["ballots"] == 10
    root = _copy(election, tmp_path)
    _count(root)
    bad = runner.invoke(app, ["verify", str(root)])
    assert bad.exit_code == 1
    assert "V-DECRYPT-04" in bad.output


@pytest.mark.parametrize("kind", ["mix", "sv", "chvote"])
def test_an_unreadable_board_file_raises_a_typed_error(tmp_path: Path, kind: str) -> None:
    """Issue 46: `VerificationReport.require` took the readability check to be V-RECORD-01 or V-MIX-01, so a
    split-value or CHVote record that could not be read raised StopIteration, and it told a version it does
    not read from other errors by matching the message's text. The report now names its kind's readability
    check and says, as a typed field, when the version is the reason."""
    from votum.chvote import ChvoteConfig, run_chvote
    from votum.errors import RecordFormatError, UnsupportedVersion
    from votum.mix import MixConfig, run_mix_election
    from votum.sv import SvConfig, run_sv_election

    record = tmp_path / "r.rec"
    if kind == "mix":
        run_mix_election(MixConfig(voters=3, seed=1), record=record)
    elif kind == "sv":
        run_sv_election(SvConfig(voters=3, seed=1), record=record)
    else:
        run_chvote(ChvoteConfig(voters=2, level=1, election="single"), record=record)
    data = bytearray(record.read_bytes())
    data[9] = 7  # the format version, bytes 8-9
    newer = tmp_path / "newer.rec"
    newer.write_bytes(bytes(data))
    report = verify(newer)
    assert report.unsupported_version and report.check(report.readable).status == "error"
    with pytest.raises(UnsupportedVersion):
        report.require()
    cut = tmp_path / "cut.rec"
    cut.write_bytes(record.read_bytes()[:11])
    report = verify(cut)
    assert not report.unsupported_version
    with pytest.raises(RecordFormatError) as info:
        report.require()
    assert not isinstance(info.value, UnsupportedVersion)


IVXV = Path(__file__).resolve().parent.parent / "vectors" / "ivxv"


def test_ivxv_decryption_proofs_are_verified_and_their_votes_counted(tmp_path: Path) -> None:
    """Issue 41, item 3 (spec/93, V-IVXV-01..05): Estonia's published decryption proofs pass `votum verify`,
    which prints the votes they prove; one changed proof fails with exit 1 under V-IVXV-04 (IVXV's own
    ProofChecker exits 0 whatever it finds)."""
    out = CliRunner().invoke(app, ["verify", "--json", str(IVXV / "rk2023-live")])
    assert out.exit_code == 0, out.output
    shown = json.loads(out.stdout)
    [contest] = shown["result"]["contests"]
    votes = {s["name"].split(" (")[0]: s["votes"] for s in contest["selections"]}
    assert votes == {"Vastlakukkel": 38, "Kondivurri tegemine": 12, "Liulaskmine": 10, "Hernesupp": 9}
    assert shown["result"]["label"] == "proof file SHA-256"
    copy = tmp_path / "ep2024"
    shutil.copytree(IVXV / "ep2024-test", copy)
    doc = json.loads((copy / "EP_2024-proof").read_text())
    proof = doc["proofs"][2]["proof"]
    doc["proofs"][2]["proof"] = proof[:-12] + ("A" if proof[-12] != "A" else "B") + proof[-11:]
    (copy / "EP_2024-proof").write_text(json.dumps(doc))
    report = verify(copy)
    assert report.not_passed() == ["V-IVXV-04"]
    out = CliRunner().invoke(app, ["verify", str(copy)])
    assert out.exit_code == 1 and "V-IVXV-04" in out.output
