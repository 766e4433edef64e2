//! Key ceremony, context and threshold decryption of ElectionGuard 1.0 elections (votum_eg::guardian,
//! votum_eg::context, votum_eg::decrypt). Public records travel as electionguard 1.4.0 JSON
//! strings; a guardian's secrets stay inside its `EgGuardian` object.

use std::sync::Mutex;

use pyo3::prelude::*;
use votum_eg::context::ElectionContext;
use votum_eg::decrypt::{
    CompensatedShares, DecryptionError, DecryptionTarget, Decryptor, GuardianShares, Mismatched,
    PlaintextRecord,
};
use votum_eg::guardian::{
    BackupChallengeResponse, CeremonyError, Guardian, GuardianPublicKey, PartialKeyBackup,
};
use votum_group::{Group, ModpGroup};

use crate::convert::{release, rng_from};
use crate::eg_manifest::{PyEgBallotBox, PyEgManifest};
use crate::errors::NativeError;
use crate::group::{PyElement, PyScalar};

fn parse(text: &str, what: &str) -> PyResult<serde_json::Value> {
    serde_json::from_str(text).map_err(|e| {
        NativeError::Ceremony(CeremonyError::Field(votum_eg::json::FieldError::Format {
            object: what.to_string(),
            message: format!("not JSON: {e}"),
        }))
        .into()
    })
}

fn record(text: &str) -> PyResult<GuardianPublicKey> {
    let g = ModpGroup::eg_4096();
    GuardianPublicKey::from_eg14_json(&g, &parse(text, "guardian record")?)
        .map_err(|e| NativeError::Ceremony(e).into())
}

fn records(texts: &[String]) -> PyResult<Vec<GuardianPublicKey>> {
    texts.iter().map(|r| record(r)).collect()
}

fn ceremony<T>(r: Result<T, CeremonyError>) -> PyResult<T> {
    r.map_err(|e| NativeError::Ceremony(e).into())
}

fn decryption<T>(r: Result<T, DecryptionError>) -> PyResult<T> {
    r.map_err(|e| NativeError::Decryption(e).into())
}

/// One guardian of a key ceremony: its secret polynomial and the backups it holds never leave
/// this object (they are wiped when it is dropped, and its repr shows none of them).
#[pyclass(frozen, name = "EgGuardian", module = "votum._native")]
pub struct PyEgGuardian {
    inner: Mutex<Guardian>,
    seed: Mutex<rand_chacha::ChaCha20Rng>,
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

fn parse_answer(text: &str) -> PyResult<BackupChallengeResponse> {
    ceremony(BackupChallengeResponse::from_json(&parse(
        text,
        "challenge answer",
    )?))
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

/// A whole key ceremony in this process, guardians working in parallel (votum_eg::guardian::
/// run_ceremony): `number_of_guardians` guardians `guardian-1` … with polynomials of `quorum`
/// coefficients, every backup sealed to its receiver and checked by it. `seeds` (32 bytes per
/// guardian) make it reproducible, for tests only; a guardian seeded with `s` draws exactly as
/// `EgGuardian(id, i, n, quorum, s)` followed by its `backup_for` calls in sequence order would.
/// Returns the guardians and, per sender id, its backups as JSON by receiver id.
#[pyfunction]
#[pyo3(signature = (number_of_guardians, quorum, seeds=None))]
#[allow(clippy::type_complexity)]
pub fn eg_key_ceremony(
    py: Python<'_>,
    number_of_guardians: usize,
    quorum: usize,
    seeds: Option<Vec<Vec<u8>>>,
) -> PyResult<(
    Vec<PyEgGuardian>,
    std::collections::BTreeMap<String, std::collections::BTreeMap<String, String>>,
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
    let (guardians, sent) = ceremony(release(py, || {
        votum_eg::guardian::run_ceremony(quorum, &mut rngs)
    }))?;
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
    Ok((objects, backups))
}

/// electionguard 1.4.0's `constants.json` content.
#[pyfunction]
pub fn eg_constants_json() -> String {
    votum_eg::context::constants_eg14_json().to_string()
}

/// The election context: joint key, commitment hash, base and extended base hashes.
#[pyclass(frozen, name = "EgContext", module = "votum._native")]
pub struct PyEgContext {
    inner: ElectionContext,
}

#[pymethods]
impl PyEgContext {
    /// The context of an election with these guardian records (all checked) and manifest.
    #[new]
    fn new(
        guardian_records: Vec<String>,
        quorum: usize,
        manifest: &PyEgManifest,
    ) -> PyResult<Self> {
        let records = records(&guardian_records)?;
        let hash = manifest
            .inner
            .crypto_hash()
            .map_err(NativeError::Manifest)?;
        Ok(Self {
            inner: ceremony(ElectionContext::new(&records, quorum, hash))?,
        })
    }

    /// The context from the ceremony's published joint key and commitment hash (no guardian
    /// records needed): the base and extended base hashes are computed here.
    #[staticmethod]
    fn from_joint_key(
        manifest: &PyEgManifest,
        number_of_guardians: u64,
        quorum: u64,
        elgamal_public_key: &PyElement,
        commitment_hash: &PyScalar,
    ) -> PyResult<Self> {
        let g = ModpGroup::eg_4096();
        if quorum == 0 || quorum > number_of_guardians {
            return Err(NativeError::Ceremony(CeremonyError::BadQuorum {
                quorum: quorum as usize,
                guardians: number_of_guardians as usize,
            })
            .into());
        }
        let hash = manifest
            .inner
            .crypto_hash()
            .map_err(NativeError::Manifest)?;
        Ok(Self {
            inner: ElectionContext::from_joint_key(
                number_of_guardians,
                quorum,
                elgamal_public_key.get(&g)?.clone(),
                g.scalar_to_integer(commitment_hash.get(&g)?),
                hash,
            ),
        })
    }

    #[staticmethod]
    fn from_json(text: &str) -> PyResult<Self> {
        let v = parse(text, "context")?;
        Ok(Self {
            inner: ceremony(ElectionContext::from_eg14_json(&v).map_err(CeremonyError::Field))?,
        })
    }

    /// Recomputes the context from the guardian records; raises VerificationFailed on a difference.
    fn check(&self, guardian_records: Vec<String>) -> PyResult<()> {
        let records = records(&guardian_records)?;
        ceremony(self.inner.check(&records))
    }

    fn to_json(&self) -> String {
        self.inner.to_eg14_json().to_string()
    }

    #[getter]
    fn number_of_guardians(&self) -> u64 {
        self.inner.number_of_guardians
    }

    #[getter]
    fn quorum(&self) -> u64 {
        self.inner.quorum
    }

    #[getter]
    fn elgamal_public_key(&self) -> PyElement {
        PyElement::wrap(&ModpGroup::eg_4096(), self.inner.elgamal_public_key.clone())
    }

    #[getter]
    fn commitment_hash(&self) -> PyScalar {
        scalar(&self.inner.commitment_hash)
    }

    #[getter]
    fn manifest_hash(&self) -> PyScalar {
        scalar(&self.inner.manifest_hash)
    }

    #[getter]
    fn extended_base_hash(&self) -> PyScalar {
        scalar(&self.inner.crypto_extended_base_hash)
    }
}

fn scalar(x: &votum_arith::Integer) -> PyScalar {
    let g = ModpGroup::eg_4096();
    PyScalar::wrap(&g, g.scalar_from_integer(x))
}

/// What is decrypted together: the encrypted tally, or one spoiled ballot's real selections.
#[pyclass(frozen, name = "EgDecryptionTarget", module = "votum._native")]
pub struct PyEgDecryptionTarget {
    inner: DecryptionTarget,
}

#[pymethods]
impl PyEgDecryptionTarget {
    /// The ballot box's encrypted tally, in manifest order.
    #[staticmethod]
    #[pyo3(signature = (ballot_box, manifest, object_id="election-results"))]
    fn from_ballot_box(
        ballot_box: &PyEgBallotBox,
        manifest: &PyEgManifest,
        object_id: &str,
    ) -> Self {
        let tally = ballot_box.tally();
        Self {
            inner: DecryptionTarget::from_tally(object_id, &manifest.inner, &tally),
        }
    }

    /// An encrypted tally (electionguard 1.4.0's `CiphertextTally` JSON), in manifest order.
    #[staticmethod]
    fn from_tally_json(
        py: Python<'_>,
        tally_json: &str,
        manifest: &PyEgManifest,
    ) -> PyResult<Self> {
        let v = parse(tally_json, "encrypted tally")?;
        let inner = release(py, || {
            DecryptionTarget::from_tally_json(&manifest.inner, &v)
        });
        Ok(Self {
            inner: decryption(inner)?,
        })
    }

    /// A submitted ballot (EG 1.4 JSON), for the decryption of a spoiled ballot.
    #[staticmethod]
    fn from_ballot_json(py: Python<'_>, ballot_json: &str) -> PyResult<Self> {
        let inner = release(py, || DecryptionTarget::from_ballot_json(ballot_json));
        Ok(Self {
            inner: decryption(inner)?,
        })
    }

    #[getter]
    fn object_id(&self) -> String {
        self.inner.object_id.clone()
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }
}

/// One guardian's proven shares of a target (direct, or for a missing guardian).
#[pyclass(frozen, name = "EgShares", module = "votum._native")]
pub struct PyEgShares {
    object_id: String,
    guardian_id: String,
    missing_guardian_id: Option<String>,
    shares: Vec<votum_eg::guardian::ProvenShare>,
}

#[pymethods]
impl PyEgShares {
    /// votum's share message (spec/64.7): the proven shares with their guardian and target.
    fn to_json(&self) -> String {
        votum_eg::decrypt::shares_to_json(
            &self.guardian_id,
            self.missing_guardian_id.as_deref(),
            &self.object_id,
            &self.shares,
        )
        .to_string()
    }

    /// Reads `to_json`; values are range-checked here, proofs when the shares are combined.
    #[staticmethod]
    fn from_json(py: Python<'_>, text: &str) -> PyResult<Self> {
        let v = parse(text, "decryption shares")?;
        let (object_id, guardian_id, missing_guardian_id, shares) =
            decryption(release(py, || votum_eg::decrypt::shares_from_json(&v)))?;
        Ok(Self {
            object_id,
            guardian_id,
            missing_guardian_id,
            shares,
        })
    }

    /// The decryption target (tally or ballot id) these shares are for.
    #[getter]
    fn object_id(&self) -> String {
        self.object_id.clone()
    }

    #[getter]
    fn guardian_id(&self) -> String {
        self.guardian_id.clone()
    }

    #[getter]
    fn missing_guardian_id(&self) -> Option<String> {
        self.missing_guardian_id.clone()
    }

    fn __len__(&self) -> usize {
        self.shares.len()
    }
}

/// Checks shares and combines them into counts, for one election's guardians.
#[pyclass(frozen, name = "EgDecryptor", module = "votum._native")]
pub struct PyEgDecryptor {
    inner: Decryptor,
}

#[pymethods]
impl PyEgDecryptor {
    /// `guardian_records`: all of the election's guardians (checked); counts are looked up in
    /// [0, max_count].
    #[new]
    #[pyo3(signature = (guardian_records, quorum, extended_base_hash, max_count=1_000_000))]
    fn new(
        py: Python<'_>,
        guardian_records: Vec<String>,
        quorum: usize,
        extended_base_hash: &PyScalar,
        max_count: u64,
    ) -> PyResult<Self> {
        let g = ModpGroup::eg_4096();
        let q = g.scalar_to_integer(extended_base_hash.get(&g)?);
        let records = records(&guardian_records)?;
        let inner = release(py, || Decryptor::new(records, quorum, q, max_count));
        Ok(Self {
            inner: decryption(inner)?,
        })
    }

    /// Checks every share's proof and combines: present guardians' shares and, for each missing
    /// guardian, compensated shares from at least a quorum of present guardians.
    fn decrypt(
        &self,
        py: Python<'_>,
        target: &PyEgDecryptionTarget,
        shares: Vec<PyRef<'_, PyEgShares>>,
    ) -> PyResult<PyEgPlaintext> {
        let mut direct = Vec::new();
        let mut compensated = Vec::new();
        for s in &shares {
            match &s.missing_guardian_id {
                None => direct.push(GuardianShares {
                    guardian_id: s.guardian_id.clone(),
                    shares: s.shares.clone(),
                }),
                Some(m) => compensated.push(CompensatedShares {
                    guardian_id: s.guardian_id.clone(),
                    missing_guardian_id: m.clone(),
                    shares: s.shares.clone(),
                }),
            }
        }
        let out = release(py, || {
            self.inner.decrypt(&target.inner, &direct, &compensated)
        });
        Ok(PyEgPlaintext {
            inner: decryption(out)?,
        })
    }

    /// Checks one guardian's share message for `target` on its own (spec/64.8): a known guardian,
    /// one share per ciphertext, every proof against its key (or the missing guardian's recovery
    /// key). Raises DecryptionFailed, or InvalidProof naming the selection.
    fn check_shares(
        &self,
        py: Python<'_>,
        target: &PyEgDecryptionTarget,
        shares: &PyEgShares,
    ) -> PyResult<()> {
        if shares.object_id != target.inner.object_id {
            return decryption(Err(DecryptionError::Mismatch {
                object: target.inner.object_id.clone(),
                what: Mismatched::Document(format!(
                    "the object id of shares for {:?}",
                    shares.object_id
                )),
            }));
        }
        let out = release(py, || {
            self.inner.check_shares(
                &target.inner,
                &shares.guardian_id,
                shares.missing_guardian_id.as_deref(),
                &shares.shares,
            )
        });
        decryption(out)
    }

    /// Re-checks a published plaintext tally or spoiled ballot (EG 1.4 JSON) against `target`.
    fn verify_eg14(
        &self,
        py: Python<'_>,
        target: &PyEgDecryptionTarget,
        published: &str,
    ) -> PyResult<PyEgPlaintext> {
        let v = parse(published, "plaintext tally")?;
        let out = release(py, || self.inner.verify_eg14(&target.inner, &v));
        Ok(PyEgPlaintext {
            inner: decryption(out)?,
        })
    }
}

/// A decrypted tally or spoiled ballot.
#[pyclass(frozen, name = "EgPlaintext", module = "votum._native")]
pub struct PyEgPlaintext {
    inner: PlaintextRecord,
}

#[pymethods]
impl PyEgPlaintext {
    #[getter]
    fn object_id(&self) -> String {
        self.inner.object_id.clone()
    }

    /// {selection id: count}.
    #[getter]
    fn counts(&self) -> std::collections::BTreeMap<String, u64> {
        self.inner.counts()
    }

    /// electionguard 1.4.0's `PlaintextTally` JSON.
    fn to_json(&self) -> String {
        self.inner.to_eg14_json().to_string()
    }
}
