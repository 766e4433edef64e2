//! The split-value record's checks (spec/97.9, V-SV-02..12), one function per check and object, on
//! decoded values: the walker (`crate::sv`) reads the record's framing, order and chain and calls
//! them in line, and the jobs (`crate::sv_remote`) call them where the record lies. Neither imports
//! the other for them. V-SV-01 (the record reads, its entries come in order) is the walker's own.

// The grid's data is indexed [race][row][copy][position]; index loops say which is which.
#![allow(clippy::needless_range_loop)]

use std::fs::File;
use std::io::Read;
use std::path::Path;

use votum_splitvalue::challenge::cut;
use votum_splitvalue::commit::{com, output_root, ListHasher};
use votum_splitvalue::field::Zm;
use votum_splitvalue::params::{Params, Race, CUT_SOUNDNESS_FLOOR};
use votum_splitvalue::sharing::Sharing;
use votum_splitvalue::wire::{names, Reader, Tally, BALLOTS_PER_ENTRY};
use votum_splitvalue::SvError;

use crate::checks::Check;
use crate::report::{hex, Ledger, Soundness};

/// Where a checked copy's t-values of one row are: in memory, or (when the record is a file) at an
/// offset of it, with the digest the chain absorbed, read again when the halves arrive. A file then
/// costs one row's t-values of memory instead of every checked copy's (1.15 GB at 10^6 voters).
pub(crate) enum TValues {
    Held(Vec<(u128, u128)>),
    InFile {
        offset: u64,
        len: usize,
        digest: [u8; 32],
    },
    Unreadable,
}

/// Reads `len` bytes at `offset` of the record again and checks them against the chain's digest.
pub(crate) fn reread(
    path: &Path,
    offset: u64,
    len: usize,
    digest: &[u8; 32],
) -> Result<Vec<u8>, SvError> {
    use std::io::{Seek, SeekFrom};
    let mut f = File::open(path).map_err(|e| SvError::Record(e.to_string()))?;
    f.seek(SeekFrom::Start(offset))
        .map_err(|e| SvError::Record(e.to_string()))?;
    let mut b = vec![0u8; len];
    f.read_exact(&mut b)
        .map_err(|e| SvError::Record(e.to_string()))?;
    if votum_hash::board::payload_digest(&b) != *digest {
        return Err(SvError::Record(
            "the record changed while it was being verified".into(),
        ));
    }
    Ok(b)
}

/// What a checked copy posted before the sides: its path and, per row, its t-values.
pub(crate) struct Checked {
    pub copy: usize,
    pub path: Option<Vec<u32>>,
    pub t: Vec<TValues>,
}

pub(crate) fn decode_t(
    zm: &Zm,
    payload: &[u8],
    name: &str,
    n: usize,
) -> Result<Vec<(u128, u128)>, SvError> {
    let mut r = Reader::new(payload, name);
    let v = (0..n)
        .map(|_| Ok((r.value(zm)?, r.value(zm)?)))
        .collect::<Result<Vec<_>, SvError>>()?;
    r.end()?;
    Ok(v)
}

/// A decoding failure of `entry` under `check` (an Error: the entry cannot be examined).
pub(crate) fn undecodable(ledger: &mut Ledger, check: Check, name: &str, e: SvError) {
    ledger.error(check, name, e.to_string());
}

/// V-SV-06, one opened copy: its rows' values at each position lie on one polynomial of degree
/// below the threshold; returns the copy's votes, sorted.
pub(crate) fn copy_votes(
    ledger: &mut Ledger,
    zm: &Zm,
    sharing: &Sharing,
    copy_rows: &[Vec<u128>],
    (ri, k): (usize, usize),
    n: usize,
) -> Vec<u128> {
    let mut votes = Vec::with_capacity(n);
    let mut shares = vec![0u128; copy_rows.len()];
    let mut bad = 0u64;
    for q in 0..n {
        for (s, row) in shares.iter_mut().zip(copy_rows) {
            *s = row[q];
        }
        match sharing.value(zm, &shares) {
            Some(v) => votes.push(v),
            None => {
                bad += 1;
                if bad <= 3 {
                    ledger.fail(
                        Check::Sv06,
                        &format!("race {ri}, copy {k}, position {q}"),
                        "the rows' values do not lie on one polynomial of degree below the threshold",
                    );
                }
                votes.push(sharing.reconstruct(zm, &shares));
            }
        }
    }
    ledger.examined(Check::Sv06, n as u64);
    votes.sort_unstable();
    votes
}

/// V-SV-08, one checked copy: per position, its rows' (t^u + t^v) are a sharing of zero.
pub(crate) fn check_t(
    ledger: &mut Ledger,
    zm: &Zm,
    sharing: &Sharing,
    t: &[&[(u128, u128)]],
    (ri, k): (usize, usize),
    n: usize,
) {
    let mut sums = vec![0u128; t.len()];
    let mut bad = 0u64;
    for q in 0..n {
        for (s, row) in sums.iter_mut().zip(t) {
            *s = zm.add(row[q].0, row[q].1);
        }
        if sharing.value(zm, &sums) != Some(0) {
            bad += 1;
            if bad <= 3 {
                ledger.fail(
                    Check::Sv08,
                    &format!("race {ri}, copy {k}, position {q}"),
                    "the rows' t^u + t^v are not a sharing of zero",
                );
            }
        }
    }
    ledger.examined(Check::Sv08, n as u64);
}

/// V-SV-05: an opened copy's row regenerates its root; returns its values when it does.
#[allow(clippy::too_many_arguments)]
pub(crate) fn check_opened(
    ledger: &mut Ledger,
    zm: &Zm,
    payload: &[u8],
    name: &str,
    race: usize,
    copy: usize,
    row: usize,
    n: usize,
    root: &[u8; 32],
) -> Option<Vec<u128>> {
    let mut r = Reader::new(payload, name);
    let parsed = (|| -> Result<([u8; 32], Vec<u128>), SvError> {
        let tau = r.hash()?;
        let y = r.values(zm, n)?;
        r.end()?;
        Ok((tau, y))
    })();
    let (tau, y) = match parsed {
        Ok(x) => x,
        Err(e) => {
            undecodable(ledger, Check::Sv05, name, e);
            return None;
        }
    };
    ledger.examined(Check::Sv05, 1);
    if output_root(zm, &tau, race, copy, row, &y) != *root {
        ledger.fail(
            Check::Sv05,
            name,
            "its seed and values do not regenerate the root posted before the cut",
        );
        return None;
    }
    Some(y)
}

/// V-SV-07: a path is a permutation of 0 … N−1.
pub(crate) fn check_path(
    ledger: &mut Ledger,
    payload: &[u8],
    name: &str,
    n: usize,
) -> Option<Vec<u32>> {
    ledger.examined(Check::Sv07, 1);
    if payload.len() != 4 * n {
        ledger.error(
            Check::Sv07,
            name,
            format!("{} bytes for {n} positions", payload.len()),
        );
        return None;
    }
    let path: Vec<u32> = payload
        .chunks_exact(4)
        .map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let mut seen = vec![false; n];
    for (q, &p) in path.iter().enumerate() {
        match seen.get_mut(p as usize) {
            Some(s) if !*s => *s = true,
            _ => {
                ledger.fail(
                    Check::Sv07,
                    &format!("{name}, position {q}"),
                    format!("input {p} is out of range or already taken"),
                );
                return None;
            }
        }
    }
    Some(path)
}

/// V-SV-09: one row's input halves open the ballots' commitments; returns, per ballot, the
/// opened half's value.
#[allow(clippy::too_many_arguments)]
pub(crate) fn check_inputs(
    ledger: &mut Ledger,
    zm: &Zm,
    payload: &[u8],
    name: &str,
    (race, row): (usize, usize),
    n: usize,
    (rows, races): (usize, usize),
    side: &[u8],
    coms: &[[u8; 32]],
) -> Option<Vec<u128>> {
    let mut r = Reader::new(payload, name);
    let mut values = Vec::with_capacity(n);
    let mut bad = 0u64;
    for p in 0..n {
        let got = (|| -> Result<(u128, [u8; 16]), SvError> { Ok((r.value(zm)?, r.key()?)) })();
        let (v, key) = match got {
            Ok(x) => x,
            Err(e) => {
                undecodable(ledger, Check::Sv09, name, e);
                return None;
            }
        };
        let at = ((p * races + race) * rows + row) * 2 + usize::from(side[p]);
        if com(v, &key) != coms[at] {
            bad += 1;
            if bad <= 3 {
                ledger.fail(
                    Check::Sv09,
                    &format!("race {race}, ballot {p}, row {}", row + 1),
                    format!(
                        "the {} half does not open the ballot's commitment",
                        if side[p] == 0 {
                            "left (u)"
                        } else {
                            "right (v)"
                        }
                    ),
                );
            }
        }
        values.push(v);
    }
    if let Err(e) = r.end() {
        undecodable(ledger, Check::Sv09, name, e);
        return None;
    }
    ledger.examined(Check::Sv09, n as u64);
    Some(values)
}

/// V-SV-10 (the half openings give the root) and V-SV-11 (they differ from their inputs by the
/// t-values) for one checked copy and row.
#[allow(clippy::too_many_arguments)]
pub(crate) fn check_halves(
    ledger: &mut Ledger,
    file: Option<&Path>,
    zm: &Zm,
    payload: &[u8],
    name: &str,
    (race, copy, row): (usize, usize, usize),
    n: usize,
    rows: usize,
    side: &[u8],
    post: &Checked,
    inputs: Option<&[u128]>,
    root: &[u8; 32],
) {
    let Some(path) = post.path.as_deref() else {
        ledger.error(Check::Sv10, name, "the copy's path could not be read");
        return;
    };
    let reread_t;
    let t: Option<&[(u128, u128)]> = match &post.t[row] {
        TValues::Held(v) => Some(v),
        TValues::InFile {
            offset,
            len,
            digest,
        } => {
            let tname = names::tvalues(race, copy, row + 1);
            let got = match file {
                Some(path) => {
                    reread(path, *offset, *len, digest).and_then(|b| decode_t(zm, &b, &tname, n))
                }
                None => Err(SvError::Record("no file to read t-values from".into())),
            };
            match got {
                Ok(v) => {
                    reread_t = v;
                    Some(&reread_t)
                }
                Err(e) => {
                    ledger.error(Check::Sv11, &tname, e.to_string());
                    None
                }
            }
        }
        TValues::Unreadable => None,
    };
    let mut r = Reader::new(payload, name);
    let mut h = ListHasher::new(race as u16, copy as u8, row as u8 + 1, n as u64);
    let mut bad = 0u64;
    for (q, &p) in path.iter().enumerate() {
        let got = (|| -> Result<(u128, [u8; 16], [u8; 32]), SvError> {
            Ok((r.value(zm)?, r.key()?, r.hash()?))
        })();
        let (v, key, other) = match got {
            Ok(x) => x,
            Err(e) => {
                undecodable(ledger, Check::Sv10, name, e);
                return;
            }
        };
        let s = side[p as usize];
        let mine = com(v, &key);
        if s == 0 {
            h.push(&mine, &other);
        } else {
            h.push(&other, &mine);
        }
        if let (Some(inputs), Some(t)) = (inputs, t) {
            let want = if s == 0 { t[q].0 } else { t[q].1 };
            if zm.sub(v, inputs[p as usize * rows + row]) != want {
                bad += 1;
                if bad <= 3 {
                    ledger.fail(
                        Check::Sv11,
                        &format!(
                            "race {race}, copy {copy}, row {}, position {q} (ballot {p})",
                            row + 1
                        ),
                        format!(
                            "the opened {} half minus the input's is not the posted t-value",
                            if s == 0 { "left" } else { "right" }
                        ),
                    );
                }
            }
        }
    }
    if let Err(e) = r.end() {
        undecodable(ledger, Check::Sv10, name, e);
        return;
    }
    ledger.examined(Check::Sv10, 1);
    ledger.examined(Check::Sv11, n as u64);
    if h.finish() != *root {
        ledger.fail(
            Check::Sv10,
            name,
            "the half openings and other commitments do not give the root posted before the cut",
        );
    }
}

/// V-SV-02: the parameters were read; the cut's soundness (a Fiat–Shamir challenge over 2m copies,
/// its level the record's to choose) against its floor, and the sides' (one bit per changed vote).
pub(crate) fn check_parameters(ledger: &mut Ledger, params: &Params) {
    ledger.examined(Check::Sv02, 1);
    ledger.soundness(
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
    ledger.soundness(
        Check::Sv02,
        "parameters",
        Soundness {
            what: "each vote changed in a checked copy (its side, spec/97.10)".into(),
            bits: 1.0,
            floor: None,
        },
    );
}

/// V-SV-03, one ballots entry `name`: it numbers its ballots from `posted` on, holds 1 …
/// `BALLOTS_PER_ENTRY` of them, and `per_ballot` commitments for each. Returns how many it holds, or
/// `None` when it cannot be read (an Error; the walk stops).
pub(crate) fn check_ballots_entry(
    ledger: &mut Ledger,
    payload: &[u8],
    name: &str,
    posted: u64,
    per_ballot: usize,
) -> Option<u32> {
    let mut r = Reader::new(payload, name);
    let parsed = (|| -> Result<(u64, u32), SvError> { Ok((r.u64()?, r.u32()?)) })();
    let (start, count) = match parsed {
        Ok(x) => x,
        Err(err) => {
            undecodable(ledger, Check::Sv03, name, err);
            return None;
        }
    };
    if start != posted || count == 0 || count as usize > BALLOTS_PER_ENTRY {
        ledger.fail(
            Check::Sv03,
            name,
            format!(
                "ballots {start}.. ({count}) where ballot {posted} is next (1 … {BALLOTS_PER_ENTRY} per entry)"
            ),
        );
    }
    let body = &payload[12..];
    if body.len() != count as usize * per_ballot * 32 {
        ledger.error(
            Check::Sv03,
            name,
            format!(
                "{} bytes for {count} ballots of {per_ballot} commitments",
                body.len()
            ),
        );
        return None;
    }
    ledger.examined(Check::Sv03, u64::from(count));
    Some(count)
}

/// V-SV-03, the seal: it counts the `posted` ballots.
pub(crate) fn check_seal(ledger: &mut Ledger, payload: &[u8], posted: u64) {
    match <[u8; 8]>::try_from(payload) {
        Ok(b) if u64::from_be_bytes(b) == posted => {}
        Ok(b) => ledger.fail(
            Check::Sv03,
            "seal",
            format!(
                "seals {} ballots where {posted} were posted",
                u64::from_be_bytes(b)
            ),
        ),
        Err(_) => ledger.error(Check::Sv03, "seal", "not a u64"),
    }
}

/// V-SV-03: an election of fewer than two ballots is refused (one ballot's vote would be its tally).
pub(crate) fn check_enough_ballots(ledger: &mut Ledger, n: usize) -> bool {
    if n < 2 {
        ledger.fail(Check::Sv03, "seal", format!("{n} ballots (at least 2)"));
        return false;
    }
    true
}

/// V-SV-04, the cut: it names the board's head `h1` before it and the copies that head draws.
/// Returns the posted cut when the rest of the record can be read in its layout (m distinct copies
/// in order), `None` otherwise (the walk stops).
pub(crate) fn check_cut(
    ledger: &mut Ledger,
    payload: &[u8],
    h1: &[u8; 32],
    copies: usize,
    m: usize,
) -> Option<Vec<usize>> {
    ledger.examined(Check::Sv04, 1);
    if payload.len() != 32 + m {
        ledger.error(
            Check::Sv04,
            "cut",
            format!("{} bytes (32 + {m})", payload.len()),
        );
        return None;
    }
    let posted_h1 = &payload[..32];
    let posted_cut: Vec<usize> = payload[32..].iter().map(|&k| usize::from(k)).collect();
    if posted_h1 != h1 {
        ledger.fail(
            Check::Sv04,
            "cut",
            format!(
                "drawn from {} where the board's head was {}",
                hex(posted_h1),
                hex(h1)
            ),
        );
    }
    let drawn = cut(h1, copies);
    if posted_cut != drawn {
        ledger.fail(
            Check::Sv04,
            "cut",
            format!("checked copies {posted_cut:?} where the head gives {drawn:?}"),
        );
    }
    let readable = posted_cut.len() == m
        && posted_cut.iter().all(|&k| k < copies)
        && posted_cut.windows(2).all(|p| p[0] < p[1]);
    readable.then_some(posted_cut)
}

/// V-SV-04, the sides: the posted challenge is the board's head `h2` before it.
pub(crate) fn check_sides(ledger: &mut Ledger, payload: &[u8], h2: &[u8; 32]) {
    ledger.examined(Check::Sv04, 1);
    if payload != h2 {
        ledger.fail(
            Check::Sv04,
            "sides",
            format!(
                "drawn from {} where the board's head was {}",
                hex(payload),
                hex(h2)
            ),
        );
    }
}

/// V-SV-06, across opened copies: copy `k`'s sorted votes are copy `first`'s.
pub(crate) fn check_same_votes(
    ledger: &mut Ledger,
    (ri, k): (usize, usize),
    (first, reference): (usize, &[u128]),
    votes: &[u128],
) {
    if reference != votes {
        ledger.fail(
            Check::Sv06,
            &format!("race {ri}, copy {k}"),
            format!(
                "its votes differ from copy {first}'s ({} of {} sorted positions differ)",
                reference.iter().zip(votes).filter(|(a, b)| a != b).count(),
                votes.len()
            ),
        );
    }
}

/// V-SV-12, one race: the posted tally is `want`, the count of the opened votes (`None`: no opened
/// copy could be read). Returns the posted tally when it decodes.
pub(crate) fn check_tally(
    ledger: &mut Ledger,
    payload: &[u8],
    race: &Race,
    name: &str,
    want: Option<&Tally>,
) -> Option<Tally> {
    let t = match Tally::decode(payload, race.candidates.len(), name) {
        Ok(t) => t,
        Err(err) => {
            undecodable(ledger, Check::Sv12, name, err);
            return None;
        }
    };
    ledger.examined(Check::Sv12, 1);
    match want {
        Some(want) if *want != t => ledger.fail(
            Check::Sv12,
            name,
            format!(
                "posts {:?} blank {} invalid {} where the opened votes count {:?} blank {} invalid {}",
                t.counts, t.blank, t.invalid, want.counts, want.blank, want.invalid
            ),
        ),
        Some(_) => {}
        None => ledger.error(Check::Sv12, name, "no opened copy could be read"),
    }
    Some(t)
}
