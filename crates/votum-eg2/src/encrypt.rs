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
    let s = g.scalar_from_u64(u64::from(sigma));
    let mut s_plus_xi = g.scalar_add(&s, xi);
    let mut pairs: Vec<Pair<G>> = Vec::with_capacity(limit as usize + 1);
    let mut commitments = Vec::with_capacity(limit as usize + 1);
    let mut u = g.scalar_from_u64(0);
    let mut others = g.scalar_from_u64(0);
    for j in 0..=limit {
        if j == sigma {
            u = g.random_scalar(rng);
            commitments.push((g.pow_generator(&u), g.pow_table(k_table, &u)));
            pairs.push(Pair {
                c: g.scalar_from_u64(0),
                v: g.scalar_from_u64(0),
            });
        } else {
            let c = g.random_scalar(rng);
            let v = g.random_scalar(rng);
            // a_j = g^(v + cξ), b_j = K^(v − jc + c(σ+ξ))
            let a = g.pow_generator(&g.scalar_add(&v, &g.scalar_mul(&c, xi)));
            let jc = g.scalar_mul(&g.scalar_from_u64(u64::from(j)), &c);
            let e = g.scalar_add(&g.scalar_sub(&v, &jc), &g.scalar_mul(&c, &s_plus_xi));
            commitments.push((a, g.pow_table(k_table, &e)));
            others = g.scalar_add(&others, &c);
            pairs.push(Pair { c, v });
        }
    }
    let c = g.scalar_sub(&g.to_challenge(&hash(&commitments)), &others);
    let v = g.scalar_sub(&u, &g.scalar_mul(&c, xi));
    u.zeroize();
    s_plus_xi.zeroize();
    pairs[sigma as usize] = Pair { c, v };
    pairs
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

    /// A range proof that (α, β) = (g^ξ, K^(σ+ξ)) holds σ ∈ 0…`limit` (2.0 eq. 46–51).
    fn range_proof<R: RngCore + CryptoRng>(
        &self,
        ct: &Ciphertext<G>,
        sigma: u32,
        xi: &G::Scalar,
        limit: u32,
        rng: &mut R,
    ) -> Vec<Pair<G>> {
        prove_range(&self.group, &self.k_table, (sigma, xi), limit, rng, |cm| {
            range_hash(
                &self.group,
                &self.he,
                &self.k_bytes,
                ct,
                cm.iter().map(|(a, b)| (a, b)),
            )
        })
    }

    fn encrypt_vote(&self, sigma: u32, xi: &G::Scalar) -> Ciphertext<G> {
        let g = &self.group;
        let e = g.scalar_add(&g.scalar_from_u64(u64::from(sigma)), xi);
        Ciphertext {
            pad: g.pow_generator(xi),
            data: g.pow_table(&self.k_table, &e),
        }
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
        let mut selections = Vec::with_capacity(votes.len());
        let mut sum_xi = g.scalar_from_u64(0);
        let mut sum_ct = Ciphertext::zero(g);
        for ((opt, oseq), sigma) in mc.options.iter().zip(&mc.sequences).zip(&votes) {
            let mut xi = self.nonce(xb, &[&seq, &oseq.to_be_bytes()]);
            let ct = self.encrypt_vote(*sigma, &xi);
            let proof = self.range_proof(&ct, *sigma, &xi, mc.option_limit, rng);
            sum_xi = g.scalar_add(&sum_xi, &xi);
            xi.zeroize();
            sum_ct = sum_ct.add(g, &ct);
            selections.push(EncryptedSelection {
                id: opt.clone(),
                sequence: *oseq,
                ct,
                proof,
            });
        }
        let total_votes: u32 = votes.iter().sum();
        let proof = self.range_proof(&sum_ct, total_votes, &sum_xi, mc.limit, rng);
        sum_xi.zeroize();
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
