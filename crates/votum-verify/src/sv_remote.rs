//! A split-value record's heavy checks done elsewhere (a cluster, spec/98.3): the client walks the
//! record (the chain, the order, the sizes, both challenges, the tallies) and hands each opened
//! copy (V-SV-05, 06), each race's input halves (V-SV-09) and each checked copy (V-SV-07, 08, 10,
//! 11) to a worker as a job naming where its entries lie in the record. The worker reads them
//! there, checks each against the chain hash the client read, and runs this crate's own checks on
//! them. A job answers whether its checks found nothing, and how many objects each examined; the
//! client then reports exactly what the in-process walk would. Any other answer sends the client
//! back over the whole record in process, so a finding is always the in-process one.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::ops::ControlFlow;
use std::path::Path;

use serde::{Deserialize, Serialize};
use votum_splitvalue::challenge::sides;
use votum_splitvalue::params::{Params, Race};
use votum_splitvalue::sharing::Sharing;

use crate::checks::sv::{
    check_halves, check_inputs, check_opened, check_path, check_t, copy_votes, decode_t,
    undecodable, Checked, TValues,
};
use crate::checks::Check;
use crate::report::{Ledger, Status};

/// Heavy checks of a split-value record done elsewhere, all in flight at once. Any method
/// answering `ControlFlow::Break` stops the verification.
pub trait SvWorkers {
    /// The record's `parameters` payload and the record's path (which every worker must be able
    /// to read), once, before the first job.
    fn setup(&mut self, parameters: &[u8], record: &Path) -> ControlFlow<()>;
    /// Starts a job (an encoded [`Job`]) without waiting for it.
    fn submit(&mut self, job: &[u8]) -> ControlFlow<()>;
    /// The answers of every job submitted, in order: `Ok(answer)` as [`check_sv_task`] gives it,
    /// or `Err(reason)` when the job could not be run.
    fn collect(&mut self) -> ControlFlow<(), Vec<Result<Vec<u8>, String>>>;
}

/// The jobs run on this machine's threads (rayon), each as soon as it is submitted, while the
/// walk reads on: `votum verify` of a split-value record file uses every core this way. At most
/// as many jobs as threads are in flight, so memory stays a few jobs' worth (565 MB at 10^6
/// voters on two threads; twice as many in flight took 680 MB for the same time).
pub struct ThreadWorkers {
    parameters: std::sync::Arc<Vec<u8>>,
    record: std::sync::Arc<std::path::PathBuf>,
    pending: std::collections::VecDeque<std::sync::mpsc::Receiver<Result<Vec<u8>, String>>>,
    done: Vec<Result<Vec<u8>, String>>,
}

impl ThreadWorkers {
    pub fn new() -> Self {
        Self {
            parameters: Default::default(),
            record: Default::default(),
            pending: Default::default(),
            done: Vec::new(),
        }
    }

    /// Waits for the oldest job in flight.
    fn settle_one(&mut self) {
        let Some(rx) = self.pending.pop_front() else {
            return;
        };
        self.done.push(
            rx.recv()
                .unwrap_or_else(|_| Err("a job's thread stopped without an answer".into())),
        );
    }
}

impl Default for ThreadWorkers {
    fn default() -> Self {
        Self::new()
    }
}

impl SvWorkers for ThreadWorkers {
    fn setup(&mut self, parameters: &[u8], record: &Path) -> ControlFlow<()> {
        self.parameters = std::sync::Arc::new(parameters.to_vec());
        self.record = std::sync::Arc::new(record.to_path_buf());
        ControlFlow::Continue(())
    }

    fn submit(&mut self, job: &[u8]) -> ControlFlow<()> {
        while self.pending.len() >= rayon::current_num_threads().max(1) {
            self.settle_one();
        }
        let (tx, rx) = std::sync::mpsc::channel();
        let (parameters, record, job) =
            (self.parameters.clone(), self.record.clone(), job.to_vec());
        rayon::spawn(move || {
            let _ = tx.send(check_sv_task(&parameters, &record, &job));
        });
        self.pending.push_back(rx);
        ControlFlow::Continue(())
    }

    fn collect(&mut self) -> ControlFlow<(), Vec<Result<Vec<u8>, String>>> {
        while !self.pending.is_empty() {
            self.settle_one();
        }
        ControlFlow::Continue(std::mem::take(&mut self.done))
    }
}

/// Where one entry lies in the record, and the chain around it: the worker reads `len` bytes at
/// `at` and takes them only when they link `prev` to `hash` as entry `seq` named `kind`/`name`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Loc {
    pub at: u64,
    pub len: usize,
    pub seq: u64,
    pub kind: String,
    pub name: String,
    pub prev: [u8; 32],
    pub hash: [u8; 32],
}

/// One job.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "job", rename_all = "lowercase")]
pub(crate) enum Job {
    /// V-SV-05 for each row of an opened copy, then V-SV-06 for the copy.
    Opened {
        race: usize,
        copy: usize,
        n: usize,
        rows: Vec<Loc>,
        roots: Vec<[u8; 32]>,
    },
    /// V-SV-09 for each row of a race: the ballots' entries give the commitments.
    Inputs {
        race: usize,
        n: usize,
        h2: [u8; 32],
        ballots: Vec<Loc>,
        inputs: Vec<Loc>,
    },
    /// V-SV-07, 08, 10 and 11 for a checked copy.
    Checked {
        race: usize,
        copy: usize,
        n: usize,
        h2: [u8; 32],
        path: Loc,
        t: Vec<Loc>,
        inputs: Vec<Loc>,
        halves: Vec<Loc>,
        roots: Vec<[u8; 32]>,
    },
}

/// What a job found: `clean` when its checks found nothing (no finding, no warning), the objects
/// each check examined, and for an opened copy the digest of its sorted votes and their tally.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Answer {
    pub clean: bool,
    pub counts: Vec<(String, u64)>,
    pub votes: Option<[u8; 32]>,
    pub tally: Option<Vec<u8>>,
}

/// Reads one entry's payload where `loc` says and checks it against the chain.
fn read(file: &mut File, loc: &Loc) -> Result<Vec<u8>, String> {
    let mut b = vec![0u8; loc.len];
    file.seek(SeekFrom::Start(loc.at))
        .and_then(|_| file.read_exact(&mut b))
        .map_err(|e| format!("entry {} ({}): {e}", loc.seq, loc.name))?;
    let digest = votum_hash::board::payload_digest(&b);
    if votum_hash::board::link(&loc.prev, loc.seq, &loc.kind, &loc.name, &digest) != loc.hash {
        return Err(format!(
            "entry {} ({}) on this worker is not the entry the client read: the record differs",
            loc.seq, loc.name
        ));
    }
    Ok(b)
}

/// A job run on its own (the cluster's task): `parameters` is the record's `parameters` payload,
/// `record` its path here, `job` an encoded [`Job`]. Answers an encoded [`Answer`], or why the
/// job could not be run (an unreadable or different record, a malformed job).
pub fn check_sv_task(parameters: &[u8], record: &Path, job: &[u8]) -> Result<Vec<u8>, String> {
    let params = Params::decode(parameters).map_err(|e| e.to_string())?;
    let job: Job = serde_json::from_slice(job).map_err(|e| format!("a malformed job: {e}"))?;
    let file = File::open(record).map_err(|e| format!("the record {}: {e}", record.display()))?;
    let mut task = Task {
        sharing: params.grid.sharing(),
        params: &params,
        file,
        ledger: Ledger::new(&Check::SV),
    };
    let (votes_digest, tally) = match &job {
        Job::Opened {
            race,
            copy,
            n,
            rows,
            roots,
        } => task.opened((*race, *copy), *n, rows, roots)?,
        Job::Inputs {
            race,
            n,
            h2,
            ballots,
            inputs,
        } => {
            task.inputs(*race, *n, h2, ballots, inputs)?;
            (None, None)
        }
        Job::Checked {
            race,
            copy,
            n,
            h2,
            path,
            t,
            inputs,
            halves,
            roots,
        } => {
            task.checked((*race, *copy), *n, h2, path, (t, inputs, halves), roots)?;
            (None, None)
        }
    };
    let ledger = task.ledger;
    let report = ledger.finish(String::new(), "", 0);
    let clean = report.checks.iter().all(|c| {
        c.findings.is_empty()
            && c.warnings.is_empty()
            && c.more == 0
            && matches!(c.status, Status::Pass | Status::NotRun)
    });
    let counts = report
        .checks
        .iter()
        .filter(|c| c.checked > 0)
        .map(|c| (c.id.to_string(), c.checked))
        .collect();
    serde_json::to_vec(&Answer {
        clean,
        counts,
        votes: votes_digest,
        tally,
    })
    .map_err(|e| e.to_string())
}

/// An opened copy's answer: the digest of its sorted votes and their count, encoded (none when a
/// row does not regenerate its root).
type OpenedVotes = (Option<[u8; 32]>, Option<Vec<u8>>);

/// One job's checks, where the record lies: each calls the checks of `checks::sv` the walker calls.
struct Task<'p> {
    params: &'p Params,
    sharing: Sharing,
    file: File,
    ledger: Ledger,
}

fn race_of(params: &Params, ri: usize) -> Result<&Race, String> {
    params
        .races
        .get(ri)
        .ok_or_else(|| format!("race {ri} is not in the parameters"))
}

impl Task<'_> {
    /// An opened copy (V-SV-05, V-SV-06): the digest of its sorted votes and their count, when
    /// every row regenerates its root.
    fn opened(
        &mut self,
        (race, copy): (usize, usize),
        n: usize,
        locs: &[Loc],
        roots: &[[u8; 32]],
    ) -> Result<OpenedVotes, String> {
        let rows = self.params.grid.rows;
        let r = race_of(self.params, race)?;
        if locs.len() != rows || roots.len() != rows {
            return Err(format!("{} rows where the grid has {rows}", locs.len()));
        }
        let mut copy_rows = Vec::with_capacity(rows);
        for (i, (loc, root)) in locs.iter().zip(roots).enumerate() {
            let payload = read(&mut self.file, loc)?;
            copy_rows.push(check_opened(
                &mut self.ledger,
                &r.zm,
                &payload,
                &loc.name,
                race,
                copy,
                i,
                n,
                root,
            ));
        }
        let Some(copy_rows) = copy_rows.into_iter().collect::<Option<Vec<_>>>() else {
            return Ok((None, None));
        };
        let votes = copy_votes(
            &mut self.ledger,
            &r.zm,
            &self.sharing,
            &copy_rows,
            (race, copy),
            n,
        );
        let bytes: Vec<u8> = votes.iter().flat_map(|v| v.to_be_bytes()).collect();
        Ok((
            Some(votum_hash::board::payload_digest(&bytes)),
            Some(r.tally(votes.iter().copied()).encode()),
        ))
    }

    /// A race's input halves against the ballots' commitments (V-SV-09).
    fn inputs(
        &mut self,
        race: usize,
        n: usize,
        h2: &[u8; 32],
        ballots: &[Loc],
        inputs: &[Loc],
    ) -> Result<(), String> {
        let rows = self.params.grid.rows;
        let r = race_of(self.params, race)?;
        let races = self.params.races.len();
        let side = sides(h2, races, n).swap_remove(race);
        let per_ballot = races * rows * 2;
        let mut coms: Vec<[u8; 32]> = Vec::with_capacity(n * per_ballot);
        for loc in ballots {
            let payload = read(&mut self.file, loc)?;
            for c in payload.get(12..).unwrap_or_default().chunks_exact(32) {
                let mut h = [0u8; 32];
                h.copy_from_slice(c);
                coms.push(h);
            }
        }
        if coms.len() != n * per_ballot {
            return Err(format!(
                "{} commitments in the ballots' entries for {n} ballots",
                coms.len()
            ));
        }
        for (i, loc) in inputs.iter().enumerate() {
            let payload = read(&mut self.file, loc)?;
            check_inputs(
                &mut self.ledger,
                &r.zm,
                &payload,
                &loc.name,
                (race, i),
                n,
                (rows, races),
                &side,
                &coms,
            );
        }
        Ok(())
    }

    /// A checked copy: its path (V-SV-07), t-values (V-SV-08) and half openings (V-SV-10, 11).
    fn checked(
        &mut self,
        (race, copy): (usize, usize),
        n: usize,
        h2: &[u8; 32],
        path: &Loc,
        (t, inputs, halves): (&[Loc], &[Loc], &[Loc]),
        roots: &[[u8; 32]],
    ) -> Result<(), String> {
        let rows = self.params.grid.rows;
        let r = race_of(self.params, race)?;
        let races = self.params.races.len();
        if [t.len(), inputs.len(), halves.len(), roots.len()] != [rows; 4] {
            return Err(format!("a checked copy's job without {rows} rows of each"));
        }
        let side = sides(h2, races, n).swap_remove(race);
        let payload = read(&mut self.file, path)?;
        let path_values = check_path(&mut self.ledger, &payload, &path.name, n);
        let mut t_rows = Vec::with_capacity(rows);
        for loc in t {
            let payload = read(&mut self.file, loc)?;
            match decode_t(&r.zm, &payload, &loc.name, n) {
                Ok(v) => t_rows.push(Some(v)),
                Err(e) => {
                    undecodable(&mut self.ledger, Check::Sv08, &loc.name, e);
                    t_rows.push(None);
                }
            }
        }
        if t_rows.iter().all(Option::is_some) {
            let view: Vec<&[(u128, u128)]> = t_rows.iter().flatten().map(Vec::as_slice).collect();
            check_t(
                &mut self.ledger,
                &r.zm,
                &self.sharing,
                &view,
                (race, copy),
                n,
            );
        }
        // the input halves' values, laid out as the walk keeps them (per ballot, per row); their
        // commitments are the inputs job's to check
        let mut all = vec![0u128; n * rows];
        for (i, loc) in inputs.iter().enumerate() {
            let payload = read(&mut self.file, loc)?;
            let values = input_values(&r.zm, &payload, &loc.name, n)
                .map_err(|e| format!("the input halves do not decode: {e}"))?;
            for (p, v) in values.into_iter().enumerate() {
                all[p * rows + i] = v;
            }
        }
        let post = Checked {
            copy,
            path: path_values,
            t: t_rows
                .into_iter()
                .map(|v| v.map_or(TValues::Unreadable, TValues::Held))
                .collect(),
        };
        for (i, (loc, root)) in halves.iter().zip(roots).enumerate() {
            let payload = read(&mut self.file, loc)?;
            check_halves(
                &mut self.ledger,
                None,
                &r.zm,
                &payload,
                &loc.name,
                (race, copy, i),
                n,
                rows,
                &side,
                &post,
                Some(&all),
                root,
            );
        }
        Ok(())
    }
}

/// The input halves' values of one row, without their commitments (decoding only: checking them
/// is the inputs job's V-SV-09).
fn input_values(
    zm: &votum_splitvalue::field::Zm,
    payload: &[u8],
    name: &str,
    n: usize,
) -> Result<Vec<u128>, votum_splitvalue::SvError> {
    let mut r = votum_splitvalue::wire::Reader::new(payload, name);
    let values = (0..n)
        .map(|_| {
            let v = r.value(zm)?;
            r.key()?;
            Ok(v)
        })
        .collect::<Result<Vec<u128>, votum_splitvalue::SvError>>()?;
    r.end()?;
    Ok(values)
}

/// The check a report row id names, among a split-value record's.
pub(crate) fn sv_check(id: &str) -> Option<Check> {
    Check::SV.into_iter().find(|c| c.id() == id)
}
