//! Election sets (spec/92.3): t elections of n_j candidates and k_j selections, and which voters
//! take part in which.

use crate::ChvoteError;

/// The two shapes of the proof of concept's simulation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// One 1-of-3 election.
    Single,
    /// 1-of-3, 1-of-3, and 2-of-10 for the first 10 % of the voters.
    SimpleSample,
}

impl Shape {
    pub fn from_name(name: &str) -> Result<Self, ChvoteError> {
        match name {
            "single" | "SINGLE_VOTE" => Ok(Shape::Single),
            "simple-sample" | "SIMPLE_SAMPLE" => Ok(Shape::SimpleSample),
            _ => Err(ChvoteError::Parameters(format!(
                "no election shape {name:?} (single or simple-sample)"
            ))),
        }
    }
}

/// n, k and the voters' eligibility.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ElectionSet {
    /// n_j per election.
    pub candidates: Vec<usize>,
    /// k_j per election.
    pub selections: Vec<usize>,
    /// For each voter, the elections it takes part in.
    pub eligible: Vec<Vec<bool>>,
}

impl ElectionSet {
    pub fn of_shape(shape: Shape, voters: usize) -> Result<Self, ChvoteError> {
        let set = match shape {
            Shape::Single => Self {
                candidates: vec![3],
                selections: vec![1],
                eligible: vec![vec![true]; voters],
            },
            Shape::SimpleSample => Self {
                candidates: vec![3, 3, 10],
                selections: vec![1, 1, 2],
                eligible: (0..voters)
                    .map(|i| vec![true, true, i < voters / 10])
                    .collect(),
            },
        };
        set.check()?;
        Ok(set)
    }

    pub fn check(&self) -> Result<(), ChvoteError> {
        let bad = |m: String| Err(ChvoteError::Parameters(m));
        if self.candidates.is_empty() || self.candidates.len() != self.selections.len() {
            return bad("elections need candidates and selections".into());
        }
        for (j, (&n, &k)) in self.candidates.iter().zip(&self.selections).enumerate() {
            if k == 0 || k >= n {
                return bad(format!("election {j}: {k} of {n} (need 1 ≤ k < n)"));
            }
        }
        if self.total_candidates() > crate::params::N_MAX {
            return bad("too many candidates".into());
        }
        if self.eligible.is_empty() {
            return bad("no voters".into());
        }
        if self
            .eligible
            .iter()
            .any(|e| e.len() != self.candidates.len())
        {
            return bad("eligibility of another election set".into());
        }
        Ok(())
    }

    pub fn voters(&self) -> usize {
        self.eligible.len()
    }

    pub fn elections(&self) -> usize {
        self.candidates.len()
    }

    /// n = Σ n_j.
    pub fn total_candidates(&self) -> usize {
        self.candidates.iter().sum()
    }

    /// k_i = (e_ij·k_j).
    pub fn k_of(&self, voter: usize) -> Vec<usize> {
        self.eligible[voter]
            .iter()
            .zip(&self.selections)
            .map(|(&e, &k)| if e { k } else { 0 })
            .collect()
    }

    /// The election a candidate (0-based over all elections) belongs to.
    pub fn election_of(&self, candidate: usize) -> usize {
        let mut start = 0;
        for (j, &n) in self.candidates.iter().enumerate() {
            if candidate < start + n {
                return j;
            }
            start += n;
        }
        self.candidates.len()
    }

    /// The first candidate (0-based) of election j.
    pub fn first_candidate(&self, election: usize) -> usize {
        self.candidates[..election].iter().sum()
    }

    /// The canonical bytes the election's digest covers.
    pub fn shape_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for (&n, &k) in self.candidates.iter().zip(&self.selections) {
            out.extend((n as u64).to_be_bytes());
            out.extend((k as u64).to_be_bytes());
        }
        out.extend((self.voters() as u64).to_be_bytes());
        for e in &self.eligible {
            let mut bits = 0u64;
            for (j, &x) in e.iter().enumerate().take(64) {
                bits |= u64::from(x) << j;
            }
            out.extend(bits.to_be_bytes());
        }
        out
    }

    /// Checks a voter's selections (1-based over all candidates, strictly increasing) against its
    /// k_i: exactly k_il selections in each election l.
    pub fn check_selections(&self, voter: usize, selections: &[usize]) -> Result<(), ChvoteError> {
        let bad = |m: String| Err(ChvoteError::Selections(m));
        if voter >= self.voters() {
            return Err(ChvoteError::UnknownVoter(voter));
        }
        if selections.windows(2).any(|w| w[0] >= w[1]) {
            return bad("selections must be strictly increasing".into());
        }
        let n = self.total_candidates();
        if selections.iter().any(|&s| s == 0 || s > n) {
            return bad(format!("a selection outside 1..={n}"));
        }
        let k = self.k_of(voter);
        let mut per = vec![0usize; self.elections()];
        for &s in selections {
            per[self.election_of(s - 1)] += 1;
        }
        if per != k {
            return bad(format!(
                "{per:?} selections per election, the voter's are {k:?}"
            ));
        }
        Ok(())
    }
}
