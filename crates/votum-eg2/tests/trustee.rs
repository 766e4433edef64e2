#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Each guardian a party of its own (spec/65.9): a record made by trustees and a coordinator that holds no
//! secret verifies with the voters' counts, and a coordinator that lies to a guardian is refused.

use std::path::Path;

use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use serde_json::Value;
use votum_eg2::election::{Coordinator, DEFAULT_MANIFEST};
use votum_eg2::trustee::{finish_with, read_public, Trustee};
use votum_eg2::Eg2Error;
use votum_group::P256;
use votum_verify::{verify_eg2_until_tally, verify_record, Options, Status};

const MANIFEST: &[u8] = DEFAULT_MANIFEST.as_bytes();

fn b64(v: &Value) -> Vec<u8> {
    use base64ct::{Base64, Encoding};
    Base64::decode_vec(v.as_str().unwrap()).unwrap()
}

/// What a guardian asks of a record before it decrypts: V-EG2-01…08 pass, and nothing fails.
fn until_tally_passes(dir: &Path) -> bool {
    let report = verify_eg2_until_tally(dir);
    report.checks.iter().all(|c| {
        let early =
            c.id.as_bytes()[c.id.len() - 2] == b'0' && c.id.as_bytes()[c.id.len() - 1] <= b'8';
        !matches!(c.status, Status::Fail | Status::Error) && (!early || c.status == Status::Pass)
    })
}

/// n trustees with quorum k, their records agreed and their shares dealt to each other.
fn trustees(n: u32, k: u32, seed: u64) -> Vec<Trustee<P256>> {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let mut ts: Vec<Trustee<P256>> = (1..=n)
        .map(|x| Trustee::new(P256, MANIFEST, n, k, &format!("guardian{x}"), x, &mut rng).unwrap())
        .collect();
    let records: Vec<Value> = ts.iter().map(Trustee::public).collect();
    for t in &mut ts {
        t.agree(&records).unwrap();
    }
    for dealer in 0..ts.len() {
        for receiver in 0..ts.len() {
            if dealer != receiver {
                let share = ts[dealer].share_for(ts[receiver].x()).unwrap();
                let from = ts[dealer].x();
                ts[receiver].receive(from, &share).unwrap();
            }
        }
    }
    ts
}

/// A coordinator that has opened the election with `ts`' records and cast `ballots` ballots.
fn cast(dir: &Path, ts: &mut [Trustee<P256>], ballots: usize) -> Coordinator<P256> {
    let mut c = Coordinator::new(P256, dir, MANIFEST, ts.len() as u32, 2, "dev").unwrap();
    let publics = ts
        .iter()
        .map(|t| read_public(&P256, &t.public()).unwrap())
        .collect();
    let (key, he) = c.open(publics).unwrap();
    for t in ts.iter_mut() {
        assert_eq!(
            t.joint().unwrap(),
            (key.clone(), he),
            "each guardian computes K and H_E itself"
        );
    }
    c.cast(ballots, 4, 3).unwrap();
    c
}

#[test]
fn guardians_as_parties_make_a_record_that_verifies_with_the_voters_counts() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("record");
    let mut ts = trustees(3, 2, 1);
    let mut c = cast(&dir, &mut ts, 24);
    assert!(until_tally_passes(&dir));
    let mut rng = ChaCha20Rng::seed_from_u64(9);
    // guardians 1 and 3 decrypt; 2 is missing
    let shares: Vec<Value> = [0, 2]
        .iter()
        .map(|&i| ts[i].shares(&dir, &mut rng).unwrap())
        .collect();
    let answers: Vec<Value> = [0, 2]
        .iter()
        .map(|&i| ts[i].answer(&shares).unwrap())
        .collect();
    let summary = finish_with(&mut c, &shares, &answers).unwrap();
    assert_eq!(summary.cast + summary.challenged, 24);
    assert!(summary.challenged > 0);
    let (report, values) = verify_record(&dir, Options::default());
    assert!(
        report.passed(),
        "{:?}",
        report
            .checks
            .iter()
            .filter(|c| c.status != Status::Pass)
            .map(|c| c.id)
            .collect::<Vec<_>>()
    );
    let counts = values.values["counts"].as_object().unwrap();
    for (label, n) in &summary.counts {
        assert_eq!(counts[label].as_u64(), Some(*n), "{label}");
    }
}

#[test]
fn a_tally_replaced_by_one_voters_ballot_fails_the_check_a_guardian_makes_first() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("record");
    let mut ts = trustees(3, 2, 2);
    cast(&dir, &mut ts, 8);
    // the coordinator puts the first cast ballot's ciphertexts where the tally's are
    let ballot_file = dir.join("encrypted_ballots/dev/eballot-id-1.json");
    let ballot: Value = serde_json::from_slice(&std::fs::read(ballot_file).unwrap()).unwrap();
    let tally_file = dir.join("encrypted_tally.json");
    let mut tally: Value = serde_json::from_slice(&std::fs::read(&tally_file).unwrap()).unwrap();
    for bc in ballot["contests"].as_array().unwrap() {
        let tc = tally["contests"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .find(|c| c["contest_id"] == bc["contest_id"])
            .unwrap();
        for (ts_, bs) in tc["selections"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .zip(bc["selections"].as_array().unwrap())
        {
            ts_["encrypted_vote"] = bs["encrypted_vote"].clone();
        }
    }
    std::fs::write(&tally_file, serde_json::to_vec(&tally).unwrap()).unwrap();
    let report = verify_eg2_until_tally(&dir);
    let v08 = report.checks.iter().find(|c| c.id == "V-EG2-08").unwrap();
    assert_eq!(v08.status, Status::Fail);
    assert!(!until_tally_passes(&dir));
}

#[test]
fn a_guardian_decrypts_once_answers_once_and_only_for_its_own_shares() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("record");
    let mut ts = trustees(3, 2, 3);
    cast(&dir, &mut ts, 8);
    let mut rng = ChaCha20Rng::seed_from_u64(4);
    let mut shares: Vec<Value> = (0..2)
        .map(|i| ts[i].shares(&dir, &mut rng).unwrap())
        .collect();
    // a second round of shares would give the coordinator a second set of nonces on the same values
    assert!(
        matches!(ts[0].shares(&dir, &mut rng), Err(Eg2Error::Parameters(m)) if m.contains("once"))
    );
    // its own shares changed: refused, and its nonces are gone with the refusal
    let good = shares[0].clone();
    shares[0]["shares"][0]["m"] = shares[0]["shares"][1]["m"].clone();
    let refused = ts[0].answer(&shares).unwrap_err();
    assert!(
        refused.to_string().contains("own shares were changed"),
        "{refused}"
    );
    shares[0] = good;
    assert!(
        ts[0].answer(&shares).is_err(),
        "a guardian answers once, even after a refusal"
    );
    // fewer than the quorum: refused
    assert!(ts[1].answer(&shares[1..]).is_err());
}

#[test]
fn a_guardian_refuses_a_record_made_with_other_guardians() {
    let tmp = tempfile::tempdir().unwrap();
    let ours = tmp.path().join("ours");
    let theirs = tmp.path().join("theirs");
    let mut ts = trustees(3, 2, 5);
    cast(&ours, &mut ts, 4);
    let mut others = trustees(3, 2, 6);
    cast(&theirs, &mut others, 4);
    let mut rng = ChaCha20Rng::seed_from_u64(7);
    // a record that verifies, but under other guardians' key: its tally would be theirs to decrypt
    assert!(until_tally_passes(&theirs));
    let refused = ts[0].shares(&theirs, &mut rng).unwrap_err();
    assert!(refused.to_string().contains("K or H_E"), "{refused}");
    // and its own record is still decrypted
    assert!(ts[0].shares(&ours, &mut rng).is_ok());
}

#[test]
fn a_roster_that_leaves_out_a_guardian_or_changes_its_record_is_refused() {
    let mut rng = ChaCha20Rng::seed_from_u64(8);
    let mut ts: Vec<Trustee<P256>> = (1..=3)
        .map(|x| Trustee::new(P256, MANIFEST, 3, 2, &format!("g{x}"), x, &mut rng).unwrap())
        .collect();
    let records: Vec<Value> = ts.iter().map(Trustee::public).collect();
    assert!(ts[0].agree(&records[..2]).is_err());
    // guardian 1's record replaced by one the coordinator made at the same x-coordinate
    let forged = Trustee::new(P256, MANIFEST, 3, 2, "g1", 1, &mut rng).unwrap();
    let mut shown = records.clone();
    shown[0] = forged.public();
    let refused = ts[0].agree(&shown).unwrap_err();
    assert!(refused.to_string().contains("own record"), "{refused}");
    // no share is dealt before the records are agreed
    assert!(ts[1].share_for(1).is_err());
}

#[test]
fn a_cast_ballot_copied_as_challenged_is_never_decrypted() {
    // The coordinator copies the first cast ballot under a new id, with another device name in its code (so
    // its confirmation code differs), and marks the copy challenged: the copy's range proofs are the
    // original's and hold, so every check of the specification passes; decrypting the "challenged" copy would
    // publish that voter's vote. A guardian refuses any record in which one ciphertext appears twice.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("record");
    let mut ts = trustees(3, 2, 11);
    cast(&dir, &mut ts, 8);
    let ballots = dir.join("encrypted_ballots/dev");
    let mut copy: Value =
        serde_json::from_slice(&std::fs::read(ballots.join("eballot-id-1.json")).unwrap()).unwrap();
    assert_eq!(copy["state"], "CAST");
    copy["ballot_id"] = Value::String("id-copy".into());
    copy["state"] = Value::String("CHALLENGED".into());
    // its confirmation code recomputed for the new device name, as anyone can: the record still checks
    let baux = b"other";
    copy["code_baux"] = Value::String(baux.iter().map(|b| format!("{b:02X}")).collect());
    let he: [u8; 32] = b64(&copy["election_id"]).try_into().unwrap();
    let hashes: Vec<[u8; 32]> = copy["contests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| b64(&c["contest_hash"]).try_into().unwrap())
        .collect();
    let code = votum_eg2::hashes::confirmation_code(&he, &hashes, baux);
    copy["confirmation_code"] = votum_eg2::record::b64(&code);
    std::fs::write(
        ballots.join("eballot-id-copy.json"),
        serde_json::to_vec(&copy).unwrap(),
    )
    .unwrap();
    // the specification's checks alone pass it; the verifier fails it under its own addition to V-EG2-07
    let report = verify_eg2_until_tally(&dir);
    let failing: Vec<&str> = report
        .checks
        .iter()
        .filter(|c| matches!(c.status, Status::Fail | Status::Error))
        .map(|c| c.id)
        .collect();
    assert_eq!(failing, ["V-EG2-07"]);
    // and the guardian refuses it itself, whoever checked the record before
    let mut rng = ChaCha20Rng::seed_from_u64(12);
    let refused = ts[0].shares(&dir, &mut rng).unwrap_err();
    assert!(refused.to_string().contains("twice"), "{refused}");
    // the same record without the copy is decrypted
    std::fs::remove_file(ballots.join("eballot-id-copy.json")).unwrap();
    assert!(ts[0].shares(&dir, &mut rng).is_ok());
}
