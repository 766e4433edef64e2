use std::fmt;
use std::sync::Arc;

#[cfg(feature = "prove")]
use rand_core::{CryptoRng, RngCore};
use votum_group::Group;
#[cfg(feature = "prove")]
use zeroize::Zeroize;

use crate::ElGamalError;

#[cfg(feature = "prove")]
/// A secret exponent. Wiped on drop, printed as `<redacted>`, exponentiated in constant time.
pub struct SecretKey<G: Group> {
    scalar: G::Scalar,
}

#[cfg(feature = "prove")]
impl<G: Group> SecretKey<G> {
    pub fn new(scalar: G::Scalar) -> Self {
        Self { scalar }
    }

    pub fn random<R: RngCore + CryptoRng>(group: &G, rng: &mut R) -> Self {
        Self {
            scalar: group.random_scalar(rng),
        }
    }

    /// The secret value itself; callers must not log or store it.
    pub fn expose(&self) -> &G::Scalar {
        &self.scalar
    }

    /// `g^s`, computed in constant time.
    pub fn public_element(&self, group: &G) -> G::Element {
        group.pow_secret(group.generator(), &self.scalar)
    }
}

#[cfg(feature = "prove")]
impl<G: Group> Clone for SecretKey<G> {
    fn clone(&self) -> Self {
        Self {
            scalar: self.scalar.clone(),
        }
    }
}

#[cfg(feature = "prove")]
impl<G: Group> Drop for SecretKey<G> {
    fn drop(&mut self) {
        self.scalar.zeroize();
    }
}

#[cfg(feature = "prove")]
impl<G: Group> fmt::Debug for SecretKey<G> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SecretKey(<redacted>)")
    }
}

/// A public key `K = g^s`, with a fixed-base table once it is worth building.
pub struct PublicKey<G: Group> {
    element: G::Element,
    table: Option<Arc<G::Table>>,
}

impl<G: Group> Clone for PublicKey<G> {
    fn clone(&self) -> Self {
        Self {
            element: self.element.clone(),
            table: self.table.clone(),
        }
    }
}

impl<G: Group> fmt::Debug for PublicKey<G> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PublicKey")
            .field("element", &self.element)
            .finish_non_exhaustive()
    }
}

impl<G: Group> PublicKey<G> {
    /// Wraps a public element, refusing the identity (it would encrypt in the clear).
    pub fn new(group: &G, element: G::Element) -> Result<Self, ElGamalError> {
        if element == group.identity() {
            return Err(ElGamalError::IdentityKey);
        }
        Ok(Self {
            element,
            table: None,
        })
    }

    /// Same, and builds a fixed-base table for the many encryptions to come.
    pub fn with_table(group: &G, element: G::Element) -> Result<Self, ElGamalError> {
        let mut pk = Self::new(group, element)?;
        pk.table = Some(Arc::new(group.table(&pk.element)));
        Ok(pk)
    }

    pub fn element(&self) -> &G::Element {
        &self.element
    }

    pub fn has_table(&self) -> bool {
        self.table.is_some()
    }

    /// `K^r`, from the table when there is one.
    pub fn pow(&self, group: &G, r: &G::Scalar) -> G::Element {
        match &self.table {
            Some(t) => group.pow_table(t, r),
            None => group.pow(&self.element, r),
        }
    }
}

#[cfg(feature = "prove")]
/// A secret key with its public key.
pub struct KeyPair<G: Group> {
    pub secret: SecretKey<G>,
    pub public: PublicKey<G>,
}

#[cfg(feature = "prove")]
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

#[cfg(feature = "prove")]
impl<G: Group> fmt::Debug for KeyPair<G> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyPair")
            .field("secret", &self.secret)
            .field("public", &self.public)
            .finish()
    }
}
