"""Property test over random manifests: whatever the contests' shapes (1–4 candidates, any n-of-m) and
whatever the votes (undervotes and blanks included), ballots encrypted by votum pass the ballot box, the
tally decrypted with one guardian missing equals the plaintext counts, and every spoiled ballot decrypts
to its own votes. One key ceremony (3 guardians, quorum 2) serves every example; each example has its own
manifest, context, device and ballot box."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import votum
from hypothesis import given, settings
from hypothesis import strategies as st
from votum.eg import run_ceremony
from votum.election import manifest_of_shapes

EG = votum.Group("eg-4096")


@cache
def ceremony() -> tuple[list[votum.EgGuardian], list[str]]:
    # the records do not depend on the manifest: each example builds its own context from them
    done = run_ceremony(votum.EgManifest.from_json(json.dumps(manifest_of_shapes([(2, 1)]))), 3, 2)
    return done.guardians, done.records


shapes = st.lists(
    st.integers(1, 4).flatmap(lambda n: st.tuples(st.just(n), st.integers(1, n))), min_size=1, max_size=3
)


@settings(max_examples=10, deadline=None)
@given(shapes=shapes, data=st.data())
def test_random_manifests_count_exactly(shapes: list[tuple[int, int]], data: st.DataObject) -> None:
    guardians, records = ceremony()
    manifest = manifest_of_shapes(shapes)
    em = votum.EgManifest.from_json(json.dumps(manifest))
    context = votum.EgContext(records, 2, em)
    k, q = context.elgamal_public_key, context.extended_base_hash
    device = votum.EgEncryptionDevice(em, k, q)
    box = votum.EgBallotBox(em, k, q)
    expected = {s["object_id"]: 0 for c in manifest["contests"] for s in c["ballot_selections"]}
    spoiled: list[tuple[str, set[str]]] = []
    code = EG.scalar(1)
    for b in range(data.draw(st.integers(1, 3), label="ballots")):
        contests: list[dict[str, Any]] = []
        picked: set[str] = set()
        for c in manifest["contests"]:
            ids = [s["object_id"] for s in c["ballot_selections"]]
            picks = data.draw(
                st.sets(st.sampled_from(ids), max_size=c["votes_allowed"]), label=c["object_id"]
            )
            picked |= picks
            contests.append(
                {
                    "object_id": c["object_id"],
                    "ballot_selections": [{"object_id": i, "vote": int(i in picks)} for i in ids],
                }
            )
        spoil = data.draw(st.booleans(), label="spoil")
        plain = json.dumps({"object_id": f"b{b}", "style_id": "style-1", "contests": contests})
        ballot, code = device.encrypt(plain, code, b, form="spoiled" if spoil else "cast")
        if spoil:
            box.spoil(ballot)
            spoiled.append((ballot, picked))
        else:
            box.cast(ballot)
            for s in picked:
                expected[s] += 1
    present, missing = guardians[:2], guardians[2]
    decryptor = votum.EgDecryptor(records, 2, q, max_count=3)

    def decrypt(target: votum.EgDecryptionTarget) -> dict[str, int]:
        shares = [s for g in present for s in g.all_shares(target, q, [missing.public_record()])]
        return decryptor.decrypt(target, shares).counts

    counts = decrypt(votum.EgDecryptionTarget.from_ballot_box(box, em))
    assert {s: counts.get(s, 0) for s in expected} == expected
    for ballot, picked in spoiled:
        got = decrypt(votum.EgDecryptionTarget.from_ballot_json(ballot))
        assert {s for s in expected if got.get(s, 0) == 1} == picked
        assert all(got.get(s, 0) in (0, 1) for s in expected)
