"""Regenerates vectors/verify/record: the small, seeded, untouched election record that the verifier's
tampered vectors (vectors/verify/cases/*.json) are applied to. Run from the project root with the
project's virtual environment: `.venv/bin/python scripts/make-verify-vectors.py`.

The record is a whole election run by votum: 5 ballots on one device, 2 contests, 3 guardians with
quorum 2 and one of them missing at decryption (so there are compensated shares), one spoiled ballot.
Ballot timestamps make each run's bytes differ; the cases name files and JSON pointers, not bytes, so
they apply to any regeneration with the same seed.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from votum.election import ElectionConfig, run_election

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "vectors" / "verify" / "record"


def main() -> None:
    if OUT.exists():
        shutil.rmtree(OUT)
    result = run_election(
        ElectionConfig(
            ballots=5, contests=2, guardians=3, quorum=2, missing=1, spoil_rate=0.3, seed=2, out=OUT
        )
    )
    assert result.spoiled == 1, "seed 2 gave one spoiled ballot when the vectors were made"
    print(f"wrote {OUT} ({result.cast} cast, {result.spoiled} spoiled)")


if __name__ == "__main__":
    main()
