use rayon::prelude::*;
use rug::Integer;

use crate::{ArithError, Modulus, MontContext};

/// Precomputed powers of one base for fast exponentiation with exponents of bounded size.
///
/// The exponent is cut into `ceil(max_bits / w)` digits of `w` bits; row `i` of the table
/// holds `base^(d * 2^(w*i))` for every digit `d` in `1..2^w`, so `base^e` is the product of
/// one entry per non-zero digit: about `max_bits / w` modular multiplications and no squarings.
///
/// The table lookup is indexed by exponent digits, so it is *not* constant time. It is meant
/// for public exponents and for one-time nonces on a single-tenant device (see
/// docs/adr/0002-fixed-base-tables-for-nonces.md); long-term secrets use
/// [`Modulus::pow_secret`].
#[derive(Clone)]
pub struct FixedBaseTable {
    modulus: Modulus,
    mont: MontContext,
    base: Integer,
    window: u32,
    max_bits: u32,
    /// `rows × (2^w − 1)` entries of `n` limbs each, in Montgomery form, contiguous.
    entries: Vec<u64>,
}

impl std::fmt::Debug for FixedBaseTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FixedBaseTable")
            .field("window", &self.window)
            .field("max_bits", &self.max_bits)
            .finish_non_exhaustive()
    }
}

/// Memory budget for one table when the window is chosen automatically.
const TABLE_BUDGET_BYTES: u64 = 48 << 20;

impl FixedBaseTable {
    /// Largest window in `4..=12` whose table fits [`TABLE_BUDGET_BYTES`].
    pub fn default_window(modulus: &Modulus, max_bits: u32) -> u32 {
        let entry = modulus.byte_len() as u64;
        (4..=12)
            .rev()
            .find(|&w| {
                let rows = u64::from(max_bits.div_ceil(w));
                rows * ((1u64 << w) - 1) * entry <= TABLE_BUDGET_BYTES
            })
            .unwrap_or(4)
    }

    /// Builds the table for exponents below `2^max_bits` with the default window.
    pub fn new(modulus: &Modulus, base: &Integer, max_bits: u32) -> Result<Self, ArithError> {
        Self::with_window(
            modulus,
            base,
            max_bits,
            Self::default_window(modulus, max_bits),
        )
    }

    pub fn with_window(
        modulus: &Modulus,
        base: &Integer,
        max_bits: u32,
        window: u32,
    ) -> Result<Self, ArithError> {
        if !(1..=16).contains(&window) {
            return Err(ArithError::OutOfRange { what: "window" });
        }
        if max_bits == 0 {
            return Err(ArithError::OutOfRange { what: "max_bits" });
        }
        let base = modulus.reduce(base);
        let mont = MontContext::new(modulus)?;
        let n = mont.limbs_len();
        let row_count = max_bits.div_ceil(window) as usize;
        let width = (1usize << window) - 1;
        let mut s = mont.scratch();
        // The first column: base^(2^(w*i)) for every row, by repeated squaring.
        let mut heads = Vec::with_capacity(row_count);
        let mut head = mont.to_mont(&base, &mut s);
        for _ in 0..row_count {
            heads.push(head.clone());
            for _ in 0..window {
                mont.square_assign(&mut head, &mut s);
            }
        }
        let mut entries = vec![0u64; row_count * width * n];
        entries
            .par_chunks_mut(width * n)
            .zip(heads.par_iter())
            .for_each(|(row, h)| {
                let mut s = mont.scratch();
                row[..n].copy_from_slice(h);
                for j in 1..width {
                    let (done, rest) = row.split_at_mut(j * n);
                    mont.mul(&mut rest[..n], &done[(j - 1) * n..], h, &mut s);
                }
            });
        Ok(Self {
            modulus: modulus.clone(),
            mont,
            base,
            window,
            max_bits,
            entries,
        })
    }

    pub fn base(&self) -> &Integer {
        &self.base
    }

    pub fn window(&self) -> u32 {
        self.window
    }

    pub fn max_bits(&self) -> u32 {
        self.max_bits
    }

    /// `base^exp mod p`. Exponents wider than the table fall back to `mpz_powm`.
    pub fn pow(&self, exp: &Integer) -> Result<Integer, ArithError> {
        if *exp < 0 {
            return Err(ArithError::NegativeExponent);
        }
        if exp.significant_bits() > self.max_bits {
            return self.modulus.pow(&self.base, exp);
        }
        let mask = (1u32 << self.window) - 1;
        let n = self.mont.limbs_len();
        let width = (1usize << self.window) - 1;
        let rows = self.max_bits.div_ceil(self.window) as usize;
        let mut s = self.mont.scratch();
        let mut acc: Option<Vec<u64>> = None;
        for i in 0..rows {
            let digit = window_digit(exp, i as u32 * self.window, self.window) & mask;
            if digit == 0 {
                continue;
            }
            let at = (i * width + digit as usize - 1) * n;
            let entry = &self.entries[at..at + n];
            match acc.as_mut() {
                None => acc = Some(entry.to_vec()),
                Some(a) => self.mont.mul_assign(a, entry, &mut s),
            }
        }
        Ok(match acc {
            None => Integer::from(1),
            Some(a) => self.mont.out_of_mont(&a, &mut s),
        })
    }

    /// Many exponentiations of the same base, spread over the rayon pool.
    pub fn pow_many(&self, exps: &[Integer]) -> Result<Vec<Integer>, ArithError> {
        exps.par_iter().map(|e| self.pow(e)).collect()
    }
}

/// Bits `[start, start + width)` of a non-negative integer, as a number.
pub(crate) fn window_digit(x: &Integer, start: u32, width: u32) -> u32 {
    let mut d = 0u32;
    for b in 0..width {
        if x.get_bit(start + b) {
            d |= 1 << b;
        }
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_plain_pow_small_modulus() {
        let m = Modulus::new(Integer::from(1_000_003)).unwrap();
        let t = FixedBaseTable::with_window(&m, &Integer::from(7), 40, 3).unwrap();
        for e in [0u64, 1, 2, 7, 8, 255, 1 << 39, (1 << 40) - 1, 123_456_789] {
            let e = Integer::from(e);
            assert_eq!(
                t.pow(&e).unwrap(),
                m.pow(&Integer::from(7), &e).unwrap(),
                "e={e}"
            );
        }
        // wider than the table: falls back
        let wide = Integer::from(1u64 << 50) + 3;
        assert_eq!(
            t.pow(&wide).unwrap(),
            m.pow(&Integer::from(7), &wide).unwrap()
        );
    }

    proptest::proptest! {
        #[test]
        fn table_pow_equals_plain_pow(base in 2u128.., exp in proptest::prelude::any::<u128>(), window in 1u32..10) {
            // 2^127 - 1 is prime; exponents up to 128 bits, tables for 128 bits
            let m = Modulus::new((Integer::from(1) << 127u32) - 1u32).unwrap();
            let b = Integer::from(base);
            let t = FixedBaseTable::with_window(&m, &b, 128, window).unwrap();
            let e = Integer::from(exp);
            proptest::prop_assert_eq!(t.pow(&e).unwrap(), m.pow(&b, &e).unwrap());
        }
    }

    #[test]
    fn default_window_fits_budget() {
        let p = (Integer::from(1) << 4096u32) - 1u32;
        let m = Modulus::new(p).unwrap();
        assert_eq!(FixedBaseTable::default_window(&m, 256), 12);
        assert!(FixedBaseTable::default_window(&m, 4096) <= 8);
    }
}
