//! 2.1's verifiable decryption (spec/66.6, §3.6): the tally by the available guardians with the commitment
//! round (eq. 88: each guardian publishes d_i, the hash of its commitment pair, and reveals the pair only
//! once every d_j is in), the challenge of eq. 90 computed by each guardian itself, its response, and the
//! combination checked answer by answer (Note 3.7) so that a wrong one names its guardian. Challenged
//! ballots are opened by decrypting their ballot nonce under K̂ (eqs. 107–108) and releasing the
//! encryption nonces it derives (eq. 33); a guardian gives its part only for a ballot marked challenged.
//! A cast ballot's contest data is decrypted as a tally value is, with the ballot-data key shares
//! (eqs. 96–103), only where the manifest says so (spec/66.11).

use std::collections::BTreeMap;

use rand_core::{CryptoRng, RngCore};
use rayon::prelude::*;
use votum_elgamal::Ciphertext;
use votum_group::Secret;
use zeroize::Zeroize;

use crate::decrypt::lagrange;
use crate::encrypt::BallotNonce;
use crate::group::Eg2Group;
use crate::manifest::Manifest;
use crate::v21::ballot::selection_nonce_scalar;
use crate::v21::check::{check_data_proof, check_nonce_proof, public_share, xor_pads};
use crate::v21::data;
use crate::v21::hashes::{
    ballot_nonce_key, ballot_nonce_pad, data_commitment, data_decryption_hash, data_pads,
    decryption_commitment, decryption_hash, nonce_part_hash,
};
use crate::v21::keys::{equal_logs_hold, prove_equal_logs, KeyShares};
use crate::v21::record::{Ballot, DataCiphertext, GuardianKey, Keys, Opened, OpenedContest, State};
use crate::{Eg2Error, Pair};

/// One value to decrypt: a tally value (§3.6.5) or a cast ballot's contest data (§3.6.6, spec/66.11).
pub enum Target<'a, G: Eg2Group> {
    /// a tally value: its contest and option indices and (A, B)
    Tally {
        contest: u32,
        option: u32,
        ct: &'a Ciphertext<G>,
    },
    /// contest `contest`'s data on `ballot` (`data` is the ballot's own: [`Target::data`])
    Data {
        ballot: &'a Ballot<G>,
        contest: u32,
        data: &'a DataCiphertext<G>,
    },
}

impl<'a, G: Eg2Group> Target<'a, G> {
    /// Contest `contest`'s data on `ballot`, if the ballot carries any there.
    pub fn data(ballot: &'a Ballot<G>, contest: u32) -> Option<Self> {
        let data = ballot
            .contests
            .iter()
            .find(|c| c.index == contest)?
            .data
            .as_ref()?;
        Some(Target::Data {
            ballot,
            contest,
            data,
        })
    }

    /// What the value is, for messages.
    pub fn name(&self) -> String {
        match self {
            Target::Tally {
                contest, option, ..
            } => format!("contest {contest} option {option}"),
            Target::Data {
                ballot, contest, ..
            } => format!("ballot {}'s contest {contest} data", ballot.id),
        }
    }

    /// A (eq. 86) or C₀ (eq. 96): what a guardian raises to its share.
    fn base(&self) -> &G::Element {
        match self {
            Target::Tally { ct, .. } => &ct.pad,
            Target::Data { data, .. } => &data.c0,
        }
    }

    /// The key share it is decrypted with: z_i for a tally value, ẑ_i for contest data.
    fn share<'k>(&self, shares: &'k KeyShares<G>) -> &'k Secret<G::Scalar> {
        match self {
            Target::Tally { .. } => &shares.z,
            Target::Data { .. } => &shares.z_hat,
        }
    }

    /// Guardian i's commitment pair for this value against the d_i it announced with M_i (eq. 88 or 99); a
    /// pair that does not open d_i names guardian i.
    pub(crate) fn check_pair(
        &self,
        group: &G,
        he: &[u8; 32],
        i: u32,
        pair: (&G::Element, &G::Element),
        (m, d): (&G::Element, &[u8; 32]),
        u: &[u32],
    ) -> Result<(), Eg2Error> {
        if &self.commitment(group, he, i, pair, m, u) != d {
            return Err(guardian(
                i,
                format!(
                    "its commitment pair for {} does not match its d (eq. 88 or 99)",
                    self.name()
                ),
            ));
        }
        Ok(())
    }

    /// d_i (eq. 88 or 99).
    fn commitment(
        &self,
        group: &G,
        he: &[u8; 32],
        i: u32,
        pair: (&G::Element, &G::Element),
        m: &G::Element,
        u: &[u32],
    ) -> [u8; 32] {
        match self {
            Target::Tally {
                contest,
                option,
                ct,
            } => decryption_commitment(group, he, (*contest, *option), i, ct, pair, m, u),
            Target::Data {
                ballot,
                contest,
                data,
            } => data_commitment(group, &ballot.hi, (*contest, i), data.parts(), pair, m, u),
        }
    }

    /// c (eq. 90 or 101), as the hash.
    fn challenge(
        &self,
        group: &G,
        he: &[u8; 32],
        pair: (&G::Element, &G::Element),
        m: &G::Element,
    ) -> [u8; 32] {
        match self {
            Target::Tally {
                contest,
                option,
                ct,
            } => decryption_hash(group, he, (*contest, *option), ct, pair, m),
            Target::Data {
                ballot,
                contest,
                data,
            } => data_decryption_hash(group, &ballot.hi, *contest, data.parts(), pair, m),
        }
    }

    /// Whether guardian `i` may decrypt it (spec/66.11): any tally value; contest data only of a cast
    /// ballot, in a contest whose manifest entry says `decrypt_contest_data`, the ballot's own data, with
    /// its proof (eq. 69) holding.
    fn admit(&self, group: &G, manifest: &Manifest, i: u32) -> Result<(), Eg2Error> {
        let Target::Data {
            ballot,
            contest,
            data,
        } = self
        else {
            return Ok(());
        };
        let refuse = |why: &str| {
            Err(guardian(
                i,
                format!("refuses to decrypt {}: {why}", self.name()),
            ))
        };
        if ballot.state != State::Cast {
            return refuse("the ballot is not cast");
        }
        if !manifest
            .contests
            .values()
            .any(|mc| mc.sequence == *contest && mc.decrypt_data)
        {
            return refuse("the manifest does not say to decrypt the contest's data");
        }
        let own = Target::data(ballot, *contest)
            .is_some_and(|t| matches!(t, Target::Data { data: d, .. } if std::ptr::eq(d, *data)));
        if !own {
            return refuse("it is not the ballot's data for that contest");
        }
        if !group.all_members(&[&data.c0]) || !check_data_proof(group, &ballot.hi, *contest, data) {
            return refuse("its proof does not verify (eq. 69)");
        }
        Ok(())
    }
}

/// Round 1, from guardian i: per target M_i = A^z_i and d_i (eq. 88).
pub struct Announce<G: Eg2Group> {
    pub i: u32,
    pub values: Vec<(G::Element, [u8; 32])>,
}

/// Round 2, from guardian i: per target its commitment pair (a_i, b_i) (eq. 87).
pub struct Reveal<G: Eg2Group> {
    pub i: u32,
    pub pairs: Vec<(G::Element, G::Element)>,
}

fn fail(reason: String) -> Eg2Error {
    Eg2Error::Decryption(reason)
}

/// An error naming guardian i.
pub(crate) fn guardian(i: u32, reason: impl Into<String>) -> Eg2Error {
    Eg2Error::Guardian {
        guardian: format!("guardian {i}"),
        reason: reason.into(),
    }
}

/// The available guardians' announcements, one each, in U's order; `Err` names one missing or doubled.
fn by_guardian<'a, T>(
    available: &[u32],
    items: &'a [T],
    who: impl Fn(&T) -> u32,
    count: impl Fn(&T) -> usize,
    expected: usize,
) -> Result<Vec<&'a T>, Eg2Error> {
    let mut map: BTreeMap<u32, &T> = BTreeMap::new();
    for t in items {
        if !available.contains(&who(t)) {
            return Err(guardian(who(t), "is not one of the available guardians"));
        }
        if map.insert(who(t), t).is_some() {
            return Err(guardian(who(t), "sent twice"));
        }
        if count(t) != expected {
            return Err(guardian(
                who(t),
                format!("sent {} values for {expected} targets", count(t)),
            ));
        }
    }
    available
        .iter()
        .map(|i| {
            map.get(i)
                .copied()
                .ok_or_else(|| guardian(*i, "sent nothing"))
        })
        .collect()
}

/// One guardian's part of one decryption: its nonces u_i are kept here until it answers, then wiped.
pub struct Session<G: Eg2Group> {
    /// the guardian's index i
    i: u32,
    available: Vec<u32>,
    nonces: Vec<Secret<G::Scalar>>,
    pairs: Vec<(G::Element, G::Element)>,
    ms: Vec<G::Element>,
}

impl<G: Eg2Group> Session<G> {
    /// Round 1: M_i, (a_i, b_i) and d_i per target; publishes the M_i and d_i only.
    pub fn start<R: RngCore + CryptoRng>(
        group: &G,
        (he, manifest): (&[u8; 32], &Manifest),
        shares: &KeyShares<G>,
        available: &[u32],
        targets: &[Target<'_, G>],
        rng: &mut R,
    ) -> Result<(Self, Announce<G>), Eg2Error> {
        let mut u: Vec<u32> = available.to_vec();
        u.sort_unstable();
        u.dedup();
        if u.len() != available.len() || !u.contains(&shares.i) {
            return Err(fail(format!(
                "the available guardians {available:?} are not distinct or leave out guardian {}",
                shares.i
            )));
        }
        let mut nonces = Vec::with_capacity(targets.len());
        let mut pairs = Vec::with_capacity(targets.len());
        let mut ms = Vec::with_capacity(targets.len());
        let mut values = Vec::with_capacity(targets.len());
        targets
            .par_iter()
            .try_for_each(|t| t.admit(group, manifest, shares.i))?;
        // the nonces drawn in order from `rng`, the powers on every core
        let drawn: Vec<Secret<G::Scalar>> =
            targets.iter().map(|_| group.random_secret(rng)).collect();
        let made: Vec<_> = targets
            .par_iter()
            .zip(&drawn)
            .map(|(t, n)| {
                let a = group.pow_secret(group.generator(), n);
                let b = group.pow_secret(t.base(), n);
                let m = group.pow_secret(t.base(), t.share(shares));
                let d = t.commitment(group, he, shares.i, (&a, &b), &m, &u);
                (a, b, m, d)
            })
            .collect();
        for (n, (a, b, m, d)) in drawn.into_iter().zip(made) {
            values.push((m.clone(), d));
            nonces.push(n);
            pairs.push((a, b));
            ms.push(m);
        }
        let session = Self {
            i: shares.i,
            available: u,
            nonces,
            pairs,
            ms,
        };
        let i = shares.i;
        Ok((session, Announce { i, values }))
    }

    /// Round 2: the pairs, once an announcement from every available guardian is in (its own unchanged).
    pub fn reveal(&self, announces: &[Announce<G>]) -> Result<Reveal<G>, Eg2Error> {
        let got = by_guardian(
            &self.available,
            announces,
            |a| a.i,
            |a| a.values.len(),
            self.ms.len(),
        )?;
        let own = got
            .iter()
            .find(|a| a.i == self.i)
            .ok_or_else(|| fail("its own announcement is missing".into()))?;
        if own.values.iter().map(|(m, _)| m).ne(self.ms.iter()) {
            return Err(fail(format!(
                "guardian {}'s own partial decryptions were changed",
                self.i
            )));
        }
        Ok(Reveal {
            i: self.i,
            pairs: self.pairs.clone(),
        })
    }

    /// Round 3: checks every guardian's pairs against its d_j (eq. 88), computes M (eq. 86), (a, b)
    /// (eq. 89) and c (eq. 90) itself, and answers v_i = u_i − c·w_i·z_i (eq. 92). The nonces are spent
    /// whether it answers or refuses.
    pub fn answer(
        mut self,
        (group, he): (&G, &[u8; 32]),
        shares: &KeyShares<G>,
        targets: &[Target<'_, G>],
        announces: &[Announce<G>],
        reveals: &[Reveal<G>],
    ) -> Result<Vec<G::Scalar>, Eg2Error> {
        let nonces = std::mem::take(&mut self.nonces);
        if shares.i != self.i {
            return Err(fail(format!(
                "guardian {}'s session answered with guardian {}'s key shares",
                self.i, shares.i
            )));
        }
        let n = targets.len();
        let ann = by_guardian(&self.available, announces, |a| a.i, |a| a.values.len(), n)?;
        let rev = by_guardian(&self.available, reveals, |r| r.i, |r| r.pairs.len(), n)?;
        let own = ann.iter().position(|a| a.i == self.i).unwrap_or(0);
        if ann[own].values.iter().map(|(m, _)| m).ne(self.ms.iter()) || rev[own].pairs != self.pairs
        {
            return Err(fail(format!(
                "guardian {}'s own values were changed",
                self.i
            )));
        }
        let weights: Vec<G::Scalar> = self
            .available
            .iter()
            .map(|i| lagrange(group, *i, &self.available))
            .collect::<Result<_, _>>()?;
        let w_own = weights[own].clone();
        let answer = |(t_idx, t): (usize, &Target<'_, G>)| -> Result<G::Scalar, Eg2Error> {
            for (a, r) in ann.iter().zip(&rev) {
                let (m, d) = &a.values[t_idx];
                let (ai, bi) = &r.pairs[t_idx];
                t.check_pair(group, he, a.i, (ai, bi), (m, d), &self.available)?;
            }
            let (m, pair) = combined(group, &ann, &rev, &weights, t_idx)?;
            let c = group.to_challenge(&t.challenge(group, he, (&pair.0, &pair.1), &m));
            let ci = group.scalar_mul(&c, &w_own);
            Ok(group.scalar_sub(
                nonces[t_idx].expose(),
                &group.scalar_mul(&ci, t.share(shares).expose()),
            ))
        };
        targets.par_iter().enumerate().map(answer).collect()
    }
}

/// M, and the commitment (a, b).
type Combined<G> = (
    <G as votum_group::Group>::Element,
    (
        <G as votum_group::Group>::Element,
        <G as votum_group::Group>::Element,
    ),
);

/// M = Π M_j^w_j and (a, b) = (Π a_j, Π b_j) for target `t`.
fn combined<G: Eg2Group>(
    group: &G,
    ann: &[&Announce<G>],
    rev: &[&Reveal<G>],
    weights: &[G::Scalar],
    t: usize,
) -> Result<Combined<G>, Eg2Error> {
    let ms: Vec<G::Element> = ann.iter().map(|a| a.values[t].0.clone()).collect();
    let m = group
        .multi_pow(&ms, weights)
        .map_err(|e| fail(format!("combining partial decryptions: {e:?}")))?;
    let mut a = group.identity();
    let mut b = group.identity();
    for r in rev {
        a = group.op(&a, &r.pairs[t].0);
        b = group.op(&b, &r.pairs[t].1);
    }
    Ok((m, (a, b)))
}

/// A decrypted value: T = B/M for a tally value, β = M for contest data; and the proof (c, v) (eqs. 90–93
/// or 101–103).
pub struct Decrypted<G: Eg2Group> {
    pub value: G::Element,
    pub proof: Pair<G>,
}

/// The coordinator's combination: each guardian's answer checked (Note 3.7: a_i = (g^z_i)^c_i g^v_i and
/// b_i = A^v_i M_i^c_i, g^z_i from the record's commitments), a wrong one named; then (c, Σ v_i).
#[allow(clippy::too_many_arguments)]
pub fn combine<G: Eg2Group>(
    group: &G,
    he: &[u8; 32],
    keys: &[GuardianKey<G>],
    available: &[u32],
    targets: &[Target<'_, G>],
    announces: &[Announce<G>],
    reveals: &[Reveal<G>],
    answers: &[(u32, Vec<G::Scalar>)],
) -> Result<Vec<Decrypted<G>>, Eg2Error> {
    let mut u = available.to_vec();
    u.sort_unstable();
    let n = targets.len();
    let ann = by_guardian(&u, announces, |a| a.i, |a| a.values.len(), n)?;
    let rev = by_guardian(&u, reveals, |r| r.i, |r| r.pairs.len(), n)?;
    let ans = by_guardian(&u, answers, |a| a.0, |a| a.1.len(), n)?;
    let weights: Vec<G::Scalar> = u
        .iter()
        .map(|i| lagrange(group, *i, &u))
        .collect::<Result<_, _>>()?;
    // g^z_i and g^ẑ_i from the record's commitments
    let public = |commitments: fn(&GuardianKey<G>) -> &[G::Element]| -> Vec<G::Element> {
        u.iter()
            .map(|i| {
                keys.iter().fold(group.identity(), |acc, k| {
                    group.op(&acc, &public_share(group, commitments(k), *i))
                })
            })
            .collect()
    };
    let vote = public(|k| &k.vote);
    let data = if targets.iter().any(|t| matches!(t, Target::Data { .. })) {
        public(|k| &k.data)
    } else {
        Vec::new()
    };
    let one = |(t_idx, t): (usize, &Target<'_, G>)| -> Result<Decrypted<G>, Eg2Error> {
        let publics = match t {
            Target::Tally { .. } => &vote,
            Target::Data { .. } => &data,
        };
        let (m, (a, b)) = combined(group, &ann, &rev, &weights, t_idx)?;
        let c = group.to_challenge(&t.challenge(group, he, (&a, &b), &m));
        let mut v = group.scalar_from_u64(0);
        for (j, i) in u.iter().enumerate() {
            let ci = group.scalar_mul(&c, &weights[j]);
            let vi = &ans[j].1[t_idx];
            let (ai, bi) = &rev[j].pairs[t_idx];
            let mi = &ann[j].values[t_idx].0;
            let a_ok = group.op(&group.pow(&publics[j], &ci), &group.pow_generator(vi)) == *ai;
            let b_ok = group.op(&group.pow(t.base(), vi), &group.pow(mi, &ci)) == *bi;
            if !(a_ok && b_ok) {
                return Err(guardian(
                    *i,
                    format!("its answer for {} does not verify (Note 3.7)", t.name()),
                ));
            }
            v = group.scalar_add(&v, vi);
        }
        let value = match t {
            Target::Tally { ct, .. } => group.div(&ct.data, &m),
            Target::Data { .. } => m,
        };
        Ok(Decrypted {
            value,
            proof: Pair { c, v },
        })
    };
    targets.par_iter().enumerate().map(one).collect()
}

/// The three rounds of [`Session`] with every guardian of `present` in this process, then [`combine`]: the
/// in-process election's decryption (a refusal or a wrong answer is the error).
pub fn in_process<G: Eg2Group, R: RngCore + CryptoRng>(
    group: &G,
    (keys, manifest): (&Keys<G>, &Manifest),
    present: &[&KeyShares<G>],
    targets: &[Target<'_, G>],
    rng: &mut R,
) -> Result<Vec<Decrypted<G>>, Eg2Error> {
    let available: Vec<u32> = present.iter().map(|s| s.i).collect();
    let mut sessions = Vec::with_capacity(present.len());
    let mut announces = Vec::with_capacity(present.len());
    for s in present {
        let (session, ann) =
            Session::start(group, (&keys.he, manifest), s, &available, targets, rng)?;
        sessions.push(session);
        announces.push(ann);
    }
    let reveals = sessions
        .iter()
        .map(|s| s.reveal(&announces))
        .collect::<Result<Vec<_>, _>>()?;
    let answers = sessions
        .into_iter()
        .zip(present)
        .map(|(s, shares)| {
            Ok((
                shares.i,
                s.answer((group, &keys.he), shares, targets, &announces, &reveals)?,
            ))
        })
        .collect::<Result<Vec<_>, Eg2Error>>()?;
    combine(
        group,
        &keys.he,
        &keys.guardians,
        &available,
        targets,
        &announces,
        &reveals,
        &answers,
    )
}

/// Guardian i's part of a ballot nonce: m_i = C₀^ẑ_i (eq. 107), and votum's proof (c, v) that it is (spec/66.6).
pub struct NoncePart<G: Eg2Group> {
    pub m: G::Element,
    pub proof: Pair<G>,
}

impl<G: Eg2Group> Clone for NoncePart<G> {
    fn clone(&self) -> Self {
        Self {
            m: self.m.clone(),
            proof: self.proof.clone(),
        }
    }
}

/// Guardian i's part of a challenged ballot's nonce: m_i = C_0^ẑ_i (eq. 107), after the nonce's proof
/// (eq. 38), with a Chaum–Pedersen proof that log_g(g^ẑ_i) = log_C₀(m_i) so that a wrong part names its
/// guardian (votum's addition, spec/66.6). It refuses a ballot that is not marked challenged: opening a cast
/// one would reveal its vote.
pub fn nonce_share<G: Eg2Group, R: RngCore + CryptoRng>(
    group: &G,
    shares: &KeyShares<G>,
    ballot: &Ballot<G>,
    rng: &mut R,
) -> Result<NoncePart<G>, Eg2Error> {
    if ballot.state != State::Challenged {
        return Err(guardian(
            shares.i,
            format!("refuses to open ballot {}: it is not challenged", ballot.id),
        ));
    }
    if !group.all_members(&[&ballot.nonce.c0])
        || !check_nonce_proof(group, &ballot.hi, &ballot.nonce)
    {
        return Err(guardian(
            shares.i,
            format!(
                "refuses to open ballot {}: its nonce's proof fails (eq. 38)",
                ballot.id
            ),
        ));
    }
    let m = group.pow_secret(&ballot.nonce.c0, &shares.z_hat);
    let proof = prove_equal_logs(group, &ballot.nonce.c0, &shares.z_hat, rng, |a, b| {
        nonce_part_hash(group, &ballot.hi, shares.i, (&ballot.nonce.c0, &m), (a, b))
    });
    Ok(NoncePart { m, proof })
}

/// Whether guardian i's part verifies against g^ẑ_i = Π_j Π_k K̂_jk^(i^k), the guardians' ballot-data
/// commitments in the record: a = g^v (g^ẑ_i)^c, b = C₀^v m_i^c, c recomputed.
pub fn check_nonce_part<G: Eg2Group>(
    group: &G,
    guardians: &[GuardianKey<G>],
    ballot: &Ballot<G>,
    i: u32,
    part: &NoncePart<G>,
) -> bool {
    if !group.all_members(&[&part.m]) {
        return false;
    }
    let share = guardians.iter().fold(group.identity(), |acc, k| {
        group.op(&acc, &public_share(group, &k.data, i))
    });
    equal_logs_hold(
        group,
        (&share, &ballot.nonce.c0, &part.m),
        &part.proof,
        |a, b| nonce_part_hash(group, &ballot.hi, i, (&ballot.nonce.c0, &part.m), (a, b)),
    )
}

/// ξ_B from the guardians' parts m_i (eq. 108), each checked first (a wrong one names its guardian):
/// β_B = Π m_i^w_i, then C₁ ⊕ k₁.
pub(crate) fn recover_ballot_nonce<G: Eg2Group>(
    group: &G,
    guardians: &[GuardianKey<G>],
    ballot: &Ballot<G>,
    parts: &[(u32, NoncePart<G>)],
) -> Result<BallotNonce, Eg2Error> {
    for (i, part) in parts {
        if !check_nonce_part(group, guardians, ballot, *i, part) {
            return Err(guardian(
                *i,
                format!(
                    "its part of ballot {}'s nonce does not verify against its ballot-data key",
                    ballot.id
                ),
            ));
        }
    }
    let xs: Vec<u32> = parts.iter().map(|(i, _)| *i).collect();
    let weights: Vec<G::Scalar> = xs
        .iter()
        .map(|i| lagrange(group, *i, &xs))
        .collect::<Result<_, _>>()?;
    let ms: Vec<G::Element> = parts.iter().map(|(_, p)| p.m.clone()).collect();
    let beta = group
        .multi_pow(&ms, &weights)
        .map_err(|e| fail(format!("combining nonce parts: {e:?}")))?;
    let mut key = ballot_nonce_key(group, &ballot.hi, &ballot.nonce.c0, &beta);
    let mut pad = ballot_nonce_pad(&key);
    key.zeroize();
    let mut xi_b = BallotNonce([0u8; 32]);
    for (n, out) in xi_b.0.iter_mut().enumerate() {
        *out = ballot.nonce.c1[n] ^ pad[n];
    }
    pad.zeroize();
    Ok(xi_b)
}

/// ξ_B from the guardians' parts (eq. 108 and §3.6.7; each part checked against the record's ballot-data
/// commitments), then every encryption nonce and vote of the ballot, and its contest data's nonce and D
/// (eqs. 110–111, spec/66.11): each ciphertext must be (g^ξ, K^(σ+ξ)) with σ ≤ R, and each data's C₀ g^ξ,
/// else the device lied.
pub fn open_ballot<G: Eg2Group>(
    group: &G,
    keys: &Keys<G>,
    manifest: &Manifest,
    ballot: &Ballot<G>,
    parts: &[(u32, NoncePart<G>)],
) -> Result<Opened<G>, Eg2Error> {
    if ballot.pre_encrypted {
        return Err(Eg2Error::Ballot {
            ballot: ballot.id.clone(),
            reason: "a pre-encrypted ballot is opened by its recorder (spec/66.10)".into(),
        });
    }
    let xi_b = recover_ballot_nonce(group, &keys.guardians, ballot, parts)?;
    let k = &keys.k;
    let bad = |reason: String| Eg2Error::Ballot {
        ballot: ballot.id.clone(),
        reason,
    };
    let mut contests = Vec::with_capacity(ballot.contests.len());
    for c in &ballot.contests {
        let limit = manifest
            .contests
            .values()
            .find(|mc| mc.sequence == c.index)
            .map(|mc| mc.option_limit)
            .ok_or_else(|| bad(format!("contest {} is not the manifest's", c.index)))?;
        let mut opts = Vec::with_capacity(c.selections.len());
        for s in &c.selections {
            let xi = selection_nonce_scalar(group, &ballot.hi, (c.index, s.option), &xi_b.0);
            if group.pow_generator(&xi) != s.ct.pad {
                return Err(bad(format!(
                    "the decrypted ballot nonce does not give contest {} option {}'s α",
                    c.index, s.option
                )));
            }
            let k_sigma = group.div(&s.ct.data, &group.pow(k, &xi));
            let mut acc = group.identity();
            let mut found = None;
            for sigma in 0..=limit {
                if acc == k_sigma {
                    found = Some(sigma);
                    break;
                }
                acc = group.op(&acc, k);
            }
            let sigma = found.ok_or_else(|| {
                bad(format!(
                    "contest {} option {} holds no vote in 0…{limit}",
                    c.index, s.option
                ))
            })?;
            opts.push((s.option, sigma, xi));
        }
        let data = match &c.data {
            Some(d) => Some(
                data::open(group, &keys.k_hat, (&ballot.hi, &xi_b.0), c.index, d).map_err(bad)?,
            ),
            None => None,
        };
        contests.push(OpenedContest {
            index: c.index,
            selections: opts,
            data,
        });
    }
    drop(xi_b);
    Ok(Opened {
        id: ballot.id.clone(),
        contests,
    })
}

/// D from a cast ballot's contest data and its decryption β (eqs. 104–106).
pub fn data_plaintext<G: Eg2Group>(
    group: &G,
    target: &Target<'_, G>,
    beta: &G::Element,
) -> Option<Vec<u8>> {
    let Target::Data {
        ballot,
        contest,
        data,
    } = target
    else {
        return None;
    };
    let pads = data_pads(
        group,
        &ballot.hi,
        *contest,
        (&data.c0, beta),
        (data.c1.len() / 32) as u32,
    );
    xor_pads(&data.c1, &pads)
}
