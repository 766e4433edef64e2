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


Tie = dict[str, object]


def top(tallies: list[int], seats: int, ties: str, found: list[Tie]) -> list[int]:
    """The seats go to the candidates with most votes (at least one each); a tie at the last seat is one."""
    ranked = sorted((c for c in range(len(tallies)) if tallies[c] > 0), key=lambda c: (-tallies[c], c))
    if len(ranked) <= seats or tallies[ranked[seats]] != tallies[ranked[seats - 1]]:
        return [c + 1 for c in ranked[:seats]]
    edge = tallies[ranked[seats - 1]]
    clear = [c + 1 for c in ranked if tallies[c] > edge]
    level = [c + 1 for c in ranked if tallies[c] == edge]
    chosen = level[: seats - len(clear)] if ties == "lower-number" else []
    found.append({"round": 0, "decision": "elect", "among": level, "chosen": chosen})
    return clear + chosen


def ref_simple(rule: str, n: int, rows: list[list[int]], seats: int, k: int, ties: str) -> dict[str, object]:
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
    found: list[Tie] = []
    winners = top(tallies, seats, ties, found)
    return {"tallies": tallies, "valid": valid, "invalid": invalid, "winners": winners, "ties": found}


def lowest(tallies: list[int], continuing: set[int], rnd: int, ties: str, found: list[Tie]) -> int | None:
    """Fewest votes; among several, the higher number goes under lower-number, nobody under unresolved."""
    least = min(tallies[c] for c in continuing)
    level = sorted(c for c in continuing if tallies[c] == least)
    if len(level) == 1:
        return level[0]
    chosen = level[-1] if ties == "lower-number" else None
    found.append(
        {
            "round": rnd,
            "decision": "eliminate",
            "among": [c + 1 for c in level],
            "chosen": [] if chosen is None else [chosen + 1],
        }
    )
    return chosen


def ref_irv(n: int, rows: list[list[int]], ties: str) -> dict[str, object]:
    ballots = [b for b in (read_list(r, n) for r in rows) if b is not None]
    continuing = set(range(n))
    history: list[list[int]] = []
    exhausted: list[int] = []
    found: list[Tie] = []
    winners: list[int] = []
    while True:
        tallies = [0] * n
        for b in ballots:
            for c in b:
                if c - 1 in continuing:
                    tallies[c - 1] += 1
                    break
        history.append(tallies)
        active = sum(tallies)
        exhausted.append(len(ballots) - active)
        if active == 0 or not continuing:
            break
        majority = [c for c in continuing if 2 * tallies[c] > active]
        if majority:
            winners = [majority[0] + 1]
            break
        out = lowest(tallies, continuing, len(history) - 1, ties, found)
        if out is None:
            break
        continuing.remove(out)
    return {
        "tallies": history[0],
        "rounds": history[1:],
        "winners": winners,
        "exhausted": exhausted,
        "ties": found,
    }


def ref_stv(n: int, rows: list[list[int]], seats: int, ties: str) -> dict[str, object]:
    ballots = [b for b in (read_list(r, n) for r in rows) if b is not None]
    seats = min(seats, n)
    quota = len(ballots) * SCALE // (seats + 1) + 1
    continuing = set(range(n))
    weights = [SCALE] * len(ballots)
    winners: list[int] = []
    history: list[list[int]] = []
    exhausted: list[int] = []
    found: list[Tie] = []
    while any(ballots) and len(winners) < seats:
        tallies = [0] * n
        holder: list[int | None] = [None] * len(ballots)
        gone = 0
        for i, b in enumerate(ballots):
            for c in b:
                if c - 1 in continuing:
                    tallies[c - 1] += weights[i]
                    holder[i] = c - 1
                    break
            else:
                gone += weights[i]
        history.append(tallies)
        exhausted.append(gone)
        if len(continuing) + len(winners) <= seats:
            winners += [c + 1 for c in sorted(continuing, key=lambda c: (-tallies[c], c))]
            break
        best = max(tallies[c] for c in continuing)
        if best >= quota:
            level = sorted(c for c in continuing if tallies[c] == best)
            if len(level) > 1:
                pick = level[0] if ties == "lower-number" else None
                found.append(
                    {
                        "round": len(history) - 1,
                        "decision": "elect",
                        "among": [c + 1 for c in level],
                        "chosen": [] if pick is None else [pick + 1],
                    }
                )
                if pick is None:
                    break
            leader = level[0]
            winners.append(leader + 1)
            continuing.remove(leader)
            total = tallies[leader]
            surplus = total - quota
            for i, h in enumerate(holder):
                if h == leader:
                    weights[i] = weights[i] * surplus // total
        else:
            out = lowest(tallies, continuing, len(history) - 1, ties, found)
            if out is None:
                break
            continuing.remove(out)
    first = history[0] if history else [0] * n
    return {
        "tallies": first,
        "rounds": history[1:],
        "winners": winners,
        "exhausted": exhausted,
        "quota": quota,
        "ties": found,
    }


def reference(
    rule: str, n: int, rows: list[list[int]], seats: int = 1, k: int = 2, ties: str = "lower-number"
) -> dict[str, object]:
    if rule == "irv":
        return ref_irv(n, rows, ties)
    if rule == "stv":
        return ref_stv(n, rows, seats, ties)
    return ref_simple(rule, n, rows, seats, k, ties)


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
    seats = min(seats, n)
    for ties in ("lower-number", "unresolved"):
        agrees(count("irv", n, rows, ties=ties), reference("irv", n, rows, ties=ties))
        agrees(count("stv", n, rows, seats=seats, ties=ties), reference("stv", n, rows, seats, ties=ties))
        agrees(
            count("approval", n, rows, seats=seats, ties=ties),
            reference("approval", n, rows, seats, ties=ties),
        )


@settings(max_examples=100, deadline=None)
@given(ranked_rows)
def test_choice_counts_match_the_reference(data: tuple[int, list[list[int]]]) -> None:
    n, rows = data
    for ties in ("lower-number", "unresolved"):
        one = [r[:1] for r in rows]
        agrees(count("plurality", n, one, ties=ties), reference("plurality", n, one, ties=ties))
        two = [r[:2] for r in rows]
        agrees(count("k-of-n", n, two, k=2, ties=ties), reference("k-of-n", n, two, k=2, ties=ties))


@pytest.mark.parametrize("rule", ["plurality", "k-of-n", "approval", "irv", "stv"])
def test_an_empty_count_elects_nobody(rule: str) -> None:
    # no ballot, or only blank ones: nobody has a vote, and nobody is elected (spec/91.4); the count
    # used to elect candidate 1
    for rows in ([], [[0, 0, 0]] * 4):
        width = 1 if rule == "plurality" else 3
        outcome = count(rule, 3, [r[:width] for r in rows], seats=1, k=width)
        assert outcome["winners"] == [], (rule, rows)


def test_a_tie_is_shown_and_broken_only_by_the_stated_rule() -> None:
    # plurality, two candidates level for one seat
    level = count("plurality", 3, [[1], [2], [2], [1], [3]])
    assert level["winners"] == [1]
    assert level["ties"] == [{"round": 0, "decision": "elect", "among": [1, 2], "chosen": [1]}]
    open_seat = count("plurality", 3, [[1], [2], [2], [1], [3]], ties="unresolved")
    assert open_seat["winners"] == []
    assert open_seat["ties"] == [{"round": 0, "decision": "elect", "among": [1, 2], "chosen": []}]
    # a clear winner is no tie, even with others level behind it
    assert count("plurality", 3, [[1], [1], [2], [3]])["ties"] == []
    # IRV: A 2, B 1, C 1: B and C level at the bottom; the higher number goes (C's ballot then gives A a
    # majority), or the count stops
    rows = [[1, 0, 0], [1, 0, 0], [2, 0, 0], [3, 1, 0]]
    irv = count("irv", 3, rows)
    assert irv["ties"] == [{"round": 0, "decision": "eliminate", "among": [2, 3], "chosen": [3]}]
    assert irv["winners"] == [1] and irv["rounds"] == [[3, 1, 0]]
    stopped = count("irv", 3, rows, ties="unresolved")
    assert stopped["winners"] == [] and stopped["rounds"] == []
    with pytest.raises(ValueError, match="ties must be"):
        count("irv", 3, rows, ties="coin")


def test_irv_shows_exhausted_ballots_and_stv_its_quota() -> None:
    # IRV: A 4, B 3, C 2 with no further preference: C out, its 2 ballots exhausted, A 4 of 7
    rows = [[1, 0, 0]] * 4 + [[2, 0, 0]] * 3 + [[3, 0, 0]] * 2
    irv = count("irv", 3, rows)
    assert irv["exhausted"] == [0, 2] and irv["winners"] == [1]
    # STV, 2 seats, 10 ballots: the Droop quota is 10/3 + 1 unit (of 10^-9 votes)
    rows = [[1, 3, 0]] * 6 + [[2, 0, 0]] * 2 + [[3, 0, 0]] * 2
    stv = count("stv", 3, rows, seats=2)
    assert stv["quota"] == 10 * SCALE // 3 + 1
    assert stv["winners"] == [1, 3] and stv["exhausted"][0] == 0
    assert count("plurality", 3, [[1]])["quota"] == 0


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
    assert report["outcome"]["quota"] == 40 * SCALE // 3 + 1
    # the table form says the quota, the exhausted votes and, with a rule that breaks none, the tie
    text = CliRunner().invoke(app, ["mix", *args[1:-1], "--out", str(record)])
    assert text.exit_code == 0, text.output
    assert "quota 13.333 votes" in text.output and "exhausted per round:" in text.output
    coin = CliRunner().invoke(app, ["mix", "--ties", "coin", "--out", str(tmp_path / "c.vmix")])
    assert coin.exit_code == 2 and "unknown tie rule" in coin.output


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
