from __future__ import annotations

import pickle

import pytest
import votum
from conftest import seed
from hypothesis import given, settings
from hypothesis import strategies as st
from votum import Group, InvalidInput


def test_names_and_errors() -> None:
    assert set(Group.names()) == {"eg-4096", "modp-2048", "modp-3072", "ristretto255"}
    with pytest.raises(InvalidInput):
        Group("p-256")


def test_algebra_and_encodings(group: Group) -> None:
    g = group.generator
    a = group.random_scalar(seed("a"))
    b = group.random_scalar(seed("b"))
    assert g ** (a + b) == (g**a) * (g**b)
    assert (g**a) ** b == g ** (a * b)
    assert (g**a) / (g**a) == group.identity
    assert (g**a) * (g**a).inverse() == group.identity
    assert a * a.inverse() == group.scalar(1)
    assert a - a == group.scalar(0)
    assert -a + a == group.scalar(0)
    assert group.scalar_mod(-1) == group.scalar(group.order - 1)
    assert group.scalar_mod(group.order + 5) == group.scalar(5)
    e = g**a
    assert len(e.to_bytes()) == group.element_len
    assert group.element_from_bytes(e.to_bytes()) == e
    assert votum.Element.from_bytes(group, e.to_bytes()) == e
    assert len(a.to_bytes()) == group.scalar_len
    assert votum.Scalar.from_bytes(group, a.to_bytes()) == a
    assert a.to_int() < group.order
    # equality and hashing follow the canonical bytes
    assert {e, group.element_from_bytes(e.to_bytes())} == {e}
    # pickling, as Dask would ship values
    assert pickle.loads(pickle.dumps(e)) == e
    assert pickle.loads(pickle.dumps(a)) == a
    assert pickle.loads(pickle.dumps(group)) == group
    # the value of a scalar never shows in its repr
    assert str(a.to_int()) not in repr(a)


def test_batch_entry_points_match_single_calls(group: Group) -> None:
    scalars = [group.random_scalar(seed(f"s{i}")) for i in range(12)]
    bases = group.pow_generator_many(scalars)
    assert bases == [group.generator**s for s in scalars]
    powers = group.pow_many(bases, scalars[::-1])
    assert powers == [b**s for b, s in zip(bases, scalars[::-1], strict=True)]
    product = group.identity
    for p in powers:
        product = product * p
    assert group.multi_pow(bases, scalars[::-1]) == product
    with pytest.raises(InvalidInput):
        group.pow_many(bases, scalars[:3])
    # the generator's tables, built ahead by warm(), give what a multi-exponentiation (no table) gives
    group.warm()
    group.warm()
    for s in scalars[:3]:
        assert group.generator**s == group.multi_pow([group.generator], [s])


def test_independent_generators(group: Group) -> None:
    hs = group.independent_generators(b"public seed", 4)
    assert len(set(hs)) == 4
    assert group.generator not in hs
    assert group.independent_generators(b"public seed", 4) == hs
    for h in hs:
        assert group.element_from_bytes(h.to_bytes()) == h


def test_rejects_bad_elements_and_scalars(group: Group) -> None:
    with pytest.raises(InvalidInput):
        group.element_from_bytes(b"\x01\x02")
    with pytest.raises(InvalidInput):
        group.element_from_bytes(b"\xff" * group.element_len)
    with pytest.raises(InvalidInput):
        group.scalar_from_bytes(b"\xff" * group.scalar_len)
    with pytest.raises(InvalidInput):
        group.scalar(group.order)
    with pytest.raises(InvalidInput):
        group.scalar(-1)
    with pytest.raises(InvalidInput):
        group.scalar(0).inverse()
    with pytest.raises(InvalidInput):
        group.random_scalar(b"short seed")


def test_modp_subgroup_checks() -> None:
    for name in ["modp-2048", "eg-4096"]:
        group = Group(name)
        p = group.p
        with pytest.raises(InvalidInput, match="subgroup"):
            group.element_from_int(p - 1)  # order 2
        with pytest.raises(InvalidInput):
            group.element_from_int(0)
        with pytest.raises(InvalidInput):
            group.element_from_int(p)
        assert group.element_from_int(1) == group.identity
        assert group.generator.to_int() == group.element_from_int(group.generator.to_int()).to_int()
    with pytest.raises(InvalidInput):
        Group("ristretto255").p  # noqa: B018


def test_values_of_different_groups_do_not_mix() -> None:
    a, b = Group("modp-2048"), Group("eg-4096")
    with pytest.raises(InvalidInput, match="group"):
        a.generator * b.generator
    with pytest.raises(InvalidInput, match="group"):
        a.generator ** b.scalar(3)
    assert a.generator != b.generator


@settings(max_examples=60, deadline=None)
@given(data=st.binary(max_size=700), name=st.sampled_from(["ristretto255", "modp-2048", "eg-4096"]))
def test_every_decoder_refuses_random_bytes_with_a_typed_error(data: bytes, name: str) -> None:
    group = Group(name)
    decoders = [
        group.element_from_bytes,
        group.scalar_from_bytes,
        lambda d: votum.Ciphertext.from_bytes(group, d),
        lambda d: votum.PublicKey.from_bytes(group, d),
        lambda d: votum.SchnorrProof.from_bytes(group, d),
        lambda d: votum.ChaumPedersenProof.from_bytes(group, d),
        lambda d: votum.HashedCiphertext.from_bytes(group, d),
    ]
    for decode in decoders:
        try:
            value = decode(data)
        except InvalidInput:
            continue
        # whatever is accepted is the one canonical encoding of its value
        assert value.to_bytes() == data


def _canonical_values(group: Group) -> list[tuple[str, bytes, object]]:
    g, s = group.generator, group.scalar(7)
    key = votum.PublicKey.from_bytes(group, (g**s).to_bytes())
    ct = votum.Ciphertext.from_bytes(group, votum.Ciphertext(g**s, g ** group.scalar(9)).to_bytes())
    return [
        ("element", (g**s).to_bytes(), group.element_from_bytes),
        ("scalar", s.to_bytes(), group.scalar_from_bytes),
        ("ciphertext", ct.to_bytes(), lambda d: votum.Ciphertext.from_bytes(group, d)),
        ("public key", key.to_bytes(), lambda d: votum.PublicKey.from_bytes(group, d)),
    ]


@settings(max_examples=60, deadline=None)
@given(
    name=st.sampled_from(["ristretto255", "modp-2048", "eg-4096"]),
    which=st.integers(0, 3),
    position=st.integers(0, 10**6),
    flip=st.integers(1, 255),
    cut=st.booleans(),
)
def test_corrupted_canonical_encodings_are_refused(
    name: str, which: int, position: int, flip: int, cut: bool
) -> None:
    """A canonical encoding with one byte changed or one byte short is either refused or decodes to
    a value whose own encoding is exactly those bytes (never a silent non-canonical accept)."""
    what, good, decode = _canonical_values(Group(name))[which]
    i = position % len(good)
    bad = good[:i] + good[i + 1 :] if cut else good[:i] + bytes([good[i] ^ flip]) + good[i + 1 :]
    try:
        value = decode(bad)
    except InvalidInput:
        return
    assert value.to_bytes() == bad, what  # type: ignore[attr-defined]
    assert not cut, f"{what}: a short encoding was accepted"


@settings(max_examples=40, deadline=None)
@given(data=st.binary(min_size=32, max_size=32))
def test_ristretto_decoding_is_canonical(data: bytes) -> None:
    group = Group("ristretto255")
    try:
        e = group.element_from_bytes(data)
    except InvalidInput:
        return
    assert e.to_bytes() == data
