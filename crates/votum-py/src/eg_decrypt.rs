//! Threshold decryption (votum_eg::decrypt): targets, share messages, the decryptor and its
//! plaintexts.

use pyo3::prelude::*;
use votum_eg::decrypt::{
    CompensatedShares, DecryptionError, DecryptionTarget, Decryptor, GuardianShares, Mismatched,
    PlaintextRecord,
};
use votum_group::{Group, ModpGroup};

use crate::convert::release;
use crate::eg_ballot::PyEgBallotBox;
use crate::eg_manifest::PyEgManifest;
use crate::group::PyScalar;

use crate::eg_json::{decryption, parse, records};

/// What is decrypted together: the encrypted tally, or one spoiled ballot's real selections.
#[pyclass(frozen, name = "EgDecryptionTarget", module = "votum._native")]
pub struct PyEgDecryptionTarget {
    pub(crate) inner: DecryptionTarget,
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
    pub(crate) object_id: String,
    pub(crate) guardian_id: String,
    pub(crate) missing_guardian_id: Option<String>,
    pub(crate) shares: Vec<votum_eg::decrypt::ProvenShare>,
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
    pub(crate) inner: Decryptor,
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
    pub(crate) inner: PlaintextRecord,
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
