//! Fixed-base powers on P-256 in Jacobian coordinates over `p256`'s own field, with the results of a batch
//! brought to affine form by one field inversion (ADR 0014).
//!
//! `p256` 0.13 keeps its points' coordinates private and has no batched normalisation for this curve, so each
//! point it encodes costs a field inversion (about 10 µs, as much as 20 point additions). An ElectionGuard
//! selection hashes six fresh points. Here the powers are summed from a table of affine points in Jacobian
//! coordinates (mixed addition: 8 products and 3 squares), and a batch of them shares one inversion
//! (Montgomery's trick). Field arithmetic is `p256`'s (`expose-field`); only the point formulas are votum's.
//!
//! Like the modp groups' tables (ADR 0002), the lookups and the branches for exceptional additions depend on
//! the exponent's digits: for public exponents and encryption nonces only, never for long-term secrets.

use std::sync::OnceLock;

use p256::elliptic_curve::sec1::FromEncodedPoint;
use p256::{AffinePoint, EncodedPoint, FieldElement as Fe, ProjectivePoint, Scalar};

use p256::elliptic_curve::PrimeField;

/// Bits per window of a table: digits are signed, in −2^12…2^12.
pub(crate) const WINDOW: usize = 13;
/// Windows that cover a scalar below n < 2^256 with the last carry (20 × 13 = 260 bits).
pub(crate) const WINDOWS: usize = 20;
/// Entries per window: d·2^(13i)·B for d = 1…2^12.
pub(crate) const HALF: usize = 1 << (WINDOW - 1);

/// A point other than the identity, in affine coordinates.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Affine {
    pub(crate) x: Fe,
    pub(crate) y: Fe,
}

impl Affine {
    pub(crate) fn neg(&self) -> Self {
        Self {
            x: self.x,
            y: self.y.neg(),
        }
    }

    /// SEC1 compressed: 0x02 or 0x03 by y's parity, then x big-endian.
    pub(crate) fn compressed(&self) -> [u8; 33] {
        let mut out = [0u8; 33];
        out[0] = 2 + u8::from(bool::from(self.y.is_odd()));
        out[1..].copy_from_slice(&self.x.to_bytes());
        out
    }

    /// The same point as `p256`'s: through its uncompressed encoding, whose decoder checks the curve equation.
    pub(crate) fn to_p256(self) -> AffinePoint {
        let encoded =
            EncodedPoint::from_affine_coordinates(&self.x.to_bytes(), &self.y.to_bytes(), false);
        // a point of this module is on the curve: the check always passes
        Option::from(AffinePoint::from_encoded_point(&encoded)).unwrap_or(AffinePoint::IDENTITY)
    }

    /// `p256`'s affine point in these coordinates (`None` for the identity).
    pub(crate) fn from_p256(p: &AffinePoint) -> Option<Self> {
        use p256::elliptic_curve::sec1::ToEncodedPoint;
        let encoded = p.to_encoded_point(false);
        let x = Fe::from_bytes(encoded.x()?);
        let y = Fe::from_bytes(encoded.y()?);
        Option::from(x.and_then(|x| y.map(|y| Self { x, y })))
    }
}

/// (X, Y, Z) for the affine point (X/Z², Y/Z³); Z = 0 is the identity.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Jacobian {
    x: Fe,
    y: Fe,
    z: Fe,
}

impl Jacobian {
    pub(crate) const IDENTITY: Self = Self {
        x: Fe::ONE,
        y: Fe::ONE,
        z: Fe::ZERO,
    };

    fn is_identity(&self) -> bool {
        bool::from(self.z.is_zero())
    }

    pub(crate) fn from_coordinates(x: Fe, y: Fe, z: Fe) -> Self {
        Self { x, y, z }
    }

    fn from_affine(q: &Affine) -> Self {
        Self {
            x: q.x,
            y: q.y,
            z: Fe::ONE,
        }
    }

    /// 2P on a = −3 (dbl-2001-b): 3 products, 5 squares. P-256 has no point of order 2, so Y ≠ 0 off the
    /// identity.
    pub(crate) fn double(&self) -> Self {
        if self.is_identity() {
            return *self;
        }
        let delta = self.z.square();
        let gamma = self.y.square();
        let beta = self.x.multiply(&gamma);
        let t = self.x.sub(&delta).multiply(&self.x.add(&delta));
        let alpha = t.double().add(&t);
        let beta4 = beta.double().double();
        let x3 = alpha.square().sub(&beta4.double());
        let z3 = self.y.add(&self.z).square().sub(&gamma).sub(&delta);
        let gamma2 = gamma.square();
        let y3 = alpha
            .multiply(&beta4.sub(&x3))
            .sub(&gamma2.double().double().double());
        Self {
            x: x3,
            y: y3,
            z: z3,
        }
    }

    /// P + Q for an affine Q (add-1998-cmo-2 with Z₂ = 1): 8 products, 3 squares. The exceptional cases
    /// (P the identity, P = Q, P = −Q) take their own branch.
    pub(crate) fn add_affine(&self, q: &Affine) -> Self {
        if self.is_identity() {
            return Self::from_affine(q);
        }
        let z1z1 = self.z.square();
        let u2 = q.x.multiply(&z1z1);
        let s2 = q.y.multiply(&self.z).multiply(&z1z1);
        let h = u2.sub(&self.x);
        let r = s2.sub(&self.y);
        if bool::from(h.is_zero()) {
            return if bool::from(r.is_zero()) {
                self.double()
            } else {
                Self::IDENTITY
            };
        }
        let hh = h.square();
        let hhh = h.multiply(&hh);
        let v = self.x.multiply(&hh);
        let x3 = r.square().sub(&hhh).sub(&v.double());
        let y3 = r.multiply(&v.sub(&x3)).sub(&self.y.multiply(&hhh));
        let z3 = self.z.multiply(&h);
        Self {
            x: x3,
            y: y3,
            z: z3,
        }
    }
}

/// The affine forms of `points` with one field inversion in all (Montgomery's trick); `None` for the identity.
pub(crate) fn normalize(points: &[Jacobian]) -> Vec<Option<Affine>> {
    // prefix[i] = product of the non-zero Z of points[..i]
    let mut prefix = Vec::with_capacity(points.len());
    let mut acc = Fe::ONE;
    for p in points {
        prefix.push(acc);
        if !p.is_identity() {
            acc = acc.multiply(&p.z);
        }
    }
    // acc is a product of non-zero elements: invertible
    let mut inv = Option::<Fe>::from(acc.invert()).unwrap_or(Fe::ONE);
    let mut out = vec![None; points.len()];
    for (i, p) in points.iter().enumerate().rev() {
        if p.is_identity() {
            continue;
        }
        let zinv = inv.multiply(&prefix[i]);
        inv = inv.multiply(&p.z);
        let zinv2 = zinv.square();
        out[i] = Some(Affine {
            x: p.x.multiply(&zinv2),
            y: p.y.multiply(&zinv2.multiply(&zinv)),
        });
    }
    out
}

/// s in 64-bit limbs, least significant first, with two zero limbs above it for the recodings' reads past its
/// top.
fn limbs(s: &Scalar) -> [u64; 6] {
    let be = s.to_repr();
    let mut limbs = [0u64; 6];
    for (i, limb) in limbs.iter_mut().take(4).enumerate() {
        let mut word = [0u8; 8];
        word.copy_from_slice(&be[32 - 8 * (i + 1)..32 - 8 * i]);
        *limb = u64::from_be_bytes(word);
    }
    limbs
}

/// The signed digits of s in base 2^13, least significant first: s = Σ d_i·2^(13i), each d_i in −2^12…2^12.
pub(crate) fn digits(s: &Scalar) -> [i16; WINDOWS] {
    let limbs = limbs(s);
    let mut out = [0i16; WINDOWS];
    let mut carry = 0u32;
    for (w, d) in out.iter_mut().enumerate() {
        let bit = w * WINDOW;
        let (limb, offset) = (bit / 64, bit % 64);
        let pair = u128::from(limbs[limb]) | (u128::from(limbs[limb + 1]) << 64);
        // 13 bits at most, plus the carry: below 2^14
        let v = u32::try_from((pair >> offset) & ((1 << WINDOW) - 1)).unwrap_or(0) + carry;
        if v > HALF as u32 {
            // v − 2^13, in −2^12 + 1 … 0
            *d = i16::try_from(i64::from(v) - (1 << WINDOW)).unwrap_or(0);
            carry = 1;
        } else {
            *d = i16::try_from(v).unwrap_or(0);
            carry = 0;
        }
    }
    out
}

/// d·2^(13i)·B for each window i and d = 1…2^12, in votum's affine coordinates for powers made in Jacobian
/// coordinates, and in `p256`'s affine points for powers made with its complete formulas. The second form is
/// made on its first use (about 40 ms): an encryption device never uses it, and it would add 5.6 MiB a table.
pub(crate) struct Windows {
    pub(crate) affine: Vec<Affine>,
    p256: OnceLock<Vec<AffinePoint>>,
}

impl Windows {
    /// The table of a point other than the identity: 81,920 points (10.5 MiB), about 80 ms.
    pub(crate) fn new(base: &Affine) -> Self {
        let mut points = Vec::with_capacity(WINDOWS * HALF);
        let mut b = *base;
        for w in 0..WINDOWS {
            let mut acc = Jacobian::from_affine(&b);
            for _ in 0..HALF {
                points.push(acc);
                acc = acc.add_affine(&b);
            }
            if w + 1 < WINDOWS {
                // 2^13·b = 2·(2^12·b), the last entry
                let next = points[points.len() - 1].double();
                b = normalize(&[next])[0].unwrap_or(b);
            }
        }
        // no entry is the identity: d·2^(13i) < n for every d and i < 20
        let affine: Vec<Affine> = normalize(&points).into_iter().flatten().collect();
        Self {
            affine,
            p256: OnceLock::new(),
        }
    }

    /// Whether the entries in `p256`'s form were made (tests of the tables' memory).
    #[cfg(test)]
    pub(crate) fn p256_made(&self) -> bool {
        self.p256.get().is_some()
    }

    /// The entries as `p256`'s affine points, made on first use.
    fn p256(&self) -> &[AffinePoint] {
        self.p256
            .get_or_init(|| self.affine.iter().map(|a| a.to_p256()).collect())
    }

    fn entry<T: Copy>(table: &[T], w: usize, d: i16) -> (T, bool) {
        (table[w * HALF + usize::from(d.unsigned_abs()) - 1], d < 0)
    }

    /// s·B in Jacobian coordinates. The entries are read first, all at once: the loads do not wait for each
    /// other, so a table out of the cache costs about one memory latency per power, not one per window.
    pub(crate) fn pow_jacobian(&self, s: &Scalar) -> Jacobian {
        self.add_power(Jacobian::IDENTITY, s)
    }

    /// acc + s·B (the exceptional additions take their branches, so acc may be any point).
    pub(crate) fn add_power(&self, mut acc: Jacobian, s: &Scalar) -> Jacobian {
        let digits = digits(s);
        let entries: [Option<(Affine, bool)>; WINDOWS] = std::array::from_fn(|w| {
            (digits[w] != 0).then(|| Self::entry(&self.affine, w, digits[w]))
        });
        for (q, negative) in entries.iter().flatten() {
            acc = acc.add_affine(&if *negative { q.neg() } else { *q });
        }
        acc
    }

    /// s·B with `p256`'s complete mixed additions (no inversion: for a power that is compared, not encoded).
    pub(crate) fn pow_p256(&self, s: &Scalar) -> ProjectivePoint {
        let table = self.p256();
        let mut acc = ProjectivePoint::IDENTITY;
        for (w, d) in digits(s).iter().enumerate() {
            if *d != 0 {
                let (q, negative) = Self::entry(table, w, *d);
                if negative {
                    acc -= &q;
                } else {
                    acc += &q;
                }
            }
        }
        acc
    }
}

/// Digits of a width-5 non-adjacent form.
pub(crate) const NAF_WIDTH: usize = 5;
/// Odd multiples B, 3B, …, 15B a variable base needs for [`wnaf`]'s digits.
pub(crate) const ODD: usize = 1 << (NAF_WIDTH - 2);
/// Digits of a scalar below 2^256 (a last carry can reach 2^256).
pub(crate) const NAF_DIGITS: usize = 257;

/// The width-5 non-adjacent form of s, least significant first: s = Σ d_i·2^i, each d_i zero or odd in
/// −15…15, and any two non-zero digits at least five positions apart.
pub(crate) fn wnaf(s: &Scalar) -> [i8; NAF_DIGITS] {
    let limbs = limbs(s);
    let width = 1u64 << NAF_WIDTH;
    let mut out = [0i8; NAF_DIGITS];
    let mut pos = 0;
    let mut carry = 0u64;
    while pos < NAF_DIGITS {
        let (i, bit) = (pos / 64, pos % 64);
        let bits = if bit + NAF_WIDTH <= 64 {
            limbs[i] >> bit
        } else {
            (limbs[i] >> bit) | (limbs[i + 1] << (64 - bit))
        };
        let window = carry + (bits & (width - 1));
        if window & 1 == 0 {
            // an even window: this digit is zero (a carry of 1 into a window of 31 gives 32, even)
            pos += 1;
            continue;
        }
        // window is odd and below 2^5 + 1
        let w = i8::try_from(window).unwrap_or(0);
        if window < width / 2 {
            out[pos] = w;
            carry = 0;
        } else {
            out[pos] = w - 32;
            carry = 1;
        }
        pos += NAF_WIDTH;
    }
    out
}

/// B, 3B, …, 15B of each base, in affine form, with two field inversions for all the bases. No multiple is
/// the identity (15 < n), and 2B is not (P-256 has no point of order 2).
pub(crate) fn odd_multiples(bases: &[Affine]) -> Vec<[Affine; ODD]> {
    let twos: Vec<Jacobian> = bases
        .iter()
        .map(|b| Jacobian::from_affine(b).double())
        .collect();
    let twos = normalize(&twos);
    let mut points = Vec::with_capacity(bases.len() * ODD);
    for (b, two) in bases.iter().zip(&twos) {
        let mut p = Jacobian::from_affine(b);
        points.push(p);
        for _ in 1..ODD {
            p = match two {
                Some(t) => p.add_affine(t),
                None => p,
            };
            points.push(p);
        }
    }
    let affine = normalize(&points);
    bases
        .iter()
        .enumerate()
        .map(|(k, b)| std::array::from_fn(|i| affine[k * ODD + i].unwrap_or(*b)))
        .collect()
}

/// e·B from B's odd multiples, in Jacobian coordinates: a doubling per digit from the highest non-zero one,
/// and a mixed addition per non-zero digit (their exceptional cases take their branches).
pub(crate) fn pow_variable(odd: &[Affine; ODD], e: &Scalar) -> Jacobian {
    let naf = wnaf(e);
    let mut acc = Jacobian::IDENTITY;
    for d in naf.iter().rev() {
        acc = acc.double();
        if *d != 0 {
            let q = odd[usize::from(d.unsigned_abs()) / 2];
            acc = acc.add_affine(&if *d < 0 { q.neg() } else { q });
        }
    }
    acc
}
