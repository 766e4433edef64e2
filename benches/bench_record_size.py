"""The size of one election's record in each form votum writes, run by `make bench-record-size`:

    python benches/bench_record_size.py [BALLOTS] [CONTESTS]

The same election (the synthetic manifest of `votum election --contests CONTESTS`, BALLOTS ballots, the same
seed and challenge/spoil rate, 5 guardians of which 2 are missing) written four times: ElectionGuard 1.0 as
electionguard 1.4.0's directory and as votum's one-file archive (spec/70), and ElectionGuard 2.x as egk-ec's
JSON (spec/65.8) on P-256 and on the 2.x 4096-bit group, the 2.x elections reading the same manifest file.
Each record must pass `votum verify` (its exit status is checked). Prints bytes, bytes per ballot, and each
form's size against the 1.0 directory's (issue 44's target: a 2.x record at most a third of votum's 1.0 record
for the same election).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from votum.election import synthetic_manifest

ROOT = Path(__file__).resolve().parent.parent
VOTUM = ROOT / ".venv" / "bin" / "votum"


def size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def main() -> None:
    ballots = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    contests = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    common = ["--ballots", str(ballots), "--seed", "2026", "--spoil-rate", "0.05"]
    with tempfile.TemporaryDirectory() as scratch:
        s = Path(scratch)
        manifest = s / "manifest.json"
        manifest.write_text(json.dumps(synthetic_manifest(contests)))
        v1 = ["election", *common, "--contests", str(contests)]
        v2 = ["election", "--spec", "2.1", "--eg2-record", "egk-ec", *common, "--manifest", str(manifest)]
        forms = {
            "1.0, electionguard 1.4 directory": (s / "eg14", [*v1, "--out", str(s / "eg14")]),
            "1.0, votum archive": (s / "r.votum", [*v1, "--format", "votum", "--out", str(s / "r.votum")]),
            "2.x, egk-ec JSON, P-256": (s / "p256", [*v2, "--group", "p256", "--out", str(s / "p256")]),
            "2.x, egk-ec JSON, 4096-bit": (
                s / "g4096",
                [*v2, "--group", "eg2-4096", "--out", str(s / "g4096")],
            ),
        }
        sizes = {}
        for name, (path, args) in forms.items():
            subprocess.run([str(VOTUM), *args, "--json"], check=True, capture_output=True)
            subprocess.run([str(VOTUM), "verify", str(path)], check=True, capture_output=True)
            sizes[name] = size(path)
        base = sizes["1.0, electionguard 1.4 directory"]
        print(f"{ballots} ballots, synthetic manifest of {contests} contests; every record verified")
        for name, n in sizes.items():
            per = n / ballots / 1024
            print(f"{name:36} {n / 2**20:9.1f} MiB {per:7.1f} KiB a ballot {n / base:6.3f} of 1.0's")


if __name__ == "__main__":
    main()
