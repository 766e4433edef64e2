"""Correctness at scale: a seeded election of 2,000 ballots (one 1-of-4 contest, 5 guardians,
quorum 3, 2 missing), cast in batches of 1,000, whose decrypted counts equal the plaintext counts. No
record is written, and the long runs (10,000 ballots and more) are `make bench-eg-pipeline`'s job; every
ballot is still verified by the ballot box."""

from __future__ import annotations

import json
import random

import votum
from votum.eg import run_ceremony
from votum.election import synthetic_manifest

EG = votum.Group("eg-4096")
BALLOTS = 2_000


def test_two_thousand_ballots_count_exactly() -> None:
    rng = random.Random(2_000)
    manifest = synthetic_manifest(1)
    em = votum.EgManifest.from_json(json.dumps(manifest))
    done = run_ceremony(em, 5, 3)
    guardians, records, context = done.guardians, done.records, done.context
    k, q = context.elgamal_public_key, context.extended_base_hash
    device = votum.EgEncryptionDevice(em, k, q)
    box = votum.EgBallotBox(em, k, q)
    contest = manifest["contests"][0]
    ids = [s["object_id"] for s in contest["ballot_selections"]]
    expected = dict.fromkeys(ids, 0)
    code = EG.scalar(7)
    batch: list[tuple[str, str]] = []
    for i in range(BALLOTS):
        choice = rng.choice([*ids, None])  # some ballots are blank
        if choice is not None:
            expected[choice] += 1
        plain = {
            "object_id": f"b{i}",
            "style_id": "style-1",
            "contests": [
                {
                    "object_id": contest["object_id"],
                    "ballot_selections": [{"object_id": s, "vote": int(s == choice)} for s in ids],
                }
            ],
        }
        nonce = EG.scalar(rng.getrandbits(250) + 1)
        ballot, code = device.encrypt(json.dumps(plain), code, i, master_nonce=nonce, form="cast")
        batch.append((ballot, "cast"))
        if len(batch) == 1000:
            assert all(isinstance(o, tuple) for o in box.submit_many(batch))
            batch = []
    assert box.counts == (BALLOTS, 0)
    target = votum.EgDecryptionTarget.from_ballot_box(box, em)
    present, missing = guardians[:3], guardians[3:]
    shares = [g.decryption_shares(target, q) for g in present]
    shares += [g.compensated_shares(m.public_record(), target, q) for m in missing for g in present]
    result = votum.EgDecryptor(records, 3, q, max_count=BALLOTS).decrypt(target, shares)
    assert result.counts == expected
    assert sum(expected.values()) < BALLOTS  # blanks were cast too
