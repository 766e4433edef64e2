//! The encryption device (spec/65.8, 2.0 §3.3): a plaintext ballot to an encrypted one, each option's vote
//! σ as (α, β) = (g^ξ, K^(σ+ξ)) with a range proof of 0…R, each contest's sum with a range proof of 0…L,
//! its contest data in hashed ElGamal, its contest hash, and the ballot's confirmation code. Every nonce
//! derives from the ballot's nonce ξ_B; every power uses the fixed-base tables of g and K (ADR 0002).

use std::collections::BTreeMap;

use rand_chacha::ChaCha20Rng;
use rand_core::{CryptoRng, OsRng, RngCore, SeedableRng};
use rayon::prelude::*;
use votum_elgamal::Ciphertext;
use votum_hash::eg2::Hash;
use zeroize::Zeroize;

use crate::contest_data::{self, Plain, Status};
use crate::group::Eg2Group;
use crate::hashes::{confirmation_code, contest_hash, range_hash};
use crate::manifest::{Manifest, ManifestContest};
use crate::{ContestData, Eg2Error, Pair};

/// A voter's choices: for each contest (by id) the votes per option in the manifest's order, and write-ins.
#[derive(Clone, Debug, Default)]
pub struct PlainBallot {
    pub id: String,
    pub style: String,
    pub contests: BTreeMap<String, PlainContest>,
}

#[derive(Clone, Debug, Default)]
pub struct PlainContest {
    pub votes: Vec<u32>,
    pub write_ins: Vec<String>,
}

pub use crate::State;

pub struct EncryptedSelection<G: Eg2Group> {
    pub id: String,
    pub sequence: u32,
    pub ct: Ciphertext<G>,
    pub proof: Vec<Pair<G>>,
}

pub struct EncryptedContest<G: Eg2Group> {
    pub id: String,
    pub sequence: u32,
    pub hash: [u8; 32],
    pub selections: Vec<EncryptedSelection<G>>,
    pub proof: Vec<Pair<G>>,
    pub data: ContestData<G>,
    pub num_bytes: usize,
}

pub struct EncryptedBallot<G: Eg2Group> {
    pub id: String,
    pub style: String,
    pub device: String,
    pub timestamp: u64,
    pub baux: Vec<u8>,
    pub code: [u8; 32],
    pub he: [u8; 32],
    pub contests: Vec<EncryptedContest<G>>,
    pub state: State,
}

/// What a contest counts and what its contest data says (egk-ec's makeContestData): the votes per option,
/// or all zero when the contest is overvoted (an option above R, or more than L votes and write-ins), with
/// its status, write-ins and, when overvoted, the options chosen. No votes given is a null vote. `Err` when
/// the votes do not match the contest's options.
pub fn counted(mc: &ManifestContest, plain: &PlainContest) -> Result<(Vec<u32>, Plain), String> {
    let mut votes = if plain.votes.is_empty() {
        vec![0; mc.options.len()]
    } else {
        plain.votes.clone()
    };
    if votes.len() != mc.options.len() {
        return Err(format!(
            "{} votes for {} options",
            votes.len(),
            mc.options.len()
        ));
    }
    let voted: Vec<u32> = mc
        .sequences
        .iter()
        .zip(&votes)
        .filter(|(_, v)| **v > 0)
        .map(|(s, _)| *s)
        .collect();
    let total: u64 =
        votes.iter().map(|v| u64::from(*v)).sum::<u64>() + plain.write_ins.len() as u64;
    let over = votes.iter().any(|v| *v > mc.option_limit) || total > u64::from(mc.limit);
    let status = if total == 0 {
        Status::NullVote
    } else if over {
        Status::OverVote
    } else if total < u64::from(mc.limit) {
        Status::UnderVote
    } else {
        Status::Normal
    };
    if over {
        votes.iter_mut().for_each(|v| *v = 0);
    }
    let data = Plain {
        overvotes: if over { voted } else { Vec::new() },
        write_ins: plain.write_ins.clone(),
        status,
    };
    Ok((votes, data))
}

/// The contests on `ballot`'s style, in sequence order; refuses a style the manifest does not have, and a
/// contest voted that is not on the style.
pub(crate) fn style_contests<'m>(
    manifest: &'m Manifest,
    ballot: &PlainBallot,
) -> Result<Vec<(&'m str, &'m ManifestContest)>, Eg2Error> {
    let bad = |reason: String| Eg2Error::Ballot {
        ballot: ballot.id.clone(),
        reason,
    };
    let contests = manifest.contests_for(&ballot.style).ok_or_else(|| {
        bad(format!(
            "ballot style {:?} is not the manifest's",
            ballot.style
        ))
    })?;
    if let Some(id) = ballot
        .contests
        .keys()
        .find(|id| !contests.iter().any(|(c, _)| c == id))
    {
        return Err(bad(format!(
            "contest {id} is not on style {}",
            ballot.style
        )));
    }
    Ok(contests)
}

/// A disjunctive Chaum–Pedersen proof that (g^ξ, K^(σ+ξ)) holds σ ∈ 0…`limit` (2.0 eqs. 46–51, 2.1 eqs.
/// 57–61), its challenge `hash` of the commitments (a_0, b_0), …: the version's own hash. Only fixed-base
/// powers: the simulated branches use α^c = g^(ξc) and β^c = K^((σ+ξ)c).
pub(crate) fn prove_range<G: Eg2Group, R: RngCore + CryptoRng>(
    g: &G,
    k_table: &G::Table,
    (sigma, xi): (u32, &G::Scalar),
    limit: u32,
    rng: &mut R,
    hash: impl FnOnce(&[(G::Element, G::Element)]) -> [u8; 32],
) -> Vec<Pair<G>> {
    let mut commit = RangeCommit::new(g, (sigma, xi), limit, rng);
    let powers = g.pow_fixed_many(&commit.jobs(k_table).collect::<Vec<_>>());
    commit.wipe_exponents();
    let commitments = pairs_of(powers);
    commit.finish(g, xi, &hash(&commitments))
}

/// Consecutive elements paired: (a_0, b_0), (a_1, b_1), …
fn pairs_of<E>(powers: Vec<E>) -> Vec<(E, E)> {
    let mut powers = powers.into_iter();
    let mut out = Vec::with_capacity(powers.len() / 2);
    while let (Some(a), Some(b)) = (powers.next(), powers.next()) {
        out.push((a, b));
    }
    out
}

/// A range proof before its challenge: the exponents of each branch's (a_j, b_j), the simulated branches'
/// (c_j, v_j) and the true branch's nonce u. Its powers are made by the caller, so that many proofs share one
/// batch ([`Group::pow_fixed_many`]: one field inversion on P-256).
pub(crate) struct RangeCommit<G: Eg2Group> {
    sigma: u32,
    pairs: Vec<Pair<G>>,
    u: G::Scalar,
    others: G::Scalar,
    /// g's and K's exponent of each branch, in order
    exponents: Vec<G::Scalar>,
}

impl<G: Eg2Group> RangeCommit<G> {
    pub(crate) fn new<R: RngCore + CryptoRng>(
        g: &G,
        (sigma, xi): (u32, &G::Scalar),
        limit: u32,
        rng: &mut R,
    ) -> Self {
        let s = g.scalar_from_u64(u64::from(sigma));
        let mut s_plus_xi = g.scalar_add(&s, xi);
        let mut pairs: Vec<Pair<G>> = Vec::with_capacity(limit as usize + 1);
        let mut exponents = Vec::with_capacity(2 * (limit as usize + 1));
        let mut u = g.scalar_from_u64(0);
        let mut others = g.scalar_from_u64(0);
        for j in 0..=limit {
            if j == sigma {
                u = g.random_scalar(rng);
                exponents.push(u.clone());
                exponents.push(u.clone());
                pairs.push(Pair {
                    c: g.scalar_from_u64(0),
                    v: g.scalar_from_u64(0),
                });
            } else {
                let c = g.random_scalar(rng);
                let v = g.random_scalar(rng);
                // a_j = g^(v + cξ), b_j = K^(v − jc + c(σ+ξ))
                exponents.push(g.scalar_add(&v, &g.scalar_mul(&c, xi)));
                let jc = g.scalar_mul(&g.scalar_from_u64(u64::from(j)), &c);
                exponents.push(g.scalar_add(&g.scalar_sub(&v, &jc), &g.scalar_mul(&c, &s_plus_xi)));
                others = g.scalar_add(&others, &c);
                pairs.push(Pair { c, v });
            }
        }
        s_plus_xi.zeroize();
        Self {
            sigma,
            pairs,
            u,
            others,
            exponents,
        }
    }

    /// The powers to make: for each branch, g's then K's.
    pub(crate) fn jobs<'a>(
        &'a self,
        k_table: &'a G::Table,
    ) -> impl Iterator<Item = (Option<&'a G::Table>, &'a G::Scalar)> + 'a {
        self.exponents
            .chunks_exact(2)
            .flat_map(move |e| [(None, &e[0]), (Some(k_table), &e[1])])
    }

    fn wipe_exponents(&mut self) {
        self.exponents.iter_mut().for_each(Zeroize::zeroize);
    }

    /// The proof, from the challenge's hash of the commitments.
    pub(crate) fn finish(mut self, g: &G, xi: &G::Scalar, hash: &[u8; 32]) -> Vec<Pair<G>> {
        self.wipe_exponents();
        let c = g.scalar_sub(&g.to_challenge(hash), &self.others);
        let v = g.scalar_sub(&self.u, &g.scalar_mul(&c, xi));
        self.u.zeroize();
        let mut pairs = std::mem::take(&mut self.pairs);
        pairs[self.sigma as usize] = Pair { c, v };
        pairs
    }
}

impl<G: Eg2Group> Drop for RangeCommit<G> {
    /// The true branch's nonce and every exponent (each gives ξ with the public c and v) are wiped, even on a
    /// path that never reaches [`RangeCommit::finish`].
    fn drop(&mut self) {
        self.u.zeroize();
        self.wipe_exponents();
    }
}

/// One contest's selections encrypted and proved, with the proof of their sum (spec/65.4, spec/66.6): every
/// power of the contest made in one batch (one field inversion on P-256). `votes` are each option's σ and ξ,
/// every ξ wiped here once used;
/// the sum's ciphertext is made as (g^Σξ, K^(Σσ+Σξ)), the same element as the product of the selections'.
/// `hash(Some(i), ct, commitments)` is selection i's challenge hash, `hash(None, …)` the sum's.
pub(crate) struct ContestProofs<G: Eg2Group> {
    pub(crate) selections: Vec<(Ciphertext<G>, Vec<Pair<G>>)>,
    pub(crate) sum_proof: Vec<Pair<G>>,
}

pub(crate) fn encrypt_contest<G: Eg2Group, R: RngCore + CryptoRng>(
    g: &G,
    k_table: &G::Table,
    mut votes: Vec<(u32, G::Scalar)>,
    (option_limit, limit): (u32, u32),
    rng: &mut R,
    mut hash: impl FnMut(Option<usize>, &Ciphertext<G>, &[(G::Element, G::Element)]) -> [u8; 32],
) -> ContestProofs<G> {
    let mut sum_xi = g.scalar_from_u64(0);
    let mut total = 0u32;
    let mut exponents = Vec::with_capacity(2 * votes.len() + 2);
    let mut commits = Vec::with_capacity(votes.len() + 1);
    for (sigma, xi) in &votes {
        exponents.push(xi.clone());
        exponents.push(g.scalar_add(&g.scalar_from_u64(u64::from(*sigma)), xi));
        commits.push(RangeCommit::new(g, (*sigma, xi), option_limit, rng));
        sum_xi = g.scalar_add(&sum_xi, xi);
        total += sigma;
    }
    exponents.push(sum_xi.clone());
    exponents.push(g.scalar_add(&g.scalar_from_u64(u64::from(total)), &sum_xi));
    commits.push(RangeCommit::new(g, (total, &sum_xi), limit, rng));
    let mut jobs: Vec<(Option<&G::Table>, &G::Scalar)> = exponents
        .chunks_exact(2)
        .flat_map(|e| [(None, &e[0]), (Some(k_table), &e[1])])
        .collect();
    for c in &commits {
        jobs.extend(c.jobs(k_table));
    }
    let powers = g.pow_fixed_many(&jobs);
    drop(jobs);
    exponents.iter_mut().for_each(Zeroize::zeroize);
    let mut powers = powers.into_iter();
    let cts: Vec<Ciphertext<G>> = pairs_of(powers.by_ref().take(exponents.len()).collect())
        .into_iter()
        .map(|(pad, data)| Ciphertext { pad, data })
        .collect();
    let mut proofs = Vec::with_capacity(commits.len());
    for (i, (commit, ct)) in commits.into_iter().zip(&cts).enumerate() {
        let n = commit.exponents.len();
        let commitments = pairs_of(powers.by_ref().take(n).collect());
        let which = (i < votes.len()).then_some(i);
        let xi = votes.get(i).map_or(&sum_xi, |(_, xi)| xi);
        proofs.push(commit.finish(g, xi, &hash(which, ct, &commitments)));
    }
    sum_xi.zeroize();
    votes.iter_mut().for_each(|(_, xi)| xi.zeroize());
    let sum_proof = proofs.pop().unwrap_or_default();
    ContestProofs {
        // the sum's ciphertext is last, and has no proof left to zip with
        selections: cts.into_iter().zip(proofs).collect(),
        sum_proof,
    }
}

/// An encryption device: the election's K (with its table), H_E, the manifest, its name and B_aux.
pub struct Device<'m, G: Eg2Group> {
    pub group: G,
    pub k: G::Element,
    /// K's encoding, made once (each P-256 encoding costs a field inversion)
    k_bytes: Vec<u8>,
    k_table: G::Table,
    pub he: [u8; 32],
    manifest: &'m Manifest,
    pub name: String,
    pub baux: Vec<u8>,
}

/// The ballot's nonce ξ_B, wiped when dropped.
pub struct BallotNonce(pub(crate) [u8; 32]);

impl BallotNonce {
    /// A ballot nonce from its bytes (a store of pre-encrypted ballots keeps them; tests forge them).
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }

    /// Its bytes, for the printer's store (§4.2: the store keeps ξ_B until the ballot is recorded).
    pub fn bytes(&self) -> &[u8; 32] {
        &self.0
    }
}

impl Drop for BallotNonce {
    fn drop(&mut self) {
        self.0.zeroize();
    }
}

impl<'m, G: Eg2Group> Device<'m, G> {
    pub fn new(group: G, k: G::Element, he: [u8; 32], manifest: &'m Manifest, name: &str) -> Self {
        let k_table = group.table(&k);
        let k_bytes = group.hash_bytes(&k);
        Self {
            group,
            k,
            k_bytes,
            k_table,
            he,
            manifest,
            name: name.to_owned(),
            baux: name.as_bytes().to_vec(),
        }
    }

    /// ξ = H(H_E; 0x20, ξ_B, extra…) as a scalar.
    fn nonce(&self, xb: &BallotNonce, extra: &[&[u8]]) -> G::Scalar {
        let mut h = Hash::new(&self.he).byte(0x20).bytes(&xb.0);
        for e in extra {
            h = h.bytes(e);
        }
        let mut bytes = h.finish();
        let s = self.group.to_challenge(&bytes);
        bytes.zeroize();
        s
    }

    fn contest<R: RngCore + CryptoRng>(
        &self,
        xb: &BallotNonce,
        id: &str,
        mc: &ManifestContest,
        plain: Option<&PlainContest>,
        ballot: &str,
        rng: &mut R,
    ) -> Result<EncryptedContest<G>, Eg2Error> {
        let g = &self.group;
        let bad = |reason: String| Eg2Error::Ballot {
            ballot: ballot.to_owned(),
            reason: format!("contest {id}: {reason}"),
        };
        let none = PlainContest::default();
        let (votes, plain_data) = counted(mc, plain.unwrap_or(&none)).map_err(bad)?;
        let seq = mc.sequence.to_be_bytes();
        let nonces: Vec<(u32, G::Scalar)> = mc
            .sequences
            .iter()
            .zip(&votes)
            .map(|(oseq, sigma)| (*sigma, self.nonce(xb, &[&seq, &oseq.to_be_bytes()])))
            .collect();
        let proved = encrypt_contest(
            g,
            &self.k_table,
            nonces,
            (mc.option_limit, mc.limit),
            rng,
            |_, ct, cm| {
                range_hash(
                    g,
                    &self.he,
                    &self.k_bytes,
                    ct,
                    cm.iter().map(|(a, b)| (a, b)),
                )
            },
        );
        let proof = proved.sum_proof;
        let selections: Vec<EncryptedSelection<G>> = proved
            .selections
            .into_iter()
            .zip(mc.options.iter().zip(&mc.sequences))
            .map(|((ct, proof), (opt, oseq))| EncryptedSelection {
                id: opt.clone(),
                sequence: *oseq,
                ct,
                proof,
            })
            .collect();
        let cts: Vec<&Ciphertext<G>> = selections.iter().map(|s| &s.ct).collect();
        let hash = contest_hash(g, &self.he, mc.sequence, &self.k_bytes, &cts);
        let mut xd = self.nonce(xb, &[&seq, b"contest_data"]);
        let mut message = plain_data.to_message(mc.limit);
        let (data, num_bytes) =
            contest_data::encrypt(g, &self.he, &self.k, &self.k_table, id, &message, &xd);
        xd.zeroize();
        message.zeroize();
        Ok(EncryptedContest {
            id: id.to_owned(),
            sequence: mc.sequence,
            hash,
            selections,
            proof,
            data,
            num_bytes,
        })
    }

    /// Encrypts one ballot: every contest of its style, in sequence order (a contest the voter left out is
    /// a null vote). Refuses a style or contest the manifest does not have, and a wrong number of votes.
    pub fn encrypt<R: RngCore + CryptoRng>(
        &self,
        ballot: &PlainBallot,
        state: State,
        timestamp: u64,
        rng: &mut R,
    ) -> Result<EncryptedBallot<G>, Eg2Error> {
        let contests = style_contests(self.manifest, ballot)?;
        let mut xb = BallotNonce([0u8; 32]);
        rng.fill_bytes(&mut xb.0);
        let encrypted = contests
            .iter()
            .map(|(id, mc)| self.contest(&xb, id, mc, ballot.contests.get(*id), &ballot.id, rng))
            .collect::<Result<Vec<_>, _>>()?;
        let hashes: Vec<[u8; 32]> = encrypted.iter().map(|c| c.hash).collect();
        Ok(EncryptedBallot {
            id: ballot.id.clone(),
            style: ballot.style.clone(),
            device: self.name.clone(),
            timestamp,
            baux: self.baux.clone(),
            code: confirmation_code(&self.he, &hashes, &self.baux),
            he: self.he,
            contests: encrypted,
            state,
        })
    }

    /// Encrypts many ballots on every core, each with its own generator seeded from the operating system.
    pub fn encrypt_many(
        &self,
        ballots: &[(PlainBallot, State)],
        timestamp: u64,
    ) -> Result<Vec<EncryptedBallot<G>>, Eg2Error> {
        ballots
            .par_iter()
            .map(|(b, state)| {
                let mut rng = ChaCha20Rng::from_rng(OsRng)
                    .map_err(|e| Eg2Error::Io(format!("no randomness: {e}")))?;
                self.encrypt(b, *state, timestamp, &mut rng)
            })
            .collect()
    }
}
