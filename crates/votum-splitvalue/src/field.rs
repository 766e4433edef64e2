//! Arithmetic modulo a race's prime M < 2^126 (spec/97.1): values are `u128`, a sum of two
//! values never overflows, and the only products are by small integers (97.2), so no reduction of
//! a double-width product is ever needed.

use rand_core::RngCore;

use crate::SvError;

/// The largest modulus (exclusive): sums of two values stay below 2^127.
pub const MODULUS_LIMIT: u128 = 1 << 126;

/// Z_M for one race.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Zm {
    m: u128,
    mask: u128,
    width: usize,
}

impl Zm {
    /// Z_M for 2 ≤ M < 2^126 (primality is the parameters' business, 97.1).
    pub fn new(m: u128) -> Result<Self, SvError> {
        if !(2..MODULUS_LIMIT).contains(&m) {
            return Err(SvError::Params(format!("modulus {m} outside [2, 2^126)")));
        }
        let bits = 128 - (m - 1).leading_zeros();
        let bits = bits.max(1);
        Ok(Self {
            m,
            mask: if bits >= 128 {
                u128::MAX
            } else {
                (1u128 << bits) - 1
            },
            width: bits.div_ceil(8) as usize,
        })
    }

    pub fn modulus(&self) -> u128 {
        self.m
    }

    /// Bytes per value on the wire (97.1).
    pub fn width(&self) -> usize {
        self.width
    }

    #[inline]
    pub fn add(&self, a: u128, b: u128) -> u128 {
        let s = a + b;
        if s >= self.m {
            s - self.m
        } else {
            s
        }
    }

    #[inline]
    pub fn sub(&self, a: u128, b: u128) -> u128 {
        if a >= b {
            a - b
        } else {
            a + self.m - b
        }
    }

    #[inline]
    pub fn neg(&self, a: u128) -> u128 {
        if a == 0 {
            0
        } else {
            self.m - a
        }
    }

    /// a · c for a small integer c (binary method on additions).
    #[inline]
    pub fn mul_small(&self, a: u128, mut c: u64) -> u128 {
        let mut acc = 0;
        let mut base = a;
        while c != 0 {
            if c & 1 == 1 {
                acc = self.add(acc, base);
            }
            c >>= 1;
            if c != 0 {
                base = self.add(base, base);
            }
        }
        acc
    }

    /// A uniform value: 128 bits masked to the modulus's bit length, drawn again until below M
    /// (97.4).
    #[inline]
    pub fn draw<R: RngCore>(&self, rng: &mut R) -> u128 {
        loop {
            let hi = u128::from(rng.next_u64());
            let lo = u128::from(rng.next_u64());
            let x = ((hi << 64) | lo) & self.mask;
            if x < self.m {
                return x;
            }
        }
    }

    /// Appends `v` in `width` big-endian bytes.
    #[inline]
    pub fn put(&self, v: u128, out: &mut Vec<u8>) {
        out.extend_from_slice(&v.to_be_bytes()[16 - self.width..]);
    }

    /// Reads one value of `width` bytes; `None` when it is not below M.
    #[inline]
    pub fn get(&self, b: &[u8]) -> Option<u128> {
        let mut full = [0u8; 16];
        full[16 - self.width..].copy_from_slice(b.get(..self.width)?);
        let v = u128::from_be_bytes(full);
        (v < self.m).then_some(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn arithmetic_matches_big_integers(m in 2u128..MODULUS_LIMIT, a in any::<u128>(), b in any::<u128>(), c in any::<u64>()) {
            let z = Zm::new(m).unwrap();
            let (a, b) = (a % m, b % m);
            prop_assert_eq!(z.add(a, b), (a + b) % m);
            prop_assert_eq!(z.sub(a, b), (a + m - b) % m);
            prop_assert_eq!(z.add(z.neg(a), a), 0);
            let want = rug::Integer::from(a) * c % rug::Integer::from(m);
            prop_assert_eq!(rug::Integer::from(z.mul_small(a, c)), want);
            let mut buf = Vec::new();
            z.put(a, &mut buf);
            prop_assert_eq!(buf.len(), z.width());
            prop_assert_eq!(z.get(&buf), Some(a));
        }
    }

    #[test]
    fn out_of_range_values_are_refused() {
        let z = Zm::new(251).unwrap();
        assert_eq!(z.width(), 1);
        assert_eq!(z.get(&[251]), None);
        assert_eq!(z.get(&[250]), Some(250));
        assert!(Zm::new(1).is_err());
        assert!(Zm::new(MODULUS_LIMIT).is_err());
    }
}
