//! The authorities' signatures on their entries (spec/91.9): in an election whose parameters name
//! the authorities' node keys, each `trustee-i`, `mix-m` and `decryption-t` entry is followed by a
//! `signature` entry of the same name, the authority's Ed25519 signature (votum-node's record
//! domain) on a statement binding the parameters, the head the authority acted on, the entry's
//! kind and name and its payload. The board, every party's copy of it and the verifier (V-MIX-08)
//! check them; a record without signing keys has no signature entries (one process wrote it).

use sha2::Digest;

use crate::params::Parameters;

/// The kinds of entry an authority signs.
pub const SIGNED_KINDS: [&str; 3] = ["trustee", "mix", "decryption"];

/// What authority signs entry `name` of `kind`: `trustee-i`, `mix-m` and `decryption-t` are
/// authority i, m and t's (1-based). `None` for any other entry.
pub fn signer_of(kind: &str, name: &str) -> Option<usize> {
    let prefix = match kind {
        "trustee" => "trustee-",
        "mix" => "mix-",
        "decryption" => "decryption-",
        _ => return None,
    };
    let k: usize = name.strip_prefix(prefix)?.parse().ok()?;
    (k > 0 && name == format!("{prefix}{k}")).then_some(k)
}

/// The statement an authority signs for its entry: the parameters' digest, the head it acted on
/// (`context`: the head after `parameters` for a trustee's key, the proof's context for a
/// shuffle, the decryption context for a share), kind and name (each with a length byte) and the
/// payload's SHA-256.
pub fn statement(
    params_digest: &[u8; 32],
    context: &[u8; 32],
    kind: &str,
    name: &str,
    payload: &[u8],
) -> Vec<u8> {
    statement_of_digest(
        params_digest,
        context,
        kind,
        name,
        &sha2::Sha256::digest(payload).into(),
    )
}

/// [`statement`], given the payload's SHA-256.
pub fn statement_of_digest(
    params_digest: &[u8; 32],
    context: &[u8; 32],
    kind: &str,
    name: &str,
    payload_digest: &[u8; 32],
) -> Vec<u8> {
    let mut m = b"votum/v1/mix/posted\0".to_vec();
    m.extend_from_slice(params_digest);
    m.extend_from_slice(context);
    for label in [kind, name] {
        m.push(label.len().min(255) as u8);
        m.extend_from_slice(label.as_bytes());
    }
    m.extend_from_slice(payload_digest);
    m
}

/// Whether `signature` is the signature of the authority the parameters name for entry `name` of
/// `kind` on that entry's statement.
pub fn check_signature(
    params: &Parameters,
    params_digest: &[u8; 32],
    context: &[u8; 32],
    kind: &str,
    name: &str,
    payload: &[u8],
    signature: &[u8],
) -> bool {
    let digest: [u8; 32] = sha2::Sha256::digest(payload).into();
    check_signature_of_digest(
        params,
        params_digest,
        context,
        kind,
        name,
        &digest,
        signature,
    )
}

/// [`check_signature`], given the payload's SHA-256.
pub fn check_signature_of_digest(
    params: &Parameters,
    params_digest: &[u8; 32],
    context: &[u8; 32],
    kind: &str,
    name: &str,
    payload_digest: &[u8; 32],
    signature: &[u8],
) -> bool {
    let key = signer_of(kind, name).and_then(|k| params.signers.get(k - 1));
    let (Some(key), Ok(sig)) = (key, <[u8; 64]>::try_from(signature)) else {
        return false;
    };
    let m = statement_of_digest(params_digest, context, kind, name, payload_digest);
    votum_node::verify_record(key, &m, &sig)
}
