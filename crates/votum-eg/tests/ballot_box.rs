#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use serde_json::Value;
use votum_eg::eg14::BallotForm;
use votum_eg::encrypt::{encrypt_ballot, EncryptionContext, PlaintextBallot};
use votum_eg::{BallotBox, BallotError, BallotState, BallotVerifier, Manifest};
use votum_elgamal::PublicKey;
use votum_group::{Group, ModpGroup};
use votum_hash::eg::{from_hex, to_hex};
use votum_proofs::ProofError;

fn vector(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/../../vectors/eg-1.4/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

fn hex(v: &Value) -> votum_arith::Integer {
    from_hex(v.as_str().unwrap()).unwrap()
}

fn new_box() -> BallotBox {
    let g = ModpGroup::eg_4096();
    let context: Value = serde_json::from_str(&vector("context.json")).unwrap();
    let k = PublicKey::new(&g, g.element(&hex(&context["elgamal_public_key"])).unwrap()).unwrap();
    let manifest = Manifest::from_json(&vector("manifest.json")).unwrap();
    BallotBox::new(
        BallotVerifier::new(manifest, &k, hex(&context["crypto_extended_base_hash"])).unwrap(),
    )
}

fn tamper(f: impl Fn(&mut Value)) -> String {
    let mut v: Value = serde_json::from_str(&vector("submitted_ballot.json")).unwrap();
    f(&mut v);
    v.to_string()
}

fn bump(v: &mut Value) {
    let x = from_hex(v.as_str().unwrap()).unwrap() + 1u32;
    *v = Value::String(to_hex(&x));
}

#[test]
fn accepts_reference_ballots_and_tallies_them() {
    let mut bb = new_box();
    let receipt = bb
        .submit(&vector("submitted_ballot.json"), BallotState::Cast)
        .unwrap();
    let reference: Value = serde_json::from_str(&vector("submitted_ballot.json")).unwrap();
    assert_eq!(to_hex(&receipt.code), reference["code"].as_str().unwrap());
    assert_eq!(bb.counts(), (1, 0));
    let tally = bb.tally();
    let sel = &reference["contests"][0]["ballot_selections"][0];
    let t = &tally[&(
        "mayor".to_owned(),
        sel["object_id"].as_str().unwrap().to_owned(),
    )];
    assert_eq!(
        to_hex(t.pad.value()),
        sel["ciphertext"]["pad"].as_str().unwrap()
    );
    assert_eq!(tally.len(), 4); // placeholders are not tallied
                                // the same ballot id again is refused, and nothing changes
    assert_eq!(
        bb.submit(&vector("submitted_ballot.json"), BallotState::Spoiled)
            .unwrap_err(),
        BallotError::Duplicate("cast-000000".into())
    );
    assert_eq!(bb.counts(), (1, 0));
}

#[test]
fn refuses_tampered_ballots_with_the_specific_error() {
    let mut bb = new_box();
    let err = bb
        .submit(
            &tamper(|v| {
                bump(&mut v["contests"][0]["ballot_selections"][1]["proof"]["proof_one_response"])
            }),
            BallotState::Cast,
        )
        .unwrap_err();
    assert_eq!(
        err,
        BallotError::Proof {
            object: "mayor-bob".into(),
            error: ProofError::Equation {
                proof: "disjunctive",
                equation: "g^v1 = a1·α^c1"
            }
        }
    );
    let err = bb
        .submit(
            &tamper(|v| bump(&mut v["contests"][0]["proof"]["response"])),
            BallotState::Cast,
        )
        .unwrap_err();
    assert!(matches!(
        err,
        BallotError::Proof {
            error: ProofError::Equation {
                proof: "constant",
                ..
            },
            ..
        }
    ));
    let err = bb
        .submit(&tamper(|v| bump(&mut v["crypto_hash"])), BallotState::Cast)
        .unwrap_err();
    assert!(matches!(
        err,
        BallotError::HashMismatch {
            which: votum_eg::BallotHash::BallotCrypto,
            ..
        }
    ));
    let err = bb
        .submit(&tamper(|v| bump(&mut v["code"])), BallotState::Cast)
        .unwrap_err();
    assert!(matches!(
        err,
        BallotError::HashMismatch {
            which: votum_eg::BallotHash::BallotCode,
            ..
        }
    ));
    let err = bb
        .submit(
            &tamper(|v| bump(&mut v["manifest_hash"])),
            BallotState::Cast,
        )
        .unwrap_err();
    assert_eq!(err, BallotError::WrongManifest);
    let err = bb
        .submit(
            &tamper(|v| v["style_id"] = "style-9".into()),
            BallotState::Cast,
        )
        .unwrap_err();
    assert_eq!(err, BallotError::UnknownStyle("style-9".into()));
    let err = bb
        .submit(
            &tamper(|v| {
                v["contests"][0]["ballot_selections"]
                    .as_array_mut()
                    .unwrap()
                    .pop();
            }),
            BallotState::Cast,
        )
        .unwrap_err();
    assert!(matches!(err, BallotError::SelectionMismatch { .. }));
    // swapping two selections' ciphertexts breaks their hashes and proofs
    let err = bb
        .submit(
            &tamper(|v| {
                let a = v["contests"][0]["ballot_selections"][0]["ciphertext"].clone();
                v["contests"][0]["ballot_selections"][0]["ciphertext"] =
                    v["contests"][0]["ballot_selections"][1]["ciphertext"].clone();
                v["contests"][0]["ballot_selections"][1]["ciphertext"] = a;
            }),
            BallotState::Cast,
        )
        .unwrap_err();
    assert!(matches!(
        err,
        BallotError::HashMismatch {
            which: votum_eg::BallotHash::SelectionCrypto,
            ..
        }
    ));
    // an element outside the subgroup (p - 1 has order 2)
    let p = ModpGroup::eg_4096().p().clone();
    let err = bb
        .submit(
            &tamper(|v| {
                v["contests"][0]["ballot_selections"][0]["ciphertext"]["pad"] =
                    Value::String(to_hex(&(p.clone() - 1u32)))
            }),
            BallotState::Cast,
        )
        .unwrap_err();
    assert!(matches!(err, BallotError::BadElement { what: "pad", .. }));
    assert!(matches!(
        bb.submit("{", BallotState::Cast),
        Err(BallotError::Format(_))
    ));
    assert!(matches!(
        bb.submit(
            &tamper(|v| {
                v.as_object_mut().unwrap().remove("contests");
            }),
            BallotState::Cast
        ),
        Err(BallotError::Format(_))
    ));
    // nothing was recorded by any refused ballot
    assert_eq!(bb.counts(), (0, 0));
    bb.submit(&vector("submitted_ballot.json"), BallotState::Cast)
        .unwrap();
}

#[test]
fn accepts_votum_ballots_in_every_form() {
    let g = ModpGroup::eg_4096();
    let context: Value = serde_json::from_str(&vector("context.json")).unwrap();
    let k = g.element(&hex(&context["elgamal_public_key"])).unwrap();
    let manifest = Manifest::from_json(&vector("manifest.json")).unwrap();
    let ctx = EncryptionContext::new(
        k,
        hex(&context["crypto_extended_base_hash"]),
        hex(&context["manifest_hash"]),
    )
    .unwrap();
    let mut bb = new_box();
    let mut seed = votum_arith::Integer::from(7);
    for (i, form) in [
        BallotForm::Private,
        BallotForm::Submitted { state: 1 },
        BallotForm::Submitted { state: 2 },
    ]
    .into_iter()
    .enumerate()
    {
        let json = format!(
            r#"{{"object_id": "v{i}", "style_id": "style-1", "contests": [{{"object_id": "mayor", "ballot_selections": [{{"object_id": "mayor-carol", "vote": 1}}]}}]}}"#
        );
        let plain = PlaintextBallot::from_json(&json).unwrap();
        let b = encrypt_ballot(
            &ctx,
            &manifest,
            &plain,
            &g.scalar_from_u64(1000 + i as u64),
            &seed,
            i as i64,
        )
        .unwrap();
        seed = b.code.clone();
        let state = if i == 2 {
            BallotState::Spoiled
        } else {
            BallotState::Cast
        };
        bb.submit(&b.to_eg14_json(form).to_string(), state).unwrap();
    }
    assert_eq!(bb.counts(), (2, 1));
}

/// The reference ballot under a new id, with its ballot hash and code recomputed: a copy of its
/// ciphertexts that every per-ballot check accepts.
fn replay(object_id: &str) -> String {
    use votum_hash::eg::{hash_elems, EgHashItem};
    let g = ModpGroup::eg_4096();
    let mut v: Value = serde_json::from_str(&vector("submitted_ballot.json")).unwrap();
    let mut contests: Vec<&Value> = v["contests"].as_array().unwrap().iter().collect();
    contests.sort_by_key(|c| c["sequence_order"].as_i64().unwrap());
    let mut items = vec![
        EgHashItem::Str(object_id.into()),
        EgHashItem::Num(hex(&v["manifest_hash"])),
    ];
    items.extend(
        contests
            .iter()
            .map(|c| EgHashItem::Num(hex(&c["crypto_hash"]))),
    );
    let crypto = hash_elems(&items, g.order());
    let code = hash_elems(
        &[
            EgHashItem::Num(hex(&v["code_seed"])),
            EgHashItem::Int(v["timestamp"].as_i64().unwrap()),
            EgHashItem::Num(crypto.clone()),
        ],
        g.order(),
    );
    v["object_id"] = Value::String(object_id.into());
    v["crypto_hash"] = Value::String(to_hex(&crypto));
    v["code"] = Value::String(to_hex(&code));
    v.to_string()
}

#[test]
fn refuses_a_replayed_encryption_under_another_id() {
    let mut bb = new_box();
    // the copy alone is a valid ballot
    assert!(bb.check(&replay("copy-1")).is_ok());
    bb.submit(&vector("submitted_ballot.json"), BallotState::Cast)
        .unwrap();
    assert_eq!(
        bb.submit(&replay("copy-1"), BallotState::Spoiled)
            .unwrap_err(),
        BallotError::Replayed {
            ballot: "copy-1".into(),
            original: "cast-000000".into()
        }
    );
    assert_eq!(bb.counts(), (1, 0));
    // in one batch: the second copy repeats the first
    let mut fresh = new_box();
    let (a, b) = (replay("copy-a"), replay("copy-b"));
    let out = fresh.submit_many(&[(&a, BallotState::Cast), (&b, BallotState::Spoiled)]);
    assert!(out[0].is_ok());
    assert_eq!(
        out[1].clone().unwrap_err(),
        BallotError::Replayed {
            ballot: "copy-b".into(),
            original: "copy-a".into()
        }
    );
    assert_eq!(fresh.counts(), (1, 0));
}
