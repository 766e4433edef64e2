//! votum's independent verifier: an election record checked from the record alone, check by check
//! (spec/50).
//!
//! - [`checks`]: the registry of numbered checks (`V-PARAM-01`, `V-BALLOT-03`, …);
//! - [`report`]: per check a status (pass, fail, error, not run), the objects examined and the first
//!   failures;
//! - [`eg`]: the ElectionGuard 1.4 record, either form (directory or votum archive), streamed one
//!   document at a time with ballots in parallel batches;
//! - [`mix`]: a mixnet election's record (spec/91.7), streamed one board entry at a time;
//! - [`sv`]: a split-value election's record (spec/97.8), streamed likewise;
//! - [`chv`]: a CHVote election's record (spec/92.10), streamed likewise;
//! - [`ivxv`]: Estonia's IVXV decryption proofs (spec/93), with [`asn1`], the strict DER they need;
//! - [`belenios`]: a Belenios election's public archive (spec/94);
//! - [`vmn`]: a Verificatum mix-net session's proofs (spec/99), with [`bytetree`], VMN's encoding;
//! - [`eg2`]: an ElectionGuard 2.x record as egk-ec writes it (spec/65);
//! - [`eg21`]: an ElectionGuard 2.1 record as votum writes it (spec/66).
//!
//! This crate reads and checks; it produces no proof and holds no secret.

pub mod asn1;
pub mod belenios;
pub mod bytetree;
pub mod checks;
pub mod chv;
pub mod eg;
pub mod eg2;
pub mod eg21;
pub mod egrs;
pub mod ivxv;
pub mod mix;
pub mod options;
pub mod report;
pub mod sv;
pub mod vmn;

pub mod sv_remote;

use std::path::Path;

pub use belenios::{
    is_belenios_record, verify_belenios_archive, verify_belenios_record, BeleniosBallotChecker,
};
pub use checks::ivxv::ProofChecker as IvxvProofChecker;
pub use checks::Check;
pub use chv::verify_chvote_record;
pub use eg::verify_eg_record;
pub use eg2::{is_eg2_record, verify_eg2_record, verify_eg2_until_tally, Eg2BallotChecker};
pub use eg21::{is_eg21_record, verify_eg21_record, verify_eg21_until_tally, Eg21BallotRules};
pub use ivxv::{is_ivxv_record, verify_ivxv_record};
pub use mix::{check_shuffle_task, verify_mix_record};
pub use options::{BallotWorkers, Intermediates, Options, Progress, ShuffleWorkers};
pub use report::{CheckResult, Finding, Report, Soundness, Status};
pub use sv::verify_sv_record;
pub use sv_remote::{check_sv_task, SvWorkers};
pub use vmn::{is_vmn_record, verify_vmn_record};

/// The kinds of record the verifier reads, as `--format` names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// an ElectionGuard 1.4 record, directory or votum archive (spec/70)
    ElectionGuard,
    /// a mix record (spec/91.7)
    Mix,
    /// a split-value record (spec/97.8)
    SplitValue,
    /// a CHVote record (spec/92.10)
    Chvote,
    /// a directory of IVXV decryption proofs (spec/93)
    Ivxv,
    /// a Belenios archive (spec/94)
    Belenios,
    /// a Verificatum mix-net session (spec/99)
    Vmn,
    /// an ElectionGuard 2.x record as egk-ec writes it (spec/65)
    Eg2,
    /// electionguard-rust's key-ceremony artifacts (spec/65.10)
    EgRust,
    /// an ElectionGuard 2.1 record as votum writes it (spec/66)
    Eg21,
}

impl Kind {
    /// Every kind with its `--format` name.
    pub const NAMES: [(&'static str, Kind); 10] = [
        ("electionguard", Kind::ElectionGuard),
        ("mix", Kind::Mix),
        ("split-value", Kind::SplitValue),
        ("chvote", Kind::Chvote),
        ("ivxv", Kind::Ivxv),
        ("belenios", Kind::Belenios),
        ("verificatum", Kind::Vmn),
        ("electionguard2", Kind::Eg2),
        ("electionguard-rust", Kind::EgRust),
        ("electionguard2.1", Kind::Eg21),
    ];

    pub fn from_name(name: &str) -> Option<Kind> {
        Kind::NAMES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, k)| *k)
    }

    /// The kind of the record at `path`, from its first bytes or files (anything else is read as
    /// an ElectionGuard 1.4 record).
    pub fn detect(path: &Path) -> Kind {
        if votum_mixnet::record::is_mix_record(path) {
            Kind::Mix
        } else if votum_splitvalue::record::is_sv_record(path) {
            Kind::SplitValue
        } else if votum_chvote::record::is_chvote_record(path) {
            Kind::Chvote
        } else if ivxv::is_ivxv_record(path) {
            Kind::Ivxv
        } else if belenios::is_belenios_record(path) {
            Kind::Belenios
        } else if vmn::is_vmn_record(path) {
            Kind::Vmn
        } else if eg21::is_eg21_record(path) {
            Kind::Eg21
        } else if eg2::is_eg2_record(path) {
            Kind::Eg2
        } else if egrs::is_egrs_record(path) {
            Kind::EgRust
        } else {
            Kind::ElectionGuard
        }
    }

    fn verifier(self) -> (&'static [Check], Verifier) {
        match self {
            Kind::ElectionGuard => (&Check::EG, verify_eg_record),
            Kind::Mix => (&Check::MIX, verify_mix_record),
            Kind::SplitValue => (&Check::SV, verify_sv_record),
            Kind::Chvote => (&Check::CHV, verify_chvote_record),
            Kind::Ivxv => (&Check::IVXV, verify_ivxv_record),
            Kind::Belenios => (&Check::BEL, verify_belenios_record),
            Kind::Vmn => (&Check::VMN, verify_vmn_record),
            Kind::Eg2 => (&Check::EG2, verify_eg2_record),
            Kind::EgRust => (&egrs::CHECKS, egrs::verify_egrs_record),
            Kind::Eg21 => (&Check::EG21, verify_eg21_record),
        }
    }
}

/// Verifies the record at `path`, whatever its kind, recognised by its first bytes ([`Kind::detect`]):
/// a mix record (spec/91.7) gets the V-MIX checks, a split-value record (spec/97.8) the V-SV checks, a
/// CHVote record (spec/92.10) the V-CHV checks, IVXV proofs (spec/93) the V-IVXV checks, a Belenios
/// archive (spec/94) the V-BEL checks, a Verificatum session (spec/99) the V-VMN checks; anything else is read as an ElectionGuard 1.4 record
/// (directory or votum archive, spec/70).
///
/// A panic inside the verifier (a bug: every reader refuses bad input with a finding) never ends the
/// host process: it becomes an Error of the kind's first check, saying that the record was not
/// verified (issue 43, item 5).
pub fn verify_record(path: &Path, options: Options<'_>) -> (Report, Intermediates) {
    verify_record_as(path, None, options)
}

/// [`verify_record`] with the record's kind given (`--format`) instead of detected: a record that is
/// not of that kind fails the kind's first check, saying why it did not read.
pub fn verify_record_as(
    path: &Path,
    kind: Option<Kind>,
    options: Options<'_>,
) -> (Report, Intermediates) {
    // a FIFO, device or socket would block the first read of its kind's bytes (issue 43, item 12):
    // refused before anything reads it, detection included
    if let Ok(meta) = std::fs::metadata(path) {
        if !meta.is_file() && !meta.is_dir() {
            let (checks, _) = kind.unwrap_or(Kind::ElectionGuard).verifier();
            return (
                refused(
                    path,
                    checks,
                    "not a regular file or a directory (a FIFO, device or socket): refused unread",
                ),
                Intermediates::default(),
            );
        }
    }
    let (checks, run) = kind.unwrap_or_else(|| Kind::detect(path)).verifier();
    guarded(path, options, checks, run)
}

/// A report whose first check is an Error saying why the record was not verified.
fn refused(path: &Path, checks: &'static [Check], reason: &str) -> Report {
    let mut ledger = report::Ledger::new(checks);
    ledger.error(checks[0], &path.display().to_string(), reason);
    ledger.finish(path.display().to_string(), "unverified", 0)
}

/// One record kind's verifier.
type Verifier = fn(&Path, Options<'_>) -> (Report, Intermediates);

/// Runs `run`, turning a panic into an Error finding of `checks[0]` (see [`verify_record`]).
fn guarded(
    path: &Path,
    options: Options<'_>,
    checks: &'static [Check],
    run: Verifier,
) -> (Report, Intermediates) {
    // the options hold callbacks; a panic abandons them with the run, nothing observes them after
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(path, options))) {
        Ok(done) => done,
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".into());
            let reason = format!(
                "the verifier stopped on an internal error ({what}): the record is not verified; \
                 this is a bug in votum, please report it"
            );
            (refused(path, checks, &reason), Intermediates::default())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 43, item 12: a FIFO given as the record hung the verifier (reading its first bytes
    /// waits for a writer). It is refused by its type, at once.
    #[test]
    fn a_fifo_is_refused_not_waited_on() {
        let dir = std::env::temp_dir().join(format!("votum-fifo-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("record.vchv");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let (tx, rx) = std::sync::mpsc::channel();
        let path = fifo.clone();
        std::thread::spawn(move || {
            let _ = tx.send(verify_record(&path, Options::default()).0);
        });
        let report = rx
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("the verifier waited on a FIFO");
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(!report.passed());
        let first = &report.checks[0];
        assert_eq!(first.status, Status::Error);
        assert!(
            first.findings[0].reason.contains("not a regular file"),
            "{first:?}"
        );
    }

    #[allow(clippy::panic)]
    fn panics(_: &Path, _: Options<'_>) -> (Report, Intermediates) {
        panic!("an impossible state")
    }

    /// A panic in a verifier is an Error finding that says the record is not verified.
    #[test]
    fn a_panic_is_a_finding_not_an_abort() {
        let (report, _) = guarded(Path::new("r.vchv"), Options::default(), &Check::CHV, panics);
        assert!(!report.passed());
        let first = &report.checks[0];
        assert_eq!(first.id, "V-CHV-01");
        assert_eq!(first.status, Status::Error);
        assert!(first.findings[0].reason.contains("an impossible state"));
        assert!(first.findings[0].reason.contains("not verified"));
    }
}
