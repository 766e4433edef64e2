//! Batch verification of ballots (spec/62.4).
//!
//! After the cheap checks (hashes, challenges, Jacobi symbols), all of a batch's proof equations
//! and the subgroup membership of every ciphertext are checked in one random linear combination,
//! one multi-exponentiation:
//!
//! `g^{Σ…} · K^{Σ…} = Π a0^{r1} a1^{r2} b0^{r3} b1^{r4} α^{e_α + q·t} β^{e_β + q·t'} · Π a^{r5} b^{r6}`,
//! the weighted product of every disjunctive equation (`g^v0 = a0·α^c0`, `g^v1 = a1·α^c1`,
//! `K^v0 = b0·β^c0`, `g^c1·K^v1 = b1·β^c1`) and constant-proof equation (`g^v = a·A^c`,
//! `g^{cL}·K^v = b·B^c`, with `A = Πα`, `B = Πβ` distributed over the selections), times
//! `(α^q)^t (β^q)^{t'}`, which is 1 exactly for subgroup members.
//!
//! Weights are 128-bit and secret, drawn after the ballots are fixed. Soundness (spec/62.4): every
//! element has Jacobi symbol 1, so it lies in the quadratic residues, a cyclic group of order
//! `q·r'` with `r' = (p−1)/(2q)` prime; both prime factors exceed 2^128, so a false equation or a
//! non-member survives the combination with probability at most 2^−127.

use rand_chacha::ChaCha20Rng;
use rand_core::{CryptoRng, RngCore, SeedableRng};
use rayon::prelude::*;
use votum_arith::{multi_pow_parallel, FixedBaseTable, Integer};
use votum_elgamal::Ciphertext;
use votum_group::{Group, ModElement, ModpGroup};

use votum_proofs::{ChaumPedersenProof, SchnorrProof};

use crate::encrypted::EncryptedBallot;

/// A generator seeded from the operating system, for batch weights.
pub fn batch_rng() -> ChaCha20Rng {
    ChaCha20Rng::from_entropy()
}

/// A fresh secret 128-bit weight for a random linear combination.
pub(crate) fn weight<R: RngCore>(rng: &mut R) -> Integer {
    let mut bytes = [0u8; 16];
    rng.fill_bytes(&mut bytes);
    Integer::from_digits(&bytes, votum_arith::Order::Msf)
}

/// One ballot's share of the two combinations.
struct Terms {
    g_exp: Integer,
    k_exp: Integer,
    bases: Vec<Integer>,
    exps: Vec<Integer>,
}

fn terms(g: &ModpGroup, b: &EncryptedBallot, seed: [u8; 32]) -> Terms {
    let q = g.order();
    let mut rng = ChaCha20Rng::from_seed(seed);
    let int = |x: &votum_group::ModScalar| x.value().clone();
    let el = |x: &ModElement| x.value().clone();
    let n: usize = b.contests.iter().map(|c| c.selections.len()).sum();
    let mut t = Terms {
        g_exp: Integer::new(),
        k_exp: Integer::new(),
        bases: Vec::with_capacity(6 * n + 2 * b.contests.len()),
        exps: Vec::with_capacity(6 * n + 2 * b.contests.len()),
    };
    for c in &b.contests {
        // the constant proof: g^v = a·A^c and g^{cL}·K^v = b·B^c
        let (r5, r6) = (weight(&mut rng), weight(&mut rng));
        let p = &c.proof;
        let cc = int(&p.challenge);
        let v = int(&p.response);
        t.g_exp += Integer::from(&r5 * &v) + Integer::from(&r6 * &cc) * p.constant;
        t.k_exp += Integer::from(&r6 * &v);
        t.bases.push(el(&p.pad));
        t.exps.push(r5.clone());
        t.bases.push(el(&p.data));
        t.exps.push(r6.clone());
        let a_share = Integer::from(&r5 * &cc);
        let b_share = Integer::from(&r6 * &cc);
        for s in &c.selections {
            let d = &s.proof;
            let (r1, r2, r3, r4) = (
                weight(&mut rng),
                weight(&mut rng),
                weight(&mut rng),
                weight(&mut rng),
            );
            let (c0, c1, v0, v1) = (
                int(&d.zero_challenge),
                int(&d.one_challenge),
                int(&d.zero_response),
                int(&d.one_response),
            );
            t.g_exp +=
                Integer::from(&r1 * &v0) + Integer::from(&r2 * &v1) + Integer::from(&r4 * &c1);
            t.k_exp += Integer::from(&r3 * &v0) + Integer::from(&r4 * &v1);
            let e_alpha = (Integer::from(&r1 * &c0) + Integer::from(&r2 * &c1) + &a_share) % q;
            let e_beta = (Integer::from(&r3 * &c0) + Integer::from(&r4 * &c1) + &b_share) % q;
            for (base, e) in [
                (&d.zero_pad, r1),
                (&d.one_pad, r2),
                (&d.zero_data, r3),
                (&d.one_data, r4),
            ] {
                t.bases.push(el(base));
                t.exps.push(e);
            }
            // α, β: their equations' exponent mod q, plus q·t with a fresh weight t, which
            // multiplies the product by (α^q)^t: 1 for a member, else caught (spec/62.4)
            t.bases.push(el(&s.ciphertext.pad));
            t.exps.push(e_alpha + Integer::from(q * &weight(&mut rng)));
            t.bases.push(el(&s.ciphertext.data));
            t.exps.push(e_beta + Integer::from(q * &weight(&mut rng)));
        }
    }
    t.g_exp %= q;
    t.k_exp %= q;
    t
}

/// Whether every proof equation of every ballot holds and every ciphertext is in the subgroup
/// (up to a 2^−127 error). The ballots must have passed the cheap checks.
pub fn equations_hold<R: RngCore + CryptoRng>(
    g: &ModpGroup,
    public_key: &ModElement,
    key_table: Option<&FixedBaseTable>,
    ballots: &[&EncryptedBallot],
    rng: &mut R,
) -> bool {
    let m = g.modulus();
    let seeds: Vec<[u8; 32]> = ballots
        .iter()
        .map(|_| {
            let mut s = [0u8; 32];
            rng.fill_bytes(&mut s);
            s
        })
        .collect();
    let parts: Vec<Terms> = ballots
        .par_iter()
        .zip(seeds)
        .map(|(b, seed)| terms(g, b, seed))
        .collect();
    let mut g_exp = Integer::new();
    let mut k_exp = Integer::new();
    let (mut bases, mut exps) = (Vec::new(), Vec::new());
    for t in parts {
        g_exp += t.g_exp;
        k_exp += t.k_exp;
        bases.extend(t.bases);
        exps.extend(t.exps);
    }
    let Ok(rhs) = multi_pow_parallel(m, &bases, &exps) else {
        return false;
    };
    let g_s = g.scalar_from_integer(&g_exp);
    let k_s = g.scalar_from_integer(&k_exp);
    // once per batch: g from its table if this process has one, K from the caller's table if it
    // keeps one (a service checking many ballots), else a two-base multi-exponentiation (a
    // verifier should not build 48 MiB tables of g and K for one power each)
    let lhs = match key_table {
        Some(table) => Ok(g.op(&g.pow_generator_if_built(&g_s), &g.pow_table(table, &k_s))),
        None => g.multi_pow(&[g.generator().clone(), public_key.clone()], &[g_s, k_s]),
    };
    lhs.is_ok_and(|lhs| lhs.value() == &rhs)
}

/// One decryption-share proof to check in a batch: which key, which ciphertext, the share `M`
/// and its proof.
pub struct ShareCheck<'a> {
    pub key: usize,
    pub ciphertext: usize,
    pub share: &'a ModElement,
    pub proof: &'a ChaumPedersenProof<ModpGroup>,
}

/// Whether every Chaum–Pedersen share proof holds (`g^v = a·K^c`, `α^v = b·M^c`), in one random
/// linear combination (spec/64.4). Keys and ciphertexts must be subgroup members; shares and
/// commitments must have Jacobi symbol 1 and their challenges must have been recomputed.
pub fn shares_hold<R: RngCore + CryptoRng>(
    g: &ModpGroup,
    keys: &[&ModElement],
    ciphertexts: &[Ciphertext<ModpGroup>],
    checks: &[ShareCheck<'_>],
    rng: &mut R,
) -> bool {
    let q = g.order();
    let mut g_exp = Integer::new();
    let mut key_exps = vec![Integer::new(); keys.len()];
    let mut alpha_exps = vec![Integer::new(); ciphertexts.len()];
    let mut bases = Vec::with_capacity(3 * checks.len() + keys.len());
    let mut exps = Vec::with_capacity(3 * checks.len() + keys.len());
    for chk in checks {
        let (r, s) = (weight(rng), weight(rng));
        let p = chk.proof;
        let (c, v) = (p.challenge.value(), p.response.value());
        g_exp += Integer::from(&r * v);
        alpha_exps[chk.ciphertext] += Integer::from(&s * v);
        key_exps[chk.key] += Integer::from(&r * c);
        bases.push(p.pad.value().clone());
        exps.push(r);
        bases.push(p.data.value().clone());
        exps.push(s.clone());
        // M is only known to be a quadratic residue: its exponent is not reduced
        bases.push(chk.share.value().clone());
        exps.push(s * c);
    }
    for (k, e) in keys.iter().zip(key_exps) {
        bases.push(k.value().clone());
        exps.push(e % q);
    }
    // the α side moves to the right with exponents q − e (the α are members, of order q), so one
    // multi-exponentiation, split over the threads, holds every base: g^{Σ r·v} = Π(...)·Π α^{−Σ s·v}
    for (c, e) in ciphertexts.iter().zip(alpha_exps) {
        let e = e % q;
        if e != 0 {
            bases.push(c.pad.value().clone());
            exps.push(q - e);
        }
    }
    let Ok(rhs) = multi_pow_parallel(g.modulus(), &bases, &exps) else {
        return false;
    };
    // once per batch: from g's table if this process has built it, else a plain power
    let gv = g.pow_generator_if_built(&g.scalar_from_integer(&g_exp));
    *gv.value() == rhs
}

/// One Schnorr proof of a guardian record: the coefficient commitment `K` it is about (a subgroup
/// member, checked when the record was read) and the proof.
pub struct SchnorrCheck<'a> {
    pub public: &'a ModElement,
    pub proof: &'a SchnorrProof<ModpGroup>,
}

/// Whether every Schnorr proof holds (`g^u = h·K^c`), in one random linear combination (spec/63.1):
/// `g^{Σ r_j u_j} = Π h_j^{r_j} · K_j^{r_j c_j}` with fresh secret 128-bit weights. Each `K` must be
/// a member, each `h` must have Jacobi symbol 1 and each challenge must have been recomputed.
pub fn schnorr_hold<R: RngCore + CryptoRng>(
    g: &ModpGroup,
    checks: &[SchnorrCheck<'_>],
    rng: &mut R,
) -> bool {
    let q = g.order();
    let mut g_exp = Integer::new();
    let mut bases = Vec::with_capacity(2 * checks.len());
    let mut exps = Vec::with_capacity(2 * checks.len());
    for chk in checks {
        let r = weight(rng);
        let p = chk.proof;
        g_exp += Integer::from(&r * p.response.value());
        bases.push(chk.public.value().clone());
        exps.push(Integer::from(&r * p.challenge.value()) % q);
        // h is only known to be a quadratic residue: its exponent (128 bits) is not reduced
        bases.push(p.commitment.value().clone());
        exps.push(r);
    }
    let Ok(rhs) = multi_pow_parallel(g.modulus(), &bases, &exps) else {
        return false;
    };
    let lhs = g.pow_generator_if_built(&g.scalar_from_integer(&g_exp));
    *lhs.value() == rhs
}
