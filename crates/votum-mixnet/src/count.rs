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

/// How a tie is broken (spec/91.4), as the parameters state it (`ties=`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum TieRule {
    /// The lower candidate number is preferred: elected first, kept when one must be eliminated.
    #[default]
    LowerNumber,
    /// No tie is broken: contested seats stay empty, and a ranked count stops at a tie.
    Unresolved,
}

impl TieRule {
    pub fn name(&self) -> &'static str {
        match self {
            TieRule::LowerNumber => "lower-number",
            TieRule::Unresolved => "unresolved",
        }
    }

    pub fn from_name(name: &str) -> Option<TieRule> {
        match name {
            "lower-number" => Some(TieRule::LowerNumber),
            "unresolved" => Some(TieRule::Unresolved),
            _ => None,
        }
    }
}

/// What a tie decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    Elect,
    Eliminate,
}

impl Decision {
    pub fn name(&self) -> &'static str {
        match self {
            Decision::Elect => "elect",
            Decision::Eliminate => "eliminate",
        }
    }
}

/// A tie that decided something (spec/91.4): in which round (0: the first), what, between whom
/// (1-based), and whom the rule chose (none under [`TieRule::Unresolved`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tie {
    pub round: usize,
    pub decision: Decision,
    pub among: Vec<u32>,
    pub chosen: Vec<u32>,
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
    /// Per round, the first included: ballots (STV: weight) with no continuing candidate left
    /// (ranked rules only; empty otherwise). Recomputed, never posted.
    pub exhausted: Vec<u64>,
    /// The STV quota in units of [`STV_SCALE`] (0 under the other rules). Recomputed, never posted.
    pub quota: u64,
    /// Every tie that decided something. Recomputed, never posted.
    pub ties: Vec<Tie>,
}

impl Outcome {
    /// Whether `other` posts the same count: what a record's `result` entry carries (spec/91.7),
    /// the recomputed exhausted counts, quota and ties aside.
    pub fn same_posted(&self, other: &Outcome) -> bool {
        (
            self.valid,
            self.invalid,
            &self.tallies,
            &self.rounds,
            &self.winners,
        ) == (
            other.valid,
            other.invalid,
            &other.tallies,
            &other.rounds,
            &other.winners,
        )
    }
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

/// A tie (spec/91.4) among `level` (0-based candidates, ascending) for `places` of them: under
/// [`TieRule::LowerNumber`] the lower numbers are elected, the higher ones eliminated; under
/// `Unresolved` nobody is chosen. The tie is listed in `found`; returns whom the rule chose.
fn break_tie(
    found: &mut Vec<Tie>,
    (round, decision): (usize, Decision),
    level: &[usize],
    places: usize,
    ties: TieRule,
) -> Vec<usize> {
    let chosen = match (ties, decision) {
        (TieRule::Unresolved, _) => Vec::new(),
        (TieRule::LowerNumber, Decision::Elect) => level[..places].to_vec(),
        (TieRule::LowerNumber, Decision::Eliminate) => level[level.len() - places..].to_vec(),
    };
    let numbers = |cs: &[usize]| cs.iter().map(|&c| c as u32 + 1).collect();
    found.push(Tie {
        round,
        decision,
        among: numbers(level),
        chosen: numbers(&chosen),
    });
    chosen
}

/// The `seats` candidates with most votes, each with at least one; a tie at the last seat is
/// broken by `ties` (and listed in `found`).
fn top(tallies: &[u64], seats: usize, ties: TieRule, found: &mut Vec<Tie>) -> Vec<u32> {
    let mut order: Vec<usize> = (0..tallies.len()).filter(|&c| tallies[c] > 0).collect();
    order.sort_by(|&a, &b| tallies[b].cmp(&tallies[a]).then(a.cmp(&b)));
    // a tie when the first candidate left out has the last seat's tally
    if order.len() <= seats || tallies[order[seats]] != tallies[order[seats - 1]] {
        order.truncate(seats);
        return order.into_iter().map(|c| c as u32 + 1).collect();
    }
    let edge = tallies[order[seats - 1]];
    let clear: Vec<usize> = order
        .iter()
        .copied()
        .filter(|&c| tallies[c] > edge)
        .collect();
    let mut level: Vec<usize> = order.into_iter().filter(|&c| tallies[c] == edge).collect();
    level.sort_unstable();
    let chosen = break_tie(
        found,
        (0, Decision::Elect),
        &level,
        seats - clear.len(),
        ties,
    );
    clear
        .into_iter()
        .chain(chosen)
        .map(|c| c as u32 + 1)
        .collect()
}

/// Counts `rows` of plaintext values for `candidates` candidates under `rule`, ties broken by
/// `ties`.
pub fn count(rule: Rule, ties: TieRule, candidates: usize, rows: &[Vec<u64>]) -> Outcome {
    let n = candidates;
    let mut out = Outcome {
        rule: rule.name(),
        candidates: n,
        valid: 0,
        invalid: 0,
        tallies: vec![0; n],
        rounds: Vec::new(),
        winners: Vec::new(),
        exhausted: Vec::new(),
        quota: 0,
        ties: Vec::new(),
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
            out.winners = top(&out.tallies, rule.seats().min(n), ties, &mut out.ties);
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
                irv(&mut out, &ballots, ties);
            } else {
                stv(&mut out, &ballots, rule.seats(), ties);
            }
        }
    }
    out
}

/// The continuing candidate with fewest votes, to be eliminated in `round`: among several, the
/// higher number under [`TieRule::LowerNumber`] (the tie listed), none under `Unresolved`.
fn lowest(
    tallies: &[u64],
    continuing: &[bool],
    round: usize,
    ties: TieRule,
    found: &mut Vec<Tie>,
) -> Option<usize> {
    let min = (0..tallies.len())
        .filter(|&c| continuing[c])
        .map(|c| tallies[c])
        .min()?;
    let level: Vec<usize> = (0..tallies.len())
        .filter(|&c| continuing[c] && tallies[c] == min)
        .collect();
    if level.len() == 1 {
        return Some(level[0]);
    }
    break_tie(found, (round, Decision::Eliminate), &level, 1, ties).pop()
}

/// Records one round's tallies (the first in `tallies`, later ones in `rounds`) and its exhausted
/// count; returns the round's index.
fn record_round(out: &mut Outcome, tallies: &[u64], exhausted: u64) -> usize {
    if out.exhausted.is_empty() {
        out.tallies = tallies.to_vec();
    } else {
        out.rounds.push(tallies.to_vec());
    }
    out.exhausted.push(exhausted);
    out.exhausted.len() - 1
}

fn irv(out: &mut Outcome, ballots: &[Vec<u32>], ties: TieRule) {
    let n = out.candidates;
    let mut continuing = vec![true; n];
    loop {
        let mut tallies = vec![0u64; n];
        for b in ballots {
            if let Some(&c) = b.iter().find(|&&c| continuing[c as usize - 1]) {
                tallies[c as usize - 1] += 1;
            }
        }
        let active: u64 = tallies.iter().sum();
        let round = record_round(out, &tallies, ballots.len() as u64 - active);
        let left: Vec<usize> = (0..n).filter(|&c| continuing[c]).collect();
        if active == 0 || left.is_empty() {
            return;
        }
        // more than half of the continuing votes: one candidate at most
        if let Some(&c) = left.iter().find(|&&c| 2 * tallies[c] > active) {
            out.winners = vec![c as u32 + 1];
            return;
        }
        match lowest(&tallies, &continuing, round, ties, &mut out.ties) {
            Some(c) => continuing[c] = false,
            None => return,
        }
    }
}

fn stv(out: &mut Outcome, ballots: &[Vec<u32>], seats: usize, ties: TieRule) {
    let n = out.candidates;
    let seats = seats.min(n);
    out.quota = out.valid * STV_SCALE / (seats as u64 + 1) + 1;
    let quota = out.quota;
    // no ballot names anyone: nobody is elected (the fill rule would elect candidates without votes)
    if ballots.iter().all(Vec::is_empty) {
        return;
    }
    let mut continuing = vec![true; n];
    let mut weights = vec![STV_SCALE; ballots.len()];
    while out.winners.len() < seats {
        let mut tallies = vec![0u64; n];
        let mut holder: Vec<Option<usize>> = vec![None; ballots.len()];
        let mut exhausted = 0u64;
        for (i, b) in ballots.iter().enumerate() {
            match b.iter().find(|&&c| continuing[c as usize - 1]) {
                Some(&c) => {
                    tallies[c as usize - 1] += weights[i];
                    holder[i] = Some(c as usize - 1);
                }
                None => exhausted += weights[i],
            }
        }
        let round = record_round(out, &tallies, exhausted);
        let left: Vec<usize> = (0..n).filter(|&c| continuing[c]).collect();
        if left.len() + out.winners.len() <= seats {
            // everyone left is elected, most votes first (the STV family's rule, votes or not)
            let mut rest = left;
            rest.sort_by(|&a, &b| tallies[b].cmp(&tallies[a]).then(a.cmp(&b)));
            out.winners.extend(rest.into_iter().map(|c| c as u32 + 1));
            break;
        }
        let best = left.iter().map(|&c| tallies[c]).max().unwrap_or(0);
        if best >= quota {
            let level: Vec<usize> = left
                .iter()
                .copied()
                .filter(|&c| tallies[c] == best)
                .collect();
            let c = if level.len() == 1 {
                level[0]
            } else {
                match break_tie(&mut out.ties, (round, Decision::Elect), &level, 1, ties).pop() {
                    Some(c) => c,
                    None => break,
                }
            };
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
        } else {
            match lowest(&tallies, &continuing, round, ties, &mut out.ties) {
                Some(c) => continuing[c] = false,
                None => break,
            }
        }
    }
}
