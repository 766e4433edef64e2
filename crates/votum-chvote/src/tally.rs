//! Mixing checks, decryption and tallying (spec/92.8): the public side.

use rand_core::{CryptoRng, RngCore};
use rayon::prelude::*;
use votum_arith::Integer;
use votum_group::{Group, ModElement, ModpGroup};
use votum_mixnet::decrypt::{verify_share, DecryptionShare};
use votum_shuffle::{Generators, Rows, ShuffleProof};

use votum_elgamal::Ciphertext;

use crate::messages::PublicBoard;
use crate::record::TraceStep;
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
    /// The rows of the last list that are no valid vote, ascending (traced back, spec/92.8).
    pub invalid_rows: Vec<usize>,
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
    let mut invalid_rows = Vec::new();
    for (row, d) in decoded.into_iter().enumerate() {
        match d {
            Some(chosen) => chosen.into_iter().for_each(|v| counts[v] += 1),
            None => invalid_rows.push(row),
        }
    }
    Tally {
        counts,
        invalid: invalid_rows.len() as u64,
        invalid_rows,
    }
}

/// Checks one step of a trace (spec/92.8): `to`, the authority's output row `step.output`, is
/// `step.from` re-encrypted with the nonce: (from.pad·g^ρ, from.data·pk^ρ), ρ < q.
pub fn check_trace_step(board: &PublicBoard, to: &Ciphertext<ModpGroup>, step: &TraceStep) -> bool {
    let eg = board.params.eg();
    if &step.nonce >= eg.order() {
        return false;
    }
    let rho = eg.scalar_from_integer(&step.nonce);
    eg.op(&step.from.pad, &eg.pow(eg.generator(), &rho)) == to.pad
        && eg.op(&step.from.data, &eg.pow(board.pk.element(), &rho)) == to.data
}

/// Checks one authority's trace (spec/92.8): its steps open exactly `rows` of its output, in that
/// order (`to[k]` is the output element at `rows[k]`), each to a distinct row of its input, each
/// output a re-encryption of the step's input element; `input_is(i, element)` says whether `element`
/// is input row i (`None`: no such row). The parties hold the lists, the verifier their rows' hashes.
/// Returns the input rows the steps lead to, or why the trace fails.
pub fn check_trace(
    board: &PublicBoard,
    to: &[Ciphertext<ModpGroup>],
    rows: &[usize],
    steps: &[TraceStep],
    input_is: impl Fn(usize, &Ciphertext<ModpGroup>) -> Option<bool>,
) -> Result<Vec<usize>, String> {
    if steps.len() != rows.len() || to.len() != rows.len() {
        return Err(format!(
            "{} rows traced where invalid votes lead to {}",
            steps.len(),
            rows.len()
        ));
    }
    let mut seen = std::collections::HashSet::new();
    let mut inputs = Vec::with_capacity(rows.len());
    for ((step, &row), to) in steps.iter().zip(rows).zip(to) {
        if step.output != row as u64 {
            return Err(format!(
                "opens output row {} where row {row} is due",
                step.output
            ));
        }
        let input = usize::try_from(step.input).unwrap_or(usize::MAX);
        let Some(is_input) = input_is(input, &step.from) else {
            return Err(format!("input row {input} is beyond the list"));
        };
        if !is_input || !seen.insert(input) || !check_trace_step(board, to, step) {
            return Err(format!(
                "output row {row} is not input row {input} re-encrypted with the nonce given"
            ));
        }
        inputs.push(input);
    }
    Ok(inputs)
}

/// Checks the traces of every authority, last first, from the invalid rows of the last list
/// ([`check_trace`] for each, on the lists themselves: `lists[j]` is authority j's input,
/// `lists[j + 1]` its output). Returns the rows of the mix input the invalid votes came from, or
/// the authority whose trace fails and why.
pub fn check_traces(
    board: &PublicBoard,
    lists: &[&Rows<ModpGroup>],
    invalid_rows: &[usize],
    traces: &[(usize, Vec<TraceStep>)],
) -> Result<Vec<usize>, (usize, String)> {
    let mut rows: Vec<usize> = invalid_rows.to_vec();
    for (j, steps) in traces {
        let (Some(inputs), Some(outputs)) = (lists.get(*j), lists.get(j + 1)) else {
            return Err((*j, "no such authority".into()));
        };
        let Some(to) = rows
            .iter()
            .map(|&r| outputs.ciphertexts().get(r).cloned())
            .collect::<Option<Vec<_>>>()
        else {
            return Err((*j, "an output row beyond the list".into()));
        };
        let input_is =
            |i: usize, c: &Ciphertext<ModpGroup>| inputs.ciphertexts().get(i).map(|x| x == c);
        rows = check_trace(board, &to, &rows, steps, input_is).map_err(|why| (*j, why))?;
    }
    Ok(rows)
}
