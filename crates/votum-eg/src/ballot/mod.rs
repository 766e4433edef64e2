//! The ballot box (spec/62-eg-ballot-box.md): submitted ballots (ElectionGuard 1.4 JSON) are
//! parsed strictly ([`parse`]), verified on the way in ([`verify`], batched by [`crate::batch`]),
//! refused on duplicate ids, and cast ballots are added to a streaming encrypted tally
//! ([`tally`]) by the box ([`ballot_box`]).

use crate::json::FieldError;
use votum_proofs::ProofError;

pub mod ballot_box;
pub mod parse;
pub mod tally;
pub mod verify;

pub use ballot_box::{BallotBox, BallotState, Receipt};
pub use parse::{parse_ballot, UncheckedBallot};
pub use tally::{
    accumulate, add_ballot, complete_tally, tally_from_bytes, tally_to_bytes, TallyMap,
};
pub use verify::{check_params, BallotVerifier, CheckParams};

/// Why a submitted ballot was refused. Nothing is recorded for a refused ballot.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BallotError {
    #[error("ballot JSON is malformed: {0}")]
    Format(String),
    #[error("{object}: {what} is not a valid group element ({reason})")]
    BadElement {
        object: String,
        what: &'static str,
        reason: votum_group::GroupError,
    },
    #[error("ballot {0:?} was already submitted")]
    Duplicate(String),
    /// A selection ciphertext of this ballot is one of an earlier ballot's (or repeats within
    /// it): a replayed encryption (spec/62.5).
    #[error("ballot {ballot:?} repeats a selection ciphertext of ballot {original:?} (a replayed encryption)")]
    Replayed { ballot: String, original: String },
    #[error("ballot is for another manifest")]
    WrongManifest,
    #[error("unknown ballot style {0:?}")]
    UnknownStyle(String),
    #[error("the ballot's contests do not match its style: {0}")]
    ContestMismatch(String),
    #[error("contest {contest:?}: selections do not match the manifest and placeholders")]
    SelectionMismatch { contest: String },
    #[error("{object}: {which} does not match")]
    HashMismatch { object: String, which: BallotHash },
    #[error("{object}: {error}")]
    Proof { object: String, error: ProofError },
    #[error("ballot state must be 1 (cast) or 2 (spoiled), got {0}")]
    BadState(i64),
}

/// Which of a ballot's hashes or derived values did not match what the ballot states. A verifier
/// files each under its own check by matching these, never by the message text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BallotHash {
    ContestDescription,
    SelectionCrypto,
    CiphertextAccumulation,
    ContestCrypto,
    BallotCrypto,
    BallotCode,
}

impl std::fmt::Display for BallotHash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::ContestDescription => "contest description hash",
            Self::SelectionCrypto => "selection crypto hash",
            Self::CiphertextAccumulation => "ciphertext accumulation",
            Self::ContestCrypto => "contest crypto hash",
            Self::BallotCrypto => "ballot crypto hash",
            Self::BallotCode => "ballot code",
        })
    }
}

impl From<FieldError> for BallotError {
    fn from(e: FieldError) -> Self {
        match e {
            FieldError::Format { object, message } => Self::Format(format!("{object}: {message}")),
            FieldError::BadElement {
                object,
                what,
                reason,
            } => Self::BadElement {
                object,
                what,
                reason,
            },
        }
    }
}
