"""A record's checks on a cluster (spec/98.3): an ElectionGuard record's ballots (the verifier's
`BallotWorkers`) and a mix record's shuffle proofs (its `ShuffleWorkers`).

The verifier hands over batches of 256 ballots in record order; each batch goes out as chunks of `chunk`
ballots, one task each, and the verdicts come back in the same order. The verifier keeps `window()`
batches in flight and merges each into its own ballot box as it is collected.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Any

import msgpack  # type: ignore[import-untyped]

from votum.cluster.tasks import check_ballots, check_shuffle
from votum.cluster.work import Task, Work
from votum.errors import ClusterError

#: ballots the verifier hands over at a time (votum-verify's BATCH)
BATCH = 256


def verdicts_of(answer: Any, n: int) -> list[bool]:
    """A ballot-check task's answer, which must be one boolean per ballot (spec/98.5)."""
    if not isinstance(answer, list) or len(answer) != n or not all(isinstance(v, bool) for v in answer):
        raise ClusterError(f"a worker's answer for {n} ballots is not one verdict per ballot")
    return answer


class DaskBallotWorkers:
    """Ballot checks on the Dask cluster of `client`, `chunk` ballots per task (spec/98.3)."""

    def __init__(self, client: Any, *, chunk: int = 64, task_timeout: float = 600.0) -> None:
        if not 1 <= chunk <= BATCH:
            raise ValueError(f"chunk must be 1 to {BATCH} ballots")
        self._client = client
        self._chunk = chunk
        self._timeout = task_timeout
        self.work: Work | None = None
        self._pending: deque[list[tuple[Task, int]]] = deque()
        self.shuffle_work: Work | None = None
        self._shuffles: list[Task] = []

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
            verdicts += verdicts_of(self.work.result(task), n)
        return verdicts

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
            verdicts.append((str(answer[0]), None if answer[1] is None else str(answer[1])))
        self._shuffles.clear()
        return verdicts

    def close(self) -> None:
        """Cancels whatever is still in flight (a stopped verification)."""
        if self.work is not None:
            self.work.cancel([t for batch in self._pending for t, _ in batch])
        if self.shuffle_work is not None:
            self.shuffle_work.cancel(self._shuffles)
        self._pending.clear()
        self._shuffles.clear()
