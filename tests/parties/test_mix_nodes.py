"""A mixnet election between separate processes (spec/91.9): every authority and the voters' client in a
process of its own, over the channels; the controller is the board. Honest runs decrypt exactly what was cast
and their records pass the independent verifier with every authority's signature checked; a party that answers
unsigned or dies fails the run by name and leaves no record; the parties refuse bad input."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
import votum
from votum.parties.mix import Election, MixFailed, run_local
from votum.verifier import verify


def _run(tmp_path: Path, election: Election | None = None, **kw: object) -> object:
    args: dict[str, object] = {
        "election": election or Election(),
        "voters": 10,
        "record": tmp_path / "record.vmix",
        "homes": tmp_path / "homes",
        "timeout": 60.0,
    }
    args.update(kw)
    return asyncio.run(run_local(**args))  # type: ignore[arg-type]


def _left(tmp_path: Path) -> list[str]:
    return sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("record"))


def test_an_election_between_processes_decrypts_what_was_cast_and_its_record_verifies(tmp_path: Path) -> None:
    choices = [[1], [2], [2], [3], [1], [1], [3], [1], [2], [1]]
    steps: list[str] = []
    run = _run(tmp_path, choices=choices, progress=steps.append)
    assert run.exact  # type: ignore[attr-defined]
    assert run.outcome["tallies"] == [5, 3, 2]  # type: ignore[attr-defined]
    assert sorted(run.plaintexts) == sorted(choices)  # type: ignore[attr-defined]
    assert steps == ["key generation", "voting phase", "mixing", "decryption", "tallying"]
    report = verify(tmp_path / "record.vmix")
    assert report.passed, report.not_passed()
    # 3 trustees' keys, 3 shuffles, 3 shares, each signed by its authority's node
    assert report.check("V-MIX-08").checked == 9
    assert _left(tmp_path) == ["record.vmix"]


def test_more_trustees_than_mixers_in_a_modp_group(tmp_path: Path) -> None:
    """Authority 3 is a trustee and no mixer: it deals, checks both shuffles and decrypts."""
    election = Election(group="modp-2048", rule="approval", candidates=3, width=3, mixers=2, trustees=3)
    run = _run(tmp_path, election, voters=6)
    assert run.exact  # type: ignore[attr-defined]
    report = verify(tmp_path / "record.vmix")
    assert report.passed, report.not_passed()
    assert report.check("V-MIX-08").checked == 3 + 2 + 3


def test_an_unsigned_answer_fails_the_run_naming_its_authority(tmp_path: Path) -> None:
    with pytest.raises(MixFailed) as err:
        _run(tmp_path, faults={"authority-2": "unsigned-answer"})
    assert err.value.phase == "key generation"
    assert err.value.party == "authority-2"
    assert "not a signed answer" in str(err.value)
    assert _left(tmp_path) == []


def test_a_mixer_that_dies_fails_the_run_by_name_and_leaves_no_record(tmp_path: Path) -> None:
    with pytest.raises(MixFailed) as err:
        _run(tmp_path, faults={"authority-2": "die-in-shuffle"})
    assert err.value.phase == "mixing"
    assert err.value.party == "authority-2"
    assert _left(tmp_path) == []


def test_the_parties_refuse_bad_input_and_change_nothing() -> None:
    keys = [bytes([a]) * 32 for a in range(1, 4)]
    signers = [votum.NodeSigner(k).verifying_key() for k in keys]
    parameters = votum.mix_parameters(
        "ristretto255", candidates=3, width=1, rule="plurality", signers=signers, election_id="nodes-test"
    )
    # another key in an authority's slot, an authority beyond the election, parameters without keys
    with pytest.raises(votum.WrongPhase, match="another signing key"):
        votum.MixParty(parameters, 1, signers[1])
    with pytest.raises(votum.WrongPhase):
        votum.MixParty(parameters, 4, signers[0])
    with pytest.raises(votum.InvalidInput):
        votum.mix_parameters("ristretto255", candidates=3, width=1, rule="plurality", signers=signers[:2])
    trustee = votum.MixParty(parameters, 1, signers[0])
    client = votum.MixParty(parameters, 0)
    head = trustee.head()
    # out of phase or not its role: nothing changes
    with pytest.raises(votum.WrongPhase):
        client.deal()
    with pytest.raises(votum.WrongPhase):
        trustee.cast(3)
    with pytest.raises(votum.WrongPhase):
        trustee.shuffle()
    with pytest.raises(votum.WrongPhase):
        trustee.receive_share(1, b"\0" * 32)  # from itself
    assert trustee.head() == head and trustee.entries() == 1
    # an entry that does not decode: refused, and the copy refuses from then on
    with pytest.raises(votum.VotumError):
        trustee.sync([("trustee", "trustee-1", b"\0" * 10)], head)
    with pytest.raises(votum.WrongPhase, match="failed"):
        trustee.deal()
    assert repr(trustee) == "MixParty(authority 1, secrets redacted)"


def test_cli_runs_the_parties_as_processes(tmp_path: Path) -> None:
    from typer.testing import CliRunner
    from votum.cli import app

    record = tmp_path / "cli.vmix"
    args = ["mix", "--processes", "--voters", "7", "--out", str(record), "--json"]
    out = CliRunner().invoke(app, args)
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout[out.stdout.index("{") :])
    assert report["multiset_ok"] and report["verified"]
    assert sum(report["outcome"]["tallies"]) == 7
    assert verify(record).check("V-MIX-08").checked == 9
    # one process per party, or a cluster: not both
    both = CliRunner().invoke(app, [*args[:-1], "--scheduler", "local:1"])
    assert both.exit_code == 2
    assert "--processes" in both.output
