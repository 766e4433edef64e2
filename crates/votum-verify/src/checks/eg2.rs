//! The checks of an ElectionGuard 2.x record (spec/65.4, V-EG2-01…19): functions over decoded values, each
//! recording its findings in the ledger (or, for a ballot checked on a rayon thread, returning them).

use votum_group::{Group, ModElement, ModScalar, ModpGroup};
use votum_hash::eg2::{version_key, Hash};

use crate::checks::Check;
use crate::report::Ledger;

/// An ElGamal ciphertext (α, β): `pad`, `data` in egk-ec's JSON.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Ct {
    pub alpha: ModElement,
    pub beta: ModElement,
}

/// One (challenge, response) pair of a proof.
#[derive(Clone, Debug)]
pub(crate) struct Pair {
    pub c: ModScalar,
    pub v: ModScalar,
}

/// The contest data (C₀, C₁, C₂) of a contest (hashed ElGamal, 2.0 §3.3.6).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ContestData {
    pub c0: ModElement,
    pub c1: Vec<u8>,
    pub c2: [u8; 32],
}

/// What every ballot check needs: the group, K (with its table), H_E.
pub(crate) struct Ctx {
    pub group: ModpGroup,
    pub k: ModElement,
    pub k_table: <ModpGroup as Group>::Table,
    pub he: [u8; 32],
}

impl Ctx {
    pub fn new(group: ModpGroup, k: ModElement, he: [u8; 32]) -> Self {
        let k_table = group.table(&k);
        Self {
            group,
            k,
            k_table,
            he,
        }
    }

    fn enc(&self, x: &ModElement) -> Vec<u8> {
        self.group.encode_element(x)
    }

    /// A hash's 32 bytes read big-endian, reduced mod q.
    pub fn challenge(&self, h: [u8; 32]) -> ModScalar {
        self.group.scalar_from_wide(&h)
    }

    /// `b^s` for a public base and exponent.
    fn pow2(&self, b1: &ModElement, s1: &ModScalar, b2: &ModElement, s2: &ModScalar) -> ModElement {
        self.group
            .multi_pow(&[b1.clone(), b2.clone()], &[s1.clone(), s2.clone()])
            .unwrap_or_else(|_| self.group.identity())
    }

    /// The range proof of `ct` over 0…`limit` (2.0 boxes 5 and 6): `Err` saying what fails.
    pub fn check_range(&self, ct: &Ct, proof: &[Pair], limit: u32) -> Result<(), String> {
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
            .bytes(&self.enc(&ct.alpha))
            .bytes(&self.enc(&ct.beta));
        let mut sum = g.scalar_from_u64(0);
        for (j, p) in proof.iter().enumerate() {
            // a_j = g^v_j α^c_j, b_j = K^(v_j − j c_j) β^c_j
            let a = g.op(&g.pow_generator(&p.v), &g.pow(&ct.alpha, &p.c));
            let w = g.scalar_sub(&p.v, &g.scalar_mul(&g.scalar_from_u64(j as u64), &p.c));
            let b = g.op(&g.pow_table(&self.k_table, &w), &g.pow(&ct.beta, &p.c));
            h = h.bytes(&self.enc(&a)).bytes(&self.enc(&b));
            sum = g.scalar_add(&sum, &p.c);
        }
        if self.challenge(h.finish()) != sum {
            return Err("the range proof's challenges do not sum to its hash".into());
        }
        Ok(())
    }

    /// A decryption proof (2.0 boxes 9 and 12): (A, B) decrypts to T with proof (c, v).
    pub fn check_decryption(&self, ct: &Ct, t: &ModElement, proof: &Pair) -> bool {
        let g = &self.group;
        let m = g.div(&ct.beta, t);
        let a = g.op(
            &g.pow_generator(&proof.v),
            &g.pow_table(&self.k_table, &proof.c),
        );
        let b = self.pow2(&ct.alpha, &proof.v, &m, &proof.c);
        let h = Hash::new(&self.he)
            .byte(0x30)
            .bytes(&self.enc(&self.k))
            .bytes(&self.enc(&ct.alpha))
            .bytes(&self.enc(&ct.beta))
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
        data: &ContestData,
        beta: &ModElement,
        proof: &Pair,
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
    pub fn contest_hash(&self, sequence: u32, cts: &[&Ct]) -> [u8; 32] {
        let mut h = Hash::new(&self.he)
            .byte(0x23)
            .u32(sequence)
            .bytes(&self.enc(&self.k));
        for ct in cts {
            h = h.bytes(&self.enc(&ct.alpha)).bytes(&self.enc(&ct.beta));
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
    pub fn k_pow(&self, t: u64) -> ModElement {
        self.group
            .pow_table(&self.k_table, &self.group.scalar_from_u64(t))
    }
}

/// The record's parameters as written (spec/65.3): what V-EG2-01 recomputes.
pub(crate) struct Parameters<'a> {
    pub version: &'a str,
    pub p: &'a votum_arith::Integer,
    pub q: &'a votum_arith::Integer,
    pub r: &'a votum_arith::Integer,
    pub g: &'a votum_arith::Integer,
    pub n: u32,
    pub k: u32,
    pub hp: [u8; 32],
    pub hm: [u8; 32],
    pub hb: [u8; 32],
}

/// V-EG2-01 (2.0 box 1): the version, the standard group, H_P, H_M, H_B. Returns whether all hold.
pub(crate) fn check_parameters(
    ledger: &mut Ledger,
    group: &ModpGroup,
    params: &Parameters<'_>,
    manifest: &[u8],
) -> bool {
    let before = failures(ledger, Check::Eg2v01);
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
    let standard = [
        ("p", params.p, group.p()),
        ("q", params.q, group.order()),
        ("r", params.r, group.cofactor()),
        ("g", params.g, group.generator().value()),
    ];
    for (name, got, want) in standard {
        if got != want {
            ledger.fail(
                Check::Eg2v01,
                "constants.json",
                format!("{name} is not the ElectionGuard 2.x standard parameter"),
            );
        }
    }
    let hp = Hash::new(&version_key(params.version))
        .byte(0x00)
        .bytes(&fixed(params.p, 512))
        .bytes(&fixed(params.q, 32))
        .bytes(&fixed(params.g, 512))
        .finish();
    if hp != params.hp {
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
    failures(ledger, Check::Eg2v01) == before
}

/// The count of findings of `check` so far (a check function's own failures are the difference).
fn failures(ledger: &mut Ledger, check: Check) -> usize {
    ledger.findings(check)
}

/// `x` as `len` bytes big-endian (zero-padded; a longer value keeps its low bytes, which callers have
/// bounded).
pub(crate) fn fixed(x: &votum_arith::Integer, len: usize) -> Vec<u8> {
    let digits = x.to_digits::<u8>(votum_arith::Order::Msf);
    let mut out = vec![0u8; len.saturating_sub(digits.len())];
    out.extend_from_slice(&digits[digits.len().saturating_sub(len)..]);
    out
}

/// One guardian as election_initialized.json gives it.
pub(crate) struct Guardian {
    pub id: String,
    pub x: u32,
    /// (K_ij, c_ij, v_ij) for j = 0…k−1
    pub coefficients: Vec<(ModElement, Pair)>,
}

/// V-EG2-02 (2.0 box 2): every coefficient's Schnorr proof, k per guardian, the x-coordinates 1…n once each.
pub(crate) fn check_guardians(
    ledger: &mut Ledger,
    group: &ModpGroup,
    hp: &[u8; 32],
    guardians: &[Guardian],
    n: u32,
    k: u32,
) {
    let enc = |x: &ModElement| group.encode_element(x);
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
            if group.scalar_from_wide(&c) != p.c {
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
pub(crate) fn check_joint_key(
    ledger: &mut Ledger,
    group: &ModpGroup,
    guardians: &[Guardian],
    k: &ModElement,
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
        .bytes(&group.encode_element(k))
        .finish();
    if want != *he {
        ledger.fail(
            Check::Eg2v04,
            "election_initialized.json",
            "H_E does not recompute from H_B and K",
        );
    }
}
