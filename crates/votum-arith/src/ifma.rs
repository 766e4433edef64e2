//! Exponentiation with public exponents on AVX-512 IFMA (docs/adr/0011): Montgomery products in
//! radix 2^52, eight limbs per 512-bit register, `vpmadd52luq`/`vpmadd52huq` for the limb products.
//! GMP has no kernel for these instructions; on a CPU that has them a 2048-bit product takes about a
//! quarter of GMP's time. Variable time: for public exponents only ([`crate::Modulus::pow`]); secret
//! exponents go through `secret_base`.
//!
//! The product is the "almost Montgomery multiplication" of Gueron and Krasnov (operand scanning, one
//! limb of `a` per step, the reduction interleaved): for inputs below 2p it returns a value below 2p
//! congruent to a·b·R⁻¹ (R = 2^(52n)) when 4p < R, and the exponentiation reduces once at the end.
//! A modulus needing L limbs with two spare bits is padded to n = 8⌈L/8⌉ limbs.

#![allow(unsafe_code)]
// the register arrays (x, y, b, p) are walked in lock step by limb index, which reads as the algorithm
#![allow(clippy::needless_range_loop)]

use std::arch::x86_64::{
    _mm512_add_epi64, _mm512_alignr_epi64, _mm512_castsi512_si128, _mm512_loadu_si512,
    _mm512_madd52hi_epu64, _mm512_madd52lo_epu64, _mm512_set1_epi64, _mm512_setzero_si512,
    _mm512_storeu_si512, _mm_cvtsi128_si64,
};

use rug::integer::Order;
use rug::Integer;

const LIMB_BITS: u32 = 52;
const MASK: u64 = (1 << LIMB_BITS) - 1;
/// The most registers of limbs a modulus may use (10 × 8 limbs of 52 bits: 4,160 bits).
const MAX_VECTORS: usize = 10;

/// Whether this CPU has AVX-512 IFMA (and AVX-512 F), and `VOTUM_NO_IFMA` is not set.
pub fn available() -> bool {
    static AVAILABLE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        std::env::var_os("VOTUM_NO_IFMA").is_none()
            && std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512ifma")
    })
}

/// The constants for one modulus.
#[derive(Clone, Debug)]
pub(crate) struct IfmaContext {
    /// limbs of p in radix 2^52, n of them (a multiple of 8)
    p: Vec<u64>,
    /// −p⁻¹ mod 2^52
    k0: u64,
    /// R² mod p as limbs (to enter the Montgomery domain with one product)
    r2: Vec<u64>,
    n: usize,
    modulus: Integer,
}

/// Integer (0 ≤ x < 2^(52n)) → n limbs of 52 bits.
fn to_limbs(x: &Integer, n: usize) -> Vec<u64> {
    let words: Vec<u64> = x.to_digits(Order::Lsf);
    let mut out = vec![0u64; n];
    for (i, limb) in out.iter_mut().enumerate() {
        let bit = i * LIMB_BITS as usize;
        let (w, s) = (bit / 64, bit % 64);
        let lo = words.get(w).copied().unwrap_or(0) >> s;
        let hi = if s > 12 {
            words.get(w + 1).copied().unwrap_or(0) << (64 - s)
        } else {
            0
        };
        *limb = (lo | hi) & MASK;
    }
    out
}

/// n limbs of 52 bits (each below 2^52) → Integer.
fn from_limbs(limbs: &[u64]) -> Integer {
    let mut words = vec![0u64; (limbs.len() * LIMB_BITS as usize).div_ceil(64) + 1];
    for (i, &limb) in limbs.iter().enumerate() {
        let bit = i * LIMB_BITS as usize;
        let (w, s) = (bit / 64, bit % 64);
        words[w] |= limb << s;
        if s > 12 {
            words[w + 1] |= limb >> (64 - s);
        }
    }
    Integer::from_digits(&words, Order::Lsf)
}

impl IfmaContext {
    /// The context for an odd modulus of 416 to 4,096 bits; `None` for another size or without the
    /// instructions.
    pub(crate) fn new(p: &Integer) -> Option<Self> {
        let bits = p.significant_bits();
        if !available() || !(416..=4096).contains(&bits) || p.is_even() {
            return None;
        }
        // two spare bits at least (52n ≥ bits + 2, so 4p < R): the products of values below 2p
        // stay below 2p
        let n = ((bits as usize + 2).div_ceil(LIMB_BITS as usize)).div_ceil(8) * 8;
        if n / 8 > MAX_VECTORS {
            return None;
        }
        let p0 = p.to_digits::<u64>(Order::Lsf).first().copied().unwrap_or(1) & MASK;
        // p0⁻¹ mod 2^52 by Newton's iteration, then negated
        let mut inv: u64 = 1;
        for _ in 0..6 {
            inv = inv.wrapping_mul(2u64.wrapping_sub(p0.wrapping_mul(inv)));
        }
        let k0 = inv.wrapping_neg() & MASK;
        let r2 = Integer::from(Integer::u_pow_u(2, 2 * LIMB_BITS * n as u32)) % p;
        Some(Self {
            p: to_limbs(p, n),
            k0,
            r2: to_limbs(&r2, n),
            n,
            modulus: p.clone(),
        })
    }

    /// The number of 52-bit limbs of a value (a multiple of 8).
    pub(crate) fn limbs(&self) -> usize {
        self.n
    }

    /// x·R mod p (almost) in limbs: x in the Montgomery domain, x taken mod p first.
    pub(crate) fn to_mont(&self, x: &Integer) -> Vec<u64> {
        let mut out = vec![0u64; self.n];
        self.mul(&mut out, &self.reduced(x), &self.r2);
        out
    }

    /// The value below p of `a` (almost Montgomery form, below 2p) taken out of the domain.
    pub(crate) fn out_of_mont(&self, a: &[u64]) -> Integer {
        let mut one = vec![0u64; self.n];
        one[0] = 1;
        let mut scratch = vec![0u64; self.n];
        self.mul(&mut scratch, a, &one);
        let mut out = from_limbs(&scratch);
        while out >= self.modulus {
            out -= &self.modulus;
        }
        out
    }

    /// a·b·R⁻¹ (almost: below 2^(52n), not necessarily below p), a and b below 2^(52n) in limbs.
    pub(crate) fn mul(&self, out: &mut [u64], a: &[u64], b: &[u64]) {
        // SAFETY: `new` returned a context only when the CPU has AVX-512 F and IFMA, and every
        // slice here holds n limbs (the context's, the table's entries, the callers' buffers)
        unsafe { amm(out, a, b, &self.p, self.k0, self.n) }
    }

    fn mul2(&self, out: [&mut [u64]; 2], a: [&[u64]; 2], b: [&[u64]; 2]) {
        // SAFETY: as in `mul`, for both products
        unsafe { amm2(out, a, b, &self.p, self.k0, self.n) }
    }

    /// `base` mod p in limbs.
    fn reduced(&self, base: &Integer) -> Vec<u64> {
        let mut b = Integer::from(base % &self.modulus);
        if b < 0 {
            b += &self.modulus;
        }
        to_limbs(&b, self.n)
    }

    /// The 5-bit window table of `base` in Montgomery form: one, the base, its square, … its 31st
    /// power.
    fn table(&self, base: &Integer) -> Vec<u64> {
        let n = self.n;
        let mut table = vec![0u64; 32 * n];
        let mut one = vec![0u64; n];
        one[0] = 1;
        let (first, rest) = table.split_at_mut(n);
        self.mul(first, &one, &self.r2);
        self.mul(&mut rest[..n], &self.reduced(base), &self.r2);
        for k in 2..32 {
            let (done, todo) = table.split_at_mut(k * n);
            let (prev, base_m) = (&done[(k - 1) * n..k * n], &done[n..2 * n]);
            self.mul(&mut todo[..n], prev, base_m);
        }
        table
    }

    /// The tables of two bases, their products interleaved.
    fn tables(&self, bases: [&Integer; 2]) -> [Vec<u64>; 2] {
        let n = self.n;
        let mut t = [vec![0u64; 32 * n], vec![0u64; 32 * n]];
        let mut one = vec![0u64; n];
        one[0] = 1;
        let (b0, b1) = (self.reduced(bases[0]), self.reduced(bases[1]));
        {
            let [t0, t1] = &mut t;
            let (o0, r0) = t0.split_at_mut(n);
            let (o1, r1) = t1.split_at_mut(n);
            self.mul2([o0, o1], [&one, &one], [&self.r2, &self.r2]);
            self.mul2(
                [&mut r0[..n], &mut r1[..n]],
                [&b0, &b1],
                [&self.r2, &self.r2],
            );
        }
        for k in 2..32 {
            let [t0, t1] = &mut t;
            let (d0, todo0) = t0.split_at_mut(k * n);
            let (d1, todo1) = t1.split_at_mut(k * n);
            self.mul2(
                [&mut todo0[..n], &mut todo1[..n]],
                [&d0[(k - 1) * n..k * n], &d1[(k - 1) * n..k * n]],
                [&d0[n..2 * n], &d1[n..2 * n]],
            );
        }
        t
    }

    /// [`IfmaContext::pow`] of two bases and exponents at once, the two products of each step
    /// interleaved (about 1.2 times one power's time for both).
    pub(crate) fn pow2(&self, bases: [&Integer; 2], exps: [&Integer; 2]) -> [Integer; 2] {
        let n = self.n;
        let t = self.tables(bases);
        let windows = exps[0]
            .significant_bits()
            .max(exps[1].significant_bits())
            .div_ceil(5);
        let digit = |e: &Integer, w: u32| -> usize {
            (0..5)
                .rev()
                .fold(0usize, |d, k| (d << 1) | usize::from(e.get_bit(w * 5 + k)))
        };
        let entry = |k: usize, d: usize| &t[k][d * n..(d + 1) * n];
        let top = windows.saturating_sub(1);
        let mut acc = [
            entry(0, digit(exps[0], top)).to_vec(),
            entry(1, digit(exps[1], top)).to_vec(),
        ];
        let mut scratch = [vec![0u64; n], vec![0u64; n]];
        for w in (0..top).rev() {
            for _ in 0..5 {
                let [s0, s1] = &mut scratch;
                self.mul2([s0, s1], [&acc[0], &acc[1]], [&acc[0], &acc[1]]);
                std::mem::swap(&mut acc, &mut scratch);
            }
            let (d0, d1) = (digit(exps[0], w), digit(exps[1], w));
            let [s0, s1] = &mut scratch;
            self.mul2([s0, s1], [&acc[0], &acc[1]], [entry(0, d0), entry(1, d1)]);
            std::mem::swap(&mut acc, &mut scratch);
        }
        let mut one = vec![0u64; n];
        one[0] = 1;
        let [s0, s1] = &mut scratch;
        self.mul2([s0, s1], [&acc[0], &acc[1]], [&one, &one]);
        scratch.map(|limbs| {
            let mut out = from_limbs(&limbs);
            while out >= self.modulus {
                out -= &self.modulus;
            }
            out
        })
    }

    /// base^exp mod p for exp ≥ 0 (a fixed window of 5 bits; the base taken mod p).
    pub(crate) fn pow(&self, base: &Integer, exp: &Integer) -> Integer {
        let n = self.n;
        let table = self.table(base);
        let windows = exp.significant_bits().div_ceil(5);
        let digit = |w: u32| -> usize {
            (0..5).rev().fold(0usize, |d, k| {
                (d << 1) | usize::from(exp.get_bit(w * 5 + k))
            })
        };
        let top = windows.saturating_sub(1);
        let mut acc = table[digit(top) * n..(digit(top) + 1) * n].to_vec();
        let mut scratch = vec![0u64; n];
        for w in (0..top).rev() {
            for _ in 0..5 {
                self.mul(&mut scratch, &acc, &acc);
                std::mem::swap(&mut acc, &mut scratch);
            }
            let d = digit(w);
            if d != 0 {
                self.mul(&mut scratch, &acc, &table[d * n..(d + 1) * n]);
                std::mem::swap(&mut acc, &mut scratch);
            }
        }
        // out of the Montgomery form, then the one final reduction
        let mut one = vec![0u64; n];
        one[0] = 1;
        self.mul(&mut scratch, &acc, &one);
        let mut out = from_limbs(&scratch);
        while out >= self.modulus {
            out -= &self.modulus;
        }
        out
    }
}

/// The almost Montgomery product (see the module's description). `a`, `b`, `p` and `out` hold n
/// limbs, n a multiple of 8 and at most 8 × MAX_VECTORS; every limb of a, b and p is below 2^52.
///
/// # Safety
/// The CPU must have AVX-512 F and AVX-512 IFMA, and every slice must hold n limbs.
#[target_feature(enable = "avx512f,avx512ifma")]
unsafe fn amm(out: &mut [u64], a: &[u64], b: &[u64], p: &[u64], k0: u64, n: usize) {
    // one copy per register count, so that the loops unroll and the limbs stay in registers
    match n / 8 {
        1 => amm_v::<1>(out, a, b, p, k0),
        2 => amm_v::<2>(out, a, b, p, k0),
        3 => amm_v::<3>(out, a, b, p, k0),
        4 => amm_v::<4>(out, a, b, p, k0),
        5 => amm_v::<5>(out, a, b, p, k0),
        6 => amm_v::<6>(out, a, b, p, k0),
        7 => amm_v::<7>(out, a, b, p, k0),
        8 => amm_v::<8>(out, a, b, p, k0),
        9 => amm_v::<9>(out, a, b, p, k0),
        _ => amm_v::<10>(out, a, b, p, k0),
    }
}

/// [`amm`] for V registers of limbs (n = 8V).
///
/// # Safety
/// As [`amm`], with n = 8V.
#[target_feature(enable = "avx512f,avx512ifma")]
#[inline]
unsafe fn amm_v<const V: usize>(out: &mut [u64], a: &[u64], b: &[u64], p: &[u64], k0: u64) {
    let n = 8 * V;
    debug_assert!(a.len() >= n && b.len() >= n && p.len() >= n && out.len() >= n);
    let zero = _mm512_setzero_si512();
    let mut bv = [zero; V];
    let mut pv = [zero; V];
    for j in 0..V {
        bv[j] = _mm512_loadu_si512(b.as_ptr().add(j * 8).cast());
        pv[j] = _mm512_loadu_si512(p.as_ptr().add(j * 8).cast());
    }
    // x: the running sum, limb j in lane j (un-normalised, below 2^64); y: the high halves, which
    // belong one limb up; x0: the carry out of the limb last shifted away
    let mut x = [zero; V];
    let mut y = [zero; V];
    let mut x0: u64 = 0;
    for &ai in a.iter().take(n) {
        let av = _mm512_set1_epi64(ai as i64);
        for j in 0..V {
            x[j] = _mm512_madd52lo_epu64(x[j], av, bv[j]);
            y[j] = _mm512_madd52hi_epu64(y[j], av, bv[j]);
        }
        // the lowest limb, exactly: lane 0 of x[0] plus the carry kept from the last shift
        let low = (_mm_cvtsi128_si64(_mm512_castsi512_si128(x[0])) as u64).wrapping_add(x0);
        let m = low.wrapping_mul(k0) & MASK;
        let mv = _mm512_set1_epi64(m as i64);
        for j in 0..V {
            x[j] = _mm512_madd52lo_epu64(x[j], mv, pv[j]);
            y[j] = _mm512_madd52hi_epu64(y[j], mv, pv[j]);
        }
        // limb 0 is now ≡ 0 mod 2^52: its carry goes up, then everything moves down a limb
        let low = (_mm_cvtsi128_si64(_mm512_castsi512_si128(x[0])) as u64).wrapping_add(x0);
        x0 = low >> LIMB_BITS;
        for j in 0..V {
            let next = if j + 1 < V { x[j + 1] } else { zero };
            x[j] = _mm512_add_epi64(_mm512_alignr_epi64::<1>(next, x[j]), y[j]);
            y[j] = zero;
        }
    }
    // normalise: each limb below 2^52, carries upwards
    let mut limbs = [0u64; 8 * MAX_VECTORS];
    for j in 0..V {
        _mm512_storeu_si512(limbs.as_mut_ptr().add(j * 8).cast(), x[j]);
    }
    let mut carry = x0;
    for (o, l) in out.iter_mut().zip(limbs.iter()).take(n) {
        let s = u128::from(*l) + u128::from(carry);
        *o = (s as u64) & MASK;
        carry = (s >> LIMB_BITS) as u64;
    }
    debug_assert_eq!(
        carry, 0,
        "the almost Montgomery product stays below 2^(52n)"
    );
}

/// Two almost Montgomery products at once, `out1 = a1·b1·R⁻¹` and `out2 = a2·b2·R⁻¹`, interleaved
/// so that one hides the other's latency (a product is bound by the chain from each step's lowest
/// limb to the next step's multiplier).
///
/// # Safety
/// As [`amm`], for both products.
#[target_feature(enable = "avx512f,avx512ifma")]
#[allow(clippy::too_many_arguments)]
unsafe fn amm2(out: [&mut [u64]; 2], a: [&[u64]; 2], b: [&[u64]; 2], p: &[u64], k0: u64, n: usize) {
    match n / 8 {
        1 => amm2_v::<1>(out, a, b, p, k0),
        2 => amm2_v::<2>(out, a, b, p, k0),
        3 => amm2_v::<3>(out, a, b, p, k0),
        4 => amm2_v::<4>(out, a, b, p, k0),
        5 => amm2_v::<5>(out, a, b, p, k0),
        6 => amm2_v::<6>(out, a, b, p, k0),
        7 => amm2_v::<7>(out, a, b, p, k0),
        8 => amm2_v::<8>(out, a, b, p, k0),
        9 => amm2_v::<9>(out, a, b, p, k0),
        _ => amm2_v::<10>(out, a, b, p, k0),
    }
}

/// [`amm2`] for V registers of limbs.
///
/// # Safety
/// As [`amm`], with n = 8V, for both products.
#[target_feature(enable = "avx512f,avx512ifma")]
#[inline]
unsafe fn amm2_v<const V: usize>(
    out: [&mut [u64]; 2],
    a: [&[u64]; 2],
    b: [&[u64]; 2],
    p: &[u64],
    k0: u64,
) {
    let n = 8 * V;
    let zero = _mm512_setzero_si512();
    let mut bv = [[zero; V]; 2];
    let mut pv = [zero; V];
    for j in 0..V {
        bv[0][j] = _mm512_loadu_si512(b[0].as_ptr().add(j * 8).cast());
        bv[1][j] = _mm512_loadu_si512(b[1].as_ptr().add(j * 8).cast());
        pv[j] = _mm512_loadu_si512(p.as_ptr().add(j * 8).cast());
    }
    let mut x = [[zero; V]; 2];
    let mut y = [[zero; V]; 2];
    let mut x0 = [0u64; 2];
    for i in 0..n {
        for k in 0..2 {
            let av = _mm512_set1_epi64(a[k][i] as i64);
            for j in 0..V {
                x[k][j] = _mm512_madd52lo_epu64(x[k][j], av, bv[k][j]);
                y[k][j] = _mm512_madd52hi_epu64(y[k][j], av, bv[k][j]);
            }
        }
        for k in 0..2 {
            let low =
                (_mm_cvtsi128_si64(_mm512_castsi512_si128(x[k][0])) as u64).wrapping_add(x0[k]);
            let mv = _mm512_set1_epi64((low.wrapping_mul(k0) & MASK) as i64);
            for j in 0..V {
                x[k][j] = _mm512_madd52lo_epu64(x[k][j], mv, pv[j]);
                y[k][j] = _mm512_madd52hi_epu64(y[k][j], mv, pv[j]);
            }
        }
        for k in 0..2 {
            let low =
                (_mm_cvtsi128_si64(_mm512_castsi512_si128(x[k][0])) as u64).wrapping_add(x0[k]);
            x0[k] = low >> LIMB_BITS;
            for j in 0..V {
                let next = if j + 1 < V { x[k][j + 1] } else { zero };
                x[k][j] = _mm512_add_epi64(_mm512_alignr_epi64::<1>(next, x[k][j]), y[k][j]);
                y[k][j] = zero;
            }
        }
    }
    for (k, o) in out.into_iter().enumerate() {
        let mut limbs = [0u64; 8 * MAX_VECTORS];
        for j in 0..V {
            _mm512_storeu_si512(limbs.as_mut_ptr().add(j * 8).cast(), x[k][j]);
        }
        let mut carry = x0[k];
        for (o, l) in o.iter_mut().zip(limbs.iter()).take(n) {
            let s = u128::from(*l) + u128::from(carry);
            *o = (s as u64) & MASK;
            carry = (s >> LIMB_BITS) as u64;
        }
        debug_assert_eq!(
            carry, 0,
            "the almost Montgomery product stays below 2^(52n)"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn odd_modulus(bits: u32, seed: &[u8]) -> Integer {
        let mut x = Integer::from_digits(seed, Order::Msf);
        x.keep_bits_mut(bits);
        x.set_bit(bits - 1, true);
        x.set_bit(0, true);
        x
    }

    #[test]
    fn limbs_round_trip() {
        let x = (Integer::from(1) << 2047u32) + 12345;
        assert_eq!(from_limbs(&to_limbs(&x, 40)), x);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn pow_matches_gmp(
            seed in proptest::collection::vec(any::<u8>(), 520),
            base in proptest::collection::vec(any::<u8>(), 520),
            exp in proptest::collection::vec(any::<u8>(), 1..64),
            size in 0usize..6,
        ) {
            if !available() {
                return Ok(());
            }
            let bits = [416u32, 1024, 2048, 2049, 3072, 4096][size];
            let p = odd_modulus(bits, &seed);
            let ctx = IfmaContext::new(&p).unwrap();
            let b = Integer::from_digits(&base, Order::Msf);
            let e = Integer::from_digits(&exp, Order::Msf);
            let want = Integer::from(b.pow_mod_ref(&e, &p).unwrap());
            prop_assert_eq!(ctx.pow(&b, &e), want.clone());
            // two at once, the second with another base and a shorter exponent
            let b2 = Integer::from(&b + 7u32);
            let e2 = Integer::from(&e >> 3u32);
            let want2 = Integer::from(b2.pow_mod_ref(&e2, &p).unwrap());
            prop_assert_eq!(ctx.pow2([&b, &b2], [&e, &e2]), [want, want2]);
        }
    }

    #[test]
    fn edge_values() {
        if !available() {
            return;
        }
        for bits in [416u32, 2048, 3072, 4096] {
            let p = odd_modulus(bits, &[0xff; 520]);
            let ctx = IfmaContext::new(&p).unwrap();
            let pm1 = Integer::from(&p - 1u32);
            for b in [
                Integer::new(),
                Integer::from(1),
                pm1.clone(),
                p.clone(),
                Integer::from(&p + 5u32),
            ] {
                for e in [
                    Integer::new(),
                    Integer::from(1),
                    Integer::from(2),
                    pm1.clone(),
                    p.clone(),
                ] {
                    let want = Integer::from(b.pow_mod_ref(&e, &p).unwrap());
                    assert_eq!(ctx.pow(&b, &e), want, "bits {bits}");
                }
            }
        }
    }
}

#[cfg(test)]
mod timing {
    use super::*;
    #[test]
    #[ignore]
    fn time_pow() {
        let p = crate::Modulus::new(Integer::from_str_radix("FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A08798E3404DDEF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7EDEE386BFB5A899FA5AE9F24117C4B1FE649286651ECE45B3DC2007CB8A163BF0598DA48361C55D39A69163FA8FD24CF5F83655D23DCA3AD961C62F356208552BB9ED529077096966D670C354E4ABC9804F1746C08CA18217C32905E462E36CE3BE39E772C180E86039B2783A2EC07A28FB5C55DF06F4C52C9DE2BCBF6955817183995497CEA956AE515D2261898FA051015728E5A8AACAA68FFFFFFFFFFFFFFFF", 16).unwrap()).unwrap();
        let ctx = IfmaContext::new(p.value()).unwrap();
        let e = (Integer::from(1) << 255u32) - 12345;
        let mut b = Integer::from(3);
        let n = 2000;
        let t = std::time::Instant::now();
        for _ in 0..n {
            b = ctx.pow(&b, &e);
        }
        eprintln!(
            "ifma pow: {:.1} us",
            t.elapsed().as_secs_f64() * 1e6 / f64::from(n)
        );
        let t = std::time::Instant::now();
        for _ in 0..n {
            b = Integer::from(b.pow_mod_ref(&e, p.value()).unwrap());
        }
        eprintln!(
            "gmp pow: {:.1} us",
            t.elapsed().as_secs_f64() * 1e6 / f64::from(n)
        );
        let t = std::time::Instant::now();
        let b2 = Integer::from(&b + 1u32);
        for _ in 0..n / 2 {
            let [x, _] = ctx.pow2([&b, &b2], [&e, &e]);
            b = x;
        }
        eprintln!(
            "ifma pow2, per power: {:.1} us",
            t.elapsed().as_secs_f64() * 1e6 / f64::from(n)
        );
        let a = to_limbs(&b, ctx.n);
        let mut out = vec![0u64; ctx.n];
        let t = std::time::Instant::now();
        for _ in 0..100_000 {
            ctx.mul(&mut out, &a, &a);
        }
        eprintln!("amm: {:.3} us", t.elapsed().as_secs_f64() * 1e6 / 100_000.0);
    }
}
