//! The ballot verifier: every check a ballot must pass before it is recorded, one by one or
//! with the proof equations deferred to one batch per call (spec/62.4).

use std::collections::HashMap;

use rayon::prelude::*;
use votum_arith::Integer;
use votum_elgamal::{Ciphertext, PublicKey};
use votum_group::{Group, ModpGroup};
use votum_hash::eg::{hash_elems, EgHashItem};
use votum_proofs::{Eg1Oracle, ProofError};

use super::*;
use crate::encrypted::{EncryptedBallot, EncryptedContest, EncryptedSelection};
use crate::manifest::Manifest;
use crate::manifest::{contests_for_style, placeholders};

/// How proofs are checked: each equation on its own, or deferred to a batch (spec/62.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Individual,
    Deferred,
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

/// A selection's expected identity on a ballot: id, sequence order, description hash.
pub(crate) type SelectionSlot = (String, i64, Integer);

/// A contest's expected description hash and selection slots (placeholders included).
pub(crate) type ContestLayout = (Integer, Vec<SelectionSlot>);

/// The ballot-check parameters as written (spec/98.2), keys in this order.
#[derive(serde::Serialize, serde::Deserialize)]
struct ParamsText {
    manifest: String,
    public_key: String,
    extended_base_hash: String,
    manifest_hash: String,
}

/// The ballot-check parameters (spec/98.2) read back: the manifest's text (each reader parses it
/// with its own errors), the joint key as a checked subgroup element, and the two hashes.
pub struct CheckParams {
    pub manifest: String,
    pub public_key: votum_group::ModElement,
    pub extended_base_hash: Integer,
    pub manifest_hash: Integer,
}

impl CheckParams {
    /// Reads [`check_params`]'s bytes; the error says which field is wrong.
    pub fn from_bytes(params: &[u8]) -> Result<Self, String> {
        let p: ParamsText = serde_json::from_slice(params).map_err(|e| e.to_string())?;
        let int =
            |name: &str, s: &str| votum_hash::eg::from_hex(s).map_err(|e| format!("{name}: {e}"));
        let public_key = ModpGroup::eg_4096()
            .element(&int("public_key", &p.public_key)?)
            .map_err(|e| format!("public_key: {e}"))?;
        Ok(Self {
            public_key,
            extended_base_hash: int("extended_base_hash", &p.extended_base_hash)?,
            manifest_hash: int("manifest_hash", &p.manifest_hash)?,
            manifest: p.manifest,
        })
    }
}

/// The canonical bytes of the ballot-check parameters (spec/98.2): everything a worker needs to
/// build the [`BallotVerifier`] of `BallotVerifier::new(manifest, key, extended_base_hash)
/// .with_manifest_hash(manifest_hash)`, with `manifest_json` the manifest's text.
pub fn check_params(
    manifest_json: &str,
    public_key: &Integer,
    extended_base_hash: &Integer,
    manifest_hash: &Integer,
) -> Vec<u8> {
    let hex = votum_hash::eg::to_hex;
    let p = ParamsText {
        manifest: manifest_json.to_owned(),
        public_key: hex(public_key),
        extended_base_hash: hex(extended_base_hash),
        manifest_hash: hex(manifest_hash),
    };
    serde_json::to_vec(&p).unwrap_or_default()
}

/// One election's ballot checks, with the per-election values computed once.
pub struct BallotVerifier {
    pub(crate) group: ModpGroup,
    pub(crate) manifest: Manifest,
    pub(crate) manifest_hash: Integer,
    pub(crate) public_key: PublicKey<ModpGroup>,
    pub(crate) oracle: Eg1Oracle,
    /// contest id -> (description hash, [(selection id, sequence order, description hash)] incl. placeholders)
    pub(crate) layout: HashMap<String, ContestLayout>,
    /// A fixed-base table of K (window 8, 4 MiB at 4096 bits), built once this verifier has checked
    /// [`KEY_TABLE_AFTER`] ballots: a service or a record check then pays one table lookup chain
    /// for each batch's power of K instead of a full power.
    pub(crate) key_table: std::sync::OnceLock<votum_arith::FixedBaseTable>,
    pub(crate) checked: std::sync::atomic::AtomicUsize,
}

/// Ballots a verifier checks before it builds its table of K (the build costs about 30 powers).
pub const KEY_TABLE_AFTER: usize = 64;
/// Window of the verifier's table of K.
const KEY_TABLE_WINDOW: u32 = 8;

pub(crate) fn h(items: &[EgHashItem]) -> Integer {
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
            // no 48 MiB table of K here: a batch raises K once (from `key_table`, a small table
            // built after KEY_TABLE_AFTER ballots); only a ballot checked on its own (after its
            // batch failed) raises K per proof
            public_key: public_key.without_table(),
            oracle: Eg1Oracle::new(extended_base_hash),
            layout,
            key_table: std::sync::OnceLock::new(),
            checked: std::sync::atomic::AtomicUsize::new(0),
        })
    }

    /// Checks ballots against `manifest_hash` (the one the election's context commits to) rather
    /// than the manifest's own hash. The independent verifier does this so that a manifest that
    /// does not match its context is reported once, under V-PARAM-02, not again for every ballot.
    pub fn with_manifest_hash(mut self, manifest_hash: Integer) -> Self {
        self.manifest_hash = manifest_hash;
        self
    }

    /// The verifier of the ballot-check parameters `params` (spec/98.2, [`check_params`]): what a
    /// cluster's worker builds once per election.
    pub fn from_check_params(params: &[u8]) -> Result<Self, BallotError> {
        let bad = |why: String| BallotError::Format(format!("ballot-check parameters: {why}"));
        let p = CheckParams::from_bytes(params).map_err(bad)?;
        let key = PublicKey::new(&ModpGroup::eg_4096(), p.public_key)
            .map_err(|e| bad(format!("public_key: {e}")))?;
        let manifest = Manifest::from_json(&p.manifest).map_err(|e| bad(e.to_string()))?;
        let verifier =
            Self::new(manifest, &key, p.extended_base_hash).map_err(|e| bad(e.to_string()))?;
        Ok(verifier.with_manifest_hash(p.manifest_hash))
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
    /// one, then every proof equation and subgroup membership of all ballots in one random linear
    /// combination (spec/62.4). When a batch fails, each of its ballots is checked on its own,
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
        if !passed.is_empty()
            && !crate::batch::equations_hold(
                &self.group,
                self.public_key.element(),
                self.key_table(passed.len()),
                &passed,
                rng,
            )
        {
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

    /// The table of K once [`KEY_TABLE_AFTER`] ballots have been checked (built by the call that
    /// crosses the mark; other threads meanwhile go on without it).
    fn key_table(&self, more: usize) -> Option<&votum_arith::FixedBaseTable> {
        use std::sync::atomic::Ordering;
        let before = self.checked.fetch_add(more, Ordering::Relaxed);
        if let Some(t) = self.key_table.get() {
            return Some(t);
        }
        if before < KEY_TABLE_AFTER && before + more >= KEY_TABLE_AFTER {
            let g = &self.group;
            let built = votum_arith::FixedBaseTable::with_window(
                g.modulus(),
                self.public_key.element().value(),
                g.order().significant_bits(),
                KEY_TABLE_WINDOW,
            )
            .ok()?;
            return Some(self.key_table.get_or_init(|| built));
        }
        None
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
            .ok_or_else(|| BallotError::UnknownStyle(b.style_id.clone()))?;
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
