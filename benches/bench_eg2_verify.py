"""ElectionGuard 2.x records: `votum-verify` against egk-ec's own verifier (`RunVerifier`), in one run, on
the two stored egk-ec records (the 4096-bit group and P-256, 42 ballots each). Run by `make bench-eg2-verify`.

    python benches/bench_eg2_verify.py [REPEATS]

egk-ec is built from its public source with Maven in a scratch folder (scripts/build-egk-ec.sh). The two
verifiers run alternately, REPEATS times each (5 by default), each as a whole process; both must pass the
record. Prints min and median of each and the ratio of the medians. egk-ec's time includes the JVM's start
(about 0.5 s here), as a user running it meets it.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VERIFIER = ROOT / "target" / "release" / "votum-verify"
RECORDS = [
    ROOT / "vectors" / "eg2" / "egk-ec-all-available",
    ROOT / "vectors" / "eg2" / "egk-ec-all-available-p256",
]


def timed(cmd: list[str], passed: str | None) -> float:
    start = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    took = time.perf_counter() - start
    text = out.stdout + out.stderr
    if out.returncode != 0 or (passed is not None and passed not in text):
        sys.exit(f"{cmd[0]} did not pass the record:\n{text[-2000:]}")
    return took


def main() -> None:
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    classpath = subprocess.run(
        [str(ROOT / "scripts" / "build-egk-ec.sh")], capture_output=True, text=True, check=True
    ).stdout.strip()
    for record in RECORDS:
        print(f"{record.name}: {compare(record, classpath, repeats)}")


def compare(record: Path, classpath: str, repeats: int) -> str:
    """votum-verify and egk-ec's RunVerifier on `record`, alternately, `repeats` runs each (both must pass
    it): each one's min and median and the ratio of the medians."""
    votum: list[float] = []
    egk: list[float] = []
    for _ in range(repeats):
        votum.append(timed([str(VERIFIER), str(record)], None))
        egk.append(
            timed(
                ["java", "-cp", classpath, "org.cryptobiotic.eg.cli.RunVerifier", "-in", str(record)],
                "verified = true",
            )
        )
    vm, em = statistics.median(votum), statistics.median(egk)
    return (
        f"votum-verify min {min(votum):.2f} s median {vm:.2f} s; "
        f"egk-ec RunVerifier min {min(egk):.2f} s median {em:.2f} s; ratio of medians {em / vm:.1f}x"
    )


if __name__ == "__main__":
    main()
