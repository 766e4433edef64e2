"""The key ceremony (5 guardians, quorum 3, 20 backups sealed and checked, then the context), in one
native call (`votum.eg.run_ceremony`, guardians in parallel) against the same steps called one by one
from Python (each `backup_for` / `receive_backup` parsing the other guardian's record again), which
is how votum ran it before. Run once per thread count (RAYON_NUM_THREADS), 7 runs each.

    RAYON_NUM_THREADS=1 .venv/bin/python benches/bench_eg_ceremony.py
    RAYON_NUM_THREADS=2 .venv/bin/python benches/bench_eg_ceremony.py
"""

from __future__ import annotations

import json
import os
import statistics
import time

from votum import EgContext, EgGuardian, EgManifest
from votum.eg import manifest_from_names, run_ceremony

N, K, RUNS = 5, 3, 7


def step_by_step(manifest: EgManifest) -> None:
    guardians = [EgGuardian(f"guardian-{i}", i, N, K) for i in range(1, N + 1)]
    records = [g.public_record() for g in guardians]
    for sender, sender_record in zip(guardians, records, strict=True):
        for receiver, receiver_record in zip(guardians, records, strict=True):
            if receiver is not sender:
                receiver.receive_backup(sender_record, sender.backup_for(receiver_record))
    EgContext(records, K, manifest)


def timed(f: object) -> tuple[float, float]:
    times = []
    for _ in range(RUNS):
        t0 = time.perf_counter()
        f()  # type: ignore[operator]
        times.append((time.perf_counter() - t0) * 1e3)
    return min(times), statistics.median(times)


def main() -> None:
    manifest = EgManifest.from_json(json.dumps(manifest_from_names(["Party"], ["a", "b", "c", "d"])))
    run_ceremony(manifest, N, K)  # warm: the group's tables
    threads = os.environ.get("RAYON_NUM_THREADS", "all")
    one_call = timed(lambda: run_ceremony(manifest, N, K))
    steps = timed(lambda: step_by_step(manifest))
    print(
        f"threads={threads}: one native call {one_call[0]:.1f} / {one_call[1]:.1f} ms (min / median); "
        f"step by step from Python {steps[0]:.1f} / {steps[1]:.1f} ms; ratio {steps[0] / one_call[0]:.2f}x"
    )


if __name__ == "__main__":
    main()
