"""Reference side of `make bench-eg-encrypt` (run with the peer's Python 3.10): times electionguard
1.4.0's `encrypt_ballot` with its logging disabled. Prints JSON with seconds per ballot:
{"library_default": [...], "self_check": [...]}. The library default does not re-verify what it
made; "self_check" passes should_verify_proofs=True.

    .peer/bin/python benches/peer_eg_encrypt.py --manifest M --context C --plaintext P --runs N
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from electionguard.ballot import PlaintextBallot
from electionguard.election import CiphertextElectionContext
from electionguard.encrypt import EncryptionDevice, encrypt_ballot
from electionguard.manifest import InternalManifest, Manifest
from electionguard.serialize import from_file

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "peer"))
from eg14_quiet import quiet_logs


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--manifest", required=True)
    parser.add_argument("--context", required=True)
    parser.add_argument("--plaintext", required=True)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    quiet_logs()
    internal = InternalManifest(from_file(Manifest, args.manifest))
    context = from_file(CiphertextElectionContext, args.context)
    ballot = from_file(PlaintextBallot, args.plaintext)
    device = EncryptionDevice(1, 1, 1, "bench")
    seed = device.get_hash()
    encrypt_ballot(ballot, internal, context, seed)  # warm-up
    result = {}
    for label, verify in (("library_default", False), ("self_check", True)):
        samples = []
        for _ in range(args.runs):
            t = time.perf_counter()
            encrypt_ballot(ballot, internal, context, seed, should_verify_proofs=verify)
            samples.append(time.perf_counter() - t)
        result[label] = samples
    print(json.dumps(result))


if __name__ == "__main__":
    main()
