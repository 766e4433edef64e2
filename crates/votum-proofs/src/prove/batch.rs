//! Batch entry points: one call, all cores (rayon), for work done per ballot or per selection.

use rand_core::{CryptoRng, RngCore};
use rayon::prelude::*;
use votum_elgamal::{Ciphertext, PublicKey};
use votum_group::Group;

use crate::{ChallengeOracle, DisjunctiveProof, ProofError};

/// An encryption of 0 or 1 with its proof.
pub struct ProvenBit<G: Group> {
    pub ciphertext: Ciphertext<G>,
    pub proof: DisjunctiveProof<G>,
}

impl<G: Group> Clone for ProvenBit<G> {
    fn clone(&self) -> Self {
        Self {
            ciphertext: self.ciphertext.clone(),
            proof: self.proof.clone(),
        }
    }
}

/// Encrypts each bit with a fresh nonce and proves it is 0 or 1. The randomness is drawn from
/// `rng` up front (so a seeded run is reproducible whatever the thread count); the
/// exponentiations run in parallel.
pub fn encrypt_bits_with_proofs<G: Group, O: ChallengeOracle<G>, R: RngCore + CryptoRng>(
    group: &G,
    oracle: &O,
    public_key: &PublicKey<G>,
    bits: &[u64],
    rng: &mut R,
) -> Result<Vec<ProvenBit<G>>, ProofError> {
    let randomness: Vec<[G::Scalar; 4]> = bits
        .iter()
        .map(|_| {
            [
                group.random_scalar(rng),
                group.random_scalar(rng),
                group.random_scalar(rng),
                group.random_scalar(rng),
            ]
        })
        .collect();
    bits.par_iter()
        .zip(randomness.par_iter())
        .map(|(&bit, [r, c, v, u])| {
            let ciphertext = Ciphertext::encrypt_exp(group, public_key, bit, r);
            let proof = DisjunctiveProof::prove_with_nonces(
                group,
                oracle,
                public_key,
                &ciphertext,
                bit,
                r,
                [c, v, u],
            )?;
            Ok(ProvenBit { ciphertext, proof })
        })
        .collect()
}

/// Verifies every proof; on failure returns the index of the first failing item and why.
pub fn verify_bits<G: Group, O: ChallengeOracle<G>>(
    group: &G,
    oracle: &O,
    public_key: &G::Element,
    items: &[ProvenBit<G>],
) -> Result<(), (usize, ProofError)> {
    let failure = items
        .par_iter()
        .enumerate()
        .filter_map(|(i, it)| {
            it.proof
                .verify(group, oracle, public_key, &it.ciphertext)
                .err()
                .map(|e| (i, e))
        })
        .min_by_key(|(i, _)| *i);
    match failure {
        Some(f) => Err(f),
        None => Ok(()),
    }
}
