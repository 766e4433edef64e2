//! ElectionGuard 2.x as egk-ec writes it (spec/65): the group encodings, hashes and manifest reading that
//! the prover and the independent verifier share; and, behind the feature `prove`, the parties that make a
//! record: guardians (spec/65.7), the encryption device, the tally and the decryption (spec/65.8), and the
//! record writer. The verifier builds without `prove`.

pub mod group;
pub mod hashes;
pub mod manifest;
pub mod plain_data;
pub mod read;

#[cfg(feature = "prove")]
pub mod ceremony;
#[cfg(feature = "prove")]
pub mod contest_data;
#[cfg(feature = "prove")]
pub mod decrypt;
#[cfg(feature = "prove")]
pub mod election;
#[cfg(feature = "prove")]
pub mod encrypt;
#[cfg(feature = "prove")]
pub mod record;
#[cfg(feature = "prove")]
pub mod trustee;

pub use group::Eg2Group;
pub use manifest::{read_manifest, Manifest, ManifestContest};

use votum_group::Group;

/// One (challenge, response) pair of a proof.
pub struct Pair<G: Group> {
    pub c: G::Scalar,
    pub v: G::Scalar,
}

impl<G: Group> Clone for Pair<G> {
    fn clone(&self) -> Self {
        Self {
            c: self.c.clone(),
            v: self.v.clone(),
        }
    }
}

/// The contest data (C₀, C₁, C₂) of a contest (hashed ElGamal, 2.0 §3.3.6).
pub struct ContestData<G: Group> {
    pub c0: G::Element,
    pub c1: Vec<u8>,
    pub c2: [u8; 32],
}

impl<G: Group> Clone for ContestData<G> {
    fn clone(&self) -> Self {
        Self {
            c0: self.c0.clone(),
            c1: self.c1.clone(),
            c2: self.c2,
        }
    }
}

impl<G: Group> PartialEq for ContestData<G> {
    fn eq(&self, other: &Self) -> bool {
        self.c0 == other.c0 && self.c1 == other.c1 && self.c2 == other.c2
    }
}

/// What the voter did with the encrypted ballot: cast it, or challenged it (to have it opened).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Cast,
    Challenged,
}

impl State {
    /// Its name in egk-ec's record (spec/65.3); the 2.1 record writes it in lower case (spec/66.3).
    pub fn name(self) -> &'static str {
        match self {
            State::Cast => "CAST",
            State::Challenged => "CHALLENGED",
        }
    }
}

/// Why a 2.x election step refused its input.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum Eg2Error {
    #[error("manifest: {0}")]
    Manifest(String),
    #[error("ballot {ballot}: {reason}")]
    Ballot { ballot: String, reason: String },
    #[error("guardian {guardian}: {reason}")]
    Guardian { guardian: String, reason: String },
    #[error("decryption: {0}")]
    Decryption(String),
    #[error("{0}")]
    Parameters(String),
    #[error("record: {0}")]
    Io(String),
    /// A guardian refuses to decrypt a record that does not verify as far as its encrypted tally.
    #[error("the record does not verify: {0}")]
    Unverified(String),
}

/// ElectionGuard 2.1 itself (spec/66): the 2.1 hashes, keys, ballots, decryption and record.
pub mod v21;
