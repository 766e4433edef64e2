//! Commitments (spec/97.3) and list roots (97.6).
//!
//! COM(y, r) = SHA-256("votum-sv/com/v1\0" ‖ r ‖ y as 16 bytes): 48 bytes, padded by hand into one
//! block and compressed once, without the hasher's buffering.

use sha2::digest::generic_array::GenericArray;
use sha2::{Digest, Sha256};

use crate::field::Zm;
use crate::stream::{key, stream};

/// The commitment's 16-byte domain prefix.
pub const COM_TAG: &[u8; 16] = b"votum-sv/com/v1\0";

const IV: [u32; 8] = [
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
];

/// COM(value, key).
#[inline]
pub fn com(value: u128, key: &[u8; 16]) -> [u8; 32] {
    let mut block = [0u8; 64];
    block[..16].copy_from_slice(COM_TAG);
    block[16..32].copy_from_slice(key);
    block[32..48].copy_from_slice(&value.to_be_bytes());
    block[48] = 0x80;
    block[56..].copy_from_slice(&(48u64 * 8).to_be_bytes());
    let mut state = IV;
    sha2::compress256(&mut state, &[*GenericArray::from_slice(&block)]);
    let mut out = [0u8; 32];
    for (o, s) in out.chunks_exact_mut(4).zip(state) {
        o.copy_from_slice(&s.to_be_bytes());
    }
    out
}

/// The root of one copy's output list in one row (97.6), fed pair by pair.
pub struct ListHasher(Sha256);

impl ListHasher {
    pub fn new(race: u16, copy: u8, row: u8, n: u64) -> Self {
        let mut h = Sha256::new();
        h.update(b"votum-sv/list/v1");
        h.update(race.to_be_bytes());
        h.update([copy, row]);
        h.update(n.to_be_bytes());
        Self(h)
    }

    #[inline]
    pub fn push(&mut self, cu: &[u8; 32], cv: &[u8; 32]) {
        self.0.update(cu);
        self.0.update(cv);
    }

    pub fn finish(self) -> [u8; 32] {
        self.0.finalize().into()
    }
}

/// The last column's split values of one output list, regenerated from its seed τ (97.6): calls
/// `f(q, u, r, v, s)` in order.
pub fn output_splits(
    zm: &Zm,
    tau: &[u8; 32],
    race: usize,
    y: &[u128],
    mut f: impl FnMut(usize, u128, &[u8; 16], u128, &[u8; 16]),
) {
    let mut rng = stream("output", &[tau, &(race as u16).to_be_bytes()]);
    for (q, &yq) in y.iter().enumerate() {
        let u = zm.draw(&mut rng);
        let r = key(&mut rng);
        let s = key(&mut rng);
        f(q, u, &r, zm.sub(yq, u), &s);
    }
}

/// The root of one output list (97.6).
pub fn output_root(
    zm: &Zm,
    tau: &[u8; 32],
    race: usize,
    copy: usize,
    row: usize,
    y: &[u128],
) -> [u8; 32] {
    let mut h = ListHasher::new(race as u16, copy as u8, row as u8 + 1, y.len() as u64);
    output_splits(zm, tau, race, y, |_, u, r, v, s| {
        h.push(&com(u, r), &com(v, s))
    });
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_block_commitment_is_sha256_of_the_48_bytes() {
        let key = [7u8; 16];
        let v = 0x0123_4567_89ab_cdef_u128 << 40;
        let mut msg = COM_TAG.to_vec();
        msg.extend_from_slice(&key);
        msg.extend_from_slice(&v.to_be_bytes());
        let want: [u8; 32] = Sha256::digest(&msg).into();
        assert_eq!(com(v, &key), want);
        assert_ne!(com(v + 1, &key), want);
    }
}
