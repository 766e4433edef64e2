"""Silences electionguard 1.4.0's logging, for the peer scripts (tests and benchmarks).

The library formats values and inspects the stack for every log call, before any level filter, which
costs time and floods the output. Its modules import the log functions by name, so each loaded module
is patched. Call after importing electionguard.
"""

from __future__ import annotations

import sys


def quiet_logs() -> None:
    def silent(*args: object, **kwargs: object) -> None:
        return None

    for name, module in list(sys.modules.items()):
        if name.startswith("electionguard") and module is not None:
            for fn in ("log_debug", "log_info", "log_warning", "log_error"):
                if hasattr(module, fn):
                    setattr(module, fn, silent)
