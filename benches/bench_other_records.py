"""Other systems' records: `votum-verify` against each system's own verifier, in the same run. Run by
`make bench-other-records`.

    python benches/bench_other_records.py [VOTERS] [REPEATS] [GROUP] [--mixnet] [--make-only]

Belenios: an election of VOTERS voters (10,000 by default), one ballot each, on GROUP (BELENIOS-2048 by
default, or RFC-3526-2048) with one single trustee and a 2-of-3 threshold group, tallied and decrypted, made
once with Debian's belenios-tool 2.0 and kept in $VOTUM_BENCH_DIR (default /tmp/votum-bench) for later runs.
The ballots are made by `belenios-tool election generate-ballot`, one process per ballot on every core; the
archive is then written in Belenios' own format (tests/belenios_tool.py writes it byte for byte as
belenios-tool does, and `belenios-tool election verify` regenerates and compares it), and the tally, partial
decryptions and result are belenios-tool's. Timed: `belenios-tool election verify` and `votum-verify` on the
same archive, alternating, REPEATS times each (3 by default). Both must pass the archive.

With --mixnet (GROUP must then be RFC-3526-2048, the group with an embedding), Q2 is a mixnet ranking of three
(spec/94.6) and all four trustees shuffle it with `belenios-tool election shuffle` before the decryption: the
timed verifications then include four proofs of shuffle of VOTERS ciphertexts each.

The largest stored session of the other formats is IVXV's (`make bench-ivxv`, with its Go peer).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import belenios_tool as bt  # noqa: E402

VERIFIER = ROOT / "target" / "release" / "votum-verify"
# a voter's choices, by voter number: Q1 (blank, a, b), Q2 (1 to 2 of x, y, z)
CHOICES = [
    [[0, 1, 0], [1, 0, 0]],
    [[0, 0, 1], [0, 1, 1]],
    [[1, 0, 0], [0, 0, 1]],
    [[0, 1, 0], [1, 1, 0]],
    [[0, 0, 1], [0, 1, 0]],
]


def event(parent: str | None, height: int, kind: str, payload: str | None) -> bytes:
    """An event as Belenios writes it (compact JSON, its fields in this order)."""
    e: dict[str, object] = {}
    if parent is not None:
        e["parent"] = parent
    e["height"] = height
    e["type"] = kind
    if payload is not None:
        e["payload"] = payload
    return json.dumps(e, separators=(",", ":")).encode()


RANKINGS = [[1, 2, 3], [3, 1, 2], [2, 3, 1], [1, 3, 2], [3, 2, 1]]


def make(dir: Path, voters: int, group: str, mixnet: bool = False) -> bt.Election:
    election = bt.setup(
        dir,
        group=group,
        weights=[1] * voters,
        singles=1,
        threshold=(3, 2),
        questions=bt.MIXNET_QUESTIONS if mixnet else None,
    )
    choices = [[c[0], RANKINGS[i]] for i, c in enumerate(CHOICES)] if mixnet else CHOICES
    print(f"making {voters} ballots with belenios-tool on {os.cpu_count()} cores...", flush=True)
    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        ballots = list(pool.map(lambda i: election.ballot(i, choices[i % len(choices)]), range(voters)))
    print(f"  {time.perf_counter() - t0:.0f} s", flush=True)
    for f in dir.glob("cred*.txt"):
        f.unlink()
    for f in dir.glob("plain*.json"):
        f.unlink()
    entries = bt.read_archive(election.archive)
    mtime = entries[-1][2]
    last = entries[-1][0].split(".")[0]
    height = sum(1 for n, _, _ in entries if n.endswith(".event.json")) - 1
    for ballot in ballots:
        data = ballot.encode()
        h = bt.hashlib.sha256(data).hexdigest()
        entries.append((f"{h}.data.json", data, mtime))
        height += 1
        e = event(last, height, "Ballot", h)
        last = bt.hashlib.sha256(e).hexdigest()
        entries.append((f"{last}.event.json", e, mtime))
    bt.write_archive(election.archive, entries)
    print("tallying with belenios-tool...", flush=True)
    t0 = time.perf_counter()
    election.tally(owners=[1, 2, 4], shufflers=[1, 2, 3, 4] if mixnet else ())
    print(f"  {time.perf_counter() - t0:.0f} s", flush=True)
    return election


def timed(cmd: list[str], cwd: Path) -> float:
    t0 = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"{cmd[0]} did not pass the archive: {(done.stdout + done.stderr)[-800:]}")
    return seconds


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    voters = int(args[0]) if len(args) > 0 else 10_000
    repeats = int(args[1]) if len(args) > 1 else 3
    group = args[2] if len(args) > 2 else "BELENIOS-2048"
    mixnet = "--mixnet" in sys.argv
    kind = "-mixnet" if mixnet else ""
    dir = Path(os.environ.get("VOTUM_BENCH_DIR", "/tmp/votum-bench")) / f"belenios-{group}-{voters}{kind}"
    done_mark = dir / "made"
    if not done_mark.exists():
        if dir.exists():
            subprocess.run(["rm", "-rf", str(dir)], check=True)
        make(dir, voters, group, mixnet)
        done_mark.write_text("made by benches/bench_other_records.py\n")
    if "--make-only" in sys.argv:
        return
    archive = next(dir.glob("*.bel"))
    runs: dict[str, list[float]] = {"votum-verify": [], "belenios-tool verify": []}
    for _ in range(repeats):
        runs["belenios-tool verify"].append(timed([str(bt.TOOL), "election", "verify"], dir))
        runs["votum-verify"].append(timed([str(VERIFIER), "-q", str(archive)], dir))
    size = archive.stat().st_size / 2**20
    shape = "Q2 a mixnet ranking shuffled by 4 trustees" if mixnet else "2 questions (3 and 3 ciphertexts)"
    print(
        f"Belenios archive: {voters} ballots, {group}, {shape}, {size:.0f} MiB; "
        f"{os.cpu_count()} CPUs, {repeats} runs each, alternating"
    )
    for name, xs in runs.items():
        median = statistics.median(xs)
        print(f"{name:22} min {min(xs):.2f} s  median {median:.2f} s  ({voters / min(xs):,.0f} ballots/s)")
    ratio = statistics.median(runs["belenios-tool verify"]) / statistics.median(runs["votum-verify"])
    best = min(runs["belenios-tool verify"]) / min(runs["votum-verify"])
    print(f"ratio (belenios-tool / votum): median {ratio:.2f}x, min {best:.2f}x")


if __name__ == "__main__":
    main()
