"""IVXV decryption proofs: `votum-verify` against the independent Go checker
(janwil123/IVXVDecryptionProofVerifier), in the same run, on the 2023 live demonstration's 69 proofs
repeated to N (as that checker's README does to stress it). Run by `make bench-ivxv`.

    IVXV_PEER=/path/to/ProofChecker python benches/bench_ivxv.py [N] [REPEATS]

The peer is built outside the repository: `go build ProofChecker.go` in its `RK2023/` folder. Without
IVXV_PEER only votum is timed. votum checks more than the peer (group membership, each ciphertext once: the
repeated proofs fail V-IVXV-03, as they should), and both check every proof's two equations.
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
SESSION = ROOT / "vectors" / "ivxv" / "rk2023-live"
VERIFIER = ROOT / "target" / "release" / "votum-verify"


def scaled(dir: Path, n: int) -> Path:
    doc = json.loads((SESSION / "RK2023_LIVEDEMO-proof").read_text())
    proofs = doc["proofs"]
    doc["proofs"] = [proofs[i % len(proofs)] for i in range(n)]
    out = dir / "session"
    out.mkdir()
    (out / "RK2023_LIVEDEMO-proof").write_text(json.dumps(doc))
    (out / "RK2023_LIVEDEMO-pub.pem").write_bytes((SESSION / "RK2023_LIVEDEMO-pub.pem").read_bytes())
    return out


def timed(cmd: list[str], cwd: Path) -> float:
    t0 = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if done.returncode not in (0, 1):
        raise SystemExit(f"{cmd[0]} failed: {done.stderr[-500:]}")
    return seconds


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 6900
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    peer = os.environ.get("IVXV_PEER")
    with tempfile.TemporaryDirectory() as tmp:
        session = scaled(Path(tmp), n)
        runs: dict[str, list[float]] = {"votum-verify": [], "Go ProofChecker": []}
        if peer:
            config = {
                "keyfile": str(session / "RK2023_LIVEDEMO-pub.pem"),
                "prooffile": str(session / "RK2023_LIVEDEMO-proof"),
            }
            (Path(tmp) / "config.json").write_text(json.dumps(config))
        for _ in range(repeats):
            runs["votum-verify"].append(timed([str(VERIFIER), str(session)], Path(tmp)))
            if peer:
                runs["Go ProofChecker"].append(timed([peer], Path(tmp)))
        print(
            f"{n} IVXV decryption proofs (3072-bit), {os.cpu_count()} CPUs, {repeats} runs each, alternating"
        )
        for name, xs in runs.items():
            if xs:
                rate = n / min(xs)
                median = statistics.median(xs)
                print(f"{name:16} min {min(xs):.2f} s  median {median:.2f} s  ({rate:,.0f} proofs/s)")
        if peer:
            ratio = statistics.median(runs["Go ProofChecker"]) / statistics.median(runs["votum-verify"])
            best = min(runs["Go ProofChecker"]) / min(runs["votum-verify"])
            print(f"ratio (peer / votum): median {ratio:.2f}x, min {best:.2f}x")


if __name__ == "__main__":
    main()
