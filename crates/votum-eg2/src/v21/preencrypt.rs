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

use crate::encrypt::{counted, style_contests, BallotNonce, PlainBallot, PlainContest};
use crate::group::Eg2Group;
use crate::manifest::{Manifest, ManifestContest};
use crate::v21::ballot::{encrypt_nonce, prove_selections};
use crate::v21::check::pre_vector;
use crate::v21::decrypt::{recover_ballot_nonce, NoncePart};
use crate::v21::hashes::{
    identifier_hash, pre_contest_hash, pre_nonce, selection_hash, Codes, ShortCode,
};
use crate::v21::record::{
    Ballot, Chosen, Contest, GuardianKey, OpenedPre, OpenedVector, PreContest, State,
};
use crate::Eg2Error;

/// Draws of a ballot before the printer gives up finding short codes unique within each contest.
const DRAWS: usize = 1_000;

/// One contest of a printed ballot's sheet: each vector's ψ and the short code printed beside it, in printed
/// order (the options in the manifest's order, then the L nulls).
#[derive(Clone)]
pub struct PrintedContest {
    pub psi: Vec<[u8; 32]>,
    pub short_codes: Vec<String>,
}

impl PrintedContest {
    /// The ψ in increasing order, as χ hashes them and the record lists them.
    pub fn sorted(&self) -> Vec<[u8; 32]> {
        let mut s = self.psi.clone();
        s.sort_unstable();
        s
    }
}

/// A printed ballot: the record's line for it before any mark (its public part, uncast: marked challenged
/// and with no selections, §4.4; sealed by the printer's [`Chain`]) and its sheet, per contest in the
/// ballot's order.
pub struct Printed<G: Eg2Group> {
    pub ballot: Ballot<G>,
    pub sheet: Vec<PrintedContest>,
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

/// Every vector of one contest from ξ_B, with its ψ and nonces (wiped when dropped).
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
        for n in self.nonces.iter_mut().flatten() {
            n.zeroize();
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

    /// Prints one ballot of `style`, unsealed (its chaining field and code are set by the printer's
    /// [`crate::v21::ballot::Chain::seal`]): ξ_B is returned for the printer's store and is on nothing else. A draw whose short
    /// codes repeat within a contest is thrown away (§4.2.2).
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
            let mut sheet = Vec::with_capacity(contests.len());
            let mut public = Vec::with_capacity(contests.len());
            for (_, mc) in &contests {
                let r = regenerate(g, &self.k_table, (&hi, &xb), mc);
                let short_codes: Vec<String> = r.psi.iter().map(|p| self.short.code(p)).collect();
                let mut seen = std::collections::BTreeSet::new();
                if short_codes.iter().any(|c| !seen.insert(c)) {
                    continue 'draw;
                }
                let printed = PrintedContest {
                    psi: r.psi.clone(),
                    short_codes,
                };
                let hashes = printed.sorted();
                public.push(Contest {
                    index: mc.sequence,
                    selections: Vec::new(),
                    proof: Vec::new(),
                    hash: pre_contest_hash(&hi, mc.sequence, &hashes),
                    data: None,
                    pre: Some(PreContest {
                        hashes,
                        chosen: Vec::new(),
                    }),
                });
                sheet.push(printed);
            }
            let ballot = Ballot {
                id: id.to_owned(),
                style: style.to_owned(),
                device: self.name.clone(),
                id_b,
                hi,
                nonce: encrypt_nonce(g, &self.k_hat_table, &hi, &xb, rng),
                contests: public,
                chaining: [0u8; 36],
                code: [0u8; 32],
                state: State::Challenged,
                weight: 1,
                pre_encrypted: true,
            };
            return Ok((Printed { ballot, sheet }, xb));
        }
        Err(Eg2Error::Ballot {
            ballot: id.to_owned(),
            reason: format!("no draw in {DRAWS} gave short codes unique within each contest"),
        })
    }
}

/// An uncast pre-encrypted ballot's ξ_B from the guardians' parts (each checked, a wrong one named).
fn uncast_nonce<G: Eg2Group>(
    group: &G,
    ballot: &Ballot<G>,
    guardians: &[GuardianKey<G>],
    parts: &[(u32, NoncePart<G>)],
) -> Result<BallotNonce, Eg2Error> {
    if !ballot.pre_encrypted || ballot.state != State::Challenged {
        return Err(refuse(
            &ballot.id,
            "not an uncast pre-encrypted ballot".into(),
        ));
    }
    recover_ballot_nonce(group, guardians, ballot, parts)
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

    /// Every vector of the printed ballot (its record line and sheet) again from `xi_b`; a ξ_B that does
    /// not give the printed ψ, χ and H_C is refused, naming the store it came from.
    fn regenerate_checked(
        &self,
        (ballot, sheet): (&Ballot<G>, &[PrintedContest]),
        xi_b: &BallotNonce,
    ) -> Result<Vec<(&'m ManifestContest, Regenerated<G>)>, Eg2Error> {
        let plain = PlainBallot {
            id: ballot.id.clone(),
            style: ballot.style.clone(),
            contests: BTreeMap::new(),
        };
        let contests = style_contests(self.manifest, &plain)?;
        let lie = |what: &str| {
            refuse(
                &ballot.id,
                format!(
                    "the printer's store gave a ballot nonce that does not give the printed {what}"
                ),
            )
        };
        if contests.len() != ballot.contests.len() || contests.len() != sheet.len() {
            return Err(lie("contests"));
        }
        let mut out = Vec::with_capacity(contests.len());
        let mut hashes = Vec::with_capacity(contests.len());
        for (((_, mc), c), s) in contests.into_iter().zip(&ballot.contests).zip(sheet) {
            let r = regenerate(&self.group, &self.k_table, (&ballot.hi, xi_b), mc);
            if c.index != mc.sequence || r.psi != s.psi {
                return Err(lie("selection hashes"));
            }
            let mut sorted = r.psi.clone();
            sorted.sort_unstable();
            let h = pre_contest_hash(&ballot.hi, mc.sequence, &sorted);
            if h != c.hash {
                return Err(lie("contest hash"));
            }
            hashes.push(h);
            out.push((mc, r));
        }
        if Codes::Printer.confirmation_code(&ballot.hi, &hashes, &ballot.chaining) != ballot.code {
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
        let paper = &printed.ballot;
        if weight == 0 {
            return Err(refuse(&paper.id, "a weight of 0".into()));
        }
        let regenerated = self.regenerate_checked((paper, &printed.sheet), xi_b)?;
        let none = PlainContest::default();
        let mut contests = Vec::with_capacity(regenerated.len());
        for (((id, _), (mc, r)), c) in style_contests(self.manifest, marks)?
            .into_iter()
            .zip(&regenerated)
            .zip(&paper.contests)
        {
            let (votes, _) = counted(mc, marks.contests.get(id).unwrap_or(&none))
                .map_err(|e| refuse(&paper.id, format!("contest {id}: {e}")))?;
            if votes.iter().any(|v| *v > 1) {
                return Err(refuse(
                    &paper.id,
                    format!("contest {id}: a pre-encrypted ballot marks an option once at most"),
                ));
            }
            // the marked options' vectors, then nulls up to L (an overvote counted as zeros: all nulls)
            let m = mc.sequences.len();
            let mut chosen: Vec<usize> = (1..=m).filter(|j| votes[j - 1] == 1).collect();
            let marked = chosen.len();
            chosen.extend((m + 1..).take(mc.limit as usize - marked));
            contests.push(self.contest((&paper.hi, mc, r, c), &chosen, rng));
        }
        Ok(Ballot {
            id: paper.id.clone(),
            style: paper.style.clone(),
            device: paper.device.clone(),
            id_b: paper.id_b,
            hi: paper.hi,
            nonce: paper.nonce.clone(),
            contests,
            chaining: paper.chaining,
            code: paper.code,
            state: State::Cast,
            weight,
            pre_encrypted: true,
        })
    }

    /// One contest of a cast ballot: the product of the chosen vectors (positions 1…m+L), its nonces the
    /// sums of theirs, proved as a regular contest (§4.3), with the printed ψ and χ and the chosen vectors.
    fn contest<R: RngCore + CryptoRng>(
        &self,
        (hi, mc, r, printed): (&[u8; 32], &ManifestContest, &Regenerated<G>, &Contest<G>),
        chosen: &[usize],
        rng: &mut R,
    ) -> Contest<G> {
        let g = &self.group;
        let encrypted = (0..mc.sequences.len()).map(|k| {
            let mut xi = g.scalar_from_u64(0);
            let mut ct = Ciphertext::zero(g);
            for j in chosen {
                xi = g.scalar_add(&xi, &r.nonces[j - 1][k]);
                ct = ct.add(g, &r.vectors[j - 1][k]);
            }
            (u32::from(chosen.contains(&(k + 1))), xi, ct)
        });
        let (selections, proof) = prove_selections(g, &self.k_table, hi, mc, encrypted, rng);
        Contest {
            index: mc.sequence,
            selections,
            proof,
            hash: printed.hash,
            data: None,
            pre: Some(PreContest {
                hashes: printed
                    .pre
                    .as_ref()
                    .map(|p| p.hashes.clone())
                    .unwrap_or_default(),
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
        let xi_b = uncast_nonce(&self.group, ballot, guardians, parts)?;
        self.opened((ballot, sheet), &xi_b)
    }

    /// Opens an uncast ballot with no paper at hand (the election service's publication, spec/80.11): the
    /// sheet is what ξ_B gives (each ψ in printed order, each short code Ω(ψ)), so the opening still checks
    /// the record's ψ, χ and H_C against ξ_B, and releases the labels and short codes the printer printed.
    pub fn open_unseen(
        &self,
        ballot: &Ballot<G>,
        guardians: &[GuardianKey<G>],
        parts: &[(u32, NoncePart<G>)],
    ) -> Result<OpenedPre<G>, Eg2Error> {
        let xi_b = uncast_nonce(&self.group, ballot, guardians, parts)?;
        let plain = PlainBallot {
            id: ballot.id.clone(),
            style: ballot.style.clone(),
            contests: BTreeMap::new(),
        };
        let sheet: Vec<PrintedContest> = style_contests(self.manifest, &plain)?
            .into_iter()
            .map(|(_, mc)| {
                let r = regenerate(&self.group, &self.k_table, (&ballot.hi, &xi_b), mc);
                PrintedContest {
                    short_codes: r.psi.iter().map(|p| self.short.code(p)).collect(),
                    psi: r.psi.clone(),
                }
            })
            .collect();
        self.opened((ballot, &sheet), &xi_b)
    }

    /// An uncast ballot opened from its ξ_B against its sheet.
    fn opened(
        &self,
        (ballot, sheet): (&Ballot<G>, &[PrintedContest]),
        xi_b: &BallotNonce,
    ) -> Result<OpenedPre<G>, Eg2Error> {
        let recorded = ballot
            .contests
            .iter()
            .map(|c| c.pre.as_ref().map(|p| &p.hashes));
        for (pc, hashes) in sheet.iter().zip(recorded) {
            if hashes != Some(&pc.sorted()) {
                return Err(refuse(
                    &ballot.id,
                    "the paper's selection hashes are not the record's".into(),
                ));
            }
        }
        let regenerated = self
            .regenerate_checked((ballot, sheet), xi_b)
            .map_err(|_| {
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
