//! The two challenges (spec/97.7 steps 2 and 5), drawn from the board's head.

use crate::stream::{bits, permutation, stream};

/// The cut (97.7 step 2): the checked copies, sorted.
pub fn cut(h1: &[u8; 32], copies: usize) -> Vec<usize> {
    let p = permutation(&mut stream("cut", &[h1]), copies);
    let mut c: Vec<usize> = p[..copies / 2].iter().map(|&k| k as usize).collect();
    c.sort_unstable();
    c
}

/// The side bits of every race (97.7 step 5): per race, one bit per ballot.
pub fn sides(h2: &[u8; 32], races: usize, n: usize) -> Vec<Vec<u8>> {
    let mut rng = stream("sides", &[h2]);
    (0..races).map(|_| bits(&mut rng, n)).collect()
}
