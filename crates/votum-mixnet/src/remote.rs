//! Shuffle proofs checked elsewhere (spec/98.3): the hook through which a mixnet election's
//! trustees' checks (`election::run_with`) and the verifier's checks of a mix record
//! (`votum-verify`) hand each proof to other machines and take the verdicts back.

use std::ops::ControlFlow;

/// Checks of shuffle proofs done elsewhere, all in flight at once. Any method answering
/// `ControlFlow::Break` stops the caller.
pub trait ShuffleWorkers {
    /// The record's `parameters` payload and the joint key (encoded), once, before the first proof.
    fn setup(&mut self, parameters: &[u8], joint: &[u8]) -> ControlFlow<()>;
    /// Starts checking the shuffle posted as `payload` (a `mix` entry: the output list, then the
    /// proof) of the encoded list `input` under `context` (the board's head before the entry),
    /// without waiting for it.
    fn submit(&mut self, context: &[u8; 32], input: &[u8], payload: &[u8]) -> ControlFlow<()>;
    /// The verdicts of every shuffle submitted and not yet collected, in order: `Ok(None)` the
    /// proof holds, `Ok(Some(reason))` it does not, `Err(reason)` it could not be checked.
    #[allow(clippy::type_complexity)]
    fn collect(&mut self) -> ControlFlow<(), Vec<Result<Option<String>, String>>>;
    /// Where a mixnet election's mixers compute their shuffles' batches of powers (spec/98.7),
    /// when these workers do that too.
    #[cfg(feature = "prove")]
    fn pows(&mut self) -> Option<&mut dyn votum_shuffle::remote::PowWorkers> {
        None
    }
}
