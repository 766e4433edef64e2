"""`make bench-sv`, across processes: the thesis's election with 2m = 132 (the floor of 128 bits; a
3x3 grid, one race of two candidates and a 16-character write-in) with the board, the voters' client and the
nine mix servers each in its own process over the secure channels on this machine (spec/97.13), for each N
given. Prints the wall time per phase, the verifier's time, the record's size, the peak memory of every
process and the bytes sent per hop."""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path

from votum import SvParams
from votum.parties.sv import run_local
from votum.verifier import verify


def main() -> None:
    params = SvParams([("President", ["Smith", "Jones"], 16)], n_fail=0, n_leak=2)
    print(
        f"# split-value across processes: 3x3 grid, 2m = {params.copies}, one race (2 candidates + "
        "16-character write-in)"
    )
    for n in (int(a) for a in sys.argv[1:]):
        with tempfile.TemporaryDirectory(prefix="bench-sv-proc-") as tmp:
            record = Path(tmp) / "r.vsv"
            t0 = time.perf_counter()
            run = asyncio.run(run_local(params, n, record, Path(tmp) / "homes", timeout=3600))
            election = time.perf_counter() - t0
            t1 = time.perf_counter()
            report = verify(record)
            verifying = time.perf_counter() - t1
            if not report.passed:
                raise SystemExit(f"N={n}: the record does not verify: {report.not_passed()}")
            size = record.stat().st_size
        phases = ", ".join(f"{p.name} {p.seconds:.2f}s" for p in run.phases)
        print(
            f"N={n}: launch {run.launch_seconds:.2f}s, {phases}; election {election:.2f}s, "
            f"verify {verifying:.2f}s, total {election + verifying:.2f}s; "
            f"record {size / 1e6:.1f} MB in {run.entries} entries"
        )
        peaks = {p: u.get("peak_rss_kib", 0) // 1024 for p, u in sorted(run.usage.items())}
        print("  peak RSS MiB: " + ", ".join(f"{p} {m}" for p, m in peaks.items()))
        hops = {
            f"{p}->{to}": b
            for p, u in sorted(run.usage.items())
            for to, b in sorted(u.get("sent", {}).items())
            if to.startswith("server-") and p.startswith("server-")
        }
        print("  bytes per hop (MB): " + ", ".join(f"{h} {b / 1e6:.1f}" for h, b in hops.items()))
        to_board = sum(u.get("sent", {}).get("board", 0) for u in run.usage.values())
        print(f"  streamed to the board: {to_board / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
