//! Mixing checks, decryption and tallying (spec/92.8): the public side.

use rand_core::{CryptoRng, RngCore};
use rayon::prelude::*;
use votum_arith::Integer;
use votum_group::{Group, ModElement, ModpGroup};
use votum_mixnet::decrypt::{verify_share, DecryptionShare};
use votum_shuffle::{Generators, Rows, ShuffleProof};

use crate::messages::PublicBoard;
use crate::ChvoteError;

/// Checks authority j's shuffle of `inputs` into `outputs`.
#[allow(clippy::too_many_arguments)]
pub fn check_shuffle<R: RngCore + CryptoRng>(
    board: &PublicBoard,
    authority: usize,
    generators: &Generators<ModpGroup>,
    context: &[u8],
    inputs: &Rows<ModpGroup>,
    outputs: &Rows<ModpGroup>,
    proof: &ShuffleProof<ModpGroup>,
    rng: &mut R,
) -> Result<(), ChvoteError> {
    proof
        .verify(
            board.params.eg(),
            board.pk.element(),
            generators,
            context,
            inputs,
            outputs,
            rng,
        )
        .map_err(|e| ChvoteError::Shuffle {
            authority,
            reason: e.to_string(),
        })
}

/// Checks every authority's decryption share against its key share and returns the plaintexts
/// m = a′·Π_j (b′^sk_j)^−1.
pub fn decrypt(
    board: &PublicBoard,
    last: &Rows<ModpGroup>,
    shares: &[DecryptionShare<ModpGroup>],
) -> Result<Vec<ModElement>, ChvoteError> {
    let eg = board.params.eg();
    let s = board.params.authorities();
    if shares.len() != s {
        return Err(ChvoteError::Parameters(format!(
            "{s} decryption shares expected"
        )));
    }
    let pads: Vec<ModElement> = last.ciphertexts().iter().map(|c| c.pad.clone()).collect();
    for (j, share) in shares.iter().enumerate() {
        if share.trustee != j as u64 + 1 {
            return Err(ChvoteError::Decryption {
                authority: j,
                reason: "a share posted under another authority".into(),
            });
        }
        verify_share(eg, &board.key_shares[j], &board.digest, &pads, share).map_err(|e| {
            ChvoteError::Decryption {
                authority: j,
                reason: e.to_string(),
            }
        })?;
    }
    Ok(last
        .ciphertexts()
        .par_iter()
        .enumerate()
        .map(|(i, c)| {
            let mut d = eg.identity();
            for share in shares {
                d = eg.op(&d, &share.partials[i]);
            }
            eg.div(&c.data, &d)
        })
        .collect())
}

/// The result: votes per candidate, and the number of plaintexts that are no valid vote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tally {
    pub counts: Vec<u64>,
    pub invalid: u64,
}

/// Factors each plaintext by the candidates' primes (spec/92.8).
pub fn tally(board: &PublicBoard, plaintexts: &[ModElement]) -> Tally {
    let set = &board.set;
    let n = set.total_candidates();
    let primes: Vec<Integer> = board.primes.iter().map(|p| p.value().clone()).collect();
    let decoded: Vec<Option<Vec<usize>>> = plaintexts
        .par_iter()
        .map(|m| {
            let mut rest = m.value().clone();
            let mut chosen = Vec::new();
            for (v, p) in primes.iter().enumerate() {
                if rest.is_divisible(p) {
                    rest /= p;
                    if rest.is_divisible(p) {
                        return None;
                    }
                    chosen.push(v);
                }
            }
            if rest != 1 {
                return None;
            }
            let mut per = vec![0usize; set.elections()];
            for &v in &chosen {
                per[set.election_of(v)] += 1;
            }
            let ok = per
                .iter()
                .zip(&set.selections)
                .all(|(&got, &k)| got == 0 || got == k)
                && !chosen.is_empty();
            ok.then_some(chosen)
        })
        .collect();
    let mut counts = vec![0u64; n];
    let mut invalid = 0;
    for d in decoded {
        match d {
            Some(chosen) => chosen.into_iter().for_each(|v| counts[v] += 1),
            None => invalid += 1,
        }
    }
    Tally { counts, invalid }
}
