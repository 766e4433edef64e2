//! Verifying a CHVote election's record (spec/92.10, checks V-CHV-01..11 of spec/50.7), one entry
//! at a time, each checked by its function in `checks::chv`: memory holds the public credentials, the ballots of voters who have not yet
//! confirmed, the confirmed encryptions, and the list being checked and the one before it.

use rayon::prelude::*;
use std::fs::File;
use std::io::{BufReader, Read};
use std::ops::ControlFlow;
use std::path::Path;

use votum_chvote::messages::{generators, Ballot, PublicBoard, Response};
use votum_chvote::record::{self as rec, voter_of, Entry, RecordReader};
use votum_chvote::tally;
use votum_elgamal::Ciphertext;
use votum_group::{Group, ModElement, ModpGroup};
use votum_hash::board_file::Bound;
use votum_shuffle::Rows;

use crate::checks::chv::{
    check_ballot, check_confirmation, check_decryption, check_election_id, check_finalizations,
    check_finalized, check_input, check_level, check_responses, check_result, check_share_entry,
    check_shuffle, check_signature, check_traced,
};
use crate::checks::Check;
use crate::options::{Intermediates, Options, Progress};
use crate::report::{hex, Ledger, Report};

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
    /// The count of the decrypted votes (per candidate, and the invalid votes), once recounted.
    result: Option<(Vec<u64>, u64)>,
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

/// Per shuffle, the hash of each of its input rows.
type RowHashes = Vec<Vec<[u8; 32]>>;

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
        check_finalized(&mut self.ledger, p.voter);
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

    /// Reads the record front to back in spec/92.10's order, each part by its own step below, which
    /// calls the checks of `checks::chv`.
    fn run(&mut self) -> Result<(), Stop> {
        let board = self.setup()?;
        let mut rng = rand_core::OsRng;
        let (entry, confirmed) = self.voting(&board)?;
        self.tell("input")?;
        let Some(input) = check_input(
            &mut self.ledger,
            &board.params,
            &entry.payload,
            &confirmed,
            &mut rng,
        ) else {
            return Err(Stop::Finding);
        };
        drop(confirmed);
        let (hashes, last) = self.shuffles(&board, input)?;
        let plaintexts = self.decryption(&board, &last)?;
        let e = self.expect("result")?;
        let recount = check_result(&mut self.ledger, &board, plaintexts.as_deref(), &e.payload);
        let invalid_rows = recount.as_ref().map(|t| t.invalid_rows.clone());
        self.result = recount.map(|t| (t.counts, t.invalid));
        self.traces(&board, &hashes, &last, invalid_rows)?;
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

    /// The parameters, each authority's key share and public voter data (V-CHV-02): the board the
    /// rest is checked against.
    fn setup(&mut self) -> Result<PublicBoard, Stop> {
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
        check_level(&mut self.ledger, &params);
        let s = params.authorities();
        if !check_election_id(&mut self.ledger, &election_id, self.reader.election_id()) {
            return Err(Stop::Finding);
        }
        let digest = params.digest_with(&set.shape_bytes(), &election_id);
        // each share's proof of knowledge: a share chosen to cancel the others has none (spec/92.3)
        let mut key_shares = Vec::with_capacity(s);
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
        let board = match PublicBoard::new(params, set, &election_id, key_shares, voter_data) {
            Ok(b) => b,
            Err(err) => {
                self.ledger
                    .fail(Check::Chv02, "voter data", err.to_string());
                return Err(Stop::Finding);
            }
        };
        self.ledger.examined(Check::Chv02, 1 + 2 * s as u64);
        Ok(board)
    }

    /// The ballots, in increasing voter order, each followed by its responses, then perhaps the
    /// confirmation and the finalizations (V-CHV-03, 04, 05), up to the input list. Returns the
    /// input list's entry and the finalized ballots' encryptions.
    fn voting(&mut self, board: &PublicBoard) -> Result<(Entry, Vec<Ciphertext<ModpGroup>>), Stop> {
        let mut confirmed: Vec<Ciphertext<ModpGroup>> = Vec::new();
        let mut last_voter: Option<usize> = None;
        let mut pending: Option<Pending> = None;
        loop {
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
                "ballot" => pending = self.ballot(board, &e, &mut last_voter)?,
                "responses" => {
                    let Some(p) = pending
                        .as_mut()
                        .filter(|p| voter_of(&e.name) == Some(p.voter))
                    else {
                        self.ledger
                            .fail(Check::Chv04, &e.name, "responses without a ballot");
                        continue;
                    };
                    match check_responses(&mut self.ledger, &board.params, &e.name, &e.payload) {
                        Some(r) => p.responses = r,
                        None => p.ok = false,
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
                    if p.ok {
                        p.ok = check_confirmation(
                            &mut self.ledger,
                            board,
                            p.voter,
                            &e.name,
                            &e.payload,
                        );
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
                    if p.ok {
                        check_finalizations(
                            &mut self.ledger,
                            board,
                            (p.voter, &p.ballot, &p.responses),
                            &e.name,
                            &e.payload,
                        );
                    }
                }
                "input" => return Ok((e, confirmed)),
                _ => {
                    self.ledger.fail(
                        Check::Chv01,
                        &format!("entry {}", e.seq),
                        format!("{} {} among the ballots", e.kind, e.name),
                    );
                    return Err(Stop::Finding);
                }
            }
        }
    }

    /// A `ballot` entry (V-CHV-03): a voter of the electorate, after the last ballot's voter, and
    /// the ballot's own checks. Returns the voter's pending ballot, `None` when there is none.
    fn ballot(
        &mut self,
        board: &PublicBoard,
        e: &Entry,
        last_voter: &mut Option<usize>,
    ) -> Result<Option<Pending>, Stop> {
        let Some(i) = voter_of(&e.name).filter(|&i| i < board.voters()) else {
            self.ledger
                .fail(Check::Chv03, &e.name, "not a voter of the electorate");
            return Ok(None);
        };
        if last_voter.is_some_and(|l| i <= l) {
            self.ledger.fail(
                Check::Chv03,
                &e.name,
                "a second ballot, or ballots out of voter order",
            );
            return Ok(None);
        }
        *last_voter = Some(i);
        self.ballots += 1;
        if self.ballots.is_multiple_of(256) {
            self.tell(&e.name)?;
        }
        Ok(
            check_ballot(&mut self.ledger, board, i, &e.name, &e.payload).map(|b| Pending {
                voter: i,
                ballot: b.ballot,
                a: b.a,
                responses: Vec::new(),
                ok: b.ok,
                confirmed: false,
            }),
        )
    }

    /// Every authority's shuffle in turn (V-CHV-07), each signed (V-CHV-11). Returns each shuffle's
    /// input rows, hashed (a trace of an invalid vote, after the result, names rows of every list,
    /// and only the last list is kept whole, spec/92.8), and the last list.
    fn shuffles(
        &mut self,
        board: &PublicBoard,
        input: Rows<ModpGroup>,
    ) -> Result<(RowHashes, Rows<ModpGroup>), Stop> {
        let s = board.params.authorities();
        let gens = generators(board, input.len());
        let mut rng = rand_core::OsRng;
        let mut current = input;
        let mut hashes: RowHashes = Vec::with_capacity(s);
        for j in 0..s {
            hashes.push(row_hashes(&board.params, &current));
            let e = self.expect("shuffle")?;
            self.named(&e, &format!("authority-{j}"))?;
            self.signed(board, j, "shuffle", &e.payload)?;
            self.tell(&e.name)?;
            current = check_shuffle(
                &mut self.ledger,
                board,
                (j, &gens),
                &current,
                &e.name,
                &e.payload,
                &mut rng,
            )
            .ok_or(Stop::Finding)?;
        }
        Ok((hashes, current))
    }

    /// Every authority's decryption share (V-CHV-08), each signed (V-CHV-11); the plaintexts when
    /// every share holds.
    fn decryption(
        &mut self,
        board: &PublicBoard,
        last: &Rows<ModpGroup>,
    ) -> Result<Option<Vec<ModElement>>, Stop> {
        let s = board.params.authorities();
        let mut shares = Vec::with_capacity(s);
        for j in 0..s {
            let e = self.expect("decryption")?;
            self.named(&e, &format!("authority-{j}"))?;
            self.signed(board, j, "decryption", &e.payload)?;
            if let Some(share) =
                check_share_entry(&mut self.ledger, &board.params, &e.name, &e.payload)
            {
                shares.push(share);
            }
        }
        self.tell("decryption")?;
        Ok(check_decryption(&mut self.ledger, board, last, &shares))
    }

    /// The `signature` entry after authority j's entry of `kind` (V-CHV-11, spec/92.10).
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
                check_signature(
                    &mut self.ledger,
                    board,
                    (j, kind, &want),
                    payload,
                    &s.payload,
                );
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
        check_traced(&mut self.ledger, &rows, &self.mixed);
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
        result: None,
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
    if let Some((counts, invalid)) = walk.result.take() {
        out.values
            .insert("counts".into(), serde_json::json!(counts));
        out.values
            .insert("invalid".into(), serde_json::json!(invalid));
    }
    (walk.ledger.finish(name.into(), FORM, ballots), out)
}
