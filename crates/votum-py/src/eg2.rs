//! ElectionGuard 2.x elections: a whole election written as an egk-ec record (spec/65.7–65.8), or as
//! ElectionGuard 2.1 itself (spec/66).

use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::PyDict;
use votum_eg2::election::{run, Options, Summary, DEFAULT_MANIFEST};
use votum_group::{ModpGroup, P256};

use crate::convert::release;
use crate::errors::NativeError;

/// Runs a whole 2.x election on `group` ("p256" or "eg2-4096") and writes its record to `out`. `manifest` is
/// an egk-ec manifest's bytes (the embedded one when None); `available` the x-coordinates of the guardians
/// that decrypt (all when empty); every `challenge_every`-th ballot is challenged (none when 0). Returns
/// {"cast", "challenged", "counts": {"contest/option": n}, "seconds": [(step, s)]}.
#[pyfunction]
#[pyo3(signature = (out, group, manifest, ballots, guardians, quorum, available, challenge_every, seed, device))]
#[allow(clippy::too_many_arguments)]
pub fn eg2_election<'py>(
    py: Python<'py>,
    out: PathBuf,
    group: &str,
    manifest: Option<Vec<u8>>,
    ballots: usize,
    guardians: u32,
    quorum: u32,
    available: Vec<u32>,
    challenge_every: usize,
    seed: u64,
    device: String,
) -> PyResult<Bound<'py, PyDict>> {
    let options = Options {
        guardians,
        quorum,
        available,
        ballots,
        challenge_every,
        seed,
        device,
    };
    let manifest = manifest.unwrap_or_else(|| DEFAULT_MANIFEST.as_bytes().to_vec());
    let summary = match group {
        "p256" => release(py, || run(P256, &out, &manifest, &options)),
        "eg2-4096" => release(py, || run(ModpGroup::eg2_4096(), &out, &manifest, &options)),
        other => {
            return Err(NativeError::Input(format!(
                "group {other:?}: a 2.x election runs on p256 or eg2-4096"
            ))
            .into())
        }
    }
    .map_err(NativeError::Eg2)?;
    summary_dict(py, &summary)
}

/// Runs a whole ElectionGuard 2.1 election (spec/66.7) on `group` ("p256" or "eg2-4096") and writes its
/// 2.1 record to `out`; the arguments are [`eg2_election`]'s, with `simple_chaining` (mode 1, else no
/// chaining) and `weighted` (voter i weighs 1 + i mod 3). Returns the same summary.
#[pyfunction]
#[pyo3(signature = (out, group, manifest, ballots, guardians, quorum, available, challenge_every, seed, device, simple_chaining, weighted))]
#[allow(clippy::too_many_arguments)]
pub fn eg21_election<'py>(
    py: Python<'py>,
    out: PathBuf,
    group: &str,
    manifest: Option<Vec<u8>>,
    ballots: usize,
    guardians: u32,
    quorum: u32,
    available: Vec<u32>,
    challenge_every: usize,
    seed: u64,
    device: String,
    simple_chaining: bool,
    weighted: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let options = votum_eg2::v21::election::Options {
        base: Options {
            guardians,
            quorum,
            available,
            ballots,
            challenge_every,
            seed,
            device,
        },
        simple_chaining,
        weighted,
    };
    let manifest = manifest.unwrap_or_else(|| DEFAULT_MANIFEST.as_bytes().to_vec());
    use votum_eg2::v21::election::run as run21;
    let summary = match group {
        "p256" => release(py, || run21(P256, &out, &manifest, &options)),
        "eg2-4096" => release(py, || {
            run21(ModpGroup::eg2_4096(), &out, &manifest, &options)
        }),
        other => {
            return Err(NativeError::Input(format!(
                "group {other:?}: a 2.1 election runs on p256 or eg2-4096"
            ))
            .into())
        }
    }
    .map_err(NativeError::Eg2)?;
    summary_dict(py, &summary)
}

/// A run's summary as Python sees it: {"cast", "challenged", "counts": {"contest/option": n}, "seconds"}.
pub(crate) fn summary_dict<'py>(
    py: Python<'py>,
    summary: &Summary,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("cast", summary.cast)?;
    d.set_item("challenged", summary.challenged)?;
    let counts = PyDict::new(py);
    for (k, v) in &summary.counts {
        counts.set_item(k, v)?;
    }
    d.set_item("counts", counts)?;
    d.set_item("seconds", summary.seconds.clone())?;
    Ok(d)
}
