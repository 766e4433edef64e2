//! Voters' ballots: a row of w encrypted values, each with a proof of knowledge of its nonce
//! (spec/91.2), so nobody can post a re-encryption of someone else's ballot.

use rayon::prelude::*;
use votum_elgamal::Ciphertext;
use votum_group::Group;
use votum_proofs::{NativeOracle, SchnorrProof};

use crate::MixError;

/// One voter's encrypted row with its proofs.
pub struct EncryptedBallot<G: Group> {
    pub voter: u64,
    pub cts: Vec<Ciphertext<G>>,
    pub proofs: Vec<SchnorrProof<G>>,
}

impl<G: Group> Clone for EncryptedBallot<G> {
    fn clone(&self) -> Self {
        Self {
            voter: self.voter,
            cts: self.cts.clone(),
            proofs: self.proofs.clone(),
        }
    }
}

/// The oracle of position `k` of `voter`'s ballot: binds the election, the voter, the position
/// and the ciphertext's data (the pad is the proof's public value).
pub(crate) fn oracle<G: Group>(
    group: &G,
    context: &[u8],
    voter: u64,
    k: usize,
    data: &G::Element,
) -> NativeOracle {
    let mut c = Vec::with_capacity(context.len() + 64);
    c.extend_from_slice(b"mix-ballot");
    c.extend_from_slice(&(context.len() as u64).to_be_bytes());
    c.extend_from_slice(context);
    c.extend_from_slice(&voter.to_be_bytes());
    c.extend_from_slice(&(k as u64).to_be_bytes());
    c.extend_from_slice(&group.encode_element(data));
    NativeOracle::new(&c)
}

/// Checks every ballot's width, proofs and that no voter posts twice (in parallel); the error
/// names the first bad ballot by its position in `ballots`.
pub fn verify_ballots<G: Group>(
    group: &G,
    context: &[u8],
    width: usize,
    ballots: &[EncryptedBallot<G>],
) -> Result<(), MixError> {
    let mut voters: Vec<u64> = ballots.iter().map(|b| b.voter).collect();
    voters.sort_unstable();
    if let Some(w) = voters.windows(2).find(|w| w[0] == w[1]) {
        return Err(MixError::Ballot {
            index: ballots.iter().position(|b| b.voter == w[0]).unwrap_or(0),
            reason: format!("voter {} posted twice", w[0]),
        });
    }
    let bad = ballots.par_iter().enumerate().find_first(|(_, b)| {
        b.cts.len() != width
            || b.proofs.len() != width
            || b.cts.iter().zip(&b.proofs).enumerate().any(|(k, (ct, p))| {
                p.verify(
                    group,
                    &oracle(group, context, b.voter, k, &ct.data),
                    &ct.pad,
                )
                .is_err()
            })
    });
    match bad {
        Some((index, b)) => Err(MixError::Ballot {
            index,
            reason: if b.cts.len() != width || b.proofs.len() != width {
                format!("width {} (expected {width})", b.cts.len())
            } else {
                "a proof of knowledge does not verify".into()
            },
        }),
        None => Ok(()),
    }
}
