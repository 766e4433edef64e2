"""Mixnet elections (issue 7, spec/91): whole elections through the Python API and the CLI, and
the counting rules against plain-Python reference counts written from spec/91.4."""

from __future__ import annotations

import json
from pathlib import Path

import boardfile
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner
from votum.cli import app
from votum.errors import InvalidInput, VerificationFailed
from votum.mix import MixConfig, count, random_votes, run_mix_election
from votum.verifier import verify

SCALE = 1_000_000_000


def read_list(row: list[int], n: int) -> list[int] | None:
    """Distinct candidates 1..n, then only zeros; None for anything else."""
    out: list[int] = []
    ended = False
    for v in row:
        if v == 0:
            ended = True
        elif ended or v > n or v in out:
            return None
        else:
            out.append(v)
    return out


def top(tallies: list[int], seats: int) -> list[int]:
    return [c + 1 for c in sorted(range(len(tallies)), key=lambda c: (-tallies[c], c))[:seats]]


def ref_simple(rule: str, n: int, rows: list[list[int]], seats: int, k: int) -> dict[str, object]:
    limit = {"plurality": 1, "k-of-n": k}.get(rule, n)
    tallies = [0] * n
    valid = invalid = 0
    for row in rows:
        chosen = read_list(row, n)
        if chosen is None or len(chosen) > limit:
            invalid += 1
            continue
        valid += 1
        for c in chosen:
            tallies[c - 1] += 1
    return {"tallies": tallies, "valid": valid, "invalid": invalid, "winners": top(tallies, seats)}


def lowest(tallies: list[int], continuing: set[int]) -> int:
    # fewest votes; a tie eliminates the higher candidate number
    return min(continuing, key=lambda c: (tallies[c], -c))


def ref_irv(n: int, rows: list[list[int]]) -> dict[str, object]:
    ballots = [b for b in (read_list(r, n) for r in rows) if b is not None]
    continuing = set(range(n))
    history: list[list[int]] = []
    while True:
        tallies = [0] * n
        for b in ballots:
            for c in b:
                if c - 1 in continuing:
                    tallies[c - 1] += 1
                    break
        history.append(tallies)
        if not continuing:
            return {"tallies": history[0], "rounds": history[1:], "winners": []}
        leader = top(tallies, 1)[0] - 1
        if 2 * tallies[leader] > sum(tallies) or len(continuing) == 1:
            return {"tallies": history[0], "rounds": history[1:], "winners": [leader + 1]}
        continuing.remove(lowest(tallies, continuing))


def ref_stv(n: int, rows: list[list[int]], seats: int) -> dict[str, object]:
    ballots = [b for b in (read_list(r, n) for r in rows) if b is not None]
    seats = min(seats, n)
    quota = len(ballots) * SCALE // (seats + 1) + 1
    continuing = set(range(n))
    weights = [SCALE] * len(ballots)
    winners: list[int] = []
    history: list[list[int]] = []
    while len(winners) < seats:
        tallies = [0] * n
        holder: list[int | None] = [None] * len(ballots)
        for i, b in enumerate(ballots):
            for c in b:
                if c - 1 in continuing:
                    tallies[c - 1] += weights[i]
                    holder[i] = c - 1
                    break
        history.append(tallies)
        if len(continuing) + len(winners) <= seats:
            winners += [c + 1 for c in sorted(continuing, key=lambda c: (-tallies[c], c))]
            break
        leader = max(continuing, key=lambda c: (tallies[c], -c))
        if tallies[leader] >= quota:
            winners.append(leader + 1)
            continuing.remove(leader)
            total = tallies[leader]
            surplus = total - quota
            for i, h in enumerate(holder):
                if h == leader:
                    weights[i] = weights[i] * surplus // total
        else:
            continuing.remove(lowest(tallies, continuing))
    return {"tallies": history[0], "rounds": history[1:], "winners": winners}


def reference(rule: str, n: int, rows: list[list[int]], seats: int = 1, k: int = 2) -> dict[str, object]:
    if rule == "irv":
        return ref_irv(n, rows)
    if rule == "stv":
        return ref_stv(n, rows, seats)
    return ref_simple(rule, n, rows, seats, k)


def agrees(outcome: dict[str, object], ref: dict[str, object]) -> None:
    for key, value in ref.items():
        assert outcome[key] == value, key


ranked_rows = st.integers(min_value=2, max_value=6).flatmap(
    lambda n: st.tuples(
        st.just(n),
        st.lists(st.lists(st.integers(min_value=0, max_value=n + 1), min_size=n, max_size=n), max_size=60),
    )
)


@settings(max_examples=150, deadline=None)
@given(ranked_rows, st.integers(min_value=1, max_value=3))
def test_ranked_counts_match_the_reference(data: tuple[int, list[list[int]]], seats: int) -> None:
    n, rows = data
    agrees(count("irv", n, rows), reference("irv", n, rows))
    seats = min(seats, n)
    agrees(count("stv", n, rows, seats=seats), reference("stv", n, rows, seats))
    agrees(count("approval", n, rows, seats=seats), reference("approval", n, rows, seats))


@settings(max_examples=100, deadline=None)
@given(ranked_rows)
def test_choice_counts_match_the_reference(data: tuple[int, list[list[int]]]) -> None:
    n, rows = data
    agrees(count("plurality", n, [r[:1] for r in rows]), reference("plurality", n, [r[:1] for r in rows]))
    agrees(count("k-of-n", n, [r[:2] for r in rows], k=2), reference("k-of-n", n, [r[:2] for r in rows], k=2))


@pytest.mark.parametrize(
    ("rule", "candidates", "seats"),
    [("plurality", 3, 1), ("k-of-n", 5, 2), ("approval", 4, 2), ("irv", 5, 1), ("stv", 6, 3)],
)
def test_whole_elections_count_what_was_cast(rule: str, candidates: int, seats: int) -> None:
    config = MixConfig(voters=80, candidates=candidates, rule=rule, seats=seats, seed=7)
    result = run_mix_election(config)
    assert result.multiset_ok
    assert result.verified and result.not_passed == []
    assert result.record is None  # a temporary record, removed
    assert sorted(result.plaintexts) == sorted(result.votes)
    assert result.plaintexts != result.votes  # mixed
    agrees(result.outcome, reference(rule, candidates, result.votes, seats, config.k))
    assert result.shuffle_checks == 6
    names = [s.name for s in result.steps]
    assert names[:7] == [
        "creating public parameters",
        "key generation",
        "public key building",
        "voting phase",
        "mixing",
        "decryption",
        "tallying",
    ]
    assert "verification" in names


def test_random_ranked_ballots_in_the_2048_bit_group() -> None:
    config = MixConfig(voters=15, group="modp-2048", candidates=4, rule="irv", mixers=2, trustees=2, quorum=2)
    result = run_mix_election(config)
    assert result.multiset_ok
    agrees(result.outcome, reference("irv", 4, result.votes))


def test_bad_configurations_are_refused() -> None:
    with pytest.raises(InvalidInput, match="counting rule"):
        run_mix_election(MixConfig(rule="borda"))
    with pytest.raises(InvalidInput, match="group"):
        run_mix_election(MixConfig(group="p-256"))
    with pytest.raises(InvalidInput, match="quorum"):
        run_mix_election(MixConfig(voters=3, trustees=2, quorum=3))
    with pytest.raises(InvalidInput, match="above"):
        run_mix_election(MixConfig(voters=2, candidates=3), votes=[[1], [7]])
    with pytest.raises(InvalidInput, match="width"):
        run_mix_election(MixConfig(voters=2, candidates=3), votes=[[1], [1, 2]])


def test_random_votes_follow_the_rule() -> None:
    rows = random_votes(MixConfig(voters=200, candidates=5, rule="irv", seed=3))
    assert all(len(r) == 5 and r[0] != 0 for r in rows)
    assert all(read_list(r, 5) is not None for r in rows)
    assert random_votes(MixConfig(voters=50, seed=3)) == random_votes(MixConfig(voters=50, seed=3))
    assert {r[0] for r in random_votes(MixConfig(voters=300, candidates=3, seed=1))} == {1, 2, 3}


def test_cli_runs_and_reports(tmp_path: Path) -> None:
    record = tmp_path / "mix.vmix"
    args = ["mix", "--voters", "40", "--rule", "stv", "--candidates", "5", "--seats", "2", "--json"]
    out = CliRunner().invoke(app, [*args, "--out", str(record)])
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout)
    assert report["multiset_ok"] is True and report["verified"] is True
    assert len(report["outcome"]["winners"]) == 2
    assert report["votes_per_hour"]["mixing"] > 0
    assert record.stat().st_size == report["record_bytes"] > 0
    bad = CliRunner().invoke(app, ["mix", "--rule", "borda"])
    assert bad.exit_code == 2
    assert "InvalidInput" in bad.output


def test_the_record_is_verified_again_from_disk_and_tampering_is_caught(tmp_path: Path) -> None:
    record = tmp_path / "plurality.vmix"
    result = run_mix_election(MixConfig(voters=30, seed=4), record=record)
    assert result.verified and result.record == record
    report = verify(record)
    assert report.passed and report.form == "votum mix record" and report.ballots == 30
    assert [c.id for c in report.checks] == [f"V-MIX-0{i}" for i in range(1, 9)]
    # one process made every entry (no --processes): V-MIX-08 says the record shows no authority's hand
    assert "no signing keys" in report.check("V-MIX-08").warnings[0][1]
    assert report.intermediates["winners"] == result.outcome["winners"]
    checked = CliRunner().invoke(app, ["verify", str(record)])
    assert checked.exit_code == 0, checked.output
    assert "every check passed" in checked.output

    # the last byte is the last winner's number: the posted outcome is no longer the count
    data = bytearray(record.read_bytes())
    data[-1] ^= 0x01
    bad = tmp_path / "bad-count.vmix"
    bad.write_bytes(bytes(data))
    report = verify(bad)
    assert report.not_passed() == ["V-MIX-07"]
    with pytest.raises(VerificationFailed, match="V-MIX-07"):
        report.require()
    checked = CliRunner().invoke(app, ["verify", str(bad)])
    assert checked.exit_code == 1
    assert "V-MIX-07" in checked.output

    # a truncated record is unreadable, never a shorter one
    cut = tmp_path / "cut.vmix"
    cut.write_bytes(record.read_bytes()[:-5])
    report = verify(cut)
    assert report.check("V-MIX-01").status == "error"
    assert "truncated" in report.check("V-MIX-01").findings[0][1]


def test_an_unwritable_record_path_is_an_os_error(tmp_path: Path) -> None:
    with pytest.raises(OSError, match="missing"):
        run_mix_election(MixConfig(voters=3), record=tmp_path / "missing" / "r.vmix")


@pytest.mark.parametrize("where", ["parameters", "ballots"])
def test_an_entry_longer_than_its_kind_is_refused_unread(tmp_path: Path, where: str) -> None:
    """Issue 43, item 9: the verifier read each entry whole, up to 16 GiB, before any check: a sparse
    entry of gigabytes cost that much memory. Each entry's length is now checked against its kind before
    it is read: the parameters are small, the ballots a list whose leading count fixes its length. Here a
    2 GiB entry (a hole in a sparse file) is refused with a finding, the verifier staying small."""
    record = tmp_path / "small.vmix"
    run_mix_election(MixConfig(voters=10, seed=4), record=record)
    boardfile.assert_refused_unread(record, where, "V-MIX-01")
