//! Eight P-256 fixed-base powers at once on AVX-512 IFMA (ADR 0014, amended): each 512-bit register holds one
//! 52-bit limb of eight field elements, and the Montgomery products (R = 2^260) are `vpmadd52luq`/`vpmadd52huq`
//! across the eight lanes, so the products of eight powers proceed together. `p256`'s portable product takes
//! about 35 ns one after the other; eight here take about as long as two of those.
//!
//! Values are kept below 2^259 and reduced lazily. A product of two values below 2^259 is below
//! 2^258 + p < 2^259; a sum or difference (a − b is a + 8p − b, and every b is below 8p) is below 2^260 and is
//! folded at once (the bits from 2^256 up times 2^256 mod p, added back) to below 2^257.
//!
//! The mixed additions take no exceptional branch: for a scalar below n, with the signed digits of
//! [`crate::p256_fixed::digits`], the running sum is never ±(the entry added) (ADR 0014 gives the argument),
//! and the lane whose sum is still the identity takes the entry itself. Like the portable tables, the lookups
//! and the lanes' masks depend on the exponent's digits: for public exponents and encryption nonces only.

#![allow(unsafe_code)]
// the limb arrays are walked in lock step by index, which reads as the algorithm
#![allow(clippy::needless_range_loop)]

use std::arch::x86_64::{
    __m512i, __mmask8, _mm512_add_epi64, _mm512_and_si512, _mm512_loadu_si512,
    _mm512_madd52hi_epu64, _mm512_madd52lo_epu64, _mm512_mask_blend_epi64, _mm512_set1_epi64,
    _mm512_setzero_si512, _mm512_srai_epi64, _mm512_srli_epi64, _mm512_storeu_si512,
    _mm512_sub_epi64,
};

use p256::{FieldElement as Fe, Scalar};

use crate::p256_fixed::{digits, wnaf, Affine, Jacobian, HALF, NAF_DIGITS, ODD, WINDOWS};

const MASK: u64 = (1 << 52) - 1;
/// p in radix 2^52
const P: [u64; 5] = [
    0xf_ffff_ffff_ffff,
    0xfff_ffff_ffff,
    0,
    0x10_0000_0000,
    0xffff_ffff_0000,
];
/// 8p in radix 2^52 (below 2^259)
const P8: [u64; 5] = [
    0xf_ffff_ffff_fff8,
    0x7fff_ffff_ffff,
    0,
    0x80_0000_0000,
    0x7_ffff_fff8_0000,
];
/// 2^256 mod p in radix 2^52 (below 2^224)
const FOLD: [u64; 5] = [
    1,
    0xf_f000_0000_0000,
    0xf_ffff_ffff_ffff,
    0xf_ffef_ffff_ffff,
    0xffff,
];
/// R mod p = 2^260 mod p, big-endian: a value's Montgomery form is value · R mod p
const R_MOD_P: [u8; 32] = {
    let hex = b"0000000fffffffeffffffffffffffffffffffff0000000000000000000000010";
    let mut out = [0u8; 32];
    let mut i = 0;
    while i < 32 {
        let hi = hex_digit(hex[2 * i]);
        let lo = hex_digit(hex[2 * i + 1]);
        out[i] = (hi << 4) | lo;
        i += 1;
    }
    out
};

const fn hex_digit(c: u8) -> u8 {
    match c {
        b'0'..=b'9' => c - b'0',
        _ => c - b'a' + 10,
    }
}

/// Whether this CPU runs the eight-lane powers (AVX-512 F and IFMA, and `VOTUM_NO_IFMA` not set).
pub(crate) fn available() -> bool {
    votum_arith::ifma::available()
}

/// A table entry in Montgomery form, radix 2^52: x's five limbs, then y's.
pub(crate) type Entry = [u64; 10];

fn limbs_of(be: &[u8; 32]) -> [u64; 5] {
    let mut words = [0u64; 4];
    for (i, w) in words.iter_mut().enumerate() {
        let mut b = [0u8; 8];
        b.copy_from_slice(&be[32 - 8 * (i + 1)..32 - 8 * i]);
        *w = u64::from_be_bytes(b);
    }
    let mut out = [0u64; 5];
    for (j, limb) in out.iter_mut().enumerate() {
        let bit = 52 * j;
        let (w, off) = (bit / 64, bit % 64);
        let mut v = words[w] >> off;
        if off > 12 && w + 1 < 4 {
            v |= words[w + 1] << (64 - off);
        }
        *limb = v & MASK;
    }
    out
}

fn bytes_of(limbs: &[u64; 5]) -> [u8; 32] {
    let mut words = [0u64; 4];
    for (j, limb) in limbs.iter().enumerate() {
        let bit = 52 * j;
        let (w, off) = (bit / 64, bit % 64);
        words[w] |= limb << off;
        if off > 12 && w + 1 < 4 {
            words[w + 1] |= limb >> (64 - off);
        }
    }
    let mut out = [0u8; 32];
    for (i, w) in words.iter().enumerate() {
        out[32 - 8 * (i + 1)..32 - 8 * i].copy_from_slice(&w.to_be_bytes());
    }
    out
}

/// An affine point's coordinates in Montgomery form (x·R mod p, y·R mod p), for the table.
pub(crate) fn entry(a: &Affine) -> Entry {
    let r = Option::<Fe>::from(Fe::from_bytes(&R_MOD_P.into())).unwrap_or(Fe::ONE);
    let x = limbs_of(&a.x.multiply(&r).to_bytes().into());
    let y = limbs_of(&a.y.multiply(&r).to_bytes().into());
    let mut out = [0u64; 10];
    out[..5].copy_from_slice(&x);
    out[5..].copy_from_slice(&y);
    out
}

/// One limb of eight field elements per register.
#[derive(Clone, Copy)]
struct F8([__m512i; 5]);

#[target_feature(enable = "avx512f,avx512ifma")]
fn splat(v: u64) -> __m512i {
    _mm512_set1_epi64(v as i64)
}

#[target_feature(enable = "avx512f,avx512ifma")]
fn constant(limbs: &[u64; 5]) -> F8 {
    F8([
        splat(limbs[0]),
        splat(limbs[1]),
        splat(limbs[2]),
        splat(limbs[3]),
        splat(limbs[4]),
    ])
}

/// Carries each limb above 52 bits into the next (an arithmetic shift: a limb of a difference may be negative
/// while the value is not).
#[target_feature(enable = "avx512f,avx512ifma")]
fn carry(mut t: [__m512i; 5]) -> [__m512i; 5] {
    let mask = splat(MASK);
    for j in 0..4 {
        let c = _mm512_srai_epi64::<52>(t[j]);
        t[j] = _mm512_and_si512(t[j], mask);
        t[j + 1] = _mm512_add_epi64(t[j + 1], c);
    }
    t
}

/// A value below 2^260 brought below 2^257: its bits from 2^256 up, h < 16, become h · (2^256 mod p).
#[target_feature(enable = "avx512f,avx512ifma")]
fn fold(t: [__m512i; 5]) -> F8 {
    let mut t = carry(t);
    let h = _mm512_srli_epi64::<48>(t[4]);
    t[4] = _mm512_and_si512(t[4], splat((1 << 48) - 1));
    for j in 0..5 {
        t[j] = _mm512_madd52lo_epu64(t[j], h, splat(FOLD[j]));
    }
    // h · FOLD[j] < 2^56: only limbs 1 to 3 have a high part
    for j in 1..4 {
        t[j + 1] = _mm512_madd52hi_epu64(t[j + 1], h, splat(FOLD[j]));
    }
    F8(carry(t))
}

#[target_feature(enable = "avx512f,avx512ifma")]
fn add(a: &F8, b: &F8) -> F8 {
    let mut t = [_mm512_setzero_si512(); 5];
    for j in 0..5 {
        t[j] = _mm512_add_epi64(a.0[j], b.0[j]);
    }
    fold(t)
}

/// a − b as a + 8p − b (every b here is below 8p).
#[target_feature(enable = "avx512f,avx512ifma")]
fn sub(a: &F8, b: &F8) -> F8 {
    let mut t = [_mm512_setzero_si512(); 5];
    for j in 0..5 {
        t[j] = _mm512_sub_epi64(_mm512_add_epi64(a.0[j], splat(P8[j])), b.0[j]);
    }
    fold(t)
}

/// a·b·R⁻¹ mod p, below 2^259 for inputs below 2^259 (operand scanning; −p⁻¹ mod 2^52 is 1, so each step's
/// multiple of p is its lowest limb).
#[target_feature(enable = "avx512f,avx512ifma")]
fn mul(a: &F8, b: &F8) -> F8 {
    let mask = splat(MASK);
    let p = constant(&P);
    let zero = _mm512_setzero_si512();
    let mut t = [zero; 6];
    for i in 0..5 {
        let ai = a.0[i];
        for j in 0..5 {
            t[j] = _mm512_madd52lo_epu64(t[j], ai, b.0[j]);
            t[j + 1] = _mm512_madd52hi_epu64(t[j + 1], ai, b.0[j]);
        }
        let m = _mm512_and_si512(t[0], mask);
        for j in [0, 1, 3, 4] {
            t[j] = _mm512_madd52lo_epu64(t[j], m, p.0[j]);
            t[j + 1] = _mm512_madd52hi_epu64(t[j + 1], m, p.0[j]);
        }
        // the lowest limb is now a multiple of 2^52: divide by 2^52
        let c = _mm512_srli_epi64::<52>(t[0]);
        t[0] = _mm512_add_epi64(t[1], c);
        t[1] = t[2];
        t[2] = t[3];
        t[3] = t[4];
        t[4] = t[5];
        t[5] = zero;
    }
    F8(carry([t[0], t[1], t[2], t[3], t[4]]))
}

#[target_feature(enable = "avx512f,avx512ifma")]
fn blend(k: __mmask8, a: &F8, b: &F8) -> F8 {
    let mut out = a.0;
    for j in 0..5 {
        out[j] = _mm512_mask_blend_epi64(k, a.0[j], b.0[j]);
    }
    F8(out)
}

/// Eight field elements from their limbs, limb j of lane k at `limbs[j][k]`.
#[target_feature(enable = "avx512f,avx512ifma")]
fn load(limbs: &[[u64; 8]; 5]) -> F8 {
    let mut out = [_mm512_setzero_si512(); 5];
    for j in 0..5 {
        // SAFETY: `limbs[j]` is 64 readable bytes; the load is unaligned
        out[j] = unsafe { _mm512_loadu_si512(limbs[j].as_ptr().cast()) };
    }
    F8(out)
}

/// The limbs of eight field elements, limb j of lane k at `[j][k]`.
#[target_feature(enable = "avx512f,avx512ifma")]
fn store(v: &F8) -> [[u64; 8]; 5] {
    let mut out = [[0u64; 8]; 5];
    for j in 0..5 {
        // SAFETY: `out[j]` is 64 writable bytes; the store is unaligned
        unsafe { _mm512_storeu_si512(out[j].as_mut_ptr().cast(), v.0[j]) };
    }
    out
}

/// Jacobian coordinates of eight points, in Montgomery form.
struct J8 {
    x: F8,
    y: F8,
    z: F8,
}

/// P + Q for affine Q (add-1998-cmo-2), no exceptional case.
#[target_feature(enable = "avx512f,avx512ifma")]
fn add_affine(p: &J8, qx: &F8, qy: &F8) -> J8 {
    let z1z1 = mul(&p.z, &p.z);
    let u2 = mul(qx, &z1z1);
    let s2 = mul(qy, &mul(&p.z, &z1z1));
    let h = sub(&u2, &p.x);
    let r = sub(&s2, &p.y);
    let hh = mul(&h, &h);
    let hhh = mul(&h, &hh);
    let v = mul(&p.x, &hh);
    let x3 = sub(&sub(&mul(&r, &r), &hhh), &add(&v, &v));
    let y3 = sub(&mul(&r, &sub(&v, &x3)), &mul(&p.y, &hhh));
    let z3 = mul(&p.z, &h);
    J8 {
        x: x3,
        y: y3,
        z: z3,
    }
}

/// Lane k's value out of Montgomery form, canonical (`None` if it is not a field element, which a value
/// below 2^259 reduced by one product never is).
#[target_feature(enable = "avx512f,avx512ifma")]
fn lane_values(v: &F8) -> [Option<Fe>; 8] {
    // v·1·R⁻¹: below v/R + p, so at most p, which is 0
    let one = F8([
        splat(1),
        _mm512_setzero_si512(),
        _mm512_setzero_si512(),
        _mm512_setzero_si512(),
        _mm512_setzero_si512(),
    ]);
    let limbs = store(&mul(v, &one));
    let mut out = [None; 8];
    for (k, o) in out.iter_mut().enumerate() {
        let l = [
            limbs[0][k],
            limbs[1][k],
            limbs[2][k],
            limbs[3][k],
            limbs[4][k],
        ];
        if l == P {
            *o = Some(Fe::ZERO);
        } else {
            *o = Option::from(Fe::from_bytes(&bytes_of(&l).into()));
        }
    }
    out
}

/// 2P on a = −3 (dbl-2001-b): 3 products, 5 squares. A lane at Z = 0 stays at Z = 0.
#[target_feature(enable = "avx512f,avx512ifma")]
fn double(p: &J8) -> J8 {
    let delta = mul(&p.z, &p.z);
    let gamma = mul(&p.y, &p.y);
    let beta = mul(&p.x, &gamma);
    let t = mul(&sub(&p.x, &delta), &add(&p.x, &delta));
    let alpha = add(&add(&t, &t), &t);
    let beta2 = add(&beta, &beta);
    let beta4 = add(&beta2, &beta2);
    let x3 = sub(&mul(&alpha, &alpha), &add(&beta4, &beta4));
    let yz = add(&p.y, &p.z);
    let z3 = sub(&sub(&mul(&yz, &yz), &gamma), &delta);
    let gamma2 = mul(&gamma, &gamma);
    let gamma4 = add(&gamma2, &gamma2);
    let gamma8 = add(&gamma4, &gamma4);
    let y3 = sub(&mul(&alpha, &sub(&beta4, &x3)), &add(&gamma8, &gamma8));
    J8 {
        x: x3,
        y: y3,
        z: z3,
    }
}

/// The running sums of eight lanes, and which lanes hold more than the identity.
struct Sums {
    acc: J8,
    started: __mmask8,
    one: F8,
}

impl Sums {
    #[target_feature(enable = "avx512f,avx512ifma")]
    fn new() -> Self {
        let one = constant(&limbs_of(&R_MOD_P));
        Self {
            acc: J8 {
                x: one,
                y: one,
                z: F8([_mm512_setzero_si512(); 5]),
            },
            started: 0,
            one,
        }
    }

    /// Adds to each lane its entry (negated where asked; none for a lane that adds nothing). A lane whose sum
    /// is still the identity takes the entry itself.
    #[target_feature(enable = "avx512f,avx512ifma")]
    fn add(&mut self, entries: &[Option<(&Entry, bool)>]) {
        let mut xs = [[0u64; 8]; 5];
        let mut ys = [[0u64; 8]; 5];
        let mut adding: __mmask8 = 0;
        let mut negative: __mmask8 = 0;
        for (k, e) in entries.iter().enumerate() {
            let Some((e, neg)) = e else { continue };
            adding |= 1 << k;
            if *neg {
                negative |= 1 << k;
            }
            for j in 0..5 {
                xs[j][k] = e[j];
                ys[j][k] = e[5 + j];
            }
        }
        if adding == 0 {
            return;
        }
        let zero = F8([_mm512_setzero_si512(); 5]);
        let qx = load(&xs);
        let qy = load(&ys);
        let qy = blend(negative, &qy, &sub(&zero, &qy));
        let sum = add_affine(&self.acc, &qx, &qy);
        // a lane that adds: its sum, or the entry itself while its sum was the identity
        let first = adding & !self.started;
        let later = adding & self.started;
        let acc = &self.acc;
        self.acc = J8 {
            x: blend(first, &blend(later, &acc.x, &sum.x), &qx),
            y: blend(first, &blend(later, &acc.y, &sum.y), &qy),
            z: blend(first, &blend(later, &acc.z, &sum.z), &self.one),
        };
        self.started |= adding;
    }

    /// Each lane's sum out of the lanes: the identity where nothing was added, `None` where Z is 0 (an
    /// addition met its exceptional case, or the sum is the identity).
    #[target_feature(enable = "avx512f,avx512ifma")]
    fn finish(&self, lanes: usize) -> Vec<Option<Jacobian>> {
        let (xs, ys, zs) = (
            lane_values(&self.acc.x),
            lane_values(&self.acc.y),
            lane_values(&self.acc.z),
        );
        (0..lanes)
            .map(|k| {
                if self.started >> k & 1 == 0 {
                    return Some(Jacobian::IDENTITY);
                }
                match (xs[k], ys[k], zs[k]) {
                    (Some(x), Some(y), Some(z)) if !bool::from(z.is_zero()) => {
                        Some(Jacobian::from_coordinates(x, y, z))
                    }
                    _ => None,
                }
            })
            .collect()
    }
}

/// The fixed-base digits' entries of window `w` for each lane.
fn window_entries<'a>(
    tables: &[&'a [Entry]],
    digits: &[[i16; WINDOWS]],
    w: usize,
) -> [Option<(&'a Entry, bool)>; 8] {
    std::array::from_fn(|k| {
        let d = *digits.get(k)?.get(w)?;
        (d != 0).then(|| {
            (
                &tables[k][w * HALF + usize::from(d.unsigned_abs()) - 1],
                d < 0,
            )
        })
    })
}

/// The powers of up to eight exponents, each of its table's entries (`tables[k]`, 81,920 of them), in
/// Jacobian coordinates. A lane whose power is the identity (exponent 0) gives the identity.
#[target_feature(enable = "avx512f,avx512ifma")]
fn pow8(jobs: &[(&[Entry], &Scalar)]) -> Vec<Jacobian> {
    let digits: Vec<[i16; WINDOWS]> = jobs.iter().map(|(_, s)| digits(s)).collect();
    let tables: Vec<&[Entry]> = jobs.iter().map(|(t, _)| *t).collect();
    let mut sums = Sums::new();
    for w in 0..WINDOWS {
        sums.add(&window_entries(&tables, &digits, w));
    }
    // no exceptional case arises here (the module's comment), and a power below n is never the identity
    sums.finish(jobs.len())
        .into_iter()
        .map(|j| j.unwrap_or(Jacobian::IDENTITY))
        .collect()
}

/// A variable base's odd multiples B, 3B, …, 15B in this form.
pub(crate) type Odd = [Entry; ODD];

/// B, 3B, …, 15B in this form.
pub(crate) fn odd_entries(odd: &[Affine; ODD]) -> Odd {
    std::array::from_fn(|i| entry(&odd[i]))
}

/// One job of [`pow2_many`]: a variable base's odd multiples (`None` for the identity) and its exponent, a
/// table's entries (empty for the identity's) and its exponent.
pub(crate) type Pow2Job<'a> = (Option<&'a Odd>, &'a Scalar, &'a [Entry], &'a Scalar);

/// e·B + s·T for up to eight jobs: the variable power by a doubling per digit of e's non-adjacent form and an
/// addition per non-zero digit, then the table's windows added to the same sum. An addition may meet its
/// exceptional case here (a record chooses its bases): the lane's Z then becomes 0 and stays 0, and the lane
/// gives `None`, for the caller to make that job with the portable formulas, which take those cases.
#[target_feature(enable = "avx512f,avx512ifma")]
fn pow2_8(jobs: &[Pow2Job<'_>]) -> Vec<Option<Jacobian>> {
    let nafs: Vec<[i8; NAF_DIGITS]> = jobs
        .iter()
        .map(|(odd, e, _, _)| odd.map_or([0; NAF_DIGITS], |_| wnaf(e)))
        .collect();
    let digits: Vec<[i16; WINDOWS]> = jobs
        .iter()
        .map(|(_, _, t, s)| {
            if t.is_empty() {
                [0; WINDOWS]
            } else {
                digits(s)
            }
        })
        .collect();
    let tables: Vec<&[Entry]> = jobs.iter().map(|(_, _, t, _)| *t).collect();
    let top = nafs
        .iter()
        .filter_map(|n| n.iter().rposition(|d| *d != 0))
        .max();
    let mut sums = Sums::new();
    if let Some(top) = top {
        for i in (0..=top).rev() {
            if sums.started != 0 {
                sums.acc = double(&sums.acc);
            }
            let entries: [Option<(&Entry, bool)>; 8] = std::array::from_fn(|k| {
                let odd = jobs.get(k)?.0?;
                let d = nafs[k][i];
                (d != 0).then(|| (&odd[usize::from(d.unsigned_abs()) / 2], d < 0))
            });
            sums.add(&entries);
        }
    }
    for w in 0..WINDOWS {
        sums.add(&window_entries(&tables, &digits, w));
    }
    sums.finish(jobs.len())
}

/// `lanes` over `jobs` eight at a time, only on a CPU with AVX-512 IFMA (`None` without): `lanes` may call the
/// module's `target_feature` functions.
fn by_eight<J, R>(jobs: &[J], lanes: impl Fn(&[J]) -> Vec<R>) -> Option<Vec<R>> {
    if !available() {
        return None;
    }
    Some(jobs.chunks(8).flat_map(lanes).collect())
}

/// [`pow2_8`] eight jobs at a time; `None` if this CPU lacks AVX-512 IFMA.
pub(crate) fn pow2_many(jobs: &[Pow2Job<'_>]) -> Option<Vec<Option<Jacobian>>> {
    // SAFETY: `by_eight` calls this only after `available()` checked that the CPU has AVX-512 F and IFMA
    by_eight(jobs, |chunk| unsafe { pow2_8(chunk) })
}

/// The powers, eight lanes at a time; `None` if this CPU lacks AVX-512 IFMA.
pub(crate) fn pow_many(jobs: &[(&[Entry], &Scalar)]) -> Option<Vec<Jacobian>> {
    // SAFETY: `by_eight` calls this only after `available()` checked that the CPU has AVX-512 F and IFMA
    by_eight(jobs, |chunk| unsafe { pow8(chunk) })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The eight-lane product, sum, difference and fold agree with `p256`'s field on values at the bounds the
    /// module keeps (up to 2^259 − 1 into a product) and on random ones.
    #[test]
    fn lanes_agree_with_p256s_field() {
        if !available() {
            return;
        }
        use rand_chacha::rand_core::{RngCore, SeedableRng};
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(3);
        let p = {
            let mut be = [0u8; 32];
            be.copy_from_slice(&bytes_of(&P));
            rug::Integer::from_digits(&be, rug::integer::Order::Msf)
        };
        let r = rug::Integer::from(1) << 260u32;
        let r_inv = r.clone().invert(&p).unwrap_or_default();
        let to_limbs = |v: &rug::Integer| -> [u64; 5] {
            let mut out = [0u64; 5];
            for (j, o) in out.iter_mut().enumerate() {
                let part: rug::Integer = (v.clone() >> (52 * j as u32)) & rug::Integer::from(MASK);
                *o = part.to_u64().unwrap_or(0);
            }
            out
        };
        let from_limbs = |l: &[u64; 5]| -> rug::Integer {
            l.iter()
                .rev()
                .fold(rug::Integer::new(), |acc, x| (acc << 52u32) + *x)
        };
        let top = (rug::Integer::from(1) << 259u32) - 1u32;
        let mut values: Vec<rug::Integer> = vec![
            rug::Integer::new(),
            rug::Integer::from(1),
            p.clone(),
            top.clone(),
            top.clone() - 5u32,
            rug::Integer::from(&p * 2u32),
        ];
        for _ in 0..42 {
            let mut b = [0u8; 33];
            rng.fill_bytes(&mut b);
            b[0] &= 0x07;
            values.push(
                rug::Integer::from_digits(&b, rug::integer::Order::Msf) % (top.clone() + 1u32),
            );
        }
        for chunk in values
            .chunks(8)
            .zip(values.iter().rev().collect::<Vec<_>>().chunks(8))
        {
            let (a, b) = chunk;
            let lanes = |vs: &[&rug::Integer]| -> [[u64; 8]; 5] {
                let mut out = [[0u64; 8]; 5];
                for (k, v) in vs.iter().enumerate() {
                    let l = to_limbs(v);
                    for j in 0..5 {
                        out[j][k] = l[j];
                    }
                }
                out
            };
            let a_refs: Vec<&rug::Integer> = a.iter().collect();
            let (la, lb) = (lanes(&a_refs), lanes(b));
            // SAFETY: `available()` checked the CPU
            let results = unsafe { check_ops(&la, &lb) };
            for (k, (av, bv)) in a.iter().zip(b.iter()).enumerate() {
                let get = |which: usize| -> rug::Integer {
                    from_limbs(&[
                        results[which][0][k],
                        results[which][1][k],
                        results[which][2][k],
                        results[which][3][k],
                        results[which][4][k],
                    ])
                };
                let (prod, sum, diff) = (get(0), get(1), get(2));
                assert!(prod < (rug::Integer::from(1) << 259u32), "product bound");
                assert!(sum < (rug::Integer::from(1) << 257u32), "sum bound");
                assert!(diff < (rug::Integer::from(1) << 257u32), "difference bound");
                let want: rug::Integer = (av.clone() * *bv).clone() * &r_inv % &p;
                assert_eq!(prod % &p, want);
                assert_eq!(sum % &p, (av.clone() + *bv) % &p);
                let d: rug::Integer = (av.clone() - *bv) % &p;
                let d = if d < 0 { d + &p } else { d };
                assert_eq!(diff % &p, d);
            }
        }
    }

    #[target_feature(enable = "avx512f,avx512ifma")]
    fn check_ops(a: &[[u64; 8]; 5], b: &[[u64; 8]; 5]) -> [[[u64; 8]; 5]; 3] {
        let (fa, fb) = (load(a), load(b));
        [
            store(&mul(&fa, &fb)),
            store(&add(&fa, &fb)),
            store(&sub(&fa, &fb)),
        ]
    }
}
