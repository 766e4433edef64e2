//! Counting rules on decrypted rows (spec/91.4). A row lists candidates 1 … n, 0 meaning
//! "nothing here"; a row a rule cannot read is counted as invalid, never guessed at.

/// How to count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// One choice per ballot (width 1); most votes wins.
    Plurality,
    /// Up to `k` distinct choices (width k); the `seats` candidates with most votes win.
    KOfN { k: usize, seats: usize },
    /// Any set of distinct candidates (width n); the `seats` with most approvals win.
    Approval { seats: usize },
    /// Ranked ballots, instant-runoff: one winner.
    InstantRunoff,
    /// Ranked ballots, single transferable vote with the Droop quota and Gregory transfers.
    Stv { seats: usize },
}

impl Rule {
    pub fn name(&self) -> &'static str {
        match self {
            Rule::Plurality => "plurality",
            Rule::KOfN { .. } => "k-of-n",
            Rule::Approval { .. } => "approval",
            Rule::InstantRunoff => "irv",
            Rule::Stv { .. } => "stv",
        }
    }

    pub fn seats(&self) -> usize {
        match self {
            Rule::Plurality | Rule::InstantRunoff => 1,
            Rule::KOfN { seats, .. } | Rule::Approval { seats } | Rule::Stv { seats } => *seats,
        }
    }
}

/// Fixed-point unit of STV vote weights (integer arithmetic, reproducible anywhere).
pub const STV_SCALE: u64 = 1_000_000_000;

/// A count's outcome: first-round (or only) tallies, each elimination/transfer round, winners.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub rule: &'static str,
    pub candidates: usize,
    pub valid: u64,
    pub invalid: u64,
    /// Votes per candidate (index 0 = candidate 1) in the first round; for STV in units of
    /// [`STV_SCALE`].
    pub tallies: Vec<u64>,
    /// Per later round: the tallies (ranked rules only).
    pub rounds: Vec<Vec<u64>>,
    /// Elected candidates (1-based), in order of election.
    pub winners: Vec<u32>,
}

/// Rows of a ranked or approval ballot: distinct candidates in 1..=n, then only zeros.
fn read_list(row: &[u64], n: usize) -> Option<Vec<u32>> {
    let mut out: Vec<u32> = Vec::with_capacity(row.len());
    let mut ended = false;
    for &v in row {
        if v == 0 {
            ended = true;
            continue;
        }
        if ended || v as usize > n || out.contains(&(v as u32)) {
            return None;
        }
        out.push(v as u32);
    }
    Some(out)
}

/// Top `seats` by votes; ties go to the lower candidate number.
fn top(tallies: &[u64], seats: usize) -> Vec<u32> {
    let mut order: Vec<usize> = (0..tallies.len()).collect();
    order.sort_by(|&a, &b| tallies[b].cmp(&tallies[a]).then(a.cmp(&b)));
    order
        .into_iter()
        .take(seats)
        .map(|i| i as u32 + 1)
        .collect()
}

/// Counts `rows` of plaintext values for `candidates` candidates under `rule`.
pub fn count(rule: Rule, candidates: usize, rows: &[Vec<u64>]) -> Outcome {
    let n = candidates;
    let mut out = Outcome {
        rule: rule.name(),
        candidates: n,
        valid: 0,
        invalid: 0,
        tallies: vec![0; n],
        rounds: Vec::new(),
        winners: Vec::new(),
    };
    match rule {
        Rule::Plurality | Rule::KOfN { .. } | Rule::Approval { .. } => {
            let limit = match rule {
                Rule::Plurality => 1,
                Rule::KOfN { k, .. } => k,
                _ => n,
            };
            for row in rows {
                match read_list(row, n) {
                    Some(list) if list.len() <= limit => {
                        out.valid += 1;
                        for c in list {
                            out.tallies[c as usize - 1] += 1;
                        }
                    }
                    _ => out.invalid += 1,
                }
            }
            out.winners = top(&out.tallies, rule.seats().min(n));
        }
        Rule::InstantRunoff | Rule::Stv { .. } => {
            let ballots: Vec<Vec<u32>> = rows
                .iter()
                .filter_map(|r| {
                    let l = read_list(r, n);
                    if l.is_none() {
                        out.invalid += 1;
                    }
                    l
                })
                .collect();
            out.valid = ballots.len() as u64;
            if rule == Rule::InstantRunoff {
                irv(&mut out, &ballots);
            } else {
                stv(&mut out, &ballots, rule.seats());
            }
        }
    }
    out
}

/// The continuing candidate with fewest votes; ties eliminate the higher candidate number.
fn lowest(tallies: &[u64], continuing: &[bool]) -> Option<usize> {
    (0..tallies.len())
        .filter(|&c| continuing[c])
        .min_by(|&a, &b| tallies[a].cmp(&tallies[b]).then(b.cmp(&a)))
}

fn irv(out: &mut Outcome, ballots: &[Vec<u32>]) {
    let n = out.candidates;
    let mut continuing = vec![true; n];
    let mut first = true;
    loop {
        let mut tallies = vec![0u64; n];
        for b in ballots {
            if let Some(&c) = b.iter().find(|&&c| continuing[c as usize - 1]) {
                tallies[c as usize - 1] += 1;
            }
        }
        let active: u64 = tallies.iter().sum();
        if first {
            out.tallies = tallies.clone();
            first = false;
        } else {
            out.rounds.push(tallies.clone());
        }
        let left = continuing.iter().filter(|&&c| c).count();
        if left == 0 {
            return;
        }
        let leader = top(&tallies, 1)[0] as usize - 1;
        if 2 * tallies[leader] > active || left == 1 {
            out.winners = vec![leader as u32 + 1];
            return;
        }
        match lowest(&tallies, &continuing) {
            Some(c) => continuing[c] = false,
            None => return,
        }
    }
}

fn stv(out: &mut Outcome, ballots: &[Vec<u32>], seats: usize) {
    let n = out.candidates;
    let seats = seats.min(n);
    let quota = out.valid * STV_SCALE / (seats as u64 + 1) + 1;
    let mut continuing = vec![true; n];
    let mut weights = vec![STV_SCALE; ballots.len()];
    let mut first = true;
    while out.winners.len() < seats {
        let mut tallies = vec![0u64; n];
        let mut holder: Vec<Option<usize>> = vec![None; ballots.len()];
        for (i, b) in ballots.iter().enumerate() {
            if let Some(&c) = b.iter().find(|&&c| continuing[c as usize - 1]) {
                tallies[c as usize - 1] += weights[i];
                holder[i] = Some(c as usize - 1);
            }
        }
        if first {
            out.tallies = tallies.clone();
            first = false;
        } else {
            out.rounds.push(tallies.clone());
        }
        let left: Vec<usize> = (0..n).filter(|&c| continuing[c]).collect();
        if left.len() + out.winners.len() <= seats {
            // everyone left is elected, most votes first
            let mut rest = left;
            rest.sort_by(|&a, &b| tallies[b].cmp(&tallies[a]).then(a.cmp(&b)));
            out.winners.extend(rest.into_iter().map(|c| c as u32 + 1));
            break;
        }
        let leader = left
            .iter()
            .copied()
            .max_by(|&a, &b| tallies[a].cmp(&tallies[b]).then(b.cmp(&a)));
        match leader {
            Some(c) if tallies[c] >= quota => {
                out.winners.push(c as u32 + 1);
                continuing[c] = false;
                let total = tallies[c];
                let surplus = total - quota;
                for (i, h) in holder.iter().enumerate() {
                    if *h == Some(c) {
                        weights[i] = u64::try_from(
                            u128::from(weights[i]) * u128::from(surplus) / u128::from(total),
                        )
                        .unwrap_or(0);
                    }
                }
            }
            _ => match lowest(&tallies, &continuing) {
                Some(c) => continuing[c] = false,
                None => break,
            },
        }
    }
}
