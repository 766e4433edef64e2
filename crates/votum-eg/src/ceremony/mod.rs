//! The key ceremony (spec/63-eg-key-ceremony.md): guardians with secret polynomials, public
//! coefficient commitments with Schnorr proofs (ElectionGuard 1.0 challenges, so electionguard
//! 1.4.0 accepts them), partial key backups sealed to each other guardian with hashed ElGamal,
//! backup verification against the sender's commitments, the public challenge that settles a
//! disputed backup, and the joint key with its commitment hash.
//!
//! A [`Guardian`] holds its secrets (its polynomial and the backups it received) and never gives
//! them out; its public side is a [`GuardianPublicKey`], written as electionguard's
//! `GuardianRecord`. The same guardian object produces decryption shares (module `decrypt`).

//!
//! Public side here ([`GuardianPublicKey`], [`verify_guardians`], [`joint_key`]); the sealed
//! backups and challenge answers in [`backup`], the guardian itself in [`guardian`] (feature
//! `prove`), its secret-state file in [`crate::secret_state`].

use rayon::prelude::*;
use serde_json::{json, Value};
use votum_arith::Integer;
use votum_elgamal::threshold::public_share;
use votum_group::{Group, InRange, ModElement, ModpGroup};
use votum_hash::eg::{hash_elems, EgHashItem};
use votum_proofs::{ChallengeOracle, Eg1Oracle, ProofError, ProofKind, SchnorrProof};

use crate::json::{self, FieldError};

#[cfg(feature = "prove")]
pub mod backup;
#[cfg(feature = "prove")]
pub mod guardian;

#[cfg(feature = "prove")]
pub use backup::{BackupChallengeResponse, PartialKeyBackup};
#[cfg(feature = "prove")]
pub use guardian::{run_ceremony, run_ceremony_with, Guardian};

/// Why a key-ceremony message was refused. A refused message changes nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CeremonyError {
    #[error(transparent)]
    Field(#[from] FieldError),
    #[error("guardian {guardian:?}: {expected} coefficient commitments expected (the quorum), got {got}")]
    WrongQuorum {
        guardian: String,
        expected: usize,
        got: usize,
    },
    #[error("quorum {quorum} is impossible with {guardians} guardians")]
    BadQuorum { quorum: usize, guardians: usize },
    #[error("guardian {guardian:?}: sequence order {order} is outside 1..={guardians}")]
    BadSequenceOrder {
        guardian: String,
        order: u64,
        guardians: usize,
    },
    #[error("two guardians share the id or sequence order of {0:?}")]
    DuplicateGuardian(String),
    #[error("guardian {guardian:?}: {what}")]
    KeyMismatch {
        guardian: String,
        what: &'static str,
    },
    #[error("guardian {guardian:?}, commitment {index}: {error}")]
    Proof {
        guardian: String,
        index: usize,
        error: ProofError,
    },
    #[error("backup from {sender:?} is addressed to {addressed:?}, not to {receiver:?}")]
    Misaddressed {
        sender: String,
        receiver: String,
        addressed: String,
    },
    #[error("backup from {sender:?} to {receiver:?} cannot be opened (wrong key or tampered)")]
    Unreadable { sender: String, receiver: String },
    #[error("backup from {sender:?} to {receiver:?} is not on the sender's committed polynomial")]
    InvalidBackup { sender: String, receiver: String },
    #[error("unknown guardian {0:?}")]
    UnknownGuardian(String),
    #[error("guardian {holder:?} holds no verified backup from {missing:?}")]
    MissingBackup { holder: String, missing: String },
}

pub(crate) fn proof_error(guardian: &str, index: usize, error: ProofError) -> CeremonyError {
    CeremonyError::Proof {
        guardian: guardian.to_string(),
        index,
        error,
    }
}

/// A guardian's public record: id, sequence order (its x-coordinate, 1..=n), the commitments
/// `K_j = g^{a_j}` to its polynomial's coefficients (`K_0` is its election public key) and a
/// Schnorr proof of knowledge for each.
#[derive(Clone, Debug)]
pub struct GuardianPublicKey {
    pub id: String,
    pub sequence_order: u64,
    pub commitments: Vec<ModElement>,
    pub proofs: Vec<SchnorrProof<ModpGroup>>,
}

impl PartialEq for GuardianPublicKey {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
            && self.sequence_order == other.sequence_order
            && self.commitments == other.commitments
            && self.proofs.len() == other.proofs.len()
            && self.proofs.iter().zip(&other.proofs).all(|(a, b)| {
                a.commitment == b.commitment
                    && a.challenge == b.challenge
                    && a.response == b.response
            })
    }
}

impl Eq for GuardianPublicKey {}

impl GuardianPublicKey {
    /// The guardian's election public key `K_i = K_{i,0}`.
    pub fn key(&self) -> &ModElement {
        &self.commitments[0]
    }

    /// Checks the record on its own: `quorum` commitments, each in the subgroup (by parsing) with
    /// a valid Schnorr proof under ElectionGuard 1.0 challenges `H(K_j, h_j)`.
    pub fn verify(&self, group: &ModpGroup, quorum: usize) -> Result<(), CeremonyError> {
        if self.commitments.len() != quorum || self.proofs.len() != quorum {
            return Err(CeremonyError::WrongQuorum {
                guardian: self.id.clone(),
                expected: quorum,
                got: self.commitments.len().min(self.proofs.len()),
            });
        }
        let oracle = Eg1Oracle::new(Integer::ZERO);
        self.commitments
            .par_iter()
            .zip(self.proofs.par_iter())
            .enumerate()
            .try_for_each(|(j, (k, proof))| {
                proof
                    .verify(group, &oracle, k)
                    .map_err(|e| proof_error(&self.id, j, e))
            })
    }

    /// `g^{P_i(x)} = Π K_j^{x^j}`: the public image of this guardian's share for sequence order
    /// `x` (the recovery public key of electionguard's compensated decryption).
    pub fn recovery_key(&self, group: &ModpGroup, x: u64) -> ModElement {
        // public_share fails only on mismatched lengths, impossible here
        public_share(group, &self.commitments, x).unwrap_or_else(|_| group.identity())
    }

    /// electionguard 1.4.0's `GuardianRecord` JSON.
    pub fn to_eg14_json(&self) -> Value {
        json!({
            "guardian_id": self.id,
            "sequence_order": self.sequence_order,
            "election_public_key": json::el(self.key()),
            "election_commitments": self.commitments.iter().map(json::el).collect::<Vec<_>>(),
            "election_proofs": self
                .commitments
                .iter()
                .zip(&self.proofs)
                .map(|(k, p)| json::schnorr_json(k, p))
                .collect::<Vec<_>>(),
        })
    }

    /// Reads a `GuardianRecord` (every element checked for subgroup membership, in one batch;
    /// the proofs are checked by [`GuardianPublicKey::verify`]).
    pub fn from_eg14_json(group: &ModpGroup, v: &Value) -> Result<Self, CeremonyError> {
        let unchecked = Unchecked::read(group, v)?;
        let commitments = group
            .check_all(unchecked.commitments, &mut crate::batch::batch_rng())
            .map_err(|_| FieldError::BadElement {
                object: format!("guardian {:?}", unchecked.id),
                what: "election_commitments",
                reason: votum_group::GroupError::NotInSubgroup,
            })?;
        Ok(Self {
            id: unchecked.id,
            sequence_order: unchecked.sequence_order,
            commitments,
            proofs: unchecked.proofs,
        })
    }

    /// Reads a set of records (spec/63.1): each as [`GuardianPublicKey::from_eg14_json`] does, in
    /// parallel, with the commitments of all of them checked for membership in one batch. The
    /// error is the one the first bad record gives on its own.
    pub fn from_eg14_json_many(
        group: &ModpGroup,
        vs: &[Value],
    ) -> Result<Vec<Self>, CeremonyError> {
        let read = vs
            .par_iter()
            .map(|v| Unchecked::read(group, v))
            .collect::<Result<Vec<_>, _>>()?;
        let all: Vec<InRange> = read
            .iter()
            .flat_map(|r| r.commitments.iter().cloned())
            .collect();
        let Ok(mut members) = group.check_all(all, &mut crate::batch::batch_rng()) else {
            // name the culprit: the first record that fails on its own
            for v in vs {
                Self::from_eg14_json(group, v)?;
            }
            return Err(CeremonyError::Field(FieldError::Format {
                object: "guardian records".into(),
                message: "a commitment is not in the subgroup".into(),
            }));
        };
        let mut out = Vec::with_capacity(read.len());
        for r in read.into_iter().rev() {
            let commitments = members.split_off(members.len() - r.commitments.len());
            out.push(Self {
                id: r.id,
                sequence_order: r.sequence_order,
                commitments,
                proofs: r.proofs,
            });
        }
        out.reverse();
        Ok(out)
    }
}

/// A record read and range-checked, its commitments not yet tested for membership.
struct Unchecked {
    id: String,
    sequence_order: u64,
    commitments: Vec<InRange>,
    proofs: Vec<SchnorrProof<ModpGroup>>,
}

impl Unchecked {
    fn read(group: &ModpGroup, v: &Value) -> Result<Self, CeremonyError> {
        let object = "guardian record";
        let id = json::text(v, "guardian_id", object)?.to_string();
        let object = format!("guardian {id:?}");
        let sequence_order = json::uint(v, "sequence_order", &object)?;
        // the key and the proofs' public keys must equal commitments, and the commitments are
        // checked for membership together by the caller
        let key = json::in_range(group, v, "election_public_key", &object)?;
        let list = |name: &str| -> Result<&Vec<Value>, FieldError> {
            json::field(v, name, &object)?
                .as_array()
                .ok_or_else(|| FieldError::Format {
                    object: object.clone(),
                    message: format!("{name} must be a list"),
                })
        };
        let commitments = list("election_commitments")?
            .iter()
            .map(|c| json::in_range_value(group, c, "election_commitments", &object))
            .collect::<Result<Vec<_>, _>>()?;
        let mut proofs = Vec::new();
        for (j, p) in list("election_proofs")?.iter().enumerate() {
            let (public, proof) = json::parse_schnorr_in_range(group, p, &object)?;
            if commitments.get(j) != Some(&public) {
                return Err(CeremonyError::KeyMismatch {
                    guardian: id,
                    what: "a Schnorr proof's public_key is not the matching commitment",
                });
            }
            proofs.push(proof);
        }
        if commitments.first() != Some(&key) {
            return Err(CeremonyError::KeyMismatch {
                guardian: id,
                what: "election_public_key is not the first commitment",
            });
        }
        Ok(Self {
            id,
            sequence_order,
            commitments,
            proofs,
        })
    }
}

/// Checks a full set of guardian records for one election: `n` records with distinct ids and
/// sequence orders 1..=n, each valid for `quorum`.
pub fn verify_guardians(
    group: &ModpGroup,
    guardians: &[GuardianPublicKey],
    quorum: usize,
) -> Result<(), CeremonyError> {
    let n = guardians.len();
    if quorum == 0 || quorum > n {
        return Err(CeremonyError::BadQuorum {
            quorum,
            guardians: n,
        });
    }
    let mut ids = std::collections::HashSet::new();
    let mut orders = std::collections::HashSet::new();
    for g in guardians {
        if g.sequence_order == 0 || g.sequence_order > n as u64 {
            return Err(CeremonyError::BadSequenceOrder {
                guardian: g.id.clone(),
                order: g.sequence_order,
                guardians: n,
            });
        }
        if !ids.insert(g.id.as_str()) || !orders.insert(g.sequence_order) {
            return Err(CeremonyError::DuplicateGuardian(g.id.clone()));
        }
    }
    // the cheap checks one by one (lengths, challenges, Jacobi symbols of the proofs' commitments),
    // the equations in one batch (spec/63.1); any failure: each record on its own names the culprit
    let oracle = Eg1Oracle::new(Integer::ZERO);
    let shaped = guardians.iter().all(|g| {
        g.commitments.len() == quorum
            && g.proofs.len() == quorum
            && g.commitments.iter().zip(&g.proofs).all(|(k, p)| {
                p.commitment.value().jacobi(group.p()) == 1
                    && oracle.challenge(group, ProofKind::Schnorr, &[k, &p.commitment])
                        == p.challenge
            })
    });
    let checks: Vec<crate::batch::SchnorrCheck<'_>> = guardians
        .iter()
        .flat_map(|g| g.commitments.iter().zip(&g.proofs))
        .map(|(public, proof)| crate::batch::SchnorrCheck { public, proof })
        .collect();
    // one batch per thread (each with its own weights: every one must hold)
    let per_thread = checks
        .len()
        .div_ceil(rayon::current_num_threads().max(1))
        .max(1);
    if shaped
        && checks
            .par_chunks(per_thread)
            .all(|part| crate::batch::schnorr_hold(group, part, &mut crate::batch::batch_rng()))
    {
        return Ok(());
    }
    guardians.iter().try_for_each(|g| g.verify(group, quorum))
}

/// The joint election key `K = Π K_i` and electionguard's commitment hash
/// `H(K_{1,0}, …, K_{1,k−1}, K_{2,0}, …)` over the guardians in the order given (electionguard
/// publishes them by sequence order).
pub fn joint_key(guardians: &[GuardianPublicKey]) -> (ModElement, Integer) {
    let group = ModpGroup::eg_4096();
    let key = guardians
        .iter()
        .fold(group.identity(), |acc, g| group.op(&acc, g.key()));
    let items: Vec<EgHashItem> = guardians
        .iter()
        .flat_map(|g| g.commitments.iter())
        .map(|k| EgHashItem::Num(k.value().clone()))
        .collect();
    (key, hash_elems(&[EgHashItem::List(items)], group.order()))
}
