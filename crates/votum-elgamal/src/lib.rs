//! ElGamal over any [`votum_group::Group`].
//!
//! * [`keys`]: secret keys (zeroized, redacted), public keys with an optional fixed-base table.
//! * [`ciphertext`]: exponential ElGamal `(g^r, g^m K^r)` and element ElGamal `(g^r, M K^r)`,
//!   homomorphic addition, re-encryption, decryption, batch encryption.
//! * [`threshold`]: Shamir secret polynomials with Feldman commitments, share verification,
//!   Lagrange coefficients, partial decryption and combination.
//! * [`dlog`]: baby-step giant-step discrete logarithm of small results.
//! * [`secret`] (feature `prove`, on by default): everything that touches a secret, in one module:
//!   secret keys, encryption with a nonce, decryption, secret polynomials, and hashed ElGamal
//!   ([`secret::hashed`]: KEM + HMAC-SHA256 stream and tag, for messages of any length). The
//!   independent verifier builds without it, so it cannot hold or use a secret.

pub mod ciphertext;
pub mod dlog;
pub mod keys;
#[cfg(feature = "prove")]
pub mod secret;
pub mod threshold;

pub use ciphertext::Ciphertext;
pub use dlog::DlogTable;
pub use keys::PublicKey;
#[cfg(feature = "prove")]
pub use secret::{hashed, KeyPair, SecretKey, SecretPolynomial};

/// Errors of the ElGamal layer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ElGamalError {
    #[error("discrete logarithm not found below {max}")]
    DlogNotFound { max: u64 },
    #[error("share of participant {index} does not match the published commitments")]
    InvalidShare { index: u64 },
    #[error("participant index must be between 1 and {max}, got {index}")]
    BadIndex { index: u64, max: u64 },
    #[error("participant {0} appears twice")]
    DuplicateIndex(u64),
    #[error("participant {0} is not among those present")]
    NotPresent(u64),
    #[error("quorum must be between 1 and the number of participants ({n}), got {k}")]
    BadQuorum { k: usize, n: usize },
    #[error("{needed} shares are needed, {got} were given")]
    TooFewShares { needed: usize, got: usize },
    #[error("public key is the identity element")]
    IdentityKey,
    #[error("ciphertext authentication failed")]
    BadTag,
    #[error("hashed ciphertext is malformed")]
    MalformedCiphertext,
    #[error(transparent)]
    Group(#[from] votum_group::GroupError),
}
