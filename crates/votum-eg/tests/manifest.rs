#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

//! Manifest hashes against electionguard 1.4.0's own output (vectors/eg-1.4), and bad input.

use serde_json::Value;
use votum_eg::manifest::ManifestError;
use votum_eg::Manifest;
use votum_hash::eg::to_hex;

fn vector(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/../../vectors/eg-1.4/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

fn sample() -> Manifest {
    Manifest::from_json(&vector("manifest.json")).unwrap()
}

#[test]
fn hashes_match_the_reference() {
    let m = sample();
    let context: Value = serde_json::from_str(&vector("context.json")).unwrap();
    assert_eq!(
        to_hex(&m.crypto_hash().unwrap()),
        context["manifest_hash"].as_str().unwrap()
    );
    let ballot: Value = serde_json::from_str(&vector("ciphertext_ballot.json")).unwrap();
    assert_eq!(ballot["manifest_hash"], context["manifest_hash"]);
    for contest in ballot["contests"].as_array().unwrap() {
        let desc = m.contest(contest["object_id"].as_str().unwrap()).unwrap();
        assert_eq!(
            to_hex(&desc.crypto_hash()),
            contest["description_hash"].as_str().unwrap()
        );
        for sel in contest["ballot_selections"].as_array().unwrap() {
            if sel["is_placeholder_selection"].as_bool().unwrap() {
                continue;
            }
            let d = desc
                .ballot_selections
                .iter()
                .find(|s| s.object_id == sel["object_id"].as_str().unwrap())
                .unwrap();
            assert_eq!(
                to_hex(&d.crypto_hash()),
                sel["description_hash"].as_str().unwrap()
            );
        }
    }
}

#[test]
fn round_trips_through_json() {
    let m = sample();
    let again = Manifest::from_json(&m.to_json()).unwrap();
    assert_eq!(again, m);
    assert_eq!(again.crypto_hash().unwrap(), m.crypto_hash().unwrap());
}

fn mutate(f: impl Fn(&mut Value)) -> Result<Manifest, ManifestError> {
    let mut v: Value = serde_json::from_str(&vector("manifest.json")).unwrap();
    f(&mut v);
    Manifest::from_json(&v.to_string())
}

#[test]
fn bad_manifests_are_refused_with_a_reason() {
    assert!(matches!(
        Manifest::from_json("{"),
        Err(ManifestError::Json { .. })
    ));
    assert!(matches!(
        Manifest::from_json("[]"),
        Err(ManifestError::Json { .. })
    ));
    assert!(matches!(
        mutate(|v| v["surprise"] = Value::from(1)),
        Err(ManifestError::Json { .. })
    ));
    assert!(matches!(
        mutate(|v| v["type"] = "coronation".into()),
        Err(ManifestError::UnknownEnum { field: "type", .. })
    ));
    assert!(matches!(
        mutate(|v| v["start_date"] = "yesterday".into()),
        Err(ManifestError::BadDate { .. })
    ));
    assert!(matches!(
        mutate(|v| v["contests"][0]["vote_variation"] = "dictatorship".into()),
        Err(ManifestError::UnknownEnum { .. })
    ));
    assert!(matches!(
        mutate(|v| v["contests"][0]["ballot_selections"][1]["object_id"] = "mayor-alice".into()),
        Err(ManifestError::DuplicateId {
            kind: "selection",
            ..
        })
    ));
    // what electionguard 1.4.0 accepts is accepted, with a warning (a write-in's candidate_id)
    let write_in =
        mutate(|v| v["contests"][0]["ballot_selections"][0]["candidate_id"] = "nobody".into())
            .unwrap();
    let warnings = write_in.warnings();
    assert_eq!(warnings.len(), 1);
    assert!(warnings[0].1.contains("\"nobody\""), "{warnings:?}");
    assert!(matches!(
        mutate(|v| v["contests"][0]["electoral_district_id"] = "atlantis".into()),
        Err(ManifestError::UnknownReference {
            kind: "geopolitical unit",
            ..
        })
    ));
    assert!(matches!(
        mutate(|v| v["contests"][0]["votes_allowed"] = 0.into()),
        Err(ManifestError::BadContest { .. })
    ));
    let two_of_one = mutate(|v| v["contests"][0]["votes_allowed"] = 2.into()).unwrap();
    assert!(two_of_one.warnings()[0]
        .1
        .contains("one_of_m contest allows 2 votes"));
    assert!(matches!(
        mutate(|v| v["contests"][0]["votes_allowed"] = 9.into()),
        Err(ManifestError::BadContest { .. })
    ));
    let m: Manifest = Manifest::from_json(&vector("manifest.json")).unwrap();
    assert!(m.warnings().is_empty());
    assert!(matches!(
        mutate(|v| v["contests"] = Value::Array(vec![])),
        Err(ManifestError::Empty("contests"))
    ));
    assert!(matches!(
        mutate(|v| v["ballot_styles"][0]["geopolitical_unit_ids"][0] = "nowhere".into()),
        Err(ManifestError::UnknownReference { .. })
    ));
}

#[test]
fn dates_hash_in_utc() {
    // the same instant written with another offset hashes the same
    let a = sample();
    let b = mutate(|v| v["start_date"] = "2024-11-05T02:00:00-05:00".into()).unwrap();
    assert_eq!(a.crypto_hash().unwrap(), b.crypto_hash().unwrap());
    let c = mutate(|v| v["start_date"] = "2024-11-05T02:00:00+00:00".into()).unwrap();
    assert_ne!(a.crypto_hash().unwrap(), c.crypto_hash().unwrap());
}
