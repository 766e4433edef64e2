//! The 2.1 encryption device (spec/66.5, §3.3–3.4): a ballot's selection encryption identifier id_B and
//! its hash H_I, every nonce derived from H_I and the secret ballot nonce ξ_B (eq. 33), ξ_B itself
//! encrypted under K̂ in signed ElGamal (eqs. 34–38), range proofs 0…R per option and 0…L per contest
//! with 2.1's challenges (eqs. 59, 62), contest data where the manifest asks for it (eqs. 63–69, spec/66.11),
//! contest hashes (eq. 70), the device information hash (eq. 72) and
//! the confirmation code under no chaining or simple chaining (eqs. 71–78).

use rand_core::{CryptoRng, RngCore};
use votum_elgamal::Ciphertext;
use zeroize::Zeroize;

use crate::contest_data::Plain;
use crate::encrypt::{
    counted, encrypt_contest, prove_range, style_contests, BallotNonce, PlainBallot, PlainContest,
};
use crate::group::{fixed_powers, Eg2Group};
use crate::manifest::{Manifest, ManifestContest};
use crate::v21::data;
use crate::v21::hashes::{
    ballot_nonce_key, ballot_nonce_pad, ballot_nonce_proof_hash, chaining_field, contest_hash,
    identifier_hash, range_hash, selection_nonce, Codes, NO_CHAINING, SIMPLE_CHAINING,
};
use crate::v21::record::{
    Ballot, Contest, DataCiphertext, Device as DeviceRecord, NonceCiphertext, Selection, State,
};
use crate::{Eg2Error, Pair};

/// The manifest a device encrypts for: borrowed from the coordinator, or its own (a device of its own
/// process, spec/80.11, which makes its tables once and keeps them).
enum Held<'m> {
    Borrowed(&'m Manifest),
    Owned(Box<Manifest>),
}

/// An encryption device: K and K̂ (with tables), H_E, the manifest and its name S_device.
pub struct Device<'m, G: Eg2Group> {
    pub group: G,
    pub k: G::Element,
    k_table: G::Table,
    k_hat_table: G::Table,
    pub he: [u8; 32],
    manifest: Held<'m>,
    pub name: String,
}

/// ξ_i,j (eq. 33) as a scalar; the hash is wiped.
pub fn selection_nonce_scalar<G: Eg2Group>(
    group: &G,
    hi: &[u8; 32],
    (contest, option): (u32, u32),
    xi_b: &[u8; 32],
) -> G::Scalar {
    let mut h = selection_nonce(hi, contest, option, xi_b);
    let s = group.to_challenge(&h);
    h.zeroize();
    s
}

/// ξ_B encrypted under K̂ (its table) with its proof of the encryption nonce (eqs. 34–38); shared by the
/// device and the printer of pre-encrypted ballots.
pub(crate) fn encrypt_nonce<G: Eg2Group, R: RngCore + CryptoRng>(
    g: &G,
    k_hat_table: &G::Table,
    hi: &[u8; 32],
    xb: &BallotNonce,
    rng: &mut R,
) -> NonceCiphertext<G> {
    let mut xi_hat = g.random_scalar(rng);
    let mut u = g.random_scalar(rng);
    let [c0, beta, a] = fixed_powers(
        g,
        [(None, &xi_hat), (Some(k_hat_table), &xi_hat), (None, &u)],
    );
    let mut key = ballot_nonce_key(g, hi, &c0, &beta);
    let mut pad = ballot_nonce_pad(&key);
    key.zeroize();
    let mut c1 = [0u8; 32];
    for (n, out) in c1.iter_mut().enumerate() {
        *out = xb.0[n] ^ pad[n];
    }
    pad.zeroize();
    let c = g.to_challenge(&ballot_nonce_proof_hash(g, hi, &a, &c0, &c1));
    let v = g.scalar_sub(&u, &g.scalar_mul(&c, &xi_hat));
    u.zeroize();
    xi_hat.zeroize();
    NonceCiphertext {
        c0,
        c1,
        proof: Pair { c, v },
    }
}

/// A contest's selections proved (§3.3.5–3.3.6): each option's (σ, ξ, (α, β)), in the manifest's order, with
/// its range proof 0…R (eq. 59), and the selection-limit proof 0…L of their product (eq. 62); every nonce is
/// wiped. Shared by the device and the recorder of pre-encrypted ballots, whose nonces are sums.
pub(crate) fn prove_selections<G: Eg2Group, R: RngCore + CryptoRng>(
    g: &G,
    k_table: &G::Table,
    hi: &[u8; 32],
    mc: &ManifestContest,
    encrypted: impl IntoIterator<Item = (u32, G::Scalar, Ciphertext<G>)>,
    rng: &mut R,
) -> (Vec<Selection<G>>, Vec<Pair<G>>) {
    let l = mc.sequence;
    let mut selections = Vec::with_capacity(mc.sequences.len());
    let mut total = 0u32;
    let mut sum_xi = g.scalar_from_u64(0);
    let mut sum_ct = Ciphertext::zero(g);
    for (o, (sigma, mut xi, ct)) in mc.sequences.iter().zip(encrypted) {
        let proof = prove_range(g, k_table, (sigma, &xi), mc.option_limit, rng, |cm| {
            range_hash(g, hi, (l, Some(*o)), &ct, cm.iter().map(|(a, b)| (a, b)))
        });
        total += sigma;
        sum_xi = g.scalar_add(&sum_xi, &xi);
        xi.zeroize();
        sum_ct = sum_ct.add(g, &ct);
        selections.push(Selection {
            option: *o,
            ct,
            proof,
        });
    }
    let proof = prove_range(g, k_table, (total, &sum_xi), mc.limit, rng, |cm| {
        range_hash(g, hi, (l, None), &sum_ct, cm.iter().map(|(a, b)| (a, b)))
    });
    sum_xi.zeroize();
    (selections, proof)
}

impl<G: Eg2Group> Device<'static, G> {
    /// A device holding its own manifest (its tables made once, for every ballot it encrypts).
    pub fn owned(
        group: G,
        keys: (G::Element, &G::Element),
        he: [u8; 32],
        manifest: Manifest,
        name: &str,
    ) -> Self {
        Self::holding(group, keys, he, Held::Owned(Box::new(manifest)), name)
    }
}

impl<'m, G: Eg2Group> Device<'m, G> {
    pub fn new(
        group: G,
        keys: (G::Element, &G::Element),
        he: [u8; 32],
        manifest: &'m Manifest,
        name: &str,
    ) -> Self {
        Self::holding(group, keys, he, Held::Borrowed(manifest), name)
    }

    fn holding(
        group: G,
        (k, k_hat): (G::Element, &G::Element),
        he: [u8; 32],
        manifest: Held<'m>,
        name: &str,
    ) -> Self {
        let k_table = group.table(&k);
        let k_hat_table = group.table(k_hat);
        Self {
            group,
            k,
            k_table,
            k_hat_table,
            he,
            manifest,
            name: name.to_owned(),
        }
    }

    fn manifest(&self) -> &Manifest {
        match &self.manifest {
            Held::Borrowed(m) => m,
            Held::Owned(m) => m,
        }
    }

    /// One contest: its selections proved and, where the manifest asks for it, its data D (spec/66.11).
    fn contest<R: RngCore + CryptoRng>(
        &self,
        (hi, xb): (&[u8; 32], &BallotNonce),
        mc: &ManifestContest,
        (votes, plain): (&[u32], &Plain),
        rng: &mut R,
    ) -> Result<Contest<G>, String> {
        let g = &self.group;
        let l = mc.sequence;
        let nonces: Vec<(u32, G::Scalar)> = mc
            .sequences
            .iter()
            .zip(votes)
            .map(|(o, sigma)| (*sigma, selection_nonce_scalar(g, hi, (l, *o), &xb.0)))
            .collect();
        let proved = encrypt_contest(
            g,
            &self.k_table,
            nonces,
            (mc.option_limit, mc.limit),
            rng,
            |i, ct, cm| {
                let option = i.and_then(|i| mc.sequences.get(i)).copied();
                range_hash(g, hi, (l, option), ct, cm.iter().map(|(a, b)| (a, b)))
            },
        );
        let proof = proved.sum_proof;
        let selections: Vec<Selection<G>> = proved
            .selections
            .into_iter()
            .zip(&mc.sequences)
            .map(|((ct, proof), o)| Selection {
                option: *o,
                ct,
                proof,
            })
            .collect();
        let data = match mc.data_blocks {
            Some(blocks) => {
                let mut d = data::encode(plain, blocks)?;
                let ct = data::encrypt(g, &self.k_hat_table, (hi, &xb.0), l, &d, rng);
                d.zeroize();
                Some(ct)
            }
            None => None,
        };
        let cts: Vec<&Ciphertext<G>> = selections.iter().map(|s| &s.ct).collect();
        Ok(Contest {
            index: l,
            hash: contest_hash(g, hi, l, &cts, data.as_ref().map(DataCiphertext::parts)),
            selections,
            proof,
            pre: None,
            data,
        })
    }

    /// Encrypts one ballot: every contest of its style in index order (a contest left out is a null vote;
    /// an overvoted one encrypts zeros, §3.3.5). Its chaining field and code are set by [`Chain::seal`].
    pub fn encrypt<R: RngCore + CryptoRng>(
        &self,
        ballot: &PlainBallot,
        (state, weight): (State, u32),
        rng: &mut R,
    ) -> Result<Ballot<G>, Eg2Error> {
        let bad = |reason: String| Eg2Error::Ballot {
            ballot: ballot.id.clone(),
            reason,
        };
        let contests = style_contests(self.manifest(), ballot)?;
        if weight == 0 {
            return Err(bad("a weight of 0".into()));
        }
        let none = PlainContest::default();
        let mut id_b = [0u8; 32];
        rng.fill_bytes(&mut id_b);
        let hi = identifier_hash(&self.he, &id_b);
        let mut xb = BallotNonce([0u8; 32]);
        rng.fill_bytes(&mut xb.0);
        let mut encrypted = Vec::with_capacity(contests.len());
        for (id, mc) in &contests {
            let (votes, plain) = counted(mc, ballot.contests.get(*id).unwrap_or(&none))
                .map_err(|e| bad(format!("contest {id}: {e}")))?;
            encrypted.push(
                self.contest((&hi, &xb), mc, (&votes, &plain), rng)
                    .map_err(|e| bad(format!("contest {id}: {e}")))?,
            );
        }
        let nonce = encrypt_nonce(&self.group, &self.k_hat_table, &hi, &xb, rng);
        Ok(Ballot {
            id: ballot.id.clone(),
            style: ballot.style.clone(),
            device: self.name.clone(),
            id_b,
            hi,
            nonce,
            contests: encrypted,
            chaining: [0u8; 36],
            code: [0u8; 32],
            state,
            weight,
            pre_encrypted: false,
        })
    }
}

/// A device's confirmation-code chain (§3.4.4, or a printer's, §4.1.4): it sets each ballot's B_C and H_C in
/// the order the device made them, and closes the chain at the end.
pub struct Chain {
    codes: Codes,
    he: [u8; 32],
    name: String,
    mode: u32,
    hdi: [u8; 32],
    first: [u8; 36],
    last: [u8; 32],
    ballots: Vec<String>,
}

impl Chain {
    /// An encryption device's chain; `simple`: simple chaining (mode 1), otherwise no chaining (mode 0).
    pub fn new(he: &[u8; 32], name: &str, simple: bool) -> Self {
        Self::with(Codes::Device, he, name, simple)
    }

    /// A device's chain (an encryption device's, [`Codes::Device`], or a printer's, [`Codes::Printer`]) as it
    /// stands after ballots sealed elsewhere: `ballots` in order, the last of them with code `last` (None: no
    /// ballot yet). The service seals nothing; it closes a device's chain from the ballots it accepted, and
    /// a device seals its next ballot after the last one the service took (spec/80.11).
    pub fn resumed(
        (codes, he): (Codes, &[u8; 32]),
        name: &str,
        simple: bool,
        last: Option<[u8; 32]>,
        ballots: Vec<String>,
    ) -> Self {
        let mut chain = Self::with(codes, he, name, simple);
        if let Some(code) = last {
            chain.last = code;
        }
        chain.ballots = ballots;
        chain
    }

    /// The chain of a printer of pre-encrypted ballots (§4.1.4: H_DI with 0x43, H_0 and the closing hash
    /// with 0x42 and 0x44, codes by eq. 116).
    pub fn printer(he: &[u8; 32], name: &str, simple: bool) -> Self {
        Self::with(Codes::Printer, he, name, simple)
    }

    fn with(codes: Codes, he: &[u8; 32], name: &str, simple: bool) -> Self {
        let hdi = codes.device_hash(he, name);
        let mode = if simple { SIMPLE_CHAINING } else { NO_CHAINING };
        let first = chaining_field(mode, &hdi);
        Self {
            codes,
            he: *he,
            name: name.to_owned(),
            mode,
            hdi,
            first,
            last: codes.chain_hash(he, &first),
            ballots: Vec::new(),
        }
    }

    /// Sets the ballot's chaining field and confirmation code (eq. 71, or 116 on a printer).
    pub fn seal<G: Eg2Group>(&mut self, ballot: &mut Ballot<G>) {
        ballot.chaining = if self.mode == SIMPLE_CHAINING {
            chaining_field(SIMPLE_CHAINING, &self.last)
        } else {
            self.first
        };
        let hashes: Vec<[u8; 32]> = ballot.contests.iter().map(|c| c.hash).collect();
        ballot.code = self
            .codes
            .confirmation_code(&ballot.hi, &hashes, &ballot.chaining);
        self.last = ballot.code;
        self.ballots.push(ballot.id.clone());
    }

    /// The device as the record holds it; with simple chaining, H_0 and the closing hash (eqs. 74–78, or
    /// 117–120 on a printer).
    pub fn close(self) -> DeviceRecord {
        let (first, close) = if self.mode == SIMPLE_CHAINING {
            let field = self.codes.closing_field(&self.he, &self.last, &self.first);
            (
                Some(self.codes.chain_hash(&self.he, &self.first)),
                Some(self.codes.chain_hash(&self.he, &field)),
            )
        } else {
            (None, None)
        };
        DeviceRecord {
            name: self.name,
            pre_encrypted: self.codes == Codes::Printer,
            hdi: self.hdi,
            mode: self.mode,
            ballots: self.ballots,
            first,
            close,
        }
    }
}
