//! A contest's data (overvotes, write-ins, its status) as hashed ElGamal (2.0 §3.3.6, eqs. 49–55), with
//! egk-ec's byte encoding, padding and KDF label, so egk-ec can read what votum writes (spec/65.6).

use hmac::{Hmac, Mac};
use sha2::Sha256;
use votum_hash::eg2::Hash;

use crate::group::{fixed_powers, Eg2Group};
use crate::ContestData;

pub use crate::plain_data::{Plain, Status};

const LABEL: &[u8] = b"share_enc_keys";

fn hmac(key: &[u8], parts: &[&[u8]]) -> [u8; 32] {
    let mut mac = match Hmac::<Sha256>::new_from_slice(key) {
        Ok(m) => m,
        Err(_) => return [0u8; 32],
    };
    for p in parts {
        mac.update(p);
    }
    mac.finalize().into_bytes().into()
}

/// k = H(H_E; 0x22, K, α, β) and the KDF keys k₀ … k_bD (egk-ec: label "share_enc_keys", context
/// "contest_data" ‖ the contest's id, length the message's bits).
fn keys<G: Eg2Group>(
    group: &G,
    he: &[u8; 32],
    k: &G::Element,
    (alpha, beta): (&G::Element, &G::Element),
    contest_id: &str,
    num_bytes: usize,
    blocks: usize,
) -> Vec<[u8; 32]> {
    let key = Hash::new(he)
        .byte(0x22)
        .bytes(&group.hash_bytes(k))
        .bytes(&group.hash_bytes(alpha))
        .bytes(&group.hash_bytes(beta))
        .finish();
    let context = format!("contest_data{contest_id}");
    let bits = ((num_bytes * 8) as u32).to_be_bytes();
    (0..=blocks as u32)
        .map(|i| {
            hmac(
                &key,
                &[&i.to_be_bytes(), LABEL, &[0], context.as_bytes(), &bits],
            )
        })
        .collect()
}

/// Encrypts `message` for contest `contest_id` with nonce ξ: (C₀, C₁, C₂) and the message's length.
pub fn encrypt<G: Eg2Group>(
    group: &G,
    he: &[u8; 32],
    k: &G::Element,
    k_table: &G::Table,
    contest_id: &str,
    message: &[u8],
    xi: &G::Scalar,
) -> (ContestData<G>, usize) {
    let [alpha, beta] = fixed_powers(group, [(None, xi), (Some(k_table), xi)]);
    let blocks = message.len().div_ceil(32);
    let ks = keys(
        group,
        he,
        k,
        (&alpha, &beta),
        contest_id,
        message.len(),
        blocks,
    );
    let mut c1 = Vec::with_capacity(blocks * 32);
    for (i, chunk) in message.chunks(32).enumerate() {
        let mut block = [0u8; 32];
        block[..chunk.len()].copy_from_slice(chunk);
        c1.extend(block.iter().zip(ks[i + 1].iter()).map(|(a, b)| a ^ b));
    }
    let c0 = group.hash_bytes(&alpha);
    let c2 = hmac(&ks[0], &[&c0, &c1]);
    (ContestData { c0: alpha, c1, c2 }, message.len())
}

/// Decrypts contest data with β = C₀^s: the message, or `None` if its MAC does not hold.
pub fn decrypt<G: Eg2Group>(
    group: &G,
    he: &[u8; 32],
    k: &G::Element,
    data: &ContestData<G>,
    beta: &G::Element,
    contest_id: &str,
    num_bytes: usize,
) -> Option<Vec<u8>> {
    let blocks = data.c1.len().div_ceil(32);
    let ks = keys(
        group,
        he,
        k,
        (&data.c0, beta),
        contest_id,
        num_bytes,
        blocks,
    );
    let c0 = group.hash_bytes(&data.c0);
    if hmac(&ks[0], &[&c0, &data.c1]) != data.c2 {
        return None;
    }
    let mut out: Vec<u8> = data
        .c1
        .chunks(32)
        .enumerate()
        .flat_map(|(i, c)| {
            c.iter()
                .zip(ks[i + 1].iter())
                .map(|(a, b)| a ^ b)
                .collect::<Vec<u8>>()
        })
        .collect();
    out.truncate(num_bytes);
    Some(out)
}
