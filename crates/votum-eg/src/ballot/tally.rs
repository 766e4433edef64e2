//! The streaming encrypted tally: per (contest, selection) the product of cast ballots'
//! ciphertexts, and its storage codec.

use std::collections::BTreeMap;

use votum_arith::Integer;
use votum_elgamal::Ciphertext;
use votum_group::{Group, ModpGroup};

use super::*;
use crate::encrypted::EncryptedBallot;
use crate::json::{check_ciphertexts, CiphertextInRange};
use crate::manifest::Manifest;

/// Encrypted sums by (contest id, selection id).
pub type TallyMap = BTreeMap<(String, String), Ciphertext<ModpGroup>>;

/// Adds `ct` into the sum at `key` (a missing sum is the encryption of 0 with nonce 0).
pub fn accumulate(
    g: &ModpGroup,
    tally: &mut TallyMap,
    key: (String, String),
    ct: &Ciphertext<ModpGroup>,
) {
    let entry = tally.entry(key).or_insert_with(|| Ciphertext::zero(g));
    *entry = entry.add(g, ct);
}

/// `tally` with every selection of `manifest`: selections no cast ballot reached are the
/// encryption of 0 with nonce 0; sums for selections the manifest does not have are left out.
pub fn complete_tally(manifest: &Manifest, tally: &TallyMap) -> TallyMap {
    let g = ModpGroup::eg_4096();
    let mut out = BTreeMap::new();
    for c in &manifest.contests {
        for s in &c.ballot_selections {
            let key = (c.object_id.clone(), s.object_id.clone());
            let value = tally
                .get(&key)
                .cloned()
                .unwrap_or_else(|| Ciphertext::zero(&g));
            out.insert(key, value);
        }
    }
    out
}

/// A tally in manifest order as bytes: for each selection, pad then data, each `element_len`
/// big-endian bytes (spec/62.6). Selections no ballot had are the encryption of 0 with nonce 0.
pub fn tally_to_bytes(manifest: &Manifest, tally: &TallyMap) -> Vec<u8> {
    let g = ModpGroup::eg_4096();
    let zero = Ciphertext::zero(&g);
    let mut out = Vec::new();
    for c in &manifest.contests {
        for s in &c.ballot_selections {
            let ct = tally
                .get(&(c.object_id.clone(), s.object_id.clone()))
                .unwrap_or(&zero);
            out.extend(g.encode_element(&ct.pad));
            out.extend(g.encode_element(&ct.data));
        }
    }
    out
}

/// Reads [`tally_to_bytes`]. Values are only range-checked: this reads back what votum wrote
/// to its own storage, not input from others.
pub fn tally_from_bytes(manifest: &Manifest, bytes: &[u8]) -> Result<TallyMap, BallotError> {
    let g = ModpGroup::eg_4096();
    let len = g.element_len();
    let keys: Vec<(String, String)> = manifest
        .contests
        .iter()
        .flat_map(|c| {
            c.ballot_selections
                .iter()
                .map(|s| (c.object_id.clone(), s.object_id.clone()))
        })
        .collect();
    if bytes.len() != keys.len() * 2 * len {
        return Err(BallotError::Format(format!(
            "a stored tally of {} bytes does not fit {} selections",
            bytes.len(),
            keys.len()
        )));
    }
    let element = |chunk: &[u8]| {
        g.element_in_range(&Integer::from_digits(chunk, votum_arith::Order::Msf))
            .map_err(|e| BallotError::Format(format!("stored tally: {e}")))
    };
    let mut read = Vec::with_capacity(keys.len());
    for chunk in bytes.chunks(2 * len) {
        read.push(CiphertextInRange {
            pad: element(&chunk[..len])?,
            data: element(&chunk[len..])?,
        });
    }
    // stored bytes come from outside this process (a database): one batched membership test
    let cts = check_ciphertexts(&g, read).map_err(|(i, what)| {
        BallotError::Format(format!(
            "stored tally: {what} of ciphertext {i} is not in the subgroup"
        ))
    })?;
    let out: TallyMap = keys.into_iter().zip(cts).collect();
    Ok(out)
}

/// Adds each of a ballot's selections, placeholders excluded, into `tally`.
pub fn add_ballot(g: &ModpGroup, tally: &mut TallyMap, ballot: &EncryptedBallot) {
    for c in &ballot.contests {
        for s in c.selections.iter().filter(|s| !s.is_placeholder) {
            accumulate(
                g,
                tally,
                (c.object_id.clone(), s.object_id.clone()),
                &s.ciphertext,
            );
        }
    }
}
