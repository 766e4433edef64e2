//! An ElectionGuard 2.x record as egk-ec writes it (spec/65): a directory of JSON documents, read one at a
//! time, ballots decoded and checked in parallel and merged in file order. The checks are V-EG2-01…19
//! (spec/50.11), the specification's verification boxes 1–19; the functions that make them are in
//! `checks::eg2`.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use base64ct::{Base64, Encoding};
use rayon::prelude::*;
use serde_json::{json, Value};
use sha2::Digest;
use votum_arith::{to_fixed_be, Integer};
use votum_elgamal::Ciphertext;
use votum_group::{Group, ModpGroup, P256};

use crate::checks::eg2::{
    check_guardians, check_joint_key, check_parameters, ContestData, Ctx, Eg2Group, Guardian, Pair,
    Parameters,
};
use crate::checks::Check;
use crate::options::{
    keyed_params, read_keyed_params, BallotWorkers, Due, InFlight, Intermediates, Options, Progress,
};
use crate::report::{Ledger, Report};
use votum_eg2::manifest::{count, list, read_manifest as manifest, text, Manifest};
use votum_eg2::read::{
    ciphertext, contest_data, element, file_name, hash32, pair, range_proof, read_bytes, read_json,
};

/// Ballots decoded and checked per parallel batch (progress is told after each).
const BATCH: usize = 256;

/// Whether `path` is a directory holding an ElectionGuard 2.x record: `constants.json` beside an
/// `election_config.json` whose `config_version` starts `2.`.
pub fn is_eg2_record(path: &Path) -> bool {
    if !path.is_dir() || !path.join("constants.json").is_file() {
        return false;
    }
    read_json(&path.join("election_config.json"))
        .ok()
        .and_then(|v| v["config_version"].as_str().map(|s| s.starts_with("2.")))
        .unwrap_or(false)
}

// ---- ballots ----

struct Selection<G: Group> {
    id: String,
    ct: Ciphertext<G>,
    proof: Vec<Pair<G>>,
}

struct Contest<G: Group> {
    id: String,
    sequence: u32,
    hash: [u8; 32],
    selections: Vec<Selection<G>>,
    proof: Vec<Pair<G>>,
    data: ContestData<G>,
}

struct Ballot<G: Group> {
    id: String,
    style: String,
    state: String,
    preencrypt: bool,
    baux: Vec<u8>,
    code: [u8; 32],
    election_id: [u8; 32],
    contests: Vec<Contest<G>>,
}

fn ballot<G: Eg2Group>(group: &G, v: &Value) -> Result<Ballot<G>, String> {
    let contests = list(v, "contests")?
        .iter()
        .map(|c| {
            let id = text(c, "contest_id")?.to_owned();
            let selections = list(c, "selections")?
                .iter()
                .map(|s| {
                    Ok(Selection {
                        id: text(s, "selection_id")?.to_owned(),
                        ct: ciphertext(group, &s["encrypted_vote"])?,
                        proof: range_proof(group, &s["proof"])?,
                    })
                })
                .collect::<Result<_, String>>()
                .map_err(|e| format!("contest {id}: {e}"))?;
            Ok(Contest {
                sequence: count(c, "sequence_order")?,
                hash: hash32(c, "contest_hash")?,
                selections,
                proof: range_proof(group, &c["proof"]).map_err(|e| format!("contest {id}: {e}"))?,
                data: contest_data(group, &c["encrypted_contest_data"])
                    .map_err(|e| format!("contest {id}: {e}"))?,
                id,
            })
        })
        .collect::<Result<_, String>>()?;
    Ok(Ballot {
        id: text(v, "ballot_id")?.to_owned(),
        style: text(v, "ballot_style_id")?.to_owned(),
        state: text(v, "state")?.to_owned(),
        preencrypt: v["is_preencrypt"].as_bool().unwrap_or(false),
        baux: crate::report::unhex(text(v, "code_baux")?)
            .ok_or("`code_baux` is not hexadecimal")?,
        code: hash32(v, "confirmation_code")?,
        election_id: hash32(v, "election_id")?,
        contests,
    })
}

/// Every element of a ballot in the order-q subgroup (one batched test, then one by one to name a bad one).
fn members<G: Eg2Group>(group: &G, ballot: &Ballot<G>) -> Result<(), String> {
    let mut all: Vec<(&G::Element, String)> = Vec::new();
    for c in &ballot.contests {
        for s in &c.selections {
            all.push((&s.ct.pad, format!("{}/{}: α", c.id, s.id)));
            all.push((&s.ct.data, format!("{}/{}: β", c.id, s.id)));
        }
        all.push((&c.data.c0, format!("{}: C₀", c.id)));
    }
    let refs: Vec<&G::Element> = all.iter().map(|(e, _)| *e).collect();
    if group.all_members(&refs) {
        return Ok(());
    }
    let bad = all
        .iter()
        .find(|(e, _)| !group.all_members(&[e]))
        .map_or_else(String::new, |(_, w)| w.clone());
    Err(format!("{bad} is not in Z_p^r"))
}

/// What one ballot's checks found, with what the tally and the codes need of it.
struct Checked<G: Group> {
    file: String,
    findings: Vec<(Check, String, String)>,
    ballot: Option<Ballot<G>>,
}

/// Checks one ballot (V-EG2-05, 06, 07, 15): runs on a rayon thread.
fn check_ballot<G: Eg2Group>(
    ctx: &Ctx<G>,
    m: &Manifest,
    file: String,
    doc: Result<Value, String>,
    proofs: bool,
) -> Checked<G> {
    let mut findings = Vec::new();
    let mut fail =
        |check: Check, object: String, reason: String| findings.push((check, object, reason));
    let b = match doc.and_then(|v| ballot(&ctx.group, &v)) {
        Ok(b) => b,
        Err(e) => {
            fail(Check::Eg2v05, file.clone(), format!("does not read: {e}"));
            return Checked {
                file,
                findings,
                ballot: None,
            };
        }
    };
    let at = |what: &str| format!("{file}: {what}");
    if b.election_id != ctx.he {
        fail(Check::Eg2v05, at(&b.id), "`election_id` is not H_E".into());
    }
    if let Err(e) = members(&ctx.group, &b) {
        fail(Check::Eg2v05, at(&b.id), e);
    }
    if b.preencrypt {
        fail(
            Check::Eg2v15,
            at(&b.id),
            "a pre-encrypted ballot: votum does not read these yet (spec/65.4)".into(),
        );
    }
    let style = m.styles.get(&b.style);
    if style.is_none() {
        fail(
            Check::Eg2v05,
            at(&b.id),
            format!("ballot style {:?} is not the manifest's", b.style),
        );
    }
    let mut seen = BTreeSet::new();
    let mut hashes = Vec::with_capacity(b.contests.len());
    for c in &b.contests {
        let here = at(&c.id);
        hashes.push(c.hash);
        let Some(mc) = m.contests.get(&c.id) else {
            fail(Check::Eg2v05, here, "not a contest of the manifest".into());
            continue;
        };
        if !seen.insert(c.id.as_str()) {
            fail(Check::Eg2v05, here.clone(), "on the ballot twice".into());
        }
        if style.is_some_and(|units| !units.contains(&mc.district)) {
            fail(
                Check::Eg2v05,
                here.clone(),
                format!("not on ballot style {}", b.style),
            );
        }
        if c.sequence != mc.sequence {
            fail(
                Check::Eg2v05,
                here.clone(),
                "its sequence order is not the manifest's".into(),
            );
        }
        let ids: Vec<&str> = c.selections.iter().map(|s| s.id.as_str()).collect();
        let want: Vec<&str> = mc.options.iter().map(String::as_str).collect();
        if ids != want {
            fail(
                Check::Eg2v05,
                here.clone(),
                format!("its options {ids:?} are not the manifest's {want:?}"),
            );
        }
        for s in c.selections.iter().filter(|_| proofs) {
            if let Err(e) = ctx.check_range(&s.ct, &s.proof, mc.option_limit) {
                fail(Check::Eg2v05, format!("{here}/{}", s.id), e);
            }
        }
        let sum = c
            .selections
            .iter()
            .fold(Ciphertext::zero(&ctx.group), |acc, s| {
                acc.add(&ctx.group, &s.ct)
            });
        if proofs {
            if let Err(e) = ctx.check_range(&sum, &c.proof, mc.limit) {
                fail(Check::Eg2v06, here.clone(), e);
            }
        }
        let cts: Vec<&Ciphertext<G>> = c.selections.iter().map(|s| &s.ct).collect();
        if ctx.contest_hash(c.sequence, &cts) != c.hash {
            fail(
                Check::Eg2v07,
                here,
                "the contest hash χ_l does not recompute".into(),
            );
        }
    }
    if !b.preencrypt && ctx.confirmation_code(&hashes, &b.baux) != b.code {
        fail(
            Check::Eg2v07,
            at(&b.id),
            "the confirmation code does not recompute".into(),
        );
    }
    Checked {
        file,
        findings,
        ballot: Some(b),
    }
}

/// The record's ballot files, device by device, each device's in natural order of their names.
fn ballot_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let root = dir.join("encrypted_ballots");
    if !root.is_dir() {
        return Ok(Vec::new());
    }
    let mut devices: Vec<PathBuf> = std::fs::read_dir(&root)
        .map_err(|e| format!("encrypted_ballots: {e}"))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    devices.sort();
    let mut out = Vec::new();
    for d in devices {
        let mut files: Vec<PathBuf> = std::fs::read_dir(&d)
            .map_err(|e| format!("{}: {e}", file_name(&d)))?
            .flatten()
            .map(|e| e.path())
            .filter(|p| file_name(p).starts_with("eballot-") && file_name(p).ends_with(".json"))
            .collect();
        files.sort_by_key(|p| natural(&file_name(p)));
        out.extend(files);
    }
    Ok(out)
}

/// A name's sort key with its digit runs compared as numbers (`id-2` before `id-10`).
fn natural(name: &str) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    let mut text = String::new();
    let mut digits = String::new();
    for ch in name.chars() {
        if ch.is_ascii_digit() {
            digits.push(ch);
        } else {
            if !digits.is_empty() {
                out.push((
                    std::mem::take(&mut text),
                    digits.parse().unwrap_or(u64::MAX),
                ));
                digits.clear();
            }
            text.push(ch);
        }
    }
    out.push((text, digits.parse().unwrap_or(0)));
    out
}

/// What the walk is told and asks: the progress hook, and the workers that check ballots elsewhere.
struct Hooks<'o> {
    progress: Option<&'o mut dyn FnMut(Progress) -> ControlFlow<()>>,
    workers: Option<&'o mut dyn BallotWorkers>,
    /// stop once the encrypted tally is checked (V-EG2-08): what a guardian reads before it decrypts
    until_tally: bool,
}

/// Verifies an ElectionGuard 2.x record directory (spec/65). `options.progress` is told of the ballots
/// checked after each batch and may stop the run; with `options.ballot_workers` the ballots' checks
/// (V-EG2-05…07) run there (spec/98.3), and every ballot that does not pass there is checked again here.
pub fn verify_eg2_record(path: &Path, options: Options<'_>) -> (Report, Intermediates) {
    let record = path.display().to_string();
    let mut ledger = Ledger::new(&Check::EG2);
    let mut out = Intermediates::default();
    let mut hooks = Hooks {
        progress: options.progress,
        workers: options.ballot_workers,
        until_tally: false,
    };
    let ballots = match walk(path, &mut ledger, &mut out, &mut hooks) {
        Ok(n) => n,
        Err((check, object, reason)) => {
            ledger.error(check, &object, reason);
            0
        }
    };
    (ledger.finish(record, "egk-ec", ballots), out)
}

/// Checks a 2.x record as far as its encrypted tally (V-EG2-01…08, spec/65.9): what a guardian verifies
/// before it decrypts anything, so that the tally it decrypts is the sum of the record's valid cast
/// ballots. The checks of the decryptions (V-EG2-09 on) are left not run.
pub fn verify_eg2_until_tally(path: &Path) -> Report {
    let mut ledger = Ledger::new(&Check::EG2);
    let mut out = Intermediates::default();
    let mut hooks = Hooks {
        progress: None,
        workers: None,
        until_tally: true,
    };
    let ballots = match walk(path, &mut ledger, &mut out, &mut hooks) {
        Ok(n) => n,
        Err((check, object, reason)) => {
            ledger.error(check, &object, reason);
            0
        }
    };
    ledger.finish(path.display().to_string(), "egk-ec", ballots)
}

type Stop = (Check, String, String);

/// A ballot file as read: its name, and its bytes or why they did not read.
type Doc = (String, Result<Vec<u8>, String>);

fn stopped(done: u64) -> Stop {
    (
        Check::Eg2v05,
        "encrypted_ballots".into(),
        format!("the verification was stopped after {done} ballots"),
    )
}

fn error_at(check: Check, object: &str) -> impl Fn(String) -> Stop + '_ {
    move |reason| (check, object.to_owned(), reason)
}

/// The whole walk; `Err` is an Error that ends it (a document the rest needs does not read).
fn walk(
    dir: &Path,
    ledger: &mut Ledger,
    out: &mut Intermediates,
    hooks: &mut Hooks<'_>,
) -> Result<u64, Stop> {
    // V-EG2-01: the parameters
    let constants = read_json(&dir.join("constants.json"))
        .map_err(error_at(Check::Eg2v01, "constants.json"))?;
    let config = read_json(&dir.join("election_config.json"))
        .map_err(error_at(Check::Eg2v01, "election_config.json"))?;
    let manifest_bytes =
        read_bytes(&dir.join("manifest.json")).map_err(error_at(Check::Eg2v01, "manifest.json"))?;
    let hexnum = |field: &str| -> Result<Integer, Stop> {
        constants["constants"][field]
            .as_str()
            .and_then(|s| Integer::from_str_radix(s, 16).ok())
            .ok_or_else(|| {
                (
                    Check::Eg2v01,
                    "constants.json".into(),
                    format!("`{field}` is not hexadecimal"),
                )
            })
    };
    let cfg = error_at(Check::Eg2v01, "election_config.json");
    let mut params = Parameters {
        version: constants["protocolVersion"].as_str().unwrap_or(""),
        standard: Vec::new(),
        hashed: Vec::new(),
        n: count(&config, "number_of_guardians").map_err(&cfg)?,
        k: count(&config, "quorum").map_err(&cfg)?,
        hp: hash32(&config, "parameter_base_hash").map_err(&cfg)?,
        hm: hash32(&config, "manifest_hash").map_err(&cfg)?,
        hb: hash32(&config, "election_base_hash").map_err(&cfg)?,
    };
    match constants["type"].as_str().unwrap_or("") {
        "IntegerGroup" => {
            let group = ModpGroup::eg2_4096();
            let (p, q, r, g) = (
                hexnum("largePrime")?,
                hexnum("smallPrime")?,
                hexnum("cofactor")?,
                hexnum("generator")?,
            );
            params.standard = vec![
                ("p", &p == group.p()),
                ("q", &q == group.order()),
                ("r", &r == group.cofactor()),
                ("g", &g == group.generator().value()),
            ];
            params.hashed = vec![to_fixed_be(&p, 512), to_fixed_be(&q, 32), to_fixed_be(&g, 512)];
            walk_in(group, dir, &config, &manifest_bytes, &params, ledger, out, hooks)
        }
        "EllipticCurve" if constants["name"].as_str() == Some("P-256") => {
            // P-256's published constants (SEC 2, FIPS 186-4)
            let want = |hex: &str| Integer::from_str_radix(hex, 16).unwrap_or_default();
            let named = [
                ("a", "ffffffff00000001000000000000000000000000fffffffffffffffffffffffc"),
                ("b", "5ac635d8aa3a93e7b3ebbd55769886bc651d06b0cc53b0f63bce3c3e27d2604b"),
                ("primeModulus", "ffffffff00000001000000000000000000000000ffffffffffffffffffffffff"),
                ("g.x", "6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296"),
                ("g.y", "4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5"),
                ("h", "1"),
            ];
            let order = hexnum("order")?;
            params.standard.push(("order", &order == P256.order()));
            for (name, hex) in named {
                let got = hexnum(name)?;
                params.standard.push((name, got == want(hex)));
                params.hashed.push(to_fixed_be(&got, 32));
            }
            walk_in(P256, dir, &config, &manifest_bytes, &params, ledger, out, hooks)
        }
        other => Err((
            Check::Eg2v01,
            "constants.json".into(),
            format!(
                "the group is {other:?} ({}): votum reads 2.x records on the 4096-bit integer group and on \
                 P-256 (spec/65.1)",
                constants["name"].as_str().unwrap_or("unnamed")
            ),
        )),
    }
}

/// The walk once the group is known (spec/65.1): every check of the record.
#[allow(clippy::too_many_arguments)]
fn walk_in<G: Eg2Group>(
    group: G,
    dir: &Path,
    config: &Value,
    manifest_bytes: &[u8],
    params: &Parameters<'_>,
    ledger: &mut Ledger,
    out: &mut Intermediates,
    hooks: &mut Hooks<'_>,
) -> Result<u64, Stop> {
    check_parameters(ledger, params, manifest_bytes);
    let manifest_doc: Value = serde_json::from_slice(manifest_bytes).map_err(|e| {
        (
            Check::Eg2v01,
            "manifest.json".into(),
            format!("not JSON: {e}"),
        )
    })?;
    let m = manifest(&manifest_doc).map_err(error_at(Check::Eg2v01, "manifest.json"))?;
    out.values
        .insert("H_P".into(), json!(crate::report::hex(&params.hp)));
    out.values
        .insert("H_B".into(), json!(crate::report::hex(&params.hb)));

    // V-EG2-02…04: the guardians, K, H_E
    let init = error_at(Check::Eg2v02, "election_initialized.json");
    let init_doc = read_json(&dir.join("election_initialized.json")).map_err(&init)?;
    let k = element(&group, &init_doc, "joint_public_key").map_err(&init)?;
    let he = hash32(&init_doc, "extended_base_hash").map_err(&init)?;
    let mut guardians = Vec::new();
    for gd in list(&init_doc, "guardians").map_err(&init)? {
        let id = text(gd, "guardian_id").map_err(&init)?.to_owned();
        let coefficients = list(gd, "coefficient_proofs")
            .and_then(|l| {
                l.iter()
                    .map(|c| Ok((element(&group, c, "public_key")?, pair(&group, c)?)))
                    .collect::<Result<Vec<_>, String>>()
            })
            .map_err(|e| (Check::Eg2v02, id.clone(), e))?;
        guardians.push(Guardian {
            x: count(gd, "x_coordinate").map_err(|e| (Check::Eg2v02, id.clone(), e))?,
            id,
            coefficients,
        });
    }
    let mut keys: Vec<&G::Element> = guardians
        .iter()
        .flat_map(|g| g.coefficients.iter().map(|c| &c.0))
        .collect();
    keys.push(&k);
    if !group.all_members(&keys) {
        return Err((
            Check::Eg2v02,
            "election_initialized.json".into(),
            "a guardian's commitment or K is not in Z_p^r".into(),
        ));
    }
    check_guardians(ledger, &group, &params.hp, &guardians, params.n, params.k);
    check_joint_key(ledger, &group, &guardians, &k, &params.hb, &he);
    out.values
        .insert("H_E".into(), json!(crate::report::hex(&he)));
    let ctx = Ctx::new(group.clone(), k, he);

    // V-EG2-05…07, 15: the ballots, in parallel batches
    if config["chain_confirmation_codes"]
        .as_bool()
        .unwrap_or(false)
    {
        ledger.error(
            Check::Eg2v07,
            "election_config.json",
            "the record chains its confirmation codes: votum does not check chains yet (spec/65.4)",
        );
    }
    let files = ballot_files(dir).map_err(error_at(Check::Eg2v05, "encrypted_ballots"))?;
    let mut cast = Cast::<G> {
        options: BTreeMap::new(),
        ids: BTreeSet::new(),
        contests: BTreeSet::new(),
        per_contest: BTreeMap::new(),
    };
    let mut by_id: BTreeMap<String, Recorded<G>> = BTreeMap::new();
    let mut codes: BTreeMap<[u8; 32], String> = BTreeMap::new();
    // each selection's pad by a 16-byte digest: one ciphertext in two ballots is a ballot copied under another
    // id, whose confirmation code anyone can recompute for another device name (spec/65.4, V-EG2-07)
    let mut pads: std::collections::HashMap<[u8; 16], String> = std::collections::HashMap::new();
    let mut preencrypted = 0u64;
    let mut done = 0u64;
    let mut absorb = |ledger: &mut Ledger, checked: Vec<Checked<G>>| {
        for c in checked {
            for check in [Check::Eg2v05, Check::Eg2v06, Check::Eg2v07] {
                ledger.examined(check, 1);
            }
            for (check, object, reason) in c.findings {
                if check == Check::Eg2v15 {
                    ledger.error(check, &object, reason);
                } else {
                    ledger.fail(check, &object, reason);
                }
            }
            let Some(b) = c.ballot else { continue };
            preencrypted += u64::from(b.preencrypt);
            if let Some(other) = codes.insert(b.code, c.file.clone()) {
                ledger.fail(
                    Check::Eg2v07,
                    &c.file,
                    format!("its confirmation code is also {other}'s"),
                );
            }
            let cts: Vec<(String, String, Ciphertext<G>)> = b
                .contests
                .iter()
                .flat_map(|ct| {
                    ct.selections
                        .iter()
                        .map(|s| (ct.id.clone(), s.id.clone(), s.ct.clone()))
                })
                .collect();
            for (_, _, ct) in &cts {
                let digest = sha2::Sha256::digest(group.hash_bytes(&ct.pad));
                let mut key = [0u8; 16];
                key.copy_from_slice(&digest[..16]);
                if let Some(other) = pads.insert(key, c.file.clone()) {
                    ledger.fail(
                        Check::Eg2v07,
                        &c.file,
                        format!("a ciphertext of this ballot is also in {other}: a copied ballot"),
                    );
                    break;
                }
            }
            if b.state == "CAST" {
                if !cast.ids.insert(b.id.clone()) {
                    ledger.fail(
                        Check::Eg2v08,
                        &c.file,
                        format!("ballot id {} is cast twice", b.id),
                    );
                }
                for ct in &b.contests {
                    *cast.per_contest.entry(ct.id.clone()).or_default() += 1;
                }
                for (contest, option, ct) in &cts {
                    cast.contests.insert(contest.clone());
                    let acc = cast
                        .options
                        .entry((contest.clone(), option.clone()))
                        .or_insert_with(|| Ciphertext::zero(&group));
                    *acc = acc.add(&group, ct);
                }
            }
            let data = b
                .contests
                .iter()
                .map(|ct| (ct.id.clone(), ct.data.clone()))
                .collect();
            let recorded = Recorded {
                state: b.state.clone(),
                cts,
                data,
            };
            if by_id.insert(b.id.clone(), recorded).is_some() {
                ledger.fail(
                    Check::Eg2v05,
                    &c.file,
                    format!("ballot id {} is used twice", b.id),
                );
            }
        }
    };
    let mut in_flight: InFlight<Doc> = InFlight::new();
    let mut batches = files.chunks(BATCH);
    loop {
        let next = batches.next();
        let docs: Option<Vec<Doc>> =
            next.map(|b| b.iter().map(|f| (file_name(f), read_bytes(f))).collect());
        // the batches to merge now: this one here without workers, else the oldest beyond the window
        let mut ready: Vec<Due<Doc>> = Vec::new();
        match (hooks.workers.as_mut(), docs) {
            (None, Some(d)) => ready.push((d, None)),
            (None, None) => break,
            (Some(w), d) => {
                if let Some(d) = d {
                    let params =
                        || Eg2BallotChecker::params(&group, &ctx.k, &ctx.he, manifest_bytes);
                    if in_flight.submit(&mut **w, params, d, doc_text).is_break() {
                        return Err(stopped(done));
                    }
                }
                let last = next.is_none();
                match in_flight.due(&mut **w, last) {
                    ControlFlow::Continue(due) => ready = due,
                    ControlFlow::Break(()) => return Err(stopped(done)),
                }
                if last && ready.is_empty() {
                    break;
                }
            }
        }
        for (d, verdicts) in ready {
            // a ballot that passed on a worker is read here without its proofs; any other is checked whole
            let checked: Vec<Checked<G>> = d
                .into_par_iter()
                .enumerate()
                .map(|(i, (name, bytes))| {
                    let passed = verdicts.as_ref().is_some_and(|v| v.get(i) == Some(&true));
                    let doc = bytes.and_then(|b| {
                        serde_json::from_slice(&b).map_err(|e| format!("{name}: not JSON: {e}"))
                    });
                    check_ballot(&ctx, &m, name, doc, !passed)
                })
                .collect();
            done += checked.len() as u64;
            absorb(ledger, checked);
            if let Some(hook) = hooks.progress.as_mut() {
                if hook(Progress::Ballots(done)).is_break() {
                    return Err(stopped(done));
                }
            }
        }
        if next.is_none() && in_flight.is_empty() {
            break;
        }
    }
    if preencrypted == 0 {
        for check in [
            Check::Eg2v15,
            Check::Eg2v16,
            Check::Eg2v17,
            Check::Eg2v18,
            Check::Eg2v19,
        ] {
            ledger.examined(check, 0);
            ledger.warn(
                check,
                "encrypted_ballots",
                "no pre-encrypted ballot: nothing to check",
            );
        }
    } else {
        for check in [Check::Eg2v16, Check::Eg2v17, Check::Eg2v18, Check::Eg2v19] {
            ledger.error(
                check,
                "encrypted_ballots",
                format!("{preencrypted} pre-encrypted ballots not checked"),
            );
        }
    }
    out.values.insert("ballots".into(), json!(done));

    // V-EG2-08: the encrypted tally
    let tally_doc = read_json(&dir.join("encrypted_tally.json"))
        .map_err(error_at(Check::Eg2v08, "encrypted_tally.json"))?;
    let encrypted =
        tally(&group, &tally_doc).map_err(error_at(Check::Eg2v08, "encrypted_tally.json"))?;
    check_aggregation(ledger, &group, &m, &tally_doc, &encrypted, &cast);
    if hooks.until_tally {
        return Ok(done);
    }

    // V-EG2-09…11: the decrypted tally
    let tally_bytes =
        read_bytes(&dir.join("tally.json")).map_err(error_at(Check::Eg2v09, "tally.json"))?;
    let decrypted_doc: Value = serde_json::from_slice(&tally_bytes).map_err(|e| {
        (
            Check::Eg2v09,
            "tally.json".to_owned(),
            format!("not JSON: {e}"),
        )
    })?;
    out.values.insert(
        "tally_sha256".into(),
        json!(crate::report::hex(&sha2::Sha256::digest(&tally_bytes))),
    );
    ledger.examined(Check::Eg2v11, 0);
    let with_data = ledger.checked(Check::Eg2v11);
    let counts = check_decryption(
        ledger,
        &ctx,
        &m,
        "tally.json",
        &decrypted_doc,
        Some(&encrypted),
        None,
    );
    // "contest/option" → count, as the ElectionGuard 1.x report gives them (`votum verify` prints them)
    let flat: serde_json::Map<String, Value> = counts
        .as_object()
        .into_iter()
        .flatten()
        .flat_map(|(c, opts)| {
            opts.as_object()
                .into_iter()
                .flatten()
                .map(move |(o, n)| (format!("{c}/{o}"), n.clone()))
        })
        .collect();
    out.values.insert("counts".into(), Value::Object(flat));
    out.values.insert("cast".into(), json!(cast.ids.len()));
    out.values
        .insert("contest_ballots".into(), json!(cast.per_contest));
    out.values.insert("tally".into(), counts);
    if ledger.checked(Check::Eg2v11) == with_data {
        ledger.warn(
            Check::Eg2v11,
            "tally.json",
            "the tally decrypts no contest data: nothing to check",
        );
    }

    // V-EG2-12…14: the challenged ballots
    ledger.examined(Check::Eg2v12, 0);
    ledger.examined(Check::Eg2v13, 0);
    ledger.examined(Check::Eg2v14, 0);
    let challenged = dir.join("challenged_ballots");
    let mut decrypted = BTreeSet::new();
    if challenged.is_dir() {
        let mut files: Vec<PathBuf> = std::fs::read_dir(&challenged)
            .map_err(|e| (Check::Eg2v12, "challenged_ballots".into(), e.to_string()))?
            .flatten()
            .map(|e| e.path())
            .filter(|p| file_name(p).ends_with(".json"))
            .collect();
        files.sort_by_key(|p| natural(&file_name(p)));
        for f in files {
            let name = file_name(&f);
            match read_json(&f) {
                Ok(doc) => {
                    let id = doc["id"].as_str().unwrap_or("").to_owned();
                    match by_id.get(&id) {
                        Some(r) if r.state == "CHALLENGED" || r.state == "SPOILED" => {
                            decrypted.insert(id.clone());
                            let _ = check_decryption(ledger, &ctx, &m, &name, &doc, None, Some(r));
                        }
                        Some(r) => ledger.fail(
                            Check::Eg2v12,
                            &name,
                            format!(
                                "ballot {id} is {}, not challenged: it must not be decrypted",
                                r.state
                            ),
                        ),
                        None => ledger.fail(
                            Check::Eg2v12,
                            &name,
                            format!("ballot {id} is not in the record"),
                        ),
                    }
                }
                Err(e) => ledger.fail(Check::Eg2v12, &name, e),
            }
        }
    }
    for (id, r) in &by_id {
        if r.state == "CHALLENGED" && !decrypted.contains(id) {
            ledger.fail(
                Check::Eg2v12,
                id,
                "a challenged ballot with no decryption in challenged_ballots",
            );
        }
    }
    Ok(done)
}

/// What the record holds of a ballot, for its decryption if it is challenged.
struct Recorded<G: Group> {
    state: String,
    /// (contest, option, (α, β))
    cts: Vec<(String, String, Ciphertext<G>)>,
    /// (contest, its contest data)
    data: Vec<(String, ContestData<G>)>,
}

/// The encrypted tally: (contest, option) → (A, B).
fn tally<G: Eg2Group>(
    group: &G,
    v: &Value,
) -> Result<BTreeMap<(String, String), Ciphertext<G>>, String> {
    let mut out = BTreeMap::new();
    for c in list(v, "contests")? {
        let contest = text(c, "contest_id")?;
        for s in list(c, "selections")? {
            let option = text(s, "selection_id")?;
            let ct = ciphertext(group, &s["encrypted_vote"])
                .map_err(|e| format!("{contest}/{option}: {e}"))?;
            if !group.all_members(&[&ct.pad, &ct.data]) {
                return Err(format!("{contest}/{option}: not in Z_p^r"));
            }
            if out
                .insert((contest.to_owned(), option.to_owned()), ct)
                .is_some()
            {
                return Err(format!("{contest}/{option} is listed twice"));
            }
        }
    }
    Ok(out)
}

/// The cast ballots, as the aggregation needs them.
struct Cast<G: Group> {
    /// (contest, option) → the product of the cast ballots' (α, β)
    options: BTreeMap<(String, String), Ciphertext<G>>,
    ids: BTreeSet<String>,
    contests: BTreeSet<String>,
    /// contest → the number of cast ballots that hold it (a contest is on its styles' ballots only)
    per_contest: BTreeMap<String, u64>,
}

/// A decrypted option as read: (A, B), T, the proof, the count; and decrypted contest data: (C₀, C₁, C₂), β, the proof.
type Decoded<G> = (Ciphertext<G>, <G as Group>::Element, Pair<G>, u64);
type DecodedData<G> = (ContestData<G>, <G as Group>::Element, Pair<G>);

/// V-EG2-08 (2.0 box 8).
fn check_aggregation<G: Eg2Group>(
    ledger: &mut Ledger,
    group: &G,
    m: &Manifest,
    doc: &Value,
    encrypted: &BTreeMap<(String, String), Ciphertext<G>>,
    cast: &Cast<G>,
) {
    let cast_ids = &cast.ids;
    let file = "encrypted_tally.json";
    let listed: BTreeSet<String> = doc["cast_ballot_ids"]
        .as_array()
        .map(|l| {
            l.iter()
                .filter_map(|x| x.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    if listed != *cast_ids {
        let missing = cast_ids.difference(&listed).count();
        let extra = listed.difference(cast_ids).count();
        ledger.fail(
            Check::Eg2v08,
            file,
            format!("its cast ballot ids are not the record's cast ballots ({missing} missing, {extra} not cast)"),
        );
    }
    for (key, ct) in encrypted {
        ledger.examined(Check::Eg2v08, 1);
        let known = m
            .contests
            .get(&key.0)
            .is_some_and(|c| c.options.contains(&key.1));
        if !known {
            ledger.fail(
                Check::Eg2v08,
                &format!("{}/{}", key.0, key.1),
                "not an option of the manifest",
            );
            continue;
        }
        let want = cast.options.get(key);
        let matches = match want {
            Some(w) => w == ct,
            None => *ct == Ciphertext::zero(group),
        };
        if !matches {
            ledger.fail(
                Check::Eg2v08,
                &format!("{}/{}", key.0, key.1),
                "(A, B) is not the product of the cast ballots' encryptions",
            );
        }
    }
    for key in cast.options.keys() {
        if !encrypted.contains_key(key) {
            ledger.fail(
                Check::Eg2v08,
                &format!("{}/{}", key.0, key.1),
                "cast but not in the tally",
            );
        }
    }
    for contest in &cast.contests {
        if !encrypted.keys().any(|k| &k.0 == contest) {
            ledger.fail(
                Check::Eg2v08,
                contest,
                "on cast ballots but not in the tally",
            );
        }
    }
}

/// V-EG2-09…11 (the tally, `encrypted` given) or V-EG2-12…14 (a challenged ballot, `ballot` given: its
/// ciphertexts as cast). Returns the counts, contest → option → t.
fn check_decryption<G: Eg2Group>(
    ledger: &mut Ledger,
    ctx: &Ctx<G>,
    m: &Manifest,
    file: &str,
    doc: &Value,
    encrypted: Option<&BTreeMap<(String, String), Ciphertext<G>>>,
    ballot: Option<&Recorded<G>>,
) -> Value {
    let is_ballot = ballot.is_some();
    let (proof_check, value_check, data_check) = if is_ballot {
        (Check::Eg2v12, Check::Eg2v13, Check::Eg2v14)
    } else {
        (Check::Eg2v09, Check::Eg2v10, Check::Eg2v11)
    };
    let g = &ctx.group;
    let mut counts = serde_json::Map::new();
    if doc["election_id"]
        .as_str()
        .and_then(|s| Base64::decode_vec(s).ok())
        .as_deref()
        != Some(&ctx.he[..])
    {
        ledger.fail(proof_check, file, "`election_id` is not H_E");
    }
    let Ok(contests) = list(doc, "contests") else {
        ledger.fail(proof_check, file, "`contests` is not a list");
        return Value::Null;
    };
    let mut seen_contests = BTreeSet::new();
    for c in contests {
        let Ok(cid) = text(c, "contest_id") else {
            ledger.fail(value_check, file, "a contest without an id");
            continue;
        };
        let here = format!("{file}: {cid}");
        let Some(mc) = m.contests.get(cid) else {
            ledger.fail(value_check, &here, "not a contest of the manifest");
            continue;
        };
        if !seen_contests.insert(cid.to_owned()) {
            ledger.fail(value_check, &here, "listed twice");
        }
        let mut options = serde_json::Map::new();
        let mut sum = 0u64;
        let mut seen = BTreeSet::new();
        for s in c["selections"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
        {
            ledger.examined(proof_check, 1);
            ledger.examined(value_check, 1);
            let sid = s["selection_id"].as_str().unwrap_or("");
            let at = format!("{here}/{sid}");
            if !mc.options.iter().any(|o| o == sid) || !seen.insert(sid.to_owned()) {
                ledger.fail(
                    value_check,
                    &at,
                    "not an option of the contest, or listed twice",
                );
                continue;
            }
            let read = (|| -> Result<Decoded<G>, String> {
                let ct = ciphertext(g, &s["encrypted_vote"])?;
                let t = element(g, s, "b_over_m")?;
                let proof = pair(g, &s["proof"])?;
                let value = s["tally"].as_u64().ok_or("`tally` is not a count")?;
                if !g.all_members(&[&ct.pad, &ct.data, &t]) {
                    return Err("(A, B) or T is not in Z_p^r".into());
                }
                Ok((ct, t, proof, value))
            })();
            let (ct, t, proof, value) = match read {
                Ok(x) => x,
                Err(e) => {
                    ledger.fail(proof_check, &at, e);
                    continue;
                }
            };
            let source = match (encrypted, ballot) {
                (Some(e), _) => e.get(&(cid.to_owned(), sid.to_owned())).cloned(),
                (_, Some(b)) => b
                    .cts
                    .iter()
                    .find(|(c2, s2, _)| c2 == cid && s2 == sid)
                    .map(|x| x.2.clone()),
                _ => None,
            };
            if source.as_ref() != Some(&ct) {
                ledger.fail(
                    proof_check,
                    &at,
                    if is_ballot {
                        "its (α, β) are not the ballot's as recorded"
                    } else {
                        "its (A, B) are not the encrypted tally's"
                    },
                );
            }
            if !ctx.check_decryption(&ct, &t, &proof) {
                ledger.fail(
                    proof_check,
                    &at,
                    "the decryption proof's challenge does not recompute",
                );
            }
            if ctx.k_pow(value) != t {
                ledger.fail(value_check, &at, format!("T is not K^{value}"));
            }
            if is_ballot && value > u64::from(mc.option_limit) {
                ledger.fail(
                    value_check,
                    &at,
                    format!("vote {value} above the option limit {}", mc.option_limit),
                );
            }
            sum += value;
            options.insert(sid.to_owned(), json!(value));
        }
        for o in &mc.options {
            if !seen.contains(o) {
                ledger.fail(
                    value_check,
                    &format!("{here}/{o}"),
                    "an option of the manifest missing",
                );
            }
        }
        if is_ballot && sum > u64::from(mc.limit) {
            ledger.fail(
                value_check,
                &here,
                format!("{sum} votes above the contest limit {}", mc.limit),
            );
        }
        if let Some(d) = c.get("decrypted_contest_data").filter(|d| !d.is_null()) {
            ledger.examined(data_check, 1);
            let read = (|| -> Result<DecodedData<G>, String> {
                let data = contest_data(g, &d["encrypted_contest_data"])?;
                let beta = element(g, d, "beta")?;
                if !g.all_members(&[&data.c0, &beta]) {
                    return Err("C₀ or β is not in Z_p^r".into());
                }
                Ok((data, beta, pair(g, &d["proof"])?))
            })();
            match read {
                Ok((data, beta, proof)) => {
                    let recorded =
                        ballot.map(|b| b.data.iter().find(|(c2, _)| c2 == cid).map(|x| &x.1));
                    if recorded.is_some_and(|r| r != Some(&data)) {
                        ledger.fail(
                            data_check,
                            &here,
                            "its contest data is not the ballot's as recorded",
                        );
                    }
                    if !ctx.check_data_decryption(&data, &beta, &proof) {
                        ledger.fail(
                            data_check,
                            &here,
                            "the contest data's decryption proof does not recompute",
                        );
                    }
                }
                Err(e) => ledger.fail(data_check, &here, e),
            }
        }
        counts.insert(cid.to_owned(), Value::Object(options));
    }
    if !is_ballot {
        for id in m.contests.keys() {
            if !seen_contests.contains(id) {
                ledger.fail(
                    value_check,
                    &format!("{file}: {id}"),
                    "a contest of the manifest missing",
                );
            }
        }
    }
    Value::Object(counts)
}

/// One document of a 2.x record checked alone, on P-256 with the manifest `manifest_bytes` (the fuzz target's
/// entry, spec/65.3): by `which` mod 4, a ballot (0), a manifest (1), an encrypted tally (2), a decrypted tally
/// or challenged ballot (3). Returns how many findings the checks made; any bytes end in a count, never a panic.
pub fn check_document(manifest_bytes: &[u8], which: u8, doc: &[u8]) -> usize {
    let parsed = serde_json::from_slice::<Value>(doc).map_err(|e| format!("not JSON: {e}"));
    if which % 4 == 1 {
        return usize::from(parsed.and_then(|v| manifest(&v)).is_err());
    }
    let Ok(m) = serde_json::from_slice::<Value>(manifest_bytes)
        .map_err(|e| e.to_string())
        .and_then(|v| manifest(&v))
    else {
        return 0;
    };
    let group = P256;
    let ctx = Ctx::new(group, group.generator().clone(), [0u8; 32]);
    match which % 4 {
        0 => check_ballot(&ctx, &m, "fuzz".into(), parsed, true)
            .findings
            .len(),
        2 => parsed
            .and_then(|v| tally(&group, &v))
            .map_or(1, |t| t.len()),
        _ => {
            let Ok(v) = parsed else { return 1 };
            let mut ledger = Ledger::new(&Check::EG2);
            let empty = BTreeMap::new();
            let _ = check_decryption(&mut ledger, &ctx, &m, "fuzz", &v, Some(&empty), None);
            let report = ledger.finish("fuzz".into(), "egk-ec", 0);
            report.checks.iter().map(|c| c.findings.len()).sum()
        }
    }
}

/// A ballot file's text as a worker is handed it (an unreadable one as nothing).
fn doc_text((_, bytes): &Doc) -> std::borrow::Cow<'_, str> {
    bytes.as_ref().map_or(std::borrow::Cow::Borrowed(""), |b| {
        String::from_utf8_lossy(b)
    })
}

/// A 2.x record's ballot checks (V-EG2-05…07, 15) built from the parameters the verifier hands a cluster
/// (spec/98.3), answering only verdicts: what a worker runs for `votum verify --scheduler` on a 2.x record.
pub struct Eg2BallotChecker {
    inner: OneBallot,
}

use crate::eg21::OneBallot;

impl Eg2BallotChecker {
    /// The first bytes of a 2.x record's ballot-check parameters.
    pub const TAG: &'static [u8] = b"eg2-ballots\n";

    /// The parameters: the tag, the group's name and a newline, K's length (8 bytes, big-endian) and K as
    /// the record writes it, H_E, then the manifest's bytes as stored.
    fn params<G: Eg2Group>(group: &G, k: &G::Element, he: &[u8; 32], manifest: &[u8]) -> Vec<u8> {
        let key = group.hash_bytes(k);
        keyed_params(Self::TAG, group.id().name(), &key, he, manifest)
    }

    /// Whether `params` are a 2.x or a 2.1 record's ballot-check parameters (by their first bytes).
    pub fn is_params(params: &[u8]) -> bool {
        params.starts_with(Self::TAG) || params.starts_with(crate::eg21::BALLOTS_TAG)
    }

    /// Builds the checks from the parameters (an egk-ec form's, or a 2.1 record's: spec/98.3); `Err` when
    /// they do not read.
    pub fn new(params: &[u8]) -> Result<Self, String> {
        if params.starts_with(crate::eg21::BALLOTS_TAG) {
            let keyed = read_keyed_params(crate::eg21::BALLOTS_TAG, params)?;
            return crate::eg21::ballot_checker(keyed).map(|inner| Self { inner });
        }
        let (name, key, he, manifest_bytes) = read_keyed_params(Self::TAG, params)?;
        let doc: Value =
            serde_json::from_slice(manifest_bytes).map_err(|e| format!("manifest: {e}"))?;
        let m = manifest(&doc)?;
        fn build<G: Eg2Group>(
            group: G,
            key: &[u8],
            he: [u8; 32],
            m: Manifest,
        ) -> Result<OneBallot, String> {
            let k = group.read_element(key)?;
            if !group.all_members(&[&k]) {
                return Err("K is not in the group".into());
            }
            let ctx = Ctx::new(group, k, he);
            Ok(Box::new(move |text: &str| {
                let doc = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"));
                check_ballot(&ctx, &m, String::new(), doc, true)
                    .findings
                    .is_empty()
            }))
        }
        let inner = match name {
            b"p256" => build(P256, key, he, m)?,
            b"eg2-4096" => build(ModpGroup::eg2_4096(), key, he, m)?,
            other => return Err(format!("group {:?}", String::from_utf8_lossy(other))),
        };
        Ok(Self { inner })
    }

    /// Whether each ballot (its JSON text) passes V-EG2-05…07 and is not pre-encrypted; on every core.
    pub fn check(&self, ballots: &[&str]) -> Vec<bool> {
        ballots.par_iter().map(|b| (self.inner)(b)).collect()
    }
}
