#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! 2.1 guardians as parties of their own (spec/66.12): an election whose guardians each keep their own
//! state and believe the coordinator on nothing they can check verifies with every check; a coordinator or
//! a guardian that lies is refused, and named where the protocol can name it.

use std::path::{Path, PathBuf};

use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use serde_json::Value;
use votum_eg2::election::{Options as BaseOptions, DEFAULT_MANIFEST};
use votum_eg2::v21::election::{ContestData, Coordinator, Options};
use votum_eg2::v21::record;
use votum_eg2::v21::trustee::{finish_with, Trustee};
use votum_eg2::Eg2Error;
use votum_group::P256;
use votum_verify::{verify_record, Options as VerifyOptions};

fn options() -> Options {
    Options {
        base: BaseOptions {
            guardians: 3,
            quorum: 2,
            available: vec![1, 3],
            ballots: 9,
            challenge_every: 4,
            seed: 5,
            device: "station-7".into(),
        },
        simple_chaining: true,
        weighted: true,
        pre_encrypted: 4,
        contest_data: ContestData::Decrypted,
    }
}

/// An election keyed by three trustees and cast by its coordinator, the record in a temporary directory.
struct Keyed {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
    coordinator: Coordinator<P256>,
    trustees: Vec<Trustee<P256>>,
    rng: ChaCha20Rng,
}

fn keyed() -> Keyed {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("record");
    let mut coordinator =
        Coordinator::new(P256, &dir, DEFAULT_MANIFEST.as_bytes(), &options()).unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(21);
    let manifest = coordinator.manifest_bytes().to_vec();
    let mut trustees: Vec<Trustee<P256>> = (1..=3)
        .map(|i| Trustee::new(P256, &manifest, (3, 2), i, &mut rng).unwrap())
        .collect();
    let publics: Vec<Value> = trustees.iter().map(Trustee::public).collect();
    for t in &mut trustees {
        t.agree(&publics).unwrap();
    }
    for from in 0..3 {
        for to in 0..3 {
            if from != to {
                let share = trustees[from].share_for(to as u32 + 1, &mut rng).unwrap();
                trustees[to].receive(from as u32 + 1, &share).unwrap();
            }
        }
    }
    let docs: Vec<Value> = trustees.iter_mut().map(|t| t.joint().unwrap()).collect();
    let keys = publics
        .iter()
        .map(|p| record::GuardianKey::read(&P256, p).unwrap())
        .collect();
    let opened = coordinator.open(keys).unwrap().to_json(&P256);
    for d in &docs {
        assert_eq!(
            d, &opened,
            "every guardian computes the coordinator's K, K̂, H_G, H_E"
        );
    }
    coordinator.cast().unwrap();
    Keyed {
        _tmp: tmp,
        dir,
        coordinator,
        trustees,
        rng,
    }
}

/// Announcements, reveals and answers.
type Rounds = (Vec<Value>, Vec<Value>, Vec<Value>);

/// The decrypting trustees' three rounds on `dir`.
fn rounds(e: &mut Keyed, dir: &Path) -> Result<Rounds, Eg2Error> {
    let u = [1u32, 3];
    let mut ann = Vec::new();
    for i in u {
        ann.push(e.trustees[i as usize - 1].announce(dir, &u, &mut e.rng)?);
    }
    let mut rev = Vec::new();
    for i in u {
        rev.push(e.trustees[i as usize - 1].reveal(&ann)?);
    }
    let mut answers = Vec::new();
    for i in u {
        answers.push(e.trustees[i as usize - 1].answer(&rev)?);
    }
    Ok((ann, rev, answers))
}

/// A private copy of `from`, as a guardian takes before reading a record.
fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

fn edit_lines(path: &Path, f: impl FnOnce(&mut Vec<Value>)) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    f(&mut lines);
    let out: String = lines.iter().map(|v| format!("{v}\n")).collect();
    std::fs::write(path, out).unwrap();
}

fn guardian_named(err: &Eg2Error, i: u32) -> bool {
    matches!(err, Eg2Error::Guardian { guardian, .. } if guardian == &format!("guardian {i}"))
}

#[test]
fn guardians_as_parties_of_their_own_make_a_record_that_verifies_with_every_check() {
    let mut e = keyed();
    let dir = e.dir.clone();
    let (ann, rev, answers) = rounds(&mut e, &dir).unwrap();
    let summary = finish_with(&mut e.coordinator, (&ann, &rev, &answers)).unwrap();
    assert_eq!(summary.cast + summary.challenged, 13);
    assert_eq!(summary.challenged, 3);
    let report = verify_record(&dir, VerifyOptions::default()).0;
    assert!(report.passed(), "{:?}", report.not_passed());
    assert_eq!(report.form, "electionguard-2.1");
}

/// Guardian 3 is gone after the announcements (its reveal never comes): guardians 1 and 2 announce again
/// for U = {1, 2}, with fresh nonces, and the decryption ends with them; guardian 1's first round is dropped
/// unanswered. A guardian refuses to announce for a record whose values differ from those it announced for
/// (the same ballots less one: the two tallies' difference would be that ballot's vote), before and after
/// it has answered, and stays able to decrypt the first record.
#[test]
fn a_decryption_starts_again_with_other_guardians_for_the_same_values_only() {
    let mut e = keyed();
    let dir = e.dir.clone();
    let first: Vec<Value> = [1u32, 3]
        .iter()
        .map(|&i| {
            e.trustees[i as usize - 1]
                .announce(&dir, &[1, 3], &mut e.rng)
                .unwrap()
        })
        .collect();
    e.trustees[0].reveal(&first).unwrap();
    // another record: the first cast ballot left out
    let fewer = e._tmp.path().join("fewer");
    copy(&dir, &fewer);
    edit_lines(&fewer.join("ballots.jsonl"), |lines| {
        let at = lines.iter().position(|b| b["state"] == "cast").unwrap();
        lines.remove(at);
    });
    let refused = e.trustees[0].announce(&fewer, &[1, 2], &mut e.rng);
    assert!(
        refused
            .unwrap_err()
            .to_string()
            .contains("decrypts one record"),
        "a second record is refused"
    );
    // the same record with U = {1, 2}
    e.coordinator.set_available(&[1, 2]).unwrap();
    let u = [1u32, 2];
    let ann: Vec<Value> = u
        .iter()
        .map(|&i| {
            e.trustees[i as usize - 1]
                .announce(&dir, &u, &mut e.rng)
                .unwrap()
        })
        .collect();
    let rev: Vec<Value> = u
        .iter()
        .map(|&i| e.trustees[i as usize - 1].reveal(&ann).unwrap())
        .collect();
    let answers: Vec<Value> = u
        .iter()
        .map(|&i| e.trustees[i as usize - 1].answer(&rev).unwrap())
        .collect();
    finish_with(&mut e.coordinator, (&ann, &rev, &answers)).unwrap();
    let report = verify_record(&dir, VerifyOptions::default()).0;
    assert!(report.passed(), "{:?}", report.not_passed());
    // answered: the other record is still refused; the round's nonces are spent
    assert!(e.trustees[0]
        .announce(&fewer, &[1, 2], &mut e.rng)
        .unwrap_err()
        .to_string()
        .contains("decrypts one record"));
    assert!(
        e.trustees[0].answer(&rev).is_err(),
        "one answer per announcement"
    );
    assert!(
        e.coordinator.set_available(&[1]).is_err(),
        "below the quorum"
    );
}

#[test]
fn a_guardian_refuses_key_records_that_are_not_the_agreed_ones() {
    let mut rng = ChaCha20Rng::seed_from_u64(4);
    let m = DEFAULT_MANIFEST.as_bytes();
    let mut ts: Vec<Trustee<P256>> = (1..=3)
        .map(|i| Trustee::new(P256, m, (3, 2), i, &mut rng).unwrap())
        .collect();
    let publics: Vec<Value> = ts.iter().map(Trustee::public).collect();
    // its own record replaced by another made for the same index
    let mut forged = publics.clone();
    forged[0] = Trustee::new(P256, m, (3, 2), 1, &mut rng).unwrap().public();
    assert!(ts[0]
        .agree(&forged)
        .unwrap_err()
        .to_string()
        .contains("own"));
    // another guardian's commitment changed: its proof fails and names it
    let mut changed = publics.clone();
    changed[1]["K"][1] = publics[2]["K"][1].clone();
    let err = ts[0].agree(&changed).unwrap_err();
    assert!(guardian_named(&err, 2), "{err}");
    // out of order, or one short
    let mut swapped = publics.clone();
    swapped.swap(1, 2);
    assert!(ts[0].agree(&swapped).is_err());
    assert!(ts[0].agree(&publics[..2]).is_err());
    // a key record made for quorum 3: its proofs are bound to another H_P, so they fail
    let other = Trustee::new(P256, m, (3, 3), 2, &mut rng).unwrap().public();
    let mut wrong_k = publics.clone();
    wrong_k[1] = other;
    assert!(ts[0].agree(&wrong_k).is_err());
    ts[0].agree(&publics).unwrap();
    assert!(ts[0].agree(&publics).is_err(), "agreed once");
}

#[test]
fn a_share_changed_or_replayed_names_its_dealer() {
    let mut rng = ChaCha20Rng::seed_from_u64(8);
    let m = DEFAULT_MANIFEST.as_bytes();
    let mut ts: Vec<Trustee<P256>> = (1..=3)
        .map(|i| Trustee::new(P256, m, (3, 2), i, &mut rng).unwrap())
        .collect();
    let publics: Vec<Value> = ts.iter().map(Trustee::public).collect();
    for t in &mut ts {
        t.agree(&publics).unwrap();
    }
    let share = ts[0].share_for(3, &mut rng).unwrap();
    let mut bad = share.clone();
    let c1 = bad["C1"].as_str().unwrap().to_owned();
    bad["C1"] = Value::String(format!(
        "{}{}",
        if &c1[..1] == "0" { "1" } else { "0" },
        &c1[1..]
    ));
    let err = ts[2].receive(1, &bad).unwrap_err();
    assert!(guardian_named(&err, 1), "{err}");
    // guardian 2's share for 3 handed over as guardian 1's
    let twos = ts[1].share_for(3, &mut rng).unwrap();
    assert!(ts[2].receive(1, &twos).is_err());
    // guardian 1's share for 2 handed to 3
    let for_two = ts[0].share_for(2, &mut rng).unwrap();
    assert!(ts[2].receive(1, &for_two).is_err());
    ts[2].receive(1, &share).unwrap();
    assert!(
        ts[2].receive(1, &share).is_err(),
        "a second share from a dealer"
    );
    assert!(ts[2].joint().is_err(), "guardian 2's share is not in");
}

#[test]
fn a_guardian_decrypts_nothing_from_a_record_that_is_not_its_election() {
    let mut e = keyed();
    let tmp = tempfile::tempdir().unwrap();
    let u = [1u32, 3];
    let attempt = |e: &mut Keyed, edit: &dyn Fn(&Path)| -> String {
        let dir = tmp
            .path()
            .join(format!("copy-{}", rand_core::RngCore::next_u32(&mut e.rng)));
        copy(&e.dir, &dir);
        edit(&dir);
        e.trustees[0]
            .announce(&dir, &u, &mut e.rng)
            .unwrap_err()
            .to_string()
    };
    // another K in the guardians' document
    let err = attempt(&mut e, &|d| {
        let p = d.join(record::GUARDIANS);
        let mut v: Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
        v["K"] = v["K_hat"].clone();
        std::fs::write(&p, serde_json::to_vec(&v).unwrap()).unwrap();
    });
    assert!(err.contains("guardians, K"), "{err}");
    // another manifest
    let err = attempt(&mut e, &|d| {
        let p = d.join(record::MANIFEST);
        let mut b = std::fs::read(&p).unwrap();
        b.push(b'\n');
        std::fs::write(&p, b).unwrap();
    });
    assert!(err.contains("manifest"), "{err}");
    // a cast ballot copied under another id and marked challenged: opening it would publish the vote
    let err = attempt(&mut e, &|d| {
        edit_lines(&d.join(record::BALLOTS), |lines| {
            let cast = lines
                .iter()
                .find(|b| b["state"] == "cast")
                .cloned()
                .unwrap();
            let mut copy = cast;
            copy["id"] = Value::String("copied".into());
            copy["state"] = Value::String("challenged".into());
            lines.push(copy);
        });
    });
    assert!(
        err.contains("copied ballot") || err.contains("twice"),
        "{err}"
    );
    // a U without this guardian, or below the quorum
    let dir = e.dir.clone();
    assert!(e.trustees[0].announce(&dir, &[2, 3], &mut e.rng).is_err());
    assert!(e.trustees[0].announce(&dir, &[1], &mut e.rng).is_err());
    // after every refusal it still decrypts the true record
    assert!(rounds(&mut e, &dir).is_ok());
}

#[test]
fn the_rounds_refuse_announcements_for_other_values_and_name_a_guardian_that_lies() {
    // an announcement made for another record: named at the reveal
    let mut e = keyed();
    let dir = e.dir.clone();
    let u = [1u32, 3];
    let a1 = e.trustees[0].announce(&dir, &u, &mut e.rng).unwrap();
    let mut a3 = e.trustees[2].announce(&dir, &u, &mut e.rng).unwrap();
    let d = a3["digest"].as_str().unwrap().to_owned();
    a3["digest"] = Value::String(format!(
        "{}{}",
        if &d[..1] == "0" { "1" } else { "0" },
        &d[1..]
    ));
    let err = e.trustees[0].reveal(&[a1.clone(), a3]).unwrap_err();
    assert!(guardian_named(&err, 3), "{err}");
    // one missing: nothing revealed
    assert!(e.trustees[0].reveal(&[a1]).is_err());

    // a pair that is not the one committed to: the other guardian names it and answers nothing
    let mut e = keyed();
    let dir = dir_of(&e);
    let ann: Vec<Value> = u
        .iter()
        .map(|i| {
            e.trustees[*i as usize - 1]
                .announce(&dir, &u, &mut e.rng)
                .unwrap()
        })
        .collect();
    let mut rev: Vec<Value> = u
        .iter()
        .map(|i| e.trustees[*i as usize - 1].reveal(&ann).unwrap())
        .collect();
    assert!(e.trustees[0].reveal(&ann).is_err(), "revealed once");
    rev[1]["pairs"][0]["a"] = rev[1]["pairs"][1]["a"].clone();
    let err = e.trustees[0].answer(&rev).unwrap_err();
    assert!(guardian_named(&err, 3), "{err}");
    assert!(e.trustees[0].answer(&rev).is_err(), "its nonces are spent");

    // an answer or a nonce part changed on the way: the coordinator names its guardian
    let mut e = keyed();
    let dir = dir_of(&e);
    let (ann, rev, answers) = rounds(&mut e, &dir).unwrap();
    let mut bad = answers.clone();
    bad[0]["answers"][0] = bad[0]["answers"][1].clone();
    let err = finish_with(&mut e.coordinator, (&ann, &rev, &bad)).unwrap_err();
    assert!(guardian_named(&err, 1), "{err}");
    let mut bad = ann.clone();
    bad[1]["nonce_parts"][0]["m"] = bad[0]["nonce_parts"][0]["m"].clone();
    let err = finish_with(&mut e.coordinator, (&bad, &rev, &answers)).unwrap_err();
    assert!(guardian_named(&err, 3), "{err}");
    // and a tally value decrypted by a record other than the coordinator's: named by its digest
    let mut bad = ann.clone();
    bad[0]["digest"] = bad[1]["values"][0]["d"].clone();
    let err = finish_with(&mut e.coordinator, (&bad, &rev, &answers)).unwrap_err();
    assert!(guardian_named(&err, 1), "{err}");
    finish_with(&mut e.coordinator, (&ann, &rev, &answers)).unwrap();
}

fn dir_of(e: &Keyed) -> PathBuf {
    e.dir.clone()
}
