//! The independent verifier (`votum-verify`, spec/50) for Python: one call, a JSON report back.

use std::ops::ControlFlow;
use std::path::PathBuf;

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use votum_verify::{verify_record, Options, Progress};

use crate::convert::release;

/// Verifies the record at `record` (an ElectionGuard 1.4 directory or a votum archive), every check
/// of spec/50, with the GIL released. `progress(stage, n)` is called as documents and ballot batches
/// are read. Returns (report JSON, intermediates JSON). Ctrl-C (a pending signal, checked at every
/// progress step) or an exception raised by `progress` stops the verification and is raised here.
#[pyfunction]
#[pyo3(signature = (record, progress=None))]
pub fn verify_record_report(
    py: Python<'_>,
    record: PathBuf,
    progress: Option<PyObject>,
) -> PyResult<(String, String)> {
    let (texts, raised) = release(py, move || {
        let mut raised: Option<PyErr> = None;
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
            },
        );
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
