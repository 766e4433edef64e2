use curve25519_dalek::constants::RISTRETTO_BASEPOINT_TABLE;
use curve25519_dalek::ristretto::{CompressedRistretto, RistrettoBasepointTable, RistrettoPoint};
use curve25519_dalek::scalar::Scalar;
use curve25519_dalek::traits::{Identity, VartimeMultiscalarMul};
use rand_core::{CryptoRng, RngCore};
use std::sync::OnceLock;
use votum_arith::{Integer, Order};

#[cfg(feature = "secret")]
use crate::Secret;
use crate::{Group, GroupError, GroupId};

/// The ristretto255 prime-order group (curve25519-dalek), written multiplicatively.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ristretto255;

static ORDER: OnceLock<Integer> = OnceLock::new();
static GENERATOR: OnceLock<RistrettoPoint> = OnceLock::new();

impl Ristretto255 {
    fn order_integer() -> &'static Integer {
        ORDER.get_or_init(|| {
            // l = 2^252 + 27742317777372353535851937790883648493
            let tail = Integer::from_str_radix("27742317777372353535851937790883648493", 10)
                .unwrap_or_default();
            (Integer::from(1) << 252u32) + tail
        })
    }
}

impl Group for Ristretto255 {
    type Element = RistrettoPoint;
    type Scalar = Scalar;
    type Table = RistrettoBasepointTable;

    fn id(&self) -> GroupId {
        GroupId::Ristretto255
    }

    fn order(&self) -> &Integer {
        Self::order_integer()
    }

    fn generator(&self) -> &RistrettoPoint {
        GENERATOR.get_or_init(|| curve25519_dalek::constants::RISTRETTO_BASEPOINT_POINT)
    }

    fn identity(&self) -> RistrettoPoint {
        RistrettoPoint::identity()
    }

    fn op(&self, a: &RistrettoPoint, b: &RistrettoPoint) -> RistrettoPoint {
        a + b
    }

    fn inverse(&self, a: &RistrettoPoint) -> RistrettoPoint {
        -a
    }

    fn div(&self, a: &RistrettoPoint, b: &RistrettoPoint) -> RistrettoPoint {
        a - b
    }

    fn pow(&self, base: &RistrettoPoint, s: &Scalar) -> RistrettoPoint {
        base * s
    }

    #[cfg(feature = "secret")]
    fn pow_secret(&self, base: &RistrettoPoint, s: &Secret<Scalar>) -> RistrettoPoint {
        // dalek's variable-base multiplication is constant time.
        base * s.expose()
    }

    fn pow_generator(&self, s: &Scalar) -> RistrettoPoint {
        RISTRETTO_BASEPOINT_TABLE * s
    }

    fn table(&self, base: &RistrettoPoint) -> RistrettoBasepointTable {
        RistrettoBasepointTable::create(base)
    }

    fn pow_table(&self, table: &RistrettoBasepointTable, s: &Scalar) -> RistrettoPoint {
        table * s
    }

    fn multi_pow(
        &self,
        bases: &[RistrettoPoint],
        scalars: &[Scalar],
    ) -> Result<RistrettoPoint, GroupError> {
        if bases.len() != scalars.len() {
            return Err(GroupError::LengthMismatch {
                bases: bases.len(),
                scalars: scalars.len(),
            });
        }
        Ok(RistrettoPoint::vartime_multiscalar_mul(scalars, bases))
    }

    fn element_len(&self) -> usize {
        32
    }

    fn encode_element(&self, a: &RistrettoPoint) -> Vec<u8> {
        a.compress().to_bytes().to_vec()
    }

    fn decode_element(&self, bytes: &[u8]) -> Result<RistrettoPoint, GroupError> {
        let compressed =
            CompressedRistretto::from_slice(bytes).map_err(|_| GroupError::WrongLength {
                expected: 32,
                got: bytes.len(),
            })?;
        compressed.decompress().ok_or(GroupError::NonCanonical)
    }

    fn uniform_len(&self) -> usize {
        64
    }

    fn element_from_uniform(&self, bytes: &[u8]) -> Option<RistrettoPoint> {
        let arr: [u8; 64] = bytes.try_into().ok()?;
        let point = RistrettoPoint::from_uniform_bytes(&arr);
        (point != RistrettoPoint::identity()).then_some(point)
    }

    fn scalar_len(&self) -> usize {
        32
    }

    fn encode_scalar(&self, s: &Scalar) -> Vec<u8> {
        s.to_bytes().to_vec()
    }

    fn decode_scalar(&self, bytes: &[u8]) -> Result<Scalar, GroupError> {
        let arr: [u8; 32] = bytes.try_into().map_err(|_| GroupError::WrongLength {
            expected: 32,
            got: bytes.len(),
        })?;
        Option::from(Scalar::from_canonical_bytes(arr)).ok_or(GroupError::ScalarOutOfRange)
    }

    fn scalar_from_wide(&self, bytes: &[u8]) -> Scalar {
        self.scalar_from_integer(&Integer::from_digits(bytes, Order::Msf))
    }

    fn scalar_from_u64(&self, v: u64) -> Scalar {
        Scalar::from(v)
    }

    fn scalar_from_integer(&self, v: &Integer) -> Scalar {
        let mut r = Integer::from(v % Self::order_integer());
        if r < 0 {
            r += Self::order_integer();
        }
        let mut le = [0u8; 32];
        let digits = r.to_digits::<u8>(Order::Lsf);
        le[..digits.len()].copy_from_slice(&digits);
        // r < l, so the bytes are canonical.
        Scalar::from_bytes_mod_order(le)
    }

    fn scalar_to_integer(&self, s: &Scalar) -> Integer {
        Integer::from_digits(s.as_bytes(), Order::Lsf)
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
        if *a == Scalar::ZERO {
            return Err(GroupError::ZeroInverse);
        }
        Ok(a.invert())
    }

    fn random_scalar<R: RngCore + CryptoRng>(&self, rng: &mut R) -> Scalar {
        Scalar::random(rng)
    }
}
