//! Voters' devices (spec/97.5): each ballot's votes shared across the rows, each share split into
//! two committed halves; the commitments go to the board and each row's packet to the row's
//! first server. The servers and the whole election (`servers`, `election`) build on this.

// values are indexed [race][ballot]; the index loop says which is which
#![allow(clippy::needless_range_loop)]

use rand_core::RngCore;
use zeroize::Zeroize;

use crate::commit::com;
use crate::field::Zm;
use crate::params::Params;
use crate::stream::key;

/// One row's cast packets for one race: what server (i, 1) holds.
#[derive(Clone, Default)]
pub struct CastRow {
    pub u: Vec<u128>,
    pub v: Vec<u128>,
    pub r: Vec<[u8; 16]>,
    pub s: Vec<[u8; 16]>,
}

impl Drop for CastRow {
    fn drop(&mut self) {
        self.u.zeroize();
        self.v.zeroize();
        self.r.zeroize();
        self.s.zeroize();
    }
}

impl CastRow {
    /// x = u + v, the row's shares.
    pub fn shares(&self, zm: &Zm) -> Vec<u128> {
        self.u
            .iter()
            .zip(&self.v)
            .map(|(&u, &v)| zm.add(u, v))
            .collect()
    }
}

/// A chunk of cast ballots: the public commitments (per ballot, per race, per row: COM(u) ‖ COM(v))
/// and the packets per race and row.
pub struct CastChunk {
    pub commitments: Vec<[u8; 32]>,
    pub rows: Vec<Vec<CastRow>>,
}

/// Voters' devices: casts `values[race][p]` for the ballots of one chunk with randomness `rng`
/// (97.5).
pub fn cast_chunk<R: RngCore>(params: &Params, values: &[&[u128]], rng: &mut R) -> CastChunk {
    let rows = params.grid.rows;
    let sharing = params.grid.sharing();
    let n = values.first().map_or(0, |v| v.len());
    let mut commitments = Vec::with_capacity(n * params.races.len() * rows * 2);
    let mut out: Vec<Vec<CastRow>> = params
        .races
        .iter()
        .map(|_| (0..rows).map(|_| CastRow::default()).collect())
        .collect();
    let mut coefs = vec![0u128; sharing.threshold() - 1];
    let mut shares = vec![0u128; rows];
    for p in 0..n {
        for (ri, race) in params.races.iter().enumerate() {
            let zm = &race.zm;
            for c in coefs.iter_mut() {
                *c = zm.draw(rng);
            }
            sharing.share(zm, values[ri][p], &coefs, &mut shares);
            for (i, &x) in shares.iter().enumerate() {
                let u = zm.draw(rng);
                let v = zm.sub(x, u);
                let (r, s) = (key(rng), key(rng));
                commitments.push(com(u, &r));
                commitments.push(com(v, &s));
                let row = &mut out[ri][i];
                row.u.push(u);
                row.v.push(v);
                row.r.push(r);
                row.s.push(s);
            }
        }
    }
    coefs.zeroize();
    shares.zeroize();
    CastChunk {
        commitments,
        rows: out,
    }
}
