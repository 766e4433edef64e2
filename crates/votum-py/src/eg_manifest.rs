//! ElectionGuard 1.4 manifests (votum_eg::manifest).

use std::collections::BTreeMap;

use pyo3::prelude::*;
use votum_eg::Manifest;
use votum_group::{Group, ModpGroup};

use crate::errors::NativeError;
use crate::group::PyScalar;

/// An ElectionGuard 1.4 election manifest: validated, with the reference's crypto hashes.
#[pyclass(frozen, name = "EgManifest", module = "votum._native")]
pub struct PyEgManifest {
    pub(crate) inner: Manifest,
}

pub(crate) fn eg_scalar(x: &votum_arith::Integer) -> PyScalar {
    let g = ModpGroup::eg_4096();
    PyScalar::wrap(&g, g.scalar_from_integer(x))
}

#[pymethods]
impl PyEgManifest {
    /// Parses and validates; raises RecordFormatError (malformed JSON) or InvalidInput (bad content).
    #[staticmethod]
    fn from_json(text: &str) -> PyResult<Self> {
        Ok(Self {
            inner: Manifest::from_json(text).map_err(NativeError::Manifest)?,
        })
    }

    fn to_json(&self) -> String {
        self.inner.to_json()
    }

    #[getter]
    fn election_scope_id(&self) -> &str {
        &self.inner.election_scope_id
    }

    /// What is odd but accepted, as electionguard 1.4.0 accepts it (spec/60.1): (object id, why).
    fn warnings(&self) -> Vec<(String, String)> {
        self.inner.warnings()
    }

    #[getter]
    fn contest_ids(&self) -> Vec<String> {
        self.inner
            .contests
            .iter()
            .map(|c| c.object_id.clone())
            .collect()
    }

    /// The manifest hash (as in the context's `manifest_hash`).
    fn crypto_hash(&self) -> PyResult<PyScalar> {
        Ok(eg_scalar(
            &self.inner.crypto_hash().map_err(NativeError::Manifest)?,
        ))
    }

    /// Description hash of every contest, by contest id.
    fn contest_hashes(&self) -> BTreeMap<String, PyScalar> {
        self.inner
            .contests
            .iter()
            .map(|c| (c.object_id.clone(), eg_scalar(&c.crypto_hash())))
            .collect()
    }

    /// Description hash of every selection, by selection id.
    fn selection_hashes(&self) -> BTreeMap<String, PyScalar> {
        self.inner
            .contests
            .iter()
            .flat_map(|c| c.ballot_selections.iter())
            .map(|s| (s.object_id.clone(), eg_scalar(&s.crypto_hash())))
            .collect()
    }

    fn __repr__(&self) -> String {
        format!(
            "EgManifest({:?}, {} contests)",
            self.inner.election_scope_id,
            self.inner.contests.len()
        )
    }
}
