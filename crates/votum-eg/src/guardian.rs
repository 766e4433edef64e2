//! The key ceremony (spec/63-eg-key-ceremony.md): guardians with secret polynomials, public
//! coefficient commitments with Schnorr proofs (ElectionGuard 1.0 challenges, so electionguard
//! 1.4.0 accepts them), partial key backups sealed to each other guardian with hashed ElGamal,
//! backup verification against the sender's commitments, the public challenge that settles a
//! disputed backup, and the joint key with its commitment hash.
//!
//! A [`Guardian`] holds its secrets (its polynomial and the backups it received) and never gives
//! them out; its public side is a [`GuardianPublicKey`], written as electionguard's
//! `GuardianRecord`. The same guardian object produces decryption shares (module `decrypt`).

#[cfg(feature = "prove")]
use std::collections::BTreeMap;
#[cfg(feature = "prove")]
use std::fmt;

#[cfg(feature = "prove")]
use rand_chacha::ChaCha20Rng;
#[cfg(feature = "prove")]
use rand_core::{CryptoRng, RngCore, SeedableRng};
use rayon::prelude::*;
use serde_json::{json, Value};
use votum_arith::Integer;
#[cfg(feature = "prove")]
use votum_elgamal::hashed::HashedCiphertext;
use votum_elgamal::threshold::public_share;
#[cfg(feature = "prove")]
use votum_elgamal::threshold::SecretPolynomial;
use votum_elgamal::Ciphertext;
#[cfg(feature = "prove")]
use votum_elgamal::{PublicKey, SecretKey};
#[cfg(feature = "prove")]
use votum_group::ModScalar;
use votum_group::{Group, ModElement, ModpGroup};
use votum_hash::eg::{hash_elems, EgHashItem};
use votum_proofs::{ChaumPedersenProof, Eg1Oracle, ProofError, SchnorrProof, Statement};

use crate::json::{self, FieldError};

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

fn proof_error(guardian: &str, index: usize, error: ProofError) -> CeremonyError {
    CeremonyError::Proof {
        guardian: guardian.to_string(),
        index,
        error,
    }
}

/// The format tag of a guardian's exported secret state (spec/63.6).
pub const SECRET_STATE_FORMAT: &str = "votum-eg-guardian-secret/1";

/// Overwrites every string of a parsed JSON value (secret hex) before it is dropped.
#[cfg(feature = "prove")]
fn wipe_json(v: &mut Value) {
    match v {
        Value::String(s) => zeroize::Zeroize::zeroize(s),
        Value::Array(items) => items.iter_mut().for_each(wipe_json),
        Value::Object(map) => map.values_mut().for_each(wipe_json),
        _ => {}
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
        let object = "guardian record";
        let id = json::text(v, "guardian_id", object)?.to_string();
        let object = format!("guardian {id:?}");
        let sequence_order = json::uint(v, "sequence_order", &object)?;
        // the key and the proofs' public keys must equal commitments, and the commitments are
        // checked for membership together below
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
        let commitments = group
            .check_all(commitments, &mut crate::batch::batch_rng())
            .map_err(|_| FieldError::BadElement {
                object,
                what: "election_commitments",
                reason: votum_group::GroupError::NotInSubgroup,
            })?;
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

#[cfg(feature = "prove")]
/// One guardian's share of another's polynomial, `P_s(r)`, sealed to the receiver's election key
/// with hashed ElGamal (spec/40). The plaintext names sender and receiver, so a backup cannot be
/// replayed between them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartialKeyBackup {
    pub sender: String,
    pub receiver: String,
    pub receiver_sequence_order: u64,
    pub sealed: HashedCiphertext<ModpGroup>,
}

#[cfg(feature = "prove")]
const BACKUP_TAG: &[u8] = b"votum-eg-backup-1";

#[cfg(feature = "prove")]
fn backup_plaintext(sender: &str, receiver: &str, coordinate: &ModScalar) -> Vec<u8> {
    let group = ModpGroup::eg_4096();
    let mut m = BACKUP_TAG.to_vec();
    for id in [sender, receiver] {
        m.extend_from_slice(&(id.len() as u32).to_be_bytes());
        m.extend_from_slice(id.as_bytes());
    }
    m.extend_from_slice(&group.encode_scalar(coordinate));
    m
}

#[cfg(feature = "prove")]
fn read_backup_plaintext(m: &[u8]) -> Option<(String, String, ModScalar)> {
    let group = ModpGroup::eg_4096();
    let mut rest = m.strip_prefix(BACKUP_TAG)?;
    let mut ids = Vec::new();
    for _ in 0..2 {
        let (len, tail) = rest.split_at_checked(4)?;
        let len = u32::from_be_bytes(len.try_into().ok()?) as usize;
        let (id, tail) = tail.split_at_checked(len)?;
        ids.push(String::from_utf8(id.to_vec()).ok()?);
        rest = tail;
    }
    let coordinate = group.decode_scalar(rest).ok()?;
    let receiver = ids.pop()?;
    let sender = ids.pop()?;
    Some((sender, receiver, coordinate))
}

#[cfg(feature = "prove")]
impl PartialKeyBackup {
    /// JSON in electionguard's `ElectionPartialKeyBackup` shape; `encrypted_coordinate` holds
    /// votum's hashed ElGamal ciphertext (pad, data, mac), not electionguard's.
    pub fn to_json(&self) -> Value {
        let group = ModpGroup::eg_4096();
        json!({
            "owner_id": self.sender,
            "designated_id": self.receiver,
            "designated_sequence_order": self.receiver_sequence_order,
            "encrypted_coordinate": {
                "pad": json::el(&self.sealed.pad),
                "data": hex::encode_upper(&self.sealed.body),
                "mac": hex::encode_upper(self.sealed.tag),
            },
            "scheme": "votum-hashed-elgamal-1",
            "group": group.id().name(),
        })
    }

    pub fn from_json(v: &Value) -> Result<Self, CeremonyError> {
        let group = ModpGroup::eg_4096();
        let object = "partial key backup";
        let bad = |message: &str| FieldError::Format {
            object: object.to_string(),
            message: message.to_string(),
        };
        if json::text(v, "scheme", object)? != "votum-hashed-elgamal-1" {
            return Err(bad("unknown backup scheme").into());
        }
        let sealed = json::field(v, "encrypted_coordinate", object)?;
        let body =
            hex::decode(json::text(sealed, "data", object)?).map_err(|_| bad("data is not hex"))?;
        let tag: [u8; 32] = hex::decode(json::text(sealed, "mac", object)?)
            .ok()
            .and_then(|t| t.try_into().ok())
            .ok_or_else(|| bad("mac must be 32 bytes of hex"))?;
        Ok(Self {
            sender: json::text(v, "owner_id", object)?.to_string(),
            receiver: json::text(v, "designated_id", object)?.to_string(),
            receiver_sequence_order: json::uint(v, "designated_sequence_order", object)?,
            sealed: HashedCiphertext {
                pad: json::member(&group, sealed, "pad", object)?,
                body,
                tag,
            },
        })
    }
}

#[cfg(feature = "prove")]
/// What a sender publishes when a receiver disputes its backup: the share in the clear. Anyone
/// checks it against the sender's commitments; a sender whose revealed share fails is
/// disqualified.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BackupChallengeResponse {
    pub sender: String,
    pub receiver: String,
    pub receiver_sequence_order: u64,
    pub coordinate: ModScalar,
}

#[cfg(feature = "prove")]
impl BackupChallengeResponse {
    /// JSON with `ElectionPartialKeyBackup`'s id fields and the share in the clear.
    pub fn to_json(&self) -> Value {
        json!({
            "owner_id": self.sender,
            "designated_id": self.receiver,
            "designated_sequence_order": self.receiver_sequence_order,
            "coordinate": json::sc(&self.coordinate),
        })
    }

    pub fn from_json(v: &Value) -> Result<Self, CeremonyError> {
        let group = ModpGroup::eg_4096();
        let o = "challenge answer";
        Ok(Self {
            sender: json::text(v, "owner_id", o)?.to_string(),
            receiver: json::text(v, "designated_id", o)?.to_string(),
            receiver_sequence_order: json::uint(v, "designated_sequence_order", o)?,
            coordinate: json::scalar(&group, v, "coordinate", o)?,
        })
    }

    pub fn verify(
        &self,
        group: &ModpGroup,
        sender: &GuardianPublicKey,
    ) -> Result<(), CeremonyError> {
        if sender.id != self.sender {
            return Err(CeremonyError::UnknownGuardian(self.sender.clone()));
        }
        if group.pow_generator(&self.coordinate)
            != sender.recovery_key(group, self.receiver_sequence_order)
        {
            return Err(CeremonyError::InvalidBackup {
                sender: self.sender.clone(),
                receiver: self.receiver.clone(),
            });
        }
        Ok(())
    }
}

/// A decryption share `M = α^s` with its Chaum–Pedersen proof (ElectionGuard 1.0 challenge
/// `H(Q', α, β, a, b, M)`).
#[derive(Clone, Debug)]
pub struct ProvenShare {
    pub share: ModElement,
    pub proof: ChaumPedersenProof<ModpGroup>,
}

#[cfg(feature = "prove")]
/// A guardian: its secret polynomial, the verified backups it holds for the others, and its
/// public record. Secrets are wiped on drop and never printed.
pub struct Guardian {
    public: GuardianPublicKey,
    polynomial: SecretPolynomial<ModpGroup>,
    /// sender id -> (sender's sequence order, P_sender(my sequence order)), verified
    backups: BTreeMap<String, ModScalar>,
    number_of_guardians: usize,
}

#[cfg(feature = "prove")]
impl fmt::Debug for Guardian {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Guardian")
            .field("id", &self.public.id)
            .field("sequence_order", &self.public.sequence_order)
            .field("backups_held", &self.backups.len())
            .finish_non_exhaustive()
    }
}

#[cfg(feature = "prove")]
impl Drop for Guardian {
    fn drop(&mut self) {
        for v in self.backups.values_mut() {
            zeroize::Zeroize::zeroize(v);
        }
    }
}

#[cfg(feature = "prove")]
/// Independent generators for parallel work, forked from one caller-supplied generator.
pub(crate) fn fork_rngs<R: RngCore + CryptoRng>(rng: &mut R, n: usize) -> Vec<ChaCha20Rng> {
    (0..n)
        .map(|_| {
            let mut seed = [0u8; 32];
            rng.fill_bytes(&mut seed);
            let r = ChaCha20Rng::from_seed(seed);
            zeroize::Zeroize::zeroize(&mut seed);
            r
        })
        .collect()
}

#[cfg(feature = "prove")]
impl Guardian {
    /// A new guardian with a random polynomial of `quorum` coefficients.
    pub fn new<R: RngCore + CryptoRng>(
        id: &str,
        sequence_order: u64,
        number_of_guardians: usize,
        quorum: usize,
        rng: &mut R,
    ) -> Result<Self, CeremonyError> {
        let group = ModpGroup::eg_4096();
        let polynomial = SecretPolynomial::random(&group, quorum, rng).map_err(|_| {
            CeremonyError::BadQuorum {
                quorum,
                guardians: number_of_guardians,
            }
        })?;
        Self::from_polynomial(id, sequence_order, number_of_guardians, polynomial, rng)
    }

    /// A guardian from given coefficients (tests and deterministic runs).
    pub fn from_polynomial<R: RngCore + CryptoRng>(
        id: &str,
        sequence_order: u64,
        number_of_guardians: usize,
        polynomial: SecretPolynomial<ModpGroup>,
        rng: &mut R,
    ) -> Result<Self, CeremonyError> {
        let group = ModpGroup::eg_4096();
        let quorum = polynomial.quorum();
        if quorum == 0 || quorum > number_of_guardians {
            return Err(CeremonyError::BadQuorum {
                quorum,
                guardians: number_of_guardians,
            });
        }
        if sequence_order == 0 || sequence_order > number_of_guardians as u64 {
            return Err(CeremonyError::BadSequenceOrder {
                guardian: id.to_string(),
                order: sequence_order,
                guardians: number_of_guardians,
            });
        }
        let oracle = Eg1Oracle::new(Integer::ZERO);
        let rngs = fork_rngs(rng, quorum);
        let (commitments, proofs): (Vec<_>, Vec<_>) = polynomial
            .coefficients()
            .par_iter()
            .zip(rngs)
            .map(|(a, mut r)| {
                let k = group.pow_secret(group.generator(), a);
                let proof = SchnorrProof::prove(&group, &oracle, a, &k, &mut r);
                (k, proof)
            })
            .unzip();
        Ok(Self {
            public: GuardianPublicKey {
                id: id.to_string(),
                sequence_order,
                commitments,
                proofs,
            },
            polynomial,
            backups: BTreeMap::new(),
            number_of_guardians,
        })
    }

    pub fn public_key(&self) -> &GuardianPublicKey {
        &self.public
    }

    pub fn id(&self) -> &str {
        &self.public.id
    }

    pub fn quorum(&self) -> usize {
        self.polynomial.quorum()
    }

    pub fn number_of_guardians(&self) -> usize {
        self.number_of_guardians
    }

    /// Ids of the guardians whose verified backups this guardian holds.
    pub fn backups_held(&self) -> Vec<String> {
        self.backups.keys().cloned().collect()
    }

    fn secret(&self) -> SecretKey<ModpGroup> {
        SecretKey::new(self.polynomial.coefficients()[0].clone())
    }

    /// Refuses a message (backup or challenge answer) meant for another guardian.
    fn check_addressed(
        &self,
        sender: &str,
        receiver: &str,
        order: u64,
    ) -> Result<(), CeremonyError> {
        if receiver != self.public.id || order != self.public.sequence_order {
            return Err(CeremonyError::Misaddressed {
                sender: sender.to_string(),
                receiver: self.public.id.clone(),
                addressed: receiver.to_string(),
            });
        }
        Ok(())
    }

    /// Seals `P_me(receiver)` to the receiver's election key.
    pub fn backup_for<R: RngCore + CryptoRng>(
        &self,
        receiver: &GuardianPublicKey,
        rng: &mut R,
    ) -> Result<PartialKeyBackup, CeremonyError> {
        let group = ModpGroup::eg_4096();
        let key = PublicKey::new(&group, receiver.key().clone())
            .map_err(|_| CeremonyError::UnknownGuardian(receiver.id.clone()))?;
        let mut coordinate = self.polynomial.evaluate(&group, receiver.sequence_order);
        let mut m = backup_plaintext(&self.public.id, &receiver.id, &coordinate);
        let r = group.random_scalar(rng);
        let sealed = HashedCiphertext::encrypt(&group, &key, &m, &r);
        zeroize::Zeroize::zeroize(&mut m);
        zeroize::Zeroize::zeroize(&mut coordinate);
        Ok(PartialKeyBackup {
            sender: self.public.id.clone(),
            receiver: receiver.id.clone(),
            receiver_sequence_order: receiver.sequence_order,
            sealed,
        })
    }

    /// Opens a backup addressed to this guardian and checks it against the sender's commitments;
    /// keeps it only if it verifies. On `InvalidBackup` or `Unreadable` the receiver challenges
    /// the sender publicly ([`Guardian::answer_challenge`]).
    pub fn receive_backup(
        &mut self,
        sender: &GuardianPublicKey,
        backup: &PartialKeyBackup,
    ) -> Result<(), CeremonyError> {
        let group = ModpGroup::eg_4096();
        self.check_addressed(
            &backup.sender,
            &backup.receiver,
            backup.receiver_sequence_order,
        )?;
        let unreadable = || CeremonyError::Unreadable {
            sender: backup.sender.clone(),
            receiver: self.public.id.clone(),
        };
        let mut plain = backup
            .sealed
            .decrypt(&group, &self.secret())
            .map_err(|_| unreadable())?;
        let opened = read_backup_plaintext(&plain);
        zeroize::Zeroize::zeroize(&mut plain);
        let (from, to, coordinate) = opened.ok_or_else(unreadable)?;
        if from != sender.id || from != backup.sender || to != self.public.id {
            return Err(unreadable());
        }
        if group.pow_generator(&coordinate)
            != sender.recovery_key(&group, self.public.sequence_order)
        {
            return Err(CeremonyError::InvalidBackup {
                sender: sender.id.clone(),
                receiver: self.public.id.clone(),
            });
        }
        self.backups.insert(sender.id.clone(), coordinate);
        Ok(())
    }

    /// Publishes `P_me(receiver)` in the clear, as the protocol asks of a challenged sender.
    pub fn answer_challenge(&self, receiver: &GuardianPublicKey) -> BackupChallengeResponse {
        let group = ModpGroup::eg_4096();
        BackupChallengeResponse {
            sender: self.public.id.clone(),
            receiver: receiver.id.clone(),
            receiver_sequence_order: receiver.sequence_order,
            coordinate: self.polynomial.evaluate(&group, receiver.sequence_order),
        }
    }

    /// Takes a share that was settled by a public challenge (verified here again).
    pub fn accept_challenge_response(
        &mut self,
        sender: &GuardianPublicKey,
        response: &BackupChallengeResponse,
    ) -> Result<(), CeremonyError> {
        let group = ModpGroup::eg_4096();
        self.check_addressed(
            &response.sender,
            &response.receiver,
            response.receiver_sequence_order,
        )?;
        response.verify(&group, sender)?;
        self.backups
            .insert(sender.id.clone(), response.coordinate.clone());
        Ok(())
    }

    /// The guardian's whole secret state (its polynomial, the verified backups it holds, its
    /// public record) as JSON in votum's own format (spec/63.6), for its owner's storage or for
    /// the stateless seed endpoints that carry it by design. The buffer is wiped when dropped.
    pub fn export_secret_state(&self) -> zeroize::Zeroizing<String> {
        use std::fmt::Write as _;
        let mut out = zeroize::Zeroizing::new(String::with_capacity(
            4096 + 1100 * (self.polynomial.quorum() + self.backups.len()),
        ));
        let record = self.public.to_eg14_json().to_string();
        // writing to a String cannot fail
        let _ = write!(
            out,
            "{{\"format\":{},\"number_of_guardians\":{},\"record\":{},\"coefficients\":[",
            Value::String(SECRET_STATE_FORMAT.into()),
            self.number_of_guardians,
            record
        );
        for (j, a) in self.polynomial.coefficients().iter().enumerate() {
            let hex = zeroize::Zeroizing::new(votum_hash::eg::to_hex(a.value()));
            let _ = write!(out, "{}\"{}\"", if j == 0 { "" } else { "," }, hex.as_str());
        }
        out.push_str("],\"backups\":{");
        for (j, (sender, coordinate)) in self.backups.iter().enumerate() {
            let hex = zeroize::Zeroizing::new(votum_hash::eg::to_hex(coordinate.value()));
            let _ = write!(
                out,
                "{}{}:\"{}\"",
                if j == 0 { "" } else { "," },
                Value::String(sender.clone()),
                hex.as_str()
            );
        }
        out.push_str("}}");
        out
    }

    /// Reads [`Guardian::export_secret_state`]: checks the format tag, that each coefficient is
    /// the one its commitment commits to, and that each backup is on its
    /// sender's polynomial when the sender's record is among `known` (backups from senders not
    /// given are taken as written: the state is its owner's own file). Every parsed string is
    /// wiped before returning.
    pub fn import_secret_state(
        text: &str,
        known: &[GuardianPublicKey],
    ) -> Result<Self, CeremonyError> {
        let group = ModpGroup::eg_4096();
        let object = "guardian secret state";
        let mut v: Value = serde_json::from_str(text).map_err(|e| FieldError::Format {
            object: object.into(),
            message: format!("not JSON: {e}"),
        })?;
        let out = Self::read_secret_state(&group, &v, known);
        wipe_json(&mut v);
        out
    }

    fn read_secret_state(
        group: &ModpGroup,
        v: &Value,
        known: &[GuardianPublicKey],
    ) -> Result<Self, CeremonyError> {
        let object = "guardian secret state";
        let format = json::text(v, "format", object)?;
        if format != SECRET_STATE_FORMAT {
            return Err(FieldError::Format {
                object: object.into(),
                message: format!("format {format:?} is not {SECRET_STATE_FORMAT:?}"),
            }
            .into());
        }
        let n = json::uint(v, "number_of_guardians", object)? as usize;
        let public = GuardianPublicKey::from_eg14_json(group, json::field(v, "record", object)?)?;
        let quorum = public.commitments.len();
        if quorum == 0 || quorum > n {
            return Err(CeremonyError::BadQuorum {
                quorum,
                guardians: n,
            });
        }
        if public.sequence_order == 0 || public.sequence_order > n as u64 {
            return Err(CeremonyError::BadSequenceOrder {
                guardian: public.id.clone(),
                order: public.sequence_order,
                guardians: n,
            });
        }
        // The record's Schnorr proofs are not re-checked: g^{a_j} = K_j for every j (below) is
        // the stronger fact for whoever holds the a_j, and the proofs matter only to others, who
        // check the record as published (63.1).
        let object = format!("guardian {:?} secret state", public.id);
        let scalar = |x: &Value, what: &str| -> Result<ModScalar, CeremonyError> {
            let hex = x.as_str().ok_or_else(|| FieldError::Format {
                object: object.clone(),
                message: format!("{what} must be a hex string"),
            })?;
            let mut value = votum_hash::eg::from_hex(hex).map_err(|e| FieldError::Format {
                object: object.clone(),
                message: format!("{what} is not electionguard hex: {e}"),
            })?;
            let out = group.scalar(&value).map_err(|e| {
                FieldError::Format {
                    object: object.clone(),
                    message: format!("{what}: {e}"),
                }
                .into()
            });
            votum_arith::wipe_integer(&mut value);
            out
        };
        let list = json::field(v, "coefficients", &object)?
            .as_array()
            .ok_or_else(|| FieldError::Format {
                object: object.clone(),
                message: "coefficients must be a list".into(),
            })?;
        if list.len() != quorum {
            return Err(CeremonyError::WrongQuorum {
                guardian: public.id.clone(),
                expected: quorum,
                got: list.len(),
            });
        }
        let mut coefficients = Vec::with_capacity(quorum);
        for (j, x) in list.iter().enumerate() {
            let a = scalar(x, "a coefficient")?;
            if group.pow_secret(group.generator(), &a) != public.commitments[j] {
                return Err(CeremonyError::KeyMismatch {
                    guardian: public.id.clone(),
                    what: "a secret coefficient does not match its commitment",
                });
            }
            coefficients.push(a);
        }
        let polynomial = SecretPolynomial::from_coefficients(coefficients).map_err(|_| {
            CeremonyError::BadQuorum {
                quorum,
                guardians: n,
            }
        })?;
        let mut backups = BTreeMap::new();
        let held = json::field(v, "backups", &object)?
            .as_object()
            .ok_or_else(|| FieldError::Format {
                object: object.clone(),
                message: "backups must be an object".into(),
            })?;
        for (sender, x) in held {
            let coordinate = scalar(x, "a backup")?;
            if let Some(s) = known.iter().find(|k| &k.id == sender) {
                if group.pow_generator(&coordinate) != s.recovery_key(group, public.sequence_order)
                {
                    return Err(CeremonyError::InvalidBackup {
                        sender: sender.clone(),
                        receiver: public.id.clone(),
                    });
                }
            }
            backups.insert(sender.clone(), coordinate);
        }
        Ok(Self {
            public,
            polynomial,
            backups,
            number_of_guardians: n,
        })
    }

    /// Proven shares `α^x` of every ciphertext for each secret `x` (outer: per secret). All of
    /// a ciphertext's powers (the shares and the proof nonces `α^w`) come from one constant-time
    /// comb table of its `α`; `g^w` from the group's constant-time comb of g.
    fn prove_shares<R: RngCore + CryptoRng>(
        secrets: &[&ModScalar],
        ciphertexts: &[Ciphertext<ModpGroup>],
        extended_base_hash: &Integer,
        rng: &mut R,
    ) -> Vec<Vec<ProvenShare>> {
        let group = ModpGroup::eg_4096();
        let oracle = Eg1Oracle::new(extended_base_hash.clone());
        let rngs = fork_rngs(rng, ciphertexts.len());
        let per_ciphertext: Vec<Vec<ProvenShare>> = ciphertexts
            .par_iter()
            .zip(rngs)
            .map(|(ct, mut r)| {
                let table = group.secret_table(&ct.pad);
                secrets
                    .iter()
                    .map(|secret| {
                        let share = group.pow_secret_with(&table, secret);
                        let w = group.random_scalar(&mut r);
                        // a = g^w, b = α^w: constant-time, w would reveal the secret
                        let a = group.pow_secret(group.generator(), &w);
                        let b = group.pow_secret_with(&table, &w);
                        let challenge = votum_proofs::ChallengeOracle::challenge(
                            &oracle,
                            &group,
                            votum_proofs::ProofKind::ChaumPedersen,
                            &[&ct.pad, &ct.data, &a, &b, &share],
                        );
                        let response = group.scalar_add(&w, &group.scalar_mul(&challenge, secret));
                        let mut w = w;
                        zeroize::Zeroize::zeroize(&mut w);
                        ProvenShare {
                            share,
                            proof: ChaumPedersenProof {
                                pad: a,
                                data: b,
                                challenge,
                                response,
                            },
                        }
                    })
                    .collect()
            })
            .collect();
        let mut out: Vec<Vec<ProvenShare>> = secrets
            .iter()
            .map(|_| Vec::with_capacity(ciphertexts.len()))
            .collect();
        for shares in per_ciphertext {
            for (list, share) in out.iter_mut().zip(shares) {
                list.push(share);
            }
        }
        out
    }

    /// This guardian's decryption shares `M_i = α^{s_i}` of each ciphertext, with proofs.
    pub fn decryption_shares<R: RngCore + CryptoRng>(
        &self,
        ciphertexts: &[Ciphertext<ModpGroup>],
        extended_base_hash: &Integer,
        rng: &mut R,
    ) -> Vec<ProvenShare> {
        Self::prove_shares(
            &[&self.polynomial.coefficients()[0]],
            ciphertexts,
            extended_base_hash,
            rng,
        )
        .pop()
        .unwrap_or_default()
    }

    /// Shares `M_{i,ℓ} = α^{P_ℓ(i)}` standing in for the missing guardian ℓ, from ℓ's backup;
    /// each is proven against the recovery key `g^{P_ℓ(i)}` anyone computes from ℓ's commitments.
    pub fn compensated_shares<R: RngCore + CryptoRng>(
        &self,
        missing: &GuardianPublicKey,
        ciphertexts: &[Ciphertext<ModpGroup>],
        extended_base_hash: &Integer,
        rng: &mut R,
    ) -> Result<Vec<ProvenShare>, CeremonyError> {
        let (_, mut compensated) =
            self.all_shares(false, &[missing], ciphertexts, extended_base_hash, rng)?;
        Ok(compensated.pop().unwrap_or_default())
    }

    /// A present guardian's whole part of a decryption: its own shares (when `with_own`) and its
    /// compensated shares for each of `missing`, all from one comb table per ciphertext (the
    /// cheapest way). Returns (own shares, empty without `with_own`; one list per missing
    /// guardian, in order).
    pub fn all_shares<R: RngCore + CryptoRng>(
        &self,
        with_own: bool,
        missing: &[&GuardianPublicKey],
        ciphertexts: &[Ciphertext<ModpGroup>],
        extended_base_hash: &Integer,
        rng: &mut R,
    ) -> Result<(Vec<ProvenShare>, Vec<Vec<ProvenShare>>), CeremonyError> {
        let group = ModpGroup::eg_4096();
        let mut secrets: Vec<&ModScalar> = Vec::new();
        if with_own {
            secrets.push(&self.polynomial.coefficients()[0]);
        }
        for m in missing {
            let coordinate =
                self.backups
                    .get(&m.id)
                    .ok_or_else(|| CeremonyError::MissingBackup {
                        holder: self.public.id.clone(),
                        missing: m.id.clone(),
                    })?;
            debug_assert_eq!(
                group.pow_generator(coordinate),
                m.recovery_key(&group, self.public.sequence_order)
            );
            secrets.push(coordinate);
        }
        let mut lists = Self::prove_shares(&secrets, ciphertexts, extended_base_hash, rng);
        let direct = if with_own {
            lists.remove(0)
        } else {
            Vec::new()
        };
        Ok((direct, lists))
    }
}

#[cfg(feature = "prove")]
/// A whole key ceremony run in one place (a test, a demo, the stateless seed endpoints): one guardian
/// per generator, guardian `i` is `guardian-i` and draws from `rngs[i - 1]`; every backup is sealed to its receiver and checked
/// by it against the sender's commitments. Returns the guardians, holding their verified backups,
/// and the backups each sent (`sent[s]`: sender `s`'s, receivers in sequence order).
///
/// Guardians work in parallel; each one's draws happen in the same order as when the steps are
/// called one by one (its polynomial, then its backups to the others in sequence order), so seeded
/// runs give the same bytes either way.
pub fn run_ceremony<R: RngCore + CryptoRng + Send>(
    quorum: usize,
    rngs: &mut [R],
) -> Result<(Vec<Guardian>, Vec<Vec<PartialKeyBackup>>), CeremonyError> {
    let n = rngs.len();
    let mut guardians = rngs
        .par_iter_mut()
        .enumerate()
        .map(|(i, r)| Guardian::new(&format!("guardian-{}", i + 1), i as u64 + 1, n, quorum, r))
        .collect::<Result<Vec<_>, _>>()?;
    let publics: Vec<GuardianPublicKey> = guardians.iter().map(|g| g.public.clone()).collect();
    let sent = guardians
        .par_iter()
        .zip(rngs.par_iter_mut())
        .map(|(g, r)| {
            publics
                .iter()
                .filter(|p| p.id != g.public.id)
                .map(|p| g.backup_for(p, r))
                .collect::<Result<Vec<_>, _>>()
        })
        .collect::<Result<Vec<_>, _>>()?;
    guardians
        .par_iter_mut()
        .try_for_each(|receiver| -> Result<(), CeremonyError> {
            for (sender, backups) in publics.iter().zip(&sent) {
                if let Some(b) = backups.iter().find(|b| b.receiver == receiver.public.id) {
                    receiver.receive_backup(sender, b)?;
                }
            }
            Ok(())
        })?;
    Ok((guardians, sent))
}

/// Checks one share's proof: `g^v = a·K^c`, `α^v = b·M^c`, `c = H(Q', α, β, a, b, M)`.
pub fn verify_share(
    group: &ModpGroup,
    oracle: &Eg1Oracle,
    key: &ModElement,
    ct: &Ciphertext<ModpGroup>,
    share: &ProvenShare,
) -> Result<(), ProofError> {
    share.proof.verify(
        group,
        oracle,
        &Statement {
            g1: group.generator(),
            a: key,
            g2: &ct.pad,
            b: &share.share,
        },
        &[&ct.pad, &ct.data],
        &[&share.share],
    )
}
