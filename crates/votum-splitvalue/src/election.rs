//! Voters and mix servers, and a whole election in one process (spec/97.5–97.7).
//!
//! `run` plays every party against one board (the record file): voters' devices cast, the
//! grid mixes 2m copies, the last column commits, and the prover answers the two challenges drawn
//! from the board's head. The step functions (`cast::cast_chunk`, `mix_copy`, `output_splits`,
//! `path_of`) are what a server process runs for its own row and column. A `Cheat` makes one
//! party misbehave, for the tests of the verifier.

// The grid's data is indexed [race][row][copy][position]; index loops say which is which.
#![allow(clippy::needless_range_loop)]

use std::io::Write;
use std::time::{Duration, Instant};

use rand_core::{OsRng, RngCore};
use rayon::prelude::*;
use zeroize::Zeroize;

use crate::cast::{cast_chunk, CastRow};
use crate::challenge::{cut, sides};
use crate::commit::output_root;
use crate::field::Zm;
use crate::params::{Choice, Params, Race};
use crate::record::{BoardWriter, MAGIC};
use crate::servers::{
    encode_t_values, input_halves, opened_payload, output_halves, t_values, tally_of, LastColumn,
    ListStore,
};
use crate::sharing::Sharing;
use crate::stream::{permutation, stream};
use crate::wire::{names, Tally, Writer, BALLOTS_PER_ENTRY};
use crate::SvError;

/// Where secret seeds come from: the operating system, or one master seed (tests, reproducible
/// benchmarks; 97.4).
#[derive(Clone)]
pub struct Seeds {
    master: Option<[u8; 32]>,
}

impl Seeds {
    pub fn os() -> Self {
        Self { master: None }
    }

    pub fn seeded(master: [u8; 32]) -> Self {
        Self {
            master: Some(master),
        }
    }

    /// The seed for `purpose`.
    pub fn seed(&self, purpose: &[u8]) -> [u8; 32] {
        let mut s = [0u8; 32];
        match &self.master {
            Some(m) => stream("seed", &[m, purpose]).fill_bytes(&mut s),
            None => OsRng.fill_bytes(&mut s),
        }
        s
    }
}

impl std::fmt::Debug for Seeds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.master.is_some() {
            "Seeds(seeded)"
        } else {
            "Seeds(os)"
        })
    }
}

/// Which copies a cheating column changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Copies {
    All,
    One(usize),
}

impl Cheat {
    /// Whether the prover covers its t-values (see `cover_t_values`).
    fn covers(&self) -> bool {
        matches!(
            self,
            Cheat::Alter { cover: true, .. } | Cheat::WrongPath { .. } | Cheat::RepeatedPath { .. }
        )
    }
}

impl Copies {
    fn has(self, k: usize) -> bool {
        match self {
            Copies::All => true,
            Copies::One(c) => c == k,
        }
    }
}

/// A party that misbehaves (tests of the verifier).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cheat {
    /// The servers of the first column add `delta` to the votes of `ballots` in their output (a
    /// consistent change of each vote's value, the same ballots in every copy it touches). With
    /// `cover` the prover posts t-values that hide the change from V-SV-08.
    Alter {
        race: usize,
        ballots: Vec<usize>,
        delta: u128,
        copies: Copies,
        cover: bool,
    },
    /// One server adds 1 to its share of one vote: the rows no longer agree.
    AlterShare {
        race: usize,
        row: usize,
        column: usize,
        position: usize,
        copies: Copies,
    },
    /// The servers of one column replace the vote at `to` with a copy of the vote at `from`.
    Duplicate {
        race: usize,
        column: usize,
        from: usize,
        to: usize,
        copies: Copies,
    },
    /// The servers of one column turn the vote at `position` into a blank.
    Drop {
        race: usize,
        column: usize,
        position: usize,
        copies: Copies,
    },
    /// The first checked copy's path is posted with its first 40 positions rotated, and the
    /// prover answers along it, covering its t-values.
    WrongPath { race: usize },
    /// The first opened copy's first value (row 1) is posted off by one.
    BadOpening { race: usize },
    /// Ballot 0's row-1 input half is posted with a wrong key.
    BadInputOpening { race: usize },
    /// The tally gives candidate 1 one more vote.
    BadTally { race: usize },
    /// The first checked copy's path takes position 0 twice (position 1 never): not a
    /// permutation; the prover answers along it, covering its t-values.
    RepeatedPath { race: usize },
    /// The first checked copy's row-1 halves carry a wrong "other" commitment for position 0.
    BadOtherCommitment { race: usize },
    /// The seal counts one ballot more than were posted.
    BadSeal,
}

/// The values of every ballot, race by race, checked against their races (97.1).
pub fn encode_votes(params: &Params, votes: &[Vec<Choice>]) -> Result<Vec<Vec<u128>>, SvError> {
    let mut out: Vec<Vec<u128>> = params
        .races
        .iter()
        .map(|_| Vec::with_capacity(votes.len()))
        .collect();
    for (p, ballot) in votes.iter().enumerate() {
        if ballot.len() != params.races.len() {
            return Err(SvError::Vote(format!(
                "ballot {p}: {} choices for {} races",
                ballot.len(),
                params.races.len()
            )));
        }
        for (ri, (race, choice)) in params.races.iter().zip(ballot).enumerate() {
            out[ri].push(
                race.encode(choice)
                    .map_err(|e| SvError::Vote(format!("ballot {p}: {e}")))?,
            );
        }
    }
    Ok(out)
}

/// Write-ins the random voters of benchmarks pick from.
const WRITE_INS: [&str; 6] = [
    "Donald Duck",
    "Mickey Mouse",
    "Minnie Mouse",
    "Goofy",
    "Daisy Duck",
    "Scrooge McDuck",
];

/// `n` random valid votes per race from `seed` (benchmarks and demos): candidates uniformly, a
/// write-in (truncated to the race's length) as often as one candidate.
pub fn random_values(params: &Params, n: usize, seed: &[u8; 32]) -> Vec<Vec<u128>> {
    params
        .races
        .iter()
        .enumerate()
        .map(|(ri, race)| {
            let mut rng = stream("votes", &[seed, &(ri as u16).to_be_bytes()]);
            let options = race.candidates.len() as u64 + u64::from(race.write_in > 0);
            let write_ins: Vec<u128> = WRITE_INS
                .iter()
                .filter_map(|w| {
                    let t: String = w.chars().take(usize::from(race.write_in)).collect();
                    race.encode(&Choice::WriteIn(t)).ok()
                })
                .collect();
            (0..n)
                .map(|_| {
                    let c = crate::stream::index_below(&mut rng, options);
                    if c < race.candidates.len() as u64 {
                        u128::from(c) + 1
                    } else {
                        let w = crate::stream::index_below(&mut rng, write_ins.len() as u64);
                        write_ins[w as usize]
                    }
                })
                .collect()
        })
        .collect()
}

fn race_bytes(race: usize) -> [u8; 2] {
    (race as u16).to_be_bytes()
}

/// The stream of column `column_seed` for race `race` and copy `copy` (97.6).
pub fn column_stream(column_seed: &[u8; 32], race: usize, copy: usize) -> rand_chacha::ChaCha20Rng {
    stream("column", &[column_seed, &race_bytes(race), &[copy as u8]])
}

/// One column's pass over one copy for the rows `rows` (0-based) whose input lists are `inputs`
/// (97.6): y[q] = x[π(q)] + z_i(q). The servers of a column share its stream; one server passes
/// its own row, the in-process election all rows at once. Returns π and the outputs.
pub fn column_pass(
    race: &Race,
    race_index: usize,
    sharing: &Sharing,
    column_seed: &[u8; 32],
    copy: usize,
    rows: &[usize],
    inputs: &[&[u128]],
) -> (Vec<u32>, Vec<Vec<u128>>) {
    let zm = &race.zm;
    let n = inputs.first().map_or(0, |x| x.len());
    let mut coefs = vec![0u128; sharing.threshold() - 1];
    let points: Vec<u64> = rows.iter().map(|&i| i as u64 + 1).collect();
    let mut rng = column_stream(column_seed, race_index, copy);
    let pi = permutation(&mut rng, n);
    let mut next = vec![vec![0u128; n]; rows.len()];
    for (q, &src) in pi.iter().enumerate() {
        for c in coefs.iter_mut() {
            *c = zm.draw(&mut rng);
        }
        for ((out, input), &x) in next.iter_mut().zip(inputs).zip(&points) {
            out[q] = zm.add(input[src as usize], sharing.eval(zm, 0, &coefs, x));
        }
    }
    coefs.zeroize();
    (pi, next)
}

/// One copy through the whole grid: every row's input list in, every row's output list out.
pub fn mix_copy(
    race: &Race,
    race_index: usize,
    sharing: &Sharing,
    column_seeds: &[[u8; 32]],
    inputs: &[Vec<u128>],
    copy: usize,
    cheat: Option<&Cheat>,
) -> Vec<Vec<u128>> {
    let rows: Vec<usize> = (0..inputs.len()).collect();
    let mut cur: Vec<Vec<u128>> = inputs.to_vec();
    for (j, seed) in column_seeds.iter().enumerate() {
        let refs: Vec<&[u128]> = cur.iter().map(Vec::as_slice).collect();
        let (pi, mut next) = column_pass(race, race_index, sharing, seed, copy, &rows, &refs);
        if let Some(c) = cheat {
            apply_cheat(c, &race.zm, &pi, (race_index, j, copy), &mut next);
        }
        for row in cur.iter_mut() {
            row.zeroize();
        }
        cur = next;
    }
    cur
}

/// A cheating prover's t-values: where the rows' sums t^u + t^v have a value δ ≠ 0 (an altered
/// vote), every row's t^v is lowered by δ, so the sums are zero sharings again (V-SV-08 passes)
/// and only the side drawn after them can catch the change (V-SV-11, probability 1/2 per vote).
fn cover_t_values(zm: &Zm, sharing: &Sharing, t: &mut [Vec<(u128, u128)>]) {
    let n = t.first().map_or(0, Vec::len);
    let mut sums = vec![0u128; t.len()];
    for q in 0..n {
        for (s, row) in sums.iter_mut().zip(t.iter()) {
            *s = zm.add(row[q].0, row[q].1);
        }
        let delta = sharing.reconstruct(zm, &sums);
        if delta != 0 {
            for row in t.iter_mut() {
                row[q].1 = zm.sub(row[q].1, delta);
            }
        }
    }
}

fn apply_cheat(
    cheat: &Cheat,
    zm: &Zm,
    pi: &[u32],
    (race, column, copy): (usize, usize, usize),
    out: &mut [Vec<u128>],
) {
    match cheat {
        Cheat::Alter {
            race: r,
            ballots,
            delta,
            copies,
            ..
        } if *r == race && column == 0 && copies.has(copy) => {
            for (q, &src) in pi.iter().enumerate() {
                if ballots.contains(&(src as usize)) {
                    for row in out.iter_mut() {
                        row[q] = zm.add(row[q], delta % zm.modulus());
                    }
                }
            }
        }
        Cheat::AlterShare {
            race: r,
            row,
            column: c,
            position,
            copies,
        } if *r == race && *c == column && copies.has(copy) => {
            out[*row][*position] = zm.add(out[*row][*position], 1);
        }
        Cheat::Duplicate {
            race: r,
            column: c,
            from,
            to,
            copies,
        } if *r == race && *c == column && copies.has(copy) => {
            for row in out.iter_mut() {
                row[*to] = row[*from];
            }
        }
        Cheat::Drop {
            race: r,
            column: c,
            position,
            copies,
        } if *r == race && *c == column && copies.has(copy) => {
            for row in out.iter_mut() {
                row[*position] = 0;
            }
        }
        _ => {}
    }
}

/// π*(q) = π_1(π_2(… π_C(q))) from the columns' permutations, in column order.
pub fn compose(perms: &[Vec<u32>]) -> Vec<u32> {
    let n = perms.first().map_or(0, Vec::len);
    (0..n as u32)
        .map(|q| perms.iter().rev().fold(q, |idx, p| p[idx as usize]))
        .collect()
}

/// π*(q) = π_1(π_2(… π_C(q))) for one copy: the input position of each output position.
pub fn path_of(column_seeds: &[[u8; 32]], race: usize, copy: usize, n: usize) -> Vec<u32> {
    let perms: Vec<Vec<u32>> = column_seeds
        .iter()
        .map(|s| permutation(&mut column_stream(s, race, copy), n))
        .collect();
    compose(&perms)
}

/// How long each phase took, the tallies, and the record's head and size.
#[derive(Clone, Debug)]
pub struct Summary {
    pub ballots: usize,
    pub head: [u8; 32],
    pub tallies: Vec<Tally>,
    pub phases: Vec<(&'static str, Duration)>,
    pub entries: u64,
    pub bytes: u64,
}

/// Counts the bytes written.
struct Counting<W> {
    inner: W,
    bytes: u64,
}

impl<W: Write> Write for Counting<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Progress reports: (phase, done, total).
pub type Progress<'a> = &'a (dyn Fn(&str, u64, u64) + Sync);

/// Options of a run.
pub struct RunOptions<'a> {
    pub seeds: Seeds,
    pub cheat: Option<Cheat>,
    pub progress: Option<Progress<'a>>,
    /// Where the last column's output lists wait between mixing and proving, sealed
    /// (`servers::ListStore`, spec/97.13): `None` keeps all 2m lists of every row in memory.
    pub spill: Option<std::path::PathBuf>,
}

impl Default for RunOptions<'_> {
    fn default() -> Self {
        Self {
            seeds: Seeds::os(),
            cheat: None,
            progress: None,
            spill: None,
        }
    }
}

/// Computes `f` for every item, `batch` at a time in parallel, and hands the results to `sink`
/// in order (bounded memory, ordered posting).
fn in_order<T: Sync, U: Send>(
    items: &[T],
    f: impl Fn(&T) -> U + Sync,
    mut sink: impl FnMut(&T, U) -> Result<(), SvError>,
) -> Result<(), SvError> {
    let batch = rayon::current_num_threads().max(1) * 2;
    for chunk in items.chunks(batch) {
        let out: Vec<U> = chunk.par_iter().map(&f).collect();
        for (t, u) in chunk.iter().zip(out) {
            sink(t, u)?;
        }
    }
    Ok(())
}

/// A whole election in one process: `values[race]` holds every ballot's value in that race.
/// Writes the record to `out` and returns what happened.
pub fn run<W: Write>(
    params: &Params,
    election_id: &str,
    values: &[Vec<u128>],
    options: RunOptions<'_>,
    out: W,
) -> Result<Summary, SvError> {
    let n = values.first().map_or(0, |v| v.len());
    if values.len() != params.races.len() || values.iter().any(|v| v.len() != n) {
        return Err(SvError::Vote(format!(
            "values for {} races of unequal lengths, for {} races",
            values.len(),
            params.races.len()
        )));
    }
    if n < 2 || n > u32::MAX as usize {
        return Err(SvError::Vote(format!("{n} ballots: at least 2")));
    }
    for (race, vals) in params.races.iter().zip(values) {
        if let Some(p) = vals.iter().position(|&v| v >= race.zm.modulus()) {
            return Err(SvError::Vote(format!(
                "ballot {p}: value out of range in race {}",
                race.id
            )));
        }
    }
    let report = |phase: &str, done: u64, total: u64| {
        if let Some(p) = options.progress {
            p(phase, done, total)
        }
    };
    let grid = params.grid;
    let (rows, cols, copies) = (grid.rows, grid.cols, params.copies);
    let sharing = grid.sharing();
    let cheat = options.cheat.as_ref();
    let mut phases = Vec::new();

    // setup
    let t = Instant::now();
    let mut board = BoardWriter::new(
        Counting {
            inner: std::io::BufWriter::with_capacity(1 << 20, out),
            bytes: 0,
        },
        MAGIC,
        election_id,
    )?;
    board.append("parameters", "parameters", &params.encode())?;
    let column_seeds: Vec<[u8; 32]> = (0..cols)
        .map(|j| {
            options
                .seeds
                .seed(&[b"column".as_slice(), &[j as u8]].concat())
        })
        .collect();
    let taus: Vec<Vec<[u8; 32]>> = (0..rows)
        .map(|i| {
            (0..copies)
                .map(|k| {
                    options
                        .seeds
                        .seed(&[b"output".as_slice(), &[i as u8, k as u8]].concat())
                })
                .collect()
        })
        .collect();
    let voter_seed = options.seeds.seed(b"voters");
    phases.push(("setup", t.elapsed()));

    // casting
    let t = Instant::now();
    let mut cast: Vec<Vec<CastRow>> = params
        .races
        .iter()
        .map(|_| (0..rows).map(|_| CastRow::default()).collect())
        .collect();
    let chunks: Vec<usize> = (0..n.div_ceil(BALLOTS_PER_ENTRY)).collect();
    let per_ballot = params.races.len() * rows * 2;
    in_order(
        &chunks,
        |&c| {
            let lo = c * BALLOTS_PER_ENTRY;
            let hi = (lo + BALLOTS_PER_ENTRY).min(n);
            let slices: Vec<&[u128]> = values.iter().map(|v| &v[lo..hi]).collect();
            let mut rng = stream("voter", &[&voter_seed, &(c as u64).to_be_bytes()]);
            cast_chunk(params, &slices, &mut rng)
        },
        |&c, chunk| {
            let lo = c * BALLOTS_PER_ENTRY;
            let count = chunk.commitments.len() / per_ballot;
            let mut w = Writer::with_capacity(12 + chunk.commitments.len() * 32);
            w.u64(lo as u64);
            w.u32(count as u32);
            for h in &chunk.commitments {
                w.bytes(h);
            }
            board.append("ballots", &names::ballots(c), &w.into_inner())?;
            for (dst, src) in cast.iter_mut().zip(chunk.rows.iter()) {
                for (d, s) in dst.iter_mut().zip(src) {
                    d.u.extend_from_slice(&s.u);
                    d.v.extend_from_slice(&s.v);
                    d.r.extend_from_slice(&s.r);
                    d.s.extend_from_slice(&s.s);
                }
            }
            report("casting", (lo + count) as u64, n as u64);
            Ok(())
        },
    )?;
    let sealed = n as u64 + u64::from(matches!(cheat, Some(Cheat::BadSeal)));
    board.append("seal", "seal", &sealed.to_be_bytes())?;
    phases.push(("casting", t.elapsed()));

    // mixing: every copy through the grid, a few copies at a time, each row's lists (and roots)
    // kept by that row's last-column server; then the roots
    let t = Instant::now();
    let mut outputs: Vec<Vec<LastColumn>> = Vec::with_capacity(params.races.len());
    for (ri, race) in params.races.iter().enumerate() {
        let inputs: Vec<Vec<u128>> = cast[ri].iter().map(|row| row.shares(&race.zm)).collect();
        let mut last: Vec<LastColumn> = (0..rows)
            .map(|i| {
                let lists = match &options.spill {
                    Some(dir) => ListStore::spilling(race.zm, copies, dir)?,
                    None => ListStore::in_memory(race.zm, copies),
                };
                Ok(LastColumn::new(ri, i, taus[i].clone(), lists))
            })
            .collect::<Result<_, SvError>>()?;
        // a few copies at a time: mixed, rooted and sealed in parallel, then kept in order
        let ks: Vec<usize> = (0..copies).collect();
        for batch in ks.chunks(rayon::current_num_threads().max(1) * 2) {
            let done = batch
                .par_iter()
                .map(|&k| {
                    let mixed = mix_copy(race, ri, &sharing, &column_seeds, &inputs, k, cheat);
                    mixed
                        .into_iter()
                        .enumerate()
                        .map(|(i, list)| {
                            let root = output_root(&race.zm, &taus[i][k], ri, k, i, &list);
                            Ok((last[i].lists.seal(k, list)?, root))
                        })
                        .collect::<Result<Vec<_>, SvError>>()
                })
                .collect::<Result<Vec<_>, SvError>>()?;
            for sealed in done {
                for (col, (list, root)) in last.iter_mut().zip(sealed) {
                    col.store_sealed(list, root)?;
                }
            }
        }
        report("mixing", (ri + 1) as u64, params.races.len() as u64);
        for (i, col) in last.iter().enumerate() {
            let roots = col
                .roots()
                .ok_or_else(|| SvError::Params("a copy was not mixed".into()))?;
            board.append("outputs", &names::outputs(ri, i + 1), &roots)?;
        }
        outputs.push(last);
    }
    phases.push(("mixing", t.elapsed()));

    // proving
    let t = Instant::now();
    let h1 = board.head();
    let checked = cut(&h1, copies);
    let opened: Vec<usize> = (0..copies).filter(|k| !checked.contains(k)).collect();
    let mut w = Writer::default();
    w.bytes(&h1);
    for &k in &checked {
        w.u8(k as u8);
    }
    board.append("challenge", "cut", &w.into_inner())?;
    let mut paths: Vec<Vec<Vec<u32>>> = Vec::new();
    for (ri, race) in params.races.iter().enumerate() {
        let zm = &race.zm;
        let items: Vec<(usize, usize)> = opened
            .iter()
            .flat_map(|&k| (0..rows).map(move |i| (k, i)))
            .collect();
        in_order(
            &items,
            |&(k, i)| -> Result<Vec<u8>, SvError> {
                Ok(opened_payload(
                    zm,
                    &taus[i][k],
                    &outputs[ri][i].lists.get(k)?,
                ))
            },
            |&(k, i), payload| {
                let mut payload = payload?;
                if matches!(cheat, Some(Cheat::BadOpening { race }) if *race == ri)
                    && i == 0
                    && k == opened[0]
                {
                    // the first value off by one
                    let first = zm.get(&payload[32..]).unwrap_or(0);
                    let mut v = Vec::new();
                    zm.put(zm.add(first, 1), &mut v);
                    payload[32..32 + zm.width()].copy_from_slice(&v);
                }
                board.append("opened", &names::opened(ri, k, i + 1), &payload)?;
                Ok(())
            },
        )?;
        let mut race_paths: Vec<Vec<u32>> = checked
            .par_iter()
            .map(|&k| path_of(&column_seeds, ri, k, n))
            .collect();
        if let Some(Cheat::WrongPath { race }) = cheat {
            if *race == ri {
                // the first 40 positions rotated: a permutation still, but not the mix's
                let end = n.min(40);
                race_paths[0][..end].rotate_left(1);
            }
        }
        if let Some(Cheat::RepeatedPath { race }) = cheat {
            if *race == ri {
                race_paths[0][1] = race_paths[0][0];
            }
        }
        let cover = cheat.is_some_and(Cheat::covers);
        for (ci, &k) in checked.iter().enumerate() {
            let path = &race_paths[ci];
            let mut w = Writer::with_capacity(4 * n);
            for &p in path {
                w.u32(p);
            }
            board.append("path", &names::path(ri, k), &w.into_inner())?;
            let mut t: Vec<Vec<(u128, u128)>> = (0..rows)
                .into_par_iter()
                .map(|i| {
                    let inp = &cast[ri][i];
                    let y = outputs[ri][i].lists.get(k)?;
                    Ok(t_values(zm, &taus[i][k], ri, &y, path, &inp.u, &inp.v))
                })
                .collect::<Result<_, SvError>>()?;
            if cover {
                cover_t_values(zm, &sharing, &mut t);
            }
            for (i, row) in t.iter().enumerate() {
                board.append(
                    "tvalues",
                    &names::tvalues(ri, k, i + 1),
                    &encode_t_values(zm, row),
                )?;
            }
        }
        paths.push(race_paths);
        report("proving", (ri + 1) as u64, 2 * params.races.len() as u64);
    }
    let h2 = board.head();
    board.append("challenge", "sides", &h2)?;
    let side_bits = sides(&h2, params.races.len(), n);
    for (ri, race) in params.races.iter().enumerate() {
        let zm = &race.zm;
        let side = &side_bits[ri];
        for i in 0..rows {
            let mut payload = input_halves(zm, &cast[ri][i], side);
            if i == 0 && matches!(cheat, Some(Cheat::BadInputOpening { race }) if *race == ri) {
                // ballot 0's key, one bit off
                payload[zm.width()] ^= 1;
            }
            board.append("inputs", &names::inputs(ri, i + 1), &payload)?;
        }
        let items: Vec<(usize, usize)> = checked
            .iter()
            .enumerate()
            .flat_map(|(ci, _)| (0..rows).map(move |i| (ci, i)))
            .collect();
        in_order(
            &items,
            |&(ci, i)| {
                let k = checked[ci];
                let y = outputs[ri][i].lists.get(k)?;
                Ok(output_halves(zm, &taus[i][k], ri, &y, &paths[ri][ci], side))
            },
            |&(ci, i), payload: Result<Vec<u8>, SvError>| {
                let mut payload = payload?;
                if ci == 0
                    && i == 0
                    && matches!(cheat, Some(Cheat::BadOtherCommitment { race }) if *race == ri)
                {
                    // position 0's other commitment, one bit off
                    payload[zm.width() + 16] ^= 1;
                }
                board.append("halves", &names::halves(ri, checked[ci], i + 1), &payload)?;
                Ok(())
            },
        )?;
        report(
            "proving",
            (params.races.len() + ri + 1) as u64,
            2 * params.races.len() as u64,
        );
    }
    phases.push(("proving", t.elapsed()));

    // tallying: the first opened copy's votes
    let t = Instant::now();
    let mut tallies = Vec::new();
    for (ri, race) in params.races.iter().enumerate() {
        let lists = outputs[ri]
            .iter()
            .map(|col| col.lists.get(opened[0]))
            .collect::<Result<Vec<_>, SvError>>()?;
        let refs: Vec<&[u128]> = lists.iter().map(|l| l.as_slice()).collect();
        let mut tally = tally_of(race, &sharing, &refs);
        if matches!(cheat, Some(Cheat::BadTally { race }) if *race == ri) {
            if let Some(c) = tally.counts.first_mut() {
                *c += 1;
            } else {
                tally.blank += 1;
            }
        }
        board.append("tally", &names::tally(ri), &tally.encode())?;
        tallies.push(tally);
    }
    phases.push(("tallying", t.elapsed()));
    let head = board.head();
    let entries = board.len();
    let counting = board.into_inner()?;
    let bytes = counting.bytes;
    counting
        .inner
        .into_inner()
        .map_err(|e| SvError::Record(e.to_string()))?
        .flush()
        .map_err(|e| SvError::Record(e.to_string()))?;
    Ok(Summary {
        ballots: n,
        head,
        tallies,
        phases,
        entries,
        bytes,
    })
}
