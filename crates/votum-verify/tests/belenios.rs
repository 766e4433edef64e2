#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Belenios archives (spec/94, checks V-BEL-01..10): the three stored elections pass with the counts their
//! ballots give, and each change a liar could make (a server that rewrites the archive and remakes every
//! hash, a voting client that signs a bad ballot) fails under its own check.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use base64ct::Encoding;
use hmac::{Hmac, Mac};
use serde_json::Value;
use sha2::{Digest, Sha256};
use votum_verify::{verify_record, Options, Report, Status};

fn vectors() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../vectors/belenios")
}

/// A stored election: its archive and its voters.json.
fn stored(name: &str) -> (PathBuf, Value) {
    let dir = vectors().join(name);
    let archive = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "bel"))
        .unwrap();
    let voters = serde_json::from_slice(&std::fs::read(dir.join("voters.json")).unwrap()).unwrap();
    (archive, voters)
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

fn verify(path: &Path) -> (Report, votum_verify::Intermediates) {
    verify_record(path, Options::default())
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// (name, content, the header's mtime field) of each tar entry.
fn entries(bytes: &[u8]) -> Vec<(String, Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    let mut at = 0;
    while at + 512 <= bytes.len() && bytes[at..at + 512].iter().any(|b| *b != 0) {
        let h = &bytes[at..at + 512];
        let name_end = h[..100].iter().position(|b| *b == 0).unwrap();
        let name = String::from_utf8(h[..name_end].to_vec()).unwrap();
        let size_text = std::str::from_utf8(&h[124..135]).unwrap();
        let size = usize::from_str_radix(size_text, 8).unwrap();
        let data = bytes[at + 512..at + 512 + size].to_vec();
        out.push((name, data, h[136..147].to_vec()));
        at += 512 + size.div_ceil(512) * 512;
    }
    out
}

/// A tar archive as Belenios writes it.
fn archive(entries: &[(String, Vec<u8>, Vec<u8>)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (name, data, mtime) in entries {
        let mut h = vec![0u8; 512];
        h[..name.len()].copy_from_slice(name.as_bytes());
        h[100..107].copy_from_slice(b"0000644");
        h[108..115].copy_from_slice(b"0000000");
        h[116..123].copy_from_slice(b"0000000");
        h[124..135].copy_from_slice(format!("{:011o}", data.len()).as_bytes());
        h[136..147].copy_from_slice(mtime);
        h[148..156].copy_from_slice(b"        ");
        h[156] = b'0';
        let sum: u32 = h.iter().map(|b| u32::from(*b)).sum();
        h[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
        out.extend_from_slice(&h);
        out.extend_from_slice(data);
        out.resize(out.len().div_ceil(512) * 512, 0);
    }
    out
}

/// What each data entry is, by hash (as tests/belenios_tool.py's `roles`).
fn roles(entries: &[(String, Vec<u8>, Vec<u8>)]) -> HashMap<String, &'static str> {
    let mut role = HashMap::new();
    for (name, data, _) in entries {
        if !name.ends_with(".event.json") {
            continue;
        }
        let e: Value = serde_json::from_slice(data).unwrap();
        let kind = match e["type"].as_str().unwrap() {
            "Setup" => "setup",
            "Ballot" => "ballot",
            "EncryptedTally" => "sized_tally",
            "PartialDecryption" => "owned_partial",
            "Shuffle" => "owned_shuffle",
            "Result" => "result",
            _ => continue,
        };
        role.insert(e["payload"].as_str().unwrap().to_string(), kind);
    }
    for (name, data, _) in entries {
        let h = name.split('.').next().unwrap();
        match role.get(h).copied() {
            Some("setup") => {
                let s: Value = serde_json::from_slice(data).unwrap();
                for (k, r) in [
                    ("election", "election"),
                    ("trustees", "trustees"),
                    ("credentials", "credentials"),
                ] {
                    role.insert(s[k].as_str().unwrap().to_string(), r);
                }
            }
            Some("sized_tally") => {
                let s: Value = serde_json::from_slice(data).unwrap();
                role.insert(s["encrypted_tally"].as_str().unwrap().to_string(), "tally");
            }
            Some("owned_partial") => {
                let s: Value = serde_json::from_slice(data).unwrap();
                role.insert(s["payload"].as_str().unwrap().to_string(), "partial");
            }
            Some("owned_shuffle") => {
                let s: Value = serde_json::from_slice(data).unwrap();
                role.insert(s["payload"].as_str().unwrap().to_string(), "shuffle");
            }
            _ => {}
        }
    }
    role
}

/// A copy of `src` in a temporary directory whose `nth` entry of `role` is `change`d; with `rehash`,
/// every name and hash that depends on it is remade, as a server that controls the archive can.
fn tampered(
    src: &Path,
    role: &str,
    nth: usize,
    rehash: bool,
    change: impl Fn(Vec<u8>) -> Vec<u8>,
) -> (tempfile::TempDir, PathBuf) {
    let mut list = entries(&std::fs::read(src).unwrap());
    let role_of = roles(&list);
    let mut renamed: Vec<(String, String)> = Vec::new();
    let mut seen = 0;
    for (name, data, _) in list.iter_mut().skip(1) {
        let (old, kind) = name
            .split_once('.')
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .unwrap();
        let mut text = data.clone();
        for (a, b) in &renamed {
            text = String::from_utf8(text).unwrap().replace(a, b).into_bytes();
        }
        if role_of.get(&old).copied() == Some(role) {
            if seen == nth {
                text = change(text);
            }
            seen += 1;
        }
        let new = if rehash {
            hex(&Sha256::digest(&text))
        } else {
            old.clone()
        };
        if new != old {
            renamed.push((old, new.clone()));
        }
        *name = format!("{new}.{kind}");
        *data = text;
    }
    assert!(seen > nth, "no {role} number {nth}");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(src.file_name().unwrap());
    std::fs::write(&path, archive(&list)).unwrap();
    (dir, path)
}

/// `text` with its first `from` replaced by `to`.
fn replace(text: Vec<u8>, from: &str, to: &str) -> Vec<u8> {
    let s = String::from_utf8(text).unwrap();
    assert!(s.contains(from), "{from} not found");
    s.replacen(from, to, 1).into_bytes()
}

/// `digits` with its last digit changed.
fn bump(digits: &str) -> String {
    let last = digits.as_bytes()[digits.len() - 1] - b'0';
    format!("{}{}", &digits[..digits.len() - 1], (last + 1) % 10)
}

/// The first value of field `name` in a JSON text (a quoted number).
fn first_value(text: &[u8], name: &str) -> String {
    let s = std::str::from_utf8(text).unwrap();
    let key = format!("\"{name}\":\"");
    let from = s.find(&key).unwrap() + key.len();
    s[from..from + s[from..].find('"').unwrap()].to_string()
}

fn group(
    name: &str,
) -> (
    votum_arith::Integer,
    votum_arith::Integer,
    votum_arith::Integer,
) {
    let p2048 = votum_arith::Integer::from_str_radix(
        "FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A08798E3404DDEF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7EDEE386BFB5A899FA5AE9F24117C4B1FE649286651ECE45B3DC2007CB8A163BF0598DA48361C55D39A69163FA8FD24CF5F83655D23DCA3AD961C62F356208552BB9ED529077096966D670C354E4ABC9804F1746C08CA18217C32905E462E36CE3BE39E772C180E86039B2783A2EC07A28FB5C55DF06F4C52C9DE2BCBF6955817183995497CEA956AE515D2261898FA051015728E5A8AACAA68FFFFFFFFFFFFFFFF",
        16,
    )
    .unwrap();
    match name {
        "RFC-3526-2048" => {
            let q = votum_arith::Integer::from(&p2048 - 1u32) >> 1u32;
            (p2048, q, votum_arith::Integer::from(2))
        }
        _ => panic!(
            "the stored BELENIOS-2048 election is re-signed from its vector's voters.json only"
        ),
    }
}

/// A ballot's text signed again with `credential`: what a cheating voting client holding it can do
/// (Belenios spec 4.8, 4.14: the secret from PBKDF2-HMAC-SHA256 with the uuid as salt).
fn resign(ballot: Vec<u8>, credential: &str, uuid: &str, group_name: &str) -> Vec<u8> {
    let (p, q, g) = group(group_name);
    let text = String::from_utf8(ballot).unwrap();
    let body = format!("{}}}", &text[..text.find(",\"signature\":").unwrap()]);
    let digest = base64ct::Base64Unpadded::encode_string(&Sha256::digest(body.as_bytes()));
    // PBKDF2, one block
    let mut mac = Hmac::<Sha256>::new_from_slice(credential.as_bytes()).unwrap();
    mac.update(uuid.as_bytes());
    mac.update(&1u32.to_be_bytes());
    let mut u = mac.finalize().into_bytes().to_vec();
    let mut t = u.clone();
    for _ in 1..1000 {
        let mut mac = Hmac::<Sha256>::new_from_slice(credential.as_bytes()).unwrap();
        mac.update(&u);
        u = mac.finalize().into_bytes().to_vec();
        t.iter_mut().zip(&u).for_each(|(a, b)| *a ^= b);
    }
    let s = votum_arith::Integer::from_digits(&t, votum_arith::Order::Msf) % &q;
    let w = votum_arith::Integer::from(123_456_789_u64);
    let a = g
        .pow_mod_ref(&w, &p)
        .map(votum_arith::Integer::from)
        .unwrap();
    let hash = Sha256::digest(format!("sig|{digest}|{a}").as_bytes());
    let c = votum_arith::Integer::from_digits(&hash, votum_arith::Order::Msf) % &q;
    let mut r = (w - s * &c) % &q;
    if r < 0 {
        r += &q;
    }
    format!(
        "{},\"signature\":{{\"hash\":\"{digest}\",\"proof\":{{\"challenge\":\"{c}\",\"response\":\"{r}\"}}}}}}",
        &body[..body.len() - 1]
    )
    .into_bytes()
}

#[test]
fn the_stored_elections_pass_with_their_counts() {
    for name in ["threshold-2048", "single-3526"] {
        let (archive, voters) = stored(name);
        let (report, values) = verify(&archive);
        assert!(report.passed(), "{name}: {:?}", failing(&report));
        assert_eq!(report.ballots, 5);
        assert_eq!(
            values.values["counted"], 4,
            "{name}: a revote replaces a ballot"
        );
        let counts: Vec<Vec<String>> = voters["counts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|q| {
                q.as_array()
                    .unwrap()
                    .iter()
                    .map(|c| c.to_string())
                    .collect()
            })
            .collect();
        assert_eq!(values.values["result"], serde_json::json!(counts), "{name}");
        assert_eq!(values.values["uuid"], voters["uuid"]);
    }
    // the mixnet election: Q1's counts, and Q2's rankings as decrypted after four shuffles
    let (archive, voters) = stored("mixnet-3526");
    let (report, values) = verify(&archive);
    assert!(report.passed(), "{:?}", failing(&report));
    let bel10 = report.checks.iter().find(|c| c.id == "V-BEL-10").unwrap();
    assert_eq!(bel10.checked, 4);
    assert!(bel10.findings.is_empty(), "{:?}", bel10.findings);
    let result = values.values["result"].as_array().unwrap();
    let counts: Vec<String> = voters["counts"][0]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.to_string())
        .collect();
    assert_eq!(result[0], serde_json::json!(counts));
    let mut rankings = result[1].as_array().unwrap().clone();
    rankings.sort_by_key(|r| r.to_string());
    assert_eq!(Value::Array(rankings), voters["rankings"]);
}

/// A shuffle's JSON with `change` applied.
fn in_shuffle(change: impl Fn(&mut Value)) -> impl Fn(Vec<u8>) -> Vec<u8> {
    move |t| {
        let mut v: Value = serde_json::from_slice(&t).unwrap();
        change(&mut v);
        serde_json::to_vec(&v).unwrap()
    }
}

#[test]
fn a_bad_shuffle_is_v_bel_10() {
    let (src, _) = stored("mixnet-3526");
    let finding = |report: &Report| {
        let c = report.checks.iter().find(|c| c.id == "V-BEL-10").unwrap();
        format!("{}: {}", c.findings[0].object, c.findings[0].reason)
    };
    // two output ciphertexts of the first shuffle swapped: its proof fails (and the second shuffle's,
    // whose input it changes)
    let (_d, path) = tampered(
        &src,
        "shuffle",
        0,
        true,
        in_shuffle(|v| v["ciphertexts"][0].as_array_mut().unwrap().swap(0, 2)),
    );
    let (report, _) = verify(&path);
    assert_eq!(failing(&report), ["V-BEL-10"]);
    assert!(
        finding(&report).starts_with("shuffle 1 (trustee 1)"),
        "{}",
        finding(&report)
    );
    // the third shuffle's response s₁ changed, its lists kept
    let (_d, path) = tampered(
        &src,
        "shuffle",
        2,
        true,
        in_shuffle(|v| {
            let s1 = v["proofs"][0][1][0].as_str().unwrap().to_string();
            v["proofs"][0][1][0] = Value::String(bump(&s1));
        }),
    );
    let (report, _) = verify(&path);
    assert_eq!(failing(&report), ["V-BEL-10"]);
    assert!(
        finding(&report).starts_with("shuffle 3"),
        "{}",
        finding(&report)
    );
    // the last response ŝ_N changed: only the last of the N chained equations sees it (the challenge
    // does not hash the responses)
    let (_d, path) = tampered(
        &src,
        "shuffle",
        3,
        true,
        in_shuffle(|v| {
            let s_hat = v["proofs"][0][1][4].as_array_mut().unwrap();
            let last = s_hat.len() - 1;
            let x = s_hat[last].as_str().unwrap().to_string();
            s_hat[last] = Value::String(bump(&x));
        }),
    );
    let (report, _) = verify(&path);
    assert_eq!(failing(&report), ["V-BEL-10"]);
    assert!(finding(&report).contains("t̂4"), "{}", finding(&report));
    // the second shuffle posted as trustee 1's, who already shuffled
    let (_d, path) = tampered(&src, "owned_shuffle", 1, true, |t| {
        replace(t, "\"owner\":2", "\"owner\":1")
    });
    let (report, _) = verify(&path);
    assert_eq!(failing(&report), ["V-BEL-10"]);
    assert!(
        finding(&report).contains("already shuffled"),
        "{}",
        finding(&report)
    );
    // a shuffle by someone who is not a trustee
    let (_d, path) = tampered(&src, "owned_shuffle", 3, true, |t| {
        replace(t, "\"owner\":4", "\"owner\":5")
    });
    assert_eq!(failing(&verify(&path).0), ["V-BEL-10"]);
}

#[test]
fn a_broken_archive_is_v_bel_01() {
    let (src, _) = stored("threshold-2048");
    // a byte of a ballot changed, its name kept
    let (_d, path) = tampered(&src, "ballot", 0, false, |t| {
        replace(t, "\"alpha\":\"1", "\"alpha\":\"2")
    });
    assert_eq!(failing(&verify(&path).0), ["V-BEL-01"]);
    // the archive cut inside an entry
    let bytes = std::fs::read(&src).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cut = dir.path().join("cut.bel");
    std::fs::write(&cut, &bytes[..bytes.len() - 700]).unwrap();
    let (report, _) = verify(&cut);
    assert_eq!(report.checks[0].status, Status::Error);
    assert_eq!(report.checks[0].id, "V-BEL-01");
    // an event that does not name the one before it
    let mut list = entries(&bytes);
    let last = list.len() - 1;
    let event = String::from_utf8(list[last].1.clone()).unwrap();
    let wrong = {
        let at = event.find("\"parent\":\"").unwrap() + 10;
        format!("{}{}{}", &event[..at], "0".repeat(64), &event[at + 64..])
    };
    list[last].0 = format!("{}.event.json", hex(&Sha256::digest(wrong.as_bytes())));
    list[last].1 = wrong.into_bytes();
    let forked = dir.path().join("forked.bel");
    std::fs::write(&forked, archive(&list)).unwrap();
    let (report, _) = verify(&forked);
    assert_eq!(failing(&report), ["V-BEL-01"]);
    assert!(
        report.checks[0].findings[0]
            .reason
            .contains("does not follow"),
        "{:?}",
        report.checks[0]
    );
}

#[test]
fn an_election_that_does_not_read_is_v_bel_02() {
    let (src, _) = stored("threshold-2048");
    let (_d, path) = tampered(&src, "election", 0, true, |t| {
        replace(t, "\"group\":\"BELENIOS-2048\"", "\"group\":\"P-256\"")
    });
    let (report, _) = verify(&path);
    assert_eq!(failing(&report)[0], "V-BEL-02");
    assert_eq!(report.checks[1].status, Status::Error);
    assert!(report.checks[1].findings[0].reason.contains("P-256"));
}

#[test]
fn a_bad_trustee_key_or_proof_is_v_bel_03() {
    let (src, _) = stored("threshold-2048");
    // the single trustee's proof of knowledge
    let (_d, path) = tampered(&src, "trustees", 0, true, |t| {
        let r = first_value(&t, "response");
        replace(
            t,
            &format!("\"response\":\"{r}\""),
            &format!("\"response\":\"{}\"", bump(&r)),
        )
    });
    assert_eq!(failing(&verify(&path).0), ["V-BEL-03"]);
    // a threshold trustee's certificate signature (the Pedersen group follows the single trustee)
    let (_d, path) = tampered(&src, "trustees", 0, true, |t| {
        let s = String::from_utf8(t).unwrap();
        let at = s.find("\"Pedersen\"").unwrap();
        let tail = &s[at..];
        let r = first_value(tail.as_bytes(), "response");
        let changed = tail.replacen(
            &format!("\"response\":\"{r}\""),
            &format!("\"response\":\"{}\"", bump(&r)),
            1,
        );
        format!("{}{changed}", &s[..at]).into_bytes()
    });
    let (report, _) = verify(&path);
    assert_eq!(failing(&report), ["V-BEL-03"]);
    assert!(
        report.checks[2].findings[0].reason.contains("signature"),
        "{:?}",
        report.checks[2]
    );
}

#[test]
fn a_bad_or_repeated_credential_is_v_bel_04() {
    let (src, _) = stored("threshold-2048");
    let (_d, path) = tampered(&src, "credentials", 0, true, |t| {
        let s = String::from_utf8(t).unwrap();
        let first = s[1..s.find("\",").unwrap() + 1].to_string();
        format!("[{first},{}", &s[1..]).into_bytes()
    });
    let (report, _) = verify(&path);
    assert_eq!(failing(&report)[0], "V-BEL-04");
    assert!(report.checks[3].findings[0].reason.contains("twice"));
}

#[test]
fn a_forged_ballot_is_v_bel_05() {
    let (src, _) = stored("threshold-2048");
    // a ciphertext changed after signing, every hash of the archive remade
    let (_d, path) = tampered(&src, "ballot", 1, true, |t| {
        let a = first_value(&t, "alpha");
        replace(t, &a, &bump(&a))
    });
    let (report, _) = verify(&path);
    assert_eq!(failing(&report)[0], "V-BEL-05");
    assert!(report.checks[4].findings[0].reason.contains("signature"));
    // a ballot not in Belenios' canonical form (a space), refused as belenios-tool refuses it
    let (_d, path) = tampered(&src, "ballot", 2, true, |t| {
        replace(t, "\"answers\":", "\"answers\": ")
    });
    let (report, _) = verify(&path);
    assert_eq!(failing(&report)[0], "V-BEL-05");
    assert!(report.checks[4].findings[0].reason.contains("canonical"));
}

#[test]
fn a_ballot_with_a_bad_proof_is_v_bel_06() {
    let (src, voters) = stored("single-3526");
    let credential = voters["credentials"][2].as_str().unwrap().to_string();
    let uuid = voters["uuid"].as_str().unwrap().to_string();
    // the third ballot (voter 2's) with a proof's response changed, signed again by its voter
    let (_d, path) = tampered(&src, "ballot", 2, true, |t| {
        let r = first_value(&t, "response");
        let changed = replace(
            t,
            &format!("\"response\":\"{r}\""),
            &format!("\"response\":\"{}\"", bump(&r)),
        );
        resign(changed, &credential, &uuid, "RFC-3526-2048")
    });
    let (report, _) = verify(&path);
    assert_eq!(failing(&report), ["V-BEL-06"]);
    // the re-signing itself is right: the same ballot re-signed unchanged passes
    let (_d, path) = tampered(&src, "ballot", 2, true, |t| {
        resign(t, &credential, &uuid, "RFC-3526-2048")
    });
    assert!(verify(&path).0.passed());
    // a mixnet answer whose proof of knowledge is changed, signed again by its voter
    let (src, voters) = stored("mixnet-3526");
    let credential = voters["credentials"][1].as_str().unwrap().to_string();
    let uuid = voters["uuid"].as_str().unwrap().to_string();
    let (_d, path) = tampered(&src, "ballot", 1, true, |t| {
        let text = String::from_utf8(t.clone()).unwrap();
        let at = text.find("\"proof\":{\"challenge\":\"").unwrap();
        let r = first_value(&t[at..], "response");
        let changed = replace(
            t,
            &format!("\"response\":\"{r}\"}}}}"),
            &format!("\"response\":\"{}\"}}}}", bump(&r)),
        );
        resign(changed, &credential, &uuid, "RFC-3526-2048")
    });
    let (report, _) = verify(&path);
    assert_eq!(failing(&report)[0], "V-BEL-06");
    let bel06 = report.checks.iter().find(|c| c.id == "V-BEL-06").unwrap();
    assert!(
        bel06.findings[0].reason.contains("question 2"),
        "{:?}",
        bel06.findings
    );
}

#[test]
fn a_tally_that_is_not_the_ballots_is_v_bel_07() {
    let (src, _) = stored("threshold-2048");
    // two answers' encrypted counts swapped (belenios-tool 2.0 never reads the published tally)
    let (_d, path) = tampered(&src, "tally", 0, true, |t| {
        let mut v: Value = serde_json::from_slice(&t).unwrap();
        v[1].as_array_mut().unwrap().swap(0, 1);
        serde_json::to_vec(&v).unwrap()
    });
    let (report, _) = verify(&path);
    assert_eq!(failing(&report), ["V-BEL-07"]);
    // num_tallied that is not the counted ballots' number
    let (_d, path) = tampered(&src, "sized_tally", 0, true, |t| {
        replace(t, "\"num_tallied\":4", "\"num_tallied\":5")
    });
    assert_eq!(failing(&verify(&path).0), ["V-BEL-07"]);
    // a mixnet question's list not in the ballots' sorted order (the first shuffle took the true one)
    let (src, _) = stored("mixnet-3526");
    let (_d, path) = tampered(&src, "tally", 0, true, |t| {
        let mut v: Value = serde_json::from_slice(&t).unwrap();
        v[1].as_array_mut().unwrap().swap(0, 1);
        serde_json::to_vec(&v).unwrap()
    });
    assert_eq!(failing(&verify(&path).0), ["V-BEL-07"]);
}

#[test]
fn a_bad_partial_decryption_is_v_bel_08() {
    let (src, _) = stored("threshold-2048");
    // the second partial decryption's first factor replaced by its second
    let (_d, path) = tampered(&src, "partial", 1, true, |t| {
        let mut v: Value = serde_json::from_slice(&t).unwrap();
        let second = v["decryption_factors"][0][1].clone();
        v["decryption_factors"][0][0] = second;
        serde_json::to_vec(&v).unwrap()
    });
    let (report, _) = verify(&path);
    assert_eq!(failing(&report)[0], "V-BEL-08");
    // the result that needed it is then not checked: an Error, not a pass
    assert_eq!(report.checks[8].status, Status::Error);
}

#[test]
fn a_wrong_result_is_v_bel_09() {
    let (src, _) = stored("threshold-2048");
    let (_d, path) = tampered(&src, "result", 0, true, |t| {
        let mut v: Value = serde_json::from_slice(&t).unwrap();
        let n = v["result"][1][2].as_u64().unwrap();
        v["result"][1][2] = serde_json::json!(n + 1);
        serde_json::to_vec(&v).unwrap()
    });
    let (report, _) = verify(&path);
    assert_eq!(failing(&report), ["V-BEL-09"]);
    // a count that is right modulo q only (the same power of g): refused by the bound
    let (_d, path) = tampered(&src, "result", 0, true, |t| {
        let mut v: Value = serde_json::from_slice(&t).unwrap();
        let n = v["result"][1][2].as_u64().unwrap();
        let q = votum_arith::Integer::from_str_radix(
            "78571733251071885079927659812671450121821421258408794611510081919805623223441",
            10,
        )
        .unwrap();
        v["result"][1][2] = serde_json::json!((q + n).to_string());
        serde_json::to_vec(&v).unwrap()
    });
    assert_eq!(failing(&verify(&path).0), ["V-BEL-09"]);
    // a mixnet answer decoded to other integers
    let (src, _) = stored("mixnet-3526");
    let (_d, path) = tampered(&src, "result", 0, true, |t| {
        let mut v: Value = serde_json::from_slice(&t).unwrap();
        v["result"][1][2][0] = serde_json::json!(v["result"][1][2][0].as_u64().unwrap() + 1);
        serde_json::to_vec(&v).unwrap()
    });
    let (report, _) = verify(&path);
    assert_eq!(failing(&report), ["V-BEL-09"]);
    let bel09 = report.checks.iter().find(|c| c.id == "V-BEL-09").unwrap();
    assert!(
        bel09.findings[0].reason.contains("question 2: answer 3"),
        "{:?}",
        bel09.findings
    );
}
