"""ElectionGuard 2.x written by votum (spec/65.8), run by `make bench-eg21`:

    python benches/bench_eg21.py [BALLOTS] [RECORD_BALLOTS] [REPEATS]

1. `bench-eg21 BALLOTS` (crates/votum-bench): encryption per selection on one thread, and the whole election
   of BALLOTS ballots (1,000 by default) on every core, on P-256 and the 2.x 4096-bit group.
2. votum's own records of RECORD_BALLOTS ballots (100 by default), written by `votum election --spec 2.1`,
   verified by `votum-verify` and by egk-ec's own `RunVerifier` (built from source in a scratch folder by
   scripts/build-egk-ec.sh), alternately, REPEATS times each (3 by default), each as a whole process; both
   must pass every record. egk-ec's time includes its JVM's start.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from bench_eg2_verify import compare

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "target" / "release" / "bench-eg21"
VOTUM = ROOT / ".venv" / "bin" / "votum"


def main() -> None:
    ballots = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    record_ballots = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    repeats = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    subprocess.run([str(BENCH), str(ballots)], check=True)
    classpath = subprocess.run(
        [str(ROOT / "scripts" / "build-egk-ec.sh")], capture_output=True, text=True, check=True
    ).stdout.strip()
    with tempfile.TemporaryDirectory() as scratch:
        for group in ("p256", "eg2-4096"):
            record = Path(scratch) / group
            args = ["election", "--spec", "2.1", "--eg2-record", "egk-ec", "--group", group]
            args += ["--ballots", str(record_ballots)]
            out = ["--out", str(record), "--json"]
            subprocess.run([str(VOTUM), *args, *out], check=True, capture_output=True)
            print(f"votum's {group} record of {record_ballots} ballots (egk-ec passes it): ", end="")
            print(compare(record, classpath, repeats))


if __name__ == "__main__":
    main()
