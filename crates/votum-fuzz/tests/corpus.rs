//! Replays every kept fuzz input on stable Rust: the seeds and each regression input
//! (`fuzz/regressions/<target>/`, one per finding, named for it), both committed, and the working
//! corpus that `make fuzz` grew on this machine when there is one (not committed). A target that
//! panics, or breaks one of its properties, fails here.

use std::fs;
use std::path::{Path, PathBuf};

fn inputs(target: &str) -> Vec<PathBuf> {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz");
    let mut out = Vec::new();
    for kind in ["seeds", "corpus", "regressions"] {
        if let Ok(dir) = fs::read_dir(fuzz.join(kind).join(target)) {
            out.extend(dir.flatten().map(|e| e.path()));
        }
    }
    out.sort();
    out
}

#[test]
fn every_target_has_seeds() {
    for target in votum_fuzz::TARGETS {
        let seeds = inputs(target);
        assert!(
            !seeds.is_empty(),
            "{target}: only {} kept inputs",
            seeds.len()
        );
    }
}

macro_rules! replay {
    ($($name:ident),*) => {$(
        #[test]
        fn $name() {
            for path in inputs(stringify!($name)) {
                let data = fs::read(&path).unwrap_or_default();
                let result = std::panic::catch_unwind(|| votum_fuzz::run(stringify!($name), &data));
                assert!(result.is_ok(), "{} fails", path.display());
            }
        }
    )*};
}

replay!(
    group_codec,
    mix_wire,
    mix_record,
    archive,
    eg_json,
    manifest,
    sv_record,
    chv_record,
    node_frame,
    ivxv_record,
    vmn_session,
    eg2_record,
    eg2_party,
    eg21_record,
    eg21_party
);

/// The 2.x seeds reach the checks they are meant for: the stored ballot decodes and fails only the proofs that
/// need the record's own key and H_E (so each of its contests is checked), the manifest reads.
#[test]
fn the_eg2_seeds_reach_their_checks() {
    let seeds = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds/eg2_record");
    let manifest = fs::read(seeds.join("manifest")).unwrap();
    let ballot = fs::read(seeds.join("ballot")).unwrap();
    let found = votum_verify::eg2::check_document(&manifest[1..], ballot[0], &ballot[1..]);
    assert!(found > 1, "the ballot's proofs were checked: {found}");
    assert_eq!(
        votum_verify::eg2::check_document(&manifest[1..], 1, &manifest[1..]),
        0
    );
    assert_eq!(
        votum_verify::eg2::check_document(&manifest[1..], 1, b"{"),
        1
    );
    let tally = fs::read(seeds.join("encrypted_tally")).unwrap();
    assert!(votum_verify::eg2::check_document(&manifest[1..], 2, &tally[1..]) > 40);
}

/// The 2.x party seeds reach their readers: the guardian's record, shares and answers read on P-256, and
/// electionguard-rust's key file has all three of its proofs verify.
#[test]
fn the_eg2_party_seeds_reach_their_readers() {
    let seeds = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds/eg2_party");
    let json = |name: &str| -> serde_json::Value {
        serde_json::from_slice(&fs::read(seeds.join(name)).unwrap()[1..]).unwrap()
    };
    let p = votum_group::P256;
    assert!(votum_eg2::trustee::read_public(&p, &json("public")).is_ok());
    assert!(!votum_eg2::trustee::read_shares(&p, &json("shares"))
        .unwrap()
        .2
        .is_empty());
    assert!(!votum_eg2::trustee::read_answers(&p, &json("answers"))
        .unwrap()
        .1
        .is_empty());
    let key = fs::read(seeds.join("egrs-key")).unwrap();
    assert_eq!(votum_verify::egrs::check_one_key(&key[1..]), 3);
}

/// The 2.1 seeds reach their checks: the stored ballot reads and fails only the proofs that need the record's
/// own key and H_E; the guardians' document reads and passes its checks.
#[test]
fn the_eg21_seeds_reach_their_checks() {
    let seeds = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds/eg21_record");
    let manifest = fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../votum-eg2/src/default_manifest.json"),
    )
    .unwrap();
    let ballot = fs::read(seeds.join("ballot")).unwrap();
    assert!(votum_verify::eg21::check_document(&manifest, ballot[0], &ballot[1..]) > 1);
    let guardians = fs::read(seeds.join("guardians")).unwrap();
    assert_eq!(
        votum_verify::eg21::check_document(&manifest, guardians[0], &guardians[1..]),
        0
    );
    // a cast pre-encrypted ballot: the same proofs fail, and its short codes (the embedded manifest names no Ω)
    let pre = fs::read(seeds.join("pre-ballot")).unwrap();
    assert!(votum_verify::eg21::check_document(&manifest, pre[0], &pre[1..]) > 1);
    for name in ["tally", "opened", "opened-pre"] {
        let doc = fs::read(seeds.join(name)).unwrap();
        assert_eq!(
            votum_verify::eg21::check_document(&manifest, doc[0], &doc[1..]),
            0,
            "{name}"
        );
    }
}

/// The 2.1 party seeds reach their readers (P-256): a key record, a share, an announcement with nonce parts,
/// a reveal and answers, each one of a real run's messages.
#[test]
fn the_eg21_party_seeds_reach_their_readers() {
    use votum_eg2::v21::trustee::{read_announce, read_answers, read_reveal, read_share};
    let seeds = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds/eg21_party");
    let json = |name: &str| -> serde_json::Value {
        serde_json::from_slice(&fs::read(seeds.join(name)).unwrap()[1..]).unwrap()
    };
    let p = votum_group::P256;
    assert!(votum_eg2::v21::record::GuardianKey::read(&p, &json("key")).is_ok());
    assert!(read_share(&p, &json("share")).is_ok());
    let a = read_announce(&p, &json("announce")).unwrap();
    assert!(!a.announce.values.is_empty() && !a.parts.is_empty());
    assert!(!read_reveal(&p, &json("reveal")).unwrap().pairs.is_empty());
    assert!(!read_answers(&p, &json("answers")).unwrap().1.is_empty());
}
