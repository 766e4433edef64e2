//! Split-value elections (spec/97) for `votum.sv` and `votum sv`.

use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use votum_splitvalue::election::{encode_votes, random_values, run, RunOptions, Seeds};
use votum_splitvalue::params::{Choice, Params, RaceSpec};
use votum_splitvalue::wire::Tally;
use votum_splitvalue::SvError;
use votum_verify::{verify_sv_record, Options};

use crate::convert::release;
use crate::errors::NativeError;

/// A choice as Python gives it: 0 = blank, a candidate number from 1, or a write-in string.
#[derive(FromPyObject)]
pub enum PyChoice {
    Number(u32),
    WriteIn(String),
}

impl From<PyChoice> for Choice {
    fn from(c: PyChoice) -> Self {
        match c {
            PyChoice::Number(0) => Choice::Blank,
            PyChoice::Number(n) => Choice::Candidate(n),
            PyChoice::WriteIn(s) => Choice::WriteIn(s),
        }
    }
}

fn params_from(
    races: Vec<(String, Vec<String>, u8)>,
    n_fail: u8,
    n_leak: u8,
    copies: usize,
) -> Result<Params, NativeError> {
    let specs: Vec<RaceSpec> = races
        .into_iter()
        .map(|(id, candidates, write_in)| RaceSpec {
            id,
            candidates,
            write_in,
        })
        .collect();
    Params::new(n_fail, n_leak, copies, &specs).map_err(NativeError::Sv)
}

fn tally_dict<'py>(
    py: Python<'py>,
    race: &votum_splitvalue::params::Race,
    t: &Tally,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("race", &race.id)?;
    let counts = PyList::empty(py);
    for (name, c) in race.candidates.iter().zip(&t.counts) {
        counts.append((name, *c))?;
    }
    d.set_item("counts", counts)?;
    d.set_item("blank", t.blank)?;
    d.set_item("invalid", t.invalid)?;
    d.set_item(
        "write_ins",
        t.write_ins.clone().into_iter().collect::<Vec<_>>(),
    )?;
    Ok(d)
}

/// The grid and moduli parameters give (a check of the parameters without running anything).
#[pyfunction]
#[pyo3(signature = (races, *, n_fail = 0, n_leak = 2, copies = 24))]
pub fn sv_parameters<'py>(
    py: Python<'py>,
    races: Vec<(String, Vec<String>, u8)>,
    n_fail: u8,
    n_leak: u8,
    copies: usize,
) -> PyResult<Bound<'py, PyDict>> {
    let p = params_from(races, n_fail, n_leak, copies)?;
    let d = PyDict::new(py);
    d.set_item("rows", p.grid.rows)?;
    d.set_item("columns", p.grid.cols)?;
    d.set_item("threshold", p.grid.threshold)?;
    d.set_item("copies", p.copies)?;
    d.set_item(
        "moduli",
        p.races
            .iter()
            .map(|r| r.zm.modulus().to_string())
            .collect::<Vec<_>>(),
    )?;
    Ok(d)
}

/// Runs a whole split-value election in one process: `votes` (one list of choices per ballot,
/// one choice per race) or `voters` random ones from `seed`; writes the record (spec/97.8) to
/// `record`, checks it with the independent verifier, and returns the timed phases, the tallies
/// and the verdict. `seed` (32 bytes) makes every secret seed reproducible; without it they come
/// from the operating system.
#[pyfunction]
#[pyo3(signature = (races, *, record, votes = None, voters = 0, n_fail = 0, n_leak = 2, copies = 24,
    election_id = "sv-election", seed = None, progress = None))]
#[allow(clippy::too_many_arguments)]
pub fn sv_election(
    py: Python<'_>,
    races: Vec<(String, Vec<String>, u8)>,
    record: PathBuf,
    votes: Option<Vec<Vec<PyChoice>>>,
    voters: usize,
    n_fail: u8,
    n_leak: u8,
    copies: usize,
    election_id: &str,
    seed: Option<&[u8]>,
    progress: Option<Py<PyAny>>,
) -> PyResult<Py<PyDict>> {
    let params = params_from(races, n_fail, n_leak, copies)?;
    let seed: Option<[u8; 32]> = seed
        .map(|s| s.try_into().map_err(|_| NativeError::SeedLength(s.len())))
        .transpose()?;
    if votes.as_ref().map_or(voters, Vec::len) < 2 {
        return Err(NativeError::Sv(SvError::Vote("at least two ballots".into())).into());
    }
    let values = match votes {
        Some(v) => {
            let choices: Vec<Vec<Choice>> = v
                .into_iter()
                .map(|b| b.into_iter().map(Choice::from).collect())
                .collect();
            encode_votes(&params, &choices).map_err(NativeError::Sv)?
        }
        None => random_values(&params, voters, &seed.unwrap_or([0; 32])),
    };
    let tell = |phase: &str, done: u64, total: u64| {
        if let Some(cb) = &progress {
            Python::with_gil(|py| {
                // a progress callback's failure does not stop the election
                let _ = cb.call1(py, (phase, done, total));
            });
        }
    };
    let result = release(py, || -> Result<_, NativeError> {
        let file = std::fs::File::create(&record)
            .map_err(|e| NativeError::Sv(SvError::Record(format!("{}: {e}", record.display()))))?;
        let summary = run(
            &params,
            election_id,
            &values,
            RunOptions {
                seeds: seed.map_or_else(Seeds::os, Seeds::seeded),
                cheat: None,
                progress: Some(&tell),
            },
            file,
        )
        .map_err(|e| {
            // nothing half-written stays behind
            let _ = std::fs::remove_file(&record);
            NativeError::Sv(e)
        })?;
        tell("verifying", 0, 1);
        let t = std::time::Instant::now();
        let (check, _) = verify_sv_record(&record, Options::default());
        tell("verifying", 1, 1);
        Ok((summary, check, t.elapsed().as_secs_f64()))
    });
    let (summary, check, verifying) = result?;
    let d = PyDict::new(py);
    let mut phases: Vec<(&str, f64)> = summary
        .phases
        .iter()
        .map(|(p, t)| (*p, t.as_secs_f64()))
        .collect();
    phases.push(("verifying", verifying));
    d.set_item("phases", phases)?;
    d.set_item("ballots", summary.ballots)?;
    d.set_item("board_head", PyBytes::new(py, &summary.head))?;
    d.set_item("board_entries", summary.entries)?;
    d.set_item("record_bytes", summary.bytes)?;
    let tallies = PyList::empty(py);
    for (race, t) in params.races.iter().zip(&summary.tallies) {
        tallies.append(tally_dict(py, race, t)?)?;
    }
    d.set_item("tallies", tallies)?;
    d.set_item(
        "grid",
        (params.grid.rows, params.grid.cols, params.grid.threshold),
    )?;
    d.set_item("verified", check.passed())?;
    d.set_item("not_passed", check.not_passed())?;
    Ok(d.unbind())
}
