#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! microsoft/electionguard-rust's key-ceremony artifacts (spec/65.10, checks V-EG2-01…04): its committed
//! example set and a run of its own command line both pass, and each change to a copy fails its own check.

use std::path::{Path, PathBuf};

use serde_json::Value;
use votum_verify::{verify_record, Kind, Options, Status};

fn vectors(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../vectors/eg2")
        .join(name)
}

fn failing(dir: &Path) -> Vec<&'static str> {
    let (report, _) = verify_record(dir, Options::default());
    assert_eq!(report.form, "electionguard-rust");
    report
        .checks
        .iter()
        .filter(|c| c.status != Status::Pass)
        .map(|c| c.id)
        .collect()
}

/// A copy of the CLI run's artifacts with `edit` applied to its public directory.
fn changed(edit: impl FnOnce(&Path)) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let public = dir.path().join("public");
    std::fs::create_dir(&public).unwrap();
    for f in std::fs::read_dir(vectors("electionguard-rust-run/public")).unwrap() {
        let f = f.unwrap();
        std::fs::copy(f.path(), public.join(f.file_name())).unwrap();
    }
    edit(&public);
    dir
}

fn edit_json(path: &Path, f: impl FnOnce(&mut Value)) {
    let mut doc: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    f(&mut doc);
    std::fs::write(path, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
}

/// The last hex digit of a number changed.
fn bump(v: &mut Value) {
    let s = v.as_str().unwrap().to_owned();
    let last = if s.ends_with('1') { '2' } else { '1' };
    *v = Value::String(format!("{}{last}", &s[..s.len() - 1]));
}

#[test]
fn the_example_artifacts_and_a_run_of_its_command_line_pass() {
    // the third: guardians made by votum (`votum-eg2`'s example `egrs_guardians`), whose proofs
    // electionguard-rust checked when it computed K and H_E from them
    for set in [
        "electionguard-rust-example",
        "electionguard-rust-run",
        "electionguard-rust-votum-guardians",
    ] {
        assert!(
            failing(&vectors(set)).is_empty(),
            "{set}: {:?}",
            failing(&vectors(set))
        );
        assert_eq!(Kind::detect(&vectors(set)), Kind::EgRust);
        // the public directory itself is read the same way
        assert!(failing(&vectors(set).join("public")).is_empty());
    }
}

#[test]
fn a_changed_proof_or_a_missing_guardian_is_v_eg2_02() {
    let dir = changed(|p| {
        for name in [
            "guardian_2.public_key.json.json",
            "guardian_2.public_key_canonical.bin.json",
        ] {
            edit_json(&p.join(name), |d| {
                bump(&mut d["coefficient_proofs"][1]["response"])
            });
        }
    });
    assert_eq!(failing(dir.path()), ["V-EG2-02"]);
    let dir = changed(|p| {
        for name in [
            "guardian_5.public_key.json.json",
            "guardian_5.public_key_canonical.bin.json",
        ] {
            std::fs::remove_file(p.join(name)).unwrap();
        }
    });
    assert!(failing(dir.path()).contains(&"V-EG2-02"));
    // two files of one guardian that disagree
    let dir = changed(|p| {
        edit_json(&p.join("guardian_3.public_key.json.json"), |d| {
            bump(&mut d["coefficient_proofs"][0]["challenge"]);
        });
    });
    assert!(failing(dir.path()).contains(&"V-EG2-02"));
}

#[test]
fn a_changed_hash_or_manifest_is_v_eg2_01_and_a_changed_key_or_h_e_theirs() {
    let dir = changed(|p| edit_json(&p.join("hashes.json"), |d| bump(&mut d["h_b"])));
    assert_eq!(failing(dir.path()), ["V-EG2-01"]);
    let dir = changed(|p| {
        let path = p.join("election_manifest_canonical.bin");
        let text = String::from_utf8(std::fs::read(&path).unwrap()).unwrap();
        std::fs::write(path, text.replacen("Imaginaria", "Imaginarja", 1)).unwrap();
    });
    // H_M, hence H_B, hence the H_E recomputed from it
    assert_eq!(failing(dir.path()), ["V-EG2-01", "V-EG2-04"]);
    let dir = changed(|p| edit_json(&p.join("hashes_ext.json"), |d| bump(&mut d["h_e"])));
    assert_eq!(failing(dir.path()), ["V-EG2-04"]);
    // a K that is not the guardians' product (the product of two of them, so still in the group)
    let dir = changed(|p| {
        let other: Value = serde_json::from_slice(
            &std::fs::read(p.join("guardian_1.public_key.json.json")).unwrap(),
        )
        .unwrap();
        edit_json(&p.join("joint_election_public_key.json"), |d| {
            d["joint_election_public_key"] = other["coefficient_commitments"][0].clone();
        });
    });
    assert!(failing(dir.path()).contains(&"V-EG2-03"));
}
