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
//! - [`chv`]: a CHVote election's record (spec/92.10), streamed likewise.
//!
//! This crate reads and checks; it produces no proof and holds no secret.

pub mod checks;
pub mod chv;
pub mod eg;
pub mod mix;
pub mod report;
pub mod sv;
pub mod sv_remote;

use std::path::Path;

/// Bytes as lowercase hex (heads and digests in reports).
pub(crate) fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

pub use checks::Check;
pub use chv::verify_chvote_record;
pub use eg::{verify_eg_record, BallotWorkers, Intermediates, Options, Progress, ShuffleWorkers};
pub use mix::{check_shuffle_task, verify_mix_record};
pub use report::{CheckResult, Finding, Report, Soundness, Status};
pub use sv::verify_sv_record;
pub use sv_remote::{check_sv_task, SvWorkers};

/// Verifies the record at `path`, whatever its kind: a mix record (spec/91.7, recognised by its
/// first bytes) gets the V-MIX checks; anything else is read as an ElectionGuard 1.4 record
/// (directory or votum archive).
pub fn verify_record(path: &Path, options: Options<'_>) -> (Report, Intermediates) {
    if votum_mixnet::record::is_mix_record(path) {
        verify_mix_record(path, options)
    } else if votum_splitvalue::record::is_sv_record(path) {
        verify_sv_record(path, options)
    } else if votum_chvote::record::is_chvote_record(path) {
        verify_chvote_record(path, options)
    } else {
        verify_eg_record(path, options)
    }
}
