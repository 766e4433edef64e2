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
    /// `rows × (2^w − 1)` entries of `n` limbs each, in Montgomery form, contiguous: GMP's limbs, or on
    /// AVX-512 IFMA the 52-bit limbs of `ifma` (docs/adr/0011), whose products take about a third of
    /// GMP's time at 4096 bits.
    entries: Vec<u64>,
    #[cfg(target_arch = "x86_64")]
    ifma: Option<Box<crate::ifma::IfmaContext>>,
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
    /// Largest window in `4..=12` whose table fits [`TABLE_BUDGET_BYTES`] (its entries in the width they
    /// take here: 52-bit limbs on AVX-512 IFMA, GMP's limbs otherwise).
    pub fn default_window(modulus: &Modulus, max_bits: u32) -> u32 {
        #[cfg(target_arch = "x86_64")]
        let entry = crate::ifma::IfmaContext::new(modulus.value())
            .map_or(modulus.byte_len() as u64, |c| 8 * c.limbs() as u64);
        #[cfg(not(target_arch = "x86_64"))]
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
        let row_count = max_bits.div_ceil(window) as usize;
        #[cfg(target_arch = "x86_64")]
        if let Some(ctx) = crate::ifma::IfmaContext::new(modulus.value()) {
            let entries = build(
                ctx.limbs(),
                (row_count, window),
                ctx.to_mont(&base),
                |out, a, b| ctx.mul(out, a, b),
            );
            return Ok(Self {
                modulus: modulus.clone(),
                mont,
                base,
                window,
                max_bits,
                entries,
                ifma: Some(Box::new(ctx)),
            });
        }
        let head = {
            let mut s = mont.scratch();
            mont.to_mont(&base, &mut s)
        };
        let entries = build(mont.limbs_len(), (row_count, window), head, |out, a, b| {
            let mut s = mont.scratch();
            mont.mul(out, a, b, &mut s);
        });
        Ok(Self {
            modulus: modulus.clone(),
            mont,
            base,
            window,
            max_bits,
            entries,
            #[cfg(target_arch = "x86_64")]
            ifma: None,
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
        let width = (1usize << self.window) - 1;
        let rows = self.max_bits.div_ceil(self.window) as usize;
        let digits = (0..rows).filter_map(|i| {
            let digit = window_digit(exp, i as u32 * self.window, self.window) & mask;
            (digit != 0).then(|| i * width + digit as usize - 1)
        });
        #[cfg(target_arch = "x86_64")]
        if let Some(ctx) = &self.ifma {
            let n = ctx.limbs();
            let mut acc: Option<Vec<u64>> = None;
            let mut scratch = vec![0u64; n];
            for at in digits {
                let entry = &self.entries[at * n..(at + 1) * n];
                match acc.as_mut() {
                    None => acc = Some(entry.to_vec()),
                    Some(a) => {
                        ctx.mul(&mut scratch, a, entry);
                        std::mem::swap(a, &mut scratch);
                    }
                }
            }
            return Ok(acc.map_or_else(|| Integer::from(1), |a| ctx.out_of_mont(&a)));
        }
        let n = self.mont.limbs_len();
        let mut s = self.mont.scratch();
        let mut acc: Option<Vec<u64>> = None;
        for at in digits {
            let entry = &self.entries[at * n..(at + 1) * n];
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

/// The table's `rows × (2^w − 1)` entries of `n` limbs from `head` (the base in Montgomery form) with the
/// Montgomery product `mul(out, a, b)`: row i holds base^(d·2^(w·i)) for d in 1…2^w − 1, rows built on every
/// core.
fn build(
    n: usize,
    (row_count, window): (usize, u32),
    head: Vec<u64>,
    mul: impl Fn(&mut [u64], &[u64], &[u64]) + Sync,
) -> Vec<u64> {
    let width = (1usize << window) - 1;
    // the first column: base^(2^(w·i)) for every row, by repeated squaring
    let mut heads = Vec::with_capacity(row_count);
    let mut head = head;
    let mut scratch = vec![0u64; n];
    for _ in 0..row_count {
        heads.push(head.clone());
        for _ in 0..window {
            mul(&mut scratch, &head, &head);
            std::mem::swap(&mut head, &mut scratch);
        }
    }
    let mut entries = vec![0u64; row_count * width * n];
    entries
        .par_chunks_mut(width * n)
        .zip(heads.par_iter())
        .for_each(|(row, h)| {
            row[..n].copy_from_slice(h);
            for j in 1..width {
                let (done, rest) = row.split_at_mut(j * n);
                mul(&mut rest[..n], &done[(j - 1) * n..j * n], h);
            }
        });
    entries
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

    /// A table for a modulus IFMA takes (416 to 4,096 bits) gives GMP's powers: its entries are then the
    /// 52-bit limbs of the IFMA Montgomery form on a CPU that has it, GMP's on one that does not.
    #[test]
    fn wide_moduli_give_gmps_powers() {
        // deterministic "random" values: the digits of 7^k, k large, cut to size
        let digits = |k: u32, bits: u32| -> Integer {
            let mut x = Integer::from(Integer::u_pow_u(7, k));
            x.keep_bits_mut(bits);
            x
        };
        for bits in [416u32, 2048, 3072, 4096] {
            // an odd modulus of exactly `bits` bits
            let mut p = digits(bits + 11, bits);
            p.set_bit(bits - 1, true);
            p.set_bit(0, true);
            let m = Modulus::new(p.clone()).unwrap();
            let base = digits(bits + 977, bits) % &p;
            let t = FixedBaseTable::with_window(&m, &base, 256, 7).unwrap();
            let mut exps: Vec<Integer> = (0..6).map(|k| digits(300 + 50 * k, 256)).collect();
            exps.extend([0u32, 1, 2, 127, 128].map(Integer::from));
            exps.push((Integer::from(1) << 256u32) - 1u32);
            for e in &exps {
                let want = Integer::from(base.pow_mod_ref(e, &p).unwrap());
                assert_eq!(t.pow(e).unwrap(), want, "{bits} bits, e = {e}");
            }
        }
    }

    #[test]
    fn default_window_fits_budget() {
        let p = (Integer::from(1) << 4096u32) - 1u32;
        let m = Modulus::new(p).unwrap();
        // 12 with GMP's 512-byte entries, 11 with IFMA's 640-byte ones
        let w = FixedBaseTable::default_window(&m, 256);
        assert!((11..=12).contains(&w), "{w}");
        let table = FixedBaseTable::new(&m, &Integer::from(3), 256).unwrap();
        assert!(table.entries.len() as u64 * 8 <= TABLE_BUDGET_BYTES);
        assert!(FixedBaseTable::default_window(&m, 4096) <= 8);
    }
}
