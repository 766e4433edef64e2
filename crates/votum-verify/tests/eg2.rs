#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! ElectionGuard 2.x records as egk-ec writes them (spec/65, checks V-EG2-01…19): the stored record passes
//! with its counts, and each change a cheating guardian, voting device or tallier could make fails under its
//! own check.

use std::path::{Path, PathBuf};

use base64ct::{Base64, Encoding};
use serde_json::Value;
use votum_verify::{verify_record, Intermediates, Options, Report, Status};

fn stored() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../vectors/eg2/egk-ec-all-available")
}

/// The P-256 record: the tamperings below are made to it (its checks take a third of the 4096-bit record's).
fn tampered_base() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../vectors/eg2/egk-ec-all-available-p256")
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for f in std::fs::read_dir(from).unwrap() {
        let f = f.unwrap();
        if f.path().is_dir() {
            copy_dir(&f.path(), &to.join(f.file_name()));
        } else {
            std::fs::copy(f.path(), to.join(f.file_name())).unwrap();
        }
    }
}

/// A copy of the stored P-256 record, changed by `edit`.
fn record(edit: impl FnOnce(&Path)) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&tampered_base(), dir.path());
    edit(dir.path());
    dir
}

/// A copy of the stored 4096-bit record, changed by `edit`.
fn record_4096(edit: impl FnOnce(&Path)) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&stored(), dir.path());
    edit(dir.path());
    dir
}

/// A document of a record, edited as JSON.
fn edit(dir: &Path, file: &str, change: impl FnOnce(&mut Value)) {
    let path = dir.join(file);
    let mut doc: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    change(&mut doc);
    std::fs::write(&path, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
}

/// A base64 number with its last byte changed (a scalar stays below q: the stored ones are not near it).
fn bump(v: &mut Value) {
    let mut bytes = Base64::decode_vec(v.as_str().unwrap()).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    *v = Value::String(Base64::encode_string(&bytes));
}

fn verify(dir: &Path) -> (Report, Intermediates) {
    verify_record(dir, Options::default())
}

/// The checks that failed or could not be evaluated.
fn failing(report: &Report) -> Vec<&'static str> {
    report
        .checks
        .iter()
        .filter(|c| matches!(c.status, Status::Fail | Status::Error))
        .map(|c| c.id)
        .collect()
}

/// The ballot file of a challenged ballot of the stored record, and the file of its decryption.
const CHALLENGED: (&str, &str) = (
    "encrypted_ballots/runWorkflowDevice/eballot-id-30.json",
    "challenged_ballots/dballot-id-30.json",
);
const CAST: &str = "encrypted_ballots/runWorkflowDevice/eballot-id-8.json";
const OTHER_CAST: &str = "encrypted_ballots/runWorkflowDevice/eballot-id-35.json";

#[test]
fn the_stored_record_passes_with_its_counts() {
    let (report, values) = verify(&stored());
    assert!(report.passed(), "{:?}", failing(&report));
    assert_eq!(report.form, "egk-ec");
    assert_eq!(report.ballots, 42);
    let row = |id: &str| report.checks.iter().find(|c| c.id == id).unwrap();
    assert_eq!(row("V-EG2-02").checked, 3, "three guardians");
    assert_eq!(row("V-EG2-05").checked, 42);
    // 33 cast ballots; contest1's counts as egk-ec's tally.json gives them, summing to at most the cast ones
    let tally = &values.values["tally"];
    let contest1 = tally["contest1"].as_object().unwrap();
    assert_eq!(contest1.len(), 3);
    let total: u64 = contest1.values().map(|v| v.as_u64().unwrap()).sum();
    assert!(total <= 33, "{total}");
    assert_eq!(tally["contest1"]["selection1"], 7);
    assert_eq!(tally.as_object().unwrap().len(), 20);
    // the pre-encryption checks pass with nothing to check, and say so
    let pre = row("V-EG2-15");
    assert_eq!((pre.status, pre.checked), (Status::Pass, 0));
    assert!(!pre.warnings.is_empty());
}

#[test]
fn a_changed_parameter_or_manifest_is_v_eg2_01() {
    let dir = record_4096(|d| {
        let mut m = std::fs::read(d.join("manifest.json")).unwrap();
        m.push(b'\n');
        std::fs::write(d.join("manifest.json"), m).unwrap();
    });
    assert_eq!(failing(&verify(dir.path()).0), ["V-EG2-01"]);
    // another group's record is an Error that names it
    let dir = record_4096(|d| edit(d, "constants.json", |c| c["type"] = "EllipticCurve".into()));
    // (the tamperings below are made to the P-256 record; one on the 4096-bit group's range proofs here)
    let bad_proof = record_4096(|d| {
        edit(d, CAST, |b| {
            bump(&mut b["contests"][0]["selections"][0]["proof"]["proofs"][0]["response"])
        })
    });
    assert_eq!(failing(&verify(bad_proof.path()).0), ["V-EG2-05"]);
    let (report, _) = verify(dir.path());
    assert_eq!(report.checks[0].status, Status::Error);
    assert!(report.checks[0].findings[0]
        .reason
        .contains("EllipticCurve"));
}

#[test]
fn a_changed_guardian_proof_is_v_eg2_02() {
    let dir = record(|d| {
        edit(d, "election_initialized.json", |e| {
            bump(&mut e["guardians"][1]["coefficient_proofs"][2]["response"])
        })
    });
    assert_eq!(failing(&verify(dir.path()).0), ["V-EG2-02"]);
}

#[test]
fn a_changed_joint_key_is_v_eg2_03() {
    // a coordinator that publishes one guardian's key as the joint key (it alone could then decrypt)
    let dir = record(|d| {
        edit(d, "election_initialized.json", |e| {
            e["joint_public_key"] = e["guardians"][0]["coefficient_proofs"][0]["public_key"].clone()
        })
    });
    let failed = failing(&verify(dir.path()).0);
    assert!(failed.contains(&"V-EG2-03"), "{failed:?}");
    assert!(!failed.contains(&"V-EG2-02"), "{failed:?}");
}

#[test]
fn a_changed_extended_hash_is_v_eg2_04() {
    let dir = record(|d| {
        edit(d, "election_initialized.json", |e| {
            bump(&mut e["extended_base_hash"])
        })
    });
    let failed = failing(&verify(dir.path()).0);
    assert_eq!(failed[0], "V-EG2-04", "{failed:?}");
}

#[test]
fn a_changed_selection_is_v_eg2_05() {
    // a voting device that swaps two options' ciphertexts and keeps their proofs
    // and, on another ballot, a contest that lacks one of its options (egk-ec's verifier does not look)
    let dir = record(|d| {
        edit(d, CAST, |b| {
            let sels = &mut b["contests"][0]["selections"];
            let first = sels[0]["encrypted_vote"].clone();
            sels[0]["encrypted_vote"] = sels[1]["encrypted_vote"].clone();
            sels[1]["encrypted_vote"] = first;
        });
        edit(d, OTHER_CAST, |b| {
            b["contests"][0]["selections"].as_array_mut().unwrap().pop();
        });
    });
    let (report, _) = verify(dir.path());
    let failed = failing(&report);
    assert!(failed.contains(&"V-EG2-05"), "{failed:?}");
    let row = report.checks.iter().find(|c| c.id == "V-EG2-05").unwrap();
    let of = |file: &str, what: &str| {
        row.findings
            .iter()
            .any(|f| f.object.contains(file) && f.reason.contains(what))
    };
    assert!(of("eballot-id-8.json", "range proof"), "{row:?}");
    assert!(of("eballot-id-35.json", "not the manifest's"), "{row:?}");
}

#[test]
fn a_changed_contest_proof_is_v_eg2_06() {
    let dir = record(|d| {
        edit(d, CAST, |b| {
            bump(&mut b["contests"][1]["proof"]["proofs"][0]["response"]);
        })
    });
    assert_eq!(failing(&verify(dir.path()).0), ["V-EG2-06"]);
}

#[test]
fn a_changed_code_is_v_eg2_07() {
    let dir = record(|d| {
        edit(d, CAST, |b| bump(&mut b["contests"][0]["contest_hash"]));
        edit(d, OTHER_CAST, |b| bump(&mut b["confirmation_code"]));
    });
    let (report, _) = verify(dir.path());
    assert_eq!(failing(&report), ["V-EG2-07"]);
    let row = report.checks.iter().find(|c| c.id == "V-EG2-07").unwrap();
    assert!(
        row.findings
            .iter()
            .any(|f| f.reason.contains("contest hash")),
        "{row:?}"
    );
    assert!(
        row.findings
            .iter()
            .any(|f| f.reason.contains("confirmation code")),
        "{row:?}"
    );
}

#[test]
fn a_changed_aggregate_is_v_eg2_08() {
    // a tallier that moves votes between two options in the encrypted tally and in the decrypted one (whose
    // proofs, bound to the ciphertexts, then fail too: V-EG2-09)
    let swap = |t: &mut Value| {
        let sels = &mut t["contests"][0]["selections"];
        let first = sels[0]["encrypted_vote"].clone();
        sels[0]["encrypted_vote"] = sels[1]["encrypted_vote"].clone();
        sels[1]["encrypted_vote"] = first;
    };
    // and a cast ballot left out of the tally's list
    let dir = record(|d| {
        edit(d, "encrypted_tally.json", |t| {
            swap(t);
            t["cast_ballot_ids"].as_array_mut().unwrap().pop();
        });
        edit(d, "tally.json", swap);
    });
    let (report, _) = verify(dir.path());
    assert_eq!(failing(&report), ["V-EG2-08", "V-EG2-09"]);
    let row = report.checks.iter().find(|c| c.id == "V-EG2-08").unwrap();
    assert!(
        row.findings.iter().any(|f| f.reason.contains("product")),
        "{row:?}"
    );
    assert!(
        row.findings
            .iter()
            .any(|f| f.reason.contains("cast ballot ids")),
        "{row:?}"
    );
}

#[test]
fn a_changed_tally_proof_is_v_eg2_09() {
    let dir = record(|d| {
        edit(d, "tally.json", |t| {
            bump(&mut t["contests"][2]["selections"][0]["proof"]["response"])
        })
    });
    assert_eq!(failing(&verify(dir.path()).0), ["V-EG2-09"]);
}

#[test]
fn a_changed_count_is_v_eg2_10() {
    let dir = record(|d| {
        edit(d, "tally.json", |t| {
            let n = t["contests"][0]["selections"][0]["tally"].as_u64().unwrap();
            t["contests"][0]["selections"][0]["tally"] = (n + 1).into();
        })
    });
    assert_eq!(failing(&verify(dir.path()).0), ["V-EG2-10"]);
}

#[test]
fn a_changed_tally_contest_data_is_v_eg2_11() {
    // the tally has no contest data; a challenged ballot's, copied in, passes its proof; changed, it fails
    let data = {
        let doc: Value =
            serde_json::from_slice(&std::fs::read(tampered_base().join(CHALLENGED.1)).unwrap())
                .unwrap();
        doc["contests"][0]["decrypted_contest_data"].clone()
    };
    let honest = data.clone();
    let dir = record(|d| {
        edit(d, "tally.json", |t| {
            t["contests"][0]["decrypted_contest_data"] = honest
        })
    });
    let (report, _) = verify(dir.path());
    assert!(report.passed(), "{:?}", failing(&report));
    let mut changed = data;
    bump(&mut changed["proof"]["response"]);
    let dir = record(|d| {
        edit(d, "tally.json", |t| {
            t["contests"][0]["decrypted_contest_data"] = changed
        })
    });
    assert_eq!(failing(&verify(dir.path()).0), ["V-EG2-11"]);
}

#[test]
fn a_changed_challenged_ballot_is_v_eg2_12() {
    let dir = record(|d| {
        edit(d, CHALLENGED.1, |b| {
            bump(&mut b["contests"][0]["selections"][0]["proof"]["response"])
        })
    });
    assert_eq!(failing(&verify(dir.path()).0), ["V-EG2-12"]);
    // a cast ballot shown decrypted (a decryption file naming it), which also withholds the challenged
    // ballot's decryption
    let dir = record(|d| {
        let cast: Value = serde_json::from_slice(&std::fs::read(d.join(CAST)).unwrap()).unwrap();
        let id = cast["ballot_id"].clone();
        edit(d, CHALLENGED.1, |b| b["id"] = id);
    });
    let (report, _) = verify(dir.path());
    assert_eq!(failing(&report), ["V-EG2-12"]);
    let row = report.checks.iter().find(|c| c.id == "V-EG2-12").unwrap();
    assert!(
        row.findings
            .iter()
            .any(|f| f.reason.contains("not challenged")),
        "{row:?}"
    );
    assert!(
        row.findings
            .iter()
            .any(|f| f.reason.contains("no decryption")),
        "{row:?}"
    );
}

#[test]
fn a_changed_challenged_vote_is_v_eg2_13() {
    let dir = record(|d| {
        edit(d, CHALLENGED.1, |b| {
            let sel = &mut b["contests"][0]["selections"][0]["tally"];
            let n = sel.as_u64().unwrap();
            *sel = (1 - n).into();
        })
    });
    assert_eq!(failing(&verify(dir.path()).0), ["V-EG2-13"]);
}

#[test]
fn a_changed_challenged_contest_data_is_v_eg2_14() {
    let dir = record(|d| {
        edit(d, CHALLENGED.1, |b| {
            bump(&mut b["contests"][0]["decrypted_contest_data"]["proof"]["response"])
        })
    });
    assert_eq!(failing(&verify(dir.path()).0), ["V-EG2-14"]);
}

#[test]
fn a_pre_encrypted_ballot_is_refused_v_eg2_15_to_19() {
    let dir = record(|d| edit(d, CAST, |b| b["is_preencrypt"] = true.into()));
    let (report, _) = verify(dir.path());
    for id in ["V-EG2-15", "V-EG2-16", "V-EG2-17", "V-EG2-18", "V-EG2-19"] {
        let row = report.checks.iter().find(|c| c.id == id).unwrap();
        assert_eq!(row.status, Status::Error, "{id}");
    }
    // the ballot's other checks still ran and passed
    let row = report.checks.iter().find(|c| c.id == "V-EG2-05").unwrap();
    assert_eq!(row.status, Status::Pass);
}

#[test]
fn a_ballot_that_does_not_read_fails_v_eg2_05_naming_its_file() {
    let dir = record(|d| std::fs::write(d.join(CAST), b"{\"ballot_id\": 3").unwrap());
    let (report, _) = verify(dir.path());
    let row = report.checks.iter().find(|c| c.id == "V-EG2-05").unwrap();
    assert_eq!(row.status, Status::Fail);
    assert!(
        row.findings[0].object.contains("eballot-id-8.json"),
        "{row:?}"
    );
}

fn stored_p256() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../vectors/eg2/egk-ec-all-available-p256")
}

/// egk-ec's record on P-256 (elements SEC1-compressed, challenges through RFC 9380's hash_to_field, spec/65.6)
/// passes; a changed ballot proof, tally proof or curve constant fails under its check.
#[test]
fn the_p256_record_passes_and_its_tamperings_fail() {
    let (report, values) = verify(&stored_p256());
    assert!(report.passed(), "{:?}", failing(&report));
    assert_eq!(report.ballots, 42);
    assert_eq!(values.values["tally"].as_object().unwrap().len(), 20);
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&stored_p256(), dir.path());
    edit(dir.path(), CAST, |b| {
        bump(&mut b["contests"][0]["selections"][0]["proof"]["proofs"][0]["response"])
    });
    edit(dir.path(), "tally.json", |t| {
        bump(&mut t["contests"][0]["selections"][0]["proof"]["response"])
    });
    edit(dir.path(), "constants.json", |c| {
        c["constants"]["b"] =
            "5ac635d8aa3a93e7b3ebbd55769886bc651d06b0cc53b0f63bce3c3e27d2604c".into()
    });
    assert_eq!(
        failing(&verify(dir.path()).0),
        ["V-EG2-01", "V-EG2-05", "V-EG2-09"]
    );
}

#[test]
fn a_ballot_copied_under_another_id_and_device_name_is_v_eg2_07() {
    // a replay that the codes alone do not show: the copy's confirmation code is recomputed for another
    // device name (anyone can), so no code repeats; its ciphertexts and proofs are the original's
    let dir = record(|d| {
        let path = d
            .join("encrypted_ballots/runWorkflowDevice")
            .join(CAST.rsplit('/').next().unwrap());
        let mut copy: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        copy["ballot_id"] = Value::String("id-copy".into());
        copy["state"] = Value::String("CHALLENGED".into());
        let baux = b"another device";
        copy["code_baux"] = Value::String(baux.iter().map(|b| format!("{b:02X}")).collect());
        let b64 = |v: &Value| {
            use base64ct::{Base64, Encoding};
            Base64::decode_vec(v.as_str().unwrap()).unwrap()
        };
        let he: [u8; 32] = b64(&copy["election_id"]).try_into().unwrap();
        let hashes: Vec<[u8; 32]> = copy["contests"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| b64(&c["contest_hash"]).try_into().unwrap())
            .collect();
        let code = votum_eg2::hashes::confirmation_code(&he, &hashes, baux);
        copy["confirmation_code"] = {
            use base64ct::{Base64, Encoding};
            Value::String(Base64::encode_string(&code))
        };
        std::fs::write(
            path.with_file_name("eballot-id-copy.json"),
            serde_json::to_vec(&copy).unwrap(),
        )
        .unwrap();
    });
    let (report, _) = verify(dir.path());
    let row = report.checks.iter().find(|c| c.id == "V-EG2-07").unwrap();
    assert_eq!(row.status, Status::Fail, "{row:?}");
    assert!(
        row.findings.iter().any(|f| f.reason.contains("also in")),
        "{row:?}"
    );
}
