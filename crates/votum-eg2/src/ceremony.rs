//! Guardians (spec/65.7, 2.0 §3.2): each guardian's secret polynomial of degree k−1, its public
//! commitments K_ij = g^a_ij with a Schnorr proof each, the share P_i(ℓ) it gives guardian ℓ, and the check a
//! receiver makes of a share against the dealer's public commitments. Every power of a secret is constant
//! time (`pow_secret`, ADR 0002).

use std::collections::BTreeMap;

use rand_core::{CryptoRng, RngCore};
use votum_group::Secret;

use crate::group::Eg2Group;
use crate::hashes::schnorr_hash;
use crate::{Eg2Error, Pair};

/// What the record holds of a guardian: its id, x-coordinate, and commitments with their proofs.
pub struct PublicGuardian<G: Eg2Group> {
    pub id: String,
    pub x: u32,
    pub commitments: Vec<G::Element>,
    pub proofs: Vec<Pair<G>>,
}

impl<G: Eg2Group> Clone for PublicGuardian<G> {
    fn clone(&self) -> Self {
        Self {
            id: self.id.clone(),
            x: self.x,
            commitments: self.commitments.clone(),
            proofs: self.proofs.clone(),
        }
    }
}

/// A guardian with its secrets: the polynomial, and the shares it has received and checked.
pub struct Guardian<G: Eg2Group> {
    pub id: String,
    pub x: u32,
    coefficients: Vec<Secret<G::Scalar>>,
    public: PublicGuardian<G>,
    /// P_j(x) from each dealer j (this guardian's own included), each checked against j's commitments
    received: BTreeMap<u32, Secret<G::Scalar>>,
}

impl<G: Eg2Group> std::fmt::Debug for Guardian<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Guardian")
            .field("id", &self.id)
            .field("x", &self.x)
            .field("secrets", &"<redacted>")
            .finish()
    }
}

/// Σ_j a_j x^j mod q for secret coefficients.
pub(crate) fn evaluate<G: Eg2Group>(
    group: &G,
    coefficients: &[Secret<G::Scalar>],
    x: u32,
) -> Secret<G::Scalar> {
    let xs = group.scalar_from_u64(u64::from(x));
    let mut acc = group.scalar_from_u64(0);
    for a in coefficients.iter().rev() {
        acc = group.scalar_add(&group.scalar_mul(&acc, &xs), a.expose());
    }
    Secret::new(acc)
}

impl<G: Eg2Group> Guardian<G> {
    /// A guardian with x-coordinate `x` (1…n) and a fresh polynomial of `k` coefficients, each committed to
    /// and proven known under H_P.
    pub fn new<R: RngCore + CryptoRng>(
        group: &G,
        hp: &[u8; 32],
        id: &str,
        x: u32,
        k: u32,
        rng: &mut R,
    ) -> Self {
        let coefficients: Vec<Secret<G::Scalar>> =
            (0..k).map(|_| group.random_secret(rng)).collect();
        let mut commitments = Vec::with_capacity(k as usize);
        let mut proofs = Vec::with_capacity(k as usize);
        for (j, a) in coefficients.iter().enumerate() {
            let kij = group.pow_secret(group.generator(), a);
            // h = g^u, c = H(H_P; 0x10, i, j, K_ij, h), v = u − c·a
            let u = group.random_secret(rng);
            let h = group.pow_secret(group.generator(), &u);
            let c = group.to_challenge(&schnorr_hash(group, hp, x, j as u32, &kij, &h));
            let v = group.scalar_sub(u.expose(), &group.scalar_mul(&c, a.expose()));
            commitments.push(kij);
            proofs.push(Pair { c, v });
        }
        let public = PublicGuardian {
            id: id.to_owned(),
            x,
            commitments,
            proofs,
        };
        let mut guardian = Self {
            id: id.to_owned(),
            x,
            coefficients,
            public,
            received: BTreeMap::new(),
        };
        let own = evaluate(group, &guardian.coefficients, x);
        guardian.received.insert(x, own);
        guardian
    }

    pub fn public(&self) -> PublicGuardian<G> {
        self.public.clone()
    }

    /// P_i(ℓ): the share this guardian deals to the guardian at `x` (sent to it alone).
    pub fn share_for(&self, group: &G, x: u32) -> Secret<G::Scalar> {
        evaluate(group, &self.coefficients, x)
    }

    /// Takes `share` = P_j(x) from dealer `from` after checking the dealer's proofs and
    /// g^share = Π_m K_jm^(x^m); a bad share is refused and names its dealer.
    pub fn receive(
        &mut self,
        group: &G,
        hp: &[u8; 32],
        k: u32,
        from: &PublicGuardian<G>,
        share: Secret<G::Scalar>,
    ) -> Result<(), Eg2Error> {
        check_public(group, hp, from, k)?;
        let want = share_commitment(group, from, self.x);
        if group.pow_secret(group.generator(), &share) != want {
            return Err(Eg2Error::Guardian {
                guardian: from.id.clone(),
                reason: format!(
                    "its share for guardian {} does not match its commitments",
                    self.id
                ),
            });
        }
        self.received.insert(from.x, share);
        Ok(())
    }

    /// z = Σ_j P_j(x), once a share from each of the `n` guardians is in.
    pub(crate) fn key_share(&self, group: &G, n: u32) -> Result<Secret<G::Scalar>, Eg2Error> {
        if self.received.len() as u64 != u64::from(n) {
            return Err(Eg2Error::Guardian {
                guardian: self.id.clone(),
                reason: format!("{} of {n} shares received", self.received.len()),
            });
        }
        let mut z = group.scalar_from_u64(0);
        for s in self.received.values() {
            z = group.scalar_add(&z, s.expose());
        }
        Ok(Secret::new(z))
    }
}

/// Π_m K_jm^(x^m): what g^P_j(x) must be.
fn share_commitment<G: Eg2Group>(group: &G, dealer: &PublicGuardian<G>, x: u32) -> G::Element {
    crate::v21::check::public_share(group, &dealer.commitments, x)
}

/// g^z_ℓ for the guardian at `x`: its public key share, from every guardian's commitments alone.
pub fn public_share<G: Eg2Group>(group: &G, guardians: &[PublicGuardian<G>], x: u32) -> G::Element {
    guardians.iter().fold(group.identity(), |acc, g| {
        group.op(&acc, &share_commitment(group, g, x))
    })
}

/// A guardian's public record: `k` commitments, each with a Schnorr proof that recomputes, none the identity.
pub fn check_public<G: Eg2Group>(
    group: &G,
    hp: &[u8; 32],
    g: &PublicGuardian<G>,
    k: u32,
) -> Result<(), Eg2Error> {
    let bad = |reason: String| Eg2Error::Guardian {
        guardian: g.id.clone(),
        reason,
    };
    if g.commitments.len() as u64 != u64::from(k) || g.proofs.len() != g.commitments.len() {
        return Err(bad(format!(
            "{} commitments, the quorum is {k}",
            g.commitments.len()
        )));
    }
    for (j, (kij, p)) in g.commitments.iter().zip(&g.proofs).enumerate() {
        if *kij == group.identity() {
            return Err(bad(format!("commitment {j} is the identity")));
        }
        let h = group.op(&group.pow_generator(&p.v), &group.pow(kij, &p.c));
        if group.to_challenge(&schnorr_hash(group, hp, g.x, j as u32, kij, &h)) != p.c {
            return Err(bad(format!("the proof of coefficient {j} does not verify")));
        }
    }
    Ok(())
}

/// K = Π_i K_i0.
pub fn joint_key<G: Eg2Group>(group: &G, guardians: &[PublicGuardian<G>]) -> G::Element {
    guardians.iter().fold(group.identity(), |acc, g| {
        g.commitments
            .first()
            .map_or(acc.clone(), |k0| group.op(&acc, k0))
    })
}

/// Runs the key ceremony of `n` guardians with quorum `k` in one process (egk-ec's "fake" ceremony): every
/// guardian deals each other its share, and each checks what it receives.
pub fn ceremony<G: Eg2Group, R: RngCore + CryptoRng>(
    group: &G,
    hp: &[u8; 32],
    n: u32,
    k: u32,
    rng: &mut R,
) -> Result<Vec<Guardian<G>>, Eg2Error> {
    if k == 0 || k > n {
        return Err(Eg2Error::Parameters(format!("quorum {k} of {n} guardians")));
    }
    let mut guardians: Vec<Guardian<G>> = (1..=n)
        .map(|x| Guardian::new(group, hp, &format!("guardian{x}"), x, k, rng))
        .collect();
    let publics: Vec<PublicGuardian<G>> = guardians.iter().map(Guardian::public).collect();
    for dealer in 0..guardians.len() {
        for receiver in 0..guardians.len() {
            if dealer == receiver {
                continue;
            }
            let share = guardians[dealer].share_for(group, guardians[receiver].x);
            guardians[receiver].receive(group, hp, k, &publics[dealer], share)?;
        }
    }
    Ok(guardians)
}
