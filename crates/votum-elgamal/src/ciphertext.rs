use rayon::prelude::*;
use votum_group::Group;

#[cfg(feature = "prove")]
use crate::keys::{PublicKey, SecretKey};

/// An ElGamal ciphertext `(pad, data) = (g^r, M·K^r)`; for exponential ElGamal `M = g^m`.
pub struct Ciphertext<G: Group> {
    pub pad: G::Element,
    pub data: G::Element,
}

impl<G: Group> Clone for Ciphertext<G> {
    fn clone(&self) -> Self {
        Self {
            pad: self.pad.clone(),
            data: self.data.clone(),
        }
    }
}

impl<G: Group> PartialEq for Ciphertext<G> {
    fn eq(&self, other: &Self) -> bool {
        self.pad == other.pad && self.data == other.data
    }
}

impl<G: Group> Eq for Ciphertext<G> {}

impl<G: Group> std::fmt::Debug for Ciphertext<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ciphertext")
            .field("pad", &self.pad)
            .field("data", &self.data)
            .finish()
    }
}

impl<G: Group> Ciphertext<G> {
    /// The encryption of 0 with nonce 0: the neutral element of homomorphic addition.
    pub fn zero(group: &G) -> Self {
        Self {
            pad: group.identity(),
            data: group.identity(),
        }
    }

    #[cfg(feature = "prove")]
    /// Exponential ElGamal: `(g^r, g^m · K^r)`; no variable-base exponentiation when `K` has a table.
    pub fn encrypt_exp(group: &G, pk: &PublicKey<G>, m: u64, r: &G::Scalar) -> Self {
        let pad = group.pow_generator(r);
        let gm = group.pow_generator(&group.scalar_from_u64(m));
        let data = group.op(&gm, &pk.pow(group, r));
        Self { pad, data }
    }

    #[cfg(feature = "prove")]
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

    /// Homomorphic addition of the plaintexts (exponential) or product (element).
    pub fn add(&self, group: &G, other: &Self) -> Self {
        Self {
            pad: group.op(&self.pad, &other.pad),
            data: group.op(&self.data, &other.data),
        }
    }

    /// Sum of many ciphertexts (parallel tree reduction).
    pub fn sum(group: &G, cts: &[Self]) -> Self {
        cts.par_iter()
            .fold(|| Self::zero(group), |acc, c| acc.add(group, c))
            .reduce(|| Self::zero(group), |a, b| a.add(group, &b))
    }

    #[cfg(feature = "prove")]
    /// Re-encryption with fresh randomness `r`: `(pad·g^r, data·K^r)`, same plaintext.
    pub fn reencrypt(&self, group: &G, pk: &PublicKey<G>, r: &G::Scalar) -> Self {
        Self {
            pad: group.op(&self.pad, &group.pow_generator(r)),
            data: group.op(&self.data, &pk.pow(group, r)),
        }
    }

    #[cfg(feature = "prove")]
    /// `pad^s`: the (partial) decryption share of the holder of `s`.
    pub fn partial_decrypt(&self, group: &G, sk: &SecretKey<G>) -> G::Element {
        group.pow_secret(&self.pad, sk.expose())
    }

    #[cfg(feature = "prove")]
    /// `data / pad^s`: the plaintext element (`g^m` for exponential ElGamal).
    pub fn decrypt(&self, group: &G, sk: &SecretKey<G>) -> G::Element {
        group.div(&self.data, &self.partial_decrypt(group, sk))
    }

    /// `data / share`: the plaintext element once a combined decryption share is known.
    pub fn decrypt_with_share(&self, group: &G, share: &G::Element) -> G::Element {
        group.div(&self.data, share)
    }
}

#[cfg(feature = "prove")]
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
