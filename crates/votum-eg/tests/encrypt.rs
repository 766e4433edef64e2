#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

//! The encryption device reproduces electionguard 1.4.0's ciphertext ballot byte for byte from the
//! same plaintext and master nonce (vectors/eg-1.4/ciphertext_ballot.json, private form).

use serde_json::Value;
use votum_eg::encrypt::{encrypt_ballot, EncryptError, EncryptionContext, PlaintextBallot};
use votum_eg::Manifest;
use votum_group::{Group, ModpGroup};
use votum_hash::eg::{from_hex, to_hex};

fn vector(name: &str) -> Value {
    let text = std::fs::read_to_string(format!(
        "{}/../../vectors/eg-1.4/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    serde_json::from_str(&text).unwrap()
}

fn hex(v: &Value) -> votum_arith::Integer {
    from_hex(v.as_str().unwrap()).unwrap()
}

fn setup() -> (ModpGroup, EncryptionContext, Manifest, Value) {
    let g = ModpGroup::eg_4096();
    let context = vector("context.json");
    let manifest = Manifest::from_json(&vector("manifest.json").to_string()).unwrap();
    let k = g.element(&hex(&context["elgamal_public_key"])).unwrap();
    let ctx = EncryptionContext::new(
        k,
        hex(&context["crypto_extended_base_hash"]),
        hex(&context["manifest_hash"]),
    )
    .unwrap();
    (g, ctx, manifest, vector("ciphertext_ballot.json"))
}

/// Recovers the plaintext from the private ballot: m = 0 exactly when data = K^r.
fn plaintext_of(g: &ModpGroup, ctx: &EncryptionContext, ballot: &Value) -> PlaintextBallot {
    let mut contests = Vec::new();
    for c in ballot["contests"].as_array().unwrap() {
        let mut selections = Vec::new();
        for s in c["ballot_selections"].as_array().unwrap() {
            if s["is_placeholder_selection"].as_bool().unwrap() {
                continue;
            }
            let r = g.scalar(&hex(&s["nonce"])).unwrap();
            let data = g.element(&hex(&s["ciphertext"]["data"])).unwrap();
            let vote = i64::from(data != ctx.public_key.pow(g, &r));
            selections.push(serde_json::json!({"object_id": s["object_id"], "vote": vote}));
        }
        contests.push(
            serde_json::json!({"object_id": c["object_id"], "ballot_selections": selections}),
        );
    }
    let json = serde_json::json!({"object_id": ballot["object_id"], "style_id": ballot["style_id"], "contests": contests});
    PlaintextBallot::from_json(&json.to_string()).unwrap()
}

#[test]
fn reproduces_the_reference_ballot_byte_for_byte() {
    let (g, ctx, manifest, reference) = setup();
    let plain = plaintext_of(&g, &ctx, &reference);
    let master = g.scalar(&hex(&reference["nonce"])).unwrap();
    let ours = encrypt_ballot(
        &ctx,
        &manifest,
        &plain,
        &master,
        &hex(&reference["code_seed"]),
        reference["timestamp"].as_i64().unwrap(),
    )
    .unwrap();
    assert_eq!(
        to_hex(&ours.crypto_hash),
        reference["crypto_hash"].as_str().unwrap()
    );
    assert_eq!(to_hex(&ours.code), reference["code"].as_str().unwrap());
    for (c, rc) in ours
        .contests
        .iter()
        .zip(reference["contests"].as_array().unwrap())
    {
        assert_eq!(to_hex(&c.crypto_hash), rc["crypto_hash"].as_str().unwrap());
        assert_eq!(
            to_hex(c.nonce.as_ref().unwrap().value()),
            rc["nonce"].as_str().unwrap()
        );
        assert_eq!(
            to_hex(c.accumulation.pad.value()),
            rc["ciphertext_accumulation"]["pad"].as_str().unwrap()
        );
        assert_eq!(
            to_hex(c.proof.pad.value()),
            rc["proof"]["pad"].as_str().unwrap()
        );
        assert_eq!(
            to_hex(c.proof.data.value()),
            rc["proof"]["data"].as_str().unwrap()
        );
        assert_eq!(
            to_hex(c.proof.response.value()),
            rc["proof"]["response"].as_str().unwrap()
        );
        for (s, rs) in c
            .selections
            .iter()
            .zip(rc["ballot_selections"].as_array().unwrap())
        {
            assert_eq!(s.object_id, rs["object_id"].as_str().unwrap());
            assert_eq!(
                s.is_placeholder,
                rs["is_placeholder_selection"].as_bool().unwrap()
            );
            assert_eq!(
                to_hex(s.nonce.as_ref().unwrap().value()),
                rs["nonce"].as_str().unwrap()
            );
            assert_eq!(
                to_hex(s.ciphertext.pad.value()),
                rs["ciphertext"]["pad"].as_str().unwrap()
            );
            assert_eq!(
                to_hex(s.ciphertext.data.value()),
                rs["ciphertext"]["data"].as_str().unwrap()
            );
            assert_eq!(to_hex(&s.crypto_hash), rs["crypto_hash"].as_str().unwrap());
            let p = &rs["proof"];
            assert_eq!(
                to_hex(s.proof.zero_pad.value()),
                p["proof_zero_pad"].as_str().unwrap()
            );
            assert_eq!(
                to_hex(s.proof.one_data.value()),
                p["proof_one_data"].as_str().unwrap()
            );
            assert_eq!(
                to_hex(s.proof.zero_challenge.value()),
                p["proof_zero_challenge"].as_str().unwrap()
            );
            assert_eq!(
                to_hex(s.proof.one_response.value()),
                p["proof_one_response"].as_str().unwrap()
            );
            assert_eq!(
                to_hex(s.proof.challenge.value()),
                p["challenge"].as_str().unwrap()
            );
        }
    }
}

#[test]
fn refuses_bad_plaintexts() {
    let (g, ctx, manifest, _) = setup();
    let master = g.scalar_from_u64(42);
    let seed = votum_arith::Integer::from(1);
    let enc = |json: Value| {
        encrypt_ballot(
            &ctx,
            &manifest,
            &PlaintextBallot::from_json(&json.to_string()).unwrap(),
            &master,
            &seed,
            0,
        )
    };
    let sel = |id: &str, vote: i64| serde_json::json!({"object_id": id, "vote": vote});
    let ballot = |style: &str, contests: Value| serde_json::json!({"object_id": "b", "style_id": style, "contests": contests});
    let mayor =
        |sels: Vec<Value>| serde_json::json!([{"object_id": "mayor", "ballot_selections": sels}]);
    assert!(enc(ballot("style-1", mayor(vec![sel("mayor-alice", 1)]))).is_ok());
    assert!(enc(ballot("style-1", serde_json::json!([]))).is_ok()); // blank ballot: all zeros
    assert_eq!(
        enc(ballot("style-9", mayor(vec![]))).unwrap_err(),
        EncryptError::UnknownStyle("style-9".into())
    );
    assert!(matches!(
        enc(ballot("style-1", mayor(vec![sel("mayor-zed", 1)]))),
        Err(EncryptError::UnknownSelection { .. })
    ));
    assert!(matches!(
        enc(ballot("style-1", mayor(vec![sel("mayor-alice", 2)]))),
        Err(EncryptError::NotABit(_))
    ));
    assert!(matches!(
        enc(ballot(
            "style-1",
            mayor(vec![sel("mayor-alice", 1), sel("mayor-bob", 1)])
        )),
        Err(EncryptError::Overvote {
            votes: 2,
            allowed: 1,
            ..
        })
    ));
    let twice = serde_json::json!([{"object_id": "mayor", "ballot_selections": []}, {"object_id": "mayor", "ballot_selections": []}]);
    assert!(matches!(
        enc(ballot("style-1", twice)),
        Err(EncryptError::DuplicateContest(_))
    ));
    let other = serde_json::json!([{"object_id": "senate", "ballot_selections": []}]);
    assert!(matches!(
        enc(ballot("style-1", other)),
        Err(EncryptError::ContestNotOnStyle(..))
    ));
    assert!(matches!(
        PlaintextBallot::from_json("{"),
        Err(EncryptError::Json(_))
    ));
}

#[test]
fn writes_the_reference_json_layout() {
    let (g, ctx, manifest, reference) = setup();
    let plain = plaintext_of(&g, &ctx, &reference);
    let master = g.scalar(&hex(&reference["nonce"])).unwrap();
    let ours = encrypt_ballot(
        &ctx,
        &manifest,
        &plain,
        &master,
        &hex(&reference["code_seed"]),
        reference["timestamp"].as_i64().unwrap(),
    )
    .unwrap();
    let mut json = ours.to_eg14_json(votum_eg::eg14::BallotForm::Private);
    let mut expected = reference.clone();
    // extended_data (hashed contest data) is not produced yet and is outside every hash
    for c in expected["contests"].as_array_mut().unwrap() {
        c["extended_data"] = Value::Null;
    }
    for c in json["contests"].as_array_mut().unwrap() {
        c["extended_data"] = Value::Null;
    }
    assert_eq!(json, expected);
    let submitted = ours.to_eg14_json(votum_eg::eg14::BallotForm::Submitted { state: 1 });
    let mut reference_submitted = vector("submitted_ballot.json");
    for c in reference_submitted["contests"].as_array_mut().unwrap() {
        c["extended_data"] = Value::Null;
    }
    assert_eq!(submitted, reference_submitted);
}

/// A batch is the same as encrypting one ballot after another on the device: identical
/// ballots and codes, each code seeding the next; a refused ballot takes no place in the chain.
#[test]
fn a_batch_chains_like_one_ballot_at_a_time() {
    use votum_eg::eg14::BallotForm;
    use votum_eg::encrypt::{encrypt_many, BallotRequest};
    let (g, ctx, manifest, reference) = setup();
    let plain = plaintext_of(&g, &ctx, &reference);
    let text: Value = serde_json::from_str(&plaintext_json(&reference, &g, &ctx)).unwrap();
    let ballots: Vec<PlaintextBallot> = (0..4)
        .map(|i| {
            let mut t = text.clone();
            t["object_id"] = Value::from(format!("batch-{i}"));
            if i == 2 {
                t["style_id"] = Value::from("no-such-style");
            }
            PlaintextBallot::from_json(&t.to_string()).unwrap()
        })
        .collect();
    let nonces: Vec<_> = (1..=4u64).map(|i| g.scalar_from_u64(1000 + i)).collect();
    let requests: Vec<BallotRequest<'_>> = ballots
        .iter()
        .zip(&nonces)
        .enumerate()
        .map(|(i, (ballot, master_nonce))| BallotRequest {
            ballot,
            master_nonce,
            timestamp: 1_700_000_000 + i as i64,
        })
        .collect();
    let seed = hex(&reference["code_seed"]);
    let (batch, last) = encrypt_many(&ctx, &manifest, &requests, &seed);
    assert_eq!(batch.len(), 4);
    assert!(matches!(batch[2], Err(EncryptError::UnknownStyle(_))));
    let mut chain = seed.clone();
    for (i, outcome) in batch.iter().enumerate() {
        if i == 2 {
            continue;
        }
        let one = encrypt_ballot(
            &ctx,
            &manifest,
            &ballots[i],
            &nonces[i],
            &chain,
            1_700_000_000 + i as i64,
        )
        .unwrap();
        let got = outcome.as_ref().unwrap();
        assert_eq!(
            got.to_eg14_json(BallotForm::Private),
            one.to_eg14_json(BallotForm::Private)
        );
        assert_eq!(got.code_seed, chain);
        chain = one.code;
    }
    assert_eq!(last, chain);
    // the first ballot of the reference vector, in a batch of one, is the reference ballot
    let master = g.scalar(&hex(&reference["nonce"])).unwrap();
    let (one, code) = encrypt_many(
        &ctx,
        &manifest,
        &[BallotRequest {
            ballot: &plain,
            master_nonce: &master,
            timestamp: reference["timestamp"].as_i64().unwrap(),
        }],
        &seed,
    );
    assert_eq!(to_hex(&code), reference["code"].as_str().unwrap());
    assert_eq!(
        to_hex(&one[0].as_ref().unwrap().crypto_hash),
        reference["crypto_hash"].as_str().unwrap()
    );
}

fn plaintext_json(reference: &Value, g: &ModpGroup, ctx: &EncryptionContext) -> String {
    let plain = plaintext_of(g, ctx, reference);
    let contests: Vec<Value> = plain
        .contests
        .iter()
        .map(|c| {
            let sels: Vec<Value> = c
                .ballot_selections
                .iter()
                .map(|s| serde_json::json!({"object_id": s.object_id, "vote": s.vote}))
                .collect();
            serde_json::json!({"object_id": c.object_id, "ballot_selections": sels})
        })
        .collect();
    serde_json::json!({"object_id": plain.object_id, "style_id": plain.style_id, "contests": contests})
        .to_string()
}
