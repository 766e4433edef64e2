use votum_group::Group;

use crate::{pow_any, ChallengeOracle, ProofError, ProofKind};

const CP: &str = "chaum-pedersen";
const CONSTANT: &str = "constant";

/// Proof that `log_{g1} A = log_{g2} B` (Algorithm 30.2): commitments `a = g1^w`, `b = g2^w`,
/// challenge `c = O(prefix…, a, b, suffix…)`, response `v = w + c·x`.
///
/// The caller chooses what the challenge binds besides the commitments: votum passes the
/// whole statement `(g1, A, g2, B)`; ElectionGuard 1.0 decryption proofs pass `prefix = (α, β)`
/// and `suffix = (M_i)`.
pub struct ChaumPedersenProof<G: Group> {
    pub pad: G::Element,
    pub data: G::Element,
    pub challenge: G::Scalar,
    pub response: G::Scalar,
}

impl<G: Group> Clone for ChaumPedersenProof<G> {
    fn clone(&self) -> Self {
        Self {
            pad: self.pad.clone(),
            data: self.data.clone(),
            challenge: self.challenge.clone(),
            response: self.response.clone(),
        }
    }
}

impl<G: Group> std::fmt::Debug for ChaumPedersenProof<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChaumPedersenProof")
            .field("pad", &self.pad)
            .field("data", &self.data)
            .finish_non_exhaustive()
    }
}

/// The statement of a Chaum–Pedersen proof: `A = g1^x` and `B = g2^x`.
pub struct Statement<'a, G: Group> {
    pub g1: &'a G::Element,
    pub a: &'a G::Element,
    pub g2: &'a G::Element,
    pub b: &'a G::Element,
}

pub(crate) fn hash_inputs<'a, E>(
    prefix: &[&'a E],
    pad: &'a E,
    data: &'a E,
    suffix: &[&'a E],
) -> Vec<&'a E> {
    let mut v = Vec::with_capacity(prefix.len() + 2 + suffix.len());
    v.extend_from_slice(prefix);
    v.push(pad);
    v.push(data);
    v.extend_from_slice(suffix);
    v
}

impl<G: Group> ChaumPedersenProof<G> {
    /// The non-algebraic part of [`ChaumPedersenProof::verify`]: `c = O(prefix…, a, b, suffix…)`.
    /// Batch verifiers call it, then check the equations together.
    pub fn check_challenge<O: ChallengeOracle<G>>(
        &self,
        group: &G,
        oracle: &O,
        prefix: &[&G::Element],
        suffix: &[&G::Element],
    ) -> Result<(), ProofError> {
        let c = oracle.challenge(
            group,
            ProofKind::ChaumPedersen,
            &hash_inputs(prefix, &self.pad, &self.data, suffix),
        );
        if c != self.challenge {
            return Err(ProofError::ChallengeMismatch { proof: CP });
        }
        Ok(())
    }

    /// Checks the challenge, `g1^v = a·A^c` and `g2^v = b·B^c`.
    pub fn verify<O: ChallengeOracle<G>>(
        &self,
        group: &G,
        oracle: &O,
        statement: &Statement<'_, G>,
        prefix: &[&G::Element],
        suffix: &[&G::Element],
    ) -> Result<(), ProofError> {
        self.check_challenge(group, oracle, prefix, suffix)?;
        let c = &self.challenge;
        let lhs1 = pow_any(group, statement.g1, &self.response);
        if lhs1 != group.op(&self.pad, &pow_any(group, statement.a, c)) {
            return Err(ProofError::Equation {
                proof: CP,
                equation: "g1^v = a·A^c",
            });
        }
        let lhs2 = pow_any(group, statement.g2, &self.response);
        if lhs2 != group.op(&self.data, &pow_any(group, statement.b, c)) {
            return Err(ProofError::Equation {
                proof: CP,
                equation: "g2^v = b·B^c",
            });
        }
        Ok(())
    }
}

/// Proof that an exponential ElGamal ciphertext `(α, β)` under `K` encrypts the constant `L`
/// (ElectionGuard 1.0 selection-limit proof, Algorithm 30.4).
pub struct ConstantProof<G: Group> {
    pub pad: G::Element,
    pub data: G::Element,
    pub challenge: G::Scalar,
    pub response: G::Scalar,
    pub constant: u64,
}

impl<G: Group> Clone for ConstantProof<G> {
    fn clone(&self) -> Self {
        Self {
            pad: self.pad.clone(),
            data: self.data.clone(),
            challenge: self.challenge.clone(),
            response: self.response.clone(),
            constant: self.constant,
        }
    }
}

impl<G: Group> std::fmt::Debug for ConstantProof<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConstantProof")
            .field("constant", &self.constant)
            .finish_non_exhaustive()
    }
}

impl<G: Group> ConstantProof<G> {
    /// Checks the constant, the challenge, `g^v = a·α^c` and `g^{cL}·K^v = b·β^c`.
    pub fn verify<O: ChallengeOracle<G>>(
        &self,
        group: &G,
        oracle: &O,
        public_key: &G::Element,
        ct: &votum_elgamal::Ciphertext<G>,
        expected_constant: u64,
    ) -> Result<(), ProofError> {
        match votum_elgamal::PublicKey::new(group, public_key.clone()) {
            Ok(pk) => self.verify_with_key(group, oracle, &pk, ct, expected_constant),
            Err(_) => Err(ProofError::Equation {
                proof: CONSTANT,
                equation: "K ≠ 1",
            }),
        }
    }

    /// The non-algebraic part of [`ConstantProof::verify`]: the constant and `c = O(α, β, a, b)`.
    /// Batch verifiers call it, then check the equations together.
    pub fn check_challenge<O: ChallengeOracle<G>>(
        &self,
        group: &G,
        oracle: &O,
        ct: &votum_elgamal::Ciphertext<G>,
        expected_constant: u64,
    ) -> Result<(), ProofError> {
        if self.constant != expected_constant {
            return Err(ProofError::WrongConstant {
                proof: CONSTANT,
                expected: expected_constant,
                got: self.constant,
            });
        }
        let c = oracle.challenge(
            group,
            ProofKind::Constant,
            &[&ct.pad, &ct.data, &self.pad, &self.data],
        );
        if c != self.challenge {
            return Err(ProofError::ChallengeMismatch { proof: CONSTANT });
        }
        Ok(())
    }

    /// [`ConstantProof::verify`] with K's fixed-base table, when the key has one.
    pub fn verify_with_key<O: ChallengeOracle<G>>(
        &self,
        group: &G,
        oracle: &O,
        public_key: &votum_elgamal::PublicKey<G>,
        ct: &votum_elgamal::Ciphertext<G>,
        expected_constant: u64,
    ) -> Result<(), ProofError> {
        self.check_challenge(group, oracle, ct, expected_constant)?;
        let c = &self.challenge;
        if group.pow_generator(&self.response) != group.op(&self.pad, &group.pow(&ct.pad, c)) {
            return Err(ProofError::Equation {
                proof: CONSTANT,
                equation: "g^v = a·α^c",
            });
        }
        let cl = group.scalar_mul(c, &group.scalar_from_u64(self.constant));
        let lhs = group.op(
            &group.pow_generator(&cl),
            &public_key.pow(group, &self.response),
        );
        if lhs != group.op(&self.data, &group.pow(&ct.data, c)) {
            return Err(ProofError::Equation {
                proof: CONSTANT,
                equation: "g^(cL)·K^v = b·β^c",
            });
        }
        Ok(())
    }
}
