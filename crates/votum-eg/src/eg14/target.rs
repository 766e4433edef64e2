//! Decryption targets read from ElectionGuard 1.4 JSON.

use rayon::prelude::*;
use serde_json::Value;
use votum_group::ModpGroup;

use crate::ballot::parse_ballot;
use crate::decrypt::*;
use crate::json::{self, FieldError};
use crate::manifest::Manifest;

impl DecryptionTarget {
    /// A submitted ballot's real (non-placeholder) selections, as electionguard decrypts a
    /// spoiled ballot. The ballot must already have passed the ballot box.
    pub fn from_ballot_json(json: &str) -> Result<Self, DecryptionError> {
        // the parser checks ranges only; decryption needs subgroup members
        let ballot = parse_ballot(json)?.check_members()?;
        let contests = ballot
            .contests
            .into_iter()
            .map(|c| {
                let sels = c
                    .selections
                    .into_iter()
                    .filter(|s| !s.is_placeholder)
                    .map(|s| (s.object_id, s.ciphertext))
                    .collect();
                (c.object_id, sels)
            })
            .collect();
        Ok(Self {
            object_id: ballot.object_id,
            contests,
        })
    }

    /// An encrypted tally in electionguard 1.4.0's `CiphertextTally` JSON, read in manifest
    /// order: every selection of the manifest must be there, each ciphertext a subgroup member.
    pub fn from_tally_json(manifest: &Manifest, v: &Value) -> Result<Self, DecryptionError> {
        let g = ModpGroup::eg_4096();
        let object_id = json::text(v, "object_id", "encrypted tally")?.to_string();
        let contests = json::field(v, "contests", &object_id)?;
        let mut out = Vec::with_capacity(manifest.contests.len());
        let mut read_all = Vec::with_capacity(manifest.contests.len());
        for c in &manifest.contests {
            let object = format!("{object_id}/{}", c.object_id);
            let sels = json::field(contests, &c.object_id, &object_id)?;
            let sels = json::field(sels, "selections", &object)?;
            let read: Vec<(String, json::CiphertextInRange)> = c
                .ballot_selections
                .par_iter()
                .map(|s| {
                    let object = format!("{object}/{}", s.object_id);
                    let ct = json::field(
                        json::field(sels, &s.object_id, &object)?,
                        "ciphertext",
                        &object,
                    )?;
                    Ok((
                        s.object_id.clone(),
                        json::ciphertext_in_range(&g, ct, &object)?,
                    ))
                })
                .collect::<Result<_, FieldError>>()?;
            read_all.push((c.object_id.clone(), read));
        }
        // subgroup membership of all of them at once, in manifest order
        let cts = read_all
            .iter()
            .flat_map(|(_, sels)| sels.iter().map(|(_, ct)| ct.clone()))
            .collect();
        let mut cts = json::check_ciphertexts(&g, cts)
            .map_err(|(bad, what)| {
                let place = read_all
                    .iter()
                    .flat_map(|(c, sels)| sels.iter().map(move |(s, _)| (c, s)))
                    .nth(bad)
                    .map_or_else(
                        || object_id.clone(),
                        |(c, s)| format!("{object_id}/{c}/{s}"),
                    );
                FieldError::BadElement {
                    object: place,
                    what,
                    reason: votum_group::GroupError::NotInSubgroup,
                }
            })?
            .into_iter();
        for (c, sels) in read_all {
            let checked = sels.into_iter().map(|(s, _)| s).zip(cts.by_ref()).collect();
            out.push((c, checked));
        }
        Ok(Self {
            object_id,
            contests: out,
        })
    }
}
