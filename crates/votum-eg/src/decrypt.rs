//! Threshold decryption (spec/64-eg-decryption.md): the encrypted tally or a spoiled ballot is
//! decrypted from the present guardians' shares and, for each missing guardian, from compensated
//! shares computed by present guardians from that guardian's backups. Every share's proof is
//! checked, recovery keys are recomputed from the missing guardian's commitments (never taken
//! from the record), missing shares are rebuilt by Lagrange interpolation, and counts come from
//! a discrete log. The result is electionguard 1.4.0's `PlaintextTally` JSON; the same code reads
//! and re-checks one written by the reference.

use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap, HashSet};

use rayon::prelude::*;
use serde_json::{json, Map, Value};
use votum_arith::Integer;
use votum_elgamal::threshold::lagrange_coefficient;
use votum_elgamal::{Ciphertext, DlogTable};
use votum_group::{Group, InRange, ModElement, ModScalar, ModpGroup};
use votum_proofs::{Eg1Oracle, ProofError};

use crate::ballot_box::parse_ballot;
use crate::guardian::{
    verify_guardians, verify_share, CeremonyError, GuardianPublicKey, ProvenShare,
};
use crate::json::{self, FieldError};
use crate::manifest::Manifest;
use crate::BallotError;

/// Why a decryption was refused. Nothing is published from a refused decryption.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecryptionError {
    #[error(transparent)]
    Field(#[from] FieldError),
    #[error(transparent)]
    Ceremony(#[from] CeremonyError),
    #[error(transparent)]
    Ballot(#[from] BallotError),
    #[error("share from unknown guardian {0:?}")]
    UnknownGuardian(String),
    #[error("guardian {0:?} gave shares twice")]
    DuplicateShare(String),
    #[error("guardian {guardian:?} gave {got} shares for {expected} ciphertexts")]
    ShareCount {
        guardian: String,
        expected: usize,
        got: usize,
    },
    #[error("{got} guardians present, the quorum is {needed}")]
    TooFewGuardians { needed: usize, got: usize },
    #[error("missing guardian {missing:?}: {got} compensating guardians, the quorum is {needed}")]
    NotEnoughHelpers {
        missing: String,
        needed: usize,
        got: usize,
    },
    #[error("{object}: share of guardian {guardian:?}{}: {error}", for_missing.as_ref().map(|m| format!(" for missing {m:?}")).unwrap_or_default())]
    Proof {
        guardian: String,
        /// The missing guardian a compensated share stands in for; `None` for a guardian's own share.
        for_missing: Option<String>,
        object: String,
        error: ProofError,
    },
    #[error("{object}: {what} does not match")]
    Mismatch { object: String, what: Mismatched },
    #[error("{object}: the decrypted value is not g^t for any count t ≤ {max}")]
    CountOutOfRange { object: String, max: u64 },
}

/// What did not match in a decryption. A verifier files each under its own check by matching
/// these, never by the message text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mismatched {
    /// A part of a published document that must repeat what votum computed (ids, the sets of
    /// contests and selections, the ciphertext decrypted), or has the wrong shape.
    Document(String),
    /// A guardian compensating for itself.
    SelfCompensation(String),
    /// A compensation for a guardian who took part.
    CompensationForPresent(String),
    /// A guardian's share outside the subgroup.
    ShareNotInSubgroup(String),
    /// A guardian's proof commitments outside the subgroup.
    CommitmentsNotInSubgroup(String),
    /// The compensated shares could not be combined.
    CompensatedShares,
    /// A recovered part names other guardians than where it sits.
    RecoveredPartIds,
    /// A published recovery key differs from the one recomputed from the public commitments.
    RecoveryKey { helper: String, missing: String },
    /// A rebuilt share of a missing guardian differs from the one recomputed.
    RebuiltShare(String),
    /// The decrypted value.
    Value,
    /// The count.
    Tally,
}

impl std::fmt::Display for Mismatched {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Document(what) => f.write_str(what),
            Self::SelfCompensation(g) => write!(f, "compensation by guardian {g:?} for itself"),
            Self::CompensationForPresent(g) => {
                write!(f, "compensation for guardian {g:?}, who is present")
            }
            Self::ShareNotInSubgroup(g) => write!(f, "share of {g:?} (not in the subgroup)"),
            Self::CommitmentsNotInSubgroup(g) => {
                write!(f, "proof commitments of {g:?} (not in the subgroup)")
            }
            Self::CompensatedShares => f.write_str("compensated shares"),
            Self::RecoveredPartIds => f.write_str("a recovered part's guardian ids"),
            Self::RecoveryKey { helper, missing } => {
                write!(f, "recovery key of {helper:?} for {missing:?}")
            }
            Self::RebuiltShare(g) => write!(f, "rebuilt share of {g:?}"),
            Self::Value => f.write_str("value"),
            Self::Tally => f.write_str("tally"),
        }
    }
}

fn mismatch(object: &str, what: Mismatched) -> DecryptionError {
    DecryptionError::Mismatch {
        object: object.to_string(),
        what,
    }
}

/// A contest's selections to decrypt: (selection id, ciphertext).
pub type ContestCiphertexts = (String, Vec<(String, Ciphertext<ModpGroup>)>);

/// What a published selection states: count, value, rebuilt shares by missing guardian.
type Stated = (u64, InRange, Vec<(String, InRange)>);

/// What is decrypted together: the encrypted tally or one spoiled ballot, as (contest,
/// selection, ciphertext) in manifest or ballot order.
#[derive(Clone, Debug)]
pub struct DecryptionTarget {
    pub object_id: String,
    pub contests: Vec<ContestCiphertexts>,
}

impl DecryptionTarget {
    /// The encrypted tally, in manifest order (electionguard names it "election-results").
    pub fn from_tally(
        object_id: &str,
        manifest: &Manifest,
        tally: &crate::ballot_box::TallyMap,
    ) -> Self {
        let group = ModpGroup::eg_4096();
        let contests = manifest
            .contests
            .iter()
            .map(|c| {
                let sels = c
                    .ballot_selections
                    .iter()
                    .map(|s| {
                        let key = (c.object_id.clone(), s.object_id.clone());
                        let ct = tally
                            .get(&key)
                            .cloned()
                            .unwrap_or_else(|| Ciphertext::zero(&group));
                        (s.object_id.clone(), ct)
                    })
                    .collect();
                (c.object_id.clone(), sels)
            })
            .collect();
        Self {
            object_id: object_id.to_string(),
            contests,
        }
    }

    /// A submitted ballot's real (non-placeholder) selections, as electionguard decrypts a
    /// spoiled ballot. The ballot must already have passed the ballot box.
    pub fn from_ballot_json(json: &str) -> Result<Self, DecryptionError> {
        // the parser checks ranges only; decryption needs subgroup members
        let ballot = parse_ballot(json)?.check_members()?;
        let contests = ballot
            .contests
            .into_iter()
            .map(|c| {
                let sels = c
                    .selections
                    .into_iter()
                    .filter(|s| !s.is_placeholder)
                    .map(|s| (s.object_id, s.ciphertext))
                    .collect();
                (c.object_id, sels)
            })
            .collect();
        Ok(Self {
            object_id: ballot.object_id,
            contests,
        })
    }

    /// An encrypted tally in electionguard 1.4.0's `CiphertextTally` JSON, read in manifest
    /// order: every selection of the manifest must be there, each ciphertext a subgroup member.
    pub fn from_tally_json(manifest: &Manifest, v: &Value) -> Result<Self, DecryptionError> {
        let g = ModpGroup::eg_4096();
        let object_id = json::text(v, "object_id", "encrypted tally")?.to_string();
        let contests = json::field(v, "contests", &object_id)?;
        let mut out = Vec::with_capacity(manifest.contests.len());
        let mut read_all = Vec::with_capacity(manifest.contests.len());
        for c in &manifest.contests {
            let object = format!("{object_id}/{}", c.object_id);
            let sels = json::field(contests, &c.object_id, &object_id)?;
            let sels = json::field(sels, "selections", &object)?;
            let read: Vec<(String, json::CiphertextInRange)> = c
                .ballot_selections
                .par_iter()
                .map(|s| {
                    let object = format!("{object}/{}", s.object_id);
                    let ct = json::field(
                        json::field(sels, &s.object_id, &object)?,
                        "ciphertext",
                        &object,
                    )?;
                    Ok((
                        s.object_id.clone(),
                        json::ciphertext_in_range(&g, ct, &object)?,
                    ))
                })
                .collect::<Result<_, FieldError>>()?;
            read_all.push((c.object_id.clone(), read));
        }
        // subgroup membership of all of them at once, in manifest order
        let cts = read_all
            .iter()
            .flat_map(|(_, sels)| sels.iter().map(|(_, ct)| ct.clone()))
            .collect();
        let mut cts = json::check_ciphertexts(&g, cts)
            .map_err(|(bad, what)| {
                let place = read_all
                    .iter()
                    .flat_map(|(c, sels)| sels.iter().map(move |(s, _)| (c, s)))
                    .nth(bad)
                    .map_or_else(
                        || object_id.clone(),
                        |(c, s)| format!("{object_id}/{c}/{s}"),
                    );
                FieldError::BadElement {
                    object: place,
                    what,
                    reason: votum_group::GroupError::NotInSubgroup,
                }
            })?
            .into_iter();
        for (c, sels) in read_all {
            let checked = sels.into_iter().map(|(s, _)| s).zip(cts.by_ref()).collect();
            out.push((c, checked));
        }
        Ok(Self {
            object_id,
            contests: out,
        })
    }

    /// All ciphertexts, in order; shares are given in this order.
    pub fn ciphertexts(&self) -> Vec<Ciphertext<ModpGroup>> {
        self.contests
            .iter()
            .flat_map(|(_, sels)| sels.iter().map(|(_, ct)| ct.clone()))
            .collect()
    }

    fn names(&self) -> Vec<String> {
        self.contests
            .iter()
            .flat_map(|(c, sels)| sels.iter().map(move |(s, _)| format!("{c}/{s}")))
            .collect()
    }

    pub fn len(&self) -> usize {
        self.contests.iter().map(|(_, s)| s.len()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// One present guardian's shares of a whole target, in [`DecryptionTarget::ciphertexts`] order.
#[derive(Clone, Debug)]
pub struct GuardianShares {
    pub guardian_id: String,
    pub shares: Vec<ProvenShare>,
}

/// The format tag of votum's decryption-share message (spec/64.7).
pub const SHARES_FORMAT: &str = "votum-eg-shares/1";

/// A guardian's proven shares of one target as a message: its own (`missing` is `None`) or
/// compensated for a missing guardian, in [`DecryptionTarget::ciphertexts`] order.
pub fn shares_to_json(
    guardian_id: &str,
    missing: Option<&str>,
    object_id: &str,
    shares: &[ProvenShare],
) -> Value {
    json!({
        "format": SHARES_FORMAT,
        "object_id": object_id,
        "guardian_id": guardian_id,
        "missing_guardian_id": missing,
        "shares": shares
            .iter()
            .map(|s| json!({"share": json::el(&s.share), "proof": json::cp_json(&s.proof)}))
            .collect::<Vec<_>>(),
    })
}

/// Reads [`shares_to_json`]: (object id, guardian id, missing guardian id, shares). Values are
/// range-checked here; each share's proof (which forces membership) is checked on decryption.
#[allow(clippy::type_complexity)]
pub fn shares_from_json(
    v: &Value,
) -> Result<(String, String, Option<String>, Vec<ProvenShare>), DecryptionError> {
    let g = ModpGroup::eg_4096();
    let object = "decryption shares";
    let format = json::text(v, "format", object)?;
    if format != SHARES_FORMAT {
        return Err(FieldError::Format {
            object: object.into(),
            message: format!("format {format:?} is not {SHARES_FORMAT:?}"),
        }
        .into());
    }
    let object_id = json::text(v, "object_id", object)?.to_string();
    let guardian = json::text(v, "guardian_id", object)?.to_string();
    let missing = match json::field(v, "missing_guardian_id", object)? {
        Value::Null => None,
        Value::String(m) => Some(m.clone()),
        _ => {
            return Err(FieldError::Format {
                object: object.into(),
                message: "missing_guardian_id must be a string or null".into(),
            }
            .into())
        }
    };
    let object = format!("shares of {guardian:?} for {object_id:?}");
    let list = json::field(v, "shares", &object)?
        .as_array()
        .ok_or_else(|| FieldError::Format {
            object: object.clone(),
            message: "shares must be a list".into(),
        })?;
    let shares = list
        .par_iter()
        .map(|s| {
            Ok(ProvenShare {
                // a member once its Jacobi symbol and proof are checked (check_shares, spec/64.4)
                share: json::in_range(&g, s, "share", &object)?.bound_by_proof(),
                proof: json::parse_cp(&g, json::field(s, "proof", &object)?, &object)?,
            })
        })
        .collect::<Result<Vec<_>, FieldError>>()?;
    Ok((object_id, guardian, missing, shares))
}

/// A present guardian's shares standing in for a missing one.
#[derive(Clone, Debug)]
pub struct CompensatedShares {
    pub guardian_id: String,
    pub missing_guardian_id: String,
    pub shares: Vec<ProvenShare>,
}

/// How one guardian's part of a selection was obtained.
#[derive(Clone, Debug)]
pub enum SelectionShare {
    Direct {
        guardian_id: String,
        share: ProvenShare,
    },
    /// Rebuilt from compensated parts: (helper id, recovery key, part), in helper order.
    Reconstructed {
        guardian_id: String,
        share: ModElement,
        parts: Vec<(String, ModElement, ProvenShare)>,
    },
}

#[derive(Clone, Debug)]
pub struct PlaintextSelection {
    pub object_id: String,
    pub count: u64,
    pub value: ModElement,
    pub message: Ciphertext<ModpGroup>,
    pub shares: Vec<SelectionShare>,
}

/// A decrypted tally or spoiled ballot.
#[derive(Clone, Debug)]
pub struct PlaintextRecord {
    pub object_id: String,
    pub contests: Vec<(String, Vec<PlaintextSelection>)>,
}

impl PlaintextRecord {
    /// selection id -> count.
    pub fn counts(&self) -> BTreeMap<String, u64> {
        self.contests
            .iter()
            .flat_map(|(_, sels)| sels.iter().map(|s| (s.object_id.clone(), s.count)))
            .collect()
    }

    /// electionguard 1.4.0's `PlaintextTally` JSON (also its spoiled-ballot plaintexts).
    pub fn to_eg14_json(&self) -> Value {
        let mut contests = Map::new();
        for (cid, sels) in &self.contests {
            let mut selections = Map::new();
            for s in sels {
                let shares: Vec<Value> = s
                    .shares
                    .iter()
                    .map(|share| share_json(&s.object_id, share))
                    .collect();
                selections.insert(
                    s.object_id.clone(),
                    json!({
                        "object_id": s.object_id,
                        "tally": s.count,
                        "value": json::el(&s.value),
                        "message": json::ciphertext_json(&s.message),
                        "shares": shares,
                    }),
                );
            }
            contests.insert(
                cid.clone(),
                json!({"object_id": cid, "selections": Value::Object(selections)}),
            );
        }
        json!({"object_id": self.object_id, "contests": Value::Object(contests)})
    }
}

fn share_json(selection_id: &str, share: &SelectionShare) -> Value {
    match share {
        SelectionShare::Direct { guardian_id, share } => json!({
            "object_id": selection_id,
            "guardian_id": guardian_id,
            "share": json::el(&share.share),
            "proof": json::cp_json(&share.proof),
            "recovered_parts": Value::Null,
        }),
        SelectionShare::Reconstructed {
            guardian_id,
            share,
            parts,
        } => {
            let mut recovered = Map::new();
            for (helper, recovery_key, part) in parts {
                recovered.insert(
                    helper.clone(),
                    json!({
                        "object_id": selection_id,
                        "guardian_id": helper,
                        "missing_guardian_id": guardian_id,
                        "share": json::el(&part.share),
                        "recovery_key": json::el(recovery_key),
                        "proof": json::cp_json(&part.proof),
                    }),
                );
            }
            json!({
                "object_id": selection_id,
                "guardian_id": guardian_id,
                "share": json::el(share),
                "proof": Value::Null,
                "recovered_parts": Value::Object(recovered),
            })
        }
    }
}

/// Checks shares and combines them, for one election's guardians.
pub struct Decryptor {
    group: ModpGroup,
    oracle: Eg1Oracle,
    guardians: Vec<GuardianPublicKey>,
    quorum: usize,
    dlog: DlogTable<ModpGroup>,
}

impl Decryptor {
    /// `guardians` are all of the election's guardian records (checked here); counts are
    /// searched in `[0, max_count]`.
    pub fn new(
        guardians: Vec<GuardianPublicKey>,
        quorum: usize,
        extended_base_hash: Integer,
        max_count: u64,
    ) -> Result<Self, DecryptionError> {
        verify_guardians(&ModpGroup::eg_4096(), &guardians, quorum)?;
        Ok(Self::from_checked(
            guardians,
            quorum,
            extended_base_hash,
            max_count,
        ))
    }

    /// [`Decryptor::new`] for guardian records the caller has already checked, or reports on
    /// separately: the independent verifier checks them under V-GUARD-01/02 and still checks the
    /// shares against the published keys when a guardian record is wrong, so that each finding
    /// is reported under its own check (spec/50).
    pub fn from_checked(
        guardians: Vec<GuardianPublicKey>,
        quorum: usize,
        extended_base_hash: Integer,
        max_count: u64,
    ) -> Self {
        let group = ModpGroup::eg_4096();
        let dlog = DlogTable::new(&group, max_count);
        Self {
            group,
            oracle: Eg1Oracle::new(extended_base_hash),
            guardians,
            quorum,
            dlog,
        }
    }

    pub fn guardians(&self) -> &[GuardianPublicKey] {
        &self.guardians
    }

    fn guardian(&self, id: &str) -> Result<&GuardianPublicKey, DecryptionError> {
        self.guardians
            .iter()
            .find(|g| g.id == id)
            .ok_or_else(|| DecryptionError::UnknownGuardian(id.to_string()))
    }

    /// Checks one share message on its own, as a service does when a guardian posts it: the
    /// guardian is known, a compensating guardian is not the missing one, there is one share per
    /// ciphertext of `target`, and every proof verifies against the guardian's key (or, for a
    /// compensated share, the missing guardian's recovery key for this helper). Whether enough
    /// guardians are present is [`Decryptor::decrypt`]'s question.
    pub fn check_shares(
        &self,
        target: &DecryptionTarget,
        guardian_id: &str,
        missing: Option<&str>,
        shares: &[ProvenShare],
    ) -> Result<(), DecryptionError> {
        let g = &self.group;
        let helper = self.guardian(guardian_id)?;
        let key = match missing {
            None => helper.key().clone(),
            Some(m) => {
                let lost = self.guardian(m)?;
                if lost.id == helper.id {
                    return Err(mismatch(
                        &target.object_id,
                        Mismatched::SelfCompensation(m.to_string()),
                    ));
                }
                lost.recovery_key(g, helper.sequence_order)
            }
        };
        if shares.len() != target.len() {
            return Err(DecryptionError::ShareCount {
                guardian: guardian_id.to_string(),
                expected: target.len(),
                got: shares.len(),
            });
        }
        let names = target.names();
        let cts = target.ciphertexts();
        shares
            .par_iter()
            .zip(cts.par_iter())
            .zip(names.par_iter())
            .try_for_each(|((share, ct), name)| {
                if share.share.value().jacobi(g.p()) != 1 {
                    return Err(mismatch(
                        name,
                        Mismatched::ShareNotInSubgroup(guardian_id.to_string()),
                    ));
                }
                verify_share(g, &self.oracle, &key, ct, share).map_err(|error| {
                    DecryptionError::Proof {
                        guardian: guardian_id.to_string(),
                        for_missing: missing.map(str::to_string),
                        object: name.clone(),
                        error,
                    }
                })
            })
    }

    /// Checks every share and combines them into counts. `direct` holds one entry per present
    /// guardian; `compensated` one per (present helper, missing guardian) pair.
    pub fn decrypt(
        &self,
        target: &DecryptionTarget,
        direct: &[GuardianShares],
        compensated: &[CompensatedShares],
    ) -> Result<PlaintextRecord, DecryptionError> {
        let g = &self.group;
        let n = target.len();
        let names = target.names();
        let cts = target.ciphertexts();

        // who is present, who is missing
        let mut present: Vec<&GuardianPublicKey> = Vec::new();
        let mut seen = HashSet::new();
        for d in direct {
            let guardian = self.guardian(&d.guardian_id)?;
            if !seen.insert(d.guardian_id.as_str()) {
                return Err(DecryptionError::DuplicateShare(d.guardian_id.clone()));
            }
            if d.shares.len() != n {
                return Err(DecryptionError::ShareCount {
                    guardian: d.guardian_id.clone(),
                    expected: n,
                    got: d.shares.len(),
                });
            }
            present.push(guardian);
        }
        if present.len() < self.quorum {
            return Err(DecryptionError::TooFewGuardians {
                needed: self.quorum,
                got: present.len(),
            });
        }
        let missing: Vec<&GuardianPublicKey> = self
            .guardians
            .iter()
            .filter(|g| !seen.contains(g.id.as_str()))
            .collect();
        // helpers per missing guardian, with the recovery key recomputed from commitments
        let mut helpers: HashMap<&str, Vec<(&GuardianPublicKey, ModElement, &CompensatedShares)>> =
            HashMap::new();
        let mut pairs = HashSet::new();
        for c in compensated {
            let helper = self.guardian(&c.guardian_id)?;
            let lost = self.guardian(&c.missing_guardian_id)?;
            if !seen.contains(helper.id.as_str()) {
                return Err(DecryptionError::UnknownGuardian(format!(
                    "{} (compensating while not present)",
                    helper.id
                )));
            }
            if seen.contains(lost.id.as_str()) {
                return Err(mismatch(
                    &target.object_id,
                    Mismatched::CompensationForPresent(lost.id.clone()),
                ));
            }
            if !pairs.insert((helper.id.as_str(), lost.id.as_str())) {
                return Err(DecryptionError::DuplicateShare(format!(
                    "{} for {}",
                    helper.id, lost.id
                )));
            }
            if c.shares.len() != n {
                return Err(DecryptionError::ShareCount {
                    guardian: c.guardian_id.clone(),
                    expected: n,
                    got: c.shares.len(),
                });
            }
            let key = lost.recovery_key(g, helper.sequence_order);
            helpers
                .entry(lost.id.as_str())
                .or_default()
                .push((helper, key, c));
        }
        let mut weights: HashMap<&str, Vec<ModScalar>> = HashMap::new();
        for m in &missing {
            let hs = helpers.entry(m.id.as_str()).or_default();
            if hs.len() < self.quorum {
                return Err(DecryptionError::NotEnoughHelpers {
                    missing: m.id.clone(),
                    needed: self.quorum,
                    got: hs.len(),
                });
            }
            hs.sort_by_key(|(h, _, _)| h.sequence_order);
            let xs: Vec<u64> = hs.iter().map(|(h, _, _)| h.sequence_order).collect();
            let w = xs
                .iter()
                .map(|&x| lagrange_coefficient(g, x, &xs))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|_| DecryptionError::DuplicateShare(m.id.clone()))?;
            weights.insert(m.id.as_str(), w);
        }

        // every proof: challenges and Jacobi symbols one by one, the equations in one batch
        // (spec/64.4); when the batch fails, each proof on its own names the culprit
        let mut keys: Vec<&ModElement> = Vec::new();
        // (guardian, the missing guardian a compensated share stands in for), key, ciphertext, share
        type Check<'s> = ((&'s str, Option<&'s str>), usize, usize, &'s ProvenShare);
        let mut checks: Vec<Check<'_>> = Vec::new();
        for (d, p) in direct.iter().zip(&present) {
            keys.push(p.key());
            for (i, s) in d.shares.iter().enumerate() {
                checks.push(((d.guardian_id.as_str(), None), keys.len() - 1, i, s));
            }
        }
        for hs in helpers.values() {
            for (h, key, c) in hs {
                keys.push(key);
                for (i, s) in c.shares.iter().enumerate() {
                    checks.push((
                        (h.id.as_str(), Some(c.missing_guardian_id.as_str())),
                        keys.len() - 1,
                        i,
                        s,
                    ));
                }
            }
        }
        let verify_one = |((who, for_missing), key, i, share): &Check<'_>| {
            verify_share(g, &self.oracle, keys[*key], &cts[*i], share).map_err(|error| {
                DecryptionError::Proof {
                    guardian: who.to_string(),
                    for_missing: for_missing.map(str::to_string),
                    object: names[*i].clone(),
                    error,
                }
            })
        };
        checks.par_iter().try_for_each(|chk| {
            let ((who, _), _, i, s) = chk;
            let ct = &cts[*i];
            if s.share.value().jacobi(g.p()) != 1 {
                return Err(mismatch(
                    &names[*i],
                    Mismatched::ShareNotInSubgroup(who.to_string()),
                ));
            }
            let challenge_ok = s
                .proof
                .check_challenge(g, &self.oracle, &[&ct.pad, &ct.data], &[&s.share])
                .is_ok();
            let commitments_ok = [&s.proof.pad, &s.proof.data]
                .iter()
                .all(|x| x.value().jacobi(g.p()) == 1);
            if !challenge_ok || !commitments_ok {
                verify_one(chk)?;
                return Err(mismatch(
                    &names[*i],
                    Mismatched::CommitmentsNotInSubgroup(who.to_string()),
                ));
            }
            Ok(())
        })?;
        let batch: Vec<crate::batch::ShareCheck<'_>> = checks
            .iter()
            .map(|(_, key, i, share)| crate::batch::ShareCheck {
                key: *key,
                ciphertext: *i,
                share,
            })
            .collect();
        let mut rng = crate::batch::batch_rng();
        if !crate::batch::shares_hold(g, &keys, &cts, &batch, &mut rng) {
            checks.par_iter().try_for_each(verify_one)?;
        }

        // combine, selection by selection
        let combined: Vec<PlaintextSelection> = (0..n)
            .into_par_iter()
            .map(|i| -> Result<PlaintextSelection, DecryptionError> {
                let mut product = g.identity();
                let mut shares = Vec::with_capacity(self.guardians.len());
                for (d, _) in direct.iter().zip(&present) {
                    product = g.op(&product, &d.shares[i].share);
                    shares.push(SelectionShare::Direct {
                        guardian_id: d.guardian_id.clone(),
                        share: d.shares[i].clone(),
                    });
                }
                for m in &missing {
                    let hs = &helpers[m.id.as_str()];
                    let bases: Vec<ModElement> = hs
                        .iter()
                        .map(|(_, _, c)| c.shares[i].share.clone())
                        .collect();
                    let rebuilt = g
                        .signed_multi_pow(&bases, &weights[m.id.as_str()])
                        .ok_or_else(|| mismatch(&names[i], Mismatched::CompensatedShares))?;
                    product = g.op(&product, &rebuilt);
                    shares.push(SelectionShare::Reconstructed {
                        guardian_id: m.id.clone(),
                        share: rebuilt,
                        parts: hs
                            .iter()
                            .map(|(h, key, c)| (h.id.clone(), key.clone(), c.shares[i].clone()))
                            .collect(),
                    });
                }
                let value = g.div(&cts[i].data, &product);
                let count =
                    self.dlog
                        .log(&value)
                        .map_err(|_| DecryptionError::CountOutOfRange {
                            object: names[i].clone(),
                            max: self.dlog.max(),
                        })?;
                let object_id = names[i]
                    .split_once('/')
                    .map_or(names[i].clone(), |(_, s)| s.to_string());
                Ok(PlaintextSelection {
                    object_id,
                    count,
                    value,
                    message: cts[i].clone(),
                    shares,
                })
            })
            .collect::<Result<_, _>>()?;

        let mut it = combined.into_iter();
        let contests = target
            .contests
            .iter()
            .map(|(cid, sels)| (cid.clone(), it.by_ref().take(sels.len()).collect()))
            .collect();
        Ok(PlaintextRecord {
            object_id: target.object_id.clone(),
            contests,
        })
    }

    /// Re-checks a published `PlaintextTally` (or spoiled-ballot plaintext) against `target`, the
    /// ciphertexts votum computed itself: same selections, same messages, every share's proof,
    /// recovery keys recomputed, rebuilt shares, values and counts recomputed and compared.
    pub fn verify_eg14(
        &self,
        target: &DecryptionTarget,
        published: &Value,
    ) -> Result<PlaintextRecord, DecryptionError> {
        let g = &self.group;
        let obj = &target.object_id;
        if json::text(published, "object_id", obj)? != obj {
            return Err(mismatch(obj, Mismatched::Document("object_id".into())));
        }
        let contests = json::field(published, "contests", obj)?
            .as_object()
            .ok_or_else(|| mismatch(obj, Mismatched::Document("contests (not a map)".into())))?;
        let expected: usize = target.contests.len();
        if contests.len() != expected {
            return Err(mismatch(
                obj,
                Mismatched::Document("the set of contests".into()),
            ));
        }
        let mut direct: BTreeMap<String, Vec<ProvenShare>> = BTreeMap::new();
        let mut comp: BTreeMap<(String, String), Vec<ProvenShare>> = BTreeMap::new();
        let mut stated: Vec<Stated> = Vec::new();
        let mut recovery: HashMap<(String, String), ModElement> = HashMap::new();
        for (cid, sels) in &target.contests {
            let c = contests.get(cid).ok_or_else(|| {
                mismatch(
                    obj,
                    Mismatched::Document(format!("contest {cid:?} (absent)")),
                )
            })?;
            let selections = json::field(c, "selections", cid)?
                .as_object()
                .ok_or_else(|| {
                    mismatch(cid, Mismatched::Document("selections (not a map)".into()))
                })?;
            if selections.len() != sels.len() {
                return Err(mismatch(
                    cid,
                    Mismatched::Document("the set of selections".into()),
                ));
            }
            for (sid, ct) in sels {
                let name = format!("{cid}/{sid}");
                let s = selections.get(sid).ok_or_else(|| {
                    mismatch(&name, Mismatched::Document("selection (absent)".into()))
                })?;
                let message =
                    json::ciphertext_in_range(g, json::field(s, "message", &name)?, &name)?;
                if !message.matches(ct) {
                    return Err(mismatch(
                        &name,
                        Mismatched::Document("message (the ciphertext decrypted)".into()),
                    ));
                }
                let count = json::uint(s, "tally", &name)?;
                // range only: each is compared with what votum computes (the message, the value, the
                // rebuilt shares, the recovery keys) or its proof forces it into the subgroup
                // once its Jacobi symbol is checked (the shares; spec/64.4)
                let value = json::in_range(g, s, "value", &name)?;
                let shares = json::field(s, "shares", &name)?.as_array().ok_or_else(|| {
                    mismatch(&name, Mismatched::Document("shares (not a list)".into()))
                })?;
                let mut rebuilt = Vec::new();
                for sh in shares {
                    let gid = json::text(sh, "guardian_id", &name)?.to_string();
                    let share = json::in_range(g, sh, "share", &name)?;
                    match json::field(sh, "recovered_parts", &name)? {
                        Value::Null => {
                            let proof = json::parse_cp(g, json::field(sh, "proof", &name)?, &name)?;
                            direct.entry(gid).or_default().push(ProvenShare {
                                share: share.bound_by_proof(),
                                proof,
                            });
                        }
                        Value::Object(parts) => {
                            for (helper, part) in parts {
                                if json::text(part, "missing_guardian_id", &name)? != gid
                                    || json::text(part, "guardian_id", &name)? != helper
                                {
                                    return Err(mismatch(&name, Mismatched::RecoveredPartIds));
                                }
                                let part_share =
                                    json::in_range(g, part, "share", &name)?.bound_by_proof();
                                let proof =
                                    json::parse_cp(g, json::field(part, "proof", &name)?, &name)?;
                                let recovery_key = json::in_range(g, part, "recovery_key", &name)?;
                                let key = match recovery.entry((helper.clone(), gid.clone())) {
                                    Entry::Occupied(e) => e.into_mut(),
                                    Entry::Vacant(e) => {
                                        let h = self.guardian(helper)?;
                                        let lost = self.guardian(&gid)?;
                                        e.insert(lost.recovery_key(g, h.sequence_order))
                                    }
                                };
                                if !recovery_key.matches(key) {
                                    return Err(mismatch(
                                        &name,
                                        Mismatched::RecoveryKey {
                                            helper: helper.clone(),
                                            missing: gid.clone(),
                                        },
                                    ));
                                }
                                comp.entry((helper.clone(), gid.clone())).or_default().push(
                                    ProvenShare {
                                        share: part_share,
                                        proof,
                                    },
                                );
                            }
                            rebuilt.push((gid, share));
                        }
                        _ => {
                            return Err(mismatch(
                                &name,
                                Mismatched::Document("recovered_parts (not a map or null)".into()),
                            ))
                        }
                    }
                }
                stated.push((count, value, rebuilt));
            }
        }
        let direct: Vec<GuardianShares> = direct
            .into_iter()
            .map(|(guardian_id, shares)| GuardianShares {
                guardian_id,
                shares,
            })
            .collect();
        let compensated: Vec<CompensatedShares> = comp
            .into_iter()
            .map(
                |((guardian_id, missing_guardian_id), shares)| CompensatedShares {
                    guardian_id,
                    missing_guardian_id,
                    shares,
                },
            )
            .collect();
        let record = self.decrypt(target, &direct, &compensated)?;
        let ours = record.contests.iter().flat_map(|(_, s)| s.iter());
        for (mine, (count, value, rebuilt)) in ours.zip(&stated) {
            let name = &mine.object_id;
            if !value.matches(&mine.value) {
                return Err(mismatch(name, Mismatched::Value));
            }
            if mine.count != *count {
                return Err(mismatch(name, Mismatched::Tally));
            }
            for (gid, share) in rebuilt {
                let ok = mine.shares.iter().any(|s| {
                    matches!(s, SelectionShare::Reconstructed { guardian_id, share: m, .. }
                        if guardian_id == gid && share.matches(m))
                });
                if !ok {
                    return Err(mismatch(name, Mismatched::RebuiltShare(gid.clone())));
                }
            }
        }
        Ok(record)
    }
}
