//! NIST P-256 (RustCrypto's `p256`) as a prime-order group, written multiplicatively like the others
//! (spec/10.5): ElectionGuard 2.x's elliptic-curve profile and Verificatum's `ECqPGroup(P-256)` are on it.
//! ADR 0013 says why this library.

use p256::elliptic_curve::group::Group as _;
use p256::elliptic_curve::hash2curve::{ExpandMsgXmd, GroupDigest};
use p256::elliptic_curve::ops::{LinearCombination, Reduce};
use p256::elliptic_curve::point::AffineCoordinates;
use p256::elliptic_curve::sec1::{FromEncodedPoint, ToEncodedPoint};
use p256::elliptic_curve::{Field, PrimeField};
use p256::{AffinePoint, EncodedPoint, FieldBytes, NistP256, ProjectivePoint, Scalar, U256};
use rand_core::{CryptoRng, RngCore};
use sha2::Sha256;
use std::sync::OnceLock;
use votum_arith::{Integer, Order};

#[cfg(feature = "secret")]
use crate::Secret;
use crate::{Group, GroupError, GroupId};

/// NIST P-256: the points of y² = x³ − 3x + b over F_p, of prime order n (cofactor 1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct P256;

static ORDER: OnceLock<Integer> = OnceLock::new();
static GENERATOR: OnceLock<ProjectivePoint> = OnceLock::new();

/// The domain tag of [`Group::element_from_uniform`] on P-256 (RFC 9380 hash-to-curve, SSWU).
const UNIFORM_DST: &[u8] = b"votum/v1/p256-uniform";

impl P256 {
    fn order_integer() -> &'static Integer {
        ORDER.get_or_init(|| {
            Integer::from_str_radix(
                "ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551",
                16,
            )
            .unwrap_or_default()
        })
    }

    /// The affine x coordinate of a point other than the identity, big-endian (`None` for the identity).
    pub fn x_coordinate(a: &ProjectivePoint) -> Option<[u8; 32]> {
        let affine = a.to_affine();
        if bool::from(affine.is_identity()) {
            return None;
        }
        Some(affine.x().into())
    }

    /// The SEC1 compressed encoding of a point other than the identity (`None` for the identity), with one
    /// inversion: `ProjectivePoint::is_identity` and `==` each cost two, so callers test on the affine point.
    pub fn compressed(a: &ProjectivePoint) -> Option<[u8; 33]> {
        let affine = a.to_affine();
        if bool::from(affine.is_identity()) {
            return None;
        }
        let mut out = [0u8; 33];
        out.copy_from_slice(affine.to_encoded_point(true).as_bytes());
        Some(out)
    }
}

/// A fixed-base table of one point B: for each byte position i of a scalar (0…31, least significant
/// first), the affine points d·256^i·B for d = 1…255 (8,160 points, 510 KiB). A power is then at most 32
/// mixed additions; the lookups depend on the exponent's bytes, so this serves public exponents and
/// encryption nonces only (ADR 0002), as the modp groups' tables do.
pub struct P256Table {
    windows: Vec<AffinePoint>,
}

impl std::fmt::Debug for P256Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("P256Table")
    }
}

impl P256Table {
    fn new(base: &ProjectivePoint) -> Self {
        let mut points = Vec::with_capacity(32 * 255);
        let mut b = *base;
        for _ in 0..32 {
            let mut acc = b;
            for _ in 0..255 {
                points.push(acc);
                acc += b;
            }
            // acc = 256·b
            b = acc;
        }
        Self {
            windows: points.iter().map(ProjectivePoint::to_affine).collect(),
        }
    }

    fn pow(&self, s: &Scalar) -> ProjectivePoint {
        let bytes = s.to_repr();
        let mut acc = ProjectivePoint::IDENTITY;
        for (i, d) in bytes.iter().rev().enumerate() {
            if *d != 0 {
                acc += &self.windows[i * 255 + usize::from(*d) - 1];
            }
        }
        acc
    }
}

static GENERATOR_TABLE: OnceLock<P256Table> = OnceLock::new();

impl Group for P256 {
    type Element = ProjectivePoint;
    type Scalar = Scalar;
    type Table = P256Table;

    fn id(&self) -> GroupId {
        GroupId::P256
    }

    fn order(&self) -> &Integer {
        Self::order_integer()
    }

    fn generator(&self) -> &ProjectivePoint {
        GENERATOR.get_or_init(|| ProjectivePoint::GENERATOR)
    }

    fn identity(&self) -> ProjectivePoint {
        ProjectivePoint::IDENTITY
    }

    fn op(&self, a: &ProjectivePoint, b: &ProjectivePoint) -> ProjectivePoint {
        a + b
    }

    fn inverse(&self, a: &ProjectivePoint) -> ProjectivePoint {
        -a
    }

    fn div(&self, a: &ProjectivePoint, b: &ProjectivePoint) -> ProjectivePoint {
        a - b
    }

    fn pow(&self, base: &ProjectivePoint, s: &Scalar) -> ProjectivePoint {
        base * s
    }

    #[cfg(feature = "secret")]
    fn pow_secret(&self, base: &ProjectivePoint, s: &Secret<Scalar>) -> ProjectivePoint {
        // p256's scalar multiplication is constant time
        base * s.expose()
    }

    fn pow_generator(&self, s: &Scalar) -> ProjectivePoint {
        GENERATOR_TABLE
            .get_or_init(|| P256Table::new(&ProjectivePoint::GENERATOR))
            .pow(s)
    }

    fn table(&self, base: &ProjectivePoint) -> P256Table {
        P256Table::new(base)
    }

    fn pow_table(&self, table: &P256Table, s: &Scalar) -> ProjectivePoint {
        table.pow(s)
    }

    fn multi_pow(
        &self,
        bases: &[ProjectivePoint],
        scalars: &[Scalar],
    ) -> Result<ProjectivePoint, GroupError> {
        if bases.len() != scalars.len() {
            return Err(GroupError::LengthMismatch {
                bases: bases.len(),
                scalars: scalars.len(),
            });
        }
        let mut acc = ProjectivePoint::IDENTITY;
        let mut pairs = bases.chunks_exact(2).zip(scalars.chunks_exact(2));
        for (b, s) in &mut pairs {
            acc += ProjectivePoint::lincomb(&b[0], &s[0], &b[1], &s[1]);
        }
        if bases.len() % 2 == 1 {
            acc += bases[bases.len() - 1] * scalars[scalars.len() - 1];
        }
        Ok(acc)
    }

    /// SEC1 compressed (0x02 or 0x03, then x); the identity is 33 zero bytes.
    fn element_len(&self) -> usize {
        33
    }

    fn encode_element(&self, a: &ProjectivePoint) -> Vec<u8> {
        Self::compressed(a).map_or_else(|| vec![0u8; 33], |c| c.to_vec())
    }

    fn decode_element(&self, bytes: &[u8]) -> Result<ProjectivePoint, GroupError> {
        if bytes.len() != 33 {
            return Err(GroupError::WrongLength {
                expected: 33,
                got: bytes.len(),
            });
        }
        if bytes.iter().all(|b| *b == 0) {
            return Ok(ProjectivePoint::IDENTITY);
        }
        if bytes[0] != 2 && bytes[0] != 3 {
            return Err(GroupError::NonCanonical);
        }
        let encoded = EncodedPoint::from_bytes(bytes).map_err(|_| GroupError::NonCanonical)?;
        // a point that decodes is on the curve, and the curve has prime order: a member
        Option::<AffinePoint>::from(AffinePoint::from_encoded_point(&encoded))
            .map(ProjectivePoint::from)
            .ok_or(GroupError::NonCanonical)
    }

    fn uniform_len(&self) -> usize {
        48
    }

    fn element_from_uniform(&self, bytes: &[u8]) -> Option<ProjectivePoint> {
        let point =
            NistP256::hash_from_bytes::<ExpandMsgXmd<Sha256>>(&[bytes], &[UNIFORM_DST]).ok()?;
        (!bool::from(point.is_identity())).then_some(point)
    }

    fn scalar_len(&self) -> usize {
        32
    }

    fn encode_scalar(&self, s: &Scalar) -> Vec<u8> {
        s.to_repr().to_vec()
    }

    fn decode_scalar(&self, bytes: &[u8]) -> Result<Scalar, GroupError> {
        if bytes.len() != 32 {
            return Err(GroupError::WrongLength {
                expected: 32,
                got: bytes.len(),
            });
        }
        Option::from(Scalar::from_repr(*FieldBytes::from_slice(bytes)))
            .ok_or(GroupError::ScalarOutOfRange)
    }

    fn scalar_from_u64(&self, v: u64) -> Scalar {
        Scalar::from(v)
    }

    fn scalar_from_integer(&self, v: &Integer) -> Scalar {
        let mut r = Integer::from(v % Self::order_integer());
        if r < 0 {
            r += Self::order_integer();
        }
        let digits = r.to_digits::<u8>(Order::Msf);
        let mut be = [0u8; 32];
        be[32 - digits.len()..].copy_from_slice(&digits);
        // r < n: the reduction changes nothing
        <Scalar as Reduce<U256>>::reduce_bytes(FieldBytes::from_slice(&be))
    }

    fn scalar_to_integer(&self, s: &Scalar) -> Integer {
        Integer::from_digits(&s.to_repr(), Order::Msf)
    }

    fn scalar_add(&self, a: &Scalar, b: &Scalar) -> Scalar {
        a + b
    }

    fn scalar_sub(&self, a: &Scalar, b: &Scalar) -> Scalar {
        a - b
    }

    fn scalar_mul(&self, a: &Scalar, b: &Scalar) -> Scalar {
        a * b
    }

    fn scalar_neg(&self, a: &Scalar) -> Scalar {
        -a
    }

    fn scalar_inverse(&self, a: &Scalar) -> Result<Scalar, GroupError> {
        Option::from(a.invert()).ok_or(GroupError::ZeroInverse)
    }

    fn random_scalar<R: RngCore + CryptoRng>(&self, rng: &mut R) -> Scalar {
        Scalar::random(rng)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fixed-base tables (of g and of any point) give the same powers as p256's own multiplication,
    /// for exponents with zero bytes, the largest one and random ones; encodings agree with p256's.
    #[test]
    fn fixed_base_tables_agree_with_scalar_multiplication() {
        use rand_chacha::rand_core::SeedableRng;
        let g = P256;
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(9);
        let base = ProjectivePoint::GENERATOR * g.random_scalar(&mut rng);
        let table = g.table(&base);
        let n_minus_1 = -Scalar::ONE;
        let mut cases = vec![
            Scalar::ZERO,
            Scalar::ONE,
            n_minus_1,
            g.scalar_from_u64(256),
            g.scalar_from_u64(1 << 40),
        ];
        cases.extend((0..50).map(|_| g.random_scalar(&mut rng)));
        for s in &cases {
            assert_eq!(g.pow_table(&table, s), base * s);
            assert_eq!(g.pow_generator(s), ProjectivePoint::GENERATOR * s);
            let p = base * s;
            let want = (!bool::from(p.is_identity())).then(|| p.to_affine().to_encoded_point(true));
            assert_eq!(
                P256::compressed(&p).map(|c| c.to_vec()),
                want.map(|e| e.as_bytes().to_vec())
            );
        }
        assert_eq!(g.encode_element(&ProjectivePoint::IDENTITY), vec![0u8; 33]);
    }

    /// The group laws and codecs hold, and agree with the curve's published constants.
    #[test]
    fn p256_is_a_group_of_order_n_with_canonical_codecs() {
        let g = P256;
        let n = g.order().clone();
        assert_eq!(n.significant_bits(), 256);
        assert_ne!(n.is_probably_prime(30), rug::integer::IsPrime::No);
        let five = g.scalar_from_u64(5);
        let x = g.pow_generator(&five);
        assert_eq!(x, g.pow(g.generator(), &five));
        // n − 1 times g is −g; n ≡ 0
        let minus_one = g.scalar_from_integer(&Integer::from(&n - 1u32));
        assert_eq!(g.pow_generator(&minus_one), g.inverse(g.generator()));
        assert_eq!(g.scalar_from_integer(&n), g.scalar_from_u64(0));
        assert_eq!(g.scalar_from_integer(&Integer::from(-1)), minus_one);
        assert_eq!(g.scalar_to_integer(&minus_one), Integer::from(&n - 1u32));
        // codecs round-trip; the identity is 33 zero bytes; a wrong prefix or an x off the curve is refused
        for e in [x, g.identity(), *g.generator()] {
            assert_eq!(g.decode_element(&g.encode_element(&e)).unwrap(), e);
        }
        let mut bad = g.encode_element(&x);
        bad[0] = 4;
        assert!(g.decode_element(&bad).is_err());
        let mut off = vec![2u8];
        off.extend_from_slice(&[0u8; 31]);
        off.push(1); // x = 1: x³ − 3x + b is not a square mod p, no point has it
        assert!(g.decode_element(&off).is_err());
        off[32] = 5; // x = 5 is a point's
        assert!(g.decode_element(&off).is_ok());
        let gx = g.encode_element(g.generator());
        assert_eq!(
            gx[1..]
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect::<String>(),
            "6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296"
        );
        assert_eq!(g.decode_scalar(&g.encode_scalar(&five)).unwrap(), five);
        assert!(g.decode_scalar(&[0xff; 32]).is_err(), "above n");
        // a multi-exponentiation is the product of the powers
        let b = [x, *g.generator(), g.pow_generator(&g.scalar_from_u64(9))];
        let s = [
            g.scalar_from_u64(2),
            g.scalar_from_u64(3),
            g.scalar_from_u64(4),
        ];
        assert_eq!(
            g.multi_pow(&b, &s).unwrap(),
            g.pow_generator(&g.scalar_from_u64(49))
        );
        assert!(g.element_from_uniform(&[7u8; 48]).is_some());
    }
}
