//! Shamir secret sharing with Feldman commitments, over the scalars of a group.
//!
//! Participants are numbered `1..=n`. A dealer's secret polynomial `f(x) = a_0 + a_1 x + … +
//! a_{k-1} x^{k-1}` is committed to as `K_j = g^{a_j}`; participant `i` receives `f(i)` and checks
//! `g^{f(i)} = Π K_j^{i^j}`. Any `k` shares recover `f(0)` by Lagrange interpolation at 0.
//!
//! This module holds the public side (commitments' images, Lagrange weights, combining partial
//! decryptions); the secret polynomial, share checks and recovery are in [`crate::secret`].

use votum_group::Group;

use crate::ElGamalError;

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
