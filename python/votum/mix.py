"""Mixnet elections (spec/91): the job behind `votum mix`.

Voters encrypt rows of candidate numbers with proofs of knowledge; a cascade of mix servers
re-encrypts, permutes and proves (Terelius–Wikström, spec/90); the trustees check the other
authorities' shuffles, decrypt with proofs, and any counting rule runs on the plaintexts.
Everything is posted through the board into a mix record file (spec/91.7), which the
independent verifier checks at the end (`votum verify RECORD` checks it again later). All
cryptography runs in the Rust core (`votum._native.mix_election`); this module chooses the
votes, names the steps and reports.
"""

from __future__ import annotations

import os
import random
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from votum import _native
from votum.errors import InvalidInput
from votum.steps import Step

#: Counting rules, by the names the CLI and the core use.
RULES = ("plurality", "k-of-n", "approval", "irv", "stv")
#: STV tallies and quotas are in units of 10^-9 votes (spec/91.4)
STV_SCALE = 1_000_000_000


def votes_text(value: int, stv: bool, grouped: bool = True) -> str:
    """A count of votes as shown: STV's are in units of 10^-9 of a vote (spec/91.4) and shown in votes to
    three places, trailing zeros dropped; `grouped` puts separators between thousands (the terminal's
    form; the pages show plain digits)."""
    if not stv:
        return f"{value:,}" if grouped else str(value)
    return (f"{value / STV_SCALE:,.3f}" if grouped else f"{value / STV_SCALE:.3f}").rstrip("0").rstrip(".")


#: how the count breaks a tie (spec/91.4): the lower candidate number, or not at all
TIE_RULES = ("lower-number", "unresolved")
#: Groups a mixnet election can run in.
GROUPS = ("ristretto255", "modp-2048", "modp-3072", "eg-4096")


@dataclass(frozen=True)
class MixConfig:
    """What to run. `width` 0 picks the rule's natural width (1 for plurality, `k` for k-of-n,
    the number of candidates otherwise)."""

    voters: int = 1000
    group: str = "ristretto255"
    candidates: int = 3
    rule: str = "plurality"
    width: int = 0
    seats: int = 1
    k: int = 2
    #: how the count breaks a tie (spec/91.4; named in the record's parameters unless the default)
    ties: str = "lower-number"
    mixers: int = 3
    trustees: int = 3
    quorum: int = 2
    seed: int = 2026

    def ballot_width(self) -> int:
        if self.width:
            return self.width
        if self.rule == "plurality":
            return 1
        if self.rule == "k-of-n":
            return self.k
        return self.candidates

    def check(self) -> None:
        if self.rule not in RULES:
            raise InvalidInput(f"unknown counting rule {self.rule!r} (one of {', '.join(RULES)})")
        if self.ties not in TIE_RULES:
            raise InvalidInput(f"unknown tie rule {self.ties!r} (one of {', '.join(TIE_RULES)})")
        if self.group not in GROUPS:
            raise InvalidInput(f"unknown group {self.group!r} (one of {', '.join(GROUPS)})")
        if self.voters < 1:
            raise InvalidInput("at least one voter")


@dataclass
class MixResult:
    config: MixConfig
    steps: list[Step]
    outcome: dict[str, Any]
    votes: list[list[int]]
    plaintexts: list[list[int]]
    multiset_ok: bool
    shuffle_checks: int
    board_head: bytes
    board_entries: int
    #: the record file (None when it was not kept) and its size
    record: Path | None
    record_bytes: int
    #: whether the independent verifier passed every V-MIX check, and those it did not
    verified: bool
    not_passed: list[str]

    def seconds(self, step: str) -> float:
        return next(s.seconds for s in self.steps if s.name == step)

    def votes_per_hour(self, step: str) -> float:
        return self.config.voters * 3600 / max(self.seconds(step), 1e-9)


def random_votes(config: MixConfig) -> list[list[int]]:
    """Rows a voter may cast under the rule, chosen from the seed: a candidate for plurality,
    otherwise a random prefix (at least one) of a random ranking, padded with zeros."""
    rng = random.Random(config.seed)
    width = config.ballot_width()
    rows: list[list[int]] = []
    for _ in range(config.voters):
        if config.rule == "plurality":
            rows.append([rng.randint(1, config.candidates)] + [0] * (width - 1))
            continue
        order = list(range(1, config.candidates + 1))
        rng.shuffle(order)
        length = rng.randint(1, min(width, config.candidates))
        rows.append(order[:length] + [0] * (width - length))
    return rows


def count(
    rule: str,
    candidates: int,
    rows: list[list[int]],
    *,
    seats: int = 1,
    k: int | None = None,
    ties: str = "lower-number",
) -> dict[str, Any]:
    """Counts plaintext rows (the tally step's own code, spec/91.4): tallies, later rounds, winners, and
    the exhausted ballots per round (ranked rules), the quota (STV) and every tie that decided something,
    broken by `ties` (`lower-number` or `unresolved`)."""
    return _native.mix_count(rule, candidates, rows, seats=seats, k=k, ties=ties)


def run_mix_election(
    config: MixConfig,
    progress: Callable[[str], object] | None = None,
    votes: list[list[int]] | None = None,
    record: str | os.PathLike[str] | None = None,
    *,
    scheduler: str | None = None,
    client: Any = None,
    task_timeout: float = 600.0,
    tls: tuple[str, str, str] | None = None,
    announce: Callable[[str], None] | None = None,
    plaintext: bool = False,
) -> MixResult:
    """Runs a whole mixnet election, writes its record to `record` (a file; an earlier one there
    is replaced; None: a temporary file, removed afterwards) and verifies it; `votes` defaults to
    `random_votes(config)`. With `scheduler` (`local:N`, `tcp://…`, `tls://…`) or a
    `distributed.Client` as `client`, the trustees' checks of every shuffle and the verifier's checks of
    the shuffle proofs run on that cluster, one task each (spec/98.3); the outcome and the record are
    the same. `tls`, `announce` and `plaintext` are as for `votum.verifier.verify`."""
    config.check()
    if votes is None:
        votes = random_votes(config)
    if scheduler is None and client is None:
        return _run_at(config, progress, votes, record, None)
    from votum.cluster import DaskBallotWorkers, using

    with using(scheduler, client, tls=tls, announce=announce, plaintext=plaintext) as c:
        workers = DaskBallotWorkers(c, task_timeout=task_timeout)
        try:
            return _run_at(config, progress, votes, record, workers)
        finally:
            workers.close()


def _run_at(
    config: MixConfig,
    progress: Callable[[str], object] | None,
    votes: list[list[int]],
    record: str | os.PathLike[str] | None,
    workers: Any,
) -> MixResult:
    if record is None:
        with tempfile.TemporaryDirectory(prefix="votum-mix-") as tmp:
            result = _run(config, progress, votes, Path(tmp) / "record.vmix", workers)
        result.record = None
        return result
    return _run(config, progress, votes, Path(record), workers)


def _run(
    config: MixConfig,
    progress: Callable[[str], object] | None,
    votes: list[list[int]],
    record: Path,
    workers: Any = None,
) -> MixResult:
    raw = _native.mix_election(
        config.group,
        votes,
        candidates=config.candidates,
        width=config.ballot_width(),
        rule=config.rule,
        record=str(record),
        seats=config.seats,
        k=config.k,
        ties=config.ties,
        mixers=config.mixers,
        trustees=config.trustees,
        quorum=config.quorum,
        election_id=f"mix-{config.seed}",
        seed=None,  # keys, nonces and permutations: fresh from the operating system
        progress=progress,
        workers=workers,
    )
    steps = [Step(name, seconds, config.voters) for name, seconds in raw["steps"]]
    return MixResult(
        config=config,
        steps=steps,
        outcome=raw["outcome"],
        votes=votes,
        plaintexts=raw["plaintexts"],
        multiset_ok=raw["multiset_ok"],
        shuffle_checks=raw["shuffle_checks"],
        board_head=raw["board_head"],
        board_entries=raw["board_entries"],
        record=record,
        record_bytes=raw["record_bytes"],
        verified=raw["verified"],
        not_passed=list(raw["not_passed"]),
    )


def run_mix_processes(
    config: MixConfig,
    progress: Callable[[str], object] | None = None,
    *,
    record: str | os.PathLike[str],
    homes: Path | None = None,
    timeout: float = 600.0,
) -> MixResult:
    """The same election with every authority (trustee a and mixer a) and the voters' client in a process of
    its own over the channels (spec/91.9), driven from this process, which is the board and writes the
    record; then the independent verifier checks it. The voters' client draws the rows itself, so this
    process never holds a vote (`votes` is empty; `plaintexts` are the decrypted rows). `homes` keeps the
    parties' identities between runs (a temporary directory otherwise). Raises
    `votum.parties.mix.MixFailed` naming the phase and the party when one fails."""
    import asyncio

    from votum.nodes.local import scratch_homes
    from votum.parties.mix import Election, run_local
    from votum.verifier import verify

    config.check()
    election = Election(
        group=config.group,
        candidates=config.candidates,
        width=config.ballot_width(),
        rule=config.rule,
        seats=config.seats,
        k=config.k if config.rule == "k-of-n" else None,
        ties=config.ties,
        mixers=config.mixers,
        trustees=config.trustees,
        quorum=config.quorum,
    )
    path = Path(record)
    with scratch_homes("votum-mix-") as scratch:
        run = asyncio.run(
            run_local(
                election, config.voters, path, homes or Path(scratch), timeout=timeout, progress=progress
            )
        )
    if progress is not None:
        progress("verification")
    started = time.perf_counter()
    report = verify(path)
    steps = [Step(name, seconds, config.voters) for name, seconds in run.phases]
    steps.append(Step("total simulation time", sum(s.seconds for s in steps), config.voters))
    steps.append(Step("verification", time.perf_counter() - started, config.voters))
    checks = sum(1 for m in range(1, config.mixers + 1) for t in range(1, config.trustees + 1) if t != m)
    return MixResult(
        config=config,
        steps=steps,
        outcome=run.outcome,
        votes=[],
        plaintexts=run.plaintexts,
        multiset_ok=run.exact,
        shuffle_checks=checks,
        board_head=run.head,
        board_entries=run.entries,
        record=path,
        record_bytes=path.stat().st_size,
        verified=report.passed,
        not_passed=[c.id for c in report.checks if c.status != "pass"],
    )
