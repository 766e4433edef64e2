//! Polynomials over Z_p′ (7.7–7.9, 7.31, 7.32).

use votum_arith::{wipe_integer, Integer};
use zeroize::Zeroize;

/// A point (x, y) of a voter's polynomial; secret until its voter's client obtains it.
#[derive(Clone, PartialEq, Eq)]
pub struct Point {
    pub x: Integer,
    pub y: Integer,
}

impl Drop for Point {
    fn drop(&mut self) {
        wipe_integer(&mut self.x);
        wipe_integer(&mut self.y);
    }
}

impl std::fmt::Debug for Point {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Point(<redacted>)")
    }
}

/// 7.9 GetYValue: A(x) by Horner's rule.
pub fn y_value(x: &Integer, coefficients: &[Integer], p: &Integer) -> Integer {
    let mut y = Integer::new();
    for a in coefficients.iter().rev() {
        y *= x;
        y += a;
        y %= p;
    }
    y
}

/// 7.32 GetValue: the value at 0 of the polynomial of degree points.len() − 1 through `points`
/// (Lagrange); `None` when two x coincide.
pub fn value_at_zero(points: &[Point], p: &Integer) -> Option<Integer> {
    let mut y = Integer::new();
    for (i, pi) in points.iter().enumerate() {
        let mut num = Integer::from(1);
        let mut den = Integer::from(1);
        for (j, pj) in points.iter().enumerate() {
            if i != j {
                num = num * &pj.x % p;
                let d = Integer::from(&pj.x - &pi.x);
                den = den * d % p;
            }
        }
        let inv = den.invert(p).ok()?;
        y = (y + Integer::from(&pi.y * &num) % p * inv) % p;
    }
    if y < 0 {
        y += p;
    }
    Some(y)
}

/// Uniform in [0, bound).
pub fn random_below<R: rand_core::RngCore + rand_core::CryptoRng>(
    bound: &Integer,
    rng: &mut R,
) -> Integer {
    let bytes = (bound.significant_bits() as usize).div_ceil(8) + 16;
    let mut buf = vec![0u8; bytes];
    rng.fill_bytes(&mut buf);
    let x = Integer::from_digits(&buf, votum_arith::Order::Msf) % bound;
    buf.zeroize();
    x
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn lagrange_recovers_the_constant() {
        let p = Integer::from(1_000_003u32);
        let a = [Integer::from(42), Integer::from(7), Integer::from(99)];
        let pts: Vec<Point> = [5u32, 11, 200]
            .iter()
            .map(|&x| {
                let x = Integer::from(x);
                Point {
                    y: y_value(&x, &a, &p),
                    x,
                }
            })
            .collect();
        assert_eq!(value_at_zero(&pts, &p).unwrap(), 42);
        assert_eq!(value_at_zero(&pts[..2], &p).map(|v| v == 42), Some(false));
    }
}
