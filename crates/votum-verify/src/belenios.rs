//! A Belenios election's public archive (spec/94): the tar file read one entry at a time, its hash
//! chain of events followed, and every ballot, the tally, the shuffles, the partial decryptions and the
//! result checked. The checks are V-BEL-01..10 (spec/50.9); the functions that make them are in
//! `checks::belenios`.

use std::collections::{HashMap, HashSet, VecDeque};
use std::io::{BufReader, Read};
use std::ops::ControlFlow;
use std::path::Path;

use base64ct::{Base64Unpadded, Encoding};
use rayon::prelude::*;
use serde_json::Value;
use votum_arith::Integer;

use crate::checks::belenios::{
    check_ballot_proofs, check_ballot_signature, check_credentials, check_election, check_partials,
    check_result, check_shuffle, check_tally, check_trustees, decode_tally, field, number, Ballot,
    Ciphertext, Decryption, Election, Kind, Partial, Shuffle, Tally, TrusteeKey,
};
use crate::checks::ivxv::sha256;
use crate::checks::Check;
use crate::options::{BallotWorkers, Intermediates, Options, Progress};
use crate::report::{hex, Ledger, Report};

const BLOCK: usize = 512;
/// The largest entry read (a ballot is about 12 KB; a tally of a million-answer election fits).
const MAX_ENTRY: u64 = 256 << 20;
/// Ballots checked together on the rayon pool, at most this many bytes of them.
const BATCH: usize = 256;
const BATCH_BYTES: usize = 64 << 20;
/// The most bytes of data entries held while they wait for the event that names them (an archive
/// of entries that nothing names would otherwise be read into memory whole).
const MAX_PENDING: usize = 1 << 30;

/// Whether `path` is a file whose first tar entry is Belenios' `BELENIOS` header.
pub fn is_belenios_record(path: &Path) -> bool {
    if !path.is_file() {
        return false;
    }
    let Ok(mut f) = std::fs::File::open(path) else {
        return false;
    };
    let mut block = [0u8; BLOCK];
    f.read_exact(&mut block).is_ok() && block.starts_with(b"BELENIOS\0")
}

/// A tar header: the entry's name and size, its checksum checked (spec/94.1).
fn header(block: &[u8; BLOCK]) -> Result<(String, u64), String> {
    let octal = |field: &[u8], what: &str| -> Result<u64, String> {
        let digits: Vec<u8> = field
            .iter()
            .copied()
            .take_while(|b| *b != 0 && *b != b' ')
            .collect();
        let text = std::str::from_utf8(&digits).map_err(|_| format!("the {what} is not octal"))?;
        u64::from_str_radix(text, 8).map_err(|_| format!("the {what} {text:?} is not octal"))
    };
    let end = block[..100].iter().position(|b| *b == 0).unwrap_or(100);
    let name = std::str::from_utf8(&block[..end])
        .map_err(|_| "an entry's name is not text".to_string())?
        .to_string();
    let size = octal(&block[124..136], "size")?;
    let stated = octal(&block[148..156], "header checksum")?;
    let sum: u64 = block
        .iter()
        .enumerate()
        .map(|(i, b)| {
            if (148..156).contains(&i) {
                32
            } else {
                u64::from(*b)
            }
        })
        .sum();
    if sum != stated {
        return Err(format!("entry {name:?}: the header checksum is wrong"));
    }
    if !matches!(block[156], b'0' | 0) {
        return Err(format!("entry {name:?} is not a plain file"));
    }
    Ok((name, size))
}

/// Where the walk through the events is (spec/94.1, 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Phase {
    Start,
    Ballots,
    Ended,
    Tallied,
    Shuffling,
    Shuffled,
    Decrypting,
    Done,
}

/// A counted ballot's ciphertexts and weight, by credential.
type Counted = HashMap<String, (Integer, Vec<Vec<Ciphertext>>)>;

/// The outcome of one ballot's checks: its tracker, what it adds to the tally (a readable ballot of the
/// election's shape with a listed credential: its credential and ciphertexts), and the check it fails.
type Checked = (
    String,
    Option<(String, Vec<Vec<Ciphertext>>)>,
    Option<(Check, String)>,
);

struct Walk<'o> {
    seen_header: bool,
    names: HashSet<String>,
    /// data entries not yet named by anything: hash → bytes, and their total size
    pending: HashMap<String, Vec<u8>>,
    pending_bytes: usize,
    last_event: Option<(String, u64)>,
    phase: Phase,
    events: u64,
    election: Option<Election>,
    trustees: Option<(Vec<TrusteeKey>, Vec<Kind>)>,
    credentials: HashMap<String, Integer>,
    batch: Vec<(String, Vec<u8>)>,
    batch_bytes: usize,
    ballots: u64,
    counted: Counted,
    tally: Option<(Tally, u64, Integer, String)>,
    partials: Vec<Partial>,
    /// the shuffles in order: owner, the shuffle's bytes, its name in the report
    shuffles: Vec<(Option<u64>, Vec<u8>, String)>,
    result: Option<(Value, String)>,
    /// the election's and the credentials' bytes (what a cluster's workers check ballots with)
    setup_bytes: Option<(Vec<u8>, Vec<u8>)>,
    progress: Option<&'o mut dyn FnMut(Progress) -> ControlFlow<()>>,
    /// where the ballots' signatures and proofs are checked when not here (spec/98.3), and the
    /// batches it holds, in order
    workers: Option<&'o mut dyn BallotWorkers>,
    workers_ready: bool,
    in_flight: VecDeque<Vec<(String, Vec<u8>)>>,
    /// the progress hook or the workers asked to stop
    stopped: bool,
}

impl<'o> Walk<'o> {
    fn new(options: Options<'o>) -> Self {
        Walk {
            seen_header: false,
            names: HashSet::new(),
            pending: HashMap::new(),
            pending_bytes: 0,
            last_event: None,
            phase: Phase::Start,
            events: 0,
            election: None,
            trustees: None,
            credentials: HashMap::new(),
            batch: Vec::new(),
            batch_bytes: 0,
            ballots: 0,
            counted: HashMap::new(),
            tally: None,
            partials: Vec::new(),
            shuffles: Vec::new(),
            result: None,
            setup_bytes: None,
            progress: options.progress,
            workers: options.ballot_workers,
            workers_ready: false,
            in_flight: VecDeque::new(),
            stopped: false,
        }
    }

    /// A data entry named by `hash`, taken from those not yet named.
    fn take(&mut self, hash: &str, what: &str) -> Result<Vec<u8>, String> {
        let data = self.pending.remove(hash).ok_or_else(|| {
            format!("{what} names {hash}, which is not a data entry earlier in the archive, or is named twice")
        })?;
        self.pending_bytes -= data.len();
        Ok(data)
    }

    /// The data entry that field `key` of `v` names (with its hash), taken from the waiting entries.
    fn take_named(
        &mut self,
        v: &Value,
        key: &str,
        what: &str,
    ) -> Result<(String, Vec<u8>), String> {
        let hash = v
            .get(key)
            .and_then(Value::as_str)
            .ok_or_else(|| format!("{what} has no `{key}` hash"))?
            .to_string();
        let data = self.take(&hash, what)?;
        Ok((hash, data))
    }

    /// One entry of the archive. `Err` is a fault of the archive's structure (V-BEL-01).
    fn entry(&mut self, ledger: &mut Ledger, name: &str, content: Vec<u8>) -> Result<(), String> {
        if !self.seen_header {
            if name != "BELENIOS" {
                return Err("the archive does not start with its BELENIOS header".into());
            }
            let h: Value = serde_json::from_slice(&content)
                .map_err(|e| format!("the BELENIOS header is not JSON: {e}"))?;
            if h.get("version").and_then(Value::as_u64) != Some(1) {
                return Err("the BELENIOS header's version is not 1".into());
            }
            self.seen_header = true;
            return Ok(());
        }
        let (hash, kind) = name
            .split_once('.')
            .ok_or_else(|| format!("entry {name:?} is not <sha256>.data.json or .event.json"))?;
        if hash.len() != 64 || !hash.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
            return Err(format!("entry {name:?}: its name is not a SHA-256 in hex"));
        }
        if hex(&sha256(&content)) != hash {
            return Err(format!(
                "entry {name}: its name is not the SHA-256 of its bytes"
            ));
        }
        if !self.names.insert(hash.to_string()) {
            return Err(format!("entry {name} appears twice"));
        }
        match kind {
            "data.json" => {
                self.pending_bytes += content.len();
                if self.pending_bytes > MAX_PENDING {
                    return Err(
                        "more than 1 GiB of data entries wait for an event to name them".into(),
                    );
                }
                self.pending.insert(hash.to_string(), content);
                Ok(())
            }
            "event.json" => self.event(ledger, hash, &content),
            _ => Err(format!("entry {name:?} is neither data nor an event")),
        }
    }

    fn event(&mut self, ledger: &mut Ledger, hash: &str, content: &[u8]) -> Result<(), String> {
        let e: Value = serde_json::from_slice(content)
            .map_err(|err| format!("event {hash} is not JSON: {err}"))?;
        let height = e
            .get("height")
            .and_then(Value::as_u64)
            .ok_or_else(|| format!("event {hash}: no height"))?;
        let parent = e.get("parent").and_then(Value::as_str);
        match (&self.last_event, parent) {
            (None, None) if height == 0 => {}
            (Some((last, h)), Some(p)) if p == last && height == h + 1 => {}
            _ => {
                return Err(format!(
                    "event {hash} (height {height}) does not follow the event before it"
                ))
            }
        }
        self.last_event = Some((hash.to_string(), height));
        self.events += 1;
        let typ = e
            .get("type")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("event {hash}: no type"))?;
        let payload = e.get("payload").and_then(Value::as_str).map(str::to_string);
        let next = match (self.phase, typ) {
            (Phase::Start, "Setup") => Phase::Ballots,
            (Phase::Ballots, "Ballot") => Phase::Ballots,
            (Phase::Ballots, "EndBallots") => Phase::Ended,
            (Phase::Ended, "EncryptedTally") => Phase::Tallied,
            (Phase::Tallied | Phase::Shuffling, "Shuffle") => Phase::Shuffling,
            (Phase::Shuffling, "EndShuffles") => Phase::Shuffled,
            (Phase::Tallied | Phase::Shuffled | Phase::Decrypting, "PartialDecryption") => {
                Phase::Decrypting
            }
            (Phase::Decrypting, "Result") => Phase::Done,
            _ => {
                return Err(format!(
                    "event {hash}: a {typ} event cannot follow the events before it"
                ))
            }
        };
        self.phase = next;
        let needs_payload = !matches!(typ, "EndBallots" | "EndShuffles");
        let payload = match (needs_payload, payload) {
            (true, Some(p)) => Some(self.take(&p, &format!("the {typ} event"))?),
            (false, None) => None,
            (true, None) => return Err(format!("the {typ} event {hash} has no payload")),
            (false, Some(_)) => return Err(format!("the {typ} event {hash} has a payload")),
        };
        match (typ, payload) {
            ("Setup", Some(p)) => self.setup(ledger, &p),
            ("Ballot", Some(p)) => {
                self.batch_bytes += p.len();
                self.batch.push((hash.to_string(), p));
                if self.batch.len() >= BATCH || self.batch_bytes >= BATCH_BYTES {
                    self.flush(ledger, false);
                }
                self.go_on()
            }
            ("EndBallots", None) => {
                self.flush(ledger, true);
                self.go_on()
            }
            ("EncryptedTally", Some(p)) => self.sized_tally(ledger, &p),
            ("Shuffle", Some(p)) => {
                let owned: Value = serde_json::from_slice(&p)
                    .map_err(|e| format!("a shuffle's owner entry: {e}"))?;
                let (_, bytes) = self.take_named(&owned, "payload", "a shuffle's owner entry")?;
                let owner = owned.get("owner").and_then(Value::as_u64);
                let object = format!(
                    "shuffle {} (trustee {})",
                    self.shuffles.len() + 1,
                    owned["owner"]
                );
                self.shuffles.push((owner, bytes, object));
                Ok(())
            }
            ("PartialDecryption", Some(p)) => {
                let owned: Value = serde_json::from_slice(&p)
                    .map_err(|e| format!("a partial decryption's owner entry: {e}"))?;
                let owner = owned
                    .get("owner")
                    .and_then(Value::as_u64)
                    .and_then(|n| usize::try_from(n).ok())
                    .ok_or("a partial decryption's owner is not a number")?;
                let (_, bytes) =
                    self.take_named(&owned, "payload", "a partial decryption's owner entry")?;
                let object = format!("partial decryption of trustee {owner}");
                match serde_json::from_slice::<Value>(&bytes)
                    .map_err(|e| e.to_string())
                    .and_then(|v| Partial::decode(owner, &v, object.clone()))
                {
                    Ok(pd) => self.partials.push(pd),
                    Err(e) => ledger.fail(Check::Bel08, &object, e),
                }
                Ok(())
            }
            ("Result", Some(p)) => {
                let v: Value = serde_json::from_slice(&p)
                    .map_err(|e| format!("the result is not JSON: {e}"))?;
                self.result = Some((v, format!("result {}", &hash[..16])));
                Ok(())
            }
            _ => Ok(()),
        }
    }

    fn setup(&mut self, ledger: &mut Ledger, payload: &[u8]) -> Result<(), String> {
        let v: Value = serde_json::from_slice(payload)
            .map_err(|e| format!("the setup entry is not JSON: {e}"))?;
        let (_, election) = self.take_named(&v, "election", "the setup entry")?;
        let (_, trustees) = self.take_named(&v, "trustees", "the setup entry")?;
        let (_, credentials) = self.take_named(&v, "credentials", "the setup entry")?;
        ledger.examined(Check::Bel02, 1);
        match check_election(&election) {
            Ok(e) => {
                self.trustees = check_trustees(ledger, &e, &trustees, "the trustees");
                self.credentials =
                    check_credentials(ledger, &e.group, &credentials, "the credentials");
                self.election = Some(e);
                self.setup_bytes = Some((election, credentials));
            }
            Err(e) => ledger.error(Check::Bel02, "the election", e),
        }
        Ok(())
    }

    /// `Err` when the progress hook or the workers asked to stop (the reading stops there).
    fn go_on(&self) -> Result<(), String> {
        if self.stopped {
            Err("the verification was stopped before the end of the archive".into())
        } else {
            Ok(())
        }
    }

    /// Checks the waiting ballots (V-BEL-05, 06) and keeps the counted ones: here on the rayon pool, or
    /// on the workers (spec/98.3), a window of batches in flight; `last` collects every batch in flight.
    fn flush(&mut self, ledger: &mut Ledger, last: bool) {
        let batch = std::mem::take(&mut self.batch);
        self.batch_bytes = 0;
        if self.election.is_none() {
            if !batch.is_empty() {
                ledger.error(
                    Check::Bel05,
                    "the ballots",
                    "not checked: the election does not read (V-BEL-02)",
                );
            }
            return;
        }
        if self.workers.is_none() || self.stopped {
            if !self.stopped {
                self.merge(ledger, &batch, None);
            }
            return;
        }
        if !batch.is_empty() {
            self.submit(batch);
        }
        loop {
            let window = self.workers.as_ref().map_or(1, |w| w.window().max(1));
            if self.in_flight.is_empty() || (!last && self.in_flight.len() <= window) {
                break;
            }
            let Some(workers) = self.workers.as_mut() else {
                break;
            };
            let verdicts = workers.collect();
            let Some(oldest) = self.in_flight.pop_front() else {
                break;
            };
            match verdicts {
                ControlFlow::Continue(v) if v.len() == oldest.len() => {
                    self.merge(ledger, &oldest, Some(&v));
                }
                // an answer of the wrong length is no answer: every ballot of it checked here
                ControlFlow::Continue(_) => self.merge(ledger, &oldest, None),
                ControlFlow::Break(()) => {
                    self.stopped = true;
                    break;
                }
            }
        }
    }

    /// Hands a batch to the workers (their setup first, once).
    fn submit(&mut self, batch: Vec<(String, Vec<u8>)>) {
        let Some(workers) = self.workers.as_mut() else {
            return;
        };
        if !self.workers_ready {
            let Some((election, credentials)) = &self.setup_bytes else {
                return;
            };
            if workers
                .setup(&BeleniosBallotChecker::params(election, credentials))
                .is_break()
            {
                self.stopped = true;
                return;
            }
            self.workers_ready = true;
        }
        let texts: Vec<std::borrow::Cow<'_, str>> = batch
            .iter()
            .map(|(_, raw)| String::from_utf8_lossy(raw))
            .collect();
        let refs: Vec<&str> = texts.iter().map(AsRef::as_ref).collect();
        if workers.submit(&refs).is_break() {
            self.stopped = true;
            return;
        }
        self.in_flight.push_back(batch);
    }

    /// Records a batch's verdicts in order: `verdicts[i]` from the workers says that ballot i passed
    /// V-BEL-05 and 06 there; any other ballot (all of them without workers) is checked here, so the
    /// finding is this process's own and a worker cannot make a ballot fail.
    fn merge(
        &mut self,
        ledger: &mut Ledger,
        batch: &[(String, Vec<u8>)],
        verdicts: Option<&[bool]>,
    ) {
        let Some(election) = &self.election else {
            return;
        };
        let credentials = &self.credentials;
        let checked: Vec<Checked> = batch
            .par_iter()
            .enumerate()
            .map(|(i, (_, raw))| {
                let passed = verdicts.is_some_and(|v| v.get(i) == Some(&true));
                check_one(election, credentials, raw, !passed)
            })
            .collect();
        ledger.examined(Check::Bel05, batch.len() as u64);
        ledger.examined(Check::Bel06, batch.len() as u64);
        self.ballots += batch.len() as u64;
        for (tracker, counted, failure) in checked {
            if let Some((credential, cts)) = counted {
                let weight = self
                    .credentials
                    .get(&credential)
                    .cloned()
                    .unwrap_or_default();
                // a revote replaces the credential's earlier ballot (spec/94.4)
                self.counted.insert(credential, (weight, cts));
            }
            if let Some((check, why)) = failure {
                ledger.fail(check, &format!("ballot {tracker}"), why);
            }
        }
        if let Some(progress) = self.progress.as_mut() {
            if progress(Progress::Ballots(self.ballots)).is_break() {
                self.stopped = true;
            }
        }
    }

    fn sized_tally(&mut self, ledger: &mut Ledger, payload: &[u8]) -> Result<(), String> {
        let v: Value = serde_json::from_slice(payload)
            .map_err(|e| format!("the sized tally is not JSON: {e}"))?;
        let (inner, bytes) = self.take_named(&v, "encrypted_tally", "the sized tally")?;
        let object = format!("encrypted tally {}", &inner[..16]);
        let num = v.get("num_tallied").and_then(Value::as_u64);
        let weight = match field(&v, "total_weight", "the sized tally") {
            Ok(Value::Number(n)) => n.as_u64().map(Integer::from),
            Ok(w @ Value::String(_)) => number(w, "total_weight").ok(),
            _ => None,
        };
        let tally = serde_json::from_slice::<Value>(&bytes)
            .map_err(|e| e.to_string())
            .and_then(|t| decode_tally(&t));
        match (num, weight, tally) {
            (Some(n), Some(w), Ok(t)) => self.tally = Some((t, n, w, object)),
            (_, _, Err(e)) => ledger.fail(Check::Bel07, &object, e),
            _ => ledger.fail(
                Check::Bel07,
                &object,
                "num_tallied or total_weight is not a count",
            ),
        }
        Ok(())
    }

    /// The checks that need every event: nothing left unnamed, the tally, the decryptions, the result.
    fn finish(mut self, ledger: &mut Ledger, out: &mut Intermediates) {
        self.flush(ledger, true);
        if self.stopped {
            return;
        }
        ledger.examined(Check::Bel01, self.events);
        if !self.seen_header {
            ledger.error(Check::Bel01, "the archive", "empty: no BELENIOS header");
            return;
        }
        if self.events == 0 {
            ledger.fail(Check::Bel01, "the archive", "no events");
        }
        if !self.pending.is_empty() {
            ledger.fail(
                Check::Bel01,
                "the archive",
                format!("{} data entries are named by no event", self.pending.len()),
            );
        }
        let Some(election) = &self.election else {
            return;
        };
        out.values
            .insert("uuid".into(), serde_json::json!(election.uuid));
        out.values
            .insert("group".into(), serde_json::json!(election.group.name));
        out.values
            .insert("ballots".into(), serde_json::json!(self.ballots));
        out.values
            .insert("counted".into(), serde_json::json!(self.counted.len()));
        if let Some((head, _)) = &self.last_event {
            out.values.insert("head".into(), serde_json::json!(head));
        }
        let questions: Vec<Value> = election
            .questions
            .iter()
            .map(|q| {
                let kind = if q.nh { "mixnet" } else { "homomorphic" };
                serde_json::json!({"question": q.text, "answers": q.names, "blank": q.blank, "kind": kind})
            })
            .collect();
        out.values
            .insert("questions".into(), Value::Array(questions));
        // an archive read before the end (an election in progress) passes what it holds; what it does not
        // hold yet is said, as belenios-tool says "no result to check"
        let not_yet = |ledger: &mut Ledger, checks: &[Check], what: &str| {
            for c in checks {
                ledger.examined(*c, 0);
                ledger.warn(
                    *c,
                    "the archive",
                    format!("nothing to check: the archive ends before {what}"),
                );
            }
        };
        let Some((published, num, weight, object)) = &self.tally else {
            not_yet(
                ledger,
                &[Check::Bel07, Check::Bel10, Check::Bel08, Check::Bel09],
                "the tally",
            );
            return;
        };
        let g = &election.group;
        let shape: Vec<usize> = election.questions.iter().map(|q| q.width()).collect();
        let ballots: Vec<&(Integer, Vec<Vec<Ciphertext>>)> = self.counted.values().collect();
        let computed: Tally = shape
            .iter()
            .enumerate()
            .map(|(qi, width)| {
                if election.questions[qi].nh {
                    // a mixnet question's tally is its ciphertexts, sorted (spec/94.6)
                    let mut list: Vec<Ciphertext> =
                        ballots.iter().map(|(_, cts)| cts[qi][0].clone()).collect();
                    list.sort();
                    return list;
                }
                (0..*width)
                    .into_par_iter()
                    .map(|k| {
                        ballots.iter().fold(
                            (Integer::from(1), Integer::from(1)),
                            |acc, (w, cts)| {
                                let (a, b) = &cts[qi][k];
                                let (a, b) = if *w == 1 {
                                    (a.clone(), b.clone())
                                } else {
                                    (g.pow(a, w), g.pow(b, w))
                                };
                                (g.mul(&acc.0, &a), g.mul(&acc.1, &b))
                            },
                        )
                    })
                    .collect()
            })
            .collect();
        let total: Integer = ballots.iter().map(|(w, _)| w.clone()).sum();
        check_tally(
            ledger,
            published,
            &computed,
            ((*num, ballots.len() as u64), (weight.clone(), total)),
            object,
        );
        let nh = election.questions.iter().any(|q| q.nh);
        if nh && ballots.iter().any(|(w, _)| *w != 1) {
            ledger.fail(
                Check::Bel07,
                object,
                "a ballot of weight other than 1 is counted in an election with a mixnet question",
            );
        }
        let keys_count = self.trustees.as_ref().map(|(k, _)| k.len());
        let decrypted = shuffled(ledger, election, &computed, &self.shuffles, keys_count);
        if nh && self.shuffles.is_empty() && !self.partials.is_empty() {
            ledger.fail(
                Check::Bel10,
                "the shuffles",
                "mixnet answers decrypted with no shuffle: each decrypted answer is linked to its ballot",
            );
        }
        let computed = decrypted;
        let Some((keys, kinds)) = &self.trustees else {
            if !self.partials.is_empty() {
                ledger.error(
                    Check::Bel08,
                    "the partial decryptions",
                    "not checked: the trustees do not verify (V-BEL-03)",
                );
            }
            return;
        };
        if self.partials.is_empty() {
            not_yet(ledger, &[Check::Bel08], "the partial decryptions");
        }
        let valid = check_partials(ledger, election, keys, &computed, &self.partials);
        if self.result.is_none() {
            not_yet(ledger, &[Check::Bel09], "the result");
        }
        if let Some((result, robject)) = &self.result {
            let decryption = Decryption {
                kinds,
                tally: &computed,
                partials: &self.partials,
                valid: &valid,
            };
            if let Some(shown) =
                check_result(ledger, election, &decryption, result, weight, robject)
            {
                out.values.insert("result".into(), Value::Array(shown));
            }
        }
    }
}

/// One ballot: decoded, and with `prove` its signature and proofs checked (V-BEL-05, 06). A ballot that
/// reads, has the election's shape and a listed credential is counted in the recomputed tally even when
/// its signature or proofs fail: those fail V-BEL-05/06, and the tally's check (V-BEL-07) then asks only
/// whether the published tally is these ballots'.
fn check_one(
    election: &Election,
    credentials: &HashMap<String, Integer>,
    raw: &[u8],
    prove: bool,
) -> Checked {
    let tracker = Base64Unpadded::encode_string(&sha256(raw));
    let decoded = serde_json::from_slice::<Value>(raw)
        .map_err(|e| e.to_string())
        .and_then(|v| Ballot::decode(&v));
    let ballot = match decoded {
        Ok(b) => b,
        Err(e) => {
            return (
                tracker,
                None,
                Some((Check::Bel05, format!("does not read: {e}"))),
            )
        }
    };
    let shaped = ballot.answers.len() == election.questions.len()
        && ballot
            .answers
            .iter()
            .zip(&election.questions)
            .all(|(a, q)| a.fits(q));
    let credential = ballot.credential.to_string();
    let failure = if prove {
        check_ballot_signature(election, credentials, raw, &ballot)
            .map_err(|e| (Check::Bel05, e))
            .and_then(|()| check_ballot_proofs(election, &ballot).map_err(|e| (Check::Bel06, e)))
            .err()
    } else {
        None
    };
    let counted = (shaped && credentials.contains_key(&credential)).then(|| {
        let cts = ballot.answers.into_iter().map(|a| a.choices).collect();
        (credential, cts)
    });
    (tracker, counted, failure)
}

/// A Belenios election's ballot checks (V-BEL-05, 06) built from the election's and the credentials'
/// bytes, answering only verdicts: what a cluster's worker runs for `votum verify --scheduler`
/// (spec/98.3). The walk checks again here every ballot that does not pass on the workers.
pub struct BeleniosBallotChecker {
    election: Election,
    credentials: HashMap<String, Integer>,
}

impl BeleniosBallotChecker {
    /// The first bytes of a Belenios election's ballot-check parameters.
    pub const TAG: &'static [u8] = b"belenios-ballots\n";

    /// The parameters: the tag, the election's length (8 bytes, big-endian), the election's bytes,
    /// then the credentials' bytes, each as the archive holds it.
    pub fn params(election: &[u8], credentials: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(Self::TAG.len() + 8 + election.len() + credentials.len());
        out.extend_from_slice(Self::TAG);
        out.extend_from_slice(&(election.len() as u64).to_be_bytes());
        out.extend_from_slice(election);
        out.extend_from_slice(credentials);
        out
    }

    /// Builds the checks from [`Self::params`]; `Err` when they do not read or the election is not one
    /// votum verifies.
    pub fn new(params: &[u8]) -> Result<Self, String> {
        let rest = params
            .strip_prefix(Self::TAG)
            .ok_or("not a Belenios election's ballot-check parameters")?;
        let (len, rest) = rest
            .split_first_chunk::<8>()
            .ok_or("the parameters end early")?;
        let len = usize::try_from(u64::from_be_bytes(*len)).map_err(|e| e.to_string())?;
        if len > rest.len() {
            return Err("the parameters end early".into());
        }
        let (election, credentials) = rest.split_at(len);
        let election = check_election(election)?;
        let mut ledger = Ledger::new(&Check::BEL);
        let credentials =
            check_credentials(&mut ledger, &election.group, credentials, "the credentials");
        Ok(BeleniosBallotChecker {
            election,
            credentials,
        })
    }

    /// Whether each ballot (its JSON text) passes V-BEL-05 and V-BEL-06, in order.
    pub fn check(&self, ballots: &[&str]) -> Vec<bool> {
        ballots
            .par_iter()
            .map(|raw| {
                check_one(&self.election, &self.credentials, raw.as_bytes(), true)
                    .2
                    .is_none()
            })
            .collect()
    }
}

/// The shuffles (V-BEL-10, spec/94.6), each against the lists before it, starting from the tally's mixnet
/// lists; returns the tally that the trustees decrypt: `tally` with each mixnet list replaced by the last
/// shuffle's. A shuffle that fails is reported and the next one is checked against its published output,
/// so that each fault is named once.
fn shuffled(
    ledger: &mut Ledger,
    election: &Election,
    tally: &Tally,
    shuffles: &[(Option<u64>, Vec<u8>, String)],
    trustees: Option<usize>,
) -> Tally {
    let nh: Vec<usize> = (0..election.questions.len())
        .filter(|&i| election.questions[i].nh)
        .collect();
    ledger.examined(Check::Bel10, shuffles.len() as u64);
    if nh.is_empty() {
        if !shuffles.is_empty() {
            ledger.fail(
                Check::Bel10,
                "the shuffles",
                "shuffles in an election without a mixnet question",
            );
        }
        return tally.clone();
    }
    let mut lists: Vec<Vec<Ciphertext>> = nh.iter().map(|&i| tally[i].clone()).collect();
    let mut owners = HashSet::new();
    for (owner, bytes, object) in shuffles {
        match (owner, trustees) {
            (Some(o), Some(count)) if *o >= 1 && *o <= count as u64 => {
                if !owners.insert(*o) {
                    ledger.fail(
                        Check::Bel10,
                        object,
                        format!("trustee {o} already shuffled"),
                    );
                }
            }
            (Some(o), Some(count)) => {
                ledger.fail(
                    Check::Bel10,
                    object,
                    format!("owner {o} is not a trustee (1..={count})"),
                );
            }
            (None, _) => ledger.fail(Check::Bel10, object, "its owner is not a number"),
            (Some(_), None) => {}
        }
        let decoded = serde_json::from_slice::<Value>(bytes)
            .map_err(|e| e.to_string())
            .and_then(|v| Shuffle::decode(&v));
        let shuffle = match decoded {
            Ok(s) if s.lists.len() == nh.len() && s.proofs_len() == nh.len() => s,
            Ok(s) => {
                ledger.fail(
                    Check::Bel10,
                    object,
                    format!(
                        "{} lists and {} proofs for {} mixnet questions",
                        s.lists.len(),
                        s.proofs_len(),
                        nh.len()
                    ),
                );
                continue;
            }
            Err(e) => {
                ledger.fail(Check::Bel10, object, format!("does not read: {e}"));
                continue;
            }
        };
        for (k, &qi) in nh.iter().enumerate() {
            if let Err(e) = check_shuffle(election, &lists[k], &shuffle.lists[k], shuffle.proof(k))
            {
                ledger.fail(Check::Bel10, object, format!("question {}: {e}", qi + 1));
            }
        }
        lists = shuffle.lists;
    }
    if let Some(count) = trustees {
        if !shuffles.is_empty() && owners.len() < count {
            ledger.warn(
                Check::Bel10,
                "the shuffles",
                format!(
                    "{} of {count} trustees shuffled: the mixnet answers' privacy rests on those who did",
                    owners.len()
                ),
            );
        }
    }
    let mut out = tally.clone();
    for (k, &qi) in nh.iter().enumerate() {
        out[qi] = std::mem::take(&mut lists[k]);
    }
    out
}

/// Verifies a Belenios archive (`<uuid>.bel`, spec/94). `options.progress` is told of the ballots
/// checked; with `options.ballot_workers` the ballots' signatures and proofs are checked there
/// (spec/98.3).
pub fn verify_belenios_record(path: &Path, options: Options<'_>) -> (Report, Intermediates) {
    let record = path.display().to_string();
    match std::fs::File::open(path) {
        Ok(f) => verify_belenios_reader(record, BufReader::with_capacity(1 << 20, f), options),
        Err(e) => {
            let mut ledger = Ledger::new(&Check::BEL);
            ledger.error(Check::Bel01, &record, e.to_string());
            (
                ledger.finish(record, "unverified", 0),
                Intermediates::default(),
            )
        }
    }
}

/// Verifies a Belenios archive read from `reader` (named `record` in the report; the fuzz target
/// feeds it bytes).
pub fn verify_belenios_archive(record: String, reader: impl Read) -> (Report, Intermediates) {
    verify_belenios_reader(record, reader, Options::default())
}

fn verify_belenios_reader(
    record: String,
    mut reader: impl Read,
    options: Options<'_>,
) -> (Report, Intermediates) {
    let mut ledger = Ledger::new(&Check::BEL);
    let mut out = Intermediates::default();
    let mut walk = Walk::new(options);
    let failed = read_entries(&mut reader, |name, content| {
        walk.entry(&mut ledger, name, content)
    });
    if walk.stopped {
        // the checks not reached stay not run (spec/50.3)
        return (ledger.finish(record, "belenios", walk.ballots), out);
    }
    if let Err(e) = failed {
        ledger.error(Check::Bel01, "the archive", e);
        return (ledger.finish(record, "belenios", walk.ballots), out);
    }
    let pending = walk.batch.len() + walk.in_flight.iter().map(Vec::len).sum::<usize>();
    let ballots = walk.ballots + pending as u64;
    walk.finish(&mut ledger, &mut out);
    (ledger.finish(record, "belenios", ballots), out)
}

/// Reads the tar entries of `reader` in order, giving each to `each`; stops at the first error.
fn read_entries(
    reader: &mut impl Read,
    mut each: impl FnMut(&str, Vec<u8>) -> Result<(), String>,
) -> Result<(), String> {
    let mut block = [0u8; BLOCK];
    loop {
        match read_block(reader, &mut block)? {
            false => return Ok(()),
            true if block.iter().all(|b| *b == 0) => {
                // the end: only zero blocks may follow
                while read_block(reader, &mut block)? {
                    if block.iter().any(|b| *b != 0) {
                        return Err("data after the archive's end blocks".into());
                    }
                }
                return Ok(());
            }
            true => {}
        }
        let (name, size) = header(&block)?;
        if size > MAX_ENTRY {
            return Err(format!("entry {name:?} is larger than 256 MiB"));
        }
        let mut content = vec![0u8; size as usize];
        reader
            .read_exact(&mut content)
            .map_err(|_| format!("entry {name:?} is cut short"))?;
        let pad = (BLOCK - (size as usize % BLOCK)) % BLOCK;
        let mut padding = vec![0u8; pad];
        reader
            .read_exact(&mut padding)
            .map_err(|_| format!("entry {name:?}'s last block is cut short"))?;
        each(&name, content)?;
    }
}

/// One block; `false` at the end of the file, an error on a partial block.
fn read_block(reader: &mut impl Read, block: &mut [u8; BLOCK]) -> Result<bool, String> {
    let mut got = 0;
    while got < BLOCK {
        match reader.read(&mut block[got..]) {
            Ok(0) if got == 0 => return Ok(false),
            Ok(0) => return Err("the archive ends inside a block".into()),
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.to_string()),
        }
    }
    Ok(true)
}
