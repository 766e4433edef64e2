//! What each party computes and posts, one row at a time (spec/97.5–97.7): the voter's packets,
//! a first-column server's inputs and input halves, one server's pass, a last-column server's
//! outputs, roots, openings, t-values and output halves, and the tally. `election::run` plays
//! every party with these in one process; the server processes of `votum.sv` call the same
//! functions through the bindings.

use zeroize::Zeroize;

use crate::commit::{com, output_root, output_splits};
use crate::election::{CastChunk, CastRow};
use crate::field::Zm;
use crate::params::{Params, Race};
use crate::sharing::Sharing;
use crate::wire::{Reader, Tally, Writer};
use crate::SvError;

/// The packets of a chunk, one payload per row: per ballot, per race, u ‖ v ‖ r ‖ s (97.5).
pub fn encode_packets(params: &Params, chunk: &CastChunk) -> Vec<Vec<u8>> {
    let n = chunk
        .rows
        .first()
        .and_then(|r| r.first())
        .map_or(0, |r| r.u.len());
    (0..params.grid.rows)
        .map(|i| {
            let mut w = Writer::default();
            for p in 0..n {
                for (ri, race) in params.races.iter().enumerate() {
                    let row = &chunk.rows[ri][i];
                    w.value(&race.zm, row.u[p]);
                    w.value(&race.zm, row.v[p]);
                    w.bytes(&row.r[p]);
                    w.bytes(&row.s[p]);
                }
            }
            w.into_inner()
        })
        .collect()
}

/// A first-column server's check of its packet against the posted ballots (97.5): returns the
/// row's split values per race, or the first ballot whose packet does not open its commitments.
pub fn open_packet(
    params: &Params,
    row: usize,
    ballots: &[u8],
    packet: &[u8],
) -> Result<Vec<CastRow>, SvError> {
    let rows = params.grid.rows;
    let races = params.races.len();
    let mut b = Reader::new(ballots, "ballots");
    let first = b.u64()?;
    let count = b.u32()? as usize;
    let coms = b.take(count * races * rows * 64)?;
    b.end()?;
    let mut r = Reader::new(packet, "packet");
    let mut out: Vec<CastRow> = (0..races).map(|_| CastRow::default()).collect();
    for p in 0..count {
        for (ri, race) in params.races.iter().enumerate() {
            let (u, v) = (r.value(&race.zm)?, r.value(&race.zm)?);
            let (rk, sk) = (r.key()?, r.key()?);
            let at = ((p * races + ri) * rows + row) * 64;
            if com(u, &rk) != coms[at..at + 32] || com(v, &sk) != coms[at + 32..at + 64] {
                return Err(SvError::Vote(format!(
                    "ballot {}: the packet for row {} does not open its commitments in race {}",
                    first + p as u64,
                    row + 1,
                    race.id
                )));
            }
            let c = &mut out[ri];
            c.u.push(u);
            c.v.push(v);
            c.r.push(rk);
            c.s.push(sk);
        }
    }
    r.end()?;
    Ok(out)
}

/// A list of N values (a server's input or output list on the wire).
pub fn encode_list(zm: &Zm, values: &[u128]) -> Vec<u8> {
    let mut w = Writer::with_capacity(values.len() * zm.width());
    for &v in values {
        w.value(zm, v);
    }
    w.into_inner()
}

pub fn decode_list(zm: &Zm, bytes: &[u8], what: &str) -> Result<Vec<u128>, SvError> {
    if !bytes.len().is_multiple_of(zm.width()) {
        return Err(SvError::Decode(format!(
            "{what}: {} bytes is not a list of values",
            bytes.len()
        )));
    }
    let mut r = Reader::new(bytes, what);
    let v = r.values(zm, bytes.len() / zm.width())?;
    r.end()?;
    Ok(v)
}

/// The `inputs` entry of one row: per ballot, the half the side picks and its key (97.7 step 6).
pub fn input_halves(zm: &Zm, row: &CastRow, side: &[u8]) -> Vec<u8> {
    let mut w = Writer::with_capacity(row.u.len() * (zm.width() + 16));
    for (p, &s) in side.iter().enumerate() {
        if s == 0 {
            w.value(zm, row.u[p]);
            w.bytes(&row.r[p]);
        } else {
            w.value(zm, row.v[p]);
            w.bytes(&row.s[p]);
        }
    }
    w.into_inner()
}

/// The `opened` entry of one output list: τ ‖ values.
pub fn opened_payload(zm: &Zm, tau: &[u8; 32], y: &[u128]) -> Vec<u8> {
    let mut w = Writer::with_capacity(32 + y.len() * zm.width());
    w.bytes(tau);
    for &v in y {
        w.value(zm, v);
    }
    w.into_inner()
}

/// One row's t-values along `path` (97.7 step 4): (u_out(q) − u_in(path(q)), v_out(q) − v_in(path(q))).
pub fn t_values(
    zm: &Zm,
    tau: &[u8; 32],
    race: usize,
    y: &[u128],
    path: &[u32],
    u_in: &[u128],
    v_in: &[u128],
) -> Vec<(u128, u128)> {
    let mut t = Vec::with_capacity(y.len());
    output_splits(zm, tau, race, y, |q, u, _, v, _| {
        let p = path[q] as usize;
        t.push((zm.sub(u, u_in[p]), zm.sub(v, v_in[p])));
    });
    t
}

pub fn encode_t_values(zm: &Zm, t: &[(u128, u128)]) -> Vec<u8> {
    let mut w = Writer::with_capacity(2 * t.len() * zm.width());
    for &(tu, tv) in t {
        w.value(zm, tu);
        w.value(zm, tv);
    }
    w.into_inner()
}

/// The `halves` entry of one checked output list (97.7 step 6).
pub fn output_halves(
    zm: &Zm,
    tau: &[u8; 32],
    race: usize,
    y: &[u128],
    path: &[u32],
    side: &[u8],
) -> Vec<u8> {
    let mut w = Writer::with_capacity(y.len() * (zm.width() + 48));
    output_splits(zm, tau, race, y, |q, u, r, v, s| {
        if side[path[q] as usize] == 0 {
            w.value(zm, u);
            w.bytes(r);
            w.bytes(&com(v, s));
        } else {
            w.value(zm, v);
            w.bytes(s);
            w.bytes(&com(u, r));
        }
    });
    w.into_inner()
}

/// The count of one opened copy (all its rows' output lists).
pub fn tally_of(race: &Race, sharing: &Sharing, rows: &[&[u128]]) -> Tally {
    let n = rows.first().map_or(0, |r| r.len());
    let mut shares = vec![0u128; rows.len()];
    let votes: Vec<u128> = (0..n)
        .map(|q| {
            for (s, row) in shares.iter_mut().zip(rows) {
                *s = row[q];
            }
            sharing.reconstruct(&race.zm, &shares)
        })
        .collect();
    shares.zeroize();
    Tally::count(race, votes)
}

/// A last-column server's outputs for one race: per copy, its list and its seed τ.
pub struct LastColumn {
    pub race: usize,
    pub row: usize,
    pub taus: Vec<[u8; 32]>,
    pub outputs: Vec<Vec<u128>>,
}

impl Drop for LastColumn {
    fn drop(&mut self) {
        self.taus.zeroize();
        for o in self.outputs.iter_mut() {
            o.zeroize();
        }
    }
}

impl LastColumn {
    /// The `outputs` entry: one root per copy.
    pub fn roots(&self, zm: &Zm) -> Vec<u8> {
        use rayon::prelude::*;
        let roots: Vec<[u8; 32]> = (0..self.outputs.len())
            .into_par_iter()
            .map(|k| output_root(zm, &self.taus[k], self.race, k, self.row, &self.outputs[k]))
            .collect();
        roots.concat()
    }
}
