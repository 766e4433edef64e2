//! The checks of an ElectionGuard 2.x record (spec/65.4, V-EG2-01…19): functions over decoded values, each
//! recording its findings in the ledger (or, for a ballot checked on a rayon thread, returning them).

use p256::elliptic_curve::hash2curve::{ExpandMsg, ExpandMsgXmd, Expander};
use rand_core::OsRng;
use sha2::Sha256;
use votum_elgamal::Ciphertext;
use votum_group::{Group, ModpGroup, P256};
use votum_hash::eg2::{version_key, Hash};

use crate::checks::Check;
use crate::report::Ledger;

/// What a 2.x record's group must offer beyond [`Group`]: how the record's writer encodes its elements
/// and scalars, in JSON and in H, and how a hash becomes a challenge (spec/65.1, 65.6).
pub(crate) trait Eg2Group: Group {
    /// An element's bytes in H.
    fn hash_bytes(&self, x: &Self::Element) -> Vec<u8>;
    /// A hash as a challenge in Z_q.
    fn to_challenge(&self, h: &[u8; 32]) -> Self::Scalar;
    /// An element as the JSON writes it; its subgroup membership may be left to [`Eg2Group::all_members`].
    fn read_element(&self, bytes: &[u8]) -> Result<Self::Element, String>;
    /// Whether every element read is in the order-q subgroup.
    fn all_members(&self, xs: &[&Self::Element]) -> bool;
    /// A scalar as the JSON writes it: at most 32 bytes big-endian, below q.
    fn read_scalar(&self, bytes: &[u8]) -> Result<Self::Scalar, String> {
        if bytes.len() > 32 {
            return Err("longer than 32 bytes".into());
        }
        let mut fixed = vec![0u8; 32 - bytes.len()];
        fixed.extend_from_slice(bytes);
        self.decode_scalar(&fixed).map_err(|_| "not below q".into())
    }
}

impl Eg2Group for ModpGroup {
    fn hash_bytes(&self, x: &Self::Element) -> Vec<u8> {
        self.encode_element(x)
    }

    fn to_challenge(&self, h: &[u8; 32]) -> Self::Scalar {
        self.scalar_from_wide(h)
    }

    fn read_element(&self, bytes: &[u8]) -> Result<Self::Element, String> {
        if bytes.len() > self.element_len() {
            return Err("longer than p".into());
        }
        let x = votum_arith::Integer::from_digits(bytes, votum_arith::Order::Msf);
        self.element_in_range(&x)
            .map(|e| e.into_unchecked_part())
            .map_err(|_| "not in [1, p)".into())
    }

    fn all_members(&self, xs: &[&Self::Element]) -> bool {
        self.members_hold(xs, &mut OsRng)
    }
}

/// egk-ec's domain tag for a hash as a P-256 scalar (RFC 9380 `hash_to_field`, 48 bytes, spec/65.6).
const EGK_P256_DST: &[u8] = b"QUUX-V01-CS02-with-P256_XMD:SHA-256_SSWU_RO_";

impl Eg2Group for P256 {
    /// SEC1 compressed, the identity 33 bytes 0xFF (egk-ec's encoding).
    fn hash_bytes(&self, x: &Self::Element) -> Vec<u8> {
        if *x == self.identity() {
            return vec![0xff; 33];
        }
        self.encode_element(x)
    }

    /// expand_message_xmd(SHA-256) of the hash to 48 bytes, read big-endian, mod n (egk-ec's `hash_to_field`).
    fn to_challenge(&self, h: &[u8; 32]) -> Self::Scalar {
        let mut wide = [0u8; 48];
        let msgs: [&[u8]; 1] = [h];
        let dsts: [&[u8]; 1] = [EGK_P256_DST];
        if let Ok(mut x) = ExpandMsgXmd::<Sha256>::expand_message(&msgs, &dsts, 48) {
            x.fill_bytes(&mut wide);
        }
        self.scalar_from_wide(&wide)
    }

    fn read_element(&self, bytes: &[u8]) -> Result<Self::Element, String> {
        if bytes.len() == 33 && bytes.iter().all(|b| *b == 0xff) {
            return Ok(self.identity());
        }
        if bytes.iter().all(|b| *b == 0) {
            return Err("not a point's encoding".into());
        }
        self.decode_element(bytes)
            .map_err(|_| "not a point of P-256".into())
    }

    /// A point that decodes is on the curve, of prime order: a member.
    fn all_members(&self, _: &[&Self::Element]) -> bool {
        true
    }
}

/// One (challenge, response) pair of a proof.
pub(crate) struct Pair<G: Group> {
    pub c: G::Scalar,
    pub v: G::Scalar,
}

/// The contest data (C₀, C₁, C₂) of a contest (hashed ElGamal, 2.0 §3.3.6).
pub(crate) struct ContestData<G: Group> {
    pub c0: G::Element,
    pub c1: Vec<u8>,
    pub c2: [u8; 32],
}

impl<G: Group> Clone for ContestData<G> {
    fn clone(&self) -> Self {
        Self {
            c0: self.c0.clone(),
            c1: self.c1.clone(),
            c2: self.c2,
        }
    }
}

impl<G: Group> PartialEq for ContestData<G> {
    fn eq(&self, other: &Self) -> bool {
        self.c0 == other.c0 && self.c1 == other.c1 && self.c2 == other.c2
    }
}

/// What every ballot check needs: the group, K (with its table), H_E.
pub(crate) struct Ctx<G: Eg2Group> {
    pub group: G,
    pub k: G::Element,
    pub k_table: G::Table,
    pub he: [u8; 32],
}

impl<G: Eg2Group> Ctx<G> {
    pub fn new(group: G, k: G::Element, he: [u8; 32]) -> Self {
        let k_table = group.table(&k);
        Self {
            group,
            k,
            k_table,
            he,
        }
    }

    fn enc(&self, x: &G::Element) -> Vec<u8> {
        self.group.hash_bytes(x)
    }

    /// A hash as a challenge.
    pub fn challenge(&self, h: [u8; 32]) -> G::Scalar {
        self.group.to_challenge(&h)
    }

    /// `b1^s1 · b2^s2` for public bases and exponents.
    fn pow2(&self, b1: &G::Element, s1: &G::Scalar, b2: &G::Element, s2: &G::Scalar) -> G::Element {
        self.group
            .multi_pow(&[b1.clone(), b2.clone()], &[s1.clone(), s2.clone()])
            .unwrap_or_else(|_| self.group.identity())
    }

    /// The range proof of `ct` over 0…`limit` (2.0 boxes 5 and 6): `Err` saying what fails.
    pub fn check_range(
        &self,
        ct: &Ciphertext<G>,
        proof: &[Pair<G>],
        limit: u32,
    ) -> Result<(), String> {
        let g = &self.group;
        if proof.len() as u64 != u64::from(limit) + 1 {
            return Err(format!(
                "the range proof has {} pairs for the limit {limit} ({} expected)",
                proof.len(),
                u64::from(limit) + 1
            ));
        }
        let mut h = Hash::new(&self.he)
            .byte(0x21)
            .bytes(&self.enc(&self.k))
            .bytes(&self.enc(&ct.pad))
            .bytes(&self.enc(&ct.data));
        let mut sum = g.scalar_from_u64(0);
        for (j, p) in proof.iter().enumerate() {
            // a_j = g^v_j α^c_j, b_j = K^(v_j − j c_j) β^c_j
            let a = g.op(&g.pow_generator(&p.v), &g.pow(&ct.pad, &p.c));
            let w = g.scalar_sub(&p.v, &g.scalar_mul(&g.scalar_from_u64(j as u64), &p.c));
            let b = g.op(&g.pow_table(&self.k_table, &w), &g.pow(&ct.data, &p.c));
            h = h.bytes(&self.enc(&a)).bytes(&self.enc(&b));
            sum = g.scalar_add(&sum, &p.c);
        }
        if self.challenge(h.finish()) != sum {
            return Err("the range proof's challenges do not sum to its hash".into());
        }
        Ok(())
    }

    /// A decryption proof (2.0 boxes 9 and 12): (A, B) decrypts to T with proof (c, v).
    pub fn check_decryption(&self, ct: &Ciphertext<G>, t: &G::Element, proof: &Pair<G>) -> bool {
        let g = &self.group;
        let m = g.div(&ct.data, t);
        let a = g.op(
            &g.pow_generator(&proof.v),
            &g.pow_table(&self.k_table, &proof.c),
        );
        let b = self.pow2(&ct.pad, &proof.v, &m, &proof.c);
        let h = Hash::new(&self.he)
            .byte(0x30)
            .bytes(&self.enc(&self.k))
            .bytes(&self.enc(&ct.pad))
            .bytes(&self.enc(&ct.data))
            .bytes(&self.enc(&a))
            .bytes(&self.enc(&b))
            .bytes(&self.enc(&m))
            .finish();
        self.challenge(h) == proof.c
    }

    /// A contest-data decryption proof (2.0 boxes 11 and 14): β = C₀^s with proof (c, v). C₁ is hashed as
    /// the uppercase hex text of its bytes, as egk-ec does (spec/65.6).
    pub fn check_data_decryption(
        &self,
        data: &ContestData<G>,
        beta: &G::Element,
        proof: &Pair<G>,
    ) -> bool {
        let g = &self.group;
        let a = g.op(
            &g.pow_generator(&proof.v),
            &g.pow_table(&self.k_table, &proof.c),
        );
        let b = self.pow2(&data.c0, &proof.v, beta, &proof.c);
        let c1_hex: String = data.c1.iter().map(|b| format!("{b:02X}")).collect();
        let h = Hash::new(&self.he)
            .byte(0x31)
            .bytes(&self.enc(&self.k))
            .bytes(&self.enc(&data.c0))
            .bytes(c1_hex.as_bytes())
            .bytes(&data.c2)
            .bytes(&self.enc(&a))
            .bytes(&self.enc(&b))
            .bytes(&self.enc(beta))
            .finish();
        self.challenge(h) == proof.c
    }

    /// χ_l = H(H_E; 0x23, l, K, α₁, β₁, …) (2.0 eq. 58).
    pub fn contest_hash(&self, sequence: u32, cts: &[&Ciphertext<G>]) -> [u8; 32] {
        let mut h = Hash::new(&self.he)
            .byte(0x23)
            .u32(sequence)
            .bytes(&self.enc(&self.k));
        for ct in cts {
            h = h.bytes(&self.enc(&ct.pad)).bytes(&self.enc(&ct.data));
        }
        h.finish()
    }

    /// H(B) = H(H_E; 0x24, χ₁, …, χ_mB, B_aux) (2.0 eq. 59).
    pub fn confirmation_code(&self, contest_hashes: &[[u8; 32]], baux: &[u8]) -> [u8; 32] {
        let mut h = Hash::new(&self.he).byte(0x24);
        for x in contest_hashes {
            h = h.bytes(x);
        }
        h.bytes(baux).finish()
    }

    /// `K^t`.
    pub fn k_pow(&self, t: u64) -> G::Element {
        self.group
            .pow_table(&self.k_table, &self.group.scalar_from_u64(t))
    }
}

/// The record's parameters as written (spec/65.3): what V-EG2-01 recomputes.
pub(crate) struct Parameters<'a> {
    pub version: &'a str,
    /// each named constant of the group, and whether it is the standard one
    pub standard: Vec<(&'static str, bool)>,
    /// H_P's inputs after 0x00, each at its fixed width
    pub hashed: Vec<Vec<u8>>,
    pub n: u32,
    pub k: u32,
    pub hp: [u8; 32],
    pub hm: [u8; 32],
    pub hb: [u8; 32],
}

/// V-EG2-01 (2.0 box 1): the version, the standard group, H_P, H_M, H_B.
pub(crate) fn check_parameters(ledger: &mut Ledger, params: &Parameters<'_>, manifest: &[u8]) {
    ledger.examined(Check::Eg2v01, 1);
    if params.version != "v2.0.0" && params.version != "v2.1.0" {
        ledger.fail(
            Check::Eg2v01,
            "constants.json",
            format!(
                "protocol version {:?} is neither v2.0.0 nor v2.1.0",
                params.version
            ),
        );
    }
    for (name, standard) in &params.standard {
        if !standard {
            ledger.fail(
                Check::Eg2v01,
                "constants.json",
                format!("{name} is not the ElectionGuard 2.x standard parameter"),
            );
        }
    }
    let mut h = Hash::new(&version_key(params.version)).byte(0x00);
    for x in &params.hashed {
        h = h.bytes(x);
    }
    if h.finish() != params.hp {
        ledger.fail(
            Check::Eg2v01,
            "election_config.json",
            "H_P does not recompute",
        );
    }
    if u32::try_from(manifest.len()).is_err() {
        ledger.fail(Check::Eg2v01, "manifest.json", "longer than 4 GiB");
    }
    let hm = Hash::new(&params.hp).byte(0x01).file(manifest).finish();
    if hm != params.hm {
        ledger.fail(
            Check::Eg2v01,
            "election_config.json",
            "H_M does not recompute from manifest.json",
        );
    }
    let hb = Hash::new(&params.hp)
        .byte(0x02)
        .bytes(&params.hm)
        .u32(params.n)
        .u32(params.k)
        .finish();
    if hb != params.hb {
        ledger.fail(
            Check::Eg2v01,
            "election_config.json",
            "H_B does not recompute",
        );
    }
    if params.k == 0 || params.k > params.n {
        ledger.fail(
            Check::Eg2v01,
            "election_config.json",
            format!("quorum {} of {} guardians", params.k, params.n),
        );
    }
}

/// One guardian as election_initialized.json gives it.
pub(crate) struct Guardian<G: Group> {
    pub id: String,
    pub x: u32,
    /// (K_ij, c_ij, v_ij) for j = 0…k−1
    pub coefficients: Vec<(G::Element, Pair<G>)>,
}

/// V-EG2-02 (2.0 box 2): every coefficient's Schnorr proof, k per guardian, the x-coordinates 1…n once each.
pub(crate) fn check_guardians<G: Eg2Group>(
    ledger: &mut Ledger,
    group: &G,
    hp: &[u8; 32],
    guardians: &[Guardian<G>],
    n: u32,
    k: u32,
) {
    let enc = |x: &G::Element| group.hash_bytes(x);
    let mut seen = std::collections::BTreeSet::new();
    if guardians.len() as u64 != u64::from(n) {
        ledger.fail(
            Check::Eg2v02,
            "election_initialized.json",
            format!("{} guardians, the config says {n}", guardians.len()),
        );
    }
    for gd in guardians {
        ledger.examined(Check::Eg2v02, 1);
        if gd.x == 0 || gd.x > n || !seen.insert(gd.x) {
            ledger.fail(
                Check::Eg2v02,
                &gd.id,
                format!(
                    "x-coordinate {} is not one of 1…{n} or is taken twice",
                    gd.x
                ),
            );
        }
        if gd.coefficients.len() as u64 != u64::from(k) {
            ledger.fail(
                Check::Eg2v02,
                &gd.id,
                format!("{} coefficients, the quorum is {k}", gd.coefficients.len()),
            );
        }
        for (j, (kij, p)) in gd.coefficients.iter().enumerate() {
            // h = g^v K^c
            let h = group.op(&group.pow_generator(&p.v), &group.pow(kij, &p.c));
            let c = Hash::new(hp)
                .byte(0x10)
                .u32(gd.x)
                .u32(j as u32)
                .bytes(&enc(kij))
                .bytes(&enc(&h))
                .finish();
            if group.to_challenge(&c) != p.c {
                ledger.fail(
                    Check::Eg2v02,
                    &format!("{}: coefficient {j}", gd.id),
                    "the Schnorr proof's challenge does not recompute",
                );
            }
        }
    }
}

/// V-EG2-03 and V-EG2-04 (2.0 boxes 3 and 4): K = Π K_i0, each K_i0 ≠ 1; H_E = H(H_B; 0x12, K).
pub(crate) fn check_joint_key<G: Eg2Group>(
    ledger: &mut Ledger,
    group: &G,
    guardians: &[Guardian<G>],
    k: &G::Element,
    hb: &[u8; 32],
    he: &[u8; 32],
) {
    let mut product = group.identity();
    for gd in guardians {
        ledger.examined(Check::Eg2v03, 1);
        match gd.coefficients.first() {
            Some((ki, _)) if *ki != group.identity() => product = group.op(&product, ki),
            Some(_) => ledger.fail(Check::Eg2v03, &gd.id, "K_i is 1"),
            None => ledger.fail(Check::Eg2v03, &gd.id, "no public key"),
        }
    }
    if product != *k {
        ledger.fail(
            Check::Eg2v03,
            "election_initialized.json",
            "the joint key K is not the product of the guardians' keys",
        );
    }
    ledger.examined(Check::Eg2v04, 1);
    let want = Hash::new(hb)
        .byte(0x12)
        .bytes(&group.hash_bytes(k))
        .finish();
    if want != *he {
        ledger.fail(
            Check::Eg2v04,
            "election_initialized.json",
            "H_E does not recompute from H_B and K",
        );
    }
}
