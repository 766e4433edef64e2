//! The checks of an ElectionGuard 2.x record (spec/65.4, V-EG2-01…19): functions over decoded values, each
//! recording its findings in the ledger (or, for a ballot checked on a rayon thread, returning them).

use votum_eg2::hashes::{self, parameter_hash};
use votum_elgamal::Ciphertext;
use votum_group::Group;

pub(crate) use votum_eg2::{ContestData, Eg2Group, Pair};

use crate::checks::Check;
use crate::report::Ledger;

/// What every ballot check needs: the group, K (with its table), H_E.
pub(crate) struct Ctx<G: Eg2Group> {
    pub group: G,
    pub k: G::Element,
    /// K's encoding, made once (each P-256 encoding costs a field inversion)
    pub k_bytes: Vec<u8>,
    pub k_table: G::Table,
    pub he: [u8; 32],
}

impl<G: Eg2Group> Ctx<G> {
    pub fn new(group: G, k: G::Element, he: [u8; 32]) -> Self {
        let k_table = group.table(&k);
        let k_bytes = group.hash_bytes(&k);
        Self {
            group,
            k,
            k_bytes,
            k_table,
            he,
        }
    }

    /// A hash as a challenge.
    pub fn challenge(&self, h: [u8; 32]) -> G::Scalar {
        self.group.to_challenge(&h)
    }

    /// `b1^s1 · b2^s2` for public bases and exponents.
    pub(crate) fn pow2(
        &self,
        b1: &G::Element,
        s1: &G::Scalar,
        b2: &G::Element,
        s2: &G::Scalar,
    ) -> G::Element {
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
        self.check_range_with(ct, proof, limit, |commitments| {
            hashes::range_hash(
                &self.group,
                &self.he,
                &self.k_bytes,
                ct,
                commitments.iter().map(|(a, b)| (a, b)),
            )
        })
    }

    /// A range proof of `ct` over 0…`limit` whose challenge is `hash` of its commitments (a_j, b_j): 2.0's
    /// (2.0 eq. 46) or 2.1's (2.1 eqs. 59, 62).
    pub fn check_range_with(
        &self,
        ct: &Ciphertext<G>,
        proof: &[Pair<G>],
        limit: u32,
        hash: impl FnOnce(&[(G::Element, G::Element)]) -> [u8; 32],
    ) -> Result<(), String> {
        let g = &self.group;
        if proof.len() as u64 != u64::from(limit) + 1 {
            return Err(format!(
                "the range proof has {} pairs for the limit {limit} ({} expected)",
                proof.len(),
                u64::from(limit) + 1
            ));
        }
        let mut sum = g.scalar_from_u64(0);
        // a_j = g^v_j α^c_j, b_j = K^(v_j − j c_j) β^c_j, all made in one batch
        let ws: Vec<G::Scalar> = proof
            .iter()
            .enumerate()
            .map(|(j, p)| g.scalar_sub(&p.v, &g.scalar_mul(&g.scalar_from_u64(j as u64), &p.c)))
            .collect();
        let mut jobs = Vec::with_capacity(2 * proof.len());
        for (p, w) in proof.iter().zip(&ws) {
            jobs.push((None, &p.v, &ct.pad, &p.c));
            jobs.push((Some(&self.k_table), w, &ct.data, &p.c));
            sum = g.scalar_add(&sum, &p.c);
        }
        let mut powers = g.pow2_many(&jobs).into_iter();
        let commitments: Vec<(G::Element, G::Element)> =
            std::iter::from_fn(|| Some((powers.next()?, powers.next()?))).collect();
        if self.challenge(hash(&commitments)) != sum {
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
        let h = hashes::decryption_hash(g, &self.he, &self.k, ct, (&a, &b), &m);
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
        let h = hashes::data_decryption_hash(g, &self.he, &self.k, data, (&a, &b), beta);
        self.challenge(h) == proof.c
    }

    /// χ_l = H(H_E; 0x23, l, K, α₁, β₁, …) (2.0 eq. 58).
    pub fn contest_hash(&self, sequence: u32, cts: &[&Ciphertext<G>]) -> [u8; 32] {
        hashes::contest_hash(&self.group, &self.he, sequence, &self.k_bytes, cts)
    }

    /// H(B) = H(H_E; 0x24, χ₁, …, χ_mB, B_aux) (2.0 eq. 59).
    pub fn confirmation_code(&self, contest_hashes: &[[u8; 32]], baux: &[u8]) -> [u8; 32] {
        hashes::confirmation_code(&self.he, contest_hashes, baux)
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
    if parameter_hash(params.version, &params.hashed) != params.hp {
        ledger.fail(
            Check::Eg2v01,
            "election_config.json",
            "H_P does not recompute",
        );
    }
    if u32::try_from(manifest.len()).is_err() {
        ledger.fail(Check::Eg2v01, "manifest.json", "longer than 4 GiB");
    }
    let hm = hashes::manifest_hash(&params.hp, manifest);
    if hm != params.hm {
        ledger.fail(
            Check::Eg2v01,
            "election_config.json",
            "H_M does not recompute from manifest.json",
        );
    }
    let hb = hashes::election_base_hash(&params.hp, &params.hm, params.n, params.k);
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
            let c = hashes::schnorr_hash(group, hp, gd.x, j as u32, kij, &h);
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
    let want = hashes::extended_base_hash(group, hb, k);
    if want != *he {
        ledger.fail(
            Check::Eg2v04,
            "election_initialized.json",
            "H_E does not recompute from H_B and K",
        );
    }
}
