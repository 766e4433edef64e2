//! Threshold decryption (spec/64-eg-decryption.md): the encrypted tally or a spoiled ballot is
//! decrypted from the present guardians' shares and, for each missing guardian, from compensated
//! shares computed by present guardians from that guardian's backups. Every share's proof is
//! checked, recovery keys are recomputed from the missing guardian's commitments (never taken
//! from the record), missing shares are rebuilt by Lagrange interpolation, and counts come from
//! a discrete log. The result is electionguard 1.4.0's `PlaintextTally` JSON; the same code reads
//! and re-checks one written by the reference.
//!
//! Here the targets, the shares and the [`Decryptor`]; producing shares in [`prove`] (feature
//! `prove`), checking them in [`check`], combining them in [`combine`]; the JSON in [`crate::eg14`].

use std::collections::BTreeMap;

use votum_arith::Integer;
use votum_elgamal::{Ciphertext, DlogTable};
use votum_group::{InRange, ModElement, ModpGroup};
use votum_proofs::{ChaumPedersenProof, Eg1Oracle, ProofError};

use crate::ceremony::{verify_guardians, CeremonyError, GuardianPublicKey};
use crate::json::FieldError;
use crate::manifest::Manifest;
use crate::BallotError;

pub mod check;
mod combine;
#[cfg(feature = "prove")]
mod prove;

pub use crate::eg14::{shares_from_json, shares_to_json, SHARES_FORMAT};
pub use check::verify_share;

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

pub(crate) fn mismatch(object: &str, what: Mismatched) -> DecryptionError {
    DecryptionError::Mismatch {
        object: object.to_string(),
        what,
    }
}

/// A contest's selections to decrypt: (selection id, ciphertext).
pub type ContestCiphertexts = (String, Vec<(String, Ciphertext<ModpGroup>)>);

/// What a published selection states: count, value, rebuilt shares by missing guardian.
pub(crate) type Stated = (u64, InRange, Vec<(String, InRange)>);

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
        tally: &crate::ballot::TallyMap,
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

    /// All ciphertexts, in order; shares are given in this order.
    pub fn ciphertexts(&self) -> Vec<Ciphertext<ModpGroup>> {
        self.contests
            .iter()
            .flat_map(|(_, sels)| sels.iter().map(|(_, ct)| ct.clone()))
            .collect()
    }

    pub(crate) fn names(&self) -> Vec<String> {
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
}

/// Checks shares and combines them, for one election's guardians.
pub struct Decryptor {
    pub(crate) group: ModpGroup,
    pub(crate) oracle: Eg1Oracle,
    pub(crate) guardians: Vec<GuardianPublicKey>,
    pub(crate) quorum: usize,
    pub(crate) dlog: DlogTable<ModpGroup>,
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

    pub(crate) fn guardian(&self, id: &str) -> Result<&GuardianPublicKey, DecryptionError> {
        self.guardians
            .iter()
            .find(|g| g.id == id)
            .ok_or_else(|| DecryptionError::UnknownGuardian(id.to_string()))
    }
}

/// A decryption share `M = α^s` with its Chaum–Pedersen proof (ElectionGuard 1.0 challenge
/// `H(Q', α, β, a, b, M)`).
#[derive(Clone, Debug)]
pub struct ProvenShare {
    pub share: ModElement,
    pub proof: ChaumPedersenProof<ModpGroup>,
}
