//! What a verification found: per check, a status, how many objects were examined, the first failures.

use serde::Serialize;

/// Bytes as lowercase hex (heads and digests in reports).
pub(crate) fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The bytes of a string of hexadecimal digit pairs (either case); `None` for an odd length or a non-digit.
pub(crate) fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

use crate::checks::Check;

/// How many failing objects a report lists per check (the rest are counted).
pub const MAX_FINDINGS: usize = 20;

/// A check's outcome (spec/50.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Everything it covers was examined and is right.
    Pass,
    /// The evidence is wrong.
    Fail,
    /// It could not be evaluated (missing or malformed input).
    Error,
    /// Nothing reached it (an earlier Error).
    NotRun,
}

impl Status {
    pub fn name(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Fail => "FAIL",
            Status::Error => "ERROR",
            Status::NotRun => "not run",
        }
    }
}

/// One failing object and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub object: String,
    pub reason: String,
}

/// One check's part of a report.
#[derive(Clone, Debug, Serialize)]
pub struct CheckResult {
    pub id: &'static str,
    pub title: &'static str,
    pub status: Status,
    /// Objects examined (ballots, guardians, selections, documents: whatever the check covers).
    pub checked: u64,
    /// The first failures and errors.
    pub findings: Vec<Finding>,
    /// Failures and errors beyond those listed.
    pub more: u64,
    /// What is odd but not wrong (the first `MAX_FINDINGS`); never changes the status.
    pub warnings: Vec<Finding>,
}

/// How sound one of the record's proofs is, as its parameters in the record make it (spec/50.1).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Soundness {
    /// Which proof, and what its level counts.
    pub what: String,
    /// -log2 of a cheating prover's chance per attempt (a Fiat–Shamir prover may make many).
    pub bits: f64,
    /// The level below which the spec refuses the record (its check then fails); `None`: reported only.
    pub floor: Option<f64>,
}

/// The whole verification.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// The record as given.
    pub record: String,
    /// Its form ("electionguard-1.4 directory" or "votum archive").
    pub form: &'static str,
    pub ballots: u64,
    pub checks: Vec<CheckResult>,
    /// The soundness of the record's proofs whose level depends on a parameter in the record.
    pub soundness: Vec<Soundness>,
    /// The id of this kind of record's readability check (V-RECORD-01, V-MIX-01, V-SV-01, V-CHV-01):
    /// an Error there means the record could not be read.
    pub readable: &'static str,
    /// The record is in a format version this build does not read (its readability check is then
    /// an Error): a typed fact, so no caller matches message text.
    pub unsupported_version: bool,
}

impl Report {
    /// Whether every check passed (the verifier's exit status is 0 exactly then).
    pub fn passed(&self) -> bool {
        self.checks.iter().all(|c| c.status == Status::Pass)
    }

    /// A check's result (`None` when the check is not one of this record kind's).
    pub fn result(&self, check: Check) -> Option<&CheckResult> {
        self.checks.iter().find(|c| c.id == check.id())
    }

    /// The ids of the checks that did not pass.
    pub fn not_passed(&self) -> Vec<&'static str> {
        self.checks
            .iter()
            .filter(|c| c.status != Status::Pass)
            .map(|c| c.id)
            .collect()
    }
}

/// Collects outcomes while the record is read.
pub(crate) struct Ledger {
    set: Vec<Check>,
    results: Vec<CheckResult>,
    ran: Vec<bool>,
    soundness: Vec<Soundness>,
    /// The kind's readability check (the first of its set).
    readable: &'static str,
    unsupported_version: bool,
}

impl Ledger {
    /// A ledger for the checks `set` (one record kind's, in report order).
    pub(crate) fn new(set: &'static [Check]) -> Self {
        Self {
            set: set.to_vec(),
            results: set
                .iter()
                .map(|c| CheckResult {
                    id: c.id(),
                    title: c.title(),
                    status: Status::NotRun,
                    checked: 0,
                    findings: Vec::new(),
                    more: 0,
                    warnings: Vec::new(),
                })
                .collect(),
            ran: vec![false; set.len()],
            soundness: Vec::new(),
            readable: set.first().map_or("", |c| c.id()),
            unsupported_version: false,
        }
    }

    /// The soundness of a proof of the record; below its floor, `check` fails for `object`.
    pub(crate) fn soundness(&mut self, check: Check, object: &str, level: Soundness) {
        if let Some(floor) = level.floor {
            if level.bits < floor {
                self.fail(
                    check,
                    object,
                    format!(
                        "{}: {:.1} bits, below the floor of {floor} bits",
                        level.what, level.bits
                    ),
                );
            }
        }
        self.soundness.push(level);
    }

    /// Where `check` is in this ledger. A check of another record kind is a bug in the caller, but
    /// what it found must still reach the report: it gets a row of its own after the set's.
    fn index(&mut self, check: Check) -> usize {
        if let Some(i) = self.set.iter().position(|c| *c == check) {
            return i;
        }
        self.set.push(check);
        self.results.push(CheckResult {
            id: check.id(),
            title: check.title(),
            status: Status::NotRun,
            checked: 0,
            findings: Vec::new(),
            more: 0,
            warnings: Vec::new(),
        });
        self.ran.push(false);
        self.set.len() - 1
    }

    /// `n` more objects examined by `check`.
    pub(crate) fn examined(&mut self, check: Check, n: u64) {
        let i = self.index(check);
        self.ran[i] = true;
        self.results[i].checked += n;
    }

    fn note(&mut self, check: Check, status: Status, object: &str, reason: String) {
        let i = self.index(check);
        self.ran[i] = true;
        let r = &mut self.results[i];
        // an Error outranks a Fail: the check could not be completed at all
        if r.status != Status::Error {
            r.status = status;
        }
        if r.findings.len() < MAX_FINDINGS {
            r.findings.push(Finding {
                object: object.to_string(),
                reason,
            });
        } else {
            r.more += 1;
        }
    }

    /// How many objects `check` has examined so far.
    pub(crate) fn checked(&mut self, check: Check) -> u64 {
        let i = self.index(check);
        self.results[i].checked
    }

    /// Something about `object` is odd but not wrong: reported, the status unchanged.
    pub(crate) fn warn(&mut self, check: Check, object: &str, reason: impl Into<String>) {
        let i = self.index(check);
        let w = &mut self.results[i].warnings;
        if w.len() < MAX_FINDINGS {
            w.push(Finding {
                object: object.to_string(),
                reason: reason.into(),
            });
        }
    }

    /// The evidence for `object` is wrong.
    pub(crate) fn fail(&mut self, check: Check, object: &str, reason: impl Into<String>) {
        self.note(check, Status::Fail, object, reason.into());
    }

    /// `check` could not be evaluated for `object`.
    pub(crate) fn error(&mut self, check: Check, object: &str, reason: impl Into<String>) {
        self.note(check, Status::Error, object, reason.into());
    }

    pub(crate) fn finish(mut self, record: String, form: &'static str, ballots: u64) -> Report {
        for (r, ran) in self.results.iter_mut().zip(&self.ran) {
            if *ran && r.status == Status::NotRun {
                r.status = Status::Pass;
            }
        }
        Report {
            record,
            form,
            ballots,
            checks: self.results,
            soundness: self.soundness,
            readable: self.readable,
            unsupported_version: self.unsupported_version,
        }
    }

    /// The record is in a format version this build does not read.
    pub(crate) fn version_refused(&mut self) {
        self.unsupported_version = true;
    }

    /// A board file whose header could not be read: an Error under `check`, and the version told
    /// apart ([`Report::unsupported_version`]).
    pub(crate) fn unreadable(
        &mut self,
        check: Check,
        object: &str,
        e: &votum_hash::board_file::BoardFileError,
    ) {
        if matches!(e, votum_hash::board_file::BoardFileError::Version(_)) {
            self.version_refused();
        }
        self.error(check, object, e.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_finding_under_a_check_outside_the_set_is_reported() {
        let mut ledger = Ledger::new(&Check::MIX);
        for c in Check::MIX {
            ledger.examined(c, 1);
        }
        ledger.fail(Check::Ballot02, "ballot-1", "crypto hash");
        let report = ledger.finish("r".into(), "test", 0);
        assert!(!report.passed());
        let row = report.result(Check::Ballot02).expect("a row of its own");
        assert_eq!(row.status, Status::Fail);
        assert_eq!(row.findings[0].object, "ballot-1");
        assert_eq!(report.checks.len(), Check::MIX.len() + 1);
    }
}
