use votum_elgamal::{Ciphertext, PublicKey};
use votum_group::Group;

use crate::{ChallengeOracle, ProofError, ProofKind};

pub(crate) const NAME: &str = "disjunctive";

/// Proof that an exponential ElGamal ciphertext encrypts 0 or 1, in the four-commitment shape
/// of ElectionGuard 1.0 (Algorithm 30.3): `c = O(α, β, a0, b0, a1, b1)`, `c = c0 + c1`.
pub struct DisjunctiveProof<G: Group> {
    pub zero_pad: G::Element,
    pub zero_data: G::Element,
    pub one_pad: G::Element,
    pub one_data: G::Element,
    pub zero_challenge: G::Scalar,
    pub one_challenge: G::Scalar,
    pub challenge: G::Scalar,
    pub zero_response: G::Scalar,
    pub one_response: G::Scalar,
}

impl<G: Group> Clone for DisjunctiveProof<G> {
    fn clone(&self) -> Self {
        Self {
            zero_pad: self.zero_pad.clone(),
            zero_data: self.zero_data.clone(),
            one_pad: self.one_pad.clone(),
            one_data: self.one_data.clone(),
            zero_challenge: self.zero_challenge.clone(),
            one_challenge: self.one_challenge.clone(),
            challenge: self.challenge.clone(),
            zero_response: self.zero_response.clone(),
            one_response: self.one_response.clone(),
        }
    }
}

impl<G: Group> std::fmt::Debug for DisjunctiveProof<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DisjunctiveProof").finish_non_exhaustive()
    }
}

impl<G: Group> DisjunctiveProof<G> {
    /// Checks the challenge, its split, and the four equations
    /// `g^v0 = a0·α^c0`, `g^v1 = a1·α^c1`, `K^v0 = b0·β^c0`, `g^c1·K^v1 = b1·β^c1`.
    pub fn verify<O: ChallengeOracle<G>>(
        &self,
        group: &G,
        oracle: &O,
        public_key: &G::Element,
        ct: &Ciphertext<G>,
    ) -> Result<(), ProofError> {
        match PublicKey::new(group, public_key.clone()) {
            Ok(pk) => self.verify_with_key(group, oracle, &pk, ct),
            Err(_) => Err(ProofError::Equation {
                proof: NAME,
                equation: "K ≠ 1",
            }),
        }
    }

    /// The non-algebraic part of [`DisjunctiveProof::verify`]: `c = O(α, β, a0, b0, a1, b1)` and
    /// `c = c0 + c1`. Batch verifiers call it, then check the equations together.
    pub fn check_challenge<O: ChallengeOracle<G>>(
        &self,
        group: &G,
        oracle: &O,
        ct: &Ciphertext<G>,
    ) -> Result<(), ProofError> {
        let c = oracle.challenge(
            group,
            ProofKind::Disjunctive,
            &[
                &ct.pad,
                &ct.data,
                &self.zero_pad,
                &self.zero_data,
                &self.one_pad,
                &self.one_data,
            ],
        );
        if c != self.challenge {
            return Err(ProofError::ChallengeMismatch { proof: NAME });
        }
        if group.scalar_add(&self.zero_challenge, &self.one_challenge) != c {
            return Err(ProofError::ChallengeSum { proof: NAME });
        }
        Ok(())
    }

    /// [`DisjunctiveProof::verify`] with K's fixed-base table, when the key has one.
    pub fn verify_with_key<O: ChallengeOracle<G>>(
        &self,
        group: &G,
        oracle: &O,
        public_key: &PublicKey<G>,
        ct: &Ciphertext<G>,
    ) -> Result<(), ProofError> {
        self.check_challenge(group, oracle, ct)?;
        let (c0, c1, v0, v1) = (
            &self.zero_challenge,
            &self.one_challenge,
            &self.zero_response,
            &self.one_response,
        );
        if group.pow_generator(v0) != group.op(&self.zero_pad, &group.pow(&ct.pad, c0)) {
            return Err(ProofError::Equation {
                proof: NAME,
                equation: "g^v0 = a0·α^c0",
            });
        }
        if group.pow_generator(v1) != group.op(&self.one_pad, &group.pow(&ct.pad, c1)) {
            return Err(ProofError::Equation {
                proof: NAME,
                equation: "g^v1 = a1·α^c1",
            });
        }
        if public_key.pow(group, v0) != group.op(&self.zero_data, &group.pow(&ct.data, c0)) {
            return Err(ProofError::Equation {
                proof: NAME,
                equation: "K^v0 = b0·β^c0",
            });
        }
        let lhs = group.op(&group.pow_generator(c1), &public_key.pow(group, v1));
        if lhs != group.op(&self.one_data, &group.pow(&ct.data, c1)) {
            return Err(ProofError::Equation {
                proof: NAME,
                equation: "g^c1·K^v1 = b1·β^c1",
            });
        }
        Ok(())
    }
}
