"""The independent verifier (spec/50): every check of an election record, by id, from the record alone.

`verify(record)` runs the Rust verifier (`votum-verify`) over an ElectionGuard 1.4 record directory, a
votum archive or a mixnet election's record (its V-MIX checks), streaming, with the GIL released, and
returns its report. The same verifier runs without Python as `cargo run -p votum-verify -- RECORD`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from votum._native import verify_record_report
from votum.errors import RecordFormatError, UnsupportedVersion, VerificationFailed

#: a check's statuses (spec/50.1)
PASS, FAIL, ERROR, NOT_RUN = "pass", "fail", "error", "not_run"


@dataclass(frozen=True)
class CheckResult:
    id: str
    title: str
    status: str
    checked: int
    #: the first failing objects, as (object, reason)
    findings: list[tuple[str, str]]
    #: failures beyond those listed
    more: int
    #: what is odd but not wrong, as (object, reason); never changes the status
    warnings: list[tuple[str, str]] = field(default_factory=list)


@dataclass(frozen=True)
class Soundness:
    """How sound one of the record's proofs is, as the record's parameters make it (spec/50.1)."""

    what: str
    #: -log2 of a cheating prover's chance per attempt
    bits: float
    #: below this the record is refused (a check fails); None: reported only
    floor: float | None


@dataclass(frozen=True)
class VerificationReport:
    record: str
    form: str
    ballots: int
    checks: list[CheckResult]
    #: values the verifier recomputed (hashes, joint key, encrypted tally, counts), to compare with others
    intermediates: dict[str, Any] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=dict, repr=False)
    #: the soundness of the proofs whose level depends on a parameter in the record
    soundness: list[Soundness] = field(default_factory=list)
    #: checked on a cluster: its address, how many of its passing answers were checked again here, and
    #: `statement`, what that bounds (`votum.cluster.ballots.Recheck`); None in one process
    cluster: dict[str, Any] | None = None
    #: the id of this record kind's readability check (V-RECORD-01, V-MIX-01, V-SV-01, V-CHV-01): an Error
    #: there means the record could not be read
    readable: str = "V-RECORD-01"
    #: the record is in a format version this build does not read (a typed fact from the verifier)
    unsupported_version: bool = False

    @property
    def passed(self) -> bool:
        """Whether every check passed."""
        return all(c.status == PASS for c in self.checks)

    def check(self, check_id: str) -> CheckResult:
        for c in self.checks:
            if c.id == check_id:
                return c
        raise KeyError(check_id)

    def not_passed(self) -> list[str]:
        """The ids of the checks that did not pass."""
        return [c.id for c in self.checks if c.status != PASS]

    def to_json(self) -> str:
        """The verifier's report (`raw`), with `cluster` when checked on one."""
        shown = self.raw if self.cluster is None else {**self.raw, "cluster": self.cluster}
        return json.dumps(shown, indent=2)

    def require(self) -> None:
        """Raises unless every check passed: `RecordFormatError` when the record could not be read
        (V-RECORD-01 is an Error; `UnsupportedVersion` when its finding is an unknown format version),
        `VerificationFailed` otherwise. The message names every check that did not pass, with its first
        finding."""
        bad = [c for c in self.checks if c.status != PASS]
        if not bad:
            return
        lines = []
        for c in bad:
            first = f": {c.findings[0][0]}: {c.findings[0][1]}" if c.findings else ""
            lines.append(f"{c.id} {c.status}{first}")
        message = f"{self.record}: " + "; ".join(lines)
        if any(c.id == self.readable and c.status == ERROR for c in self.checks):
            raise (UnsupportedVersion if self.unsupported_version else RecordFormatError)(message)
        raise VerificationFailed(message)


#: the kinds of record `verify(format=…)` and `votum verify --format` name (spec/50.11 and before)
FORMATS = (
    "electionguard",
    "mix",
    "split-value",
    "chvote",
    "ivxv",
    "belenios",
    "verificatum",
    "electionguard2",
    "electionguard-rust",
    "electionguard2.1",
)


def verify(
    record: str | os.PathLike[str],
    progress: Callable[[str, int], None] | None = None,
    *,
    scheduler: str | None = None,
    client: Any = None,
    chunk: int = 64,
    task_timeout: float = 600.0,
    tls: tuple[str, str, str] | None = None,
    announce: Callable[[str], None] | None = None,
    recheck: float | None = None,
    plaintext: bool = False,
    format: str | None = None,
    allow_toy_parameters: bool = False,
) -> VerificationReport:
    """Checks the record at `record` (an ElectionGuard 1.4 directory, a votum archive or a mix record
    file, spec/91.7), every check of spec/50 for its kind; never raises on a bad record: what is wrong
    is in the report. `progress(stage, n)` is told of documents, ballots and mix record entries.

    With `scheduler` (`local:N`, `tcp://…`, `tls://…`) or a `distributed.Client` as `client`, an
    ElectionGuard record's or a Belenios archive's ballots are checked on that cluster, `chunk` ballots per
    task, and a mix
    record's shuffle proofs one task each, all at once (spec/98.3); the report is the same. `tls` is
    (CA, certificate, key) for a `tls://` scheduler; `announce` is told the cluster's dashboard address.
    What does not pass on the cluster is checked again here; each passing answer is, with probability
    `recheck` (default 1/16; 1: every one), and the report's `cluster` says what that bounds.
    `plaintext` accepts a `tcp://` scheduler beyond this machine (refused otherwise). `format` names the
    record's kind (`FORMATS`) instead of detecting it from its files (ValueError for another name). Raises
    `ClusterError` when the cluster does not answer (spec/98.5) or a passing answer fails here.
    `allow_toy_parameters` takes an ElectionGuard 2.1 record on the specification's toy parameters as a
    test's: V-EG21-01 passes it with a warning instead of failing it (spec/66.1)."""
    if scheduler is None and client is None:
        text, intermediates = verify_record_report(record, progress, None, format, allow_toy_parameters)
        return _report(text, intermediates)
    from votum.cluster import DaskBallotWorkers, using
    from votum.cluster.ballots import RECHECK
    from votum.cluster.connect import is_plaintext_remote

    with using(scheduler, client, tls=tls, announce=announce, plaintext=plaintext) as c:
        workers = DaskBallotWorkers(
            c, chunk=chunk, task_timeout=task_timeout, recheck=RECHECK if recheck is None else recheck
        )
        try:
            text, intermediates = verify_record_report(
                record, progress, workers, format, allow_toy_parameters
            )
        finally:
            workers.close()
    address = scheduler if scheduler is not None else str(c.scheduler.address)
    return _report(text, intermediates, workers.recheck.statement(address, is_plaintext_remote(address)))


def _report(text: str, intermediates: str, cluster: dict[str, Any] | None = None) -> VerificationReport:
    raw = json.loads(text)
    checks = [
        CheckResult(
            id=c["id"],
            title=c["title"],
            status=c["status"],
            checked=c["checked"],
            findings=[(f["object"], f["reason"]) for f in c["findings"]],
            more=c["more"],
            warnings=[(f["object"], f["reason"]) for f in c.get("warnings", [])],
        )
        for c in raw["checks"]
    ]
    return VerificationReport(
        record=raw["record"],
        form=raw["form"],
        ballots=raw["ballots"],
        checks=checks,
        intermediates=json.loads(intermediates),
        raw=raw,
        soundness=[Soundness(s["what"], float(s["bits"]), s["floor"]) for s in raw.get("soundness", [])],
        cluster=cluster,
        readable=str(raw["readable"]),
        unsupported_version=bool(raw["unsupported_version"]),
    )
