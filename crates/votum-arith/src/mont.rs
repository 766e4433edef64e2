//! Montgomery multiplication on GMP's `mpn` layer, for long chains of modular products
//! (fixed-base tables, multi-exponentiation).
//!
//! `mpz_mul` followed by `mpz_tdiv_r` spends most of its time in the division. Here a product is
//! `mpn_mul_n` (or `mpn_sqr`) followed by GMP's Montgomery reduction `mpn_redc_1`, the routine GMP's
//! own `mpz_powm` uses. `mpn_redc_1` is exported by the bundled GMP (gmp-mpfr-sys pins 6.3.0) but is
//! not part of GMP's documented API, so it is declared here by its link name; the tests compare
//! every result against `mpz_powm`.
//!
//! Values are kept fully reduced (in `[0, m)`) in Montgomery form `x·R mod m`, `R = 2^(64n)`.

#![allow(unsafe_code)]

use gmp_mpfr_sys::gmp;
use rug::integer::Order;
use rug::Integer;

use crate::{ArithError, Modulus};

extern "C" {
    /// `rp = up / R mod m` (up: 2n limbs, destroyed), returns the carry out of the top limb.
    #[link_name = "__gmpn_redc_1"]
    fn mpn_redc_1(
        rp: *mut gmp::limb_t,
        up: *mut gmp::limb_t,
        mp: *const gmp::limb_t,
        n: gmp::size_t,
        invm: gmp::limb_t,
    ) -> gmp::limb_t;
    /// Subquadratic REDC (n > 8): `rp = up / R mod m` in `[0, m)` for `up < m·R`;
    /// `ip = m^-1 mod R` (n limbs).
    #[link_name = "__gmpn_redc_n"]
    fn mpn_redc_n(
        rp: *mut gmp::limb_t,
        up: *mut gmp::limb_t,
        mp: *const gmp::limb_t,
        n: gmp::size_t,
        ip: *const gmp::limb_t,
    );
}

/// Above this many limbs GMP's subquadratic reduction is used (GMP's own x86-64 thresholds are 50–60).
const REDC_N_THRESHOLD: usize = 40;

/// Montgomery arithmetic modulo one odd modulus.
#[derive(Clone, Debug)]
pub(crate) struct MontContext {
    n: usize,
    m: Vec<u64>,
    invm: u64,
    /// `m^-1 mod R`, for `mpn_redc_n`.
    ip: Vec<u64>,
    r2: Vec<u64>,
}

/// A product buffer, reused across multiplications, and the work area of GMP's side-channel-silent
/// products (`mpn_sec_mul`, `mpn_sec_sqr`).
pub(crate) struct Scratch(Vec<u64>, Vec<u64>);

/// The scratch held products of secret values on the constant-time paths: wiped when dropped
/// (a few hundred limbs, next to thousands of products).
impl Drop for Scratch {
    fn drop(&mut self) {
        for x in self.0.iter_mut().chain(self.1.iter_mut()) {
            // SAFETY: a valid, aligned, exclusive reference.
            unsafe { std::ptr::write_volatile(x, 0) };
        }
        std::sync::atomic::compiler_fence(std::sync::atomic::Ordering::SeqCst);
    }
}

impl MontContext {
    pub(crate) fn new(modulus: &Modulus) -> Result<Self, ArithError> {
        let m_int = modulus.value();
        let m = m_int.to_digits::<u64>(Order::Lsf);
        let n = m.len();
        if n == 0 || m[0].is_multiple_of(2) {
            return Err(ArithError::BadModulus);
        }
        // inverse of m[0] modulo 2^64 by Newton's iteration (each step doubles the correct bits)
        let mut inv: u64 = 1;
        for _ in 0..7 {
            inv = inv.wrapping_mul(2u64.wrapping_sub(m[0].wrapping_mul(inv)));
        }
        let r_int = Integer::from(1) << (64 * n as u32);
        let r2_int = Integer::from(&r_int * &r_int) % m_int;
        let ip_int = Integer::from(m_int.invert_ref(&r_int).ok_or(ArithError::BadModulus)?);
        let mut ctx = Self {
            n,
            m,
            invm: inv.wrapping_neg(),
            ip: Vec::new(),
            r2: Vec::new(),
        };
        ctx.r2 = ctx.limbs(&r2_int);
        ctx.ip = ctx.limbs(&ip_int);
        Ok(ctx)
    }

    pub(crate) fn limbs_len(&self) -> usize {
        self.n
    }

    pub(crate) fn scratch(&self) -> Scratch {
        let n = self.n as gmp::size_t;
        // SAFETY: the itch functions only compute sizes.
        let sec = unsafe { gmp::mpn_sec_mul_itch(n, n).max(gmp::mpn_sec_sqr_itch(n)) };
        Scratch(vec![0; 2 * self.n], vec![0; sec.max(1) as usize])
    }

    fn limbs(&self, x: &Integer) -> Vec<u64> {
        let mut v = x.to_digits::<u64>(Order::Lsf);
        v.resize(self.n, 0);
        v
    }

    /// `out = s / R mod m` for the 2n-limb product in the scratch (destroyed), fully reduced.
    ///
    /// # Safety
    /// `out` has n limbs and does not alias the scratch; the scratch holds a product of two values < m.
    unsafe fn reduce_into(&self, out: *mut u64, s: &mut Scratch) {
        let n = self.n as gmp::size_t;
        if self.n > REDC_N_THRESHOLD {
            mpn_redc_n(out, s.0.as_mut_ptr(), self.m.as_ptr(), n, self.ip.as_ptr());
        } else {
            let carry = mpn_redc_1(out, s.0.as_mut_ptr(), self.m.as_ptr(), n, self.invm);
            if carry != 0 || gmp::mpn_cmp(out, self.m.as_ptr(), n) >= 0 {
                gmp::mpn_sub_n(out, out, self.m.as_ptr(), n);
            }
        }
    }

    /// `out = a·b / R mod m`, fully reduced. `a`, `b`, `out`: n limbs each, `a`, `b` < m.
    pub(crate) fn mul(&self, out: &mut [u64], a: &[u64], b: &[u64], s: &mut Scratch) {
        assert!(a.len() == self.n && b.len() == self.n && out.len() == self.n);
        assert!(s.0.len() == 2 * self.n);
        let n = self.n as gmp::size_t;
        // SAFETY: all slices have n limbs, the scratch 2n; out does not alias the scratch; GMP's
        // mpn_mul_n/mpn_sqr need rp disjoint from the inputs, which the scratch is.
        unsafe {
            if a.as_ptr() == b.as_ptr() {
                gmp::mpn_sqr(s.0.as_mut_ptr(), a.as_ptr(), n);
            } else {
                gmp::mpn_mul_n(s.0.as_mut_ptr(), a.as_ptr(), b.as_ptr(), n);
            }
            self.reduce_into(out.as_mut_ptr(), s);
        }
    }

    /// `a <- a·b / R mod m`.
    pub(crate) fn mul_assign(&self, a: &mut [u64], b: &[u64], s: &mut Scratch) {
        assert!(a.len() == self.n && b.len() == self.n && s.0.len() == 2 * self.n);
        let n = self.n as gmp::size_t;
        // SAFETY: as in `mul`; the product goes to the scratch first, so writing `a` is safe.
        unsafe {
            gmp::mpn_mul_n(s.0.as_mut_ptr(), a.as_ptr(), b.as_ptr(), n);
            self.reduce_into(a.as_mut_ptr(), s);
        }
    }

    /// `a <- a² / R mod m`.
    pub(crate) fn square_assign(&self, a: &mut [u64], s: &mut Scratch) {
        assert!(a.len() == self.n && s.0.len() == 2 * self.n);
        let n = self.n as gmp::size_t;
        // SAFETY: as in `mul_assign`.
        unsafe {
            gmp::mpn_sqr(s.0.as_mut_ptr(), a.as_ptr(), n);
            self.reduce_into(a.as_mut_ptr(), s);
        }
    }

    /// `out = a·b / R mod m` (`a == b` allowed: a squaring) with no branch or memory access that
    /// depends on the values: GMP's `mpn_sec_mul`/`mpn_sec_sqr`, its quadratic `mpn_redc_1`, and the
    /// final subtraction done always and kept or dropped with `mpn_cnd_swap`. `tmp` has n limbs.
    /// For secret exponents ([`crate::SecretBaseTable`]); `make ct-check` checks it under valgrind.
    #[cfg(feature = "secret")]
    pub(crate) fn mul_ct(
        &self,
        out: &mut [u64],
        a: &[u64],
        b: &[u64],
        s: &mut Scratch,
        tmp: &mut [u64],
    ) {
        assert!(a.len() == self.n && b.len() == self.n && out.len() == self.n);
        assert!(tmp.len() == self.n);
        let n = self.n as gmp::size_t;
        // SAFETY: all slices have n limbs, the scratch 2n and its work area the itch of both
        // products (`scratch`); out and tmp do not alias the scratch or each other.
        // mpn_sec_mul/mpn_sec_sqr are GMP's schoolbook products without data-dependent branches or
        // addresses; mpn_mul_n is not (its Karatsuba step branches on the sign of a difference of
        // the operands' halves, which `make ct-check` caught).
        unsafe {
            if a.as_ptr() == b.as_ptr() {
                gmp::mpn_sec_sqr(s.0.as_mut_ptr(), a.as_ptr(), n, s.1.as_mut_ptr());
            } else {
                gmp::mpn_sec_mul(
                    s.0.as_mut_ptr(),
                    a.as_ptr(),
                    n,
                    b.as_ptr(),
                    n,
                    s.1.as_mut_ptr(),
                );
            }
            let carry = mpn_redc_1(
                out.as_mut_ptr(),
                s.0.as_mut_ptr(),
                self.m.as_ptr(),
                n,
                self.invm,
            );
            let borrow = gmp::mpn_sub_n(tmp.as_mut_ptr(), out.as_ptr(), self.m.as_ptr(), n);
            // subtract m when the reduction carried out or out >= m (no borrow)
            gmp::mpn_cnd_swap(carry | (borrow ^ 1), out.as_mut_ptr(), tmp.as_mut_ptr(), n);
        }
    }

    /// `a / R mod m` as n limbs, with [`MontContext::mul_ct`]: the way out of Montgomery form for a
    /// result that may be secret (`out_of_mont` reduces with a branch on the value).
    #[cfg(feature = "secret")]
    pub(crate) fn out_of_mont_ct(&self, a: &[u64], s: &mut Scratch, tmp: &mut [u64]) -> Vec<u64> {
        let mut one = vec![0u64; self.n];
        one[0] = 1;
        let mut out = vec![0; self.n];
        self.mul_ct(&mut out, a, &one, s, tmp);
        out
    }

    /// `x·R mod m` for `0 <= x < m`.
    pub(crate) fn to_mont(&self, x: &Integer, s: &mut Scratch) -> Vec<u64> {
        let xl = self.limbs(x);
        let mut out = vec![0; self.n];
        self.mul(&mut out, &xl, &self.r2, s);
        out
    }

    /// The integer `a / R mod m`.
    pub(crate) fn out_of_mont(&self, a: &[u64], s: &mut Scratch) -> Integer {
        let mut one = vec![0u64; self.n];
        one[0] = 1;
        let mut out = vec![0; self.n];
        self.mul(&mut out, a, &one, s);
        Integer::from_digits(&out, Order::Lsf)
    }

    /// The Montgomery form of 1.
    #[cfg(any(feature = "secret", test))]
    pub(crate) fn one(&self, s: &mut Scratch) -> Vec<u64> {
        self.to_mont(&Integer::from(1), s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn modulus() -> Modulus {
        // 2^521 - 1 (prime, 9 limbs)
        Modulus::new((Integer::from(1) << 521u32) - 1u32).unwrap()
    }

    proptest! {
        #[test]
        fn mont_mul_matches_mpz(a in proptest::collection::vec(any::<u64>(), 9), b in proptest::collection::vec(any::<u64>(), 9)) {
            let m = modulus();
            let ctx = MontContext::new(&m).unwrap();
            let mut s = ctx.scratch();
            let x = m.reduce(&Integer::from_digits(&a, Order::Lsf));
            let y = m.reduce(&Integer::from_digits(&b, Order::Lsf));
            let (xm, ym) = (ctx.to_mont(&x, &mut s), ctx.to_mont(&y, &mut s));
            let mut p = vec![0; ctx.limbs_len()];
            ctx.mul(&mut p, &xm, &ym, &mut s);
            prop_assert_eq!(ctx.out_of_mont(&p, &mut s), m.mul(&x, &y));
            let mut sq = xm.clone();
            ctx.square_assign(&mut sq, &mut s);
            prop_assert_eq!(ctx.out_of_mont(&sq, &mut s), m.mul(&x, &x));
            prop_assert_eq!(ctx.out_of_mont(&xm, &mut s), x);
        }
    }

    #[test]
    fn large_modulus_uses_subquadratic_reduction() {
        // 4096-bit odd modulus: 64 limbs, above REDC_N_THRESHOLD
        let m = Modulus::new(
            (Integer::from(1) << 4096u32) - 1u32 - (Integer::from(1) << 1000u32) * 7u32,
        )
        .unwrap();
        let ctx = MontContext::new(&m).unwrap();
        assert!(ctx.limbs_len() > REDC_N_THRESHOLD);
        let mut s = ctx.scratch();
        let mut x = Integer::from(3);
        for i in 0..200u32 {
            let y = m.reduce(&(Integer::from(Integer::u_pow_u(i + 5, 600)) + &x));
            let (xm, ym) = (ctx.to_mont(&x, &mut s), ctx.to_mont(&y, &mut s));
            let mut p = vec![0; ctx.limbs_len()];
            ctx.mul(&mut p, &xm, &ym, &mut s);
            assert_eq!(ctx.out_of_mont(&p, &mut s), m.mul(&x, &y));
            let top = Integer::from(m.value() - 1u32);
            let tm = ctx.to_mont(&top, &mut s);
            ctx.mul(&mut p, &tm, &tm, &mut s);
            assert_eq!(ctx.out_of_mont(&p, &mut s), 1);
            x = m.mul(&x, &y) + 1u32;
        }
    }

    #[test]
    fn edge_values() {
        let m = modulus();
        let ctx = MontContext::new(&m).unwrap();
        let mut s = ctx.scratch();
        let top = Integer::from(m.value() - 1u32);
        let tm = ctx.to_mont(&top, &mut s);
        let mut p = vec![0; ctx.limbs_len()];
        ctx.mul(&mut p, &tm, &tm, &mut s);
        assert_eq!(ctx.out_of_mont(&p, &mut s), 1); // (-1)^2
        let zero = ctx.to_mont(&Integer::new(), &mut s);
        ctx.mul(&mut p, &tm, &zero, &mut s);
        assert_eq!(ctx.out_of_mont(&p, &mut s), 0);
        assert_eq!(ctx.out_of_mont(&ctx.one(&mut s), &mut s), 1);
    }
}
