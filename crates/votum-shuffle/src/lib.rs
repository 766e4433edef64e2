//! Verifiable re-encryption shuffles (spec/90).
//!
//! A mixer takes N rows of w ElGamal ciphertexts, re-encrypts every ciphertext, permutes the rows,
//! and proves with the Terelius–Wikström argument that the output is a re-encrypted permutation
//! of the input, revealing nothing about the permutation.
//!
//! * [`Rows`]: a list of ciphertext rows with its canonical encoding and digest (90.6, 90.3).
//! * [`Generators`]: the independent generators h, h_1 … h_N of a public seed (90.1).
//! * [`ShuffleProof`]: the proof, its encoding and [`ShuffleProof::verify`] (90.5, batched).
//! * `PreparedShuffle` (feature `prove`, the crate's one gated module): the mixer's side, split into an offline part that
//!   needs no ciphertexts (permutation commitment, re-encryption factors) and an online part (90.4).

mod digest;
mod proof;
#[cfg(feature = "prove")]
mod prove;
#[cfg(feature = "prove")]
pub mod remote;
mod rows;
mod transcript;
mod verify;

pub use digest::{elements_digest, list_digest, list_digest_of_bytes, CHUNK_ITEMS};
pub use proof::ShuffleProof;
#[cfg(feature = "prove")]
pub use prove::{
    shuffle_and_prove, shuffle_and_prove_on, OpenedShuffle, PreparedShuffle, ShuffleOpening,
};
pub use rows::Rows;
pub use transcript::short_scalars;

use std::sync::{Arc, OnceLock};

use votum_group::{Group, GroupError};

/// Why a shuffle, its proof or its encoding was refused (spec/90.8).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShuffleError {
    #[error("{what}: expected {expected}, got {got}")]
    Length {
        what: &'static str,
        expected: usize,
        got: usize,
    },
    #[error("malformed {0}")]
    Encoding(&'static str),
    #[error("{what} #{index}: {source}")]
    Element {
        what: &'static str,
        index: usize,
        source: GroupError,
    },
    #[error("shuffle proof: equation {name} fails (index {index})")]
    Equation { name: &'static str, index: usize },
    /// The workers a prover handed its powers to did not answer as asked (spec/98.7).
    #[error("the prover's workers: {0}")]
    Workers(String),
}

/// The generators h (the chain's start) and h_1 … h_N (the permutation commitment's bases),
/// derived from a public seed with [`votum_hash::independent_generators`] (spec/20.4, 90.1).
pub struct Generators<G: Group> {
    seed: Vec<u8>,
    h: G::Element,
    hs: Vec<G::Element>,
    h_table: Arc<OnceLock<G::Table>>,
}

impl<G: Group> Clone for Generators<G> {
    fn clone(&self) -> Self {
        Self {
            seed: self.seed.clone(),
            h: self.h.clone(),
            hs: self.hs.clone(),
            h_table: self.h_table.clone(),
        }
    }
}

impl<G: Group> std::fmt::Debug for Generators<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Generators")
            .field("seed", &self.seed)
            .field("count", &self.hs.len())
            .finish_non_exhaustive()
    }
}

impl<G: Group> Generators<G> {
    /// The generators for lists of up to `n` rows (h and h_1 … h_n), in parallel.
    pub fn derive(group: &G, seed: &[u8], n: usize) -> Self {
        // independent_generators returns exactly n + 1 elements
        let mut hs = votum_hash::independent_generators(group, seed, n + 1);
        let h = hs.remove(0);
        Self {
            seed: seed.to_vec(),
            h,
            hs,
            h_table: Arc::new(OnceLock::new()),
        }
    }

    /// Gives the prover a fixed-base table of [`Generators::h`] the caller built (one with a
    /// window for the number of rows it will shuffle), instead of the group's default table.
    /// It must be a table of h: a table of anything else makes the prover's proofs fail.
    pub fn with_h_table(self, table: G::Table) -> Self {
        let cell = OnceLock::new();
        let _ = cell.set(table);
        Self {
            h_table: Arc::new(cell),
            ..self
        }
    }

    pub fn seed(&self) -> &[u8] {
        &self.seed
    }

    /// How many rows a shuffle with these generators may have.
    pub fn capacity(&self) -> usize {
        self.hs.len()
    }

    pub fn h(&self) -> &G::Element {
        &self.h
    }

    /// h_1 … h_n (index 0 is h_1).
    pub fn hs(&self) -> &[G::Element] {
        &self.hs
    }

    pub(crate) fn check_capacity(&self, n: usize) -> Result<(), ShuffleError> {
        if n > self.hs.len() {
            return Err(ShuffleError::Length {
                what: "rows (more than the generators cover)",
                expected: self.hs.len(),
                got: n,
            });
        }
        Ok(())
    }
}

/// A big-endian integer below 2^128 as a scalar (every group order exceeds 2^128).
pub(crate) fn short_scalar<G: Group>(group: &G, bytes: &[u8]) -> G::Scalar {
    group.scalar_from_integer(&votum_group::Integer::from_digits(
        bytes,
        votum_group::Order::Msf,
    ))
}
