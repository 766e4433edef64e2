"""Runs a whole election with the reference package, electionguard 1.4.0, and writes its record.

Run with the peer's Python 3.10 (scripts/setup-peer.sh makes it), never with votum's interpreter:

    .peer/bin/python tests/peer/eg14_election.py --out DIR [--ballots N] [--seed S] [--spoil-rate P]
        [--manifest M] [--timings FILE] [--no-private-data]

Writes DIR/election_record (the published record, electionguard's own layout and JSON) and
DIR/election_private_data (plaintext ballots and the ciphertext ballots with nonces, for tests only),
plus DIR/summary.json (expected counts, which ballots were spoiled, which guardians were missing).
`--timings FILE` writes each step's wall time in seconds (benches/bench_eg_pipeline.py reads it);
`--no-private-data` skips the private-data export (not part of a real election's pipeline).
5 guardians, quorum 3 (unless --guardians and --quorum say otherwise); the guardians after the quorum are
missing at decryption and are compensated (unless --present says more are there).
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from eg14_quiet import quiet_logs
from electionguard.ballot import (
    BallotBoxState,
    PlaintextBallot,
    PlaintextBallotContest,
    PlaintextBallotSelection,
)
from electionguard.ballot_box import BallotBox, get_ballots
from electionguard.constants import get_constants
from electionguard.data_store import DataStore
from electionguard.decryption_mediator import DecryptionMediator
from electionguard.election import CiphertextElectionContext
from electionguard.election_polynomial import LagrangeCoefficientsRecord
from electionguard.encrypt import EncryptionDevice, EncryptionMediator
from electionguard.guardian import Guardian
from electionguard.key_ceremony import CeremonyDetails
from electionguard.key_ceremony_mediator import KeyCeremonyMediator
from electionguard.manifest import InternalManifest, Manifest
from electionguard.serialize import from_file
from electionguard.tally import tally_ballots
from electionguard.utils import get_optional
from electionguard_tools.helpers.election_builder import ElectionBuilder
from electionguard_tools.helpers.export import export_private_data, export_record
from electionguard_tools.helpers.key_ceremony_orchestrator import KeyCeremonyOrchestrator
from electionguard_tools.helpers.tally_ceremony_orchestrator import TallyCeremonyOrchestrator

GUARDIANS, QUORUM = 5, 3
HERE = Path(__file__).resolve().parent


def plaintext_ballots(manifest: Manifest, count: int, rng: random.Random) -> list[PlaintextBallot]:
    """`count` ballots, their styles in turn, each voting in the contests of its style."""
    ballots = []
    for i in range(count):
        style = manifest.ballot_styles[i % len(manifest.ballot_styles)]
        units = set(style.geopolitical_unit_ids or [])
        contests = []
        for contest in (c for c in manifest.contests if c.electoral_district_id in units):
            ids = [s.object_id for s in contest.ballot_selections]
            # vote for up to votes_allowed selections; sometimes undervote
            most = min(contest.votes_allowed or 1, len(ids))
            k = rng.randint(0, most) if rng.random() < 0.2 else most
            chosen = set(rng.sample(ids, k))
            contests.append(
                PlaintextBallotContest(
                    contest.object_id,
                    [PlaintextBallotSelection(sid, 1 if sid in chosen else 0, False) for sid in ids],
                )
            )
        ballots.append(PlaintextBallot(f"ballot-{i:05d}", style.object_id, contests))
    return ballots


def key_ceremony(
    manifest: Manifest, guardians: int = GUARDIANS, quorum: int = QUORUM
) -> tuple[list[Guardian], InternalManifest, CiphertextElectionContext]:
    """The reference's whole key ceremony (GUARDIANS guardians, quorum QUORUM, unless told) and the
    election it builds: the guardians (holding their secrets), the internal manifest and the context."""
    builder = ElectionBuilder(guardians, quorum, manifest)
    details = CeremonyDetails(guardians, quorum)
    guardians = KeyCeremonyOrchestrator.create_guardians(details)
    key_mediator = KeyCeremonyMediator("key-ceremony-mediator", details)
    KeyCeremonyOrchestrator.perform_full_ceremony(guardians, key_mediator)
    joint_key = get_optional(key_mediator.publish_joint_key())
    builder.set_public_key(joint_key.joint_public_key)
    builder.set_commitment_hash(joint_key.commitment_hash)
    internal_manifest, context = get_optional(builder.build())
    return guardians, internal_manifest, context


TIMINGS: dict[str, float] = {}


@contextmanager
def step(name: str) -> Iterator[None]:
    start = time.perf_counter()
    yield
    TIMINGS[name] = time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--ballots", type=int, default=12)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--spoil-rate", type=float, default=0.25)
    parser.add_argument("--devices", type=int, default=1, help="encryption devices; ballots alternate")
    parser.add_argument("--manifest", type=Path, default=HERE / "manifest-three-contests.json")
    parser.add_argument("--timings", type=Path)
    parser.add_argument("--no-private-data", action="store_true")
    parser.add_argument("--guardians", type=int, default=GUARDIANS)
    parser.add_argument("--quorum", type=int, default=QUORUM)
    parser.add_argument(
        "--present",
        type=int,
        help="guardians present at decryption (quorum…guardians, default the quorum; others compensated)",
    )
    args = parser.parse_args()
    quiet_logs()
    rng = random.Random(args.seed)

    manifest = from_file(Manifest, str(args.manifest))
    plain = plaintext_ballots(manifest, args.ballots, rng)
    with step("key ceremony"):
        guardians, internal_manifest, context = key_ceremony(manifest, args.guardians, args.quorum)

    with step("encrypt"):
        devices = [
            EncryptionDevice(91001 + i, 7, 1234, f"polling-place-{i + 1}") for i in range(args.devices)
        ]
        encrypters = [EncryptionMediator(internal_manifest, context, d) for d in devices]
        encrypted = [get_optional(encrypters[i % len(encrypters)].encrypt(b)) for i, b in enumerate(plain)]

    with step("cast and spoil"):
        store: DataStore = DataStore()
        box = BallotBox(internal_manifest, context, store)
        spoiled_ids = []
        submitted = []
        for ballot in encrypted:
            if rng.random() < args.spoil_rate:
                submitted.append(get_optional(box.spoil(ballot)))
                spoiled_ids.append(ballot.object_id)
            else:
                submitted.append(get_optional(box.cast(ballot)))

    with step("tally"):
        ciphertext_tally = get_optional(tally_ballots(store, internal_manifest, context))
    with step("decrypt"):
        spoiled = list(get_ballots(store, BallotBoxState.SPOILED).values())
        decrypter = DecryptionMediator("decryption-mediator", context)
        wanted = args.quorum if args.present is None else args.present
        present = guardians[: max(args.quorum, min(wanted, args.guardians))]
        TallyCeremonyOrchestrator.perform_compensated_decryption_setup(
            present, [g.share_key() for g in guardians], decrypter, context, ciphertext_tally, spoiled
        )
        plaintext_tally = get_optional(decrypter.get_plaintext_tally(ciphertext_tally, manifest))
        spoiled_tallies = list(get_optional(decrypter.get_plaintext_ballots(spoiled, manifest)).values())

    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    export_start = time.perf_counter()
    export_record(
        manifest,
        context,
        get_constants(),
        devices,
        submitted,
        spoiled_tallies,
        ciphertext_tally.publish(),
        plaintext_tally,
        [g.publish() for g in guardians],
        LagrangeCoefficientsRecord(decrypter.get_lagrange_coefficients()),
        str(out / "election_record"),
    )
    TIMINGS["export"] = time.perf_counter() - export_start
    if not args.no_private_data:
        export_private_data(plain, encrypted, [], str(out / "election_private_data"))

    cast = [b for b in plain if b.object_id not in spoiled_ids]
    # every selection of the manifest, as the reference publishes them (a style may leave some out)
    counts = {s.object_id: 0 for c in manifest.contests for s in c.ballot_selections}
    for ballot in cast:
        for contest in ballot.contests:
            for sel in contest.ballot_selections:
                counts[sel.object_id] = counts.get(sel.object_id, 0) + sel.vote
    published = {
        sel_id: sel.tally
        for contest in plaintext_tally.contests.values()
        for sel_id, sel in contest.selections.items()
    }
    if published != counts:
        raise SystemExit(f"reference tally {published} differs from plaintext counts {counts}")
    summary = {
        "ballots": args.ballots,
        "seed": args.seed,
        "spoiled": spoiled_ids,
        "counts": counts,
        "guardians": args.guardians,
        "quorum": args.quorum,
        "present": [g.id for g in present],
        "missing": [g.id for g in guardians[len(present) :]],
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=1, sort_keys=True))
    if args.timings:
        args.timings.write_text(json.dumps(TIMINGS))


if __name__ == "__main__":
    main()
