//! The ballot box: submitted ballots (ElectionGuard 1.4 JSON) are parsed strictly, verified once on
//! the way in, refused on duplicate ids, and cast ballots are added to a streaming encrypted tally
//! (spec/62-eg-ballot-box.md).

use std::collections::{BTreeMap, HashMap, HashSet};

use rayon::prelude::*;
use serde_json::Value;
use votum_arith::Integer;
use votum_elgamal::{Ciphertext, PublicKey};
use votum_group::{Group, ModElement, ModScalar, ModpGroup};
use votum_hash::eg::{hash_elems, EgHashItem};
use votum_proofs::{ConstantProof, DisjunctiveProof, Eg1Oracle, ProofError};

use crate::encrypt::{
    contests_for_style, placeholders, EncryptedBallot, EncryptedContest, EncryptedSelection,
};
use crate::json::{
    check_ciphertexts, commitment, field, hexnum, in_range, int, scalar, text, CiphertextInRange,
    FieldError,
};
use crate::manifest::Manifest;

/// Why a submitted ballot was refused. Nothing is recorded for a refused ballot.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BallotError {
    #[error("ballot JSON is malformed: {0}")]
    Format(String),
    #[error("{object}: {what} is not a valid group element ({reason})")]
    BadElement {
        object: String,
        what: &'static str,
        reason: votum_group::GroupError,
    },
    #[error("ballot {0:?} was already submitted")]
    Duplicate(String),
    #[error("ballot is for another manifest")]
    WrongManifest,
    #[error("unknown ballot style {0:?}")]
    UnknownStyle(String),
    #[error("the ballot's contests do not match its style: {0}")]
    ContestMismatch(String),
    #[error("contest {contest:?}: selections do not match the manifest and placeholders")]
    SelectionMismatch { contest: String },
    #[error("{object}: {which} does not match")]
    HashMismatch { object: String, which: BallotHash },
    #[error("{object}: {error}")]
    Proof { object: String, error: ProofError },
    #[error("ballot state must be 1 (cast) or 2 (spoiled), got {0}")]
    BadState(i64),
}

/// Which of a ballot's hashes or derived values did not match what the ballot states. A verifier
/// files each under its own check by matching these, never by the message text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BallotHash {
    ContestDescription,
    SelectionCrypto,
    CiphertextAccumulation,
    ContestCrypto,
    BallotCrypto,
    BallotCode,
}

impl std::fmt::Display for BallotHash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::ContestDescription => "contest description hash",
            Self::SelectionCrypto => "selection crypto hash",
            Self::CiphertextAccumulation => "ciphertext accumulation",
            Self::ContestCrypto => "contest crypto hash",
            Self::BallotCrypto => "ballot crypto hash",
            Self::BallotCode => "ballot code",
        })
    }
}

/// How proofs are checked: each equation on its own, or deferred to a batch (spec/62.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Individual,
    Deferred,
}

impl From<FieldError> for BallotError {
    fn from(e: FieldError) -> Self {
        match e {
            FieldError::Format { object, message } => Self::Format(format!("{object}: {message}")),
            FieldError::BadElement {
                object,
                what,
                reason,
            } => Self::BadElement {
                object,
                what,
                reason,
            },
        }
    }
}

/// α and β of a selection in the order-q subgroup: in full (`x^q = 1`), or only their Jacobi
/// symbol when a batch checks the rest (spec/62.4).
pub(crate) fn ciphertext_in_subgroup(
    g: &ModpGroup,
    s: &EncryptedSelection,
    full: bool,
) -> Result<(), BallotError> {
    for (x, what) in [(&s.ciphertext.pad, "pad"), (&s.ciphertext.data, "data")] {
        let ok = if full {
            g.is_member(x.value())
        } else {
            x.value().jacobi(g.p()) == 1
        };
        if !ok {
            return Err(BallotError::BadElement {
                object: s.object_id.clone(),
                what,
                reason: votum_group::GroupError::NotInSubgroup,
            });
        }
    }
    Ok(())
}

/// Encrypted sums by (contest id, selection id).
pub type TallyMap = BTreeMap<(String, String), Ciphertext<ModpGroup>>;

/// Adds `ct` into the sum at `key` (a missing sum is the encryption of 0 with nonce 0).
pub fn accumulate(
    g: &ModpGroup,
    tally: &mut TallyMap,
    key: (String, String),
    ct: &Ciphertext<ModpGroup>,
) {
    let entry = tally.entry(key).or_insert_with(|| Ciphertext::zero(g));
    *entry = entry.add(g, ct);
}

/// `tally` with every selection of `manifest`: selections no cast ballot reached are the
/// encryption of 0 with nonce 0; sums for selections the manifest does not have are left out.
pub fn complete_tally(manifest: &Manifest, tally: &TallyMap) -> TallyMap {
    let g = ModpGroup::eg_4096();
    let mut out = BTreeMap::new();
    for c in &manifest.contests {
        for s in &c.ballot_selections {
            let key = (c.object_id.clone(), s.object_id.clone());
            let value = tally
                .get(&key)
                .cloned()
                .unwrap_or_else(|| Ciphertext::zero(&g));
            out.insert(key, value);
        }
    }
    out
}

/// A tally in manifest order as bytes: for each selection, pad then data, each `element_len`
/// big-endian bytes (spec/62.6). Selections no ballot had are the encryption of 0 with nonce 0.
pub fn tally_to_bytes(manifest: &Manifest, tally: &TallyMap) -> Vec<u8> {
    let g = ModpGroup::eg_4096();
    let zero = Ciphertext::zero(&g);
    let mut out = Vec::new();
    for c in &manifest.contests {
        for s in &c.ballot_selections {
            let ct = tally
                .get(&(c.object_id.clone(), s.object_id.clone()))
                .unwrap_or(&zero);
            out.extend(g.encode_element(&ct.pad));
            out.extend(g.encode_element(&ct.data));
        }
    }
    out
}

/// Reads [`tally_to_bytes`]. Values are only range-checked: this reads back what votum wrote
/// to its own storage, not input from others.
pub fn tally_from_bytes(manifest: &Manifest, bytes: &[u8]) -> Result<TallyMap, BallotError> {
    let g = ModpGroup::eg_4096();
    let len = g.element_len();
    let keys: Vec<(String, String)> = manifest
        .contests
        .iter()
        .flat_map(|c| {
            c.ballot_selections
                .iter()
                .map(|s| (c.object_id.clone(), s.object_id.clone()))
        })
        .collect();
    if bytes.len() != keys.len() * 2 * len {
        return Err(BallotError::Format(format!(
            "a stored tally of {} bytes does not fit {} selections",
            bytes.len(),
            keys.len()
        )));
    }
    let element = |chunk: &[u8]| {
        g.element_in_range(&Integer::from_digits(chunk, votum_arith::Order::Msf))
            .map_err(|e| BallotError::Format(format!("stored tally: {e}")))
    };
    let mut read = Vec::with_capacity(keys.len());
    for chunk in bytes.chunks(2 * len) {
        read.push(CiphertextInRange {
            pad: element(&chunk[..len])?,
            data: element(&chunk[len..])?,
        });
    }
    // stored bytes come from outside this process (a database): one batched membership test
    let cts = check_ciphertexts(&g, read).map_err(|(i, what)| {
        BallotError::Format(format!(
            "stored tally: {what} of ciphertext {i} is not in the subgroup"
        ))
    })?;
    let out: TallyMap = keys.into_iter().zip(cts).collect();
    Ok(out)
}

/// Adds each of a ballot's selections, placeholders excluded, into `tally`.
pub fn add_ballot(g: &ModpGroup, tally: &mut TallyMap, ballot: &EncryptedBallot) {
    for c in &ballot.contests {
        for s in c.selections.iter().filter(|s| !s.is_placeholder) {
            accumulate(
                g,
                tally,
                (c.object_id.clone(), s.object_id.clone()),
                &s.ciphertext,
            );
        }
    }
}

/// Cast or spoiled (Benaloh challenge).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BallotState {
    Cast,
    Spoiled,
}

fn optional_nonce(
    g: &ModpGroup,
    v: &Value,
    object: &str,
) -> Result<Option<ModScalar>, BallotError> {
    match v.get("nonce") {
        None | Some(Value::Null) => Ok(None),
        Some(_) => Ok(Some(scalar(g, v, "nonce", object)?)),
    }
}

fn parse_selection(g: &ModpGroup, v: &Value) -> Result<EncryptedSelection, BallotError> {
    let id = text(v, "object_id", "selection")?.to_owned();
    let ct = field(v, "ciphertext", &id)?;
    let p = field(v, "proof", &id)?;
    Ok(EncryptedSelection {
        sequence_order: int(v, "sequence_order", &id)?,
        description_hash: hexnum(v, "description_hash", &id)?,
        // range only here: the ballot is an UncheckedBallot until the verifier has tested
        // membership (one batched test, spec/62.4)
        ciphertext: Ciphertext {
            pad: in_range(g, ct, "pad", &id)?.into_unchecked_part(),
            data: in_range(g, ct, "data", &id)?.into_unchecked_part(),
        },
        crypto_hash: hexnum(v, "crypto_hash", &id)?,
        is_placeholder: field(v, "is_placeholder_selection", &id)?
            .as_bool()
            .ok_or_else(|| {
                BallotError::Format(format!("{id}: is_placeholder_selection must be a boolean"))
            })?,
        nonce: optional_nonce(g, v, &id)?,
        proof: DisjunctiveProof {
            zero_pad: commitment(g, p, "proof_zero_pad", &id)?,
            zero_data: commitment(g, p, "proof_zero_data", &id)?,
            one_pad: commitment(g, p, "proof_one_pad", &id)?,
            one_data: commitment(g, p, "proof_one_data", &id)?,
            zero_challenge: scalar(g, p, "proof_zero_challenge", &id)?,
            one_challenge: scalar(g, p, "proof_one_challenge", &id)?,
            challenge: scalar(g, p, "challenge", &id)?,
            zero_response: scalar(g, p, "proof_zero_response", &id)?,
            one_response: scalar(g, p, "proof_one_response", &id)?,
        },
        object_id: id,
    })
}

fn parse_contest(g: &ModpGroup, v: &Value) -> Result<EncryptedContest, BallotError> {
    let id = text(v, "object_id", "contest")?.to_owned();
    let selections = field(v, "ballot_selections", &id)?
        .as_array()
        .ok_or_else(|| BallotError::Format(format!("{id}: ballot_selections must be a list")))?
        .par_iter()
        .map(|s| parse_selection(g, s))
        .collect::<Result<Vec<_>, _>>()?;
    let acc = field(v, "ciphertext_accumulation", &id)?;
    let p = field(v, "proof", &id)?;
    let constant = field(p, "constant", &id)?.as_u64().ok_or_else(|| {
        BallotError::Format(format!(
            "{id}: proof constant must be a non-negative integer"
        ))
    })?;
    Ok(EncryptedContest {
        sequence_order: int(v, "sequence_order", &id)?,
        description_hash: hexnum(v, "description_hash", &id)?,
        // compared with the product of the selections' ciphertexts (V-BALLOT-04)
        accumulation: Ciphertext {
            pad: in_range(g, acc, "pad", &id)?.into_unchecked_part(),
            data: in_range(g, acc, "data", &id)?.into_unchecked_part(),
        },
        crypto_hash: hexnum(v, "crypto_hash", &id)?,
        nonce: optional_nonce(g, v, &id)?,
        proof: ConstantProof {
            pad: commitment(g, p, "pad", &id)?,
            data: commitment(g, p, "data", &id)?,
            challenge: scalar(g, p, "challenge", &id)?,
            response: scalar(g, p, "response", &id)?,
            constant,
        },
        selections,
        object_id: id,
    })
}

/// A ballot read from outside whose ciphertexts are only known to be in range. Nothing can be
/// done with its elements until it has become an [`EncryptedBallot`]: through the verifier
/// ([`BallotVerifier::verify`], [`BallotVerifier::verify_many`]: proofs, hashes and subgroup
/// membership), or through [`UncheckedBallot::check_members`] (membership only, for a ballot a
/// verifier has refused or that passed a ballot box before).
#[derive(Clone, Debug)]
pub struct UncheckedBallot(EncryptedBallot);

impl UncheckedBallot {
    pub fn object_id(&self) -> &str {
        &self.0.object_id
    }

    /// The ballot, after the full subgroup test of every ciphertext (selections and contest
    /// accumulations; one batch). Proofs and hashes are not checked.
    pub fn check_members(self) -> Result<EncryptedBallot, BallotError> {
        Self::check_members_of(vec![self])
            .pop()
            .unwrap_or_else(|| Err(BallotError::Format("not processed".into())))
    }

    /// [`UncheckedBallot::check_members`] for many ballots, with one batched test; each ballot
    /// gets its own result.
    pub fn check_members_of(
        ballots: Vec<UncheckedBallot>,
    ) -> Vec<Result<EncryptedBallot, BallotError>> {
        let g = ModpGroup::eg_4096();
        let refs: Vec<&ModElement> = ballots
            .iter()
            .flat_map(|b| ciphertext_parts(&b.0).map(|(_, _, x)| x))
            .collect();
        if g.members_hold(&refs, &mut crate::batch::batch_rng()) {
            return ballots.into_iter().map(|b| Ok(b.0)).collect();
        }
        ballots
            .into_iter()
            .map(|b| {
                let bad = ciphertext_parts(&b.0)
                    .find(|(_, _, x)| !g.is_member(x.value()))
                    .map(|(object, what, _)| (object.to_owned(), what));
                match bad {
                    None => Ok(b.0),
                    Some((object, what)) => Err(BallotError::BadElement {
                        object,
                        what,
                        reason: votum_group::GroupError::NotInSubgroup,
                    }),
                }
            })
            .collect()
    }
}

/// Every ciphertext component of a ballot (contest accumulations and selections), with the object
/// it belongs to and which part it is.
fn ciphertext_parts(
    b: &EncryptedBallot,
) -> impl Iterator<Item = (&str, &'static str, &ModElement)> {
    b.contests.iter().flat_map(|c| {
        let accumulation = [
            (c.object_id.as_str(), "pad", &c.accumulation.pad),
            (c.object_id.as_str(), "data", &c.accumulation.data),
        ];
        accumulation
            .into_iter()
            .chain(c.selections.iter().flat_map(|s| {
                [
                    (s.object_id.as_str(), "pad", &s.ciphertext.pad),
                    (s.object_id.as_str(), "data", &s.ciphertext.data),
                ]
            }))
    })
}

impl From<EncryptedBallot> for UncheckedBallot {
    /// Any ballot may be checked again.
    fn from(ballot: EncryptedBallot) -> Self {
        Self(ballot)
    }
}

/// Parses a ballot in electionguard 1.4.0's JSON (private `CiphertextBallot` or `SubmittedBallot`).
pub fn parse_ballot(json: &str) -> Result<UncheckedBallot, BallotError> {
    let g = ModpGroup::eg_4096();
    let v: Value = serde_json::from_str(json).map_err(|e| BallotError::Format(e.to_string()))?;
    let id = text(&v, "object_id", "ballot")?.to_owned();
    let contests = field(&v, "contests", &id)?
        .as_array()
        .ok_or_else(|| BallotError::Format(format!("{id}: contests must be a list")))?
        .iter()
        .map(|c| parse_contest(&g, c))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(UncheckedBallot(EncryptedBallot {
        style_id: text(&v, "style_id", &id)?.to_owned(),
        manifest_hash: hexnum(&v, "manifest_hash", &id)?,
        code_seed: hexnum(&v, "code_seed", &id)?,
        contests,
        code: hexnum(&v, "code", &id)?,
        timestamp: int(&v, "timestamp", &id)?,
        crypto_hash: hexnum(&v, "crypto_hash", &id)?,
        nonce: optional_nonce(&g, &v, &id)?,
        object_id: id,
    }))
}

/// A selection's expected identity on a ballot: id, sequence order, description hash.
type SelectionSlot = (String, i64, Integer);

/// A contest's expected description hash and selection slots (placeholders included).
type ContestLayout = (Integer, Vec<SelectionSlot>);

/// One election's ballot checks, with the per-election values computed once.
pub struct BallotVerifier {
    pub(crate) group: ModpGroup,
    pub(crate) manifest: Manifest,
    manifest_hash: Integer,
    pub(crate) public_key: PublicKey<ModpGroup>,
    oracle: Eg1Oracle,
    /// contest id -> (description hash, [(selection id, sequence order, description hash)] incl. placeholders)
    layout: HashMap<String, ContestLayout>,
}

fn h(items: &[EgHashItem]) -> Integer {
    hash_elems(items, ModpGroup::eg_4096().order())
}

impl BallotVerifier {
    pub fn new(
        manifest: Manifest,
        public_key: &PublicKey<ModpGroup>,
        extended_base_hash: Integer,
    ) -> Result<Self, crate::ManifestError> {
        let manifest_hash = manifest.crypto_hash()?;
        let layout = manifest
            .contests
            .iter()
            .map(|c| {
                let sels = c
                    .ballot_selections
                    .iter()
                    .cloned()
                    .chain(placeholders(c))
                    .map(|s| (s.object_id.clone(), s.sequence_order, s.crypto_hash()))
                    .collect();
                (c.object_id.clone(), (c.crypto_hash(), sels))
            })
            .collect();
        Ok(Self {
            group: ModpGroup::eg_4096(),
            manifest,
            manifest_hash,
            // no fixed-base table of K: batches raise K to one exponent each; only a ballot checked
            // on its own (after its batch failed) raises K per proof
            public_key: PublicKey::new(&ModpGroup::eg_4096(), public_key.element().clone())
                .map_err(|_| {
                    crate::ManifestError::Empty("joint public key (it is the identity)")
                })?,
            oracle: Eg1Oracle::new(extended_base_hash),
            layout,
        })
    }

    /// Checks ballots against `manifest_hash` (the one the election's context commits to) rather
    /// than the manifest's own hash. The independent verifier does this so that a manifest that
    /// does not match its context is reported once, under V-PARAM-02, not again for every ballot.
    pub fn with_manifest_hash(mut self, manifest_hash: Integer) -> Self {
        self.manifest_hash = manifest_hash;
        self
    }

    /// Every check a ballot must pass before it is recorded (one ballot: a batch of one); the
    /// ballot, checked, when it passes.
    pub fn verify(&self, b: UncheckedBallot) -> Result<EncryptedBallot, BallotError> {
        let mut rng = crate::batch::batch_rng();
        self.verify_many(vec![b], &mut rng)
            .pop()
            .unwrap_or_else(|| Err(BallotError::Format("not processed".into())))
    }

    /// Checks many ballots: the cheap checks (structure, hashes, challenges, Jacobi symbols) one by
    /// one, then every proof equation and subgroup membership of all ballots in two random linear
    /// combinations (spec/62.4). When a batch fails, each of its ballots is checked on its own,
    /// so every refused ballot gets its specific error.
    pub fn verify_many<R: rand_core::RngCore + rand_core::CryptoRng>(
        &self,
        ballots: Vec<UncheckedBallot>,
        rng: &mut R,
    ) -> Vec<Result<EncryptedBallot, BallotError>> {
        let ballots: Vec<EncryptedBallot> = ballots.into_iter().map(|b| b.0).collect();
        let mut out: Vec<Result<(), BallotError>> = ballots
            .par_iter()
            .map(|b| self.check(b, Mode::Deferred))
            .collect();
        let passed: Vec<&EncryptedBallot> = ballots
            .iter()
            .zip(&out)
            .filter(|(_, r)| r.is_ok())
            .map(|(b, _)| b)
            .collect();
        if !passed.is_empty() && !crate::batch::equations_hold(self, &passed, rng) {
            for (b, r) in ballots.iter().zip(out.iter_mut()) {
                if r.is_ok() {
                    *r = self.check(b, Mode::Individual);
                }
            }
        }
        ballots
            .into_iter()
            .zip(out)
            .map(|(b, r)| r.map(|()| b))
            .collect()
    }

    /// [`BallotVerifier::verify_many`] over parse results, in order: the ballots that parsed are
    /// checked in one batch and returned when they pass; entries that are already errors pass
    /// through unchanged.
    pub fn verify_parsed<R: rand_core::RngCore + rand_core::CryptoRng>(
        &self,
        items: Vec<Result<UncheckedBallot, BallotError>>,
        rng: &mut R,
    ) -> Vec<Result<EncryptedBallot, BallotError>> {
        let mut out: Vec<Option<Result<EncryptedBallot, BallotError>>> =
            Vec::with_capacity(items.len());
        let mut good = Vec::new();
        let mut index = Vec::new();
        for (i, item) in items.into_iter().enumerate() {
            match item {
                Ok(b) => {
                    good.push(b);
                    index.push(i);
                    out.push(None);
                }
                Err(e) => out.push(Some(Err(e))),
            }
        }
        let verdicts = self.verify_many(good, rng);
        for (verdict, i) in verdicts.into_iter().zip(index) {
            out[i] = Some(verdict);
        }
        out.into_iter()
            .map(|r| r.unwrap_or_else(|| Err(BallotError::Format("not processed".into()))))
            .collect()
    }

    /// Checks one ballot on its own, every equation separately (the reference's way).
    pub fn verify_individually(&self, b: UncheckedBallot) -> Result<EncryptedBallot, BallotError> {
        self.check(&b.0, Mode::Individual).map(|()| b.0)
    }

    fn check(&self, b: &EncryptedBallot, mode: Mode) -> Result<(), BallotError> {
        let g = &self.group;
        if b.manifest_hash != self.manifest_hash {
            return Err(BallotError::WrongManifest);
        }
        let style = contests_for_style(&self.manifest, &b.style_id)
            .map_err(|_| BallotError::UnknownStyle(b.style_id.clone()))?;
        let expected: Vec<&str> = style.iter().map(|c| c.object_id.as_str()).collect();
        let got: Vec<&str> = b.contests.iter().map(|c| c.object_id.as_str()).collect();
        if expected.len() != got.len() || expected.iter().any(|c| !got.contains(c)) {
            return Err(BallotError::ContestMismatch(format!(
                "expected {expected:?}, got {got:?}"
            )));
        }
        for c in &b.contests {
            let (desc_hash, sels) = &self.layout[&c.object_id];
            let desc = style
                .iter()
                .find(|d| d.object_id == c.object_id)
                .ok_or(BallotError::ContestMismatch(c.object_id.clone()))?;
            if c.description_hash != *desc_hash || c.sequence_order != desc.sequence_order {
                return Err(BallotError::HashMismatch {
                    object: c.object_id.clone(),
                    which: BallotHash::ContestDescription,
                });
            }
            let mut ours: Vec<(&str, i64, &Integer)> = c
                .selections
                .iter()
                .map(|s| (s.object_id.as_str(), s.sequence_order, &s.description_hash))
                .collect();
            let mut theirs: Vec<(&str, i64, &Integer)> =
                sels.iter().map(|(i, o, d)| (i.as_str(), *o, d)).collect();
            ours.sort();
            theirs.sort();
            let placeholder_ok = c
                .selections
                .iter()
                .all(|s| s.is_placeholder == s.object_id.ends_with("-placeholder"));
            if ours != theirs || !placeholder_ok {
                return Err(BallotError::SelectionMismatch {
                    contest: c.object_id.clone(),
                });
            }
        }
        // per selection: hash and 0/1 proof, in parallel
        b.contests
            .par_iter()
            .flat_map(|c| c.selections.par_iter())
            .try_for_each(|s| {
                ciphertext_in_subgroup(g, s, mode == Mode::Individual)?;
                let ct_hash = h(&[
                    EgHashItem::Num(s.ciphertext.pad.value().clone()),
                    EgHashItem::Num(s.ciphertext.data.value().clone()),
                ]);
                let expect = h(&[
                    EgHashItem::Str(s.object_id.clone()),
                    EgHashItem::Num(s.description_hash.clone()),
                    EgHashItem::Num(ct_hash),
                ]);
                if expect != s.crypto_hash {
                    return Err(BallotError::HashMismatch {
                        object: s.object_id.clone(),
                        which: BallotHash::SelectionCrypto,
                    });
                }
                let proof_error = |error| BallotError::Proof {
                    object: s.object_id.clone(),
                    error,
                };
                let individual = || {
                    s.proof
                        .verify_with_key(g, &self.oracle, &self.public_key, &s.ciphertext)
                        .map_err(proof_error)
                };
                match mode {
                    Mode::Individual => individual(),
                    Mode::Deferred => {
                        s.proof
                            .check_challenge(g, &self.oracle, &s.ciphertext)
                            .map_err(proof_error)?;
                        let p = &s.proof;
                        let commitments = [&p.zero_pad, &p.zero_data, &p.one_pad, &p.one_data];
                        if commitments.iter().any(|x| x.value().jacobi(g.p()) != 1) {
                            // not in the subgroup: an exact equation fails; report which
                            return individual().and(Err(proof_error(ProofError::Equation {
                                proof: "disjunctive",
                                equation: "commitments in the subgroup",
                            })));
                        }
                        Ok(())
                    }
                }
            })?;
        // per contest: accumulation, selection limit proof, hash
        b.contests.par_iter().try_for_each(|c| {
            let acc = c
                .selections
                .iter()
                .fold(Ciphertext::zero(g), |a, s| a.add(g, &s.ciphertext));
            if acc != c.accumulation {
                return Err(BallotError::HashMismatch {
                    object: c.object_id.clone(),
                    which: BallotHash::CiphertextAccumulation,
                });
            }
            let limit = self
                .manifest
                .contest(&c.object_id)
                .map_or(0, |d| d.number_elected as u64);
            let proof_error = |error| BallotError::Proof {
                object: c.object_id.clone(),
                error,
            };
            let individual = || {
                c.proof
                    .verify_with_key(g, &self.oracle, &self.public_key, &acc, limit)
                    .map_err(proof_error)
            };
            match mode {
                Mode::Individual => individual()?,
                Mode::Deferred => {
                    c.proof
                        .check_challenge(g, &self.oracle, &acc, limit)
                        .map_err(proof_error)?;
                    if [&c.proof.pad, &c.proof.data]
                        .iter()
                        .any(|x| x.value().jacobi(g.p()) != 1)
                    {
                        individual()?;
                        return Err(proof_error(ProofError::Equation {
                            proof: "constant",
                            equation: "commitments in the subgroup",
                        }));
                    }
                }
            }
            let mut items = vec![
                EgHashItem::Str(c.object_id.clone()),
                EgHashItem::Num(c.description_hash.clone()),
            ];
            let mut sorted: Vec<&EncryptedSelection> = c.selections.iter().collect();
            sorted.sort_by_key(|s| s.sequence_order);
            items.extend(
                sorted
                    .iter()
                    .map(|s| EgHashItem::Num(s.crypto_hash.clone())),
            );
            if h(&items) != c.crypto_hash {
                return Err(BallotError::HashMismatch {
                    object: c.object_id.clone(),
                    which: BallotHash::ContestCrypto,
                });
            }
            Ok(())
        })?;
        let mut items = vec![
            EgHashItem::Str(b.object_id.clone()),
            EgHashItem::Num(b.manifest_hash.clone()),
        ];
        let mut sorted: Vec<&EncryptedContest> = b.contests.iter().collect();
        sorted.sort_by_key(|c| c.sequence_order);
        items.extend(
            sorted
                .iter()
                .map(|c| EgHashItem::Num(c.crypto_hash.clone())),
        );
        if h(&items) != b.crypto_hash {
            return Err(BallotError::HashMismatch {
                object: b.object_id.clone(),
                which: BallotHash::BallotCrypto,
            });
        }
        let code = h(&[
            EgHashItem::Num(b.code_seed.clone()),
            EgHashItem::Int(b.timestamp),
            EgHashItem::Num(b.crypto_hash.clone()),
        ]);
        if code != b.code {
            return Err(BallotError::HashMismatch {
                object: b.object_id.clone(),
                which: BallotHash::BallotCode,
            });
        }
        Ok(())
    }
}

/// Ballots in, one verification each, a running encrypted tally of the cast ones.
pub struct BallotBox {
    verifier: BallotVerifier,
    seen: HashSet<String>,
    tally: TallyMap,
    cast: u64,
    spoiled: u64,
}

/// What the box says about an accepted ballot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Receipt {
    pub ballot_id: String,
    pub code: Integer,
    pub state: BallotState,
}

impl BallotBox {
    pub fn new(verifier: BallotVerifier) -> Self {
        Self {
            verifier,
            seen: HashSet::new(),
            tally: BTreeMap::new(),
            cast: 0,
            spoiled: 0,
        }
    }

    /// Parses and checks a ballot without recording it (a duplicate id is not an error here).
    pub fn check(&self, json: &str) -> Result<EncryptedBallot, BallotError> {
        self.verifier.verify(parse_ballot(json)?)
    }

    /// Parses, checks and records one ballot; a refused ballot changes nothing.
    pub fn submit(&mut self, json: &str, state: BallotState) -> Result<Receipt, BallotError> {
        let ballot = parse_ballot(json)?;
        if self.seen.contains(ballot.object_id()) {
            return Err(BallotError::Duplicate(ballot.object_id().to_owned()));
        }
        let ballot = self.verifier.verify(ballot)?;
        Ok(self.record(ballot, state))
    }

    /// Parses, checks (in one batch, spec/62.4) and records many ballots, in order; each gets
    /// its own result and a refused ballot changes nothing. A ballot id repeated within the
    /// batch is a duplicate from its second occurrence on.
    pub fn submit_many(
        &mut self,
        items: &[(&str, BallotState)],
    ) -> Vec<Result<Receipt, BallotError>> {
        let parsed: Vec<Result<UncheckedBallot, BallotError>> = items
            .par_iter()
            .map(|(json, _)| parse_ballot(json))
            .collect();
        let mut batch_seen = HashSet::new();
        let candidates = parsed
            .into_iter()
            .map(|p| {
                p.and_then(|b| {
                    let id = b.object_id().to_owned();
                    if self.seen.contains(&id) || !batch_seen.insert(id.clone()) {
                        Err(BallotError::Duplicate(id))
                    } else {
                        Ok(b)
                    }
                })
            })
            .collect();
        let mut rng = crate::batch::batch_rng();
        let verified = self.verifier.verify_parsed(candidates, &mut rng);
        verified
            .into_iter()
            .zip(items)
            .map(|(r, (_, state))| r.map(|b| self.record(b, *state)))
            .collect()
    }

    fn record(&mut self, ballot: EncryptedBallot, state: BallotState) -> Receipt {
        let g = &self.verifier.group;
        if state == BallotState::Cast {
            add_ballot(g, &mut self.tally, &ballot);
            self.cast += 1;
        } else {
            self.spoiled += 1;
        }
        self.seen.insert(ballot.object_id.clone());
        Receipt {
            ballot_id: ballot.object_id,
            code: ballot.code,
            state,
        }
    }

    /// The encrypted tally of the cast ballots, by (contest, selection), every selection of the
    /// manifest present ([`complete_tally`]).
    pub fn tally(&self) -> TallyMap {
        complete_tally(&self.verifier.manifest, &self.tally)
    }

    pub fn counts(&self) -> (u64, u64) {
        (self.cast, self.spoiled)
    }
}
