//! The independent verifier (`votum-verify`, spec/50) for Python: one call, a JSON report back.

use std::ops::ControlFlow;
use std::path::PathBuf;

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use votum_verify::{BallotWorkers, Options, Progress, ShuffleWorkers, SvWorkers};

use crate::convert::release;

/// Verifies the record at `record` (an ElectionGuard 1.4 directory or a votum archive), every check
/// of spec/50, with the GIL released. `progress(stage, n)` is called as documents and ballot batches
/// are read. Returns (report JSON, intermediates JSON). Ctrl-C (a pending signal, checked at every
/// progress step) or an exception raised by `progress` stops the verification and is raised here.
/// `workers`, when given, checks an ElectionGuard record's ballots elsewhere (spec/98.3): an object
/// with `setup(params: bytes)`, `submit(ballots: list[str])`, `collect() -> list[bool]` (the
/// oldest batch's verdicts) and `window() -> int`; for a mix record's shuffle proofs (spec/98.3),
/// when it has them, `shuffle_setup(parameters: bytes, joint: bytes)`, `shuffle_submit(context,
/// input, payload)` and `shuffle_collect() -> list[tuple[str, str | None]]` ("pass", "fail" or
/// "error" with the reason, in order); for a split-value record's heavy checks, when it has them,
/// `sv_setup(parameters: bytes, record: str)`, `sv_submit(job: bytes)` and `sv_collect() ->
/// list[tuple[str, bytes | str]]` (("ok", answer) or ("error", reason), in order). An exception from
/// any of them stops the verification and is raised here.
#[pyfunction]
#[pyo3(signature = (record, progress=None, workers=None, format=None, allow_toy_parameters=false))]
pub fn verify_record_report(
    py: Python<'_>,
    record: PathBuf,
    progress: Option<PyObject>,
    workers: Option<PyObject>,
    format: Option<String>,
    allow_toy_parameters: bool,
) -> PyResult<(String, String)> {
    let kind = match format.as_deref() {
        None => None,
        Some(name) => Some(votum_verify::Kind::from_name(name).ok_or_else(|| {
            let names: Vec<&str> = votum_verify::Kind::NAMES.iter().map(|(n, _)| *n).collect();
            pyo3::exceptions::PyValueError::new_err(format!(
                "unknown record format {name:?}: one of {}",
                names.join(", ")
            ))
        })?),
    };
    let shuffles = match &workers {
        Some(w) if w.bind(py).hasattr("shuffle_submit")? => Some(PyWorkers {
            workers: w.clone_ref(py),
            raised: None,
        }),
        _ => None,
    };
    let svs = match &workers {
        Some(w) if w.bind(py).hasattr("sv_submit")? => Some(PyWorkers::new(w.clone_ref(py))),
        _ => None,
    };
    let (texts, raised) = release(py, move || {
        let mut raised: Option<PyErr> = None;
        let mut remote = workers.map(|w| PyWorkers {
            workers: w,
            raised: None,
        });
        let mut shuffles = shuffles;
        let mut svs = svs;
        let mut hook = |p: Progress| {
            let (stage, n) = match p {
                Progress::Document(kind) => (kind.name().to_string(), 1u64),
                Progress::Ballots(n) => ("ballots".to_string(), n),
                Progress::Entry(name) => (name, 1u64),
            };
            let outcome = Python::with_gil(|py| {
                py.check_signals()?;
                if let Some(cb) = progress.as_ref() {
                    cb.call1(py, (stage, n))?;
                }
                Ok::<(), PyErr>(())
            });
            match outcome {
                Ok(()) => ControlFlow::Continue(()),
                Err(e) => {
                    raised = Some(e);
                    ControlFlow::Break(())
                }
            }
        };
        let (report, intermediates) = votum_verify::verify_record_as(
            &record,
            kind,
            Options {
                progress: Some(&mut hook),
                ballot_workers: remote.as_mut().map(|w| w as &mut dyn BallotWorkers),
                shuffle_workers: shuffles.as_mut().map(|w| w as &mut dyn ShuffleWorkers),
                sv_workers: svs.as_mut().map(|w| w as &mut dyn SvWorkers),
                allow_toy_parameters,
            },
        );
        if raised.is_none() {
            raised = remote.and_then(|w| w.raised);
        }
        if raised.is_none() {
            raised = svs.and_then(|w| w.raised);
        }
        if raised.is_none() {
            raised = shuffles.and_then(|w| w.raised);
        }
        let texts = serde_json::to_string(&report).and_then(|report| {
            serde_json::to_string(&intermediates.values).map(|values| (report, values))
        });
        (texts, raised)
    });
    if let Some(e) = raised {
        return Err(e);
    }
    texts.map_err(|e| {
        PyRuntimeError::new_err(format!("the verifier's report did not serialise: {e}"))
    })
}

/// A Python object standing in as the verifier's ballot workers, or as shuffle workers
/// (spec/98.3).
pub(crate) struct PyWorkers {
    workers: PyObject,
    pub(crate) raised: Option<PyErr>,
}

impl PyWorkers {
    pub(crate) fn new(workers: PyObject) -> Self {
        Self {
            workers,
            raised: None,
        }
    }

    fn call<T>(
        &mut self,
        f: impl FnOnce(Python<'_>, &PyObject) -> PyResult<T>,
    ) -> ControlFlow<(), T> {
        if self.raised.is_some() {
            return ControlFlow::Break(());
        }
        match Python::with_gil(|py| {
            py.check_signals()?;
            f(py, &self.workers)
        }) {
            Ok(v) => ControlFlow::Continue(v),
            Err(e) => {
                self.raised = Some(e);
                ControlFlow::Break(())
            }
        }
    }
}

impl BallotWorkers for PyWorkers {
    fn setup(&mut self, params: &[u8]) -> ControlFlow<()> {
        self.call(|py, w| {
            w.call_method1(py, "setup", (pyo3::types::PyBytes::new(py, params),))
                .map(drop)
        })
    }

    fn submit(&mut self, ballots: &[&str]) -> ControlFlow<()> {
        self.call(|py, w| w.call_method1(py, "submit", (ballots.to_vec(),)).map(drop))
    }

    fn collect(&mut self) -> ControlFlow<(), Vec<bool>> {
        self.call(|py, w| w.call_method0(py, "collect")?.extract::<Vec<bool>>(py))
    }

    fn window(&self) -> usize {
        Python::with_gil(|py| {
            self.workers
                .call_method0(py, "window")
                .and_then(|n| n.extract::<usize>(py))
                .unwrap_or(1)
        })
    }
}

impl ShuffleWorkers for PyWorkers {
    fn setup(&mut self, parameters: &[u8], joint: &[u8]) -> ControlFlow<()> {
        self.call(|py, w| {
            let args = (
                pyo3::types::PyBytes::new(py, parameters),
                pyo3::types::PyBytes::new(py, joint),
            );
            w.call_method1(py, "shuffle_setup", args).map(drop)
        })
    }

    fn submit(&mut self, context: &[u8; 32], input: &[u8], payload: &[u8]) -> ControlFlow<()> {
        self.call(|py, w| {
            let args = (
                pyo3::types::PyBytes::new(py, context),
                pyo3::types::PyBytes::new(py, input),
                pyo3::types::PyBytes::new(py, payload),
            );
            w.call_method1(py, "shuffle_submit", args).map(drop)
        })
    }

    fn pows(&mut self) -> Option<&mut dyn votum_shuffle::remote::PowWorkers> {
        let has =
            Python::with_gil(|py| self.workers.bind(py).hasattr("pow_fixed").unwrap_or(false));
        if has {
            Some(self)
        } else {
            None
        }
    }

    fn collect(&mut self) -> ControlFlow<(), Vec<Result<Option<String>, String>>> {
        let raw = self.call(|py, w| {
            w.call_method0(py, "shuffle_collect")?
                .extract::<Vec<(String, Option<String>)>>(py)
        })?;
        let mut out = Vec::with_capacity(raw.len());
        for (status, reason) in raw {
            out.push(match (status.as_str(), reason) {
                ("pass", _) => Ok(None),
                ("fail", Some(r)) => Ok(Some(r)),
                (_, r) => Err(r.unwrap_or_else(|| format!("a worker's verdict {status:?}"))),
            });
        }
        ControlFlow::Continue(out)
    }
}

/// A mixer's batches of powers on a Python object's workers (spec/98.7): `pow_setup(group, pk,
/// h)`, `pow_fixed(chunks: list[tuple[base, bytes]]) -> list[bytes]`, `pow_multi(jobs) -> list[bytes]` and
/// `pow_pieces() -> int`. An exception is kept and answered as the workers' failure.
impl votum_shuffle::remote::PowWorkers for PyWorkers {
    fn setup(&mut self, group: &str, pk: &[u8], h: &[u8]) -> Result<(), String> {
        self.pow_call(|py, w| {
            let args = (
                group.to_string(),
                pyo3::types::PyBytes::new(py, pk),
                pyo3::types::PyBytes::new(py, h),
            );
            w.call_method1(py, "pow_setup", args).map(drop)
        })
    }

    fn fixed(
        &mut self,
        chunks: &[(votum_shuffle::remote::Base, Vec<u8>)],
    ) -> Result<Vec<Vec<u8>>, String> {
        self.pow_call(|py, w| {
            let chunks: Vec<(&str, Bound<'_, pyo3::types::PyBytes>)> = chunks
                .iter()
                .map(|(b, c)| (b.name(), pyo3::types::PyBytes::new(py, c)))
                .collect();
            w.call_method1(py, "pow_fixed", (chunks,))?
                .extract::<Vec<Vec<u8>>>(py)
        })
    }

    fn multi(&mut self, jobs: &[(Vec<u8>, Vec<u8>)]) -> Result<Vec<Vec<u8>>, String> {
        self.pow_call(|py, w| {
            let jobs: Vec<(
                Bound<'_, pyo3::types::PyBytes>,
                Bound<'_, pyo3::types::PyBytes>,
            )> = jobs
                .iter()
                .map(|(b, e)| {
                    (
                        pyo3::types::PyBytes::new(py, b),
                        pyo3::types::PyBytes::new(py, e),
                    )
                })
                .collect();
            w.call_method1(py, "pow_multi", (jobs,))?
                .extract::<Vec<Vec<u8>>>(py)
        })
    }

    fn pieces(&self) -> usize {
        Python::with_gil(|py| {
            self.workers
                .call_method0(py, "pow_pieces")
                .and_then(|n| n.extract::<usize>(py))
                .unwrap_or(1)
        })
    }
}

impl PyWorkers {
    /// A call for the prover's workers: an exception is kept (raised to the caller later) and
    /// answered as a failure, which stops the shuffle.
    fn pow_call<T>(
        &mut self,
        f: impl FnOnce(Python<'_>, &PyObject) -> PyResult<T>,
    ) -> Result<T, String> {
        match self.call(f) {
            ControlFlow::Continue(v) => Ok(v),
            ControlFlow::Break(()) => Err(self
                .raised
                .as_ref()
                .map_or_else(|| "stopped".to_string(), ToString::to_string)),
        }
    }
}

/// A cluster worker's tables for a mixer's batches of powers (spec/98.7): g, the key and h of one
/// shuffle's key, built once.
#[pyclass(module = "votum._native", frozen)]
pub struct MixPowTables {
    tables: PowTablesAny,
}

enum PowTablesAny {
    Modp(Box<votum_shuffle::remote::PowTables<votum_group::ModpGroup>>),
    Ristretto(Box<votum_shuffle::remote::PowTables<votum_group::Ristretto255>>),
}

#[pymethods]
impl MixPowTables {
    #[new]
    fn new(py: Python<'_>, group: &str, pk: Vec<u8>, h: Vec<u8>) -> PyResult<Self> {
        let id =
            votum_group::GroupId::from_name(group).map_err(crate::errors::NativeError::Group)?;
        let tables = release(py, move || match crate::dual::AnyGroup::from_id(id) {
            crate::dual::AnyGroup::Modp(g) => votum_shuffle::remote::PowTables::new(g, &pk, &h)
                .map(|t| PowTablesAny::Modp(Box::new(t))),
            crate::dual::AnyGroup::Ristretto(g) => {
                votum_shuffle::remote::PowTables::new(g, &pk, &h)
                    .map(|t| PowTablesAny::Ristretto(Box::new(t)))
            }
        })
        .map_err(pyo3::exceptions::PyValueError::new_err)?;
        Ok(Self { tables })
    }

    /// `base` ("g", "pk" or "h") raised to each scalar of `exps`, with the GIL released.
    fn fixed<'py>(
        &self,
        py: Python<'py>,
        base: &str,
        exps: Vec<u8>,
    ) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
        let base = votum_shuffle::remote::Base::from_name(base)
            .ok_or_else(|| pyo3::exceptions::PyValueError::new_err("base must be g, pk or h"))?;
        let out = release(py, || match &self.tables {
            PowTablesAny::Modp(t) => t.fixed(base, &exps),
            PowTablesAny::Ristretto(t) => t.fixed(base, &exps),
        })
        .map_err(pyo3::exceptions::PyValueError::new_err)?;
        Ok(pyo3::types::PyBytes::new(py, &out))
    }

    /// Π bᵢ^eᵢ of encoded bases and scalars, with the GIL released.
    fn multi<'py>(
        &self,
        py: Python<'py>,
        bases: Vec<u8>,
        exps: Vec<u8>,
    ) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
        let out = release(py, || match &self.tables {
            PowTablesAny::Modp(t) => t.multi(&bases, &exps),
            PowTablesAny::Ristretto(t) => t.multi(&bases, &exps),
        })
        .map_err(pyo3::exceptions::PyValueError::new_err)?;
        Ok(pyo3::types::PyBytes::new(py, &out))
    }
}

impl SvWorkers for PyWorkers {
    fn setup(&mut self, parameters: &[u8], record: &std::path::Path) -> ControlFlow<()> {
        self.call(|py, w| {
            let args = (
                pyo3::types::PyBytes::new(py, parameters),
                record.to_string_lossy().into_owned(),
            );
            w.call_method1(py, "sv_setup", args).map(drop)
        })
    }

    fn submit(&mut self, job: &[u8]) -> ControlFlow<()> {
        self.call(|py, w| {
            w.call_method1(py, "sv_submit", (pyo3::types::PyBytes::new(py, job),))
                .map(drop)
        })
    }

    fn collect(&mut self) -> ControlFlow<(), Vec<Result<Vec<u8>, String>>> {
        self.call(|py, w| {
            let raw = w.call_method0(py, "sv_collect")?;
            let items = raw.bind(py).try_iter()?;
            let mut out = Vec::new();
            for item in items {
                let (status, body): (String, Bound<'_, PyAny>) = item?.extract()?;
                out.push(match status.as_str() {
                    "ok" => Ok(body.extract::<Vec<u8>>()?),
                    _ => Err(body
                        .extract::<String>()
                        .unwrap_or_else(|_| format!("a worker's answer {status:?}"))),
                });
            }
            Ok(out)
        })
    }
}

/// One job of a split-value record's checks run on its own (the cluster's task, spec/98.3), with
/// the GIL released: ("ok", answer) or ("error", reason).
#[pyfunction]
pub fn sv_check_task(
    py: Python<'_>,
    parameters: Vec<u8>,
    record: PathBuf,
    job: Vec<u8>,
) -> (String, PyObject) {
    let got = release(py, || {
        votum_verify::check_sv_task(&parameters, &record, &job)
    });
    match got {
        Ok(answer) => (
            "ok".into(),
            pyo3::types::PyBytes::new(py, &answer).into_any().unbind(),
        ),
        Err(reason) => (
            "error".into(),
            pyo3::types::PyString::new(py, &reason).into_any().unbind(),
        ),
    }
}

/// One shuffle proof of a mix record checked on its own (the cluster's task, spec/98.3), with the
/// GIL released: ("pass", None), ("fail", reason) as V-MIX-04 reports it, or ("error", reason).
#[pyfunction]
pub fn mix_check_shuffle(
    py: Python<'_>,
    parameters: Vec<u8>,
    joint: Vec<u8>,
    context: Vec<u8>,
    input: Vec<u8>,
    payload: Vec<u8>,
) -> PyResult<(String, Option<String>)> {
    let context: [u8; 32] = context
        .as_slice()
        .try_into()
        .map_err(|_| pyo3::exceptions::PyValueError::new_err("a context is 32 bytes"))?;
    let verdict = release(py, || {
        votum_verify::check_shuffle_task(&parameters, &joint, &context, &input, &payload)
    });
    Ok(match verdict {
        Ok(None) => ("pass".into(), None),
        Ok(Some(r)) => ("fail".into(), Some(r)),
        Err(r) => ("error".into(), Some(r)),
    })
}

/// A Belenios election's ballot checks (V-BEL-05, 06) built from the parameters the verifier hands a
/// cluster (spec/98.3), answering only verdicts: what a worker runs for `votum verify --scheduler` on a
/// Belenios archive.
#[pyclass(frozen, name = "BeleniosBallotChecker", module = "votum._native")]
pub struct PyBeleniosBallotChecker {
    inner: votum_verify::BeleniosBallotChecker,
}

#[pymethods]
impl PyBeleniosBallotChecker {
    #[new]
    fn new(py: Python<'_>, params: &[u8]) -> PyResult<Self> {
        let inner = release(py, || votum_verify::BeleniosBallotChecker::new(params))
            .map_err(crate::errors::NativeError::Input)?;
        Ok(Self { inner })
    }

    /// Whether `params` are a Belenios election's ballot-check parameters (by their first bytes).
    #[staticmethod]
    fn is_params(params: &[u8]) -> bool {
        params.starts_with(votum_verify::BeleniosBallotChecker::TAG)
    }

    /// Whether each ballot (its JSON text, as the archive holds it) passes V-BEL-05 and V-BEL-06.
    fn check(&self, py: Python<'_>, ballots: Vec<String>) -> Vec<bool> {
        release(py, || {
            let refs: Vec<&str> = ballots.iter().map(String::as_str).collect();
            self.inner.check(&refs)
        })
    }
}

/// Estonia's IVXV decryption proofs (V-IVXV-04) checked from the parameters the verifier hands a cluster
/// (spec/98.1), answering only verdicts: what a worker runs for `votum verify --scheduler` on an IVXV record.
#[pyclass(frozen, name = "IvxvProofChecker", module = "votum._native")]
pub struct PyIvxvProofChecker {
    inner: votum_verify::IvxvProofChecker,
}

#[pymethods]
impl PyIvxvProofChecker {
    #[new]
    fn new(py: Python<'_>, params: &[u8]) -> PyResult<Self> {
        let inner = release(py, || votum_verify::IvxvProofChecker::new(params))
            .map_err(crate::errors::NativeError::Input)?;
        Ok(Self { inner })
    }

    /// Whether `params` are IVXV proof-check parameters (by their first bytes).
    #[staticmethod]
    fn is_params(params: &[u8]) -> bool {
        params.starts_with(votum_verify::IvxvProofChecker::TAG)
    }

    /// Whether each proof (the JSON array of its ciphertext, message and proof strings) holds.
    fn check(&self, py: Python<'_>, proofs: Vec<String>) -> Vec<bool> {
        release(py, || {
            let refs: Vec<&str> = proofs.iter().map(String::as_str).collect();
            self.inner.check(&refs)
        })
    }
}

/// An ElectionGuard 2.x record's ballot checks (V-EG2-05…07; a 2.1 record's V-EG21-05…08, 15…17) built from
/// the parameters the verifier hands a cluster (spec/98.3), answering only verdicts: what a worker runs for
/// `votum verify --scheduler` on a 2.x record.
#[pyclass(frozen, name = "Eg2BallotChecker", module = "votum._native")]
pub struct PyEg2BallotChecker {
    inner: votum_verify::Eg2BallotChecker,
}

#[pymethods]
impl PyEg2BallotChecker {
    #[new]
    fn new(py: Python<'_>, params: &[u8]) -> PyResult<Self> {
        let inner = release(py, || votum_verify::Eg2BallotChecker::new(params))
            .map_err(crate::errors::NativeError::Input)?;
        Ok(Self { inner })
    }

    /// Whether `params` are a 2.x or a 2.1 record's ballot-check parameters (by their first bytes).
    #[staticmethod]
    fn is_params(params: &[u8]) -> bool {
        votum_verify::Eg2BallotChecker::is_params(params)
    }

    /// Whether each ballot (its JSON text, as the record holds it) passes V-EG2-05…07.
    fn check(&self, py: Python<'_>, ballots: Vec<String>) -> Vec<bool> {
        release(py, || {
            let refs: Vec<&str> = ballots.iter().map(String::as_str).collect();
            self.inner.check(&refs)
        })
    }
}
