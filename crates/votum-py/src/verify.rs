//! The independent verifier (`votum-verify`, spec/50) for Python: one call, a JSON report back.

use std::ops::ControlFlow;
use std::path::PathBuf;

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use votum_verify::{verify_record, BallotWorkers, Options, Progress};

use crate::convert::release;

/// Verifies the record at `record` (an ElectionGuard 1.4 directory or a votum archive), every check
/// of spec/50, with the GIL released. `progress(stage, n)` is called as documents and ballot batches
/// are read. Returns (report JSON, intermediates JSON). Ctrl-C (a pending signal, checked at every
/// progress step) or an exception raised by `progress` stops the verification and is raised here.
/// `workers`, when given, checks an ElectionGuard record's ballots elsewhere (spec/98.3): an object
/// with `setup(params: bytes)`, `submit(ballots: list[str])`, `collect() -> list[bool]` (the
/// oldest batch's verdicts) and `window() -> int`; an exception from any of them stops the
/// verification and is raised here.
#[pyfunction]
#[pyo3(signature = (record, progress=None, workers=None))]
pub fn verify_record_report(
    py: Python<'_>,
    record: PathBuf,
    progress: Option<PyObject>,
    workers: Option<PyObject>,
) -> PyResult<(String, String)> {
    let (texts, raised) = release(py, move || {
        let mut raised: Option<PyErr> = None;
        let mut remote = workers.map(|w| PyWorkers {
            workers: w,
            raised: None,
        });
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
        let (report, intermediates) = verify_record(
            &record,
            Options {
                progress: Some(&mut hook),
                ballot_workers: remote.as_mut().map(|w| w as &mut dyn BallotWorkers),
            },
        );
        if raised.is_none() {
            raised = remote.and_then(|w| w.raised);
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

/// A Python object standing in as the verifier's ballot workers (spec/98.3).
struct PyWorkers {
    workers: PyObject,
    raised: Option<PyErr>,
}

impl PyWorkers {
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
