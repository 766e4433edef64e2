"""Reference side of `make bench-eg-verify` (run with the peer's Python 3.10): times electionguard
1.4.0's `SubmittedBallot.is_valid_encryption` on one ballot, logging disabled. Prints JSON
{"per_ballot_s": [...]}.

    .peer/bin/python benches/peer_eg_verify.py --ballot B --context C --runs N
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from electionguard.ballot import SubmittedBallot
from electionguard.election import CiphertextElectionContext
from electionguard.serialize import from_file

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "peer"))
from eg14_quiet import quiet_logs


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ballot", required=True)
    parser.add_argument("--context", required=True)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    quiet_logs()
    context = from_file(CiphertextElectionContext, args.context)
    ballot = from_file(SubmittedBallot, args.ballot)
    samples = []
    for _ in range(args.runs):
        t = time.perf_counter()
        ok = ballot.is_valid_encryption(
            context.manifest_hash, context.elgamal_public_key, context.crypto_extended_base_hash
        )
        samples.append(time.perf_counter() - t)
        if not ok:
            raise SystemExit("the reference rejected the benchmark ballot")
    print(json.dumps({"per_ballot_s": samples}))


if __name__ == "__main__":
    main()
