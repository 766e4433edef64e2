//! The ElectionGuard 1.4 JSON that the guardians' classes read (records, challenge answers) and
//! the mapping of their errors: a leaf below `eg_context`, `eg_decrypt` and `eg_guardian`, so
//! that none of those imports another for its helpers.

use pyo3::prelude::*;
use votum_eg::ceremony::{BackupChallengeResponse, CeremonyError, GuardianPublicKey};
use votum_eg::decrypt::DecryptionError;
use votum_group::ModpGroup;

use crate::errors::NativeError;

pub(crate) fn parse(text: &str, what: &str) -> PyResult<serde_json::Value> {
    serde_json::from_str(text).map_err(|e| {
        NativeError::Ceremony(CeremonyError::Field(votum_eg::json::FieldError::Format {
            object: what.to_string(),
            message: format!("not JSON: {e}"),
        }))
        .into()
    })
}

pub(crate) fn record(text: &str) -> PyResult<GuardianPublicKey> {
    let g = ModpGroup::eg_4096();
    GuardianPublicKey::from_eg14_json(&g, &parse(text, "guardian record")?)
        .map_err(|e| NativeError::Ceremony(e).into())
}

/// A set of records, their commitments checked for membership in one batch (spec/63.1).
pub(crate) fn records(texts: &[String]) -> PyResult<Vec<GuardianPublicKey>> {
    let g = ModpGroup::eg_4096();
    let values = texts
        .iter()
        .map(|t| parse(t, "guardian record"))
        .collect::<PyResult<Vec<_>>>()?;
    GuardianPublicKey::from_eg14_json_many(&g, &values).map_err(|e| NativeError::Ceremony(e).into())
}

pub(crate) fn ceremony<T>(r: Result<T, CeremonyError>) -> PyResult<T> {
    r.map_err(|e| NativeError::Ceremony(e).into())
}

pub(crate) fn decryption<T>(r: Result<T, DecryptionError>) -> PyResult<T> {
    r.map_err(|e| NativeError::Decryption(e).into())
}

pub(crate) fn parse_answer(text: &str) -> PyResult<BackupChallengeResponse> {
    ceremony(BackupChallengeResponse::from_json(&parse(
        text,
        "challenge answer",
    )?))
}
