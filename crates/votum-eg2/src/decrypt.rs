//! Decryption by a quorum of guardians (spec/65.8, 2.0 §3.6): each available guardian ℓ publishes, for each
//! value, M_ℓ = A^z_ℓ and a commitment (a_ℓ, b_ℓ) = (g^u_ℓ, A^u_ℓ); the challenge is H of the combined
//! values, M = Π M_ℓ^w_ℓ with Lagrange coefficients w_ℓ; each guardian answers v_ℓ = u_ℓ − c·w_ℓ·z_ℓ, and
//! the proof is (c, Σ v_ℓ). A guardian recomputes the challenge from the published shares itself; the
//! coordinator checks each answer against the guardian's public key share, so a wrong one names its guardian.

use rand_chacha::ChaCha20Rng;
use rand_core::{CryptoRng, RngCore, SeedableRng};
use rayon::prelude::*;
use sha2::{Digest, Sha256};
use votum_elgamal::Ciphertext;
use votum_group::{Group, Secret};
use zeroize::Zeroize;

use crate::ceremony::{public_share, Guardian, PublicGuardian};
use crate::group::Eg2Group;
use crate::hashes::{data_decryption_hash, decryption_hash};
use crate::{ContestData, Eg2Error, Pair};

/// What is decrypted: a ciphertext (A, B) (proof under 0x30), or contest data's C₀ (proof under 0x31).
pub enum Target<'a, G: Eg2Group> {
    Vote(&'a Ciphertext<G>),
    Data(&'a ContestData<G>),
}

impl<G: Eg2Group> Target<'_, G> {
    fn base(&self) -> &G::Element {
        match self {
            Target::Vote(ct) => &ct.pad,
            Target::Data(d) => &d.c0,
        }
    }

    fn challenge(
        &self,
        ctx: &Keys<'_, G>,
        ab: (&G::Element, &G::Element),
        m: &G::Element,
    ) -> G::Scalar {
        let h = match self {
            Target::Vote(ct) => decryption_hash(ctx.group, ctx.he, ctx.k, ct, ab, m),
            Target::Data(d) => data_decryption_hash(ctx.group, ctx.he, ctx.k, d, ab, m),
        };
        ctx.group.to_challenge(&h)
    }
}

/// What a list of targets is, as one hash (spec/65.9): SHA-256 over each target's kind and its elements'
/// and bytes' encodings, in order. The coordinator and each guardian compute it from what they read, and a
/// guardian answers only shares made for the same list.
pub fn targets_digest<G: Eg2Group>(group: &G, targets: &[Target<'_, G>]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(b"votum/eg2-decryption-targets/v1\0");
    h.update((targets.len() as u64).to_be_bytes());
    for t in targets {
        match t {
            Target::Vote(ct) => {
                h.update(b"V");
                h.update(group.hash_bytes(&ct.pad));
                h.update(group.hash_bytes(&ct.data));
            }
            Target::Data(d) => {
                h.update(b"D");
                h.update(group.hash_bytes(&d.c0));
                h.update((d.c1.len() as u64).to_be_bytes());
                h.update(&d.c1);
                h.update(d.c2);
            }
        }
    }
    h.finalize().into()
}

/// The public values every decryption step needs.
pub struct Keys<'a, G: Eg2Group> {
    pub group: &'a G,
    pub he: &'a [u8; 32],
    pub k: &'a G::Element,
    /// every guardian's public record
    pub guardians: &'a [PublicGuardian<G>],
    /// each guardian's public key share g^z_ℓ, computed once from the records, by x-coordinate
    shares: Vec<(u32, G::Element)>,
}

impl<'a, G: Eg2Group> Keys<'a, G> {
    pub fn new(
        group: &'a G,
        he: &'a [u8; 32],
        k: &'a G::Element,
        guardians: &'a [PublicGuardian<G>],
    ) -> Self {
        let shares = guardians
            .iter()
            .map(|g| (g.x, public_share(group, guardians, g.x)))
            .collect();
        Self {
            group,
            he,
            k,
            guardians,
            shares,
        }
    }

    /// g^z_ℓ for the guardian at `x`; `Err` for an x no guardian has.
    fn share(&self, x: u32) -> Result<G::Element, Eg2Error> {
        self.shares
            .iter()
            .find(|(gx, _)| *gx == x)
            .map(|(_, s)| s.clone())
            .ok_or_else(|| {
                Eg2Error::Decryption(format!("a share from x-coordinate {x}, no guardian's"))
            })
    }
}

/// One guardian's share of one value: M_ℓ = A^z_ℓ and its commitment (a_ℓ, b_ℓ).
#[derive(Clone)]
pub struct Share<G: Eg2Group> {
    pub x: u32,
    pub m: G::Element,
    pub a: G::Element,
    pub b: G::Element,
}

/// A value's decryption: M (so T = B/M) and its proof (c, v).
pub type Decrypted<G> = (<G as Group>::Element, Pair<G>);

/// One value's combination: M, the commitment (a, b), the challenge c, and each guardian's w_ℓ.
type Aggregate<G> = (
    <G as Group>::Element,
    (<G as Group>::Element, <G as Group>::Element),
    <G as Group>::Scalar,
    Vec<<G as Group>::Scalar>,
);

/// The nonces u_ℓ a guardian keeps between its shares and its answers (wiped when dropped).
pub struct Nonces<G: Eg2Group>(Vec<Secret<G::Scalar>>);

/// The Lagrange coefficient at 0 of `x` within `xs`.
pub(crate) fn lagrange<G: Eg2Group>(group: &G, x: u32, xs: &[u32]) -> Result<G::Scalar, Eg2Error> {
    let mut num = group.scalar_from_u64(1);
    let mut den = group.scalar_from_u64(1);
    for &j in xs {
        if j == x {
            continue;
        }
        let js = group.scalar_from_u64(u64::from(j));
        num = group.scalar_mul(&num, &js);
        den = group.scalar_mul(
            &den,
            &group.scalar_sub(&js, &group.scalar_from_u64(u64::from(x))),
        );
    }
    let inv = group
        .scalar_inverse(&den)
        .map_err(|_| Eg2Error::Decryption("two guardians share an x-coordinate".into()))?;
    Ok(group.scalar_mul(&num, &inv))
}

/// For one value: M = Π M_ℓ^w_ℓ, the challenge c of (Π a_ℓ, Π b_ℓ, M), and each w_ℓ.
fn aggregate<G: Eg2Group>(
    ctx: &Keys<'_, G>,
    target: &Target<'_, G>,
    shares: &[&Share<G>],
) -> Result<Aggregate<G>, Eg2Error> {
    let g = ctx.group;
    let xs: Vec<u32> = shares.iter().map(|s| s.x).collect();
    let ws = xs
        .iter()
        .map(|&x| lagrange(g, x, &xs))
        .collect::<Result<Vec<_>, _>>()?;
    let ms: Vec<G::Element> = shares.iter().map(|s| s.m.clone()).collect();
    let m = g
        .multi_pow(&ms, &ws)
        .map_err(|e| Eg2Error::Decryption(e.to_string()))?;
    let a = shares.iter().fold(g.identity(), |acc, s| g.op(&acc, &s.a));
    let b = shares.iter().fold(g.identity(), |acc, s| g.op(&acc, &s.b));
    let c = target.challenge(ctx, (&a, &b), &m);
    Ok((m, (a, b), c, ws))
}

impl<G: Eg2Group> Guardian<G> {
    /// This guardian's shares of `targets` (M_ℓ and a fresh commitment each), and the nonces it keeps.
    pub fn shares<R: RngCore + CryptoRng>(
        &self,
        group: &G,
        n: u32,
        targets: &[Target<'_, G>],
        rng: &mut R,
    ) -> Result<(Vec<Share<G>>, Nonces<G>), Eg2Error> {
        let z = self.key_share(group, n)?;
        // one generator per target, seeded here, so the targets are shared out over every core
        let mut seeds: Vec<[u8; 32]> = (0..targets.len())
            .map(|_| {
                let mut seed = [0u8; 32];
                rng.fill_bytes(&mut seed);
                seed
            })
            .collect();
        let (shares, nonces): (Vec<Share<G>>, Vec<Secret<G::Scalar>>) = targets
            .par_iter()
            .zip(&seeds)
            .map(|(t, seed)| {
                let mut rng = ChaCha20Rng::from_seed(*seed);
                let base = t.base();
                let u = group.random_secret(&mut rng);
                let share = Share {
                    x: self.x,
                    m: group.pow_secret(base, &z),
                    a: group.pow_secret(group.generator(), &u),
                    b: group.pow_secret(base, &u),
                };
                (share, u)
            })
            .unzip();
        seeds.zeroize();
        Ok((shares, Nonces(nonces)))
    }

    /// Answers v_ℓ = u_ℓ − c·w_ℓ·z_ℓ for each target, the challenge recomputed here from every available
    /// guardian's published shares (`all[i]` is guardian i's list); its own shares must be among them.
    pub fn answer(
        &self,
        ctx: &Keys<'_, G>,
        n: u32,
        targets: &[Target<'_, G>],
        all: &[Vec<Share<G>>],
        nonces: Nonces<G>,
    ) -> Result<Vec<G::Scalar>, Eg2Error> {
        let g = ctx.group;
        let z = self.key_share(g, n)?;
        let mine = all
            .iter()
            .position(|s| s.first().is_some_and(|s| s.x == self.x))
            .ok_or_else(|| Eg2Error::Decryption(format!("{} is not among the shares", self.id)))?;
        if nonces.0.len() != targets.len() || all.iter().any(|s| s.len() != targets.len()) {
            return Err(Eg2Error::Decryption(
                "shares and targets differ in number".into(),
            ));
        }
        targets
            .par_iter()
            .enumerate()
            .map(|(t, target)| {
                let shares: Vec<&Share<G>> = all.iter().map(|s| &s[t]).collect();
                let (_, _, c, ws) = aggregate(ctx, target, &shares)?;
                let cw = g.scalar_mul(&c, &ws[mine]);
                Ok(g.scalar_sub(nonces.0[t].expose(), &g.scalar_mul(&cw, z.expose())))
            })
            .collect()
    }
}

/// Combines the available guardians' shares and answers into M and one proof (c, v) per target, after
/// checking each guardian's answer: a_ℓ = g^v_ℓ (g^z_ℓ)^(c·w_ℓ) and b_ℓ = A^v_ℓ M_ℓ^(c·w_ℓ).
pub fn combine<G: Eg2Group>(
    ctx: &Keys<'_, G>,
    targets: &[Target<'_, G>],
    all: &[Vec<Share<G>>],
    answers: &[Vec<G::Scalar>],
) -> Result<Vec<Decrypted<G>>, Eg2Error> {
    let g = ctx.group;
    if all.len() != answers.len() {
        return Err(Eg2Error::Decryption(
            "shares and answers differ in number".into(),
        ));
    }
    let keys: Vec<G::Element> = all
        .iter()
        .map(|s| ctx.share(s.first().map_or(0, |s| s.x)))
        .collect::<Result<_, _>>()?;
    targets
        .par_iter()
        .enumerate()
        .map(|(t, target)| {
            let shares: Vec<&Share<G>> = all.iter().map(|s| &s[t]).collect();
            let (m, _, c, ws) = aggregate(ctx, target, &shares)?;
            let mut v = g.scalar_from_u64(0);
            for (i, share) in shares.iter().enumerate() {
                let vi = answers[i]
                    .get(t)
                    .ok_or_else(|| Eg2Error::Decryption("an answer is missing".into()))?;
                let cw = g.scalar_mul(&c, &ws[i]);
                let a = g.op(&g.pow_generator(vi), &g.pow(&keys[i], &cw));
                let b = g.op(&g.pow(target.base(), vi), &g.pow(&share.m, &cw));
                if a != share.a || b != share.b {
                    let id = ctx
                        .guardians
                        .iter()
                        .find(|p| p.x == share.x)
                        .map_or_else(|| share.x.to_string(), |p| p.id.clone());
                    return Err(Eg2Error::Guardian {
                        guardian: id,
                        reason: format!("its decryption share of value {t} does not verify"),
                    });
                }
                v = g.scalar_add(&v, vi);
            }
            Ok((m, Pair { c, v }))
        })
        .collect()
}

/// Decrypts `targets` with the guardians `available` (at least the quorum): shares, answers, combination.
pub fn decrypt_with<G: Eg2Group, R: RngCore + CryptoRng>(
    ctx: &Keys<'_, G>,
    n: u32,
    available: &[&Guardian<G>],
    targets: &[Target<'_, G>],
    rng: &mut R,
) -> Result<Vec<Decrypted<G>>, Eg2Error> {
    let mut all = Vec::with_capacity(available.len());
    let mut kept = Vec::with_capacity(available.len());
    for g in available {
        let (shares, nonces) = g.shares(ctx.group, n, targets, rng)?;
        all.push(shares);
        kept.push(nonces);
    }
    let mut answers = Vec::with_capacity(available.len());
    for (g, nonces) in available.iter().zip(kept) {
        answers.push(g.answer(ctx, n, targets, &all, nonces)?);
    }
    combine(ctx, targets, &all, &answers)
}
