"""Verificatum mix-net sessions: `votum-verify` against VMN 3.1.0's own verifier `vmnv`, in the same run.

Run by `make bench-other-records`.

    python benches/bench_vmn.py [REPEATS] [SESSION ...]

`vmnv` is built from VMN's public sources by scripts/build-vmnv.sh in a scratch folder. The sessions are VMN's
own output: by default ONPE's `onpe50` (1,000 P-256 ciphertexts shuffled by 3 of 5 parties and decrypted, the
largest stored session) and `onpe100` (100 ciphertexts, 2 of 3 parties), taken from the git directory
$VMN_SESSIONS_GIT (soettam/VerificadorVerificatum; default: the tool library's mirror) into
$VOTUM_BENCH_DIR/vmn. A SESSION given is a directory holding protInfo.xml and dir/nizkp/<auxsid>/.

Each session is verified REPEATS times (3 by default) by each verifier, alternating; both must accept it (vmnv
exits 0 and does not say "failed" with -v on the first run; votum-verify passes every check).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VERIFIER = ROOT / "target" / "release" / "votum-verify"
BENCH = Path(os.environ.get("VOTUM_BENCH_DIR", "/tmp/votum-bench"))
SESSIONS_GIT = Path(os.environ.get("VMN_SESSIONS_GIT", "/work/.mirror/soettam+VerificadorVerificatum/repo"))


def default_sessions() -> list[Path]:
    out = BENCH / "vmn"
    if not (out / "datasets" / "onpe50" / "protInfo.xml").exists():
        out.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(
            ["git", "-C", str(SESSIONS_GIT), "archive", "HEAD", "datasets/onpe50", "datasets/onpe100"],
            check=True,
            capture_output=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(out)], input=archive, check=True)
    return [out / "datasets" / "onpe50", out / "datasets" / "onpe100"]


def proof_dir(session: Path) -> Path:
    dirs = sorted(p.parent for p in (session / "dir" / "nizkp").glob("*/type"))
    if len(dirs) != 1:
        raise SystemExit(f"{session}: expected one proof directory, found {len(dirs)}")
    return dirs[0]


def vmnv_command(vmnv: str, session: Path, verbose: bool = False) -> list[str]:
    nizkp = proof_dir(session)
    kind = (nizkp / "type").read_text().strip()
    flag = {"mixing": "-mix", "shuffling": "-shuffle", "decryption": "-decrypt"}[kind]
    auxsid = (nizkp / "auxsid").read_text().strip()
    return [
        vmnv,
        *(["-v"] if verbose else []),
        flag,
        "-auxsid",
        auxsid,
        "protInfo.xml",
        str(nizkp.relative_to(session)),
    ]


def timed(cmd: list[str], cwd: Path) -> tuple[float, str]:
    t0 = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    elapsed = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(
            f"{cmd[0]} refused {cwd} (exit {done.returncode}):\n{done.stdout[-800:]}{done.stderr[-800:]}"
        )
    return elapsed, done.stdout + done.stderr


def main() -> None:
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    sessions = [Path(a).resolve() for a in sys.argv[2:]] or default_sessions()
    vmnv = (
        subprocess.run([str(ROOT / "scripts" / "build-vmnv.sh")], check=True, capture_output=True, text=True)
        .stdout.strip()
        .splitlines()[-1]
    )
    print(f"machine: {os.cpu_count()} cores; vmnv: {vmnv}")
    for session in sessions:
        _, said = timed(vmnv_command(vmnv, session, verbose=True), session)
        if "failed" in said.lower() or "too few" in said.lower():
            raise SystemExit(f"vmnv found a failing proof in {session}:\n{said[-1500:]}")
        theirs: list[float] = []
        ours: list[float] = []
        for _ in range(repeats):
            theirs.append(timed(vmnv_command(vmnv, session), session)[0])
            t, said = timed([str(VERIFIER), "--quiet", str(session)], ROOT)
            if "every check passed" not in said:
                raise SystemExit(f"votum-verify did not pass {session}:\n{said}")
            ours.append(t)
        n = proof_dir(session)
        print(
            f"{session.name} ({n.name}): vmnv min {min(theirs):.2f} s "
            f"median {statistics.median(theirs):.2f} s; "
            f"votum-verify min {min(ours):.3f} s median {statistics.median(ours):.3f} s; "
            f"ratio min {min(theirs) / min(ours):.1f}x median "
            f"{statistics.median(theirs) / statistics.median(ours):.1f}x",
            flush=True,
        )


if __name__ == "__main__":
    main()
