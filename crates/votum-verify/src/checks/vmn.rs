//! The cryptography of a Verificatum mix-net (VMN 3.x) proof directory (spec/99): the random oracle
//! and pseudo-random generator, the two kinds of group VMN sessions use (`ECqPGroup(P-256)` and
//! `ModPGroup`), the independent generators, the Terelius–Wikström proof of a shuffle and the
//! batched proof of the decryption factors, each derived exactly as VMN's verifier derives them.
//!
//! Elements and scalars are decoded as strictly as VMN decodes them: fixed lengths, canonical
//! values, points on the curve, residues in the subgroup.

use rayon::prelude::*;
use sha2::{Digest, Sha256, Sha384, Sha512};
use votum_arith::{Integer, Modulus, Order};

use p256::elliptic_curve::group::Group as _;
use p256::elliptic_curve::sec1::{FromEncodedPoint, ToEncodedPoint};
use p256::elliptic_curve::PrimeField;
use p256::{AffinePoint, EncodedPoint, FieldBytes, ProjectivePoint, Scalar};

use crate::bytetree::{write_int, write_leaf, write_node, Bt};

// ---------------------------------------------------------------------------------------------
// Hash function, pseudo-random generator, random oracle (spec/99.3)

/// The hash function a session names (`rohash`, `prg`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Hash {
    Sha256,
    Sha384,
    Sha512,
}

impl Hash {
    pub(crate) fn of_name(name: &str) -> Option<Hash> {
        match name {
            "SHA-256" => Some(Hash::Sha256),
            "SHA-384" => Some(Hash::Sha384),
            "SHA-512" => Some(Hash::Sha512),
            _ => None,
        }
    }

    /// Output length in bytes (also the PRG's seed length, VMN's `minNoSeedBytes`).
    pub(crate) fn len(self) -> usize {
        match self {
            Hash::Sha256 => 32,
            Hash::Sha384 => 48,
            Hash::Sha512 => 64,
        }
    }

    pub(crate) fn start(self) -> Hasher {
        match self {
            Hash::Sha256 => Hasher::S256(Sha256::new()),
            Hash::Sha384 => Hasher::S384(Sha384::new()),
            Hash::Sha512 => Hasher::S512(Sha512::new()),
        }
    }

    pub(crate) fn hash(self, data: &[u8]) -> Vec<u8> {
        let mut h = self.start();
        h.put(data);
        h.finish()
    }
}

/// Where encodings are written: a buffer or a running hash.
pub(crate) trait Out {
    fn put(&mut self, b: &[u8]);
}

impl Out for Vec<u8> {
    fn put(&mut self, b: &[u8]) {
        self.extend_from_slice(b);
    }
}

/// A running hash.
pub(crate) enum Hasher {
    S256(Sha256),
    S384(Sha384),
    S512(Sha512),
}

impl Out for Hasher {
    fn put(&mut self, b: &[u8]) {
        match self {
            Hasher::S256(h) => h.update(b),
            Hasher::S384(h) => h.update(b),
            Hasher::S512(h) => h.update(b),
        }
    }
}

impl Hasher {
    pub(crate) fn finish(self) -> Vec<u8> {
        match self {
            Hasher::S256(h) => h.finalize().to_vec(),
            Hasher::S384(h) => h.finalize().to_vec(),
            Hasher::S512(h) => h.finalize().to_vec(),
        }
    }
}

/// VMN's `PRGHeuristic`: block i is H(seed ‖ i as 4 bytes), the seed being the hash's length (a longer
/// seed is folded onto it by XOR).
pub(crate) struct Prg {
    hash: Hash,
    input: Vec<u8>,
    counter: u32,
    block: Vec<u8>,
    at: usize,
}

impl Prg {
    pub(crate) fn new(hash: Hash, seed: &[u8]) -> Prg {
        let n = hash.len();
        let mut input = vec![0u8; n + 4];
        for (i, b) in seed.iter().enumerate() {
            input[i % n] ^= b;
        }
        Prg {
            hash,
            input,
            counter: 0,
            block: Vec::new(),
            at: 0,
        }
    }

    pub(crate) fn bytes(&mut self, out: &mut [u8]) {
        let mut i = 0;
        while i < out.len() {
            if self.at == self.block.len() {
                let n = self.hash.len();
                self.input[n..].copy_from_slice(&self.counter.to_be_bytes());
                self.block = self.hash.hash(&self.input);
                self.at = 0;
                self.counter = self.counter.wrapping_add(1);
            }
            let k = (out.len() - i).min(self.block.len() - self.at);
            out[i..i + k].copy_from_slice(&self.block[self.at..self.at + k]);
            self.at += k;
            i += k;
        }
    }

    /// A random integer of `bits` bits (VMN's `new LargeInteger(bits, prg)`).
    pub(crate) fn integer(&mut self, bits: u32) -> Integer {
        let len = bits.div_ceil(8) as usize;
        let mut b = vec![0u8; len];
        self.bytes(&mut b);
        if !bits.is_multiple_of(8) {
            b[0] &= 0xff >> (8 - bits % 8);
        }
        Integer::from_digits(&b, Order::Msf)
    }
}

/// VMN's random oracle of `bits` output bits over data written by `write`, prefixed by `prefix`:
/// the PRG seeded with H(bits as 4 bytes ‖ prefix ‖ data), its first bytes, the top bits cleared.
pub(crate) fn oracle(
    hash: Hash,
    bits: u32,
    prefix: &[u8],
    write: impl FnOnce(&mut Hasher),
) -> Vec<u8> {
    let mut h = hash.start();
    h.put(&bits.to_be_bytes());
    h.put(prefix);
    write(&mut h);
    let seed = h.finish();
    let mut prg = Prg::new(hash, &seed);
    let mut out = vec![0u8; bits.div_ceil(8) as usize];
    prg.bytes(&mut out);
    if !bits.is_multiple_of(8) {
        out[0] &= 0xff >> (8 - bits % 8);
    }
    out
}

/// Integers of a byte string read as a non-negative big-endian number (`LargeInteger.toPositive`).
pub(crate) fn positive(b: &[u8]) -> Integer {
    Integer::from_digits(b, Order::Msf)
}

/// A two's complement leaf as VMN writes integers (`LargeInteger.toByteArray`, left-padded to `len`).
pub(crate) fn twos_fixed(x: &Integer, len: usize) -> Vec<u8> {
    let digits = x.to_digits::<u8>(Order::Msf);
    let mut out = vec![0u8; len];
    let n = digits.len().min(len);
    out[len - n..].copy_from_slice(&digits[digits.len() - n..]);
    out
}

/// VMN's byte length of a positive integer in two's complement (`toByteArray().length`).
pub(crate) fn twos_len(x: &Integer) -> usize {
    x.significant_bits() as usize / 8 + 1
}

/// Reads a leaf holding a two's complement integer that must be in [0, bound), of exactly `len` bytes.
pub(crate) fn fixed_integer(
    t: &Bt<'_>,
    len: usize,
    bound: &Integer,
    what: &str,
) -> Result<Integer, String> {
    let b = t.leaf(what)?;
    if b.len() != len {
        return Err(format!("{what}: {} bytes, {len} expected", b.len()));
    }
    if b.first().is_some_and(|x| x & 0x80 != 0) {
        return Err(format!("{what}: a negative integer"));
    }
    let v = positive(b);
    if &v >= bound {
        return Err(format!("{what}: not below its modulus"));
    }
    Ok(v)
}

/// A leaf holding a 4-byte integer.
pub(crate) fn int_leaf(t: &Bt<'_>, what: &str) -> Result<u32, String> {
    let b = t.leaf(what)?;
    <[u8; 4]>::try_from(b)
        .map(u32::from_be_bytes)
        .map_err(|_| format!("{what}: {} bytes, an integer has 4", b.len()))
}

// ---------------------------------------------------------------------------------------------
// Groups (spec/99.4)

/// A prime-order group as VMN uses it: decoding, encoding, arithmetic and its random elements.
pub(crate) trait VGroup: Sync {
    type E: Clone + PartialEq + Send + Sync;
    /// VMN's name for the group (`ECqPGroup(P-256)`, `ModPGroup(…)`).
    fn name(&self) -> String;
    /// The prime order q.
    fn q(&self) -> &Integer;
    fn g(&self) -> Self::E;
    fn one(&self) -> Self::E;
    fn mul(&self, a: &Self::E, b: &Self::E) -> Self::E;
    fn inv(&self, a: &Self::E) -> Self::E;
    /// `a^s` for `0 <= s < q`.
    fn exp(&self, a: &Self::E, s: &Integer) -> Self::E;
    /// `prod b[i]^s[i]`, in parallel.
    fn multi_exp(&self, b: &[Self::E], s: &[Integer]) -> Self::E;
    fn decode(&self, t: &Bt<'_>, what: &str) -> Result<Self::E, String>;
    fn encode(&self, e: &Self::E, out: &mut dyn Out);
    /// VMN's `randomElementArray(n, prg, statdist)`.
    fn random_elements(&self, prg: &mut Prg, n: usize, statdist: u32) -> Vec<Self::E>;

    /// VMN's byte length of a scalar.
    fn scalar_len(&self) -> usize {
        twos_len(self.q())
    }

    fn scalar(&self, t: &Bt<'_>, what: &str) -> Result<Integer, String> {
        fixed_integer(t, self.scalar_len(), self.q(), what)
    }

    /// Decodes an array of elements (a node of them), in parallel.
    fn decode_array(&self, t: &Bt<'_>, what: &str) -> Result<Vec<Self::E>, String> {
        t.node(what)?
            .par_iter()
            .enumerate()
            .map(|(i, c)| self.decode(c, &format!("{what}[{i}]")))
            .collect()
    }

    fn encode_array(&self, a: &[Self::E], out: &mut dyn Out) {
        let mut head = Vec::with_capacity(5);
        write_node(&mut head, a.len());
        out.put(&head);
        for e in a {
            self.encode(e, out);
        }
    }

    fn div(&self, a: &Self::E, b: &Self::E) -> Self::E {
        self.mul(a, &self.inv(b))
    }
}

/// The NIST P-256 curve as VMN's `ECqPGroup(P-256)`: a point is a node of two 33-byte coordinates, the
/// identity both coordinates -1 (all bytes 0xff).
pub(crate) struct P256 {
    p: Integer,
    q: Integer,
    b: Integer,
}

impl P256 {
    pub(crate) fn new() -> P256 {
        let hex = |s: &str| Integer::from_str_radix(s, 16).unwrap_or_default();
        P256 {
            p: hex("ffffffff00000001000000000000000000000000ffffffffffffffffffffffff"),
            q: hex("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551"),
            b: hex("5ac635d8aa3a93e7b3ebbd55769886bc651d06b0cc53b0f63bce3c3e27d2604b"),
        }
    }

    fn scalar_of(s: &Integer) -> Scalar {
        let bytes = twos_fixed(s, 33);
        let mut repr = FieldBytes::default();
        repr.copy_from_slice(&bytes[1..]);
        Option::<Scalar>::from(Scalar::from_repr(repr)).unwrap_or(Scalar::ZERO)
    }

    fn point(&self, x: &Integer, y: &Integer) -> Option<ProjectivePoint> {
        let (xb, yb) = (twos_fixed(x, 32), twos_fixed(y, 32));
        let ep = EncodedPoint::from_affine_coordinates(
            FieldBytes::from_slice(&xb),
            FieldBytes::from_slice(&yb),
            false,
        );
        Option::<AffinePoint>::from(AffinePoint::from_encoded_point(&ep)).map(Into::into)
    }
}

impl VGroup for P256 {
    type E = ProjectivePoint;

    fn name(&self) -> String {
        "ECqPGroup(P-256)".into()
    }

    fn q(&self) -> &Integer {
        &self.q
    }

    fn g(&self) -> ProjectivePoint {
        ProjectivePoint::GENERATOR
    }

    fn one(&self) -> ProjectivePoint {
        ProjectivePoint::IDENTITY
    }

    fn mul(&self, a: &ProjectivePoint, b: &ProjectivePoint) -> ProjectivePoint {
        a + b
    }

    fn inv(&self, a: &ProjectivePoint) -> ProjectivePoint {
        -a
    }

    fn exp(&self, a: &ProjectivePoint, s: &Integer) -> ProjectivePoint {
        a * &P256::scalar_of(s)
    }

    fn multi_exp(&self, b: &[ProjectivePoint], s: &[Integer]) -> ProjectivePoint {
        let chunk = b
            .len()
            .div_ceil(rayon::current_num_threads().max(1))
            .max(256);
        b.par_chunks(chunk)
            .zip(s.par_chunks(chunk))
            .map(|(b, s)| {
                let digits: Vec<[u8; 32]> = s
                    .iter()
                    .map(|e| {
                        let mut d = [0u8; 32];
                        d.copy_from_slice(&twos_fixed(&(e.clone() % &self.q), 33)[1..]);
                        d
                    })
                    .collect();
                pippenger(b, &digits)
            })
            .reduce(ProjectivePoint::identity, |x, y| x + y)
    }

    fn decode(&self, t: &Bt<'_>, what: &str) -> Result<ProjectivePoint, String> {
        let c = t.children(2, what)?;
        let (xb, yb) = (c[0].leaf(what)?, c[1].leaf(what)?);
        if xb.len() != 33 || yb.len() != 33 {
            return Err(format!("{what}: coordinates of 33 bytes expected"));
        }
        if xb.iter().all(|&b| b == 0xff) && yb.iter().all(|&b| b == 0xff) {
            return Ok(ProjectivePoint::IDENTITY);
        }
        if xb[0] != 0 || yb[0] != 0 {
            return Err(format!("{what}: a coordinate out of range"));
        }
        let ep = EncodedPoint::from_affine_coordinates(
            FieldBytes::from_slice(&xb[1..]),
            FieldBytes::from_slice(&yb[1..]),
            false,
        );
        Option::<AffinePoint>::from(AffinePoint::from_encoded_point(&ep))
            .map(Into::into)
            .ok_or_else(|| format!("{what}: not a point of P-256"))
    }

    fn encode(&self, e: &ProjectivePoint, out: &mut dyn Out) {
        let mut buf = Vec::with_capacity(81);
        write_node(&mut buf, 2);
        let ep = e.to_affine().to_encoded_point(false);
        match (ep.x(), ep.y()) {
            (Some(x), Some(y)) => {
                let mut c = [0u8; 33];
                c[1..].copy_from_slice(x);
                write_leaf(&mut buf, &c);
                c[1..].copy_from_slice(y);
                write_leaf(&mut buf, &c);
            }
            _ => {
                write_leaf(&mut buf, &[0xff; 33]);
                write_leaf(&mut buf, &[0xff; 33]);
            }
        }
        out.put(&buf);
    }

    fn random_elements(&self, prg: &mut Prg, n: usize, statdist: u32) -> Vec<ProjectivePoint> {
        let bits = self.p.significant_bits() + statdist;
        let exp = Integer::from(&self.p + 1u32) >> 2u32;
        let mut out = Vec::with_capacity(n);
        // VMN draws twice the missing count at a time, at most 10^7 (its file-based arrays' batch
        // of 10^6, times ten), and keeps the residues in order (ECqPGroup.randomElementArray)
        while out.len() < n {
            let want = (n - out.len()).min(10_000_000);
            let xs: Vec<Integer> = (0..2 * want).map(|_| prg.integer(bits) % &self.p).collect();
            let found: Vec<Option<ProjectivePoint>> = xs
                .par_iter()
                .map(|x| {
                    let mut fx = Integer::from(x * x) * x;
                    fx -= Integer::from(x * 3u32);
                    fx += &self.b;
                    fx %= &self.p;
                    if fx < 0 {
                        fx += &self.p;
                    }
                    if fx.legendre(&self.p) != 1 {
                        return None;
                    }
                    let mut y = fx.pow_mod(&exp, &self.p).ok()?;
                    let other = Integer::from(&self.p - &y);
                    if other < y {
                        y = other;
                    }
                    self.point(x, &y)
                })
                .collect();
            let room = n - out.len();
            out.extend(found.into_iter().flatten().take(room));
        }
        out
    }
}

/// `prod points[i]^scalars[i]` by Pippenger's bucket method: windows of c bits from the top, each
/// point added once per window to the bucket of its digit, the buckets summed by running sums.
fn pippenger(points: &[ProjectivePoint], scalars: &[[u8; 32]]) -> ProjectivePoint {
    let n = points.len();
    if n < 16 {
        return points
            .iter()
            .zip(scalars)
            .map(|(p, s)| {
                let mut repr = FieldBytes::default();
                repr.copy_from_slice(s);
                let k = Option::<Scalar>::from(Scalar::from_repr(repr)).unwrap_or(Scalar::ZERO);
                p * &k
            })
            .fold(ProjectivePoint::IDENTITY, |a, b| a + b);
    }
    let c: usize = match n {
        0..=63 => 4,
        64..=511 => 6,
        512..=4095 => 8,
        4096..=32767 => 10,
        _ => 12,
    };
    let digit = |s: &[u8; 32], w: usize| -> usize {
        // bits [w*c, w*c + c) counted from the least significant bit
        let mut v = 0usize;
        for k in 0..c {
            let bit = w * c + k;
            if bit >= 256 {
                break;
            }
            let byte = s[31 - bit / 8];
            if (byte >> (bit % 8)) & 1 == 1 {
                v |= 1 << k;
            }
        }
        v
    };
    let windows = 256usize.div_ceil(c);
    let mut acc = ProjectivePoint::IDENTITY;
    let mut buckets = vec![ProjectivePoint::IDENTITY; (1 << c) - 1];
    for w in (0..windows).rev() {
        for _ in 0..c {
            acc = acc.double();
        }
        buckets.fill(ProjectivePoint::IDENTITY);
        for (p, s) in points.iter().zip(scalars) {
            let d = digit(s, w);
            if d != 0 {
                buckets[d - 1] += p;
            }
        }
        let mut running = ProjectivePoint::IDENTITY;
        let mut sum = ProjectivePoint::IDENTITY;
        for b in buckets.iter().rev() {
            running += b;
            sum += running;
        }
        acc += sum;
    }
    acc
}

/// A subgroup of Z_p^* as VMN's `ModPGroup`: an element is a leaf of `p`'s two's complement length.
pub(crate) struct ModP {
    m: Modulus,
    q: Integer,
    g: Integer,
    cofactor: Integer,
    len: usize,
    /// the subgroup is the quadratic residues of a safe prime: membership is a Legendre symbol
    qr: bool,
}

impl ModP {
    /// The group of a `ModPGroup` description: a node of p, q, g and the encoding (an integer).
    pub(crate) fn from_tree(t: &Bt<'_>) -> Result<ModP, String> {
        let c = t.children(4, "ModPGroup")?;
        let int = |i: usize, what: &str| -> Result<Integer, String> {
            let b = c[i].leaf(what)?;
            if b.is_empty() || b.len() > 2048 || b[0] & 0x80 != 0 {
                return Err(format!("ModPGroup: a bad {what}"));
            }
            Ok(positive(b))
        };
        let (p, q, g) = (int(0, "p")?, int(1, "q")?, int(2, "g")?);
        int_leaf(&c[3], "encoding")?;
        if p.significant_bits() < 256 || q.significant_bits() < 128 {
            return Err("ModPGroup: p or q too small to be secure".into());
        }
        // primality, q | p - 1 and g of order q: a verifier takes no group on trust
        if p.is_probably_prime(40) == votum_arith::IsPrime::No
            || q.is_probably_prime(40) == votum_arith::IsPrime::No
        {
            return Err("ModPGroup: p or q is not prime".into());
        }
        let pm1 = Integer::from(&p - 1u32);
        if !pm1.is_divisible(&q) {
            return Err("ModPGroup: q does not divide p - 1".into());
        }
        let cofactor = Integer::from(&pm1 / &q);
        let m = Modulus::new(p.clone()).map_err(|e| format!("ModPGroup: {e}"))?;
        let group = ModP {
            len: twos_len(&p),
            qr: cofactor == 2,
            m,
            q,
            g,
            cofactor,
        };
        if group.g <= 1 || group.g >= p || !group.member(&group.g) {
            return Err("ModPGroup: g is not of order q".into());
        }
        Ok(group)
    }

    fn member(&self, x: &Integer) -> bool {
        if *x <= 0 || x >= self.m.value() {
            return false;
        }
        if self.qr {
            x.legendre(self.m.value()) == 1
        } else {
            self.m.pow(x, &self.q).is_ok_and(|r| r == 1)
        }
    }
}

impl VGroup for ModP {
    type E = Integer;

    fn name(&self) -> String {
        format!("ModPGroup({} bits)", self.m.bits())
    }

    fn q(&self) -> &Integer {
        &self.q
    }

    fn g(&self) -> Integer {
        self.g.clone()
    }

    fn one(&self) -> Integer {
        Integer::from(1)
    }

    fn mul(&self, a: &Integer, b: &Integer) -> Integer {
        self.m.mul(a, b)
    }

    fn inv(&self, a: &Integer) -> Integer {
        self.m.inverse(a).unwrap_or_default()
    }

    fn exp(&self, a: &Integer, s: &Integer) -> Integer {
        self.m.pow(a, s).unwrap_or_default()
    }

    fn multi_exp(&self, b: &[Integer], s: &[Integer]) -> Integer {
        votum_arith::multi_pow_parallel(&self.m, b, s).unwrap_or_default()
    }

    fn decode(&self, t: &Bt<'_>, what: &str) -> Result<Integer, String> {
        let v = fixed_integer(t, self.len, self.m.value(), what)?;
        if !self.member(&v) {
            return Err(format!("{what}: not in the order-q subgroup"));
        }
        Ok(v)
    }

    fn encode(&self, e: &Integer, out: &mut dyn Out) {
        let mut buf = Vec::with_capacity(self.len + 5);
        write_leaf(&mut buf, &twos_fixed(e, self.len));
        out.put(&buf);
    }

    fn random_elements(&self, prg: &mut Prg, n: usize, statdist: u32) -> Vec<Integer> {
        let bits = self.m.bits() + statdist;
        let xs: Vec<Integer> = (0..n).map(|_| prg.integer(bits) % self.m.value()).collect();
        xs.par_iter()
            .map(|x| self.m.pow(x, &self.cofactor).unwrap_or_default())
            .collect()
    }
}

// ---------------------------------------------------------------------------------------------
// The session's derivations (spec/99.3)

/// What the random oracles of one proof directory are keyed with.
pub(crate) struct Derive {
    pub rohash: Hash,
    pub prg: Hash,
    /// ρ, the hash of the session's parameters
    pub prefix: Vec<u8>,
    pub statdist: u32,
    pub vbitlenro: u32,
    pub ebitlenro: u32,
}

/// The session parameters that enter ρ, as protInfo.xml states them.
pub(crate) struct Params<'a> {
    pub version: &'a str,
    pub sid: &'a str,
    pub auxsid: &'a str,
    pub statdist: u32,
    pub vbitlenro: u32,
    pub ebitlenro: u32,
    pub prg: &'a str,
    pub pgroup: &'a str,
    pub rohash: &'a str,
}

impl Derive {
    pub(crate) fn new(p: &Params<'_>) -> Result<Derive, String> {
        let rohash = Hash::of_name(p.rohash)
            .ok_or_else(|| format!("rohash `{}`: only SHA-256, SHA-384 and SHA-512", p.rohash))?;
        let prg = Hash::of_name(p.prg)
            .ok_or_else(|| format!("prg `{}`: only SHA-256, SHA-384 and SHA-512", p.prg))?;
        let mut bt = Vec::new();
        write_node(&mut bt, 8);
        write_leaf(&mut bt, p.version.as_bytes());
        write_leaf(&mut bt, format!("{}.{}", p.sid, p.auxsid).as_bytes());
        write_int(&mut bt, p.statdist);
        write_int(&mut bt, p.vbitlenro);
        write_int(&mut bt, p.ebitlenro);
        write_leaf(&mut bt, p.prg.as_bytes());
        write_leaf(&mut bt, p.pgroup.as_bytes());
        write_leaf(&mut bt, p.rohash.as_bytes());
        Ok(Derive {
            prefix: rohash.hash(&bt),
            rohash,
            prg,
            statdist: p.statdist,
            vbitlenro: p.vbitlenro,
            ebitlenro: p.ebitlenro,
        })
    }

    /// The independent generators h_0..h_{n-1} (VMN's `IndependentGeneratorsRO("generators")`).
    pub(crate) fn generators<G: VGroup>(&self, group: &G, n: usize) -> Vec<G::E> {
        let seed = oracle(
            self.rohash,
            8 * self.rohash.len() as u32,
            &self.prefix,
            |h| {
                let mut b = Vec::new();
                write_leaf(&mut b, b"generators");
                h.put(&b);
            },
        );
        let mut prg = Prg::new(self.rohash, &seed);
        group.random_elements(&mut prg, n, self.statdist)
    }

    /// A PRG seed from the oracle over `write`'s data.
    pub(crate) fn seed(&self, write: impl FnOnce(&mut Hasher)) -> Vec<u8> {
        oracle(self.rohash, 8 * self.prg.len() as u32, &self.prefix, write)
    }

    /// `n` batching exponents of `ebitlenro` bits from the PRG seeded with `seed`, reduced mod q.
    pub(crate) fn batch(&self, seed: &[u8], n: usize, q: &Integer) -> Vec<Integer> {
        let mut prg = Prg::new(self.prg, seed);
        (0..n).map(|_| prg.integer(self.ebitlenro) % q).collect()
    }

    /// The challenge from the oracle over node(leaf(seed), commitment), reduced mod q.
    pub(crate) fn challenge(&self, seed: &[u8], commitment: &[u8], q: &Integer) -> Integer {
        let v = oracle(self.rohash, self.vbitlenro, &self.prefix, |h| {
            let mut b = Vec::new();
            write_node(&mut b, 2);
            write_leaf(&mut b, seed);
            h.put(&b);
            h.put(commitment);
        });
        positive(&v) % q
    }
}

// ---------------------------------------------------------------------------------------------
// Ciphertexts (width 1: a pair of elements, an array of them a pair of arrays)

/// A list of ElGamal ciphertexts (u_i, v_i) as VMN stores them: a node of the u array and the v array.
pub(crate) struct Ciphertexts<E> {
    pub u: Vec<E>,
    pub v: Vec<E>,
}

impl<E: Clone + Send + Sync> Ciphertexts<E> {
    pub(crate) fn decode<G: VGroup<E = E>>(
        group: &G,
        t: &Bt<'_>,
        what: &str,
    ) -> Result<Ciphertexts<E>, String> {
        let c = t.children(2, what)?;
        let u = group.decode_array(&c[0], &format!("{what} (left)"))?;
        let v = group.decode_array(&c[1], &format!("{what} (right)"))?;
        if u.len() != v.len() {
            return Err(format!(
                "{what}: {} left and {} right elements",
                u.len(),
                v.len()
            ));
        }
        Ok(Ciphertexts { u, v })
    }

    pub(crate) fn len(&self) -> usize {
        self.u.len()
    }

    pub(crate) fn encode<G: VGroup<E = E>>(&self, group: &G, out: &mut dyn Out) {
        let mut head = Vec::new();
        write_node(&mut head, 2);
        out.put(&head);
        group.encode_array(&self.u, out);
        group.encode_array(&self.v, out);
    }
}

fn encode_pair<G: VGroup>(group: &G, a: &G::E, b: &G::E, out: &mut dyn Out) {
    let mut head = Vec::new();
    write_node(&mut head, 2);
    out.put(&head);
    group.encode(a, out);
    group.encode(b, out);
}

/// The proof of a shuffle's statement: the group, the joint key y, the generators, input and output.
pub(crate) struct Shuffle<'s, G: VGroup> {
    pub group: &'s G,
    pub y: &'s G::E,
    pub h: &'s [G::E],
    pub input: &'s Ciphertexts<G::E>,
    pub output: &'s Ciphertexts<G::E>,
}

/// The three files of one party's proof of a shuffle (VMN's `PoSBasicTW`).
pub(crate) struct ShuffleProof<'a> {
    pub permutation_commitment: Bt<'a>,
    pub commitment: Bt<'a>,
    pub reply: Bt<'a>,
}

/// A node of `n` scalars.
fn scalars<G: VGroup>(group: &G, t: &Bt<'_>, n: usize, what: &str) -> Result<Vec<Integer>, String> {
    let v: Vec<Integer> = t
        .node(what)?
        .iter()
        .map(|x| group.scalar(x, what))
        .collect::<Result<_, _>>()?;
    if v.len() != n {
        return Err(format!("{what}: {} values for {n}", v.len()));
    }
    Ok(v)
}

fn elements<G: VGroup>(group: &G, t: &Bt<'_>, n: usize, what: &str) -> Result<Vec<G::E>, String> {
    let v = group.decode_array(t, what)?;
    if v.len() != n {
        return Err(format!("{what}: {} elements for {n}", v.len()));
    }
    Ok(v)
}

fn ciphertext<G: VGroup>(group: &G, t: &Bt<'_>, what: &str) -> Result<(G::E, G::E), String> {
    let c = t.children(2, what)?;
    Ok((group.decode(&c[0], what)?, group.decode(&c[1], what)?))
}

/// The part of a proof of shuffle about the permutation commitment u (VMN's `PoSBasicTW` and
/// `PoSCBasicTW`): its commitment B, A', B', C', D' and reply k_A, k_B, k_C, k_D, k_E.
struct Permutation<G: VGroup> {
    b: Vec<G::E>,
    a1: G::E,
    b1: Vec<G::E>,
    c1: G::E,
    d1: G::E,
    k_a: Integer,
    k_b: Vec<Integer>,
    k_c: Integer,
    k_d: Integer,
    k_e: Vec<Integer>,
}

impl<G: VGroup> Permutation<G> {
    /// Reads the first five children of a commitment and of a reply.
    fn read(group: &G, c: &[Bt<'_>], r: &[Bt<'_>], n: usize) -> Result<Permutation<G>, String> {
        Ok(Permutation {
            b: elements(group, &c[0], n, "B")?,
            a1: group.decode(&c[1], "A'")?,
            b1: elements(group, &c[2], n, "B'")?,
            c1: group.decode(&c[3], "C'")?,
            d1: group.decode(&c[4], "D'")?,
            k_a: group.scalar(&r[0], "k_A")?,
            k_b: scalars(group, &r[1], n, "k_B")?,
            k_c: group.scalar(&r[2], "k_C")?,
            k_d: group.scalar(&r[3], "k_D")?,
            k_e: scalars(group, &r[4], n, "k_E")?,
        })
    }

    /// The commitment's first five children, re-encoded.
    fn encode(&self, group: &G, out: &mut Vec<u8>) {
        group.encode_array(&self.b, out);
        group.encode(&self.a1, out);
        group.encode_array(&self.b1, out);
        group.encode(&self.c1, out);
        group.encode(&self.d1, out);
    }

    /// Equations A, B, C and D, with A = prod u^e given, for generators h and challenge v.
    fn check(
        &self,
        group: &G,
        h: &[G::E],
        u: &[G::E],
        e: &[Integer],
        a: &G::E,
        v: &Integer,
    ) -> Result<(), String> {
        let q = group.q();
        let n = u.len();
        let g = group.g();
        let lhs = |base: &G::E, t: &G::E| group.mul(&group.exp(base, v), t);
        // A^v A' = g^{k_A} prod h^{k_E}
        if lhs(a, &self.a1) != group.mul(&group.exp(&g, &self.k_a), &group.multi_exp(h, &self.k_e))
        {
            return Err("equation A does not hold".into());
        }
        // B_i^v B'_i = g^{k_B,i} B_{i-1}^{k_E,i}, B_{-1} = h_0: the n equations batched with random
        // 128-bit weights r_i (one multi-exponentiation equal to 1; a false equation passes with
        // probability at most 2^-128), then found one by one only when the batch fails
        let (b, b1, k_b, k_e) = (&self.b, &self.b1, &self.k_b, &self.k_e);
        if !batch_b_holds(group, &g, h, b, b1, k_b, k_e, v) {
            let bad_b = (0..n).into_par_iter().find_first(|&i| {
                let prev = if i == 0 { &h[0] } else { &b[i - 1] };
                lhs(&b[i], &b1[i]) != group.mul(&group.exp(&g, &k_b[i]), &group.exp(prev, &k_e[i]))
            });
            return Err(format!(
                "equation B does not hold at position {}",
                bad_b.map_or_else(|| "?".into(), |i| i.to_string())
            ));
        }
        // C = prod u / prod h; D = B_{n-1} / h_0^{prod e}
        let prod = |xs: &[G::E]| {
            xs.par_iter()
                .cloned()
                .reduce(|| group.one(), |x, y| group.mul(&x, &y))
        };
        let cc = group.div(&prod(u), &prod(h));
        let e_prod = e.iter().fold(Integer::from(1), |acc, x| (acc * x) % q);
        let dd = group.div(&b[n - 1], &group.exp(&h[0], &e_prod));
        if lhs(&cc, &self.c1) != group.exp(&g, &self.k_c) {
            return Err("equation C does not hold".into());
        }
        if lhs(&dd, &self.d1) != group.exp(&g, &self.k_d) {
            return Err("equation D does not hold".into());
        }
        Ok(())
    }
}

/// F^v F' = Enc_y(-k) prod w'^{k_E}, i.e. (g^{-k} prod u'^{k_E}, y^{-k} prod v'^{k_E}), with
/// F = prod w^e: the re-encryption part of a proof of shuffle.
#[allow(clippy::too_many_arguments)]
fn reencryption_holds<G: VGroup>(
    group: &G,
    y: &G::E,
    input: &Ciphertexts<G::E>,
    output: &Ciphertexts<G::E>,
    e: &[Integer],
    f1: &(G::E, G::E),
    k: &Integer,
    k_e: &[Integer],
    v: &Integer,
) -> bool {
    let q = group.q();
    let g = group.g();
    let ((f_u, f_v), (ru, rv)) = rayon::join(
        || {
            rayon::join(
                || group.multi_exp(&input.u, e),
                || group.multi_exp(&input.v, e),
            )
        },
        || {
            rayon::join(
                || group.multi_exp(&output.u, k_e),
                || group.multi_exp(&output.v, k_e),
            )
        },
    );
    let neg = neg_mod(k.clone(), q);
    let left = (
        group.mul(&group.exp(&f_u, v), &f1.0),
        group.mul(&group.exp(&f_v, v), &f1.1),
    );
    left == (
        group.mul(&group.exp(&g, &neg), &ru),
        group.mul(&group.exp(y, &neg), &rv),
    )
}

fn check_sizes<G: VGroup>(s: &Shuffle<'_, G>) -> Result<usize, String> {
    let n = s.input.len();
    if s.output.len() != n || s.h.len() < n {
        return Err(format!("{} ciphertexts in, {} out", n, s.output.len()));
    }
    if n == 0 {
        return Err("no ciphertexts".into());
    }
    Ok(n)
}

/// The seed of a proof of shuffle: over node(g, h, u, node(g, y), w, w').
fn shuffle_seed<G: VGroup>(d: &Derive, s: &Shuffle<'_, G>, h: &[G::E], u: &[G::E]) -> Vec<u8> {
    let group = s.group;
    let g = group.g();
    d.seed(|hs| {
        let mut head = Vec::new();
        write_node(&mut head, 6);
        hs.put(&head);
        group.encode(&g, hs);
        group.encode_array(h, hs);
        group.encode_array(u, hs);
        encode_pair(group, &g, s.y, hs);
        s.input.encode(group, hs);
        s.output.encode(group, hs);
    })
}

/// Verifies one Terelius–Wikström proof of a shuffle as VMN's `PoSBasicTW.verify`. `Err` names the
/// first reason it fails: a malformed part, or which of the equations A, B, C, D, F does not hold.
pub(crate) fn verify_shuffle<G: VGroup>(
    d: &Derive,
    s: &Shuffle<'_, G>,
    proof: &ShuffleProof<'_>,
) -> Result<(), String> {
    let group = s.group;
    let n = check_sizes(s)?;
    let q = group.q();
    let h = &s.h[..n];
    let u = elements(
        group,
        &proof.permutation_commitment,
        n,
        "permutation commitment",
    )?;
    let seed = shuffle_seed(d, s, h, &u);
    let e = d.batch(&seed, n, q);
    // the commitment: B, A', B', C', D', F'; the reply: k_A, k_B, k_C, k_D, k_E, k_F
    let c = proof.commitment.children(6, "PoS commitment")?;
    let r = proof.reply.children(6, "PoS reply")?;
    let perm = Permutation::read(group, c, r, n)?;
    let f1 = ciphertext(group, &c[5], "F'")?;
    let k_f = group.scalar(&r[5], "k_F")?;
    let mut commitment = Vec::new();
    write_node(&mut commitment, 6);
    perm.encode(group, &mut commitment);
    encode_pair(group, &f1.0, &f1.1, &mut commitment);
    let v = d.challenge(&seed, &commitment, q);
    let a = group.multi_exp(&u, &e);
    perm.check(group, h, &u, &e, &a, &v)?;
    if !reencryption_holds(group, s.y, s.input, s.output, &e, &f1, &k_f, &perm.k_e, &v) {
        return Err("equation F does not hold".into());
    }
    Ok(())
}

/// Verifies a precomputed proof that `u` commits to a permutation, over all `h` (VMN's
/// `PoSCBasicTW`): the seed over node(g, h, u), commitment B, A', B', C', D', reply k_A..k_E.
pub(crate) fn verify_posc<G: VGroup>(
    d: &Derive,
    group: &G,
    h: &[G::E],
    u: &[G::E],
    commitment: &Bt<'_>,
    reply: &Bt<'_>,
) -> Result<(), String> {
    let q = group.q();
    let n = h.len();
    if u.len() != n || n == 0 {
        return Err(format!(
            "a permutation commitment of {} elements for {n}",
            u.len()
        ));
    }
    let g = group.g();
    let seed = d.seed(|hs| {
        let mut head = Vec::new();
        write_node(&mut head, 3);
        hs.put(&head);
        group.encode(&g, hs);
        group.encode_array(h, hs);
        group.encode_array(u, hs);
    });
    let e = d.batch(&seed, n, q);
    let c = commitment.children(5, "PoSC commitment")?;
    let r = reply.children(5, "PoSC reply")?;
    let perm = Permutation::read(group, c, r, n)?;
    let mut bytes = Vec::new();
    write_node(&mut bytes, 5);
    perm.encode(group, &mut bytes);
    let v = d.challenge(&seed, &bytes, q);
    let a = group.multi_exp(u, &e);
    perm.check(group, h, u, &e, &a, &v)
}

/// Verifies a commitment-consistent proof of shuffle (VMN's `CCPoSBasicW`): that the output is
/// the input re-encrypted and permuted by the permutation `u` commits to, `h` and `u` being the
/// generators and commitment kept for this many ciphertexts. The seed is over node(g, h, u,
/// node(g, y), w, w'); the commitment A', F'; the reply k_A, k_F, k_E.
pub(crate) fn verify_ccpos<G: VGroup>(
    d: &Derive,
    s: &Shuffle<'_, G>,
    u: &[G::E],
    commitment: &Bt<'_>,
    reply: &Bt<'_>,
) -> Result<(), String> {
    let group = s.group;
    let n = check_sizes(s)?;
    let q = group.q();
    let h = &s.h[..n];
    if u.len() != n {
        return Err(format!("a kept commitment of {} elements for {n}", u.len()));
    }
    let seed = shuffle_seed(d, s, h, u);
    let e = d.batch(&seed, n, q);
    let c = commitment.children(2, "CCPoS commitment")?;
    let a1 = group.decode(&c[0], "A'")?;
    let f1 = ciphertext(group, &c[1], "B'")?;
    let mut bytes = Vec::new();
    write_node(&mut bytes, 2);
    group.encode(&a1, &mut bytes);
    encode_pair(group, &f1.0, &f1.1, &mut bytes);
    let v = d.challenge(&seed, &bytes, q);
    let r = reply.children(3, "CCPoS reply")?;
    let k_a = group.scalar(&r[0], "k_A")?;
    let k_f = group.scalar(&r[1], "k_B")?;
    let k_e = scalars(group, &r[2], n, "k_E")?;
    let g = group.g();
    let a = group.multi_exp(u, &e);
    let left = group.mul(&group.exp(&a, &v), &a1);
    if left != group.mul(&group.exp(&g, &k_a), &group.multi_exp(h, &k_e)) {
        return Err("equation A does not hold".into());
    }
    if !reencryption_holds(group, s.y, s.input, s.output, &e, &f1, &k_f, &k_e, &v) {
        return Err("equation B (the re-encryption) does not hold".into());
    }
    Ok(())
}

/// -x mod q, in [0, q), for any integer x.
fn neg_mod(x: Integer, q: &Integer) -> Integer {
    let x = (-x) % q;
    if x < 0 {
        x + q
    } else {
        x
    }
}

/// Fresh random weights of 128 bits, from the operating system.
pub(crate) fn weights(n: usize) -> Vec<Integer> {
    use rand_core::RngCore;
    let mut rng = rand_core::OsRng;
    (0..n)
        .map(|_| {
            let mut b = [0u8; 16];
            rng.fill_bytes(&mut b);
            positive(&b)
        })
        .collect()
}

/// prod_i (B_i^v B'_i)^{r_i} = g^{sum r_i k_B,i} prod_i B_{i-1}^{r_i k_E,i}, as one product equal to 1.
#[allow(clippy::too_many_arguments)]
fn batch_b_holds<G: VGroup>(
    group: &G,
    g: &G::E,
    h: &[G::E],
    b: &[G::E],
    b1: &[G::E],
    k_b: &[Integer],
    k_e: &[Integer],
    v: &Integer,
) -> bool {
    let q = group.q();
    let n = b.len();
    let r = weights(n);
    let mut bases = Vec::with_capacity(2 * n + 2);
    let mut exps = Vec::with_capacity(2 * n + 2);
    // B_i: v r_i - r_{i+1} k_E,{i+1}
    for i in 0..n {
        let mut e = Integer::from(v * &r[i]);
        if i + 1 < n {
            e -= Integer::from(&r[i + 1] * &k_e[i + 1]);
        }
        let e = e % q;
        bases.push(b[i].clone());
        exps.push(if e < 0 { e + q } else { e });
    }
    for i in 0..n {
        bases.push(b1[i].clone());
        exps.push(r[i].clone());
    }
    let sum_kb = r.iter().zip(k_b).fold(Integer::new(), |acc, (ri, k)| {
        (acc + Integer::from(ri * k)) % q
    });
    bases.push(g.clone());
    exps.push(neg_mod(sum_kb, q));
    bases.push(h[0].clone());
    exps.push(neg_mod(Integer::from(&r[0] * &k_e[0]), q));
    group.multi_exp(&bases, &exps) == group.one()
}

// ---------------------------------------------------------------------------------------------
// Decryption (VMN's DistrElGamalSessionBasic, combined)

/// Δ = lcm(1..k)², by which VMN's Lagrange coefficients are scaled (`prodFactor`).
fn prod_factor(k: u32) -> Integer {
    let mut l = Integer::from(1);
    for i in 1..=k {
        l.lcm_u_mut(i);
    }
    Integer::from(&l * &l)
}

/// VMN's modified Lagrange coefficient of party `i` among `set` (the first `threshold` correct
/// parties), mod q: Δ · prod_{l in set, l != i} l / (l - i).
pub(crate) fn lagrange(q: &Integer, k: u32, set: &[u32], i: u32) -> Integer {
    let mut res = prod_factor(k) % q;
    for &l in set {
        if l != i {
            res *= l;
            let diff = (Integer::from(l) - i) % q;
            let diff = if diff < 0 { diff + q } else { diff };
            let inv = diff.invert(q).unwrap_or_default();
            res *= inv;
            res %= q;
        }
    }
    res
}

/// The statement and files of a decryption's proof.
pub(crate) struct Decryption<'s, 'a, G: VGroup> {
    pub group: &'s G,
    /// the joint public key
    pub y: &'s G::E,
    /// the ciphertexts decrypted (the mix-net's output)
    pub input: &'s Ciphertexts<G::E>,
    /// the polynomial in the exponent: its file's tree (hashed) and coefficients
    pub polynomial: &'s Bt<'a>,
    /// every party's decryption factors (party l at l - 1), their commitments and replies
    pub factors: &'s [Vec<G::E>],
    pub commitments: &'s [Bt<'a>],
    pub replies: &'s [Bt<'a>],
    /// the parties whose factors are combined (the first `threshold` of CorrectIndices, 1-based)
    pub set: &'s [u32],
}

/// Verifies the combined proof that the decryption factors are correct and returns how they combine
/// (the plaintexts are the right elements times the combined factors, [`plaintexts_hold`]).
pub(crate) fn verify_decryption<G: VGroup>(
    d: &Derive,
    s: &Decryption<'_, '_, G>,
) -> Result<Combination, String> {
    let group = s.group;
    let q = group.q();
    let k = s.factors.len();
    let n = s.input.len();
    let g = group.g();
    for (l, f) in s.factors.iter().enumerate() {
        if f.len() != n {
            return Err(format!(
                "party {} has {} decryption factors for {n} ciphertexts",
                l + 1,
                f.len()
            ));
        }
    }
    let seed = d.seed(|hs| {
        let mut head = Vec::new();
        write_node(&mut head, 2);
        write_node(&mut head, 2);
        hs.put(&head);
        group.encode(&g, hs);
        s.input.encode(group, hs);
        let mut head = Vec::new();
        write_node(&mut head, 2);
        hs.put(&head);
        let mut pie = Vec::new();
        s.polynomial.write(&mut pie);
        hs.put(&pie);
        let mut head = Vec::new();
        write_node(&mut head, k);
        hs.put(&head);
        for f in s.factors {
            group.encode_array(f, hs);
        }
    });
    let e = d.batch(&seed, n, q);
    let mut yp = Vec::with_capacity(k);
    let mut bp = Vec::with_capacity(k);
    let mut commitment = Vec::new();
    write_node(&mut commitment, k);
    for (l, t) in s.commitments.iter().enumerate() {
        let c = t.children(2, &format!("decryption commitment {}", l + 1))?;
        let a = group.decode(&c[0], "y'")?;
        let b = group.decode(&c[1], "B'")?;
        encode_pair(group, &a, &b, &mut commitment);
        yp.push(a);
        bp.push(b);
    }
    let v = d.challenge(&seed, &commitment, q);
    let mut kx = Vec::with_capacity(k);
    for (l, t) in s.replies.iter().enumerate() {
        kx.push(group.scalar(t, &format!("decryption reply {}", l + 1))?);
    }
    // combine the first `threshold` correct parties with the modified Lagrange coefficients
    let lambdas: Vec<Integer> = s
        .set
        .iter()
        .map(|&i| lagrange(q, k as u32, s.set, i))
        .collect();
    let idx: Vec<usize> = s.set.iter().map(|&i| i as usize - 1).collect();
    let mut cyp = group.one();
    let mut cbp = group.one();
    let mut ck = Integer::new();
    for (t, &l) in idx.iter().enumerate() {
        cyp = group.mul(&cyp, &group.exp(&yp[l], &lambdas[t]));
        cbp = group.mul(&cbp, &group.exp(&bp[l], &lambdas[t]));
        ck += Integer::from(&kx[l] * &lambdas[t]);
        ck %= q;
    }
    // A = prod u_i^{e_i}; B = prod F_i^{e_i} = prod_{l in S} (prod_i f_{l,i}^{e_i})^{lambda_l}
    let (a, b) = rayon::join(
        || group.multi_exp(&s.input.u, &e),
        || {
            idx.iter()
                .zip(&lambdas)
                .fold(group.one(), |acc, (&l, lambda)| {
                    group.mul(
                        &acc,
                        &group.exp(&group.multi_exp(&s.factors[l], &e), lambda),
                    )
                })
        },
    );
    // y^{-v} y' = g^{k}, B^v B' = A^{k}
    let neg_v = neg_mod(v.clone(), q);
    if group.mul(&group.exp(s.y, &neg_v), &cyp) != group.exp(&g, &ck) {
        return Err("the combined proof does not hold for the key".into());
    }
    if group.mul(&group.exp(&b, &v), &cbp) != group.exp(&a, &ck) {
        return Err("the combined proof does not hold for the factors".into());
    }
    Ok(Combination { idx, lambdas })
}

/// The parties whose factors make the decryption (0-based) and their coefficients.
pub(crate) struct Combination {
    idx: Vec<usize>,
    lambdas: Vec<Integer>,
}

/// Whether every plaintext m_i is v_i F_i, F_i = prod_{l in S} f_{l,i}^{lambda_l}: batched with random
/// 128-bit weights into one product equal to 1; on failure, the first wrong index, found one by one.
pub(crate) fn plaintexts_hold<G: VGroup>(
    group: &G,
    input: &Ciphertexts<G::E>,
    factors: &[Vec<G::E>],
    c: &Combination,
    plaintexts: &[G::E],
) -> Result<(), usize> {
    let q = group.q();
    let n = plaintexts.len();
    let r = weights(n);
    let mut bases = Vec::with_capacity((2 + c.idx.len()) * n);
    let mut exps = Vec::with_capacity(bases.capacity());
    for i in 0..n {
        bases.push(plaintexts[i].clone());
        exps.push(r[i].clone());
        bases.push(input.v[i].clone());
        exps.push(neg_mod(r[i].clone(), q));
        for (&l, lambda) in c.idx.iter().zip(&c.lambdas) {
            bases.push(factors[l][i].clone());
            exps.push(neg_mod(Integer::from(&r[i] * lambda), q));
        }
    }
    if group.multi_exp(&bases, &exps) == group.one() {
        return Ok(());
    }
    let wrong = (0..n).into_par_iter().find_first(|&i| {
        let f = c
            .idx
            .iter()
            .zip(&c.lambdas)
            .fold(group.one(), |acc, (&l, lambda)| {
                group.mul(&acc, &group.exp(&factors[l][i], lambda))
            });
        plaintexts[i] != group.mul(&input.v[i], &f)
    });
    Err(wrong.unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prg_and_oracle_shapes() {
        let mut prg = Prg::new(Hash::Sha256, &[7u8; 32]);
        let mut a = [0u8; 40];
        prg.bytes(&mut a);
        let mut input = vec![7u8; 32];
        input.extend_from_slice(&[0, 0, 0, 0]);
        assert_eq!(&a[..32], Hash::Sha256.hash(&input).as_slice());
        input[35] = 1;
        assert_eq!(&a[32..], &Hash::Sha256.hash(&input)[..8]);
        let v = oracle(Hash::Sha256, 12, b"", |_| {});
        assert_eq!(v.len(), 2);
        assert!(v[0] < 16);
    }

    #[test]
    fn lagrange_interpolates_at_zero_scaled() {
        // shares of f(x) = 5 + 3x at 1 and 3, combined, give Δ·5 (k = 3: Δ = 36)
        let q = Integer::from(1_000_003);
        let set = [1u32, 3];
        let s: Integer = set
            .iter()
            .map(|&i| Integer::from(5 + 3 * i) * lagrange(&q, 3, &set, i))
            .sum();
        assert_eq!(s % &q, Integer::from(36 * 5));
    }

    /// The bucket method against one multiplication per point, across its window sizes, with zero,
    /// one, q - 1 and large scalars and the identity among the points.
    #[test]
    fn pippenger_is_the_product_of_powers() {
        let g = P256::new();
        for n in [1usize, 15, 16, 70, 600, 5000] {
            let points: Vec<ProjectivePoint> = (0..n)
                .map(|i| {
                    if i == 3 {
                        ProjectivePoint::IDENTITY
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
                .fold(ProjectivePoint::IDENTITY, |a, (p, s)| a + g.exp(p, s));
            assert!(g.multi_exp(&points, &scalars) == naive, "n = {n}");
        }
    }

    #[test]
    fn p256_points_round_trip() {
        let g = P256::new();
        let x = g.exp(&g.g(), &Integer::from(12345));
        let mut b = Vec::new();
        g.encode(&x, &mut b);
        assert_eq!(b.len(), 81);
        assert!(g.decode(&Bt::parse(&b).unwrap(), "x").unwrap() == x);
        let mut one = Vec::new();
        g.encode(&g.one(), &mut one);
        assert!(g.decode(&Bt::parse(&one).unwrap(), "1").unwrap() == g.one());
        // off the curve
        b[80] ^= 1;
        assert!(g.decode(&Bt::parse(&b).unwrap(), "x").is_err());
    }
}
