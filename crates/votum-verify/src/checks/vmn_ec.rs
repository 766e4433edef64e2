//! VMN's elliptic-curve groups `ECqPGroup(<curve>)` for the NIST curves (spec/99.4): P-192, P-224,
//! P-256, P-384 and P-521 (also named secp192r1 … secp521r1), each over RustCrypto's arithmetic for
//! that curve (ADR 0012). One macro gives every curve the same [`VGroup`]: VMN's point encoding (a
//! node of two coordinates of the field's two's complement length, the identity both -1), its
//! random elements (the independent generators) and a multi-exponentiation by Pippenger's method.

use rayon::prelude::*;
use votum_arith::Integer;

use crate::bytetree::{write_leaf, write_node, Bt};
use crate::checks::vmn::{twos_fixed, twos_len, Out, Prg, VGroup};

/// `prod points[i]^scalars[i]` by Pippenger's bucket method, scalars given as big-endian bytes:
/// windows of c bits from the top, each point added once per window to the bucket of its digit,
/// the buckets summed by running sums.
fn pippenger<P>(points: &[P], scalars: &[Vec<u8>], naive: impl Fn(&P, &[u8]) -> P) -> P
where
    P: p256::elliptic_curve::group::Group + for<'a> std::ops::AddAssign<&'a P>,
{
    let n = points.len();
    if n < 16 {
        return points
            .iter()
            .zip(scalars)
            .map(|(p, s)| naive(p, s))
            .fold(P::identity(), |a, b| a + b);
    }
    let bits = scalars.first().map_or(0, Vec::len) * 8;
    let c: usize = match n {
        0..=63 => 4,
        64..=511 => 6,
        512..=4095 => 8,
        4096..=32767 => 10,
        _ => 12,
    };
    let digit = |s: &[u8], w: usize| -> usize {
        // bits [w*c, w*c + c) counted from the least significant bit
        let mut v = 0usize;
        for k in 0..c {
            let bit = w * c + k;
            if bit >= bits {
                break;
            }
            let byte = s[s.len() - 1 - bit / 8];
            if (byte >> (bit % 8)) & 1 == 1 {
                v |= 1 << k;
            }
        }
        v
    };
    let windows = bits.div_ceil(c);
    let mut acc = P::identity();
    let mut buckets = vec![P::identity(); (1 << c) - 1];
    for w in (0..windows).rev() {
        for _ in 0..c {
            acc = acc.double();
        }
        buckets.fill(P::identity());
        for (p, s) in points.iter().zip(scalars) {
            let d = digit(s, w);
            if d != 0 {
                buckets[d - 1] += p;
            }
        }
        let mut running = P::identity();
        let mut sum = P::identity();
        for b in buckets.iter().rev() {
            running += b;
            sum += running;
        }
        acc += sum;
    }
    acc
}

/// One NIST curve as VMN's `ECqPGroup`: `$krate` is its RustCrypto crate.
macro_rules! nist_curve {
    ($(#[$doc:meta])* $name:ident, $krate:ident, $p:literal, $q:literal) => {
        $(#[$doc])*
        pub(crate) struct $name {
            /// the name protInfo.xml gives the curve
            label: String,
            p: Integer,
            q: Integer,
            /// bytes of a field element (and of a scalar) in RustCrypto's encoding
            field: usize,
            /// bytes of a coordinate in VMN's (two's complement of p's length)
            coordinate: usize,
        }

        impl $name {
            pub(crate) fn new(label: &str) -> $name {
                let hex = |s: &str| Integer::from_str_radix(s, 16).unwrap_or_default();
                let p = hex($p);
                $name {
                    label: label.into(),
                    field: (p.significant_bits() as usize).div_ceil(8),
                    coordinate: twos_len(&p),
                    q: hex($q),
                    p,
                }
            }

            fn scalar_bytes(&self, s: &Integer) -> Vec<u8> {
                let q = &self.q;
                let reduced = if s >= q || *s < 0 {
                    let mut r = Integer::from(s % q);
                    if r < 0 {
                        r += q;
                    }
                    r
                } else {
                    s.clone()
                };
                let b = twos_fixed(&reduced, self.field + 1);
                b[1..].to_vec()
            }

            fn scalar_of(bytes: &[u8]) -> $krate::Scalar {
                use $krate::elliptic_curve::PrimeField;
                let repr = $krate::FieldBytes::clone_from_slice(bytes);
                Option::<$krate::Scalar>::from($krate::Scalar::from_repr(repr))
                    .unwrap_or($krate::Scalar::ZERO)
            }

            /// The point of x-coordinate x whose y is the smaller of its two roots (VMN's
            /// `randomElementArray`), or `None` when x is no point's.
            fn lift(&self, x: &Integer) -> Option<$krate::ProjectivePoint> {
                use $krate::elliptic_curve::sec1::{FromEncodedPoint, ToEncodedPoint};
                let xb = twos_fixed(x, self.field + 1);
                let mut compressed = vec![2u8];
                compressed.extend_from_slice(&xb[1..]);
                let ep = $krate::EncodedPoint::from_bytes(&compressed).ok()?;
                let point =
                    Option::<$krate::AffinePoint>::from($krate::AffinePoint::from_encoded_point(&ep))?;
                let y = Integer::from_digits(
                    point.to_encoded_point(false).y()?.as_slice(),
                    votum_arith::Order::Msf,
                );
                let other = Integer::from(&self.p - &y);
                let point = $krate::ProjectivePoint::from(point);
                Some(if other < y { -point } else { point })
            }
        }

        impl VGroup for $name {
            type E = $krate::ProjectivePoint;

            fn name(&self) -> String {
                format!("ECqPGroup({})", self.label)
            }

            fn q(&self) -> &Integer {
                &self.q
            }

            fn g(&self) -> Self::E {
                $krate::ProjectivePoint::GENERATOR
            }

            fn one(&self) -> Self::E {
                $krate::ProjectivePoint::IDENTITY
            }

            fn mul(&self, a: &Self::E, b: &Self::E) -> Self::E {
                a + b
            }

            fn inv(&self, a: &Self::E) -> Self::E {
                -a
            }

            fn exp(&self, a: &Self::E, s: &Integer) -> Self::E {
                a * &Self::scalar_of(&self.scalar_bytes(s))
            }

            fn multi_exp(&self, b: &[Self::E], s: &[Integer]) -> Self::E {
                let chunk = b
                    .len()
                    .div_ceil(rayon::current_num_threads().max(1))
                    .max(256);
                b.par_chunks(chunk)
                    .zip(s.par_chunks(chunk))
                    .map(|(b, s)| {
                        let digits: Vec<Vec<u8>> = s.iter().map(|e| self.scalar_bytes(e)).collect();
                        pippenger(b, &digits, |p, s| p * &Self::scalar_of(s))
                    })
                    .reduce(|| $krate::ProjectivePoint::IDENTITY, |x, y| x + y)
            }

            fn decode(&self, t: &Bt<'_>, what: &str) -> Result<Self::E, String> {
                use $krate::elliptic_curve::sec1::FromEncodedPoint;
                let c = t.children(2, what)?;
                let (xb, yb) = (c[0].leaf(what)?, c[1].leaf(what)?);
                let len = self.coordinate;
                if xb.len() != len || yb.len() != len {
                    return Err(format!("{what}: coordinates of {len} bytes expected"));
                }
                if xb.iter().all(|&b| b == 0xff) && yb.iter().all(|&b| b == 0xff) {
                    return Ok($krate::ProjectivePoint::IDENTITY);
                }
                let pad = len - self.field;
                if xb[..pad].iter().chain(&yb[..pad]).any(|&b| b != 0) {
                    return Err(format!("{what}: a coordinate out of range"));
                }
                let ep = $krate::EncodedPoint::from_affine_coordinates(
                    $krate::FieldBytes::from_slice(&xb[pad..]),
                    $krate::FieldBytes::from_slice(&yb[pad..]),
                    false,
                );
                Option::<$krate::AffinePoint>::from($krate::AffinePoint::from_encoded_point(&ep))
                    .map(Into::into)
                    .ok_or_else(|| format!("{what}: not a point of {}", self.label))
            }

            fn encode(&self, e: &Self::E, out: &mut dyn Out) {
                use $krate::elliptic_curve::sec1::ToEncodedPoint;
                let len = self.coordinate;
                let pad = len - self.field;
                let mut buf = Vec::with_capacity(2 * len + 15);
                write_node(&mut buf, 2);
                let ep = e.to_affine().to_encoded_point(false);
                match (ep.x(), ep.y()) {
                    (Some(x), Some(y)) => {
                        let mut c = vec![0u8; len];
                        c[pad..].copy_from_slice(x);
                        write_leaf(&mut buf, &c);
                        c[pad..].copy_from_slice(y);
                        write_leaf(&mut buf, &c);
                    }
                    _ => {
                        write_leaf(&mut buf, &vec![0xff; len]);
                        write_leaf(&mut buf, &vec![0xff; len]);
                    }
                }
                out.put(&buf);
            }

            fn random_elements(&self, prg: &mut Prg, n: usize, statdist: u32) -> Vec<Self::E> {
                let bits = self.p.significant_bits() + statdist;
                let mut out = Vec::with_capacity(n);
                // VMN draws twice the missing count at a time, at most 10^7 (its file-based
                // arrays' batch of 10^6, times ten), and keeps the points found in order
                // (ECqPGroup.randomElementArray)
                while out.len() < n {
                    let want = (n - out.len()).min(10_000_000);
                    let xs: Vec<Integer> =
                        (0..2 * want).map(|_| prg.integer(bits) % &self.p).collect();
                    let found: Vec<Option<Self::E>> = xs.par_iter().map(|x| self.lift(x)).collect();
                    let room = n - out.len();
                    out.extend(found.into_iter().flatten().take(room));
                }
                out
            }

            fn decode_plain(&self, e: &Self::E) -> Vec<u8> {
                use $krate::elliptic_curve::sec1::ToEncodedPoint;
                // VMN's ECqPGroupElement.decode: the x-coordinate in the field's two's complement
                // length, the data's length in the two bytes before the last, the data before them
                let ep = e.to_affine().to_encoded_point(false);
                let Some(x) = ep.x() else {
                    return Vec::new();
                };
                let mut bytes = vec![0u8; self.coordinate - self.field];
                bytes.extend_from_slice(x);
                let at = bytes.len() - 3;
                let len = usize::from(u16::from_be_bytes([bytes[at], bytes[at + 1]]));
                let room = self.field - 1 - 3;
                if len == 0 || len > room || len > at {
                    return Vec::new();
                }
                bytes[at - len..at].to_vec()
            }
        }
    };
}

nist_curve!(
    /// NIST P-192 (secp192r1).
    P192,
    p192,
    "fffffffffffffffffffffffffffffffeffffffffffffffff",
    "ffffffffffffffffffffffff99def836146bc9b1b4d22831"
);
nist_curve!(
    /// NIST P-224 (secp224r1).
    P224,
    p224,
    "ffffffffffffffffffffffffffffffff000000000000000000000001",
    "ffffffffffffffffffffffffffff16a2e0b8f03e13dd29455c5c2a3d"
);
nist_curve!(
    /// NIST P-256 (secp256r1), the curve of every ONPE session.
    P256,
    p256,
    "ffffffff00000001000000000000000000000000ffffffffffffffffffffffff",
    "ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551"
);
nist_curve!(
    /// NIST P-384 (secp384r1).
    P384,
    p384,
    "fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffeffffffff0000000000000000ffffffff",
    "ffffffffffffffffffffffffffffffffffffffffffffffffc7634d81f4372ddf581a0db248b0a77aecec196accc52973"
);
nist_curve!(
    /// NIST P-521 (secp521r1).
    P521,
    p521,
    "1ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
    "1fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffa51868783bf2f966b7fcc0148f709a5d03bb5c9b8899c47aebb6fb71e91386409"
);

#[cfg(test)]
mod tests {
    use super::*;

    /// Pippenger's product equals the product of single powers, identity and edge scalars included,
    /// on the smallest and the largest curve.
    #[test]
    fn pippenger_is_the_product_of_powers() {
        fn check<G: VGroup>(g: &G) {
            for n in [1usize, 15, 16, 70, 600] {
                let points: Vec<G::E> = (0..n)
                    .map(|i| {
                        if i == 3 {
                            g.one()
                        } else {
                            g.exp(&g.g(), &Integer::from(i * 7919 + 11))
                        }
                    })
                    .collect();
                let scalars: Vec<Integer> = (0..n)
                    .map(|i| match i % 5 {
                        0 => Integer::new(),
                        1 => Integer::from(1),
                        2 => Integer::from(g.q() - 1u32),
                        _ => Integer::from(Integer::u_pow_u(3, 150 + i as u32)) % g.q(),
                    })
                    .collect();
                let naive = points
                    .iter()
                    .zip(&scalars)
                    .fold(g.one(), |a, (p, s)| g.mul(&a, &g.exp(p, s)));
                assert!(
                    g.multi_exp(&points, &scalars) == naive,
                    "{} n = {n}",
                    g.name()
                );
            }
        }
        check(&P192::new("P-192"));
        check(&P256::new("P-256"));
        check(&P521::new("P-521"));
    }

    /// Each curve's points encode to VMN's length and decode back; the identity too; a point off the
    /// curve and a coordinate out of range are refused; the generators found are on the curve.
    #[test]
    fn points_round_trip_on_every_curve() {
        fn check<G: VGroup>(g: &G, coordinate: usize) {
            let x = g.exp(&g.g(), &Integer::from(12345));
            let mut b = Vec::new();
            g.encode(&x, &mut b);
            assert_eq!(b.len(), 5 + 2 * (5 + coordinate), "{}", g.name());
            assert!(g.decode(&Bt::parse(&b).unwrap(), "x").unwrap() == x);
            let mut one = Vec::new();
            g.encode(&g.one(), &mut one);
            assert!(g.decode(&Bt::parse(&one).unwrap(), "1").unwrap() == g.one());
            let last = b.len() - 1;
            let mut off = b.clone();
            off[last] ^= 1;
            assert!(g.decode(&Bt::parse(&off).unwrap(), "x").is_err());
            let mut wide = b.clone();
            wide[10] = 1;
            assert!(g.decode(&Bt::parse(&wide).unwrap(), "x").is_err() || coordinate == 66);
            let mut prg = Prg::new(crate::checks::vmn::Hash::Sha256, &[7u8; 32]);
            for h in g.random_elements(&mut prg, 4, 100) {
                let mut b = Vec::new();
                g.encode(&h, &mut b);
                assert!(g.decode(&Bt::parse(&b).unwrap(), "h").unwrap() == h);
            }
        }
        check(&P192::new("P-192"), 25);
        check(&P224::new("P-224"), 29);
        check(&P256::new("P-256"), 33);
        check(&P384::new("P-384"), 49);
        check(&P521::new("P-521"), 66);
    }
}
