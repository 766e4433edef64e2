use std::fmt;
use std::sync::Arc;

use votum_group::Group;

use crate::ElGamalError;

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

    /// Same, with a table the caller built (one sized for the exponents it will use).
    pub fn with_given_table(
        group: &G,
        element: G::Element,
        table: G::Table,
    ) -> Result<Self, ElGamalError> {
        let mut pk = Self::new(group, element)?;
        pk.table = Some(Arc::new(table));
        Ok(pk)
    }

    pub fn element(&self) -> &G::Element {
        &self.element
    }

    /// The same key without its table (the element is not the identity: it was checked when
    /// this key was made).
    pub fn without_table(&self) -> Self {
        Self {
            element: self.element.clone(),
            table: None,
        }
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
