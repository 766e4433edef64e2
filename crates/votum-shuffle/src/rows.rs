//! Lists of ciphertext rows and their canonical encoding (spec/90.6).

use std::sync::OnceLock;

use rand_core::{CryptoRng, RngCore};
use votum_elgamal::Ciphertext;
use votum_group::Group;

use crate::digest::{list_digest, list_digest_of_bytes};
use crate::ShuffleError;

/// Label of a ciphertext list's digest (90.3).
pub(crate) const ROWS_LABEL: &str = "rows";

/// N rows of w ciphertexts each, stored row-major. The digest of the canonical encoding is
/// computed once (from the bytes when the list was decoded) and cached.
pub struct Rows<G: Group> {
    width: usize,
    cts: Vec<Ciphertext<G>>,
    digest: OnceLock<[u8; 32]>,
}

impl<G: Group> Clone for Rows<G> {
    fn clone(&self) -> Self {
        Self {
            width: self.width,
            cts: self.cts.clone(),
            digest: self.digest.clone(),
        }
    }
}

impl<G: Group> std::fmt::Debug for Rows<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rows")
            .field("rows", &self.len())
            .field("width", &self.width)
            .finish_non_exhaustive()
    }
}

impl<G: Group> PartialEq for Rows<G> {
    fn eq(&self, other: &Self) -> bool {
        self.width == other.width && self.cts == other.cts
    }
}

impl<G: Group> Rows<G> {
    /// Rows of `width` ciphertexts from a row-major list (its length a multiple of `width`).
    pub fn new(width: usize, cts: Vec<Ciphertext<G>>) -> Result<Self, ShuffleError> {
        if width == 0 {
            return Err(ShuffleError::Length {
                what: "width",
                expected: 1,
                got: 0,
            });
        }
        if !cts.len().is_multiple_of(width) {
            return Err(ShuffleError::Length {
                what: "ciphertexts (a multiple of the width)",
                expected: cts.len().div_ceil(width) * width,
                got: cts.len(),
            });
        }
        Ok(Self {
            width,
            cts,
            digest: OnceLock::new(),
        })
    }

    /// Number of rows N.
    pub fn len(&self) -> usize {
        self.cts.len() / self.width
    }

    pub fn is_empty(&self) -> bool {
        self.cts.is_empty()
    }

    pub fn width(&self) -> usize {
        self.width
    }

    pub fn row(&self, i: usize) -> &[Ciphertext<G>] {
        &self.cts[i * self.width..(i + 1) * self.width]
    }

    /// All ciphertexts, row-major.
    pub fn ciphertexts(&self) -> &[Ciphertext<G>] {
        &self.cts
    }

    pub fn into_ciphertexts(self) -> Vec<Ciphertext<G>> {
        self.cts
    }

    /// Bytes of one encoded row.
    pub fn row_len(group: &G, width: usize) -> usize {
        2 * width * group.element_len()
    }

    fn encode_row(&self, group: &G, i: usize, buf: &mut Vec<u8>) {
        for ct in self.row(i) {
            buf.extend_from_slice(&group.encode_element(&ct.pad));
            buf.extend_from_slice(&group.encode_element(&ct.data));
        }
    }

    /// Canonical encoding: `u64 BE N ‖ u64 BE w ‖` rows (a_1, b_1, a_2, b_2, … per row).
    pub fn encode(&self, group: &G) -> Vec<u8> {
        use rayon::prelude::*;
        let row_len = Self::row_len(group, self.width);
        let mut out = Vec::with_capacity(16 + self.len() * row_len);
        out.extend_from_slice(&(self.len() as u64).to_be_bytes());
        out.extend_from_slice(&(self.width as u64).to_be_bytes());
        let body: Vec<Vec<u8>> = (0..self.len())
            .into_par_iter()
            .with_min_len(256)
            .map(|i| {
                let mut b = Vec::with_capacity(row_len);
                self.encode_row(group, i, &mut b);
                b
            })
            .collect();
        for b in body {
            out.extend_from_slice(&b);
        }
        let _ = self
            .digest
            .set(list_digest_of_bytes(group, ROWS_LABEL, row_len, &out[16..]));
        out
    }

    /// Decodes [`Rows::encode`]'s output, checking every element (batched membership test where
    /// the group needs one, spec/90.7) and caching the digest of the bytes.
    pub fn decode<R: RngCore + CryptoRng>(
        group: &G,
        bytes: &[u8],
        rng: &mut R,
    ) -> Result<Self, ShuffleError> {
        if bytes.len() < 16 {
            return Err(ShuffleError::Encoding(
                "ciphertext list (shorter than its header)",
            ));
        }
        let n = u64_at(bytes, 0);
        let width = u64_at(bytes, 8);
        if width == 0 || width > 1 << 16 {
            return Err(ShuffleError::Encoding("ciphertext list (width)"));
        }
        let row_len = Self::row_len(group, width as usize);
        let expected = n
            .checked_mul(row_len as u64)
            .and_then(|x| x.checked_add(16))
            .ok_or(ShuffleError::Encoding("ciphertext list (size)"))?;
        if bytes.len() as u64 != expected {
            return Err(ShuffleError::Length {
                what: "ciphertext list bytes",
                expected: usize::try_from(expected).unwrap_or(usize::MAX),
                got: bytes.len(),
            });
        }
        let body = &bytes[16..];
        let elements =
            group
                .decode_many(body, rng)
                .map_err(|(index, source)| ShuffleError::Element {
                    what: "ciphertext element",
                    index,
                    source,
                })?;
        let mut cts = Vec::with_capacity(elements.len() / 2);
        let mut it = elements.into_iter();
        while let (Some(pad), Some(data)) = (it.next(), it.next()) {
            cts.push(Ciphertext { pad, data });
        }
        let rows = Self::new(width as usize, cts)?;
        let _ = rows
            .digest
            .set(list_digest_of_bytes(group, ROWS_LABEL, row_len, body));
        Ok(rows)
    }

    /// The digest of the canonical encoding (90.3), computed once.
    pub fn digest(&self, group: &G) -> [u8; 32] {
        *self.digest.get_or_init(|| {
            list_digest(
                group,
                ROWS_LABEL,
                self.len(),
                Self::row_len(group, self.width),
                |i, buf| self.encode_row(group, i, buf),
            )
        })
    }
}

pub(crate) fn u64_at(bytes: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&bytes[at..at + 8]);
    u64::from_be_bytes(b)
}
