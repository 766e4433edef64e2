"""`make bench-eg-verify`: checking submitted ballots (all proofs, hashes, subgroup checks of the
ciphertexts), votum's ballot box against electionguard 1.4.0's `is_valid_encryption`, in the same run:
the golden 1-of-4 ballot (vectors/eg-1.4/submitted_ballot.json) alone, and a batch of BENCH_BATCH
(default 1,000) 1-of-4 ballots encrypted by votum for the same election, cast with `submit_many`
(batch verification, spec/62.4). The reference has no batch mode: its per-ballot time is the same."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import time
from pathlib import Path

import votum

ROOT = Path(__file__).resolve().parent.parent
RUNS = int(os.environ.get("BENCH_RUNS", "10"))
VECTORS = ROOT / "vectors" / "eg-1.4"


def main() -> None:
    context = json.loads((VECTORS / "context.json").read_text())
    group = votum.Group("eg-4096")
    k = group.element_from_int(votum.eg_from_hex(context["elgamal_public_key"]))
    q_ext = group.scalar(votum.eg_from_hex(context["crypto_extended_base_hash"]))
    manifest = votum.EgManifest.from_json((VECTORS / "manifest.json").read_text())
    box = votum.EgBallotBox(manifest, k, q_ext)
    ballot = (VECTORS / "submitted_ballot.json").read_text()
    box.verify(ballot)  # warm-up
    ours = []
    for _ in range(RUNS * 5):
        t = time.perf_counter()
        box.verify(ballot)
        ours.append(time.perf_counter() - t)
    batch = int(os.environ.get("BENCH_BATCH", "1000"))
    device = votum.EgEncryptionDevice(manifest, k, q_ext)
    plain = json.loads(ballot)
    ballots = []
    code = group.scalar(1)
    for i in range(batch):
        contests = [
            {
                "object_id": c["object_id"],
                "ballot_selections": [
                    {"object_id": s["object_id"], "vote": int(j == i % 4)}
                    for j, s in enumerate(
                        x for x in c["ballot_selections"] if not x["is_placeholder_selection"]
                    )
                ],
            }
            for c in plain["contests"]
        ]
        text = json.dumps({"object_id": f"bench-{i}", "style_id": plain["style_id"], "contests": contests})
        encrypted, code = device.encrypt(text, code, 1_800_000_000 + i, form="cast")
        ballots.append((encrypted, "cast"))
    batches = []
    for _ in range(3):
        fresh = votum.EgBallotBox(manifest, k, q_ext)
        t = time.perf_counter()
        outcomes = fresh.submit_many(ballots)
        batches.append((time.perf_counter() - t) / batch)
        assert not any(isinstance(o, Exception) for o in outcomes)
    command = [
        str(ROOT / ".peer" / "bin" / "python"),
        str(ROOT / "benches" / "peer_eg_verify.py"),
        "--ballot", str(VECTORS / "submitted_ballot.json"),
        "--context", str(VECTORS / "context.json"),
        "--runs", str(RUNS),
    ]  # fmt: skip
    out = subprocess.run(command, check=True, capture_output=True, text=True)
    ref = json.loads(out.stdout.strip().splitlines()[-1])["per_ballot_s"]
    o_min, o_med = min(ours) * 1e3, statistics.median(ours) * 1e3
    r_min, r_med = min(ref) * 1e3, statistics.median(ref) * 1e3
    print(
        "| ballot | votum min / median ms | reference is_valid_encryption min / median ms | ratio (median) |"
    )
    print("|---|---|---|---|")
    threads = os.environ.get("RAYON_NUM_THREADS", str(os.cpu_count()))
    row = f"| lone 1-of-4 ballot, votum on {threads} thread(s) | {o_min:.2f} / {o_med:.2f} "
    print(row + f"| {r_min:.1f} / {r_med:.1f} | {r_med / o_med:.1f}x |")
    b_min, b_med = min(batches) * 1e3, statistics.median(batches) * 1e3
    row = f"| batch of {batch:,} 1-of-4 ballots (per ballot), votum on {threads} thread(s) "
    row += f"| {b_min:.2f} / {b_med:.2f} "
    print(row + f"| {r_min:.1f} / {r_med:.1f} | {r_med / b_med:.1f}x |")


if __name__ == "__main__":
    main()
