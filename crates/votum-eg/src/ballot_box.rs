//! The ballot box: submitted ballots (ElectionGuard 1.4 JSON) are parsed strictly, verified once on
//! the way in, refused on duplicate ids, and cast ballots are added to a streaming encrypted tally
//! (spec/62-eg-ballot-box.md).

use std::collections::{BTreeMap, HashMap, HashSet};

use rayon::prelude::*;
use serde_json::Value;
use votum_arith::Integer;
use votum_elgamal::{Ciphertext, PublicKey};
use votum_group::{Group, ModElement, ModScalar, ModpGroup};
use votum_hash::eg::{from_hex, hash_elems, EgHashItem};
use votum_proofs::{ConstantProof, DisjunctiveProof, Eg1Oracle, ProofError};

use crate::encrypt::{
    contests_for_style, placeholders, EncryptedBallot, EncryptedContest, EncryptedSelection,
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
    HashMismatch { object: String, which: &'static str },
    #[error("{object}: {error}")]
    Proof { object: String, error: ProofError },
    #[error("ballot state must be 1 (cast) or 2 (spoiled), got {0}")]
    BadState(i64),
}

/// Cast or spoiled (Benaloh challenge).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BallotState {
    Cast,
    Spoiled,
}

fn field<'a>(v: &'a Value, name: &str, object: &str) -> Result<&'a Value, BallotError> {
    v.get(name)
        .ok_or_else(|| BallotError::Format(format!("{object}: missing field {name:?}")))
}

fn text<'a>(v: &'a Value, name: &str, object: &str) -> Result<&'a str, BallotError> {
    field(v, name, object)?
        .as_str()
        .ok_or_else(|| BallotError::Format(format!("{object}: {name:?} must be a string")))
}

fn int(v: &Value, name: &str, object: &str) -> Result<i64, BallotError> {
    field(v, name, object)?
        .as_i64()
        .ok_or_else(|| BallotError::Format(format!("{object}: {name:?} must be an integer")))
}

fn hexnum(v: &Value, name: &str, object: &str) -> Result<Integer, BallotError> {
    from_hex(text(v, name, object)?)
        .map_err(|e| BallotError::Format(format!("{object}: {name:?}: {e}")))
}

fn scalar(g: &ModpGroup, v: &Value, name: &str, object: &str) -> Result<ModScalar, BallotError> {
    g.scalar(&hexnum(v, name, object)?)
        .map_err(|_| BallotError::Format(format!("{object}: {name:?} is not below q")))
}

/// A member of the order-q subgroup (full check: x^q = 1).
fn member(
    g: &ModpGroup,
    v: &Value,
    name: &'static str,
    object: &str,
) -> Result<ModElement, BallotError> {
    g.element(&hexnum(v, name, object)?)
        .map_err(|reason| BallotError::BadElement {
            object: object.to_owned(),
            what: name,
            reason,
        })
}

/// In range only; membership follows from a verified proof equation.
fn committed(
    g: &ModpGroup,
    v: &Value,
    name: &'static str,
    object: &str,
) -> Result<ModElement, BallotError> {
    g.element_in_range(&hexnum(v, name, object)?)
        .map_err(|reason| BallotError::BadElement {
            object: object.to_owned(),
            what: name,
            reason,
        })
}

fn optional_nonce(
    g: &ModpGroup,
    v: &Value,
    object: &str,
) -> Result<Option<ModScalar>, BallotError> {
    match v.get("nonce") {
        None | Some(Value::Null) => Ok(None),
        Some(_) => scalar(g, v, "nonce", object).map(Some),
    }
}

fn parse_selection(g: &ModpGroup, v: &Value) -> Result<EncryptedSelection, BallotError> {
    let id = text(v, "object_id", "selection")?.to_owned();
    let ct = field(v, "ciphertext", &id)?;
    let p = field(v, "proof", &id)?;
    Ok(EncryptedSelection {
        sequence_order: int(v, "sequence_order", &id)?,
        description_hash: hexnum(v, "description_hash", &id)?,
        ciphertext: Ciphertext {
            pad: member(g, ct, "pad", &id)?,
            data: member(g, ct, "data", &id)?,
        },
        crypto_hash: hexnum(v, "crypto_hash", &id)?,
        is_placeholder: field(v, "is_placeholder_selection", &id)?
            .as_bool()
            .ok_or_else(|| {
                BallotError::Format(format!("{id}: is_placeholder_selection must be a boolean"))
            })?,
        nonce: optional_nonce(g, v, &id)?,
        proof: DisjunctiveProof {
            zero_pad: committed(g, p, "proof_zero_pad", &id)?,
            zero_data: committed(g, p, "proof_zero_data", &id)?,
            one_pad: committed(g, p, "proof_one_pad", &id)?,
            one_data: committed(g, p, "proof_one_data", &id)?,
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
        accumulation: Ciphertext {
            pad: committed(g, acc, "pad", &id)?,
            data: committed(g, acc, "data", &id)?,
        },
        crypto_hash: hexnum(v, "crypto_hash", &id)?,
        nonce: optional_nonce(g, v, &id)?,
        proof: ConstantProof {
            pad: committed(g, p, "pad", &id)?,
            data: committed(g, p, "data", &id)?,
            challenge: scalar(g, p, "challenge", &id)?,
            response: scalar(g, p, "response", &id)?,
            constant,
        },
        selections,
        object_id: id,
    })
}

/// Parses a ballot in electionguard 1.4.0's JSON (private `CiphertextBallot` or `SubmittedBallot`).
pub fn parse_ballot(json: &str) -> Result<EncryptedBallot, BallotError> {
    let g = ModpGroup::eg_4096();
    let v: Value = serde_json::from_str(json).map_err(|e| BallotError::Format(e.to_string()))?;
    let id = text(&v, "object_id", "ballot")?.to_owned();
    let contests = field(&v, "contests", &id)?
        .as_array()
        .ok_or_else(|| BallotError::Format(format!("{id}: contests must be a list")))?
        .iter()
        .map(|c| parse_contest(&g, c))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(EncryptedBallot {
        style_id: text(&v, "style_id", &id)?.to_owned(),
        manifest_hash: hexnum(&v, "manifest_hash", &id)?,
        code_seed: hexnum(&v, "code_seed", &id)?,
        contests,
        code: hexnum(&v, "code", &id)?,
        timestamp: int(&v, "timestamp", &id)?,
        crypto_hash: hexnum(&v, "crypto_hash", &id)?,
        nonce: optional_nonce(&g, &v, &id)?,
        object_id: id,
    })
}

/// A selection's expected identity on a ballot: id, sequence order, description hash.
type SelectionSlot = (String, i64, Integer);

/// A contest's expected description hash and selection slots (placeholders included).
type ContestLayout = (Integer, Vec<SelectionSlot>);

/// One election's ballot checks, with the per-election values computed once.
pub struct BallotVerifier {
    group: ModpGroup,
    manifest: Manifest,
    manifest_hash: Integer,
    public_key: PublicKey<ModpGroup>,
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
            public_key: PublicKey::with_table(&ModpGroup::eg_4096(), public_key.element().clone())
                .map_err(|_| {
                    crate::ManifestError::Empty("joint public key (it is the identity)")
                })?,
            oracle: Eg1Oracle::new(extended_base_hash),
            layout,
        })
    }

    /// Every check a ballot must pass before it is recorded; each proof is verified exactly once.
    pub fn verify(&self, b: &EncryptedBallot) -> Result<(), BallotError> {
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
                    which: "contest description hash",
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
                        which: "selection crypto hash",
                    });
                }
                s.proof
                    .verify_with_key(g, &self.oracle, &self.public_key, &s.ciphertext)
                    .map_err(|error| BallotError::Proof {
                        object: s.object_id.clone(),
                        error,
                    })
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
                    which: "ciphertext accumulation",
                });
            }
            let limit = self
                .manifest
                .contest(&c.object_id)
                .map_or(0, |d| d.number_elected as u64);
            c.proof
                .verify_with_key(g, &self.oracle, &self.public_key, &acc, limit)
                .map_err(|error| BallotError::Proof {
                    object: c.object_id.clone(),
                    error,
                })?;
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
                    which: "contest crypto hash",
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
                which: "ballot crypto hash",
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
                which: "ballot code",
            });
        }
        Ok(())
    }
}

/// Ballots in, one verification each, a running encrypted tally of the cast ones.
pub struct BallotBox {
    verifier: BallotVerifier,
    seen: HashSet<String>,
    tally: BTreeMap<(String, String), Ciphertext<ModpGroup>>,
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
        let ballot = parse_ballot(json)?;
        self.verifier.verify(&ballot)?;
        Ok(ballot)
    }

    /// Parses, checks and records one ballot; a refused ballot changes nothing.
    pub fn submit(&mut self, json: &str, state: BallotState) -> Result<Receipt, BallotError> {
        let ballot = parse_ballot(json)?;
        if self.seen.contains(&ballot.object_id) {
            return Err(BallotError::Duplicate(ballot.object_id));
        }
        self.verifier.verify(&ballot)?;
        let g = &self.verifier.group;
        if state == BallotState::Cast {
            for c in &ballot.contests {
                for s in c.selections.iter().filter(|s| !s.is_placeholder) {
                    let key = (c.object_id.clone(), s.object_id.clone());
                    let entry = self.tally.entry(key).or_insert_with(|| Ciphertext::zero(g));
                    *entry = entry.add(g, &s.ciphertext);
                }
            }
            self.cast += 1;
        } else {
            self.spoiled += 1;
        }
        self.seen.insert(ballot.object_id.clone());
        Ok(Receipt {
            ballot_id: ballot.object_id,
            code: ballot.code,
            state,
        })
    }

    /// The encrypted tally of the cast ballots, by (contest, selection). Selections no cast ballot
    /// had yet are the encryption of 0 with nonce 0.
    pub fn tally(&self) -> BTreeMap<(String, String), Ciphertext<ModpGroup>> {
        let g = &self.verifier.group;
        let mut out = BTreeMap::new();
        for c in &self.verifier.manifest.contests {
            for s in &c.ballot_selections {
                let key = (c.object_id.clone(), s.object_id.clone());
                let value = self
                    .tally
                    .get(&key)
                    .cloned()
                    .unwrap_or_else(|| Ciphertext::zero(g));
                out.insert(key, value);
            }
        }
        out
    }

    pub fn counts(&self) -> (u64, u64) {
        (self.cast, self.spoiled)
    }
}
