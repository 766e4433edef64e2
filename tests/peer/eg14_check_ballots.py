"""Judges ballots with the reference implementation: loads each JSON file with electionguard 1.4.0's
own deserializer and runs its checks. Run with the peer's Python 3.10:

    .peer/bin/python tests/peer/eg14_check_ballots.py --record DIR/election_record --ballots DIR

Prints one JSON object: {file name: {"loaded", "valid_for_election", "valid_encryption", "error"}}.
Files whose "state" field is present are read as SubmittedBallot, others as CiphertextBallot.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from eg14_quiet import quiet_logs
from electionguard.ballot import CiphertextBallot, SubmittedBallot
from electionguard.ballot_validator import ballot_is_valid_for_election
from electionguard.election import CiphertextElectionContext
from electionguard.manifest import InternalManifest, Manifest
from electionguard.serialize import from_file


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--record", required=True, type=Path)
    parser.add_argument("--ballots", required=True, type=Path)
    args = parser.parse_args()
    quiet_logs()
    manifest = from_file(Manifest, str(args.record / "manifest.json"))
    context = from_file(CiphertextElectionContext, str(args.record / "context.json"))
    internal = InternalManifest(manifest)
    results = {}
    for path in sorted(args.ballots.glob("*.json")):
        entry = {"loaded": False, "valid_for_election": False, "valid_encryption": False, "error": None}
        try:
            kind = SubmittedBallot if "state" in json.loads(path.read_text()) else CiphertextBallot
            ballot = from_file(kind, str(path))
            entry["loaded"] = True
            entry["valid_for_election"] = bool(ballot_is_valid_for_election(ballot, internal, context, True))
            entry["valid_encryption"] = bool(
                ballot.is_valid_encryption(
                    internal.manifest_hash, context.elgamal_public_key, context.crypto_extended_base_hash
                )
            )
        except Exception as err:  # report, do not hide: the caller asserts on it
            entry["error"] = f"{type(err).__name__}: {err}"
        results[path.name] = entry
    print(json.dumps(results))


if __name__ == "__main__":
    main()
