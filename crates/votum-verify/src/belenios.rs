//! A Belenios election's public archive (spec/94): the tar file read one entry at a time, its hash
//! chain of events followed, and every ballot, the tally, the shuffles, the partial decryptions and the
//! result checked. The checks are V-BEL-01..10 (spec/50.9); the functions that make them are in
//! `checks::belenios`.

use std::collections::{HashMap, HashSet};
use std::io::{BufReader, Read};
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
use crate::options::{Intermediates, Options};
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

struct Walk {
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
}

impl Walk {
    fn new() -> Self {
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
                    self.flush(ledger);
                }
                Ok(())
            }
            ("EndBallots", None) => {
                self.flush(ledger);
                Ok(())
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
            }
            Err(e) => ledger.error(Check::Bel02, "the election", e),
        }
        Ok(())
    }

    /// Checks the waiting ballots (V-BEL-05, 06) on the rayon pool and keeps the counted ones.
    fn flush(&mut self, ledger: &mut Ledger) {
        let batch = std::mem::take(&mut self.batch);
        self.batch_bytes = 0;
        let Some(election) = &self.election else {
            if !batch.is_empty() {
                ledger.error(
                    Check::Bel05,
                    "the ballots",
                    "not checked: the election does not read (V-BEL-02)",
                );
            }
            return;
        };
        let credentials = &self.credentials;
        // a ballot that reads, has the election's shape and a listed credential is counted in the
        // recomputed tally even when its signature or proofs fail: those fail V-BEL-05/06, and the
        // tally's check (V-BEL-07) then asks only whether the published tally is these ballots'
        type Checked = (
            String,
            Option<(String, Vec<Vec<Ciphertext>>)>,
            Option<(Check, String)>,
        );
        let checked: Vec<Checked> = batch
            .par_iter()
            .map(|(_, raw)| {
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
                let failure = check_ballot_signature(election, credentials, raw, &ballot)
                    .map_err(|e| (Check::Bel05, e))
                    .and_then(|()| {
                        check_ballot_proofs(election, &ballot).map_err(|e| (Check::Bel06, e))
                    })
                    .err();
                let counted = (shaped && credentials.contains_key(&credential)).then(|| {
                    let cts = ballot.answers.into_iter().map(|a| a.choices).collect();
                    (credential, cts)
                });
                (tracker, counted, failure)
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
        self.flush(ledger);
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

/// Verifies a Belenios archive (`<uuid>.bel`, spec/94).
pub fn verify_belenios_record(path: &Path, _options: Options<'_>) -> (Report, Intermediates) {
    let record = path.display().to_string();
    match std::fs::File::open(path) {
        Ok(f) => verify_belenios_archive(record, BufReader::with_capacity(1 << 20, f)),
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
pub fn verify_belenios_archive(record: String, mut reader: impl Read) -> (Report, Intermediates) {
    let mut ledger = Ledger::new(&Check::BEL);
    let mut out = Intermediates::default();
    let mut walk = Walk::new();
    let failed = read_entries(&mut reader, |name, content| {
        walk.entry(&mut ledger, name, content)
    });
    if let Err(e) = failed {
        ledger.error(Check::Bel01, "the archive", e);
        return (ledger.finish(record, "belenios", walk.ballots), out);
    }
    let ballots = walk.ballots + walk.batch.len() as u64;
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
