//! The ElectionGuard encryption device (votum_eg::encrypt).

use pyo3::prelude::*;
use votum_eg::Manifest;
use votum_group::{Group, ModpGroup};

use crate::eg_manifest::{eg_scalar, PyEgManifest};
use crate::errors::NativeError;
use crate::group::PyScalar;

/// An encryption device for one election: encrypts plaintext ballots (ElectionGuard 1.4 JSON) into
/// ciphertext ballots with proofs that electionguard 1.4.0 accepts.
#[pyclass(frozen, name = "EgEncryptionDevice", module = "votum._native")]
pub struct PyEgEncryptionDevice {
    pub(crate) ctx: votum_eg::EncryptionContext,
    pub(crate) manifest: Manifest,
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
        let g = ModpGroup::eg_4096();
        let form = ballot_form(form)?;
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

    /// The device of the ballot-check parameters (spec/98.2, `eg_ballot_check_params`): what a
    /// cluster's worker builds once per election to encrypt chunks of ballots.
    #[staticmethod]
    fn from_check_params(py: Python<'_>, params: &[u8]) -> PyResult<Self> {
        let p = votum_eg::ballot::CheckParams::from_bytes(params).map_err(|e| {
            NativeError::Encrypt(votum_eg::EncryptError::Json(format!("parameters: {e}")))
        })?;
        let manifest = Manifest::from_json(&p.manifest).map_err(NativeError::Manifest)?;
        let ctx = crate::convert::release(py, || {
            votum_eg::EncryptionContext::new(p.public_key, p.extended_base_hash, p.manifest_hash)
        })
        .map_err(NativeError::Encrypt)?;
        Ok(Self { ctx, manifest })
    }

    /// Chains ballots encrypted elsewhere (spec/98.4) in order from `code_seed`: `items` are (ballot
    /// JSON as `encrypt_many` wrote it, its timestamp, its crypto hash as EG hex). Returns the
    /// ballots with their `code_seed` and `code` set, and the last code, which seeds the next batch.
    #[staticmethod]
    fn chain(
        py: Python<'_>,
        items: Vec<(String, i64, String)>,
        code_seed: &PyScalar,
    ) -> PyResult<(Vec<String>, PyScalar)> {
        let g = ModpGroup::eg_4096();
        let mut seed = g.scalar_to_integer(code_seed.get(&g)?);
        let out = crate::convert::release(py, || {
            let mut out = Vec::with_capacity(items.len());
            for (json, timestamp, crypto_hash) in &items {
                let crypto_hash = votum_hash::eg::from_hex(crypto_hash)
                    .map_err(|_| NativeError::Value("a crypto hash is not EG hex"))?;
                let (text, code) =
                    votum_eg::encrypt::rechain_text(json, *timestamp, &crypto_hash, &seed).ok_or(
                        NativeError::Value(
                            "a ballot does not have one code_seed and one code field",
                        ),
                    )?;
                out.push(text);
                seed = code;
            }
            Ok::<_, NativeError>(out)
        })?;
        Ok((out, eg_scalar(&seed)))
    }

    /// Encrypts many ballots on all cores and chains their ballot codes in order from
    /// `code_seed`. `items` are (plaintext JSON, timestamp, form) with form as in `encrypt`;
    /// `master_nonces`, if given, has one nonce per item (otherwise each is drawn from the OS).
    /// Returns, in order, each ballot's JSON or the exception that refused it (a refused ballot
    /// takes no place in the chain), and the last ballot code, which seeds the next batch.
    /// With `hashes`, each accepted ballot comes as (JSON, its crypto hash as EG hex), what
    /// `chain` needs to place it in another chain (spec/98.4).
    #[pyo3(signature = (items, code_seed, master_nonces=None, hashes=false))]
    fn encrypt_many(
        &self,
        py: Python<'_>,
        items: Vec<(String, i64, String)>,
        code_seed: &PyScalar,
        master_nonces: Option<Vec<PyRef<'_, PyScalar>>>,
        hashes: bool,
    ) -> PyResult<(Vec<PyObject>, PyScalar)> {
        use rayon::prelude::*;
        let g = ModpGroup::eg_4096();
        if let Some(n) = &master_nonces {
            if n.len() != items.len() {
                return Err(NativeError::Value("one master nonce per ballot, or none").into());
            }
        }
        let forms = items
            .iter()
            .map(|(_, _, form)| ballot_form(form))
            .collect::<PyResult<Vec<_>>>()?;
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
            let outcomes: Vec<
                Result<votum_eg::encrypted::EncryptedBallot, votum_eg::EncryptError>,
            > = parsed
                .into_iter()
                .map(|p| match p {
                    // encrypt_many returns one outcome per request
                    Ok(_) => encrypted.next().unwrap_or_else(|| {
                        Err(votum_eg::EncryptError::Json("no outcome".to_owned()))
                    }),
                    Err(e) => Err(e),
                })
                .collect();
            let texts: Vec<Result<(String, String), votum_eg::EncryptError>> = outcomes
                .into_par_iter()
                .zip(forms.par_iter())
                .map(|(r, form)| {
                    r.map(|b| {
                        let hash = votum_hash::eg::to_hex(&b.crypto_hash);
                        (b.to_eg14_json(*form).to_string(), hash)
                    })
                })
                .collect();
            (texts, last)
        });
        let out = outcomes
            .into_iter()
            .map(|r| match r {
                Ok((text, hash)) if hashes => {
                    Ok((text, hash).into_pyobject(py)?.into_any().unbind())
                }
                Ok((text, _)) => Ok(text.into_pyobject(py)?.into_any().unbind()),
                Err(e) => Ok(PyErr::from(NativeError::Encrypt(e))
                    .into_value(py)
                    .into_any()),
            })
            .collect::<PyResult<Vec<_>>>()?;
        Ok((out, eg_scalar(&last)))
    }
}

/// The form a ballot is written in: the device's private copy, or submitted as cast or spoiled.
fn ballot_form(form: &str) -> PyResult<votum_eg::eg14::BallotForm> {
    use votum_eg::eg14::BallotForm;
    match form {
        "private" => Ok(BallotForm::Private),
        "cast" => Ok(BallotForm::Submitted { state: 1 }),
        "spoiled" => Ok(BallotForm::Submitted { state: 2 }),
        _ => Err(NativeError::Value("form must be 'private', 'cast' or 'spoiled'").into()),
    }
}
