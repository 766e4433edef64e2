//! The bulletin board's hash chain (spec/80) for the service's store and for checking copies.

use pyo3::prelude::*;
use pyo3::types::PyBytes;
use votum_hash::board::{self, ChainChecker};

use crate::errors::NativeError;

fn hash32(value: &[u8], what: &'static str) -> PyResult<[u8; 32]> {
    value
        .try_into()
        .map_err(|_| NativeError::Value(what).into())
}

/// The value before entry 0 of `election_id`'s board.
#[pyfunction]
pub fn board_genesis<'py>(py: Python<'py>, election_id: &str) -> Bound<'py, PyBytes> {
    PyBytes::new(py, &board::genesis(election_id))
}

/// SHA-256 of an entry's payload: what the chain absorbs, and what the store keeps beside the entry.
#[pyfunction]
pub fn board_payload_digest<'py>(py: Python<'py>, payload: &[u8]) -> Bound<'py, PyBytes> {
    PyBytes::new(py, &board::payload_digest(payload))
}

/// The hash of entry `seq` of a board whose previous hash is `prev`; `digest` is
/// `board_payload_digest(payload)`, computed once by the caller, who stores it too.
#[pyfunction]
pub fn board_link<'py>(
    py: Python<'py>,
    prev: &[u8],
    seq: u64,
    kind: &str,
    name: &str,
    digest: &[u8],
) -> PyResult<Bound<'py, PyBytes>> {
    let prev = hash32(prev, "a board hash is 32 bytes")?;
    let digest = hash32(digest, "a payload digest is 32 bytes")?;
    Ok(PyBytes::new(
        py,
        &board::link(&prev, seq, kind, name, &digest),
    ))
}

/// Checks a board's entries in order, from its genesis or from a known head.
#[pyclass(name = "BoardChecker", module = "votum._native")]
pub struct PyBoardChecker {
    inner: ChainChecker,
}

#[pymethods]
impl PyBoardChecker {
    #[new]
    fn new(election_id: &str) -> Self {
        Self {
            inner: ChainChecker::new(election_id),
        }
    }

    /// Continues after entry `next - 1`, whose hash is `head`.
    #[staticmethod]
    fn resume(next: u64, head: &[u8]) -> PyResult<Self> {
        Ok(Self {
            inner: ChainChecker::resume(next, hash32(head, "a board hash is 32 bytes")?),
        })
    }

    /// Checks the next entry; raises VerificationFailed at a gap, a reordering or any change.
    fn push(
        &mut self,
        seq: u64,
        kind: &str,
        name: &str,
        payload: &[u8],
        hash: &[u8],
    ) -> PyResult<()> {
        let hash = hash32(hash, "a board hash is 32 bytes")?;
        self.inner
            .push(seq, kind, name, payload, &hash)
            .map_err(|e| NativeError::Board(e).into())
    }

    /// The hash of the last entry checked (the genesis value before any).
    #[getter]
    fn head<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.head())
    }

    fn __len__(&self) -> usize {
        self.inner.len() as usize
    }

    fn __repr__(&self) -> String {
        format!("BoardChecker(<{} entries checked>)", self.inner.len())
    }
}
