"""Timed steps and progress reporting, shared by votum's long jobs (election, demo)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

#: Called with (step name, items done, items total) as work advances.
ProgressHook = Callable[[str, int, int], None]


def no_progress(_name: str, _done: int, _total: int) -> None:
    """A hook that reports nothing."""


@dataclass(frozen=True)
class Step:
    name: str
    seconds: float
    items: int


@contextmanager
def timed(steps: list[Step], name: str, items: int) -> Iterator[None]:
    """Times the body and appends it to `steps` as one step of `items` items."""
    start = time.perf_counter()
    yield
    steps.append(Step(name, time.perf_counter() - start, items))


def total_seconds(steps: list[Step]) -> float:
    return sum(s.seconds for s in steps)
