//! Readers of an egk-ec record's JSON (spec/65.3), shared by the verifier and by a guardian that reads the
//! record before it decrypts: each says which field is wrong. Elements are decoded, not yet tested for
//! membership (the caller tests them in batches).

use std::path::Path;

use base64ct::{Base64, Encoding};
use serde_json::Value;
use votum_elgamal::Ciphertext;

use crate::manifest::text;
use crate::{ContestData, Eg2Group, Pair};

/// Reads at most 64 MiB of a JSON document (one ballot, the tally, the manifest are far smaller).
pub fn read_bytes(path: &Path) -> Result<Vec<u8>, String> {
    let name = file_name(path);
    let meta = std::fs::metadata(path).map_err(|e| format!("{name}: {e}"))?;
    if meta.len() > 64 << 20 {
        return Err(format!("{name} is larger than 64 MiB"));
    }
    std::fs::read(path).map_err(|e| format!("{name}: {e}"))
}

pub fn read_json(path: &Path) -> Result<Value, String> {
    let bytes = read_bytes(path)?;
    serde_json::from_slice(&bytes).map_err(|e| format!("{}: not JSON: {e}", file_name(path)))
}

pub fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

// ---- field readers: each says which field is wrong ----

pub fn b64(v: &Value, field: &str) -> Result<Vec<u8>, String> {
    Base64::decode_vec(text(v, field)?).map_err(|_| format!("`{field}` is not base64"))
}

pub fn hash32(v: &Value, field: &str) -> Result<[u8; 32], String> {
    b64(v, field)?
        .try_into()
        .map_err(|_| format!("`{field}` is not 32 bytes"))
}

/// An element as written: base64 of the writer's encoding. Its subgroup membership is tested by the
/// caller, in batches.
pub fn element<G: Eg2Group>(group: &G, v: &Value, field: &str) -> Result<G::Element, String> {
    group
        .read_element(&b64(v, field)?)
        .map_err(|e| format!("`{field}` is {e}"))
}

/// A scalar as written: base64 of at most 32 bytes, below q.
pub fn scalar<G: Eg2Group>(group: &G, v: &Value, field: &str) -> Result<G::Scalar, String> {
    group
        .read_scalar(&b64(v, field)?)
        .map_err(|e| format!("`{field}` is {e}"))
}

pub fn pair<G: Eg2Group>(group: &G, v: &Value) -> Result<Pair<G>, String> {
    Ok(Pair {
        c: scalar(group, v, "challenge")?,
        v: scalar(group, v, "response")?,
    })
}

pub fn ciphertext<G: Eg2Group>(group: &G, v: &Value) -> Result<Ciphertext<G>, String> {
    Ok(Ciphertext {
        pad: element(group, v, "pad")?,
        data: element(group, v, "data")?,
    })
}

pub fn range_proof<G: Eg2Group>(group: &G, v: &Value) -> Result<Vec<Pair<G>>, String> {
    v["proofs"]
        .as_array()
        .ok_or("the range proof has no `proofs` list")?
        .iter()
        .map(|p| pair(group, p))
        .collect()
}

pub fn contest_data<G: Eg2Group>(group: &G, v: &Value) -> Result<ContestData<G>, String> {
    Ok(ContestData {
        c0: element(group, v, "c0")?,
        c1: b64(v, "c1")?,
        c2: hash32(v, "c2")?,
    })
}
