use votum_group::Group;

use crate::{ChallengeOracle, ProofError, ProofKind};

const NAME: &str = "schnorr";

/// Proof of knowledge of `x` with `y = g^x` (Algorithm 30.1).
pub struct SchnorrProof<G: Group> {
    pub commitment: G::Element,
    pub challenge: G::Scalar,
    pub response: G::Scalar,
}

impl<G: Group> Clone for SchnorrProof<G> {
    fn clone(&self) -> Self {
        Self {
            commitment: self.commitment.clone(),
            challenge: self.challenge.clone(),
            response: self.response.clone(),
        }
    }
}

impl<G: Group> std::fmt::Debug for SchnorrProof<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SchnorrProof")
            .field("commitment", &self.commitment)
            .finish_non_exhaustive()
    }
}

impl<G: Group> SchnorrProof<G> {
    /// Checks `c = O(y, h)` and `g^u = h·y^c`.
    pub fn verify<O: ChallengeOracle<G>>(
        &self,
        group: &G,
        oracle: &O,
        public: &G::Element,
    ) -> Result<(), ProofError> {
        if oracle.challenge(group, ProofKind::Schnorr, &[public, &self.commitment])
            != self.challenge
        {
            return Err(ProofError::ChallengeMismatch { proof: NAME });
        }
        // g^u · y^(−c) = h as one two-base multi-exponentiation: a verifier checks only a few
        // of these and should not pay for (or hold) a fixed-base table of g
        let lhs = group.multi_pow(
            &[group.generator().clone(), public.clone()],
            &[self.response.clone(), group.scalar_neg(&self.challenge)],
        );
        if lhs.as_ref() != Ok(&self.commitment) {
            return Err(ProofError::Equation {
                proof: NAME,
                equation: "g^u = h·y^c",
            });
        }
        Ok(())
    }
}
