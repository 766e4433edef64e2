//! Every value H gives in ElectionGuard 2.1 (spec/66.2; the numbers are the 2.1.0 specification's equation
//! numbers, the bytes its §5.5 tables). Shared by the parties that compute them and the verifier that
//! recomputes them. Elements are hashed at their fixed width (512 bytes on the 4096-bit group), scalars and
//! hashes at 32 bytes, small integers at 4.

use votum_elgamal::Ciphertext;
use votum_hash::eg2::{version_key, Hash};
use zeroize::Zeroize;

use crate::group::Eg2Group;
use crate::Pair;

/// The 2.1 version string; H_P's key is its UTF-8 bytes padded to 32 (eq. 4).
pub const VERSION: &str = "v2.1.0";

/// Chaining mode identifiers (§3.4.4): no chaining, simple chaining.
pub const NO_CHAINING: u32 = 0;
pub const SIMPLE_CHAINING: u32 = 1;

fn el<G: Eg2Group>(group: &G, h: Hash, x: &G::Element) -> Hash {
    h.bytes(&group.hash_bytes(x))
}

fn els<'a, G: Eg2Group + 'a>(
    group: &G,
    mut h: Hash,
    xs: impl IntoIterator<Item = &'a G::Element>,
) -> Hash {
    for x in xs {
        h = el(group, h, x);
    }
    h
}

fn ct<G: Eg2Group>(group: &G, h: Hash, c: &Ciphertext<G>) -> Hash {
    el(group, el(group, h, &c.pad), &c.data)
}

/// H_P = H(ver; 0x00, p, q, g, n, k) (eq. 4); `constants` are p, q, g at their fixed widths.
pub fn parameter_hash(constants: &[Vec<u8>], n: u32, k: u32) -> [u8; 32] {
    let mut h = Hash::new(&version_key(VERSION)).byte(0x00);
    for c in constants {
        h = h.bytes(c);
    }
    h.u32(n).u32(k).finish()
}

/// H_B = H(H_P; 0x01, manifest) (eq. 5), the manifest file with its 4-byte length.
pub fn base_hash(hp: &[u8; 32], manifest: &[u8]) -> [u8; 32] {
    Hash::new(hp).byte(0x01).file(manifest).finish()
}

/// Which of a guardian's two key-generation proofs (eqs. 11 and 13).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyKind {
    /// the vote-encryption polynomial: "pk vote"
    Vote,
    /// the ballot-data polynomial: "pk data"
    Data,
}

impl KeyKind {
    fn label(self) -> &'static [u8] {
        match self {
            KeyKind::Vote => b"pk vote",
            KeyKind::Data => b"pk data",
        }
    }
}

/// c_i = H_q(H_P; 0x10, label, i, K_i0 … K_i,k−1, κ_i, h_i0 … h_ik) (eqs. 11, 13), as the hash.
pub fn key_proof_hash<G: Eg2Group>(
    group: &G,
    hp: &[u8; 32],
    kind: KeyKind,
    i: u32,
    commitments: &[G::Element],
    kappa: &G::Element,
    h: &[G::Element],
) -> [u8; 32] {
    let start = Hash::new(hp).byte(0x10).bytes(kind.label()).u32(i);
    let hh = el(group, els(group, start, commitments), kappa);
    els(group, hh, h).finish()
}

/// k_iℓ = H(H_P; 0x11, i, ℓ, κ_ℓ, α, β) (eq. 16): the key of the share guardian i sends guardian ℓ.
pub fn share_key<G: Eg2Group>(
    group: &G,
    hp: &[u8; 32],
    (i, l): (u32, u32),
    kappa_l: &G::Element,
    alpha: &G::Element,
    beta: &G::Element,
) -> [u8; 32] {
    let h = Hash::new(hp).byte(0x11).u32(i).u32(l);
    els(group, h, [kappa_l, alpha, beta]).finish()
}

/// k_iℓ,1 ‖ k_iℓ,2 (eqs. 17, 18): SP 800-108 counter-mode KDF, Label "share enc keys", Context
/// "share encrypt" ‖ b(i, 4) ‖ b(ℓ, 4), 512 bits.
pub fn share_pads(key: &[u8; 32], i: u32, l: u32) -> [u8; 64] {
    let mut out = [0u8; 64];
    for (n, half) in out.chunks_mut(32).enumerate() {
        let k = Hash::new(key)
            .byte(n as u8 + 1)
            .bytes(b"share enc keys")
            .byte(0x00)
            .bytes(b"share encrypt")
            .u32(i)
            .u32(l)
            .bytes(&[0x02, 0x00])
            .finish();
        half.copy_from_slice(&k);
    }
    out
}

/// c̄_iℓ = H_q(H_P; 0x12, i, ℓ, γ, C_iℓ,0, C_iℓ,1) (eq. 22): the share ciphertext's proof of its nonce.
pub fn share_proof_hash<G: Eg2Group>(
    group: &G,
    hp: &[u8; 32],
    (i, l): (u32, u32),
    gamma: &G::Element,
    c0: &G::Element,
    c1: &[u8],
) -> [u8; 32] {
    let h = Hash::new(hp).byte(0x12).u32(i).u32(l);
    els(group, h, [gamma, c0]).bytes(c1).finish()
}

/// H_G = H(H_B; 0x13, K, K̂, K_1,0 … K_n,k−1, K̂_1,0 … K̂_n,k−1, κ_1 … κ_n) (eq. 27): the guardians' view
/// of the preliminary guardian record, compared before the record is published.
pub fn guardian_record_hash<'a, G: Eg2Group + 'a>(
    group: &G,
    hb: &[u8; 32],
    (k, k_hat): (&G::Element, &G::Element),
    vote: impl IntoIterator<Item = &'a G::Element>,
    data: impl IntoIterator<Item = &'a G::Element>,
    kappas: impl IntoIterator<Item = &'a G::Element>,
) -> [u8; 32] {
    let h = els(group, Hash::new(hb).byte(0x13), [k, k_hat]);
    els(group, els(group, els(group, h, vote), data), kappas).finish()
}

/// H_E = H(H_B; 0x14, K, K̂) (eq. 30).
pub fn extended_base_hash<G: Eg2Group>(
    group: &G,
    hb: &[u8; 32],
    k: &G::Element,
    k_hat: &G::Element,
) -> [u8; 32] {
    els(group, Hash::new(hb).byte(0x14), [k, k_hat]).finish()
}

/// H_I = H(H_E; 0x20, id_B) (eq. 32).
pub fn identifier_hash(he: &[u8; 32], id_b: &[u8; 32]) -> [u8; 32] {
    Hash::new(he).byte(0x20).bytes(id_b).finish()
}

/// ξ_i,j = H_q(H_I; 0x21, i, j, ξ_B) (eq. 33), as the hash (secret: the caller wipes it).
pub fn selection_nonce(hi: &[u8; 32], contest: u32, option: u32, xi_b: &[u8; 32]) -> [u8; 32] {
    Hash::new(hi)
        .byte(0x21)
        .u32(contest)
        .u32(option)
        .bytes(xi_b)
        .finish()
}

/// h = H(H_I; 0x22, α_B, β_B) (eq. 35): the key of the ballot nonce's encryption.
pub fn ballot_nonce_key<G: Eg2Group>(
    group: &G,
    hi: &[u8; 32],
    alpha: &G::Element,
    beta: &G::Element,
) -> [u8; 32] {
    els(group, Hash::new(hi).byte(0x22), [alpha, beta]).finish()
}

/// k_1 = HMAC(h, 0x01 ‖ "ballot nonce" ‖ 0x00 ‖ "ballot nonce encrypt" ‖ 0x0100) (eq. 36).
pub fn ballot_nonce_pad(key: &[u8; 32]) -> [u8; 32] {
    Hash::new(key)
        .byte(0x01)
        .bytes(b"ballot nonce")
        .byte(0x00)
        .bytes(b"ballot nonce encrypt")
        .bytes(&[0x01, 0x00])
        .finish()
}

/// c_B = H_q(H_I; 0x23, a_B, C_ξB,0, C_ξB,1) (eq. 38).
pub fn ballot_nonce_proof_hash<G: Eg2Group>(
    group: &G,
    hi: &[u8; 32],
    a: &G::Element,
    c0: &G::Element,
    c1: &[u8; 32],
) -> [u8; 32] {
    els(group, Hash::new(hi).byte(0x23), [a, c0])
        .bytes(c1)
        .finish()
}

/// A range proof's challenge: H_q(H_I; 0x24, ind_c, ind_o, α, β, a_0, b_0, …) for an option (eq. 59), or
/// H_q(H_I; 0x24, ind_c, ᾱ, β̄, a_0, b_0, …) for a contest's selection limit (eq. 62, `option` None).
pub fn range_hash<'a, G: Eg2Group + 'a>(
    group: &G,
    hi: &[u8; 32],
    (contest, option): (u32, Option<u32>),
    c: &Ciphertext<G>,
    commitments: impl IntoIterator<Item = (&'a G::Element, &'a G::Element)>,
) -> [u8; 32] {
    let mut h = Hash::new(hi).byte(0x24).u32(contest);
    if let Some(o) = option {
        h = h.u32(o);
    }
    h = ct(group, h, c);
    for (a, b) in commitments {
        h = el(group, el(group, h, a), b);
    }
    h.finish()
}

/// C₂ = (c, v) as hashed: c ‖ v, 64 bytes.
fn proof<G: Eg2Group>(group: &G, h: Hash, p: &Pair<G>) -> Hash {
    h.bytes(&group.scalar_bytes(&p.c))
        .bytes(&group.scalar_bytes(&p.v))
}

/// A contest data's ciphertext (C₀, C₁, C₂) as the hashes take it (`record::DataCiphertext::parts`).
pub type DataParts<'a, G> = (
    &'a <G as votum_group::Group>::Element,
    &'a [u8],
    &'a Pair<G>,
);

/// (C₀, C₁, C₂) as hashed (eqs. 70, 99, 101): b(C₀) ‖ C₁ ‖ c ‖ v.
fn data<G: Eg2Group>(group: &G, h: Hash, (c0, c1, p): DataParts<'_, G>) -> Hash {
    proof(group, el(group, h, c0).bytes(c1), p)
}

/// χ_l = H(H_I; 0x28, l, α_1, β_1, …, α_m, β_m[, C₀, C₁, C₂]) (eq. 70; the contest data when the contest
/// carries it, spec/66.11).
pub fn contest_hash<G: Eg2Group>(
    group: &G,
    hi: &[u8; 32],
    contest: u32,
    cts: &[&Ciphertext<G>],
    contest_data: Option<DataParts<'_, G>>,
) -> [u8; 32] {
    let mut h = Hash::new(hi).byte(0x28).u32(contest);
    for c in cts {
        h = ct(group, h, c);
    }
    if let Some(d) = contest_data {
        h = data(group, h, d);
    }
    h.finish()
}

/// ξ = H_q(H_I; 0x25, ind_c, ξ_B) (eq. 64): the contest data's encryption nonce, as the hash (secret: the
/// caller wipes it).
pub fn data_nonce(hi: &[u8; 32], contest: u32, xi_b: &[u8; 32]) -> [u8; 32] {
    Hash::new(hi).byte(0x25).u32(contest).bytes(xi_b).finish()
}

/// k_1 ‖ … ‖ k_b for contest data (eqs. 65, 66, 104; Verification 12.3–12.4 and 13.6–13.7): h = H(H_I;
/// 0x26, ind_c, C₀, β), then k_i = HMAC(h, b(i, 4) ‖ "data enc keys" ‖ 0x00 ‖ "contest data" ‖ b(ind_c, 4) ‖
/// b(256·b, 4)) for i = 1…b (spec/66.11: from 1, as eq. 66). Secret until D is published: the caller wipes.
pub fn data_pads<G: Eg2Group>(
    group: &G,
    hi: &[u8; 32],
    contest: u32,
    (c0, beta): (&G::Element, &G::Element),
    blocks: u32,
) -> Vec<u8> {
    let mut key = els(group, Hash::new(hi).byte(0x26).u32(contest), [c0, beta]).finish();
    let mut out = Vec::with_capacity(blocks as usize * 32);
    for i in 1..=blocks {
        let k = Hash::new(&key)
            .u32(i)
            .bytes(b"data enc keys")
            .byte(0x00)
            .bytes(b"contest data")
            .u32(contest)
            .u32(blocks.wrapping_mul(256))
            .finish();
        out.extend_from_slice(&k);
    }
    key.zeroize();
    out
}

/// c = H_q(H_I; 0x27, ind_c, a, C₀, C₁) (eq. 69): the contest data's proof of its nonce.
pub fn data_proof_hash<G: Eg2Group>(
    group: &G,
    hi: &[u8; 32],
    contest: u32,
    a: &G::Element,
    (c0, c1): (&G::Element, &[u8]),
) -> [u8; 32] {
    els(group, Hash::new(hi).byte(0x27).u32(contest), [a, c0])
        .bytes(c1)
        .finish()
}

/// B_C = mode ‖ 32 bytes (§3.4.4).
pub fn chaining_field(mode: u32, hash: &[u8; 32]) -> [u8; 36] {
    let mut out = [0u8; 36];
    out[..4].copy_from_slice(&mode.to_be_bytes());
    out[4..].copy_from_slice(hash);
    out
}

/// Which chain a confirmation code is on (§3.4, §4.1.4): an encryption device's (eqs. 71–78) or a printer's
/// of pre-encrypted ballots (eqs. 116–120). The two differ only in their domain bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Codes {
    Device,
    Printer,
}

impl Codes {
    /// The chain of a ballot (or a device) marked pre-encrypted or not.
    pub fn of(pre_encrypted: bool) -> Self {
        if pre_encrypted {
            Codes::Printer
        } else {
            Codes::Device
        }
    }

    /// (code and chain, device, closing) domain bytes: 0x29, 0x2A, 0x2B or 0x42, 0x43, 0x44.
    fn bytes(self) -> (u8, u8, u8) {
        match self {
            Codes::Device => (0x29, 0x2A, 0x2B),
            Codes::Printer => (0x42, 0x43, 0x44),
        }
    }

    /// H_C = H(H_I; 0x29 or 0x42, χ_1, …, χ_mB, B_C) (eqs. 71, 116).
    pub fn confirmation_code(
        self,
        hi: &[u8; 32],
        contest_hashes: &[[u8; 32]],
        chaining: &[u8; 36],
    ) -> [u8; 32] {
        let mut h = Hash::new(hi).byte(self.bytes().0);
        for x in contest_hashes {
            h = h.bytes(x);
        }
        h.bytes(chaining).finish()
    }

    /// H_DI = H(H_E; 0x2A or 0x43, S_device) (eqs. 72, 119), the string with its 4-byte length.
    pub fn device_hash(self, he: &[u8; 32], device: &str) -> [u8; 32] {
        Hash::new(he)
            .byte(self.bytes().1)
            .file(device.as_bytes())
            .finish()
    }

    /// H_0 = H(H_E; 0x29 or 0x42, B_C,0) (eqs. 74, 117) and the closing H from the closing field (eqs. 77,
    /// 118).
    pub fn chain_hash(self, he: &[u8; 32], field: &[u8; 36]) -> [u8; 32] {
        Hash::new(he).byte(self.bytes().0).bytes(field).finish()
    }

    /// The closing field B_C = 0x00000001 ‖ H(H_E; 0x2B or 0x44, H_ℓ, B_C,0) (eqs. 78, 120; without the
    /// table's "LOCK" bytes for eq. 120, spec/66.2).
    pub fn closing_field(self, he: &[u8; 32], last: &[u8; 32], first: &[u8; 36]) -> [u8; 36] {
        let inner = Hash::new(he)
            .byte(self.bytes().2)
            .bytes(last)
            .bytes(first)
            .finish();
        chaining_field(SIMPLE_CHAINING, &inner)
    }
}

/// The guardians in U as hashed: b(#U, 4) ‖ b(j_1, 4) ‖ …
fn available(mut h: Hash, u: &[u32]) -> Hash {
    h = h.u32(u.len() as u32);
    for j in u {
        h = h.u32(*j);
    }
    h
}

/// d_i = H(H_E; 0x30, ind_c, ind_o, i, A, B, a_i, b_i, M_i, U) (eq. 88): guardian i's commitment to its
/// commitment pair, published before the pair.
#[allow(clippy::too_many_arguments)]
pub fn decryption_commitment<G: Eg2Group>(
    group: &G,
    he: &[u8; 32],
    (contest, option): (u32, u32),
    i: u32,
    c: &Ciphertext<G>,
    (a, b): (&G::Element, &G::Element),
    m: &G::Element,
    u: &[u32],
) -> [u8; 32] {
    let h = Hash::new(he).byte(0x30).u32(contest).u32(option).u32(i);
    available(els(group, ct(group, h, c), [a, b, m]), u).finish()
}

/// c = H_q(H_E; 0x31, ind_c, ind_o, A, B, a, b, M) (eq. 90).
pub fn decryption_hash<G: Eg2Group>(
    group: &G,
    he: &[u8; 32],
    (contest, option): (u32, u32),
    c: &Ciphertext<G>,
    (a, b): (&G::Element, &G::Element),
    m: &G::Element,
) -> [u8; 32] {
    let h = Hash::new(he).byte(0x31).u32(contest).u32(option);
    els(group, ct(group, h, c), [a, b, m]).finish()
}

/// d_i = H(H_I; 0x32, ind_c, i, C₀, C₁, C₂, a_i, b_i, m_i, U) (eq. 99, keyed with H_I as eq. 99 says and
/// not H_E as the §5.5 table does: spec/66.11): guardian i's commitment for a contest data's decryption.
pub fn data_commitment<G: Eg2Group>(
    group: &G,
    hi: &[u8; 32],
    (contest, i): (u32, u32),
    d: DataParts<'_, G>,
    (a, b): (&G::Element, &G::Element),
    m: &G::Element,
    u: &[u32],
) -> [u8; 32] {
    let h = data(group, Hash::new(hi).byte(0x32).u32(contest).u32(i), d);
    available(els(group, h, [a, b, m]), u).finish()
}

/// c = H_q(H_I; 0x33, ind_c, C₀, C₁, C₂, a, b, β) (eq. 101, Verification 12.B).
pub fn data_decryption_hash<G: Eg2Group>(
    group: &G,
    hi: &[u8; 32],
    contest: u32,
    d: DataParts<'_, G>,
    (a, b): (&G::Element, &G::Element),
    beta: &G::Element,
) -> [u8; 32] {
    let h = data(group, Hash::new(hi).byte(0x33).u32(contest), d);
    els(group, h, [a, b, beta]).finish()
}

/// votum's challenge for a guardian's part m_i = C₀^ẑ_i of a ballot nonce (spec/66.6; the specification gives
/// the part no proof): H_q(H_I; 0xF0, "votum nonce part", i, C₀, m_i, a, b), a Chaum–Pedersen proof that
/// log_g(g^ẑ_i) = log_C₀(m_i). 0xF0 is a domain byte the specification does not use.
pub fn nonce_part_hash<G: Eg2Group>(
    group: &G,
    hi: &[u8; 32],
    i: u32,
    (c0, m): (&G::Element, &G::Element),
    (a, b): (&G::Element, &G::Element),
) -> [u8; 32] {
    let h = Hash::new(hi).byte(0xF0).bytes(b"votum nonce part").u32(i);
    els(group, h, [c0, m, a, b]).finish()
}

/// votum's challenge for receiver ℓ's opening of guardian i's share (spec/66.4; the specification's answer to a
/// complaint is the dealer's, §3.2.2): H_q(H_P; 0xF1, "votum share opening", i, ℓ, κ_ℓ, C₀, β, a, b), a
/// Chaum–Pedersen proof that log_g(κ_ℓ) = log_C₀(β). 0xF1 is a domain byte the specification does not use.
pub fn share_opening_hash<G: Eg2Group>(
    group: &G,
    hp: &[u8; 32],
    (i, l): (u32, u32),
    (kappa_l, c0, beta): (&G::Element, &G::Element, &G::Element),
    (a, b): (&G::Element, &G::Element),
) -> [u8; 32] {
    let h = Hash::new(hp)
        .byte(0xF1)
        .bytes(b"votum share opening")
        .u32(i)
        .u32(l);
    els(group, h, [kappa_l, c0, beta, a, b]).finish()
}

/// ψ = H(H_I; 0x40, α_1, β_1, …, α_m, β_m) (eqs. 113, 114): a pre-encryption vector's selection hash.
pub fn selection_hash<'a, G: Eg2Group + 'a>(
    group: &G,
    hi: &[u8; 32],
    vector: impl IntoIterator<Item = &'a Ciphertext<G>>,
) -> [u8; 32] {
    let mut h = Hash::new(hi).byte(0x40);
    for c in vector {
        h = ct(group, h, c);
    }
    h.finish()
}

/// χ_l = H(H_I; 0x41, ind_c, ψ_π(1), …, ψ_π(m+L)) (eq. 115); `sorted` in increasing order.
pub fn pre_contest_hash(hi: &[u8; 32], contest: u32, sorted: &[[u8; 32]]) -> [u8; 32] {
    let mut h = Hash::new(hi).byte(0x41).u32(contest);
    for x in sorted {
        h = h.bytes(x);
    }
    h.finish()
}

/// ξ_i,j,k = H_q(H_I; 0x45, i, j, k, ξ_B) (eq. 121), as the hash (secret: the caller wipes it); i the
/// contest's index, j the vector's position 1…m+L, k the encryption's 1…m (spec/66.10).
pub fn pre_nonce(hi: &[u8; 32], (i, j, k): (u32, u32, u32), xi_b: &[u8; 32]) -> [u8; 32] {
    Hash::new(hi)
        .byte(0x45)
        .u32(i)
        .u32(j)
        .u32(k)
        .bytes(xi_b)
        .finish()
}

/// The hash-trimming function Ω a manifest names (§4.6, spec/66.10): a selection hash's short code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShortCode {
    /// Ω₁: the last byte as two hex digits
    Hex2,
    /// Ω₂: the last two bytes as four hex digits
    Hex4,
    /// Ω₃: the last byte as a letter and a digit, A0…Z5
    LetterDigit,
    /// Ω₄: the last byte as a digit and a letter, 0A…9V
    DigitLetter,
    /// Ω₅: the last byte as a number 0…255
    Number0,
    /// Ω₆: 1…256
    Number1,
    /// Ω₇: 100…355
    Number100,
    /// Ω₈: 101…356
    Number101,
}

impl ShortCode {
    pub const ALL: [ShortCode; 8] = [
        ShortCode::Hex2,
        ShortCode::Hex4,
        ShortCode::LetterDigit,
        ShortCode::DigitLetter,
        ShortCode::Number0,
        ShortCode::Number1,
        ShortCode::Number100,
        ShortCode::Number101,
    ];

    /// The manifest's name of the function.
    pub fn name(self) -> &'static str {
        match self {
            ShortCode::Hex2 => "hex2",
            ShortCode::Hex4 => "hex4",
            ShortCode::LetterDigit => "letter_digit",
            ShortCode::DigitLetter => "digit_letter",
            ShortCode::Number0 => "number0",
            ShortCode::Number1 => "number1",
            ShortCode::Number100 => "number100",
            ShortCode::Number101 => "number101",
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.name() == name)
    }

    /// The function a manifest names in its `short_code` field, if any (an unknown name is an error).
    pub fn of_manifest(manifest: &serde_json::Value) -> Result<Option<Self>, String> {
        match &manifest["short_code"] {
            serde_json::Value::Null => Ok(None),
            serde_json::Value::String(s) => Self::from_name(s)
                .map(Some)
                .ok_or_else(|| format!("the manifest's short_code {s:?} is none of §4.6's eight")),
            _ => Err("the manifest's short_code is not a string".into()),
        }
    }

    /// Ω(ψ).
    pub fn code(self, psi: &[u8; 32]) -> String {
        let last = psi[31];
        let letter = |n: u8| char::from(b'A' + n);
        let digit = |n: u8| char::from(b'0' + n);
        match self {
            ShortCode::Hex2 => format!("{last:02X}"),
            ShortCode::Hex4 => format!("{:02X}{last:02X}", psi[30]),
            ShortCode::LetterDigit => format!("{}{}", letter(last / 10), digit(last % 10)),
            ShortCode::DigitLetter => format!("{}{}", digit(last / 26), letter(last % 26)),
            ShortCode::Number0 => last.to_string(),
            ShortCode::Number1 => (u16::from(last) + 1).to_string(),
            ShortCode::Number100 => (u16::from(last) + 100).to_string(),
            ShortCode::Number101 => (u16::from(last) + 101).to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ShortCode;

    #[test]
    fn short_codes_are_the_specifications_ranges() {
        let at = |b: u8| {
            let mut x = [0u8; 32];
            x[31] = b;
            x[30] = 0xAB;
            x
        };
        assert_eq!(ShortCode::Hex2.code(&at(0x0F)), "0F");
        assert_eq!(ShortCode::Hex4.code(&at(0x0F)), "AB0F");
        assert_eq!(ShortCode::LetterDigit.code(&at(0)), "A0");
        assert_eq!(ShortCode::LetterDigit.code(&at(19)), "B9");
        assert_eq!(ShortCode::LetterDigit.code(&at(255)), "Z5");
        assert_eq!(ShortCode::DigitLetter.code(&at(0)), "0A");
        assert_eq!(ShortCode::DigitLetter.code(&at(27)), "1B");
        assert_eq!(ShortCode::DigitLetter.code(&at(255)), "9V");
        assert_eq!(ShortCode::Number0.code(&at(255)), "255");
        assert_eq!(ShortCode::Number1.code(&at(255)), "256");
        assert_eq!(ShortCode::Number100.code(&at(0)), "100");
        assert_eq!(ShortCode::Number101.code(&at(255)), "356");
        for s in ShortCode::ALL {
            assert_eq!(ShortCode::from_name(s.name()), Some(s));
        }
    }
}
