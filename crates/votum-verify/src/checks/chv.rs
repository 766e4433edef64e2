//! The CHVote record's checks (spec/92.10, V-CHV-02..11), one function per check and entry, on
//! decoded values: the walker (`crate::chv`) reads the record's framing, order and chain (V-CHV-01),
//! keeps each voter's entries together, and calls them in line.

use rand_core::{CryptoRng, RngCore};
use rayon::prelude::*;
use votum_chvote::messages::{
    check_ballot_proof, check_confirmation_proof, check_opened_points, check_revealed_response,
    query_product, shuffle_context, Ballot, PublicBoard, Response,
};
use votum_chvote::record as rec;
use votum_chvote::{tally, ChvoteError, Params};
use votum_elgamal::Ciphertext;
use votum_group::{ModElement, ModpGroup};
use votum_mixnet::decrypt::DecryptionShare;
use votum_shuffle::{Generators, Rows};

use crate::checks::Check;
use crate::report::{Ledger, Soundness};

/// V-CHV-02: the record's security level (spec/92.3), reported with no floor (level 1 is the proof
/// of concept's level for tests).
pub(crate) fn check_level(ledger: &mut Ledger, params: &Params) {
    ledger.soundness(
        Check::Chv02,
        "parameters",
        Soundness {
            what: format!(
                "the security level (CHVote level {}, τ)",
                params.level().number()
            ),
            bits: f64::from(params.tau()),
            floor: None,
        },
    );
}

/// V-CHV-02: the election the parameters' digests bind is the record's own (spec/92.3).
pub(crate) fn check_election_id(ledger: &mut Ledger, params_id: &str, record_id: &str) -> bool {
    if params_id != record_id {
        ledger.fail(
            Check::Chv02,
            "parameters",
            format!(
                "the parameters are election {params_id:?}'s, the record election {record_id:?}'s"
            ),
        );
        return false;
    }
    true
}

/// A voter's ballot as V-CHV-03 left it.
pub(crate) struct CheckedBallot {
    pub ballot: Ballot,
    /// Π a_u: the encryption's data, (b, a).
    pub a: ModElement,
    /// The ballot passed.
    pub ok: bool,
}

/// V-CHV-03, voter `voter`'s ballot: the voter's public credential, one query per selection, the
/// ballot proof. `None` when it cannot be decoded (a Fail: the voter's later entries are then
/// without a ballot).
pub(crate) fn check_ballot(
    ledger: &mut Ledger,
    board: &PublicBoard,
    voter: usize,
    name: &str,
    payload: &[u8],
) -> Option<CheckedBallot> {
    ledger.examined(Check::Chv03, 1);
    let ballot = match rec::decode_ballot(&board.params, payload) {
        Ok(b) => b,
        Err(err) => {
            ledger.fail(Check::Chv03, name, err.to_string());
            return None;
        }
    };
    let k: usize = board.set.k_of(voter).iter().sum();
    let a = query_product(board.params.eg(), &ballot.queries);
    let reason = if ballot.x_hat != board.x_hat[voter] {
        Some("not the voter's public voting credential".to_string())
    } else if ballot.queries.len() != k {
        Some(format!(
            "{} queries for {k} selections",
            ballot.queries.len()
        ))
    } else if !check_ballot_proof(board, &ballot, &a) {
        Some("the ballot proof does not verify".to_string())
    } else {
        None
    };
    let ok = reason.is_none();
    if let Some(reason) = reason {
        ledger.fail(Check::Chv03, name, reason);
    }
    Some(CheckedBallot { ballot, a, ok })
}

/// V-CHV-04, a voter's responses: one per authority. `None` (a Fail) otherwise.
pub(crate) fn check_responses(
    ledger: &mut Ledger,
    params: &Params,
    name: &str,
    payload: &[u8],
) -> Option<Vec<Response>> {
    match rec::decode_responses(params, payload) {
        Ok(r) if r.len() == params.authorities() => Some(r),
        Ok(_) => {
            ledger.fail(Check::Chv04, name, "one response per authority");
            None
        }
        Err(err) => {
            ledger.fail(Check::Chv04, name, err.to_string());
            None
        }
    }
}

/// V-CHV-05, voter `voter`'s confirmation: the voter's confirmation credential and its proof.
/// Returns whether it passed.
pub(crate) fn check_confirmation(
    ledger: &mut Ledger,
    board: &PublicBoard,
    voter: usize,
    name: &str,
    payload: &[u8],
) -> bool {
    let verdict = match rec::decode_confirmation(&board.params, payload) {
        Err(err) => Some(err.to_string()),
        Ok(g) if g.y_hat != board.y_hat[voter] => {
            Some("not the voter's confirmation credential".into())
        }
        Ok(g) if !check_confirmation_proof(board, &g) => {
            Some("the confirmation proof does not verify".into())
        }
        Ok(_) => None,
    };
    match verdict {
        Some(reason) => {
            ledger.fail(Check::Chv05, name, reason);
            false
        }
        None => true,
    }
}

/// V-CHV-04, voter `voter`'s finalizations: one per authority, each revealing the exponents that
/// give that authority's response to the voter's ballot, and its opened points. Each authority's
/// on its own thread: the openings are most of the check's work (n short powers per authority).
pub(crate) fn check_finalizations(
    ledger: &mut Ledger,
    board: &PublicBoard,
    (voter, ballot, responses): (usize, &Ballot, &[Response]),
    name: &str,
    payload: &[u8],
) {
    ledger.examined(Check::Chv04, 1);
    let parts = match rec::decode_finalizations(&board.params, payload) {
        Ok(parts) if parts.len() == board.params.authorities() => parts,
        Ok(_) => {
            ledger.fail(Check::Chv04, name, "one finalization per authority");
            return;
        }
        Err(err) => {
            ledger.fail(Check::Chv04, name, err.to_string());
            return;
        }
    };
    let verdicts: Vec<Option<String>> = responses
        .par_iter()
        .zip(&parts)
        .enumerate()
        .map(|(j, (r, part))| {
            if !check_revealed_response(board, voter, ballot, r, &part.r) {
                Some("the revealed exponents do not give the authority's response".to_string())
            } else {
                check_opened_points(board, voter, j, r, part)
            }
        })
        .collect();
    for (j, what) in verdicts.into_iter().enumerate() {
        if let Some(what) = what {
            ledger.fail(Check::Chv04, &format!("{name} authority-{j}"), what);
        }
    }
}

/// V-CHV-04: a voter's entries ended with a valid confirmation but no finalizations. A valid
/// confirmation obliges the authorities to finalize, and its ballot belongs in the mix input
/// (spec/92.8).
pub(crate) fn check_finalized(ledger: &mut Ledger, voter: usize) {
    ledger.fail(
        Check::Chv04,
        &format!("voter-{voter}"),
        "a valid confirmation without finalizations: its ballot belongs in the mix input",
    );
}

/// V-CHV-06: the input list is the finalized ballots' encryptions `confirmed`, in voter order, one
/// to a row. `None` when it cannot be read or is of another width (the walk stops).
pub(crate) fn check_input(
    ledger: &mut Ledger,
    params: &Params,
    payload: &[u8],
    confirmed: &[Ciphertext<ModpGroup>],
    rng: &mut (impl RngCore + CryptoRng),
) -> Option<Rows<ModpGroup>> {
    ledger.examined(Check::Chv06, 1);
    let input = match rec::decode_input(params, payload, rng) {
        Ok(l) if l.width() == 1 => l,
        Ok(_) => {
            ledger.fail(Check::Chv06, "input", "a list of width other than 1");
            return None;
        }
        Err(err) => {
            ledger.error(Check::Chv06, "input", err.to_string());
            return None;
        }
    };
    if input.ciphertexts() != confirmed {
        ledger.fail(
            Check::Chv06,
            "input",
            format!(
                "{} encryptions posted, {} confirmed ballots; the lists differ",
                input.len(),
                confirmed.len()
            ),
        );
    }
    Some(input)
}

/// V-CHV-07, authority `j`'s shuffle of `current`. Returns its output list, or `None` when the entry
/// cannot be read (an Error; the walk stops).
pub(crate) fn check_shuffle(
    ledger: &mut Ledger,
    board: &PublicBoard,
    (j, gens): (usize, &Generators<ModpGroup>),
    current: &Rows<ModpGroup>,
    name: &str,
    payload: &[u8],
    rng: &mut (impl RngCore + CryptoRng),
) -> Option<Rows<ModpGroup>> {
    ledger.examined(Check::Chv07, 1);
    let (out, proof) = match rec::decode_shuffle(&board.params, payload, current.len(), rng) {
        Ok(x) => x,
        Err(err) => {
            ledger.error(Check::Chv07, name, err.to_string());
            return None;
        }
    };
    if let Err(err) = tally::check_shuffle(
        board,
        j,
        gens,
        &shuffle_context(board, j),
        current,
        &out,
        &proof,
        rng,
    ) {
        ledger.fail(Check::Chv07, name, err.to_string());
    }
    Some(out)
}

/// V-CHV-08, one authority's decryption entry: it decodes. Its proof is checked with every share, by
/// [`check_decryption`].
pub(crate) fn check_share_entry(
    ledger: &mut Ledger,
    params: &Params,
    name: &str,
    payload: &[u8],
) -> Option<DecryptionShare<ModpGroup>> {
    ledger.examined(Check::Chv08, 1);
    match rec::decode_share(params, payload) {
        Ok(share) => Some(share),
        // the other shares and the result are still read; the votes cannot be decrypted
        Err(err) => {
            ledger.fail(Check::Chv08, name, err.to_string());
            None
        }
    }
}

/// V-CHV-08: every authority's share of the `last` list and its proof; returns the plaintexts when
/// all hold (`None` when a share is missing: found when it was read).
pub(crate) fn check_decryption(
    ledger: &mut Ledger,
    board: &PublicBoard,
    last: &Rows<ModpGroup>,
    shares: &[DecryptionShare<ModpGroup>],
) -> Option<Vec<ModElement>> {
    let s = board.params.authorities();
    if shares.len() < s {
        return None;
    }
    match tally::decrypt(board, last, shares) {
        Ok(p) => Some(p),
        Err(err) => {
            let object = match &err {
                ChvoteError::Decryption { authority, .. } => format!("authority-{authority}"),
                _ => "decryption".into(),
            };
            ledger.fail(Check::Chv08, &object, err.to_string());
            None
        }
    }
}

/// V-CHV-09: the posted result is the count of the decrypted votes `plaintexts` (when they could be
/// decrypted). Returns that count: per candidate, the invalid votes, and their rows, which V-CHV-10
/// traces.
pub(crate) fn check_result(
    ledger: &mut Ledger,
    board: &PublicBoard,
    plaintexts: Option<&[ModElement]>,
    payload: &[u8],
) -> Option<tally::Tally> {
    ledger.examined(Check::Chv09, 1);
    let (counts, invalid) = match rec::decode_result(payload) {
        Ok(x) => x,
        Err(err) => {
            ledger.error(Check::Chv09, "result", err.to_string());
            return None;
        }
    };
    let t = tally::tally(board, plaintexts?);
    if t.counts != counts || t.invalid != invalid {
        ledger.fail(
            Check::Chv09,
            "result",
            format!(
                "posted {counts:?} (invalid {invalid}), the decrypted votes count {:?} (invalid {})",
                t.counts, t.invalid
            ),
        );
    }
    Some(t)
}

/// V-CHV-10, after the last trace: each traced input row names a voter of the mix input (`mixed`),
/// each named in a warning (evidence of a cheating voting client).
pub(crate) fn check_traced(ledger: &mut Ledger, rows: &[usize], mixed: &[usize]) {
    for &row in rows {
        match mixed.get(row) {
            Some(v) => ledger.warn(
                Check::Chv10,
                &format!("voter-{v}"),
                "a confirmed ballot whose vote is invalid: its queries did not encode \
                 candidate primes although the voter's codes matched, evidence of a cheating \
                 voting client (spec/92.8)",
            ),
            None => ledger.fail(Check::Chv10, "trace", "a row beyond the mix input"),
        }
    }
}

/// V-CHV-11: `signature` is authority j's node key's (named in the parameters) over the election
/// digest, the kind, the name and the payload of its entry of `kind`.
pub(crate) fn check_signature(
    ledger: &mut Ledger,
    board: &PublicBoard,
    (j, kind, want): (usize, &str, &str),
    payload: &[u8],
    signature: &[u8],
) {
    ledger.examined(Check::Chv11, 1);
    if !rec::check_signature(&board.params, &board.digest, j, kind, payload, signature) {
        ledger.fail(
            Check::Chv11,
            want,
            format!(
                "not the signature of authority {j}'s node key (named in the parameters) on its {kind}"
            ),
        );
    }
}
