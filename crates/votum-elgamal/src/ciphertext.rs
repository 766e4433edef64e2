use rayon::prelude::*;
use votum_group::Group;

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

    /// `data / share`: the plaintext element once a combined decryption share is known.
    pub fn decrypt_with_share(&self, group: &G, share: &G::Element) -> G::Element {
        group.div(&self.data, share)
    }
}
