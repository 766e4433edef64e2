//! The shuffle proof and its encoding (spec/90.4, 90.6).

use rand_core::{CryptoRng, RngCore};
use rayon::prelude::*;
use votum_elgamal::Ciphertext;
use votum_group::Group;

use crate::rows::u64_at;
use crate::ShuffleError;

const MAGIC: &[u8] = b"votum-shuffle";
const VERSION: u8 = 1;

/// A Terelius–Wikström proof that one list of rows is a re-encrypted permutation of another.
pub struct ShuffleProof<G: Group> {
    /// Permutation commitment c_1 … c_N.
    pub commitments: Vec<G::Element>,
    /// Commitment chain ĉ_1 … ĉ_N.
    pub chain: Vec<G::Element>,
    pub t1: G::Element,
    pub t2: G::Element,
    pub t3: G::Element,
    /// t4, one ciphertext per column (w).
    pub t4: Vec<Ciphertext<G>>,
    pub t_hat: Vec<G::Element>,
    pub s1: G::Scalar,
    pub s2: G::Scalar,
    pub s3: G::Scalar,
    pub s4: Vec<G::Scalar>,
    pub s_hat: Vec<G::Scalar>,
    pub s_prime: Vec<G::Scalar>,
}

impl<G: Group> Clone for ShuffleProof<G> {
    fn clone(&self) -> Self {
        Self {
            commitments: self.commitments.clone(),
            chain: self.chain.clone(),
            t1: self.t1.clone(),
            t2: self.t2.clone(),
            t3: self.t3.clone(),
            t4: self.t4.clone(),
            t_hat: self.t_hat.clone(),
            s1: self.s1.clone(),
            s2: self.s2.clone(),
            s3: self.s3.clone(),
            s4: self.s4.clone(),
            s_hat: self.s_hat.clone(),
            s_prime: self.s_prime.clone(),
        }
    }
}

impl<G: Group> PartialEq for ShuffleProof<G> {
    fn eq(&self, o: &Self) -> bool {
        self.commitments == o.commitments
            && self.chain == o.chain
            && self.t1 == o.t1
            && self.t2 == o.t2
            && self.t3 == o.t3
            && self.t4 == o.t4
            && self.t_hat == o.t_hat
            && self.s1 == o.s1
            && self.s2 == o.s2
            && self.s3 == o.s3
            && self.s4 == o.s4
            && self.s_hat == o.s_hat
            && self.s_prime == o.s_prime
    }
}

impl<G: Group> std::fmt::Debug for ShuffleProof<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShuffleProof")
            .field("rows", &self.rows())
            .field("width", &self.width())
            .finish_non_exhaustive()
    }
}

impl<G: Group> ShuffleProof<G> {
    /// N.
    pub fn rows(&self) -> usize {
        self.commitments.len()
    }

    /// w.
    pub fn width(&self) -> usize {
        self.t4.len()
    }

    fn header(group: &G, rows: usize, width: usize) -> Vec<u8> {
        let name = group.id().name().as_bytes();
        let mut out = Vec::with_capacity(MAGIC.len() + 2 + name.len() + 16);
        out.extend_from_slice(MAGIC);
        out.push(VERSION);
        out.push(name.len() as u8);
        out.extend_from_slice(name);
        out.extend_from_slice(&(rows as u64).to_be_bytes());
        out.extend_from_slice(&(width as u64).to_be_bytes());
        out
    }

    /// Encoded length for N rows of width w.
    pub fn encoded_len(group: &G, rows: usize, width: usize) -> usize {
        Self::header(group, rows, width).len()
            + (3 * rows + 3 + 2 * width) * group.element_len()
            + (3 + width + 2 * rows) * group.scalar_len()
    }

    /// Canonical encoding (90.6).
    pub fn encode(&self, group: &G) -> Vec<u8> {
        let (n, w) = (self.rows(), self.width());
        let mut out = Self::header(group, n, w);
        out.reserve(Self::encoded_len(group, n, w));
        let elements = |out: &mut Vec<u8>, es: &[G::Element]| {
            let parts: Vec<Vec<u8>> = es
                .par_iter()
                .with_min_len(256)
                .map(|e| group.encode_element(e))
                .collect();
            for p in parts {
                out.extend_from_slice(&p);
            }
        };
        elements(&mut out, &self.commitments);
        elements(&mut out, &self.chain);
        for e in [&self.t1, &self.t2, &self.t3] {
            out.extend_from_slice(&group.encode_element(e));
        }
        for ct in &self.t4 {
            out.extend_from_slice(&group.encode_element(&ct.pad));
        }
        for ct in &self.t4 {
            out.extend_from_slice(&group.encode_element(&ct.data));
        }
        elements(&mut out, &self.t_hat);
        for s in [&self.s1, &self.s2, &self.s3].into_iter().chain(&self.s4) {
            out.extend_from_slice(&group.encode_scalar(s));
        }
        for s in self.s_hat.iter().chain(&self.s_prime) {
            out.extend_from_slice(&group.encode_scalar(s));
        }
        out
    }

    /// Decodes a proof for `rows` rows of `width` ciphertexts, checking the header, the exact
    /// length, every element (batched membership, 90.7) and every scalar.
    pub fn decode<R: RngCore + CryptoRng>(
        group: &G,
        bytes: &[u8],
        rows: usize,
        width: usize,
        rng: &mut R,
    ) -> Result<Self, ShuffleError> {
        let header = Self::header(group, rows, width);
        let fixed = MAGIC.len() + 2;
        if bytes.len() < fixed || &bytes[..MAGIC.len()] != MAGIC {
            return Err(ShuffleError::Encoding(
                "shuffle proof (not a votum shuffle proof)",
            ));
        }
        if bytes[MAGIC.len()] != VERSION {
            return Err(ShuffleError::Encoding("shuffle proof (unknown version)"));
        }
        if bytes.len() < header.len() || bytes[..header.len() - 16] != header[..header.len() - 16] {
            return Err(ShuffleError::Encoding("shuffle proof (another group)"));
        }
        let at = header.len() - 16;
        let (n, w) = (u64_at(bytes, at), u64_at(bytes, at + 8));
        if n != rows as u64 {
            return Err(ShuffleError::Length {
                what: "shuffle proof rows",
                expected: rows,
                got: usize::try_from(n).unwrap_or(usize::MAX),
            });
        }
        if w != width as u64 {
            return Err(ShuffleError::Length {
                what: "shuffle proof width",
                expected: width,
                got: usize::try_from(w).unwrap_or(usize::MAX),
            });
        }
        let expected = Self::encoded_len(group, rows, width);
        if bytes.len() != expected {
            return Err(ShuffleError::Length {
                what: "shuffle proof bytes",
                expected,
                got: bytes.len(),
            });
        }
        let el = group.element_len();
        let n_el = 3 * rows + 3 + 2 * width;
        let body = &bytes[header.len()..];
        let mut es = group
            .decode_many(&body[..n_el * el], rng)
            .map_err(|(index, source)| ShuffleError::Element {
                what: "shuffle proof element",
                index,
                source,
            })?;
        let sl = group.scalar_len();
        let parsed: Vec<Result<G::Scalar, _>> = body[n_el * el..]
            .par_chunks(sl)
            .map(|b| group.decode_scalar(b))
            .collect();
        let mut scalars = Vec::with_capacity(parsed.len());
        for (index, p) in parsed.into_iter().enumerate() {
            scalars.push(p.map_err(|source| ShuffleError::Element {
                what: "shuffle proof scalar",
                index,
                source,
            })?);
        }
        let t_hat = es.split_off(2 * rows + 3 + 2 * width);
        let datas = es.split_off(2 * rows + 3 + width);
        let pads = es.split_off(2 * rows + 3);
        let t = es.split_off(2 * rows);
        let chain = es.split_off(rows);
        let t4 = pads
            .into_iter()
            .zip(datas)
            .map(|(pad, data)| Ciphertext { pad, data })
            .collect();
        let mut ss = scalars;
        let s_prime = ss.split_off(3 + width + rows);
        let s_hat = ss.split_off(3 + width);
        let s4 = ss.split_off(3);
        let mut t = t.into_iter();
        let mut s = ss.into_iter();
        let missing = || ShuffleError::Encoding("shuffle proof");
        Ok(Self {
            commitments: es,
            chain,
            t1: t.next().ok_or_else(missing)?,
            t2: t.next().ok_or_else(missing)?,
            t3: t.next().ok_or_else(missing)?,
            t4,
            t_hat,
            s1: s.next().ok_or_else(missing)?,
            s2: s.next().ok_or_else(missing)?,
            s3: s.next().ok_or_else(missing)?,
            s4,
            s_hat,
            s_prime,
        })
    }
}
