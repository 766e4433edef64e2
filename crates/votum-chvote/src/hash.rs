//! The protocol's hashes (spec/92.2): labelled SHA-256 transcripts (spec/20), truncated to the
//! length each algorithm asks for.

use votum_arith::{Integer, Order};
use votum_hash::Transcript;

use crate::poly::Point;

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

/// The hash of the points under `tag`, each x then y.
fn points_digest(tag: &str, points: &[Point]) -> [u8; 32] {
    let mut t = Transcript::new(tag);
    for p in points {
        append_int(&mut t, "x", &p.x);
        append_int(&mut t, "y", &p.y);
    }
    t.digest()
}

/// The public commitment to authority j's point for voter i and candidate v (votum, spec/92.4):
/// lets the client attribute a response that decodes to another point.
pub fn commitment(p: &Point) -> [u8; 32] {
    points_digest(TAG_COMMIT, std::slice::from_ref(p))
}

/// An authority's share F_ij of a voter's finalization code: the first `len` bytes of the hash
/// of the voter's whole list of points (7.10, 7.37).
pub fn finalization_share(points: &[Point], len: usize) -> Vec<u8> {
    points_digest(TAG_POINTS, points)[..len].to_vec()
}

/// An authority's share rc_ijv of a return code: the first `len` bytes of the point's hash
/// (7.10, 7.28).
pub fn return_code_share(p: &Point, len: usize) -> Vec<u8> {
    points_digest(TAG_POINT, std::slice::from_ref(p))[..len].to_vec()
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

/// The point an OT message `c` (L_M bytes) carries under `key` (7.27): c ⊕ K(key), x ‖ y. The
/// voter's client opens its selections with it, the verifier every candidate of a finalized voter.
pub fn open_point(c: &[u8], key: &Integer) -> Point {
    let half = c.len() / 2;
    let mut m = c.to_vec();
    xor_into(&mut m, &ot_pad(key, c.len()));
    let point = Point {
        x: Integer::from_digits(&m[..half], Order::Msf),
        y: Integer::from_digits(&m[half..], Order::Msf),
    };
    zeroize::Zeroize::zeroize(&mut m);
    point
}
