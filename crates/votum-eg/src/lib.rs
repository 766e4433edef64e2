//! The ElectionGuard 1.0 homomorphic election protocol, byte-compatible with electionguard 1.4.0.
//!
//! Modules, lowest first: [`json`] (field readers) and [`encrypted`] (ballot data), [`batch`]
//! (random linear combinations of proof equations, a leaf), [`manifest`], [`context`],
//! [`ceremony`] (key ceremony; the guardian behind feature `prove`) and [`secret_state`],
//! [`encrypt`] (the encryption device), [`ballot`] (parse, verify, tally, box), [`decrypt`]
//! (prove, check, combine) and [`eg14`] (the decryption documents in ElectionGuard 1.4 JSON).

pub mod ballot;
pub mod batch;
pub mod ceremony;
pub mod context;
pub mod decrypt;
pub mod eg14;
#[cfg(feature = "prove")]
pub mod encrypt;
pub mod encrypted;
pub mod json;
pub mod manifest;
#[cfg(feature = "prove")]
pub mod nonces;
pub mod plaintext;
#[cfg(feature = "prove")]
pub mod secret_state;

pub use ballot::{
    BallotBox, BallotError, BallotHash, BallotState, BallotVerifier, Receipt, UncheckedBallot,
};
#[cfg(feature = "prove")]
pub use encrypt::{encrypt_ballot, encrypt_many, BallotRequest, EncryptionContext};
pub use encrypted::{EncryptedBallot, EncryptedContest, EncryptedSelection};
pub use manifest::{Manifest, ManifestError};
pub use plaintext::{EncryptError, PlaintextBallot};
