//! ElectionGuard 2.x elections: a whole election written as an egk-ec record (spec/65.7–65.8), or as
//! ElectionGuard 2.1 itself (spec/66).

use std::path::{Path, PathBuf};

use pyo3::prelude::*;
use pyo3::types::PyDict;
use votum_eg2::election::{run, Options, Summary, DEFAULT_MANIFEST};
use votum_eg2::{Eg2Error, Eg2Group};
use votum_group::{ModpGroup, P256};

use crate::convert::release;
use crate::errors::NativeError;

/// Runs a whole 2.x election on `group` ("p256" or "eg2-4096") and writes its record to `out`: egk-ec's record
/// (`record` "egk-ec", spec/65.7–65.8) or ElectionGuard 2.1's own ("2.1", spec/66.7, with `simple_chaining`
/// or none and, with `weighted`, voter i weighing 1 + i mod 3; `pre_encrypted` ballots printed in advance besides
/// `ballots`, spec/66.10; `contest_data` "manifest", "encrypted" or "decrypted", spec/66.11). `manifest` is an egk-ec manifest's bytes (the
/// embedded one when None); `available` the x-coordinates of the guardians that decrypt (all when empty);
/// every `challenge_every`-th ballot is challenged (none when 0). Returns {"cast", "challenged", "counts":
/// {"contest/option": n}, "seconds": [(step, s)]}.
#[pyfunction]
#[pyo3(signature = (out, group, manifest, ballots, guardians, quorum, available, challenge_every, seed, device, record="egk-ec", simple_chaining=false, weighted=false, pre_encrypted=0, contest_data="manifest"))]
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
    record: &str,
    simple_chaining: bool,
    weighted: bool,
    pre_encrypted: usize,
    contest_data: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let base = Options {
        guardians,
        quorum,
        available,
        ballots,
        challenge_every,
        seed,
        device,
    };
    if pre_encrypted > 0 && record != "2.1" {
        return Err(NativeError::Input(
            "pre-encrypted ballots are written in the 2.1 record only (spec/66.10)".into(),
        )
        .into());
    }
    let contest_data = contest_data_of(contest_data, record)?;
    let options = match record {
        "egk-ec" => Form::EgkEc(base),
        "2.1" => Form::V21(votum_eg2::v21::election::Options {
            base,
            simple_chaining,
            weighted,
            pre_encrypted,
            contest_data,
        }),
        other => {
            return Err(NativeError::Input(format!(
                "record {other:?}: a 2.x election writes egk-ec or 2.1"
            ))
            .into())
        }
    };
    let manifest = manifest.unwrap_or_else(|| DEFAULT_MANIFEST.as_bytes().to_vec());
    let summary =
        match group {
            "p256" => release(py, || options.run(P256, &out, &manifest)),
            "eg2-4096" => release(py, || options.run(ModpGroup::eg2_4096(), &out, &manifest)),
            "eg2-3072" if record == "2.1" => {
                release(py, || options.run(ModpGroup::eg2_3072(), &out, &manifest))
            }
            "eg2-toy" if record == "2.1" => {
                release(py, || options.run(ModpGroup::eg2_toy(), &out, &manifest))
            }
            "eg2-3072" | "eg2-toy" => return Err(NativeError::Input(format!(
                "group {group:?}: 2.1's reduced and toy parameters are written in the 2.1 record only"
            ))
            .into()),
            other => {
                return Err(NativeError::Input(format!(
                "group {other:?}: a 2.x election runs on p256, eg2-4096 or (2.1 record) eg2-3072 or eg2-toy"
            ))
                .into())
            }
        }
        .map_err(NativeError::Eg2)?;
    summary_dict(py, &summary)
}

/// What `contest_data` names ("manifest", "encrypted" or "decrypted"; the last two in the 2.1 record only).
pub(crate) fn contest_data_of(
    contest_data: &str,
    record: &str,
) -> PyResult<votum_eg2::v21::election::ContestData> {
    use votum_eg2::v21::election::ContestData;
    Ok(match contest_data {
        "manifest" => ContestData::AsManifest,
        "encrypted" | "decrypted" if record != "2.1" => {
            return Err(NativeError::Input(
                "contest data is asked for in the 2.1 record only (spec/66.11)".into(),
            )
            .into())
        }
        "encrypted" => ContestData::Encrypted,
        "decrypted" => ContestData::Decrypted,
        other => {
            return Err(NativeError::Input(format!(
                "contest data {other:?}: manifest, encrypted or decrypted"
            ))
            .into())
        }
    })
}

/// Which record a 2.x election writes, with its options.
enum Form {
    EgkEc(Options),
    V21(votum_eg2::v21::election::Options),
}

impl Form {
    fn run<G: Eg2Group>(&self, group: G, out: &Path, manifest: &[u8]) -> Result<Summary, Eg2Error> {
        match self {
            Form::EgkEc(o) => run(group, out, manifest, o),
            Form::V21(o) => votum_eg2::v21::election::run(group, out, manifest, o),
        }
    }
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
