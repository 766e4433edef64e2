//! Small helpers for reading and writing ElectionGuard 1.4 JSON records: integers as electionguard
//! hex (spec/20.2), strict field access with the object named in every error.

use serde_json::{json, Value};
use votum_arith::Integer;
use votum_elgamal::Ciphertext;
use votum_group::{GroupError, InRange, ModElement, ModScalar, ModpGroup};
use votum_hash::eg::{from_hex, to_hex};
use votum_proofs::{ChaumPedersenProof, SchnorrProof};

/// A field that is missing, of the wrong JSON type, or not a valid value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FieldError {
    #[error("{object}: {message}")]
    Format { object: String, message: String },
    #[error("{object}: {what} is not a valid group element ({reason})")]
    BadElement {
        object: String,
        what: &'static str,
        reason: GroupError,
    },
}

fn format_error(object: &str, message: String) -> FieldError {
    FieldError::Format {
        object: object.to_string(),
        message,
    }
}

pub fn field<'a>(v: &'a Value, name: &str, object: &str) -> Result<&'a Value, FieldError> {
    v.get(name)
        .ok_or_else(|| format_error(object, format!("missing field {name:?}")))
}

pub fn text<'a>(v: &'a Value, name: &str, object: &str) -> Result<&'a str, FieldError> {
    field(v, name, object)?
        .as_str()
        .ok_or_else(|| format_error(object, format!("{name} must be a string")))
}

pub fn int(v: &Value, name: &str, object: &str) -> Result<i64, FieldError> {
    field(v, name, object)?
        .as_i64()
        .ok_or_else(|| format_error(object, format!("{name} must be an integer")))
}

pub fn uint(v: &Value, name: &str, object: &str) -> Result<u64, FieldError> {
    field(v, name, object)?
        .as_u64()
        .ok_or_else(|| format_error(object, format!("{name} must be a non-negative integer")))
}

pub fn hexnum(v: &Value, name: &str, object: &str) -> Result<Integer, FieldError> {
    from_hex(text(v, name, object)?)
        .map_err(|e| format_error(object, format!("{name} is not electionguard hex: {e}")))
}

/// A scalar below q.
pub fn scalar(g: &ModpGroup, v: &Value, name: &str, object: &str) -> Result<ModScalar, FieldError> {
    g.scalar(&hexnum(v, name, object)?)
        .map_err(|e| format_error(object, format!("{name}: {e}")))
}

/// An element of the order-q subgroup (full membership check).
pub fn member(
    g: &ModpGroup,
    v: &Value,
    name: &'static str,
    object: &str,
) -> Result<ModElement, FieldError> {
    member_value(g, field(v, name, object)?, name, object)
}

/// [`member`] for a bare hex string (a list item).
pub fn member_value(
    g: &ModpGroup,
    v: &Value,
    what: &'static str,
    object: &str,
) -> Result<ModElement, FieldError> {
    let hex = v
        .as_str()
        .ok_or_else(|| format_error(object, format!("{what} must be a string")))?;
    let x = from_hex(hex)
        .map_err(|e| format_error(object, format!("{what} is not electionguard hex: {e}")))?;
    g.element(&x).map_err(|reason| FieldError::BadElement {
        object: object.to_string(),
        what,
        reason,
    })
}

/// An integer in [1, p), not yet known to be a subgroup member ([`InRange`]: the caller checks it,
/// compares it with a value it computed, or names why membership follows).
pub fn in_range(
    g: &ModpGroup,
    v: &Value,
    name: &'static str,
    object: &str,
) -> Result<InRange, FieldError> {
    g.element_in_range(&hexnum(v, name, object)?)
        .map_err(|reason| FieldError::BadElement {
            object: object.to_string(),
            what: name,
            reason,
        })
}

/// [`in_range`] for a bare hex string (a list item).
pub fn in_range_value(
    g: &ModpGroup,
    v: &Value,
    what: &'static str,
    object: &str,
) -> Result<InRange, FieldError> {
    let hex = v
        .as_str()
        .ok_or_else(|| format_error(object, format!("{what} must be a string")))?;
    let x = from_hex(hex)
        .map_err(|e| format_error(object, format!("{what} is not electionguard hex: {e}")))?;
    g.element_in_range(&x)
        .map_err(|reason| FieldError::BadElement {
            object: object.to_string(),
            what,
            reason,
        })
}

/// A proof commitment: in range here, a member once its proof verifies ([`InRange::bound_by_proof`]).
pub fn commitment(
    g: &ModpGroup,
    v: &Value,
    name: &'static str,
    object: &str,
) -> Result<ModElement, FieldError> {
    in_range(g, v, name, object).map(InRange::bound_by_proof)
}

pub fn hx(x: &Integer) -> Value {
    Value::String(to_hex(x))
}

pub fn el(x: &ModElement) -> Value {
    hx(x.value())
}

pub fn sc(x: &ModScalar) -> Value {
    hx(x.value())
}

pub fn ciphertext_json(c: &Ciphertext<ModpGroup>) -> Value {
    json!({"pad": el(&c.pad), "data": el(&c.data)})
}

/// A ciphertext read from outside, its components only in range: for one the caller compares with
/// a ciphertext it computed itself ([`CiphertextInRange::matches`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CiphertextInRange {
    pub pad: InRange,
    pub data: InRange,
}

impl CiphertextInRange {
    pub fn matches(&self, ct: &Ciphertext<ModpGroup>) -> bool {
        self.pad.matches(&ct.pad) && self.data.matches(&ct.data)
    }
}

/// Ciphertexts read in range, as ciphertexts, after one batched subgroup test of all their
/// components; when it fails, the index of the first ciphertext with a non-member and which part
/// ("pad" or "data").
pub fn check_ciphertexts(
    g: &ModpGroup,
    cts: Vec<CiphertextInRange>,
) -> Result<Vec<Ciphertext<ModpGroup>>, (usize, &'static str)> {
    let values = cts.into_iter().flat_map(|ct| [ct.pad, ct.data]).collect();
    let members = g
        .check_all(values, &mut crate::batch::batch_rng())
        .map_err(|bad| (bad / 2, if bad % 2 == 0 { "pad" } else { "data" }))?;
    let mut members = members.into_iter();
    let mut out = Vec::with_capacity(members.len() / 2);
    while let (Some(pad), Some(data)) = (members.next(), members.next()) {
        out.push(Ciphertext { pad, data });
    }
    Ok(out)
}

pub fn ciphertext_in_range(
    g: &ModpGroup,
    v: &Value,
    object: &str,
) -> Result<CiphertextInRange, FieldError> {
    Ok(CiphertextInRange {
        pad: in_range(g, v, "pad", object)?,
        data: in_range(g, v, "data", object)?,
    })
}

/// The usage string electionguard 1.4.0 writes for Schnorr and decryption proofs.
pub const SECRET_VALUE_USAGE: &str = "Prove knowledge of secret value";

pub fn cp_json(p: &ChaumPedersenProof<ModpGroup>) -> Value {
    json!({
        "pad": el(&p.pad),
        "data": el(&p.data),
        "challenge": sc(&p.challenge),
        "response": sc(&p.response),
        "usage": SECRET_VALUE_USAGE,
    })
}

pub fn parse_cp(
    g: &ModpGroup,
    v: &Value,
    object: &str,
) -> Result<ChaumPedersenProof<ModpGroup>, FieldError> {
    Ok(ChaumPedersenProof {
        pad: commitment(g, v, "pad", object)?,
        data: commitment(g, v, "data", object)?,
        challenge: scalar(g, v, "challenge", object)?,
        response: scalar(g, v, "response", object)?,
    })
}

pub fn schnorr_json(public: &ModElement, p: &SchnorrProof<ModpGroup>) -> Value {
    json!({
        "public_key": el(public),
        "commitment": el(&p.commitment),
        "challenge": sc(&p.challenge),
        "response": sc(&p.response),
        "usage": SECRET_VALUE_USAGE,
    })
}

/// A Schnorr proof with its public key, which is only in range (the caller compares it with the
/// commitment it proves, and checks that).
pub fn parse_schnorr_in_range(
    g: &ModpGroup,
    v: &Value,
    object: &str,
) -> Result<(InRange, SchnorrProof<ModpGroup>), FieldError> {
    Ok((
        in_range(g, v, "public_key", object)?,
        SchnorrProof {
            commitment: commitment(g, v, "commitment", object)?,
            challenge: scalar(g, v, "challenge", object)?,
            response: scalar(g, v, "response", object)?,
        },
    ))
}
