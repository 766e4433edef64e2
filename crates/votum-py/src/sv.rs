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

/// Every ballot's value race by race, from the choices Python gave (97.1); a choice a race cannot
/// hold is an `InvalidInput`.
fn values_of(p: &Params, votes: Vec<Vec<PyChoice>>) -> Result<Vec<Vec<u128>>, NativeError> {
    let choices: Vec<Vec<Choice>> = votes
        .into_iter()
        .map(|b| b.into_iter().map(Choice::from).collect())
        .collect();
    encode_votes(p, &choices).map_err(NativeError::Sv)
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
#[pyo3(signature = (races, *, n_fail = 0, n_leak = 2, copies = 132))]
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
#[pyo3(signature = (races, *, record, votes = None, voters = 0, n_fail = 0, n_leak = 2, copies = 132,
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
        Some(v) => values_of(&params, v)?,
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
    let spill_dir = match record.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
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
                // the last column's lists wait sealed beside the record (spec/97.13)
                spill: Some(spill_dir.clone()),
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

// -- the parties as separate processes (votum.parties.sv) --------------------------------------------------

fn sv_err(e: SvError) -> PyErr {
    NativeError::Sv(e).into()
}

fn race_of(p: &Params, race: usize) -> PyResult<&votum_splitvalue::params::Race> {
    p.races
        .get(race)
        .ok_or_else(|| sv_err(SvError::Params(format!("no race {race}"))))
}

fn seed32(b: &[u8], what: &str) -> PyResult<[u8; 32]> {
    b.try_into().map_err(|_| {
        sv_err(SvError::Params(format!(
            "{what}: 32 bytes, not {}",
            b.len()
        )))
    })
}

fn path_from(b: &[u8]) -> PyResult<Vec<u32>> {
    if !b.len().is_multiple_of(4) {
        return Err(sv_err(SvError::Decode("a path is a list of u32".into())));
    }
    Ok(b.chunks_exact(4)
        .map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

fn path_bytes(p: &[u32]) -> Vec<u8> {
    p.iter().flat_map(|x| x.to_be_bytes()).collect()
}

/// Election parameters (spec/97.1) as the processes pass them around: `encode()` is the
/// `parameters` entry.
#[pyclass(frozen, name = "SvParams", module = "votum._native")]
pub struct PySvParams {
    pub inner: Params,
}

#[pymethods]
impl PySvParams {
    #[new]
    #[pyo3(signature = (races, *, n_fail = 0, n_leak = 2, copies = 132))]
    fn new(
        races: Vec<(String, Vec<String>, u8)>,
        n_fail: u8,
        n_leak: u8,
        copies: usize,
    ) -> PyResult<Self> {
        Ok(Self {
            inner: params_from(races, n_fail, n_leak, copies)?,
        })
    }

    #[staticmethod]
    fn decode(payload: &[u8]) -> PyResult<Self> {
        Ok(Self {
            inner: Params::decode(payload).map_err(sv_err)?,
        })
    }

    fn encode<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.encode())
    }

    #[getter]
    fn rows(&self) -> usize {
        self.inner.grid.rows
    }
    #[getter]
    fn columns(&self) -> usize {
        self.inner.grid.cols
    }
    #[getter]
    fn threshold(&self) -> usize {
        self.inner.grid.threshold
    }
    #[getter]
    fn copies(&self) -> usize {
        self.inner.copies
    }
    #[getter]
    fn races(&self) -> usize {
        self.inner.races.len()
    }

    fn __repr__(&self) -> String {
        format!(
            "SvParams({}x{} grid, {} copies, {} races)",
            self.inner.grid.rows,
            self.inner.grid.cols,
            self.inner.copies,
            self.inner.races.len()
        )
    }
}

/// A voter device's chunk of ballots (spec/97.5): `votes` (one choice per race per ballot), or
/// `count` random ones from `seed` (benchmarks); numbered from `first`. Returns the `ballots` entry
/// and one packet per row (secret: each goes sealed to its first-column server).
#[pyfunction]
#[pyo3(signature = (params, first, *, votes = None, count = 0, seed = None))]
pub fn sv_cast<'py>(
    py: Python<'py>,
    params: &PySvParams,
    first: u64,
    votes: Option<Vec<Vec<PyChoice>>>,
    count: usize,
    seed: Option<&[u8]>,
) -> PyResult<(Bound<'py, PyBytes>, Vec<Bound<'py, PyBytes>>)> {
    let p = &params.inner;
    let values = match votes {
        Some(v) => values_of(p, v)?,
        None => {
            let s = seed
                .map(|s| seed32(s, "seed"))
                .transpose()?
                .unwrap_or([0; 32]);
            let mut rng =
                votum_splitvalue::stream::stream("bench-votes", &[&s, &first.to_be_bytes()]);
            let mut chunk_seed = [0u8; 32];
            rand_core::RngCore::fill_bytes(&mut rng, &mut chunk_seed);
            random_values(p, count, &chunk_seed)
        }
    };
    let n = values.first().map_or(0, Vec::len);
    if n == 0 || n > votum_splitvalue::wire::BALLOTS_PER_ENTRY {
        return Err(sv_err(SvError::Vote(format!(
            "{n} ballots in a chunk (1 … {})",
            votum_splitvalue::wire::BALLOTS_PER_ENTRY
        ))));
    }
    // the device's own randomness: shares, split values, keys
    let mut rng = crate::convert::rng_from(None)?;
    let (ballots, packets) = release(py, || {
        let slices: Vec<&[u128]> = values.iter().map(Vec::as_slice).collect();
        let chunk = votum_splitvalue::cast::cast_chunk(p, &slices, &mut rng);
        let mut w =
            votum_splitvalue::wire::Writer::with_capacity(12 + chunk.commitments.len() * 32);
        w.u64(first);
        w.u32(n as u32);
        for h in &chunk.commitments {
            w.bytes(h);
        }
        (
            w.into_inner(),
            votum_splitvalue::servers::encode_packets(p, &chunk),
        )
    });
    Ok((
        PyBytes::new(py, &ballots),
        packets.iter().map(|b| PyBytes::new(py, b)).collect(),
    ))
}

/// A first-column server's cast inputs for its row (spec/97.5): packets checked against the
/// posted ballots, kept here (zeroized when dropped), never handed to Python.
#[pyclass(name = "SvRowInputs", module = "votum._native")]
pub struct PySvRowInputs {
    params: Params,
    row: usize,
    rows: Vec<votum_splitvalue::cast::CastRow>,
}

#[pymethods]
impl PySvRowInputs {
    #[new]
    fn new(params: &PySvParams, row: usize) -> PyResult<Self> {
        let p = params.inner.clone();
        if row >= p.grid.rows {
            return Err(sv_err(SvError::Params(format!("no row {row}"))));
        }
        let rows = p.races.iter().map(|_| Default::default()).collect();
        Ok(Self {
            params: p,
            row,
            rows,
        })
    }

    /// Checks a chunk's packet against its ballots entry and keeps it; raises `InvalidInput`
    /// (nothing kept) when it does not open the commitments or is not the next chunk.
    fn add(&mut self, py: Python<'_>, ballots: &[u8], packet: &[u8]) -> PyResult<usize> {
        let first = ballots
            .get(..8)
            .map(|b| u64::from_be_bytes(b.try_into().unwrap_or([0; 8])))
            .unwrap_or(u64::MAX);
        if first != self.count() as u64 {
            return Err(sv_err(SvError::Vote(format!(
                "a chunk from ballot {first} where ballot {} is next",
                self.count()
            ))));
        }
        let (params, row) = (&self.params, self.row);
        let opened = release(py, || {
            votum_splitvalue::servers::open_packet(params, row, ballots, packet)
        })
        .map_err(sv_err)?;
        for (dst, src) in self.rows.iter_mut().zip(opened.iter()) {
            dst.u.extend_from_slice(&src.u);
            dst.v.extend_from_slice(&src.v);
            dst.r.extend_from_slice(&src.r);
            dst.s.extend_from_slice(&src.s);
        }
        Ok(self.count())
    }

    /// Ballots held.
    fn count(&self) -> usize {
        self.rows.first().map_or(0, |r| r.u.len())
    }

    /// The row's shares of `race` (u + v), the first column's input list.
    fn shares<'py>(&self, py: Python<'py>, race: usize) -> PyResult<Bound<'py, PyBytes>> {
        let zm = &race_of(&self.params, race)?.zm;
        Ok(PyBytes::new(
            py,
            &votum_splitvalue::servers::encode_list(zm, &self.rows[race].shares(zm)),
        ))
    }

    /// The split values (u list, v list) of `race`: what the row's last-column server needs for
    /// the t-values of checked copies (spec/97.7 step 4), sent sealed.
    fn splits<'py>(
        &self,
        py: Python<'py>,
        race: usize,
    ) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
        let zm = &race_of(&self.params, race)?.zm;
        let r = &self.rows[race];
        Ok((
            PyBytes::new(py, &votum_splitvalue::servers::encode_list(zm, &r.u)),
            PyBytes::new(py, &votum_splitvalue::servers::encode_list(zm, &r.v)),
        ))
    }

    /// The `inputs` entry of this row for `race`, on the sides the head `h2` gives.
    fn halves<'py>(
        &self,
        py: Python<'py>,
        race: usize,
        h2: &[u8],
    ) -> PyResult<Bound<'py, PyBytes>> {
        let zm = &race_of(&self.params, race)?.zm;
        let h2 = seed32(h2, "h2")?;
        let side =
            &votum_splitvalue::challenge::sides(&h2, self.params.races.len(), self.count())[race];
        Ok(PyBytes::new(
            py,
            &votum_splitvalue::servers::input_halves(zm, &self.rows[race], side),
        ))
    }
}

/// One server's pass over one copy (spec/97.6): its row's input list through its column.
#[pyfunction]
pub fn sv_mix<'py>(
    py: Python<'py>,
    params: &PySvParams,
    race: usize,
    row: usize,
    column_seed: &[u8],
    copy: usize,
    input: &[u8],
) -> PyResult<Bound<'py, PyBytes>> {
    let p = &params.inner;
    let r = race_of(p, race)?;
    let seed = seed32(column_seed, "column seed")?;
    if row >= p.grid.rows || copy >= p.copies {
        return Err(sv_err(SvError::Params(format!("row {row}, copy {copy}"))));
    }
    let out = release(py, || -> Result<Vec<u8>, SvError> {
        let x = votum_splitvalue::servers::decode_list(&r.zm, input, "input list")?;
        let sharing = p.grid.sharing();
        let (_, y) =
            votum_splitvalue::election::column_pass(r, race, &sharing, &seed, copy, &[row], &[&x]);
        Ok(votum_splitvalue::servers::encode_list(&r.zm, &y[0]))
    })
    .map_err(sv_err)?;
    Ok(PyBytes::new(py, &out))
}

/// A column's permutation of one copy (revealed for checked copies only, spec/97.7 step 4).
#[pyfunction]
pub fn sv_permutation<'py>(
    py: Python<'py>,
    race: usize,
    column_seed: &[u8],
    copy: usize,
    n: usize,
) -> PyResult<Bound<'py, PyBytes>> {
    let seed = seed32(column_seed, "column seed")?;
    let pi = votum_splitvalue::stream::permutation(
        &mut votum_splitvalue::election::column_stream(&seed, race, copy),
        n,
    );
    Ok(PyBytes::new(py, &path_bytes(&pi)))
}

/// The path π_1(π_2(… π_C(q))) from the columns' permutations in column order.
#[pyfunction]
pub fn sv_compose<'py>(py: Python<'py>, perms: Vec<Vec<u8>>) -> PyResult<Bound<'py, PyBytes>> {
    let perms: Vec<Vec<u32>> = perms
        .iter()
        .map(|b| path_from(b))
        .collect::<PyResult<_>>()?;
    let n = perms.first().map_or(0, Vec::len);
    if perms
        .iter()
        .any(|p| p.len() != n || p.iter().any(|&x| x as usize >= n))
    {
        return Err(sv_err(SvError::Decode(
            "permutations of different lengths or out of range".into(),
        )));
    }
    Ok(PyBytes::new(
        py,
        &path_bytes(&votum_splitvalue::election::compose(&perms)),
    ))
}

/// The checked copies the cut h₁ gives (spec/97.7 step 2).
#[pyfunction]
pub fn sv_cut(h1: &[u8], copies: usize) -> PyResult<Vec<usize>> {
    Ok(votum_splitvalue::challenge::cut(&seed32(h1, "h1")?, copies))
}

/// The `tally` entry of `race` from one opened copy's `opened` entries (one per row, in order).
#[pyfunction]
pub fn sv_tally<'py>(
    py: Python<'py>,
    params: &PySvParams,
    race: usize,
    opened: Vec<Vec<u8>>,
) -> PyResult<(Bound<'py, PyBytes>, Py<PyDict>)> {
    let p = &params.inner;
    let r = race_of(p, race)?;
    if opened.len() != p.grid.rows {
        return Err(sv_err(SvError::Decode(format!(
            "{} rows for a grid of {}",
            opened.len(),
            p.grid.rows
        ))));
    }
    let lists: Vec<Vec<u128>> = opened
        .iter()
        .map(|b| {
            votum_splitvalue::servers::decode_list(&r.zm, b.get(32..).unwrap_or(&[]), "opened")
        })
        .collect::<Result<_, _>>()
        .map_err(sv_err)?;
    let refs: Vec<&[u128]> = lists.iter().map(Vec::as_slice).collect();
    let t = votum_splitvalue::servers::tally_of(r, &p.grid.sharing(), &refs);
    Ok((
        PyBytes::new(py, &t.encode()),
        tally_dict(py, r, &t)?.unbind(),
    ))
}

/// A last-column server's outputs for one race (spec/97.6–97.7): its lists, the seeds τ (from the
/// OS, or from `seed` in reproducible runs), kept here and zeroized when dropped. With `spill` (a
/// directory) the lists wait in an unlinked file there, sealed with a key only this object holds,
/// so memory holds one list at a time (spec/97.13).
#[pyclass(name = "SvLastColumn", module = "votum._native")]
pub struct PySvLastColumn {
    params: Params,
    inner: votum_splitvalue::servers::LastColumn,
}

#[pymethods]
impl PySvLastColumn {
    #[new]
    #[pyo3(signature = (params, race, row, seed = None, spill = None))]
    fn new(
        params: &PySvParams,
        race: usize,
        row: usize,
        seed: Option<&[u8]>,
        spill: Option<PathBuf>,
    ) -> PyResult<Self> {
        let p = params.inner.clone();
        race_of(&p, race)?;
        if row >= p.grid.rows {
            return Err(sv_err(SvError::Params(format!("no row {row}"))));
        }
        let seeds = match seed {
            Some(s) => Seeds::seeded(seed32(s, "seed")?),
            None => Seeds::os(),
        };
        let taus = (0..p.copies)
            .map(|k| {
                seeds.seed(&[b"output".as_slice(), &[row as u8, k as u8, race as u8]].concat())
            })
            .collect();
        let zm = p.races[race].zm;
        let lists = match spill {
            Some(dir) => votum_splitvalue::servers::ListStore::spilling(zm, p.copies, &dir)
                .map_err(sv_err)?,
            None => votum_splitvalue::servers::ListStore::in_memory(zm, p.copies),
        };
        Ok(Self {
            params: p,
            inner: votum_splitvalue::servers::LastColumn::new(race, row, taus, lists),
        })
    }

    /// Keeps one copy's output list.
    fn store(&mut self, py: Python<'_>, copy: usize, list: &[u8]) -> PyResult<()> {
        let zm = self.zm();
        if copy >= self.params.copies {
            return Err(sv_err(SvError::Params(format!("no copy {copy}"))));
        }
        let inner = &mut self.inner;
        release(py, || {
            let v = votum_splitvalue::servers::decode_list(&zm, list, "output list")?;
            inner.store(&zm, copy, v)
        })
        .map_err(sv_err)
    }

    /// The `outputs` entry: one root per copy.
    fn roots<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let r = self.inner.roots().ok_or_else(|| {
            sv_err(SvError::Params(
                "not every copy's output list is here".into(),
            ))
        })?;
        Ok(PyBytes::new(py, &r))
    }

    /// The `opened` entry of copy `copy` (an opened copy).
    fn opened<'py>(&self, py: Python<'py>, copy: usize) -> PyResult<Bound<'py, PyBytes>> {
        let zm = self.zm();
        let (tau, y) = self.copy(py, copy)?;
        Ok(PyBytes::new(
            py,
            &votum_splitvalue::servers::opened_payload(&zm, &tau, &y),
        ))
    }

    /// The `tvalues` entry of checked copy `copy` along `path`, from the row's input splits.
    fn tvalues<'py>(
        &self,
        py: Python<'py>,
        copy: usize,
        path: &[u8],
        u_in: &[u8],
        v_in: &[u8],
    ) -> PyResult<Bound<'py, PyBytes>> {
        let zm = self.zm();
        let (tau, y) = self.copy(py, copy)?;
        let (tau, y) = (&*tau, y.as_slice());
        let path = path_from(path)?;
        let race = self.inner.race;
        let out = release(py, || -> Result<Vec<u8>, SvError> {
            let u = votum_splitvalue::servers::decode_list(&zm, u_in, "u_in")?;
            let v = votum_splitvalue::servers::decode_list(&zm, v_in, "v_in")?;
            if path.len() != y.len()
                || u.len() != y.len()
                || v.len() != y.len()
                || path.iter().any(|&p| p as usize >= y.len())
            {
                return Err(SvError::Decode("path or inputs of another length".into()));
            }
            let t = votum_splitvalue::servers::t_values(&zm, tau, race, y, &path, &u, &v);
            Ok(votum_splitvalue::servers::encode_t_values(&zm, &t))
        })
        .map_err(sv_err)?;
        Ok(PyBytes::new(py, &out))
    }

    /// The `halves` entry of checked copy `copy` along `path`, on the sides the head `h2` gives.
    fn halves<'py>(
        &self,
        py: Python<'py>,
        copy: usize,
        path: &[u8],
        h2: &[u8],
    ) -> PyResult<Bound<'py, PyBytes>> {
        let zm = self.zm();
        let (tau, y) = self.copy(py, copy)?;
        let (tau, y) = (&*tau, y.as_slice());
        let path = path_from(path)?;
        let h2 = seed32(h2, "h2")?;
        if path.len() != y.len() || path.iter().any(|&p| p as usize >= y.len()) {
            return Err(sv_err(SvError::Decode("a path of another length".into())));
        }
        let race = self.inner.race;
        let out = release(py, || {
            let side =
                &votum_splitvalue::challenge::sides(&h2, self.params.races.len(), y.len())[race];
            votum_splitvalue::servers::output_halves(&zm, tau, race, y, &path, side)
        });
        Ok(PyBytes::new(py, &out))
    }
}

impl PySvLastColumn {
    fn zm(&self) -> votum_splitvalue::field::Zm {
        self.params.races[self.inner.race].zm
    }

    /// Copy `copy`'s seed and list (read back from the spill file when spilled).
    fn copy(&self, py: Python<'_>, copy: usize) -> PyResult<SecretCopy> {
        let tau =
            zeroize::Zeroizing::new(*self.inner.taus.get(copy).ok_or_else(|| {
                sv_err(SvError::Params(format!("no output list of copy {copy}")))
            })?);
        let y = release(py, || self.inner.lists.get(copy)).map_err(sv_err)?;
        Ok((tau, y))
    }
}

/// A copy's seed τ and output list, held while they are used and wiped when dropped.
type SecretCopy = (zeroize::Zeroizing<[u8; 32]>, zeroize::Zeroizing<Vec<u128>>);

/// The board's record file (spec/97.8): appends entries, keeps the running head.
#[pyclass(name = "SvBoardFile", module = "votum._native")]
pub struct PySvBoardFile {
    writer: Option<votum_splitvalue::record::BoardWriter<std::io::BufWriter<std::fs::File>>>,
}

#[pymethods]
impl PySvBoardFile {
    #[new]
    fn new(path: PathBuf, election_id: &str) -> PyResult<Self> {
        let file = std::fs::File::create(&path)
            .map_err(|e| sv_err(SvError::Record(format!("{}: {e}", path.display()))))?;
        let w = votum_splitvalue::record::BoardWriter::new(
            std::io::BufWriter::with_capacity(1 << 20, file),
            votum_splitvalue::record::MAGIC,
            election_id,
        )
        .map_err(|e| sv_err(e.into()))?;
        Ok(Self { writer: Some(w) })
    }

    /// Appends one entry (flushed) and returns the new head.
    fn append<'py>(
        &mut self,
        py: Python<'py>,
        kind: &str,
        name: &str,
        payload: &[u8],
    ) -> PyResult<Bound<'py, PyBytes>> {
        let w = self
            .writer
            .as_mut()
            .ok_or_else(|| sv_err(SvError::Record("the board file is closed".into())))?;
        let head = release(py, || w.append(kind, name, payload)).map_err(|e| sv_err(e.into()))?;
        Ok(PyBytes::new(py, &head))
    }

    fn head<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let w = self
            .writer
            .as_ref()
            .ok_or_else(|| sv_err(SvError::Record("the board file is closed".into())))?;
        Ok(PyBytes::new(py, &w.head()))
    }

    /// Entries appended.
    fn entries(&self) -> u64 {
        self.writer.as_ref().map_or(0, |w| w.len())
    }

    fn close(&mut self) -> PyResult<()> {
        if let Some(w) = self.writer.take() {
            let out = w.into_inner().map_err(|e| sv_err(e.into()))?;
            out.into_inner()
                .map_err(|e| sv_err(SvError::Record(e.to_string())))?
                .sync_all()
                .map_err(|e| sv_err(SvError::Record(e.to_string())))?;
        }
        Ok(())
    }
}

/// A record's election id, parameters entry and ballot entries (name, payload).
type RecordBallots<'py> = (
    String,
    Bound<'py, PyBytes>,
    Vec<(String, Bound<'py, PyBytes>)>,
);

/// What a rerun takes from a failed election's record (spec/97.12): its election id, parameters entry
/// and ballot entries up to the seal. Refused when the chain does not read, when there is no seal, or when
/// the record reached the sides challenge (input halves may be posted: a rerun would open the other halves).
#[pyfunction]
pub fn sv_record_ballots<'py>(py: Python<'py>, path: PathBuf) -> PyResult<RecordBallots<'py>> {
    let read = release(py, || -> Result<_, SvError> {
        let file = std::fs::File::open(&path).map_err(|e| SvError::Record(format!("{}: {e}", path.display())))?;
        let mut r = votum_splitvalue::record::BoardReader::new(
            std::io::BufReader::with_capacity(1 << 20, file),
            votum_splitvalue::record::MAGIC,
            votum_splitvalue::record::WHAT,
        )?;
        let mut params = None;
        let mut ballots = Vec::new();
        let mut sealed = false;
        while let Some(e) = r.next_entry()? {
            match (e.kind.as_str(), sealed) {
                ("parameters", false) if params.is_none() => params = Some(e.payload),
                ("ballots", false) => ballots.push((e.name, e.payload)),
                ("seal", false) => sealed = true,
                ("challenge", true) if e.name == "sides" => {
                    return Err(SvError::Phase(
                        "the record reached the sides challenge: input halves may be posted, so the election \
                         cannot be rerun from its ballots (a rerun would open their other halves)"
                            .into(),
                    ))
                }
                (_, true) => {}
                (k, _) => return Err(SvError::Record(format!("entry {} ({k} {}) before the seal", e.seq, e.name))),
            }
        }
        let params = params.ok_or_else(|| SvError::Record("no parameters".into()))?;
        if !sealed {
            return Err(SvError::Phase("the ballots were never sealed: cast again".into()));
        }
        Ok((r.election_id().to_owned(), params, ballots))
    })
    .map_err(sv_err)?;
    let (id, params, ballots) = read;
    Ok((
        id,
        PyBytes::new(py, &params),
        ballots
            .into_iter()
            .map(|(n, p)| (n, PyBytes::new(py, &p)))
            .collect(),
    ))
}
