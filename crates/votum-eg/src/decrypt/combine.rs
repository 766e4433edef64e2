//! Combining checked shares into counts, in three steps: the roll call (who is present, who is
//! missing and who stands in for them, with their weights), every proof, then each selection's
//! product of shares and its discrete log.

use std::collections::{HashMap, HashSet};

use rayon::prelude::*;
use votum_elgamal::threshold::lagrange_coefficient;
use votum_group::{Group, ModElement, ModScalar};

use super::*;
use crate::ceremony::GuardianPublicKey;
use crate::decrypt::{verify_share, ProvenShare};

/// A present guardian standing in for a missing one: its shares, and the recovery key they are
/// proven against (recomputed from the missing guardian's commitments).
struct Helper<'a> {
    guardian: &'a GuardianPublicKey,
    recovery_key: ModElement,
    shares: &'a CompensatedShares,
}

/// Who takes part in a decryption, checked against the guardians of the election.
struct RollCall<'a> {
    /// one per entry of `direct`, in its order
    present: Vec<&'a GuardianPublicKey>,
    missing: Vec<&'a GuardianPublicKey>,
    /// per missing guardian: at least a quorum of helpers, by sequence order
    helpers: HashMap<&'a str, Vec<Helper<'a>>>,
    /// per missing guardian: the Lagrange weight of each of its helpers, in the same order
    weights: HashMap<&'a str, Vec<ModScalar>>,
}

/// One share to check: (guardian, the missing guardian it stands in for), index of the key, index
/// of the ciphertext, the share with its proof.
type Check<'s> = ((&'s str, Option<&'s str>), usize, usize, &'s ProvenShare);

impl Decryptor {
    /// Checks every share and combines them into counts. `direct` holds one entry per present
    /// guardian; `compensated` one per (present helper, missing guardian) pair.
    pub fn decrypt(
        &self,
        target: &DecryptionTarget,
        direct: &[GuardianShares],
        compensated: &[CompensatedShares],
    ) -> Result<PlaintextRecord, DecryptionError> {
        let roll = self.roll_call(target, direct, compensated)?;
        let names = target.names();
        let cts = target.ciphertexts();
        self.check_proofs(&names, &cts, direct, &roll)?;
        let combined: Vec<PlaintextSelection> = (0..target.len())
            .into_par_iter()
            .map(|i| self.combine_selection(&names[i], &cts[i], i, direct, &roll))
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

    /// Who is present (each once, with a share per selection), who is missing, and for each
    /// missing guardian at least a quorum of present helpers, each pair once.
    fn roll_call<'a>(
        &'a self,
        target: &DecryptionTarget,
        direct: &'a [GuardianShares],
        compensated: &'a [CompensatedShares],
    ) -> Result<RollCall<'a>, DecryptionError> {
        let g = &self.group;
        let n = target.len();
        let count_ok = |guardian: &str, got: usize| {
            if got == n {
                Ok(())
            } else {
                Err(DecryptionError::ShareCount {
                    guardian: guardian.to_string(),
                    expected: n,
                    got,
                })
            }
        };
        let mut present: Vec<&GuardianPublicKey> = Vec::new();
        let mut seen = HashSet::new();
        for d in direct {
            let guardian = self.guardian(&d.guardian_id)?;
            if !seen.insert(d.guardian_id.as_str()) {
                return Err(DecryptionError::DuplicateShare(d.guardian_id.clone()));
            }
            count_ok(&d.guardian_id, d.shares.len())?;
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
        let mut helpers: HashMap<&str, Vec<Helper<'a>>> = HashMap::new();
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
            count_ok(&c.guardian_id, c.shares.len())?;
            helpers.entry(lost.id.as_str()).or_default().push(Helper {
                guardian: helper,
                recovery_key: lost.recovery_key(g, helper.sequence_order),
                shares: c,
            });
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
            hs.sort_by_key(|h| h.guardian.sequence_order);
            let xs: Vec<u64> = hs.iter().map(|h| h.guardian.sequence_order).collect();
            let w = xs
                .iter()
                .map(|&x| lagrange_coefficient(g, x, &xs))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|_| DecryptionError::DuplicateShare(m.id.clone()))?;
            weights.insert(m.id.as_str(), w);
        }
        Ok(RollCall {
            present,
            missing,
            helpers,
            weights,
        })
    }

    /// Every proof: challenges and Jacobi symbols one by one, the equations in one batch
    /// (spec/64.4); when the batch fails, each proof on its own names the culprit.
    fn check_proofs(
        &self,
        names: &[String],
        cts: &[Ciphertext<ModpGroup>],
        direct: &[GuardianShares],
        roll: &RollCall<'_>,
    ) -> Result<(), DecryptionError> {
        let g = &self.group;
        let mut keys: Vec<&ModElement> = Vec::new();
        let mut checks: Vec<Check<'_>> = Vec::new();
        for (d, p) in direct.iter().zip(&roll.present) {
            keys.push(p.key());
            for (i, s) in d.shares.iter().enumerate() {
                checks.push(((d.guardian_id.as_str(), None), keys.len() - 1, i, s));
            }
        }
        for hs in roll.helpers.values() {
            for h in hs {
                keys.push(&h.recovery_key);
                let who = (
                    h.guardian.id.as_str(),
                    Some(h.shares.missing_guardian_id.as_str()),
                );
                for (i, s) in h.shares.shares.iter().enumerate() {
                    checks.push((who, keys.len() - 1, i, s));
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
        if !crate::batch::shares_hold(g, &keys, cts, &batch, &mut rng) {
            checks.par_iter().try_for_each(verify_one)?;
        }
        Ok(())
    }

    /// Selection `i` (named `name`, ciphertext `ct`): the product of the present guardians' shares
    /// and of each missing guardian's share rebuilt from its helpers, then the count.
    fn combine_selection(
        &self,
        name: &str,
        ct: &Ciphertext<ModpGroup>,
        i: usize,
        direct: &[GuardianShares],
        roll: &RollCall<'_>,
    ) -> Result<PlaintextSelection, DecryptionError> {
        let g = &self.group;
        let mut product = g.identity();
        let mut shares = Vec::with_capacity(self.guardians.len());
        for d in direct {
            product = g.op(&product, &d.shares[i].share);
            shares.push(SelectionShare::Direct {
                guardian_id: d.guardian_id.clone(),
                share: d.shares[i].clone(),
            });
        }
        for m in &roll.missing {
            let hs = &roll.helpers[m.id.as_str()];
            let bases: Vec<ModElement> = hs
                .iter()
                .map(|h| h.shares.shares[i].share.clone())
                .collect();
            let rebuilt = g
                .signed_multi_pow(&bases, &roll.weights[m.id.as_str()])
                .ok_or_else(|| mismatch(name, Mismatched::CompensatedShares))?;
            product = g.op(&product, &rebuilt);
            shares.push(SelectionShare::Reconstructed {
                guardian_id: m.id.clone(),
                share: rebuilt,
                parts: hs
                    .iter()
                    .map(|h| {
                        (
                            h.guardian.id.clone(),
                            h.recovery_key.clone(),
                            h.shares.shares[i].clone(),
                        )
                    })
                    .collect(),
            });
        }
        let value = g.div(&ct.data, &product);
        let count = self
            .dlog
            .log(&value)
            .map_err(|_| DecryptionError::CountOutOfRange {
                object: name.to_string(),
                max: self.dlog.max(),
            })?;
        let object_id = name
            .split_once('/')
            .map_or(name.to_string(), |(_, s)| s.to_string());
        Ok(PlaintextSelection {
            object_id,
            count,
            value,
            message: ct.clone(),
            shares,
        })
    }
}
