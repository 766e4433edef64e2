//! Every value H gives in a 2.x record (spec/65.2, 2.0.0's equation numbers): computed the same way by the
//! prover, which writes them, and the verifier, which recomputes them.

use votum_elgamal::Ciphertext;
use votum_hash::eg2::{version_key, Hash};

use crate::group::Eg2Group;
use crate::ContestData;

/// H_P = H(ver; 0x00, the group's constants) (eq. 4), `hashed` the constants at their fixed widths.
pub fn parameter_hash(version: &str, hashed: &[Vec<u8>]) -> [u8; 32] {
    let mut h = Hash::new(&version_key(version)).byte(0x00);
    for x in hashed {
        h = h.bytes(x);
    }
    h.finish()
}

/// H_M = H(H_P; 0x01, manifest) (eq. 5, the file with its 4-byte length).
pub fn manifest_hash(hp: &[u8; 32], manifest: &[u8]) -> [u8; 32] {
    Hash::new(hp).byte(0x01).file(manifest).finish()
}

/// H_B = H(H_P; 0x02, H_M, n, k) (eq. 6).
pub fn election_base_hash(hp: &[u8; 32], hm: &[u8; 32], n: u32, k: u32) -> [u8; 32] {
    Hash::new(hp).byte(0x02).bytes(hm).u32(n).u32(k).finish()
}

/// H_E = H(H_B; 0x12, K) (eq. 23).
pub fn extended_base_hash<G: Eg2Group>(group: &G, hb: &[u8; 32], k: &G::Element) -> [u8; 32] {
    Hash::new(hb)
        .byte(0x12)
        .bytes(&group.hash_bytes(k))
        .finish()
}

/// A coefficient's Schnorr challenge H(H_P; 0x10, i, j, K_ij, h_ij) (eq. 12).
pub fn schnorr_hash<G: Eg2Group>(
    group: &G,
    hp: &[u8; 32],
    x: u32,
    j: u32,
    kij: &G::Element,
    h: &G::Element,
) -> [u8; 32] {
    Hash::new(hp)
        .byte(0x10)
        .u32(x)
        .u32(j)
        .bytes(&group.hash_bytes(kij))
        .bytes(&group.hash_bytes(h))
        .finish()
}

/// A range proof's challenge H(H_E; 0x21, K, α, β, a₀, b₀, …, a_R, b_R) (eqs. 46, 51).
///
/// `k` is K's encoding (`Eg2Group::hash_bytes`), made once by the caller: on P-256 each encoding costs a field
/// inversion, and K is the same in every proof.
pub fn range_hash<'a, G: Eg2Group + 'a>(
    group: &G,
    he: &[u8; 32],
    k: &[u8],
    ct: &Ciphertext<G>,
    commitments: impl IntoIterator<Item = (&'a G::Element, &'a G::Element)>,
) -> [u8; 32] {
    let mut h = Hash::new(he)
        .byte(0x21)
        .bytes(k)
        .bytes(&group.hash_bytes(&ct.pad))
        .bytes(&group.hash_bytes(&ct.data));
    for (a, b) in commitments {
        h = h.bytes(&group.hash_bytes(a)).bytes(&group.hash_bytes(b));
    }
    h.finish()
}

/// A decryption proof's challenge H(H_E; 0x30, K, A, B, a, b, M) (eq. 71).
pub fn decryption_hash<G: Eg2Group>(
    group: &G,
    he: &[u8; 32],
    k: &G::Element,
    ct: &Ciphertext<G>,
    (a, b): (&G::Element, &G::Element),
    m: &G::Element,
) -> [u8; 32] {
    Hash::new(he)
        .byte(0x30)
        .bytes(&group.hash_bytes(k))
        .bytes(&group.hash_bytes(&ct.pad))
        .bytes(&group.hash_bytes(&ct.data))
        .bytes(&group.hash_bytes(a))
        .bytes(&group.hash_bytes(b))
        .bytes(&group.hash_bytes(m))
        .finish()
}

/// A contest-data decryption proof's challenge H(H_E; 0x31, K, C₀, C₁, C₂, a, b, β) (eq. 81). C₁ is hashed
/// as the uppercase hex text of its bytes, as egk-ec does (spec/65.6).
pub fn data_decryption_hash<G: Eg2Group>(
    group: &G,
    he: &[u8; 32],
    k: &G::Element,
    data: &ContestData<G>,
    (a, b): (&G::Element, &G::Element),
    beta: &G::Element,
) -> [u8; 32] {
    let c1_hex: String = data.c1.iter().map(|b| format!("{b:02X}")).collect();
    Hash::new(he)
        .byte(0x31)
        .bytes(&group.hash_bytes(k))
        .bytes(&group.hash_bytes(&data.c0))
        .bytes(c1_hex.as_bytes())
        .bytes(&data.c2)
        .bytes(&group.hash_bytes(a))
        .bytes(&group.hash_bytes(b))
        .bytes(&group.hash_bytes(beta))
        .finish()
}

/// χ_l = H(H_E; 0x23, l, K, α₁, β₁, …) (eq. 58).
///
/// `k` is K's encoding, as for [`range_hash`].
pub fn contest_hash<G: Eg2Group>(
    group: &G,
    he: &[u8; 32],
    sequence: u32,
    k: &[u8],
    cts: &[&Ciphertext<G>],
) -> [u8; 32] {
    let mut h = Hash::new(he).byte(0x23).u32(sequence).bytes(k);
    for ct in cts {
        h = h
            .bytes(&group.hash_bytes(&ct.pad))
            .bytes(&group.hash_bytes(&ct.data));
    }
    h.finish()
}

/// H(B) = H(H_E; 0x24, χ₁, …, χ_mB, B_aux) (eq. 59).
pub fn confirmation_code(he: &[u8; 32], contest_hashes: &[[u8; 32]], baux: &[u8]) -> [u8; 32] {
    let mut h = Hash::new(he).byte(0x24);
    for x in contest_hashes {
        h = h.bytes(x);
    }
    h.bytes(baux).finish()
}
