//! The shuffle proof's Fiat–Shamir transcript (spec/90.3).

use rayon::prelude::*;
use votum_elgamal::Ciphertext;
use votum_group::Group;
use votum_hash::{expand, tags, Transcript};

use crate::digest::elements_digest;
use crate::short_scalar;

/// Bytes of each batching element and of the challenge (128 bits).
pub(crate) const SHORT: usize = 16;

/// What the proof is about: absorbed first (90.3 step 1).
pub(crate) struct Statement<'a, G: Group> {
    pub context: &'a [u8],
    pub generators_seed: &'a [u8],
    pub pk: &'a G::Element,
    pub width: usize,
    pub rows: usize,
    pub input_digest: [u8; 32],
    pub output_digest: [u8; 32],
}

impl<G: Group> Statement<'_, G> {
    pub fn transcript(&self, group: &G) -> Transcript {
        let mut t = Transcript::new(tags::SHUFFLE);
        t.append_bytes("group", group.id().name().as_bytes());
        t.append_bytes("context", self.context);
        t.append_bytes("generators", self.generators_seed);
        t.append_element(group, "pk", self.pk);
        t.append_u64("width", self.width as u64);
        t.append_u64("rows", self.rows as u64);
        t.append_bytes("input", &self.input_digest);
        t.append_bytes("output", &self.output_digest);
        t
    }
}

/// Absorbs the permutation commitment and returns the batching vector u_1 … u_N (90.3 step 2).
pub(crate) fn batching<G: Group>(
    t: &mut Transcript,
    group: &G,
    commitments: &[G::Element],
) -> Vec<G::Scalar> {
    t.append_bytes(
        "commitment",
        &elements_digest(group, "commitment", commitments),
    );
    short_scalars(group, &t.digest(), b"batching", commitments.len())
}

/// `count` scalars below 2^128: the 16-byte big-endian integers of `expand(seed, info, 16·count)`
/// (a batching vector, 90.3 and 91.3).
pub fn short_scalars<G: Group>(
    group: &G,
    seed: &[u8],
    info: &[u8],
    count: usize,
) -> Vec<G::Scalar> {
    expand(seed, info, SHORT * count)
        .par_chunks(SHORT)
        .map(|b| short_scalar(group, b))
        .collect()
}

/// The proof's commitments, in the order they are hashed (90.3 step 3).
pub(crate) struct Commitments<'a, G: Group> {
    pub chain: &'a [G::Element],
    pub t1: &'a G::Element,
    pub t2: &'a G::Element,
    pub t3: &'a G::Element,
    pub t4: &'a [Ciphertext<G>],
    pub t_hat: &'a [G::Element],
}

/// Absorbs the commitments and returns the challenge c < 2^128 (90.3 step 3).
pub(crate) fn challenge<G: Group>(
    t: &mut Transcript,
    group: &G,
    k: &Commitments<'_, G>,
) -> G::Scalar {
    t.append_bytes("chain", &elements_digest(group, "chain", k.chain));
    t.append_element(group, "t1", k.t1);
    t.append_element(group, "t2", k.t2);
    t.append_element(group, "t3", k.t3);
    t.append_u64("t4", k.t4.len() as u64);
    for ct in k.t4 {
        t.append_element(group, "t4", &ct.pad);
    }
    for ct in k.t4 {
        t.append_element(group, "t4", &ct.data);
    }
    t.append_bytes("t-hat", &elements_digest(group, "t-hat", k.t_hat));
    short_scalar(group, &expand(&t.digest(), b"challenge", SHORT))
}
