//! Combining checked shares into counts: who is present, who is missing and who stands in for
//! them, every proof, then each selection's product of shares and its discrete log.

use std::collections::{HashMap, HashSet};

use rayon::prelude::*;
use votum_elgamal::threshold::lagrange_coefficient;
use votum_group::{Group, ModElement, ModScalar};

use super::*;
use crate::ceremony::GuardianPublicKey;
use crate::decrypt::{verify_share, ProvenShare};

impl Decryptor {
    /// Checks every share and combines them into counts. `direct` holds one entry per present
    /// guardian; `compensated` one per (present helper, missing guardian) pair.
    pub fn decrypt(
        &self,
        target: &DecryptionTarget,
        direct: &[GuardianShares],
        compensated: &[CompensatedShares],
    ) -> Result<PlaintextRecord, DecryptionError> {
        let g = &self.group;
        let n = target.len();
        let names = target.names();
        let cts = target.ciphertexts();

        // who is present, who is missing
        let mut present: Vec<&GuardianPublicKey> = Vec::new();
        let mut seen = HashSet::new();
        for d in direct {
            let guardian = self.guardian(&d.guardian_id)?;
            if !seen.insert(d.guardian_id.as_str()) {
                return Err(DecryptionError::DuplicateShare(d.guardian_id.clone()));
            }
            if d.shares.len() != n {
                return Err(DecryptionError::ShareCount {
                    guardian: d.guardian_id.clone(),
                    expected: n,
                    got: d.shares.len(),
                });
            }
            present.push(guardian);
        }
        if present.len() < self.quorum {
            return Err(DecryptionError::TooFewGuardians {
                needed: self.quorum,
                got: present.len(),
            });
        }
        let missing: Vec<&GuardianPublicKey> = self
            .guardians
            .iter()
            .filter(|g| !seen.contains(g.id.as_str()))
            .collect();
        // helpers per missing guardian, with the recovery key recomputed from commitments
        let mut helpers: HashMap<&str, Vec<(&GuardianPublicKey, ModElement, &CompensatedShares)>> =
            HashMap::new();
        let mut pairs = HashSet::new();
        for c in compensated {
            let helper = self.guardian(&c.guardian_id)?;
            let lost = self.guardian(&c.missing_guardian_id)?;
            if !seen.contains(helper.id.as_str()) {
                return Err(DecryptionError::UnknownGuardian(format!(
                    "{} (compensating while not present)",
                    helper.id
                )));
            }
            if seen.contains(lost.id.as_str()) {
                return Err(mismatch(
                    &target.object_id,
                    Mismatched::CompensationForPresent(lost.id.clone()),
                ));
            }
            if !pairs.insert((helper.id.as_str(), lost.id.as_str())) {
                return Err(DecryptionError::DuplicateShare(format!(
                    "{} for {}",
                    helper.id, lost.id
                )));
            }
            if c.shares.len() != n {
                return Err(DecryptionError::ShareCount {
                    guardian: c.guardian_id.clone(),
                    expected: n,
                    got: c.shares.len(),
                });
            }
            let key = lost.recovery_key(g, helper.sequence_order);
            helpers
                .entry(lost.id.as_str())
                .or_default()
                .push((helper, key, c));
        }
        let mut weights: HashMap<&str, Vec<ModScalar>> = HashMap::new();
        for m in &missing {
            let hs = helpers.entry(m.id.as_str()).or_default();
            if hs.len() < self.quorum {
                return Err(DecryptionError::NotEnoughHelpers {
                    missing: m.id.clone(),
                    needed: self.quorum,
                    got: hs.len(),
                });
            }
            hs.sort_by_key(|(h, _, _)| h.sequence_order);
            let xs: Vec<u64> = hs.iter().map(|(h, _, _)| h.sequence_order).collect();
            let w = xs
                .iter()
                .map(|&x| lagrange_coefficient(g, x, &xs))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|_| DecryptionError::DuplicateShare(m.id.clone()))?;
            weights.insert(m.id.as_str(), w);
        }

        // every proof: challenges and Jacobi symbols one by one, the equations in one batch
        // (spec/64.4); when the batch fails, each proof on its own names the culprit
        let mut keys: Vec<&ModElement> = Vec::new();
        // (guardian, the missing guardian a compensated share stands in for), key, ciphertext, share
        type Check<'s> = ((&'s str, Option<&'s str>), usize, usize, &'s ProvenShare);
        let mut checks: Vec<Check<'_>> = Vec::new();
        for (d, p) in direct.iter().zip(&present) {
            keys.push(p.key());
            for (i, s) in d.shares.iter().enumerate() {
                checks.push(((d.guardian_id.as_str(), None), keys.len() - 1, i, s));
            }
        }
        for hs in helpers.values() {
            for (h, key, c) in hs {
                keys.push(key);
                for (i, s) in c.shares.iter().enumerate() {
                    checks.push((
                        (h.id.as_str(), Some(c.missing_guardian_id.as_str())),
                        keys.len() - 1,
                        i,
                        s,
                    ));
                }
            }
        }
        let verify_one = |((who, for_missing), key, i, share): &Check<'_>| {
            verify_share(g, &self.oracle, keys[*key], &cts[*i], share).map_err(|error| {
                DecryptionError::Proof {
                    guardian: who.to_string(),
                    for_missing: for_missing.map(str::to_string),
                    object: names[*i].clone(),
                    error,
                }
            })
        };
        checks.par_iter().try_for_each(|chk| {
            let ((who, _), _, i, s) = chk;
            let ct = &cts[*i];
            if s.share.value().jacobi(g.p()) != 1 {
                return Err(mismatch(
                    &names[*i],
                    Mismatched::ShareNotInSubgroup(who.to_string()),
                ));
            }
            let challenge_ok = s
                .proof
                .check_challenge(g, &self.oracle, &[&ct.pad, &ct.data], &[&s.share])
                .is_ok();
            let commitments_ok = [&s.proof.pad, &s.proof.data]
                .iter()
                .all(|x| x.value().jacobi(g.p()) == 1);
            if !challenge_ok || !commitments_ok {
                verify_one(chk)?;
                return Err(mismatch(
                    &names[*i],
                    Mismatched::CommitmentsNotInSubgroup(who.to_string()),
                ));
            }
            Ok(())
        })?;
        let batch: Vec<crate::batch::ShareCheck<'_>> = checks
            .iter()
            .map(|(_, key, i, share)| crate::batch::ShareCheck {
                key: *key,
                ciphertext: *i,
                share: &share.share,
                proof: &share.proof,
            })
            .collect();
        let mut rng = crate::batch::batch_rng();
        if !crate::batch::shares_hold(g, &keys, &cts, &batch, &mut rng) {
            checks.par_iter().try_for_each(verify_one)?;
        }

        // combine, selection by selection
        let combined: Vec<PlaintextSelection> = (0..n)
            .into_par_iter()
            .map(|i| -> Result<PlaintextSelection, DecryptionError> {
                let mut product = g.identity();
                let mut shares = Vec::with_capacity(self.guardians.len());
                for (d, _) in direct.iter().zip(&present) {
                    product = g.op(&product, &d.shares[i].share);
                    shares.push(SelectionShare::Direct {
                        guardian_id: d.guardian_id.clone(),
                        share: d.shares[i].clone(),
                    });
                }
                for m in &missing {
                    let hs = &helpers[m.id.as_str()];
                    let bases: Vec<ModElement> = hs
                        .iter()
                        .map(|(_, _, c)| c.shares[i].share.clone())
                        .collect();
                    let rebuilt = g
                        .signed_multi_pow(&bases, &weights[m.id.as_str()])
                        .ok_or_else(|| mismatch(&names[i], Mismatched::CompensatedShares))?;
                    product = g.op(&product, &rebuilt);
                    shares.push(SelectionShare::Reconstructed {
                        guardian_id: m.id.clone(),
                        share: rebuilt,
                        parts: hs
                            .iter()
                            .map(|(h, key, c)| (h.id.clone(), key.clone(), c.shares[i].clone()))
                            .collect(),
                    });
                }
                let value = g.div(&cts[i].data, &product);
                let count =
                    self.dlog
                        .log(&value)
                        .map_err(|_| DecryptionError::CountOutOfRange {
                            object: names[i].clone(),
                            max: self.dlog.max(),
                        })?;
                let object_id = names[i]
                    .split_once('/')
                    .map_or(names[i].clone(), |(_, s)| s.to_string());
                Ok(PlaintextSelection {
                    object_id,
                    count,
                    value,
                    message: cts[i].clone(),
                    shares,
                })
            })
            .collect::<Result<_, _>>()?;

        let mut it = combined.into_iter();
        let contests = target
            .contests
            .iter()
            .map(|(cid, sels)| (cid.clone(), it.by_ref().take(sels.len()).collect()))
            .collect();
        Ok(PlaintextRecord {
            object_id: target.object_id.clone(),
            contests,
        })
    }
}
