//! Estonia's IVXV decryption proofs (spec/93): the tally's proof file and the election's public key,
//! checked proof by proof, and the votes they prove counted.
//!
//! A record is a directory holding the proof file (`<election>-proof`, JSON), the public key
//! (`<election>-pub.pem`) and, when there is one, the mixer's output (`shuffled.json`), whose
//! ciphertexts must be exactly the ones the proofs decrypt. The checks are V-IVXV-01..05
//! (spec/50.8); the functions that make them are in `checks::ivxv`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde_json::Value;

use crate::checks::ivxv::{
    check_ciphertexts, check_key, check_mixed, check_plaintexts, check_proofs, sha256, Item,
    IvxvKey, ProofChecker,
};
use crate::checks::Check;
use crate::options::{BallotWorkers, InFlight, Intermediates, Options};
use crate::report::{Ledger, Report};

/// Whether `path` is a directory holding an IVXV proof file and a public key.
pub fn is_ivxv_record(path: &Path) -> bool {
    path.is_dir() && files(path).is_ok()
}

/// The proof file, the key and the mixer's output (if any) of a record directory.
fn files(dir: &Path) -> Result<(PathBuf, PathBuf, Option<PathBuf>), String> {
    let mut proofs = Vec::new();
    let mut keys = Vec::new();
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with("-proof") {
            proofs.push(entry.path());
        } else if name.ends_with("-pub.pem") {
            keys.push(entry.path());
        }
    }
    match (proofs.as_slice(), keys.as_slice()) {
        ([p], [k]) => {
            let mixed = dir.join("shuffled.json");
            Ok((p.clone(), k.clone(), mixed.is_file().then_some(mixed)))
        }
        _ => Err(format!(
            "an IVXV record holds one `*-proof` file and one `*-pub.pem` key; {} has {} and {}",
            dir.display(),
            proofs.len(),
            keys.len()
        )),
    }
}

/// Reads a file whole (a proof file of ten million votes is about 3 GB of base64): its bytes, the JSON
/// document and the decoded proofs take about 6 times its size.
fn read(path: &Path) -> Result<Vec<u8>, String> {
    crate::options::read_whole(path, 6)
}

/// Verifies an IVXV record directory (see the module's description).
pub fn verify_ivxv_record(path: &Path, options: Options<'_>) -> (Report, Intermediates) {
    let record = path.display().to_string();
    let loaded = files(path).and_then(|(p, k, m)| {
        let proof_bytes = read(&p)?;
        let key_bytes = read(&k)?;
        let mixed = m
            .map(|m| read(&m).map(|b| (file_name(&m), b)))
            .transpose()?;
        Ok((
            (file_name(&p), proof_bytes),
            (file_name(&k), key_bytes),
            mixed,
        ))
    });
    match loaded {
        Ok((proof, key, mixed)) => verify_ivxv_with(
            record,
            (&proof.0, &proof.1),
            (&key.0, &key.1),
            mixed.as_ref().map(|(n, b)| (n.as_str(), b.as_slice())),
            options.ballot_workers,
        ),
        Err(e) => {
            let mut ledger = Ledger::new(&Check::IVXV);
            ledger.error(Check::Ivxv01, &record, e);
            (
                ledger.finish(record, "unverified", 0),
                Intermediates::default(),
            )
        }
    }
}

/// Verifies an IVXV record given as its files' names and bytes: the proof file, the key, and the
/// mixer's output if there is one (the fuzz target feeds it bytes).
pub fn verify_ivxv_files(
    record: String,
    (proof_name, proof_bytes): (&str, &[u8]),
    (key_name, key_bytes): (&str, &[u8]),
    mixed: Option<(&str, &[u8])>,
) -> (Report, Intermediates) {
    verify_ivxv_with(
        record,
        (proof_name, proof_bytes),
        (key_name, key_bytes),
        mixed,
        None,
    )
}

/// [`verify_ivxv_files`], the proofs checked by `workers` when given (a cluster, spec/98.1).
fn verify_ivxv_with(
    record: String,
    (proof_name, proof_bytes): (&str, &[u8]),
    (key_name, key_bytes): (&str, &[u8]),
    mixed: Option<(&str, &[u8])>,
    workers: Option<&mut dyn BallotWorkers>,
) -> (Report, Intermediates) {
    let mut ledger = Ledger::new(&Check::IVXV);
    let mut out = Intermediates::default();
    let doc: Value = match serde_json::from_slice(proof_bytes) {
        Ok(v) => v,
        Err(e) => {
            ledger.error(Check::Ivxv01, proof_name, format!("not JSON: {e}"));
            return (ledger.finish(record, "unverified", 0), out);
        }
    };
    let (election, raw_items) = match proof_document(&doc) {
        Ok(x) => x,
        Err(e) => {
            ledger.error(Check::Ivxv01, proof_name, e);
            return (ledger.finish(record, "unverified", 0), out);
        }
    };
    let key = match IvxvKey::from_pem(key_bytes) {
        Ok(k) => k,
        Err(e) => {
            ledger.error(Check::Ivxv01, key_name, e);
            return (ledger.finish(record, "unverified", 0), out);
        }
    };
    ledger.examined(Check::Ivxv01, 2 + u64::from(mixed.is_some()));
    let key_ok = check_key(&mut ledger, &key, &election, key_name);
    let items: Vec<Item> = raw_items
        .par_iter()
        .enumerate()
        .map(|(i, (c, m, p))| Item::decode(i, c, m, p, &key))
        .collect();
    check_ciphertexts(&mut ledger, &items);
    if let Some((mixed_name, bytes)) = mixed {
        check_mixed(&mut ledger, &items, bytes, mixed_name);
    }
    let proven: Vec<bool> = if key_ok {
        match workers {
            Some(w) => match remote_proofs(&mut ledger, &raw_items, &items, &key, key_bytes, w) {
                Some(v) => v,
                None => return (ledger.finish(record, "unverified", 0), out),
            },
            None => check_proofs(&mut ledger, &items.iter().collect::<Vec<_>>(), &key),
        }
    } else {
        ledger.error(
            Check::Ivxv04,
            proof_name,
            "not checked: the key is not the standard group's",
        );
        vec![false; items.len()]
    };
    let counts = check_plaintexts(&mut ledger, &items, &proven);
    let profile = items.first().map_or("ivxv", |i| i.profile());
    out.values
        .insert("election".into(), serde_json::json!(election));
    out.values
        .insert("profile".into(), serde_json::json!(profile));
    out.values
        .insert("proofs".into(), serde_json::json!(items.len()));
    out.values.insert(
        "counts".into(),
        serde_json::json!(counts.into_iter().collect::<BTreeMap<_, _>>()),
    );
    out.values.insert(
        "proof_file_sha256".into(),
        serde_json::json!(crate::report::hex(&sha256(proof_bytes))),
    );
    let form = if profile == "ivxv-padded" {
        "ivxv-padded"
    } else {
        "ivxv-text"
    };
    (ledger.finish(record, form, items.len() as u64), out)
}

fn file_name(p: &Path) -> String {
    p.file_name().map_or_else(
        || p.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// (ciphertext, message, proof) as the proof file writes them.
type RawItem = (String, String, String);

/// The proof file's election id and items.
fn proof_document(doc: &Value) -> Result<(String, Vec<RawItem>), String> {
    let election = doc
        .get("election")
        .and_then(Value::as_str)
        .ok_or("no `election` string")?
        .to_string();
    let proofs = doc
        .get("proofs")
        .and_then(Value::as_array)
        .ok_or("no `proofs` list")?;
    let mut items = Vec::with_capacity(proofs.len());
    for (i, p) in proofs.iter().enumerate() {
        let field = |name: &str| {
            p.get(name)
                .and_then(Value::as_str)
                .map(str::to_string)
                .ok_or_else(|| format!("proof {i}: no `{name}` string"))
        };
        items.push((field("ciphertext")?, field("message")?, field("proof")?));
    }
    Ok((election, items))
}

/// The proofs checked by a cluster's workers (spec/98.1), in batches of [`REMOTE_BATCH`] with several in
/// flight: each proof goes out as the JSON array of its three strings, under the parameters
/// [`ProofChecker::TAG`] and the key's PEM. A proof the workers pass is taken; every other one is
/// checked here for its finding, as it would be without workers. `None` when the workers stop the
/// verification (Ctrl-C, a lost cluster).
fn remote_proofs(
    ledger: &mut Ledger,
    raw: &[(String, String, String)],
    items: &[Item],
    key: &IvxvKey,
    key_pem: &[u8],
    workers: &mut dyn BallotWorkers,
) -> Option<Vec<bool>> {
    let mut passed = vec![false; items.len()];
    let mut in_flight: InFlight<(usize, String)> = InFlight::new();
    let params = || ProofChecker::params(key_pem);
    let merge = |due: Vec<crate::options::Due<(usize, String)>>, passed: &mut Vec<bool>| {
        for (batch, verdicts) in due {
            if let Some(v) = verdicts {
                for ((i, _), ok) in batch.into_iter().zip(v) {
                    passed[i] = ok;
                }
            }
        }
    };
    let indices: Vec<usize> = (0..items.len()).collect();
    for chunk in indices.chunks(REMOTE_BATCH) {
        let batch = chunk
            .iter()
            .map(|&i| {
                let (c, m, p) = &raw[i];
                (i, serde_json::json!([c, m, p]).to_string())
            })
            .collect();
        if in_flight
            .submit(workers, params, batch, proof_text)
            .is_break()
        {
            return None;
        }
        let std::ops::ControlFlow::Continue(due) = in_flight.due(workers, false) else {
            return None;
        };
        merge(due, &mut passed);
    }
    if !in_flight.is_empty() {
        let std::ops::ControlFlow::Continue(due) = in_flight.due(workers, true) else {
            return None;
        };
        merge(due, &mut passed);
    }
    // what the workers did not pass is checked here, with its finding
    let rest: Vec<usize> = (0..items.len()).filter(|&i| !passed[i]).collect();
    // the client's own decoding of them (not decoded again)
    let again: Vec<&Item> = rest.iter().map(|&i| &items[i]).collect();
    ledger.examined(Check::Ivxv04, (items.len() - rest.len()) as u64);
    for (i, ok) in rest.into_iter().zip(check_proofs(ledger, &again, key)) {
        passed[i] = ok;
    }
    Some(passed)
}

/// Proofs per batch handed to the workers (the verifier's batch of ballots).
const REMOTE_BATCH: usize = 256;

fn proof_text(item: &(usize, String)) -> std::borrow::Cow<'_, str> {
    std::borrow::Cow::Borrowed(&item.1)
}
