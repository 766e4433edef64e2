//! The verifier's test vectors (vectors/verify): the untouched record passes every check, and each
//! case (the record with a few edits) gets exactly the statuses it declares, every other check
//! passing. Every ElectionGuard check id has at least one case that fails or errors it alone, and
//! every other id a negative test in the registry.
//!
//! A case is JSON: `description`, `form` ("directory" or "archive": the record is packed before the
//! edits), `edits` (applied in order, see [`apply`]) and `expect` (check id -> "fail" | "error" |
//! "not_run" for every check that must not pass).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;
use votum_verify::{verify_record, Check, Options, Report, Status};

fn vectors() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../vectors/verify")
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), target).unwrap();
        }
    }
}

fn status_name(s: Status) -> &'static str {
    match s {
        Status::Pass => "pass",
        Status::Fail => "fail",
        Status::Error => "error",
        Status::NotRun => "not_run",
    }
}

fn not_passed(report: &Report) -> BTreeMap<String, String> {
    report
        .checks
        .iter()
        .filter(|c| c.status != Status::Pass)
        .map(|c| (c.id.to_string(), status_name(c.status).to_string()))
        .collect()
}

/// Changes the last hex digit of a number written as hex text: another number of the same width.
fn bump(text: &str) -> String {
    let last = if text.ends_with('1') { '2' } else { '1' };
    format!("{}{last}", &text[..text.len() - 1])
}

fn edit_json(file: &Path, pointer: &str, change: impl FnOnce(&mut Value)) {
    let mut doc: Value = serde_json::from_str(&fs::read_to_string(file).unwrap()).unwrap();
    let target = doc
        .pointer_mut(pointer)
        .unwrap_or_else(|| panic!("{}: no {pointer}", file.display()));
    change(target);
    fs::write(file, serde_json::to_string(&doc).unwrap()).unwrap();
}

/// One edit. `file` is relative to the record (or the archive itself for byte edits):
/// - `bump` (file, pointer): the hex string there gets another last digit;
/// - `set` (file, pointer, value): the value there is replaced;
/// - `prefix` (file, pointer, text): the string there gets `text` in front;
/// - `add` (file, pointer, value): the integer there grows by `value`;
/// - `remove_key` (file, pointer, key): the object there loses `key`;
/// - `copy` (file, to) / `remove` (file): whole documents;
/// - `write` (file, text): the document's bytes are replaced;
/// - `truncate` (bytes): the archive loses its last `bytes` bytes;
/// - `flip` (offset): one byte of the archive is inverted.
fn apply(record: &Path, edit: &Value) {
    let op = edit["op"].as_str().unwrap();
    let file = || record.join(edit["file"].as_str().unwrap());
    let pointer = || edit["pointer"].as_str().unwrap().to_string();
    match op {
        "bump" => edit_json(&file(), &pointer(), |v| {
            *v = Value::String(bump(v.as_str().expect("bump needs a string")));
        }),
        "set" => edit_json(&file(), &pointer(), |v| *v = edit["value"].clone()),
        "prefix" => edit_json(&file(), &pointer(), |v| {
            let old = v.as_str().expect("prefix needs a string");
            *v = Value::String(format!("{}{old}", edit["text"].as_str().unwrap()));
        }),
        "add" => edit_json(&file(), &pointer(), |v| {
            *v = Value::from(v.as_i64().unwrap() + edit["value"].as_i64().unwrap());
        }),
        "remove_key" => edit_json(&file(), &pointer(), |v| {
            let key = edit["key"].as_str().unwrap();
            assert!(
                v.as_object_mut().unwrap().remove(key).is_some(),
                "no key {key}"
            );
        }),
        "copy" => {
            fs::copy(file(), record.join(edit["to"].as_str().unwrap())).unwrap();
        }
        "remove" => fs::remove_file(file()).unwrap(),
        "write" => fs::write(file(), edit["text"].as_str().unwrap()).unwrap(),
        "truncate" => {
            let bytes = fs::read(record).unwrap();
            let n = usize::try_from(edit["bytes"].as_u64().unwrap()).unwrap();
            fs::write(record, &bytes[..bytes.len() - n]).unwrap();
        }
        "flip" => {
            let mut bytes = fs::read(record).unwrap();
            let at = usize::try_from(edit["offset"].as_u64().unwrap()).unwrap();
            bytes[at] = !bytes[at];
            fs::write(record, bytes).unwrap();
        }
        other => panic!("unknown edit {other}"),
    }
}

fn run_case(case: &Value, work: &Path) -> Report {
    let dir = work.join("record");
    copy_dir(&vectors().join("record"), &dir);
    let target = match case["form"].as_str().unwrap_or("directory") {
        "directory" => dir,
        "archive" => {
            let archive = work.join("record.votum");
            votum_record::pack_dir(&dir, &archive).unwrap();
            archive
        }
        other => panic!("unknown form {other}"),
    };
    for edit in case["edits"].as_array().unwrap() {
        apply(&target, edit);
    }
    verify_record(&target, Options::default()).0
}

fn cases() -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for entry in fs::read_dir(vectors().join("cases")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "json") {
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            out.push((
                name,
                serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap(),
            ));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[test]
fn the_untouched_record_passes_every_check_in_both_forms() {
    let work = tempfile::tempdir().unwrap();
    for form in ["directory", "archive"] {
        let case = serde_json::json!({"form": form, "edits": []});
        let report = run_case(&case, &work.path().join(form));
        assert!(report.passed(), "{form}: {:?}", not_passed(&report));
        assert_eq!(report.ballots, 5);
        assert!(report
            .checks
            .iter()
            .all(|c| c.checked > 0 || c.id == "V-RECORD-01"));
    }
}

#[test]
fn each_case_gets_exactly_its_declared_statuses() {
    let work = tempfile::tempdir().unwrap();
    let mut wrong = Vec::new();
    for (name, case) in cases() {
        let report = run_case(&case, &work.path().join(&name));
        let expect: BTreeMap<String, String> = case["expect"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
            .collect();
        let got = not_passed(&report);
        if got != expect {
            let why: Vec<String> = report
                .checks
                .iter()
                .filter(|c| !c.findings.is_empty())
                .map(|c| format!("  {} {:?}: {:?}", c.id, c.status, c.findings[0]))
                .collect();
            wrong.push(format!(
                "{name}: expected {expect:?}, got {got:?}\n{}",
                why.join("\n")
            ));
        }
        // a check that did not pass says why
        for c in report.checks.iter().filter(|c| c.status != Status::Pass) {
            if c.status != Status::NotRun {
                assert!(!c.findings.is_empty(), "{name}: {} has no finding", c.id);
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn every_check_has_a_case_that_fails_it_alone() {
    let alone: BTreeSet<String> = cases()
        .iter()
        .filter_map(|(_, case)| {
            let expect = case["expect"].as_object().unwrap();
            let bad: Vec<&String> = expect
                .iter()
                .filter(|(_, s)| *s == "fail" || *s == "error")
                .map(|(k, _)| k)
                .collect();
            (bad.len() == 1).then(|| bad[0].clone())
        })
        .collect();
    // every ElectionGuard id has a vector that fails it alone; every id of the other record kinds
    // (whose records are built at run time) names a test function in the registry, whose existence
    // and subject `checks::tests::every_check_has_a_negative_test` checks
    let missing: Vec<&str> = Check::all()
        .filter(|c| {
            if Check::EG.contains(c) {
                !alone.contains(c.id())
            } else {
                !c.registry().negative.contains(".rs::")
            }
        })
        .map(|c| c.id())
        .collect();
    assert!(missing.is_empty(), "no negative test: {missing:?}");
}
