//! What a 2.x record's group must offer beyond [`Group`] (spec/65.1, 65.6): how egk-ec encodes elements and
//! scalars, in its JSON and in H, and how a hash becomes a scalar (a challenge, or a nonce derived from a
//! ballot's nonce). The verifier and the prover share these, so a record votum writes is read the same way.

use p256::elliptic_curve::hash2curve::{ExpandMsg, ExpandMsgXmd, Expander};
use rand_core::OsRng;
use sha2::Sha256;
use votum_group::{Group, GroupId, ModpGroup, P256};

/// The toy parameters' name in a 2.1 record's `parameters.json` (spec/66.1): a test's record, never an
/// election's; the verifier fails it under V-EG21-01 unless told it is a test.
pub const TOY_GROUP: &str = "Toy-q64p256";

/// A group a 2.x record can be on: the 2.x 4096-bit integer group, or P-256.
pub trait Eg2Group: Group {
    /// An element's bytes in H and in the JSON (fixed width: 512 bytes, or 33 for P-256).
    fn hash_bytes(&self, x: &Self::Element) -> Vec<u8>;
    /// A hash as a scalar in Z_q (a challenge, or a derived nonce).
    fn to_challenge(&self, h: &[u8; 32]) -> Self::Scalar;
    /// An element as the JSON writes it; its subgroup membership may be left to [`Eg2Group::all_members`].
    fn read_element(&self, bytes: &[u8]) -> Result<Self::Element, String>;
    /// Whether every element read is in the order-q subgroup.
    fn all_members(&self, xs: &[&Self::Element]) -> bool;
    /// A scalar as the JSON writes it: at most 32 bytes big-endian, below q (a q shorter than 32 bytes, as the
    /// toy parameters' of 8, leaves the leading bytes zero).
    fn read_scalar(&self, bytes: &[u8]) -> Result<Self::Scalar, String> {
        if bytes.len() > 32 {
            return Err("longer than 32 bytes".into());
        }
        let mut fixed = vec![0u8; 32 - bytes.len()];
        fixed.extend_from_slice(bytes);
        let width = self.scalar_len().min(32);
        if fixed[..32 - width].iter().any(|b| *b != 0) {
            return Err("not below q".into());
        }
        self.decode_scalar(&fixed[32 - width..])
            .map_err(|_| "not below q".into())
    }
    /// A scalar as the JSON writes it: 32 bytes big-endian.
    fn scalar_bytes(&self, s: &Self::Scalar) -> Vec<u8> {
        let raw = self.encode_scalar(s);
        let mut out = vec![0u8; 32usize.saturating_sub(raw.len())];
        out.extend_from_slice(&raw);
        out
    }
    /// The protocol version egk-ec gives the group, in constants.json and in H_P's key: `v2.0.0` for the
    /// integer group, `v2.1.0` for P-256 (egk-ec's verifier recomputes H_P with it, spec/65.6).
    fn protocol_version(&self) -> &'static str;
    /// What constants.json says of the group: (name, type, the named constants in hex).
    fn constants(&self) -> (&'static str, &'static str, Vec<(&'static str, String)>);
}

impl Eg2Group for ModpGroup {
    fn hash_bytes(&self, x: &Self::Element) -> Vec<u8> {
        self.encode_element(x)
    }

    fn to_challenge(&self, h: &[u8; 32]) -> Self::Scalar {
        self.scalar_from_wide(h)
    }

    fn read_element(&self, bytes: &[u8]) -> Result<Self::Element, String> {
        if bytes.len() > self.element_len() {
            return Err("longer than p".into());
        }
        let x = votum_arith::Integer::from_digits(bytes, votum_arith::Order::Msf);
        self.element_in_range(&x)
            .map(|e| e.into_unchecked_part())
            .map_err(|_| "not in [1, p)".into())
    }

    fn all_members(&self, xs: &[&Self::Element]) -> bool {
        self.members_hold(xs, &mut OsRng)
    }

    fn protocol_version(&self) -> &'static str {
        "v2.0.0"
    }

    fn constants(&self) -> (&'static str, &'static str, Vec<(&'static str, String)>) {
        let hex = |x: &votum_arith::Integer| x.to_string_radix(16);
        (
            // 2.1's reduced and toy parameters (spec/66.1) are written by the 2.1 record only
            match self.id() {
                GroupId::Eg2_3072 => "Integer3072",
                GroupId::Eg2Toy => TOY_GROUP,
                _ => "Integer4096",
            },
            "IntegerGroup",
            vec![
                ("largePrime", hex(self.p())),
                ("smallPrime", hex(self.order())),
                ("cofactor", hex(self.cofactor())),
                ("generator", hex(self.generator().value())),
            ],
        )
    }
}

/// egk-ec's domain tag for a hash as a P-256 scalar (RFC 9380 `hash_to_field`, 48 bytes, spec/65.6).
const EGK_P256_DST: &[u8] = b"QUUX-V01-CS02-with-P256_XMD:SHA-256_SSWU_RO_";

/// P-256's published constants (SEC 2, FIPS 186-4), in the order constants.json lists them.
pub const P256_CONSTANTS: [(&str, &str); 7] = [
    (
        "a",
        "ffffffff00000001000000000000000000000000fffffffffffffffffffffffc",
    ),
    (
        "b",
        "5ac635d8aa3a93e7b3ebbd55769886bc651d06b0cc53b0f63bce3c3e27d2604b",
    ),
    (
        "primeModulus",
        "ffffffff00000001000000000000000000000000ffffffffffffffffffffffff",
    ),
    (
        "order",
        "ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551",
    ),
    (
        "g.x",
        "6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296",
    ),
    (
        "g.y",
        "4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5",
    ),
    ("h", "1"),
];

impl Eg2Group for P256 {
    /// SEC1 compressed, the identity 33 bytes 0xFF (egk-ec's encoding).
    fn hash_bytes(&self, x: &Self::Element) -> Vec<u8> {
        P256::compressed(x).map_or_else(|| vec![0xff; 33], |c| c.to_vec())
    }

    /// expand_message_xmd(SHA-256) of the hash to 48 bytes, read big-endian, mod n (egk-ec's `hash_to_field`).
    fn to_challenge(&self, h: &[u8; 32]) -> Self::Scalar {
        let mut wide = [0u8; 48];
        let msgs: [&[u8]; 1] = [h];
        let dsts: [&[u8]; 1] = [EGK_P256_DST];
        if let Ok(mut x) = ExpandMsgXmd::<Sha256>::expand_message(&msgs, &dsts, 48) {
            x.fill_bytes(&mut wide);
        }
        self.scalar_from_wide(&wide)
    }

    fn read_element(&self, bytes: &[u8]) -> Result<Self::Element, String> {
        if bytes.len() == 33 && bytes.iter().all(|b| *b == 0xff) {
            return Ok(self.identity());
        }
        if bytes.iter().all(|b| *b == 0) {
            return Err("not a point's encoding".into());
        }
        self.decode_element(bytes)
            .map_err(|_| "not a point of P-256".into())
    }

    /// A point that decodes is on the curve, of prime order: a member.
    fn all_members(&self, _: &[&Self::Element]) -> bool {
        true
    }

    fn protocol_version(&self) -> &'static str {
        "v2.1.0"
    }

    fn constants(&self) -> (&'static str, &'static str, Vec<(&'static str, String)>) {
        (
            "P-256",
            "EllipticCurve",
            P256_CONSTANTS
                .iter()
                .map(|(n, v)| (*n, (*v).to_owned()))
                .collect(),
        )
    }
}

/// A few fixed-base powers made together ([`Group::pow_fixed_many`]: one field inversion on P-256 for all).
#[cfg(feature = "prove")]
pub(crate) fn fixed_powers<G: Eg2Group, const N: usize>(
    g: &G,
    jobs: [(Option<&G::Table>, &G::Scalar); N],
) -> [G::Element; N] {
    let mut out = g.pow_fixed_many(&jobs).into_iter();
    // the group gives one power per job; the fallback makes a missing one afresh
    std::array::from_fn(|i| {
        out.next().unwrap_or_else(|| match jobs[i].0 {
            Some(t) => g.pow_table(t, jobs[i].1),
            None => g.pow_generator(jobs[i].1),
        })
    })
}

/// The group's constants as H_P hashes them (spec/65.2): p, q, g for the integer group; a, b, the prime, g's
/// coordinates and h for P-256, each at its fixed width.
pub fn parameter_inputs<G: Eg2Group>(group: &G) -> Vec<Vec<u8>> {
    let (_, kind, named) = group.constants();
    let fixed = |hex: &str, width: usize| {
        let x = votum_arith::Integer::from_str_radix(hex, 16).unwrap_or_default();
        votum_arith::to_fixed_be(&x, width)
    };
    let get = |name: &str| {
        named
            .iter()
            .find(|(n, _)| *n == name)
            .map_or("0", |(_, v)| v.as_str())
            .to_owned()
    };
    if kind == "IntegerGroup" {
        vec![
            fixed(&get("largePrime"), 512),
            fixed(&get("smallPrime"), 32),
            fixed(&get("generator"), 512),
        ]
    } else {
        named
            .iter()
            .filter(|(n, _)| *n != "order")
            .map(|(_, v)| fixed(v, 32))
            .collect()
    }
}
