//! votum's independent verifier: an election record checked from the record alone, check by check
//! (spec/50).
//!
//! - [`checks`]: the registry of numbered checks (`V-PARAM-01`, `V-BALLOT-03`, …);
//! - [`report`]: per check a status (pass, fail, error, not run), the objects examined and the first
//!   failures;
//! - [`eg`]: the ElectionGuard 1.4 record, either form (directory or votum archive), streamed one
//!   document at a time with ballots in parallel batches.
//!
//! This crate reads and checks; it produces no proof and holds no secret.

pub mod checks;
pub mod eg;
pub mod report;

pub use checks::Check;
pub use eg::{verify_record, Intermediates, Options, Progress};
pub use report::{CheckResult, Finding, Report, Status};
