//! The split-value record's checks on decoded values (spec/97.9, V-SV-05..12), as pure
//! functions: the walker (`sv`) calls them in line, and the jobs (`sv_remote`) call them where
//! the record lies. Neither imports the other for them.

// The grid's data is indexed [race][row][copy][position]; index loops say which is which.
#![allow(clippy::needless_range_loop)]

use std::fs::File;
use std::io::Read;
use std::path::Path;

use votum_splitvalue::commit::{com, output_root, ListHasher};
use votum_splitvalue::field::Zm;
use votum_splitvalue::sharing::Sharing;
use votum_splitvalue::wire::{names, Reader};
use votum_splitvalue::SvError;

use crate::checks::Check;
use crate::report::Ledger;

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
