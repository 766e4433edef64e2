"""Reference side of `make bench-verify` (run with the peer's Python 3.10): electionguard 1.4.0's own
checks over a whole record, logging disabled: `SubmittedBallot.is_valid_encryption` on every submitted
ballot, then `CiphertextDecryptionSelection.is_valid` on every share of the tally and of every spoiled
ballot's decryption (direct shares against the guardian's key, compensated parts against their recovery
key). Loading each file with the reference's `from_file` is part of the time, as it is for votum.

    .peer/bin/python benches/peer_verify_record.py --record DIR

Prints JSON {"ballots", "ballots_s", "shares", "shares_s", "total_s", "rejected"}.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from electionguard.tally import PlaintextTally

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "peer"))
import eg14_record
from eg14_quiet import quiet_logs


def shares_valid(tally: PlaintextTally, keys: dict, q_ext: object) -> tuple[int, int]:
    checked = rejected = 0
    for contest in tally.contests.values():
        for selection in contest.selections.values():
            for share in selection.shares:
                checked += 1
                if not share.is_valid(selection.message, keys[share.guardian_id], q_ext):
                    rejected += 1
    return checked, rejected


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--record", required=True, type=Path)
    args = parser.parse_args()
    quiet_logs()
    root: Path = args.record
    start = time.perf_counter()
    context = eg14_record.context(root)
    q_ext = context.crypto_extended_base_hash
    rejected = 0
    ballots = 0
    for _, ballot in eg14_record.submitted_ballots(root):
        ballots += 1
        if not ballot.is_valid_encryption(context.manifest_hash, context.elgamal_public_key, q_ext):
            rejected += 1
    ballots_done = time.perf_counter()
    keys = {
        record.guardian_id: record.election_public_key for _, record in eg14_record.guardian_records(root)
    }
    shares = 0
    tallies = [eg14_record.tally(root), *(t for _, t in eg14_record.spoiled_ballots(root))]
    for plain in tallies:
        checked, bad = shares_valid(plain, keys, q_ext)
        shares += checked
        rejected += bad
    end = time.perf_counter()
    print(json.dumps({
        "ballots": ballots, "ballots_s": ballots_done - start, "shares": shares,
        "shares_s": end - ballots_done, "total_s": end - start, "rejected": rejected,
    }))  # fmt: skip


if __name__ == "__main__":
    main()
