//! Producing decryption shares with proofs: a guardian's own, and compensated ones for a missing
//! guardian from its backups.

use rand_core::{CryptoRng, RngCore};
use rayon::prelude::*;
use votum_arith::Integer;
use votum_elgamal::Ciphertext;
use votum_group::{Group, ModpGroup};
use votum_group::{ModScalar, Secret};
use votum_proofs::{ChaumPedersenProof, Eg1Oracle};

use super::ProvenShare;
use crate::ceremony::guardian::fork_rngs;
use crate::ceremony::*;

impl Guardian {
    /// Proven shares `α^x` of every ciphertext for each secret `x` (outer: per secret). All of
    /// a ciphertext's powers (the shares and the proof nonces `α^w`) come from one constant-time
    /// comb table of its `α`; `g^w` from the group's constant-time comb of g.
    pub(crate) fn prove_shares<R: RngCore + CryptoRng>(
        secrets: &[&Secret<ModScalar>],
        ciphertexts: &[Ciphertext<ModpGroup>],
        extended_base_hash: &Integer,
        rng: &mut R,
    ) -> Vec<Vec<ProvenShare>> {
        let group = ModpGroup::eg_4096();
        let oracle = Eg1Oracle::new(extended_base_hash.clone());
        let rngs = fork_rngs(rng, ciphertexts.len());
        let per_ciphertext: Vec<Vec<ProvenShare>> = ciphertexts
            .par_iter()
            .zip(rngs)
            .map(|(ct, mut r)| {
                let table = group.secret_table(&ct.pad);
                secrets
                    .iter()
                    .map(|secret| {
                        let share = group.pow_secret_with(&table, secret);
                        let w = group.random_secret(&mut r);
                        // a = g^w, b = α^w: constant-time, w would reveal the secret
                        let a = group.pow_secret(group.generator(), &w);
                        let b = group.pow_secret_with(&table, &w);
                        let challenge = votum_proofs::ChallengeOracle::challenge(
                            &oracle,
                            &group,
                            votum_proofs::ProofKind::ChaumPedersen,
                            &[&ct.pad, &ct.data, &a, &b, &share],
                        );
                        let response = group
                            .scalar_add(w.expose(), &group.scalar_mul(&challenge, secret.expose()));
                        drop(w);
                        ProvenShare {
                            share,
                            proof: ChaumPedersenProof {
                                pad: a,
                                data: b,
                                challenge,
                                response,
                            },
                        }
                    })
                    .collect()
            })
            .collect();
        let mut out: Vec<Vec<ProvenShare>> = secrets
            .iter()
            .map(|_| Vec::with_capacity(ciphertexts.len()))
            .collect();
        for shares in per_ciphertext {
            for (list, share) in out.iter_mut().zip(shares) {
                list.push(share);
            }
        }
        out
    }

    /// This guardian's decryption shares `M_i = α^{s_i}` of each ciphertext, with proofs.
    pub fn decryption_shares<R: RngCore + CryptoRng>(
        &self,
        ciphertexts: &[Ciphertext<ModpGroup>],
        extended_base_hash: &Integer,
        rng: &mut R,
    ) -> Vec<ProvenShare> {
        Self::prove_shares(
            &[&self.polynomial.coefficients()[0]],
            ciphertexts,
            extended_base_hash,
            rng,
        )
        .pop()
        .unwrap_or_default()
    }

    /// Shares `M_{i,ℓ} = α^{P_ℓ(i)}` standing in for the missing guardian ℓ, from ℓ's backup;
    /// each is proven against the recovery key `g^{P_ℓ(i)}` anyone computes from ℓ's commitments.
    pub fn compensated_shares<R: RngCore + CryptoRng>(
        &self,
        missing: &GuardianPublicKey,
        ciphertexts: &[Ciphertext<ModpGroup>],
        extended_base_hash: &Integer,
        rng: &mut R,
    ) -> Result<Vec<ProvenShare>, CeremonyError> {
        let (_, mut compensated) =
            self.all_shares(false, &[missing], ciphertexts, extended_base_hash, rng)?;
        Ok(compensated.pop().unwrap_or_default())
    }

    /// A present guardian's whole part of a decryption: its own shares (when `with_own`) and its
    /// compensated shares for each of `missing`, all from one comb table per ciphertext (the
    /// cheapest way). Returns (own shares, empty without `with_own`; one list per missing
    /// guardian, in order).
    pub fn all_shares<R: RngCore + CryptoRng>(
        &self,
        with_own: bool,
        missing: &[&GuardianPublicKey],
        ciphertexts: &[Ciphertext<ModpGroup>],
        extended_base_hash: &Integer,
        rng: &mut R,
    ) -> Result<(Vec<ProvenShare>, Vec<Vec<ProvenShare>>), CeremonyError> {
        let mut secrets: Vec<&Secret<ModScalar>> = Vec::new();
        if with_own {
            secrets.push(&self.polynomial.coefficients()[0]);
        }
        for m in missing {
            let coordinate =
                self.backups
                    .get(&m.id)
                    .ok_or_else(|| CeremonyError::MissingBackup {
                        holder: self.public.id.clone(),
                        missing: m.id.clone(),
                    })?;
            secrets.push(coordinate);
        }
        let mut lists = Self::prove_shares(&secrets, ciphertexts, extended_base_hash, rng);
        let direct = if with_own {
            lists.remove(0)
        } else {
            Vec::new()
        };
        Ok((direct, lists))
    }
}
