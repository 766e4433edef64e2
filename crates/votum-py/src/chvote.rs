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
            .map(|path| votum_verify::verify_record(path, votum_verify::Options::default()));
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
    if let Some((check, values)) = check {
        d.set_item("verified", check.passed())?;
        d.set_item("not_passed", check.not_passed())?;
        if let Some(head) = values.values.get("head").and_then(|v| v.as_str()) {
            d.set_item("head", head)?;
        }
    }
    Ok(d.unbind())
}

// --- the parties as separate processes (spec/92.12) ---------------------------------------------

use pyo3::types::PyBytes;
use votum_chvote::parties;
use votum_chvote::ChvoteError;

fn chv(e: ChvoteError) -> PyErr {
    NativeError::Chvote(e).into()
}

fn views(items: &[Vec<u8>]) -> Vec<&[u8]> {
    items.iter().map(Vec::as_slice).collect()
}

/// The `parameters` payload of a new CHVote election (level 1 or 2, shape `single` or
/// `simple-sample`, `authorities` authorities, `election_id` the record's id, `signers` each
/// authority's node signing key (32 bytes, in authority order); the id and the keys are bound
/// into the election digest): every party reads the election from it.
#[pyfunction]
#[pyo3(signature = (level, shape, voters, authorities = 4, *, election_id, signers))]
pub fn chvote_parameters<'py>(
    py: Python<'py>,
    level: u8,
    shape: &str,
    voters: usize,
    authorities: usize,
    election_id: &str,
    signers: Vec<Vec<u8>>,
) -> PyResult<Bound<'py, PyBytes>> {
    let signers = signers
        .iter()
        .map(|k| <[u8; 32]>::try_from(k.as_slice()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| PyErr::from(NativeError::Value("a signing key is 32 bytes")))?;
    let p = release(py, || {
        parties::parameters(level, shape, voters, authorities, election_id, &signers)
    })
    .map_err(chv)?;
    Ok(PyBytes::new(py, &p))
}

/// 7.13 GetVotingCards by the printing authority: one card per voter (bytes for its voter only)
/// from every authority's secret voter data, in authority order; with `sheets`, one printable
/// page per voter in that directory (mode 0600).
#[pyfunction]
#[pyo3(signature = (parameters, secret_data, sheets = None))]
pub fn chvote_print_cards<'py>(
    py: Python<'py>,
    parameters: Vec<u8>,
    secret_data: Vec<Vec<u8>>,
    sheets: Option<std::path::PathBuf>,
) -> PyResult<Vec<Bound<'py, PyBytes>>> {
    let mut secret_data = secret_data;
    let cards = release(py, || {
        parties::print_cards(&parameters, &views(&secret_data), sheets.as_deref())
    });
    secret_data.iter_mut().for_each(zeroize::Zeroize::zeroize);
    Ok(cards
        .map_err(chv)?
        .iter()
        .map(|c| PyBytes::new(py, c))
        .collect())
}

/// The board's last step: every decryption share checked, the last list decrypted and counted.
/// Returns the `result` payload, the counts per candidate and the invalid count.
#[pyfunction]
pub fn chvote_tally<'py>(
    py: Python<'py>,
    parameters: Vec<u8>,
    key_shares: Vec<Vec<u8>>,
    voter_data: Vec<Vec<u8>>,
    input: Vec<u8>,
    shuffles: Vec<Vec<u8>>,
    shares: Vec<Vec<u8>>,
) -> PyResult<(Bound<'py, PyBytes>, Vec<u64>, u64)> {
    let (result, counts, invalid) = release(py, || {
        let board = parties::public_board(&parameters, &views(&key_shares), &views(&voter_data))?;
        parties::tally_result(&board, &input, &views(&shuffles), &views(&shares))
    })
    .map_err(chv)?;
    Ok((PyBytes::new(py, &result), counts, invalid))
}

/// One election authority (spec/92.12): its key share, its voters' points and the ballots it
/// accepted stay in this object; every method answers with a payload of spec/92.10.
#[pyclass(name = "ChvoteAuthority", module = "votum._native")]
pub struct PyChvoteAuthority {
    inner: parties::AuthorityParty,
}

#[pymethods]
impl PyChvoteAuthority {
    /// Authority `index` of the election `parameters` describes, whose node signing key is
    /// `signer` (the parameters must name it in that slot).
    #[new]
    fn new(py: Python<'_>, parameters: Vec<u8>, index: usize, signer: Vec<u8>) -> PyResult<Self> {
        let signer = <[u8; 32]>::try_from(signer.as_slice())
            .map_err(|_| PyErr::from(NativeError::Value("a signing key is 32 bytes")))?;
        let inner = release(py, || {
            parties::AuthorityParty::new(&parameters, index, &signer)
        })
        .map_err(chv)?;
        Ok(Self { inner })
    }

    /// What this authority's node signs for its entry of `kind` with `payload` (spec/92.10).
    fn statement<'py>(
        &self,
        py: Python<'py>,
        kind: &str,
        payload: Vec<u8>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let r = self.inner.statement(kind, &payload).map_err(chv)?;
        Ok(PyBytes::new(py, &r))
    }

    #[getter]
    fn index(&self) -> usize {
        self.inner.index()
    }

    fn key_share<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.key_share())
    }

    /// (secret voter data for the printing authority, `voter-data` payload for the board).
    fn electoral_data<'py>(
        &mut self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
        let inner = &mut self.inner;
        let (secret, public) = release(py, || inner.electoral_data()).map_err(chv)?;
        Ok((PyBytes::new(py, &secret), PyBytes::new(py, &public)))
    }

    fn attach(
        &mut self,
        py: Python<'_>,
        parameters: Vec<u8>,
        key_shares: Vec<Vec<u8>>,
        voter_data: Vec<Vec<u8>>,
    ) -> PyResult<()> {
        let inner = &mut self.inner;
        release(py, || {
            inner.attach(&parameters, &views(&key_shares), &views(&voter_data))
        })
        .map_err(chv)
    }

    /// 7.22 CheckBallot and 7.25 GenResponse (a refused ballot changes nothing).
    fn ballot<'py>(
        &self,
        py: Python<'py>,
        voter: usize,
        ballot: Vec<u8>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let inner = &self.inner;
        let r = release(py, || inner.ballot(voter, &ballot)).map_err(chv)?;
        Ok(PyBytes::new(py, &r))
    }

    /// 7.34 CheckConfirmation and 7.37 GetFinalization (a refused confirmation changes nothing).
    fn confirmation<'py>(
        &self,
        py: Python<'py>,
        voter: usize,
        confirmation: Vec<u8>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let inner = &self.inner;
        let r = release(py, || inner.confirmation(voter, &confirmation)).map_err(chv)?;
        Ok(PyBytes::new(py, &r))
    }

    fn input<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let inner = &self.inner;
        let r = release(py, || inner.input()).map_err(chv)?;
        Ok(PyBytes::new(py, &r))
    }

    /// Shuffles the last list (checks come at decryption): this authority's `shuffle`.
    fn shuffle<'py>(
        &self,
        py: Python<'py>,
        input: Vec<u8>,
        shuffles: Vec<Vec<u8>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let inner = &self.inner;
        let r = release(py, || inner.shuffle(&input, &views(&shuffles))).map_err(chv)?;
        Ok(PyBytes::new(py, &r))
    }

    /// Checks every shuffle but its own, then its `decryption` share of the last list.
    fn decrypt<'py>(
        &self,
        py: Python<'py>,
        input: Vec<u8>,
        shuffles: Vec<Vec<u8>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let inner = &self.inner;
        let r = release(py, || inner.decrypt(&input, &views(&shuffles))).map_err(chv)?;
        Ok(PyBytes::new(py, &r))
    }

    /// Opens the rows of its shuffle that invalid votes lead back to (spec/92.8), which it
    /// derives itself from the chain, the shares and the later authorities' traces (last
    /// first): this authority's `trace`. Once per election.
    fn trace<'py>(
        &self,
        py: Python<'py>,
        input: Vec<u8>,
        shuffles: Vec<Vec<u8>>,
        shares: Vec<Vec<u8>>,
        later: Vec<Vec<u8>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let inner = &self.inner;
        let r = release(py, || {
            inner.trace(&input, &views(&shuffles), &views(&shares), &views(&later))
        })
        .map_err(chv)?;
        Ok(PyBytes::new(py, &r))
    }

    fn __repr__(&self) -> String {
        format!("ChvoteAuthority({}, <redacted>)", self.inner.index())
    }
}

/// The voters' client (spec/92.12): every voter's card, ballot, confirmation and the checks of
/// return and finalization codes. Voters are independent: several may vote at once.
#[pyclass(name = "ChvoteVoters", module = "votum._native")]
pub struct PyChvoteVoters {
    inner: parties::VotersClient,
}

#[pymethods]
impl PyChvoteVoters {
    #[new]
    fn new(
        py: Python<'_>,
        parameters: Vec<u8>,
        key_shares: Vec<Vec<u8>>,
        voter_data: Vec<Vec<u8>>,
    ) -> PyResult<Self> {
        let inner = release(py, || {
            parties::VotersClient::new(&parameters, &views(&key_shares), &views(&voter_data))
        })
        .map_err(chv)?;
        Ok(Self { inner })
    }

    /// Takes one voter's card; returns the voter's index.
    fn add_card(&mut self, card: Vec<u8>) -> PyResult<usize> {
        let mut card = card;
        let r = self.inner.add_card(&card);
        zeroize::Zeroize::zeroize(&mut card);
        r.map_err(chv)
    }

    /// A cheating client's ballot (issue 45, finding 7; attack tests only): the query for
    /// selection `squared` encodes Γ(c)², so the codes match and the vote counts invalid.
    fn cheating_ballot<'py>(
        &self,
        py: Python<'py>,
        voter: usize,
        selections: Vec<usize>,
        squared: usize,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let inner = &self.inner;
        let r = release(py, || inner.cheating_ballot(voter, selections, squared)).map_err(chv)?;
        Ok(PyBytes::new(py, &r))
    }

    /// 7.18 GenBallot for `selections` (1-based), or a random allowed choice.
    #[pyo3(signature = (voter, selections = None))]
    fn ballot<'py>(
        &self,
        py: Python<'py>,
        voter: usize,
        selections: Option<Vec<usize>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let inner = &self.inner;
        let r = release(py, || inner.ballot(voter, selections)).map_err(chv)?;
        Ok(PyBytes::new(py, &r))
    }

    /// The return codes checked against the card from every authority's response, then the
    /// confirmation.
    fn confirm<'py>(
        &self,
        py: Python<'py>,
        voter: usize,
        responses: Vec<Vec<u8>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let inner = &self.inner;
        let r = release(py, || inner.confirm(voter, &views(&responses))).map_err(chv)?;
        Ok(PyBytes::new(py, &r))
    }

    /// The finalization code checked against the card; returns the voter's selections.
    fn finalize(
        &self,
        py: Python<'_>,
        voter: usize,
        finalizations: Vec<Vec<u8>>,
    ) -> PyResult<Vec<usize>> {
        let inner = &self.inner;
        release(py, || inner.finalize(voter, &views(&finalizations))).map_err(chv)
    }

    fn __repr__(&self) -> String {
        format!("{:?}", self.inner)
    }
}

type ChvFile = votum_chvote::record::RecordWriter<std::io::BufWriter<std::fs::File>>;

/// The record of a CHVote election written by its board (spec/92.10), entry by entry, into a
/// sibling file renamed over `path` by `finish`; `abort` (or a run that never finishes) leaves
/// no record.
#[pyclass(name = "ChvoteRecordFile", module = "votum._native")]
pub struct PyChvoteRecordFile {
    path: std::path::PathBuf,
    partial: std::path::PathBuf,
    writer: Option<ChvFile>,
}

fn io_err(path: &std::path::Path, e: std::io::Error) -> PyErr {
    chv(ChvoteError::Parameters(format!("{}: {e}", path.display())))
}

#[pymethods]
impl PyChvoteRecordFile {
    #[new]
    fn new(path: std::path::PathBuf, election_id: &str) -> PyResult<Self> {
        let partial = path.with_extension("partial");
        let file = std::fs::File::create(&partial).map_err(|e| io_err(&partial, e))?;
        let writer = votum_chvote::record::RecordWriter::new(
            std::io::BufWriter::with_capacity(1 << 20, file),
            election_id,
        )
        .map_err(chv)?;
        Ok(Self {
            path,
            partial,
            writer: Some(writer),
        })
    }

    /// Appends one entry; returns the new head of the chain.
    fn append<'py>(
        &mut self,
        py: Python<'py>,
        kind: &str,
        name: &str,
        payload: Vec<u8>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let w = self
            .writer
            .as_mut()
            .ok_or_else(|| chv(ChvoteError::Parameters("the record is closed".into())))?;
        release(py, || w.append(kind, name, &payload)).map_err(chv)?;
        Ok(PyBytes::new(py, &w.head()))
    }

    /// Flushes the record and puts it in place.
    fn finish(&mut self) -> PyResult<()> {
        let w = self
            .writer
            .take()
            .ok_or_else(|| chv(ChvoteError::Parameters("the record is closed".into())))?;
        let mut out = w.into_inner().map_err(chv)?;
        std::io::Write::flush(&mut out).map_err(|e| io_err(&self.partial, e))?;
        drop(out);
        std::fs::rename(&self.partial, &self.path).map_err(|e| io_err(&self.path, e))
    }

    /// Drops what was written: no record is left.
    fn abort(&mut self) {
        if self.writer.take().is_some() {
            let _ = std::fs::remove_file(&self.partial);
        }
    }
}
