//! Split-value elections (spec/97): the Rabin–Rivest mixnet with no public-key operation in the
//! mix or the proof.
//!
//! - [`field`]: arithmetic modulo a race's prime (below 2^126, small multipliers only);
//! - [`sharing`]: threshold shares checked and reconstructed with finite differences;
//! - [`commit`]: one-block SHA-256 commitments, output split values and list roots;
//! - [`challenge`]: the cut and the sides, from the board's head;
//! - [`stream`]: the deterministic streams permutations, obfuscations and challenges come from;
//! - [`params`]: grid, copies, races, values and moduli;
//! - [`wire`]: the canonical encoding of every board entry;
//! - [`record`]: the record file (the board, magic `VOTUMSVR`);
//! - [`cast`] (feature `prove`): voters' devices, ballots shared, split and committed;
//! - [`servers`] (feature `prove`): what each party computes and posts, row by row;
//! - [`election`] (feature `prove`): the grid's mix, and a whole election in one process.
//!
//! The verifier (`votum-verify`) uses everything here but `cast`, `servers` and `election`.

#[cfg(feature = "prove")]
pub mod cast;
pub mod challenge;
pub mod commit;
#[cfg(feature = "prove")]
pub mod election;
pub mod field;
pub mod params;
pub mod record;
#[cfg(feature = "prove")]
pub mod servers;
pub mod sharing;
pub mod stream;
pub mod wire;

/// Everything that can go wrong, typed by whose fault it is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SvError {
    /// Parameters that spec/97.1 does not allow.
    #[error("parameters: {0}")]
    Params(String),
    /// A vote that its race cannot hold (refused before anything is posted).
    #[error("vote: {0}")]
    Vote(String),
    /// Bytes that are not the encoding of 97.8.
    #[error("decode: {0}")]
    Decode(String),
    /// A record file that cannot be read or written.
    #[error("{0}")]
    Record(String),
    /// A step the election's state does not allow (a rerun after the sides were drawn).
    #[error("{0}")]
    Phase(String),
}

impl From<votum_hash::board_file::BoardFileError> for SvError {
    fn from(e: votum_hash::board_file::BoardFileError) -> Self {
        SvError::Record(e.to_string())
    }
}
