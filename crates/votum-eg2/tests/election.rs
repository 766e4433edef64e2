#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! votum's own ElectionGuard 2.x elections (spec/65.7–65.8): records on P-256 and the 4096-bit group that the
//! independent verifier accepts with the counts the voters cast, and each party that cheats refused by name.

use std::path::Path;

use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use serde_json::Value;
use votum_eg2::ceremony::{ceremony, check_public, joint_key, Guardian, PublicGuardian};
use votum_eg2::contest_data::{self, Plain, Status};
use votum_eg2::decrypt::{combine, Keys, Target};
use votum_eg2::election::{run, Options, DEFAULT_MANIFEST};
use votum_eg2::encrypt::{Device, PlainBallot, PlainContest, State};
use votum_eg2::hashes::extended_base_hash;
use votum_eg2::{read_manifest, Eg2Error, Eg2Group};
use votum_group::{Group, ModpGroup, P256};
use votum_verify::{verify_record, Options as VerifyOptions, Report, Status as CheckStatus};

fn failing(report: &Report) -> Vec<&'static str> {
    report
        .checks
        .iter()
        .filter(|c| matches!(c.status, CheckStatus::Fail | CheckStatus::Error))
        .map(|c| c.id)
        .collect()
}

fn verified_counts(dir: &Path) -> (Report, Value) {
    let (report, values) = verify_record(dir, VerifyOptions::default());
    let counts = values.values.get("counts").cloned().unwrap_or(Value::Null);
    (report, counts)
}

fn election<G: Eg2Group>(
    group: G,
    ballots: usize,
    available: Vec<u32>,
) -> (tempfile::TempDir, votum_eg2::election::Summary) {
    let dir = tempfile::tempdir().unwrap();
    let options = Options {
        guardians: 3,
        quorum: 2,
        available,
        ballots,
        challenge_every: 4,
        seed: 7,
        device: "test-device".into(),
    };
    let record = dir.path().join("record");
    let summary = run(group, &record, DEFAULT_MANIFEST.as_bytes(), &options).unwrap();
    (dir, summary)
}

fn assert_passes_with_counts(dir: &Path, summary: &votum_eg2::election::Summary) {
    let (report, counts) = verified_counts(dir);
    assert!(report.passed(), "{:?}", failing(&report));
    assert_eq!(report.form, "egk-ec");
    assert_eq!(report.ballots as usize, summary.cast + summary.challenged);
    let counts = counts.as_object().unwrap();
    assert_eq!(counts.len(), summary.counts.len());
    for (label, n) in &summary.counts {
        assert_eq!(counts[label].as_u64(), Some(*n), "{label}");
    }
    // every check that has work examined some of it
    for id in [
        "V-EG2-02", "V-EG2-05", "V-EG2-06", "V-EG2-09", "V-EG2-12", "V-EG2-14",
    ] {
        let row = report.checks.iter().find(|c| c.id == id).unwrap();
        assert!(row.checked > 0, "{id} examined nothing");
    }
}

#[test]
fn a_p256_election_with_a_guardian_missing_verifies_with_the_voters_counts() {
    let (dir, summary) = election(P256, 24, vec![1, 3]);
    assert_eq!((summary.cast, summary.challenged), (18, 6));
    assert!(summary.counts.values().sum::<u64>() > 0);
    assert_passes_with_counts(&dir.path().join("record"), &summary);
}

#[test]
fn a_4096_bit_election_verifies_with_the_voters_counts() {
    let (dir, summary) = election(ModpGroup::eg2_4096(), 8, Vec::new());
    assert_eq!((summary.cast, summary.challenged), (6, 2));
    assert_passes_with_counts(&dir.path().join("record"), &summary);
}

#[test]
fn a_record_votum_wrote_is_refused_when_changed() {
    let (dir, _) = election(P256, 8, Vec::new());
    let record = dir.path().join("record");
    // a range proof's response changed in the first cast ballot
    let file = record.join("encrypted_ballots/test-device/eballot-id-1.json");
    let mut doc: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let r = &mut doc["contests"][0]["selections"][0]["proof"]["proofs"][0]["response"];
    let mut s = r.as_str().unwrap().to_owned();
    s.replace_range(0..1, if s.starts_with('A') { "B" } else { "A" });
    *r = Value::String(s);
    std::fs::write(&file, serde_json::to_vec(&doc).unwrap()).unwrap();
    let (report, _) = verified_counts(&record);
    assert_eq!(failing(&report), vec!["V-EG2-05"]);
}

#[test]
fn an_election_refuses_too_few_guardians_and_a_used_directory() {
    let dir = tempfile::tempdir().unwrap();
    let options = Options {
        available: vec![2],
        ..Options::default()
    };
    let err = run(P256, dir.path(), DEFAULT_MANIFEST.as_bytes(), &options).unwrap_err();
    assert!(matches!(err, Eg2Error::Parameters(_)), "{err}");
    let options = Options {
        ballots: 1,
        challenge_every: 0,
        ..Options::default()
    };
    run(P256, dir.path(), DEFAULT_MANIFEST.as_bytes(), &options).unwrap();
    let err = run(P256, dir.path(), DEFAULT_MANIFEST.as_bytes(), &options).unwrap_err();
    assert!(matches!(err, Eg2Error::Io(_)), "{err}");
    let err = run(P256, &dir.path().join("x"), b"{\"contests\": 3}", &options).unwrap_err();
    assert!(matches!(err, Eg2Error::Manifest(_)), "{err}");
}

const HP: [u8; 32] = [7u8; 32];

#[test]
fn a_dealer_whose_share_does_not_match_its_commitments_is_named() {
    let group = P256;
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let mut a = Guardian::new(&group, &HP, "guardian1", 1, 2, &mut rng);
    let b = Guardian::new(&group, &HP, "guardian2", 2, 2, &mut rng);
    // guardian 2 deals guardian 1 the share meant for guardian 3
    let wrong = b.share_for(&group, 3);
    let err = a.receive(&group, &HP, 2, &b.public(), wrong).unwrap_err();
    assert_eq!(
        err,
        Eg2Error::Guardian {
            guardian: "guardian2".into(),
            reason: "its share for guardian guardian1 does not match its commitments".into()
        }
    );
    a.receive(&group, &HP, 2, &b.public(), b.share_for(&group, 1))
        .unwrap();
    // a commitment published without its proof's secret
    let mut forged: PublicGuardian<P256> = b.public();
    forged.commitments[1] = group.generator().clone();
    assert!(check_public(&group, &HP, &forged, 2).is_err());
    assert!(check_public(&group, &HP, &b.public(), 2).is_ok());
    assert!(check_public(&group, &HP, &b.public(), 3).is_err());
}

#[test]
fn a_guardian_whose_decryption_answer_is_wrong_is_named_and_nothing_is_decrypted() {
    let group = P256;
    let mut rng = ChaCha20Rng::seed_from_u64(2);
    let guardians = ceremony(&group, &HP, 3, 2, &mut rng).unwrap();
    let publics: Vec<PublicGuardian<P256>> = guardians.iter().map(Guardian::public).collect();
    let k = joint_key(&group, &publics);
    let he = extended_base_hash(&group, &[1u8; 32], &k);
    let keys = Keys::new(&group, &he, &k, &publics);
    let r = group.scalar_from_u64(12345);
    let ct = votum_elgamal::Ciphertext::<P256> {
        pad: group.pow_generator(&r),
        data: group.op(
            &group.pow(&k, &r),
            &group.pow(&k, &group.scalar_from_u64(2)),
        ),
    };
    let targets = [Target::Vote(&ct)];
    let present = [&guardians[0], &guardians[2]];
    let mut all = Vec::new();
    let mut nonces = Vec::new();
    for g in present {
        let (s, n) = g.shares(&group, 3, &targets, &mut rng).unwrap();
        all.push(s);
        nonces.push(n);
    }
    let mut answers = Vec::new();
    for (g, n) in present.iter().zip(nonces) {
        answers.push(g.answer(&keys, 3, &targets, &all, n).unwrap());
    }
    let honest = combine(&keys, &targets, &all, &answers).unwrap();
    assert_eq!(
        group.div(&ct.data, &honest[0].0),
        group.pow(&k, &group.scalar_from_u64(2))
    );
    // guardian 3 answers with something else
    let mut lying = answers.clone();
    lying[1][0] = group.scalar_add(&lying[1][0], &group.scalar_from_u64(1));
    let err = combine(&keys, &targets, &all, &lying).err().unwrap();
    assert!(
        matches!(err, Eg2Error::Guardian { ref guardian, .. } if guardian == "guardian3"),
        "{err}"
    );
    // guardian 1 publishes a partial decryption that is not A^z (its commitments honest)
    let mut forged = all.clone();
    forged[0][0].m = group.op(&forged[0][0].m, group.generator());
    let err = combine(&keys, &targets, &forged, &answers).err().unwrap();
    assert!(
        matches!(err, Eg2Error::Guardian { ref guardian, .. } if guardian == "guardian1"),
        "{err}"
    );
}

#[test]
fn the_device_refuses_a_ballot_the_manifest_does_not_allow() {
    let group = P256;
    let manifest = read_manifest(&serde_json::from_str(DEFAULT_MANIFEST).unwrap()).unwrap();
    let k = group.pow_generator(&group.scalar_from_u64(99));
    let device = Device::new(group, k, [3u8; 32], &manifest, "d");
    let mut rng = ChaCha20Rng::seed_from_u64(3);
    let ballot = |style: &str, contest: &str, votes: Vec<u32>| PlainBallot {
        id: "b".into(),
        style: style.into(),
        contests: [(
            contest.to_owned(),
            PlainContest {
                votes,
                write_ins: Vec::new(),
            },
        )]
        .into(),
    };
    let cases = [
        (
            ballot("no-such-style", "mayor", vec![1, 0, 0]),
            "ballot style",
        ),
        (
            ballot("ward-2-style", "council", vec![1, 0, 0, 0]),
            "not on style",
        ),
        (
            ballot("ward-1-style", "mayor", vec![1, 0]),
            "2 votes for 3 options",
        ),
    ];
    for (b, want) in cases {
        let Err(err) = device.encrypt(&b, State::Cast, 0, &mut rng) else {
            panic!("{want}: accepted")
        };
        assert!(err.to_string().contains(want), "{err}");
    }
    // an overvote is recorded in the contest data and counts nothing, as egk-ec does
    let over = device
        .encrypt(
            &ballot("ward-1-style", "mayor", vec![1, 1, 0]),
            State::Cast,
            0,
            &mut rng,
        )
        .unwrap();
    assert_eq!(over.contests[0].id, "mayor");
}

#[test]
fn contest_data_reads_back_and_is_cut_to_its_size() {
    let plain = Plain {
        overvotes: vec![1, 3],
        write_ins: vec![],
        status: Status::OverVote,
    };
    let m = plain.to_message(1);
    assert_eq!(m.len(), 62);
    assert_eq!(Plain::decode(&m).unwrap(), plain);
    let long = Plain {
        overvotes: vec![],
        write_ins: vec!["a very long write-in name that will not fit in the contest data of a one-vote contest".into(); 4],
        status: Status::Normal,
    };
    let m = long.to_message(1);
    assert!(m.len() <= 64);
    let back = Plain::decode(&m).unwrap();
    assert_eq!(back.write_ins.len(), 2);
    assert_eq!(back.write_ins[1], "*");
    assert!(back.write_ins[0].ends_with('*'));
    assert!(Plain::decode(&[5, 1]).is_none());
}

#[test]
fn contest_data_opens_with_its_beta_only() {
    let group = P256;
    let k = group.pow_generator(&group.scalar_from_u64(1234));
    let table = group.table(&k);
    let he = [9u8; 32];
    let message = Plain {
        overvotes: vec![],
        write_ins: vec!["Ada".into()],
        status: Status::UnderVote,
    }
    .to_message(2);
    let xi = group.scalar_from_u64(777);
    let (data, n) = contest_data::encrypt(&group, &he, &k, &table, "mayor", &message, &xi);
    let beta = group.pow(&k, &xi);
    let opened = contest_data::decrypt(&group, &he, &k, &data, &beta, "mayor", n).unwrap();
    assert_eq!(opened, message);
    // another β, another contest's id, a changed C₁, a C₁ cut short: the MAC refuses each
    let other = group.op(&beta, group.generator());
    assert!(contest_data::decrypt(&group, &he, &k, &data, &other, "mayor", n).is_none());
    assert!(contest_data::decrypt(&group, &he, &k, &data, &beta, "council", n).is_none());
    let mut changed = data.clone();
    changed.c1[0] ^= 1;
    assert!(contest_data::decrypt(&group, &he, &k, &changed, &beta, "mayor", n).is_none());
    changed.c1.truncate(33);
    assert!(contest_data::decrypt(&group, &he, &k, &changed, &beta, "mayor", n).is_none());
}
