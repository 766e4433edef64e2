//! The parties that hold secrets, and a whole mixnet election in one process (spec/91.5):
//! parameters, trustees' keys, voting, the mix cascade, decryption (each trustee first checks the
//! other authorities' shuffles) and tallying, every step posted through the board
//! ([`crate::board::MixBoard`]) into a mix record (spec/91.7) that the independent verifier
//! (`votum-verify`) checks afterwards. The steps are public functions too, so a test or a
//! distributed deployment can drive the parties itself: trustees deal ([`Dealing`],
//! [`key_share`]) and decrypt ([`decrypt_share`]), voters encrypt ([`encrypt_ballot`],
//! [`cast_ballots`]). This is the crate's one module behind feature `prove`: the verifier's build
//! has no code that holds a secret.

use std::io::Write;
use std::ops::ControlFlow;
use std::time::Instant;

use rand_core::{CryptoRng, RngCore};
use rayon::prelude::*;
use votum_elgamal::Ciphertext;
use votum_group::{Group, Secret};
use votum_proofs::SchnorrProof;

use crate::ballot::{oracle, EncryptedBallot};
use crate::board::MixBoard;
use crate::codec::ValueCodec;
use crate::count::count;
use crate::count::Outcome;
use crate::decrypt::{batch, challenge, combination, DecryptionShare};
use crate::params::{weights_rng, Parameters};
use crate::MixError;

/// Timings and results of a run.
#[derive(Clone, Debug)]
pub struct Report {
    /// (step, seconds), CHVote's step names where they apply.
    pub steps: Vec<(&'static str, f64)>,
    pub shuffle_checks: usize,
    pub plaintexts: Vec<Vec<u64>>,
    pub outcome: Outcome,
    /// The decrypted rows, sorted, equal the cast rows, sorted.
    pub multiset_ok: bool,
    /// The record's head hash (its commitment) and number of entries.
    pub board_head: [u8; 32],
    pub board_entries: u64,
}

/// One trustee's dealing: the public commitments and proof it posts, and its polynomial (secret,
/// zeroized on drop), whose values at 1..=n are the other trustees' shares.
pub struct Dealing<G: Group> {
    pub commitments: Vec<G::Element>,
    pub proof: SchnorrProof<G>,
    polynomial: votum_elgamal::SecretPolynomial<G>,
}

impl<G: Group> Dealing<G> {
    /// Trustee `trustee`'s random polynomial of degree quorum − 1, its commitments and its proof
    /// of knowledge of the constant term (bound to the parameters' digest).
    pub fn new<R: RngCore + CryptoRng>(
        group: &G,
        params: &Parameters,
        params_digest: &[u8; 32],
        trustee: u64,
        rng: &mut R,
    ) -> Result<Self, MixError> {
        use votum_elgamal::SecretPolynomial;
        let polynomial =
            SecretPolynomial::random(group, params.quorum, rng).map_err(|e| MixError::Key {
                trustee,
                reason: e.to_string(),
            })?;
        let commitments = polynomial.commitments(group);
        let proof = SchnorrProof::prove(
            group,
            &crate::board::trustee_oracle(params_digest, trustee),
            &polynomial.coefficients()[0],
            &commitments[0],
            rng,
        );
        Ok(Self {
            commitments,
            proof,
            polynomial,
        })
    }
}

impl<G: Group> Dealing<G> {
    /// This dealing's share for trustee `j`: its polynomial's value at j (secret).
    pub fn share_for(&self, group: &G, j: u64) -> Secret<G::Scalar> {
        Secret::new(self.polynomial.evaluate(group, j))
    }
}

/// Trustee j's secret share: the sum of every dealing's value at j, each checked against its
/// dealer's posted commitments.
pub fn key_share<G: Group>(
    group: &G,
    dealings: &[Dealing<G>],
    j: u64,
) -> Result<votum_elgamal::SecretKey<G>, MixError> {
    let mut x = group.scalar_from_u64(0);
    for (k, d) in dealings.iter().enumerate() {
        let s = d.share_for(group, j);
        votum_elgamal::secret::verify_share(group, &d.commitments, j, &s).map_err(|e| {
            MixError::Key {
                trustee: k as u64 + 1,
                reason: e.to_string(),
            }
        })?;
        x = group.scalar_add(&x, s.expose());
    }
    Ok(votum_elgamal::SecretKey::new(x))
}

/// Voters encrypt their rows under `pk`, each ciphertext with its proof of knowledge bound to
/// `context` (the board head after the key), in parallel with one generator per voter seeded
/// from `rng`. (`pk` with its fixed-base table: the mixers use the same one.)
pub fn cast_ballots<G: Group, R: RngCore + CryptoRng>(
    group: &G,
    params: &Parameters,
    pk: &votum_elgamal::PublicKey<G>,
    context: &[u8; 32],
    votes: &[Vec<u64>],
    rng: &mut R,
) -> Result<Vec<EncryptedBallot<G>>, MixError> {
    let w = params.width;
    let codec = ValueCodec::new(group, params.candidates as u64)?;
    let messages: Vec<Vec<G::Element>> = votes
        .iter()
        .map(|row| {
            if row.len() != w {
                return Err(MixError::Input(format!(
                    "a vote of width {} (expected {w})",
                    row.len()
                )));
            }
            row.iter().map(|&v| codec.encode(v)).collect()
        })
        .collect::<Result<_, _>>()?;
    let mut seeds = vec![[0u8; 32]; votes.len()];
    for s in &mut seeds {
        rng.fill_bytes(s);
    }
    Ok(messages
        .par_iter()
        .zip(seeds.par_iter())
        .enumerate()
        .map(|(v, (m, seed))| {
            let mut r = <rand_chacha::ChaCha20Rng as rand_core::SeedableRng>::from_seed(*seed);
            encrypt_ballot(group, pk, context, v as u64 + 1, m, &mut r)
        })
        .collect())
}

/// The plaintext rows from a quorum of shares of the last list's decryption (`datas`: its
/// ciphertexts' second components; the first `quorum` shares given are used).
pub fn decrypt_rows<G: Group>(
    group: &G,
    params: &Parameters,
    datas: &[G::Element],
    shares: &[DecryptionShare<G>],
) -> Result<Vec<Vec<u64>>, MixError> {
    let refs: Vec<&DecryptionShare<G>> = shares.iter().take(params.quorum).collect();
    let elements = crate::decrypt::combine(group, datas, &refs)?;
    let codec = ValueCodec::new(group, params.candidates as u64)?;
    crate::codec::decode_rows(&codec, &elements, params.width)
}

/// Runs a whole election for `votes` (one row per voter) with fresh secrets from `rng`, writing
/// its record to `out`. Trustee i (1-based) is also mixer i when both exist: each trustee checks
/// every shuffle but its own as soon as it is posted (CHVote's 12 checks for 4 + 4; the checks
/// count in the decryption step, where CHVote counts them), so only two lists are ever held.
/// Every trustee posts a decryption share. The record is not verified here: that is the
/// independent verifier's job (`votum_verify::mix`).
pub fn run<G: Group, R: RngCore + CryptoRng, W: Write>(
    group: &G,
    params: &Parameters,
    votes: &[Vec<u64>],
    rng: &mut R,
    out: W,
    progress: impl FnMut(&str) -> ControlFlow<()>,
) -> Result<(Report, W), MixError> {
    run_with(group, params, votes, rng, out, progress, None)
}

/// [`run`], with the trustees' checks of each shuffle handed to `workers` (a cluster, spec/98.3)
/// when given: each trustee's check of mixer m's shuffle is one task, sent as the shuffle is
/// posted, so the next mixer shuffles while they run; every verdict is in before decryption, and
/// one that is not a pass fails the election naming the mixer.
pub fn run_with<G: Group, R: RngCore + CryptoRng, W: Write>(
    group: &G,
    params: &Parameters,
    votes: &[Vec<u64>],
    rng: &mut R,
    out: W,
    mut progress: impl FnMut(&str) -> ControlFlow<()>,
    mut workers: Option<&mut dyn crate::remote::ShuffleWorkers>,
) -> Result<(Report, W), MixError> {
    use votum_shuffle::{Generators, ShuffleProof};

    params.check()?;
    let n = votes.len();
    if n == 0 {
        return Err(MixError::Input("no voters".into()));
    }
    let mut steps: Vec<(&'static str, f64)> = Vec::new();
    let total = Instant::now();

    if progress("creating public parameters").is_break() {
        return Err(MixError::Stopped);
    }
    let t = Instant::now();
    let mut board = MixBoard::create(group, params, out)?;
    let generators = Generators::derive(group, &params.generators_seed(), n);
    steps.push(("creating public parameters", t.elapsed().as_secs_f64()));

    if progress("key generation").is_break() {
        return Err(MixError::Stopped);
    }
    let t = Instant::now();
    let digest = board.parameters_digest();
    let mut dealings = Vec::with_capacity(params.trustees);
    for i in 1..=params.trustees as u64 {
        dealings.push(Dealing::new(group, params, &digest, i, rng)?);
    }
    steps.push(("key generation", t.elapsed().as_secs_f64()));

    // public key building: the board checks each proof; each trustee checks its shares
    if progress("public key building").is_break() {
        return Err(MixError::Stopped);
    }
    let t = Instant::now();
    for (i, d) in dealings.iter().enumerate() {
        board.post_trustee(i as u64 + 1, &d.commitments, &d.proof)?;
    }
    let shares = (1..=params.trustees as u64)
        .map(|j| key_share(group, &dealings, j))
        .collect::<Result<Vec<_>, _>>()?;
    drop(dealings);
    let joint = board
        .public_key()
        .cloned()
        .ok_or(MixError::Input("no public key".into()))?;
    // one fixed-base table of the key, for the voters and the mixers
    let pk = votum_elgamal::PublicKey::with_table(group, joint.clone())
        .map_err(|e| MixError::Input(e.to_string()))?;
    steps.push(("public key building", t.elapsed().as_secs_f64()));

    if progress("voting phase").is_break() {
        return Err(MixError::Stopped);
    }
    let t = Instant::now();
    let ballots = cast_ballots(group, params, &pk, &board.ballot_context(), votes, rng)?;
    board.post_ballots(&ballots)?;
    drop(ballots);
    steps.push(("voting phase", t.elapsed().as_secs_f64()));

    if progress("mixing").is_break() {
        return Err(MixError::Stopped);
    }
    let mut mixing = 0.0;
    let mut checking = 0.0;
    let mut checks = 0;
    // which mixer each check sent out is of
    let mut remote: Vec<usize> = Vec::new();
    if let Some(w) = workers.as_deref_mut() {
        let parameters = params.encode_for(group.id());
        if w.setup(&parameters, &group.encode_element(&joint))
            .is_break()
        {
            return Err(MixError::Stopped);
        }
    }
    for m in 1..=params.mixers {
        let t = Instant::now();
        let ctx = board.head();
        let input = board
            .current()
            .ok_or(MixError::Input("no list to mix".into()))?;
        let shuffled = match workers.as_deref_mut().and_then(|w| w.pows()) {
            Some(pows) => {
                votum_shuffle::shuffle_and_prove_on(group, &pk, &generators, &ctx, input, rng, pows)
            }
            None => votum_shuffle::shuffle_and_prove(group, &pk, &generators, &ctx, input, rng),
        };
        let (out, proof) = shuffled.map_err(|source| MixError::Shuffle { mixer: m, source })?;
        let proof_bytes = proof.encode(group);
        drop(proof);
        let list = out.encode(group);
        drop(out);
        let input = board.post_mix(m, &list, &proof_bytes)?;
        mixing += t.elapsed().as_secs_f64();

        // every other trustee checks this shuffle from what the board holds
        let t = Instant::now();
        if let Some(w) = workers.as_deref_mut() {
            // the `mix` entry as posted: the output list, then the proof
            let mut payload = list;
            payload.extend_from_slice(&proof_bytes);
            let input = input.encode(group);
            for _ in (1..=params.trustees).filter(|&trustee| trustee != m) {
                if w.submit(&ctx, &input, &payload).is_break() {
                    return Err(MixError::Stopped);
                }
                remote.push(m);
                checks += 1;
            }
            checking += t.elapsed().as_secs_f64();
            continue;
        }
        drop(list);
        let output = board
            .current()
            .ok_or(MixError::Input("no output list".into()))?;
        for trustee in 1..=params.trustees {
            if trustee == m {
                continue;
            }
            let mut r = weights_rng(rng);
            ShuffleProof::decode(group, &proof_bytes, n, params.width, &mut r)
                .and_then(|p| p.verify(group, &joint, &generators, &ctx, &input, output, &mut r))
                .map_err(|source| MixError::Shuffle { mixer: m, source })?;
            checks += 1;
        }
        checking += t.elapsed().as_secs_f64();
    }
    if let Some(w) = workers {
        let t = Instant::now();
        let ControlFlow::Continue(verdicts) = w.collect() else {
            return Err(MixError::Stopped);
        };
        if verdicts.len() != remote.len() {
            return Err(MixError::Input(format!(
                "{} verdicts from the workers for {} checks",
                verdicts.len(),
                remote.len()
            )));
        }
        if let Some((m, reason)) = remote.iter().zip(verdicts).find_map(|(m, v)| match v {
            Ok(None) => None,
            Ok(Some(r)) | Err(r) => Some((*m, r)),
        }) {
            return Err(MixError::Input(format!(
                "mixer {m}'s shuffle failed a trustee's check: {reason}"
            )));
        }
        checking += t.elapsed().as_secs_f64();
    }
    steps.push(("mixing", mixing));

    if progress("decryption").is_break() {
        return Err(MixError::Stopped);
    }
    let t = Instant::now();
    let last = board
        .current()
        .ok_or(MixError::Input("no mixed list".into()))?
        .ciphertexts();
    let pads: Vec<G::Element> = last.iter().map(|c| c.pad.clone()).collect();
    let datas: Vec<G::Element> = last.iter().map(|c| c.data.clone()).collect();
    let dctx = board.decryption_context();
    let mut dshares = Vec::with_capacity(params.trustees);
    for (i, share) in shares.iter().enumerate() {
        let s = decrypt_share(group, i as u64 + 1, share, &dctx, &pads, rng)?;
        board.post_decryption(&s)?;
        dshares.push(s);
    }
    drop(shares);
    drop(pads);
    steps.push(("decryption", checking + t.elapsed().as_secs_f64()));

    if progress("tallying").is_break() {
        return Err(MixError::Stopped);
    }
    let t = Instant::now();
    let plaintexts = decrypt_rows(group, params, &datas, &dshares)?;
    drop(datas);
    drop(dshares);
    let outcome = count(params.rule, params.ties, params.candidates, &plaintexts);
    let mut cast: Vec<Vec<u64>> = votes.to_vec();
    let mut got = plaintexts.clone();
    cast.sort_unstable();
    got.sort_unstable();
    let multiset_ok = cast == got;
    board.post_result(&plaintexts, &outcome)?;
    steps.push(("tallying", t.elapsed().as_secs_f64()));
    steps.push(("total simulation time", total.elapsed().as_secs_f64()));
    let (board_head, board_entries, out) = board.finish()?;
    Ok((
        Report {
            steps,
            shuffle_checks: checks,
            plaintexts,
            outcome,
            multiset_ok,
            board_head,
            board_entries,
        },
        out,
    ))
}

/// Encrypts `messages` (already encoded as elements) for `voter`, each with a Schnorr proof of
/// knowledge of its nonce.
pub fn encrypt_ballot<G: Group, R: RngCore + CryptoRng>(
    group: &G,
    pk: &votum_elgamal::PublicKey<G>,
    context: &[u8],
    voter: u64,
    messages: &[G::Element],
    rng: &mut R,
) -> EncryptedBallot<G> {
    let mut cts = Vec::with_capacity(messages.len());
    let mut proofs = Vec::with_capacity(messages.len());
    for (k, m) in messages.iter().enumerate() {
        // an encryption nonce: the fast tables encrypt with it (ADR 0002), its proof is constant time
        let r = group.random_secret(rng);
        let ct = Ciphertext::encrypt_element(group, pk, m, r.expose());
        let o = oracle(group, context, voter, k, &ct.data);
        proofs.push(SchnorrProof::prove(group, &o, &r, &ct.pad, rng));
        cts.push(ct);
    }
    EncryptedBallot { voter, cts, proofs }
}

/// Trustee `trustee`'s partial decryptions of `pads` (constant-time powers of its share) and
/// their batched proof.
pub fn decrypt_share<G: Group, R: RngCore + CryptoRng>(
    group: &G,
    trustee: u64,
    share: &votum_elgamal::SecretKey<G>,
    context: &[u8],
    pads: &[G::Element],
    rng: &mut R,
) -> Result<DecryptionShare<G>, MixError> {
    let x = share.secret();
    // a long-term secret and its proof's nonce: constant time (ADR 0002; issue 45, finding 12)
    let public_share = group.pow_secret(group.generator(), x);
    let partials: Vec<G::Element> = pads.par_iter().map(|a| group.pow_secret(a, x)).collect();
    let (t, e) = batch(group, context, trustee, &public_share, pads, &partials);
    let a = combination(group, trustee, pads, &e)?;
    let w = group.random_secret(rng);
    let commit_g = group.pow_secret(group.generator(), &w);
    let commit_a = group.pow_secret(&a, &w);
    let c = challenge(group, t, &commit_g, &commit_a);
    let response = group.scalar_add(w.expose(), &group.scalar_mul(&c, x.expose()));
    drop(w);
    Ok(DecryptionShare {
        trustee,
        partials,
        commit_g,
        commit_a,
        response,
    })
}
