//! The independent verifier (`votum-verify`, spec/50) for Python: one call, a JSON report back.

use std::path::PathBuf;

use pyo3::prelude::*;
use votum_verify::{verify_record, Options, Progress};

use crate::convert::release;

/// Verifies the record at `record` (an ElectionGuard 1.4 directory or a votum archive), every check
/// of spec/50, with the GIL released. `progress(stage, n)` is called as documents and ballot batches
/// are read. Returns (report JSON, intermediates JSON).
#[pyfunction]
#[pyo3(signature = (record, progress=None))]
pub fn verify_record_report(
    py: Python<'_>,
    record: PathBuf,
    progress: Option<PyObject>,
) -> (String, String) {
    release(py, move || {
        let mut hook = |p: Progress| {
            if let Some(cb) = progress.as_ref() {
                let (stage, n) = match p {
                    Progress::Document(kind) => (kind.name().to_string(), 1u64),
                    Progress::Ballots(n) => ("ballots".to_string(), n),
                    Progress::Entry(name) => (name, 1u64),
                };
                // a failing progress hook must not stop a verification
                Python::with_gil(|py| {
                    let _ = cb.call1(py, (stage, n));
                });
            }
        };
        let (report, intermediates) = verify_record(
            &record,
            Options {
                progress: Some(&mut hook),
            },
        );
        (
            serde_json::to_string(&report).unwrap_or_default(),
            serde_json::to_string(&intermediates.values).unwrap_or_default(),
        )
    })
}
