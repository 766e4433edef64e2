//! A whole mixnet election in one process (spec/91.5): parameters, trustees' keys, voting,
//! the mix cascade, decryption (each trustee first checks the other authorities' shuffles),
//! tallying, and an independent verification of the record. Everything public is posted to a
//! hash-chained board (spec/80) whose running hash is each mixer's and trustee's Fiat–Shamir
//! context; large postings are kept as their canonical bytes, which is what the verifier reads.

#[cfg(feature = "prove")]
use std::time::Instant;

#[cfg(feature = "prove")]
use rand_core::CryptoRng;
use rand_core::RngCore;
use rayon::prelude::*;
use votum_elgamal::Ciphertext;
use votum_group::Group;
use votum_hash::board;
use votum_proofs::{NativeOracle, SchnorrProof};
use votum_shuffle::{Generators, Rows, ShuffleProof};

use crate::ballot::{verify_ballots, EncryptedBallot};
use crate::codec::ValueCodec;
use crate::count::{count, Outcome, Rule};
use crate::decrypt::{combine, verify_share, DecryptionShare};
use crate::MixError;

/// What the election is: posted first, bound into every later hash.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parameters {
    pub election_id: String,
    pub width: usize,
    pub candidates: usize,
    pub rule: Rule,
    pub mixers: usize,
    pub trustees: usize,
    pub quorum: usize,
}

impl Parameters {
    pub fn check(&self) -> Result<(), MixError> {
        let bad = |s: String| Err(MixError::Input(s));
        if self.candidates == 0 || self.candidates > 1 << 16 {
            return bad(format!("{} candidates (1 to 65,536)", self.candidates));
        }
        if self.width == 0 || self.width > self.candidates.max(1) {
            return bad(format!(
                "width {} (1 to the number of candidates)",
                self.width
            ));
        }
        if self.mixers == 0 || self.trustees == 0 {
            return bad("at least one mixer and one trustee".into());
        }
        if self.quorum == 0 || self.quorum > self.trustees {
            return bad(format!(
                "quorum {} of {} trustees",
                self.quorum, self.trustees
            ));
        }
        let seats = self.rule.seats();
        if seats == 0 || seats > self.candidates {
            return bad(format!("{seats} seats for {} candidates", self.candidates));
        }
        match self.rule {
            Rule::Plurality if self.width != 1 => bad("plurality ballots have width 1".into()),
            Rule::KOfN { k, .. } if k != self.width => {
                bad(format!("{k}-of-n ballots have width {k}"))
            }
            _ => Ok(()),
        }
    }

    /// The board payload (a line of text: a person can read it).
    pub fn encode<G: Group>(&self, group: &G) -> Vec<u8> {
        let rule = match self.rule {
            Rule::KOfN { k, seats } => format!("k-of-n k={k} seats={seats}"),
            Rule::Approval { seats } | Rule::Stv { seats } => {
                format!("{} seats={seats}", self.rule.name())
            }
            _ => self.rule.name().to_owned(),
        };
        format!(
            "votum-mix v1 group={} election={:?} width={} candidates={} rule={} mixers={} trustees={} quorum={}",
            group.id().name(),
            self.election_id,
            self.width,
            self.candidates,
            rule,
            self.mixers,
            self.trustees,
            self.quorum
        )
        .into_bytes()
    }

    /// The seed of the shuffle generators: the election's own.
    pub fn generators_seed(&self) -> Vec<u8> {
        let mut s = b"votum-mix generators ".to_vec();
        s.extend_from_slice(self.election_id.as_bytes());
        s
    }
}

/// One board entry as the record keeps it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub kind: &'static str,
    pub name: String,
    pub digest: [u8; 32],
    pub head: [u8; 32],
}

/// Everything public an election posted, in order.
pub struct MixRecord<G: Group> {
    pub parameters: Parameters,
    /// Per trustee: its polynomial's commitments and a proof of knowledge of its constant term.
    pub trustee_commitments: Vec<Vec<G::Element>>,
    pub trustee_proofs: Vec<SchnorrProof<G>>,
    pub public_key: G::Element,
    pub ballots: Vec<EncryptedBallot<G>>,
    /// Canonical bytes of the ballot box's list (the cascade's input).
    pub input: Vec<u8>,
    /// Per mixer: its output list's bytes and its proof's bytes.
    pub mixes: Vec<(Vec<u8>, Vec<u8>)>,
    pub shares: Vec<DecryptionShare<G>>,
    pub plaintexts: Vec<Vec<u64>>,
    pub outcome: Outcome,
    pub board: Vec<Entry>,
}

/// A growing board: entries and the running hash.
struct Board {
    head: [u8; 32],
    entries: Vec<Entry>,
}

impl Board {
    fn new(election_id: &str) -> Self {
        Self {
            head: board::genesis(election_id),
            entries: Vec::new(),
        }
    }

    fn post(&mut self, kind: &'static str, name: String, payload: &[u8]) {
        let digest = board::payload_digest(payload);
        self.head = board::link(&self.head, self.entries.len() as u64, kind, &name, &digest);
        self.entries.push(Entry {
            kind,
            name,
            digest,
            head: self.head,
        });
    }
}

fn elements_bytes<G: Group>(group: &G, es: &[G::Element]) -> Vec<u8> {
    let mut out = Vec::with_capacity(8 + es.len() * group.element_len());
    out.extend_from_slice(&(es.len() as u64).to_be_bytes());
    for e in es {
        out.extend_from_slice(&group.encode_element(e));
    }
    out
}

fn trustee_bytes<G: Group>(
    group: &G,
    commitments: &[G::Element],
    proof: &SchnorrProof<G>,
) -> Vec<u8> {
    let mut out = elements_bytes(group, commitments);
    out.extend_from_slice(&group.encode_element(&proof.commitment));
    out.extend_from_slice(&group.encode_scalar(&proof.challenge));
    out.extend_from_slice(&group.encode_scalar(&proof.response));
    out
}

fn share_bytes<G: Group>(group: &G, s: &DecryptionShare<G>) -> Vec<u8> {
    let mut out = s.trustee.to_be_bytes().to_vec();
    out.extend_from_slice(&elements_bytes(group, &s.partials));
    out.extend_from_slice(&group.encode_element(&s.commit_g));
    out.extend_from_slice(&group.encode_element(&s.commit_a));
    out.extend_from_slice(&group.encode_scalar(&s.response));
    out
}

fn ballots_bytes<G: Group>(group: &G, ballots: &[EncryptedBallot<G>]) -> Vec<u8> {
    let parts: Vec<Vec<u8>> = ballots
        .par_iter()
        .with_min_len(256)
        .map(|b| {
            let mut out = b.voter.to_be_bytes().to_vec();
            for (ct, p) in b.cts.iter().zip(&b.proofs) {
                out.extend_from_slice(&group.encode_element(&ct.pad));
                out.extend_from_slice(&group.encode_element(&ct.data));
                out.extend_from_slice(&group.encode_element(&p.commitment));
                out.extend_from_slice(&group.encode_scalar(&p.challenge));
                out.extend_from_slice(&group.encode_scalar(&p.response));
            }
            out
        })
        .collect();
    let mut out = (ballots.len() as u64).to_be_bytes().to_vec();
    for p in parts {
        out.extend_from_slice(&p);
    }
    out
}

fn trustee_oracle(params_digest: &[u8; 32], trustee: u64) -> NativeOracle {
    let mut c = b"mix-trustee".to_vec();
    c.extend_from_slice(params_digest);
    c.extend_from_slice(&trustee.to_be_bytes());
    NativeOracle::new(&c)
}

/// X_i = Π_k public_share(C_k, i): trustee i's public share of the joint key.
fn public_share<G: Group>(
    group: &G,
    commitments: &[Vec<G::Element>],
    i: u64,
) -> Result<G::Element, MixError> {
    commitments.iter().try_fold(group.identity(), |acc, c| {
        votum_elgamal::threshold::public_share(group, c, i)
            .map(|x| group.op(&acc, &x))
            .map_err(|e| MixError::Key {
                trustee: i,
                reason: e.to_string(),
            })
    })
}

/// Timings and results of a run.
#[derive(Clone, Debug)]
pub struct Report {
    /// (step, seconds), CHVote's step names where they apply.
    pub steps: Vec<(&'static str, f64)>,
    pub shuffle_checks: usize,
    pub outcome: Outcome,
    /// The decrypted rows, sorted, equal the cast rows, sorted.
    pub multiset_ok: bool,
    pub board_head: [u8; 32],
}

/// Random rows a voter of `params` may cast.
pub fn random_rows<R: RngCore>(params: &Parameters, voters: usize, rng: &mut R) -> Vec<Vec<u64>> {
    let n = params.candidates as u64;
    let w = params.width;
    let below = |rng: &mut R, m: u64| rng.next_u64() % m.max(1);
    (0..voters)
        .map(|_| {
            let mut row = vec![0u64; w];
            match params.rule {
                Rule::Plurality => row[0] = 1 + below(rng, n),
                _ => {
                    // a random prefix of a random ranking, the rest zeros
                    let mut order: Vec<u64> = (1..=n).collect();
                    for i in (1..order.len()).rev() {
                        let j = below(rng, i as u64 + 1) as usize;
                        order.swap(i, j);
                    }
                    let len = 1 + below(rng, w as u64) as usize;
                    row[..len].copy_from_slice(&order[..len]);
                }
            }
            row
        })
        .collect()
}

#[cfg(feature = "prove")]
/// Runs a whole election for `votes` (one row per voter) with fresh secrets from `rng`, and
/// returns its record and report. Trustee i (1-based) is also mixer i when both exist: before
/// decrypting, each trustee checks every shuffle but its own (CHVote's 12 checks for 4 + 4).
pub fn run<G: Group, R: RngCore + CryptoRng>(
    group: &G,
    params: &Parameters,
    votes: &[Vec<u64>],
    rng: &mut R,
    mut progress: impl FnMut(&str),
) -> Result<(MixRecord<G>, Report), MixError> {
    use votum_elgamal::threshold::SecretPolynomial;
    use votum_elgamal::{PublicKey, SecretKey};

    params.check()?;
    let n = votes.len();
    if n == 0 {
        return Err(MixError::Input("no voters".into()));
    }
    let w = params.width;
    let mut steps: Vec<(&'static str, f64)> = Vec::new();
    let total = Instant::now();

    // creating public parameters
    progress("creating public parameters");
    let t = Instant::now();
    let mut board = Board::new(&params.election_id);
    let params_bytes = params.encode(group);
    let params_digest = board::payload_digest(&params_bytes);
    board.post("parameters", "parameters".into(), &params_bytes);
    let codec = ValueCodec::new(group, params.candidates as u64)?;
    let generators = Generators::derive(group, &params.generators_seed(), n);
    steps.push(("creating public parameters", t.elapsed().as_secs_f64()));

    // key generation: every trustee deals a polynomial (dealer-free, as in spec/63)
    progress("key generation");
    let t = Instant::now();
    let mut polys = Vec::with_capacity(params.trustees);
    let mut commitments = Vec::with_capacity(params.trustees);
    let mut proofs = Vec::with_capacity(params.trustees);
    for i in 1..=params.trustees as u64 {
        let poly =
            SecretPolynomial::random(group, params.quorum, rng).map_err(|e| MixError::Key {
                trustee: i,
                reason: e.to_string(),
            })?;
        let c = poly.commitments(group);
        let proof = SchnorrProof::prove(
            group,
            &trustee_oracle(&params_digest, i),
            &poly.coefficients()[0],
            &c[0],
            rng,
        );
        board.post(
            "trustee",
            format!("trustee-{i}"),
            &trustee_bytes(group, &c, &proof),
        );
        polys.push(poly);
        commitments.push(c);
        proofs.push(proof);
    }
    steps.push(("key generation", t.elapsed().as_secs_f64()));

    // public key building: each trustee checks the others' proofs and its shares
    progress("public key building");
    let t = Instant::now();
    for (i, (c, p)) in commitments.iter().zip(&proofs).enumerate() {
        p.verify(group, &trustee_oracle(&params_digest, i as u64 + 1), &c[0])
            .map_err(|e| MixError::Key {
                trustee: i as u64 + 1,
                reason: e.to_string(),
            })?;
    }
    let joint = commitments
        .iter()
        .fold(group.identity(), |acc, c| group.op(&acc, &c[0]));
    let pk =
        PublicKey::with_table(group, joint.clone()).map_err(|e| MixError::Input(e.to_string()))?;
    let mut shares: Vec<SecretKey<G>> = Vec::with_capacity(params.trustees);
    for j in 1..=params.trustees as u64 {
        let mut x = group.scalar_from_u64(0);
        for (k, poly) in polys.iter().enumerate() {
            let s = poly.evaluate(group, j);
            votum_elgamal::threshold::verify_share(group, &commitments[k], j, &s).map_err(|e| {
                MixError::Key {
                    trustee: k as u64 + 1,
                    reason: e.to_string(),
                }
            })?;
            x = group.scalar_add(&x, &s);
        }
        shares.push(SecretKey::new(x));
    }
    drop(polys);
    board.post(
        "public-key",
        "public-key".into(),
        &group.encode_element(&joint),
    );
    steps.push(("public key building", t.elapsed().as_secs_f64()));

    // voting phase: voters encrypt; the ballot box checks every proof once
    progress("voting phase");
    let t = Instant::now();
    let context = board.head;
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
    let mut seeds = vec![[0u8; 32]; n];
    for s in &mut seeds {
        rng.fill_bytes(s);
    }
    let ballots: Vec<EncryptedBallot<G>> = messages
        .par_iter()
        .zip(seeds.par_iter())
        .enumerate()
        .map(|(v, (m, seed))| {
            let mut r = <rand_chacha::ChaCha20Rng as rand_core::SeedableRng>::from_seed(*seed);
            crate::ballot::encrypt_ballot(group, &pk, &context, v as u64 + 1, m, &mut r)
        })
        .collect();
    verify_ballots(group, &context, w, &ballots)?;
    let input_rows = Rows::new(
        w,
        ballots.iter().flat_map(|b| b.cts.iter().cloned()).collect(),
    )
    .map_err(|e| MixError::Input(e.to_string()))?;
    board.post("ballots", "ballots".into(), &ballots_bytes(group, &ballots));
    let input = input_rows.encode(group);
    board.post("input", "input".into(), &input);
    steps.push(("voting phase", t.elapsed().as_secs_f64()));

    // mixing
    progress("mixing");
    let t = Instant::now();
    let mut mixes = Vec::with_capacity(params.mixers);
    let mut current = input_rows;
    let mut mix_contexts = Vec::with_capacity(params.mixers);
    for m in 0..params.mixers {
        let ctx = board.head;
        let (out, proof) =
            votum_shuffle::shuffle_and_prove(group, &pk, &generators, &ctx, &current, rng)
                .map_err(|source| MixError::Shuffle {
                    mixer: m + 1,
                    source,
                })?;
        let out_bytes = out.encode(group);
        let proof_bytes = proof.encode(group);
        let mut payload = out_bytes.clone();
        payload.extend_from_slice(&proof_bytes);
        board.post("mix", format!("mix-{}", m + 1), &payload);
        mixes.push((out_bytes, proof_bytes));
        mix_contexts.push(ctx);
        current = out;
    }
    steps.push(("mixing", t.elapsed().as_secs_f64()));

    // decryption: each trustee checks the shuffles of the other authorities, then decrypts
    progress("decryption");
    let t = Instant::now();
    let mut checks = 0;
    let mut inputs_of: Vec<Rows<G>> = Vec::with_capacity(params.mixers);
    {
        let mut r = weights_rng(rng);
        let mut prev =
            Rows::decode(group, &input, &mut r).map_err(|e| MixError::Input(e.to_string()))?;
        for (m, (out_bytes, _)) in mixes.iter().enumerate() {
            let out =
                Rows::decode(group, out_bytes, &mut r).map_err(|source| MixError::Shuffle {
                    mixer: m + 1,
                    source,
                })?;
            inputs_of.push(std::mem::replace(&mut prev, out));
        }
        inputs_of.push(prev);
    }
    for trustee in 1..=params.trustees {
        for (m, (_, proof_bytes)) in mixes.iter().enumerate() {
            if m + 1 == trustee {
                continue;
            }
            let mut r = weights_rng(rng);
            let proof =
                ShuffleProof::decode(group, proof_bytes, n, w, &mut r).map_err(|source| {
                    MixError::Shuffle {
                        mixer: m + 1,
                        source,
                    }
                })?;
            proof
                .verify(
                    group,
                    &joint,
                    &generators,
                    &mix_contexts[m],
                    &inputs_of[m],
                    &inputs_of[m + 1],
                    &mut r,
                )
                .map_err(|source| MixError::Shuffle {
                    mixer: m + 1,
                    source,
                })?;
            checks += 1;
        }
    }
    let last = &inputs_of[params.mixers];
    let pads: Vec<G::Element> = last.ciphertexts().iter().map(|c| c.pad.clone()).collect();
    let datas: Vec<G::Element> = last.ciphertexts().iter().map(|c| c.data.clone()).collect();
    let dctx = board.head;
    let mut dshares = Vec::with_capacity(params.quorum);
    for (i, share) in shares.iter().enumerate().take(params.quorum) {
        let s = crate::decrypt::decrypt_share(group, i as u64 + 1, share, &dctx, &pads, rng)?;
        board.post(
            "decryption",
            format!("decryption-{}", i + 1),
            &share_bytes(group, &s),
        );
        dshares.push(s);
    }
    drop(shares);
    for s in &dshares {
        let x = public_share(group, &commitments, s.trustee)?;
        verify_share(group, &x, &dctx, &pads, s)?;
    }
    let refs: Vec<&DecryptionShare<G>> = dshares.iter().collect();
    let elements = combine(group, &datas, &refs)?;
    steps.push(("decryption", t.elapsed().as_secs_f64()));

    // tallying
    progress("tallying");
    let t = Instant::now();
    let plaintexts = decode_rows(&codec, &elements, w)?;
    let outcome = count(params.rule, params.candidates, &plaintexts);
    let mut cast: Vec<Vec<u64>> = votes.to_vec();
    let mut got = plaintexts.clone();
    cast.sort_unstable();
    got.sort_unstable();
    let multiset_ok = cast == got;
    board.post(
        "result",
        "result".into(),
        &result_bytes(&plaintexts, &outcome),
    );
    steps.push(("tallying", t.elapsed().as_secs_f64()));
    let simulation = total.elapsed().as_secs_f64();

    let record = MixRecord {
        parameters: params.clone(),
        trustee_commitments: commitments,
        trustee_proofs: proofs,
        public_key: joint,
        ballots,
        input,
        mixes,
        shares: dshares,
        plaintexts,
        outcome: outcome.clone(),
        board: board.entries,
    };

    progress("verification");
    let t = Instant::now();
    verify_record(group, &record, rng)?;
    steps.push(("total simulation time", simulation));
    steps.push(("verification", t.elapsed().as_secs_f64()));
    Ok((
        record,
        Report {
            steps,
            shuffle_checks: checks,
            outcome,
            multiset_ok,
            board_head: board.head,
        },
    ))
}

fn decode_rows<G: Group>(
    codec: &ValueCodec<G>,
    elements: &[G::Element],
    w: usize,
) -> Result<Vec<Vec<u64>>, MixError> {
    elements
        .par_chunks(w)
        .enumerate()
        .map(|(row, es)| {
            es.iter()
                .map(|e| {
                    codec.decode(e).ok_or(MixError::Decoding {
                        row,
                        max: codec.max(),
                    })
                })
                .collect()
        })
        .collect()
}

fn result_bytes(plaintexts: &[Vec<u64>], outcome: &Outcome) -> Vec<u8> {
    let mut out = Vec::new();
    for row in plaintexts {
        for v in row {
            out.extend_from_slice(&v.to_be_bytes());
        }
    }
    out.extend_from_slice(format!("{outcome:?}").as_bytes());
    out
}

/// A generator for verifier weights: the caller's bytes mixed with fresh ones from the operating
/// system (a seeded run stays reproducible in what it proves, never in what it checks).
fn weights_rng<R: RngCore>(rng: &mut R) -> rand_chacha::ChaCha20Rng {
    use rand_core::SeedableRng;
    let mut seed = [0u8; 32];
    rng.fill_bytes(&mut seed);
    let mut os = [0u8; 32];
    if rand_core::OsRng.try_fill_bytes(&mut os).is_ok() {
        for (s, o) in seed.iter_mut().zip(os) {
            *s ^= o;
        }
    }
    rand_chacha::ChaCha20Rng::from_seed(seed)
}

/// Checks a record from its public content alone: the board chain, the trustees' proofs and the
/// joint key, every ballot's proofs, every shuffle (in its board context), every decryption
/// share, the decoding and the count (spec/91.6). `rng` seeds the batch weights.
pub fn verify_record<G: Group, R: RngCore>(
    group: &G,
    rec: &MixRecord<G>,
    rng: &mut R,
) -> Result<(), MixError> {
    let p = &rec.parameters;
    p.check()?;
    let w = p.width;
    let mut r = weights_rng(rng);
    // the board, rebuilt from the payloads
    let mut b = Board::new(&p.election_id);
    let params_bytes = p.encode(group);
    let params_digest = board::payload_digest(&params_bytes);
    b.post("parameters", "parameters".into(), &params_bytes);
    if rec.trustee_commitments.len() != p.trustees || rec.trustee_proofs.len() != p.trustees {
        return Err(MixError::Input(
            "one commitment list and proof per trustee".into(),
        ));
    }
    for (i, (c, proof)) in rec
        .trustee_commitments
        .iter()
        .zip(&rec.trustee_proofs)
        .enumerate()
    {
        let t = i as u64 + 1;
        if c.len() != p.quorum {
            return Err(MixError::Key {
                trustee: t,
                reason: format!("{} commitments (quorum {})", c.len(), p.quorum),
            });
        }
        proof
            .verify(group, &trustee_oracle(&params_digest, t), &c[0])
            .map_err(|e| MixError::Key {
                trustee: t,
                reason: e.to_string(),
            })?;
        b.post(
            "trustee",
            format!("trustee-{t}"),
            &trustee_bytes(group, c, proof),
        );
    }
    let joint = rec
        .trustee_commitments
        .iter()
        .fold(group.identity(), |acc, c| group.op(&acc, &c[0]));
    if joint != rec.public_key {
        return Err(MixError::Key {
            trustee: 0,
            reason: "the public key is not the product of the trustees' keys".into(),
        });
    }
    b.post(
        "public-key",
        "public-key".into(),
        &group.encode_element(&joint),
    );
    let context = b.head;
    verify_ballots(group, &context, w, &rec.ballots)?;
    b.post(
        "ballots",
        "ballots".into(),
        &ballots_bytes(group, &rec.ballots),
    );
    let mut prev = Rows::decode(group, &rec.input, &mut r)
        .map_err(|e| MixError::Input(format!("input list: {e}")))?;
    let cast: Vec<Ciphertext<G>> = rec
        .ballots
        .iter()
        .flat_map(|x| x.cts.iter().cloned())
        .collect();
    if prev.width() != w || prev.ciphertexts() != cast.as_slice() {
        return Err(MixError::Input(
            "the input list is not the ballot box's ciphertexts".into(),
        ));
    }
    b.post("input", "input".into(), &rec.input);
    let n = prev.len();
    if rec.mixes.len() != p.mixers {
        return Err(MixError::Input(format!(
            "{} mixes posted, {} mixers",
            rec.mixes.len(),
            p.mixers
        )));
    }
    let generators = Generators::derive(group, &p.generators_seed(), n);
    for (m, (out_bytes, proof_bytes)) in rec.mixes.iter().enumerate() {
        let err = |source| MixError::Shuffle {
            mixer: m + 1,
            source,
        };
        let ctx = b.head;
        let out = Rows::decode(group, out_bytes, &mut r).map_err(err)?;
        let proof = ShuffleProof::decode(group, proof_bytes, n, w, &mut r).map_err(err)?;
        proof
            .verify(group, &joint, &generators, &ctx, &prev, &out, &mut r)
            .map_err(err)?;
        let mut payload = out_bytes.clone();
        payload.extend_from_slice(proof_bytes);
        b.post("mix", format!("mix-{}", m + 1), &payload);
        prev = out;
    }
    let pads: Vec<G::Element> = prev.ciphertexts().iter().map(|c| c.pad.clone()).collect();
    let datas: Vec<G::Element> = prev.ciphertexts().iter().map(|c| c.data.clone()).collect();
    let dctx = b.head;
    if rec.shares.len() < p.quorum {
        return Err(MixError::Input(format!(
            "{} decryption shares, quorum {}",
            rec.shares.len(),
            p.quorum
        )));
    }
    for s in &rec.shares {
        if s.trustee == 0 || s.trustee > p.trustees as u64 {
            return Err(MixError::Decryption {
                trustee: s.trustee,
                reason: "not a trustee".into(),
            });
        }
        let x = public_share(group, &rec.trustee_commitments, s.trustee)?;
        verify_share(group, &x, &dctx, &pads, s)?;
        b.post(
            "decryption",
            format!("decryption-{}", s.trustee),
            &share_bytes(group, s),
        );
    }
    let refs: Vec<&DecryptionShare<G>> = rec.shares.iter().collect();
    let elements = combine(group, &datas, &refs)?;
    let codec = ValueCodec::new(group, p.candidates as u64)?;
    let plaintexts = decode_rows(&codec, &elements, w)?;
    if plaintexts != rec.plaintexts {
        return Err(MixError::Count(
            "the posted plaintexts are not the decryption of the last list".into(),
        ));
    }
    let outcome = count(p.rule, p.candidates, &plaintexts);
    if outcome != rec.outcome {
        return Err(MixError::Count(
            "the posted outcome is not the count of the plaintexts".into(),
        ));
    }
    b.post(
        "result",
        "result".into(),
        &result_bytes(&plaintexts, &outcome),
    );
    if b.entries != rec.board {
        let at = b
            .entries
            .iter()
            .zip(&rec.board)
            .position(|(x, y)| x != y)
            .unwrap_or(b.entries.len().min(rec.board.len()));
        return Err(MixError::Input(format!(
            "board entry {at} differs from its payload"
        )));
    }
    Ok(())
}
