//! Verifying a mixnet election's record (spec/91.7, checks V-MIX-01..07 of spec/50.4), one board
//! entry at a time: memory holds the list being checked and the one before it, the ballots until
//! the input list is compared with them, and a quorum of decryption shares.

use std::fs::File;
use std::io::{BufReader, Read};
use std::ops::ControlFlow;
use std::path::Path;

use serde_json::json;
use votum_elgamal::Ciphertext;
use votum_group::{Group, GroupId, ModpGroup, Ristretto255};
use votum_hash::board_file::{Bound, MAX_PAYLOAD};
use votum_mixnet::ballot::verify_ballots;
use votum_mixnet::board::{public_share, trustee_oracle};
use votum_mixnet::codec::decode_rows;
use votum_mixnet::codec::ValueCodec;
use votum_mixnet::count::count;
use votum_mixnet::decrypt::{combine, verify_share, DecryptionShare};
use votum_mixnet::params::{weights_rng, Parameters};
use votum_mixnet::record::{Entry, RecordReader};
use votum_mixnet::signing::check_signature_of_digest;
use votum_mixnet::wire;
use votum_shuffle::{Generators, Rows, ShuffleProof};

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
        let w = p.width;
        let digest = votum_hash::board::payload_digest(&p.encode_for(group.id()));
        // batch weights unpredictable to whoever wrote the record
        let mut rng = weights_rng(&mut rand_core::OsRng);
        let mut due = Due::Trustee(1);
        let mut commitments: Vec<Vec<G::Element>> = Vec::new();
        let mut ballot_cts: Option<Vec<Ciphertext<G>>> = None;
        let mut ballot_context = [0u8; 32];
        // the last list read (None when one could not be read: nothing after it can be checked)
        let mut current: Option<Rows<G>> = None;
        let mut generators: Option<Generators<G>> = None;
        let mut decryption_context = [0u8; 32];
        let mut shares: Vec<DecryptionShare<G>> = Vec::new();
        let mut seen_shares: Vec<u64> = Vec::new();
        let mut decryption_entries = 0usize;
        let mut last_ok = true;
        // Π C_{i,0}, recomputed from the trustees' entries (the posted key is only compared with it)
        let mut joint = group.identity();
        // the ballots entry's length, once read: the lists after it are of its size or less
        let mut ballots_len: Option<u64> = None;
        // in a signed election (spec/91.9), the entry whose authority's signature comes next:
        // (kind, name, the head the authority signed, the payload's SHA-256)
        let mut awaiting: Option<(&'static str, String, [u8; 32], [u8; 32])> = None;
        let key_context = self.prev_hash;
        if !p.signed() {
            // vacuous, and said so: nothing in such a record claims an authority's signature
            self.ledger.examined(Check::Mix08, 0);
            self.ledger.warn(
                Check::Mix08,
                "parameters",
                "the parameters name no signing keys: one process made every authority's entries \
                 (votum mix without --processes), and the record cannot show which authority made which",
            );
        }
        loop {
            let (el, sc) = (group.element_len() as u64, group.scalar_len() as u64);
            let bound = |kind: &str, _: &str| entry_bound(kind, &p, el, sc, ballots_len);
            let entry = match self.reader.next_entry_within(bound) {
                Ok(Some(e)) => e,
                Ok(None) => {
                    if due != Due::End {
                        self.ledger.error(
                            Check::Mix01,
                            "record",
                            format!(
                                "the record ends where {} is due (incomplete)",
                                describe(due)
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
            if let Some((kind, name, signed, digest_of)) = awaiting.take() {
                if entry.kind != "signature" || entry.name != name {
                    self.ledger.fail(
                        Check::Mix01,
                        &object,
                        format!(
                            "{} {} posted where the signature of {name} is due (out of turn)",
                            entry.kind, entry.name
                        ),
                    );
                    break;
                }
                self.ledger.examined(Check::Mix08, 1);
                if !check_signature_of_digest(
                    &p,
                    &digest,
                    &signed,
                    kind,
                    &name,
                    &digest_of,
                    &entry.payload,
                ) {
                    self.ledger.fail(
                        Check::Mix08,
                        &object,
                        format!(
                            "not the signature of the authority the parameters name for {name}"
                        ),
                    );
                }
                continue;
            }
            // the entry must be the one due; a decryption share may also be followed by the result
            let fits = match due {
                Due::Trustee(i) => is(&entry, "trustee", &format!("trustee-{i}")),
                Due::PublicKey => is(&entry, "public-key", "public-key"),
                Due::Ballots => is(&entry, "ballots", "ballots"),
                Due::Input => is(&entry, "input", "input"),
                Due::Mix(m) => is(&entry, "mix", &format!("mix-{m}")),
                Due::Decryption => {
                    entry.kind == "decryption" && entry.name.strip_prefix("decryption-").is_some()
                        || (is(&entry, "result", "result") && decryption_entries > 0)
                }
                Due::End => false,
            };
            if !fits {
                self.ledger.fail(
                    Check::Mix01,
                    &object,
                    format!(
                        "{} {} posted where {} is due (out of turn)",
                        entry.kind,
                        entry.name,
                        describe(due)
                    ),
                );
                break;
            }
            if self.tell(&entry.name) {
                break;
            }
            if p.signed() {
                let signed = match entry.kind.as_str() {
                    "trustee" => Some(("trustee", key_context)),
                    "mix" => Some(("mix", context)),
                    "decryption" => Some(("decryption", decryption_context)),
                    _ => None,
                };
                if let Some((kind, signed)) = signed {
                    let digest_of = votum_hash::board::payload_digest(&entry.payload);
                    awaiting = Some((kind, entry.name.clone(), signed, digest_of));
                }
            }
            match due {
                Due::Trustee(i) => {
                    self.ledger.examined(Check::Mix02, 1);
                    match wire::decode_trustee(group, &entry.payload) {
                        Ok((c, proof)) => {
                            if c.len() != p.quorum {
                                self.ledger.fail(
                                    Check::Mix02,
                                    &entry.name,
                                    format!("{} commitments (quorum {})", c.len(), p.quorum),
                                );
                            } else if let Err(e) =
                                proof.verify(group, &trustee_oracle(&digest, i), &c[0])
                            {
                                self.ledger.fail(
                                    Check::Mix02,
                                    &entry.name,
                                    format!("proof of knowledge of the key: {e}"),
                                );
                            }
                            if c.is_empty() {
                                // keep going with a placeholder so the shares can be named
                                commitments.push(vec![group.identity()]);
                            } else {
                                joint = group.op(&joint, &c[0]);
                                commitments.push(c);
                            }
                        }
                        Err(e) => {
                            self.ledger.error(Check::Mix02, &entry.name, e.to_string());
                            return;
                        }
                    }
                    due = if i < p.trustees as u64 {
                        Due::Trustee(i + 1)
                    } else {
                        Due::PublicKey
                    };
                }
                Due::PublicKey => {
                    self.ledger.examined(Check::Mix02, 1);
                    if entry.payload != group.encode_element(&joint) {
                        self.ledger.fail(
                            Check::Mix02,
                            "public-key",
                            "not the product of the trustees' constant commitments",
                        );
                    }
                    self.out.values.insert(
                        "public_key".into(),
                        json!(hex(&group.encode_element(&joint))),
                    );
                    ballot_context = entry.hash;
                    due = Due::Ballots;
                }
                Due::Ballots => {
                    ballots_len = Some(entry.payload.len() as u64);
                    let ballots = match wire::decode_ballots(group, &entry.payload, w) {
                        Ok(b) => b,
                        Err(e) => {
                            self.ledger.error(Check::Mix03, "ballots", e.to_string());
                            return;
                        }
                    };
                    self.ballots = ballots.len() as u64;
                    self.ledger.examined(Check::Mix03, ballots.len() as u64);
                    if let Err(e) = verify_ballots(group, &ballot_context, w, &ballots) {
                        self.ledger.fail(Check::Mix03, "ballots", e.to_string());
                    }
                    ballot_cts = Some(ballots.into_iter().flat_map(|b| b.cts).collect());
                    due = Due::Input;
                }
                Due::Input => {
                    let input = match Rows::decode(group, &entry.payload, &mut rng) {
                        Ok(r) => r,
                        Err(e) => {
                            self.ledger
                                .error(Check::Mix03, "input", format!("input list: {e}"));
                            return;
                        }
                    };
                    self.ledger.examined(Check::Mix03, 1);
                    let cast = ballot_cts.take().unwrap_or_default();
                    if input.width() != w || input.ciphertexts() != cast.as_slice() {
                        self.ledger.fail(
                            Check::Mix03,
                            "input",
                            "the input list is not the ballots' ciphertexts in ballot order",
                        );
                    }
                    drop(cast);
                    if self.workers.is_none() {
                        generators =
                            Some(Generators::derive(group, &p.generators_seed(), input.len()));
                    } else if self.remote_setup(group, &joint).is_break() {
                        break;
                    }
                    current = Some(input);
                    due = Due::Mix(1);
                }
                Due::Mix(m) => {
                    let result = if self.workers.is_some() {
                        match self.remote_mix(group, &context, current.as_ref(), &entry, w) {
                            ControlFlow::Continue(r) => r,
                            ControlFlow::Break(()) => break,
                        }
                    } else {
                        check_mix(
                            group,
                            &joint,
                            generators.as_ref(),
                            &context,
                            current.as_ref(),
                            &entry.payload,
                            w,
                        )
                    };
                    self.ledger.examined(Check::Mix04, 1);
                    match result {
                        Ok((out, None)) => current = Some(out),
                        Ok((out, Some(e))) => {
                            self.ledger.fail(Check::Mix04, &entry.name, e);
                            current = Some(out);
                        }
                        Err(e) => {
                            self.ledger.error(Check::Mix04, &entry.name, e);
                            current = None;
                        }
                    }
                    if m < p.mixers {
                        due = Due::Mix(m + 1);
                    } else {
                        due = Due::Decryption;
                        decryption_context = entry.hash;
                    }
                }
                Due::Decryption if entry.kind == "decryption" => {
                    decryption_entries += 1;
                    self.ledger.examined(Check::Mix05, 1);
                    let share = match wire::decode_share(group, &entry.payload) {
                        Ok(s) => s,
                        Err(e) => {
                            self.ledger.error(Check::Mix05, &entry.name, e.to_string());
                            last_ok = false;
                            continue;
                        }
                    };
                    let t = share.trustee;
                    if entry.name != format!("decryption-{t}")
                        || t == 0
                        || t > p.trustees as u64
                        || seen_shares.contains(&t)
                    {
                        self.ledger.fail(
                            Check::Mix05,
                            &entry.name,
                            format!(
                                "a share of trustee {t}: not a trustee, posted twice or misnamed"
                            ),
                        );
                        continue;
                    }
                    seen_shares.push(t);
                    let Some(last) = current.as_ref() else {
                        continue;
                    };
                    let pads: Vec<G::Element> =
                        last.ciphertexts().iter().map(|c| c.pad.clone()).collect();
                    let checked = public_share(group, &commitments, t)
                        .and_then(|x| verify_share(group, &x, &decryption_context, &pads, &share));
                    match checked {
                        Ok(()) if shares.len() < p.quorum => shares.push(share),
                        Ok(()) => {}
                        Err(e) => self.ledger.fail(Check::Mix05, &entry.name, e.to_string()),
                    }
                }
                Due::Decryption => {
                    // the result
                    if shares.len() < p.quorum && current.is_some() && last_ok {
                        self.ledger.fail(
                            Check::Mix05,
                            "decryption",
                            format!(
                                "{} valid decryption shares; the quorum is {}",
                                shares.len(),
                                p.quorum
                            ),
                        );
                    }
                    self.result(group, &entry, current.as_ref(), &shares);
                    due = Due::End;
                }
                Due::End => unreachable!("nothing is due after the result"),
            }
        }
        self.remote_verdicts();
        self.out
            .values
            .insert("head".into(), json!(hex(&self.prev_hash)));
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
            self.ledger.examined(Check::Mix06, rows.len() as u64);
            let datas: Vec<G::Element> =
                last.ciphertexts().iter().map(|c| c.data.clone()).collect();
            let refs: Vec<&DecryptionShare<G>> = shares.iter().collect();
            let decoded = combine(group, &datas, &refs).and_then(|els| {
                let codec = ValueCodec::new(group, p.candidates as u64)?;
                decode_rows(&codec, &els, p.width)
            });
            match decoded {
                Ok(d) if d == rows => {}
                Ok(d) => {
                    let at = d
                        .iter()
                        .zip(&rows)
                        .position(|(a, b)| a != b)
                        .unwrap_or(d.len().min(rows.len()));
                    self.ledger.fail(
                        Check::Mix06,
                        "result",
                        format!(
                            "posted row {at} is not the decryption of the last list's row {at} ({} rows posted, {} decrypted)",
                            rows.len(),
                            d.len()
                        ),
                    );
                }
                Err(e) => self.ledger.fail(Check::Mix06, "result", e.to_string()),
            }
        }
        self.ledger.examined(Check::Mix07, 1);
        if rows.iter().any(|r| r.len() != p.width) {
            self.ledger
                .fail(Check::Mix07, "result", "rows of another width");
            return;
        }
        let recount = count(p.rule, p.candidates, &rows);
        if recount != posted {
            self.ledger.fail(
                Check::Mix07,
                "result",
                format!(
                    "the posted outcome (winners {:?}, tallies {:?}) is not the count of the posted rows (winners {:?}, tallies {:?})",
                    posted.winners, posted.tallies, recount.winners, recount.tallies
                ),
            );
        }
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

/// One mixer's entry: Ok((output, None)) when its proof verifies, Ok((output, Some(reason)))
/// when it does not, Err(reason) when the list or the proof cannot be read (or there is no input
/// list to check it against).
/// Why a shuffle's output list cannot be its input's (another length or width), if it cannot.
fn size_mismatch<G: Group>(out: &Rows<G>, input: &Rows<G>, w: usize) -> Option<String> {
    (out.len() != input.len() || out.width() != w).then(|| {
        format!(
            "{} rows of width {} (the input has {} of width {w})",
            out.len(),
            out.width(),
            input.len()
        )
    })
}

fn check_mix<G: Group>(
    group: &G,
    joint: &G::Element,
    generators: Option<&Generators<G>>,
    context: &[u8; 32],
    input: Option<&Rows<G>>,
    payload: &[u8],
    w: usize,
) -> Result<(Rows<G>, Option<String>), String> {
    let rng = &mut weights_rng(&mut rand_core::OsRng);
    let (list, proof) = wire::split_mix(payload, group.element_len()).map_err(|e| e.to_string())?;
    let out = Rows::decode(group, list, rng).map_err(|e| format!("output list: {e}"))?;
    let (Some(input), Some(generators)) = (input, generators) else {
        return Err("no readable input list to check the shuffle against".into());
    };
    if let Some(reason) = size_mismatch(&out, input, w) {
        return Ok((out, Some(reason)));
    }
    let proof = ShuffleProof::decode(group, proof, input.len(), w, rng)
        .map_err(|e| format!("proof: {e}"))?;
    let verdict = proof
        .verify(group, joint, generators, context, input, &out, rng)
        .err()
        .map(|e| match e {
            // its own text already says "shuffle proof: equation …"
            votum_shuffle::ShuffleError::Equation { .. } => e.to_string(),
            _ => format!("shuffle proof: {e}"),
        });
    Ok((out, verdict))
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
