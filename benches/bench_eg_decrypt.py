"""`make bench-eg-decrypt`: decrypting one spoiled ballot with 2 of 5 guardians missing (quorum 3), votum
against electionguard 1.4.0 in the same run, on votum's built-in manifest with 1 contest (a 1-of-4) and
with 3 contests (1-of-4, 2-of-5, 1-of-2: 11 selections).

votum: each present guardian produces its whole part (`EgGuardian.all_shares`: its own shares and those
standing in for the two missing guardians, constant-time), then the decryptor checks every proof (batch,
spec/64.4) and combines. The reference: benches/peer_eg_decrypt.py (the decryption ceremony with and
without the spoiled ballot; the difference of the medians). RAYON_NUM_THREADS sets votum's threads;
BENCH_RUNS (default 5) runs each; BENCH_PEER=0 skips the reference.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import votum
from votum.eg import run_ceremony
from votum.election import synthetic_manifest

RUNS = int(os.environ.get("BENCH_RUNS", "5"))
ROOT = Path(__file__).resolve().parent.parent
PEER = ROOT / ".peer" / "bin" / "python"
EG = votum.Group("eg-4096")


def votum_times(manifest: dict) -> tuple[list[float], list[float], int]:
    em = votum.EgManifest.from_json(json.dumps(manifest))
    done = run_ceremony(em, 5, 3)
    guardians, records, context = done.guardians, done.records, done.context
    q = context.extended_base_hash
    device = votum.EgEncryptionDevice(em, context.elgamal_public_key, q)
    contests = [
        {
            "object_id": c["object_id"],
            "ballot_selections": [
                {"object_id": s["object_id"], "vote": int(j == 0)}
                for j, s in enumerate(c["ballot_selections"])
            ],
        }
        for c in manifest["contests"]
    ]
    plain = json.dumps({"object_id": "spoiled-1", "style_id": "style-1", "contests": contests})
    ballot, _ = device.encrypt(plain, EG.scalar(1), 0, form="spoiled")
    target = votum.EgDecryptionTarget.from_ballot_json(ballot)
    decryptor = votum.EgDecryptor(records, 3, q)
    present = guardians[:3]
    missing_records = [m.public_record() for m in guardians[3:]]
    produce, check = [], []
    shares: list[votum.EgShares] = []
    for _ in range(RUNS):
        t0 = time.perf_counter()
        shares = [s for g in present for s in g.all_shares(target, q, missing_records)]
        t1 = time.perf_counter()
        counts = decryptor.decrypt(target, shares).counts
        t2 = time.perf_counter()
        assert sum(counts.values()) == len(manifest["contests"])
        produce.append(t1 - t0)
        check.append(t2 - t1)
    return produce, check, sum(len(s) for s in shares)


def reference_seconds(manifest: dict) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "manifest.json"
        path.write_text(json.dumps(manifest))
        out = subprocess.run(
            [str(PEER), str(ROOT / "benches" / "peer_eg_decrypt.py"), "--manifest", str(path),
             "--runs", str(max(3, RUNS // 2))],
            check=True, capture_output=True, text=True,
        )  # fmt: skip
    times = json.loads(out.stdout.strip().splitlines()[-1])
    return statistics.median(times["with_spoiled"]) - statistics.median(times["tally_only"])


def main() -> None:
    threads = os.environ.get("RAYON_NUM_THREADS", str(os.cpu_count()))
    peer = os.environ.get("BENCH_PEER", "1") != "0"
    if peer and not PEER.exists():
        raise SystemExit("the reference is not installed: run `make peer` first (or BENCH_PEER=0)")
    print(f"votum on {threads} thread(s), {RUNS} runs; reference: one spoiled ballot, difference of medians")
    print("| manifest | shares | votum produce min / median ms | votum check + combine min / median ms | "
          "votum total (min) ms | reference ms | ratio |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    for contests in (1, 3):
        manifest = synthetic_manifest(contests)
        produce, check, count = votum_times(manifest)
        total = min(p + c for p, c in zip(produce, check, strict=True)) * 1e3
        ref = reference_seconds(manifest) * 1e3 if peer else float("nan")
        print(
            f"| {contests} contest(s) | {count} | "
            f"{min(produce) * 1e3:.0f} / {statistics.median(produce) * 1e3:.0f} | "
            f"{min(check) * 1e3:.0f} / {statistics.median(check) * 1e3:.0f} | {total:.0f} | {ref:.0f} | "
            f"{ref / total:.1f}x |"
        )


if __name__ == "__main__":
    main()
