//! What an election is (its parameters, posted first and bound into every later hash) and the
//! generator verifier weights come from: a leaf that the board, the wire codecs and the election
//! driver all use.

use rand_core::RngCore;

use crate::count::{Rule, TieRule};
use crate::MixError;

/// What the election is: posted first, bound into every later hash.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parameters {
    pub election_id: String,
    pub width: usize,
    pub candidates: usize,
    pub rule: Rule,
    /// How the count breaks a tie (spec/91.4): written `ties=unresolved`, or left out for the
    /// default, the lower candidate number.
    pub ties: TieRule,
    pub mixers: usize,
    pub trustees: usize,
    pub quorum: usize,
    /// Each authority's node signing key (Ed25519), authority k (1-based) at k − 1: trustee k when
    /// k ≤ trustees, mixer k when k ≤ mixers (spec/91.9). Empty in a record that one process wrote
    /// (`votum mix` without `--processes`): its entries are then not signed.
    pub signers: Vec<[u8; 32]>,
}

impl Parameters {
    pub fn check(&self) -> Result<(), MixError> {
        let bad = |s: String| Err(MixError::Input(s));
        // spec/80.1's identifier rule, the board file's (the `From` gives it this crate's error)
        votum_hash::board_file::check_election_id(&self.election_id)?;
        if self.candidates == 0 || self.candidates > 1 << 16 {
            return bad(format!("{} candidates (1 to 65,536)", self.candidates));
        }
        if self.width == 0 || self.width > self.candidates.max(1) {
            return bad(format!(
                "width {} (1 to the number of candidates)",
                self.width
            ));
        }
        if self.mixers == 0 || self.trustees == 0 {
            return bad("at least one mixer and one trustee".into());
        }
        if self.quorum == 0 || self.quorum > self.trustees {
            return bad(format!(
                "quorum {} of {} trustees",
                self.quorum, self.trustees
            ));
        }
        if !self.signers.is_empty() && self.signers.len() != self.authorities() {
            return bad(format!(
                "{} signing keys for {} authorities",
                self.signers.len(),
                self.authorities()
            ));
        }
        let seats = self.rule.seats();
        if seats == 0 || seats > self.candidates {
            return bad(format!("{seats} seats for {} candidates", self.candidates));
        }
        match self.rule {
            Rule::Plurality if self.width != 1 => bad("plurality ballots have width 1".into()),
            Rule::KOfN { k, .. } if k != self.width => {
                bad(format!("{k}-of-n ballots have width {k}"))
            }
            _ => Ok(()),
        }
    }

    /// How many authorities the election has: authority k is trustee k and mixer k where those
    /// exist (spec/91.9).
    pub fn authorities(&self) -> usize {
        self.trustees.max(self.mixers)
    }

    /// Whether the parties sign their entries (the parameters name their keys).
    pub fn signed(&self) -> bool {
        !self.signers.is_empty()
    }

    /// The seed of the shuffle generators: the election's own.
    pub fn generators_seed(&self) -> Vec<u8> {
        let mut s = b"votum-mix generators ".to_vec();
        s.extend_from_slice(self.election_id.as_bytes());
        s
    }
}

/// A generator for verifier weights: the caller's bytes mixed with fresh ones from the operating
/// system (a seeded run stays reproducible in what it proves, never in what it checks).
pub fn weights_rng<R: RngCore>(rng: &mut R) -> rand_chacha::ChaCha20Rng {
    use rand_core::SeedableRng;
    let mut seed = [0u8; 32];
    rng.fill_bytes(&mut seed);
    let mut os = [0u8; 32];
    if rand_core::OsRng.try_fill_bytes(&mut os).is_ok() {
        for (s, o) in seed.iter_mut().zip(os) {
            *s ^= o;
        }
    }
    rand_chacha::ChaCha20Rng::from_seed(seed)
}

/// Random rows a voter of `params` may cast.
pub fn random_rows<R: RngCore>(params: &Parameters, voters: usize, rng: &mut R) -> Vec<Vec<u64>> {
    let n = params.candidates as u64;
    let w = params.width;
    let below = |rng: &mut R, m: u64| rng.next_u64() % m.max(1);
    (0..voters)
        .map(|_| {
            let mut row = vec![0u64; w];
            match params.rule {
                Rule::Plurality => row[0] = 1 + below(rng, n),
                _ => {
                    // a random prefix of a random ranking, the rest zeros
                    let mut order: Vec<u64> = (1..=n).collect();
                    for i in (1..order.len()).rev() {
                        let j = below(rng, i as u64 + 1) as usize;
                        order.swap(i, j);
                    }
                    let len = 1 + below(rng, w as u64) as usize;
                    row[..len].copy_from_slice(&order[..len]);
                }
            }
            row
        })
        .collect()
}
