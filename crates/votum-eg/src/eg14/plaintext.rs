//! electionguard 1.4.0's `PlaintextTally`: written from a decryption, and a published one
//! re-checked against the ciphertexts votum computed itself.

use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap};

use serde_json::{json, Map, Value};
use votum_group::ModElement;

use crate::decrypt::ProvenShare;
use crate::decrypt::*;
use crate::json::{self};

impl PlaintextRecord {
    /// electionguard 1.4.0's `PlaintextTally` JSON (also its spoiled-ballot plaintexts).
    pub fn to_eg14_json(&self) -> Value {
        let mut contests = Map::new();
        for (cid, sels) in &self.contests {
            let mut selections = Map::new();
            for s in sels {
                let shares: Vec<Value> = s
                    .shares
                    .iter()
                    .map(|share| share_json(&s.object_id, share))
                    .collect();
                selections.insert(
                    s.object_id.clone(),
                    json!({
                        "object_id": s.object_id,
                        "tally": s.count,
                        "value": json::el(&s.value),
                        "message": json::ciphertext_json(&s.message),
                        "shares": shares,
                    }),
                );
            }
            contests.insert(
                cid.clone(),
                json!({"object_id": cid, "selections": Value::Object(selections)}),
            );
        }
        json!({"object_id": self.object_id, "contests": Value::Object(contests)})
    }
}

pub(crate) fn share_json(selection_id: &str, share: &SelectionShare) -> Value {
    match share {
        SelectionShare::Direct { guardian_id, share } => json!({
            "object_id": selection_id,
            "guardian_id": guardian_id,
            "share": json::el(&share.share),
            "proof": json::cp_json(&share.proof),
            "recovered_parts": Value::Null,
        }),
        SelectionShare::Reconstructed {
            guardian_id,
            share,
            parts,
        } => {
            let mut recovered = Map::new();
            for (helper, recovery_key, part) in parts {
                recovered.insert(
                    helper.clone(),
                    json!({
                        "object_id": selection_id,
                        "guardian_id": helper,
                        "missing_guardian_id": guardian_id,
                        "share": json::el(&part.share),
                        "recovery_key": json::el(recovery_key),
                        "proof": json::cp_json(&part.proof),
                    }),
                );
            }
            json!({
                "object_id": selection_id,
                "guardian_id": guardian_id,
                "share": json::el(share),
                "proof": Value::Null,
                "recovered_parts": Value::Object(recovered),
            })
        }
    }
}

impl Decryptor {
    /// Re-checks a published `PlaintextTally` (or spoiled-ballot plaintext) against `target`, the
    /// ciphertexts votum computed itself: same selections, same messages, every share's proof,
    /// recovery keys recomputed, rebuilt shares, values and counts recomputed and compared.
    pub fn verify_eg14(
        &self,
        target: &DecryptionTarget,
        published: &Value,
    ) -> Result<PlaintextRecord, DecryptionError> {
        let g = &self.group;
        let obj = &target.object_id;
        if json::text(published, "object_id", obj)? != obj {
            return Err(mismatch(obj, Mismatched::Document("object_id".into())));
        }
        let contests = json::field(published, "contests", obj)?
            .as_object()
            .ok_or_else(|| mismatch(obj, Mismatched::Document("contests (not a map)".into())))?;
        let expected: usize = target.contests.len();
        if contests.len() != expected {
            return Err(mismatch(
                obj,
                Mismatched::Document("the set of contests".into()),
            ));
        }
        let mut direct: BTreeMap<String, Vec<ProvenShare>> = BTreeMap::new();
        let mut comp: BTreeMap<(String, String), Vec<ProvenShare>> = BTreeMap::new();
        let mut stated: Vec<Stated> = Vec::new();
        let mut recovery: HashMap<(String, String), ModElement> = HashMap::new();
        for (cid, sels) in &target.contests {
            let c = contests.get(cid).ok_or_else(|| {
                mismatch(
                    obj,
                    Mismatched::Document(format!("contest {cid:?} (absent)")),
                )
            })?;
            let selections = json::field(c, "selections", cid)?
                .as_object()
                .ok_or_else(|| {
                    mismatch(cid, Mismatched::Document("selections (not a map)".into()))
                })?;
            if selections.len() != sels.len() {
                return Err(mismatch(
                    cid,
                    Mismatched::Document("the set of selections".into()),
                ));
            }
            for (sid, ct) in sels {
                let name = format!("{cid}/{sid}");
                let s = selections.get(sid).ok_or_else(|| {
                    mismatch(&name, Mismatched::Document("selection (absent)".into()))
                })?;
                let message =
                    json::ciphertext_in_range(g, json::field(s, "message", &name)?, &name)?;
                if !message.matches(ct) {
                    return Err(mismatch(
                        &name,
                        Mismatched::Document("message (the ciphertext decrypted)".into()),
                    ));
                }
                let count = json::uint(s, "tally", &name)?;
                // range only: each is compared with what votum computes (the message, the value, the
                // rebuilt shares, the recovery keys) or its proof forces it into the subgroup
                // once its Jacobi symbol is checked (the shares; spec/64.4)
                let value = json::in_range(g, s, "value", &name)?;
                let shares = json::field(s, "shares", &name)?.as_array().ok_or_else(|| {
                    mismatch(&name, Mismatched::Document("shares (not a list)".into()))
                })?;
                let mut rebuilt = Vec::new();
                for sh in shares {
                    let gid = json::text(sh, "guardian_id", &name)?.to_string();
                    let share = json::in_range(g, sh, "share", &name)?;
                    match json::field(sh, "recovered_parts", &name)? {
                        Value::Null => {
                            let proof = json::parse_cp(g, json::field(sh, "proof", &name)?, &name)?;
                            direct.entry(gid).or_default().push(ProvenShare {
                                share: share.bound_by_proof(),
                                proof,
                            });
                        }
                        Value::Object(parts) => {
                            for (helper, part) in parts {
                                if json::text(part, "missing_guardian_id", &name)? != gid
                                    || json::text(part, "guardian_id", &name)? != helper
                                {
                                    return Err(mismatch(&name, Mismatched::RecoveredPartIds));
                                }
                                let part_share =
                                    json::in_range(g, part, "share", &name)?.bound_by_proof();
                                let proof =
                                    json::parse_cp(g, json::field(part, "proof", &name)?, &name)?;
                                let recovery_key = json::in_range(g, part, "recovery_key", &name)?;
                                let key = match recovery.entry((helper.clone(), gid.clone())) {
                                    Entry::Occupied(e) => e.into_mut(),
                                    Entry::Vacant(e) => {
                                        let h = self.guardian(helper)?;
                                        let lost = self.guardian(&gid)?;
                                        e.insert(lost.recovery_key(g, h.sequence_order))
                                    }
                                };
                                if !recovery_key.matches(key) {
                                    return Err(mismatch(
                                        &name,
                                        Mismatched::RecoveryKey {
                                            helper: helper.clone(),
                                            missing: gid.clone(),
                                        },
                                    ));
                                }
                                comp.entry((helper.clone(), gid.clone())).or_default().push(
                                    ProvenShare {
                                        share: part_share,
                                        proof,
                                    },
                                );
                            }
                            rebuilt.push((gid, share));
                        }
                        _ => {
                            return Err(mismatch(
                                &name,
                                Mismatched::Document("recovered_parts (not a map or null)".into()),
                            ))
                        }
                    }
                }
                stated.push((count, value, rebuilt));
            }
        }
        let direct: Vec<GuardianShares> = direct
            .into_iter()
            .map(|(guardian_id, shares)| GuardianShares {
                guardian_id,
                shares,
            })
            .collect();
        let compensated: Vec<CompensatedShares> = comp
            .into_iter()
            .map(
                |((guardian_id, missing_guardian_id), shares)| CompensatedShares {
                    guardian_id,
                    missing_guardian_id,
                    shares,
                },
            )
            .collect();
        let record = self.decrypt(target, &direct, &compensated)?;
        let ours = record.contests.iter().flat_map(|(_, s)| s.iter());
        for (mine, (count, value, rebuilt)) in ours.zip(&stated) {
            let name = &mine.object_id;
            if !value.matches(&mine.value) {
                return Err(mismatch(name, Mismatched::Value));
            }
            if mine.count != *count {
                return Err(mismatch(name, Mismatched::Tally));
            }
            for (gid, share) in rebuilt {
                let ok = mine.shares.iter().any(|s| {
                    matches!(s, SelectionShare::Reconstructed { guardian_id, share: m, .. }
                        if guardian_id == gid && share.matches(m))
                });
                if !ok {
                    return Err(mismatch(name, Mismatched::RebuiltShare(gid.clone())));
                }
            }
        }
        Ok(record)
    }
}
