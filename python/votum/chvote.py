"""CHVote elections (spec/92): the job behind `votum chvote`.

Every step of the Geneva proof of concept's simulation, under the same step names: public
parameters, election set, the authorities' keys and electoral data, voting cards, then every voter
casts a ballot with an oblivious-transfer query, checks the return codes against its card,
confirms and checks its finalization code; the authorities mix, check every shuffle, decrypt with
proofs, and the tally is compared with the votes cast. All of it runs in the Rust core
(`votum._native.chvote_simulate`); this module names the steps and reports.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from votum import _native
from votum.errors import InvalidInput
from votum.steps import Step

#: Election shapes, by the CLI's names (the proof of concept's SINGLE_VOTE and SIMPLE_SAMPLE).
SHAPES = ("single", "simple-sample")


@dataclass(frozen=True)
class ChvoteConfig:
    voters: int = 100
    level: int = 2
    election: str = "single"
    authorities: int = 4

    def check(self) -> None:
        if self.voters < 1:
            raise InvalidInput("at least one voter")
        if self.level not in (1, 2):
            raise InvalidInput(f"no security level {self.level} (1 or 2)")
        if self.election not in SHAPES:
            raise InvalidInput(f"no election shape {self.election!r} ({', '.join(SHAPES)})")
        if not 1 <= self.authorities <= 64:
            raise InvalidInput("1 to 64 authorities")


@dataclass(frozen=True)
class ChvoteResult:
    config: ChvoteConfig
    steps: list[Step]
    tally: list[int]
    expected: list[int]
    invalid: int
    confirmed: int
    p_bits: int
    elections: list[tuple[int, int]]
    #: The record written (spec/92.10) and the independent verifier's verdict on it.
    record: Path | None = None
    verified: bool | None = None
    not_passed: list[str] = field(default_factory=list)
    #: the record's chain head as the verifier recomputed it (hex): what observers compare
    head: str = ""

    @property
    def exact(self) -> bool:
        """Whether the tally is exactly the votes cast, with every voter confirmed."""
        return self.tally == self.expected and self.invalid == 0 and self.confirmed == self.config.voters

    @property
    def total_seconds(self) -> float:
        return sum(s.seconds for s in self.steps)


def run_chvote(
    config: ChvoteConfig,
    progress: Callable[[str], None] | None = None,
    *,
    record: Path | None = None,
    sheets: Path | None = None,
) -> ChvoteResult:
    """Runs the whole election in this process (the authorities are separate values, spec/92.1).
    With `record`, the election's record is written there and checked by the independent verifier
    (`votum verify RECORD` checks it again later). With `sheets`, the printing authority writes one
    code sheet per voter into that directory (HTML, readable by its owner only: the codes are secret)."""
    config.check()
    raw = _native.chvote_simulate(
        config.level,
        config.election,
        config.voters,
        authorities=config.authorities,
        record=None if record is None else str(record),
        sheets=None if sheets is None else str(sheets),
        progress=progress,
    )
    steps = [Step(name, ms / 1000.0, config.voters) for name, ms in raw["steps"]]
    return ChvoteResult(
        config=config,
        steps=steps,
        tally=list(raw["tally"]),
        expected=list(raw["expected"]),
        invalid=int(raw["invalid"]),
        confirmed=int(raw["confirmed"]),
        p_bits=int(raw["p_bits"]),
        elections=[(int(n), int(k)) for n, k in raw["elections"]],
        record=record,
        verified=raw.get("verified"),
        not_passed=list(raw.get("not_passed", [])),
        head=str(raw.get("head", "")),
    )


def _elections(parameters: bytes) -> list[tuple[int, int]]:
    """(n_j, k_j) of each election from a `parameters` payload (spec/92.10: level, s, t, then the pairs)."""
    t = int.from_bytes(parameters[9:17], "big")
    at = 17
    pairs = []
    for _ in range(t):
        pairs.append(
            (
                int.from_bytes(parameters[at : at + 8], "big"),
                int.from_bytes(parameters[at + 8 : at + 16], "big"),
            )
        )
        at += 16
    return pairs


def run_chvote_processes(
    config: ChvoteConfig,
    progress: Callable[[str], None] | None = None,
    *,
    record: Path,
    sheets: Path | None = None,
    homes: Path | None = None,
    timeout: float = 600.0,
) -> ChvoteResult:
    """The same election with every authority, the printing authority and the voters' client in a process of
    its own over the channels (spec/92.12), driven from this process, which writes the record; then the
    independent verifier checks it. `homes` keeps the parties' identities between runs (a temporary directory
    otherwise). Raises `votum.parties.chvote.ChvoteFailed` naming the phase and the party when one fails."""
    import asyncio

    from votum.nodes.local import scratch_homes
    from votum.parties.chvote import run_local
    from votum.verifier import verify

    config.check()
    with scratch_homes("votum-chvote-") as scratch:
        run = asyncio.run(
            run_local(
                config.level,
                config.election,
                config.voters,
                config.authorities,
                record,
                homes or Path(scratch),
                sheets=sheets,
                timeout=timeout,
                progress=progress,
            )
        )
    if progress is not None:
        progress("verification")
    report = verify(record)
    return ChvoteResult(
        config=config,
        steps=[Step(name, seconds, config.voters) for name, seconds in run.phases],
        tally=run.tally,
        expected=run.expected,
        invalid=run.invalid,
        confirmed=run.confirmed,
        p_bits=1024 if config.level == 1 else 2048,
        elections=_elections(run.parameters),
        record=record,
        verified=report.passed,
        not_passed=report.not_passed(),
        head=str(report.intermediates.get("head", "")),
    )
