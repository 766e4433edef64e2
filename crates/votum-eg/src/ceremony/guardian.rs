//! A guardian: its secret polynomial, the verified backups it holds, the ceremony's steps, and a
//! whole ceremony run in one place.

use std::collections::BTreeMap;
use std::fmt;

use rand_chacha::ChaCha20Rng;
use rand_core::{CryptoRng, RngCore, SeedableRng};
use rayon::prelude::*;
use votum_arith::Integer;
use votum_arith::SecretBaseTable;
use votum_elgamal::hashed::HashedCiphertext;
use votum_elgamal::SecretPolynomial;
use votum_elgamal::{PublicKey, SecretKey};
use votum_group::{Group, ModpGroup};
use votum_group::{ModElement, ModScalar, Secret};
use votum_proofs::{Eg1Oracle, SchnorrProof};

use super::backup::{backup_plaintext, read_backup_plaintext};
use super::*;

/// A guardian: its secret polynomial, the verified backups it holds for the others, and its
/// public record. Secrets are wiped on drop and never printed.
pub struct Guardian {
    pub(crate) public: GuardianPublicKey,
    pub(crate) polynomial: SecretPolynomial<ModpGroup>,
    /// sender id -> (sender's sequence order, P_sender(my sequence order)), verified
    pub(crate) backups: BTreeMap<String, Secret<ModScalar>>,
    pub(crate) number_of_guardians: usize,
}

impl fmt::Debug for Guardian {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Guardian")
            .field("id", &self.public.id)
            .field("sequence_order", &self.public.sequence_order)
            .field("backups_held", &self.backups.len())
            .finish_non_exhaustive()
    }
}

/// Independent generators for parallel work, forked from one caller-supplied generator.
pub(crate) fn fork_rngs<R: RngCore + CryptoRng>(rng: &mut R, n: usize) -> Vec<ChaCha20Rng> {
    (0..n)
        .map(|_| {
            let mut seed = [0u8; 32];
            rng.fill_bytes(&mut seed);
            let r = ChaCha20Rng::from_seed(seed);
            zeroize::Zeroize::zeroize(&mut seed);
            r
        })
        .collect()
}

impl Guardian {
    /// A new guardian with a random polynomial of `quorum` coefficients.
    pub fn new<R: RngCore + CryptoRng>(
        id: &str,
        sequence_order: u64,
        number_of_guardians: usize,
        quorum: usize,
        rng: &mut R,
    ) -> Result<Self, CeremonyError> {
        let group = ModpGroup::eg_4096();
        let polynomial = SecretPolynomial::random(&group, quorum, rng).map_err(|_| {
            CeremonyError::BadQuorum {
                quorum,
                guardians: number_of_guardians,
            }
        })?;
        Self::from_polynomial(id, sequence_order, number_of_guardians, polynomial, rng)
    }

    /// A guardian from given coefficients (tests and deterministic runs).
    pub fn from_polynomial<R: RngCore + CryptoRng>(
        id: &str,
        sequence_order: u64,
        number_of_guardians: usize,
        polynomial: SecretPolynomial<ModpGroup>,
        rng: &mut R,
    ) -> Result<Self, CeremonyError> {
        let group = ModpGroup::eg_4096();
        let quorum = polynomial.quorum();
        if quorum == 0 || quorum > number_of_guardians {
            return Err(CeremonyError::BadQuorum {
                quorum,
                guardians: number_of_guardians,
            });
        }
        if sequence_order == 0 || sequence_order > number_of_guardians as u64 {
            return Err(CeremonyError::BadSequenceOrder {
                guardian: id.to_string(),
                order: sequence_order,
                guardians: number_of_guardians,
            });
        }
        let oracle = Eg1Oracle::new(Integer::ZERO);
        let rngs = fork_rngs(rng, quorum);
        let (commitments, proofs): (Vec<_>, Vec<_>) = polynomial
            .coefficients()
            .par_iter()
            .zip(rngs)
            .map(|(a, mut r)| {
                let k = group.pow_secret(group.generator(), a);
                let proof = SchnorrProof::prove(&group, &oracle, a, &k, &mut r);
                (k, proof)
            })
            .unzip();
        Ok(Self {
            public: GuardianPublicKey {
                id: id.to_string(),
                sequence_order,
                commitments,
                proofs,
            },
            polynomial,
            backups: BTreeMap::new(),
            number_of_guardians,
        })
    }

    pub fn public_key(&self) -> &GuardianPublicKey {
        &self.public
    }

    pub fn id(&self) -> &str {
        &self.public.id
    }

    pub fn quorum(&self) -> usize {
        self.polynomial.quorum()
    }

    pub fn number_of_guardians(&self) -> usize {
        self.number_of_guardians
    }

    /// Ids of the guardians whose verified backups this guardian holds.
    pub fn backups_held(&self) -> Vec<String> {
        self.backups.keys().cloned().collect()
    }

    pub(crate) fn secret(&self) -> SecretKey<ModpGroup> {
        SecretKey::new(self.polynomial.coefficients()[0].expose().clone())
    }

    /// Refuses a message (backup or challenge answer) meant for another guardian.
    pub(crate) fn check_addressed(
        &self,
        sender: &str,
        receiver: &str,
        order: u64,
    ) -> Result<(), CeremonyError> {
        if receiver != self.public.id || order != self.public.sequence_order {
            return Err(CeremonyError::Misaddressed {
                sender: sender.to_string(),
                receiver: self.public.id.clone(),
                addressed: receiver.to_string(),
            });
        }
        Ok(())
    }

    /// Seals `P_me(receiver)` to the receiver's election key.
    pub fn backup_for<R: RngCore + CryptoRng>(
        &self,
        receiver: &GuardianPublicKey,
        rng: &mut R,
    ) -> Result<PartialKeyBackup, CeremonyError> {
        let group = ModpGroup::eg_4096();
        let mut r = group.random_scalar(rng);
        let sealed = self.backup_with_nonce(receiver, &r);
        zeroize::Zeroize::zeroize(&mut r);
        sealed
    }

    /// [`Guardian::backup_for`] with its nonce drawn already (a whole ceremony draws each sender's
    /// nonces in order, then seals every backup in parallel).
    fn backup_with_nonce(
        &self,
        receiver: &GuardianPublicKey,
        r: &ModScalar,
    ) -> Result<PartialKeyBackup, CeremonyError> {
        let group = ModpGroup::eg_4096();
        let key = PublicKey::new(&group, receiver.key().clone())
            .map_err(|_| CeremonyError::UnknownGuardian(receiver.id.clone()))?;
        self.seal_backup(receiver, r, |r| key.pow(&group, r))
    }

    /// Seals `P_me(receiver)` with nonce `r`; `key_pow(r)` is the receiver's key to the power r.
    fn seal_backup(
        &self,
        receiver: &GuardianPublicKey,
        r: &ModScalar,
        key_pow: impl FnOnce(&ModScalar) -> ModElement,
    ) -> Result<PartialKeyBackup, CeremonyError> {
        let group = ModpGroup::eg_4096();
        let mut coordinate = self.polynomial.evaluate(&group, receiver.sequence_order);
        let mut m = backup_plaintext(&self.public.id, &receiver.id, &coordinate);
        let sealed = HashedCiphertext::encrypt_with(&group, &m, r, key_pow);
        zeroize::Zeroize::zeroize(&mut m);
        zeroize::Zeroize::zeroize(&mut coordinate);
        Ok(PartialKeyBackup {
            sender: self.public.id.clone(),
            receiver: receiver.id.clone(),
            receiver_sequence_order: receiver.sequence_order,
            sealed,
        })
    }

    /// Opens a backup addressed to this guardian and checks it against the sender's commitments;
    /// keeps it only if it verifies. On `InvalidBackup` or `Unreadable` the receiver challenges
    /// the sender publicly ([`Guardian::answer_challenge`]).
    pub fn receive_backup(
        &mut self,
        sender: &GuardianPublicKey,
        backup: &PartialKeyBackup,
    ) -> Result<(), CeremonyError> {
        let group = ModpGroup::eg_4096();
        let coordinate = self.open_backup(sender, backup)?;
        if group.pow_secret(group.generator(), &coordinate)
            != sender.recovery_key(&group, self.public.sequence_order)
        {
            return Err(CeremonyError::InvalidBackup {
                sender: sender.id.clone(),
                receiver: self.public.id.clone(),
            });
        }
        self.backups.insert(sender.id.clone(), coordinate);
        Ok(())
    }

    /// The coordinate `P_sender(me)` a backup seals, once it is opened (constant-time decryption)
    /// and its labels match; not yet checked against the sender's commitments.
    fn open_backup(
        &self,
        sender: &GuardianPublicKey,
        backup: &PartialKeyBackup,
    ) -> Result<Secret<ModScalar>, CeremonyError> {
        let group = ModpGroup::eg_4096();
        self.check_addressed(
            &backup.sender,
            &backup.receiver,
            backup.receiver_sequence_order,
        )?;
        let unreadable = || CeremonyError::Unreadable {
            sender: backup.sender.clone(),
            receiver: self.public.id.clone(),
        };
        let mut plain = backup
            .sealed
            .decrypt(&group, &self.secret())
            .map_err(|_| unreadable())?;
        let opened = read_backup_plaintext(&plain);
        zeroize::Zeroize::zeroize(&mut plain);
        let (from, to, coordinate) = opened.ok_or_else(unreadable)?;
        if from != sender.id || from != backup.sender || to != self.public.id {
            return Err(unreadable());
        }
        Ok(Secret::new(coordinate))
    }

    /// Publishes `P_me(receiver)` in the clear, as the protocol asks of a challenged sender.
    pub fn answer_challenge(&self, receiver: &GuardianPublicKey) -> BackupChallengeResponse {
        let group = ModpGroup::eg_4096();
        BackupChallengeResponse {
            sender: self.public.id.clone(),
            receiver: receiver.id.clone(),
            receiver_sequence_order: receiver.sequence_order,
            coordinate: self.polynomial.evaluate(&group, receiver.sequence_order),
        }
    }

    /// Takes a share that was settled by a public challenge (verified here again).
    pub fn accept_challenge_response(
        &mut self,
        sender: &GuardianPublicKey,
        response: &BackupChallengeResponse,
    ) -> Result<(), CeremonyError> {
        let group = ModpGroup::eg_4096();
        self.check_addressed(
            &response.sender,
            &response.receiver,
            response.receiver_sequence_order,
        )?;
        response.verify(&group, sender)?;
        self.backups
            .insert(sender.id.clone(), Secret::new(response.coordinate.clone()));
        Ok(())
    }
}

/// A whole key ceremony run in one place (a test, a demo, the stateless seed endpoints): one guardian
/// per generator, guardian `i` is `guardian-i` and draws from `rngs[i - 1]`; every backup is sealed to its receiver and checked
/// by it against the sender's commitments. Returns the guardians, holding their verified backups,
/// and the backups each sent (`sent[s]`: sender `s`'s, receivers in sequence order).
///
/// Guardians work in parallel; each one's draws happen in the same order as when the steps are
/// called one by one (its polynomial, then its backups to the others in sequence order), so seeded
/// runs give the same bytes either way.
/// Whether every opened backup `(sender, receiver's sequence order x, coordinate)` is on its sender's
/// committed polynomial, `g^{P_s(x)} = Π_j K_{s,j}^{x^j}`, in one random linear combination with fresh
/// 128-bit weights w: `g^{Σ w·P_s(x)} = Π_{s,j} K_{s,j}^{Σ_x w·x^j}` (the commitments are members; the
/// argument is 62.4's). The left side's exponent mixes secrets: it is raised in constant time.
fn backups_hold<'a, R: RngCore + CryptoRng>(
    group: &ModpGroup,
    opened: impl Iterator<Item = (&'a GuardianPublicKey, u64, &'a Secret<ModScalar>)>,
    rng: &mut R,
) -> bool {
    let q = group.order();
    let mut sum = Integer::new();
    let mut exps: BTreeMap<(&str, usize), (&ModElement, Integer)> = BTreeMap::new();
    for (sender, x, coordinate) in opened {
        let w = crate::batch::weight(rng);
        sum += Integer::from(&w * coordinate.expose().value());
        let mut power = w;
        for (j, k) in sender.commitments.iter().enumerate() {
            let entry = exps
                .entry((sender.id.as_str(), j))
                .or_insert_with(|| (k, Integer::new()));
            entry.1 += &power;
            power = Integer::from(&power * x) % q;
        }
    }
    let (bases, powers): (Vec<ModElement>, Vec<ModScalar>) = exps
        .into_values()
        .map(|(k, e)| (k.clone(), group.scalar_from_integer(&e)))
        .unzip();
    let total = Secret::new(group.scalar_from_integer(&sum));
    let lhs = group.pow_secret(group.generator(), &total);
    drop(total);
    votum_arith::wipe_integer(&mut sum);
    group.multi_pow(&bases, &powers).is_ok_and(|rhs| rhs == lhs)
}

pub fn run_ceremony<R: RngCore + CryptoRng + Send>(
    quorum: usize,
    rngs: &mut [R],
) -> Result<(Vec<Guardian>, Vec<Vec<PartialKeyBackup>>), CeremonyError> {
    run_ceremony_with(quorum, rngs, |_| ()).map(|(g, s, ())| (g, s))
}

/// [`run_ceremony`], with `beside` run on the guardians' public keys while the backups are sealed,
/// opened and checked, on the cores that work leaves idle (a caller builds and checks the context
/// there, from the records as it would read them).
#[allow(clippy::type_complexity)]
pub fn run_ceremony_with<R: RngCore + CryptoRng + Send, T: Send>(
    quorum: usize,
    rngs: &mut [R],
    beside: impl FnOnce(&[GuardianPublicKey]) -> T + Send,
) -> Result<(Vec<Guardian>, Vec<Vec<PartialKeyBackup>>, T), CeremonyError> {
    let n = rngs.len();
    let mut guardians = rngs
        .par_iter_mut()
        .enumerate()
        .map(|(i, r)| Guardian::new(&format!("guardian-{}", i + 1), i as u64 + 1, n, quorum, r))
        .collect::<Result<Vec<_>, _>>()?;
    let publics: Vec<GuardianPublicKey> = guardians.iter().map(|g| g.public.clone()).collect();
    let (sent, extra) = rayon::join(
        || exchange_backups(&mut guardians, &publics, rngs),
        || beside(&publics),
    );
    Ok((guardians, sent?, extra))
}

/// Every guardian seals a backup to every other, every receiver opens and checks its backups.
fn exchange_backups<R: RngCore + CryptoRng>(
    guardians: &mut [Guardian],
    publics: &[GuardianPublicKey],
    rngs: &mut [R],
) -> Result<Vec<Vec<PartialKeyBackup>>, CeremonyError> {
    let n = guardians.len();
    // each sender's nonces drawn in receiver order (as `backup_for` one after the other would),
    // then all n(n−1) backups sealed in parallel
    let group = ModpGroup::eg_4096();
    let mut nonces: Vec<Vec<ModScalar>> = guardians
        .iter()
        .zip(rngs.iter_mut())
        .map(|(g, r)| {
            publics
                .iter()
                .filter(|p| p.id != g.public.id)
                .map(|_| group.random_scalar(r))
                .collect()
        })
        .collect();
    // (sender, receiver, nonce), by index into `guardians` and `publics`
    let pairs: Vec<(usize, usize, &ModScalar)> = guardians
        .iter()
        .enumerate()
        .flat_map(|(s, g)| {
            publics
                .iter()
                .enumerate()
                .filter(move |(_, p)| p.id != g.public.id)
                .zip(&nonces[s])
                .map(move |((j, _), r)| (s, j, r))
        })
        .collect();
    // each receiver's key is raised to n−1 nonces: one constant-time comb table per receiver
    // (built in parallel) costs less than n−1 exponentiations from three receivers on
    // (spec/63.2); the keys are the members the records were checked to hold
    let tables: Vec<Option<SecretBaseTable>> = publics
        .par_iter()
        .map(|p| (n >= 3).then(|| group.secret_table(p.key())))
        .collect();
    let sealed = pairs
        .par_iter()
        .map(|&(s, j, r)| match &tables[j] {
            Some(table) => {
                guardians[s].seal_backup(&publics[j], r, |r| {
                    // an ephemeral nonce, raised in constant time all the same (spec/63.2)
                    group.pow_secret_with(table, &Secret::new(r.clone()))
                })
            }
            None => guardians[s].backup_with_nonce(&publics[j], r),
        })
        .collect::<Result<Vec<_>, _>>();
    let senders: Vec<usize> = pairs.iter().map(|(s, _, _)| *s).collect();
    drop(pairs);
    for r in nonces.iter_mut().flatten() {
        zeroize::Zeroize::zeroize(r);
    }
    let mut sent: Vec<Vec<PartialKeyBackup>> = vec![Vec::new(); n];
    for (s, b) in senders.into_iter().zip(sealed?) {
        sent[s].push(b);
    }
    // every receiver opens the backups addressed to it (constant-time decryption, in parallel), then
    // every backup is checked against its sender's commitments in one batch (spec/63.2); if the batch
    // fails, each receiver checks its backups one by one, and the first bad one is named
    let deliveries: Vec<(usize, &GuardianPublicKey, &PartialKeyBackup)> = guardians
        .iter()
        .enumerate()
        .flat_map(|(r, receiver)| {
            publics
                .iter()
                .zip(&sent)
                .filter_map(move |(sender, backups)| {
                    let b = backups.iter().find(|b| b.receiver == receiver.public.id)?;
                    Some((r, sender, b))
                })
        })
        .collect();
    let opened = deliveries
        .par_iter()
        .map(|(r, sender, b)| {
            guardians[*r]
                .open_backup(sender, b)
                .map(|c| (*r, *sender, c))
        })
        .collect::<Result<Vec<_>, _>>()
        .map(|flat| {
            let mut per_receiver: Vec<Vec<(&GuardianPublicKey, Secret<ModScalar>)>> =
                (0..n).map(|_| Vec::new()).collect();
            for (r, sender, c) in flat {
                per_receiver[r].push((sender, c));
            }
            per_receiver
        });
    match opened {
        Ok(opened)
            if backups_hold(
                &group,
                guardians.iter().zip(&opened).flat_map(|(receiver, list)| {
                    list.iter()
                        .map(move |(sender, c)| (*sender, receiver.public.sequence_order, c))
                }),
                &mut crate::batch::batch_rng(),
            ) =>
        {
            for (receiver, list) in guardians.iter_mut().zip(opened) {
                for (sender, coordinate) in list {
                    receiver.backups.insert(sender.id.clone(), coordinate);
                }
            }
        }
        _ => guardians
            .par_iter_mut()
            .try_for_each(|receiver| -> Result<(), CeremonyError> {
                for (sender, backups) in publics.iter().zip(&sent) {
                    if let Some(b) = backups.iter().find(|b| b.receiver == receiver.public.id) {
                        receiver.receive_backup(sender, b)?;
                    }
                }
                Ok(())
            })?,
    }
    Ok(sent)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// The batched backup check (spec/63.2) accepts the true coordinates and refuses one changed
    /// coordinate or one coordinate credited to the wrong receiver.
    #[test]
    fn backups_hold_only_for_the_committed_coordinates() {
        let group = ModpGroup::eg_4096();
        let mut rng = ChaCha20Rng::seed_from_u64(632);
        let guardians: Vec<Guardian> = (1..=3u64)
            .map(|i| Guardian::new(&format!("g{i}"), i, 3, 2, &mut rng).unwrap())
            .collect();
        let mut opened = Vec::new();
        for s in &guardians {
            for x in 1..=3u64 {
                opened.push((s.public_key(), x, s.polynomial.evaluate(&group, x)));
            }
        }
        let check = |list: &[(&GuardianPublicKey, u64, ModScalar)]| {
            let mut weights = ChaCha20Rng::seed_from_u64(1);
            let secret: Vec<_> = list
                .iter()
                .map(|(s, x, c)| (*s, *x, Secret::new(c.clone())))
                .collect();
            backups_hold(
                &group,
                secret.iter().map(|(s, x, c)| (*s, *x, c)),
                &mut weights,
            )
        };
        assert!(check(&opened));
        let mut changed = opened.clone();
        changed[4].2 = group.scalar_add(&changed[4].2, &group.scalar_from_u64(1));
        assert!(!check(&changed));
        let mut misplaced = opened.clone();
        misplaced[2].1 = 1;
        assert!(!check(&misplaced));
    }
}
