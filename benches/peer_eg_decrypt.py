"""Reference side of `make bench-eg-decrypt` (run with the peer's Python 3.10): the cost of decrypting
one spoiled ballot with electionguard 1.4.0, 5 guardians, quorum 3, 2 missing, logging disabled.

The reference decrypts spoiled ballots only together with the tally (its mediator needs a tally share
from every guardian), so the decryption ceremony (shares, compensated shares, reconstruction, plaintext)
is timed with no spoiled ballot and with one, alternately; the difference of the medians is one spoiled
ballot. Prints JSON {"tally_only": [...], "with_spoiled": [...]} in seconds.

    .peer/bin/python benches/peer_eg_decrypt.py --manifest M --runs N
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "peer"))
from eg14_election import QUORUM, key_ceremony, plaintext_ballots
from eg14_quiet import quiet_logs
from electionguard.ballot_box import BallotBox
from electionguard.data_store import DataStore
from electionguard.decryption_mediator import DecryptionMediator
from electionguard.encrypt import EncryptionDevice, EncryptionMediator
from electionguard.manifest import Manifest
from electionguard.serialize import from_file
from electionguard.tally import tally_ballots
from electionguard.utils import get_optional
from electionguard_tools.helpers.tally_ceremony_orchestrator import TallyCeremonyOrchestrator


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--manifest", required=True, type=Path)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    quiet_logs()
    manifest = from_file(Manifest, str(args.manifest))
    guardians, internal_manifest, context = key_ceremony(manifest)
    encrypter = EncryptionMediator(internal_manifest, context, EncryptionDevice(1, 1, 1, "bench"))
    plain = plaintext_ballots(manifest, 2, random.Random(5))
    encrypted = [get_optional(encrypter.encrypt(b)) for b in plain]
    store: DataStore = DataStore()
    box = BallotBox(internal_manifest, context, store)
    get_optional(box.cast(encrypted[0]))
    spoiled = get_optional(box.spoil(encrypted[1]))
    tally = get_optional(tally_ballots(store, internal_manifest, context))
    present = guardians[:QUORUM]
    keys = [g.share_key() for g in guardians]

    def ceremony(ballots: list) -> float:
        start = time.perf_counter()
        mediator = DecryptionMediator("decryption-mediator", context)
        TallyCeremonyOrchestrator.perform_compensated_decryption_setup(
            present, keys, mediator, context, tally, ballots
        )
        get_optional(mediator.get_plaintext_tally(tally, manifest))
        if ballots:
            plaintexts = get_optional(mediator.get_plaintext_ballots(ballots, manifest))
            if len(plaintexts) != 1:
                raise SystemExit("the reference did not decrypt the spoiled ballot")
        return time.perf_counter() - start

    out: dict[str, list[float]] = {"tally_only": [], "with_spoiled": []}
    for _ in range(args.runs):
        out["tally_only"].append(ceremony([]))
        out["with_spoiled"].append(ceremony([spoiled]))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
