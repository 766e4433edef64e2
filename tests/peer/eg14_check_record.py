"""Judges a whole election record with the reference implementation: every file is loaded with
electionguard 1.4.0's own deserializer (`from_file`) and checked with its own functions.
Run with the peer's Python 3.10:

    .peer/bin/python tests/peer/eg14_check_record.py --record DIR

Prints one JSON object: the problems found (an empty list when the reference accepts everything),
what was loaded, and the counts the reference decrypts from the published shares.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import eg14_record
from eg14_quiet import quiet_logs
from electionguard.ballot_validator import ballot_is_valid_for_election
from electionguard.decrypt_with_shares import decrypt_selection_with_decryption_shares
from electionguard.decryption import compute_recovery_public_key
from electionguard.election import CiphertextElectionContext
from electionguard.key_ceremony import ElectionPublicKey
from electionguard.manifest import InternalManifest, Manifest
from electionguard.serialize import from_file
from electionguard.tally import PlaintextTally, PublishedCiphertextTally


def check_plaintext(
    plain: PlaintextTally,
    messages: dict[tuple[str, str], Any],
    keys: dict[str, ElectionPublicKey],
    context: CiphertextElectionContext,
    problems: list[str],
    where: str,
) -> dict[str, int]:
    counts = {}
    for contest_id, contest in plain.contests.items():
        for sel_id, sel in contest.selections.items():
            name = f"{where}:{contest_id}/{sel_id}"
            ciphertext = messages.get((contest_id, sel_id))
            if ciphertext is None:
                problems.append(f"{name}: not in the ciphertexts")
                continue
            if sel.message != ciphertext.ciphertext:
                problems.append(f"{name}: message is not the ciphertext")
            for share in sel.shares:
                for helper_id, part in (share.recovered_parts or {}).items():
                    expected = compute_recovery_public_key(keys[helper_id], keys[share.guardian_id])
                    if part.recovery_key != expected:
                        problems.append(f"{name}: recovery key of {helper_id} for {share.guardian_id}")
            shares = {s.guardian_id: (keys[s.guardian_id].key, s) for s in sel.shares}
            if set(shares) != set(keys):
                problems.append(f"{name}: shares from {sorted(shares)}, guardians are {sorted(keys)}")
                continue
            result = decrypt_selection_with_decryption_shares(
                ciphertext, shares, context.crypto_extended_base_hash
            )
            if result is None:
                problems.append(f"{name}: the reference rejects the shares")
                continue
            if result.tally != sel.tally or result.value != sel.value:
                problems.append(f"{name}: the reference decrypts {result.tally}, the record says {sel.tally}")
            counts[sel_id] = result.tally
    return counts


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--record", required=True, type=Path)
    parser.add_argument("--tally-only", action="store_true", help="check the keys and the tally, no ballot")
    args = parser.parse_args()
    quiet_logs()
    root: Path = args.record
    problems: list[str] = []
    manifest = from_file(Manifest, str(root / "manifest.json"))
    internal = InternalManifest(manifest)
    context = eg14_record.context(root)
    if internal.manifest_hash != context.manifest_hash:
        problems.append("context: manifest hash differs from the reference's")

    keys: dict[str, ElectionPublicKey] = {}
    for path, record in eg14_record.guardian_records(root):
        for j, proof in enumerate(record.election_proofs):
            if not proof.is_valid():
                problems.append(f"{path.name}: Schnorr proof {j} rejected")
        keys[record.guardian_id] = ElectionPublicKey(
            record.guardian_id,
            record.sequence_order,
            record.election_public_key,
            record.election_commitments,
            record.election_proofs,
        )

    ballots = {}
    for path, ballot in [] if args.tally_only else eg14_record.submitted_ballots(root):
        ballots[ballot.object_id] = ballot
        if not ballot_is_valid_for_election(ballot, internal, context, True):
            problems.append(f"{path.name}: not valid for the election")

    tally = from_file(PublishedCiphertextTally, str(root / "encrypted_tally.json"))
    messages = {(c_id, s_id): sel for c_id, c in tally.contests.items() for s_id, sel in c.selections.items()}
    plain = eg14_record.tally(root)
    counts = check_plaintext(plain, messages, keys, context, problems, "tally")

    spoiled = {}
    for _, plain_ballot in [] if args.tally_only else eg14_record.spoiled_ballots(root):
        ballot = ballots[plain_ballot.object_id]
        ballot_messages = {
            (c.object_id, s.object_id): s for c in ballot.contests for s in c.ballot_selections
        }
        spoiled[plain_ballot.object_id] = check_plaintext(
            plain_ballot, ballot_messages, keys, context, problems, plain_ballot.object_id
        )
    print(
        json.dumps(
            {
                "problems": problems,
                "guardians": len(keys),
                "ballots": len(ballots),
                "counts": counts,
                "spoiled": spoiled,
            }
        )
    )


if __name__ == "__main__":
    main()
