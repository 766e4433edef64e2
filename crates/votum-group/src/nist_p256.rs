//! NIST P-256 (RustCrypto's `p256`) as a prime-order group, written multiplicatively like the others
//! (spec/10.5): ElectionGuard 2.x's elliptic-curve profile and Verificatum's `ECqPGroup(P-256)` are on it.
//! ADR 0013 says why this library.

use p256::elliptic_curve::group::Group as _;
use p256::elliptic_curve::hash2curve::{ExpandMsgXmd, GroupDigest};
use p256::elliptic_curve::ops::{LinearCombination, Reduce};
use p256::elliptic_curve::sec1::FromEncodedPoint;
use p256::elliptic_curve::{Field, PrimeField};
use p256::{AffinePoint, EncodedPoint, FieldBytes, NistP256, ProjectivePoint, Scalar, U256};
use rand_core::{CryptoRng, RngCore};
use sha2::Sha256;
use std::sync::OnceLock;
use votum_arith::{Integer, Order};

use crate::p256_fixed::{normalize, odd_multiples, pow_variable, Affine, Jacobian, Windows};

#[cfg(feature = "secret")]
use crate::Secret;
use crate::{Group, GroupError, GroupId, Pow2};

/// NIST P-256: the points of y² = x³ − 3x + b over F_p, of prime order n (cofactor 1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct P256;

/// A point of P-256: `p256`'s projective point, with its affine coordinates and SEC1 compressed encoding kept
/// once they are known (ADR 0014). Both cost a field inversion from a projective point; a point decoded, or
/// made by [`Group::pow_fixed_many`] or [`Group::pow2_many`], knows them already. The same ciphertext is often
/// hashed more than once, and a verifier's variable-base powers start from affine points. Equality is the
/// points'.
#[derive(Clone, Default)]
pub struct P256Point {
    point: ProjectivePoint,
    /// the affine coordinates and the compressed encoding; `None` inside for the identity
    known: OnceLock<Option<Known>>,
}

#[derive(Clone, Copy)]
struct Known {
    affine: Affine,
    compressed: [u8; 33],
}

impl Known {
    fn of(affine: Affine) -> Self {
        Self {
            affine,
            compressed: affine.compressed(),
        }
    }
}

impl P256Point {
    fn new(point: ProjectivePoint) -> Self {
        Self {
            point,
            known: OnceLock::new(),
        }
    }

    /// The point of affine coordinates `a` (`None`: the identity).
    fn of_affine(a: Option<Affine>) -> Self {
        match a {
            Some(a) => Self {
                point: ProjectivePoint::from(a.to_p256()),
                known: OnceLock::from(Some(Known::of(a))),
            },
            None => Self {
                point: ProjectivePoint::IDENTITY,
                known: OnceLock::from(None),
            },
        }
    }

    fn known(&self) -> Option<Known> {
        *self
            .known
            .get_or_init(|| Affine::from_p256(&self.point.to_affine()).map(Known::of))
    }

    /// `p256`'s point.
    pub fn projective(&self) -> &ProjectivePoint {
        &self.point
    }

    /// The SEC1 compressed encoding (`None` for the identity), made once.
    pub fn compressed(&self) -> Option<[u8; 33]> {
        self.known().map(|k| k.compressed)
    }

    /// Votum's affine coordinates (`None` for the identity), made once.
    fn affine(&self) -> Option<Affine> {
        self.known().map(|k| k.affine)
    }
}

impl From<ProjectivePoint> for P256Point {
    fn from(point: ProjectivePoint) -> Self {
        Self::new(point)
    }
}

impl PartialEq for P256Point {
    fn eq(&self, other: &Self) -> bool {
        self.point == other.point
    }
}

impl Eq for P256Point {}

impl std::fmt::Debug for P256Point {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.compressed() {
            Some(c) => {
                f.write_str("P256Point(")?;
                for b in c {
                    write!(f, "{b:02x}")?;
                }
                f.write_str(")")
            }
            None => f.write_str("P256Point(identity)"),
        }
    }
}

static ORDER: OnceLock<Integer> = OnceLock::new();
static GENERATOR: OnceLock<P256Point> = OnceLock::new();

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
    pub fn x_coordinate(a: &P256Point) -> Option<[u8; 32]> {
        a.compressed().map(|c| {
            let mut x = [0u8; 32];
            x.copy_from_slice(&c[1..]);
            x
        })
    }

    /// The SEC1 compressed encoding of a point other than the identity (`None` for the identity).
    pub fn compressed(a: &P256Point) -> Option<[u8; 33]> {
        a.compressed()
    }
}

/// A fixed-base table of one point B (ADR 0014): for each 13-bit window i of a scalar (0…19, least significant
/// first), the affine points d·2^(13i)·B for d = 1…4096. A power is then at most 20 mixed additions of signed
/// digits. The lookups depend on the exponent's digits, so this serves public exponents and encryption nonces
/// only (ADR 0002), as the modp groups' tables do. The identity's table is empty, its powers the identity.
pub struct P256Table {
    windows: Option<Windows>,
    /// the same entries for the eight-lane powers, made on the first batch of powers on a CPU with AVX-512
    /// IFMA (6.3 MiB, about 15 ms; a checker of ballots never uses them)
    #[cfg(target_arch = "x86_64")]
    ifma: OnceLock<Vec<crate::p256_ifma::Entry>>,
}

impl std::fmt::Debug for P256Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("P256Table")
    }
}

impl P256Table {
    fn new(base: &ProjectivePoint) -> Self {
        Self {
            windows: Affine::from_p256(&base.to_affine()).map(|b| Windows::new(&b)),
            #[cfg(target_arch = "x86_64")]
            ifma: OnceLock::new(),
        }
    }

    /// The entries in the eight-lane form (`None` for the identity's table, or without IFMA).
    #[cfg(target_arch = "x86_64")]
    fn ifma(&self) -> Option<&[crate::p256_ifma::Entry]> {
        let windows = self.windows.as_ref()?;
        if !crate::p256_ifma::available() {
            return None;
        }
        Some(
            self.ifma
                .get_or_init(|| windows.affine.iter().map(crate::p256_ifma::entry).collect()),
        )
    }

    fn pow(&self, s: &Scalar) -> ProjectivePoint {
        self.windows
            .as_ref()
            .map_or(ProjectivePoint::IDENTITY, |w| w.pow_p256(s))
    }
}

static GENERATOR_TABLE: OnceLock<P256Table> = OnceLock::new();

/// The powers of `jobs` one after the other, in Jacobian coordinates over `p256`'s field.
fn pow_many_portable(
    jobs: &[(Option<&P256Table>, &Scalar)],
    generator: &P256Table,
) -> Vec<Jacobian> {
    jobs.iter()
        .map(|(table, s)| {
            table
                .unwrap_or(generator)
                .windows
                .as_ref()
                .map_or(Jacobian::IDENTITY, |w| w.pow_jacobian(s))
        })
        .collect()
}

/// The powers of `jobs` eight at a time on AVX-512 IFMA, if the CPU has it (every table then has its entries in
/// that form); the identity's table gives the identity.
#[cfg(target_arch = "x86_64")]
fn pow_many_ifma(
    jobs: &[(Option<&P256Table>, &Scalar)],
    generator: &P256Table,
) -> Option<Vec<Jacobian>> {
    let mut lanes = Vec::with_capacity(jobs.len());
    let mut at = Vec::with_capacity(jobs.len());
    for (i, (table, s)) in jobs.iter().enumerate() {
        let table = table.unwrap_or(generator);
        if table.windows.is_some() {
            lanes.push((table.ifma()?, *s));
            at.push(i);
        }
    }
    let powers = crate::p256_ifma::pow_many(&lanes)?;
    let mut sums = vec![Jacobian::IDENTITY; jobs.len()];
    for (i, p) in at.into_iter().zip(powers) {
        sums[i] = p;
    }
    Some(sums)
}

/// Each job's t^s·b^e in Jacobian coordinates: the variable base's power from its odd multiples (made once
/// per distinct base, by address, for the whole batch), then the table's windows added to the same sum; eight
/// jobs at a time on a CPU with AVX-512 IFMA if `lanes`, else one by one.
fn pow2_sums(jobs: &[Pow2<'_, P256>], lanes: bool) -> Vec<Jacobian> {
    let generator = generator_table();
    // the distinct bases other than the identity, and each job's index among them
    let mut bases: Vec<(*const P256Point, Affine)> = Vec::new();
    let at: Vec<Option<usize>> = jobs
        .iter()
        .map(|(_, _, base, _)| {
            let ptr: *const P256Point = *base;
            if let Some(i) = bases.iter().position(|(p, _)| std::ptr::eq(*p, ptr)) {
                return Some(i);
            }
            let a = base.affine()?;
            bases.push((ptr, a));
            Some(bases.len() - 1)
        })
        .collect();
    let affine: Vec<Affine> = bases.iter().map(|(_, a)| *a).collect();
    let odd = odd_multiples(&affine);
    let portable = |(table, s, _, e): &Pow2<'_, P256>, i: &Option<usize>| -> Jacobian {
        let acc = i.map_or(Jacobian::IDENTITY, |i| pow_variable(&odd[i], e));
        match &table.unwrap_or(generator).windows {
            Some(w) => w.add_power(acc, s),
            None => acc,
        }
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = lanes;
    #[cfg(target_arch = "x86_64")]
    if lanes && crate::p256_ifma::available() {
        let odd8: Vec<crate::p256_ifma::Odd> =
            odd.iter().map(crate::p256_ifma::odd_entries).collect();
        let lanes: Vec<crate::p256_ifma::Pow2Job<'_>> = jobs
            .iter()
            .zip(&at)
            .map(|((table, s, _, e), i)| {
                let fixed = table.unwrap_or(generator).ifma().unwrap_or(&[]);
                (i.map(|i| &odd8[i]), *e, fixed, *s)
            })
            .collect();
        if let Some(sums) = crate::p256_ifma::pow2_many(&lanes) {
            // a lane that met an exceptional addition is made again with the portable formulas
            return sums
                .into_iter()
                .zip(jobs.iter().zip(&at))
                .map(|(sum, (job, i))| sum.unwrap_or_else(|| portable(job, i)))
                .collect();
        }
    }
    jobs.iter()
        .zip(&at)
        .map(|(job, i)| portable(job, i))
        .collect()
}

impl P256 {
    /// Jacobian sums as elements, normalised together, each knowing its encoding.
    fn normalized(&self, sums: &[Jacobian]) -> Vec<P256Point> {
        normalize(sums)
            .into_iter()
            .map(P256Point::of_affine)
            .collect()
    }
}

fn generator_table() -> &'static P256Table {
    GENERATOR_TABLE.get_or_init(|| P256Table::new(&ProjectivePoint::GENERATOR))
}

impl Group for P256 {
    type Element = P256Point;
    type Scalar = Scalar;
    type Table = P256Table;

    fn id(&self) -> GroupId {
        GroupId::P256
    }

    fn order(&self) -> &Integer {
        Self::order_integer()
    }

    fn generator(&self) -> &P256Point {
        GENERATOR.get_or_init(|| P256Point::new(ProjectivePoint::GENERATOR))
    }

    fn identity(&self) -> P256Point {
        P256Point::of_affine(None)
    }

    fn op(&self, a: &P256Point, b: &P256Point) -> P256Point {
        P256Point::new(a.point + b.point)
    }

    fn inverse(&self, a: &P256Point) -> P256Point {
        // −(x, y) = (x, −y): the encoding flips its parity byte
        match a.known.get() {
            Some(known) => P256Point {
                point: -a.point,
                known: OnceLock::from(known.map(|k| Known {
                    affine: k.affine.neg(),
                    compressed: {
                        let mut c = k.compressed;
                        c[0] ^= 1;
                        c
                    },
                })),
            },
            None => P256Point::new(-a.point),
        }
    }

    fn div(&self, a: &P256Point, b: &P256Point) -> P256Point {
        P256Point::new(a.point - b.point)
    }

    fn pow(&self, base: &P256Point, s: &Scalar) -> P256Point {
        P256Point::new(base.point * s)
    }

    #[cfg(feature = "secret")]
    fn pow_secret(&self, base: &P256Point, s: &Secret<Scalar>) -> P256Point {
        // p256's scalar multiplication is constant time
        P256Point::new(base.point * s.expose())
    }

    fn pow_generator(&self, s: &Scalar) -> P256Point {
        P256Point::new(generator_table().pow(s))
    }

    fn table(&self, base: &P256Point) -> P256Table {
        P256Table::new(&base.point)
    }

    fn pow_table(&self, table: &P256Table, s: &Scalar) -> P256Point {
        P256Point::new(table.pow(s))
    }

    /// The powers summed in Jacobian coordinates and brought to affine form with one field inversion in all;
    /// each result knows its encoding.
    fn pow_fixed_many(&self, jobs: &[(Option<&P256Table>, &Scalar)]) -> Vec<P256Point> {
        let generator = generator_table();
        #[cfg(target_arch = "x86_64")]
        if let Some(sums) = pow_many_ifma(jobs, generator) {
            return self.normalized(&sums);
        }
        let sums = pow_many_portable(jobs, generator);
        self.normalized(&sums)
    }

    /// Each job's two powers summed in Jacobian coordinates (`pow2_sums`), all brought to affine form with one
    /// field inversion, each result knowing its encoding.
    fn pow2_many(&self, jobs: &[Pow2<'_, Self>]) -> Vec<P256Point> {
        self.normalized(&pow2_sums(jobs, true))
    }

    fn multi_pow(&self, bases: &[P256Point], scalars: &[Scalar]) -> Result<P256Point, GroupError> {
        if bases.len() != scalars.len() {
            return Err(GroupError::LengthMismatch {
                bases: bases.len(),
                scalars: scalars.len(),
            });
        }
        let mut acc = ProjectivePoint::IDENTITY;
        let mut pairs = bases.chunks_exact(2).zip(scalars.chunks_exact(2));
        for (b, s) in &mut pairs {
            acc += ProjectivePoint::lincomb(&b[0].point, &s[0], &b[1].point, &s[1]);
        }
        if bases.len() % 2 == 1 {
            acc += bases[bases.len() - 1].point * scalars[scalars.len() - 1];
        }
        Ok(P256Point::new(acc))
    }

    /// SEC1 compressed (0x02 or 0x03, then x); the identity is 33 zero bytes.
    fn element_len(&self) -> usize {
        33
    }

    fn encode_element(&self, a: &P256Point) -> Vec<u8> {
        a.compressed().map_or_else(|| vec![0u8; 33], |c| c.to_vec())
    }

    fn decode_element(&self, bytes: &[u8]) -> Result<P256Point, GroupError> {
        if bytes.len() != 33 {
            return Err(GroupError::WrongLength {
                expected: 33,
                got: bytes.len(),
            });
        }
        if bytes.iter().all(|b| *b == 0) {
            return Ok(self.identity());
        }
        if bytes[0] != 2 && bytes[0] != 3 {
            return Err(GroupError::NonCanonical);
        }
        let encoded = EncodedPoint::from_bytes(bytes).map_err(|_| GroupError::NonCanonical)?;
        // a point that decodes is on the curve, and the curve has prime order: a member. Its x is below p
        // (the decoder refuses x ≥ p), so these bytes are its one compressed encoding.
        let point = Option::<AffinePoint>::from(AffinePoint::from_encoded_point(&encoded))
            .ok_or(GroupError::NonCanonical)?;
        let mut compressed = [0u8; 33];
        compressed.copy_from_slice(bytes);
        let affine = Affine::from_p256(&point).ok_or(GroupError::NonCanonical)?;
        Ok(P256Point {
            point: ProjectivePoint::from(point),
            known: OnceLock::from(Some(Known { affine, compressed })),
        })
    }

    fn uniform_len(&self) -> usize {
        48
    }

    fn element_from_uniform(&self, bytes: &[u8]) -> Option<P256Point> {
        let point =
            NistP256::hash_from_bytes::<ExpandMsgXmd<Sha256>>(&[bytes], &[UNIFORM_DST]).ok()?;
        (!bool::from(point.is_identity())).then(|| P256Point::new(point))
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
    use p256::elliptic_curve::sec1::ToEncodedPoint;

    /// The fixed-base tables (of g and of any point), one at a time and in batches, give the same powers as
    /// p256's own multiplication, for exponents with zero digits, digits at the signed recoding's edges, the
    /// largest exponent and random ones; the encodings a batch or a decoding keeps are p256's.
    #[test]
    fn fixed_base_tables_agree_with_scalar_multiplication() {
        use rand_chacha::rand_core::SeedableRng;
        let g = P256;
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(9);
        let base = ProjectivePoint::GENERATOR * g.random_scalar(&mut rng);
        let table = g.table(&P256Point::new(base));
        let n_minus_1 = -Scalar::ONE;
        let mut cases = vec![
            Scalar::ZERO,
            Scalar::ONE,
            n_minus_1,
            n_minus_1 - Scalar::ONE,
            g.scalar_from_u64(256),
            g.scalar_from_u64(1 << 40),
            // digits 4096 (kept), 4097 (−4095 and a carry), 8191 (−1 and a carry), a carry into a full window
            g.scalar_from_u64(4096),
            g.scalar_from_u64(4097),
            g.scalar_from_u64(8191),
            g.scalar_from_u64((8191 << 13) | 8191),
            g.scalar_from_u64(8192),
            g.scalar_from_integer(&(Integer::from(1) << 247u32)),
            g.scalar_from_integer(&((Integer::from(1) << 255u32) - 1u32)),
        ];
        cases.extend((0..50).map(|_| g.random_scalar(&mut rng)));
        let jobs: Vec<(Option<&P256Table>, &Scalar)> = cases
            .iter()
            .flat_map(|s| [(Some(&table), s), (None, s)])
            .collect();
        let batch = g.pow_fixed_many(&jobs);
        for (i, s) in cases.iter().enumerate() {
            let want = base * s;
            let want_g = ProjectivePoint::GENERATOR * s;
            assert_eq!(g.pow_table(&table, s).point, want);
            assert_eq!(g.pow_generator(s).point, want_g);
            assert_eq!(batch[2 * i].point, want);
            assert_eq!(batch[2 * i + 1].point, want_g);
            let encoded =
                (!bool::from(want.is_identity())).then(|| want.to_affine().to_encoded_point(true));
            let encoded = encoded.map(|e| e.as_bytes().to_vec());
            // the encoding the batch kept, and one made afresh from the point
            assert_eq!(batch[2 * i].compressed().map(|c| c.to_vec()), encoded);
            assert_eq!(
                P256Point::new(want).compressed().map(|c| c.to_vec()),
                encoded
            );
            let decoded = g.decode_element(&g.encode_element(&batch[2 * i])).unwrap();
            assert_eq!(decoded, batch[2 * i]);
            assert_eq!(decoded.compressed().map(|c| c.to_vec()), encoded);
            assert_eq!(
                g.inverse(&decoded).compressed(),
                P256Point::new(-want).compressed()
            );
        }
        assert_eq!(g.encode_element(&g.identity()), vec![0u8; 33]);
        // each path on its own: the portable one always, the eight-lane one where the CPU has IFMA (a CPU
        // with it takes that path in the batch above, so the portable one is checked here)
        let generator = generator_table();
        let portable = g.normalized(&pow_many_portable(&jobs, generator));
        assert_eq!(portable, batch);
        #[cfg(target_arch = "x86_64")]
        if let Some(sums) = pow_many_ifma(&jobs, generator) {
            assert_eq!(g.normalized(&sums), batch);
        }
        // the identity's table gives the identity
        let none = g.table(&g.identity());
        assert_eq!(g.pow_table(&none, &Scalar::ONE), g.identity());
        assert_eq!(
            g.pow_fixed_many(&[(Some(&none), &Scalar::ONE)]),
            vec![g.identity()]
        );
    }

    /// The width-5 non-adjacent form gives the scalar back, with odd digits below 16 in absolute value and
    /// four zeros at least after each non-zero one, for the edges (0, 1, n − 1, 2^255, runs of ones that carry
    /// into a 257th digit) and random scalars.
    #[test]
    fn the_non_adjacent_form_gives_the_scalar_back() {
        use crate::p256_fixed::{wnaf, NAF_WIDTH};
        use rand_chacha::rand_core::SeedableRng;
        let g = P256;
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(11);
        let mut cases = vec![Scalar::ZERO, Scalar::ONE, -Scalar::ONE, -Scalar::from(2u64)];
        cases.push(g.scalar_from_integer(&(Integer::from(1) << 255)));
        cases.push(g.scalar_from_integer(&((Integer::from(1) << 255) - 1)));
        cases.push(g.scalar_from_integer(&(Integer::from(31) << 200)));
        cases.extend((0..200).map(|_| g.random_scalar(&mut rng)));
        for e in &cases {
            let naf = wnaf(e);
            let mut sum = Integer::new();
            let mut last: Option<usize> = None;
            for (i, d) in naf.iter().enumerate() {
                if *d != 0 {
                    assert!(d % 2 != 0 && d.abs() < 16, "digit {d} at {i}");
                    if let Some(j) = last {
                        assert!(i - j >= NAF_WIDTH, "digits at {j} and {i}");
                    }
                    last = Some(i);
                    sum += Integer::from(*d) << (i as u32);
                }
            }
            assert_eq!(sum, g.scalar_to_integer(e));
        }
    }

    /// `pow2_many` gives t^s·b^e as `p256`'s own arithmetic does, in one batch that mixes g's table and another,
    /// repeated and distinct bases, the identity as a base, zero exponents, the results that are the identity,
    /// and the exceptional additions: the variable part equal to the first table entry added (b = g, e = 1,
    /// s = 1: a doubling), and e = n − 2d, whose last digit −d meets a sum of d·b. Each result knows its
    /// encoding, which is `p256`'s.
    #[test]
    fn two_base_powers_agree_with_scalar_multiplication() {
        use crate::p256_fixed::wnaf;
        use rand_chacha::rand_core::SeedableRng;
        let g = P256;
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(12);
        let k = P256Point::new(ProjectivePoint::GENERATOR * g.random_scalar(&mut rng));
        let k_table = g.table(&k);
        let alpha = P256Point::new(ProjectivePoint::GENERATOR * g.random_scalar(&mut rng));
        // a decoded base, which knows its affine form from its bytes
        let beta = g
            .decode_element(&g.encode_element(&P256Point::new(k.point * Scalar::from(3u64))))
            .unwrap();
        let id = g.identity();
        let gen = g.generator().clone();
        let n_minus = |v: u64| -Scalar::from(v);
        // e = n − 2d whose last digit is −d
        let edge = (1..16u64)
            .step_by(2)
            .map(|d| n_minus(2 * d))
            .find(|e| wnaf(e)[0] < 0)
            .expect("an e = n − 2d ending in −d");
        let mut scalars: Vec<Scalar> = (0..24).map(|_| g.random_scalar(&mut rng)).collect();
        scalars.extend([Scalar::ZERO, Scalar::ONE, -Scalar::ONE, edge]);
        let mut jobs: Vec<Pow2<'_, P256>> = Vec::new();
        for (i, e) in scalars.iter().enumerate() {
            let s = &scalars[(i * 7 + 3) % scalars.len()];
            let table = if i % 2 == 0 { None } else { Some(&k_table) };
            let base = [&alpha, &beta, &alpha, &id, &gen][i % 5];
            jobs.push((table, s, base, e));
        }
        let one = Scalar::ONE;
        let zero = Scalar::ZERO;
        let minus_one = -Scalar::ONE;
        jobs.push((None, &one, &gen, &one)); // g + g: the doubling case
        jobs.push((None, &one, &gen, &minus_one)); // g − g: the identity
        jobs.push((None, &zero, &id, &zero));
        jobs.push((Some(&k_table), &one, &k, &minus_one)); // K − K
        jobs.push((None, &zero, &alpha, &edge));
        jobs.push((None, &edge, &gen, &zero));
        let got = g.pow2_many(&jobs);
        assert_eq!(got.len(), jobs.len());
        for ((table, s, base, e), r) in jobs.iter().zip(&got) {
            let t = if table.is_some() {
                k.point
            } else {
                ProjectivePoint::GENERATOR
            };
            let want = t * *s + base.point * *e;
            assert_eq!(r.point, want);
            let encoded =
                (!bool::from(want.is_identity())).then(|| want.to_affine().to_encoded_point(true));
            assert_eq!(
                r.compressed().map(|c| c.to_vec()),
                encoded.map(|e| e.as_bytes().to_vec())
            );
        }
        assert_eq!(got[jobs.len() - 6], g.pow_generator(&Scalar::from(2u64)));
        assert_eq!(got[jobs.len() - 5], id);
        // each path on its own: the portable one, and the eight-lane one where the CPU has IFMA (whose lanes
        // that meet an exceptional addition are made again with the portable formulas)
        assert_eq!(g.normalized(&pow2_sums(&jobs, false)), got);
        assert_eq!(g.normalized(&pow2_sums(&jobs, true)), got);
    }

    /// A table holds its entries in votum's affine form only, until a power needs another: a batch (an encryption
    /// device) never makes `p256`'s form, a single power (a checker) never makes the eight-lane form. Each form
    /// made later gives the same powers.
    #[test]
    fn a_tables_other_forms_are_made_on_first_use() {
        let g = P256;
        let s = g.scalar_from_u64(123_456_789);
        let base = P256Point::new(ProjectivePoint::GENERATOR * Scalar::from(5u64));
        let want = P256Point::new(base.point * s);
        let made = |t: &P256Table| t.windows.as_ref().map(|w| w.p256_made());
        #[cfg(target_arch = "x86_64")]
        let lanes = |t: &P256Table| t.ifma.get().is_some();

        let device = g.table(&base);
        assert_eq!(made(&device), Some(false));
        assert_eq!(g.pow_fixed_many(&[(Some(&device), &s)]), vec![want.clone()]);
        assert_eq!(made(&device), Some(false));
        #[cfg(target_arch = "x86_64")]
        assert_eq!(lanes(&device), crate::p256_ifma::available());

        let checker = g.table(&base);
        assert_eq!(g.pow_table(&checker, &s), want);
        assert_eq!(made(&checker), Some(true));
        #[cfg(target_arch = "x86_64")]
        assert!(!lanes(&checker));
        // the other form, made after the first, agrees
        assert_eq!(
            g.pow_fixed_many(&[(Some(&checker), &s)]),
            vec![want.clone()]
        );
        assert_eq!(g.pow_table(&device, &s), want);
        assert_eq!(
            std::mem::size_of::<crate::p256_fixed::Affine>()
                * crate::p256_fixed::WINDOWS
                * crate::p256_fixed::HALF,
            81_920 * 64
        );
    }

    /// The Jacobian formulas' exceptional cases: P + P doubles, P + (−P) is the identity, the identity plus Q is
    /// Q, and a batch with the identity among its points normalises the others.
    #[test]
    fn jacobian_additions_take_their_exceptional_cases() {
        let g = P256;
        let p = ProjectivePoint::GENERATOR * Scalar::from(77u64);
        let a = Affine::from_p256(&p.to_affine()).unwrap();
        let j = Jacobian::IDENTITY.add_affine(&a);
        let twice = j.add_affine(&a);
        let zero = twice.add_affine(&a).add_affine(&Affine {
            x: a.x,
            y: a.y.neg(),
        });
        let out = normalize(&[twice, Jacobian::IDENTITY, j.double(), zero.add_affine(&a)]);
        assert_eq!(out[0].unwrap().to_p256(), (p + p).to_affine());
        assert!(out[1].is_none());
        assert_eq!(out[2].unwrap().to_p256(), (p + p).to_affine());
        // 2P + P − P = 2P; plus P: 3P
        assert_eq!(out[3].unwrap().to_p256(), (p + p + p).to_affine());
        let gone = Jacobian::IDENTITY.add_affine(&a).add_affine(&Affine {
            x: a.x,
            y: a.y.neg(),
        });
        assert!(normalize(&[gone])[0].is_none());
        assert_eq!(g.identity().compressed(), None);
    }

    /// A compressed x at or above p is refused, though x − p is a point's: one encoding per point.
    #[test]
    fn an_x_at_or_above_p_is_refused() {
        let g = P256;
        let mut off = vec![2u8];
        off.extend_from_slice(&[0u8; 31]);
        off.push(5);
        assert!(g.decode_element(&off).is_ok());
        // p + 5
        let p_plus_5 = "ffffffff00000001000000000000000000000001000000000000000000000004";
        let mut above = vec![2u8];
        above.extend((0..32).map(|i| u8::from_str_radix(&p_plus_5[2 * i..2 * i + 2], 16).unwrap()));
        assert!(g.decode_element(&above).is_err());
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
        for e in [x.clone(), g.identity(), g.generator().clone()] {
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
        let b = [
            x,
            g.generator().clone(),
            g.pow_generator(&g.scalar_from_u64(9)),
        ];
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
