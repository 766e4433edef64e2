"""Split-value elections (issue 23, spec/97) through the Python API and the CLI: exact tallies
against a plain count of the votes, bad input refused before anything is written, records the
independent verifier passes and a tampered one it fails. The cheating parties and the privacy
test are in crates/votum-splitvalue/tests/sv.rs (they need the prover's hooks)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import boardfile
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner
from votum.cli import app
from votum.errors import InvalidInput
from votum.sv import Race, SvConfig, parameters, run_sv_election
from votum.verifier import verify

ALPHABET = " ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-'."


def expected(race: Race, votes: list[int | str]) -> dict[str, object]:
    c = Counter(votes)
    return {
        "counts": [(name, c.get(i + 1, 0)) for i, name in enumerate(race.candidates)],
        "blank": c.get(0, 0),
        "write_ins": sorted((v, n) for v, n in c.items() if isinstance(v, str)),
    }


@settings(max_examples=8, deadline=None, derandomize=True)
@given(data=st.data())
def test_tallies_are_exact_for_random_shapes_and_votes(data: st.DataObject) -> None:
    races = tuple(
        Race(
            f"race-{i}",
            tuple(f"C{j}" for j in range(data.draw(st.integers(1, 4)))),
            data.draw(st.integers(0, 6)),
        )
        for i in range(data.draw(st.integers(1, 3)))
    )
    n_fail, n_leak = data.draw(st.sampled_from([(0, 2), (1, 1), (0, 1), (0, 0)]))
    copies = data.draw(st.sampled_from([132, 134, 140]))
    n = data.draw(st.integers(2, 30))

    def choice(race: Race) -> st.SearchStrategy[int | str]:
        options: st.SearchStrategy[int | str] = st.integers(0, len(race.candidates))
        if race.write_in:
            options = options | st.text(ALPHABET, min_size=1, max_size=race.write_in)
        return options

    votes = [[data.draw(choice(r)) for r in races] for _ in range(n)]
    config = SvConfig(voters=n, races=races, n_fail=n_fail, n_leak=n_leak, copies=copies, seed=n)
    result = run_sv_election(config, votes=votes)  # a temporary record, removed afterwards
    assert result.verified, result.not_passed
    assert result.ballots == n
    for ri, race in enumerate(races):
        want = expected(race, [v[ri] for v in votes])
        got = result.tallies[ri]
        assert got["race"] == race.id
        assert list(map(tuple, got["counts"])) == want["counts"]
        assert got["blank"] == want["blank"]
        assert sorted(map(tuple, got["write_ins"])) == want["write_ins"]
        assert got["invalid"] == 0


def test_the_default_election_is_the_thesiss_and_its_record_verifies_again(tmp_path: Path) -> None:
    config = SvConfig(voters=300, seed=7)
    p = parameters(config)
    assert (p["rows"], p["columns"], p["threshold"], p["copies"]) == (3, 3, 3, 132)
    assert int(p["moduli"][0]) > 2 + 67**16
    result = run_sv_election(config, record=tmp_path / "sv.vsv")
    assert result.verified
    assert [s.name for s in result.steps] == [
        "setup",
        "casting",
        "mixing",
        "proving",
        "tallying",
        "verifying",
    ]
    t = result.tallies[0]
    assert sum(c for _, c in t["counts"]) + sum(c for _, c in t["write_ins"]) + t["blank"] == 300
    report = verify(tmp_path / "sv.vsv")
    assert report.passed
    assert [c.id for c in report.checks] == [f"V-SV-{i:02d}" for i in range(1, 13)]
    # the same seed, the same record; none, a fresh one with the same tally
    again = run_sv_election(config, record=tmp_path / "again.vsv")
    assert again.board_head == result.board_head
    fresh = run_sv_election(SvConfig(voters=300, seed=None), record=tmp_path / "fresh.vsv")
    assert fresh.board_head != result.board_head


def test_a_byte_changed_in_the_record_fails_verification(tmp_path: Path) -> None:
    path = tmp_path / "sv.vsv"
    run_sv_election(SvConfig(voters=50, seed=3), record=path)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 1
    path.write_bytes(bytes(data))
    assert not verify(path).passed


@pytest.mark.parametrize(
    ("votes", "race"),
    [
        ([[3], [1]], Race("r", ("A", "B"), 0)),  # no candidate 3
        ([["Zed"], [1]], Race("r", ("A", "B"), 0)),  # no write-ins in this race
        ([["much too long"], [1]], Race("r", ("A", "B"), 4)),
        ([["é"], [1]], Race("r", ("A", "B"), 4)),  # outside the alphabet
        ([[1, 2], [1]], Race("r", ("A", "B"), 0)),  # two choices for one race
        ([[1]], Race("r", ("A", "B"), 0)),  # one ballot
    ],
)
def test_bad_votes_are_refused_before_anything_is_written(
    votes: list[list[int | str]], race: Race, tmp_path: Path
) -> None:
    path = tmp_path / "sv.vsv"
    with pytest.raises(InvalidInput):
        run_sv_election(SvConfig(voters=len(votes), races=(race,), copies=2), votes=votes, record=path)
    assert not path.exists()


@pytest.mark.parametrize(
    "config",
    [
        SvConfig(copies=3),
        SvConfig(copies=256),
        SvConfig(n_leak=16),
        SvConfig(races=()),
        SvConfig(races=(Race("r", (), 0),)),
        SvConfig(races=(Race("r", ("A", "A"), 0),)),
        SvConfig(races=(Race("r", ("A",), 21),)),
        SvConfig(races=(Race("r", ("A",), 0), Race("r", ("B",), 0))),
    ],
)
def test_bad_parameters_are_refused(config: SvConfig) -> None:
    with pytest.raises(InvalidInput):
        parameters(config)


def test_cli_runs_an_election_with_several_races_and_reports_json(tmp_path: Path) -> None:
    out = tmp_path / "cli.vsv"
    res = CliRunner().invoke(
        app,
        [
            "sv",
            "--voters",
            "120",
            "--race",
            "Mayor:Ann,Bob:8",
            "--race",
            "Measure:Yes,No",
            "--n-fail",
            "1",
            "--n-leak",
            "1",
            "--copies",
            "134",
            "--seed",
            "4",
            "--out",
            str(out),
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    assert report["grid"] == {"rows": 4, "columns": 2, "threshold": 3}
    assert report["verified"] is True
    assert [t["race"] for t in report["tallies"]] == ["Mayor", "Measure"]
    assert out.exists() and report["record_bytes"] == out.stat().st_size
    res = CliRunner().invoke(app, ["verify", str(out)])
    assert res.exit_code == 0, res.output
    bad = CliRunner().invoke(app, ["sv", "--race", "Mayor", "--out", str(tmp_path / "x.vsv")])
    assert bad.exit_code != 0


def test_a_record_with_two_copies_is_a_proof_of_one_bit_and_is_refused(tmp_path: Path) -> None:
    """Issue 45, finding 5: `votum sv --copies 2` used to write a record that `votum verify` passed. The cut
    then chooses 1 of binom(2, 1) = 2 ways: one bit, which a prover grinds in two tries. The verifier prints
    the soundness of every split-value record and refuses one below the floor of 128 bits."""
    out = tmp_path / "weak.vsv"
    made = CliRunner().invoke(app, ["sv", "--voters", "50", "--copies", "2", "--out", str(out)])
    assert made.exit_code == 1 and "V-SV-02" in made.output, made.output
    assert out.exists()
    res = CliRunner().invoke(app, ["verify", str(out)], terminal_width=200)
    assert res.exit_code == 1
    assert "soundness: the cut (binom(2, 1) ways to choose the opened copies): 1.0 bits (floor 128 bits)" in (
        " ".join(res.output.split())
    )
    report = verify(out)
    assert report.not_passed() == ["V-SV-02"]
    assert [(s.bits, s.floor) for s in report.soundness] == [(1.0, 128.0), (1.0, None)]
    # the default makes a record at the floor, and says so
    good = tmp_path / "good.vsv"
    run_sv_election(SvConfig(voters=50, seed=1), record=good)
    res = CliRunner().invoke(app, ["verify", str(good)], terminal_width=200)
    assert res.exit_code == 0, res.output
    assert "128.1 bits (floor 128 bits)" in " ".join(res.output.split())


@pytest.mark.parametrize("where", ["parameters", "ballots", "outputs", "tvalues"])
def test_an_entry_longer_than_its_kind_is_refused_unread(tmp_path: Path, where: str) -> None:
    """Issue 43, item 9, for split-value records: the verifier read each entry whole (up to 16 GiB)
    before any check. Each entry's length is now bounded by its kind, the parameters and the number of
    ballots sealed, before it is read: a 2 GiB entry (a hole in a sparse file) is refused unread."""
    record = tmp_path / "small.vsv"
    run_sv_election(SvConfig(voters=20, seed=5), record=record)
    boardfile.assert_refused_unread(record, where, "V-SV-01")
