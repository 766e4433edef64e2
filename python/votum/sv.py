"""Split-value elections (spec/97): the job behind `votum sv`.

Votes are split into shares for the rows of a grid of mix servers; every column obfuscates and
permutes 2m copies; a cut-and-choose proof whose two challenges come from the board's running
hash shows that the tally is the count of the cast votes, without revealing any vote. There is no
public-key operation in the mix or in the proof. All of it runs in the Rust core
(`votum._native.sv_election`), and the independent verifier checks the record at the end (`votum
verify RECORD` checks it again later). This module names the phases and reports.

A choice is 0 (blank), a candidate number from 1, or a write-in string (at most the race's
write-in length, from the alphabet of spec/97.1: space, letters, digits, ``-``, ``'``, ``.``).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from votum import _native
from votum.errors import InvalidInput
from votum.steps import Step

#: A voter's choice in one race: 0 = blank, 1 … n = candidate, a string = write-in.
Choice = int | str


@dataclass(frozen=True)
class Race:
    """One race: its id, candidate names and the longest write-in (0: none)."""

    id: str
    candidates: tuple[str, ...]
    write_in: int = 0

    def native(self) -> tuple[str, list[str], int]:
        return (self.id, list(self.candidates), self.write_in)


#: The thesis's default race: two candidates and a 16-character write-in.
DEFAULT_RACE = Race("President", ("Smith", "Jones"), 16)


@dataclass(frozen=True)
class SvConfig:
    """What to run: the grid from n_fail and n_leak (3×3 by default), 2m copies, the races, the
    voters (random votes unless given) and an optional seed that makes every secret reproducible
    (tests, benchmarks; never in a real election)."""

    voters: int = 1000
    races: tuple[Race, ...] = (DEFAULT_RACE,)
    n_fail: int = 0
    n_leak: int = 2
    copies: int = 132
    seed: int | None = None
    election_id: str = "sv-election"

    def check(self, voters: int | None = None) -> _native.SvParams:
        """Refuses parameters spec/97.1 does not allow, and fewer than two ballots; returns the core's
        parameters."""
        if (self.voters if voters is None else voters) < 2:
            raise InvalidInput("at least two ballots")
        return self.params()

    def params(self) -> _native.SvParams:
        """The core's parameters (`InvalidInput` when spec/97.1 does not allow them)."""
        return _native.SvParams(
            [r.native() for r in self.races], n_fail=self.n_fail, n_leak=self.n_leak, copies=self.copies
        )

    def seed_bytes(self) -> bytes | None:
        return None if self.seed is None else self.seed.to_bytes(32, "big")


@dataclass
class SvResult:
    config: SvConfig
    steps: list[Step]
    tallies: list[dict[str, Any]]
    ballots: int
    grid: tuple[int, int, int]
    board_head: bytes
    board_entries: int
    record: Path | None
    record_bytes: int
    verified: bool
    not_passed: list[str] = field(default_factory=list)

    def seconds(self, step: str) -> float:
        return next(s.seconds for s in self.steps if s.name == step)


def parameters(config: SvConfig) -> dict[str, Any]:
    """The grid (rows, columns, threshold), copies and each race's modulus, as the core computes
    them; bad parameters raise `InvalidInput`."""
    return _native.sv_parameters(
        [r.native() for r in config.races], n_fail=config.n_fail, n_leak=config.n_leak, copies=config.copies
    )


def run_sv_election(
    config: SvConfig,
    progress: Callable[[str, int, int], object] | None = None,
    votes: Sequence[Sequence[Choice]] | None = None,
    record: str | os.PathLike[str] | None = None,
) -> SvResult:
    """Runs a whole split-value election, writes its record to `record` (None: a temporary file,
    removed afterwards) and verifies it. `votes` (one choice per race per ballot) defaults to
    `config.voters` random votes. A vote a race cannot hold raises `InvalidInput` before anything
    is written."""
    config.check(None if votes is None else len(votes))
    if record is None:
        with tempfile.TemporaryDirectory(prefix="votum-sv-") as tmp:
            result = _run(config, progress, votes, Path(tmp) / "record.vsv")
        result.record = None
        return result
    return _run(config, progress, votes, Path(record))


def _run(
    config: SvConfig,
    progress: Callable[[str, int, int], object] | None,
    votes: Sequence[Sequence[Choice]] | None,
    record: Path,
) -> SvResult:
    raw = _native.sv_election(
        [r.native() for r in config.races],
        record=str(record),
        votes=None if votes is None else [list(b) for b in votes],
        voters=config.voters,
        n_fail=config.n_fail,
        n_leak=config.n_leak,
        copies=config.copies,
        election_id=config.election_id,
        seed=config.seed_bytes(),
        progress=progress,
    )
    steps = [Step(name, seconds, raw["ballots"]) for name, seconds in raw["phases"]]
    return SvResult(
        config=config,
        steps=steps,
        tallies=list(raw["tallies"]),
        ballots=raw["ballots"],
        grid=tuple(raw["grid"]),
        board_head=raw["board_head"],
        board_entries=raw["board_entries"],
        record=record,
        record_bytes=raw["record_bytes"],
        verified=raw["verified"],
        not_passed=list(raw["not_passed"]),
    )


def run_sv_processes(
    config: SvConfig,
    record: str | os.PathLike[str],
    homes: str | os.PathLike[str] | None = None,
    timeout: float = 600.0,
    progress: Callable[[str, int, int], object] | None = None,
    votes: Sequence[Sequence[Choice]] | None = None,
    rerun_from: str | os.PathLike[str] | None = None,
    join: bool = False,
) -> SvResult:
    """The same election with the board, the voters' client and every mix server in its own process, over
    the secure channels (spec/97.13); this process is the controller. Verifies the record at the end. A
    party that fails or disappears raises `votum.parties.sv.SvFailed` naming it.

    `rerun_from`: the record of a failed election whose ballots were sealed but whose sides were not drawn;
    its ballots are posted again and mixed afresh (the same `homes`, where the first-column servers kept
    their packets; the parameters are the record's). `join`: drive parties already running elsewhere, whose
    addresses the controller's keystore in `homes/controller` holds."""
    import asyncio
    import time

    from votum.nodes.local import scratch_homes
    from votum.parties.sv import Rerun, run_local
    from votum.parties.sv import join as join_parties
    from votum.verifier import verify

    rerun = Rerun.from_record(Path(rerun_from)) if rerun_from is not None else None
    if rerun is not None:
        params, n = rerun.params, rerun.voters
    else:
        n = config.voters if votes is None else len(votes)
        params = config.check(n)
    if (join or rerun is not None) and homes is None:
        raise InvalidInput("joining parties or rerunning an election needs the parties' homes")
    with contextlib.ExitStack() as stack:
        root = Path(homes) if homes is not None else stack.enter_context(scratch_homes("votum-sv-homes-"))
        if join:
            run = asyncio.run(
                join_parties(root / "controller", params, n, Path(record), timeout, progress, rerun)
            )
        else:
            run = asyncio.run(
                run_local(
                    params,
                    n,
                    Path(record),
                    root,
                    votes=None if votes is None else [list(b) for b in votes],
                    seed=config.seed,
                    timeout=timeout,
                    progress=progress,
                    rerun=rerun,
                )
            )
    t0 = time.perf_counter()
    report = verify(Path(record))
    steps = [Step("launch", run.launch_seconds, n)] + [Step(p.name, p.seconds, n) for p in run.phases]
    steps.append(Step("verifying", time.perf_counter() - t0, n))
    return SvResult(
        config=config,
        steps=steps,
        tallies=run.tallies,
        ballots=n,
        grid=(params.rows, params.columns, params.threshold),
        board_head=run.head,
        board_entries=run.entries,
        record=Path(record),
        record_bytes=Path(record).stat().st_size,
        verified=report.passed,
        not_passed=report.not_passed(),
    )
