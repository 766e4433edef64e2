//! The voting client (spec/92.6, 92.7): ballot and query, points and return codes from the
//! authorities' responses, confirmation, finalization code. The voter's own checks (7.29, 7.39)
//! are the last two functions.

use rand_core::{CryptoRng, RngCore};
use votum_arith::{wipe_integer, Integer, SecretBaseTable};
use votum_group::{Group, ModElement, ModScalar, Secret};
use zeroize::Zeroize;

use crate::codes;
use crate::hash;
use crate::messages::{
    ballot_challenge, confirmation_challenge, query_product, Ballot, BallotProof, Confirmation,
    Finalization, PublicBoard, Response,
};
use crate::poly::{value_at_zero, Point};
use crate::ChvoteError;

/// The client's precomputation for one election: constant-time combs of pk, for the query's
/// ephemeral exponents, and of pk and g for the proof's ω_3.
pub struct ClientTables {
    pk_ephemeral: SecretBaseTable,
    pk: SecretBaseTable,
    g: SecretBaseTable,
}

/// Rows of the client's combs for ω_3 (256 entries, 64 KiB at 2048 bits).
const NONCE_ROWS: u32 = 8;

impl ClientTables {
    pub fn new(board: &PublicBoard) -> Self {
        let params = &board.params;
        let eg = params.eg();
        let bits = params.ballot_nonce_bits();
        Self {
            pk_ephemeral: params.ephemeral_comb(board.pk.element()),
            pk: params.comb(board.pk.element(), bits, NONCE_ROWS),
            g: params.comb(eg.generator(), bits, NONCE_ROWS),
        }
    }
}

/// What the client keeps between casting and confirming: the selections and the query's r_u.
pub struct CastSecrets {
    pub voter: usize,
    pub selections: Vec<usize>,
    r: Vec<ModScalar>,
    /// A cheating client's squared query (attack tests only; `None` for every honest ballot).
    squared: Option<usize>,
}

impl Drop for CastSecrets {
    fn drop(&mut self) {
        self.r.iter_mut().for_each(|r| r.zeroize());
    }
}

impl std::fmt::Debug for CastSecrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CastSecrets(voter {}, <redacted>)", self.voter)
    }
}

/// 7.18 GenBallot (with 7.19, 7.20, 7.21) for `selections` (1-based, increasing).
pub fn gen_ballot<R: RngCore + CryptoRng>(
    board: &PublicBoard,
    tables: &ClientTables,
    voter: usize,
    voting_code: &str,
    selections: &[usize],
    rng: &mut R,
) -> Result<(Ballot, CastSecrets), ChvoteError> {
    gen_ballot_encoding(board, tables, voter, voting_code, selections, None, rng)
}

/// What a cheating voting client does (issue 45, finding 7; for attack tests only): a ballot
/// whose query for selection `squared` (an index into `selections`) encodes Γ(c)² instead of
/// Γ(c). The OT still answers with candidate c's point, so the return codes and the finalization
/// code match the card, and the vote is counted invalid; spec/92.8 traces it back to the voter.
#[doc(hidden)]
pub fn gen_cheating_ballot<R: RngCore + CryptoRng>(
    board: &PublicBoard,
    tables: &ClientTables,
    voter: usize,
    voting_code: &str,
    selections: &[usize],
    squared: usize,
    rng: &mut R,
) -> Result<(Ballot, CastSecrets), ChvoteError> {
    let eg = board.params.eg();
    let encoded: Vec<ModElement> = selections
        .iter()
        .enumerate()
        .map(|(u, &s)| {
            let q = &board.primes[s - 1];
            if u == squared {
                eg.op(q, q)
            } else {
                q.clone()
            }
        })
        .collect();
    let (ballot, mut secrets) = gen_ballot_encoding(
        board,
        tables,
        voter,
        voting_code,
        selections,
        Some(&encoded),
        rng,
    )?;
    secrets.squared = Some(squared);
    Ok((ballot, secrets))
}

fn gen_ballot_encoding<R: RngCore + CryptoRng>(
    board: &PublicBoard,
    tables: &ClientTables,
    voter: usize,
    voting_code: &str,
    selections: &[usize],
    encoded: Option<&[ModElement]>,
    rng: &mut R,
) -> Result<(Ballot, CastSecrets), ChvoteError> {
    board.set.check_selections(voter, selections)?;
    let (eg, ig) = (board.params.eg(), board.params.ig());
    let mut x = codes::code_to_integer(voting_code)?;
    if &x >= ig.order() {
        wipe_integer(&mut x);
        return Err(ChvoteError::Parameters(
            "the voting code is out of range".into(),
        ));
    }
    let xs = Secret::new(ig.scalar_from_integer(&x));
    wipe_integer(&mut x);
    let x_hat = ig.pow_secret(ig.generator(), &xs);
    let primes: Vec<ModElement> = match encoded {
        Some(e) => e.to_vec(),
        None => selections
            .iter()
            .map(|&s| board.primes[s - 1].clone())
            .collect(),
    };
    let m = query_product(eg, &primes);
    // 7.20 GenQuery
    let mut r = Vec::with_capacity(primes.len());
    let mut queries = Vec::with_capacity(primes.len());
    let mut r_sum = Secret::new(eg.scalar_from_u64(0));
    for q in &primes {
        let ru = Secret::new(board.params.ephemeral(rng));
        queries.push(eg.op(q, &board.params.comb_pow(&tables.pk_ephemeral, &ru)));
        r_sum = Secret::new(eg.scalar_add(r_sum.expose(), ru.expose()));
        r.push(ru.expose().clone());
    }
    let a = query_product(eg, &queries);
    // r = Σ r_u is below k·2^(2τ): within g's comb of 2τ + 16 bits for k < 2^16
    let b = board.params.comb_pow(board.params.g_ephemeral(), &r_sum);
    // 7.21 GenBallotProof
    let w1 = ig.random_secret(rng);
    let w2 = board.params.random_element(rng);
    let w3 = Secret::new(board.params.ballot_nonce(rng));
    let t1 = ig.pow_secret(ig.generator(), &w1);
    let t2 = eg.op(&w2, &board.params.comb_pow(&tables.pk, &w3));
    let t3 = board.params.comb_pow(&tables.g, &w3);
    let mut ballot = Ballot {
        x_hat,
        queries,
        b,
        proof: BallotProof {
            t1,
            t2,
            t3,
            s1: Integer::new(),
            s2: eg.identity(),
            s3: Integer::new(),
        },
    };
    let c = ballot_challenge(board, &ballot, &a);
    let (ci, ce) = (ig.scalar_from_integer(&c), eg.scalar_from_integer(&c));
    let s1 = ig.scalar_add(w1.expose(), &ig.scalar_mul(&ci, xs.expose()));
    let s2 = eg.op(&w2, &eg.pow(&m, &ce));
    let s3 = eg.scalar_add(w3.expose(), &eg.scalar_mul(&ce, r_sum.expose()));
    ballot.proof.s1 = ig.scalar_to_integer(&s1);
    ballot.proof.s2 = s2;
    ballot.proof.s3 = eg.scalar_to_integer(&s3);
    drop(w1);
    drop(w3);
    drop(xs);
    drop(r_sum);
    Ok((
        ballot,
        CastSecrets {
            voter,
            selections: selections.to_vec(),
            r,
            squared: None,
        },
    ))
}

/// 7.26/7.27 GetPointMatrix, GetPoints: authority j's points for the selections, each checked
/// against the authority's public commitment (votum, spec/92.9) so that a bad response names
/// its authority.
pub fn get_points(
    board: &PublicBoard,
    secrets: &CastSecrets,
    responses: &[Response],
) -> Result<Vec<Vec<Point>>, ChvoteError> {
    let eg = board.params.eg();
    let p_prime = board.params.p_prime();
    let l_m = board.params.l_m();
    let voter = secrets.voter;
    let k = board.set.k_of(voter);
    if responses.len() != board.params.authorities() {
        return Err(ChvoteError::Parameters("one response per authority".into()));
    }
    let mut all = Vec::with_capacity(responses.len());
    for (j, beta) in responses.iter().enumerate() {
        let bad = |reason: &str| ChvoteError::BadResponse {
            authority: j,
            reason: reason.into(),
        };
        if beta.b.len() != secrets.selections.len()
            || beta.d.len() != k.len()
            || beta.c.len() != board.set.total_candidates()
            || beta.c.iter().any(|c| c.len() != l_m)
        {
            return Err(bad("lengths"));
        }
        let mut points = Vec::with_capacity(secrets.selections.len());
        for (u, &s) in secrets.selections.iter().enumerate() {
            let l = board.set.election_of(s - 1);
            // k = b_u·d_l^(−r_u), with r_u short: the inverse of d_l^(r_u)
            let r_u = Secret::new(secrets.r[u].clone());
            let mut key = eg.div(&beta.b[u], &eg.pow_secret(&beta.d[l], &r_u));
            if secrets.squared == Some(u) {
                // the cheating client's query was Γ(c)²: k = Γ(c)^(2 r_l), whose square root
                // k^((q+1)/2) is candidate c's key (finding 7; attack tests only)
                let half = eg.scalar_from_integer(&((eg.order().clone() + 1u32) / 2u32));
                key = eg.pow(&key, &half);
            }
            let point = hash::open_point(&beta.c[s - 1], key.value());
            if &point.x >= p_prime || &point.y >= p_prime {
                return Err(bad("a point outside Z_p′"));
            }
            if hash::commitment(&point) != board.commitments[j][voter][s - 1] {
                return Err(bad("a point that is not the one it committed to"));
            }
            points.push(point);
        }
        all.push(points);
    }
    Ok(all)
}

/// 7.28 GetReturnCodes.
pub fn return_codes(
    board: &PublicBoard,
    selections: &[usize],
    points: &[Vec<Point>],
) -> Vec<String> {
    let l_r = board.params.l_r();
    (0..selections.len())
        .map(|u| {
            let mut rc = vec![0u8; l_r];
            for pj in points {
                hash::xor_into(&mut rc, &hash::return_code_share(&pj[u], l_r));
            }
            codes::return_code(&rc, selections[u] - 1)
        })
        .collect()
}

/// 7.30 GenConfirmation (with 7.31, 7.32, 7.33) from the confirmation code Y.
pub fn gen_confirmation<R: RngCore + CryptoRng>(
    board: &PublicBoard,
    secrets: &CastSecrets,
    confirmation_code: &str,
    points: &[Vec<Point>],
    rng: &mut R,
) -> Result<Confirmation, ChvoteError> {
    let ig = board.params.ig();
    let q_hat = ig.order();
    let p_prime = board.params.p_prime();
    let k = board.set.k_of(secrets.voter);
    let mut y = codes::code_to_integer(confirmation_code)?;
    for pj in points {
        // 7.31 GetValues: the points of each election, in selection order
        let mut values = Vec::with_capacity(k.len());
        let mut u = 0;
        for &kl in &k {
            let v = value_at_zero(&pj[u..u + kl], p_prime)
                .ok_or_else(|| ChvoteError::Selections("two points share an x".into()))?;
            values.push(v);
            u += kl;
        }
        y += hash::values_mod(&values, q_hat);
        values.iter_mut().for_each(wipe_integer);
    }
    y %= q_hat;
    let ys = Secret::new(ig.scalar_from_integer(&y));
    wipe_integer(&mut y);
    let y_hat = ig.pow_secret(ig.generator(), &ys);
    let w = ig.random_secret(rng);
    let t = ig.pow_secret(ig.generator(), &w);
    let c = confirmation_challenge(board, &y_hat, &t);
    let s = ig.scalar_add(
        w.expose(),
        &ig.scalar_mul(&ig.scalar_from_integer(&c), ys.expose()),
    );
    drop(w);
    drop(ys);
    Ok(Confirmation {
        y_hat,
        t,
        s: ig.scalar_to_integer(&s),
    })
}

/// 7.38 GetFinalizationCode.
pub fn finalization_code(board: &PublicBoard, parts: &[Finalization]) -> String {
    let mut f = vec![0u8; board.params.l_f()];
    for part in parts {
        hash::xor_into(&mut f, &part.f);
    }
    codes::bytes_to_code(&f)
}

/// 7.29 CheckReturnCodes (the voter): the codes shown are the card's for the selections.
pub fn check_return_codes(card_codes: &[String], shown: &[String], selections: &[usize]) -> bool {
    selections.len() == shown.len()
        && selections
            .iter()
            .zip(shown)
            .all(|(&s, rc)| card_codes.get(s - 1) == Some(rc))
}

/// A random voter's choice for its k_i (uniform among the candidates of each election).
pub fn random_selections<R: RngCore>(board: &PublicBoard, voter: usize, rng: &mut R) -> Vec<usize> {
    let k = board.set.k_of(voter);
    let mut out = Vec::new();
    for (l, &kl) in k.iter().enumerate() {
        let n = board.set.candidates[l];
        let first = board.set.first_candidate(l);
        let mut chosen: Vec<usize> = Vec::with_capacity(kl);
        while chosen.len() < kl {
            let c = (rng.next_u64() % n as u64) as usize;
            if !chosen.contains(&c) {
                chosen.push(c);
            }
        }
        chosen.sort_unstable();
        out.extend(chosen.into_iter().map(|c| first + c + 1));
    }
    out
}
