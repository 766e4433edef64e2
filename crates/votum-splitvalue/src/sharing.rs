//! Threshold sharing over Z_M with small-integer relations only (spec/97.2): shares are f(1) … f(R)
//! of a polynomial of degree below T; the T-th finite difference of such a polynomial vanishes,
//! which gives both the reconstruction at 0 and the consistency of extra rows.

use crate::field::Zm;

/// The sharing of one grid: R rows, threshold T.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sharing {
    rows: usize,
    threshold: usize,
    /// binom(T, j) for j = 0 … T.
    binom: Vec<u64>,
}

impl Sharing {
    /// 1 ≤ T ≤ R ≤ 16 (the parameters check the bounds).
    pub fn new(rows: usize, threshold: usize) -> Self {
        let mut binom = vec![1u64; threshold + 1];
        for j in 1..=threshold {
            binom[j] = binom[j - 1] * (threshold + 1 - j) as u64 / j as u64;
        }
        Self {
            rows,
            threshold,
            binom,
        }
    }

    pub fn rows(&self) -> usize {
        self.rows
    }

    pub fn threshold(&self) -> usize {
        self.threshold
    }

    /// f(i) = w + Σ coefs[t−1]·i^t for one row i (Horner with small multipliers).
    #[inline]
    pub fn eval(&self, zm: &Zm, w: u128, coefs: &[u128], i: u64) -> u128 {
        let mut acc = 0u128;
        for &c in coefs.iter().rev() {
            acc = zm.mul_small(zm.add(acc, c), i);
        }
        zm.add(acc, w)
    }

    /// The shares of `w` with coefficients a_1 … a_{T−1}, one per row.
    pub fn share(&self, zm: &Zm, w: u128, coefs: &[u128], out: &mut [u128]) {
        for (i, o) in out.iter_mut().enumerate() {
            *o = self.eval(zm, w, coefs, i as u64 + 1);
        }
    }

    /// f(0) from the first T rows: Σ_{j=1}^{T} (−1)^{j+1} binom(T, j) f(j).
    pub fn reconstruct(&self, zm: &Zm, shares: &[u128]) -> u128 {
        let (mut plus, mut minus) = (0u128, 0u128);
        for j in 1..=self.threshold {
            let term = zm.mul_small(shares[j - 1], self.binom[j]);
            if j % 2 == 1 {
                plus = zm.add(plus, term);
            } else {
                minus = zm.add(minus, term);
            }
        }
        zm.sub(plus, minus)
    }

    /// Whether all R shares lie on one polynomial of degree below T.
    pub fn consistent(&self, zm: &Zm, shares: &[u128]) -> bool {
        (1..=self.rows - self.threshold).all(|x| {
            let (mut plus, mut minus) = (0u128, 0u128);
            for j in 0..=self.threshold {
                let term = zm.mul_small(shares[x + j - 1], self.binom[j]);
                if j % 2 == 0 {
                    plus = zm.add(plus, term);
                } else {
                    minus = zm.add(minus, term);
                }
            }
            plus == minus
        })
    }

    /// The value of a consistent vector, `None` when it is not consistent.
    pub fn value(&self, zm: &Zm, shares: &[u128]) -> Option<u128> {
        self.consistent(zm, shares)
            .then(|| self.reconstruct(zm, shares))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn shares_reconstruct_and_are_consistent(
            rows in 1usize..8, extra in 0usize..4, w in any::<u64>(), c in proptest::collection::vec(any::<u64>(), 8), bump in 1u64..1000,
        ) {
            let zm = Zm::new(1_000_000_007).unwrap();
            let t = rows;
            let r = rows + extra;
            let s = Sharing::new(r, t);
            let w = u128::from(w) % zm.modulus();
            let coefs: Vec<u128> = c[..t - 1].iter().map(|&x| u128::from(x) % zm.modulus()).collect();
            let mut shares = vec![0u128; r];
            s.share(&zm, w, &coefs, &mut shares);
            prop_assert_eq!(s.value(&zm, &shares), Some(w));
            // any change of one share breaks consistency when there are extra rows, or the value otherwise
            let mut bad = shares.clone();
            bad[r - 1] = zm.add(bad[r - 1], u128::from(bump));
            if extra > 0 {
                prop_assert!(!s.consistent(&zm, &bad));
            } else {
                prop_assert_ne!(s.reconstruct(&zm, &bad), w);
            }
        }
    }
}
