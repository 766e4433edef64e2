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
    /// An ElectionGuard 2.1 record on the specification's toy parameters is a test's: V-EG21-01 passes it
    /// with a warning instead of failing it (spec/66.1).
    pub allow_toy_parameters: bool,
}

/// A file read whole by a walker that cannot read its format in pieces (a Verificatum session's lists, an
/// IVXV proof file): refused, with a clear error, when larger than 1 GiB and than the memory available now
/// divided by `factor`, the memory its reading takes for each of its bytes (its decoded values, and what
/// else the walker holds beside them). The memory is Linux's `MemAvailable`; elsewhere the limit is 1 GiB.
pub(crate) fn read_whole(path: &std::path::Path, factor: u64) -> Result<Vec<u8>, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if !meta.is_file() {
        return Err(format!("{} is not a file", path.display()));
    }
    let available = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            let line = m.lines().find(|l| l.starts_with("MemAvailable:"))?;
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        })
        .map_or(0, |kib| kib.saturating_mul(1024));
    let limit = (available / factor.max(1)).max(1 << 30);
    if meta.len() > limit {
        return Err(format!(
            "{} holds {} bytes: reading it takes about {factor} times that in memory, and {} bytes are available (files up to {limit} bytes are read)",
            path.display(),
            meta.len(),
            available
        ));
    }
    std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))
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

/// Batches of ballots handed to [`BallotWorkers`] and not merged yet, in record order (spec/98.3): the
/// parameters are sent before the first batch, and a batch is due once more than the workers' window are
/// in flight, or at the end.
pub(crate) struct InFlight<T> {
    queue: std::collections::VecDeque<Vec<T>>,
    set_up: bool,
}

/// A batch due for merging, with its verdicts (`None`: an answer of the wrong length is no answer, and
/// every ballot of it is checked here).
pub(crate) type Due<T> = (Vec<T>, Option<Vec<bool>>);

impl<T> InFlight<T> {
    pub(crate) fn new() -> Self {
        Self {
            queue: std::collections::VecDeque::new(),
            set_up: false,
        }
    }

    /// Hands `batch` to the workers, each item as `text(item)`; the parameters `params()` first, once.
    pub(crate) fn submit(
        &mut self,
        workers: &mut dyn BallotWorkers,
        params: impl FnOnce() -> Vec<u8>,
        batch: Vec<T>,
        text: impl Fn(&T) -> std::borrow::Cow<'_, str>,
    ) -> ControlFlow<()> {
        if !self.set_up {
            workers.setup(&params())?;
            self.set_up = true;
        }
        let texts: Vec<std::borrow::Cow<'_, str>> = batch.iter().map(text).collect();
        let refs: Vec<&str> = texts.iter().map(AsRef::as_ref).collect();
        workers.submit(&refs)?;
        drop(texts);
        self.queue.push_back(batch);
        ControlFlow::Continue(())
    }

    /// Whether no batch is in flight.
    pub(crate) fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// The batches due now, oldest first: those beyond the workers' window, or every one when `last`.
    pub(crate) fn due(
        &mut self,
        workers: &mut dyn BallotWorkers,
        last: bool,
    ) -> ControlFlow<(), Vec<Due<T>>> {
        let mut out = Vec::new();
        while !self.queue.is_empty() && (last || self.queue.len() > workers.window().max(1)) {
            let verdicts = workers.collect()?;
            let Some(oldest) = self.queue.pop_front() else {
                break;
            };
            let verdicts = (verdicts.len() == oldest.len()).then_some(verdicts);
            out.push((oldest, verdicts));
        }
        ControlFlow::Continue(out)
    }
}

/// A 2.x record's ballot-check parameters (spec/98.1): `tag`, the group's name and a newline, K's length (8
/// bytes, big-endian) and K as the record writes it, H_E, then the manifest's bytes as stored.
pub(crate) fn keyed_params(
    tag: &[u8],
    group: &str,
    key: &[u8],
    he: &[u8; 32],
    manifest: &[u8],
) -> Vec<u8> {
    let mut out = Vec::with_capacity(tag.len() + group.len() + 9 + key.len() + 32 + manifest.len());
    out.extend_from_slice(tag);
    out.extend_from_slice(group.as_bytes());
    out.push(b'\n');
    out.extend_from_slice(&(key.len() as u64).to_be_bytes());
    out.extend_from_slice(key);
    out.extend_from_slice(he);
    out.extend_from_slice(manifest);
    out
}

/// [`keyed_params`] read back after `tag`: (the group's name, K's bytes, H_E, the manifest's bytes).
pub(crate) type Keyed<'p> = (&'p [u8], &'p [u8], [u8; 32], &'p [u8]);

/// Reads [`keyed_params`] made with `tag`; `Err` when they are not, or end early.
pub(crate) fn read_keyed_params<'p>(tag: &[u8], params: &'p [u8]) -> Result<Keyed<'p>, String> {
    let rest = params
        .strip_prefix(tag)
        .ok_or("not a 2.x record's ballot-check parameters")?;
    let end = rest
        .iter()
        .position(|b| *b == b'\n')
        .ok_or("the parameters end early")?;
    let (name, rest) = (&rest[..end], &rest[end + 1..]);
    let (len, rest) = rest
        .split_first_chunk::<8>()
        .ok_or("the parameters end early")?;
    let len = usize::try_from(u64::from_be_bytes(*len)).map_err(|e| e.to_string())?;
    if rest.len() < len.saturating_add(32) {
        return Err("the parameters end early".into());
    }
    let (key, rest) = rest.split_at(len);
    let (he, manifest) = rest.split_at(32);
    let he: [u8; 32] = he.try_into().map_err(|_| "H_E is not 32 bytes")?;
    Ok((name, key, he, manifest))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    /// A file within the limit is read; a directory is not a file; a file beyond 1 GiB and beyond the
    /// memory divided by the factor is refused before anything is read (a sparse file: no disk used).
    #[test]
    fn whole_files_are_read_within_the_memory() {
        let dir = tempfile::tempdir().unwrap();
        let small = dir.path().join("small");
        std::fs::write(&small, b"abc").unwrap();
        assert_eq!(super::read_whole(&small, u64::MAX).unwrap(), b"abc");
        assert!(super::read_whole(dir.path(), 4)
            .unwrap_err()
            .contains("not a file"));
        let big = dir.path().join("big");
        let f = std::fs::File::create(&big).unwrap();
        f.set_len((1 << 30) + 1).unwrap();
        let err = super::read_whole(&big, u64::MAX).unwrap_err();
        assert!(err.contains("bytes are available"), "{err}");
    }
}
