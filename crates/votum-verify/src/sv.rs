//! Verifying a split-value election's record (spec/97.9, checks V-SV-01..12 of spec/50.6), one
//! board entry at a time, recomputing the chain. Memory holds the ballots' commitments, one opened
//! copy's rows at a time, and the checked copies' paths and t-values until the half openings
//! after the second challenge are compared with them.

// The grid's data is indexed [race][row][copy][position]; index loops say which is which.
#![allow(clippy::needless_range_loop)]

use std::fs::File;
use std::io::{BufReader, Read};
use std::ops::ControlFlow;
use std::path::Path;

use serde_json::json;
use votum_hash::board_file::Bound;
use votum_splitvalue::challenge::sides;
use votum_splitvalue::field::Zm;
use votum_splitvalue::params::{Params, Race};
use votum_splitvalue::record::{BoardReader, Entry, MAGIC, WHAT};
use votum_splitvalue::sharing::Sharing;
use votum_splitvalue::wire::{names, Tally, BALLOTS_PER_ENTRY};
use votum_splitvalue::SvError;

use crate::checks::sv::{
    check_ballots_entry, check_cut, check_enough_ballots, check_halves, check_inputs, check_opened,
    check_parameters, check_path, check_same_votes, check_seal, check_sides, check_t, check_tally,
    copy_votes, decode_t, undecodable, Checked, TValues,
};
use crate::checks::Check;
use crate::options::{Intermediates, Options, Progress};
use crate::report::{hex, Ledger, Report};
use crate::sv_remote::{sv_check, Answer, Job, Loc, SvWorkers};

/// The form name reports give a split-value record.
pub const FORM: &str = WHAT;

/// Verifies the split-value record at `path`, every V-SV check. The heavy checks run as jobs
/// (spec/98.3) on this machine's threads, or on `options.sv_workers` when given, and the report is
/// the one-walk report; when a job's answer is anything but a clean pass, the record is walked
/// again with every check in line, and that report is returned.
pub fn verify_sv_record(path: &Path, options: Options<'_>) -> (Report, Intermediates) {
    let name = path.display().to_string();
    let Options {
        progress,
        sv_workers,
        ..
    } = options;
    let open = || match File::open(path) {
        Ok(f) => Ok(BufReader::with_capacity(1 << 20, f)),
        Err(e) => {
            let mut ledger = Ledger::new(&Check::SV);
            ledger.error(Check::Sv01, &name, e.to_string());
            Err(Box::new((
                ledger.finish(name.clone(), "unreadable", 0),
                Intermediates::default(),
            )))
        }
    };
    // a file's heavy checks run on this machine's threads unless workers elsewhere are given
    let mut threads = crate::sv_remote::ThreadWorkers::new();
    let workers: &mut dyn SvWorkers = match sv_workers {
        Some(w) => w,
        None => &mut threads,
    };
    let file = Some(path.to_path_buf());
    let input = match open() {
        Ok(f) => f,
        Err(unreadable) => return *unreadable,
    };
    let (report, out, again, progress) =
        verify_sv_walk(input, &name, progress, file.clone(), Some(workers));
    if !again {
        return (report, out);
    }
    // a job's answer was not a clean pass: the findings are the in-line walk's
    let input = match open() {
        Ok(f) => f,
        Err(unreadable) => return *unreadable,
    };
    let (report, out, _, _) = verify_sv_walk(input, &name, progress, file, None);
    (report, out)
}

/// One row's t-values as read: decoded (or not), the payload's offset, length and digest.
type ReadT = (Option<Vec<(u128, u128)>>, u64, usize, [u8; 32]);

struct Walk<'o, 'v, R: Read> {
    ledger: Ledger,
    out: Intermediates,
    reader: BoardReader<R>,
    progress: Option<&'o mut dyn FnMut(Progress) -> ControlFlow<()>>,
    /// Set when the walk cannot go on (the record is unreadable, out of order or stopped).
    stopped: bool,
    /// The record's file, when it is one: t-values are read again from it instead of held.
    file: Option<std::path::PathBuf>,
    /// Where the heavy checks go when not here (only for a file, spec/98.3).
    workers: Option<&'v mut dyn SvWorkers>,
    /// Set when a worker's answer was not a clean pass: the record is then walked again in process.
    again: bool,
    /// Per job submitted, in order: the race of an opened copy's job, `None` for the others.
    jobs: Vec<Option<usize>>,
    /// How long each entry may be, as far as the record is read.
    bounds: Bounds,
}

/// How long a split-value record's entries may be (spec/97.8), from the parameters and the number of
/// ballots sealed, so that a hostile length is refused before it is read (issue 43, item 9: the
/// reader once read any entry whole, up to 16 GiB). Race-specific entries are bounded at the widest
/// race's value width.
#[derive(Clone, Copy, Debug, Default)]
struct Bounds {
    /// Known once the parameters are read.
    params: Option<ParamBounds>,
    /// N, known once the seal is read.
    ballots: Option<u64>,
}

#[derive(Clone, Copy, Debug)]
struct ParamBounds {
    /// Bytes of one ballot's commitments.
    per_ballot: u64,
    copies: u64,
    /// The widest value, in bytes.
    width: u64,
    /// The most candidates and write-in characters of any race.
    candidates: u64,
    write_in: u64,
}

/// The largest parameters entry the format allows: 64 races of 65,535 names of 64 bytes each.
const PARAMETERS_MAX: u64 = 32 + 64 * (100 + 65_535 * 66);

impl Bounds {
    fn of(&self, kind: &str) -> u64 {
        let Some(p) = self.params else {
            return PARAMETERS_MAX;
        };
        let n = self.ballots.unwrap_or(0);
        let per = |b: u64| n.saturating_mul(b);
        match kind {
            "ballots" => 12 + BALLOTS_PER_ENTRY as u64 * p.per_ballot,
            "seal" => 8,
            "outputs" => 32 * p.copies,
            "challenge" => 32 + p.copies,
            "opened" => 32 + per(p.width),
            "path" => per(4),
            "tvalues" => per(2 * p.width),
            "inputs" => per(p.width + 16),
            "halves" => per(p.width + 48),
            // n counts, blank, invalid, W, then at most one write-in per ballot
            "tally" => 20 + 8 * p.candidates + per(10 + p.write_in),
            _ => 64,
        }
    }
}

impl<R: Read> Walk<'_, '_, R> {
    /// As `next`, with where the entry lies (for a worker to read it, spec/98.3).
    fn next_loc(&mut self, kind: &str, name: &str) -> Option<Loc> {
        let prev = self.reader.head();
        let e = self.next(kind, name)?;
        Some(self.loc(&e, prev))
    }

    /// The next `rows` entries, named `name(i)` for rows i = 1 …, and where they lie.
    fn row_locs(
        &mut self,
        kind: &str,
        rows: usize,
        name: impl Fn(usize) -> String,
    ) -> Option<Vec<Loc>> {
        (1..=rows).map(|i| self.next_loc(kind, &name(i))).collect()
    }

    fn loc(&self, e: &Entry, prev: [u8; 32]) -> Loc {
        Loc {
            at: self.reader.offset() - e.payload.len() as u64,
            len: e.payload.len(),
            seq: e.seq,
            kind: e.kind.clone(),
            name: e.name.clone(),
            prev,
            hash: e.hash,
        }
    }

    /// Hands `job` to the workers; a refusal stops the walk.
    fn submit(&mut self, job: &Job) {
        let Some(workers) = self.workers.as_mut() else {
            return;
        };
        let Ok(bytes) = serde_json::to_vec(job) else {
            // a job is plain numbers, strings and byte arrays: it always serialises
            self.stopped = true;
            return;
        };
        self.jobs.push(match job {
            Job::Opened { race, .. } => Some(*race),
            _ => None,
        });
        if workers.submit(&bytes).is_break() {
            self.stopped = true;
        }
    }

    /// The next entry, which must be `kind`/`name`; `None` (and the walk stops) otherwise.
    fn next(&mut self, kind: &str, name: &str) -> Option<Entry> {
        if self.stopped {
            return None;
        }
        let max = self.bounds.of(kind);
        match self.reader.next_entry_within(|_, _| Bound::Max(max)) {
            Ok(Some(e)) if e.kind == kind && e.name == name => {
                self.ledger.examined(Check::Sv01, 1);
                if let Some(p) = self.progress.as_mut() {
                    if p(Progress::Entry(name.to_owned())).is_break() {
                        self.stopped = true;
                        return None;
                    }
                }
                Some(e)
            }
            Ok(Some(e)) => {
                self.ledger.fail(
                    Check::Sv01,
                    &format!("entry {}", e.seq),
                    format!("{} {} where {kind} {name} is due", e.kind, e.name),
                );
                self.stopped = true;
                None
            }
            Ok(None) => {
                self.ledger.error(
                    Check::Sv01,
                    "record",
                    format!("the record ends where {kind} {name} is due (incomplete)"),
                );
                self.stopped = true;
                None
            }
            Err(e) => {
                self.ledger.error(Check::Sv01, "record", e.to_string());
                self.stopped = true;
                None
            }
        }
    }

    /// A decoding failure of `entry` under `check` (an Error: the entry cannot be examined).
    fn undecodable(&mut self, check: Check, name: &str, e: SvError) {
        undecodable(&mut self.ledger, check, name, e);
    }
}

/// Verifies a split-value record read from `input` (`name` is how the report names it).
pub fn verify_sv_stream<R: Read>(
    input: R,
    name: &str,
    options: Options<'_>,
) -> (Report, Intermediates) {
    let (report, out, _, _) = verify_sv_walk(input, name, options.progress, None, None);
    (report, out)
}

type ProgressHook<'a> = Option<&'a mut dyn FnMut(Progress) -> ControlFlow<()>>;

/// One walk over the record; also answers whether it must be walked again in process (a worker's
/// answer was not a clean pass), and hands the progress hook back for that.
fn verify_sv_walk<'a, R: Read>(
    input: R,
    name: &str,
    progress: ProgressHook<'a>,
    file: Option<std::path::PathBuf>,
    workers: Option<&mut dyn SvWorkers>,
) -> (Report, Intermediates, bool, ProgressHook<'a>) {
    let mut ledger = Ledger::new(&Check::SV);
    let reader = match BoardReader::new(input, MAGIC, WHAT) {
        Ok(r) => r,
        Err(e) => {
            ledger.unreadable(Check::Sv01, name, &e);
            return (
                ledger.finish(name.into(), "unreadable", 0),
                Intermediates::default(),
                false,
                progress,
            );
        }
    };
    let workers = if file.is_some() { workers } else { None };
    let mut w = Walk {
        ledger,
        out: Intermediates::default(),
        reader,
        progress,
        stopped: false,
        file,
        workers,
        again: false,
        jobs: Vec::new(),
        bounds: Bounds::default(),
    };
    let ballots = walk(&mut w);
    if !w.stopped {
        match w.reader.next_entry_within(|_, _| Bound::Max(64)) {
            Ok(None) => {}
            Ok(Some(e)) => w.ledger.fail(
                Check::Sv01,
                &format!("entry {}", e.seq),
                format!("{} {} after the last tally", e.kind, e.name),
            ),
            Err(e) => w.ledger.error(Check::Sv01, "record", e.to_string()),
        }
    }
    w.out
        .values
        .insert("head".into(), json!(hex(&w.reader.head())));
    (
        w.ledger.finish(name.into(), FORM, ballots),
        w.out,
        w.again,
        w.progress,
    )
}

/// The ballots as read: how many, and their commitments (in process) or where their entries lie
/// (for the workers).
#[derive(Default)]
struct Ballots {
    n: usize,
    /// Per ballot, per race, per row, (COM(u), COM(v)).
    coms: Vec<[u8; 32]>,
    locs: Vec<Loc>,
}

/// The last column's roots, posted before the cut: `roots[race][row][copy]`.
type Roots = Vec<Vec<Vec<[u8; 32]>>>;

/// What the copies left before the sides: per race, the first opened copy's count, and the checked
/// copies' paths and t-values (in process) or where they lie (for the workers).
struct Copies {
    tallies: Vec<Option<Tally>>,
    checked: Vec<Vec<Checked>>,
    remote: Vec<Vec<(usize, Loc, Vec<Loc>)>>,
}

/// Reads the record front to back in spec/97.8's order, each part by its own step below, which
/// calls the checks of `checks::sv`; returns the number of ballots.
fn walk<R: Read>(w: &mut Walk<'_, '_, R>) -> u64 {
    let Some(params) = w.parameters() else {
        return 0;
    };
    let ballots = match w.ballots(&params) {
        Ok(b) => b,
        Err(count) => return count,
    };
    let n = ballots.n;
    if !check_enough_ballots(&mut w.ledger, n) {
        return n as u64;
    }
    let Some(roots) = w.outputs(&params) else {
        return n as u64;
    };
    // the cut; the rest of the record is read in the posted cut's layout
    let h1 = w.reader.head();
    let Some(e) = w.next("challenge", "cut") else {
        return n as u64;
    };
    let Some(checked) = check_cut(&mut w.ledger, &e.payload, &h1, params.copies, params.half())
    else {
        w.stopped = true;
        return n as u64;
    };
    let opened: Vec<usize> = (0..params.copies)
        .filter(|k| !checked.contains(k))
        .collect();
    w.out.values.insert("checked_copies".into(), json!(checked));
    let Some(mut copies) = w.copies(&params, n, &roots, &opened, &checked) else {
        return n as u64;
    };
    // the sides
    let h2 = w.reader.head();
    let Some(e) = w.next("challenge", "sides") else {
        return n as u64;
    };
    check_sides(&mut w.ledger, &e.payload, &h2);
    if w.halves(&params, n, h2, &ballots, &roots, &mut copies)
        .is_none()
    {
        return n as u64;
    }
    if w.workers.is_some() && !merge_answers(w, &params, &mut copies.tallies) {
        return n as u64;
    }
    w.tallies(&params, &copies.tallies);
    n as u64
}

impl<R: Read> Walk<'_, '_, R> {
    /// The parameters (V-SV-02); hands them to the workers, if any.
    fn parameters(&mut self) -> Option<Params> {
        let first = self.next("parameters", "parameters")?;
        let params = match Params::decode(&first.payload) {
            Ok(p) => p,
            Err(e) => {
                self.undecodable(Check::Sv02, "parameters", e);
                self.stopped = true;
                return None;
            }
        };
        check_parameters(&mut self.ledger, &params);
        self.bounds.params = Some(ParamBounds {
            per_ballot: (params.races.len() * params.grid.rows * 64) as u64,
            copies: params.copies as u64,
            width: params.races.iter().map(|r| r.zm.width()).max().unwrap_or(0) as u64,
            candidates: params
                .races
                .iter()
                .map(|r| r.candidates.len())
                .max()
                .unwrap_or(0) as u64,
            write_in: params
                .races
                .iter()
                .map(|r| u64::from(r.write_in))
                .max()
                .unwrap_or(0),
        });
        if let (Some(workers), Some(file)) = (self.workers.as_mut(), self.file.as_deref()) {
            if workers.setup(&first.payload, file).is_break() {
                self.stopped = true;
                return None;
            }
        }
        let grid = params.grid;
        self.out.values.insert(
            "grid".into(),
            json!({"rows": grid.rows, "columns": grid.cols, "threshold": grid.threshold, "copies": params.copies}),
        );
        Some(params)
    }

    /// The ballots entries up to the seal (V-SV-03). `Err` holds the ballot count to report when
    /// the walk cannot go on.
    fn ballots(&mut self, params: &Params) -> Result<Ballots, u64> {
        let per_ballot = params.races.len() * params.grid.rows * 2;
        let remote = self.workers.is_some();
        let mut ballots = Ballots::default();
        let mut posted = 0usize;
        let mut chunk = 0usize;
        loop {
            if self.stopped {
                return Err(posted as u64);
            }
            let prev = self.reader.head();
            let max = self.bounds.of("ballots");
            let e = match self.reader.next_entry_within(|_, _| Bound::Max(max)) {
                Ok(Some(e)) => e,
                Ok(None) => {
                    self.ledger.error(
                        Check::Sv01,
                        "record",
                        "the record ends inside the ballots (incomplete)",
                    );
                    return Err(0);
                }
                Err(e) => {
                    self.ledger.error(Check::Sv01, "record", e.to_string());
                    return Err(0);
                }
            };
            self.ledger.examined(Check::Sv01, 1);
            if e.kind == "seal" && e.name == "seal" {
                check_seal(&mut self.ledger, &e.payload, posted as u64);
                ballots.n = posted;
                self.bounds.ballots = Some(posted as u64);
                return Ok(ballots);
            }
            let want = names::ballots(chunk);
            if e.kind != "ballots" || e.name != want {
                self.ledger.fail(
                    Check::Sv01,
                    &format!("entry {}", e.seq),
                    format!("{} {} where {want} or the seal is due", e.kind, e.name),
                );
                self.stopped = true;
                return Err(0);
            }
            let Some(count) = check_ballots_entry(
                &mut self.ledger,
                &e.payload,
                &want,
                posted as u64,
                per_ballot,
            ) else {
                self.stopped = true;
                return Err(0);
            };
            if remote {
                ballots.locs.push(self.loc(&e, prev));
            } else {
                for c in e.payload[12..].chunks_exact(32) {
                    let mut h = [0u8; 32];
                    h.copy_from_slice(c);
                    ballots.coms.push(h);
                }
            }
            posted += count as usize;
            chunk += 1;
        }
    }

    /// The last column's roots of every race, row and copy (read here, checked by V-SV-05/10).
    fn outputs(&mut self, params: &Params) -> Option<Roots> {
        let (rows, copies) = (params.grid.rows, params.copies);
        let mut roots = vec![vec![vec![[0u8; 32]; copies]; rows]; params.races.len()];
        for (ri, race_roots) in roots.iter_mut().enumerate() {
            for (i, row_roots) in race_roots.iter_mut().enumerate() {
                let name = names::outputs(ri, i + 1);
                let e = self.next("outputs", &name)?;
                if e.payload.len() != 32 * copies {
                    self.ledger.error(
                        Check::Sv01,
                        &name,
                        format!("{} bytes for {copies} roots", e.payload.len()),
                    );
                    self.stopped = true;
                    return None;
                }
                for (k, c) in e.payload.chunks_exact(32).enumerate() {
                    row_roots[k].copy_from_slice(c);
                }
            }
        }
        Some(roots)
    }

    /// Race by race, the opened copies (V-SV-05, V-SV-06), then the checked copies' paths and
    /// t-values (V-SV-07, V-SV-08). `None` when the walk stops.
    fn copies(
        &mut self,
        params: &Params,
        n: usize,
        roots: &Roots,
        opened: &[usize],
        checked: &[usize],
    ) -> Option<Copies> {
        let rows = params.grid.rows;
        let sharing = params.grid.sharing();
        let races = params.races.len();
        let mut out = Copies {
            tallies: vec![None; races],
            checked: Vec::new(),
            remote: vec![Vec::new(); races],
        };
        for (ri, race) in params.races.iter().enumerate() {
            let mut reference: Option<(usize, Vec<u128>)> = None;
            for &k in opened {
                if self.workers.is_some() {
                    let locs = self.row_locs("opened", rows, |i| names::opened(ri, k, i))?;
                    self.submit(&Job::Opened {
                        race: ri,
                        copy: k,
                        n,
                        rows: locs,
                        roots: (0..rows).map(|i| roots[ri][i][k]).collect(),
                    });
                    continue;
                }
                // a copy whose rows do not regenerate their roots has failed V-SV-05 and says
                // nothing about the votes
                let Some(votes) = self.opened_copy(race, (ri, k), n, roots, &sharing)? else {
                    continue;
                };
                match &reference {
                    None => {
                        out.tallies[ri] = Some(race.tally(votes.iter().copied()));
                        reference = Some((k, votes));
                    }
                    Some((first, r)) => {
                        check_same_votes(&mut self.ledger, (ri, k), (*first, r), &votes);
                    }
                }
            }
            let mut race_checked = Vec::new();
            for &k in checked {
                if self.workers.is_some() {
                    let path = self.next_loc("path", &names::path(ri, k))?;
                    let t = self.row_locs("tvalues", rows, |i| names::tvalues(ri, k, i))?;
                    out.remote[ri].push((k, path, t));
                    continue;
                }
                race_checked.push(self.checked_copy(&race.zm, (ri, k), n, rows, &sharing)?);
            }
            out.checked.push(race_checked);
        }
        Some(out)
    }

    /// One opened copy's rows (V-SV-05) and their sharing (V-SV-06): `Some(None)` when a row does
    /// not regenerate its root, `None` when the walk stops.
    fn opened_copy(
        &mut self,
        race: &Race,
        (ri, k): (usize, usize),
        n: usize,
        roots: &Roots,
        sharing: &Sharing,
    ) -> Option<Option<Vec<u128>>> {
        let rows = roots[ri].len();
        let mut copy_rows: Vec<Option<Vec<u128>>> = Vec::with_capacity(rows);
        for i in 0..rows {
            let name = names::opened(ri, k, i + 1);
            let e = self.next("opened", &name)?;
            copy_rows.push(check_opened(
                &mut self.ledger,
                &race.zm,
                &e.payload,
                &name,
                ri,
                k,
                i,
                n,
                &roots[ri][i][k],
            ));
        }
        let Some(copy_rows) = copy_rows.into_iter().collect::<Option<Vec<_>>>() else {
            return Some(None);
        };
        Some(Some(copy_votes(
            &mut self.ledger,
            &race.zm,
            sharing,
            &copy_rows,
            (ri, k),
            n,
        )))
    }

    /// One checked copy's path (V-SV-07) and t-values (V-SV-08); a file's t-values are dropped after
    /// the check and read again when the halves arrive. `None` when the walk stops.
    fn checked_copy(
        &mut self,
        zm: &Zm,
        (ri, k): (usize, usize),
        n: usize,
        rows: usize,
        sharing: &Sharing,
    ) -> Option<Checked> {
        let name = names::path(ri, k);
        let e = self.next("path", &name)?;
        let path = check_path(&mut self.ledger, &e.payload, &name, n);
        // per row: the decoded t-values, where the entry's payload lies, and its digest
        let mut t: Vec<ReadT> = Vec::with_capacity(rows);
        for i in 0..rows {
            let name = names::tvalues(ri, k, i + 1);
            let e = self.next("tvalues", &name)?;
            let at = self.reader.offset() - e.payload.len() as u64;
            match decode_t(zm, &e.payload, &name, n) {
                Ok(v) => t.push((
                    Some(v),
                    at,
                    e.payload.len(),
                    votum_hash::board::payload_digest(&e.payload),
                )),
                Err(err) => {
                    self.undecodable(Check::Sv08, &name, err);
                    t.push((None, 0, 0, [0; 32]));
                }
            }
        }
        if t.iter().all(|x| x.0.is_some()) {
            let rows_t: Vec<&[(u128, u128)]> = t.iter().filter_map(|x| x.0.as_deref()).collect();
            check_t(&mut self.ledger, zm, sharing, &rows_t, (ri, k), n);
        }
        let held = self.file.is_none();
        let t = t
            .into_iter()
            .map(|(v, offset, len, digest)| match v {
                Some(v) if held => TValues::Held(v),
                Some(_) => TValues::InFile {
                    offset,
                    len,
                    digest,
                },
                None => TValues::Unreadable,
            })
            .collect();
        Some(Checked { copy: k, path, t })
    }

    /// After the sides, race by race: the input halves (V-SV-09) and each checked copy's half
    /// openings (V-SV-10, V-SV-11). `None` when the walk stops.
    fn halves(
        &mut self,
        params: &Params,
        n: usize,
        h2: [u8; 32],
        ballots: &Ballots,
        roots: &Roots,
        copies: &mut Copies,
    ) -> Option<()> {
        let (rows, races) = (params.grid.rows, params.races.len());
        let side_bits = sides(&h2, races, n);
        for (ri, race) in params.races.iter().enumerate() {
            let zm = &race.zm;
            let side = &side_bits[ri];
            if self.workers.is_some() {
                let inputs = self.row_locs("inputs", rows, |i| names::inputs(ri, i))?;
                self.submit(&Job::Inputs {
                    race: ri,
                    n,
                    h2,
                    ballots: ballots.locs.clone(),
                    inputs: inputs.clone(),
                });
                for (k, path, t) in std::mem::take(&mut copies.remote[ri]) {
                    let halves = self.row_locs("halves", rows, |i| names::halves(ri, k, i))?;
                    self.submit(&Job::Checked {
                        race: ri,
                        copy: k,
                        n,
                        h2,
                        path,
                        t,
                        inputs: inputs.clone(),
                        halves,
                        roots: (0..rows).map(|i| roots[ri][i][k]).collect(),
                    });
                }
                continue;
            }
            // the input halves, one entry per row; their values kept per ballot and row
            let mut inputs: Option<Vec<u128>> = Some(vec![0u128; n * rows]);
            for i in 0..rows {
                let name = names::inputs(ri, i + 1);
                let e = self.next("inputs", &name)?;
                let got = check_inputs(
                    &mut self.ledger,
                    zm,
                    &e.payload,
                    &name,
                    (ri, i),
                    n,
                    (rows, races),
                    side,
                    &ballots.coms,
                );
                match (got, inputs.as_mut()) {
                    (Some(values), Some(all)) => {
                        for (p, v) in values.into_iter().enumerate() {
                            all[p * rows + i] = v;
                        }
                    }
                    _ => inputs = None,
                }
            }
            for post in &copies.checked[ri] {
                let k = post.copy;
                for i in 0..rows {
                    let name = names::halves(ri, k, i + 1);
                    let e = self.next("halves", &name)?;
                    check_halves(
                        &mut self.ledger,
                        self.file.as_deref(),
                        zm,
                        &e.payload,
                        &name,
                        (ri, k, i),
                        n,
                        rows,
                        side,
                        post,
                        inputs.as_deref(),
                        &roots[ri][i][k],
                    );
                }
            }
        }
        Some(())
    }

    /// Each race's posted tally (V-SV-12) against the opened votes' count.
    fn tallies(&mut self, params: &Params, tallies: &[Option<Tally>]) {
        let mut posted = Vec::new();
        for (ri, race) in params.races.iter().enumerate() {
            let name = names::tally(ri);
            let Some(e) = self.next("tally", &name) else {
                return;
            };
            if let Some(t) = check_tally(
                &mut self.ledger,
                &e.payload,
                race,
                &name,
                tallies[ri].as_ref(),
            ) {
                posted.push(json!({
                    "race": race.id,
                    "candidates": race.candidates,
                    "counts": t.counts,
                    "blank": t.blank,
                    "invalid": t.invalid,
                    "write_ins": t.write_ins,
                }));
            }
        }
        self.out.values.insert("tallies".into(), json!(posted));
    }
}

/// Takes every worker's answer (spec/98.3): when all are clean passes and the opened copies of
/// each race agree, their counts go into the ledger and the first opened copy's tally is the
/// race's, as in process; otherwise the walk stops and the record is walked again in process.
fn merge_answers<R: Read>(
    w: &mut Walk<'_, '_, R>,
    params: &Params,
    tallies: &mut [Option<Tally>],
) -> bool {
    let Some(workers) = w.workers.as_mut() else {
        return true;
    };
    let ControlFlow::Continue(answers) = workers.collect() else {
        w.stopped = true;
        return false;
    };
    let jobs = std::mem::take(&mut w.jobs);
    let mut counts: Vec<(Check, u64)> = Vec::new();
    let mut votes: Vec<Option<[u8; 32]>> = vec![None; params.races.len()];
    let mut clean = answers.len() == jobs.len();
    for (answer, opened) in answers.into_iter().zip(jobs) {
        let Some(a) = answer
            .ok()
            .and_then(|b| serde_json::from_slice::<Answer>(&b).ok())
        else {
            clean = false;
            break;
        };
        if !a.clean {
            clean = false;
            break;
        }
        for (id, c) in &a.counts {
            match sv_check(id) {
                Some(check) => counts.push((check, *c)),
                None => clean = false,
            }
        }
        // an opened copy's answer: its votes must be every other opened copy's of the race
        if let Some(ri) = opened {
            let race = &params.races[ri];
            match (
                a.votes,
                a.tally
                    .map(|t| Tally::decode(&t, race.candidates.len(), "tally")),
            ) {
                (Some(d), Some(Ok(t))) if votes[ri].is_none() => {
                    votes[ri] = Some(d);
                    tallies[ri] = Some(t);
                }
                (Some(d), Some(Ok(_))) if votes[ri] == Some(d) => {}
                _ => {
                    clean = false;
                    break;
                }
            }
        }
    }
    if !clean {
        w.again = true;
        w.stopped = true;
        return false;
    }
    for (check, c) in counts {
        w.ledger.examined(check, c);
    }
    true
}
