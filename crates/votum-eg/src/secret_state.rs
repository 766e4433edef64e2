//! A guardian's secret state as its owner's file (spec/63.6): written, and read back with every
//! parsed string wiped.

use std::collections::BTreeMap;

use serde_json::Value;
use votum_elgamal::SecretPolynomial;
use votum_group::{Group, ModpGroup};
use votum_group::{ModScalar, Secret};

use crate::ceremony::*;
use crate::json::{self, FieldError};

/// The format tag of a guardian's exported secret state (spec/63.6).
pub const SECRET_STATE_FORMAT: &str = "votum-eg-guardian-secret/1";

/// Overwrites every string of a parsed JSON value (secret hex) before it is dropped.
pub(crate) fn wipe_json(v: &mut Value) {
    match v {
        Value::String(s) => zeroize::Zeroize::zeroize(s),
        Value::Array(items) => items.iter_mut().for_each(wipe_json),
        Value::Object(map) => map.values_mut().for_each(wipe_json),
        _ => {}
    }
}

impl Guardian {
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
            let hex = zeroize::Zeroizing::new(votum_hash::eg::to_hex(a.expose().value()));
            let _ = write!(out, "{}\"{}\"", if j == 0 { "" } else { "," }, hex.as_str());
        }
        out.push_str("],\"backups\":{");
        for (j, (sender, coordinate)) in self.backups.iter().enumerate() {
            let hex = zeroize::Zeroizing::new(votum_hash::eg::to_hex(coordinate.expose().value()));
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

    pub(crate) fn read_secret_state(
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
            let a = Secret::new(scalar(x, "a coefficient")?);
            if group.pow_secret(group.generator(), &a) != public.commitments[j] {
                return Err(CeremonyError::KeyMismatch {
                    guardian: public.id.clone(),
                    what: "a secret coefficient does not match its commitment",
                });
            }
            coefficients.push(a.expose().clone());
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
            let coordinate = Secret::new(scalar(x, "a backup")?);
            if let Some(s) = known.iter().find(|k| &k.id == sender) {
                // a share of the sender's secret: constant time (it was the fast table until the
                // secret type refused it)
                if group.pow_secret(group.generator(), &coordinate)
                    != s.recovery_key(group, public.sequence_order)
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
}
