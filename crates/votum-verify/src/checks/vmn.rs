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
    /// The bytes a plaintext element encodes (VMN's `PGroupElement.decode`; an element encoding
    /// nothing gives none).
    fn decode_plain(&self, e: &Self::E) -> Vec<u8>;

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

/// A subgroup of Z_p^* as VMN's `ModPGroup`: an element is a leaf of `p`'s two's complement length.
pub(crate) struct ModP {
    m: Modulus,
    q: Integer,
    g: Integer,
    cofactor: Integer,
    len: usize,
    /// the subgroup is the quadratic residues of a safe prime: membership is a Legendre symbol
    qr: bool,
    /// how plaintexts are encoded (VMN's `RO_ENCODING` 0, `SAFEPRIME_ENCODING` 1,
    /// `SUBGROUP_ENCODING` 2) and how many bytes an element encodes
    encoding: u32,
    encode_len: usize,
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
        let encoding = int_leaf(&c[3], "encoding")?;
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
        let bits = p.significant_bits() as usize;
        // VMN's ModPGroup.encodeLength for each encoding
        let encode_len = match encoding {
            0 => 1,
            1 => ((bits - 2) / 8).saturating_sub(4),
            2 => {
                let padding = (cofactor.significant_bits() as usize).div_ceil(8) + 1;
                (bits / 8).saturating_sub(padding + 4)
            }
            other => return Err(format!("ModPGroup: unknown encoding {other}")),
        };
        let m = Modulus::new(p.clone()).map_err(|e| format!("ModPGroup: {e}"))?;
        let group = ModP {
            len: twos_len(&p),
            qr: cofactor == 2,
            encoding,
            encode_len,
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

    fn decode_plain(&self, e: &Integer) -> Vec<u8> {
        // VMN's ModPGroupElement.decode
        let enc = self.encode_len;
        if self.encoding == 0 {
            let mut leaf = Vec::with_capacity(self.len + 5);
            write_leaf(&mut leaf, &twos_fixed(e, self.len));
            let raw = Hash::Sha256.hash(&leaf);
            let len = usize::from(raw[0] & 3).min(enc);
            return raw[1..1 + len].to_vec();
        }
        let value = if self.encoding == 1 {
            let neg = Integer::from(self.m.value() - e);
            if neg < *e {
                neg
            } else {
                e.clone()
            }
        } else {
            e.clone()
        };
        let mut raw = twos_fixed(&value, twos_len(&value));
        if raw.len() < enc + 4 {
            let mut padded = vec![0u8; enc + 4 - raw.len()];
            padded.extend_from_slice(&raw);
            raw = padded;
        }
        let at = raw.len() - enc - 4;
        let len = i32::from_be_bytes([raw[at], raw[at + 1], raw[at + 2], raw[at + 3]]);
        match usize::try_from(len) {
            Ok(len) if len <= enc => raw[at + 4..at + 4 + len].to_vec(),
            _ => Vec::new(),
        }
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
// Ciphertexts and the product group of their width (spec/99.2)

/// A value of width w as VMN writes it: the value itself at width 1, a node of its w factors otherwise,
/// each read by `one` (given its index).
fn wide<T>(
    t: &Bt<'_>,
    width: usize,
    what: &str,
    one: impl Fn(usize, &Bt<'_>) -> Result<T, String>,
) -> Result<Vec<T>, String> {
    if width == 1 {
        return Ok(vec![one(0, t)?]);
    }
    t.children(width, what)?
        .iter()
        .enumerate()
        .map(|(j, c)| one(j, c))
        .collect()
}

/// Writes a value of width `items.len()` as [`wide`] reads it, each factor by `one`.
fn put_wide<T>(items: &[T], out: &mut dyn Out, mut one: impl FnMut(&T, &mut dyn Out)) {
    if items.len() != 1 {
        let mut head = Vec::with_capacity(5);
        write_node(&mut head, items.len());
        out.put(&head);
    }
    for x in items {
        one(x, out);
    }
}

/// An element of VMN's product group G^w.
pub(crate) fn decode_wide<G: VGroup>(
    group: &G,
    t: &Bt<'_>,
    width: usize,
    what: &str,
) -> Result<Vec<G::E>, String> {
    wide(t, width, what, |_, c| group.decode(c, what))
}

pub(crate) fn encode_wide<G: VGroup>(group: &G, e: &[G::E], out: &mut dyn Out) {
    put_wide(e, out, |x, out| group.encode(x, out));
}

/// An array of G^w elements, as VMN writes it: the array at width 1, a node of w arrays (one per
/// factor, all of the same length) otherwise. Returned as its w columns.
pub(crate) fn decode_wide_array<G: VGroup>(
    group: &G,
    t: &Bt<'_>,
    width: usize,
    what: &str,
) -> Result<Vec<Vec<G::E>>, String> {
    let columns = wide(t, width, what, |j, c| {
        if width == 1 {
            group.decode_array(c, what)
        } else {
            group.decode_array(c, &format!("{what} (factor {j})"))
        }
    })?;
    if columns.iter().any(|c| c.len() != columns[0].len()) {
        return Err(format!("{what}: factors of different lengths"));
    }
    Ok(columns)
}

pub(crate) fn encode_wide_array<G: VGroup>(group: &G, columns: &[Vec<G::E>], out: &mut dyn Out) {
    put_wide(columns, out, |c, out| group.encode_array(c, out));
}

/// An element of the ring Z_q^w: the scalar at width 1, a node of w scalars otherwise.
fn wide_scalar<G: VGroup>(
    group: &G,
    t: &Bt<'_>,
    width: usize,
    what: &str,
) -> Result<Vec<Integer>, String> {
    wide(t, width, what, |_, c| group.scalar(c, what))
}

/// A list of ElGamal ciphertexts of width w (u_i, v_i), u_i and v_i in G^w, as VMN stores them: a
/// node of the u array and the v array, each an array of G^w elements; held as columns.
pub(crate) struct Ciphertexts<E> {
    pub u: Vec<Vec<E>>,
    pub v: Vec<Vec<E>>,
}

impl<E: Clone + Send + Sync + PartialEq> Ciphertexts<E> {
    pub(crate) fn decode<G: VGroup<E = E>>(
        group: &G,
        t: &Bt<'_>,
        width: usize,
        what: &str,
    ) -> Result<Ciphertexts<E>, String> {
        let c = t.children(2, what)?;
        let u = decode_wide_array(group, &c[0], width, &format!("{what} (left)"))?;
        let v = decode_wide_array(group, &c[1], width, &format!("{what} (right)"))?;
        if u[0].len() != v[0].len() {
            return Err(format!(
                "{what}: {} left and {} right elements",
                u[0].len(),
                v[0].len()
            ));
        }
        Ok(Ciphertexts { u, v })
    }

    pub(crate) fn len(&self) -> usize {
        self.u[0].len()
    }

    pub(crate) fn width(&self) -> usize {
        self.u.len()
    }

    pub(crate) fn encode<G: VGroup<E = E>>(&self, group: &G, out: &mut dyn Out) {
        let mut head = Vec::new();
        write_node(&mut head, 2);
        out.put(&head);
        encode_wide_array(group, &self.u, out);
        encode_wide_array(group, &self.v, out);
    }
}

impl<E: PartialEq> PartialEq for Ciphertexts<E> {
    fn eq(&self, other: &Self) -> bool {
        self.u == other.u && self.v == other.v
    }
}

/// One ciphertext of width w: (u, v), u and v in G^w.
pub(crate) type Wide<E> = (Vec<E>, Vec<E>);

/// A ciphertext of width w: node(u, v) with u and v in G^w.
fn ciphertext<G: VGroup>(
    group: &G,
    t: &Bt<'_>,
    width: usize,
    what: &str,
) -> Result<Wide<G::E>, String> {
    let c = t.children(2, what)?;
    Ok((
        decode_wide(group, &c[0], width, what)?,
        decode_wide(group, &c[1], width, what)?,
    ))
}

fn encode_ciphertext<G: VGroup>(group: &G, c: &Wide<G::E>, out: &mut dyn Out) {
    let mut head = Vec::new();
    write_node(&mut head, 2);
    out.put(&head);
    encode_wide(group, &c.0, out);
    encode_wide(group, &c.1, out);
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
/// F = prod w^e: the re-encryption part of a proof of shuffle. At width w every factor j of the
/// product group has its own equation, with its own k_j.
#[allow(clippy::too_many_arguments)]
fn reencryption_holds<G: VGroup>(
    group: &G,
    y: &G::E,
    input: &Ciphertexts<G::E>,
    output: &Ciphertexts<G::E>,
    e: &[Integer],
    f1: &Wide<G::E>,
    k: &[Integer],
    k_e: &[Integer],
    v: &Integer,
) -> bool {
    let q = group.q();
    let g = group.g();
    (0..input.width()).all(|j| {
        let ((f_u, f_v), (ru, rv)) = rayon::join(
            || {
                rayon::join(
                    || group.multi_exp(&input.u[j], e),
                    || group.multi_exp(&input.v[j], e),
                )
            },
            || {
                rayon::join(
                    || group.multi_exp(&output.u[j], k_e),
                    || group.multi_exp(&output.v[j], k_e),
                )
            },
        );
        let neg = neg_mod(k[j].clone(), q);
        let left = (
            group.mul(&group.exp(&f_u, v), &f1.0[j]),
            group.mul(&group.exp(&f_v, v), &f1.1[j]),
        );
        left == (
            group.mul(&group.exp(&g, &neg), &ru),
            group.mul(&group.exp(y, &neg), &rv),
        )
    })
}

fn check_sizes<G: VGroup>(s: &Shuffle<'_, G>) -> Result<usize, String> {
    let n = s.input.len();
    if s.output.len() != n || s.h.len() < n {
        return Err(format!("{} ciphertexts in, {} out", n, s.output.len()));
    }
    if s.output.width() != s.input.width() {
        return Err(format!(
            "ciphertexts of width {} in, {} out",
            s.input.width(),
            s.output.width()
        ));
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
        // the key widened to the ciphertexts' width (VMN's getWidePublicKey): node(g^w, y^w)
        let width = s.input.width();
        let key = (vec![g.clone(); width], vec![s.y.clone(); width]);
        encode_ciphertext(group, &key, hs);
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
    let width = s.input.width();
    let f1 = ciphertext(group, &c[5], width, "F'")?;
    let k_f = wide_scalar(group, &r[5], width, "k_F")?;
    let mut commitment = Vec::new();
    write_node(&mut commitment, 6);
    perm.encode(group, &mut commitment);
    encode_ciphertext(group, &f1, &mut commitment);
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
    let width = s.input.width();
    let f1 = ciphertext(group, &c[1], width, "B'")?;
    let mut bytes = Vec::new();
    write_node(&mut bytes, 2);
    group.encode(&a1, &mut bytes);
    encode_ciphertext(group, &f1, &mut bytes);
    let v = d.challenge(&seed, &bytes, q);
    let r = reply.children(3, "CCPoS reply")?;
    let k_a = group.scalar(&r[0], "k_A")?;
    let k_f = wide_scalar(group, &r[1], width, "k_B")?;
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
    /// every party's decryption factors (party l at l - 1, as the columns of its G^w elements),
    /// their commitments and replies
    pub factors: &'s [Vec<Vec<G::E>>],
    pub commitments: &'s [Bt<'a>],
    pub replies: &'s [Bt<'a>],
    /// the parties whose factors are combined (the first `threshold` of CorrectIndices, 1-based)
    pub set: &'s [u32],
}

/// The seed of a decryption's proof: over node(node(g, ciphertexts), node(polynomial, node(f_1, …, f_k))).
fn decryption_seed<G: VGroup>(d: &Derive, s: &Decryption<'_, '_, G>) -> Vec<u8> {
    let group = s.group;
    d.seed(|hs| {
        let mut head = Vec::new();
        write_node(&mut head, 2);
        write_node(&mut head, 2);
        hs.put(&head);
        group.encode(&group.g(), hs);
        s.input.encode(group, hs);
        let mut head = Vec::new();
        write_node(&mut head, 2);
        hs.put(&head);
        let mut pie = Vec::new();
        s.polynomial.write(&mut pie);
        hs.put(&pie);
        let mut head = Vec::new();
        write_node(&mut head, s.factors.len());
        hs.put(&head);
        for f in s.factors {
            encode_wide_array(group, f, hs);
        }
    })
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
    let width = s.input.width();
    for (l, f) in s.factors.iter().enumerate() {
        if f.len() != width || f[0].len() != n {
            return Err(format!(
                "party {} has {} decryption factors of width {} for {n} ciphertexts of width {width}",
                l + 1,
                f[0].len(),
                f.len()
            ));
        }
    }
    let seed = decryption_seed(d, s);
    let e = d.batch(&seed, n, q);
    let mut yp = Vec::with_capacity(k);
    let mut bp = Vec::with_capacity(k);
    let mut commitment = Vec::new();
    write_node(&mut commitment, k);
    for (l, t) in s.commitments.iter().enumerate() {
        let c = t.children(2, &format!("decryption commitment {}", l + 1))?;
        let a = group.decode(&c[0], "y'")?;
        let b = decode_wide(group, &c[1], width, "B'")?;
        write_node(&mut commitment, 2);
        group.encode(&a, &mut commitment);
        encode_wide(group, &b, &mut commitment);
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
    let mut cbp = vec![group.one(); width];
    let mut ck = Integer::new();
    for (t, &l) in idx.iter().enumerate() {
        cyp = group.mul(&cyp, &group.exp(&yp[l], &lambdas[t]));
        for (c, b) in cbp.iter_mut().zip(&bp[l]) {
            *c = group.mul(c, &group.exp(b, &lambdas[t]));
        }
        ck += Integer::from(&kx[l] * &lambdas[t]);
        ck %= q;
    }
    // y^{-v} y' = g^{k}
    let neg_v = neg_mod(v.clone(), q);
    if group.mul(&group.exp(s.y, &neg_v), &cyp) != group.exp(&g, &ck) {
        return Err("the combined proof does not hold for the key".into());
    }
    // per factor j of G^w: A = prod u_i^{e_i}; B = prod F_i^{e_i} = prod_{l in S} (prod_i
    // f_{l,i}^{e_i})^{lambda_l}; B^v B' = A^{k}
    for (j, cbp) in cbp.iter().enumerate() {
        let (a, b) = rayon::join(
            || group.multi_exp(&s.input.u[j], &e),
            || {
                idx.iter()
                    .zip(&lambdas)
                    .fold(group.one(), |acc, (&l, lambda)| {
                        group.mul(
                            &acc,
                            &group.exp(&group.multi_exp(&s.factors[l][j], &e), lambda),
                        )
                    })
            },
        );
        if group.mul(&group.exp(&b, &v), cbp) != group.exp(&a, &ck) {
            return Err("the combined proof does not hold for the factors".into());
        }
    }
    Ok(Combination { idx, lambdas })
}

/// The parties whose factors make the decryption (0-based) and their coefficients.
pub(crate) struct Combination {
    idx: Vec<usize>,
    lambdas: Vec<Integer>,
}

/// Whether every plaintext m_i is v_i F_i, F_i = prod_{l in S} f_{l,i}^{lambda_l} (factor by factor
/// of G^w): batched with random 128-bit weights into one product equal to 1; on failure, the first
/// wrong index, found one by one. `plaintexts` and the factors are columns, as the ciphertexts.
pub(crate) fn plaintexts_hold<G: VGroup>(
    group: &G,
    input: &Ciphertexts<G::E>,
    factors: &[Vec<Vec<G::E>>],
    c: &Combination,
    plaintexts: &[Vec<G::E>],
) -> Result<(), usize> {
    let q = group.q();
    let n = input.len();
    let width = input.width();
    let r = weights(n * width);
    let mut bases = Vec::with_capacity((2 + c.idx.len()) * n * width);
    let mut exps = Vec::with_capacity(bases.capacity());
    for j in 0..width {
        for i in 0..n {
            let r = &r[j * n + i];
            bases.push(plaintexts[j][i].clone());
            exps.push(r.clone());
            bases.push(input.v[j][i].clone());
            exps.push(neg_mod(r.clone(), q));
            for (&l, lambda) in c.idx.iter().zip(&c.lambdas) {
                bases.push(factors[l][j][i].clone());
                exps.push(neg_mod(Integer::from(r * lambda), q));
            }
        }
    }
    if group.multi_exp(&bases, &exps) == group.one() {
        return Ok(());
    }
    let wrong = (0..n).into_par_iter().find_first(|&i| {
        (0..width).any(|j| {
            let f = c
                .idx
                .iter()
                .zip(&c.lambdas)
                .fold(group.one(), |acc, (&l, lambda)| {
                    group.mul(&acc, &group.exp(&factors[l][j][i], lambda))
                });
            plaintexts[j][i] != group.mul(&input.v[j][i], &f)
        })
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
    /// A decryption proof of width 2 made here with a known key over the group of a stored session:
    /// it passes; a wrong factor in the second column, with the first column's proof honest, fails.
    #[test]
    fn a_decryption_factor_wrong_in_the_second_column_fails() {
        let info = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../vectors/verificatum/modpw2/protInfo.xml"
        ))
        .unwrap();
        let pgroup = info.split("<pgroup>").nth(1).unwrap();
        let pgroup = pgroup.split("</pgroup>").next().unwrap().trim();
        let bytes = crate::report::unhex(pgroup.rsplit_once("::").unwrap().1).unwrap();
        let tree = Bt::parse(&bytes).unwrap();
        let group = ModP::from_tree(&tree.children(2, "pgroup").unwrap()[1]).unwrap();
        let d = Derive::new(&Params {
            version: "3.1.0",
            sid: "Test",
            auxsid: "default",
            statdist: 100,
            vbitlenro: 256,
            ebitlenro: 256,
            prg: "SHA-256",
            pgroup,
            rohash: "SHA-256",
        })
        .unwrap();
        let q = group.q().clone();
        let g = group.g();
        let x = Integer::from(987_654_321u64);
        let y = group.exp(&g, &x);
        let neg_x = Integer::from(&q - &x);
        let elem = |k: u64| group.exp(&g, &Integer::from(k));
        let (n, width) = (3u64, 2u64);
        let column = |base: u64, j: u64| (0..n).map(|i| elem(base + 10 * j + i)).collect();
        let input = Ciphertexts {
            u: (0..width).map(|j| column(1000, j)).collect(),
            v: (0..width).map(|j| column(5000, j)).collect(),
        };
        let mut pie = Vec::new();
        write_node(&mut pie, 1);
        group.encode(&y, &mut pie);
        let polynomial = Bt::parse(&pie).unwrap();
        let prove = |cheat: bool| -> Result<Combination, String> {
            // the factors u^{-x}; a cheat multiplies one of the second column's by g
            let mut f: Vec<Vec<Integer>> = input
                .u
                .iter()
                .map(|c| c.iter().map(|u| group.exp(u, &neg_x)).collect())
                .collect();
            if cheat {
                f[1][0] = group.mul(&f[1][0], &g);
            }
            let factors = vec![f];
            let mut statement = Decryption {
                group: &group,
                y: &y,
                input: &input,
                polynomial: &polynomial,
                factors: &factors,
                commitments: &[],
                replies: &[],
                set: &[1],
            };
            let seed = decryption_seed(&d, &statement);
            let e = d.batch(&seed, n as usize, &q);
            // the commitment (g^s, A^s) and reply k = s - x v, each column's A = prod u^e honest
            let s = Integer::from(424_242u64);
            let a: Vec<Integer> = input.u.iter().map(|c| group.multi_exp(c, &e)).collect();
            let b: Vec<Integer> = a.iter().map(|a| group.exp(a, &s)).collect();
            let mut commitment = Vec::new();
            write_node(&mut commitment, 2);
            group.encode(&group.exp(&g, &s), &mut commitment);
            encode_wide(&group, &b, &mut commitment);
            let mut all = Vec::new();
            write_node(&mut all, 1);
            all.extend_from_slice(&commitment);
            let v = d.challenge(&seed, &all, &q);
            let k = neg_mod(Integer::from(&x * &v) - &s, &q);
            let mut reply = Vec::new();
            write_leaf(&mut reply, &twos_fixed(&k, group.scalar_len()));
            let (c, r) = (Bt::parse(&commitment).unwrap(), Bt::parse(&reply).unwrap());
            let (cs, rs) = ([c], [r]);
            statement.commitments = &cs;
            statement.replies = &rs;
            verify_decryption(&d, &statement)
        };
        assert!(prove(false).is_ok());
        let err = prove(true)
            .err()
            .expect("a wrong factor in the second column passed");
        assert!(err.contains("factors"), "{err}");
    }
}
