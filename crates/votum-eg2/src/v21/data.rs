//! A contest's data in 2.1 (spec/66.11, §3.3.10): D (what the device counted: an overvote's options, the
//! write-ins and the status, in 65.6's encoding, zero-padded to the manifest's 32·b bytes) encrypted under
//! K̂ in signed ElGamal with its KDF (eqs. 63–69), and opened from a challenged ballot's nonce
//! (eqs. 110–111).

use rand_core::{CryptoRng, RngCore};
use zeroize::Zeroize;

use crate::contest_data::Plain;
use crate::group::{fixed_powers, Eg2Group};
use crate::v21::check::xor_pads;
use crate::v21::hashes::{data_nonce, data_pads, data_proof_hash};
use crate::v21::record::{DataCiphertext, OpenedData};
use crate::Pair;

/// D for a contest of `blocks` blocks: `plain`'s encoding, fitted (65.6) and zero-padded to 32·b bytes.
pub fn encode(plain: &Plain, blocks: u32) -> Result<Vec<u8>, String> {
    let size = blocks as usize * 32;
    let mut d = plain.fit(size);
    if d.len() > size {
        return Err(format!(
            "the contest data takes {} bytes, more than the manifest's {blocks} blocks",
            d.len()
        ));
    }
    d.resize(size, 0);
    Ok(d)
}

/// ξ (eq. 64) as a scalar; the hash is wiped.
fn nonce<G: Eg2Group>(group: &G, hi: &[u8; 32], contest: u32, xi_b: &[u8; 32]) -> G::Scalar {
    let mut h = data_nonce(hi, contest, xi_b);
    let s = group.to_challenge(&h);
    h.zeroize();
    s
}

/// (C₀, C₁, C₂) for D of contest `contest` (eqs. 64–69): ξ from ξ_B, β = K̂^ξ by its table; ξ, u and the
/// pads are wiped.
pub fn encrypt<G: Eg2Group, R: RngCore + CryptoRng>(
    group: &G,
    k_hat_table: &G::Table,
    (hi, xi_b): (&[u8; 32], &[u8; 32]),
    contest: u32,
    d: &[u8],
    rng: &mut R,
) -> DataCiphertext<G> {
    let mut xi = nonce(group, hi, contest, xi_b);
    let mut u = group.random_scalar(rng);
    let [c0, beta, a] = fixed_powers(group, [(None, &xi), (Some(k_hat_table), &xi), (None, &u)]);
    let mut pads = data_pads(group, hi, contest, (&c0, &beta), (d.len() / 32) as u32);
    let c1 = xor_pads(d, &pads).unwrap_or_default();
    pads.zeroize();
    let c = group.to_challenge(&data_proof_hash(group, hi, contest, &a, (&c0, &c1)));
    let v = group.scalar_sub(&u, &group.scalar_mul(&c, &xi));
    u.zeroize();
    xi.zeroize();
    DataCiphertext {
        c0,
        c1,
        proof: Pair { c, v },
    }
}

/// A challenged ballot's contest data opened with ξ_B (eqs. 110–111): ξ, which must give C₀ (else the
/// device lied), β = K̂^ξ and D.
pub fn open<G: Eg2Group>(
    group: &G,
    k_hat: &G::Element,
    (hi, xi_b): (&[u8; 32], &[u8; 32]),
    contest: u32,
    data: &DataCiphertext<G>,
) -> Result<OpenedData<G>, String> {
    let xi = nonce(group, hi, contest, xi_b);
    if group.pow_generator(&xi) != data.c0 {
        return Err(format!(
            "the decrypted ballot nonce does not give contest {contest}'s data C₀"
        ));
    }
    let beta = group.pow(k_hat, &xi);
    let pads = data_pads(
        group,
        hi,
        contest,
        (&data.c0, &beta),
        (data.c1.len() / 32) as u32,
    );
    // pads of whole blocks only: a C₁ that is not whole blocks differs from them in length
    let d = xor_pads(&data.c1, &pads)
        .ok_or_else(|| format!("contest {contest}'s data is not whole blocks"))?;
    Ok(OpenedData { nonce: xi, d })
}
