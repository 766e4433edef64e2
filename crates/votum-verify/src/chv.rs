//! Verifying a CHVote election's record (spec/92.10, checks V-CHV-01..09 of spec/50.7), one entry
//! at a time: memory holds the public credentials, the ballots of voters who have not yet
//! confirmed, the confirmed encryptions, and the list being checked and the one before it.

use rayon::prelude::*;
use std::fs::File;
use std::io::{BufReader, Read};
use std::ops::ControlFlow;
use std::path::Path;

use votum_chvote::messages::{
    check_ballot_proof, check_confirmation_proof, check_opened_points, check_revealed_response,
    generators, query_product, shuffle_context, Ballot, PublicBoard, Response,
};
use votum_chvote::record::{self as rec, voter_of, Entry, RecordReader};
use votum_chvote::tally;
use votum_elgamal::Ciphertext;
use votum_group::{Group, ModElement, ModpGroup};
use votum_hash::board_file::Bound;
use votum_shuffle::Rows;

use crate::checks::Check;
use crate::options::{Intermediates, Options, Progress};
use crate::report::{hex, Ledger, Report, Soundness};

/// The form name reports give a CHVote record.
pub const FORM: &str = "votum CHVote record";

/// Verifies the CHVote record at `path`, every V-CHV check.
pub fn verify_chvote_record(path: &Path, options: Options<'_>) -> (Report, Intermediates) {
    let name = path.display().to_string();
    match File::open(path) {
        Ok(f) => verify_chvote_stream(BufReader::with_capacity(1 << 20, f), &name, options),
        Err(e) => {
            let mut ledger = Ledger::new(&Check::CHV);
            ledger.error(Check::Chv01, &name, e.to_string());
            (
                ledger.finish(name, "unreadable", 0),
                Intermediates::default(),
            )
        }
    }
}

struct Walk<'o, R: Read> {
    ledger: Ledger,
    reader: RecordReader<R>,
    progress: Option<&'o mut dyn FnMut(Progress) -> ControlFlow<()>>,
    seq: u64,
    ballots: u64,
    /// How long each entry may be, once the parameters are read.
    bounds: Option<rec::EntryBounds>,
    /// The voter of each row of the mix input, in order.
    mixed: Vec<usize>,
}

/// A voter's ballot until its finalizations are read.
struct Pending {
    voter: usize,
    ballot: Ballot,
    /// Π a_u: the encryption's data, (b, a).
    a: ModElement,
    responses: Vec<Response>,
    /// Nothing about this voter has failed so far (a failure is reported once).
    ok: bool,
    confirmed: bool,
}

/// Why the walk stopped early.
enum Stop {
    /// A finding was recorded; nothing after it can be checked.
    Finding,
    /// The progress hook asked to stop.
    Asked,
}

impl<R: Read> Walk<'_, R> {
    fn tell(&mut self, what: &str) -> Result<(), Stop> {
        let stop = match self.progress.as_mut() {
            Some(p) => p(Progress::Entry(what.to_owned())).is_break(),
            None => false,
        };
        if stop {
            Err(Stop::Asked)
        } else {
            Ok(())
        }
    }

    /// The next entry, which must be of `kind`; a missing or other entry is a V-CHV-01 finding.
    fn expect(&mut self, kind: &str) -> Result<Entry, Stop> {
        match self.next()? {
            Some(e) if e.kind == kind => Ok(e),
            Some(e) => {
                let object = format!("entry {}", e.seq);
                self.ledger.fail(
                    Check::Chv01,
                    &object,
                    format!("{} {} where a {kind} is due", e.kind, e.name),
                );
                Err(Stop::Finding)
            }
            None => {
                self.ledger.error(
                    Check::Chv01,
                    "record",
                    format!("ends where a {kind} is due"),
                );
                Err(Stop::Finding)
            }
        }
    }

    fn next(&mut self) -> Result<Option<Entry>, Stop> {
        // each entry's length is bounded by its kind before it is read (issue 43, item 9)
        let bounds = self.bounds;
        let bound = move |kind: &str, _: &str| match bounds {
            Some(b) => b.of(kind),
            None => Bound::Peek(rec::parameters_peek),
        };
        match self.reader.next_entry_within(bound) {
            Ok(e) => {
                if e.is_some() {
                    self.seq += 1;
                    self.ledger.examined(Check::Chv01, 1);
                }
                Ok(e)
            }
            Err(e) => {
                self.ledger.error(Check::Chv01, "record", e);
                Err(Stop::Finding)
            }
        }
    }

    /// A voter whose entries ended without finalizations: a valid confirmation obliges the
    /// authorities to finalize, and its ballot belongs in the mix input (spec/92.8), so a missing
    /// finalization is a finding and the ballot is expected in the input all the same.
    fn unfinalized(&mut self, p: Pending, confirmed: &mut Vec<Ciphertext<ModpGroup>>) {
        if !(p.confirmed && p.ok) {
            return;
        }
        self.ledger.fail(
            Check::Chv04,
            &format!("voter-{}", p.voter),
            "a valid confirmation without finalizations: its ballot belongs in the mix input",
        );
        self.mixed.push(p.voter);
        confirmed.push(Ciphertext {
            pad: p.ballot.b,
            data: p.a,
        });
    }

    fn named(&mut self, e: &Entry, expected: &str) -> Result<(), Stop> {
        if e.name == expected {
            return Ok(());
        }
        self.ledger.fail(
            Check::Chv01,
            &format!("entry {}", e.seq),
            format!("{} {} where {expected}'s is due", e.kind, e.name),
        );
        Err(Stop::Finding)
    }

    fn run(&mut self) -> Result<(), Stop> {
        self.tell("parameters")?;
        let first = self.expect("parameters")?;
        let (params, set, election_id) = match rec::decode_parameters(&first.payload) {
            Ok(x) => x,
            Err(e) => {
                self.ledger.error(Check::Chv02, "parameters", e.to_string());
                return Err(Stop::Finding);
            }
        };
        self.bounds = Some(rec::EntryBounds::new(&params, &set));
        // the record's security level sets the groups, exponent and hash lengths (spec/92.3):
        // reported, with no floor (level 1 is the proof of concept's level for tests)
        self.ledger.soundness(
            Check::Chv02,
            "parameters",
            Soundness {
                what: format!(
                    "the security level (CHVote level {}, τ)",
                    params.level().number()
                ),
                bits: f64::from(params.tau()),
                floor: None,
            },
        );
        let s = params.authorities();
        let mut key_shares = Vec::with_capacity(s);
        // each share's proof of knowledge: a share chosen to cancel the others has none (spec/92.3)
        // the id the digests bind must be the record's own (spec/92.3)
        if election_id != self.reader.election_id() {
            self.ledger.fail(
                Check::Chv02,
                "parameters",
                format!(
                    "the parameters are election {election_id:?}'s, the record election {:?}'s",
                    self.reader.election_id()
                ),
            );
            return Err(Stop::Finding);
        }
        let digest = params.digest_with(&set.shape_bytes(), &election_id);
        for j in 0..s {
            let e = self.expect("key-share")?;
            self.named(&e, &format!("authority-{j}"))?;
            match rec::decode_key_share(&params, &digest, j, &e.payload) {
                Ok(k) => key_shares.push(k),
                Err(err) => {
                    self.ledger.fail(Check::Chv02, &e.name, err.to_string());
                    return Err(Stop::Finding);
                }
            }
        }
        let mut voter_data = Vec::with_capacity(s);
        for j in 0..s {
            let e = self.expect("voter-data")?;
            self.named(&e, &format!("authority-{j}"))?;
            match rec::decode_voter_data(&params, &e.payload) {
                Ok(d) => voter_data.push(d),
                Err(err) => {
                    self.ledger.fail(Check::Chv02, &e.name, err.to_string());
                    return Err(Stop::Finding);
                }
            }
        }
        let board =
            match PublicBoard::new(params.clone(), set, &election_id, key_shares, voter_data) {
                Ok(b) => b,
                Err(err) => {
                    self.ledger
                        .fail(Check::Chv02, "voter data", err.to_string());
                    return Err(Stop::Finding);
                }
            };
        self.ledger.examined(Check::Chv02, 1 + 2 * s as u64);
        let eg = params.eg();
        let mut rng = rand_core::OsRng;
        // ballots, in increasing voter order; each followed by its responses, then perhaps the
        // confirmation and the finalizations
        let mut confirmed: Vec<Ciphertext<ModpGroup>> = Vec::new();
        let mut last_voter: Option<usize> = None;
        let mut pending: Option<Pending> = None;
        let entry = loop {
            let Some(e) = self.next()? else {
                self.ledger
                    .error(Check::Chv01, "record", "ends before the input list");
                return Err(Stop::Finding);
            };
            if e.kind == "ballot" || e.kind == "input" {
                if let Some(p) = pending.take() {
                    self.unfinalized(p, &mut confirmed);
                }
            }
            match e.kind.as_str() {
                "ballot" => {
                    let Some(i) = voter_of(&e.name).filter(|&i| i < board.voters()) else {
                        self.ledger
                            .fail(Check::Chv03, &e.name, "not a voter of the electorate");
                        pending = None;
                        continue;
                    };
                    if last_voter.is_some_and(|l| i <= l) {
                        self.ledger.fail(
                            Check::Chv03,
                            &e.name,
                            "a second ballot, or ballots out of voter order",
                        );
                        pending = None;
                        continue;
                    }
                    last_voter = Some(i);
                    self.ballots += 1;
                    if self.ballots.is_multiple_of(256) {
                        self.tell(&e.name)?;
                    }
                    self.ledger.examined(Check::Chv03, 1);
                    let ballot = match rec::decode_ballot(&params, &e.payload) {
                        Ok(b) => b,
                        Err(err) => {
                            self.ledger.fail(Check::Chv03, &e.name, err.to_string());
                            pending = None;
                            continue;
                        }
                    };
                    let k: usize = board.set.k_of(i).iter().sum();
                    let a = query_product(eg, &ballot.queries);
                    let mut ok = false;
                    if ballot.x_hat != board.x_hat[i] {
                        self.ledger.fail(
                            Check::Chv03,
                            &e.name,
                            "not the voter's public voting credential",
                        );
                    } else if ballot.queries.len() != k {
                        self.ledger.fail(
                            Check::Chv03,
                            &e.name,
                            format!("{} queries for {k} selections", ballot.queries.len()),
                        );
                    } else if !check_ballot_proof(&board, &ballot, &a) {
                        self.ledger
                            .fail(Check::Chv03, &e.name, "the ballot proof does not verify");
                    } else {
                        ok = true;
                    }
                    pending = Some(Pending {
                        voter: i,
                        ballot,
                        a,
                        responses: Vec::new(),
                        ok,
                        confirmed: false,
                    });
                }
                "responses" => {
                    let Some(p) = pending
                        .as_mut()
                        .filter(|p| voter_of(&e.name) == Some(p.voter))
                    else {
                        self.ledger
                            .fail(Check::Chv04, &e.name, "responses without a ballot");
                        continue;
                    };
                    match rec::decode_responses(&params, &e.payload) {
                        Ok(r) if r.len() == s => p.responses = r,
                        Ok(_) => {
                            self.ledger
                                .fail(Check::Chv04, &e.name, "one response per authority");
                            p.ok = false;
                        }
                        Err(err) => {
                            self.ledger.fail(Check::Chv04, &e.name, err.to_string());
                            p.ok = false;
                        }
                    }
                }
                "confirmation" => {
                    let Some(p) = pending
                        .as_mut()
                        .filter(|p| voter_of(&e.name) == Some(p.voter))
                    else {
                        self.ledger
                            .fail(Check::Chv05, &e.name, "a confirmation without a ballot");
                        continue;
                    };
                    if p.confirmed {
                        self.ledger
                            .fail(Check::Chv05, &e.name, "a second confirmation");
                        continue;
                    }
                    p.confirmed = true;
                    self.ledger.examined(Check::Chv05, 1);
                    // a ballot that failed is reported once, under its own check
                    if !p.ok {
                        continue;
                    }
                    let verdict = match rec::decode_confirmation(&params, &e.payload) {
                        Err(err) => Some(err.to_string()),
                        Ok(g) if g.y_hat != board.y_hat[p.voter] => {
                            Some("not the voter's confirmation credential".into())
                        }
                        Ok(g) if !check_confirmation_proof(&board, &g) => {
                            Some("the confirmation proof does not verify".into())
                        }
                        Ok(_) => None,
                    };
                    if let Some(reason) = verdict {
                        self.ledger.fail(Check::Chv05, &e.name, reason);
                        p.ok = false;
                    }
                }
                "finalizations" => {
                    let Some(p) = pending
                        .take()
                        .filter(|p| voter_of(&e.name) == Some(p.voter))
                    else {
                        self.ledger
                            .fail(Check::Chv04, &e.name, "finalizations without a ballot");
                        continue;
                    };
                    if !p.confirmed {
                        self.ledger.fail(
                            Check::Chv04,
                            &e.name,
                            "finalizations without a confirmation",
                        );
                        continue;
                    }
                    // the authorities finalized this voter: its encryption goes to the mix
                    self.mixed.push(p.voter);
                    confirmed.push(Ciphertext {
                        pad: p.ballot.b.clone(),
                        data: p.a.clone(),
                    });
                    if !p.ok {
                        continue;
                    }
                    self.ledger.examined(Check::Chv04, 1);
                    let parts = match rec::decode_finalizations(&params, &e.payload) {
                        Ok(parts) if parts.len() == s => parts,
                        Ok(_) => {
                            self.ledger.fail(
                                Check::Chv04,
                                &e.name,
                                "one finalization per authority",
                            );
                            continue;
                        }
                        Err(err) => {
                            self.ledger.fail(Check::Chv04, &e.name, err.to_string());
                            continue;
                        }
                    };
                    // each authority's response on its own thread: the openings are most of
                    // V-CHV-04's work (n short powers per authority)
                    let verdicts: Vec<Option<String>> = p
                        .responses
                        .par_iter()
                        .zip(&parts)
                        .enumerate()
                        .map(|(j, (r, part))| {
                            if !check_revealed_response(&board, p.voter, &p.ballot, r, &part.r) {
                                Some(
                                    "the revealed exponents do not give the authority's response"
                                        .to_string(),
                                )
                            } else {
                                check_opened_points(&board, p.voter, j, r, part)
                            }
                        })
                        .collect();
                    for (j, what) in verdicts.into_iter().enumerate() {
                        if let Some(what) = what {
                            self.ledger.fail(
                                Check::Chv04,
                                &format!("{} authority-{j}", e.name),
                                what,
                            );
                        }
                    }
                }
                "input" => break e,
                _ => {
                    self.ledger.fail(
                        Check::Chv01,
                        &format!("entry {}", e.seq),
                        format!("{} {} among the ballots", e.kind, e.name),
                    );
                    return Err(Stop::Finding);
                }
            }
        };
        self.tell("input")?;
        self.ledger.examined(Check::Chv06, 1);
        let input = match rec::decode_input(&params, &entry.payload, &mut rng) {
            Ok(l) if l.width() == 1 => l,
            Ok(_) => {
                self.ledger
                    .fail(Check::Chv06, "input", "a list of width other than 1");
                return Err(Stop::Finding);
            }
            Err(err) => {
                self.ledger.error(Check::Chv06, "input", err.to_string());
                return Err(Stop::Finding);
            }
        };
        if input.ciphertexts() != confirmed.as_slice() {
            self.ledger.fail(
                Check::Chv06,
                "input",
                format!(
                    "{} encryptions posted, {} confirmed ballots; the lists differ",
                    input.len(),
                    confirmed.len()
                ),
            );
        }
        drop(confirmed);
        let gens = generators(&board, input.len());
        let mut current: Rows<ModpGroup> = input;
        // each shuffle's input rows, hashed: a trace of an invalid vote (after the result) names
        // rows of every list, and only the last list is kept whole (spec/92.8)
        let mut hashes: Vec<Vec<[u8; 32]>> = Vec::with_capacity(s);
        for j in 0..s {
            hashes.push(row_hashes(&params, &current));
            let e = self.expect("shuffle")?;
            self.named(&e, &format!("authority-{j}"))?;
            self.signed(&board, j, "shuffle", &e.payload)?;
            self.tell(&e.name)?;
            self.ledger.examined(Check::Chv07, 1);
            let (out, proof) =
                match rec::decode_shuffle(&params, &e.payload, current.len(), &mut rng) {
                    Ok(x) => x,
                    Err(err) => {
                        self.ledger.error(Check::Chv07, &e.name, err.to_string());
                        return Err(Stop::Finding);
                    }
                };
            if let Err(err) = tally::check_shuffle(
                &board,
                j,
                &gens,
                &shuffle_context(&board, j),
                &current,
                &out,
                &proof,
                &mut rng,
            ) {
                self.ledger.fail(Check::Chv07, &e.name, err.to_string());
            }
            current = out;
        }
        let mut shares = Vec::with_capacity(s);
        for j in 0..s {
            let e = self.expect("decryption")?;
            self.named(&e, &format!("authority-{j}"))?;
            self.signed(&board, j, "decryption", &e.payload)?;
            self.ledger.examined(Check::Chv08, 1);
            match rec::decode_share(&params, &e.payload) {
                Ok(share) => shares.push(share),
                // the other shares and the result are still read; the votes cannot be decrypted
                Err(err) => self.ledger.fail(Check::Chv08, &e.name, err.to_string()),
            }
        }
        self.tell("decryption")?;
        let decrypted = if shares.len() == s {
            tally::decrypt(&board, &current, &shares)
        } else {
            Err(votum_chvote::ChvoteError::Parameters(String::new()))
        };
        let plaintexts = match decrypted {
            Err(votum_chvote::ChvoteError::Parameters(_)) if shares.len() < s => None,
            Ok(p) => Some(p),
            Err(err) => {
                let object = match &err {
                    votum_chvote::ChvoteError::Decryption { authority, .. } => {
                        format!("authority-{authority}")
                    }
                    _ => "decryption".into(),
                };
                self.ledger.fail(Check::Chv08, &object, err.to_string());
                None
            }
        };
        let e = self.expect("result")?;
        self.ledger.examined(Check::Chv09, 1);
        let mut invalid_rows: Option<Vec<usize>> = None;
        match rec::decode_result(&e.payload) {
            Err(err) => self.ledger.error(Check::Chv09, "result", err.to_string()),
            Ok((counts, invalid)) => {
                if let Some(p) = plaintexts {
                    let t = tally::tally(&board, &p);
                    invalid_rows = Some(t.invalid_rows.clone());
                    if t.counts != counts || t.invalid != invalid {
                        self.ledger.fail(
                            Check::Chv09,
                            "result",
                            format!(
                                "posted {counts:?} (invalid {invalid}), the decrypted votes count {:?} (invalid {})",
                                t.counts, t.invalid
                            ),
                        );
                    }
                }
            }
        }
        self.traces(&board, &hashes, &current, invalid_rows)?;
        if let Some(e) = self.next()? {
            if e.kind == "trace" {
                // an opened row of a valid vote links it to its voter: the authorities broke
                // the privacy the mix gives
                self.ledger.fail(
                    Check::Chv10,
                    &e.name,
                    "a trace where no vote is invalid (or more traces than authorities): it \
                     opens rows of valid votes",
                );
                return Ok(());
            }
            self.ledger.fail(
                Check::Chv01,
                &format!("entry {}", e.seq),
                format!("{} {} after the result", e.kind, e.name),
            );
        }
        Ok(())
    }

    /// V-CHV-11 (spec/92.10): the `signature` entry after authority j's entry of `kind`, checked
    /// against j's signing key in the parameters over the election digest, kind, name and payload.
    fn signed(
        &mut self,
        board: &PublicBoard,
        j: usize,
        kind: &str,
        payload: &[u8],
    ) -> Result<(), Stop> {
        let want = rec::signature_name(kind, j);
        match self.next()? {
            Some(s) if s.kind == "signature" && s.name == want => {
                self.ledger.examined(Check::Chv11, 1);
                if !rec::check_signature(&board.params, &board.digest, j, kind, payload, &s.payload)
                {
                    self.ledger.fail(
                        Check::Chv11,
                        &want,
                        format!(
                            "not the signature of authority {j}'s node key (named in the \
                             parameters) on its {kind}"
                        ),
                    );
                }
                Ok(())
            }
            other => {
                let instead = other.map_or("the end of the record".into(), |e| {
                    format!("{} {}", e.kind, e.name)
                });
                self.ledger.fail(
                    Check::Chv11,
                    &want,
                    format!("{instead} where authority {j}'s signature on its {kind} is due"),
                );
                Err(Stop::Finding)
            }
        }
    }

    /// V-CHV-10 (spec/92.8): every invalid vote of the last list traced back to the mix input
    /// by every authority, last first; each traced voter named in a warning (evidence of a
    /// cheating voting client). A trace with no invalid vote, or of rows other than theirs,
    /// fails.
    fn traces(
        &mut self,
        board: &PublicBoard,
        hashes: &[Vec<[u8; 32]>],
        last: &Rows<ModpGroup>,
        invalid_rows: Option<Vec<usize>>,
    ) -> Result<(), Stop> {
        let s = board.params.authorities();
        let Some(mut rows) = invalid_rows else {
            return Ok(()); // the votes could not be decrypted: found under V-CHV-08
        };
        self.ledger.examined(Check::Chv10, 0);
        if rows.is_empty() {
            return Ok(());
        }
        self.tell("trace")?;
        let mut to: Vec<Ciphertext<ModpGroup>> = Vec::new();
        for j in (0..s).rev() {
            let e = match self.next()? {
                Some(e) if e.kind == "trace" => e,
                other => {
                    let instead = other.map_or("the end of the record".into(), |e| {
                        format!("{} {}", e.kind, e.name)
                    });
                    self.ledger.fail(
                        Check::Chv10,
                        &format!("authority-{j}"),
                        format!(
                            "{} invalid votes, and {instead} where this authority's trace of \
                             them is due",
                            rows.len()
                        ),
                    );
                    return Err(Stop::Finding);
                }
            };
            self.named(&e, &format!("authority-{j}"))?;
            self.signed(board, j, "trace", &e.payload)?;
            self.ledger.examined(Check::Chv10, 1);
            let steps = match rec::decode_trace(&board.params, &e.payload) {
                Ok(t) => t,
                Err(err) => {
                    self.ledger.fail(Check::Chv10, &e.name, err.to_string());
                    return Err(Stop::Finding);
                }
            };
            if to.is_empty() {
                let Some(found) = rows
                    .iter()
                    .map(|&r| last.ciphertexts().get(r).cloned())
                    .collect::<Option<Vec<_>>>()
                else {
                    self.ledger
                        .fail(Check::Chv10, &e.name, "a row beyond the list");
                    return Err(Stop::Finding);
                };
                to = found;
            }
            // an input row is known by its hash: only the last list is held whole
            let eg = board.params.eg();
            let input_is = |i: usize, c: &Ciphertext<ModpGroup>| {
                hashes[j].get(i).map(|h| ciphertext_hash(eg, c) == *h)
            };
            match tally::check_trace(board, &to, &rows, &steps, input_is) {
                Ok(inputs) => rows = inputs,
                Err(why) => {
                    self.ledger.fail(Check::Chv10, &e.name, why);
                    return Err(Stop::Finding);
                }
            }
            // the earlier authority's outputs are this one's inputs: the elements this trace
            // gave, checked against the list's hashes
            to = steps.into_iter().map(|t| t.from).collect();
        }
        for &row in &rows {
            let voter = self.mixed.get(row).copied();
            match voter {
                Some(v) => self.ledger.warn(
                    Check::Chv10,
                    &format!("voter-{v}"),
                    "a confirmed ballot whose vote is invalid: its queries did not encode \
                     candidate primes although the voter's codes matched, evidence of a cheating \
                     voting client (spec/92.8)",
                ),
                None => self
                    .ledger
                    .fail(Check::Chv10, "trace", "a row beyond the mix input"),
            }
        }
        Ok(())
    }
}

/// The hash of each row of a list (its elements' encodings), to check a trace's rows against.
fn row_hashes(params: &votum_chvote::Params, list: &Rows<ModpGroup>) -> Vec<[u8; 32]> {
    let eg = params.eg();
    list.ciphertexts()
        .par_iter()
        .map(|c| ciphertext_hash(eg, c))
        .collect()
}

fn ciphertext_hash(eg: &ModpGroup, c: &Ciphertext<ModpGroup>) -> [u8; 32] {
    let mut b = eg.encode_element(&c.pad);
    b.extend(eg.encode_element(&c.data));
    votum_hash::board::payload_digest(&b)
}

/// Verifies a CHVote record read from `input` (`name` is how the report names it).
pub fn verify_chvote_stream<R: Read>(
    input: R,
    name: &str,
    options: Options<'_>,
) -> (Report, Intermediates) {
    let mut ledger = Ledger::new(&Check::CHV);
    let reader = match RecordReader::open(input) {
        Ok(r) => r,
        Err(e) => {
            ledger.unreadable(Check::Chv01, name, &e);
            return (
                ledger.finish(name.into(), "unreadable", 0),
                Intermediates::default(),
            );
        }
    };
    let mut walk = Walk {
        ledger,
        reader,
        progress: options.progress,
        seq: 0,
        ballots: 0,
        bounds: None,
        mixed: Vec::new(),
    };
    let _ = walk.run();
    let ballots = walk.ballots;
    // the chain's head over the entries read: what observers compare (issue 43, item 18)
    let mut out = Intermediates::default();
    out.values.insert(
        "election_id".into(),
        serde_json::json!(walk.reader.election_id()),
    );
    out.values
        .insert("head".into(), serde_json::json!(hex(&walk.reader.head())));
    (walk.ledger.finish(name.into(), FORM, ballots), out)
}
