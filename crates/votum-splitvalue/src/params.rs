//! Election parameters (spec/97.1): the grid, the copies, the races, their values and moduli, and
//! the `parameters` payload.

use crate::field::{Zm, MODULUS_LIMIT};
use crate::sharing::Sharing;
use crate::wire::{Reader, Tally, Writer};
use crate::SvError;

/// The write-in alphabet, index 0 … 65 (97.1).
pub const ALPHABET: &str = " ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-'.";
/// The base of write-in values: one more than the alphabet, so no digit is 0.
pub const BASE: u128 = 67;
/// The longest write-in.
pub const MAX_WRITE_IN: u8 = 20;
/// The first bytes of the `parameters` payload.
pub const PARAMS_TAG: &[u8] = b"votum-sv/1";

/// The grid of mix servers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grid {
    pub n_fail: u8,
    pub n_leak: u8,
    pub rows: usize,
    pub cols: usize,
    pub threshold: usize,
}

impl Grid {
    /// The grid for `n_fail` servers that may fail and `n_leak` that may leak.
    pub fn new(n_fail: u8, n_leak: u8) -> Result<Self, SvError> {
        let (f, l) = (n_fail as usize, n_leak as usize);
        let (rows, cols, threshold) = if f == 0 {
            (1 + l, 1 + l, 1 + l)
        } else {
            (2 + f + l, 1 + l, 2 + l)
        };
        if rows > 16 || cols > 16 {
            return Err(SvError::Params(format!(
                "n_fail={n_fail}, n_leak={n_leak} give a {rows}×{cols} grid (at most 16×16)"
            )));
        }
        Ok(Self {
            n_fail,
            n_leak,
            rows,
            cols,
            threshold,
        })
    }

    pub fn sharing(&self) -> Sharing {
        Sharing::new(self.rows, self.threshold)
    }
}

/// One race: candidates and an optional write-in length.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Race {
    pub id: String,
    pub candidates: Vec<String>,
    pub write_in: u8,
    pub zm: Zm,
}

/// A voter's choice in one race.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Choice {
    Blank,
    /// 1-based candidate number.
    Candidate(u32),
    WriteIn(String),
}

/// What a reconstructed value means.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Decoded {
    Blank,
    Candidate(u32),
    WriteIn(String),
    Invalid,
}

fn label_ok(s: &str, max: usize) -> bool {
    !s.is_empty() && s.len() <= max
}

/// The smallest prime above `x`.
pub fn next_prime_above(x: u128) -> u128 {
    let p = rug::Integer::from(x).next_prime();
    p.to_u128().unwrap_or(u128::MAX)
}

impl Race {
    /// The count of a list of values in this race (97.1's decoding).
    pub fn tally(&self, values: impl IntoIterator<Item = u128>) -> Tally {
        let mut t = Tally {
            counts: vec![0; self.candidates.len()],
            ..Tally::default()
        };
        for v in values {
            match self.decode(v) {
                Decoded::Blank => t.blank += 1,
                Decoded::Candidate(c) => t.counts[c as usize - 1] += 1,
                Decoded::WriteIn(s) => *t.write_ins.entry(s).or_default() += 1,
                Decoded::Invalid => t.invalid += 1,
            }
        }
        t
    }

    /// A race; its modulus is the smallest prime above max(B, rows) (97.1).
    pub fn new(
        id: &str,
        candidates: &[String],
        write_in: u8,
        rows: usize,
    ) -> Result<Self, SvError> {
        if !label_ok(id, 64) || !id.bytes().all(|b| b.is_ascii_graphic() || b == b' ') {
            return Err(SvError::Params(format!(
                "race id {id:?}: 1 to 64 printable ASCII characters"
            )));
        }
        if candidates.len() > 65_535 || (candidates.is_empty() && write_in == 0) {
            return Err(SvError::Params(format!(
                "race {id}: 1 to 65,535 candidates, or write-ins"
            )));
        }
        let mut seen = std::collections::BTreeSet::new();
        for c in candidates {
            if !label_ok(c, 64) || !seen.insert(c.as_str()) {
                return Err(SvError::Params(format!(
                    "race {id}: candidate {c:?} empty, longer than 64 bytes or repeated"
                )));
            }
        }
        if write_in > MAX_WRITE_IN {
            return Err(SvError::Params(format!(
                "race {id}: write-ins of {write_in} characters (at most {MAX_WRITE_IN})"
            )));
        }
        let m = next_prime_above(Self::bound(candidates.len(), write_in).max(rows as u128));
        if m >= MODULUS_LIMIT {
            return Err(SvError::Params(format!("race {id}: modulus too large")));
        }
        Ok(Self {
            id: id.to_owned(),
            candidates: candidates.to_vec(),
            write_in,
            zm: Zm::new(m)?,
        })
    }

    /// B: every value is below it.
    fn bound(n: usize, write_in: u8) -> u128 {
        let n = n as u128;
        if write_in == 0 {
            n + 1
        } else {
            n + BASE.pow(u32::from(write_in))
        }
    }

    /// The value of a choice (97.1).
    pub fn encode(&self, choice: &Choice) -> Result<u128, SvError> {
        match choice {
            Choice::Blank => Ok(0),
            Choice::Candidate(c) if (1..=self.candidates.len() as u32).contains(c) => {
                Ok(u128::from(*c))
            }
            Choice::Candidate(c) => Err(SvError::Vote(format!(
                "race {}: no candidate {c} (1 … {})",
                self.id,
                self.candidates.len()
            ))),
            Choice::WriteIn(s) => {
                let len = s.chars().count();
                if len == 0 || len > usize::from(self.write_in) {
                    return Err(SvError::Vote(format!(
                        "race {}: a write-in of {len} characters (1 … {})",
                        self.id, self.write_in
                    )));
                }
                let mut v = 0u128;
                for ch in s.chars().rev() {
                    let idx = ALPHABET.find(ch).filter(|_| ch.is_ascii()).ok_or_else(|| {
                        SvError::Vote(format!(
                            "race {}: write-in character {ch:?} outside the alphabet",
                            self.id
                        ))
                    })?;
                    v = v * BASE + idx as u128 + 1;
                }
                Ok(self.candidates.len() as u128 + v)
            }
        }
    }

    /// What a value means (97.1).
    pub fn decode(&self, v: u128) -> Decoded {
        let n = self.candidates.len() as u128;
        if v == 0 {
            return Decoded::Blank;
        }
        if v <= n {
            return Decoded::Candidate(v as u32);
        }
        if self.write_in == 0 {
            return Decoded::Invalid;
        }
        let mut rest = v - n;
        let mut s = String::new();
        while rest > 0 {
            let d = (rest % BASE) as usize;
            if d == 0 || s.len() == usize::from(self.write_in) {
                return Decoded::Invalid;
            }
            s.push(ALPHABET.as_bytes()[d - 1] as char);
            rest /= BASE;
        }
        Decoded::WriteIn(s)
    }
}

/// The most copies a record may have (2m is written as one byte, and is even).
pub const MAX_COPIES: usize = 254;

/// The floor of the cut's soundness in bits (spec/97.10): records below it are refused (V-SV-02).
pub const CUT_SOUNDNESS_FLOOR: f64 = 128.0;

/// The default 2m: the fewest copies whose cut reaches [`CUT_SOUNDNESS_FLOOR`] (log2 binom(132, 66)
/// ≈ 128.15).
pub const DEFAULT_COPIES: usize = 132;

/// log2 binom(copies, copies / 2), summed as Σ log2((m + i) / i) (exact to f64 rounding).
pub fn cut_soundness_bits(copies: usize) -> f64 {
    let m = copies / 2;
    (1..=m).map(|i| ((m + i) as f64 / i as f64).log2()).sum()
}

/// Everything the `parameters` entry fixes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Params {
    pub grid: Grid,
    /// 2m.
    pub copies: usize,
    pub races: Vec<Race>,
}

/// A race before its modulus is computed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RaceSpec {
    pub id: String,
    pub candidates: Vec<String>,
    pub write_in: u8,
}

impl Params {
    pub fn new(n_fail: u8, n_leak: u8, copies: usize, races: &[RaceSpec]) -> Result<Self, SvError> {
        let grid = Grid::new(n_fail, n_leak)?;
        if !(2..=MAX_COPIES).contains(&copies) || copies % 2 == 1 {
            return Err(SvError::Params(format!(
                "{copies} copies: an even number from 2 to {MAX_COPIES}"
            )));
        }
        if races.is_empty() || races.len() > 64 {
            return Err(SvError::Params(format!("{} races: 1 to 64", races.len())));
        }
        let mut ids = std::collections::BTreeSet::new();
        let mut out = Vec::with_capacity(races.len());
        for r in races {
            if !ids.insert(r.id.as_str()) {
                return Err(SvError::Params(format!("race id {:?} repeated", r.id)));
            }
            out.push(Race::new(&r.id, &r.candidates, r.write_in, grid.rows)?);
        }
        Ok(Self {
            grid,
            copies,
            races: out,
        })
    }

    /// m: the number of checked (and of opened) copies.
    pub fn half(&self) -> usize {
        self.copies / 2
    }

    /// log2 binom(2m, m): the bits a prover must guess to have the cut open exactly the copies it
    /// cheated in (spec/97.10); a Fiat–Shamir prover buys t of them with 2^t attempts.
    pub fn cut_soundness_bits(&self) -> f64 {
        cut_soundness_bits(self.copies)
    }

    /// The `parameters` payload.
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::default();
        w.bytes(PARAMS_TAG);
        w.u8(self.grid.n_fail);
        w.u8(self.grid.n_leak);
        w.u8(self.copies as u8);
        w.u16(self.races.len() as u16);
        for r in &self.races {
            w.str(&r.id);
            w.u16(r.candidates.len() as u16);
            for c in &r.candidates {
                w.str(c);
            }
            w.u8(r.write_in);
            w.bytes(&r.zm.modulus().to_be_bytes());
        }
        w.into_inner()
    }

    /// Reads a `parameters` payload and checks that it is what `Params::new` gives, modulus
    /// included.
    pub fn decode(payload: &[u8]) -> Result<Self, SvError> {
        let mut r = Reader::new(payload, "parameters");
        if r.take(PARAMS_TAG.len())? != PARAMS_TAG {
            return Err(SvError::Decode("parameters: not votum-sv/1".into()));
        }
        let n_fail = r.u8()?;
        let n_leak = r.u8()?;
        let copies = usize::from(r.u8()?);
        let count = r.u16()?;
        let mut specs = Vec::new();
        let mut moduli = Vec::new();
        for _ in 0..count {
            let id = r.str()?;
            let n = r.u16()?;
            let mut candidates = Vec::with_capacity(usize::from(n));
            for _ in 0..n {
                candidates.push(r.str()?);
            }
            let write_in = r.u8()?;
            let mut m = [0u8; 16];
            m.copy_from_slice(r.take(16)?);
            moduli.push(u128::from_be_bytes(m));
            specs.push(RaceSpec {
                id,
                candidates,
                write_in,
            });
        }
        r.end()?;
        let params = Params::new(n_fail, n_leak, copies, &specs)?;
        for (race, m) in params.races.iter().zip(moduli) {
            if race.zm.modulus() != m {
                return Err(SvError::Params(format!(
                    "race {}: modulus {m} where the smallest prime above the values is {}",
                    race.id,
                    race.zm.modulus()
                )));
            }
        }
        Ok(params)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn race(n: usize, l: u8) -> Race {
        let c: Vec<String> = (0..n).map(|i| format!("C{i}")).collect();
        Race::new("r", &c, l, 3).unwrap()
    }

    #[test]
    fn grids_follow_n_fail_and_n_leak() {
        let g = Grid::new(0, 2).unwrap();
        assert_eq!((g.rows, g.cols, g.threshold), (3, 3, 3));
        let g = Grid::new(1, 1).unwrap();
        assert_eq!((g.rows, g.cols, g.threshold), (4, 2, 3));
        assert!(Grid::new(0, 16).is_err());
    }

    #[test]
    fn choices_round_trip_and_junk_is_invalid() {
        let r = race(2, 16);
        assert!(r.zm.modulus() > 2 + 67u128.pow(16));
        for c in [
            Choice::Blank,
            Choice::Candidate(1),
            Choice::Candidate(2),
            Choice::WriteIn("Mickey Mouse".into()),
            Choice::WriteIn("O'Brien-Smith Jr".into()),
            Choice::WriteIn(" ".into()),
        ] {
            let v = r.encode(&c).unwrap();
            let want = match c {
                Choice::Blank => Decoded::Blank,
                Choice::Candidate(i) => Decoded::Candidate(i),
                Choice::WriteIn(s) => Decoded::WriteIn(s),
            };
            assert_eq!(r.decode(v), want);
        }
        assert!(r.encode(&Choice::Candidate(3)).is_err());
        assert!(r.encode(&Choice::WriteIn("é".into())).is_err());
        assert!(r.encode(&Choice::WriteIn("x".repeat(17))).is_err());
        // a 0 digit and a too-long value decode as invalid
        assert_eq!(r.decode(2 + 67), Decoded::Invalid);
        assert_eq!(r.decode(r.zm.modulus() - 1), Decoded::Invalid);
        let plain = race(3, 0);
        assert_eq!(plain.zm.modulus(), 5);
        assert_eq!(plain.decode(4), Decoded::Invalid);
    }

    #[test]
    fn parameters_round_trip_and_a_wrong_modulus_is_refused() {
        let specs = vec![RaceSpec {
            id: "President".into(),
            candidates: vec!["Smith".into(), "Jones".into()],
            write_in: 16,
        }];
        let p = Params::new(0, 2, 24, &specs).unwrap();
        assert!((p.cut_soundness_bits() - 21.366_746_950_949_633).abs() < 1e-9);
        assert!(cut_soundness_bits(DEFAULT_COPIES) >= CUT_SOUNDNESS_FLOOR);
        assert!(cut_soundness_bits(DEFAULT_COPIES - 2) < CUT_SOUNDNESS_FLOOR);
        let bytes = p.encode();
        assert_eq!(Params::decode(&bytes).unwrap(), p);
        let mut bad = bytes.clone();
        let last = bad.len() - 1;
        bad[last] ^= 2;
        assert!(Params::decode(&bad).is_err());
        assert!(Params::decode(&bytes[..bytes.len() - 1]).is_err());
        assert!(Params::new(0, 2, 3, &specs).is_err());
    }
}
