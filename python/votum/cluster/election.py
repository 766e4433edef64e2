"""An election's encryption and ballot checks on a cluster (spec/98.1, 98.4).

`ClusterBallots` does for a batch what the in-process device and ballot box do: `start` sends the batch's
plaintext ballots out in chunks to be encrypted and checked (one task per chunk), `finish` collects them,
chains their ballot codes from the device's last code (spec/98.4) and hands back the verdicts, which the
election's own ballot box then merges (`EgBallotBox.submit_judged`, spec/98.3).
"""

from __future__ import annotations

from typing import Any

from votum import EgEncryptionDevice, Scalar
from votum.cluster.ballots import verdicts_of
from votum.cluster.tasks import encrypt_ballots
from votum.cluster.work import Task, Work
from votum.errors import ClusterError


class ClusterBallots:
    """Encryption and ballot checks of one election (its ballot-check parameters `params`) on the cluster
    of `client`, `chunk` ballots per task."""

    def __init__(self, client: Any, params: bytes, *, chunk: int = 64, task_timeout: float = 600.0) -> None:
        self.work = Work(client, params, timeout=task_timeout)
        self.chunk = chunk

    def start(
        self, items: list[tuple[str, int, str]], nonces: list[int] | None = None
    ) -> list[tuple[Task, int]]:
        """Sends (plaintext JSON, timestamp, form) items out to be encrypted and checked; returns at
        once. `nonces`: master nonces as integers, one per item, or None (the workers draw them)."""
        tasks = []
        for i in range(0, len(items), self.chunk):
            chunk = items[i : i + self.chunk]
            given = None if nonces is None else nonces[i : i + self.chunk]
            what = f"encrypting a chunk of {len(chunk)} ballots"
            tasks.append((self.work.submit(encrypt_ballots, chunk, given, what=what), len(chunk)))
        return tasks

    def finish(
        self, tasks: list[tuple[Task, int]], items: list[tuple[str, int, str]], code: Scalar
    ) -> tuple[list[str | Exception], list[bool], Scalar]:
        """The batch `start` sent out: each ballot encrypted with its code chained from `code` (or the
        exception that refused it, which takes no place in the chain), the verdicts of the encrypted
        ones in order (spec/98.3), and the last code."""
        encrypted: list[tuple[str, str] | Exception] = []
        verdicts: list[bool] = []
        for task, n in tasks:
            answer = self.work.result(task)
            ok = isinstance(answer, tuple) and len(answer) == 2 and isinstance(answer[0], list)
            if not ok or len(answer[0]) != n:
                raise ClusterError(f"a worker's answer for {n} ballots to encrypt is not one per ballot")
            ballots, checked = answer
            done = sum(1 for b in ballots if isinstance(b, tuple))
            verdicts += verdicts_of(checked, done)
            encrypted += ballots
        chain_items = [
            (b[0], timestamp, b[1])
            for b, (_p, timestamp, _f) in zip(encrypted, items, strict=True)
            if isinstance(b, tuple)
        ]
        chained, last = EgEncryptionDevice.chain(chain_items, code)
        it = iter(chained)
        out: list[str | Exception] = [b if isinstance(b, Exception) else next(it) for b in encrypted]
        return out, verdicts, last
