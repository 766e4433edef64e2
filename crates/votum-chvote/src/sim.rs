//! The simulation of a whole CHVote election in one process (spec/92.1): every step of the proof
//! of concept's table, with the same names, timed; every voter checks its return codes and its
//! finalization code; the tally is compared with the votes cast.

use std::sync::Arc;
use std::time::Instant;

use rand_core::OsRng;
use rayon::prelude::*;
use votum_group::ModpGroup;
use votum_shuffle::Rows;

use crate::authority::Authority;
use crate::client::{self, ClientTables};
use crate::election::{ElectionSet, Shape};
use crate::messages::{mixing_generators, shuffle_context};
use crate::messages::{Ballot, Confirmation, Finalization, PublicBoard, PublicVoterData, Response};
use crate::params::{Level, Params};
use crate::printing::{voting_cards, VotingCard};
use crate::record::{self as rec, RecordWriter};
use crate::tally::{self, Tally};
use crate::ChvoteError;

/// The election id of a simulated run's record (bound into its election digest, spec/92.3).
pub const ELECTION_ID: &str = "chvote";

/// What to simulate.
#[derive(Clone, Debug)]
pub struct Config {
    pub level: Level,
    pub shape: Shape,
    pub voters: usize,
    pub authorities: usize,
    /// Where to write the election's record (spec/92.10), if anywhere.
    pub record: Option<std::path::PathBuf>,
    /// Where to write one printable code sheet per voter (HTML), if anywhere.
    pub sheets: Option<std::path::PathBuf>,
}

/// The step table (name, milliseconds) and the outcome.
#[derive(Clone, Debug)]
pub struct Report {
    pub steps: Vec<(&'static str, f64)>,
    pub tally: Tally,
    pub expected: Vec<u64>,
    pub confirmed: usize,
    pub p_bits: u32,
    pub elections: Vec<(usize, usize)>,
    /// Milliseconds spent writing the record (not part of the steps).
    pub record_ms: f64,
}

/// What one voter's voting phase posted: the ballot, the responses, the confirmation and the
/// finalizations.
pub struct Transcript {
    pub ballot: Ballot,
    pub responses: Vec<Response>,
    pub confirmation: Confirmation,
    pub finalizations: Vec<Finalization>,
}

pub const STEPS: [&str; 13] = [
    "creating public parameters",
    "creating election set",
    "publishing parameters",
    "key generation",
    "public key building",
    "publish election set",
    "generating electoral data",
    "build public credentials",
    "printing code sheets",
    "voting phase",
    "mixing",
    "decryption",
    "tallying",
];

struct Clock {
    steps: Vec<(&'static str, f64)>,
    at: Instant,
}

impl Clock {
    fn lap(&mut self, name: &'static str) {
        let now = Instant::now();
        self.steps.push((name, (now - self.at).as_secs_f64() * 1e3));
        self.at = now;
    }
}

/// One voter's whole voting phase: ballot, the authorities' responses, return codes checked
/// against the card, confirmation, finalization code checked against the card.
pub fn vote(
    board: &PublicBoard,
    tables: &ClientTables,
    authorities: &[Authority],
    card: &VotingCard,
    selections: &[usize],
) -> Result<Transcript, ChvoteError> {
    let mut rng = OsRng;
    let voter = card.voter;
    let (ballot, secrets) = client::gen_ballot(
        board,
        tables,
        voter,
        &card.voting_code,
        selections,
        &mut rng,
    )?;
    let responses = authorities
        .iter()
        .map(|a| a.handle_ballot(voter, &ballot, &mut OsRng))
        .collect::<Result<Vec<_>, _>>()?;
    let points = client::get_points(board, &secrets, &responses)?;
    let shown = client::return_codes(board, selections, &points);
    if !client::check_return_codes(&card.return_codes, &shown, selections) {
        return Err(ChvoteError::Selections(format!(
            "voter {voter}: the return codes shown are not the card's"
        )));
    }
    let gamma =
        client::gen_confirmation(board, &secrets, &card.confirmation_code, &points, &mut rng)?;
    let parts = authorities
        .iter()
        .map(|a| a.handle_confirmation(voter, &gamma))
        .collect::<Result<Vec<_>, _>>()?;
    if client::finalization_code(board, &parts) != card.finalization_code {
        return Err(ChvoteError::Selections(format!(
            "voter {voter}: the finalization code is not the card's"
        )));
    }
    Ok(Transcript {
        ballot,
        responses,
        confirmation: gamma,
        finalizations: parts,
    })
}

/// Runs the whole election; `progress(step)` is called before each step.
pub fn run(config: &Config, progress: &mut dyn FnMut(&str)) -> Result<Report, ChvoteError> {
    let mut clock = Clock {
        steps: Vec::new(),
        at: Instant::now(),
    };
    progress(STEPS[0]);
    // each authority's node key (here made in process), which signs its shuffle, share and trace
    let signers: Vec<votum_node::EnvelopeSigner> = (0..config.authorities)
        .map(|_| {
            let mut seed = [0u8; 32];
            rand_core::RngCore::fill_bytes(&mut OsRng, &mut seed);
            let k = votum_node::EnvelopeSigner::from_seed(&seed);
            zeroize::Zeroize::zeroize(&mut seed);
            k
        })
        .collect();
    let params = Params::signed(
        config.level,
        config.authorities,
        signers.iter().map(|k| k.verifying_key()).collect(),
    )?;
    clock.lap(STEPS[0]);
    progress(STEPS[1]);
    let set = ElectionSet::of_shape(config.shape, config.voters)?;
    clock.lap(STEPS[1]);
    clock.lap(STEPS[2]);
    progress(STEPS[3]);
    // four short exponentiations: cheaper in turn than on the thread pool
    let mut authorities: Vec<Authority> = (0..config.authorities)
        .map(|j| Authority::new(j, params.clone(), &mut OsRng))
        .collect();
    clock.lap(STEPS[3]);
    // each share with its proof of knowledge, checked as every other party checks it (spec/92.3)
    let digest = params.digest_with(&set.shape_bytes(), ELECTION_ID);
    let key_payloads: Vec<Vec<u8>> = authorities
        .iter()
        .map(|a| a.key_share_payload(&digest, &mut OsRng))
        .collect();
    let key_shares = key_payloads
        .iter()
        .enumerate()
        .map(|(j, b)| rec::decode_key_share(&params, &digest, j, b))
        .collect::<Result<Vec<_>, _>>()?;
    clock.lap(STEPS[4]);
    clock.lap(STEPS[5]);
    progress(STEPS[6]);
    let mut secret = Vec::with_capacity(authorities.len());
    let mut public = Vec::with_capacity(authorities.len());
    for a in authorities.iter_mut() {
        let (s, p) = a.gen_electorate_data(&set)?;
        secret.push(s);
        public.push(p);
    }
    clock.lap(STEPS[6]);
    progress(STEPS[7]);
    let public_data = config.record.as_ref().map(|_| public.clone());
    let board = Arc::new(PublicBoard::new(
        params.clone(),
        set.clone(),
        ELECTION_ID,
        key_shares,
        public,
    )?);
    for a in authorities.iter_mut() {
        a.attach(board.clone());
    }
    clock.lap(STEPS[7]);
    progress(STEPS[8]);
    let cards = voting_cards(&params, &secret)?;
    drop(secret);
    if let Some(dir) = &config.sheets {
        crate::printing::write_sheets(dir, &cards, &set)?;
    }
    clock.lap(STEPS[8]);
    progress(STEPS[9]);
    // the voting client's precomputation for this election (a real client does it once per page)
    let tables = ClientTables::new(&board);
    let choices: Vec<Vec<usize>> = {
        let mut rng = OsRng;
        (0..set.voters())
            .map(|i| client::random_selections(&board, i, &mut rng))
            .collect()
    };
    // each voter's transcript is kept only for the record
    let transcripts = cards
        .par_iter()
        .zip(&choices)
        .map(|(card, s)| {
            let t = vote(&board, &tables, &authorities, card, s)?;
            Ok(public_data.as_ref().map(|_| t))
        })
        .collect::<Result<Vec<_>, ChvoteError>>()?;
    clock.lap(STEPS[9]);
    progress(STEPS[10]);
    let inputs = Rows::new(1, authorities[0].encryptions())
        .map_err(|e| ChvoteError::Parameters(e.to_string()))?;
    let confirmed = inputs.len();
    let gens = mixing_generators(&board, confirmed);
    // each authority shuffles the list before it (the proof of concept's mixing step)
    let mut lists: Vec<Rows<ModpGroup>> = vec![inputs];
    let mut proofs = Vec::new();
    let mut openings = Vec::new();
    for a in &authorities {
        let (out, proof, opening) = a.shuffle(&gens, &lists[lists.len() - 1], &mut OsRng)?;
        lists.push(out);
        proofs.push(proof);
        openings.push(opening);
    }
    clock.lap(STEPS[10]);
    progress(STEPS[11]);
    // each authority checks every shuffle, then decrypts the last list (its decryption step)
    let last = &lists[lists.len() - 1];
    let pads: Vec<_> = last.ciphertexts().iter().map(|c| c.pad.clone()).collect();
    let shares = authorities
        .par_iter()
        .map(|a| {
            // every other authority's shuffle (7.47 CheckShuffleProofs skips its own)
            for (j, proof) in proofs.iter().enumerate().filter(|(j, _)| *j != a.index()) {
                tally::check_shuffle(
                    &board,
                    j,
                    &gens,
                    &shuffle_context(&board, j),
                    &lists[j],
                    &lists[j + 1],
                    proof,
                    &mut OsRng,
                )?;
            }
            a.decrypt(&pads, &mut OsRng)
        })
        .collect::<Result<Vec<_>, _>>()?;
    clock.lap(STEPS[11]);
    progress(STEPS[12]);
    let plaintexts = tally::decrypt(&board, last, &shares)?;
    let result = tally::tally(&board, &plaintexts);
    // an invalid vote comes from a cheating client: each authority, last first, opens the rows
    // it leads back to, so the record names the voter (spec/92.8)
    let mut traces = Vec::new();
    let mut rows = result.invalid_rows.clone();
    for (j, a) in authorities.iter().enumerate().rev() {
        if rows.is_empty() {
            break;
        }
        let steps = a.trace_steps(&lists[j], &openings[j], &rows)?;
        rows = steps.iter().map(|t| t.input as usize).collect();
        traces.push((j, steps));
    }
    drop(openings);
    clock.lap(STEPS[12]);
    let mut record_ms = 0.0;
    if let (Some(path), Some(voter_data)) = (&config.record, &public_data) {
        progress("writing the record");
        let at = Instant::now();
        let transcripts: Vec<Transcript> = transcripts.into_iter().flatten().collect();
        let published = Published {
            board: &board,
            key_shares: &key_payloads,
            voter_data,
            transcripts: &transcripts,
            lists: &lists,
            proofs: &proofs,
            shares: &shares,
            tally: &result,
            traces: &traces,
            signers: &signers,
        };
        write_record(path, &published)?;
        record_ms = at.elapsed().as_secs_f64() * 1e3;
    }
    let mut expected = vec![0u64; set.total_candidates()];
    for s in &choices {
        for &v in s {
            expected[v - 1] += 1;
        }
    }
    Ok(Report {
        steps: clock.steps,
        tally: result,
        expected,
        confirmed,
        p_bits: params.eg().p().significant_bits(),
        elections: set
            .candidates
            .iter()
            .copied()
            .zip(set.selections.iter().copied())
            .collect(),
        record_ms,
    })
}

/// Everything a record holds, borrowed from the run.
pub struct Published<'a> {
    pub board: &'a PublicBoard,
    /// Each authority's `key-share` payload (its share and proof of knowledge).
    pub key_shares: &'a [Vec<u8>],
    /// Each authority's public voter data (the board keeps only their products).
    pub voter_data: &'a [Vec<PublicVoterData>],
    pub transcripts: &'a [Transcript],
    pub lists: &'a [Rows<ModpGroup>],
    pub proofs: &'a [votum_shuffle::ShuffleProof<ModpGroup>],
    pub shares: &'a [votum_mixnet::decrypt::DecryptionShare<ModpGroup>],
    pub tally: &'a Tally,
    /// The traces of the invalid votes, last authority first (spec/92.8): none when every vote is
    /// valid.
    pub traces: &'a [(usize, Vec<rec::TraceStep>)],
    /// Each authority's node signer, for its shuffle, share and trace entries.
    pub signers: &'a [votum_node::EnvelopeSigner],
}

/// Writes the record (spec/92.10) in its order; the file is written to a sibling and renamed, so
/// a failed run leaves no partial record.
pub fn write_record(path: &std::path::Path, p: &Published<'_>) -> Result<(), ChvoteError> {
    let io = |e: std::io::Error| ChvoteError::Parameters(format!("{}: {e}", path.display()));
    let partial = path.with_extension("partial");
    let file = std::fs::File::create(&partial).map_err(io)?;
    let params = &p.board.params;
    let mut w = RecordWriter::new(
        std::io::BufWriter::with_capacity(1 << 20, file),
        ELECTION_ID,
    )?;
    w.append(
        "parameters",
        "parameters",
        &rec::parameters_bytes(params, &p.board.set, ELECTION_ID),
    )?;
    for (j, payload) in p.key_shares.iter().enumerate() {
        w.append("key-share", &format!("authority-{j}"), payload)?;
    }
    for (j, d) in p.voter_data.iter().enumerate() {
        w.append(
            "voter-data",
            &format!("authority-{j}"),
            &rec::voter_data_bytes(params, d),
        )?;
    }
    for (i, t) in p.transcripts.iter().enumerate() {
        let name = format!("voter-{i}");
        w.append("ballot", &name, &rec::ballot_bytes(params, &t.ballot))?;
        w.append(
            "responses",
            &name,
            &rec::responses_bytes(params, &t.responses),
        )?;
        w.append(
            "confirmation",
            &name,
            &rec::confirmation_bytes(params, &t.confirmation),
        )?;
        w.append(
            "finalizations",
            &name,
            &rec::finalizations_bytes(params, &t.finalizations),
        )?;
    }
    w.append("input", "input", &rec::input_bytes(params, &p.lists[0]))?;
    // an authority's entry, then its signature on it (spec/92.10)
    let signed = |w: &mut RecordWriter<_>, kind: &str, j: usize, payload: &[u8]| {
        let name = format!("authority-{j}");
        w.append(kind, &name, payload)?;
        let signer = p
            .signers
            .get(j)
            .ok_or_else(|| ChvoteError::Parameters(format!("no signer for {name}")))?;
        let sig = signer.sign_record(&rec::statement(&p.board.digest, kind, &name, payload));
        w.append("signature", &rec::signature_name(kind, j), &sig)
    };
    for (j, proof) in p.proofs.iter().enumerate() {
        signed(
            &mut w,
            "shuffle",
            j,
            &rec::shuffle_bytes(params, &p.lists[j + 1], proof),
        )?;
    }
    for (j, share) in p.shares.iter().enumerate() {
        signed(&mut w, "decryption", j, &rec::share_bytes(params, share))?;
    }
    w.append(
        "result",
        "result",
        &rec::result_bytes(&p.tally.counts, p.tally.invalid),
    )?;
    for (j, steps) in p.traces {
        signed(&mut w, "trace", *j, &rec::trace_bytes(params, steps))?;
    }
    let mut out = w.into_inner()?;
    std::io::Write::flush(&mut out).map_err(io)?;
    drop(out);
    std::fs::rename(&partial, path).map_err(io)
}
