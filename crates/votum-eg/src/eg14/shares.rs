//! A guardian's proven shares of one target as a message (votum's format).

use rayon::prelude::*;
use serde_json::{json, Value};
use votum_group::ModpGroup;

use crate::decrypt::ProvenShare;
use crate::decrypt::*;
use crate::json::{self, FieldError};

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
