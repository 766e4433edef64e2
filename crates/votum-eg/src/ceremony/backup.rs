//! Partial key backups sealed to their receivers, and the public answer to a challenged backup.

use serde_json::{json, Value};
use votum_elgamal::hashed::HashedCiphertext;
use votum_group::{Group, ModpGroup};
use votum_group::{ModScalar, Secret};

use super::*;
use crate::json::{self, FieldError};

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

pub(crate) const BACKUP_TAG: &[u8] = b"votum-eg-backup-1";

pub(crate) fn backup_plaintext(sender: &str, receiver: &str, coordinate: &ModScalar) -> Vec<u8> {
    let group = ModpGroup::eg_4096();
    let mut m = BACKUP_TAG.to_vec();
    for id in [sender, receiver] {
        m.extend_from_slice(&(id.len() as u32).to_be_bytes());
        m.extend_from_slice(id.as_bytes());
    }
    m.extend_from_slice(&group.encode_scalar(coordinate));
    m
}

pub(crate) fn read_backup_plaintext(m: &[u8]) -> Option<(String, String, ModScalar)> {
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
        // the coordinate is this guardian's share of the sender's secret: constant time
        if group.pow_secret(group.generator(), &Secret::new(self.coordinate.clone()))
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
