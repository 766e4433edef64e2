//! The election context (electionguard 1.4.0's `CiphertextElectionContext`): guardian count,
//! quorum, joint key, commitment hash, manifest hash, base hash `Q` and extended base hash `Q'`,
//! computed exactly as the reference does (spec/63).

use serde_json::{json, Value};
use votum_arith::Integer;
use votum_group::{Group, ModElement, ModpGroup};
use votum_hash::eg::{hash_elems, EgHashItem};

use crate::ceremony::{joint_key, verify_guardians, CeremonyError, GuardianPublicKey};
use crate::json::{self, FieldError};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ElectionContext {
    pub number_of_guardians: u64,
    pub quorum: u64,
    pub elgamal_public_key: ModElement,
    pub commitment_hash: Integer,
    pub manifest_hash: Integer,
    pub crypto_base_hash: Integer,
    pub crypto_extended_base_hash: Integer,
}

/// `Q = H(p, q, g, n, k, manifest hash)`.
pub fn base_hash(number_of_guardians: u64, quorum: u64, manifest_hash: &Integer) -> Integer {
    let g = ModpGroup::eg_4096();
    hash_elems(
        &[
            EgHashItem::Num(g.p().clone()),
            EgHashItem::Num(g.order().clone()),
            EgHashItem::Num(g.generator().value().clone()),
            EgHashItem::Int(number_of_guardians as i64),
            EgHashItem::Int(quorum as i64),
            EgHashItem::Num(manifest_hash.clone()),
        ],
        g.order(),
    )
}

impl ElectionContext {
    /// The context of an election whose guardians are `guardians` (in sequence order, checked).
    pub fn new(
        guardians: &[GuardianPublicKey],
        quorum: usize,
        manifest_hash: Integer,
    ) -> Result<Self, CeremonyError> {
        let g = ModpGroup::eg_4096();
        verify_guardians(&g, guardians, quorum)?;
        let mut ordered = guardians.to_vec();
        ordered.sort_by_key(|x| x.sequence_order);
        let (key, commitment_hash) = joint_key(&ordered);
        Ok(Self::from_joint_key(
            guardians.len() as u64,
            quorum as u64,
            key,
            commitment_hash,
            manifest_hash,
        ))
    }

    /// The context from its published parts (joint key and commitment hash as the key ceremony
    /// gave them): the hashes are computed here, nothing is checked against guardian records.
    pub fn from_joint_key(
        number_of_guardians: u64,
        quorum: u64,
        elgamal_public_key: ModElement,
        commitment_hash: Integer,
        manifest_hash: Integer,
    ) -> Self {
        let g = ModpGroup::eg_4096();
        let crypto_base_hash = base_hash(number_of_guardians, quorum, &manifest_hash);
        let crypto_extended_base_hash = hash_elems(
            &[
                EgHashItem::Num(crypto_base_hash.clone()),
                EgHashItem::Num(commitment_hash.clone()),
            ],
            g.order(),
        );
        Self {
            number_of_guardians,
            quorum,
            elgamal_public_key,
            commitment_hash,
            manifest_hash,
            crypto_base_hash,
            crypto_extended_base_hash,
        }
    }

    /// Recomputes this context from the guardian records and the manifest hash, and compares.
    pub fn check(&self, guardians: &[GuardianPublicKey]) -> Result<(), CeremonyError> {
        let ours = Self::new(guardians, self.quorum as usize, self.manifest_hash.clone())?;
        let what = if ours.number_of_guardians != self.number_of_guardians {
            "number_of_guardians"
        } else if ours.elgamal_public_key != self.elgamal_public_key {
            "elgamal_public_key (the product of the guardians' keys)"
        } else if ours.commitment_hash != self.commitment_hash {
            "commitment_hash"
        } else if ours.crypto_base_hash != self.crypto_base_hash {
            "crypto_base_hash"
        } else if ours.crypto_extended_base_hash != self.crypto_extended_base_hash {
            "crypto_extended_base_hash"
        } else {
            return Ok(());
        };
        Err(CeremonyError::KeyMismatch {
            guardian: "context".into(),
            what,
        })
    }

    pub fn to_eg14_json(&self) -> Value {
        json!({
            "number_of_guardians": self.number_of_guardians,
            "quorum": self.quorum,
            "elgamal_public_key": json::el(&self.elgamal_public_key),
            "commitment_hash": json::hx(&self.commitment_hash),
            "manifest_hash": json::hx(&self.manifest_hash),
            "crypto_base_hash": json::hx(&self.crypto_base_hash),
            "crypto_extended_base_hash": json::hx(&self.crypto_extended_base_hash),
            "extended_data": Value::Null,
            "configuration": {"allow_overvotes": false, "max_votes": 1_000_000},
        })
    }

    pub fn from_eg14_json(v: &Value) -> Result<Self, FieldError> {
        let g = ModpGroup::eg_4096();
        let o = "context";
        let scalar = |name: &str| -> Result<Integer, FieldError> {
            Ok(json::scalar(&g, v, name, o)?.value().clone())
        };
        Ok(Self {
            number_of_guardians: json::uint(v, "number_of_guardians", o)?,
            quorum: json::uint(v, "quorum", o)?,
            elgamal_public_key: json::member(&g, v, "elgamal_public_key", o)?,
            commitment_hash: scalar("commitment_hash")?,
            manifest_hash: scalar("manifest_hash")?,
            crypto_base_hash: scalar("crypto_base_hash")?,
            crypto_extended_base_hash: scalar("crypto_extended_base_hash")?,
        })
    }
}

/// electionguard 1.4.0's `constants.json` for the 4096-bit group.
pub fn constants_eg14_json() -> Value {
    let g = ModpGroup::eg_4096();
    json!({
        "large_prime": json::hx(g.p()),
        "small_prime": json::hx(g.order()),
        "cofactor": json::hx(g.cofactor()),
        "generator": json::el(g.generator()),
    })
}
