//! Constant-time powers of one base to several secret exponents: a Lim–Lee comb.
//!
//! A guardian raises each ciphertext's `α` to its secret share, to the shares it holds for
//! missing guardians, and to one proof nonce per share: up to six secret exponents per base.
//! `mpz_powm_sec` pays about 256 squarings and 64 products for each. The comb pays about 256
//! squarings once per base (to build a table of 2^h products of `base^(2^(i·a))`) and then `a`
//! squarings and `a` products per exponent, `a = ⌈bits/h⌉` (43 for 256-bit exponents, h = 6).
//!
//! Side channels: every product is [`MontContext::mul_ct`] (no value-dependent branch), every
//! table lookup is GMP's `mpn_sec_tabselect` (it reads the whole table), and the exponent's bits
//! are read in a fixed order with shifts and masks. The exponent is copied into a fixed-size
//! buffer that is wiped afterwards, as are the accumulator and the selected entry. The base and the
//! table are not secret.
//!
//! Written here because GMP offers constant-time exponentiation only one exponent at a time
//! (`mpn_sec_powm`), and no Rust library offers a constant-time comb over GMP's `mpn` layer.

#![allow(unsafe_code)]

use gmp_mpfr_sys::gmp;
use rug::integer::Order;
use rug::Integer;

use crate::{ArithError, Modulus, MontContext};

/// A comb table for one base; see the module documentation.
pub struct SecretBaseTable {
    mont: MontContext,
    /// Rows of the comb: the exponent is cut into `rows` pieces of `cols` bits.
    rows: u32,
    cols: u32,
    max_bits: u32,
    /// `2^rows` entries of n limbs, Montgomery form; entry v = Π_{i: bit i of v} base^(2^(i·cols)).
    entries: Vec<u64>,
}

impl SecretBaseTable {
    /// The default number of rows: 64 entries (32 KiB at 4096 bits), cheap to scan.
    pub const DEFAULT_ROWS: u32 = 6;

    /// Builds the table of `base` for exponents below `2^max_bits`, with `rows` in 1..=10.
    pub fn new(
        modulus: &Modulus,
        base: &Integer,
        max_bits: u32,
        rows: u32,
    ) -> Result<Self, ArithError> {
        if !(1..=10).contains(&rows) {
            return Err(ArithError::OutOfRange { what: "rows" });
        }
        if max_bits == 0 {
            return Err(ArithError::OutOfRange { what: "max_bits" });
        }
        let mont = MontContext::new(modulus)?;
        let n = mont.limbs_len();
        // cover whole limbs, so that `pow` checks an exponent's length and never its top bits
        let cols = (64 * max_bits.div_ceil(64)).div_ceil(rows);
        let mut s = mont.scratch();
        let mut heads = Vec::with_capacity(rows as usize);
        let mut head = mont.to_mont(&modulus.reduce(base), &mut s);
        for _ in 0..rows {
            heads.push(head.clone());
            for _ in 0..cols {
                mont.square_assign(&mut head, &mut s);
            }
        }
        let count = 1usize << rows;
        let mut entries = vec![0u64; count * n];
        entries[..n].copy_from_slice(&mont.one(&mut s));
        for v in 1..count {
            let top = usize::BITS - 1 - v.leading_zeros();
            let rest = v ^ (1 << top);
            let (done, todo) = entries.split_at_mut(v * n);
            mont.mul(
                &mut todo[..n],
                &done[rest * n..(rest + 1) * n],
                &heads[top as usize],
                &mut s,
            );
        }
        Ok(Self {
            mont,
            rows,
            cols,
            max_bits,
            entries,
        })
    }

    pub fn max_bits(&self) -> u32 {
        self.max_bits
    }

    /// `base^exp mod m` in constant time, for `exp` of at most [`SecretBaseTable::max_limbs`]
    /// 64-bit limbs (every exponent below `2^max_bits` is). The time and the memory addresses
    /// depend on the table's shape only: the exponent's limbs are copied by their count (its
    /// length, as with `mpz_powm_sec`) and never compared or normalised.
    pub fn pow(&self, exp: &Integer) -> Result<Integer, ArithError> {
        if *exp < 0 {
            return Err(ArithError::NegativeExponent);
        }
        let limbs = exp.as_limbs();
        if limbs.len() > self.max_limbs() {
            return Err(ArithError::OutOfRange { what: "exponent" });
        }
        let n = self.mont.limbs_len();
        let bits = (self.rows * self.cols) as usize;
        let mut e = vec![0u64; bits.div_ceil(64)];
        e[..limbs.len()].copy_from_slice(limbs);
        let mut s = self.mont.scratch();
        let mut tmp = vec![0u64; n];
        let mut acc = self.mont.one(&mut s);
        let mut square = vec![0u64; n];
        let mut chosen = vec![0u64; n];
        let count = 1usize << self.rows;
        for j in (0..self.cols as usize).rev() {
            square.copy_from_slice(&acc);
            self.mont
                .mul_ct(&mut acc, &square, &square, &mut s, &mut tmp);
            let mut v: u64 = 0;
            for i in 0..self.rows as usize {
                let bit = i * self.cols as usize + j;
                v |= ((e[bit / 64] >> (bit % 64)) & 1) << i;
            }
            select(&mut chosen, &self.entries, count, v);
            square.copy_from_slice(&acc);
            self.mont
                .mul_ct(&mut acc, &square, &chosen, &mut s, &mut tmp);
        }
        let mut out = self.mont.out_of_mont_ct(&acc, &mut s, &mut tmp);
        let result = Integer::from_digits(&out, Order::Lsf);
        for buf in [
            &mut e,
            &mut acc,
            &mut square,
            &mut chosen,
            &mut tmp,
            &mut out,
        ] {
            wipe(buf);
        }
        Ok(result)
    }

    /// The longest exponent, in 64-bit limbs, that [`SecretBaseTable::pow`] takes: the table covers
    /// `rows·cols` bits, at least `64·⌈max_bits/64⌉` (`new`), so the check is on the length alone.
    pub fn max_limbs(&self) -> usize {
        (self.rows * self.cols) as usize / 64
    }
}

/// Window of [`pow_secret_public_base`]: 2^5 entries, about 52 products for a 256-bit exponent.
const ONCE_WINDOW: usize = 5;

/// `base^exp mod m` for one public base and one secret exponent, in constant time: a fixed
/// window of [`ONCE_WINDOW`] bits over `64·limbs(exp)` bits (the time depends on the exponent's
/// limb count only, as `mpz_powm_sec`'s does), every product [`MontContext::mul_ct`], every
/// lookup `mpn_sec_tabselect`. The table of `base^0..base^31` is public and is built with the
/// fast product. At 4096 bits it takes about 0.96× `mpz_powm_sec`'s time (both multiply with
/// GMP's schoolbook `mpn_sec_mul`; the window saves a few products). Until 2026-11-26 `mul_ct`
/// used `mpn_mul_n` and this took 0.72×, but GMP's Karatsuba branches on the operands' values
/// (`make ct-check` caught it).
pub(crate) fn pow_secret_public_base(
    mont: &MontContext,
    modulus: &Modulus,
    base: &Integer,
    exp: &Integer,
) -> Result<Integer, ArithError> {
    if *exp < 0 {
        return Err(ArithError::NegativeExponent);
    }
    let n = mont.limbs_len();
    // the exponent's limbs by their count, never normalised or compared
    let given = exp.as_limbs();
    let limbs = given.len().max(1);
    let mut e = vec![0u64; limbs];
    e[..given.len()].copy_from_slice(given);
    let bits = 64 * limbs;
    let windows = bits.div_ceil(ONCE_WINDOW);
    let mut s = mont.scratch();
    let count = 1usize << ONCE_WINDOW;
    let mut table = vec![0u64; count * n];
    table[..n].copy_from_slice(&mont.one(&mut s));
    table[n..2 * n].copy_from_slice(&mont.to_mont(&modulus.reduce(base), &mut s));
    for v in 2..count {
        let (done, todo) = table.split_at_mut(v * n);
        mont.mul(
            &mut todo[..n],
            &done[(v - 1) * n..v * n],
            &done[n..2 * n],
            &mut s,
        );
    }
    let window = |w: usize| -> u64 {
        let mut v = 0u64;
        for i in 0..ONCE_WINDOW {
            let bit = w * ONCE_WINDOW + i;
            // bits past the exponent's limbs read as 0, decided by the position only
            let limb = e.get(bit / 64).copied().unwrap_or(0);
            v |= ((limb >> (bit % 64)) & 1) << i;
        }
        v
    };
    let mut tmp = vec![0u64; n];
    let mut acc = vec![0u64; n];
    let mut prev = vec![0u64; n];
    let mut chosen = vec![0u64; n];
    select(&mut acc, &table, count, window(windows - 1));
    for w in (0..windows - 1).rev() {
        for _ in 0..ONCE_WINDOW {
            prev.copy_from_slice(&acc);
            mont.mul_ct(&mut acc, &prev, &prev, &mut s, &mut tmp);
        }
        select(&mut chosen, &table, count, window(w));
        prev.copy_from_slice(&acc);
        mont.mul_ct(&mut acc, &prev, &chosen, &mut s, &mut tmp);
    }
    let mut out = mont.out_of_mont_ct(&acc, &mut s, &mut tmp);
    let result = Integer::from_digits(&out, Order::Lsf);
    for buf in [&mut e, &mut acc, &mut prev, &mut chosen, &mut tmp, &mut out] {
        wipe(buf);
    }
    Ok(result)
}

/// `out` = entry `index` of `table` (`count` entries of `out.len()` limbs), read with GMP's
/// `mpn_sec_tabselect`, which touches every entry whatever the index.
fn select(out: &mut [u64], table: &[u64], count: usize, index: u64) {
    assert_eq!(
        table.len(),
        count * out.len(),
        "a table of count entries of out's length"
    );
    // SAFETY: `table` holds `count` entries of `out.len()` limbs (checked above) and `out` has
    // `out.len()` limbs; mpn_sec_tabselect reads only those entries, whatever the index.
    unsafe {
        gmp::mpn_sec_tabselect(
            out.as_mut_ptr(),
            table.as_ptr(),
            out.len() as gmp::size_t,
            count as gmp::size_t,
            index as gmp::size_t,
        );
    }
}

fn wipe(buf: &mut [u64]) {
    for x in buf.iter_mut() {
        // SAFETY: a valid, aligned, exclusive reference.
        unsafe { std::ptr::write_volatile(x, 0) };
    }
    std::sync::atomic::compiler_fence(std::sync::atomic::Ordering::SeqCst);
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn modulus() -> Modulus {
        // a 1024-bit odd modulus: the top and bottom limbs set, like the groups' primes
        let p = (Integer::from(1) << 1023u32) + Integer::from(0x1234_5678_9abc_def1u64);
        Modulus::new(p).unwrap()
    }

    proptest! {
        #[test]
        fn matches_powm(base in any::<u128>(), exp in any::<[u8; 32]>(), rows in 1u32..=8) {
            let m = modulus();
            let b = Integer::from(base) + 2u32;
            let e = Integer::from_digits(&exp, Order::Msf);
            let t = SecretBaseTable::new(&m, &b, 256, rows).unwrap();
            prop_assert_eq!(t.pow(&e).unwrap(), m.pow(&b, &e).unwrap());
        }
    }

    proptest! {
        #[test]
        fn one_base_window_matches_powm(base in any::<[u8; 128]>(), exp in proptest::collection::vec(any::<u8>(), 0..80)) {
            let m = modulus();
            let b = Integer::from_digits(&base, Order::Msf);
            let e = Integer::from_digits(&exp, Order::Msf);
            let mont = MontContext::new(&m).unwrap();
            prop_assert_eq!(
                pow_secret_public_base(&mont, &m, &b, &e).unwrap(),
                m.pow(&m.reduce(&b), &e).unwrap()
            );
            prop_assert_eq!(m.pow_secret(&b, &e).unwrap(), m.pow(&m.reduce(&b), &e).unwrap());
        }
    }

    #[test]
    fn one_base_window_edges() {
        let m = modulus();
        let mont = MontContext::new(&m).unwrap();
        let top = Integer::from(m.value() - 1u32);
        for b in [
            Integer::ZERO,
            Integer::from(1),
            top.clone(),
            Integer::from(m.value() + 5u32),
        ] {
            for e in [
                Integer::ZERO,
                Integer::from(1),
                Integer::from(31),
                Integer::from(32),
                Integer::from(u64::MAX),
                Integer::from(1) << 64u32,
                (Integer::from(1) << 256u32) - 1u32,
                top.clone(),
            ] {
                assert_eq!(
                    pow_secret_public_base(&mont, &m, &b, &e).unwrap(),
                    m.pow(&m.reduce(&b), &e).unwrap(),
                    "{b} {e}"
                );
            }
        }
        assert_eq!(
            pow_secret_public_base(&mont, &m, &top, &Integer::from(-3)).unwrap_err(),
            ArithError::NegativeExponent
        );
    }

    #[test]
    fn edge_exponents_and_refusals() {
        let m = modulus();
        let b = Integer::from(m.value() - 2u32);
        let t = SecretBaseTable::new(&m, &b, 256, SecretBaseTable::DEFAULT_ROWS).unwrap();
        for e in [
            Integer::ZERO,
            Integer::from(1),
            Integer::from(2),
            (Integer::from(1) << 256u32) - 1u32,
            Integer::from(1) << 255u32,
        ] {
            assert_eq!(t.pow(&e).unwrap(), m.pow(&b, &e).unwrap(), "{e}");
        }
        assert_eq!(
            t.pow(&(Integer::from(1) << 256u32)).unwrap_err(),
            ArithError::OutOfRange { what: "exponent" }
        );
        assert_eq!(
            t.pow(&Integer::from(-1)).unwrap_err(),
            ArithError::NegativeExponent
        );
        // the table covers whole limbs: an exponent longer than max_bits but not than its limbs
        // is computed, not refused (pow checks the length only, never the top bits)
        let short = SecretBaseTable::new(&m, &b, 250, 7).unwrap();
        assert_eq!(short.max_limbs(), 4);
        let e = (Integer::from(1) << 256u32) - 3u32;
        assert_eq!(short.pow(&e).unwrap(), m.pow(&b, &e).unwrap());
        assert!(short.pow(&(Integer::from(1) << 256u32)).is_err());
        assert!(SecretBaseTable::new(&m, &b, 256, 0).is_err());
        assert!(SecretBaseTable::new(&m, &b, 0, 6).is_err());
        // base 0 and base 1
        for base in [Integer::ZERO, Integer::from(1)] {
            let t = SecretBaseTable::new(&m, &base, 64, 4).unwrap();
            assert_eq!(
                t.pow(&Integer::from(5)).unwrap(),
                m.pow(&base, &Integer::from(5)).unwrap()
            );
        }
    }
}
