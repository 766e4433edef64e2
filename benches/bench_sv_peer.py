"""Side by side, in the same run: the thesis's default split-value election (1,000 voters; one race
of two candidates and a 16-character write-in; 2m = 24; a 3×3 grid) in ron-rivest/split-value-voting
and in votum. The peer is a checkout given as SV_PEER (a directory holding sv_main.py; it is not part
of votum and is never installed by it). Each side runs `--repeat` times; min and median are printed
with their ratio. The peer's run includes writing its board (JSON) and verifying it, as votum's
includes writing its record and verifying it.

    SV_PEER=/path/to/split-value-voting python benches/bench_sv_peer.py [--voters 1000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from votum.sv import DEFAULT_RACE, SvConfig, run_sv_election


def peer_once(peer: Path, voters: int, work: Path) -> float:
    params = {
        "election_id": "thesis",
        "ballot_style": [["president", ["Smith", "Jones", "*" * 16]]],
        "n_voters": voters,
        "n_reps": 24,
        "n_fail": 0,
        "n_leak": 2,
        "ballot_id_len": 32,
        "json_indent": 0,
    }
    (work / "thesis.parameters.txt").write_text(json.dumps(params))
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, str(peer / "sv_main.py"), "thesis"],
        cwd=work,
        capture_output=True,
        text=True,
        check=True,
    )
    took = time.perf_counter() - start
    if "election outcome verified" not in out.stdout:
        raise SystemExit(f"the peer did not verify its election:\n{out.stdout[-2000:]}")
    return took


def votum_once(voters: int, work: Path) -> float:
    start = time.perf_counter()
    result = run_sv_election(SvConfig(voters=voters, races=(DEFAULT_RACE,)), record=work / "votum.vsv")
    took = time.perf_counter() - start
    if not result.verified:
        raise SystemExit(f"votum's record did not verify: {result.not_passed}")
    return took


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--voters", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    peer = os.environ.get("SV_PEER")
    if not peer or not (Path(peer) / "sv_main.py").exists():
        raise SystemExit(
            "set SV_PEER to a checkout of ron-rivest/split-value-voting (the directory with sv_main.py)"
        )
    ours: list[float] = []
    theirs: list[float] = []
    with tempfile.TemporaryDirectory(prefix="bench-sv-peer-") as tmp:
        work = Path(tmp)
        for _ in range(args.repeat):
            theirs.append(peer_once(Path(peer), args.voters, work))
            ours.append(votum_once(args.voters, work))
    for name, xs in (("ron-rivest/split-value-voting", theirs), ("votum", ours)):
        print(f"{name}: min {min(xs):.3f} s, median {statistics.median(xs):.3f} s over {len(xs)} runs")
    print(
        f"ratio (peer / votum): min {min(theirs) / min(ours):.0f}x, "
        f"median {statistics.median(theirs) / statistics.median(ours):.0f}x"
    )


if __name__ == "__main__":
    main()
