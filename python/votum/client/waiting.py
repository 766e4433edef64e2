"""Bounded waiting for what other parties do (the parties' tools, spec/80.10): poll a condition until it
holds, at most so many seconds."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from votum.errors import VotumError


class WaitedTooLong(VotumError):
    """What the tool waits for (other guardians, the official) did not happen within `--wait`."""


@dataclass
class Waiter:
    """Polls until a condition holds, `seconds` at most (`None`: forever), `every` seconds apart."""

    seconds: float | None = 600.0
    every: float = 1.0
    sleep: Callable[[float], None] = time.sleep

    def until(self, what: str, ready: Callable[[], bool]) -> None:
        end = None if self.seconds is None else time.monotonic() + self.seconds
        while not ready():
            if end is not None and time.monotonic() > end:
                raise WaitedTooLong(f"waited {self.seconds:.0f} s for {what}; run the command again to go on")
            self.sleep(self.every)
