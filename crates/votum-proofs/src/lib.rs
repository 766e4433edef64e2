//! Zero-knowledge proofs, each a `prove`/`verify` pair (spec/30-proofs.md, Algorithms 30.x).
//!
//! Challenges come from a [`ChallengeOracle`]: [`NativeOracle`] hashes a labelled transcript
//! of the full statement (votum's own protocols); [`Eg1Oracle`] reproduces ElectionGuard 1.0's
//! `hash_elems` challenges byte for byte (interoperability with electionguard 1.4.0).
//!
//! Feature `prove` (on by default) compiles the provers, all in one module (each proof's `prove`
//! and the [`batch`] entry points); the independent verifier builds without it.
//!
//! `verify` returns `Result<(), ProofError>` and never panics; the error says which check failed.

mod chaum_pedersen;
mod disjunctive;
mod oracle;
#[cfg(feature = "prove")]
mod prove;
mod schnorr;

pub use chaum_pedersen::{ChaumPedersenProof, ConstantProof, Statement};
pub use disjunctive::DisjunctiveProof;
pub use oracle::{ChallengeOracle, Eg1Oracle, NativeOracle, ProofKind};
#[cfg(feature = "prove")]
pub use prove::batch;
pub use schnorr::SchnorrProof;

/// Why a proof was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProofError {
    #[error("{proof}: the challenge does not match the hash of the commitments")]
    ChallengeMismatch { proof: &'static str },
    #[error("{proof}: the split challenges do not add up to the challenge")]
    ChallengeSum { proof: &'static str },
    #[error("{proof}: verification equation {equation} does not hold")]
    Equation {
        proof: &'static str,
        equation: &'static str,
    },
    #[error("{proof}: the proven constant is {got}, expected {expected}")]
    WrongConstant {
        proof: &'static str,
        expected: u64,
        got: u64,
    },
    #[error("{proof}: the plaintext must be 0 or 1 to prove it")]
    NotABit { proof: &'static str },
}

/// `base^e`, from the generator's table when `base` is the generator.
pub(crate) fn pow_any<G: votum_group::Group>(
    group: &G,
    base: &G::Element,
    e: &G::Scalar,
) -> G::Element {
    if base == group.generator() {
        group.pow_generator(e)
    } else {
        group.pow(base, e)
    }
}
