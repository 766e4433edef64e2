//! Threshold decryption of a mixed list with one batched Chaum–Pedersen proof per trustee
//! (spec/91.3).
//!
//! Trustee i (share x_i, public share X_i = g^{x_i}) posts d_j = a_j^{x_i} for every pad a_j
//! and one proof that log_g X_i = log_A D for A = Π a_j^{e_j}, D = Π d_j^{e_j}, with 128-bit
//! e_j hashed from everything posted (so fixed after the d_j). A wrong d_j makes D ≠ A^{x_i}
//! except with probability 2^−128, and the proof fails.

use rayon::prelude::*;
use votum_group::Group;
use votum_hash::{tags, Transcript};
use votum_shuffle::{elements_digest, short_scalars};

use crate::MixError;

/// A trustee's partial decryptions of a list and the proof for all of them.
pub struct DecryptionShare<G: Group> {
    pub trustee: u64,
    pub partials: Vec<G::Element>,
    pub commit_g: G::Element,
    pub commit_a: G::Element,
    pub response: G::Scalar,
}

impl<G: Group> Clone for DecryptionShare<G> {
    fn clone(&self) -> Self {
        Self {
            trustee: self.trustee,
            partials: self.partials.clone(),
            commit_g: self.commit_g.clone(),
            commit_a: self.commit_a.clone(),
            response: self.response.clone(),
        }
    }
}

/// The transcript up to the batching vector, and the vector e (91.3).
pub(crate) fn batch<G: Group>(
    group: &G,
    context: &[u8],
    trustee: u64,
    public_share: &G::Element,
    pads: &[G::Element],
    partials: &[G::Element],
) -> (Transcript, Vec<G::Scalar>) {
    let mut t = Transcript::new(tags::MIX_DECRYPTION);
    t.append_bytes("group", group.id().name().as_bytes());
    t.append_bytes("context", context);
    t.append_u64("trustee", trustee);
    t.append_element(group, "public-share", public_share);
    t.append_bytes("pads", &elements_digest(group, "pads", pads));
    t.append_bytes("partials", &elements_digest(group, "partials", partials));
    let e = short_scalars(group, &t.digest(), b"batching", pads.len());
    (t, e)
}

/// Π xs_j^{e_j}.
pub(crate) fn combination<G: Group>(
    group: &G,
    trustee: u64,
    xs: &[G::Element],
    e: &[G::Scalar],
) -> Result<G::Element, MixError> {
    group
        .multi_pow_par(xs, e)
        .map_err(|_| MixError::Decryption {
            trustee,
            reason: "lengths".into(),
        })
}

pub(crate) fn challenge<G: Group>(
    group: &G,
    mut t: Transcript,
    commit_g: &G::Element,
    commit_a: &G::Element,
) -> G::Scalar {
    t.append_element(group, "commit-g", commit_g);
    t.append_element(group, "commit-a", commit_a);
    t.challenge_scalar(group, "challenge")
}

/// Checks a trustee's share of the decryption of `pads` against its public share X_i:
/// g^v = t_g·X_i^c and A^v = t_a·D^c.
pub fn verify_share<G: Group>(
    group: &G,
    public_share: &G::Element,
    context: &[u8],
    pads: &[G::Element],
    share: &DecryptionShare<G>,
) -> Result<(), MixError> {
    let fail = |reason: &str| MixError::Decryption {
        trustee: share.trustee,
        reason: reason.into(),
    };
    if share.partials.len() != pads.len() {
        return Err(fail("one partial decryption per ciphertext"));
    }
    let (t, e) = batch(
        group,
        context,
        share.trustee,
        public_share,
        pads,
        &share.partials,
    );
    let a = combination(group, share.trustee, pads, &e)?;
    let d = combination(group, share.trustee, &share.partials, &e)?;
    let c = challenge(group, t, &share.commit_g, &share.commit_a);
    let v = &share.response;
    let lhs = group.pow(group.generator(), v);
    if lhs != group.op(&share.commit_g, &group.pow(public_share, &c)) {
        return Err(fail("proof equation g^v = t_g·X^c fails"));
    }
    if group.pow(&a, v) != group.op(&share.commit_a, &group.pow(&d, &c)) {
        return Err(fail(
            "proof equation A^v = t_a·D^c fails (a wrong partial decryption)",
        ));
    }
    Ok(())
}

/// Plaintext elements b_j / Π_i d_{ij}^{λ_i} from the shares of a quorum of trustees.
pub fn combine<G: Group>(
    group: &G,
    datas: &[G::Element],
    shares: &[&DecryptionShare<G>],
) -> Result<Vec<G::Element>, MixError> {
    let present: Vec<u64> = shares.iter().map(|s| s.trustee).collect();
    let weights = present
        .iter()
        .map(|&i| votum_elgamal::threshold::lagrange_coefficient(group, i, &present))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| MixError::Input(format!("trustee indices: {e}")))?;
    if shares.iter().any(|s| s.partials.len() != datas.len()) {
        return Err(MixError::Input("a share of another list".into()));
    }
    Ok((0..datas.len())
        .into_par_iter()
        .map(|j| {
            let bases: Vec<G::Element> = shares.iter().map(|s| s.partials[j].clone()).collect();
            let m = group
                .multi_pow(&bases, &weights)
                .unwrap_or_else(|_| group.identity());
            group.div(&datas[j], &m)
        })
        .collect())
}
