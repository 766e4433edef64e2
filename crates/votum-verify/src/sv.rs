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
use votum_splitvalue::challenge::{cut, sides};
use votum_splitvalue::params::{Params, CUT_SOUNDNESS_FLOOR};
use votum_splitvalue::record::{BoardReader, Entry, MAGIC, WHAT};
use votum_splitvalue::wire::{names, Reader, Tally, BALLOTS_PER_ENTRY};
use votum_splitvalue::SvError;

use crate::checks::Check;
use crate::options::{Intermediates, Options, Progress};
use crate::report::{hex, Ledger, Report, Soundness};
use crate::sv_checks::{
    check_halves, check_inputs, check_opened, check_path, check_t, copy_votes, decode_t,
    undecodable, Checked, TValues,
};
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

/// Reads the record front to back; returns the number of ballots.
fn walk<R: Read>(w: &mut Walk<'_, '_, R>) -> u64 {
    let Some(first) = w.next("parameters", "parameters") else {
        return 0;
    };
    let params = match Params::decode(&first.payload) {
        Ok(p) => p,
        Err(e) => {
            w.undecodable(Check::Sv02, "parameters", e);
            w.stopped = true;
            return 0;
        }
    };
    w.ledger.examined(Check::Sv02, 1);
    w.bounds.params = Some(ParamBounds {
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
    // the cut is a Fiat–Shamir challenge over 2m copies: its level is the record's to choose
    w.ledger.soundness(
        Check::Sv02,
        "parameters",
        Soundness {
            what: format!(
                "the cut (binom({}, {}) ways to choose the opened copies)",
                params.copies,
                params.half()
            ),
            bits: params.cut_soundness_bits(),
            floor: Some(CUT_SOUNDNESS_FLOOR),
        },
    );
    w.ledger.soundness(
        Check::Sv02,
        "parameters",
        Soundness {
            what: "each vote changed in a checked copy (its side, spec/97.10)".into(),
            bits: 1.0,
            floor: None,
        },
    );
    if let (Some(workers), Some(file)) = (w.workers.as_mut(), w.file.as_deref()) {
        if workers.setup(&first.payload, file).is_break() {
            w.stopped = true;
            return 0;
        }
    }
    let remote = w.workers.is_some();
    let grid = params.grid;
    let (rows, copies) = (grid.rows, params.copies);
    let races = params.races.len();
    let sharing = grid.sharing();
    w.out.values.insert(
        "grid".into(),
        json!({"rows": rows, "columns": grid.cols, "threshold": grid.threshold, "copies": copies}),
    );

    // ballots: per ballot, per race, per row, (COM(u), COM(v))
    let per_ballot = races * rows * 2;
    // the ballots' commitments (in process), or where their entries lie (for the workers)
    let mut coms: Vec<[u8; 32]> = Vec::new();
    let mut ballot_locs: Vec<Loc> = Vec::new();
    let mut posted = 0usize;
    let mut chunk = 0usize;
    let n: usize;
    loop {
        if w.stopped {
            return posted as u64;
        }
        let prev = w.reader.head();
        let max = w.bounds.of("ballots");
        let e = match w.reader.next_entry_within(|_, _| Bound::Max(max)) {
            Ok(Some(e)) => e,
            Ok(None) => {
                w.ledger.error(
                    Check::Sv01,
                    "record",
                    "the record ends inside the ballots (incomplete)",
                );
                return 0;
            }
            Err(e) => {
                w.ledger.error(Check::Sv01, "record", e.to_string());
                return 0;
            }
        };
        w.ledger.examined(Check::Sv01, 1);
        if e.kind == "seal" && e.name == "seal" {
            let have = posted as u64;
            match <[u8; 8]>::try_from(e.payload.as_slice()) {
                Ok(b) if u64::from_be_bytes(b) == have => {}
                Ok(b) => w.ledger.fail(
                    Check::Sv03,
                    "seal",
                    format!(
                        "seals {} ballots where {have} were posted",
                        u64::from_be_bytes(b)
                    ),
                ),
                Err(_) => w.ledger.error(Check::Sv03, "seal", "not a u64"),
            }
            n = have as usize;
            w.bounds.ballots = Some(have);
            break;
        }
        let want = names::ballots(chunk);
        if e.kind != "ballots" || e.name != want {
            w.ledger.fail(
                Check::Sv01,
                &format!("entry {}", e.seq),
                format!("{} {} where {want} or the seal is due", e.kind, e.name),
            );
            w.stopped = true;
            return 0;
        }
        let mut r = Reader::new(&e.payload, &want);
        let parsed = (|| -> Result<(u64, u32), SvError> { Ok((r.u64()?, r.u32()?)) })();
        let (start, count) = match parsed {
            Ok(x) => x,
            Err(err) => {
                w.undecodable(Check::Sv03, &want, err);
                w.stopped = true;
                return 0;
            }
        };
        let have = posted as u64;
        if start != have || count == 0 || count as usize > BALLOTS_PER_ENTRY {
            w.ledger.fail(
                Check::Sv03,
                &want,
                format!("ballots {start}.. ({count}) where ballot {have} is next (1 … {BALLOTS_PER_ENTRY} per entry)"),
            );
        }
        let body = &e.payload[12..];
        if body.len() != count as usize * per_ballot * 32 {
            w.ledger.error(
                Check::Sv03,
                &want,
                format!(
                    "{} bytes for {count} ballots of {} commitments",
                    body.len(),
                    per_ballot
                ),
            );
            w.stopped = true;
            return 0;
        }
        if remote {
            ballot_locs.push(w.loc(&e, prev));
        } else {
            for c in body.chunks_exact(32) {
                let mut h = [0u8; 32];
                h.copy_from_slice(c);
                coms.push(h);
            }
        }
        posted += count as usize;
        w.ledger.examined(Check::Sv03, u64::from(count));
        chunk += 1;
    }
    if n < 2 {
        w.ledger
            .fail(Check::Sv03, "seal", format!("{n} ballots (at least 2)"));
        return n as u64;
    }

    // the last column's roots: roots[race][row][copy]
    let mut roots = vec![vec![vec![[0u8; 32]; copies]; rows]; races];
    for (ri, race_roots) in roots.iter_mut().enumerate() {
        for (i, row_roots) in race_roots.iter_mut().enumerate() {
            let name = names::outputs(ri, i + 1);
            let Some(e) = w.next("outputs", &name) else {
                return n as u64;
            };
            if e.payload.len() != 32 * copies {
                w.ledger.error(
                    Check::Sv01,
                    &name,
                    format!("{} bytes for {copies} roots", e.payload.len()),
                );
                w.stopped = true;
                return n as u64;
            }
            for (k, c) in e.payload.chunks_exact(32).enumerate() {
                row_roots[k].copy_from_slice(c);
            }
        }
    }

    // the cut
    let h1 = w.reader.head();
    let Some(e) = w.next("challenge", "cut") else {
        return n as u64;
    };
    w.ledger.examined(Check::Sv04, 1);
    let m = params.half();
    if e.payload.len() != 32 + m {
        w.ledger.error(
            Check::Sv04,
            "cut",
            format!("{} bytes (32 + {m})", e.payload.len()),
        );
        w.stopped = true;
        return n as u64;
    }
    let posted_h1 = &e.payload[..32];
    let posted_cut: Vec<usize> = e.payload[32..].iter().map(|&k| usize::from(k)).collect();
    if posted_h1 != h1 {
        w.ledger.fail(
            Check::Sv04,
            "cut",
            format!(
                "drawn from {} where the board's head was {}",
                hex(posted_h1),
                hex(&h1)
            ),
        );
    }
    let checked = cut(&h1, copies);
    if posted_cut != checked {
        w.ledger.fail(
            Check::Sv04,
            "cut",
            format!("checked copies {posted_cut:?} where the head gives {checked:?}"),
        );
    }
    // the rest of the record is read in the posted cut's layout
    let checked = if posted_cut.len() == m
        && posted_cut.iter().all(|&k| k < copies)
        && posted_cut.windows(2).all(|p| p[0] < p[1])
    {
        posted_cut
    } else {
        w.stopped = true;
        return n as u64;
    };
    let opened: Vec<usize> = (0..copies).filter(|k| !checked.contains(k)).collect();
    w.out.values.insert("checked_copies".into(), json!(checked));

    // opened copies, paths and t-values, race by race
    let mut tallies: Vec<Option<Tally>> = vec![None; races];
    let mut checked_posts: Vec<Vec<Checked>> = Vec::new();
    // in remote mode, per race: each checked copy's path and t-values, where they lie
    let mut remote_checked: Vec<Vec<(usize, Loc, Vec<Loc>)>> = vec![Vec::new(); races];
    for (ri, race) in params.races.iter().enumerate() {
        let zm = &race.zm;
        let mut reference: Option<(usize, Vec<u128>)> = None;
        for &k in &opened {
            if remote {
                let Some(locs) = w.row_locs("opened", rows, |i| names::opened(ri, k, i)) else {
                    return n as u64;
                };
                w.submit(&Job::Opened {
                    race: ri,
                    copy: k,
                    n,
                    rows: locs,
                    roots: (0..rows).map(|i| roots[ri][i][k]).collect(),
                });
                continue;
            }
            let mut copy_rows: Vec<Option<Vec<u128>>> = Vec::with_capacity(rows);
            for i in 0..rows {
                let name = names::opened(ri, k, i + 1);
                let Some(e) = w.next("opened", &name) else {
                    return n as u64;
                };
                copy_rows.push(check_opened(
                    &mut w.ledger,
                    zm,
                    &e.payload,
                    &name,
                    ri,
                    k,
                    i,
                    n,
                    &roots[ri][i][k],
                ));
            }
            // a copy whose rows do not regenerate their roots has failed V-SV-05 and says nothing
            // about the votes
            let Some(copy_rows) = copy_rows.into_iter().collect::<Option<Vec<_>>>() else {
                continue;
            };
            let votes = copy_votes(&mut w.ledger, zm, &sharing, &copy_rows, (ri, k), n);
            match &reference {
                None => {
                    tallies[ri] = Some(race.tally(votes.iter().copied()));
                    reference = Some((k, votes));
                }
                Some((first, r)) if *r != votes => {
                    w.ledger.fail(
                        Check::Sv06,
                        &format!("race {ri}, copy {k}"),
                        format!(
                            "its votes differ from copy {first}'s ({} of {n} sorted positions differ)",
                            r.iter().zip(&votes).filter(|(a, b)| a != b).count()
                        ),
                    );
                }
                Some(_) => {}
            }
        }
        let mut race_checked = Vec::new();
        for &k in &checked {
            if remote {
                let Some(path) = w.next_loc("path", &names::path(ri, k)) else {
                    return n as u64;
                };
                let Some(t) = w.row_locs("tvalues", rows, |i| names::tvalues(ri, k, i)) else {
                    return n as u64;
                };
                remote_checked[ri].push((k, path, t));
                continue;
            }
            let name = names::path(ri, k);
            let Some(e) = w.next("path", &name) else {
                return n as u64;
            };
            let path = check_path(&mut w.ledger, &e.payload, &name, n);
            // per row: the decoded t-values (dropped after V-SV-08 when the record is a file), where
            // the entry's payload lies, and its digest
            let mut t: Vec<ReadT> = Vec::with_capacity(rows);
            for i in 0..rows {
                let name = names::tvalues(ri, k, i + 1);
                let Some(e) = w.next("tvalues", &name) else {
                    return n as u64;
                };
                let at = w.reader.offset() - e.payload.len() as u64;
                match decode_t(zm, &e.payload, &name, n) {
                    Ok(v) => t.push((
                        Some(v),
                        at,
                        e.payload.len(),
                        votum_hash::board::payload_digest(&e.payload),
                    )),
                    Err(err) => {
                        w.undecodable(Check::Sv08, &name, err);
                        t.push((None, 0, 0, [0; 32]));
                    }
                }
            }
            if t.iter().all(|x| x.0.is_some()) {
                let rows_t: Vec<&[(u128, u128)]> =
                    t.iter().filter_map(|x| x.0.as_deref()).collect();
                check_t(&mut w.ledger, zm, &sharing, &rows_t, (ri, k), n);
            }
            let held = w.file.is_none();
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
            race_checked.push(Checked { copy: k, path, t });
        }
        checked_posts.push(race_checked);
    }

    // the sides
    let h2 = w.reader.head();
    let Some(e) = w.next("challenge", "sides") else {
        return n as u64;
    };
    w.ledger.examined(Check::Sv04, 1);
    if e.payload != h2 {
        w.ledger.fail(
            Check::Sv04,
            "sides",
            format!(
                "drawn from {} where the board's head was {}",
                hex(&e.payload),
                hex(&h2)
            ),
        );
    }
    let side_bits = sides(&h2, races, n);

    for (ri, race) in params.races.iter().enumerate() {
        let zm = &race.zm;
        let side = &side_bits[ri];
        if remote {
            let Some(inputs) = w.row_locs("inputs", rows, |i| names::inputs(ri, i)) else {
                return n as u64;
            };
            w.submit(&Job::Inputs {
                race: ri,
                n,
                h2,
                ballots: ballot_locs.clone(),
                inputs: inputs.clone(),
            });
            for (k, path, t) in std::mem::take(&mut remote_checked[ri]) {
                let Some(halves) = w.row_locs("halves", rows, |i| names::halves(ri, k, i)) else {
                    return n as u64;
                };
                w.submit(&Job::Checked {
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
        // V-SV-09: the input halves, one entry per row; keep their values per ballot and row
        let mut inputs: Option<Vec<u128>> = Some(vec![0u128; n * rows]);
        for i in 0..rows {
            let name = names::inputs(ri, i + 1);
            let Some(e) = w.next("inputs", &name) else {
                return n as u64;
            };
            let got = check_inputs(
                &mut w.ledger,
                zm,
                &e.payload,
                &name,
                (ri, i),
                n,
                (rows, races),
                side,
                &coms,
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
        for post in &checked_posts[ri] {
            let k = post.copy;
            for i in 0..rows {
                let name = names::halves(ri, k, i + 1);
                let Some(e) = w.next("halves", &name) else {
                    return n as u64;
                };
                check_halves(
                    &mut w.ledger,
                    w.file.as_deref(),
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

    if remote && !merge_answers(w, &params, &mut tallies) {
        return n as u64;
    }

    // V-SV-12: the tallies
    let mut posted = Vec::new();
    for (ri, race) in params.races.iter().enumerate() {
        let name = names::tally(ri);
        let Some(e) = w.next("tally", &name) else {
            return n as u64;
        };
        match Tally::decode(&e.payload, race.candidates.len(), &name) {
            Ok(t) => {
                w.ledger.examined(Check::Sv12, 1);
                match &tallies[ri] {
                    Some(want) if *want != t => w.ledger.fail(
                        Check::Sv12,
                        &name,
                        format!(
                            "posts {:?} blank {} invalid {} where the opened votes count {:?} blank {} invalid {}",
                            t.counts, t.blank, t.invalid, want.counts, want.blank, want.invalid
                        ),
                    ),
                    Some(_) => {}
                    None => w.ledger.error(Check::Sv12, &name, "no opened copy could be read"),
                }
                posted.push(json!({
                    "race": race.id,
                    "counts": t.counts,
                    "blank": t.blank,
                    "invalid": t.invalid,
                    "write_ins": t.write_ins,
                }));
            }
            Err(err) => w.undecodable(Check::Sv12, &name, err),
        }
    }
    w.out.values.insert("tallies".into(), json!(posted));
    n as u64
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
