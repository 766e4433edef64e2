"""`make bench-chvote`: votum's CHVote (spec/92) beside the Geneva proof of concept, same run.

Each configuration runs the proof of concept and votum's `bench-chvote` alternately, BENCH_REPEAT
times (default 2); per step the minimum and median of each, and the ratio of the minimums, are
printed as a Markdown table. The proof of concept is the build of scripts/setup-chvote-peer.sh
(CHVOTE_POC_BUILD), run with -XX:AutoBoxCacheMax=65536 (shared/reference/chvote-peer.md).

BENCH_CHVOTE_RUNS: comma-separated LEVEL:SHAPE:VOTERS (default
"2:SINGLE_VOTE:100,2:SIMPLE_SAMPLE:100,2:SINGLE_VOTE:1000"); BENCH_CHVOTE_POC=0 runs votum only.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VOTUM = ROOT / "target" / "release" / "bench-chvote"
POC = Path(os.environ.get("CHVOTE_POC_BUILD", Path(tempfile.gettempdir()) / "votum-chvote-poc"))
SHAPES = {"SINGLE_VOTE": "single", "SIMPLE_SAMPLE": "simple-sample"}
ROW = re.compile(r"^\|\s*([a-z ]+?)\s*\|\s*([\d,]+)\s*\|\s*$")


def run_poc(level: int, shape: str, voters: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as work:
        cp = f"{POC / 'target' / 'classes'}:{POC / 'target' / 'lib'}/*"
        cmd = [
            "java",
            "-XX:AutoBoxCacheMax=65536",
            "-cp",
            cp,
            "ch.ge.ve.protopoc.service.simulation.Simulation",
            str(level),
            shape,
            str(voters),
        ]
        subprocess.run(cmd, cwd=work, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        text = (Path(work) / "logs" / "simulation-performances.log").read_text()
    if "Vote simulation successful" not in text and "using LibGMP: true" not in text:
        sys.exit("the proof of concept did not report its run")
    table = text.split("| Step name")[1].split("###")[0]
    steps = {}
    for line in table.splitlines():
        m = ROW.match(line)
        if m:
            steps[m.group(1)] = float(m.group(2).replace(",", ""))
    return steps


def run_votum(level: int, shape: str, voters: int) -> dict[str, float]:
    out = subprocess.run(
        [str(VOTUM), str(level), SHAPES[shape], str(voters)], check=True, capture_output=True, text=True
    ).stdout
    return json.loads(out.strip().splitlines()[-1])["steps"]


def main() -> None:
    runs = os.environ.get("BENCH_CHVOTE_RUNS", "2:SINGLE_VOTE:100,2:SIMPLE_SAMPLE:100,2:SINGLE_VOTE:1000")
    repeat = int(os.environ.get("BENCH_REPEAT", "2"))
    with_poc = os.environ.get("BENCH_CHVOTE_POC", "1") != "0"
    cpu = next(
        (
            ln.split(":", 1)[1].strip()
            for ln in Path("/proc/cpuinfo").read_text().splitlines()
            if ln.startswith("model name")
        ),
        "?",
    )
    ifma = "avx512ifma" in Path("/proc/cpuinfo").read_text()
    print(f"machine: {os.cpu_count()} CPUs, {cpu}, AVX-512 IFMA: {'yes' if ifma else 'no'}")
    for spec in runs.split(","):
        level_s, shape, voters_s = spec.split(":")
        level, voters = int(level_s), int(voters_s)
        ours: list[dict[str, float]] = []
        theirs: list[dict[str, float]] = []
        for _ in range(repeat):
            if with_poc:
                theirs.append(run_poc(level, shape, voters))
            ours.append(run_votum(level, shape, voters))
        print(f"\n### level {level}, {shape}, N = {voters:,} ({repeat} runs each, alternating)\n")
        print("| step | PoC min (ms) | PoC median | votum min (ms) | votum median | ratio (min) |")
        print("|---|---:|---:|---:|---:|---:|")
        for name in ours[0]:
            o = [r[name] for r in ours]
            t = [r.get(name, float("nan")) for r in theirs] if theirs else [float("nan")]
            ratio = min(t) / min(o) if min(o) > 0 and theirs else float("nan")
            print(
                f"| {name} | {min(t):,.0f} | {statistics.median(t):,.0f} | {min(o):,.1f} | "
                f"{statistics.median(o):,.1f} | {ratio:,.1f}× |"
            )
        sys.stdout.flush()


if __name__ == "__main__":
    main()
