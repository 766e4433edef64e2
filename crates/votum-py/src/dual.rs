//! One value of a generic core type, for whichever group it belongs to.
//!
//! The core is generic over `G: Group`; Python is not. A [`Family`] names a generic type
//! (`Ciphertext<G>`, `SchnorrProof<G>`, …) and [`Dual`] holds it for one of the two group
//! implementations. [`Bridge`] gets the typed value back out, or says the groups differ.

use votum_group::{Group, GroupId, ModpGroup, Ristretto255};

use crate::errors::NativeError;

pub trait Family {
    type Of<G: Group>;
}

pub enum Dual<F: Family> {
    Modp(F::Of<ModpGroup>),
    Ristretto(F::Of<Ristretto255>),
}

impl<F: Family> Clone for Dual<F>
where
    F::Of<ModpGroup>: Clone,
    F::Of<Ristretto255>: Clone,
{
    fn clone(&self) -> Self {
        match self {
            Dual::Modp(x) => Dual::Modp(x.clone()),
            Dual::Ristretto(x) => Dual::Ristretto(x.clone()),
        }
    }
}

impl<F: Family> PartialEq for Dual<F>
where
    F::Of<ModpGroup>: PartialEq,
    F::Of<Ristretto255>: PartialEq,
{
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Dual::Modp(a), Dual::Modp(b)) => a == b,
            (Dual::Ristretto(a), Dual::Ristretto(b)) => a == b,
            _ => false,
        }
    }
}

/// A group implementation that can be put into and taken out of a [`Dual`].
pub trait Bridge: Group {
    fn get<F: Family>(d: &Dual<F>) -> Option<&F::Of<Self>>;
    fn put<F: Family>(x: F::Of<Self>) -> Dual<F>;
}

impl Bridge for ModpGroup {
    fn get<F: Family>(d: &Dual<F>) -> Option<&F::Of<Self>> {
        match d {
            Dual::Modp(x) => Some(x),
            Dual::Ristretto(_) => None,
        }
    }
    fn put<F: Family>(x: F::Of<Self>) -> Dual<F> {
        Dual::Modp(x)
    }
}

impl Bridge for Ristretto255 {
    fn get<F: Family>(d: &Dual<F>) -> Option<&F::Of<Self>> {
        match d {
            Dual::Ristretto(x) => Some(x),
            Dual::Modp(_) => None,
        }
    }
    fn put<F: Family>(x: F::Of<Self>) -> Dual<F> {
        Dual::Ristretto(x)
    }
}

/// A value with the id of the group it belongs to (two modp groups share one Rust type).
pub struct Tagged<F: Family> {
    pub group: GroupId,
    pub value: Dual<F>,
}

impl<F: Family> Tagged<F> {
    /// The typed value, after checking it belongs to `group`.
    pub fn get<G: Bridge>(&self, group: &G) -> Result<&F::Of<G>, NativeError> {
        if self.group != group.id() {
            return Err(NativeError::GroupMismatch {
                expected: group.id(),
                got: self.group,
            });
        }
        G::get(&self.value).ok_or(NativeError::GroupMismatch {
            expected: group.id(),
            got: self.group,
        })
    }

    pub fn new<G: Bridge>(group: &G, value: F::Of<G>) -> Self {
        Self {
            group: group.id(),
            value: G::put(value),
        }
    }
}

impl<F: Family> Clone for Tagged<F>
where
    Dual<F>: Clone,
{
    fn clone(&self) -> Self {
        Self {
            group: self.group,
            value: self.value.clone(),
        }
    }
}

/// Any of votum's groups.
#[derive(Clone)]
pub enum AnyGroup {
    Modp(ModpGroup),
    Ristretto(Ristretto255),
}

impl AnyGroup {
    pub fn from_id(id: GroupId) -> Self {
        match id {
            GroupId::Eg4096 => AnyGroup::Modp(ModpGroup::eg_4096()),
            GroupId::Modp2048 => AnyGroup::Modp(ModpGroup::rfc3526_2048()),
            GroupId::Modp3072 => AnyGroup::Modp(ModpGroup::rfc3526_3072()),
            GroupId::Ristretto255 => AnyGroup::Ristretto(Ristretto255),
            other => {
                AnyGroup::Modp(ModpGroup::of_id(other).unwrap_or_else(ModpGroup::rfc3526_2048))
            }
        }
    }

    pub fn id(&self) -> GroupId {
        match self {
            AnyGroup::Modp(g) => g.id(),
            AnyGroup::Ristretto(g) => g.id(),
        }
    }
}

/// Runs `$body` with `$g` bound to the concrete group behind an [`AnyGroup`].
#[macro_export]
macro_rules! with_group {
    ($any:expr, $g:ident => $body:expr) => {
        match $any {
            $crate::dual::AnyGroup::Modp($g) => $body,
            $crate::dual::AnyGroup::Ristretto($g) => $body,
        }
    };
}

macro_rules! family {
    ($name:ident, $ty:ident) => {
        pub struct $name;
        impl Family for $name {
            type Of<G: Group> = $ty<G>;
        }
    };
}

pub type ElementOf<G> = <G as Group>::Element;
pub type ScalarOf<G> = <G as Group>::Scalar;
pub type CiphertextOf<G> = votum_elgamal::Ciphertext<G>;
pub type PublicKeyOf<G> = votum_elgamal::PublicKey<G>;
pub type SecretKeyOf<G> = votum_elgamal::SecretKey<G>;
pub type PolynomialOf<G> = votum_elgamal::SecretPolynomial<G>;
pub type HashedOf<G> = votum_elgamal::hashed::HashedCiphertext<G>;
pub type SchnorrOf<G> = votum_proofs::SchnorrProof<G>;
pub type ChaumPedersenOf<G> = votum_proofs::ChaumPedersenProof<G>;
pub type ProvenBitOf<G> = votum_proofs::batch::ProvenBit<G>;
pub type DlogOf<G> = votum_elgamal::DlogTable<G>;

family!(ElementF, ElementOf);
family!(ScalarF, ScalarOf);
family!(CiphertextF, CiphertextOf);
family!(PublicKeyF, PublicKeyOf);
family!(SecretKeyF, SecretKeyOf);
family!(PolynomialF, PolynomialOf);
family!(HashedF, HashedOf);
family!(SchnorrF, SchnorrOf);
family!(ChaumPedersenF, ChaumPedersenOf);
family!(ProvenBitF, ProvenBitOf);
family!(DlogF, DlogOf);
