//! The protocol's hashes (spec/92.2): labelled SHA-256 transcripts (spec/20), truncated to the
//! length each algorithm asks for.

use votum_arith::{Integer, Order};
use votum_hash::Transcript;

pub const TAG_POINT: &str = "votum/v1/chvote/point";
pub const TAG_POINTS: &str = "votum/v1/chvote/points";
pub const TAG_COMMIT: &str = "votum/v1/chvote/point-commitment";
pub const TAG_VALUES: &str = "votum/v1/chvote/values";
pub const TAG_BALLOT: &str = "votum/v1/chvote/ballot";
pub const TAG_CONFIRMATION: &str = "votum/v1/chvote/confirmation";
pub const TAG_KEY: &str = "votum/v1/chvote/key";
pub const TAG_OT: &str = "votum/v1/chvote/ot-key";
pub const GENERATORS_SEED: &[u8] = b"votum/chvote/generators";

/// Minimal big-endian bytes of a non-negative integer (empty for 0).
pub fn int_bytes(x: &Integer) -> Vec<u8> {
    x.to_digits::<u8>(Order::Msf)
}

pub fn append_int(t: &mut Transcript, label: &str, x: &Integer) {
    t.append_bytes(label, &int_bytes(x));
}

/// The hash of one point (x, y).
pub fn point(x: &Integer, y: &Integer) -> [u8; 32] {
    let mut t = Transcript::new(TAG_POINT);
    append_int(&mut t, "x", x);
    append_int(&mut t, "y", y);
    t.digest()
}

/// The public commitment to authority j's point for voter i and candidate v (votum, spec/92.4):
/// lets the client attribute a response that decodes to another point.
pub fn commitment(x: &Integer, y: &Integer) -> [u8; 32] {
    let mut t = Transcript::new(TAG_COMMIT);
    append_int(&mut t, "x", x);
    append_int(&mut t, "y", y);
    t.digest()
}

/// The hash of a voter's whole list of points (for F).
pub fn points<'a>(ps: impl Iterator<Item = (&'a Integer, &'a Integer)>) -> [u8; 32] {
    let mut t = Transcript::new(TAG_POINTS);
    for (x, y) in ps {
        append_int(&mut t, "x", x);
        append_int(&mut t, "y", y);
    }
    t.digest()
}

/// H(y_1 … y_t) mod q̂ (7.11, 7.30).
pub fn values_mod(ys: &[Integer], q_hat: &Integer) -> Integer {
    let mut t = Transcript::new(TAG_VALUES);
    t.append_u64("count", ys.len() as u64);
    for y in ys {
        append_int(&mut t, "y", y);
    }
    Integer::from_digits(&t.digest(), Order::Msf) % q_hat
}

/// A τ-bit challenge: the first τ/8 bytes of the transcript's digest.
pub fn challenge(t: &Transcript, tau: u32) -> Integer {
    let d = t.digest();
    Integer::from_digits(&d[..(tau / 8) as usize], Order::Msf)
}

/// K(k): the first `len` bytes of the one-time pad an OT key gives (7.25, 7.27).
pub fn ot_pad(k: &Integer, len: usize) -> Vec<u8> {
    votum_hash::expand(&int_bytes(k), TAG_OT.as_bytes(), len)
}

pub fn xor_into(acc: &mut [u8], other: &[u8]) {
    for (a, b) in acc.iter_mut().zip(other) {
        *a ^= b;
    }
}
