#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Estonia's IVXV decryption proofs (spec/93, checks V-IVXV-01..05): the two published sessions pass with
//! the counts IVXV's own tally gave, and each change a liar could make fails under its own check.

use std::path::{Path, PathBuf};

use serde_json::Value;
use votum_verify::{verify_record, Options, Report, Status};

fn vectors() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../vectors/ivxv")
}

/// A copy of a stored session in a temporary directory, changed by `edit`.
fn session(name: &str, edit: impl FnOnce(&Path)) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for f in std::fs::read_dir(vectors().join(name)).unwrap() {
        let f = f.unwrap();
        std::fs::copy(f.path(), dir.path().join(f.file_name())).unwrap();
    }
    edit(dir.path());
    dir
}

/// The proof file of a session directory, edited as JSON.
fn edit_proofs(dir: &Path, edit: impl FnOnce(&mut Value)) {
    let path = std::fs::read_dir(dir)
        .unwrap()
        .map(|f| f.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with("-proof"))
        .unwrap();
    let mut doc: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    edit(&mut doc);
    std::fs::write(&path, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
}

fn verify(dir: &Path) -> (Report, votum_verify::Intermediates) {
    verify_record(dir, Options::default())
}

/// The checks that failed or could not be evaluated (the rest passed or were not reached).
fn failing(report: &Report) -> Vec<&'static str> {
    report
        .checks
        .iter()
        .filter(|c| matches!(c.status, Status::Fail | Status::Error))
        .map(|c| c.id)
        .collect()
}

#[test]
fn the_published_sessions_pass_with_their_counts() {
    let (report, values) = verify(&vectors().join("rk2023-live"));
    assert!(report.passed(), "{:?}", failing(&report));
    assert_eq!(report.ballots, 69);
    let counts = &values.values["counts"];
    let of = |answer: &str| {
        counts
            .as_object()
            .unwrap()
            .iter()
            .find(|(k, _)| k.ends_with(answer))
            .map(|(_, v)| v.as_u64().unwrap())
    };
    // what IVXV's tally of the 2023 live demonstration gave
    assert_eq!(of("Vastlakukkel"), Some(38));
    assert_eq!(of("Kondivurri tegemine"), Some(12));
    assert_eq!(of("Liulaskmine"), Some(10));
    assert_eq!(of("Hernesupp"), Some(9));
    let (report, values) = verify(&vectors().join("ep2024-test"));
    assert!(report.passed(), "{:?}", failing(&report));
    assert_eq!(values.values["profile"], "ivxv-padded");
    assert_eq!(values.values["counts"].as_object().unwrap().len(), 7);
    assert!(values.values["counts"]
        .as_object()
        .unwrap()
        .contains_key("0000.167\u{1f}Üksikkandidaadid\u{1f}TANEL TALVE"));
}

#[test]
fn an_unreadable_proof_file_is_v_ivxv_01() {
    let dir = session("ep2024-test", |d| {
        std::fs::write(
            d.join("EP_2024-proof"),
            b"{\"election\": \"EP_2024\", \"proofs\": [{}]}",
        )
        .unwrap()
    });
    assert_eq!(failing(&verify(dir.path()).0), ["V-IVXV-01"]);
    let dir = session("ep2024-test", |d| {
        std::fs::write(
            d.join("EP_2024-pub.pem"),
            b"-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n",
        )
        .unwrap()
    });
    assert_eq!(failing(&verify(dir.path()).0), ["V-IVXV-01"]);
}

#[test]
fn another_elections_proofs_are_v_ivxv_02() {
    let dir = session("ep2024-test", |d| {
        edit_proofs(d, |doc| doc["election"] = Value::from("RK_2023"))
    });
    assert_eq!(failing(&verify(dir.path()).0), ["V-IVXV-02"]);
}

#[test]
fn a_vote_decrypted_twice_or_not_mixed_is_v_ivxv_03() {
    // the same ciphertext and proof twice: a valid proof, and a vote counted twice
    let dir = session("rk2023-live", |d| {
        edit_proofs(d, |doc| {
            let first = doc["proofs"][0].clone();
            doc["proofs"].as_array_mut().unwrap().push(first);
        })
    });
    let (report, values) = verify(dir.path());
    assert_eq!(failing(&report), ["V-IVXV-03"]);
    assert_eq!(values.values["proofs"], 70);
    // a ciphertext the mixer output that no proof decrypts (a vote dropped after mixing)
    let dir = session("ep2024-test", |d| {
        edit_proofs(d, |doc| {
            doc["proofs"].as_array_mut().unwrap().pop();
        })
    });
    assert_eq!(failing(&verify(dir.path()).0), ["V-IVXV-03"]);
}

#[test]
fn a_changed_proof_or_vote_is_v_ivxv_04() {
    // another candidate's text on a proof: the proof shows the real one, so it fails, and the count
    // of what the proofs prove does not move to the other candidate
    let dir = session("rk2023-live", |d| {
        edit_proofs(d, |doc| {
            let first = doc["proofs"][0]["message"].clone();
            let i = (1..69)
                .find(|&i| doc["proofs"][i]["message"] != first)
                .unwrap();
            doc["proofs"][0]["message"] = doc["proofs"][i]["message"].clone();
        })
    });
    let (report, _) = verify(dir.path());
    assert_eq!(failing(&report), ["V-IVXV-04"]);
    // one byte of a proof changed
    let dir = session("ep2024-test", |d| {
        edit_proofs(d, |doc| {
            let p = doc["proofs"][3]["proof"].as_str().unwrap().to_string();
            let mut c: Vec<char> = p.chars().collect();
            let at = c.len() - 8;
            c[at] = if c[at] == 'A' { 'B' } else { 'A' };
            doc["proofs"][3]["proof"] = Value::from(c.into_iter().collect::<String>());
        })
    });
    let (report, values) = verify(dir.path());
    assert_eq!(failing(&report), ["V-IVXV-04"]);
    let proven: u64 = values.values["counts"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(proven, 6, "a vote whose proof fails is not counted");
}

#[test]
fn a_badly_padded_vote_is_v_ivxv_05() {
    // a padded message with its padding cut short: not IVXV's encoding (and not what was proven)
    let dir = session("ep2024-test", |d| {
        edit_proofs(d, |doc| {
            use base64ct::{Base64, Encoding};
            let m = Base64::decode_vec(doc["proofs"][0]["message"].as_str().unwrap()).unwrap();
            let mut bad = m.clone();
            for b in bad.iter_mut().skip(2).take(380) {
                if *b == 0xFF {
                    *b = 0xFE;
                }
            }
            doc["proofs"][0]["message"] = Value::from(Base64::encode_string(&bad));
        })
    });
    let failed = failing(&verify(dir.path()).0);
    assert!(failed.contains(&"V-IVXV-05"), "{failed:?}");
    assert_eq!(failed, ["V-IVXV-04", "V-IVXV-05"]);
}

#[test]
fn a_ciphertext_outside_the_group_is_v_ivxv_03() {
    use base64ct::{Base64, Encoding};
    use votum_arith::{Integer, Order};
    use votum_verify::asn1::{self, Reader};
    // v replaced by p − v: p ≡ 3 (mod 4), so −v is not a residue (the proof is then not checked)
    let p = votum_group::ModpGroup::rfc3526_3072().p().clone();
    let dir = session("rk2023-live", |d| {
        edit_proofs(d, |doc| {
            let der = Base64::decode_vec(doc["proofs"][1]["ciphertext"].as_str().unwrap()).unwrap();
            let mut r = Reader::new(&der);
            let mut c = r.sequence("c").unwrap();
            let alg = c.any().unwrap();
            let mut uv = c.sequence("uv").unwrap();
            let u = uv.any().unwrap();
            let v = Integer::from_digits(uv.unsigned("v").unwrap(), Order::Msf);
            let neg = (p.clone() - v).to_digits::<u8>(Order::Msf);
            let inner = [u.whole.to_vec(), asn1::unsigned(&neg)].concat();
            let body = [alg.whole.to_vec(), asn1::tlv(asn1::SEQUENCE, &inner)].concat();
            let bad = asn1::tlv(asn1::SEQUENCE, &body);
            doc["proofs"][1]["ciphertext"] = Value::from(Base64::encode_string(&bad));
        })
    });
    // a session without the mixer's output: only the membership check makes it a V-IVXV-03 failure
    assert_eq!(failing(&verify(dir.path()).0), ["V-IVXV-03", "V-IVXV-04"]);
}

/// Ballot workers that check each batch with the cluster's own proof checker, or answer every proof with
/// the same lie; `window` batches stay in flight.
struct Workers {
    checker: Option<votum_verify::IvxvProofChecker>,
    pending: std::collections::VecDeque<Vec<String>>,
    lie: Option<bool>,
    proofs: usize,
}

impl Workers {
    fn new(lie: Option<bool>) -> Workers {
        Workers {
            checker: None,
            pending: std::collections::VecDeque::new(),
            lie,
            proofs: 0,
        }
    }
}

impl votum_verify::BallotWorkers for Workers {
    fn setup(&mut self, params: &[u8]) -> std::ops::ControlFlow<()> {
        self.checker = Some(votum_verify::IvxvProofChecker::new(params).unwrap());
        std::ops::ControlFlow::Continue(())
    }

    fn submit(&mut self, proofs: &[&str]) -> std::ops::ControlFlow<()> {
        self.proofs += proofs.len();
        self.pending
            .push_back(proofs.iter().map(|s| s.to_string()).collect());
        std::ops::ControlFlow::Continue(())
    }

    fn collect(&mut self) -> std::ops::ControlFlow<(), Vec<bool>> {
        let batch = self.pending.pop_front().unwrap();
        let refs: Vec<&str> = batch.iter().map(String::as_str).collect();
        std::ops::ControlFlow::Continue(match self.lie {
            Some(lie) => vec![lie; refs.len()],
            None => self.checker.as_ref().unwrap().check(&refs),
        })
    }

    fn window(&self) -> usize {
        2
    }
}

fn verify_with(dir: &Path, workers: &mut Workers) -> (Report, votum_verify::Intermediates) {
    verify_record(
        dir,
        Options {
            ballot_workers: Some(workers),
            ..Options::default()
        },
    )
}

/// The decryption proofs checked by a cluster's workers (spec/98.1) give the in-process report and
/// counts, on the published sessions and with one proof changed; workers that fail every proof change
/// nothing (the client checks those itself). A worker that passes every proof decides them: that is
/// what the Python side's recheck bounds (tests/cluster).
#[test]
fn proofs_checked_by_workers_give_the_in_process_report() {
    let bad = session("ep2024-test", |d| {
        edit_proofs(d, |doc| {
            let p = doc["proofs"][3]["proof"].as_str().unwrap().to_string();
            let mut c: Vec<char> = p.chars().collect();
            let at = c.len() - 8;
            c[at] = if c[at] == 'A' { 'B' } else { 'A' };
            doc["proofs"][3]["proof"] = Value::from(c.into_iter().collect::<String>());
        })
    });
    for dir in [
        vectors().join("rk2023-live"),
        vectors().join("ep2024-test"),
        bad.path().to_path_buf(),
    ] {
        let (local, local_values) = verify(&dir);
        for lie in [None, Some(false)] {
            let mut workers = Workers::new(lie);
            let (remote, values) = verify_with(&dir, &mut workers);
            assert_eq!(
                format!("{:?}", remote.checks),
                format!("{:?}", local.checks),
                "{}",
                dir.display()
            );
            assert_eq!(values.values, local_values.values);
            assert!(workers.proofs > 0);
        }
    }
    let (report, _) = verify_with(bad.path(), &mut Workers::new(None));
    assert_eq!(failing(&report), ["V-IVXV-04"]);
    // the checker alone: a proof array that is not three strings fails, the others are judged
    let key = std::fs::read(vectors().join("ep2024-test/EP_2024-pub.pem")).unwrap();
    let checker =
        votum_verify::IvxvProofChecker::new(&votum_verify::IvxvProofChecker::params(&key)).unwrap();
    assert_eq!(checker.check(&["[1, 2]", "not json"]), [false, false]);
    assert!(votum_verify::IvxvProofChecker::new(b"another tag").is_err());
}
