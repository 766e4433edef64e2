//! Checking decryption shares: one guardian's message on arrival, or every share of a decryption
//! in one batch with a one-by-one fallback that names the culprit (spec/64.4).

use rayon::prelude::*;
use votum_elgamal::Ciphertext;
use votum_group::{Group, ModElement, ModpGroup};
use votum_proofs::{Eg1Oracle, ProofError};

use super::*;
use votum_proofs::Statement;

impl Decryptor {
    /// Checks one share message on its own, as a service does when a guardian posts it: the
    /// guardian is known, a compensating guardian is not the missing one, there is one share per
    /// ciphertext of `target`, and every proof verifies against the guardian's key (or, for a
    /// compensated share, the missing guardian's recovery key for this helper). Whether enough
    /// guardians are present is [`Decryptor::decrypt`]'s question.
    pub fn check_shares(
        &self,
        target: &DecryptionTarget,
        guardian_id: &str,
        missing: Option<&str>,
        shares: &[ProvenShare],
    ) -> Result<(), DecryptionError> {
        let g = &self.group;
        let helper = self.guardian(guardian_id)?;
        let key = match missing {
            None => helper.key().clone(),
            Some(m) => {
                let lost = self.guardian(m)?;
                if lost.id == helper.id {
                    return Err(mismatch(
                        &target.object_id,
                        Mismatched::SelfCompensation(m.to_string()),
                    ));
                }
                lost.recovery_key(g, helper.sequence_order)
            }
        };
        if shares.len() != target.len() {
            return Err(DecryptionError::ShareCount {
                guardian: guardian_id.to_string(),
                expected: target.len(),
                got: shares.len(),
            });
        }
        let names = target.names();
        let cts = target.ciphertexts();
        shares
            .par_iter()
            .zip(cts.par_iter())
            .zip(names.par_iter())
            .try_for_each(|((share, ct), name)| {
                if share.share.value().jacobi(g.p()) != 1 {
                    return Err(mismatch(
                        name,
                        Mismatched::ShareNotInSubgroup(guardian_id.to_string()),
                    ));
                }
                verify_share(g, &self.oracle, &key, ct, share).map_err(|error| {
                    DecryptionError::Proof {
                        guardian: guardian_id.to_string(),
                        for_missing: missing.map(str::to_string),
                        object: name.clone(),
                        error,
                    }
                })
            })
    }
}

/// Checks one share's proof: `g^v = a·K^c`, `α^v = b·M^c`, `c = H(Q', α, β, a, b, M)`.
pub fn verify_share(
    group: &ModpGroup,
    oracle: &Eg1Oracle,
    key: &ModElement,
    ct: &Ciphertext<ModpGroup>,
    share: &ProvenShare,
) -> Result<(), ProofError> {
    share.proof.verify(
        group,
        oracle,
        &Statement {
            g1: group.generator(),
            a: key,
            g2: &ct.pad,
            b: &share.share,
        },
        &[&ct.pad, &ct.data],
        &[&share.share],
    )
}
