//! The provers (feature `prove`, on by default): each proof's `prove`, which holds the witness,
//! and the batch entry points that encrypt and prove many values at once ([`batch`]). The
//! independent verifier builds without this module.

use rand_core::{CryptoRng, RngCore};
use votum_elgamal::{Ciphertext, PublicKey};
use votum_group::{Group, Secret};

use crate::chaum_pedersen::hash_inputs;
use crate::disjunctive::NAME as DISJUNCTIVE;
use crate::{
    pow_any, ChallengeOracle, ChaumPedersenProof, ConstantProof, DisjunctiveProof, ProofError,
    ProofKind, SchnorrProof, Statement,
};

pub mod batch;

impl<G: Group> SchnorrProof<G> {
    /// `h = g^w`, `c = O(y, h)`, `u = w + c·x`. `w` must be fresh, uniform and secret.
    pub fn prove_with_nonce<O: ChallengeOracle<G>>(
        group: &G,
        oracle: &O,
        secret: &Secret<G::Scalar>,
        public: &G::Element,
        w: &Secret<G::Scalar>,
    ) -> Self {
        // the nonce hides a long-term secret in u = w + c·x: constant time (ADR 0002)
        let commitment = group.pow_secret(group.generator(), w);
        let challenge = oracle.challenge(group, ProofKind::Schnorr, &[public, &commitment]);
        let response = group.scalar_add(w.expose(), &group.scalar_mul(&challenge, secret.expose()));
        Self {
            commitment,
            challenge,
            response,
        }
    }

    pub fn prove<O: ChallengeOracle<G>, R: RngCore + CryptoRng>(
        group: &G,
        oracle: &O,
        secret: &Secret<G::Scalar>,
        public: &G::Element,
        rng: &mut R,
    ) -> Self {
        let w = group.random_secret(rng);
        Self::prove_with_nonce(group, oracle, secret, public, &w)
    }
}

impl<G: Group> ChaumPedersenProof<G> {
    #[allow(clippy::too_many_arguments)]
    pub fn prove_with_nonce<O: ChallengeOracle<G>>(
        group: &G,
        oracle: &O,
        statement: &Statement<'_, G>,
        secret: &G::Scalar,
        w: &G::Scalar,
        prefix: &[&G::Element],
        suffix: &[&G::Element],
    ) -> Self {
        let pad = pow_any(group, statement.g1, w);
        let data = pow_any(group, statement.g2, w);
        let challenge = oracle.challenge(
            group,
            ProofKind::ChaumPedersen,
            &hash_inputs(prefix, &pad, &data, suffix),
        );
        let response = group.scalar_add(w, &group.scalar_mul(&challenge, secret));
        Self {
            pad,
            data,
            challenge,
            response,
        }
    }

    pub fn prove<O: ChallengeOracle<G>, R: RngCore + CryptoRng>(
        group: &G,
        oracle: &O,
        statement: &Statement<'_, G>,
        secret: &G::Scalar,
        prefix: &[&G::Element],
        suffix: &[&G::Element],
        rng: &mut R,
    ) -> Self {
        let w = group.random_scalar(rng);
        Self::prove_with_nonce(group, oracle, statement, secret, &w, prefix, suffix)
    }
}

impl<G: Group> ConstantProof<G> {
    /// `a = g^u`, `b = K^u`, `c = O(α, β, a, b)`, `v = u + c·R` where `R` is the ciphertext's nonce.
    /// Only fixed-base exponentiations (of `g` and, through its table, of `K`).
    #[allow(clippy::too_many_arguments)]
    pub fn prove_with_nonce<O: ChallengeOracle<G>>(
        group: &G,
        oracle: &O,
        public_key: &votum_elgamal::PublicKey<G>,
        ct: &votum_elgamal::Ciphertext<G>,
        constant: u64,
        nonce: &G::Scalar,
        u: &G::Scalar,
    ) -> Self {
        let pad = group.pow_generator(u);
        let data = public_key.pow(group, u);
        let challenge = oracle.challenge(
            group,
            ProofKind::Constant,
            &[&ct.pad, &ct.data, &pad, &data],
        );
        let response = group.scalar_add(u, &group.scalar_mul(&challenge, nonce));
        Self {
            pad,
            data,
            challenge,
            response,
            constant,
        }
    }
}

impl<G: Group> DisjunctiveProof<G> {
    /// Proves that `ct = (g^r, g^m K^r)` with `m ∈ {0, 1}`.
    ///
    /// `nonces = (c_sim, v_sim, u)`: the simulated branch's challenge and response and the real
    /// branch's commitment exponent, as ElectionGuard derives them (`c1, v1, u0` for m = 0;
    /// `c0, v0, u1` for m = 1). The prover knows `r`, so every commitment is a fixed-base
    /// exponentiation of `g` or `K`: `α^{-c} = g^{-rc}` and `β^{-c} = g^{-mc} K^{-rc}`.
    #[allow(clippy::too_many_arguments)]
    pub fn prove_with_nonces<O: ChallengeOracle<G>>(
        group: &G,
        oracle: &O,
        public_key: &PublicKey<G>,
        ct: &Ciphertext<G>,
        m: u64,
        r: &G::Scalar,
        nonces: [&G::Scalar; 3],
    ) -> Result<Self, ProofError> {
        let [c_sim, v_sim, u] = nonces;
        // exponent v_sim - r·c_sim, shared by both simulated commitments
        let e = group.scalar_sub(v_sim, &group.scalar_mul(r, c_sim));
        let real_pad = group.pow_generator(u);
        let real_data = public_key.pow(group, u);
        let (zero_pad, zero_data, one_pad, one_data) = match m {
            0 => {
                // simulate the "1" branch: a1 = g^{v1} α^{-c1}, b1 = K^{v1} g^{c1} β^{-c1}
                let one_pad = group.pow_generator(&e);
                let one_data = group.op(&public_key.pow(group, &e), &group.pow_generator(c_sim));
                (real_pad, real_data, one_pad, one_data)
            }
            1 => {
                // simulate the "0" branch: a0 = g^{v0} α^{-c0}, b0 = K^{v0} β^{-c0}
                let zero_pad = group.pow_generator(&e);
                let zero_data = group.op(
                    &public_key.pow(group, &e),
                    &group.pow_generator(&group.scalar_neg(c_sim)),
                );
                (zero_pad, zero_data, real_pad, real_data)
            }
            _ => return Err(ProofError::NotABit { proof: DISJUNCTIVE }),
        };
        let challenge = oracle.challenge(
            group,
            ProofKind::Disjunctive,
            &[
                &ct.pad, &ct.data, &zero_pad, &zero_data, &one_pad, &one_data,
            ],
        );
        let c_real = group.scalar_sub(&challenge, c_sim);
        let v_real = group.scalar_add(u, &group.scalar_mul(&c_real, r));
        let (zero_challenge, one_challenge, zero_response, one_response) = if m == 0 {
            (c_real, c_sim.clone(), v_real, v_sim.clone())
        } else {
            (c_sim.clone(), c_real, v_sim.clone(), v_real)
        };
        Ok(Self {
            zero_pad,
            zero_data,
            one_pad,
            one_data,
            zero_challenge,
            one_challenge,
            challenge,
            zero_response,
            one_response,
        })
    }
}
