//! The election context (votum_eg::context).

use pyo3::prelude::*;
use votum_eg::ceremony::CeremonyError;
use votum_eg::context::ElectionContext;
use votum_group::{Group, ModpGroup};

use crate::eg_manifest::{eg_scalar, PyEgManifest};
use crate::errors::NativeError;
use crate::group::{PyElement, PyScalar};

use crate::eg_json::{ceremony, parse, records};

/// The election context: joint key, commitment hash, base and extended base hashes.
#[pyclass(frozen, name = "EgContext", module = "votum._native")]
pub struct PyEgContext {
    pub(crate) inner: ElectionContext,
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
        eg_scalar(&self.inner.commitment_hash)
    }

    #[getter]
    fn manifest_hash(&self) -> PyScalar {
        eg_scalar(&self.inner.manifest_hash)
    }

    #[getter]
    fn extended_base_hash(&self) -> PyScalar {
        eg_scalar(&self.inner.crypto_extended_base_hash)
    }
}
