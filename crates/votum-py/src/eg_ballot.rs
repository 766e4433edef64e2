//! The ballot box, the stateless ballot verifier and the streaming tally (votum_eg::ballot).

use std::collections::BTreeMap;

use pyo3::prelude::*;
use rayon::prelude::*;
use votum_eg::Manifest;
use votum_group::{Group, ModpGroup};

use crate::eg_manifest::{eg_scalar, PyEgManifest};
use crate::errors::NativeError;
use crate::group::PyScalar;

/// The ballot box of one election: each ballot verified once, duplicates refused, a streaming
/// encrypted tally of the cast ballots.
#[pyclass(frozen, name = "EgBallotBox", module = "votum._native")]
pub struct PyEgBallotBox {
    pub(crate) inner: std::sync::Mutex<votum_eg::BallotBox>,
}

impl PyEgBallotBox {
    /// The encrypted tally by (contest, selection).
    pub(crate) fn tally(&self) -> BTreeMap<(String, String), votum_elgamal::Ciphertext<ModpGroup>> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .tally()
    }

    fn submit(
        &self,
        py: Python<'_>,
        json: &str,
        state: votum_eg::BallotState,
    ) -> PyResult<(String, PyScalar)> {
        let receipt = crate::convert::release(py, || {
            let mut guard = self
                .inner
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            guard.submit(json, state)
        })
        .map_err(NativeError::Ballot)?;
        Ok((receipt.ballot_id, eg_scalar(&receipt.code)))
    }
}

#[pymethods]
impl PyEgBallotBox {
    #[new]
    fn new(
        manifest: &PyEgManifest,
        public_key: &crate::group::PyElement,
        extended_base_hash: &PyScalar,
    ) -> PyResult<Self> {
        let verifier = ballot_verifier(manifest, public_key, extended_base_hash)?;
        Ok(Self {
            inner: std::sync::Mutex::new(votum_eg::BallotBox::new(verifier)),
        })
    }

    /// Verifies and casts a ballot (EG 1.4 JSON); returns (ballot id, ballot code).
    fn cast(&self, py: Python<'_>, ballot_json: &str) -> PyResult<(String, PyScalar)> {
        self.submit(py, ballot_json, votum_eg::BallotState::Cast)
    }

    /// Verifies and spoils a ballot (a Benaloh challenge); it is not tallied.
    fn spoil(&self, py: Python<'_>, ballot_json: &str) -> PyResult<(String, PyScalar)> {
        self.submit(py, ballot_json, votum_eg::BallotState::Spoiled)
    }

    /// Checks and records many ballots in one batch (spec/62.4): `items` are (ballot JSON,
    /// "cast" or "spoiled"). Returns, in order, (ballot id, ballot code) for each accepted
    /// ballot or the exception for each refused one; refused ballots change nothing.
    fn submit_many(&self, py: Python<'_>, items: Vec<(String, String)>) -> PyResult<Vec<PyObject>> {
        let mut parsed = Vec::with_capacity(items.len());
        for (json, state) in &items {
            let state = match state.as_str() {
                "cast" => votum_eg::BallotState::Cast,
                "spoiled" => votum_eg::BallotState::Spoiled,
                _ => return Err(NativeError::Value("state must be 'cast' or 'spoiled'").into()),
            };
            parsed.push((json.as_str(), state));
        }
        let results = crate::convert::release(py, || {
            self.inner
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .submit_many(&parsed)
        });
        receipts(py, results)
    }

    /// `submit_many` with verdicts from a cluster's workers (spec/98.3): `passed[i]` says whether
    /// `items[i]` passed every check of an `EgBallotChecker` built from this election's parameters.
    /// Duplicates are found here; a ballot that passed is recorded without being checked again;
    /// every other ballot is checked here, so each refusal is this box's own exception.
    fn submit_judged(
        &self,
        py: Python<'_>,
        items: Vec<(String, String)>,
        passed: Vec<bool>,
    ) -> PyResult<Vec<PyObject>> {
        if passed.len() != items.len() {
            return Err(NativeError::Value("one verdict per ballot").into());
        }
        let mut parsed = Vec::with_capacity(items.len());
        for (json, state) in &items {
            parsed.push((json.as_str(), ballot_state(state)?));
        }
        let results = crate::convert::release(py, || {
            self.inner
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .submit_judged(&parsed, &passed)
        });
        receipts(py, results)
    }

    /// Checks a ballot exactly as `cast` would, without recording it; returns its ballot code.
    fn verify(&self, py: Python<'_>, ballot_json: &str) -> PyResult<PyScalar> {
        let ballot = crate::convert::release(py, || {
            let guard = self
                .inner
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            guard.check(ballot_json)
        })
        .map_err(NativeError::Ballot)?;
        Ok(eg_scalar(&ballot.code))
    }

    /// (cast, spoiled) ballot counts.
    #[getter]
    fn counts(&self) -> (u64, u64) {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .counts()
    }

    /// The encrypted tally: {contest id: {selection id: Ciphertext}}.
    fn encrypted_tally(&self) -> BTreeMap<String, BTreeMap<String, crate::elgamal::PyCiphertext>> {
        nested(self.tally())
    }
}

/// (ballot id, ballot code) for each accepted ballot, the exception for each refused one.
fn receipts(
    py: Python<'_>,
    results: Vec<Result<votum_eg::ballot::Receipt, votum_eg::ballot::BallotError>>,
) -> PyResult<Vec<PyObject>> {
    results
        .into_iter()
        .map(|r| match r {
            Ok(receipt) => Ok((receipt.ballot_id, eg_scalar(&receipt.code))
                .into_pyobject(py)?
                .into_any()
                .unbind()),
            Err(e) => Ok(PyErr::from(NativeError::Ballot(e))
                .into_value(py)
                .into_any()),
        })
        .collect()
}

/// The ballot-check parameters of an election (spec/98.2) as bytes: what a cluster's workers
/// build an `EgBallotChecker` or an encryption device from.
#[pyfunction]
pub fn eg_ballot_check_params<'py>(
    py: Python<'py>,
    manifest: &PyEgManifest,
    public_key: &crate::group::PyElement,
    extended_base_hash: &PyScalar,
) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
    let g = ModpGroup::eg_4096();
    let k = public_key.get(&g)?.value().clone();
    let q_ext = g.scalar_to_integer(extended_base_hash.get(&g)?);
    let hash = manifest
        .inner
        .crypto_hash()
        .map_err(NativeError::Manifest)?;
    let params = votum_eg::ballot::check_params(&manifest.inner.to_json(), &k, &q_ext, &hash);
    Ok(pyo3::types::PyBytes::new(py, &params))
}

/// One election's ballot checks built from its ballot-check parameters (spec/98.2), answering
/// only verdicts: what a cluster's worker runs (spec/98.3).
#[pyclass(frozen, name = "EgBallotChecker", module = "votum._native")]
pub struct PyEgBallotChecker {
    inner: votum_eg::BallotVerifier,
}

#[pymethods]
impl PyEgBallotChecker {
    #[new]
    fn new(py: Python<'_>, params: &[u8]) -> PyResult<Self> {
        let inner =
            crate::convert::release(py, || votum_eg::BallotVerifier::from_check_params(params))
                .map_err(NativeError::Ballot)?;
        Ok(Self { inner })
    }

    /// Whether each ballot (EG 1.4 JSON) passes every check of spec/62.4, in one batch.
    fn check(&self, py: Python<'_>, ballots: Vec<String>) -> Vec<bool> {
        crate::convert::release(py, || {
            let parsed = ballots
                .par_iter()
                .map(|json| votum_eg::ballot::parse_ballot(json))
                .collect();
            let mut rng = votum_eg::batch::batch_rng();
            self.inner
                .verify_parsed(parsed, &mut rng)
                .iter()
                .map(Result::is_ok)
                .collect()
        })
    }
}

/// {contest id: {selection id: Ciphertext}} from a tally keyed by (contest, selection).
pub(crate) fn nested(
    tally: votum_eg::ballot::TallyMap,
) -> BTreeMap<String, BTreeMap<String, crate::elgamal::PyCiphertext>> {
    let g = ModpGroup::eg_4096();
    let mut out: BTreeMap<String, BTreeMap<String, crate::elgamal::PyCiphertext>> = BTreeMap::new();
    for ((contest, selection), ct) in tally {
        out.entry(contest)
            .or_default()
            .insert(selection, crate::elgamal::PyCiphertext::wrap(&g, ct));
    }
    out
}

/// One election's ballot checks (the ballot box's and the stateless verifier's).
pub(crate) fn ballot_verifier(
    manifest: &PyEgManifest,
    public_key: &crate::group::PyElement,
    extended_base_hash: &PyScalar,
) -> PyResult<votum_eg::BallotVerifier> {
    let g = ModpGroup::eg_4096();
    let k = votum_elgamal::PublicKey::new(&g, public_key.get(&g)?.clone())
        .map_err(NativeError::from)?;
    let q_ext = g.scalar_to_integer(extended_base_hash.get(&g)?);
    Ok(
        votum_eg::BallotVerifier::new(manifest.inner.clone(), &k, q_ext)
            .map_err(NativeError::Manifest)?,
    )
}

pub(crate) fn ballot_state(state: &str) -> PyResult<votum_eg::BallotState> {
    match state {
        "cast" => Ok(votum_eg::BallotState::Cast),
        "spoiled" => Ok(votum_eg::BallotState::Spoiled),
        _ => Err(NativeError::Value("state must be 'cast' or 'spoiled'").into()),
    }
}

/// One election's ballot checks without any ballot box state: it verifies and normalises, the
/// caller (the election service, whose storage knows which ids it has) records. Immutable, so
/// any number of threads verify at once.
#[pyclass(frozen, name = "EgBallotVerifier", module = "votum._native")]
pub struct PyEgBallotVerifier {
    pub(crate) inner: votum_eg::BallotVerifier,
}

#[pymethods]
impl PyEgBallotVerifier {
    #[new]
    fn new(
        manifest: &PyEgManifest,
        public_key: &crate::group::PyElement,
        extended_base_hash: &PyScalar,
    ) -> PyResult<Self> {
        Ok(Self {
            inner: ballot_verifier(manifest, public_key, extended_base_hash)?,
        })
    }

    /// Checks ballots (EG 1.4 JSON, any form) in one batch (spec/62.4): `items` are (ballot JSON,
    /// "cast" or "spoiled"). Returns, in order, for each accepted ballot an `EgVerifiedBallot` (its
    /// id, code, and the ballot as electionguard's `SubmittedBallot` JSON with that state and no
    /// nonces), for each refused one the exception. Duplicate ids are the caller's business.
    fn verify_many(&self, py: Python<'_>, items: Vec<(String, String)>) -> PyResult<Vec<PyObject>> {
        let states = items
            .iter()
            .map(|(_, s)| ballot_state(s))
            .collect::<PyResult<Vec<_>>>()?;
        let results = crate::convert::release(py, || {
            let parsed = items
                .par_iter()
                .map(|(json, _)| votum_eg::ballot::parse_ballot(json))
                .collect();
            let mut rng = votum_eg::batch::batch_rng();
            self.inner
                .verify_parsed(parsed, &mut rng)
                .into_iter()
                .zip(states)
                .map(|(r, state)| {
                    r.map(|b| {
                        let form = votum_eg::eg14::BallotForm::Submitted {
                            state: if state == votum_eg::BallotState::Cast {
                                1
                            } else {
                                2
                            },
                        };
                        let json = b.to_eg14_json(form).to_string();
                        let state = if let votum_eg::eg14::BallotForm::Submitted { state } = form {
                            state
                        } else {
                            1
                        };
                        PyEgVerifiedBallot {
                            ballot: b,
                            json,
                            state,
                        }
                    })
                })
                .collect::<Vec<_>>()
        });
        results
            .into_iter()
            .map(|r| match r {
                Ok(verified) => Ok(Py::new(py, verified)?.into_any()),
                Err(e) => Ok(PyErr::from(NativeError::Ballot(e))
                    .into_value(py)
                    .into_any()),
            })
            .collect()
    }
}

/// A ballot the verifier has accepted (`EgBallotVerifier.verify_many`): the only thing an
/// `EgTally` adds, so an unchecked ballot cannot reach a tally.
#[pyclass(frozen, name = "EgVerifiedBallot", module = "votum._native")]
pub struct PyEgVerifiedBallot {
    pub(crate) ballot: votum_eg::encrypted::EncryptedBallot,
    pub(crate) json: String,
    /// 1 = cast, 2 = spoiled: the state it was checked for (the JSON's `state`)
    pub(crate) state: u8,
}

#[pymethods]
impl PyEgVerifiedBallot {
    #[getter]
    fn object_id(&self) -> &str {
        &self.ballot.object_id
    }

    /// The ballot code.
    #[getter]
    fn code(&self) -> PyScalar {
        eg_scalar(&self.ballot.code)
    }

    /// electionguard's `SubmittedBallot` JSON, with the state it was checked for and no nonces.
    #[getter]
    fn json(&self) -> &str {
        &self.json
    }

    /// The state it was checked for, as the JSON writes it: 1 cast, 2 spoiled.
    #[getter]
    fn state(&self) -> u8 {
        self.state
    }

    /// The ballot code and its seed, as the JSON writes them (canonical hex).
    #[getter]
    fn code_hex(&self) -> String {
        votum_hash::eg::to_hex(&self.ballot.code)
    }

    #[getter]
    fn code_seed_hex(&self) -> String {
        votum_hash::eg::to_hex(&self.ballot.code_seed)
    }

    /// Every selection ciphertext (placeholders included), in the JSON's order, as the JSON writes
    /// its pad and data (canonical hex): what the store fingerprints (spec/80.5).
    #[getter]
    fn ciphertexts_hex(&self) -> Vec<(String, String)> {
        let hex = |e: &votum_group::ModElement| votum_hash::eg::to_hex(e.value());
        self.ballot
            .contests
            .iter()
            .flat_map(|c| c.selections.iter())
            .map(|s| (hex(&s.ciphertext.pad), hex(&s.ciphertext.data)))
            .collect()
    }

    fn __repr__(&self) -> String {
        format!("EgVerifiedBallot({:?})", self.ballot.object_id)
    }
}

/// A running encrypted tally kept outside a ballot box: ballots that were already verified are
/// added, and it round-trips through bytes for storage (spec/62.6).
#[pyclass(frozen, name = "EgTally", module = "votum._native")]
pub struct PyEgTally {
    pub(crate) manifest: Manifest,
    pub(crate) inner: std::sync::Mutex<votum_eg::ballot::TallyMap>,
}

impl PyEgTally {
    fn map(&self) -> std::sync::MutexGuard<'_, votum_eg::ballot::TallyMap> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[pymethods]
impl PyEgTally {
    /// The empty tally of `manifest` (every selection the encryption of 0 with nonce 0).
    #[new]
    fn new(manifest: &PyEgManifest) -> Self {
        Self {
            manifest: manifest.inner.clone(),
            inner: std::sync::Mutex::new(votum_eg::ballot::TallyMap::new()),
        }
    }

    /// Reads `to_bytes` (range checks only: storage votum wrote itself).
    #[staticmethod]
    fn from_bytes(manifest: &PyEgManifest, data: &[u8]) -> PyResult<Self> {
        let map = votum_eg::ballot::tally_from_bytes(&manifest.inner, data)
            .map_err(NativeError::Ballot)?;
        Ok(Self {
            manifest: manifest.inner.clone(),
            inner: std::sync::Mutex::new(map),
        })
    }

    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, pyo3::types::PyBytes> {
        let bytes = votum_eg::ballot::tally_to_bytes(&self.manifest, &self.map());
        pyo3::types::PyBytes::new(py, &bytes)
    }

    /// Adds ballots the verifier accepted (placeholders excluded; the caller adds only the cast ones).
    fn add_verified(&self, ballots: Vec<PyRef<'_, PyEgVerifiedBallot>>) {
        let g = ModpGroup::eg_4096();
        let mut map = self.map();
        for b in &ballots {
            votum_eg::ballot::add_ballot(&g, &mut map, &b.ballot);
        }
    }

    /// {contest id: {selection id: Ciphertext}} for every selection of the manifest.
    fn ciphertexts(&self) -> BTreeMap<String, BTreeMap<String, crate::elgamal::PyCiphertext>> {
        nested(votum_eg::ballot::complete_tally(
            &self.manifest,
            &self.map(),
        ))
    }
}
