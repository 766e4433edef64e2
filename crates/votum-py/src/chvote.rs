//! CHVote elections (spec/92): the whole simulation, timed step by step.

use pyo3::prelude::*;
use pyo3::types::PyDict;
use votum_chvote::sim::{run, Config};
use votum_chvote::{Level, Shape};

use crate::convert::release;
use crate::errors::NativeError;

/// Runs a whole CHVote election of `voters` voters (every voter casts, checks its return codes,
/// confirms and checks its finalization code), then mixing, decryption and tallying; returns the
/// step table (the proof of concept's step names, milliseconds), the tally and the votes cast.
/// With `record`, the election's record is written there (spec/92.10) and checked by the
/// independent verifier (`verified`, `not_passed`); with `sheets`, one printable code sheet per voter
/// (HTML, mode 0600) is written into that directory. `progress(step)` is called before each step.
#[pyfunction]
#[pyo3(signature = (level, shape, voters, *, authorities = 4, record = None, sheets = None, progress = None))]
#[allow(clippy::too_many_arguments)]
pub fn chvote_simulate(
    py: Python<'_>,
    level: u8,
    shape: &str,
    voters: usize,
    authorities: usize,
    record: Option<std::path::PathBuf>,
    sheets: Option<std::path::PathBuf>,
    progress: Option<Py<PyAny>>,
) -> PyResult<Py<PyDict>> {
    let config = Config {
        level: Level::from_number(level).map_err(NativeError::Chvote)?,
        shape: Shape::from_name(shape).map_err(NativeError::Chvote)?,
        voters,
        authorities,
        record: record.clone(),
        sheets: sheets.clone(),
    };
    if voters == 0 {
        return Err(
            NativeError::Chvote(votum_chvote::ChvoteError::Parameters("no voters".into())).into(),
        );
    }
    let raised: std::sync::Mutex<Option<PyErr>> = std::sync::Mutex::new(None);
    let mut tell = |step: &str| {
        let outcome = Python::with_gil(|py| {
            if let Some(cb) = &progress {
                cb.call1(py, (step,))?;
            }
            Ok::<(), PyErr>(())
        });
        if let (Err(e), Ok(mut slot)) = (outcome, raised.lock()) {
            slot.get_or_insert(e);
        }
    };
    let (report, check) = release(py, || {
        let report = run(&config, &mut tell)?;
        let check = record
            .as_ref()
            .map(|path| votum_verify::verify_record(path, votum_verify::Options::default()).0);
        Ok::<_, votum_chvote::ChvoteError>((report, check))
    })
    .map_err(NativeError::Chvote)?;
    if let Some(e) = raised.lock().ok().and_then(|mut s| s.take()) {
        return Err(e);
    }
    let d = PyDict::new(py);
    let steps: Vec<(String, f64)> = report
        .steps
        .iter()
        .map(|(n, ms)| ((*n).to_owned(), *ms))
        .collect();
    d.set_item("steps", steps)?;
    d.set_item("tally", report.tally.counts.clone())?;
    d.set_item("invalid", report.tally.invalid)?;
    d.set_item("expected", report.expected.clone())?;
    d.set_item("confirmed", report.confirmed)?;
    d.set_item("p_bits", report.p_bits)?;
    d.set_item("elections", report.elections.clone())?;
    d.set_item("record_ms", report.record_ms)?;
    if let Some(check) = check {
        d.set_item("verified", check.passed())?;
        d.set_item("not_passed", check.not_passed())?;
    }
    Ok(d.unbind())
}
