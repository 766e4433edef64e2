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
/// `progress(step)` is called before each step.
#[pyfunction]
#[pyo3(signature = (level, shape, voters, *, authorities = 4, progress = None))]
pub fn chvote_simulate(
    py: Python<'_>,
    level: u8,
    shape: &str,
    voters: usize,
    authorities: usize,
    progress: Option<Py<PyAny>>,
) -> PyResult<Py<PyDict>> {
    let config = Config {
        level: Level::from_number(level).map_err(NativeError::Chvote)?,
        shape: Shape::from_name(shape).map_err(NativeError::Chvote)?,
        voters,
        authorities,
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
    let report = release(py, || run(&config, &mut tell)).map_err(NativeError::Chvote)?;
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
    Ok(d.unbind())
}
