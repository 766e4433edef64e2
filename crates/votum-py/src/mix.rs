//! Mixnet elections (spec/91) for `votum.mix` and `votum mix`.

use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use votum_group::{Group, GroupId, ModpGroup, Ristretto255};
use votum_mixnet::count::{count, Outcome, Rule, TieRule};
use votum_mixnet::election::run_with;
use votum_mixnet::params::Parameters;
use votum_mixnet::MixError;
use votum_verify::{verify_mix_record, Options, ShuffleWorkers};

use crate::convert::{release, rng_from};
use crate::errors::NativeError;
use crate::verify::PyWorkers;

pub(crate) fn parse_rule(
    rule: &str,
    seats: usize,
    k: Option<usize>,
    width: usize,
) -> PyResult<Rule> {
    Ok(match rule {
        "plurality" => Rule::Plurality,
        "k-of-n" => Rule::KOfN {
            k: k.unwrap_or(width),
            seats,
        },
        "approval" => Rule::Approval { seats },
        "irv" => Rule::InstantRunoff,
        "stv" => Rule::Stv { seats },
        _ => {
            return Err(
                NativeError::Value("rule must be plurality, k-of-n, approval, irv or stv").into(),
            )
        }
    })
}

pub(crate) fn parse_ties(ties: &str) -> PyResult<TieRule> {
    TieRule::from_name(ties)
        .ok_or_else(|| NativeError::Value("ties must be lower-number or unresolved").into())
}

pub(crate) fn outcome_dict<'py>(py: Python<'py>, o: &Outcome) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("rule", o.rule)?;
    d.set_item("candidates", o.candidates)?;
    d.set_item("valid", o.valid)?;
    d.set_item("invalid", o.invalid)?;
    d.set_item("tallies", o.tallies.clone())?;
    d.set_item("rounds", o.rounds.clone())?;
    d.set_item("winners", o.winners.clone())?;
    d.set_item("exhausted", o.exhausted.clone())?;
    d.set_item("quota", o.quota)?;
    let ties = PyList::empty(py);
    for t in &o.ties {
        let tie = PyDict::new(py);
        tie.set_item("round", t.round)?;
        tie.set_item("decision", t.decision.name())?;
        tie.set_item("among", t.among.clone())?;
        tie.set_item("chosen", t.chosen.clone())?;
        ties.append(tie)?;
    }
    d.set_item("ties", ties)?;
    Ok(d)
}

/// Counts plaintext rows under a rule (the same code a mixnet election's tally runs).
#[pyfunction]
#[pyo3(signature = (rule, candidates, rows, *, seats = 1, k = None, ties = "lower-number"))]
pub fn mix_count<'py>(
    py: Python<'py>,
    rule: &str,
    candidates: usize,
    rows: Vec<Vec<u64>>,
    seats: usize,
    k: Option<usize>,
    ties: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let width = rows.first().map_or(1, Vec::len);
    let rule = parse_rule(rule, seats, k, width)?;
    outcome_dict(py, &count(rule, parse_ties(ties)?, candidates, &rows))
}

/// One election to run, in whichever group its parameters name.
struct MixJob<'a> {
    params: Parameters,
    votes: Vec<Vec<u64>>,
    record: PathBuf,
    seed: Option<&'a [u8]>,
    progress: Option<Py<PyAny>>,
    workers: Option<PyObject>,
}

fn run_in<G: Group>(py: Python<'_>, group: G, job: MixJob<'_>) -> PyResult<Py<PyDict>> {
    let MixJob {
        params,
        votes,
        record,
        seed,
        progress,
        workers,
    } = job;
    let mut rng = rng_from(seed)?;
    // the trustees' checks, then the verifier's, on the cluster (two handles on one object)
    let mut checks = workers.as_ref().map(|w| PyWorkers::new(w.clone_ref(py)));
    let mut verifier = workers.map(PyWorkers::new);
    // Ctrl-C (a pending signal) or an exception from the callback stops the election at the next
    // step and is raised from here
    let raised: std::sync::Mutex<Option<PyErr>> = std::sync::Mutex::new(None);
    let tell = |step: &str| {
        let outcome = Python::with_gil(|py| {
            py.check_signals()?;
            if let Some(cb) = &progress {
                cb.call1(py, (step,))?;
            }
            Ok::<(), PyErr>(())
        });
        match outcome {
            Ok(()) => std::ops::ControlFlow::Continue(()),
            Err(e) => {
                if let Ok(mut slot) = raised.lock() {
                    *slot = Some(e);
                }
                std::ops::ControlFlow::Break(())
            }
        }
    };
    let result = release(py, || -> Result<_, NativeError> {
        let file = std::fs::File::create(&record)
            .map_err(|e| NativeError::Mix(MixError::Io(format!("{}: {e}", record.display()))))?;
        let out = std::io::BufWriter::with_capacity(1 << 20, file);
        let (report, out) = run_with(
            &group,
            &params,
            &votes,
            &mut rng,
            out,
            tell,
            checks.as_mut().map(|w| w as &mut dyn ShuffleWorkers),
        )
        .map_err(NativeError::Mix)?;
        out.into_inner()
            .map_err(|e| NativeError::Mix(MixError::Io(e.to_string())))?
            .sync_all()
            .map_err(|e| NativeError::Mix(MixError::Io(e.to_string())))?;
        if tell("verification").is_break() {
            return Err(NativeError::Mix(MixError::Stopped));
        }
        let t = std::time::Instant::now();
        let (check, _) = verify_mix_record(
            &record,
            Options {
                shuffle_workers: verifier.as_mut().map(|w| w as &mut dyn ShuffleWorkers),
                ..Options::default()
            },
        );
        Ok((report, check, t.elapsed().as_secs_f64()))
    });
    if let Some(e) = raised.lock().ok().and_then(|mut slot| slot.take()) {
        return Err(e);
    }
    for w in [checks, verifier].into_iter().flatten() {
        if let Some(e) = w.raised {
            return Err(e);
        }
    }
    let (report, check, verification) = result?;
    let d = PyDict::new(py);
    let mut steps: Vec<(&str, f64)> = report.steps.clone();
    steps.push(("verification", verification));
    d.set_item("steps", steps)?;
    d.set_item("shuffle_checks", report.shuffle_checks)?;
    d.set_item("multiset_ok", report.multiset_ok)?;
    d.set_item("board_head", PyBytes::new(py, &report.board_head))?;
    d.set_item("board_entries", report.board_entries)?;
    d.set_item("outcome", outcome_dict(py, &report.outcome)?)?;
    d.set_item("plaintexts", report.plaintexts.clone())?;
    d.set_item(
        "record_bytes",
        std::fs::metadata(&record).map(|m| m.len()).unwrap_or(0),
    )?;
    d.set_item("verified", check.passed())?;
    d.set_item("not_passed", check.not_passed())?;
    Ok(d.unbind())
}

/// Runs a whole mixnet election on `votes` (one row of candidate numbers per voter), writes its
/// record to `record` (spec/91.7) and checks it with the independent verifier; returns the timed
/// steps, the outcome, the decrypted rows and the verifier's verdict.
#[pyfunction]
#[pyo3(signature = (group, votes, *, candidates, width, rule, record, seats = 1, k = None,
    ties = "lower-number", mixers = 3, trustees = 3, quorum = 2, election_id = "mix-election", seed = None,
    progress = None, workers = None))]
#[allow(clippy::too_many_arguments)]
pub fn mix_election(
    py: Python<'_>,
    group: &str,
    votes: Vec<Vec<u64>>,
    candidates: usize,
    width: usize,
    rule: &str,
    record: PathBuf,
    seats: usize,
    k: Option<usize>,
    ties: &str,
    mixers: usize,
    trustees: usize,
    quorum: usize,
    election_id: &str,
    seed: Option<&[u8]>,
    progress: Option<Py<PyAny>>,
    workers: Option<PyObject>,
) -> PyResult<Py<PyDict>> {
    let params = Parameters {
        election_id: election_id.to_owned(),
        width,
        candidates,
        rule: parse_rule(rule, seats, k, width)?,
        ties: parse_ties(ties)?,
        mixers,
        trustees,
        quorum,
        signers: Vec::new(),
    };
    let id = GroupId::from_name(group).map_err(NativeError::Group)?;
    let job = MixJob {
        params,
        votes,
        record,
        seed,
        progress,
        workers,
    };
    match id {
        GroupId::Ristretto255 => run_in(py, Ristretto255, job),
        GroupId::Modp2048 => run_in(py, ModpGroup::rfc3526_2048(), job),
        GroupId::Modp3072 => run_in(py, ModpGroup::rfc3526_3072(), job),
        GroupId::Eg4096 => run_in(py, ModpGroup::eg_4096(), job),
        // CHVote's groups: not returned by `GroupId::from_name`
        _ => Err(NativeError::Group(votum_group::GroupError::UnknownGroup).into()),
    }
}
