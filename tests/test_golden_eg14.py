"""Golden tests against records written by electionguard 1.4.0 (vectors/eg-1.4)."""

from __future__ import annotations

import json
from typing import Any

import pytest
import votum
from conftest import VECTORS, load_eg14
from votum import Group, eg_from_hex, eg_hash_elems, eg_to_hex

EG = Group("eg-4096")


def el(hex_text: str) -> votum.Element:
    return EG.element_from_int(eg_from_hex(hex_text))


def sc(hex_text: str) -> votum.Scalar:
    return EG.scalar(eg_from_hex(hex_text))


def test_hex_codec() -> None:
    assert eg_to_hex(0) == "00"
    assert eg_to_hex(256) == "0100"
    assert eg_from_hex("0a") == 10


def test_constants_match() -> None:
    c = load_eg14("constants.json")
    assert eg_from_hex(c["large_prime"]) == EG.p
    assert eg_from_hex(c["small_prime"]) == EG.order == 2**256 - 189
    assert eg_from_hex(c["generator"]) == EG.generator.to_int()
    assert (EG.p - 1) == EG.order * eg_from_hex(c["cofactor"])
    # the JSON writes the minimal uppercase hex votum writes
    assert eg_to_hex(EG.p) == c["large_prime"]


def test_extended_base_hash_recomputes() -> None:
    ctx = load_eg14("context.json")
    q_ext = eg_hash_elems(sc(ctx["crypto_base_hash"]), sc(ctx["commitment_hash"]))
    assert eg_to_hex(q_ext.to_int()) == ctx["crypto_extended_base_hash"]


def _check_disjunctive(q_ext: votum.Scalar, k: votum.Element, ct: Any, p: Any) -> None:
    alpha, beta = el(ct["pad"]), el(ct["data"])
    a0, b0, a1, b1 = (
        el(p[f]) for f in ["proof_zero_pad", "proof_zero_data", "proof_one_pad", "proof_one_data"]
    )
    c = eg_hash_elems(q_ext, alpha, beta, a0, b0, a1, b1)
    assert c == sc(p["challenge"])
    c0, c1 = sc(p["proof_zero_challenge"]), sc(p["proof_one_challenge"])
    v0, v1 = sc(p["proof_zero_response"]), sc(p["proof_one_response"])
    assert c0 + c1 == c
    g = EG.generator
    assert g**v0 == a0 * alpha**c0
    assert g**v1 == a1 * alpha**c1
    assert k**v0 == b0 * beta**c0
    assert g**c1 * k**v1 == b1 * beta**c1


def test_ballot_proof_challenges_recompute_and_verify() -> None:
    ctx = load_eg14("context.json")
    q_ext = sc(ctx["crypto_extended_base_hash"])
    k = el(ctx["elgamal_public_key"])
    ballot = load_eg14("ciphertext_ballot.json")
    contest = ballot["contests"][0]
    for sel in contest["ballot_selections"]:
        _check_disjunctive(q_ext, k, sel["ciphertext"], sel["proof"])
    p = contest["proof"]
    acc = contest["ciphertext_accumulation"]
    alpha, beta = el(acc["pad"]), el(acc["data"])
    c = eg_hash_elems(q_ext, alpha, beta, el(p["pad"]), el(p["data"]))
    assert c == sc(p["challenge"])
    # the contest accumulation is the homomorphic sum of its selections
    total = votum.Ciphertext.sum(
        EG,
        [
            votum.Ciphertext(el(s["ciphertext"]["pad"]), el(s["ciphertext"]["data"]))
            for s in contest["ballot_selections"]
        ],
    )
    assert total == votum.Ciphertext(alpha, beta)


def test_guardian_schnorr_challenges() -> None:
    rec = load_eg14("guardian_record_1.json")
    for proof in rec["election_proofs"]:
        c = eg_hash_elems(el(proof["public_key"]), el(proof["commitment"]))
        assert c == sc(proof["challenge"])
        g = EG.generator
        assert g ** sc(proof["response"]) == el(proof["commitment"]) * el(proof["public_key"]) ** c


def test_decryption_share_and_lagrange() -> None:
    ctx = load_eg14("context.json")
    q_ext = sc(ctx["crypto_extended_base_hash"])
    tally = load_eg14("plaintext_tally.one_selection.json")["contests"]["mayor"]["selections"]["mayor-alice"]
    alpha, beta = el(tally["message"]["pad"]), el(tally["message"]["data"])
    share = load_eg14("tally_decryption_share_guardian_1.json")["contests"]["mayor"]["selections"][
        "mayor-alice"
    ]
    m1 = el(share["share"])
    p = share["proof"]
    c = eg_hash_elems(q_ext, alpha, beta, el(p["pad"]), el(p["data"]), m1)
    assert c == sc(p["challenge"])
    lag = load_eg14("lagrange_coefficients.json")["coefficients"]
    for i in (1, 2, 3):
        assert votum.lagrange_coefficient(EG, i, [1, 2, 3]) == sc(lag[str(i)])
    combined = EG.identity
    for s in tally["shares"]:
        combined = combined * el(s["share"])
    counts = load_eg14("plaintext_tally.counts.json")
    assert votum.DlogTable(EG, 1000).log(beta / combined) == counts["mayor-alice"] == tally["tally"]


def test_manifest_hash_and_bad_manifests() -> None:
    text = (VECTORS / "eg-1.4" / "manifest.json").read_text()
    manifest = votum.EgManifest.from_json(text)
    assert manifest.crypto_hash() == sc(load_eg14("context.json")["manifest_hash"])
    assert manifest.contest_ids == ["mayor"]
    assert votum.EgManifest.from_json(manifest.to_json()).crypto_hash() == manifest.crypto_hash()
    with pytest.raises(votum.RecordFormatError):
        votum.EgManifest.from_json("{not json")
    data = json.loads(text)
    assert manifest.warnings() == []
    # what the reference accepts is accepted, with a warning (its own samples' write-ins)
    data["contests"][0]["ballot_selections"][0]["candidate_id"] = "nobody"
    odd = votum.EgManifest.from_json(json.dumps(data))
    [(obj, why)] = odd.warnings()
    assert obj == data["contests"][0]["ballot_selections"][0]["object_id"] and '"nobody"' in why
    data["contests"][0]["electoral_district_id"] = "atlantis"
    with pytest.raises(votum.InvalidInput, match="unknown geopolitical unit"):
        votum.EgManifest.from_json(json.dumps(data))
