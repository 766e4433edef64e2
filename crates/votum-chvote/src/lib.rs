//! CHVote elections (spec/92): public parameters, election sets, electoral data and voting cards,
//! cast-as-intended voting by oblivious transfer, confirmation and finalization, then mixing,
//! decryption and tallying through votum-shuffle and votum-mixnet's batched decryption proofs.
//!
//! Algorithm numbers (7.x) are those of ePrint 2017/325 as implemented by the Geneva proof of
//! concept. The public side (parameters, messages, their checks, tallying) is always built; the
//! parties that hold secrets (authorities, the printing authority, the voting client, the
//! simulation) are behind the `prove` feature.

pub mod codes;
pub mod election;
pub mod hash;
pub mod messages;
pub mod params;
pub mod poly;
pub mod record;
pub mod tally;

#[cfg(feature = "prove")]
pub mod authority;
#[cfg(feature = "prove")]
pub mod client;
#[cfg(feature = "prove")]
pub mod parties;
#[cfg(feature = "prove")]
pub mod printing;
#[cfg(feature = "prove")]
pub mod sim;

pub use election::{ElectionSet, Shape};
pub use params::{Level, Params};

/// Every refusal of the protocol (spec/92.9). A refusal changes nothing held by the party refusing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChvoteError {
    #[error("voter {0} is not in the electorate")]
    UnknownVoter(usize),
    #[error("voter {0} has already cast a ballot")]
    AlreadyVoted(usize),
    #[error("the ballot's voting credential is not voter {0}'s")]
    CredentialMismatch(usize),
    #[error("ballot shape: {0}")]
    BallotShape(String),
    #[error("the ballot proof of voter {0} does not verify")]
    BallotProof(usize),
    #[error("voter {0} has no ballot to confirm")]
    NoBallot(usize),
    #[error("voter {0} has already confirmed")]
    AlreadyConfirmed(usize),
    #[error("the confirmation of voter {0} does not verify")]
    ConfirmationProof(usize),
    #[error("authority {authority} sent a bad response: {reason}")]
    BadResponse { authority: usize, reason: String },
    #[error("the shuffle of authority {authority} does not verify: {reason}")]
    Shuffle { authority: usize, reason: String },
    #[error("the decryption of authority {authority} does not verify: {reason}")]
    Decryption { authority: usize, reason: String },
    #[error("selections: {0}")]
    Selections(String),
    #[error("parameters: {0}")]
    Parameters(String),
}
