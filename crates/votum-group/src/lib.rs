//! Prime-order groups for votum.
//!
//! The [`Group`] trait is written multiplicatively (`op`, `pow`) whatever the underlying
//! structure. Implementations:
//!
//! * [`ModpGroup`]: the order-q subgroup of Z_p^*: the ElectionGuard 1.0 4096-bit group
//!   ([`ModpGroup::eg_4096`]) and the quadratic-residue subgroups of the RFC 3526 2048- and
//!   3072-bit safe primes ([`ModpGroup::rfc3526_2048`], [`ModpGroup::rfc3526_3072`]).
//! * [`Ristretto255`]: the prime-order group over Curve25519 (curve25519-dalek).
//!
//! Every decoder checks canonical encoding, range and subgroup membership, so a value of type
//! `Element` or `Scalar` obtained through this crate is always valid.

mod modp;
mod nist_p256;
mod p256_fixed;
#[cfg(target_arch = "x86_64")]
mod p256_ifma;
mod params;
mod ristretto;

#[cfg(feature = "secret")]
pub use modp::secret_power_failed;
pub use modp::{InRange, ModElement, ModScalar, ModpGroup};
pub use nist_p256::{P256Point, P256Table, P256};
pub use ristretto::Ristretto255;
pub use votum_arith::{Integer, Order};

use rand_core::{CryptoRng, RngCore};
use rayon::prelude::*;
use std::fmt;
use zeroize::Zeroize;

/// A secret scalar: a long-term key, a key share, a polynomial coefficient, or the nonce of a
/// proof about one (ADR 0002). The only powers it takes are the constant-time
/// [`Group::pow_secret`] and `ModpGroup::pow_secret_with`; the fast variable-time tables
/// ([`Group::pow_generator`], [`Group::pow_table`], [`Group::pow`]) take a plain scalar, so handing
/// them a secret needs a visible [`Secret::expose`]. Wiped when dropped, printed as `<redacted>`.
///
/// A secret goes to the constant-time power:
/// ```
/// use votum_group::{Group, ModpGroup, Secret};
/// let group = ModpGroup::rfc3526_2048();
/// let key = Secret::new(group.scalar_from_u64(5));
/// assert_eq!(group.pow_secret(group.generator(), &key), group.pow_generator(&group.scalar_from_u64(5)));
/// ```
/// and the fast variable-time table refuses it at compile time:
/// ```compile_fail
/// use votum_group::{Group, ModpGroup, Secret};
/// let group = ModpGroup::rfc3526_2048();
/// let key = Secret::new(group.scalar_from_u64(5));
/// let _ = group.pow_generator(&key);
/// ```
pub struct Secret<S: Zeroize>(S);

impl<S: Zeroize> Secret<S> {
    pub fn new(value: S) -> Self {
        Self(value)
    }

    /// The value itself, for scalar arithmetic (a proof's response, a share's sum); never for a
    /// variable-time power, a log or a message the protocol does not name.
    pub fn expose(&self) -> &S {
        &self.0
    }
}

impl<S: Zeroize + Clone> Clone for Secret<S> {
    fn clone(&self) -> Self {
        Self(self.0.clone())
    }
}

impl<S: Zeroize> Drop for Secret<S> {
    fn drop(&mut self) {
        self.0.zeroize();
    }
}

impl<S: Zeroize> fmt::Debug for Secret<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

/// Which group, by its stable name (used in encodings, records and the Python API).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GroupId {
    Eg4096,
    Modp2048,
    Modp3072,
    Ristretto255,
    /// RFC 2409 group 2 (1024 bits): CHVote's level-1 encryption group only (spec/92.2).
    Modp1024,
    /// CHVote's identification groups (spec/92.2): Schnorr groups with q̂ of 160 and 224 bits.
    ChvoteId1024,
    ChvoteId2048,
    /// ElectionGuard 2.x's 4096-bit group (spec/65.1): read in 2.x records; not yet offered elsewhere.
    Eg2_4096,
    /// ElectionGuard 2.1's reduced 3072-bit group (spec/66.1): 2.1 records only.
    Eg2_3072,
    /// ElectionGuard 2.1's toy parameters (q of 64 bits, p of 256; spec/66.1): for tests only, never an
    /// election; a verifier fails them unless told they are a test.
    Eg2Toy,
    /// NIST P-256 (spec/10.5): ElectionGuard 2.x's elliptic-curve profile; not yet offered elsewhere.
    P256,
}

impl GroupId {
    pub const ALL: [GroupId; 4] = [
        GroupId::Eg4096,
        GroupId::Modp2048,
        GroupId::Modp3072,
        GroupId::Ristretto255,
    ];

    /// The groups of CHVote elections only (spec/92.2); not offered for the other protocols.
    pub const CHVOTE: [GroupId; 3] = [
        GroupId::Modp1024,
        GroupId::ChvoteId1024,
        GroupId::ChvoteId2048,
    ];

    pub fn name(self) -> &'static str {
        match self {
            GroupId::Eg4096 => "eg-4096",
            GroupId::Modp2048 => "modp-2048",
            GroupId::Modp3072 => "modp-3072",
            GroupId::Ristretto255 => "ristretto255",
            GroupId::Modp1024 => "modp-1024",
            GroupId::ChvoteId1024 => "chvote-id-1024",
            GroupId::ChvoteId2048 => "chvote-id-2048",
            GroupId::Eg2_4096 => "eg2-4096",
            GroupId::Eg2_3072 => "eg2-3072",
            GroupId::Eg2Toy => "eg2-toy",
            GroupId::P256 => "p256",
        }
    }

    /// The group called `name` among [`GroupId::ALL`] (the groups of every protocol; the CHVote-only
    /// groups are not found here).
    pub fn from_name(name: &str) -> Result<Self, GroupError> {
        Self::ALL
            .into_iter()
            .find(|g| g.name() == name)
            .ok_or(GroupError::UnknownGroup)
    }
}

impl fmt::Display for GroupId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Errors of group decoding and arithmetic.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GroupError {
    #[error("expected {expected} bytes, got {got}")]
    WrongLength { expected: usize, got: usize },
    #[error("element is not a canonical encoding")]
    NonCanonical,
    #[error("value is outside the range of the group")]
    OutOfRange,
    #[error("element is not in the prime-order subgroup")]
    NotInSubgroup,
    #[error("scalar is not below the group order")]
    ScalarOutOfRange,
    #[error("zero has no inverse")]
    ZeroInverse,
    #[error("{bases} bases but {scalars} scalars")]
    LengthMismatch { bases: usize, scalars: usize },
    #[error("unknown group name")]
    UnknownGroup,
}

/// One job of [`Group::pow2_many`]: (a table, or `None` for g; its exponent; a base; its exponent).
pub type Pow2<'a, G> = (
    Option<&'a <G as Group>::Table>,
    &'a <G as Group>::Scalar,
    &'a <G as Group>::Element,
    &'a <G as Group>::Scalar,
);

/// A cyclic group of prime order q with a fixed generator g.
pub trait Group: Clone + Send + Sync + fmt::Debug + 'static {
    type Element: Clone + PartialEq + Eq + fmt::Debug + Send + Sync;
    type Scalar: Clone + PartialEq + Eq + fmt::Debug + Send + Sync + zeroize::Zeroize;
    /// Precomputed powers of one base (see [`Group::table`]).
    type Table: Send + Sync;

    fn id(&self) -> GroupId;
    /// The prime order q.
    fn order(&self) -> &Integer;
    fn generator(&self) -> &Self::Element;
    fn identity(&self) -> Self::Element;
    fn op(&self, a: &Self::Element, b: &Self::Element) -> Self::Element;
    fn inverse(&self, a: &Self::Element) -> Self::Element;
    fn div(&self, a: &Self::Element, b: &Self::Element) -> Self::Element {
        self.op(a, &self.inverse(b))
    }
    /// `base^s` for a public exponent (variable time).
    fn pow(&self, base: &Self::Element, s: &Self::Scalar) -> Self::Element;
    /// `base^s` in constant time, for long-term secrets (feature `secret`, on by default;
    /// the independent verifier builds without it).
    #[cfg(feature = "secret")]
    fn pow_secret(&self, base: &Self::Element, s: &Secret<Self::Scalar>) -> Self::Element;
    /// A fresh random secret (a proof nonce about a long-term secret, a key).
    #[cfg(feature = "secret")]
    fn random_secret<R: RngCore + CryptoRng>(&self, rng: &mut R) -> Secret<Self::Scalar> {
        Secret::new(self.random_scalar(rng))
    }
    /// `g^s` from the generator's fixed-base table.
    fn pow_generator(&self, s: &Self::Scalar) -> Self::Element;
    /// Builds a fixed-base table for `base` (worth it from a few dozen exponentiations).
    fn table(&self, base: &Self::Element) -> Self::Table;
    fn pow_table(&self, table: &Self::Table, s: &Self::Scalar) -> Self::Element;
    /// Several fixed-base powers at once, each of a table's base or, for `None`, of g. A group whose elements
    /// cost a field inversion to encode (P-256) makes them together and shares one inversion among them.
    fn pow_fixed_many(&self, jobs: &[(Option<&Self::Table>, &Self::Scalar)]) -> Vec<Self::Element> {
        jobs.iter()
            .map(|(table, s)| match table {
                Some(t) => self.pow_table(t, s),
                None => self.pow_generator(s),
            })
            .collect()
    }
    /// `t^s · b^e` for each job `(t, s, b, e)`, t a table's base or, for `None`, g; public exponents (a
    /// verifier's recomputed proof commitments). A group whose elements cost a field inversion to encode
    /// (P-256) makes them together and shares one inversion among them.
    fn pow2_many(&self, jobs: &[Pow2<'_, Self>]) -> Vec<Self::Element> {
        jobs.iter()
            .map(|(table, s, base, e)| {
                let fixed = match table {
                    Some(t) => self.pow_table(t, s),
                    None => self.pow_generator(s),
                };
                self.op(&fixed, &self.pow(base, e))
            })
            .collect()
    }
    /// `prod bases[i]^scalars[i]` with public scalars.
    fn multi_pow(
        &self,
        bases: &[Self::Element],
        scalars: &[Self::Scalar],
    ) -> Result<Self::Element, GroupError>;

    /// [`Group::multi_pow`] split into one piece per rayon thread (worth it from a few hundred bases).
    fn multi_pow_par(
        &self,
        bases: &[Self::Element],
        scalars: &[Self::Scalar],
    ) -> Result<Self::Element, GroupError> {
        if bases.len() != scalars.len() {
            return Err(GroupError::LengthMismatch {
                bases: bases.len(),
                scalars: scalars.len(),
            });
        }
        let threads = rayon::current_num_threads();
        if threads <= 1 || bases.len() < 256 {
            return self.multi_pow(bases, scalars);
        }
        let chunk = bases.len().div_ceil(threads);
        bases
            .par_chunks(chunk)
            .zip(scalars.par_chunks(chunk))
            .map(|(b, s)| self.multi_pow(b, s))
            .try_reduce(|| self.identity(), |a, b| Ok(self.op(&a, &b)))
    }

    /// Length of the canonical fixed-width encoding of an element.
    fn element_len(&self) -> usize;
    fn encode_element(&self, a: &Self::Element) -> Vec<u8>;
    /// Decodes a canonical encoding of an element of the prime-order group.
    fn decode_element(&self, bytes: &[u8]) -> Result<Self::Element, GroupError>;
    /// Decodes consecutive canonical encodings (`bytes.len()` a multiple of [`Group::element_len`]),
    /// in parallel; the result is what decoding each would give. Groups whose membership test is
    /// costly batch it (spec/90.7), drawing secret weights from `rng`. The error names the first
    /// bad element by index (the count of elements for a length that is not a multiple).
    fn decode_many<R: RngCore + CryptoRng>(
        &self,
        bytes: &[u8],
        rng: &mut R,
    ) -> Result<Vec<Self::Element>, (usize, GroupError)> {
        let _ = rng;
        decode_each(self, bytes)
    }

    /// Number of uniformly random bytes [`Group::element_from_uniform`] takes.
    fn uniform_len(&self) -> usize;
    /// Maps uniform bytes to a group element whose discrete log nobody knows; `None` for the
    /// negligible inputs that land on the identity (callers retry with the next counter).
    fn element_from_uniform(&self, bytes: &[u8]) -> Option<Self::Element>;

    fn scalar_len(&self) -> usize;
    fn encode_scalar(&self, s: &Self::Scalar) -> Vec<u8>;
    /// Decodes a canonical scalar (fixed width, big-endian for modp, little-endian for ristretto255; below q).
    fn decode_scalar(&self, bytes: &[u8]) -> Result<Self::Scalar, GroupError>;
    /// Number of bytes [`Group::scalar_from_wide`] takes (statistically uniform reduction).
    fn wide_len(&self) -> usize {
        self.scalar_len() + 32
    }
    /// Reduces `wide_len()` bytes (big-endian) modulo q.
    fn scalar_from_wide(&self, bytes: &[u8]) -> Self::Scalar {
        self.scalar_from_integer(&Integer::from_digits(bytes, votum_arith::Order::Msf))
    }
    fn scalar_from_u64(&self, v: u64) -> Self::Scalar;
    /// Reduces any integer (negative ones included) modulo q.
    fn scalar_from_integer(&self, v: &Integer) -> Self::Scalar;
    fn scalar_to_integer(&self, s: &Self::Scalar) -> Integer;
    fn scalar_add(&self, a: &Self::Scalar, b: &Self::Scalar) -> Self::Scalar;
    fn scalar_sub(&self, a: &Self::Scalar, b: &Self::Scalar) -> Self::Scalar;
    fn scalar_mul(&self, a: &Self::Scalar, b: &Self::Scalar) -> Self::Scalar;
    fn scalar_neg(&self, a: &Self::Scalar) -> Self::Scalar;
    fn scalar_inverse(&self, a: &Self::Scalar) -> Result<Self::Scalar, GroupError>;
    fn random_scalar<R: RngCore + CryptoRng>(&self, rng: &mut R) -> Self::Scalar;
}

/// Decodes consecutive canonical encodings one by one (in parallel), naming the first bad one by
/// index: the default of [`Group::decode_many`].
pub fn decode_each<G: Group>(
    group: &G,
    bytes: &[u8],
) -> Result<Vec<G::Element>, (usize, GroupError)> {
    let len = group.element_len();
    if !bytes.len().is_multiple_of(len) {
        return Err((
            bytes.len() / len,
            GroupError::WrongLength {
                expected: len,
                got: bytes.len() % len,
            },
        ));
    }
    let decoded: Vec<Result<G::Element, GroupError>> = bytes
        .par_chunks(len)
        .map(|b| group.decode_element(b))
        .collect();
    let mut out = Vec::with_capacity(decoded.len());
    for (i, d) in decoded.into_iter().enumerate() {
        out.push(d.map_err(|e| (i, e))?);
    }
    Ok(out)
}
