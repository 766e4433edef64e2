"""Tasks over one election's scattered parameters, with the failure rules of spec/98.5."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from votum.errors import ClusterError


@dataclass
class Task:
    """One submitted task: its future and what it was given (to send it again)."""

    future: Any
    fn: Callable[..., Any]
    args: tuple[Any, ...]
    what: str
    priority: int = 0


class Work:
    """Tasks `fn(params, *args)` on the cluster of `client`, the election's parameters scattered once
    to every worker. A task that fails (its worker lost more than the scheduler allows, its parameters
    lost with their workers) is sent once more with the parameters scattered again; a second failure,
    or no answer within `timeout` seconds, is a `ClusterError` naming the work."""

    def __init__(self, client: Any, params: bytes, *, timeout: float = 600.0) -> None:
        self.client = client
        self.params = params
        self.timeout = timeout
        self._scattered: Any = None
        #: tasks submitted, and tasks sent again after a failure
        self.tasks = 0
        self.resent = 0
        self._scatter()

    def _scatter(self) -> None:
        try:
            self._scattered = self.client.scatter(
                self.params, broadcast=True, hash=False, timeout=self.timeout
            )
        except TimeoutError as e:
            raise ClusterError(
                f"no answer from the cluster within {self.timeout:g} s for the election's parameters "
                f"(are there workers?): {e}"
            ) from e

    def submit(self, fn: Callable[..., Any], *args: Any, what: str, priority: int = 0) -> Task:
        """Sends `fn(params, *args)`; a higher `priority` runs before queued tasks of a lower one."""
        self.tasks += 1
        future = self.client.submit(fn, self._scattered, *args, pure=False, priority=priority)
        return Task(future, fn, args, what, priority)

    def result(self, task: Task) -> Any:
        try:
            return task.future.result(timeout=self.timeout)
        except TimeoutError as e:
            raise ClusterError(
                f"no answer from the cluster within {self.timeout:g} s for {task.what} (are there workers?)"
            ) from e
        except Exception as first:
            self.resent += 1
            self._scatter()
            again = self.submit(task.fn, *task.args, what=task.what, priority=task.priority)
            try:
                return again.future.result(timeout=self.timeout)
            except Exception as e:
                raise ClusterError(f"{task.what} failed on the cluster twice: {first!r}; then {e!r}") from e

    def threads(self) -> int:
        return sum(self.client.nthreads().values()) or 1

    def cancel(self, tasks: list[Task]) -> None:
        for t in tasks:
            t.future.cancel()
