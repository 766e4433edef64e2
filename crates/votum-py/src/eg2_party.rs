//! ElectionGuard 2.x with each guardian a party of its own (spec/65.9): `Eg2Trustee` is one guardian's
//! state, in its own process; `Eg2Coordinator` holds no secret and writes the record. Messages between
//! them are JSON text; the transport (spec/95) authenticates them and seals each share to its receiver.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use serde_json::Value;
use votum_eg2::election::{Coordinator, DEFAULT_MANIFEST};
use votum_eg2::trustee::{finish_with, read_public, Trustee};
use votum_eg2::Eg2Error;
use votum_group::{ModpGroup, P256};
use votum_verify::report::Status;

use crate::convert::{release, rng_from};
use crate::eg2::summary_dict;
use crate::errors::NativeError;

enum AnyTrustee {
    P256(Trustee<P256>),
    Modp(Trustee<ModpGroup>),
}

enum AnyCoordinator {
    P256(Coordinator<P256>, P256),
    Modp(Coordinator<ModpGroup>, ModpGroup),
}

/// Runs `$body` with `$t` bound to the trustee or coordinator of whichever group it is on.
macro_rules! each {
    ($value:expr, $t:ident => $body:expr) => {
        match $value {
            AnyTrustee::P256($t) => $body,
            AnyTrustee::Modp($t) => $body,
        }
    };
}

macro_rules! each_coordinator {
    ($value:expr, $c:ident, $g:ident => $body:expr) => {
        match $value {
            AnyCoordinator::P256($c, $g) => $body,
            AnyCoordinator::Modp($c, $g) => $body,
        }
    };
}

pub(crate) fn eg2(e: Eg2Error) -> PyErr {
    NativeError::Eg2(e).into()
}

pub(crate) fn json_list(texts: &[String]) -> PyResult<Vec<Value>> {
    texts
        .iter()
        .map(|t| {
            serde_json::from_str(t)
                .map_err(|e| NativeError::Input(format!("a message that is not JSON: {e}")).into())
        })
        .collect()
}

pub(crate) fn manifest_bytes(manifest: Option<Vec<u8>>) -> Vec<u8> {
    manifest.unwrap_or_else(|| DEFAULT_MANIFEST.as_bytes().to_vec())
}

fn unknown_group(other: &str) -> PyErr {
    NativeError::Input(format!(
        "group {other:?}: a 2.x election runs on p256 or eg2-4096"
    ))
    .into()
}

/// Copies the record at `from` into `to` (a directory of directories of files, as a 2.x record is).
fn copy_record(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            copy_record(&entry.path(), &target)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), target)?;
        }
    }
    Ok(())
}

/// The record at `record`, copied where only this process writes, and checked by `verify` (the verifier
/// as far as the values a guardian decrypts): every check in `wanted` must pass and none fail. The copy is
/// what the guardian then reads, so no party can change the record between the check and the decryption.
pub(crate) fn checked_copy(
    record: &Path,
    verify: fn(&Path) -> votum_verify::Report,
    wanted: &[&str],
) -> Result<tempfile::TempDir, Eg2Error> {
    let private = tempfile::Builder::new()
        .prefix("votum-guardian-record-")
        .tempdir()
        .map_err(|e| Eg2Error::Io(e.to_string()))?;
    copy_record(record, private.path())
        .map_err(|e| Eg2Error::Io(format!("{}: {e}", record.display())))?;
    let report = verify(private.path());
    let bad: Vec<String> = report
        .checks
        .iter()
        .filter(|c| {
            matches!(c.status, Status::Fail | Status::Error)
                || (wanted.contains(&c.id) && c.status != Status::Pass)
        })
        .map(|c| {
            let first = c
                .findings
                .first()
                .map(|f| format!(": {}: {}", f.object, f.reason))
                .unwrap_or_default();
            format!("{} {}{first}", c.id, c.status.name())
        })
        .collect();
    if !bad.is_empty() {
        return Err(Eg2Error::Unverified(bad.join("; ")));
    }
    Ok(private)
}

/// One guardian of a 2.x election, in its own process (spec/65.9). Its secrets never leave it except each
/// share, which the caller seals to its receiver at once. `seed` (32 bytes) is for reproducible tests.
#[pyclass(frozen, name = "Eg2Trustee", module = "votum._native")]
pub struct Eg2Trustee {
    inner: Mutex<AnyTrustee>,
    id: String,
    x: u32,
    rng: Mutex<rand_chacha::ChaCha20Rng>,
}

impl Eg2Trustee {
    fn with<T>(&self, f: impl FnOnce(&mut AnyTrustee) -> T) -> T {
        let mut guard = self
            .inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        f(&mut guard)
    }
}

#[pymethods]
impl Eg2Trustee {
    #[new]
    #[pyo3(signature = (group, manifest, guardians, quorum, guardian_id, x, seed=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        group: &str,
        manifest: Option<Vec<u8>>,
        guardians: u32,
        quorum: u32,
        guardian_id: String,
        x: u32,
        seed: Option<&[u8]>,
    ) -> PyResult<Self> {
        let mut rng = rng_from(seed)?;
        let manifest = manifest_bytes(manifest);
        let inner = release(py, || match group {
            "p256" => Ok(Trustee::new(
                P256,
                &manifest,
                guardians,
                quorum,
                &guardian_id,
                x,
                &mut rng,
            )
            .map(AnyTrustee::P256)),
            "eg2-4096" => Ok(Trustee::new(
                ModpGroup::eg2_4096(),
                &manifest,
                guardians,
                quorum,
                &guardian_id,
                x,
                &mut rng,
            )
            .map(AnyTrustee::Modp)),
            other => Err(other.to_owned()),
        })
        .map_err(|g| unknown_group(&g))?
        .map_err(eg2)?;
        Ok(Self {
            inner: Mutex::new(inner),
            id: guardian_id,
            x,
            rng: Mutex::new(rng),
        })
    }

    #[getter]
    fn guardian_id(&self) -> &str {
        &self.id
    }

    #[getter]
    fn x(&self) -> u32 {
        self.x
    }

    /// This guardian's public record (JSON): its commitments and their proofs.
    fn public_record(&self) -> String {
        self.with(|t| each!(t, t => t.public().to_string()))
    }

    /// Takes every guardian's public record (this one's unchanged among them) once the roster checks.
    fn agree(&self, py: Python<'_>, records: Vec<String>) -> PyResult<()> {
        let docs = json_list(&records)?;
        release(py, || self.with(|t| each!(t, t => t.agree(&docs)))).map_err(eg2)
    }

    /// The share for the guardian at `x` (32 bytes): secret, to be sealed to that guardian at once.
    fn share_for<'py>(&self, py: Python<'py>, x: u32) -> PyResult<Bound<'py, PyBytes>> {
        let share = self.with(|t| each!(t, t => t.share_for(x))).map_err(eg2)?;
        Ok(PyBytes::new(py, &share))
    }

    /// Takes the share dealt by the guardian at `dealer`, checked against its commitments.
    fn receive(&self, py: Python<'_>, dealer: u32, share: &[u8]) -> PyResult<()> {
        let share = zeroize::Zeroizing::new(share.to_vec());
        release(py, || {
            self.with(|t| each!(t, t => t.receive(dealer, &share)))
        })
        .map_err(eg2)
    }

    /// K (base64) and H_E (hex), computed here once every share is in.
    fn joint(&self) -> PyResult<(String, String)> {
        self.with(|t| {
            each!(t, t => {
                let (k, he) = t.joint().map_err(eg2)?;
                Ok((
                    votum_eg2::record::element(t.group(), &k).as_str().unwrap_or("").to_owned(),
                    hex::encode(he),
                ))
            })
        })
    }

    /// This guardian's shares (JSON) of what the record at `record` asks decrypted, after copying it here
    /// and checking the copy as far as its encrypted tally. Once per guardian.
    fn decryption_shares(&self, py: Python<'_>, record: PathBuf) -> PyResult<String> {
        release(py, || {
            let private = checked_copy(
                &record,
                votum_verify::verify_eg2_until_tally,
                &[
                    "V-EG2-01", "V-EG2-02", "V-EG2-03", "V-EG2-04", "V-EG2-05", "V-EG2-06",
                    "V-EG2-07", "V-EG2-08",
                ],
            )?;
            let mut rng = self
                .rng
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            self.with(|t| each!(t, t => t.shares(private.path(), &mut *rng)))
                .map(|v| v.to_string())
        })
        .map_err(eg2)
    }

    /// The answers (JSON) for this guardian's shares, the challenges derived here from every decrypting
    /// guardian's `shares`. Once.
    fn answer(&self, py: Python<'_>, shares: Vec<String>) -> PyResult<String> {
        let docs = json_list(&shares)?;
        release(py, || self.with(|t| each!(t, t => t.answer(&docs))))
            .map(|v| v.to_string())
            .map_err(eg2)
    }

    fn __repr__(&self) -> String {
        format!("Eg2Trustee({}, x={})", self.id, self.x)
    }
}

/// The coordinator of a 2.x election whose guardians are parties of their own (spec/65.9): it holds no
/// secret and writes the record to `out`.
#[pyclass(frozen, name = "Eg2Coordinator", module = "votum._native")]
pub struct Eg2Coordinator(Mutex<AnyCoordinator>);

impl Eg2Coordinator {
    fn with<T>(&self, f: impl FnOnce(&mut AnyCoordinator) -> T) -> T {
        let mut guard = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        f(&mut guard)
    }
}

#[pymethods]
impl Eg2Coordinator {
    #[new]
    #[pyo3(signature = (out, group, manifest, guardians, quorum, device="votum-device"))]
    fn new(
        out: PathBuf,
        group: &str,
        manifest: Option<Vec<u8>>,
        guardians: u32,
        quorum: u32,
        device: &str,
    ) -> PyResult<Self> {
        let manifest = manifest_bytes(manifest);
        let inner = match group {
            "p256" => AnyCoordinator::P256(
                Coordinator::new(P256, &out, &manifest, guardians, quorum, device).map_err(eg2)?,
                P256,
            ),
            "eg2-4096" => {
                let g = ModpGroup::eg2_4096();
                AnyCoordinator::Modp(
                    Coordinator::new(g.clone(), &out, &manifest, guardians, quorum, device)
                        .map_err(eg2)?,
                    g,
                )
            }
            other => return Err(unknown_group(other)),
        };
        Ok(Self(Mutex::new(inner)))
    }

    /// Takes the guardians' public records (JSON), checks them as a roster, writes the record's first
    /// documents, and returns K (base64) and H_E (hex).
    fn open(&self, py: Python<'_>, records: Vec<String>) -> PyResult<(String, String)> {
        let docs = json_list(&records)?;
        release(py, || {
            self.with(|c| {
                each_coordinator!(c, c, g => {
                    let publics = docs
                        .iter()
                        .map(|d| read_public(g, d).map_err(Eg2Error::Parameters))
                        .collect::<Result<Vec<_>, _>>()?;
                    let (k, he) = c.open(publics)?;
                    Ok((
                        votum_eg2::record::element(g, &k).as_str().unwrap_or("").to_owned(),
                        hex::encode(he),
                    ))
                })
            })
        })
        .map_err(eg2)
    }

    /// Encrypts `ballots` simulated voters' ballots (every `challenge_every`-th challenged; choices drawn
    /// from `seed`) and writes them and the encrypted tally.
    fn cast(
        &self,
        py: Python<'_>,
        ballots: usize,
        challenge_every: usize,
        seed: u64,
    ) -> PyResult<()> {
        release(py, || {
            self.with(|c| each_coordinator!(c, c, _g => c.cast(ballots, challenge_every, seed)))
        })
        .map_err(eg2)
    }

    /// Combines the decrypting guardians' shares and answers (JSON), checks each answer (a wrong one names
    /// its guardian), and writes the decryptions. Returns the run's summary.
    fn finish<'py>(
        &self,
        py: Python<'py>,
        shares: Vec<String>,
        answers: Vec<String>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let shares = json_list(&shares)?;
        let answers = json_list(&answers)?;
        let summary = release(py, || {
            self.with(|c| each_coordinator!(c, c, _g => finish_with(c, &shares, &answers)))
        })
        .map_err(eg2)?;
        summary_dict(py, &summary)
    }
}
