"""`make bench-eg-decrypt`: decrypting one spoiled ballot with 2 of 5 guardians missing (quorum 3), votum
alone, split into producing the proven shares (3 direct + 2x3 compensated per selection, constant-time
exponentiations) and checking + combining them (batch, spec/64.4). The ballot has the three contests of
the built-in manifest (11 selections). The reference comparison belongs to `make bench-eg` (not yet)."""

from __future__ import annotations

import json
import os
import statistics
import time

import votum
from votum.election import synthetic_manifest

RUNS = int(os.environ.get("BENCH_RUNS", "5"))
EG = votum.Group("eg-4096")


def main() -> None:
    manifest = synthetic_manifest(3)
    em = votum.EgManifest.from_json(json.dumps(manifest))
    guardians = [votum.EgGuardian(f"guardian-{i}", i, 5, 3) for i in range(1, 6)]
    records = [g.public_record() for g in guardians]
    for sender, sr in zip(guardians, records, strict=True):
        for receiver, rr in zip(guardians, records, strict=True):
            if receiver is not sender:
                receiver.receive_backup(sr, sender.backup_for(rr))
    context = votum.EgContext(records, 3, em)
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
    present, missing = guardians[:3], guardians[3:]
    produce, check = [], []
    for _ in range(RUNS):
        t0 = time.perf_counter()
        shares = [g.decryption_shares(target, q) for g in present]
        shares += [g.compensated_shares(m.public_record(), target, q) for m in missing for g in present]
        t1 = time.perf_counter()
        counts = decryptor.decrypt(target, shares).counts
        t2 = time.perf_counter()
        assert sum(counts.values()) == 3
        produce.append(t1 - t0)
        check.append(t2 - t1)
    threads = os.environ.get("RAYON_NUM_THREADS", str(os.cpu_count()))
    print("| one spoiled ballot, 11 selections, 2 of 5 missing | min / median ms |")
    print("|---|---|")
    for label, times in (("produce 99 proven shares", produce), ("check and combine", check)):
        low, mid = min(times) * 1e3, statistics.median(times) * 1e3
        print(f"| {label}, {threads} thread(s) | {low:.0f} / {mid:.0f} |")


if __name__ == "__main__":
    main()
