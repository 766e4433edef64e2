//! The ElectionGuard 1.0 homomorphic election protocol, byte-compatible with electionguard 1.4.0.
//!
//! This crate grows with the homomorphic-election work. Today: the election manifest in the
//! ElectionGuard 1.4 JSON layout, its validation and crypto hashes (spec/60), and the encryption
//! device, deterministic given a master nonce and byte-identical to the reference (spec/61).

pub mod ballot_box;
pub mod batch;
pub mod context;
pub mod decrypt;
pub mod encrypt;
pub mod guardian;
pub mod json;
pub mod manifest;
#[cfg(feature = "prove")]
pub mod nonces;

pub use ballot_box::{
    BallotBox, BallotError, BallotHash, BallotState, BallotVerifier, Receipt, UncheckedBallot,
};
#[cfg(feature = "prove")]
pub use encrypt::{encrypt_ballot, encrypt_many, BallotRequest, EncryptionContext};
pub use encrypt::{EncryptError, PlaintextBallot};
pub use manifest::{Manifest, ManifestError};
