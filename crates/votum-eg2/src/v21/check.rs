//! The checks a 2.1 party and the verifier both make (spec/66): a guardian's key record (Verification 2),
//! a dealer's share against its commitments (eqs. 28, 29), a signed-ElGamal nonce proof (eqs. 22, 38, 69).

use crate::group::Eg2Group;
use crate::v21::hashes::{ballot_nonce_proof_hash, data_proof_hash, key_proof_hash, KeyKind};
use crate::v21::record::{DataCiphertext, GuardianKey, KeyProof, NonceCiphertext};

fn check_proof<G: Eg2Group>(
    group: &G,
    hp: &[u8; 32],
    kind: KeyKind,
    i: u32,
    commitments: &[G::Element],
    kappa: &G::Element,
    proof: &KeyProof<G>,
) -> bool {
    // h_j = g^v_j K_j^c (j < k), h_k = g^v_k κ^c
    let h: Vec<G::Element> = commitments
        .iter()
        .chain(std::iter::once(kappa))
        .zip(&proof.v)
        .map(|(kj, v)| group.op(&group.pow_generator(v), &group.pow(kj, &proof.c)))
        .collect();
    let c = group.to_challenge(&key_proof_hash(group, hp, kind, i, commitments, kappa, &h));
    c == proof.c
}

/// Verification 2 for one guardian: k commitments of each kind, k + 1 responses each, every value in the
/// group, both challenges recomputed (the responses are below q: the reader refuses others).
pub fn check_key<G: Eg2Group>(
    group: &G,
    hp: &[u8; 32],
    key: &GuardianKey<G>,
    k: u32,
) -> Result<(), String> {
    let k = k as usize;
    if key.vote.len() != k || key.data.len() != k {
        return Err(format!(
            "{} vote and {} data commitments for a quorum of {k}",
            key.vote.len(),
            key.data.len()
        ));
    }
    if key.vote_proof.v.len() != k + 1 || key.data_proof.v.len() != k + 1 {
        return Err(format!("a proof does not have {} responses", k + 1));
    }
    let all: Vec<&G::Element> = key
        .vote
        .iter()
        .chain(&key.data)
        .chain(std::iter::once(&key.kappa))
        .collect();
    if !group.all_members(&all) {
        return Err("a commitment or κ is not in the group".into());
    }
    if !check_proof(
        group,
        hp,
        KeyKind::Vote,
        key.i,
        &key.vote,
        &key.kappa,
        &key.vote_proof,
    ) {
        return Err("the proof of the vote coefficients and ζ does not verify (2.C)".into());
    }
    if !check_proof(
        group,
        hp,
        KeyKind::Data,
        key.i,
        &key.data,
        &key.kappa,
        &key.data_proof,
    ) {
        return Err("the proof of the ballot-data coefficients and ζ does not verify (2.C)".into());
    }
    Ok(())
}

/// Π_j K_j^(x^j) = g^P(x) (eq. 14): what a share P(x) must be the logarithm of.
pub fn public_share<G: Eg2Group>(group: &G, commitments: &[G::Element], x: u32) -> G::Element {
    let xs = group.scalar_from_u64(u64::from(x));
    let mut e = group.scalar_from_u64(1);
    let mut exps = Vec::with_capacity(commitments.len());
    for _ in commitments {
        exps.push(e.clone());
        e = group.scalar_mul(&e, &xs);
    }
    group
        .multi_pow(commitments, &exps)
        .unwrap_or_else(|_| group.identity())
}

/// g^v · b^c, as [`Group::pow2_many`] makes it (on P-256: the encoding the hash needs without an inversion of
/// its own beyond the one batch's).
fn pow2_one<G: Eg2Group>(group: &G, v: &G::Scalar, b: &G::Element, c: &G::Scalar) -> G::Element {
    group
        .pow2_many(&[(None, v, b, c)])
        .pop()
        .unwrap_or_else(|| group.identity())
}

/// The ballot nonce's proof (eq. 38): a_B = g^v_B C_0^c_B and c_B = H_q(H_I; 0x23, a_B, C_0, C_1).
pub fn check_nonce_proof<G: Eg2Group>(group: &G, hi: &[u8; 32], n: &NonceCiphertext<G>) -> bool {
    let a = pow2_one(group, &n.proof.v, &n.c0, &n.proof.c);
    group.to_challenge(&ballot_nonce_proof_hash(group, hi, &a, &n.c0, &n.c1)) == n.proof.c
}

/// A contest data's proof (eq. 69): a = g^v C₀^c and c = H_q(H_I; 0x27, ind_c, a, C₀, C₁).
pub fn check_data_proof<G: Eg2Group>(
    group: &G,
    hi: &[u8; 32],
    contest: u32,
    d: &DataCiphertext<G>,
) -> bool {
    let a = pow2_one(group, &d.proof.v, &d.c0, &d.proof.c);
    group.to_challenge(&data_proof_hash(group, hi, contest, &a, (&d.c0, &d.c1))) == d.proof.c
}

/// C₁ ⊕ the pads (eqs. 68, 106): D from C₁ or C₁ from D; `None` if the lengths differ.
pub fn xor_pads(c1: &[u8], pads: &[u8]) -> Option<Vec<u8>> {
    (c1.len() == pads.len()).then(|| c1.iter().zip(pads).map(|(a, b)| a ^ b).collect())
}

/// A pre-encryption vector from its nonces (eq. 112, Verification 18.1–18.2): at position `j` (1…m+L; above
/// m a null vote) the k-th encryption is (g^ξ_k, K^(δ_jk + ξ_k)), K given by its table.
pub fn pre_vector<G: Eg2Group>(
    group: &G,
    k_table: &G::Table,
    j: usize,
    nonces: &[G::Scalar],
) -> Vec<votum_elgamal::Ciphertext<G>> {
    let one = group.scalar_from_u64(1);
    nonces
        .iter()
        .enumerate()
        .map(|(at, xi)| {
            let e = if at + 1 == j {
                group.scalar_add(&one, xi)
            } else {
                xi.clone()
            };
            votum_elgamal::Ciphertext {
                pad: group.pow_generator(xi),
                data: group.pow_table(k_table, &e),
            }
        })
        .collect()
}
