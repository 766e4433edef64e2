#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

//! A whole election in votum alone: key ceremony (5 guardians, quorum 3), encryption, ballot
//! box, tally, decryption with two guardians missing, spoiled-ballot decryption, and the
//! refusals of each step.

use std::collections::BTreeMap;

use rand_chacha::ChaCha20Rng;
use rand_core::{RngCore, SeedableRng};
use votum_eg::ceremony::{
    run_ceremony, verify_guardians, CeremonyError, Guardian, GuardianPublicKey, PartialKeyBackup,
};
use votum_eg::context::ElectionContext;
use votum_eg::decrypt::{
    CompensatedShares, DecryptionError, DecryptionTarget, Decryptor, GuardianShares, Mismatched,
};
use votum_eg::eg14::BallotForm;
use votum_eg::encrypt::{encrypt_ballot, EncryptionContext, PlaintextBallot};
use votum_eg::{BallotBox, BallotState, BallotVerifier, Manifest};
use votum_elgamal::PublicKey;
use votum_group::{Group, ModpGroup};
use votum_proofs::ProofError;

const N: usize = 5;
const K: usize = 3;

fn manifest() -> Manifest {
    let text = std::fs::read_to_string(format!(
        "{}/../../tests/peer/manifest-three-contests.json",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    Manifest::from_json(&text).unwrap()
}

fn ceremony(rng: &mut ChaCha20Rng) -> Vec<Guardian> {
    let mut guardians: Vec<Guardian> = (1..=N as u64)
        .map(|i| Guardian::new(&format!("guardian-{i}"), i, N, K, rng).unwrap())
        .collect();
    let publics: Vec<GuardianPublicKey> =
        guardians.iter().map(|g| g.public_key().clone()).collect();
    let mut backups = Vec::new();
    for sender in &guardians {
        for receiver in &publics {
            if receiver.id != sender.id() {
                backups.push(sender.backup_for(receiver, rng).unwrap());
            }
        }
    }
    for b in &backups {
        // through JSON, as it would travel
        let b = PartialKeyBackup::from_json(&b.to_json()).unwrap();
        let sender = publics.iter().find(|p| p.id == b.sender).unwrap();
        let receiver = guardians.iter_mut().find(|g| g.id() == b.receiver).unwrap();
        receiver.receive_backup(sender, &b).unwrap();
    }
    for g in &guardians {
        assert_eq!(g.backups_held().len(), N - 1);
    }
    guardians
}

fn random_ballot(
    manifest: &Manifest,
    id: &str,
    rng: &mut ChaCha20Rng,
) -> (PlaintextBallot, Vec<String>) {
    let mut chosen = Vec::new();
    let mut contests = Vec::new();
    for c in &manifest.contests {
        let mut sels = Vec::new();
        let mut left = c.votes_allowed;
        for s in &c.ballot_selections {
            let vote = i64::from(left > 0 && rng.next_u32().is_multiple_of(3));
            left -= vote;
            if vote == 1 {
                chosen.push(s.object_id.clone());
            }
            sels.push(serde_json::json!({"object_id": s.object_id, "vote": vote}));
        }
        contests.push(serde_json::json!({"object_id": c.object_id, "ballot_selections": sels}));
    }
    let v = serde_json::json!({
        "object_id": id,
        "style_id": manifest.ballot_styles[0].object_id,
        "contests": contests,
    });
    (PlaintextBallot::from_json(&v.to_string()).unwrap(), chosen)
}

struct Election {
    guardians: Vec<Guardian>,
    context: ElectionContext,
    manifest: Manifest,
    submitted: Vec<(String, BallotState)>,
    expected: BTreeMap<String, u64>,
    tally: DecryptionTarget,
}

fn run(seed: u64, ballots: usize) -> Election {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let g = ModpGroup::eg_4096();
    let manifest = manifest();
    let guardians = ceremony(&mut rng);
    let publics: Vec<_> = guardians.iter().map(|g| g.public_key().clone()).collect();
    let context = ElectionContext::new(&publics, K, manifest.crypto_hash().unwrap()).unwrap();
    context.check(&publics).unwrap();
    let enc = EncryptionContext::new(
        context.elgamal_public_key.clone(),
        context.crypto_extended_base_hash.clone(),
        context.manifest_hash.clone(),
    )
    .unwrap();
    let key = PublicKey::new(&g, context.elgamal_public_key.clone()).unwrap();
    let mut bb = BallotBox::new(
        BallotVerifier::new(
            manifest.clone(),
            &key,
            context.crypto_extended_base_hash.clone(),
        )
        .unwrap(),
    );
    let mut expected: BTreeMap<String, u64> = manifest
        .contests
        .iter()
        .flat_map(|c| c.ballot_selections.iter().map(|s| (s.object_id.clone(), 0)))
        .collect();
    let mut submitted = Vec::new();
    let mut code_seed = votum_arith::Integer::from(42u32);
    for i in 0..ballots {
        let (plain, chosen) = random_ballot(&manifest, &format!("b-{i}"), &mut rng);
        let nonce = g.random_scalar(&mut rng);
        let ballot =
            encrypt_ballot(&enc, &manifest, &plain, &nonce, &code_seed, 1_700_000_000).unwrap();
        code_seed = ballot.code.clone();
        let state = if i % 4 == 3 {
            BallotState::Spoiled
        } else {
            BallotState::Cast
        };
        let form = BallotForm::Submitted {
            state: if state == BallotState::Cast { 1 } else { 2 },
        };
        let json = ballot.to_eg14_json(form).to_string();
        bb.submit(&json, state).unwrap();
        if state == BallotState::Cast {
            for s in chosen {
                *expected.get_mut(&s).unwrap() += 1;
            }
        }
        submitted.push((json, state));
    }
    let tally = DecryptionTarget::from_tally("election-results", &manifest, &bb.tally());
    Election {
        guardians,
        context,
        manifest,
        submitted,
        expected,
        tally,
    }
}

fn shares(
    e: &Election,
    target: &DecryptionTarget,
    present: &[usize],
    rng: &mut ChaCha20Rng,
) -> (Vec<GuardianShares>, Vec<CompensatedShares>) {
    let q = &e.context.crypto_extended_base_hash;
    let cts = target.ciphertexts();
    let direct = present
        .iter()
        .map(|&i| GuardianShares {
            guardian_id: e.guardians[i].id().to_string(),
            shares: e.guardians[i].decryption_shares(&cts, q, rng),
        })
        .collect();
    let mut comp = Vec::new();
    for m in (0..N).filter(|m| !present.contains(m)) {
        for &i in present {
            comp.push(CompensatedShares {
                guardian_id: e.guardians[i].id().to_string(),
                missing_guardian_id: e.guardians[m].id().to_string(),
                shares: e.guardians[i]
                    .compensated_shares(e.guardians[m].public_key(), &cts, q, rng)
                    .unwrap(),
            });
        }
    }
    (direct, comp)
}

fn decryptor(e: &Election) -> Decryptor {
    Decryptor::new(
        e.guardians.iter().map(|g| g.public_key().clone()).collect(),
        K,
        e.context.crypto_extended_base_hash.clone(),
        1000,
    )
    .unwrap()
}

#[test]
fn tally_and_spoiled_ballots_decrypt_with_two_guardians_missing() {
    let e = run(7, 12);
    let mut rng = ChaCha20Rng::seed_from_u64(99);
    let d = decryptor(&e);
    let (direct, comp) = shares(&e, &e.tally, &[0, 2, 4], &mut rng);
    let record = d.decrypt(&e.tally, &direct, &comp).unwrap();
    assert_eq!(record.counts(), e.expected);
    // the written record is re-checked by the same reader that checks the reference's
    let json = record.to_eg14_json();
    let again = d.verify_eg14(&e.tally, &json).unwrap();
    assert_eq!(again.counts(), e.expected);
    // all present: no compensation needed
    let (all, none) = shares(&e, &e.tally, &[0, 1, 2, 3, 4], &mut rng);
    assert!(none.is_empty());
    assert_eq!(d.decrypt(&e.tally, &all, &[]).unwrap().counts(), e.expected);

    // a spoiled ballot decrypts to 0/1 votes within its limits
    let (json, _) = e
        .submitted
        .iter()
        .find(|(_, s)| *s == BallotState::Spoiled)
        .unwrap();
    let target = DecryptionTarget::from_ballot_json(json).unwrap();
    let (direct, comp) = shares(&e, &target, &[1, 2, 3], &mut rng);
    let plain = d.decrypt(&target, &direct, &comp).unwrap();
    for (cid, sels) in &plain.contests {
        let limit = e
            .manifest
            .contests
            .iter()
            .find(|c| &c.object_id == cid)
            .unwrap()
            .votes_allowed;
        let total: u64 = sels.iter().map(|s| s.count).sum();
        assert!(sels.iter().all(|s| s.count <= 1) && total <= limit as u64);
    }
    d.verify_eg14(&target, &plain.to_eg14_json()).unwrap();
}

#[test]
fn decryption_refuses_bad_shares_with_the_specific_error() {
    let e = run(8, 3);
    let mut rng = ChaCha20Rng::seed_from_u64(5);
    let d = decryptor(&e);
    let (direct, comp) = shares(&e, &e.tally, &[0, 1, 2], &mut rng);

    // too few present
    let err = d.decrypt(&e.tally, &direct[..2], &comp).unwrap_err();
    assert!(matches!(
        err,
        DecryptionError::TooFewGuardians { needed: 3, got: 2 }
    ));
    // a missing guardian with too few helpers
    let err = d.decrypt(&e.tally, &direct, &comp[1..]).unwrap_err();
    assert!(
        matches!(err, DecryptionError::NotEnoughHelpers { .. }),
        "{err}"
    );
    // a share from an unknown guardian
    let mut bad = direct.clone();
    bad[1].guardian_id = "mallory".into();
    assert_eq!(
        d.decrypt(&e.tally, &bad, &comp).unwrap_err(),
        DecryptionError::UnknownGuardian("mallory".into())
    );
    // a share attributed to another guardian fails its proof
    let mut bad = direct.clone();
    bad.swap(0, 1);
    bad[0].guardian_id = direct[0].guardian_id.clone();
    bad[1].guardian_id = direct[1].guardian_id.clone();
    assert!(matches!(
        d.decrypt(&e.tally, &bad, &comp).unwrap_err(),
        DecryptionError::Proof {
            error: ProofError::Equation { .. },
            ..
        }
    ));
    // a wrong share value (the proof no longer matches)
    let g = ModpGroup::eg_4096();
    let mut bad = direct.clone();
    bad[2].shares[3].share = g.op(&bad[2].shares[3].share, g.generator());
    assert!(matches!(
        d.decrypt(&e.tally, &bad, &comp).unwrap_err(),
        DecryptionError::Proof { ref guardian, error: ProofError::ChallengeMismatch { .. }, .. } if guardian == "guardian-3"
    ));
    // a share multiplied by −1 (order 2): refused before any equation, which it could pass
    let mut bad = direct.clone();
    let flipped = votum_arith::Integer::from(g.p() - bad[1].shares[0].share.value());
    bad[1].shares[0].share = g.element_in_range(&flipped).unwrap().bound_by_proof();
    assert!(matches!(
        d.decrypt(&e.tally, &bad, &comp).unwrap_err(),
        DecryptionError::Mismatch {
            what: Mismatched::ShareNotInSubgroup(_),
            ..
        }
    ));
    // a wrong compensated share
    let mut badc = comp.clone();
    badc[4].shares[0].share = g.op(&badc[4].shares[0].share, g.generator());
    assert!(matches!(
        d.decrypt(&e.tally, &direct, &badc).unwrap_err(),
        DecryptionError::Proof { .. }
    ));
    // short share lists
    let mut bad = direct.clone();
    bad[0].shares.pop();
    assert!(matches!(
        d.decrypt(&e.tally, &bad, &comp).unwrap_err(),
        DecryptionError::ShareCount { .. }
    ));

    // a tampered published tally: stated count, value, recovery key
    let record = d.decrypt(&e.tally, &direct, &comp).unwrap().to_eg14_json();
    let mut t = record.clone();
    let sel = &mut t["contests"]["mayor"]["selections"]["mayor-alice"];
    sel["tally"] = serde_json::json!(sel["tally"].as_u64().unwrap() + 1);
    assert!(matches!(
        d.verify_eg14(&e.tally, &t).unwrap_err(),
        DecryptionError::Mismatch {
            what: Mismatched::Tally,
            ..
        }
    ));
    let mut t = record.clone();
    let parts =
        &mut t["contests"]["mayor"]["selections"]["mayor-alice"]["shares"][3]["recovered_parts"];
    parts["guardian-1"]["recovery_key"] = parts["guardian-2"]["recovery_key"].clone();
    assert!(matches!(
        d.verify_eg14(&e.tally, &t).unwrap_err(),
        DecryptionError::Mismatch {
            what: Mismatched::RecoveryKey { .. },
            ..
        }
    ));
    // a spoiled ballot whose ciphertext is outside the subgroup cannot be a decryption target
    let mut v: serde_json::Value = serde_json::from_str(&e.submitted[0].0).unwrap();
    let minus_one = votum_arith::Integer::from(g.p() - 1u32);
    v["contests"][0]["ballot_selections"][0]["ciphertext"]["pad"] =
        serde_json::json!(votum_hash::eg::to_hex(&minus_one));
    assert!(matches!(
        DecryptionTarget::from_ballot_json(&v.to_string()).unwrap_err(),
        DecryptionError::Ballot(votum_eg::BallotError::BadElement { what: "pad", .. })
    ));
    // the tally of another election's ciphertexts
    let other = run(9, 1);
    assert!(matches!(
        d.verify_eg14(&other.tally, &record).unwrap_err(),
        DecryptionError::Mismatch { what: Mismatched::Document(ref d), .. } if d.starts_with("message")
    ));
}

#[test]
fn ceremony_refuses_bad_backups_and_records() {
    let mut rng = ChaCha20Rng::seed_from_u64(11);
    let g = ModpGroup::eg_4096();
    let mut a = Guardian::new("a", 1, 3, 2, &mut rng).unwrap();
    let b = Guardian::new("b", 2, 3, 2, &mut rng).unwrap();
    let c = Guardian::new("c", 3, 3, 2, &mut rng).unwrap();
    // a backup addressed to someone else
    let to_c = b.backup_for(c.public_key(), &mut rng).unwrap();
    assert!(matches!(
        a.receive_backup(b.public_key(), &to_c).unwrap_err(),
        CeremonyError::Misaddressed { .. }
    ));
    // a backup re-labelled as coming from another sender does not open as theirs
    let mut relabelled = c.backup_for(a.public_key(), &mut rng).unwrap();
    relabelled.sender = "b".into();
    assert!(matches!(
        a.receive_backup(b.public_key(), &relabelled).unwrap_err(),
        CeremonyError::Unreadable { .. }
    ));
    // a tampered ciphertext
    let mut tampered = b.backup_for(a.public_key(), &mut rng).unwrap();
    tampered.sealed.body[40] ^= 1;
    assert!(matches!(
        a.receive_backup(b.public_key(), &tampered).unwrap_err(),
        CeremonyError::Unreadable { .. }
    ));
    assert!(a.backups_held().is_empty());
    // a sender who sealed a share that is not on its committed polynomial: the receiver
    // refuses it, challenges, and the public answer settles it
    let liar = Guardian::new("b", 2, 3, 2, &mut rng).unwrap(); // same id, other polynomial
    let wrong = liar.backup_for(a.public_key(), &mut rng).unwrap();
    assert_eq!(
        a.receive_backup(b.public_key(), &wrong).unwrap_err(),
        CeremonyError::InvalidBackup {
            sender: "b".into(),
            receiver: "a".into()
        }
    );
    let answer = b.answer_challenge(a.public_key());
    answer.verify(&g, b.public_key()).unwrap();
    a.accept_challenge_response(b.public_key(), &answer)
        .unwrap();
    assert_eq!(a.backups_held(), vec!["b".to_string()]);
    let lie = liar.answer_challenge(a.public_key());
    assert!(matches!(
        lie.verify(&g, b.public_key()).unwrap_err(),
        CeremonyError::InvalidBackup { .. }
    ));
    // a missing backup
    assert!(matches!(
        a.compensated_shares(
            c.public_key(),
            &[],
            &votum_arith::Integer::from(1u32),
            &mut rng
        )
        .unwrap_err(),
        CeremonyError::MissingBackup { .. }
    ));

    // public records: JSON round trip, tampered proof, wrong quorum, duplicates
    let rec = GuardianPublicKey::from_eg14_json(&g, &b.public_key().to_eg14_json()).unwrap();
    assert_eq!(&rec, b.public_key());
    rec.verify(&g, 2).unwrap();
    assert!(matches!(
        rec.verify(&g, 3).unwrap_err(),
        CeremonyError::WrongQuorum { .. }
    ));
    let mut forged = rec.clone();
    forged.proofs[1].response = g.scalar_add(&forged.proofs[1].response, &g.scalar_from_u64(1));
    assert!(matches!(
        forged.verify(&g, 2).unwrap_err(),
        CeremonyError::Proof { index: 1, .. }
    ));
    let mut j = b.public_key().to_eg14_json();
    j["election_public_key"] = j["election_commitments"][1].clone();
    assert!(matches!(
        GuardianPublicKey::from_eg14_json(&g, &j).unwrap_err(),
        CeremonyError::KeyMismatch { .. }
    ));
    // commitments outside the subgroup, refused while reading (one batched test, then one by
    // one to name them): −1 (Jacobi symbol −1) and 4 = 2², a quadratic residue whose order is
    // not q (it passes the Jacobi test and only the batched exponentiation catches it)
    let minus_one = votum_arith::Integer::from(g.p() - 1u32);
    let square_outside = votum_arith::Integer::from(4u32);
    assert_eq!(square_outside.jacobi(g.p()), 1);
    assert!(g.element(&square_outside).is_err());
    for (index, bad) in [(1usize, minus_one), (1, square_outside)] {
        let mut j = b.public_key().to_eg14_json();
        let hex = votum_hash::eg::to_hex(&bad);
        j["election_commitments"][index] = serde_json::Value::from(hex.clone());
        j["election_proofs"][index]["public_key"] = serde_json::Value::from(hex);
        let err = GuardianPublicKey::from_eg14_json(&g, &j).unwrap_err();
        assert!(
            matches!(
                err,
                CeremonyError::Field(votum_eg::json::FieldError::BadElement {
                    what: "election_commitments",
                    reason: votum_group::GroupError::NotInSubgroup,
                    ..
                })
            ),
            "{err:?}"
        );
    }
    let publics = vec![
        a.public_key().clone(),
        b.public_key().clone(),
        b.public_key().clone(),
    ];
    assert!(matches!(
        ElectionContext::new(&publics, 2, 1u32.into()).unwrap_err(),
        CeremonyError::DuplicateGuardian(_)
    ));
    let publics = vec![
        a.public_key().clone(),
        b.public_key().clone(),
        c.public_key().clone(),
    ];
    assert!(matches!(
        ElectionContext::new(&publics, 4, 1u32.into()).unwrap_err(),
        CeremonyError::BadQuorum { .. }
    ));
    // debug output never shows secrets
    let shown = format!("{a:?}");
    assert!(shown.contains("backups_held") && !shown.contains("coefficients"));
}

#[test]
fn context_matches_the_reference_sample() {
    let text = std::fs::read_to_string(format!(
        "{}/../../vectors/eg-1.4/context.json",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let ctx = ElectionContext::from_eg14_json(&v).unwrap();
    let q = votum_eg::context::base_hash(ctx.number_of_guardians, ctx.quorum, &ctx.manifest_hash);
    assert_eq!(q, ctx.crypto_base_hash);
}

#[test]
fn batch_verification_agrees_with_individual_checks() {
    use votum_eg::ballot::parse_ballot;
    use votum_eg::UncheckedBallot;
    let e = run(12, 8);
    let g = ModpGroup::eg_4096();
    let key = PublicKey::new(&g, e.context.elgamal_public_key.clone()).unwrap();
    let v = BallotVerifier::new(
        e.manifest.clone(),
        &key,
        e.context.crypto_extended_base_hash.clone(),
    )
    .unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(3);
    let ballots: Vec<_> = e
        .submitted
        .iter()
        .map(|(json, _)| parse_ballot(json).unwrap())
        .collect();
    assert!(v
        .verify_many(ballots.clone(), &mut rng)
        .iter()
        .all(Result::is_ok));
    // the batch itself holds (a batch that wrongly failed would be hidden by the fallback), with
    // K raised plainly or from a table
    let members: Vec<_> = ballots
        .iter()
        .map(|b| b.clone().check_members().unwrap())
        .collect();
    let refs: Vec<_> = members.iter().collect();
    let k = &e.context.elgamal_public_key;
    let table = votum_arith::FixedBaseTable::with_window(g.modulus(), k.value(), 256, 8).unwrap();
    for key_table in [None, Some(&table)] {
        assert!(votum_eg::batch::equations_hold(
            &g, k, key_table, &refs, &mut rng
        ));
    }
    let mut checked: Vec<_> = ballots
        .iter()
        .map(|b| v.verify_individually(b.clone()).unwrap())
        .collect();
    // one ballot with a wrong response: only it is refused, with the equation that fails
    let sel = &mut checked[5].contests[1].selections[2].proof;
    sel.one_response = g.scalar_add(&sel.one_response, &g.scalar_from_u64(1));
    let ballots: Vec<UncheckedBallot> = checked.into_iter().map(UncheckedBallot::from).collect();
    let results = v.verify_many(ballots.clone(), &mut rng);
    for (i, r) in results.iter().enumerate() {
        if i == 5 {
            assert!(
                matches!(
                    r,
                    Err(votum_eg::BallotError::Proof {
                        error: ProofError::Equation { .. },
                        ..
                    })
                ),
                "{r:?}"
            );
        } else {
            assert!(r.is_ok());
        }
    }
    assert_eq!(
        v.verify_individually(ballots[5].clone()).err(),
        results[5].as_ref().err().cloned()
    );

    // a ciphertext moved out of the subgroup by an element of order r' (Jacobi symbol 1, so
    // only the batched membership test and the equations can see it)
    let mut bad = parse_ballot(&e.submitted[0].0)
        .unwrap()
        .check_members()
        .unwrap();
    let q = g.order().clone();
    let h = votum_arith::Integer::from(3u32)
        .pow_mod(&(votum_arith::Integer::from(2u32) * &q), g.p())
        .unwrap();
    assert_eq!(h.jacobi(g.p()), 1);
    assert!(!g.is_member(&h));
    let alpha = &mut bad.contests[0].selections[0].ciphertext.pad;
    let moved = votum_arith::Integer::from(alpha.value() * &h) % g.p();
    *alpha = g.element_in_range(&moved).unwrap().into_unchecked_part();
    let mut rng = ChaCha20Rng::seed_from_u64(4);
    assert!(!votum_eg::batch::equations_hold(
        &g,
        &e.context.elgamal_public_key,
        None,
        &[&bad],
        &mut rng
    ));
    assert!(matches!(
        v.verify_individually(UncheckedBallot::from(bad))
            .unwrap_err(),
        votum_eg::BallotError::BadElement { what: "pad", .. }
    ));
}

#[test]
fn a_guardian_secret_state_round_trips_and_is_checked() {
    let mut rng = ChaCha20Rng::seed_from_u64(31);
    let guardians = ceremony(&mut rng);
    let publics: Vec<GuardianPublicKey> =
        guardians.iter().map(|g| g.public_key().clone()).collect();
    let state = guardians[1].export_secret_state();
    let back = Guardian::import_secret_state(&state, &publics).unwrap();
    assert_eq!(back.id(), guardians[1].id());
    assert_eq!(back.backups_held(), guardians[1].backups_held());
    assert_eq!(back.public_key(), guardians[1].public_key());
    // the restored guardian decrypts and compensates exactly as the original: its shares verify
    let manifest = manifest();
    let context = ElectionContext::new(&publics, K, manifest.crypto_hash().unwrap()).unwrap();
    let group = ModpGroup::eg_4096();
    let key = PublicKey::new(&group, context.elgamal_public_key.clone()).unwrap();
    let r = group.random_scalar(&mut rng);
    let ct = votum_elgamal::Ciphertext::encrypt_exp(&group, &key, 1, &r);
    let target = DecryptionTarget {
        object_id: "t".into(),
        contests: vec![("c".into(), vec![("s".into(), ct)])],
    };
    let q = &context.crypto_extended_base_hash;
    let cts = target.ciphertexts();
    let present = [0usize, 1, 2];
    let mut direct = Vec::new();
    let mut comp = Vec::new();
    for &i in &present {
        let g = if i == 1 { &back } else { &guardians[i] };
        direct.push(GuardianShares {
            guardian_id: g.id().into(),
            shares: g.decryption_shares(&cts, q, &mut rng),
        });
        for missing in &publics[3..N] {
            comp.push(CompensatedShares {
                guardian_id: g.id().into(),
                missing_guardian_id: missing.id.clone(),
                shares: g.compensated_shares(missing, &cts, q, &mut rng).unwrap(),
            });
        }
    }
    let d = Decryptor::new(publics.clone(), K, q.clone(), 10).unwrap();
    assert_eq!(d.decrypt(&target, &direct, &comp).unwrap().counts()["s"], 1);

    // tampering: a coefficient that is not the committed one, another format, a bad backup
    let v: serde_json::Value = serde_json::from_str(&state).unwrap();
    let mut bad = v.clone();
    bad["coefficients"][1] = serde_json::Value::String("0A".into());
    assert!(matches!(
        Guardian::import_secret_state(&bad.to_string(), &publics),
        Err(CeremonyError::KeyMismatch { .. })
    ));
    let mut bad = v.clone();
    bad["format"] = "votum-eg-guardian-secret/9".into();
    assert!(matches!(
        Guardian::import_secret_state(&bad.to_string(), &publics),
        Err(CeremonyError::Field(_))
    ));
    let mut bad = v.clone();
    bad["backups"]["guardian-1"] = serde_json::Value::String("0B".into());
    assert!(matches!(
        Guardian::import_secret_state(&bad.to_string(), &publics),
        Err(CeremonyError::InvalidBackup { .. })
    ));
    // without the senders' records the backups are taken as written
    assert!(Guardian::import_secret_state(&bad.to_string(), &[]).is_ok());
    let mut bad = v;
    bad["coefficients"].as_array_mut().unwrap().pop();
    assert!(Guardian::import_secret_state(&bad.to_string(), &publics).is_err());
    assert!(Guardian::import_secret_state("{", &publics).is_err());
}

#[test]
fn the_parallel_ceremony_equals_the_steps_one_by_one() {
    let seeded = || -> Vec<ChaCha20Rng> {
        (0..N as u64)
            .map(|i| ChaCha20Rng::seed_from_u64(900 + i))
            .collect()
    };
    let mut rngs = seeded();
    let (guardians, sent) = run_ceremony(K, &mut rngs).unwrap();
    // the same draws, one step at a time
    let mut rngs_again = seeded();
    let stepwise: Vec<Guardian> = rngs_again
        .iter_mut()
        .enumerate()
        .map(|(i, r)| Guardian::new(&format!("guardian-{}", i + 1), i as u64 + 1, N, K, r).unwrap())
        .collect();
    let publics: Vec<GuardianPublicKey> = stepwise.iter().map(|g| g.public_key().clone()).collect();
    for ((g, s), (mine, r)) in guardians
        .iter()
        .zip(&sent)
        .zip(stepwise.iter().zip(rngs_again.iter_mut()))
    {
        assert_eq!(
            g.public_key().to_eg14_json(),
            mine.public_key().to_eg14_json()
        );
        assert_eq!(g.backups_held().len(), N - 1);
        let expected: Vec<PartialKeyBackup> = publics
            .iter()
            .filter(|p| p.id != mine.id())
            .map(|p| mine.backup_for(p, r).unwrap())
            .collect();
        assert_eq!(s, &expected);
    }
    // a quorum it cannot have is refused
    assert!(matches!(
        run_ceremony(N + 1, &mut seeded()),
        Err(CeremonyError::BadQuorum { .. })
    ));
}

#[test]
fn an_encrypted_tally_is_read_with_every_element_checked() {
    let e = run(12, 3);
    let g = ModpGroup::eg_4096();
    let cts = e.tally.ciphertexts();
    let mut contests = serde_json::Map::new();
    let mut k = 0;
    for c in &e.manifest.contests {
        let mut sels = serde_json::Map::new();
        for s in &c.ballot_selections {
            sels.insert(
                s.object_id.clone(),
                serde_json::json!({"ciphertext": {
                    "pad": votum_hash::eg::to_hex(cts[k].pad.value()),
                    "data": votum_hash::eg::to_hex(cts[k].data.value()),
                }}),
            );
            k += 1;
        }
        contests.insert(
            c.object_id.clone(),
            serde_json::json!({ "selections": sels }),
        );
    }
    let tally = serde_json::json!({"object_id": "election-results", "contests": contests});
    let read = DecryptionTarget::from_tally_json(&e.manifest, &tally).unwrap();
    assert_eq!(read.ciphertexts(), cts);
    // -1 (Jacobi symbol -1) and 4 (a square outside the order-q subgroup, which only the batched
    // exponentiation sees) are refused, naming the selection and the part
    let last_contest = e.manifest.contests.last().unwrap();
    let last = last_contest.ballot_selections.last().unwrap();
    for bad in [
        votum_arith::Integer::from(g.p() - 1u32),
        votum_arith::Integer::from(4u32),
    ] {
        let mut t = tally.clone();
        t["contests"][&last_contest.object_id]["selections"][&last.object_id]["ciphertext"]
            ["data"] = serde_json::json!(votum_hash::eg::to_hex(&bad));
        let err = DecryptionTarget::from_tally_json(&e.manifest, &t).unwrap_err();
        assert!(
            matches!(
                err,
                DecryptionError::Field(votum_eg::json::FieldError::BadElement {
                    what: "data",
                    ref object,
                    ..
                }) if object.ends_with(&format!("{}/{}", last_contest.object_id, last.object_id))
            ),
            "{err:?}"
        );
    }
}

/// A set of records is checked in one batch (spec/63.1); a bad proof anywhere in the set still fails
/// it, and the error names the guardian and the commitment, whatever was changed: the response, the
/// challenge, or the proof's commitment h (p − h has Jacobi symbol −1; 4h is a quadratic residue that
/// only the batched equation catches).
#[test]
fn a_set_of_records_is_checked_in_one_batch_and_a_bad_proof_is_named() {
    let g = ModpGroup::eg_4096();
    let mut rng = ChaCha20Rng::seed_from_u64(63);
    let publics: Vec<GuardianPublicKey> = ceremony(&mut rng)
        .iter()
        .map(|x| x.public_key().clone())
        .collect();
    let quorum = publics[0].commitments.len();
    verify_guardians(&g, &publics, quorum).unwrap();
    let p = votum_arith::Integer::from(g.p());
    let hex = |x: &votum_arith::Integer| serde_json::Value::from(votum_hash::eg::to_hex(x));
    let value = |v: &serde_json::Value| votum_hash::eg::from_hex(v.as_str().unwrap()).unwrap();
    type Tamper<'a> = Box<dyn Fn(&mut serde_json::Value) + 'a>;
    let tamperings: Vec<(&str, Tamper<'_>)> = vec![
        (
            "response",
            Box::new(|x| x["response"] = hex(&(value(&x["response"]) + 1u32))),
        ),
        (
            "challenge",
            Box::new(|x| x["challenge"] = hex(&(value(&x["challenge"]) + 1u32))),
        ),
        (
            "p - h",
            Box::new(|x| x["commitment"] = hex(&(&p - value(&x["commitment"])))),
        ),
        (
            "4h",
            Box::new(|x| x["commitment"] = hex(&(value(&x["commitment"]) * 4u32 % &p))),
        ),
    ];
    for (what, tamper) in &tamperings {
        let mut record = publics[1].to_eg14_json();
        tamper(&mut record["election_proofs"][1]);
        let mut forged = publics.clone();
        forged[1] = GuardianPublicKey::from_eg14_json(&g, &record).unwrap();
        let err = verify_guardians(&g, &forged, quorum).unwrap_err();
        assert!(
            matches!(&err, CeremonyError::Proof { guardian, index: 1, .. } if guardian == &publics[1].id),
            "{what}: {err:?}"
        );
    }
}

/// A set of records is read with one membership batch for all commitments (spec/63.1): the same keys
/// as reading each alone, and a non-member commitment (4: a quadratic residue outside the subgroup)
/// in one record is refused with that record named.
#[test]
fn a_set_of_records_is_read_with_one_membership_batch() {
    let g = ModpGroup::eg_4096();
    let mut rng = ChaCha20Rng::seed_from_u64(631);
    let values: Vec<serde_json::Value> = ceremony(&mut rng)
        .iter()
        .map(|x| x.public_key().to_eg14_json())
        .collect();
    let one_by_one: Vec<GuardianPublicKey> = values
        .iter()
        .map(|v| GuardianPublicKey::from_eg14_json(&g, v).unwrap())
        .collect();
    assert_eq!(
        GuardianPublicKey::from_eg14_json_many(&g, &values).unwrap(),
        one_by_one
    );
    let mut bad = values.clone();
    let four = serde_json::Value::from(votum_hash::eg::to_hex(&votum_arith::Integer::from(4u32)));
    bad[2]["election_commitments"][1] = four.clone();
    bad[2]["election_proofs"][1]["public_key"] = four;
    let err = GuardianPublicKey::from_eg14_json_many(&g, &bad).unwrap_err();
    let named = format!("guardian {:?}", one_by_one[2].id);
    assert!(
        matches!(&err, CeremonyError::Field(votum_eg::json::FieldError::BadElement { object, .. }) if *object == named),
        "{err:?}"
    );
}

/// The batched share check itself (spec/64.4), not only the decryption it guards: a decryption
/// whose batch wrongly failed would still succeed through the one-by-one fallback, only slower.
/// It holds for honest direct and compensated shares, and fails for one changed share or response.
#[test]
fn the_share_batch_holds_for_honest_shares_only() {
    use votum_eg::batch::{shares_hold, ShareCheck};
    let e = run(21, 6);
    let g = ModpGroup::eg_4096();
    let mut rng = ChaCha20Rng::seed_from_u64(64);
    let (direct, comp) = shares(&e, &e.tally, &[0, 2, 4], &mut rng);
    let cts = e.tally.ciphertexts();
    let mut keys = Vec::new();
    let mut list: Vec<(usize, usize, votum_eg::decrypt::ProvenShare)> = Vec::new();
    for d in &direct {
        let i = e
            .guardians
            .iter()
            .position(|x| x.id() == d.guardian_id)
            .unwrap();
        keys.push(e.guardians[i].public_key().key().clone());
        for (c, s) in d.shares.iter().enumerate() {
            list.push((keys.len() - 1, c, s.clone()));
        }
    }
    for c in &comp {
        let helper = e
            .guardians
            .iter()
            .find(|x| x.id() == c.guardian_id)
            .unwrap();
        let lost = e
            .guardians
            .iter()
            .find(|x| x.id() == c.missing_guardian_id)
            .unwrap();
        keys.push(
            lost.public_key()
                .recovery_key(&g, helper.public_key().sequence_order),
        );
        for (k, s) in c.shares.iter().enumerate() {
            list.push((keys.len() - 1, k, s.clone()));
        }
    }
    let hold = |list: &[(usize, usize, votum_eg::decrypt::ProvenShare)], seed: u64| {
        let refs: Vec<&_> = keys.iter().collect();
        let checks: Vec<ShareCheck<'_>> = list
            .iter()
            .map(|(key, ct, s)| ShareCheck {
                key: *key,
                ciphertext: *ct,
                share: &s.share,
                proof: &s.proof,
            })
            .collect();
        shares_hold(
            &g,
            &refs,
            &cts,
            &checks,
            &mut ChaCha20Rng::seed_from_u64(seed),
        )
    };
    assert!(list.len() > 3 * cts.len());
    for seed in 0..3 {
        assert!(hold(&list, seed));
    }
    let mut changed = list.clone();
    let last = changed.len() - 1;
    changed[last].2.share = g.op(&changed[last].2.share, g.generator());
    assert!(!hold(&changed, 0));
    let mut changed = list.clone();
    changed[1].2.proof.response = g.scalar_add(&changed[1].2.proof.response, &g.scalar_from_u64(1));
    assert!(!hold(&changed, 0));
    // a share credited to another ciphertext
    let mut moved = list.clone();
    moved[0].1 = (moved[0].1 + 1) % cts.len();
    assert!(!hold(&moved, 0));
}

/// The batched Schnorr check of a set of records (spec/63.1) holds for honest records and fails
/// for one changed response.
#[test]
fn the_schnorr_batch_holds_for_honest_records_only() {
    use votum_eg::batch::{schnorr_hold, SchnorrCheck};
    let g = ModpGroup::eg_4096();
    let mut rngs: Vec<ChaCha20Rng> = (0..N as u64).map(ChaCha20Rng::seed_from_u64).collect();
    let (guardians, _) = run_ceremony(K, &mut rngs).unwrap();
    let mut publics: Vec<GuardianPublicKey> =
        guardians.iter().map(|x| x.public_key().clone()).collect();
    let hold = |publics: &[GuardianPublicKey]| {
        let checks: Vec<SchnorrCheck<'_>> = publics
            .iter()
            .flat_map(|p| p.commitments.iter().zip(&p.proofs))
            .map(|(public, proof)| SchnorrCheck { public, proof })
            .collect();
        schnorr_hold(&g, &checks, &mut ChaCha20Rng::seed_from_u64(5))
    };
    assert!(hold(&publics));
    let p = &mut publics[2].proofs[1];
    p.response = g.scalar_add(&p.response, &g.scalar_from_u64(1));
    assert!(!hold(&publics));
}
