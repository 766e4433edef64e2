//! An election authority (spec/92.3–92.8): its key share, its electorate data, the ballots and
//! confirmations it accepted, its shuffle and its share of the decryption. Nothing here is read
//! by another party except through the messages the methods return.

use std::sync::{Arc, Mutex};

use rand_core::{CryptoRng, RngCore};
use rayon::prelude::*;
use votum_arith::{to_fixed_be, wipe_integer, Integer, SecretBaseTable};
use votum_elgamal::{Ciphertext, KeyPair, PublicKey, SecretKey};
use votum_group::{Group, ModElement, ModScalar, ModpGroup, Secret};
use votum_mixnet::decrypt::DecryptionShare;
use votum_shuffle::{Generators, Rows};
use zeroize::Zeroize;

use crate::election::ElectionSet;
use crate::hash;
use crate::messages::{
    check_ballot_proof, query_product, shuffle_context, Ballot, Confirmation, Finalization,
    PublicBoard, PublicVoterData, Response,
};
use crate::params::Params;
use crate::poly::{random_below, y_value, Point};
use crate::ChvoteError;

/// What the printing authority receives from authority j for voter i (7.10): x_ij, y_ij, F_ij and
/// the return-code shares rc_ijv.
pub struct SecretVoterData {
    pub x: Integer,
    pub y: Integer,
    pub f: Vec<u8>,
    pub rc: Vec<Vec<u8>>,
}

impl Drop for SecretVoterData {
    fn drop(&mut self) {
        wipe_integer(&mut self.x);
        wipe_integer(&mut self.y);
        self.f.zeroize();
        self.rc.iter_mut().for_each(|r| r.zeroize());
    }
}

impl std::fmt::Debug for SecretVoterData {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretVoterData(<redacted>)")
    }
}

/// Where a voter stands with this authority.
enum Slot {
    Empty,
    Cast {
        ballot: Ciphertext<ModpGroup>,
        r: Vec<ModScalar>,
    },
    Confirmed {
        ballot: Ciphertext<ModpGroup>,
    },
}

/// The constant-time combs of the OT responses: one per candidate prime and one for pk.
struct Combs {
    primes: Vec<SecretBaseTable>,
    pk: SecretBaseTable,
}

pub struct Authority {
    index: usize,
    params: Params,
    key: KeyPair<ModpGroup>,
    /// The points of each voter (7.7), n per voter.
    points: Vec<Vec<Point>>,
    slots: Vec<Mutex<Slot>>,
    board: Option<Arc<PublicBoard>>,
    combs: std::sync::OnceLock<Combs>,
}

impl std::fmt::Debug for Authority {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Authority({})", self.index)
    }
}

impl Authority {
    /// 7.15 GenKeyPair.
    pub fn new<R: RngCore + CryptoRng>(index: usize, params: Params, rng: &mut R) -> Self {
        // a key of 2τ bits, as SP 800-56A allows for safe-prime groups (spec/92.3)
        let secret: SecretKey<ModpGroup> = SecretKey::new(params.ephemeral(rng));
        let eg = params.eg();
        let g_sk = params.comb_pow(params.g_ephemeral(), secret.secret());
        let public = PublicKey::new(eg, g_sk).unwrap_or_else(|_| unreachable_key());
        let key = KeyPair { secret, public };
        Self {
            index,
            params,
            key,
            points: Vec::new(),
            slots: Vec::new(),
            board: None,
            combs: std::sync::OnceLock::new(),
        }
    }

    pub fn index(&self) -> usize {
        self.index
    }

    pub fn params(&self) -> &Params {
        &self.params
    }

    /// pk_j, posted to the board.
    pub fn key_share(&self) -> ModElement {
        self.key.public.element().clone()
    }

    /// The `key-share` payload: pk_j and a Schnorr proof of knowledge of sk_j bound to the
    /// election `digest` and this authority's index (spec/92.3), so that no authority can post a
    /// share chosen from the others' (g^x / Π pk_i) without knowing its secret. The nonce is
    /// uniform modulo q (it hides the short secret in the response) and raised in constant time.
    pub fn key_share_payload<R: RngCore + CryptoRng>(
        &self,
        digest: &[u8; 32],
        rng: &mut R,
    ) -> Vec<u8> {
        let eg = self.params.eg();
        let public = self.key_share();
        let w = eg.random_secret(rng);
        let commitment = eg.pow_secret(eg.generator(), &w);
        let oracle = crate::record::key_share_oracle(digest, self.index);
        let challenge = votum_proofs::ChallengeOracle::challenge(
            &oracle,
            eg,
            votum_proofs::ProofKind::Schnorr,
            &[&public, &commitment],
        );
        let mut cx = eg.scalar_mul(&challenge, self.key.secret.expose());
        let response = eg.scalar_add(w.expose(), &cx);
        drop(w);
        cx.zeroize();
        let proof = votum_proofs::SchnorrProof {
            commitment,
            challenge,
            response,
        };
        crate::record::key_share_bytes(&self.params, &public, &proof)
    }

    /// 7.6 GenElectorateData: the points, secret data and public data of every voter. The
    /// secret data goes to the printing authority only; the public data to the board.
    pub fn gen_electorate_data(
        &mut self,
        set: &ElectionSet,
    ) -> Result<(Vec<SecretVoterData>, Vec<PublicVoterData>), ChvoteError> {
        set.check()?;
        let params = &self.params;
        let p_prime = params.p_prime().clone();
        let ig = params.ig();
        let bound = Integer::from(params.q_hat() / params.authorities() as u32);
        let made: Vec<(Vec<Point>, SecretVoterData, PublicVoterData)> = (0..set.voters())
            .into_par_iter()
            .map_init(rand_core::OsRng::default, |rng, i| {
                let k = set.k_of(i);
                // 7.7 GenPoints
                let mut points = Vec::with_capacity(set.total_candidates());
                let mut zeros = Vec::with_capacity(k.len());
                for (l, &n) in set.candidates.iter().enumerate() {
                    let mut coefficients = gen_polynomial(k[l] as i64 - 1, &p_prime, rng);
                    let mut xs: Vec<Integer> = Vec::with_capacity(n);
                    while xs.len() < n {
                        let x = random_below(&p_prime, rng);
                        if x != 0 && !xs.contains(&x) {
                            xs.push(x);
                        }
                    }
                    for x in xs {
                        let y = y_value(&x, &coefficients, &p_prime);
                        points.push(Point { x, y });
                    }
                    zeros.push(coefficients[0].clone());
                    coefficients.iter_mut().for_each(wipe_integer);
                }
                // 7.10 GenSecretVoterData
                let x = random_below(&bound, rng);
                let y = random_below(&bound, rng);
                let f = hash::finalization_share(&points, params.l_f());
                let rc = points
                    .iter()
                    .map(|p| hash::return_code_share(p, params.l_r()))
                    .collect();
                let commitments = points.iter().map(hash::commitment).collect();
                // 7.11 GetPublicVoterData
                let h = hash::values_mod(&zeros, params.q_hat());
                zeros.iter_mut().for_each(wipe_integer);
                let mut y_plus = Integer::from(&y + &h) % params.q_hat();
                let xs = Secret::new(ig.scalar_from_integer(&x));
                let ys = Secret::new(ig.scalar_from_integer(&y_plus));
                wipe_integer(&mut y_plus);
                let public = PublicVoterData {
                    x_hat: ig.pow_secret(ig.generator(), &xs),
                    y_hat: ig.pow_secret(ig.generator(), &ys),
                    commitments,
                };
                (points, SecretVoterData { x, y, f, rc }, public)
            })
            .collect();
        let mut secret = Vec::with_capacity(made.len());
        let mut public = Vec::with_capacity(made.len());
        self.points = Vec::with_capacity(made.len());
        for (points, s, p) in made {
            self.points.push(points);
            secret.push(s);
            public.push(p);
        }
        self.slots = (0..set.voters()).map(|_| Mutex::new(Slot::Empty)).collect();
        Ok((secret, public))
    }

    /// Takes the published board (keys and credentials); the combs the responses use are built
    /// by the first ballot (spec/92.6).
    pub fn attach(&mut self, board: Arc<PublicBoard>) {
        self.board = Some(board);
    }

    fn board(&self) -> Result<&PublicBoard, ChvoteError> {
        self.board
            .as_deref()
            .ok_or_else(|| ChvoteError::Parameters("the authority has not seen the board".into()))
    }

    fn combs(&self, board: &PublicBoard) -> &Combs {
        self.combs.get_or_init(|| {
            let params = &self.params;
            let primes = board
                .primes
                .par_iter()
                .map(|p| params.ephemeral_comb(p))
                .collect();
            let pk = params.ephemeral_comb(board.pk.element());
            Combs { primes, pk }
        })
    }

    /// 7.22 CheckBallot, then 7.25 GenResponse. A refused ballot changes nothing.
    pub fn handle_ballot<R: RngCore + CryptoRng>(
        &self,
        voter: usize,
        ballot: &Ballot,
        rng: &mut R,
    ) -> Result<Response, ChvoteError> {
        let board = self.board()?;
        let eg = self.params.eg();
        let slot = self
            .slots
            .get(voter)
            .ok_or(ChvoteError::UnknownVoter(voter))?;
        let mut slot = slot.lock().unwrap_or_else(|e| e.into_inner());
        if !matches!(*slot, Slot::Empty) {
            return Err(ChvoteError::AlreadyVoted(voter));
        }
        if ballot.x_hat != board.x_hat[voter] {
            return Err(ChvoteError::CredentialMismatch(voter));
        }
        let k = board.set.k_of(voter);
        let k_total: usize = k.iter().sum();
        if ballot.queries.len() != k_total {
            return Err(ChvoteError::BallotShape(format!(
                "{} queries, voter {voter} has {k_total} selections",
                ballot.queries.len()
            )));
        }
        let a = query_product(eg, &ballot.queries);
        if !check_ballot_proof(board, ballot, &a) {
            return Err(ChvoteError::BallotProof(voter));
        }
        // 7.25 GenResponse
        let combs = self.combs(board);
        let points = &self.points[voter];
        let l_m = self.params.l_m();
        let half = l_m / 2;
        let mut b = Vec::with_capacity(k_total);
        let mut c = Vec::with_capacity(points.len());
        let mut d = Vec::with_capacity(k.len());
        let mut rs = Vec::with_capacity(k.len());
        let (mut u, mut v) = (0, 0);
        for (l, &n_l) in board.set.candidates.iter().enumerate() {
            let r = Secret::new(self.params.ephemeral(rng));
            for _ in 0..k[l] {
                b.push(eg.pow_secret(&ballot.queries[u], &r));
                u += 1;
            }
            for _ in 0..n_l {
                let point = &points[v];
                let mut m = to_fixed_be(&point.x, half);
                m.extend(to_fixed_be(&point.y, half));
                let key = self.params.comb_pow(&combs.primes[v], &r);
                let pad = hash::ot_pad(key.value(), l_m);
                hash::xor_into(&mut m, &pad);
                c.push(m);
                v += 1;
            }
            d.push(self.params.comb_pow(&combs.pk, &r));
            // the exponents are revealed with the finalization (spec/92.9): kept until then
            rs.push(r.expose().clone());
        }
        *slot = Slot::Cast {
            ballot: Ciphertext {
                pad: ballot.b.clone(),
                data: a,
            },
            r: rs,
        };
        Ok(Response { b, c, d })
    }

    /// 7.34 CheckConfirmation, then 7.37 GetFinalization. A refused confirmation changes nothing.
    pub fn handle_confirmation(
        &self,
        voter: usize,
        gamma: &Confirmation,
    ) -> Result<Finalization, ChvoteError> {
        let board = self.board()?;
        let slot = self
            .slots
            .get(voter)
            .ok_or(ChvoteError::UnknownVoter(voter))?;
        let mut slot = slot.lock().unwrap_or_else(|e| e.into_inner());
        let (ballot, r) = match &*slot {
            Slot::Empty => return Err(ChvoteError::NoBallot(voter)),
            Slot::Confirmed { .. } => return Err(ChvoteError::AlreadyConfirmed(voter)),
            Slot::Cast { ballot, r } => (ballot.clone(), r),
        };
        if gamma.y_hat != board.y_hat[voter] {
            return Err(ChvoteError::ConfirmationProof(voter));
        }
        if !crate::messages::check_confirmation_proof(board, gamma) {
            return Err(ChvoteError::ConfirmationProof(voter));
        }
        let points = &self.points[voter];
        let f = hash::finalization_share(points, self.params.l_f());
        let revealed = r
            .iter()
            .map(|s| self.params.eg().scalar_to_integer(s))
            .collect();
        *slot = Slot::Confirmed { ballot };
        Ok(Finalization { f, r: revealed })
    }

    /// The confirmed ballots' encryptions in voter order (the list the first mix takes).
    pub fn encryptions(&self) -> Vec<Ciphertext<ModpGroup>> {
        self.slots
            .iter()
            .filter_map(|s| match &*s.lock().unwrap_or_else(|e| e.into_inner()) {
                Slot::Confirmed { ballot } => Some(ballot.clone()),
                _ => None,
            })
            .collect()
    }

    /// Shuffles `inputs` with a proof (spec/90), after checking nothing: the caller checks the
    /// earlier shuffles first (spec/92.8).
    pub fn shuffle<R: RngCore + CryptoRng>(
        &self,
        generators: &Generators<ModpGroup>,
        inputs: &Rows<ModpGroup>,
        rng: &mut R,
    ) -> Result<votum_shuffle::OpenedShuffle<ModpGroup>, ChvoteError> {
        let board = self.board()?;
        // the re-encryption nonces are ephemeral exponents (spec/92.8)
        let nonce_bits = Some(self.params.ephemeral_bits());
        votum_shuffle::PreparedShuffle::prepare_with_nonce_bits(
            self.params.eg(),
            board.mix_key(),
            generators,
            inputs.len(),
            inputs.width(),
            nonce_bits,
            rng,
        )
        .and_then(|prepared| {
            prepared.apply_keeping_opening(inputs, &shuffle_context(board, self.index))
        })
        .map_err(|e| ChvoteError::Shuffle {
            authority: self.index,
            reason: e.to_string(),
        })
    }

    /// Opens the output rows `rows` of this authority's shuffle (spec/92.8, the trace of invalid
    /// votes): for each, the input row it came from (in `inputs`, the list it shuffled) and its
    /// re-encryption nonce.
    pub fn trace_steps(
        &self,
        inputs: &Rows<ModpGroup>,
        opening: &votum_shuffle::ShuffleOpening<ModpGroup>,
        rows: &[usize],
    ) -> Result<Vec<crate::record::TraceStep>, ChvoteError> {
        let eg = self.params.eg();
        rows.iter()
            .map(|&o| {
                let (i, nonces) = opening.open(o).ok_or_else(|| {
                    ChvoteError::Parameters(format!("no output row {o} to trace"))
                })?;
                let from = inputs
                    .ciphertexts()
                    .get(i)
                    .cloned()
                    .ok_or_else(|| ChvoteError::Parameters(format!("no input row {i}")))?;
                Ok(crate::record::TraceStep {
                    output: o as u64,
                    input: i as u64,
                    nonce: eg.scalar_to_integer(&nonces[0]),
                    from,
                })
            })
            .collect()
    }

    /// b′^(sk_j) for every pad, with one batched Chaum–Pedersen proof (spec/91.3).
    pub fn decrypt<R: RngCore + CryptoRng>(
        &self,
        pads: &[ModElement],
        rng: &mut R,
    ) -> Result<DecryptionShare<ModpGroup>, ChvoteError> {
        let board = self.board()?;
        votum_mixnet::election::decrypt_share(
            self.params.eg(),
            self.index as u64 + 1,
            &self.key.secret,
            &board.digest,
            pads,
            rng,
        )
        .map_err(|e| ChvoteError::Decryption {
            authority: self.index,
            reason: e.to_string(),
        })
    }
}

/// 7.8 GenPolynomial: d + 1 coefficients, the last non-zero; [0] for d = −1.
fn gen_polynomial<R: RngCore + CryptoRng>(d: i64, p: &Integer, rng: &mut R) -> Vec<Integer> {
    if d < 0 {
        return vec![Integer::new()];
    }
    let mut a: Vec<Integer> = (0..d).map(|_| random_below(p, rng)).collect();
    let mut last = Integer::new();
    while last == 0 {
        last = random_below(p, rng);
    }
    a.push(last);
    a
}

/// g^x for x in [1, 2^(2τ)) is never the identity (2τ < |q|), so a key share is always a key.
#[allow(clippy::panic)]
fn unreachable_key() -> PublicKey<ModpGroup> {
    panic!("g^x = 1 for a non-zero x shorter than q")
}
