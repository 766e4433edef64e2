from __future__ import annotations

import pytest
import votum
from conftest import seed
from votum import ChaumPedersenProof, Group, InvalidInput, InvalidProof, SchnorrProof, SecretKey


def _flip(data: bytes, index: int) -> bytes:
    b = bytearray(data)
    b[index] ^= 1
    return bytes(b)


def test_schnorr(group: Group) -> None:
    sk = SecretKey.generate(group, seed("s"))
    y = sk.public_key().element
    proof = SchnorrProof.prove(sk, b"ctx")
    proof.verify(y, b"ctx")
    assert SchnorrProof.from_bytes(group, proof.to_bytes()).to_bytes() == proof.to_bytes()
    with pytest.raises(InvalidProof, match="challenge"):
        proof.verify(y, b"other context")
    with pytest.raises(InvalidProof):
        proof.verify(group.generator, b"ctx")
    # flip one bit in each field: commitment, challenge, response
    e, s = group.element_len, group.scalar_len
    for index in [e - 1, e + s - 1, e + 2 * s - 1]:
        try:
            tampered = SchnorrProof.from_bytes(group, _flip(proof.to_bytes(), index))
        except InvalidInput:
            continue  # the flip left the group or the scalar range: refused at decoding
        with pytest.raises(InvalidProof):
            tampered.verify(y, b"ctx")


def test_chaum_pedersen_decryption_share(group: Group) -> None:
    sk = SecretKey.generate(group, seed("cp"))
    pk = sk.public_key()
    ct = pk.encrypt(1)
    share = sk.partial_decrypt(ct)
    g, k = group.generator, pk.element
    proof = ChaumPedersenProof.prove(g, k, ct.pad, share, sk, b"ctx")
    proof.verify(g, k, ct.pad, share, b"ctx")
    with pytest.raises(InvalidProof):
        proof.verify(g, k, ct.pad, share * g, b"ctx")
    # a prover who lies about the share cannot make a proof that verifies
    lie = share * g
    forged = ChaumPedersenProof.prove(g, k, ct.pad, lie, sk, b"ctx")
    with pytest.raises(InvalidProof, match="g2"):
        forged.verify(g, k, ct.pad, lie, b"ctx")
    back = ChaumPedersenProof.from_bytes(group, proof.to_bytes())
    back.verify(g, k, ct.pad, share, b"ctx")


def test_bit_proofs_batch(group: Group) -> None:
    sk = SecretKey.generate(group, seed("bits"))
    pk = sk.public_key(precompute=True)
    bits = [1, 0, 0, 1, 1, 0, 1, 0]
    items = votum.encrypt_bits_with_proofs(pk, bits, b"ctx", seed("enc"))
    votum.verify_bits(pk.element, items, b"ctx")
    items[2].verify(pk.element, b"ctx")
    with pytest.raises(InvalidProof):
        votum.verify_bits(pk.element, items, b"another election")
    # swap ciphertexts between two items: the first bad index is named
    swapped = list(items)
    swapped[5] = items[5].with_ciphertext(items[6].ciphertext)
    with pytest.raises(InvalidProof, match="item 5"):
        votum.verify_bits(pk.element, swapped, b"ctx")
    # an encryption of 2 gets no proof
    with pytest.raises(InvalidInput):
        votum.encrypt_bits_with_proofs(pk, [0, 2], b"ctx")
    # an honest proof attached to an encryption of 2 fails
    two = pk.encrypt(2)
    with pytest.raises(InvalidProof):
        items[0].with_ciphertext(two).verify(pk.element, b"ctx")
    dlog = votum.DlogTable(group, 100)
    total = votum.Ciphertext.sum(group, [i.ciphertext for i in items])
    assert dlog.log(sk.decrypt(total)) == sum(bits)
