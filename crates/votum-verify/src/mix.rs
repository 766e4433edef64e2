//! Verifying a mixnet election's record (spec/91.7, checks V-MIX-01..08 of spec/50.4), one board
//! entry at a time, each entry checked by its function in `checks::mix`: memory holds the list being checked and the one before it, the ballots until
//! the input list is compared with them, and a quorum of decryption shares.

use std::fs::File;
use std::io::{BufReader, Read};
use std::ops::ControlFlow;
use std::path::Path;

use serde_json::json;
use votum_elgamal::Ciphertext;
use votum_group::{Group, GroupId, ModpGroup, Ristretto255};
use votum_hash::board_file::{Bound, MAX_PAYLOAD};
use votum_mixnet::decrypt::DecryptionShare;
use votum_mixnet::params::{weights_rng, Parameters};
use votum_mixnet::record::{Entry, RecordReader};
use votum_mixnet::wire;
use votum_shuffle::{Generators, Rows};

use crate::checks::mix::{
    check_ballots, check_decrypted, check_input, check_mix, check_outcome, check_public_key,
    check_quorum, check_share, check_signature, check_trustee, check_unsigned, record_mix,
    size_mismatch, Signed,
};
use crate::checks::Check;
use crate::options::{Intermediates, Options, Progress, ShuffleWorkers};
use crate::report::{hex, Ledger, Report};

/// The form name reports give a mix record.
pub const FORM: &str = "votum mix record";

/// Verifies the mix record at `path`, every V-MIX check.
pub fn verify_mix_record(path: &Path, options: Options<'_>) -> (Report, Intermediates) {
    let name = path.display().to_string();
    match File::open(path) {
        Ok(f) => verify_mix_stream(BufReader::with_capacity(1 << 20, f), &name, options),
        Err(e) => {
            let mut ledger = Ledger::new(&Check::MIX);
            ledger.error(Check::Mix01, &name, e.to_string());
            (
                ledger.finish(name, "unreadable", 0),
                Intermediates::default(),
            )
        }
    }
}

/// Verifies a mix record read from `input` (`name` is how the report names it).
pub fn verify_mix_stream<R: Read>(
    input: R,
    name: &str,
    options: Options<'_>,
) -> (Report, Intermediates) {
    let mut ledger = Ledger::new(&Check::MIX);
    let mut out = Intermediates::default();
    let mut reader = match RecordReader::open(input) {
        Ok(r) => r,
        Err(e) => {
            ledger.unreadable(Check::Mix01, name, &e);
            return (ledger.finish(name.into(), "unreadable", 0), out);
        }
    };
    let genesis = reader.head();
    // the parameters are small: a longer first entry is refused before it is read (issue 43, item 9)
    let first = match reader.next_entry_within(|_, _| Bound::Max(SMALL_ENTRY)) {
        Ok(Some(e)) if e.kind == "parameters" && e.name == "parameters" => e,
        Ok(Some(e)) => {
            ledger.fail(
                Check::Mix01,
                "entry 0",
                format!("{} {} where the parameters are due", e.kind, e.name),
            );
            return (ledger.finish(name.into(), FORM, 0), out);
        }
        Ok(None) => {
            ledger.error(Check::Mix01, name, "no entries");
            return (ledger.finish(name.into(), FORM, 0), out);
        }
        Err(e) => {
            ledger.error(Check::Mix01, name, e.to_string());
            return (ledger.finish(name.into(), FORM, 0), out);
        }
    };
    ledger.examined(Check::Mix01, 1);
    let (gid, params) = match Parameters::decode(&first.payload) {
        Ok(p) => p,
        Err(e) => {
            ledger.error(Check::Mix02, "parameters", e.to_string());
            return (ledger.finish(name.into(), FORM, 0), out);
        }
    };
    ledger.examined(Check::Mix02, 1);
    if params.election_id != reader.election_id() {
        ledger.fail(
            Check::Mix01,
            "header",
            format!(
                "the header's election {:?} is not the parameters' {:?}",
                reader.election_id(),
                params.election_id
            ),
        );
    }
    out.values.insert("genesis".into(), json!(hex(&genesis)));
    out.values.insert("group".into(), json!(gid.name()));
    let mut v = Walk {
        ledger,
        out,
        params,
        reader,
        progress: options.progress,
        workers: options.shuffle_workers,
        parameters: first.payload.clone(),
        pending: Vec::new(),
        prev_hash: first.hash,
        ballots: 0,
    };
    match gid {
        GroupId::Ristretto255 => v.run(&Ristretto255),
        GroupId::Modp2048 => v.run(&ModpGroup::rfc3526_2048()),
        GroupId::Modp3072 => v.run(&ModpGroup::rfc3526_3072()),
        GroupId::Eg4096 => v.run(&ModpGroup::eg_4096()),
        // not returned by `GroupId::from_name` (CHVote's groups only); run in the group all the same
        other => {
            if let Some(group) = ModpGroup::of_id(other) {
                v.run(&group)
            }
        }
    }
    let ballots = v.ballots;
    (v.ledger.finish(name.into(), FORM, ballots), v.out)
}

/// The most bytes an entry of few fixed-size values may have (the parameters, a trustee's commitments,
/// the public key).
const SMALL_ENTRY: u64 = 1 << 20;

/// How long an entry of `kind` can be (issue 43, item 9), checked before it is read: the ballots are a
/// counted list of ballots of width w (8 + n × (8 + w(3 el + 2 sc)) bytes exactly); every list after
/// them (the input, each mix with its proof, each decryption share) is at most 8 times the ballots'
/// length; the result holds the rows and counts of at most (candidates + 2)² numbers.
fn entry_bound(kind: &str, p: &Parameters, el: u64, sc: u64, ballots: Option<u64>) -> Bound {
    let w = p.width as u64;
    let after = |extra: u64| {
        Bound::Max(ballots.map_or(SMALL_ENTRY, |b| {
            b.saturating_mul(8).saturating_add(extra).min(MAX_PAYLOAD)
        }))
    };
    match kind {
        "trustee" => Bound::Max(SMALL_ENTRY + (p.quorum as u64).saturating_mul(el)),
        "ballots" => Bound::Counted {
            item: 8 + w * (3 * el + 2 * sc),
            max: MAX_PAYLOAD,
        },
        "input" | "mix" | "decryption" => after(SMALL_ENTRY),
        "result" => {
            let c = p.candidates as u64 + 2;
            after(SMALL_ENTRY + 8 * c * c)
        }
        _ => Bound::Max(SMALL_ENTRY),
    }
}

/// What comes next on the board (spec/91.7's order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Due {
    Trustee(u64),
    PublicKey,
    Ballots,
    Input,
    Mix(usize),
    /// Decryption shares (at least one), then the result.
    Decryption,
    End,
}

struct Walk<'o, R: Read> {
    ledger: Ledger,
    out: Intermediates,
    params: Parameters,
    reader: RecordReader<R>,
    progress: Option<&'o mut dyn FnMut(Progress) -> ControlFlow<()>>,
    /// Where the shuffle proofs are checked, when not here.
    workers: Option<&'o mut dyn ShuffleWorkers>,
    /// The `parameters` payload (the workers derive everything from it).
    parameters: Vec<u8>,
    /// The mix entries whose proofs are with the workers, in order.
    pending: Vec<String>,
    prev_hash: [u8; 32],
    ballots: u64,
}

impl<R: Read> Walk<'_, R> {
    /// Tells the progress hook; whether it asked to stop.
    fn tell(&mut self, what: &str) -> bool {
        match self.progress.as_mut() {
            Some(p) => p(Progress::Entry(what.to_owned())).is_break(),
            None => false,
        }
    }

    fn run<G: Group>(&mut self, group: &G) {
        let p = self.params.clone();
        let mut s = Seen::<G> {
            digest: votum_hash::board::payload_digest(&p.encode_for(group.id())),
            // batch weights unpredictable to whoever wrote the record
            rng: weights_rng(&mut rand_core::OsRng),
            due: Due::Trustee(1),
            key_context: self.prev_hash,
            commitments: Vec::new(),
            joint: group.identity(),
            ballot_cts: None,
            ballot_context: [0u8; 32],
            ballots_len: None,
            current: None,
            generators: None,
            decryption_context: [0u8; 32],
            shares: Vec::new(),
            seen_shares: Vec::new(),
            decryption_entries: 0,
            last_ok: true,
            awaiting: None,
        };
        if !p.signed() {
            check_unsigned(&mut self.ledger);
        }
        loop {
            let (el, sc) = (group.element_len() as u64, group.scalar_len() as u64);
            let bound = |kind: &str, _: &str| entry_bound(kind, &p, el, sc, s.ballots_len);
            let entry = match self.reader.next_entry_within(bound) {
                Ok(Some(e)) => e,
                Ok(None) => {
                    if s.due != Due::End {
                        self.ledger.error(
                            Check::Mix01,
                            "record",
                            format!(
                                "the record ends where {} is due (incomplete)",
                                describe(s.due)
                            ),
                        );
                    }
                    break;
                }
                Err(e) => {
                    self.ledger.error(Check::Mix01, "record", e.to_string());
                    break;
                }
            };
            self.ledger.examined(Check::Mix01, 1);
            let context = std::mem::replace(&mut self.prev_hash, entry.hash);
            let object = format!("entry {} ({})", entry.seq, entry.name);
            if let Some(signed) = s.awaiting.take() {
                if entry.kind != "signature" || entry.name != signed.name {
                    self.ledger.fail(
                        Check::Mix01,
                        &object,
                        format!(
                            "{} {} posted where the signature of {} is due (out of turn)",
                            entry.kind, entry.name, signed.name
                        ),
                    );
                    break;
                }
                check_signature(
                    &mut self.ledger,
                    &p,
                    &s.digest,
                    &signed,
                    &object,
                    &entry.payload,
                );
                continue;
            }
            if !fits(s.due, &entry, s.decryption_entries) {
                self.ledger.fail(
                    Check::Mix01,
                    &object,
                    format!(
                        "{} {} posted where {} is due (out of turn)",
                        entry.kind,
                        entry.name,
                        describe(s.due)
                    ),
                );
                break;
            }
            if self.tell(&entry.name) {
                break;
            }
            if p.signed() {
                s.awaiting = s.signed_next(&entry, context);
            }
            match self.step(group, &p, &mut s, &entry, context) {
                ControlFlow::Continue(()) => {}
                ControlFlow::Break(Stop::Break) => break,
                ControlFlow::Break(Stop::Return) => return,
            }
        }
        self.remote_verdicts();
        self.out
            .values
            .insert("head".into(), json!(hex(&self.prev_hash)));
    }

    /// The entry that is due, checked by its check of `checks::mix`; `context` is the board's head
    /// before it. Says when the walk stops (`Return`: without the workers' verdicts or the head).
    fn step<G: Group>(
        &mut self,
        group: &G,
        p: &Parameters,
        s: &mut Seen<G>,
        entry: &Entry,
        context: [u8; 32],
    ) -> ControlFlow<Stop> {
        let w = p.width;
        match s.due {
            Due::Trustee(i) => {
                let Some(c) = check_trustee(
                    &mut self.ledger,
                    group,
                    p,
                    &s.digest,
                    (i, &entry.name),
                    &entry.payload,
                ) else {
                    return ControlFlow::Break(Stop::Return);
                };
                // Π C_{i,0}, recomputed (the posted key is only compared with it); a trustee that
                // posted no commitment counts as the identity
                s.joint = group.op(&s.joint, &c[0]);
                s.commitments.push(c);
                s.due = if i < p.trustees as u64 {
                    Due::Trustee(i + 1)
                } else {
                    Due::PublicKey
                };
            }
            Due::PublicKey => {
                check_public_key(&mut self.ledger, group, &entry.payload, &s.joint);
                self.out.values.insert(
                    "public_key".into(),
                    json!(hex(&group.encode_element(&s.joint))),
                );
                s.ballot_context = entry.hash;
                s.due = Due::Ballots;
            }
            Due::Ballots => {
                s.ballots_len = Some(entry.payload.len() as u64);
                let Some((n, cts)) = check_ballots(
                    &mut self.ledger,
                    group,
                    &s.ballot_context,
                    w,
                    &entry.payload,
                ) else {
                    return ControlFlow::Break(Stop::Return);
                };
                self.ballots = n;
                s.ballot_cts = Some(cts);
                s.due = Due::Input;
            }
            Due::Input => {
                let cast = s.ballot_cts.take().unwrap_or_default();
                let Some(input) = check_input(
                    &mut self.ledger,
                    group,
                    &entry.payload,
                    &cast,
                    w,
                    &mut s.rng,
                ) else {
                    return ControlFlow::Break(Stop::Return);
                };
                drop(cast);
                if self.workers.is_none() {
                    s.generators =
                        Some(Generators::derive(group, &p.generators_seed(), input.len()));
                } else if self.remote_setup(group, &s.joint).is_break() {
                    return ControlFlow::Break(Stop::Break);
                }
                s.current = Some(input);
                s.due = Due::Mix(1);
            }
            Due::Mix(m) => {
                let result = if self.workers.is_some() {
                    match self.remote_mix(group, &context, s.current.as_ref(), entry, w) {
                        ControlFlow::Continue(r) => r,
                        ControlFlow::Break(()) => return ControlFlow::Break(Stop::Break),
                    }
                } else {
                    check_mix(
                        group,
                        &s.joint,
                        s.generators.as_ref(),
                        &context,
                        s.current.as_ref(),
                        &entry.payload,
                        w,
                    )
                };
                s.current = record_mix(&mut self.ledger, &entry.name, result);
                if m < p.mixers {
                    s.due = Due::Mix(m + 1);
                } else {
                    s.due = Due::Decryption;
                    s.decryption_context = entry.hash;
                }
            }
            Due::Decryption if entry.kind == "decryption" => {
                s.decryption_entries += 1;
                let checked = check_share(
                    &mut self.ledger,
                    group,
                    p,
                    &s.commitments,
                    &s.decryption_context,
                    s.current.as_ref(),
                    (&entry.name, &entry.payload),
                    &mut s.seen_shares,
                );
                match checked {
                    Ok(share) if s.shares.len() < p.quorum => s.shares.push(share),
                    Ok(_) => {}
                    Err(readable) => s.last_ok &= readable,
                }
            }
            Due::Decryption => {
                // the result
                if s.current.is_some() && s.last_ok {
                    check_quorum(&mut self.ledger, s.shares.len(), p.quorum);
                }
                self.result(group, entry, s.current.as_ref(), &s.shares);
                s.due = Due::End;
            }
            Due::End => unreachable!("nothing is due after the result"),
        }
        ControlFlow::Continue(())
    }

    /// Hands the workers the parameters and the joint key, once.
    fn remote_setup<G: Group>(&mut self, group: &G, joint: &G::Element) -> ControlFlow<()> {
        let parameters = self.parameters.clone();
        match self.workers.as_mut() {
            Some(w) => w.setup(&parameters, &group.encode_element(joint)),
            None => ControlFlow::Continue(()),
        }
    }

    /// A `mix` entry with the workers: its output list decoded here (the next shuffle and the
    /// decryption need it), its proof sent out; the verdict comes in `remote_verdicts`.
    #[allow(clippy::type_complexity)]
    fn remote_mix<G: Group>(
        &mut self,
        group: &G,
        context: &[u8; 32],
        input: Option<&Rows<G>>,
        entry: &Entry,
        w: usize,
    ) -> ControlFlow<(), Result<(Rows<G>, Option<String>), String>> {
        let rng = &mut weights_rng(&mut rand_core::OsRng);
        let decoded = wire::split_mix(&entry.payload, group.element_len())
            .map_err(|e| e.to_string())
            .and_then(|(list, _)| {
                Rows::decode(group, list, rng).map_err(|e| format!("output list: {e}"))
            });
        let out = match (decoded, input) {
            (Err(e), _) => return ControlFlow::Continue(Err(e)),
            (Ok(_), None) => {
                return ControlFlow::Continue(Err(
                    "no readable input list to check the shuffle against".into(),
                ))
            }
            (Ok(out), Some(input)) => {
                if let Some(reason) = size_mismatch(&out, input, w) {
                    return ControlFlow::Continue(Ok((out, Some(reason))));
                }
                let encoded = input.encode(group);
                if let Some(workers) = self.workers.as_mut() {
                    workers.submit(context, &encoded, &entry.payload)?;
                }
                self.pending.push(entry.name.clone());
                out
            }
        };
        ControlFlow::Continue(Ok((out, None)))
    }

    /// The workers' verdicts on every proof sent out, each reported as the check here would have.
    fn remote_verdicts(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let Some(workers) = self.workers.as_mut() else {
            return;
        };
        let ControlFlow::Continue(verdicts) = workers.collect() else {
            return;
        };
        let names = std::mem::take(&mut self.pending);
        if verdicts.len() != names.len() {
            self.ledger.error(
                Check::Mix04,
                "shuffles",
                format!(
                    "{} verdicts from the workers for {} shuffles",
                    verdicts.len(),
                    names.len()
                ),
            );
            return;
        }
        for (name, verdict) in names.iter().zip(verdicts) {
            match verdict {
                Ok(None) => {}
                Ok(Some(reason)) => self.ledger.fail(Check::Mix04, name, reason),
                Err(reason) => self.ledger.error(Check::Mix04, name, reason),
            }
        }
    }

    /// V-MIX-06 and V-MIX-07 on the `result` entry.
    fn result<G: Group>(
        &mut self,
        group: &G,
        entry: &Entry,
        last: Option<&Rows<G>>,
        shares: &[DecryptionShare<G>],
    ) {
        let p = &self.params;
        let (rows, posted) = match wire::decode_result(&entry.payload, p.rule, p.candidates) {
            Ok(r) => r,
            Err(e) => {
                self.ledger.error(Check::Mix06, "result", e.to_string());
                return;
            }
        };
        if let (Some(last), true) = (last, shares.len() >= p.quorum) {
            check_decrypted(&mut self.ledger, group, p, last, shares, &rows);
        }
        let Some(recount) = check_outcome(&mut self.ledger, p, &rows, &posted) else {
            return;
        };
        self.out
            .values
            .insert("winners".into(), json!(recount.winners));
        self.out
            .values
            .insert("tallies".into(), json!(recount.tallies));
        // the rest of the recount, for readers that show it (the service's results pages)
        let values = &mut self.out.values;
        values.insert("rule".into(), json!(recount.rule));
        values.insert("candidates".into(), json!(recount.candidates));
        values.insert("valid".into(), json!(recount.valid));
        values.insert("invalid".into(), json!(recount.invalid));
        values.insert("rounds".into(), json!(recount.rounds));
        values.insert("exhausted".into(), json!(recount.exhausted));
        values.insert("quota".into(), json!(recount.quota));
        values.insert("tie_rule".into(), json!(p.ties.name()));
        let ties: Vec<_> = recount
            .ties
            .iter()
            .map(|t| {
                json!({"round": t.round, "decision": t.decision.name(), "among": t.among, "chosen": t.chosen})
            })
            .collect();
        values.insert("ties".into(), json!(ties));
    }
}

/// What the walk has read so far (spec/91.7's order), in the record's group.
struct Seen<G: Group> {
    /// The parameters' digest (the trustees' proofs and the signatures are bound to it).
    digest: [u8; 32],
    rng: rand_chacha::ChaCha20Rng,
    due: Due,
    /// The head after the parameters: the trustees sign it.
    key_context: [u8; 32],
    commitments: Vec<Vec<G::Element>>,
    /// Π C_{i,0}, recomputed from the trustees' entries.
    joint: G::Element,
    ballot_cts: Option<Vec<Ciphertext<G>>>,
    ballot_context: [u8; 32],
    /// The ballots entry's length, once read: the lists after it are of its size or less.
    ballots_len: Option<u64>,
    /// The last list read (None when one could not be read: nothing after it can be checked).
    current: Option<Rows<G>>,
    generators: Option<Generators<G>>,
    decryption_context: [u8; 32],
    shares: Vec<DecryptionShare<G>>,
    seen_shares: Vec<u64>,
    decryption_entries: usize,
    /// No decryption entry so far failed to decode.
    last_ok: bool,
    /// In a signed election (spec/91.9), the entry whose authority's signature comes next.
    awaiting: Option<Signed>,
}

impl<G: Group> Seen<G> {
    /// What the signature after `entry` must sign, if its kind is an authority's.
    fn signed_next(&self, entry: &Entry, context: [u8; 32]) -> Option<Signed> {
        let (kind, head) = match entry.kind.as_str() {
            "trustee" => ("trustee", self.key_context),
            "mix" => ("mix", context),
            "decryption" => ("decryption", self.decryption_context),
            _ => return None,
        };
        Some(Signed {
            kind,
            name: entry.name.clone(),
            head,
            payload: votum_hash::board::payload_digest(&entry.payload),
        })
    }
}

/// How a step stops the walk: `Break` still collects the workers' verdicts and the head; `Return`
/// does not.
enum Stop {
    Break,
    Return,
}

/// Whether `entry` is the one due; a decryption share may also be followed by the result.
fn fits(due: Due, entry: &Entry, decryption_entries: usize) -> bool {
    match due {
        Due::Trustee(i) => is(entry, "trustee", &format!("trustee-{i}")),
        Due::PublicKey => is(entry, "public-key", "public-key"),
        Due::Ballots => is(entry, "ballots", "ballots"),
        Due::Input => is(entry, "input", "input"),
        Due::Mix(m) => is(entry, "mix", &format!("mix-{m}")),
        Due::Decryption => {
            entry.kind == "decryption" && entry.name.strip_prefix("decryption-").is_some()
                || (is(entry, "result", "result") && decryption_entries > 0)
        }
        Due::End => false,
    }
}

fn is(e: &Entry, kind: &str, name: &str) -> bool {
    e.kind == kind && e.name == name
}

fn describe(due: Due) -> String {
    match due {
        Due::Trustee(i) => format!("trustee-{i}"),
        Due::PublicKey => "the public key".into(),
        Due::Ballots => "the ballots".into(),
        Due::Input => "the input list".into(),
        Due::Mix(m) => format!("mix-{m}"),
        Due::Decryption => "a decryption share or the result".into(),
        Due::End => "nothing (the result closes the record)".into(),
    }
}

/// One shuffle proof checked on its own (a cluster task, spec/98.3): `parameters` is the record's
/// `parameters` payload, `joint` the encoded joint key, `context` the board's head before the
/// `mix` entry, `input` the encoded list it shuffles and `payload` the entry. `Ok(None)`: the proof
/// holds; `Ok(Some(reason))`: it does not (as V-MIX-04 reports it); `Err`: it could not be read.
pub fn check_shuffle_task(
    parameters: &[u8],
    joint: &[u8],
    context: &[u8; 32],
    input: &[u8],
    payload: &[u8],
) -> Result<Option<String>, String> {
    // a Verificatum session's shuffles go to the same task, told apart by their tag (spec/98.3)
    if parameters.starts_with(crate::vmn::SHUFFLE_TAG) {
        return crate::vmn::check_shuffle_task(parameters, joint, input, payload);
    }
    let (gid, params) = Parameters::decode(parameters).map_err(|e| e.to_string())?;
    let task = ShuffleTask {
        params,
        joint,
        context,
        input,
        payload,
    };
    match gid {
        GroupId::Ristretto255 => task.run(&Ristretto255),
        GroupId::Modp2048 => task.run(&ModpGroup::rfc3526_2048()),
        GroupId::Modp3072 => task.run(&ModpGroup::rfc3526_3072()),
        GroupId::Eg4096 => task.run(&ModpGroup::eg_4096()),
        other => match ModpGroup::of_id(other) {
            Some(group) => task.run(&group),
            None => Err(format!("no group {}", other.name())),
        },
    }
}

/// What one shuffle task checks, in any group.
struct ShuffleTask<'a> {
    params: Parameters,
    joint: &'a [u8],
    context: &'a [u8; 32],
    input: &'a [u8],
    payload: &'a [u8],
}

impl ShuffleTask<'_> {
    fn run<G: Group>(&self, group: &G) -> Result<Option<String>, String> {
        let joint = group
            .decode_element(self.joint)
            .map_err(|e| format!("joint key: {e}"))?;
        let rng = &mut weights_rng(&mut rand_core::OsRng);
        let input = Rows::decode(group, self.input, rng).map_err(|e| format!("input list: {e}"))?;
        let generators = Generators::derive(group, &self.params.generators_seed(), input.len());
        check_mix(
            group,
            &joint,
            Some(&generators),
            self.context,
            Some(&input),
            self.payload,
            self.params.width,
        )
        .map(|(_, verdict)| verdict)
    }
}
