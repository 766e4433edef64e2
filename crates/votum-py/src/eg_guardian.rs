//! Guardians and the key ceremony of ElectionGuard 1.0 elections (votum_eg::ceremony). Public
//! records travel as electionguard 1.4.0 JSON strings; a guardian's secrets stay inside its
//! `EgGuardian` object.

use std::sync::Mutex;

use pyo3::prelude::*;
use votum_eg::ceremony::{CeremonyError, Guardian, GuardianPublicKey, PartialKeyBackup};
use votum_eg::context::ElectionContext;
use votum_group::{Group, ModpGroup};

use crate::convert::{release, rng_from};
use crate::eg_context::PyEgContext;
use crate::eg_decrypt::{PyEgDecryptionTarget, PyEgShares};
use crate::eg_json::{ceremony, parse, parse_answer, record, records};
use crate::eg_manifest::PyEgManifest;
use crate::errors::NativeError;
use crate::group::PyScalar;

/// One guardian of a key ceremony: its secret polynomial and the backups it holds never leave
/// this object (they are wiped when it is dropped, and its repr shows none of them).
#[pyclass(frozen, name = "EgGuardian", module = "votum._native")]
pub struct PyEgGuardian {
    pub(crate) inner: Mutex<Guardian>,
    pub(crate) seed: Mutex<rand_chacha::ChaCha20Rng>,
}

impl PyEgGuardian {
    /// Runs `f` on the guardian with the GIL released while the lock is waited for and held: a
    /// long decryption holds the lock, and another thread reading `guardian_id` meanwhile must not
    /// stop every Python thread (as waiting for the lock with the GIL held would).
    fn with<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut Guardian, &mut rand_chacha::ChaCha20Rng) -> T + Send,
    ) -> T {
        release(py, || self.lock(f))
    }

    /// Runs `f` on the guardian; the caller has released the GIL.
    fn lock<T>(&self, f: impl FnOnce(&mut Guardian, &mut rand_chacha::ChaCha20Rng) -> T) -> T {
        let mut g = self
            .inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut r = self
            .seed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        f(&mut g, &mut r)
    }
}

#[pymethods]
impl PyEgGuardian {
    /// A new guardian (sequence order 1..=number_of_guardians) with a fresh polynomial of
    /// `quorum` coefficients; `seed` (32 bytes) makes it reproducible, for tests only.
    #[new]
    #[pyo3(signature = (guardian_id, sequence_order, number_of_guardians, quorum, seed=None))]
    fn new(
        guardian_id: &str,
        sequence_order: u64,
        number_of_guardians: usize,
        quorum: usize,
        seed: Option<&[u8]>,
    ) -> PyResult<Self> {
        let mut rng = rng_from(seed)?;
        let guardian = ceremony(Guardian::new(
            guardian_id,
            sequence_order,
            number_of_guardians,
            quorum,
            &mut rng,
        ))?;
        Ok(Self {
            inner: Mutex::new(guardian),
            seed: Mutex::new(rng),
        })
    }

    #[getter]
    fn guardian_id(&self, py: Python<'_>) -> String {
        self.with(py, |g, _| g.id().to_string())
    }

    /// A guardian restored from its secret state (`expose_secret_state`): the coefficients must
    /// match the record's commitments, and backups from senders in `known_records` must be on
    /// their polynomials. Raises InvalidInput or VerificationFailed otherwise.
    #[staticmethod]
    #[pyo3(signature = (state, known_records=Vec::new(), seed=None))]
    fn from_secret_state(
        py: Python<'_>,
        state: &[u8],
        known_records: Vec<String>,
        seed: Option<&[u8]>,
    ) -> PyResult<Self> {
        let rng = rng_from(seed)?;
        let known = records(&known_records)?;
        let text = std::str::from_utf8(state).map_err(|_| {
            NativeError::Ceremony(CeremonyError::Field(votum_eg::json::FieldError::Format {
                object: "guardian secret state".into(),
                message: "not UTF-8".into(),
            }))
        })?;
        let guardian = release(py, || Guardian::import_secret_state(text, &known));
        Ok(Self {
            inner: Mutex::new(ceremony(guardian)?),
            seed: Mutex::new(rng),
        })
    }

    /// The guardian's whole secret state (polynomial, held backups, public record) as JSON
    /// bytes, for its owner's own storage. Whoever holds these bytes is this guardian: the
    /// protocol never sends them anywhere (votum's stateless seed endpoints do, by design).
    fn expose_secret_state<'py>(&self, py: Python<'py>) -> Bound<'py, pyo3::types::PyBytes> {
        let state = self.with(py, |g, _| g.export_secret_state());
        pyo3::types::PyBytes::new(py, state.as_bytes())
    }

    #[getter]
    fn sequence_order(&self, py: Python<'_>) -> u64 {
        self.with(py, |g, _| g.public_key().sequence_order)
    }

    /// Ids of the guardians whose verified backups this guardian holds.
    #[getter]
    fn backups_held(&self, py: Python<'_>) -> Vec<String> {
        self.with(py, |g, _| g.backups_held())
    }

    /// The public record (electionguard's `GuardianRecord` JSON).
    fn public_record(&self, py: Python<'_>) -> String {
        self.with(py, |g, _| g.public_key().to_eg14_json().to_string())
    }

    /// This guardian's share of its polynomial for `receiver`, sealed to the receiver (JSON).
    fn backup_for(&self, py: Python<'_>, receiver_record: &str) -> PyResult<String> {
        let receiver = record(receiver_record)?;
        self.with(py, |g, r| {
            ceremony(g.backup_for(&receiver, r)).map(|b| b.to_json().to_string())
        })
    }

    /// Opens and checks a backup sent to this guardian; raises VerificationFailed when it is
    /// not on the sender's committed polynomial (then challenge the sender).
    fn receive_backup(&self, py: Python<'_>, sender_record: &str, backup: &str) -> PyResult<()> {
        let sender = record(sender_record)?;
        let backup = ceremony(PartialKeyBackup::from_json(&parse(backup, "backup")?))?;
        self.with(py, |g, _| ceremony(g.receive_backup(&sender, &backup)))
    }

    /// The public answer to a challenge from `receiver`: the disputed share in the clear.
    fn answer_challenge(&self, py: Python<'_>, receiver_record: &str) -> PyResult<String> {
        let receiver = record(receiver_record)?;
        Ok(self.with(py, |g, _| {
            g.answer_challenge(&receiver).to_json().to_string()
        }))
    }

    /// Takes a share settled by a public challenge answer (checked against the commitments).
    fn accept_challenge_response(
        &self,
        py: Python<'_>,
        sender_record: &str,
        response: &str,
    ) -> PyResult<()> {
        let sender = record(sender_record)?;
        let answer = parse_answer(response)?;
        self.with(py, |g, _| {
            ceremony(g.accept_challenge_response(&sender, &answer))
        })
    }

    /// Decryption shares of every ciphertext of `target`, with proofs.
    fn decryption_shares(
        &self,
        py: Python<'_>,
        target: &PyEgDecryptionTarget,
        extended_base_hash: &PyScalar,
    ) -> PyResult<PyEgShares> {
        let g = ModpGroup::eg_4096();
        let q = g.scalar_to_integer(extended_base_hash.get(&g)?);
        let cts = target.inner.ciphertexts();
        let (id, shares) = release(py, || {
            self.lock(|guardian, r| {
                (
                    guardian.id().to_string(),
                    guardian.decryption_shares(&cts, &q, r),
                )
            })
        });
        Ok(PyEgShares {
            object_id: target.inner.object_id.clone(),
            guardian_id: id,
            missing_guardian_id: None,
            shares,
        })
    }

    /// This guardian's whole part of a decryption: its own shares, then its compensated shares
    /// for each missing guardian in `missing_records` (in order). Faster than separate calls:
    /// one constant-time comb table per ciphertext serves every share.
    fn all_shares(
        &self,
        py: Python<'_>,
        target: &PyEgDecryptionTarget,
        extended_base_hash: &PyScalar,
        missing_records: Vec<String>,
    ) -> PyResult<Vec<PyEgShares>> {
        let g = ModpGroup::eg_4096();
        let q = g.scalar_to_integer(extended_base_hash.get(&g)?);
        let missing = records(&missing_records)?;
        let cts = target.inner.ciphertexts();
        let (id, own, compensated) = release(py, || {
            self.lock(|guardian, r| {
                let refs: Vec<&GuardianPublicKey> = missing.iter().collect();
                guardian
                    .all_shares(true, &refs, &cts, &q, r)
                    .map(|(own, comp)| (guardian.id().to_string(), own, comp))
            })
        })
        .map_err(NativeError::Ceremony)?;
        let mut out = vec![PyEgShares {
            object_id: target.inner.object_id.clone(),
            guardian_id: id.clone(),
            missing_guardian_id: None,
            shares: own,
        }];
        for (m, shares) in missing.into_iter().zip(compensated) {
            out.push(PyEgShares {
                object_id: target.inner.object_id.clone(),
                guardian_id: id.clone(),
                missing_guardian_id: Some(m.id),
                shares,
            });
        }
        Ok(out)
    }

    /// Shares standing in for the missing guardian `missing_record`, from its backup.
    fn compensated_shares(
        &self,
        py: Python<'_>,
        missing_record: &str,
        target: &PyEgDecryptionTarget,
        extended_base_hash: &PyScalar,
    ) -> PyResult<PyEgShares> {
        let g = ModpGroup::eg_4096();
        let q = g.scalar_to_integer(extended_base_hash.get(&g)?);
        let missing = record(missing_record)?;
        let cts = target.inner.ciphertexts();
        let (id, shares) = release(py, || {
            self.lock(|guardian, r| {
                guardian
                    .compensated_shares(&missing, &cts, &q, r)
                    .map(|s| (guardian.id().to_string(), s))
            })
        })
        .map_err(NativeError::Ceremony)?;
        Ok(PyEgShares {
            object_id: target.inner.object_id.clone(),
            guardian_id: id,
            missing_guardian_id: Some(missing.id),
            shares,
        })
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        self.with(py, |g, _| {
            format!(
                "EgGuardian(id={:?}, sequence_order={}, backups_held={})",
                g.id(),
                g.public_key().sequence_order,
                g.backups_held().len()
            )
        })
    }
}

/// Checks a challenge answer publicly, against the sender's record.
#[pyfunction]
pub fn eg_verify_challenge_answer(sender_record: &str, answer: &str) -> PyResult<()> {
    let sender = record(sender_record)?;
    ceremony(parse_answer(answer)?.verify(&ModpGroup::eg_4096(), &sender))
}

/// Checks one guardian record (its Schnorr proofs) for `quorum`.
#[pyfunction]
pub fn eg_verify_guardian_record(record_json: &str, quorum: usize) -> PyResult<()> {
    ceremony(record(record_json)?.verify(&ModpGroup::eg_4096(), quorum))
}

/// Checks a whole set of guardian records for `quorum` (votum_eg::ceremony::verify_guardians): ids and
/// sequence orders distinct and in 1..n, commitments in the group, every Schnorr proof, the equations in
/// one batch; a failure names the guardian. The GIL is released.
#[pyfunction]
pub fn eg_verify_guardian_records(
    py: Python<'_>,
    records_json: Vec<String>,
    quorum: usize,
) -> PyResult<()> {
    let read = records(&records_json)?;
    ceremony(release(py, || {
        votum_eg::ceremony::verify_guardians(&ModpGroup::eg_4096(), &read, quorum)
    }))
}

/// A whole key ceremony in this process, guardians working in parallel (votum_eg::ceremony::
/// run_ceremony): `number_of_guardians` guardians `guardian-1` … with polynomials of `quorum`
/// coefficients, every backup sealed to its receiver and checked by it. `seeds` (32 bytes per
/// guardian) make it reproducible, for tests only; a guardian seeded with `s` draws exactly as
/// `EgGuardian(id, i, n, quorum, s)` followed by its `backup_for` calls in sequence order would.
/// With `manifest`, the election context is built too, from the records exactly as
/// `EgContext(records, quorum, manifest)` reads and checks them, while the backups are exchanged.
/// Returns the guardians, per sender id its backups as JSON by receiver id, and the context (None
/// without a manifest).
#[pyfunction]
#[pyo3(signature = (number_of_guardians, quorum, seeds=None, manifest=None))]
#[allow(clippy::type_complexity)]
pub fn eg_key_ceremony(
    py: Python<'_>,
    number_of_guardians: usize,
    quorum: usize,
    seeds: Option<Vec<Vec<u8>>>,
    manifest: Option<&PyEgManifest>,
) -> PyResult<(
    Vec<PyEgGuardian>,
    std::collections::BTreeMap<String, std::collections::BTreeMap<String, String>>,
    Option<PyEgContext>,
)> {
    let mut rngs = match &seeds {
        Some(list) if list.len() != number_of_guardians => {
            return Err(NativeError::Ceremony(CeremonyError::Field(
                votum_eg::json::FieldError::Format {
                    object: "key ceremony".into(),
                    message: format!("{number_of_guardians} seeds expected, got {}", list.len()),
                },
            ))
            .into())
        }
        Some(list) => list
            .iter()
            .map(|s| rng_from(Some(s)))
            .collect::<Result<Vec<_>, _>>()?,
        None => (0..number_of_guardians)
            .map(|_| rng_from(None))
            .collect::<Result<Vec<_>, _>>()?,
    };
    let manifest_hash = manifest
        .map(|m| m.inner.crypto_hash().map_err(NativeError::Manifest))
        .transpose()?;
    let (guardians, sent, context) = ceremony(release(py, || {
        votum_eg::ceremony::run_ceremony_with(quorum, &mut rngs, |publics| {
            let hash = manifest_hash?;
            // the records as they are published, read back and checked as any reader would
            let g = ModpGroup::eg_4096();
            let values: Vec<serde_json::Value> = publics.iter().map(|p| p.to_eg14_json()).collect();
            Some(
                GuardianPublicKey::from_eg14_json_many(&g, &values)
                    .and_then(|read| ElectionContext::new(&read, quorum, hash)),
            )
        })
    }))?;
    let context = context
        .transpose()
        .map_err(NativeError::Ceremony)?
        .map(|inner| PyEgContext { inner });
    let backups = guardians
        .iter()
        .zip(&sent)
        .map(|(g, list)| {
            let by_receiver = list
                .iter()
                .map(|b| (b.receiver.clone(), b.to_json().to_string()))
                .collect();
            (g.id().to_string(), by_receiver)
        })
        .collect();
    let objects = guardians
        .into_iter()
        .zip(rngs)
        .map(|(g, r)| PyEgGuardian {
            inner: Mutex::new(g),
            seed: Mutex::new(r),
        })
        .collect();
    Ok((objects, backups, context))
}

/// electionguard 1.4.0's `constants.json` content.
#[pyfunction]
pub fn eg_constants_json() -> String {
    votum_eg::context::constants_eg14_json().to_string()
}
