"""`make bench-eg-pipeline`: a whole election, votum against electionguard 1.4.0 in the same run.

Both run the same manifest (votum's built-in one with 1 contest, a 1-of-4: 5 encryptions a ballot; and
with 5 contests: 28 encryptions a ballot), 5 guardians, quorum 3, 2 missing at decryption, no spoiled
ballots: key ceremony, encryption, casting with verification, tally, decryption with compensation and the
record export. votum runs `votum.election.run_election` with 1 and with 2 rayon threads, each in its own
process; its final re-verification of the record from disk is reported apart (the reference has no such
step). The reference runs tests/peer/eg14_election.py with the peer's Python 3.10, logging disabled.

Environment: BENCH_N (ballots with the 1-contest manifest, default 1000), BENCH_N5 (ballots with the
5-contest manifest, default 100), BENCH_RUNS (votum runs per thread count, default 2), BENCH_PEER=0
skips the reference. Prints a Markdown table; per-step figures go to stderr as JSON.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PEER = ROOT / ".peer" / "bin" / "python"
VERIFY_STEP = "verify the record from disk"


def votum_worker(manifest: Path, ballots: int, out: Path) -> None:
    """Runs in a child process: one election, prints its steps, wall time and peak RSS as JSON."""
    import resource
    import time

    from votum import record_pack
    from votum.election import ElectionConfig, run_election

    start = time.perf_counter()
    result = run_election(ElectionConfig(ballots=ballots, manifest=manifest, spoil_rate=0.0, out=out, seed=7))
    wall = time.perf_counter() - start
    steps = {s.name: s.seconds for s in result.steps}
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # the same record as votum's archive (spec/70), packed after the timed run
    archive = record_pack(out, out.with_name(out.name + ".votum"))
    print(json.dumps({"wall": wall, "steps": steps, "peak_mib": peak_kib / 1024,
                      "record_bytes": result.record_bytes, "archive_bytes": archive["bytes"]}))  # fmt: skip


def run_votum(manifest: Path, ballots: int, threads: int, work: Path) -> dict:
    env = {**os.environ, "RAYON_NUM_THREADS": str(threads)}
    out = work / f"votum-{threads}"
    proc = subprocess.run(
        [sys.executable, __file__, "--worker", str(manifest), str(ballots), str(out)],
        check=True, capture_output=True, text=True, env=env,
    )  # fmt: skip
    run: dict = json.loads(proc.stdout.strip().splitlines()[-1])
    run["pipeline"] = run["wall"] - run["steps"].get(VERIFY_STEP, 0.0)
    return run


def run_reference(manifest: Path, ballots: int, work: Path) -> dict:
    timings = work / "peer-timings.json"
    subprocess.run(
        [str(PEER), str(ROOT / "tests" / "peer" / "eg14_election.py"), "--out", str(work / "peer"),
         "--ballots", str(ballots), "--spoil-rate", "0", "--manifest", str(manifest),
         "--timings", str(timings), "--no-private-data"],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    steps = json.loads(timings.read_text())
    record = work / "peer" / "election_record"
    size = sum(p.stat().st_size for p in record.rglob("*.json"))
    return {"steps": steps, "pipeline": sum(steps.values()), "record_bytes": size}


def main() -> None:
    from votum.election import synthetic_manifest

    runs = int(os.environ.get("BENCH_RUNS", "2"))
    peer = os.environ.get("BENCH_PEER", "1") != "0"
    if peer and not PEER.exists():
        raise SystemExit("the reference is not installed: run `make peer` first (or BENCH_PEER=0)")
    cases = [(1, int(os.environ.get("BENCH_N", "1000"))), (5, int(os.environ.get("BENCH_N5", "100")))]
    rows = []
    for contests, n in cases:
        if n <= 0:
            continue
        with tempfile.TemporaryDirectory(prefix="votum-bench-") as tmp:
            work = Path(tmp)
            manifest = work / "manifest.json"
            manifest.write_text(json.dumps(synthetic_manifest(contests)))
            ours = {t: [run_votum(manifest, n, t, work) for _ in range(runs)] for t in (1, 2)}
            ref = run_reference(manifest, n, work) if peer else None
        print(
            json.dumps({"contests": contests, "ballots": n, "votum": ours, "reference": ref}), file=sys.stderr
        )
        rows.append((contests, n, ours, ref))

    header = [
        "manifest", "N", "votum 1 thread min / median s", "votum 2 threads min / median s", "2 vs 1",
        "reference s", "reference / votum 1 thread", "reference / votum 2 threads",
        "votum verify from disk, 2 threads s", "votum peak RSS MiB",
        "record KiB per ballot: votum eg14 JSON / votum archive / reference",
    ]  # fmt: skip
    print("| " + " | ".join(header) + " |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for contests, n, ours, ref in rows:
        one = [r["pipeline"] for r in ours[1]]
        two = [r["pipeline"] for r in ours[2]]
        ref_s = ref["pipeline"] if ref else float("nan")
        size_ours = ours[2][0]["record_bytes"] / n / 1024
        size_archive = ours[2][0]["archive_bytes"] / n / 1024
        size_ref = ref["record_bytes"] / n / 1024 if ref else float("nan")
        print(
            f"| {contests} contest(s) | {n} | {min(one):.1f} / {statistics.median(one):.1f} | "
            f"{min(two):.1f} / {statistics.median(two):.1f} | {min(one) / min(two):.2f}x | {ref_s:.1f} | "
            f"{ref_s / min(one):.1f}x | {ref_s / min(two):.1f}x | "
            f"{min(r['steps'].get(VERIFY_STEP, 0.0) for r in ours[2]):.1f} | "
            f"{max(r['peak_mib'] for r in ours[1] + ours[2]):.0f} | "
            f"{size_ours:.1f} / {size_archive:.1f} / {size_ref:.1f} |"
        )


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--worker":
        votum_worker(Path(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4]))
    else:
        main()
