"""A record's checks on a cluster (spec/98.3): an ElectionGuard record's ballots (the verifier's
`BallotWorkers`), a mix record's shuffle proofs (its `ShuffleWorkers`) and a split-value record's
heavy checks (its `SvWorkers`).

The verifier hands over batches of 256 ballots in record order; each batch goes out as chunks of `chunk`
ballots, one task each, and the verdicts come back in the same order. The verifier keeps `window()`
batches in flight and merges each into its own ballot box as it is collected.

A worker cannot make a check fail: whatever does not pass on the cluster is checked again here, and
the finding is this process's own. A worker could make a check pass, so each passing answer is checked
again here with probability `recheck` (spec/98.3, issue 43, item 7), drawn after the answer arrived
from this machine's random source, which no worker sees; a passing answer that fails here ends the
run with `ClusterError`. `Recheck.statement()` says in the report what that bounds.
"""

from __future__ import annotations

import math
import os
import random
import secrets
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import msgpack  # type: ignore[import-untyped]

from votum.cluster.tasks import check_ballots, check_shuffle, check_sv, pow_fixed, pow_multi, record_size
from votum.cluster.work import Task, Work
from votum.errors import ClusterError

#: ballots the verifier hands over at a time (votum-verify's BATCH)
BATCH = 256
#: a mixer's batches of powers go before queued checks: the next shuffle waits on them, the checks only
#: have to be in before decryption
PROVER = 10


#: the share of passing answers checked again by default: a lie about one task is caught with this
#: probability, and one about t tasks with 1 − (1 − RECHECK)^t
RECHECK = 1 / 16


@dataclass
class Recheck:
    """Which passing answers are checked again here, and the count for the report."""

    rate: float = RECHECK
    rng: random.Random = field(default_factory=secrets.SystemRandom)
    #: tasks that answered pass, and of them those checked again here
    passing: int = 0
    rechecked: int = 0

    def __post_init__(self) -> None:
        if not 0.0 <= self.rate <= 1.0:
            raise ValueError("recheck is a share of the passing answers, 0 to 1")

    def pick(self) -> bool:
        """Whether to check this passing answer again (drawn now, after the answer came)."""
        self.passing += 1
        if self.rate >= 1.0 or (self.rate > 0.0 and self.rng.random() < self.rate):
            self.rechecked += 1
            return True
        return False

    def statement(self, scheduler: str, plaintext_remote: bool) -> dict[str, Any]:
        """What the report says of the cluster's part in it."""
        rate = self.rate
        if rate >= 1.0:
            said = "Every answer from the cluster was checked again here: the cluster decided nothing."
        elif self.passing == 0:
            said = "No check passed on the cluster: whatever did not pass was checked again here."
        else:
            said = (
                f"{self.passing} task(s) passed on the cluster; each was checked again here with "
                f"probability {rate:.3g}, drawn after its answer arrived ({self.rechecked} were, and "
                "agreed). "
                "What did not pass was checked again here. A cluster that passes t failing tasks goes "
                f"unnoticed with probability (1 - {rate:.3g})^t: {1 - rate:.3g} for one, "
                f"{(1 - rate) ** 10:.3g} for ten, {(1 - rate) ** 50:.3g} for fifty."
            )
            if rate == 0.0:
                said = (
                    f"{self.passing} task(s) passed on the cluster and none was checked again: the "
                    "cluster's workers decided them."
                )
        if plaintext_remote:
            said = (
                f"The scheduler {scheduler} was reached over plaintext tcp:// beyond this machine: anyone "
                "on the network could answer for its workers. " + said
            )
        return {
            "scheduler": scheduler,
            "plaintext_remote": plaintext_remote,
            "recheck": rate,
            "passing_tasks": self.passing,
            "rechecked_tasks": self.rechecked,
            "statement": said,
        }


def verdicts_of(answer: Any, n: int) -> list[bool]:
    """A ballot-check task's answer, which must be one boolean per ballot (spec/98.5)."""
    if not isinstance(answer, list) or len(answer) != n or not all(isinstance(v, bool) for v in answer):
        raise ClusterError(f"a worker's answer for {n} ballots is not one verdict per ballot")
    return answer


class DaskBallotWorkers:
    """Ballot checks on the Dask cluster of `client`, `chunk` ballots per task (spec/98.3)."""

    def __init__(
        self,
        client: Any,
        *,
        chunk: int = 64,
        task_timeout: float = 600.0,
        recheck: float | Recheck = RECHECK,
    ) -> None:
        if not 1 <= chunk <= BATCH:
            raise ValueError(f"chunk must be 1 to {BATCH} ballots")
        self.recheck = recheck if isinstance(recheck, Recheck) else Recheck(recheck)
        self._client = client
        self._chunk = chunk
        self._timeout = task_timeout
        self.work: Work | None = None
        self._pending: deque[list[tuple[Task, int]]] = deque()
        self.shuffle_work: Work | None = None
        self._shuffles: list[Task] = []
        self.sv_work: Work | None = None
        self._sv_record = ""
        self._sv_jobs: list[Task] = []
        self.pow_work: Work | None = None
        self._pow_params = b""

    # --- the verifier's side -------------------------------------------------------------------------

    def setup(self, params: bytes) -> None:
        self.work = Work(self._client, params, timeout=self._timeout)

    def submit(self, ballots: list[str]) -> None:
        assert self.work is not None, "setup comes first"
        n = self._chunk
        chunks = [ballots[i : i + n] for i in range(0, len(ballots), n)]
        what = "a chunk of {} ballot checks"
        self._pending.append(
            [(self.work.submit(check_ballots, c, what=what.format(len(c))), len(c)) for c in chunks]
        )

    def collect(self) -> list[bool]:
        assert self.work is not None, "setup comes first"
        verdicts: list[bool] = []
        for task, n in self._pending.popleft():
            got = verdicts_of(self.work.result(task), n)
            if all(got) and self.recheck.pick() and not all(check_ballots(self.work.params, *task.args)):
                self._lied(task)
            verdicts += got
        return verdicts

    def _lied(self, task: Task) -> None:
        try:
            who = ", ".join(sorted(self._client.who_has(task.future).get(task.future.key, ()))) or "a worker"
        except Exception:
            who = "a worker"
        raise ClusterError(
            f"the cluster answered pass for {task.what}, which does not pass here ({who}): its answers "
            "cannot be trusted; verify without --scheduler, or on workers you trust"
        )

    def window(self) -> int:
        threads = self.work.threads() if self.work is not None else 1
        return max(2, math.ceil(2 * threads / math.ceil(BATCH / self._chunk)))

    # --- a mix record's shuffle proofs: each a task, all in flight at once -------------------------------

    def shuffle_setup(self, parameters: bytes, joint: bytes) -> None:
        self.shuffle_work = Work(self._client, msgpack.packb((parameters, joint)), timeout=self._timeout)

    def shuffle_submit(self, context: bytes, input: bytes, payload: bytes) -> None:
        assert self.shuffle_work is not None, "shuffle_setup comes first"
        what = f"the check of shuffle {len(self._shuffles) + 1}"
        self._shuffles.append(self.shuffle_work.submit(check_shuffle, context, input, payload, what=what))

    def shuffle_collect(self) -> list[tuple[str, str | None]]:
        assert self.shuffle_work is not None, "shuffle_setup comes first"
        verdicts = []
        for task in self._shuffles:
            answer = self.shuffle_work.result(task)
            if (
                not isinstance(answer, tuple | list)
                or len(answer) != 2
                or answer[0] not in ("pass", "fail", "error")
            ):
                raise ClusterError(f"a worker's answer for {task.what} is not a verdict")
            if answer[0] != "pass":
                # checked again here: the finding is the client's own, and a worker that wrongly failed a
                # proof cannot change a report (spec/98.3)
                answer = check_shuffle(self.shuffle_work.params, *task.args)
            elif self.recheck.pick() and check_shuffle(self.shuffle_work.params, *task.args)[0] != "pass":
                self._lied(task)
            verdicts.append((str(answer[0]), None if answer[1] is None else str(answer[1])))
        self._shuffles.clear()
        return verdicts

    # --- a split-value record's heavy checks: each job a task, all in flight at once ---------------------

    def sv_setup(self, parameters: bytes, record: str) -> None:
        """The record is checked where it lies: every worker must read the same file at the same path
        (shared storage), which is checked here by its size before any job goes out."""
        path = os.path.abspath(record)
        size = os.path.getsize(path)
        try:
            seen = self._client.run(record_size, path, wait=True)
        except Exception as e:
            raise ClusterError(f"the cluster's workers could not be asked about the record: {e!r}") from e
        if not seen:
            raise ClusterError("the cluster has no workers to check the record")
        for worker, got in sorted(seen.items()):
            if got != size:
                why = got if isinstance(got, str) else f"a file of {got} bytes where the record has {size}"
                raise ClusterError(
                    f"worker {worker} cannot read the record at {path} ({why}): a split-value record is "
                    "checked where it lies, so put it on storage every worker reads at the same path"
                )
        self._sv_record = path
        self.sv_work = Work(self._client, parameters, timeout=self._timeout)

    def sv_submit(self, job: bytes) -> None:
        assert self.sv_work is not None, "sv_setup comes first"
        what = f"split-value check job {len(self._sv_jobs) + 1}"
        self._sv_jobs.append(self.sv_work.submit(check_sv, self._sv_record, job, what=what))

    def sv_collect(self) -> list[tuple[str, bytes | str]]:
        """Every job's answer, in order. An answer that is not a clean pass makes the verifier walk the
        record again in process (spec/98.3), so a worker cannot make a check fail; a clean pass is
        checked again here with probability `recheck`."""
        assert self.sv_work is not None, "sv_setup comes first"
        answers: list[tuple[str, bytes | str]] = []
        for task in self._sv_jobs:
            answer = self.sv_work.result(task)
            if (
                not isinstance(answer, tuple | list)
                or len(answer) != 2
                or (answer[0], type(answer[1])) not in (("ok", bytes), ("error", str))
            ):
                raise ClusterError(f"a worker's answer for {task.what} is not an answer")
            if answer[0] == "ok" and self.recheck.pick():
                here = check_sv(self.sv_work.params, self._sv_record, *task.args[1:])
                if tuple(here) != tuple(answer):
                    self._lied(task)
            answers.append((answer[0], answer[1]))
        self._sv_jobs.clear()
        return answers

    # --- a mixer's batches of powers (spec/98.7): each batch cut into pieces, all in flight at once -------

    def pow_setup(self, group: str, pk: bytes, h: bytes) -> None:
        params = msgpack.packb((group, pk, h))
        if self.pow_work is None or params != self._pow_params:
            self.pow_work = Work(self._client, params, timeout=self._timeout)
            self._pow_params = params

    def pow_fixed(self, chunks: list[tuple[str, bytes]]) -> list[bytes]:
        """Each chunk (a base's name, scalars) as one task, all at once; the answers in order."""
        return self._pow_tasks(pow_fixed, chunks, lambda item: f"a batch of powers of {item[0]}")

    def pow_multi(self, jobs: list[tuple[bytes, bytes]]) -> list[bytes]:
        """Each piece (bases, scalars) of a multi-exponentiation as one task, all at once."""
        return self._pow_tasks(pow_multi, jobs, lambda _: "a piece of a multi-exponentiation")

    def _pow_tasks(
        self, fn: Any, items: list[tuple[Any, bytes]], what: Callable[[tuple[Any, bytes]], str]
    ) -> list[bytes]:
        assert self.pow_work is not None, "pow_setup comes first"
        work = self.pow_work
        tasks = [work.submit(fn, *item, what=what(item), priority=PROVER) for item in items]
        return [self._bytes(work.result(t), t) for t in tasks]

    def pow_pieces(self) -> int:
        return 2 * (self.pow_work.threads() if self.pow_work is not None else 1)

    @staticmethod
    def _bytes(answer: Any, task: Task) -> bytes:
        if not isinstance(answer, bytes):
            raise ClusterError(f"a worker's answer for {task.what} is not bytes")
        return answer

    def close(self) -> None:
        """Cancels whatever is still in flight (a stopped verification)."""
        if self.work is not None:
            self.work.cancel([t for batch in self._pending for t, _ in batch])
        if self.shuffle_work is not None:
            self.shuffle_work.cancel(self._shuffles)
        if self.sv_work is not None:
            self.sv_work.cancel(self._sv_jobs)
        self._pending.clear()
        self._shuffles.clear()
        self._sv_jobs.clear()
