"""A whole ElectionGuard 1.0 election in votum (votum.election), its record, and the refusals of
the record checker, the ceremony and the decryptor."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import votum
from typer.testing import CliRunner
from votum.cli import app
from votum.election import ElectionConfig, ElectionResult, run_election, verify_record

EG = votum.Group("eg-4096")


@pytest.fixture(scope="module")
def election(tmp_path_factory: pytest.TempPathFactory) -> ElectionResult:
    out = tmp_path_factory.mktemp("election") / "record"
    return run_election(ElectionConfig(ballots=12, contests=3, spoil_rate=0.3, seed=11, out=out))


def test_counts_equal_the_plaintext_votes(election: ElectionResult) -> None:
    assert election.decrypted_counts == election.expected_counts
    assert sum(election.expected_counts.values()) > 0
    assert election.cast + election.spoiled == 12 and election.spoiled > 0
    assert verify_record(election.record) == election.expected_counts
    layout = {p.name for p in election.record.iterdir()}
    assert layout >= {
        "manifest.json", "context.json", "constants.json", "guardians", "encryption_devices",
        "submitted_ballots", "spoiled_ballots", "encrypted_tally.json", "tally.json", "coefficients.json",
    }  # fmt: skip
    assert len(list((election.record / "spoiled_ballots").iterdir())) == election.spoiled


def _copy(election: ElectionResult, tmp_path: Path) -> Path:
    dst = tmp_path / "record"
    shutil.copytree(election.record, dst)
    return dst


def _edit(path: Path, change: Any) -> None:
    v = json.loads(path.read_text())
    change(v)
    path.write_text(json.dumps(v))


def _bump(hex_text: str) -> str:
    return votum.eg_to_hex((votum.eg_from_hex(hex_text) + 1) % EG.order)


def _bump_share(selection: Any) -> None:
    proof = selection["shares"][0]["proof"]
    proof["response"] = _bump(proof["response"])


def test_tampered_records_are_rejected_naming_the_check(election: ElectionResult, tmp_path: Path) -> None:
    """`verify_record` (the election's last step) runs the independent verifier and raises
    VerificationFailed naming the check that did not pass (spec/50)."""
    cases: list[tuple[str, Any, str]] = [
        ("tally.json", lambda v: v["contests"]["contest-1"]["selections"]["contest-1-selection-1"].update(
            tally=v["contests"]["contest-1"]["selections"]["contest-1-selection-1"]["tally"] + 1
        ), "V-DECRYPT-04 fail"),
        ("tally.json", lambda v: _bump_share(v["contests"]["contest-2"]["selections"]["contest-2-selection-3"]
        ), "V-DECRYPT-01 fail: .*contest-2/contest-2-selection-3"),
        ("guardians/guardian_guardian-2.json", lambda v: v["election_proofs"][1].update(
            response=_bump(v["election_proofs"][1]["response"])), "V-GUARD-02 fail: guardian \"guardian-2\""),
        ("encrypted_tally.json", lambda v: v["contests"]["contest-1"]["selections"]["contest-1-selection-2"][
            "ciphertext"].update(pad="01"), "V-TALLY-01 fail: contest-1/contest-1-selection-2"),
        ("context.json", lambda v: v.update(quorum=2), "V-PARAM-03 fail"),
        ("context.json", lambda v: v.update(crypto_base_hash=_bump(v["crypto_base_hash"])),
            "V-PARAM-03 fail: context.json: crypto_base_hash"),
    ]  # fmt: skip
    for i, (name, change, match) in enumerate(cases):
        root = _copy(election, tmp_path / str(i))
        _edit(root / name, change)
        with pytest.raises(votum.VerificationFailed, match=match):
            verify_record(root)
    # a ballot whose proof was altered
    root = _copy(election, tmp_path / "ballot")
    first = sorted((root / "submitted_ballots").glob("*.json"))[0]
    _edit(first, lambda v: v["contests"][0]["ballot_selections"][0]["proof"].update(
        proof_zero_response=_bump(v["contests"][0]["ballot_selections"][0]["proof"]["proof_zero_response"])
    ))  # fmt: skip
    with pytest.raises(votum.VerificationFailed, match=f"V-BALLOT-03 fail: .*{first.name}"):
        verify_record(root)
    # a spoiled ballot published without its decryption
    root = _copy(election, tmp_path / "spoiled")
    next((root / "spoiled_ballots").iterdir()).unlink()
    with pytest.raises(votum.VerificationFailed, match=r"V-SPOILED-01 fail: .*without its decryption"):
        verify_record(root)


def test_bad_configurations_are_refused(tmp_path: Path) -> None:
    for kwargs, match in [
        ({"quorum": 6}, "quorum"),
        ({"missing": 3}, "missing"),
        ({"ballots": 0}, "ballots"),
        ({"spoil_rate": 1.5}, "spoil"),
        ({"contests": 0}, "contest"),
    ]:
        with pytest.raises(votum.InvalidInput, match=match):
            run_election(ElectionConfig(out=tmp_path / "never", **kwargs))  # type: ignore[arg-type]
    assert not (tmp_path / "never").exists()  # refused before anything was written


def test_record_streams_in_batches_and_replaces_an_earlier_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "record"
    run_election(ElectionConfig(ballots=7, contests=1, spoil_rate=0.0, seed=3, out=out))
    assert len(list((out / "submitted_ballots").iterdir())) == 7
    # batches smaller than the election: ballots are encrypted, cast and written batch by batch
    monkeypatch.setattr("votum.election.BATCH", 2)
    second = run_election(ElectionConfig(ballots=5, contests=1, spoil_rate=0.4, seed=4, out=out))
    assert len(list((out / "submitted_ballots").iterdir())) == 5  # none of the first 7 is left
    assert second.decrypted_counts == second.expected_counts
    assert verify_record(out) == second.expected_counts
    assert second.peak_rss_mib > 0
    steps = [s.name.split(" ")[0] for s in second.steps]
    assert steps[:5] == ["key", "write", "encrypt", "cast", "write"]
    # a directory holding anything else is refused and left as it was
    other = tmp_path / "photos"
    other.mkdir()
    (other / "holiday.jpg").write_bytes(b"\xff\xd8")
    with pytest.raises(votum.InvalidInput, match="does not look like an election record"):
        run_election(ElectionConfig(ballots=1, out=other))
    assert [p.name for p in other.iterdir()] == ["holiday.jpg"]


def test_guardian_api_refusals_and_secrecy() -> None:
    a = votum.EgGuardian("a", 1, 3, 2)
    b = votum.EgGuardian("b", 2, 3, 2)
    c = votum.EgGuardian("c", 3, 3, 2)
    assert "backups_held=0" in repr(a) and "coefficient" not in repr(a)
    to_c = b.backup_for(c.public_record())
    with pytest.raises(votum.InvalidInput, match="addressed"):
        a.receive_backup(b.public_record(), to_c)
    # a backup claimed by the wrong sender does not open
    with pytest.raises(votum.VerificationFailed):
        a.receive_backup(c.public_record(), b.backup_for(a.public_record()))
    a.receive_backup(b.public_record(), b.backup_for(a.public_record()))
    assert a.backups_held == ["b"]
    # a public challenge answer is checked against the sender's commitments
    answer = c.answer_challenge(a.public_record())
    votum.eg_verify_challenge_answer(c.public_record(), answer)
    with pytest.raises(votum.VerificationFailed):
        votum.eg_verify_challenge_answer(b.public_record(), answer.replace('"c"', '"b"'))
    with pytest.raises(votum.RecordFormatError):
        a.receive_backup(b.public_record(), "{not json")
    with pytest.raises(votum.InvalidInput, match="quorum"):
        votum.EgGuardian("d", 1, 2, 3)


def test_decryptor_refuses_missing_and_unknown_shares(election: ElectionResult) -> None:
    records = [p.read_text() for p in sorted((election.record / "guardians").glob("*.json"))]
    context = votum.EgContext.from_json((election.record / "context.json").read_text())
    with pytest.raises(votum.InvalidInput, match="quorum"):
        votum.EgDecryptor(records[:2], 3, context.extended_base_hash)
    decryptor = votum.EgDecryptor(records, 3, context.extended_base_hash)
    ballot = next(
        p.read_text()
        for p in sorted((election.record / "submitted_ballots").glob("*.json"))
        if json.loads(p.read_text())["state"] == 2
    )
    target = votum.EgDecryptionTarget.from_ballot_json(ballot)
    stranger = votum.EgGuardian("stranger", 1, 5, 3)
    with pytest.raises(votum.InvalidInput, match="unknown guardian"):
        decryptor.decrypt(target, [stranger.decryption_shares(target, context.extended_base_hash)])
    # the right number of shares from unknown keys: the proofs fail against the records
    impostors = [votum.EgGuardian(f"guardian-{i}", i, 5, 3) for i in (1, 2, 3, 4, 5)]
    with pytest.raises(votum.InvalidProof):
        decryptor.decrypt(
            target, [g.decryption_shares(target, context.extended_base_hash) for g in impostors]
        )
    with pytest.raises(votum.InvalidInput, match=r"quorum is 3"):
        decryptor.decrypt(
            target, [g.decryption_shares(target, context.extended_base_hash) for g in impostors[:2]]
        )


def test_cli_runs_an_election_and_verifies_records(tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "cli-record"
    result = runner.invoke(
        app, ["election", "--ballots", "4", "--contests", "1", "--out", str(out), "--json"]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["cast"] + report["spoiled"] == 4
    assert sum(report["counts"].values()) <= 4
    assert runner.invoke(app, ["verify", str(out)]).exit_code == 0
    _edit(out / "tally.json", lambda v: v.update(object_id="other"))
    rejected = runner.invoke(app, ["verify", str(out)])
    assert rejected.exit_code == 1 and "V-DECRYPT-01" in rejected.output
    bad = runner.invoke(app, ["election", "--quorum", "9", "--out", str(tmp_path / "x")])
    assert bad.exit_code == 2 and "quorum" in bad.output


def test_submit_many_refuses_only_the_bad_ballots(election: ElectionResult) -> None:
    context = votum.EgContext.from_json((election.record / "context.json").read_text())
    manifest = votum.EgManifest.from_json((election.record / "manifest.json").read_text())
    box = votum.EgBallotBox(manifest, context.elgamal_public_key, context.extended_base_hash)
    texts = [p.read_text() for p in sorted((election.record / "submitted_ballots").glob("*.json"))]
    tampered = json.loads(texts[3])
    proof = tampered["contests"][1]["ballot_selections"][0]["proof"]
    proof["proof_one_response"] = _bump(proof["proof_one_response"])
    items = [(t, "cast") for t in texts]
    items[3] = (json.dumps(tampered), "cast")
    items.append((texts[0], "spoiled"))  # the same ballot id again, in the same batch
    outcomes = box.submit_many(items)
    assert isinstance(outcomes[3], votum.InvalidProof)
    assert isinstance(outcomes[-1], votum.DuplicateBallot)
    ok = [o for i, o in enumerate(outcomes) if i not in (3, len(items) - 1)]
    assert all(isinstance(o, tuple) for o in ok)
    assert box.counts == (len(texts) - 1, 0)
    # the refused ballot left no trace: its honest version is accepted afterwards
    again = box.submit_many([(texts[3], "cast"), (texts[3], "bogus")][:1])
    assert isinstance(again[0], tuple) and box.counts == (len(texts), 0)
    with pytest.raises(votum.InvalidInput, match="state"):
        box.submit_many([(texts[0], "bogus")])


def test_progress_bars_start_at_zero_with_their_totals(tmp_path: Path) -> None:
    """The ballots' bar and the verification's show from their first item, with the total known
    (issue 42, C.1: the ballots' bar appeared only after the first batch of 256, and the verifier's was full
    from its first batch)."""
    calls: list[tuple[str, int, int]] = []
    config = ElectionConfig(
        ballots=300, contests=1, guardians=3, quorum=2, missing=0, spoil_rate=0.0, out=tmp_path / "r"
    )
    run_election(config, lambda name, done, total: calls.append((name, done, total)))
    for name in ("ballots (encrypt, cast, write)", "verify ballots"):
        seen = [(done, total) for n, done, total in calls if n == name]
        assert seen[0] == (0, 300), (name, seen[:3])
        assert all(total == 300 for _, total in seen), name
        assert seen[-1] == (300, 300), name
        assert any(0 < done < 300 for done, _ in seen), f"{name}: no partial step"
