"""`make bench-verify`: the independent verifier against the reference package's own checks, same record,
same run; then the verifier alone on large records.

The record: a votum election with the 1-contest manifest of `make bench-eg-pipeline` (a 1-of-4), 5
guardians, quorum 3, 2 missing at decryption, BENCH_N ballots (default 1000), BENCH_SPOIL spoiled
(default 0, as in the pipeline benchmark), written as an ElectionGuard 1.4 directory. votum runs the
standalone auditor's binary `target/release/votum-verify` (built with `cargo build -p votum-verify`, so
without any proving code) with 1 and with 2 rayon threads, BENCH_RUNS times each (default 3): all 20
checks of spec/50. The reference runs benches/peer_verify_record.py with the peer's Python 3.10:
`is_valid_encryption` on every ballot and `is_valid` on every decryption share (a subset of votum's
checks: no style, chain, tally-product, recovery-key or count checks).

BENCH_SCALE: comma-separated record directories (or archives) to verify with 2 threads, votum only
(for example the N = 16,384 and 131,072 records of `votum election --ballots N`); each row gives the
time, ballots per second and the verifier's peak RSS. BENCH_PEER=0 skips the reference.
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
PEER = ROOT / ".peer" / "bin" / "python"
BINARY = ROOT / "target" / "release" / "votum-verify"


def run_verifier(record: Path, threads: int) -> dict:
    """One run of the standalone verifier: wall seconds, that process's peak RSS, its ballot count."""
    env = {**os.environ, "RAYON_NUM_THREADS": str(threads)}
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(
            [str(BINARY), str(record), "--json", "-q"], stdout=subprocess.PIPE, stderr=err, env=env
        )
        assert proc.stdout is not None
        out = proc.stdout.read()
        # wait4 reaps the child and returns its own resource usage (ru_maxrss in KiB on Linux)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here: tell Popen
        if proc.returncode != 0:
            err.seek(0)
            raise SystemExit(
                f"votum-verify failed on {record} ({proc.returncode}): {err.read().decode()[-2000:]}"
            )
    report = json.loads(out)
    return {"wall": wall, "peak_mib": usage.ru_maxrss / 1024, "ballots": report["ballots"]}


def make_record(work: Path, ballots: int, spoil: float) -> Path:
    from votum.election import ElectionConfig, run_election, synthetic_manifest

    manifest = work / "manifest.json"
    manifest.write_text(json.dumps(synthetic_manifest(1)))
    out = work / "record"
    run_election(ElectionConfig(ballots=ballots, manifest=manifest, spoil_rate=spoil, out=out, seed=7))
    return out


def run_reference(record: Path) -> dict:
    proc = subprocess.run(
        [str(PEER), str(ROOT / "benches" / "peer_verify_record.py"), "--record", str(record)],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    result: dict = json.loads(proc.stdout.strip().splitlines()[-1])
    if result["rejected"]:
        raise SystemExit(f"the reference rejected {result['rejected']} objects of the benchmark record")
    return result


def main() -> None:
    n = int(os.environ.get("BENCH_N", "1000"))
    spoil = float(os.environ.get("BENCH_SPOIL", "0"))
    runs = int(os.environ.get("BENCH_RUNS", "3"))
    peer = os.environ.get("BENCH_PEER", "1") != "0"
    scale = [Path(p) for p in os.environ.get("BENCH_SCALE", "").split(",") if p]
    if peer and not PEER.exists():
        raise SystemExit("the reference is not installed: run `make peer` first (or BENCH_PEER=0)")
    if not BINARY.exists():
        raise SystemExit(f"{BINARY} is missing: run `cargo build --release -p votum-verify` first")
    if n > 0:
        with tempfile.TemporaryDirectory(prefix="votum-bench-verify-") as tmp:
            record = make_record(Path(tmp), n, spoil)
            ours = {t: [run_verifier(record, t) for _ in range(runs)] for t in (1, 2)}
            ref = run_reference(record) if peer else None
        print(json.dumps({"ballots": n, "votum": ours, "reference": ref}), file=sys.stderr)
        one = [r["wall"] for r in ours[1]]
        two = [r["wall"] for r in ours[2]]
        nan = float("nan")
        ref_s, ref_ballots, ref_shares = (
            (ref["total_s"], ref["ballots_s"], ref["shares_s"]) if ref else (nan, nan, nan)
        )
        print(
            "| N | votum-verify 1 thread min / median s | 2 threads min / median s | 2 vs 1 | "
            "reference s (ballots + shares) | reference / votum 1 thread | reference / votum 2 threads | "
            "votum ballots/s (2 threads) |"
        )
        print("|---|---|---|---|---|---|---|---|")
        print(
            f"| {n} | {min(one):.2f} / {statistics.median(one):.2f} | {min(two):.2f} / "
            f"{statistics.median(two):.2f} | {min(one) / min(two):.2f}x | {ref_s:.1f} "
            f"({ref_ballots:.1f} + {ref_shares:.1f}) | "
            f"{ref_s / statistics.median(one):.1f}x | {ref_s / statistics.median(two):.1f}x | "
            f"{n / min(two):.0f} |"
        )
    if scale:
        print()
        print("| record | ballots | votum-verify 2 threads s | ballots/s | peak RSS MiB |")
        print("|---|---|---|---|---|")
        for record in scale:
            r = run_verifier(record, 2)
            print(
                f"| {record.name} | {r['ballots']} | {r['wall']:.1f} | {r['ballots'] / r['wall']:.0f} | "
                f"{r['peak_mib']:.0f} |"
            )


if __name__ == "__main__":
    main()
