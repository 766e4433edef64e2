"""`python -m votum.nodes.reaper DIR`: removes DIR once its standard input ends (`local.scratch_homes`).

The process that starts it holds the only write end of that pipe, so the input ends when that process
ends, however it ends (a `kill -9` included): the parties' scratch homes, which hold their private keys
and sealed state, do not outlive the run (issue 43, item 10). The parties themselves stop at the same
moment (`local.PARENT_PIPE`); what one of them writes while stopping is removed by a second pass."""

from __future__ import annotations

import os
import shutil
import signal
import sys
import time


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m votum.nodes.reaper DIR", file=sys.stderr)
        return 2
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while os.read(sys.stdin.fileno(), 4096):
        pass
    for pause in (1.0, 3.0, 0.0):  # the parties stop within a moment of the same end of input
        shutil.rmtree(argv[0], ignore_errors=True)
        if not os.path.exists(argv[0]):
            break
        time.sleep(pause)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
