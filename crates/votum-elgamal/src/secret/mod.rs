//! Everything that holds or uses a secret (feature `prove`, on by default): secret keys and key
//! pairs, secret polynomials and the shares they deal, encryption with a nonce, re-encryption,
//! decryption, and hashed ElGamal ([`hashed`]). The independent verifier builds without this module,
//! so it cannot hold or use a secret.

use std::fmt;

use rand_core::{CryptoRng, RngCore};
use rayon::prelude::*;
use votum_group::{Group, Secret};

use crate::keys::PublicKey;
use crate::threshold::{lagrange_coefficient, public_share};
use crate::{Ciphertext, ElGamalError};

pub mod hashed;

// --- keys -----------------------------------------------------------------------------------------

/// A secret exponent. Wiped on drop ([`Secret`]), printed as `<redacted>`, exponentiated in
/// constant time only.
pub struct SecretKey<G: Group> {
    scalar: Secret<G::Scalar>,
}

impl<G: Group> SecretKey<G> {
    pub fn new(scalar: G::Scalar) -> Self {
        Self {
            scalar: Secret::new(scalar),
        }
    }

    pub fn random<R: RngCore + CryptoRng>(group: &G, rng: &mut R) -> Self {
        Self {
            scalar: group.random_secret(rng),
        }
    }

    /// The secret value itself, for scalar arithmetic; callers must not log or store it, nor raise
    /// a public base to it (use [`SecretKey::secret`] with `Group::pow_secret`).
    pub fn expose(&self) -> &G::Scalar {
        self.scalar.expose()
    }

    /// The secret as the type that constant-time powers take.
    pub fn secret(&self) -> &Secret<G::Scalar> {
        &self.scalar
    }

    /// `g^s`, computed in constant time.
    pub fn public_element(&self, group: &G) -> G::Element {
        group.pow_secret(group.generator(), &self.scalar)
    }
}

impl<G: Group> Clone for SecretKey<G> {
    fn clone(&self) -> Self {
        Self {
            scalar: self.scalar.clone(),
        }
    }
}

impl<G: Group> fmt::Debug for SecretKey<G> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SecretKey(<redacted>)")
    }
}

/// A secret key with its public key.
pub struct KeyPair<G: Group> {
    pub secret: SecretKey<G>,
    pub public: PublicKey<G>,
}

impl<G: Group> KeyPair<G> {
    pub fn generate<R: RngCore + CryptoRng>(group: &G, rng: &mut R) -> Self {
        loop {
            let secret = SecretKey::random(group, rng);
            if let Ok(public) = PublicKey::new(group, secret.public_element(group)) {
                return Self { secret, public };
            }
        }
    }

    pub fn from_secret(group: &G, secret: SecretKey<G>) -> Result<Self, ElGamalError> {
        let public = PublicKey::new(group, secret.public_element(group))?;
        Ok(Self { secret, public })
    }
}

impl<G: Group> fmt::Debug for KeyPair<G> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyPair")
            .field("secret", &self.secret)
            .field("public", &self.public)
            .finish()
    }
}

// --- secret sharing ------------------------------------------------------------------------------

/// A secret polynomial of degree `k - 1`; wiped on drop.
pub struct SecretPolynomial<G: Group> {
    coefficients: Vec<Secret<G::Scalar>>,
}

impl<G: Group> fmt::Debug for SecretPolynomial<G> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "SecretPolynomial(degree {}, <redacted>)",
            self.coefficients.len().saturating_sub(1)
        )
    }
}

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
            coefficients: (0..quorum).map(|_| group.random_secret(rng)).collect(),
        })
    }

    /// A polynomial with the given coefficients (`a_0` first).
    pub fn from_coefficients(coefficients: Vec<G::Scalar>) -> Result<Self, ElGamalError> {
        if coefficients.is_empty() {
            return Err(ElGamalError::BadQuorum { k: 0, n: 0 });
        }
        Ok(Self {
            coefficients: coefficients.into_iter().map(Secret::new).collect(),
        })
    }

    pub fn quorum(&self) -> usize {
        self.coefficients.len()
    }

    pub fn coefficients(&self) -> &[Secret<G::Scalar>] {
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
            acc = group.scalar_add(&group.scalar_mul(&acc, &xs), a.expose());
        }
        acc
    }
}

/// Checks `g^share = Π K_j^{x^j}`.
pub fn verify_share<G: Group>(
    group: &G,
    commitments: &[G::Element],
    x: u64,
    share: &Secret<G::Scalar>,
) -> Result<(), ElGamalError> {
    // a secret share: raised in constant time (ADR 0002)
    if group.pow_secret(group.generator(), share) == public_share(group, commitments, x)? {
        Ok(())
    } else {
        Err(ElGamalError::InvalidShare { index: x })
    }
}

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

// --- encryption and decryption -------------------------------------------------------------------

impl<G: Group> Ciphertext<G> {
    /// Exponential ElGamal: `(g^r, g^m · K^r)`; no variable-base exponentiation when `K` has a table.
    pub fn encrypt_exp(group: &G, pk: &PublicKey<G>, m: u64, r: &G::Scalar) -> Self {
        let pad = group.pow_generator(r);
        let gm = group.pow_generator(&group.scalar_from_u64(m));
        let data = group.op(&gm, &pk.pow(group, r));
        Self { pad, data }
    }

    /// Element ElGamal: `(g^r, M · K^r)`.
    pub fn encrypt_element(
        group: &G,
        pk: &PublicKey<G>,
        message: &G::Element,
        r: &G::Scalar,
    ) -> Self {
        Self {
            pad: group.pow_generator(r),
            data: group.op(message, &pk.pow(group, r)),
        }
    }

    /// Re-encryption with fresh randomness `r`: `(pad·g^r, data·K^r)`, same plaintext.
    pub fn reencrypt(&self, group: &G, pk: &PublicKey<G>, r: &G::Scalar) -> Self {
        Self {
            pad: group.op(&self.pad, &group.pow_generator(r)),
            data: group.op(&self.data, &pk.pow(group, r)),
        }
    }

    /// `pad^s`: the (partial) decryption share of the holder of `s`.
    pub fn partial_decrypt(&self, group: &G, sk: &SecretKey<G>) -> G::Element {
        group.pow_secret(&self.pad, sk.secret())
    }

    /// `data / pad^s`: the plaintext element (`g^m` for exponential ElGamal).
    pub fn decrypt(&self, group: &G, sk: &SecretKey<G>) -> G::Element {
        group.div(&self.data, &self.partial_decrypt(group, sk))
    }
}

/// Encrypts `messages[i]` with nonce `nonces[i]` (exponential ElGamal), in parallel.
pub fn encrypt_exp_many<G: Group>(
    group: &G,
    pk: &PublicKey<G>,
    messages: &[u64],
    nonces: &[G::Scalar],
) -> Vec<Ciphertext<G>> {
    messages
        .par_iter()
        .zip(nonces.par_iter())
        .map(|(m, r)| Ciphertext::encrypt_exp(group, pk, *m, r))
        .collect()
}
