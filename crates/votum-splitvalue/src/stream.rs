//! Deterministic streams (spec/97.4): everything a column's servers must agree on, or a verifier
//! must reproduce, comes from ChaCha20 seeded with a SHA-256 of a label and its parts.

use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use sha2::{Digest, Sha256};

/// `stream(label, parts)`: ChaCha20 seeded with H("votum-sv/" ‖ label ‖ 0 ‖ parts).
pub fn stream(label: &str, parts: &[&[u8]]) -> ChaCha20Rng {
    let mut h = Sha256::new();
    h.update(b"votum-sv/");
    h.update(label.as_bytes());
    h.update([0u8]);
    for p in parts {
        h.update(p);
    }
    ChaCha20Rng::from_seed(h.finalize().into())
}

/// An index below `bound` (≥ 1): 64 bits masked to the bit length of `bound − 1`, drawn again
/// until below.
#[inline]
pub fn index_below<R: RngCore>(rng: &mut R, bound: u64) -> u64 {
    if bound <= 1 {
        return 0;
    }
    let bits = 64 - (bound - 1).leading_zeros();
    let mask = if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    loop {
        let x = rng.next_u64() & mask;
        if x < bound {
            return x;
        }
    }
}

/// A 16-byte commitment key.
#[inline]
pub fn key<R: RngCore>(rng: &mut R) -> [u8; 16] {
    let mut k = [0u8; 16];
    rng.fill_bytes(&mut k);
    k
}

/// A permutation of 0 … n−1: Fisher–Yates from the top.
pub fn permutation<R: RngCore>(rng: &mut R, n: usize) -> Vec<u32> {
    let mut p: Vec<u32> = (0..n as u32).collect();
    for t in (1..n).rev() {
        let s = index_below(rng, t as u64 + 1) as usize;
        p.swap(t, s);
    }
    p
}

/// `count` side bits (0 = left, 1 = right) from 64-bit words, least significant bit first.
pub fn bits<R: RngCore>(rng: &mut R, count: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(count);
    while out.len() < count {
        let w = rng.next_u64();
        for b in 0..64 {
            if out.len() == count {
                break;
            }
            out.push(((w >> b) & 1) as u8);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutations_are_permutations_and_depend_on_the_seed() {
        let a = permutation(&mut stream("t", &[b"1"]), 1000);
        let mut s = a.clone();
        s.sort_unstable();
        assert_eq!(s, (0..1000).collect::<Vec<u32>>());
        assert_eq!(a, permutation(&mut stream("t", &[b"1"]), 1000));
        assert_ne!(a, permutation(&mut stream("t", &[b"2"]), 1000));
        assert_ne!(a, permutation(&mut stream("u", &[b"1"]), 1000));
    }

    #[test]
    fn indices_stay_below_their_bound() {
        let mut r = stream("t", &[]);
        for b in 1..200u64 {
            for _ in 0..20 {
                assert!(index_below(&mut r, b) < b);
            }
        }
    }
}
