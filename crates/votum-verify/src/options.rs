//! What every kind of record's verification shares: its options (the progress hook, the workers
//! that take heavy checks elsewhere), what it tells its caller as it goes, and the values it
//! recomputed. Below every walker, so none of them imports another's.

use std::collections::BTreeMap;
use std::ops::ControlFlow;

use serde_json::Value;
use votum_record::Kind;

use crate::sv_remote::SvWorkers;

/// What the verifier tells its caller as it goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Progress {
    /// A document of this kind was read (ballots are reported in batches).
    Document(Kind),
    /// This many ballots have been checked so far.
    Ballots(u64),
    /// A mix record's entry (by name) is being checked.
    Entry(String),
}

/// Values the verifier recomputed, for comparison with another verifier (`--dump-intermediates`).
#[derive(Clone, Debug, Default)]
pub struct Intermediates {
    pub values: BTreeMap<String, Value>,
}

/// Options of one verification.
#[derive(Default)]
pub struct Options<'a> {
    /// Told of progress; answering `ControlFlow::Break` stops the verification at once (the report
    /// is then incomplete: checks not reached stay not run). A Python caller stops on Ctrl-C.
    pub progress: Option<&'a mut dyn FnMut(Progress) -> ControlFlow<()>>,
    /// Where an ElectionGuard record's ballots are checked when not here (a cluster, spec/98.3):
    /// the verdicts come back and are merged into this verifier's own ballot box, so the report
    /// is the same as without.
    pub ballot_workers: Option<&'a mut dyn BallotWorkers>,
    /// Where a mix record's shuffle proofs are checked when not here (a cluster, spec/98.3): each
    /// verdict comes back and is reported under V-MIX-04 as the proof's own check would be.
    pub shuffle_workers: Option<&'a mut dyn ShuffleWorkers>,
    /// Where a split-value record's heavy checks run when not here (a cluster, spec/98.3); the
    /// report is the in-process one.
    pub sv_workers: Option<&'a mut dyn SvWorkers>,
}

/// Checks of a mix record's shuffle proofs done elsewhere (spec/98.3): the verifier decodes each
/// output list itself (the next shuffle and the decryption need it) and hands over the proof.
pub use votum_mixnet::remote::ShuffleWorkers;

/// Checks of ballots done elsewhere (spec/98.3), a batch at a time, several batches in flight.
/// Any method answering `ControlFlow::Break` stops the verification (as the progress hook does).
pub trait BallotWorkers {
    /// The ballot-check parameters (spec/98.2), once, before the first batch.
    fn setup(&mut self, params: &[u8]) -> ControlFlow<()>;
    /// Starts checking a batch (each ballot's JSON, in record order) without waiting for it.
    fn submit(&mut self, ballots: &[&str]) -> ControlFlow<()>;
    /// The verdicts of the oldest batch not yet collected, one per ballot: passed every check.
    fn collect(&mut self) -> ControlFlow<(), Vec<bool>>;
    /// How many batches to keep in flight (at least one).
    fn window(&self) -> usize;
}
