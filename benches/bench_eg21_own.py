"""ElectionGuard 2.1 itself (spec/66) beside egk-ec's 2.0 form (spec/65.8), run by `make bench-eg21-own`:

    python benches/bench_eg21_own.py [BALLOTS] [REPEATS]

The same election (BALLOTS ballots, 200 by default, 5 guardians of whom 3 decrypt, 5 % challenged) written by
`votum election --spec 2.1` as egk-ec's record and as 2.1's own (`--eg2-record 2.1 --chaining`), alternately,
REPEATS times each (3 by default), on P-256 and the 2.x 4096-bit group, on every core. Per form: encryption
and verification in ms per ballot (min and median of the runs), the record's size, and the ratios
2.1 / egk-ec. Then a third run of the 2.1 form per repeat, with as many pre-encrypted ballots as ordinary
ones (`--pre-encrypted BALLOTS`, spec/66.10): printing and recording in ms per pre-encrypted ballot beside
encryption in ms per ordinary ballot in the same run, and their ratio.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VOTUM = ROOT / ".venv" / "bin" / "votum"


def run(form: str, group: str, ballots: int, out: Path, pre: int = 0) -> dict[str, float]:
    extra = (
        ["--eg2-record", "2.1", "--chaining", "--pre-encrypted", str(pre)]
        if form == "2.1"
        else ["--eg2-record", "egk-ec"]
    )
    args = ["election", "--spec", "2.1", "--group", group, "--ballots", str(ballots), *extra]
    done = subprocess.run(
        [str(VOTUM), *args, "--out", str(out), "--json"], check=True, capture_output=True, text=True
    )
    body = json.loads(done.stdout)
    assert body["verified"], f"{form} {group}: the record did not verify"
    steps = {s["name"]: s["seconds"] for s in body["steps"]}
    return {
        "pre": 1000 * steps.get("pre-encrypted ballots", 0.0) / ballots,
        "encrypt": 1000 * steps["encryption"] / ballots,
        "verify": 1000 * steps["verification"] / ballots,
        "decrypt": 1000 * steps["decryption"],
        "bytes": body["record_bytes"],
    }


def main() -> None:
    ballots = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    with tempfile.TemporaryDirectory() as scratch:
        for group in ("p256", "eg2-4096"):
            runs: dict[str, list[dict[str, float]]] = {"egk-ec": [], "2.1": []}
            with_pre: list[dict[str, float]] = []
            for i in range(repeats):
                for form in ("egk-ec", "2.1"):
                    runs[form].append(run(form, group, ballots, Path(scratch) / f"{group}-{form}-{i}"))
                with_pre.append(run("2.1", group, ballots, Path(scratch) / f"{group}-pre-{i}", ballots))
            print(f"{group}, {ballots} ballots, {repeats} runs each (min / median):")
            for key, unit in (("encrypt", "ms/ballot"), ("verify", "ms/ballot"), ("decrypt", "ms")):
                cells = []
                for form in ("egk-ec", "2.1"):
                    xs = [r[key] for r in runs[form]]
                    cells.append(f"{form} {min(xs):.2f} / {statistics.median(xs):.2f}")
                ratio = statistics.median(r[key] for r in runs["2.1"]) / statistics.median(
                    r[key] for r in runs["egk-ec"]
                )
                print(f"  {key:8} {unit:10} {cells[0]:28} {cells[1]:28} 2.1/egk-ec {ratio:.2f}")
            pre = [r["pre"] for r in with_pre]
            ordinary = [r["encrypt"] for r in with_pre]
            ratio = statistics.median(pre) / statistics.median(ordinary)
            print(
                f"  2.1 pre-encrypted, printed and recorded: {min(pre):.2f} / {statistics.median(pre):.2f} "
                f"ms/ballot; ordinary encryption in the same runs {min(ordinary):.2f} / "
                f"{statistics.median(ordinary):.2f}; ratio {ratio:.1f}"
            )
            size = {form: runs[form][0]["bytes"] for form in runs}
            print(
                f"  record   bytes      egk-ec {size['egk-ec']:,}   2.1 {size['2.1']:,}   "
                f"2.1/egk-ec {size['2.1'] / size['egk-ec']:.2f}"
            )


if __name__ == "__main__":
    main()
