from __future__ import annotations

import pickle

import pytest
import votum
from conftest import seed
from hypothesis import given, settings
from hypothesis import strategies as st
from votum import Ciphertext, DecryptionFailed, DlogTable, Group, InvalidInput, PublicKey, SecretKey


def test_encrypt_decrypt_homomorphism(group: Group) -> None:
    sk = SecretKey.generate(group, seed("key"))
    pk = sk.public_key(precompute=True)
    assert pk.precomputed
    dlog = DlogTable(group, 1000)
    c1, c2 = pk.encrypt(17), pk.encrypt(25)
    assert dlog.log(sk.decrypt(c1 + c2)) == 42
    re = c1.reencrypt(pk)
    assert re != c1
    assert dlog.log(sk.decrypt(re)) == 17
    m = group.generator ** group.random_scalar(seed("m"))
    assert sk.decrypt(pk.encrypt_element(m)) == m
    # a key without table encrypts the same way
    plain = PublicKey(pk.element)
    r = group.random_scalar(seed("r"))
    assert plain.encrypt(5, r) == pk.encrypt(5, r)
    # serialization
    assert Ciphertext.from_bytes(group, c1.to_bytes()) == c1
    assert pickle.loads(pickle.dumps(c1)) == c1
    assert pickle.loads(pickle.dumps(pk)) == pk
    assert PublicKey.from_bytes(group, pk.to_bytes()) == pk


def test_encrypt_many_and_sum(group: Group) -> None:
    sk = SecretKey.generate(group, seed("k2"))
    pk = sk.public_key(precompute=True)
    messages = [i % 3 for i in range(200)]
    cts = pk.encrypt_many(messages, seed("batch"))
    assert cts == pk.encrypt_many(messages, seed("batch"))  # reproducible
    assert cts != pk.encrypt_many(messages, seed("other"))
    total = Ciphertext.sum(group, cts)
    assert DlogTable(group, 1000).log(sk.decrypt(total)) == sum(messages)
    shares = sk.partial_decrypt_many(cts[:5])
    assert shares == [sk.partial_decrypt(c) for c in cts[:5]]


def test_dlog_bounds() -> None:
    group = Group("ristretto255")
    table = DlogTable(group, 10_000_000)
    assert table.max == 10_000_000
    for t in [0, 1, 9_999_999, 10_000_000]:
        assert table.log(group.generator ** group.scalar(t)) == t
    with pytest.raises(DecryptionFailed):
        table.log(group.generator ** group.scalar(10_000_001))


def test_secrets_are_not_shown_or_pickled(group: Group) -> None:
    sk = SecretKey.generate(group)
    secret = sk.expose_secret().to_int()
    assert "redacted" in repr(sk)
    assert str(secret) not in repr(sk)
    with pytest.raises(TypeError):
        pickle.dumps(sk)
    poly = votum.SecretPolynomial.random(group, 3)
    assert "redacted" in repr(poly)
    with pytest.raises(TypeError):
        pickle.dumps(poly)


def test_identity_public_key_refused(group: Group) -> None:
    with pytest.raises(InvalidInput, match="identity"):
        PublicKey(group.identity)


def test_hashed_elgamal(group: Group) -> None:
    sk = SecretKey.generate(group, seed("h"))
    pk = sk.public_key()
    message = b"partial key backup for guardian 3" * 5
    ct = votum.HashedCiphertext.encrypt(pk, message)
    assert ct.decrypt(sk) == message
    back = votum.HashedCiphertext.from_bytes(group, ct.to_bytes())
    assert back.decrypt(sk) == message
    tampered = bytearray(ct.to_bytes())
    tampered[-1] ^= 1
    with pytest.raises(DecryptionFailed):
        votum.HashedCiphertext.from_bytes(group, bytes(tampered)).decrypt(sk)
    with pytest.raises(DecryptionFailed):
        ct.decrypt(SecretKey.generate(group))


@settings(max_examples=15, deadline=None)
@given(n=st.integers(2, 7), data=st.data())
def test_threshold_any_quorum_decrypts(n: int, data: st.DataObject) -> None:
    group = Group("ristretto255")
    k = data.draw(st.integers(1, n))
    present = sorted(data.draw(st.sets(st.integers(1, n), min_size=k, max_size=n)))
    polys = [votum.SecretPolynomial.random(group, k) for _ in range(n)]
    commitments = [p.commitments() for p in polys]
    joint = group.identity
    for cs in commitments:
        joint = joint * cs[0]
    shares = {}
    for j in range(1, n + 1):
        total = group.scalar(0)
        for poly, cs in zip(polys, commitments, strict=True):
            s = poly.evaluate(j)
            votum.verify_share(cs, j, s)
            total = total + s
        shares[j] = total
    pk = PublicKey(joint)
    ct = pk.encrypt(9)
    partials = [(j, SecretKey.from_scalar(shares[j]).partial_decrypt(ct)) for j in present]
    combined = votum.combine_partials(group, partials, k)
    assert DlogTable(group, 100).log(ct.decrypt_with_share(combined)) == 9
    recovered = votum.recover_secret(group, [(j, shares[j]) for j in present], k)
    assert recovered.public_key().element == joint


def test_threshold_bad_input() -> None:
    group = Group("modp-2048")
    poly = votum.SecretPolynomial.random(group, 3, seed("p"))
    cs = poly.commitments()
    wrong = poly.evaluate(2) + group.scalar(1)
    with pytest.raises(votum.VerificationFailed):
        votum.verify_share(cs, 2, wrong)
    with pytest.raises(InvalidInput):
        poly.evaluate(0)
    with pytest.raises(InvalidInput):
        votum.lagrange_coefficient(group, 1, [1, 2, 2])
    with pytest.raises(InvalidInput):
        votum.lagrange_coefficient(group, 4, [1, 2, 3])
    with pytest.raises(InvalidInput):
        votum.combine_partials(group, [(1, group.generator)], 3)
    with pytest.raises(InvalidInput):
        votum.SecretPolynomial.random(group, 0)
    assert votum.public_share(cs, 2) == group.generator ** poly.evaluate(2)
