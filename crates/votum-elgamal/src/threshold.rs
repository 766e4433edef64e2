//! Shamir secret sharing with Feldman commitments, over the scalars of a group.
//!
//! Participants are numbered `1..=n`. A dealer's secret polynomial `f(x) = a_0 + a_1 x + … +
//! a_{k-1} x^{k-1}` is committed to as `K_j = g^{a_j}`; participant `i` receives `f(i)` and checks
//! `g^{f(i)} = Π K_j^{i^j}`. Any `k` shares recover `f(0)` by Lagrange interpolation at 0.

#[cfg(feature = "prove")]
use std::fmt;

#[cfg(feature = "prove")]
use rand_core::{CryptoRng, RngCore};
use votum_group::Group;
#[cfg(feature = "prove")]
use zeroize::Zeroize;

use crate::ElGamalError;

#[cfg(feature = "prove")]
/// A secret polynomial of degree `k - 1`; wiped on drop.
pub struct SecretPolynomial<G: Group> {
    coefficients: Vec<G::Scalar>,
}

#[cfg(feature = "prove")]
impl<G: Group> fmt::Debug for SecretPolynomial<G> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "SecretPolynomial(degree {}, <redacted>)",
            self.coefficients.len().saturating_sub(1)
        )
    }
}

#[cfg(feature = "prove")]
impl<G: Group> Drop for SecretPolynomial<G> {
    fn drop(&mut self) {
        for c in &mut self.coefficients {
            c.zeroize();
        }
    }
}

#[cfg(feature = "prove")]
impl<G: Group> SecretPolynomial<G> {
    /// A random polynomial with `quorum` coefficients.
    pub fn random<R: RngCore + CryptoRng>(
        group: &G,
        quorum: usize,
        rng: &mut R,
    ) -> Result<Self, ElGamalError> {
        if quorum == 0 {
            return Err(ElGamalError::BadQuorum { k: 0, n: 0 });
        }
        Ok(Self {
            coefficients: (0..quorum).map(|_| group.random_scalar(rng)).collect(),
        })
    }

    /// A polynomial with the given coefficients (`a_0` first).
    pub fn from_coefficients(coefficients: Vec<G::Scalar>) -> Result<Self, ElGamalError> {
        if coefficients.is_empty() {
            return Err(ElGamalError::BadQuorum { k: 0, n: 0 });
        }
        Ok(Self { coefficients })
    }

    pub fn quorum(&self) -> usize {
        self.coefficients.len()
    }

    pub fn coefficients(&self) -> &[G::Scalar] {
        &self.coefficients
    }

    /// Feldman commitments `K_j = g^{a_j}` (constant-time exponentiation).
    pub fn commitments(&self, group: &G) -> Vec<G::Element> {
        self.coefficients
            .iter()
            .map(|a| group.pow_secret(group.generator(), a))
            .collect()
    }

    /// `f(x)` by Horner's rule.
    pub fn evaluate(&self, group: &G, x: u64) -> G::Scalar {
        let xs = group.scalar_from_u64(x);
        let mut acc = group.scalar_from_u64(0);
        for a in self.coefficients.iter().rev() {
            acc = group.scalar_add(&group.scalar_mul(&acc, &xs), a);
        }
        acc
    }
}

/// `Π K_j^{x^j}`: the public image `g^{f(x)}` of a share, from the commitments alone.
pub fn public_share<G: Group>(
    group: &G,
    commitments: &[G::Element],
    x: u64,
) -> Result<G::Element, ElGamalError> {
    let xs = group.scalar_from_u64(x);
    let mut power = group.scalar_from_u64(1);
    let mut exps = Vec::with_capacity(commitments.len());
    for _ in commitments {
        exps.push(power.clone());
        power = group.scalar_mul(&power, &xs);
    }
    Ok(group.multi_pow(commitments, &exps)?)
}

#[cfg(feature = "prove")]
/// Checks `g^share = Π K_j^{x^j}`.
pub fn verify_share<G: Group>(
    group: &G,
    commitments: &[G::Element],
    x: u64,
    share: &G::Scalar,
) -> Result<(), ElGamalError> {
    if group.pow_generator(share) == public_share(group, commitments, x)? {
        Ok(())
    } else {
        Err(ElGamalError::InvalidShare { index: x })
    }
}

fn check_present(present: &[u64]) -> Result<(), ElGamalError> {
    for (k, &j) in present.iter().enumerate() {
        if j == 0 {
            return Err(ElGamalError::BadIndex {
                index: 0,
                max: u64::MAX,
            });
        }
        if present[..k].contains(&j) {
            return Err(ElGamalError::DuplicateIndex(j));
        }
    }
    Ok(())
}

/// Lagrange coefficient of participant `i` for interpolation at 0 over `present`:
/// `w_i = Π_{j ≠ i} j / (j − i) mod q`.
pub fn lagrange_coefficient<G: Group>(
    group: &G,
    i: u64,
    present: &[u64],
) -> Result<G::Scalar, ElGamalError> {
    check_present(present)?;
    if !present.contains(&i) {
        return Err(ElGamalError::NotPresent(i));
    }
    let mut num = group.scalar_from_u64(1);
    let mut den = group.scalar_from_u64(1);
    for &j in present.iter().filter(|&&j| j != i) {
        num = group.scalar_mul(&num, &group.scalar_from_u64(j));
        let diff = group.scalar_sub(&group.scalar_from_u64(j), &group.scalar_from_u64(i));
        den = group.scalar_mul(&den, &diff);
    }
    Ok(group.scalar_mul(&num, &group.scalar_inverse(&den)?))
}

#[cfg(feature = "prove")]
/// Recovers `f(0)` from `(i, f(i))` pairs (at least `quorum` of them).
pub fn recover_secret<G: Group>(
    group: &G,
    shares: &[(u64, G::Scalar)],
    quorum: usize,
) -> Result<G::Scalar, ElGamalError> {
    if shares.len() < quorum {
        return Err(ElGamalError::TooFewShares {
            needed: quorum,
            got: shares.len(),
        });
    }
    let present: Vec<u64> = shares.iter().map(|(i, _)| *i).collect();
    let mut acc = group.scalar_from_u64(0);
    for (i, s) in shares {
        let w = lagrange_coefficient(group, *i, &present)?;
        acc = group.scalar_add(&acc, &group.scalar_mul(&w, s));
    }
    Ok(acc)
}

/// Combines partial decryptions `M_i = pad^{s_i}` into `pad^s = Π M_i^{w_i}`.
pub fn combine_partials<G: Group>(
    group: &G,
    partials: &[(u64, G::Element)],
    quorum: usize,
) -> Result<G::Element, ElGamalError> {
    if partials.len() < quorum {
        return Err(ElGamalError::TooFewShares {
            needed: quorum,
            got: partials.len(),
        });
    }
    let present: Vec<u64> = partials.iter().map(|(i, _)| *i).collect();
    let weights = present
        .iter()
        .map(|&i| lagrange_coefficient(group, i, &present))
        .collect::<Result<Vec<_>, _>>()?;
    let bases: Vec<G::Element> = partials.iter().map(|(_, m)| m.clone()).collect();
    Ok(group.multi_pow(&bases, &weights)?)
}
