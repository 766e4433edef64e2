//! Mixnet elections (spec/91): ballots encrypted row by row with proofs of knowledge, a cascade
//! of mix servers each proving its shuffle ([`votum_shuffle`]), threshold decryption by the
//! trustees with one batched proof each, decoding, and counting by any rule.
//!
//! * [`codec`]: small values as group elements.
//! * [`ballot`]: voters' encrypted rows and their verification.
//! * [`decrypt`]: partial decryptions, their batched proofs, combination.
//! * [`count`]: plurality, k-of-n, approval, instant-runoff, STV.
//! * [`board`]: the bulletin board every posting goes through, with its checks.
//! * [`record`]: the mix record file the board writes (spec/91.7).
//! * [`wire`]: the entries' payloads and their decoders.
//! * [`params`]: an election's parameters, its random weights, random rows for tests.
//! * [`remote`]: the hook through which shuffle proofs are checked on other machines.
//! * [`signing`]: the authorities' signatures on their entries (spec/91.9).
//! * [`party`] (feature `prove`): one authority or the voters' client in a process of its own,
//!   acting only on its own copy of the board (spec/91.9).
//! * [`election`] (feature `prove`, on by default): the parties that hold secrets (trustees,
//!   voters) and a whole election in one process, step by step; the verifier builds without it.

pub mod ballot;
pub mod board;
pub mod codec;
pub mod count;
pub mod decrypt;
#[cfg(feature = "prove")]
pub mod election;
pub mod params;
#[cfg(feature = "prove")]
pub mod party;
pub mod record;
pub mod remote;
pub mod signing;
pub mod wire;

/// Why a mixnet step or check failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MixError {
    #[error("invalid input: {0}")]
    Input(String),
    #[error("ballot #{index}: {reason}")]
    Ballot { index: usize, reason: String },
    #[error("mixer {mixer}: {source}")]
    Shuffle {
        mixer: usize,
        source: votum_shuffle::ShuffleError,
    },
    #[error("decryption share of trustee {trustee}: {reason}")]
    Decryption { trustee: u64, reason: String },
    #[error("trustee {trustee}'s key: {reason}")]
    Key { trustee: u64, reason: String },
    #[error("decoding: row {row} holds no value up to {max}")]
    Decoding { row: usize, max: u64 },
    #[error("count: {0}")]
    Count(String),
    #[error("out of turn: {0}")]
    OutOfTurn(String),
    /// An authority's entry without its valid signature (spec/91.9).
    #[error("signature: {0}")]
    Signature(String),
    /// A party refuses a request: out of its phase, repeated, or not its role (spec/91.9).
    #[error("refused: {0}")]
    Refused(String),
    #[error("mix record, byte {offset}: {reason}")]
    Record { offset: u64, reason: String },
    #[error("i/o: {0}")]
    Io(String),
    /// The progress hook asked to stop (a Python caller's Ctrl-C).
    #[error("stopped before the election finished")]
    Stopped,
}
