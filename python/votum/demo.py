"""A threshold-ElGamal vote count, end to end, on any of votum's groups.

This is the foundation's main job (the homomorphic-election issue replaces it with a full
ElectionGuard election): n guardians run a Feldman key ceremony with Schnorr proofs and
encrypted share delivery, voters' 0/1 votes are encrypted with disjunctive proofs in batch,
every proof is verified, the ciphertexts are summed homomorphically, a quorum of guardians
decrypts with Chaum–Pedersen proofs, and the count is checked against the plaintext votes.
"""

from __future__ import annotations

import hashlib
import random
from contextlib import AbstractContextManager
from dataclasses import dataclass, field

from votum._native import (
    ChaumPedersenProof,
    Ciphertext,
    DlogTable,
    Element,
    Group,
    HashedCiphertext,
    ProvenBit,
    PublicKey,
    Scalar,
    SecretKey,
    SecretPolynomial,
    combine_partials,
    encrypt_bits_with_proofs,
    public_share,
    verify_bits,
    verify_share,
)
from votum.errors import InvalidInput, VerificationFailed
from votum.steps import ProgressHook, Step, no_progress, timed, total_seconds


@dataclass(frozen=True)
class DemoConfig:
    votes: int = 10_000
    guardians: int = 5
    quorum: int = 3
    group: str = "eg-4096"
    seed: int = 2026
    batch: int = 1_000

    def validate(self) -> None:
        if self.votes < 1:
            raise InvalidInput("votes must be at least 1")
        if not 1 <= self.quorum <= self.guardians:
            raise InvalidInput(
                f"quorum must be between 1 and guardians ({self.guardians}), got {self.quorum}"
            )
        if self.group not in Group.names():
            raise InvalidInput(f"unknown group {self.group!r}; choose one of {', '.join(Group.names())}")
        if self.batch < 1:
            raise InvalidInput("batch must be at least 1")


@dataclass
class DemoResult:
    config: DemoConfig
    expected_count: int
    decrypted_count: int
    steps: list[Step] = field(default_factory=list)

    @property
    def total_seconds(self) -> float:
        return total_seconds(self.steps)

    @property
    def ok(self) -> bool:
        return self.expected_count == self.decrypted_count


def _seed_bytes(seed: int, label: str) -> bytes:
    return hashlib.sha256(f"votum-demo/{seed}/{label}".encode()).digest()


def run_demo(config: DemoConfig, progress: ProgressHook | None = None) -> DemoResult:
    """Runs the whole count; raises a votum error if any proof or share fails to verify."""
    config.validate()
    report: ProgressHook = progress or no_progress
    steps: list[Step] = []

    def step(name: str, items: int) -> AbstractContextManager[None]:
        return timed(steps, name, items)

    group = Group(config.group)
    context = _seed_bytes(config.seed, "election-context")
    n, k = config.guardians, config.quorum

    with step("key ceremony", n):
        polys = [
            SecretPolynomial.random(group, k, _seed_bytes(config.seed, f"poly-{i}")) for i in range(1, n + 1)
        ]
        commitments = [p.commitments() for p in polys]
        proofs = [
            p.coefficient_proofs(context, _seed_bytes(config.seed, f"proof-{i}")) for i, p in enumerate(polys)
        ]
        # every guardian checks every other guardian's coefficient proofs
        for cs, ps in zip(commitments, proofs, strict=True):
            for c, pr in zip(cs, ps, strict=True):
                pr.verify(c, context)
        # shares travel encrypted to the recipient's own key, and are checked on arrival
        recipient_keys = [p.secret_key() for p in polys]
        recipient_public = [sk.public_key() for sk in recipient_keys]
        key_shares: list[Scalar] = []
        for j in range(1, n + 1):
            total: Scalar | None = None
            for i, poly in enumerate(polys):
                sealed = HashedCiphertext.encrypt(
                    recipient_public[j - 1],
                    poly.evaluate(j).to_bytes(),
                    _seed_bytes(config.seed, f"seal-{i}-{j}"),
                )
                share = group.scalar_from_bytes(sealed.decrypt(recipient_keys[j - 1]))
                verify_share(commitments[i], j, share)
                total = share if total is None else total + share
            assert total is not None
            key_shares.append(total)
        joint = commitments[0][0]
        for cs in commitments[1:]:
            joint = joint * cs[0]
        report("key ceremony", n, n)

    with step("election key table", 1):
        public_key = PublicKey(joint, precompute=True)

    rng = random.Random(config.seed)
    votes = [rng.randrange(2) for _ in range(config.votes)]
    ballots: list[ProvenBit] = []
    with step("encrypt votes with 0/1 proofs", config.votes):
        for start in range(0, config.votes, config.batch):
            chunk = votes[start : start + config.batch]
            ballots.extend(
                encrypt_bits_with_proofs(
                    public_key, chunk, context, _seed_bytes(config.seed, f"votes-{start}")
                )
            )
            report("encrypt", len(ballots), config.votes)

    with step("verify every 0/1 proof", config.votes):
        for start in range(0, config.votes, config.batch):
            verify_bits(joint, ballots[start : start + config.batch], context)
            report("verify", min(start + config.batch, config.votes), config.votes)

    with step("homomorphic tally", config.votes):
        tally = Ciphertext.sum(group, [b.ciphertext for b in ballots])

    present = list(range(1, k + 1))
    with step("partial decryptions with proofs", len(present)):
        partials: list[tuple[int, Element]] = []
        for j in present:
            share_key = SecretKey.from_scalar(key_shares[j - 1])
            m_j = share_key.partial_decrypt(tally)
            proof = ChaumPedersenProof.prove(
                group.generator,
                share_key.public_key().element,
                tally.pad,
                m_j,
                share_key,
                context,
                _seed_bytes(config.seed, f"decrypt-{j}"),
            )
            # anyone recomputes guardian j's public share from the published commitments
            public_j = public_share(commitments[0], j)
            for cs in commitments[1:]:
                public_j = public_j * public_share(cs, j)
            proof.verify(group.generator, public_j, tally.pad, m_j, context)
            partials.append((j, m_j))
        report("decrypt", len(present), len(present))

    with step("combine and discrete log", 1):
        combined = combine_partials(group, partials, k)
        count = DlogTable(group, config.votes).log(tally.decrypt_with_share(combined))

    result = DemoResult(config=config, expected_count=sum(votes), decrypted_count=count, steps=steps)
    if not result.ok:
        raise VerificationFailed(f"decrypted count {count} differs from the plaintext count {sum(votes)}")
    return result
