"""An ElectionGuard 2.1 record verified by the `votum-verify` binary, run by `make bench-eg21-verify`:

    python benches/bench_eg21_verify.py [BALLOTS] [REPEATS] [GROUP] [--vs OTHER_VERIFY_BINARY]

Writes one 2.1 record of BALLOTS ballots (1,000 by default; 5 % challenged, 5 guardians of whom 3 decrypt, the
embedded manifest) with `votum election --spec 2.1 --eg2-record 2.1` on GROUP (p256 by default), then verifies
it REPEATS times (5 by default) on one thread and on every core. With `--vs`, another verifier binary (older
build, say) verifies the same record in turn with it, run for run, and the ratio of each pair is printed:
pairs keep a ratio meaningful on a machine whose speed drifts. Prints the wall time of each configuration
(min and median) and the medians of the paired ratios.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VOTUM = ROOT / ".venv" / "bin" / "votum"
VERIFY = ROOT / "target" / "release" / "votum-verify"


def timed(binary: str, record: Path, threads: int | None) -> float:
    env = dict(os.environ)
    if threads is not None:
        env["RAYON_NUM_THREADS"] = str(threads)
    start = time.perf_counter()
    done = subprocess.run([binary, str(record)], stdout=subprocess.DEVNULL, env=env)
    elapsed = time.perf_counter() - start
    assert done.returncode == 0, f"{binary} did not pass the record"
    return elapsed


def main() -> None:
    args = sys.argv[1:]
    other = None
    if "--vs" in args:
        i = args.index("--vs")
        other = args[i + 1]
        del args[i : i + 2]
    ballots = int(args[0]) if args else 1000
    repeats = int(args[1]) if len(args) > 1 else 5
    group = args[2] if len(args) > 2 else "p256"
    with tempfile.TemporaryDirectory() as scratch:
        record = Path(scratch) / "record"
        election = ["election", "--spec", "2.1", "--eg2-record", "2.1", "--group", group]
        subprocess.run(
            [str(VOTUM), *election, "--ballots", str(ballots), "--out", str(record)],
            check=True,
            capture_output=True,
        )
        print(f"{group}, {ballots} ballots, {repeats} runs each; {os.cpu_count()} cores")
        for threads, label in ((1, "one thread"), (None, "every core")):
            mine, theirs = [], []
            for _ in range(repeats):
                mine.append(timed(str(VERIFY), record, threads))
                if other is not None:
                    theirs.append(timed(other, record, threads))
            line = f"  {label}: votum-verify {min(mine):.2f} / {statistics.median(mine):.2f} s (min / median)"
            if other is not None:
                ratios = [a / b for a, b in zip(mine, theirs, strict=True)]
                line += (
                    f"; --vs {min(theirs):.2f} / {statistics.median(theirs):.2f} s; "
                    f"ratio {statistics.median(ratios):.3f} (median of pairs)"
                )
            print(line, flush=True)


if __name__ == "__main__":
    main()
