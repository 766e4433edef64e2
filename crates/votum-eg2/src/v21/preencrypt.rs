//! Pre-encrypted ballots (spec/66.10, §4): the printer (the ballot encrypting tool, §4.2) makes, for every
//! option of every contest and for L null votes, a vector of encryptions derived from the ballot nonce
//! (eq. 121), hashes each (ψ, eqs. 113–114), sorts the hashes into the contest hash (eq. 115) and chains
//! the confirmation codes (eqs. 116–120); the recorder (the ballot recording tool, §4.3) takes the voter's
//! marks and the ballot nonce from the printer's store, checks that nonce against the printed ballot, and
//! records the product of the chosen vectors with its proofs; an uncast ballot is opened from its nonce as
//! the guardians decrypt it (§3.6.7), every vector recomputed against the printed hashes.

use std::collections::BTreeMap;

use rand_core::{CryptoRng, RngCore};
use votum_elgamal::Ciphertext;
use zeroize::Zeroize;

use crate::encrypt::{
    counted, prove_range, style_contests, BallotNonce, PlainBallot, PlainContest,
};
use crate::group::Eg2Group;
use crate::manifest::{Manifest, ManifestContest};
use crate::v21::ballot::{encrypt_nonce, Chain};
use crate::v21::check::pre_vector;
use crate::v21::decrypt::{recover_ballot_nonce, NoncePart};
use crate::v21::hashes::{
    identifier_hash, pre_confirmation_code, pre_contest_hash, pre_nonce, range_hash,
    selection_hash, ShortCode,
};
use crate::v21::record::{
    Ballot, Chosen, Contest, GuardianKey, NonceCiphertext, OpenedPre, OpenedVector, PreContest,
    Selection, State,
};
use crate::Eg2Error;

/// Draws of a ballot before the printer gives up finding short codes unique within each contest.
const DRAWS: usize = 1_000;

/// A printed contest as the paper shows it: its index, each vector's ψ and short code in printed order
/// (the options in the manifest's order, then the L nulls), and χ.
#[derive(Clone)]
pub struct PrintedContest {
    pub index: u32,
    pub psi: Vec<[u8; 32]>,
    pub short_codes: Vec<String>,
    pub hash: [u8; 32],
}

impl PrintedContest {
    /// The ψ in increasing order, as χ hashes them and the record lists them.
    pub fn sorted(&self) -> Vec<[u8; 32]> {
        let mut s = self.psi.clone();
        s.sort_unstable();
        s
    }
}

/// The public part of a printed ballot: what is on the paper and in the record before any mark.
pub struct Printed<G: Eg2Group> {
    pub id: String,
    pub style: String,
    pub device: String,
    pub id_b: [u8; 32],
    pub hi: [u8; 32],
    pub nonce: NonceCiphertext<G>,
    pub contests: Vec<PrintedContest>,
    pub chaining: [u8; 36],
    pub code: [u8; 32],
}

/// The nonces ξ_i,j,1 … ξ_i,j,m of vector `j` of contest `index` (eq. 121); secret.
fn vector_nonces<G: Eg2Group>(
    group: &G,
    hi: &[u8; 32],
    (index, j, m): (u32, usize, usize),
    xi_b: &BallotNonce,
) -> Vec<G::Scalar> {
    (1..=m)
        .map(|k| {
            let mut h = pre_nonce(hi, (index, j as u32, k as u32), &xi_b.0);
            let s = group.to_challenge(&h);
            h.zeroize();
            s
        })
        .collect()
}

fn wipe<G: Eg2Group>(nonces: &mut [G::Scalar]) {
    for n in nonces {
        n.zeroize();
    }
}

/// Every vector of one contest from ξ_B, with its ψ; the nonces are wiped unless `keep`.
struct Regenerated<G: Eg2Group> {
    vectors: Vec<Vec<Ciphertext<G>>>,
    psi: Vec<[u8; 32]>,
    nonces: Vec<Vec<G::Scalar>>,
}

fn regenerate<G: Eg2Group>(
    group: &G,
    k_table: &G::Table,
    (hi, xi_b): (&[u8; 32], &BallotNonce),
    mc: &ManifestContest,
) -> Regenerated<G> {
    let m = mc.sequences.len();
    let width = m + mc.limit as usize;
    let mut out = Regenerated {
        vectors: Vec::with_capacity(width),
        psi: Vec::with_capacity(width),
        nonces: Vec::with_capacity(width),
    };
    for j in 1..=width {
        let nonces = vector_nonces(group, hi, (mc.sequence, j, m), xi_b);
        let vector = pre_vector(group, k_table, j, &nonces);
        out.psi.push(selection_hash(group, hi, &vector));
        out.vectors.push(vector);
        out.nonces.push(nonces);
    }
    out
}

impl<G: Eg2Group> Drop for Regenerated<G> {
    fn drop(&mut self) {
        for n in &mut self.nonces {
            wipe::<G>(n);
        }
    }
}

/// The printer (§4.2): K and K̂ with tables, H_E, the manifest, its Ω and its name.
pub struct Printer<'m, G: Eg2Group> {
    group: G,
    k_table: G::Table,
    k_hat_table: G::Table,
    he: [u8; 32],
    manifest: &'m Manifest,
    short: ShortCode,
    pub name: String,
}

impl<'m, G: Eg2Group> Printer<'m, G> {
    pub fn new(
        group: G,
        (k, k_hat): (&G::Element, &G::Element),
        he: [u8; 32],
        (manifest, short): (&'m Manifest, ShortCode),
        name: &str,
    ) -> Self {
        Self {
            k_table: group.table(k),
            k_hat_table: group.table(k_hat),
            group,
            he,
            manifest,
            short,
            name: name.to_owned(),
        }
    }

    /// Prints one ballot of `style`, unsealed (its chaining field and code are set by [`seal`]): ξ_B is
    /// returned for the printer's store and is on nothing else. A draw whose short codes repeat within a
    /// contest is thrown away (§4.2.2).
    pub fn print<R: RngCore + CryptoRng>(
        &self,
        id: &str,
        style: &str,
        rng: &mut R,
    ) -> Result<(Printed<G>, BallotNonce), Eg2Error> {
        let g = &self.group;
        let plain = PlainBallot {
            id: id.to_owned(),
            style: style.to_owned(),
            contests: BTreeMap::new(),
        };
        let contests = style_contests(self.manifest, &plain)?;
        'draw: for _ in 0..DRAWS {
            let mut id_b = [0u8; 32];
            rng.fill_bytes(&mut id_b);
            let hi = identifier_hash(&self.he, &id_b);
            let mut xb = BallotNonce([0u8; 32]);
            rng.fill_bytes(&mut xb.0);
            let mut printed = Vec::with_capacity(contests.len());
            for (_, mc) in &contests {
                let r = regenerate(g, &self.k_table, (&hi, &xb), mc);
                let short_codes: Vec<String> = r.psi.iter().map(|p| self.short.code(p)).collect();
                let mut seen = std::collections::BTreeSet::new();
                if short_codes.iter().any(|c| !seen.insert(c)) {
                    continue 'draw;
                }
                let mut pc = PrintedContest {
                    index: mc.sequence,
                    psi: r.psi.clone(),
                    short_codes,
                    hash: [0u8; 32],
                };
                pc.hash = pre_contest_hash(&hi, mc.sequence, &pc.sorted());
                printed.push(pc);
            }
            let nonce = encrypt_nonce(g, &self.k_hat_table, &hi, &xb, rng);
            return Ok((
                Printed {
                    id: id.to_owned(),
                    style: style.to_owned(),
                    device: self.name.clone(),
                    id_b,
                    hi,
                    nonce,
                    contests: printed,
                    chaining: [0u8; 36],
                    code: [0u8; 32],
                },
                xb,
            ));
        }
        Err(Eg2Error::Ballot {
            ballot: id.to_owned(),
            reason: format!("no draw in {DRAWS} gave short codes unique within each contest"),
        })
    }
}

/// Sets a printed ballot's chaining field and confirmation code (eq. 116) in the printer's chain order.
pub fn seal<G: Eg2Group>(chain: &mut Chain, printed: &mut Printed<G>) {
    printed.chaining = chain.next_field();
    let hashes: Vec<[u8; 32]> = printed.contests.iter().map(|c| c.hash).collect();
    printed.code = pre_confirmation_code(&printed.hi, &hashes, &printed.chaining);
    chain.push(&printed.id, printed.code);
}

impl<G: Eg2Group> Printed<G> {
    /// The record's line for this ballot uncast (§4.4): its public part, no selections.
    pub fn uncast(&self) -> Ballot<G> {
        self.ballot(
            State::Challenged,
            1,
            self.contests
                .iter()
                .map(|c| Contest {
                    index: c.index,
                    selections: Vec::new(),
                    proof: Vec::new(),
                    hash: c.hash,
                    pre: Some(PreContest {
                        hashes: c.sorted(),
                        chosen: Vec::new(),
                    }),
                })
                .collect(),
        )
    }

    fn ballot(&self, state: State, weight: u32, contests: Vec<Contest<G>>) -> Ballot<G> {
        Ballot {
            id: self.id.clone(),
            style: self.style.clone(),
            device: self.device.clone(),
            id_b: self.id_b,
            hi: self.hi,
            nonce: NonceCiphertext {
                c0: self.nonce.c0.clone(),
                c1: self.nonce.c1,
                proof: crate::Pair {
                    c: self.nonce.proof.c.clone(),
                    v: self.nonce.proof.v.clone(),
                },
            },
            contests,
            chaining: self.chaining,
            code: self.code,
            state,
            weight,
            pre_encrypted: true,
        }
    }
}

/// The recorder (§4.3): K with its table, the manifest and its Ω.
pub struct Recorder<'m, G: Eg2Group> {
    group: G,
    k_table: G::Table,
    manifest: &'m Manifest,
    short: ShortCode,
}

fn refuse(id: &str, reason: String) -> Eg2Error {
    Eg2Error::Ballot {
        ballot: id.to_owned(),
        reason,
    }
}

impl<'m, G: Eg2Group> Recorder<'m, G> {
    pub fn new(group: G, k: &G::Element, (manifest, short): (&'m Manifest, ShortCode)) -> Self {
        Self {
            k_table: group.table(k),
            group,
            manifest,
            short,
        }
    }

    /// Every vector of the printed ballot again from `xi_b`; a ξ_B that does not give the printed ψ, χ
    /// and H_C is refused, naming the store it came from.
    fn regenerate_checked(
        &self,
        printed: &Printed<G>,
        xi_b: &BallotNonce,
    ) -> Result<Vec<(&'m ManifestContest, Regenerated<G>)>, Eg2Error> {
        let plain = PlainBallot {
            id: printed.id.clone(),
            style: printed.style.clone(),
            contests: BTreeMap::new(),
        };
        let contests = style_contests(self.manifest, &plain)?;
        let lie = |what: &str| {
            refuse(
                &printed.id,
                format!(
                    "the printer's store gave a ballot nonce that does not give the printed {what}"
                ),
            )
        };
        if contests.len() != printed.contests.len() {
            return Err(lie("contests"));
        }
        let mut out = Vec::with_capacity(contests.len());
        let mut hashes = Vec::with_capacity(contests.len());
        for ((_, mc), pc) in contests.into_iter().zip(&printed.contests) {
            let r = regenerate(&self.group, &self.k_table, (&printed.hi, xi_b), mc);
            if pc.index != mc.sequence || r.psi != pc.psi {
                return Err(lie("selection hashes"));
            }
            let mut sorted = r.psi.clone();
            sorted.sort_unstable();
            let h = pre_contest_hash(&printed.hi, mc.sequence, &sorted);
            if h != pc.hash {
                return Err(lie("contest hash"));
            }
            hashes.push(h);
            out.push((mc, r));
        }
        if pre_confirmation_code(&printed.hi, &hashes, &printed.chaining) != printed.code {
            return Err(lie("confirmation code"));
        }
        Ok(out)
    }

    /// Records a cast ballot: the voter's marks in `marks` (a contest's votes 0 or 1 per option; more than
    /// L marks is an overvote, recorded as L nulls), ξ_B from the printer's store.
    pub fn record<R: RngCore + CryptoRng>(
        &self,
        printed: &Printed<G>,
        xi_b: &BallotNonce,
        (marks, weight): (&PlainBallot, u32),
        rng: &mut R,
    ) -> Result<Ballot<G>, Eg2Error> {
        if weight == 0 {
            return Err(refuse(&printed.id, "a weight of 0".into()));
        }
        let regenerated = self.regenerate_checked(printed, xi_b)?;
        let none = PlainContest::default();
        let mut contests = Vec::with_capacity(regenerated.len());
        for (((id, _), (mc, r)), pc) in style_contests(self.manifest, marks)?
            .into_iter()
            .zip(&regenerated)
            .zip(&printed.contests)
        {
            let (votes, _) = counted(mc, marks.contests.get(id).unwrap_or(&none))
                .map_err(|e| refuse(&printed.id, format!("contest {id}: {e}")))?;
            if votes.iter().any(|v| *v > 1) {
                return Err(refuse(
                    &printed.id,
                    format!("contest {id}: a pre-encrypted ballot marks an option once at most"),
                ));
            }
            // the marked options' vectors, then nulls up to L (an overvote counted as zeros: all nulls)
            let m = mc.sequences.len();
            let mut chosen: Vec<usize> = (1..=m).filter(|j| votes[j - 1] == 1).collect();
            let marked = chosen.len();
            chosen.extend((m + 1..).take(mc.limit as usize - marked));
            contests.push(self.contest((printed, mc, r, pc), &chosen, rng));
        }
        Ok(printed.ballot(State::Cast, weight, contests))
    }

    /// One contest of a cast ballot: the product of the chosen vectors (positions 1…m+L), its nonces the
    /// sums of theirs, proved as a regular contest (§4.3), with every ψ sorted and the chosen vectors.
    fn contest<R: RngCore + CryptoRng>(
        &self,
        (printed, mc, r, pc): (
            &Printed<G>,
            &ManifestContest,
            &Regenerated<G>,
            &PrintedContest,
        ),
        chosen: &[usize],
        rng: &mut R,
    ) -> Contest<G> {
        let g = &self.group;
        let hi = &printed.hi;
        let l = mc.sequence;
        let m = mc.sequences.len();
        let mut selections = Vec::with_capacity(m);
        let mut sum_xi = g.scalar_from_u64(0);
        let mut sum_ct = Ciphertext::zero(g);
        for (k, o) in mc.sequences.iter().enumerate() {
            let mut xi = g.scalar_from_u64(0);
            let mut ct = Ciphertext::zero(g);
            for j in chosen {
                xi = g.scalar_add(&xi, &r.nonces[j - 1][k]);
                ct = ct.add(g, &r.vectors[j - 1][k]);
            }
            let sigma = u32::from(chosen.contains(&(k + 1)));
            let proof = prove_range(g, &self.k_table, (sigma, &xi), mc.option_limit, rng, |cm| {
                range_hash(g, hi, (l, Some(*o)), &ct, cm.iter().map(|(a, b)| (a, b)))
            });
            sum_xi = g.scalar_add(&sum_xi, &xi);
            xi.zeroize();
            sum_ct = sum_ct.add(g, &ct);
            selections.push(Selection {
                option: *o,
                ct,
                proof,
            });
        }
        let total = chosen.iter().filter(|j| **j <= m).count() as u32;
        let proof = prove_range(g, &self.k_table, (total, &sum_xi), mc.limit, rng, |cm| {
            range_hash(g, hi, (l, None), &sum_ct, cm.iter().map(|(a, b)| (a, b)))
        });
        sum_xi.zeroize();
        Contest {
            index: l,
            selections,
            proof,
            hash: pc.hash,
            pre: Some(PreContest {
                hashes: pc.sorted(),
                chosen: chosen
                    .iter()
                    .map(|j| Chosen {
                        short_code: self.short.code(&r.psi[j - 1]),
                        vector: r.vectors[j - 1].clone(),
                    })
                    .collect(),
            }),
        }
    }

    /// Opens an uncast ballot (§4.3, §3.6.7): ξ_B from the guardians' parts (each checked, a wrong one named),
    /// every vector recomputed against the record's ψ, χ and H_C (a mismatch: the printer lied), and each
    /// vector's label, the short code the paper shows beside it (`sheet`, per contest in printed order) and
    /// its nonces released.
    pub fn open(
        &self,
        (ballot, sheet): (&Ballot<G>, &[PrintedContest]),
        guardians: &[GuardianKey<G>],
        parts: &[(u32, NoncePart<G>)],
    ) -> Result<OpenedPre<G>, Eg2Error> {
        if !ballot.pre_encrypted || ballot.state != State::Challenged {
            return Err(refuse(
                &ballot.id,
                "not an uncast pre-encrypted ballot".into(),
            ));
        }
        let xi_b = recover_ballot_nonce(&self.group, guardians, ballot, parts)?;
        let printed = Printed {
            id: ballot.id.clone(),
            style: ballot.style.clone(),
            device: ballot.device.clone(),
            id_b: ballot.id_b,
            hi: ballot.hi,
            nonce: NonceCiphertext {
                c0: ballot.nonce.c0.clone(),
                c1: ballot.nonce.c1,
                proof: crate::Pair {
                    c: ballot.nonce.proof.c.clone(),
                    v: ballot.nonce.proof.v.clone(),
                },
            },
            contests: ballot
                .contests
                .iter()
                .zip(sheet)
                .map(|(c, s)| PrintedContest {
                    index: c.index,
                    psi: s.psi.clone(),
                    short_codes: s.short_codes.clone(),
                    hash: c.hash,
                })
                .collect(),
            chaining: ballot.chaining,
            code: ballot.code,
        };
        let recorded = ballot
            .contests
            .iter()
            .map(|c| c.pre.as_ref().map(|p| &p.hashes));
        for (pc, hashes) in printed.contests.iter().zip(recorded) {
            if hashes != Some(&pc.sorted()) {
                return Err(refuse(
                    &ballot.id,
                    "the paper's selection hashes are not the record's".into(),
                ));
            }
        }
        let regenerated = self.regenerate_checked(&printed, &xi_b).map_err(|_| {
            refuse(
                &ballot.id,
                "the decrypted ballot nonce does not give the printed ballot: the printer lied"
                    .into(),
            )
        })?;
        let contests = regenerated
            .iter()
            .zip(sheet)
            .map(|((mc, r), s)| {
                let vectors = r
                    .nonces
                    .iter()
                    .enumerate()
                    .map(|(at, nonces)| OpenedVector {
                        label: mc.options.get(at).cloned(),
                        short_code: s.short_codes.get(at).cloned().unwrap_or_default(),
                        nonces: nonces.clone(),
                    })
                    .collect();
                (mc.sequence, vectors)
            })
            .collect();
        Ok(OpenedPre {
            id: ballot.id.clone(),
            contests,
        })
    }
}
