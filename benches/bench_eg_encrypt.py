"""`make bench-eg-encrypt`: encrypting one ballot, single thread, votum against electionguard 1.4.0
in the same run, on the golden 1-of-4 manifest and the three-contest interop manifest."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import votum

ROOT = Path(__file__).resolve().parent.parent
RUNS = int(os.environ.get("BENCH_RUNS", "10"))
MANIFESTS = [
    ("1-of-4 (vectors/eg-1.4)", ROOT / "vectors" / "eg-1.4" / "manifest.json"),
    ("three contests (tests/peer)", ROOT / "tests" / "peer" / "manifest-three-contests.json"),
]
HEADER = [
    "manifest",
    "encryptions/ballot",
    "votum min / median ms",
    "reference (library default) min / median ms",
    "ratio",
    "reference with should_verify_proofs=True",
    "ratio",
]


def plaintext_for(manifest: dict[str, Any]) -> dict[str, Any]:
    contests = []
    for c in manifest["contests"]:
        sels = [
            {"object_id": s["object_id"], "vote": 1 if i < c["votes_allowed"] else 0}
            for i, s in enumerate(c["ballot_selections"])
        ]
        contests.append({"object_id": c["object_id"], "ballot_selections": sels})
    style = manifest["ballot_styles"][0]["object_id"]
    return {"object_id": "bench-ballot", "style_id": style, "contests": contests}


def encryptions(manifest: dict[str, Any]) -> int:
    return sum(len(c["ballot_selections"]) + c["number_elected"] for c in manifest["contests"])


def reference_times(manifest: Path, context: Path, plaintext: str) -> dict[str, list[float]]:
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "plaintext.json"
        p.write_text(plaintext)
        command = [
            str(ROOT / ".peer" / "bin" / "python"),
            str(ROOT / "benches" / "peer_eg_encrypt.py"),
            "--manifest", str(manifest),
            "--context", str(context),
            "--plaintext", str(p),
            "--runs", str(RUNS),
        ]  # fmt: skip
        out = subprocess.run(command, check=True, capture_output=True, text=True)
    result: dict[str, list[float]] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    context_path = ROOT / "vectors" / "eg-1.4" / "context.json"
    context = json.loads(context_path.read_text())
    group = votum.Group("eg-4096")
    k = group.element_from_int(votum.eg_from_hex(context["elgamal_public_key"]))
    q_ext = group.scalar(votum.eg_from_hex(context["crypto_extended_base_hash"]))
    print("| " + " | ".join(HEADER) + " |")
    print("|" + "---|" * len(HEADER))
    for name, path in MANIFESTS:
        text = path.read_text()
        manifest_json = json.loads(text)
        plaintext = json.dumps(plaintext_for(manifest_json))
        device = votum.EgEncryptionDevice(votum.EgManifest.from_json(text), k, q_ext)
        device.encrypt(plaintext, q_ext, 0)  # warm-up (tables are built in the constructor)
        ours = []
        for i in range(RUNS * 10):
            t = time.perf_counter()
            device.encrypt(plaintext, q_ext, i)
            ours.append(time.perf_counter() - t)
        ref = reference_times(path, context_path, plaintext)
        o_min, o_med = min(ours) * 1e3, statistics.median(ours) * 1e3
        cells = [f"{name} | {encryptions(manifest_json)} | {o_min:.2f} / {o_med:.2f}"]
        for key in ("library_default", "self_check"):
            r_min, r_med = min(ref[key]) * 1e3, statistics.median(ref[key]) * 1e3
            cells.append(f"{r_min:.1f} / {r_med:.1f} | {r_med / o_med:.1f}x")
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
