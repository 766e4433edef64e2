//! Every hash votum computes over protocol data lives here.
//!
//! * [`Transcript`]: votum's own Fiat–Shamir transcripts: SHA-256 over length-prefixed,
//!   labelled fields under a domain tag from [`tags`] (listed in spec/20-hashing.md).
//! * [`eg`]: ElectionGuard 1.0 `hash_elems` and its minimal uppercase hex codec, byte for byte
//!   as electionguard 1.4.0 computes them.
//! * [`eg2`]: ElectionGuard 2.x's H, HMAC-SHA-256 over fixed-width fields (spec/65.2).
//! * [`board`]: the bulletin board's hash chain.
//! * [`independent_generators`]: group elements nobody knows a discrete log of, from a public seed.

pub mod board;
pub mod board_file;
pub mod eg;
pub mod eg2;
mod mac;
mod transcript;

pub use mac::{hmac_sha256, hmac_sha256_verify};
pub use transcript::{expand, independent_generators, Transcript};

/// Domain tags. Each protocol message hashed by votum starts with exactly one of these.
pub mod tags {
    pub const SCHNORR: &str = "votum/v1/schnorr";
    pub const CHAUM_PEDERSEN: &str = "votum/v1/chaum-pedersen";
    pub const GENERATORS: &str = "votum/v1/generators";
    pub const EXPAND: &str = "votum/v1/expand";
    pub const HASHED_ELGAMAL: &str = "votum/v1/hashed-elgamal";
    pub const BOARD: &str = "votum/v1/board";
    pub const BOARD_GENESIS: &str = "votum/v1/board-genesis";
    pub const SHUFFLE: &str = "votum/v1/shuffle";
    pub const LIST: &str = "votum/v1/list";
    pub const MIX_DECRYPTION: &str = "votum/v1/mix-decryption";
    /// All tags, for the spec table and uniqueness tests.
    pub const ALL: &[&str] = &[
        SCHNORR,
        CHAUM_PEDERSEN,
        GENERATORS,
        EXPAND,
        HASHED_ELGAMAL,
        BOARD,
        BOARD_GENESIS,
        SHUFFLE,
        LIST,
        MIX_DECRYPTION,
    ];
}

/// Errors of hash-related decoding.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HashError {
    #[error("not a hexadecimal string")]
    NotHex,
    #[error("empty hexadecimal string")]
    EmptyHex,
    #[error(
        "not canonical: {0} (electionguard writes the minimal big-endian bytes, two digits each)"
    )]
    NonCanonicalHex(&'static str),
}
