"""A large ElectionGuard 2.1 record (spec/66) verified from disk, run by `make bench-eg21-large`:

    python benches/bench_eg21_large.py [BALLOTS] [REPEATS] [GROUP]

Writes one 2.1 record of BALLOTS ballots (100,000 by default, 5 % challenged, 5 guardians of whom 3
decrypt, the embedded manifest) with `votum election --spec 2.1 --eg2-record 2.1` on GROUP (p256 by
default), then verifies it REPEATS times (1 by default) with the `votum-verify` binary on every core. Prints
the election's steps, the record's size, and per verification the wall time in ms per ballot (min and
median) and the verifier's peak resident memory.
"""

from __future__ import annotations

import json
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


def main() -> None:
    ballots = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    group = sys.argv[3] if len(sys.argv) > 3 else "p256"
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "record"
        args = ["election", "--spec", "2.1", "--eg2-record", "2.1", "--group", group]
        done = subprocess.run(
            [str(VOTUM), *args, "--ballots", str(ballots), "--out", str(out), "--json"],
            check=True,
            capture_output=True,
            text=True,
        )
        body = json.loads(done.stdout)
        assert body["verified"], "the record did not verify"
        print(f"{group}, {ballots} ballots: record {body['record_bytes']:,} bytes")
        for step in body["steps"]:
            print(f"  {step['name']}: {step['seconds']:.1f} s")
        times = []
        peak = 0.0
        for _ in range(repeats):
            start = time.perf_counter()
            child = subprocess.Popen([str(VERIFY), str(out)], stdout=subprocess.DEVNULL)
            _, status, usage = os.wait4(child.pid, 0)
            times.append(time.perf_counter() - start)
            assert os.waitstatus_to_exitcode(status) == 0, "the verifier did not pass the record"
            peak = max(peak, usage.ru_maxrss / 1024)
        per = [1000 * t / ballots for t in times]
        print(
            f"votum-verify: {min(per):.2f} / {statistics.median(per):.2f} ms per ballot (min / median of "
            f"{repeats}), {min(times):.0f} s; the verifier's peak resident memory {peak:,.0f} MiB"
        )


if __name__ == "__main__":
    main()
