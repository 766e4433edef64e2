//! Plaintext ballots in the ElectionGuard 1.4 JSON layout, and why one could not be encrypted.

use serde::Deserialize;
use votum_proofs::ProofError;

/// Why a ballot could not be encrypted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EncryptError {
    #[error("plaintext ballot JSON is malformed: {0}")]
    Json(String),
    #[error("unknown ballot style {0:?}")]
    UnknownStyle(String),
    #[error("contest {0:?} is not on ballot style {1:?}")]
    ContestNotOnStyle(String, String),
    #[error("contest {contest:?} has no selection {selection:?}")]
    UnknownSelection { contest: String, selection: String },
    #[error("selection {0:?}: a vote must be 0 or 1")]
    NotABit(String),
    #[error("contest {contest:?}: {votes} votes, at most {allowed} allowed")]
    Overvote {
        contest: String,
        votes: u64,
        allowed: u64,
    },
    #[error("contest {0:?} appears twice on the ballot")]
    DuplicateContest(String),
    #[error("a nonce derived to zero (probability 2^-256); use another master nonce")]
    ZeroNonce,
    #[error(transparent)]
    Proof(#[from] ProofError),
}

/// A plaintext ballot in the ElectionGuard 1.4 JSON layout.
#[derive(Clone, Debug, Deserialize)]
pub struct PlaintextBallot {
    pub object_id: String,
    pub style_id: String,
    pub contests: Vec<PlaintextContest>,
}

#[derive(Clone, Debug, Deserialize)]
pub struct PlaintextContest {
    pub object_id: String,
    pub ballot_selections: Vec<PlaintextSelection>,
}

#[derive(Clone, Debug, Deserialize)]
pub struct PlaintextSelection {
    pub object_id: String,
    pub vote: i64,
    #[serde(default)]
    pub is_placeholder_selection: bool,
    #[serde(default)]
    pub write_in: Option<String>,
}

impl PlaintextBallot {
    pub fn from_json(text: &str) -> Result<Self, EncryptError> {
        serde_json::from_str(text).map_err(|e| EncryptError::Json(e.to_string()))
    }
}
