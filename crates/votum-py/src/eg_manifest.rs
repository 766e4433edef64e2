use std::collections::BTreeMap;

use pyo3::prelude::*;
use rayon::prelude::*;
use votum_eg::Manifest;
use votum_group::{Group, ModpGroup};

use crate::errors::NativeError;
use crate::group::PyScalar;

/// An ElectionGuard 1.4 election manifest: validated, with the reference's crypto hashes.
#[pyclass(frozen, name = "EgManifest", module = "votum._native")]
pub struct PyEgManifest {
    pub(crate) inner: Manifest,
}

fn eg_scalar(x: &votum_arith::Integer) -> PyScalar {
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

/// An encryption device for one election: encrypts plaintext ballots (ElectionGuard 1.4 JSON) into
/// ciphertext ballots with proofs that electionguard 1.4.0 accepts.
#[pyclass(frozen, name = "EgEncryptionDevice", module = "votum._native")]
pub struct PyEgEncryptionDevice {
    ctx: votum_eg::EncryptionContext,
    manifest: Manifest,
}

#[pymethods]
impl PyEgEncryptionDevice {
    #[new]
    fn new(
        py: Python<'_>,
        manifest: &PyEgManifest,
        public_key: &crate::group::PyElement,
        extended_base_hash: &PyScalar,
    ) -> PyResult<Self> {
        let g = ModpGroup::eg_4096();
        let k = public_key.get(&g)?.clone();
        let q_ext = g.scalar_to_integer(extended_base_hash.get(&g)?);
        let manifest_hash = manifest
            .inner
            .crypto_hash()
            .map_err(NativeError::Manifest)?;
        let ctx = crate::convert::release(py, || {
            votum_eg::EncryptionContext::new(k, q_ext, manifest_hash)
        })
        .map_err(NativeError::Encrypt)?;
        Ok(Self {
            ctx,
            manifest: manifest.inner.clone(),
        })
    }

    /// Encrypts one plaintext ballot. `form` is "private" (with nonces), "cast" or "spoiled"
    /// (submitted forms, nonces removed). Returns the ballot JSON and its ballot code, which
    /// seeds the next ballot's code on this device.
    #[pyo3(signature = (plaintext_json, code_seed, timestamp, master_nonce=None, form="private"))]
    fn encrypt(
        &self,
        py: Python<'_>,
        plaintext_json: &str,
        code_seed: &PyScalar,
        timestamp: i64,
        master_nonce: Option<&PyScalar>,
        form: &str,
    ) -> PyResult<(String, PyScalar)> {
        use votum_eg::encrypt::BallotForm;
        let g = ModpGroup::eg_4096();
        let form = match form {
            "private" => BallotForm::Private,
            "cast" => BallotForm::Submitted { state: 1 },
            "spoiled" => BallotForm::Submitted { state: 2 },
            _ => {
                return Err(
                    NativeError::Value("form must be 'private', 'cast' or 'spoiled'").into(),
                )
            }
        };
        let plain =
            votum_eg::PlaintextBallot::from_json(plaintext_json).map_err(NativeError::Encrypt)?;
        let nonce = match master_nonce {
            Some(n) => n.get(&g)?.clone(),
            None => g.random_scalar(&mut crate::convert::rng_from(None)?),
        };
        let seed = g.scalar_to_integer(code_seed.get(&g)?);
        let ballot = crate::convert::release(py, || {
            votum_eg::encrypt_ballot(&self.ctx, &self.manifest, &plain, &nonce, &seed, timestamp)
        })
        .map_err(NativeError::Encrypt)?;
        Ok((
            ballot.to_eg14_json(form).to_string(),
            eg_scalar(&ballot.code),
        ))
    }

    /// Encrypts many ballots on all cores and chains their ballot codes in order from
    /// `code_seed`. `items` are (plaintext JSON, timestamp, form) with form as in `encrypt`;
    /// `master_nonces`, if given, has one nonce per item (otherwise each is drawn from the OS).
    /// Returns, in order, each ballot's JSON or the exception that refused it (a refused ballot
    /// takes no place in the chain), and the last ballot code, which seeds the next batch.
    #[pyo3(signature = (items, code_seed, master_nonces=None))]
    fn encrypt_many(
        &self,
        py: Python<'_>,
        items: Vec<(String, i64, String)>,
        code_seed: &PyScalar,
        master_nonces: Option<Vec<PyRef<'_, PyScalar>>>,
    ) -> PyResult<(Vec<PyObject>, PyScalar)> {
        use rayon::prelude::*;
        use votum_eg::encrypt::BallotForm;
        let g = ModpGroup::eg_4096();
        if let Some(n) = &master_nonces {
            if n.len() != items.len() {
                return Err(NativeError::Value("one master nonce per ballot, or none").into());
            }
        }
        let mut forms = Vec::with_capacity(items.len());
        for (_, _, form) in &items {
            forms.push(match form.as_str() {
                "private" => BallotForm::Private,
                "cast" => BallotForm::Submitted { state: 1 },
                "spoiled" => BallotForm::Submitted { state: 2 },
                _ => {
                    return Err(
                        NativeError::Value("form must be 'private', 'cast' or 'spoiled'").into(),
                    )
                }
            });
        }
        let nonces: Vec<votum_group::ModScalar> = match &master_nonces {
            Some(n) => n
                .iter()
                .map(|s| s.get(&g).cloned().map_err(PyErr::from))
                .collect::<PyResult<_>>()?,
            None => {
                let mut rng = crate::convert::rng_from(None)?;
                (0..items.len())
                    .map(|_| g.random_scalar(&mut rng))
                    .collect()
            }
        };
        let seed = g.scalar_to_integer(code_seed.get(&g)?);
        let (outcomes, last) = crate::convert::release(py, || {
            let parsed: Vec<Result<votum_eg::PlaintextBallot, votum_eg::EncryptError>> = items
                .par_iter()
                .map(|(json, _, _)| votum_eg::PlaintextBallot::from_json(json))
                .collect();
            let mut requests = Vec::new();
            for ((p, (_, timestamp, _)), nonce) in parsed.iter().zip(&items).zip(&nonces) {
                if let Ok(ballot) = p {
                    requests.push(votum_eg::BallotRequest {
                        ballot,
                        master_nonce: nonce,
                        timestamp: *timestamp,
                    });
                }
            }
            let (encrypted, last) =
                votum_eg::encrypt_many(&self.ctx, &self.manifest, &requests, &seed);
            let mut encrypted = encrypted.into_iter();
            let outcomes: Vec<Result<votum_eg::encrypt::EncryptedBallot, votum_eg::EncryptError>> =
                parsed
                    .into_iter()
                    .map(|p| match p {
                        // encrypt_many returns one outcome per request
                        Ok(_) => encrypted.next().unwrap_or_else(|| {
                            Err(votum_eg::EncryptError::Json("no outcome".to_owned()))
                        }),
                        Err(e) => Err(e),
                    })
                    .collect();
            let texts: Vec<Result<String, votum_eg::EncryptError>> = outcomes
                .into_par_iter()
                .zip(forms.par_iter())
                .map(|(r, form)| r.map(|b| b.to_eg14_json(*form).to_string()))
                .collect();
            (texts, last)
        });
        let out = outcomes
            .into_iter()
            .map(|r| match r {
                Ok(text) => Ok(text.into_pyobject(py)?.into_any().unbind()),
                Err(e) => Ok(PyErr::from(NativeError::Encrypt(e))
                    .into_value(py)
                    .into_any()),
            })
            .collect::<PyResult<Vec<_>>>()?;
        Ok((out, eg_scalar(&last)))
    }
}

/// The ballot box of one election: each ballot verified once, duplicates refused, a streaming
/// encrypted tally of the cast ballots.
#[pyclass(frozen, name = "EgBallotBox", module = "votum._native")]
pub struct PyEgBallotBox {
    inner: std::sync::Mutex<votum_eg::BallotBox>,
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

/// {contest id: {selection id: Ciphertext}} from a tally keyed by (contest, selection).
fn nested(
    tally: votum_eg::ballot_box::TallyMap,
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
fn ballot_verifier(
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

fn ballot_state(state: &str) -> PyResult<votum_eg::BallotState> {
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
    inner: votum_eg::BallotVerifier,
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
                .map(|(json, _)| votum_eg::ballot_box::parse_ballot(json))
                .collect();
            let mut rng = votum_eg::batch::batch_rng();
            self.inner
                .verify_parsed(parsed, &mut rng)
                .into_iter()
                .zip(states)
                .map(|(r, state)| {
                    r.map(|b| {
                        let form = votum_eg::encrypt::BallotForm::Submitted {
                            state: if state == votum_eg::BallotState::Cast {
                                1
                            } else {
                                2
                            },
                        };
                        let json = b.to_eg14_json(form).to_string();
                        PyEgVerifiedBallot { ballot: b, json }
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
    ballot: votum_eg::encrypt::EncryptedBallot,
    json: String,
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

    fn __repr__(&self) -> String {
        format!("EgVerifiedBallot({:?})", self.ballot.object_id)
    }
}

/// A running encrypted tally kept outside a ballot box: ballots that were already verified are
/// added, and it round-trips through bytes for storage (spec/62.6).
#[pyclass(frozen, name = "EgTally", module = "votum._native")]
pub struct PyEgTally {
    manifest: Manifest,
    inner: std::sync::Mutex<votum_eg::ballot_box::TallyMap>,
}

impl PyEgTally {
    fn map(&self) -> std::sync::MutexGuard<'_, votum_eg::ballot_box::TallyMap> {
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
            inner: std::sync::Mutex::new(votum_eg::ballot_box::TallyMap::new()),
        }
    }

    /// Reads `to_bytes` (range checks only: storage votum wrote itself).
    #[staticmethod]
    fn from_bytes(manifest: &PyEgManifest, data: &[u8]) -> PyResult<Self> {
        let map = votum_eg::ballot_box::tally_from_bytes(&manifest.inner, data)
            .map_err(NativeError::Ballot)?;
        Ok(Self {
            manifest: manifest.inner.clone(),
            inner: std::sync::Mutex::new(map),
        })
    }

    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, pyo3::types::PyBytes> {
        let bytes = votum_eg::ballot_box::tally_to_bytes(&self.manifest, &self.map());
        pyo3::types::PyBytes::new(py, &bytes)
    }

    /// Adds ballots the verifier accepted (placeholders excluded; the caller adds only the cast ones).
    fn add_verified(&self, ballots: Vec<PyRef<'_, PyEgVerifiedBallot>>) {
        let g = ModpGroup::eg_4096();
        let mut map = self.map();
        for b in &ballots {
            votum_eg::ballot_box::add_ballot(&g, &mut map, &b.ballot);
        }
    }

    /// {contest id: {selection id: Ciphertext}} for every selection of the manifest.
    fn ciphertexts(&self) -> BTreeMap<String, BTreeMap<String, crate::elgamal::PyCiphertext>> {
        nested(votum_eg::ballot_box::complete_tally(
            &self.manifest,
            &self.map(),
        ))
    }
}
