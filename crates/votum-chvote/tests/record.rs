#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

//! The record of a CHVote election (spec/92.10) and the verifier's V-CHV checks: an honest record
//! passes every check; a record changed in one place fails the check for that place, naming it.

use std::path::{Path, PathBuf};

use votum_chvote::record::{read_all, RecordWriter};
use votum_chvote::sim::{run, Config};
use votum_chvote::{Level, Shape};
use votum_verify::{verify_record, Options, Status};

fn honest(dir: &Path, shape: Shape, voters: usize) -> PathBuf {
    let path = dir.join("election.vchv");
    let report = run(
        &Config {
            level: Level::One,
            shape,
            voters,
            authorities: 3,
            record: Some(path.clone()),
            sheets: None,
        },
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(report.tally.counts, report.expected);
    path
}

fn statuses(path: &Path) -> Vec<(&'static str, Status, Vec<String>)> {
    let (report, _) = verify_record(path, Options::default());
    report
        .checks
        .iter()
        .map(|c| {
            (
                c.id,
                c.status,
                c.findings
                    .iter()
                    .map(|f| format!("{}: {}", f.object, f.reason))
                    .collect(),
            )
        })
        .collect()
}

/// A change to a record's entries.
type Change = Box<dyn FnOnce(&mut Vec<votum_chvote::record::Entry>)>;

/// Rewrites the record with `change` applied to its entries.
fn tamper(path: &Path, out: &Path, change: impl FnOnce(&mut Vec<votum_chvote::record::Entry>)) {
    let (id, mut entries) = read_all(&std::fs::read(path).unwrap()).unwrap();
    change(&mut entries);
    let mut w = RecordWriter::new(Vec::new(), &id).unwrap();
    for e in &entries {
        w.append(&e.kind, &e.name, &e.payload).unwrap();
    }
    std::fs::write(out, w.into_inner().unwrap()).unwrap();
}

fn failing(path: &Path) -> Vec<(&'static str, Vec<String>)> {
    statuses(path)
        .into_iter()
        .filter(|(_, s, _)| *s != Status::Pass)
        .map(|(id, _, f)| (id, f))
        .collect()
}

fn index(entries: &[votum_chvote::record::Entry], kind: &str, name: &str) -> usize {
    entries
        .iter()
        .position(|e| e.kind == kind && e.name == name)
        .unwrap()
}

/// Changes one byte near the end of a payload (always to another value).
fn flip(payload: &mut [u8], from_end: usize) {
    let i = payload.len() - from_end;
    payload[i] ^= 0x01;
}

#[test]
fn an_honest_record_passes_every_check() {
    let dir = tempdir();
    let path = honest(dir.path(), Shape::SimpleSample, 12);
    let all = statuses(&path);
    assert_eq!(all.len(), 11);
    for (id, status, findings) in &all {
        assert_eq!(*status, Status::Pass, "{id}: {findings:?}");
        assert!(id.starts_with("V-CHV-"));
    }
}

/// Issue 43, item 9: each entry's length is bounded by its kind before it is read. A bound whose
/// per-voter part is too small passes a small record (its constant part hides it) and refuses a
/// large one: this election is large enough that every per-voter part must hold on its own.
#[test]
fn a_record_of_some_hundred_voters_fits_the_entry_bounds() {
    for (shape, voters) in [(Shape::Single, 250), (Shape::SimpleSample, 150)] {
        let dir = tempdir();
        let path = honest(dir.path(), shape, voters);
        let (_, entries) = read_all(&std::fs::read(&path).unwrap()).unwrap();
        let (params, set, _) =
            votum_chvote::record::decode_parameters(&entries[0].payload).unwrap();
        let bounds = votum_chvote::record::EntryBounds::new(&params, &set);
        for e in &entries[1..] {
            let votum_hash::board_file::Bound::Max(max) = bounds.of(&e.kind) else {
                panic!("a {} entry bounded otherwise", e.kind);
            };
            assert!(
                e.payload.len() as u64 <= max,
                "{} {}: {} bytes, bound {max}",
                e.kind,
                e.name,
                e.payload.len()
            );
        }
        assert!(statuses(&path).iter().all(|(_, s, _)| *s == Status::Pass));
    }
}

#[test]
fn each_tampering_fails_its_own_check() {
    let dir = tempdir();
    let path = honest(dir.path(), Shape::Single, 6);
    let out = dir.path().join("tampered.vchv");
    let cases: Vec<(&str, &str, Change)> = vec![
        (
            // a key share whose proof of knowledge fails (spec/92.3: a share chosen from the
            // others' would have none)
            "V-CHV-02",
            "authority-1",
            Box::new(|e| {
                let i = index(e, "key-share", "authority-1");
                flip(&mut e[i].payload, 1); // the proof's response
            }),
        ),
        (
            // a confirmed voter's finalizations left out: its ballot still belongs in the input
            "V-CHV-04",
            "voter-4",
            Box::new(|e| {
                let i = index(e, "finalizations", "voter-4");
                e.remove(i);
            }),
        ),
        (
            // a record written before key shares carried their proof
            "V-CHV-02",
            "no proof of knowledge",
            Box::new(|e| {
                let i = index(e, "key-share", "authority-0");
                // pk, commitment, challenge and response are of one width in these groups
                let width = e[i].payload.len() / 4;
                e[i].payload.truncate(width);
            }),
        ),
        (
            "V-CHV-03",
            "voter-2",
            Box::new(|e| {
                let i = index(e, "ballot", "voter-2");
                flip(&mut e[i].payload, 1); // s3
            }),
        ),
        (
            "V-CHV-04",
            "voter-1 authority-2",
            Box::new(|e| {
                let i = index(e, "finalizations", "voter-1");
                let n = e[i].payload.len();
                // the last authority's last revealed exponent
                e[i].payload[n - 1] ^= 0x01;
            }),
        ),
        (
            // an authority finalized voter 2 with another F than its committed points' hash
            "V-CHV-04",
            "finalization share",
            Box::new(|e| {
                let (params, _, _) =
                    votum_chvote::record::decode_parameters(&e[0].payload).unwrap();
                let i = index(e, "finalizations", "voter-2");
                let mut fs =
                    votum_chvote::record::decode_finalizations(&params, &e[i].payload).unwrap();
                fs[1].f[0] ^= 0x01;
                e[i].payload = votum_chvote::record::finalizations_bytes(&params, &fs);
            }),
        ),
        (
            // authority 0 answered voter 5 with an OT message that opens to an uncommitted
            // point: the revealed exponents still give b and d, but c_1 is not the committed
            // point's (finding 9 of issue 45)
            "V-CHV-04",
            "candidate 1",
            Box::new(|e| {
                let (params, _, _) =
                    votum_chvote::record::decode_parameters(&e[0].payload).unwrap();
                let i = index(e, "responses", "voter-5");
                let mut rs =
                    votum_chvote::record::decode_responses(&params, &e[i].payload).unwrap();
                rs[0].c[0][3] ^= 0x01;
                e[i].payload = votum_chvote::record::responses_bytes(&params, &rs);
            }),
        ),
        (
            "V-CHV-05",
            "voter-3",
            Box::new(|e| {
                let i = index(e, "confirmation", "voter-3");
                flip(&mut e[i].payload, 1); // s
            }),
        ),
        (
            "V-CHV-06",
            "input",
            Box::new(|e| {
                let c = index(e, "ballot", "voter-4");
                let f = index(e, "finalizations", "voter-4");
                e.drain(c..=f); // the input list keeps voter 4's encryption
            }),
        ),
        (
            // a byte of authority 2's shuffle proof (its last response): the list is unchanged
            "V-CHV-07",
            "authority-2",
            Box::new(|e| {
                let i = index(e, "shuffle", "authority-2");
                flip(&mut e[i].payload, 1);
            }),
        ),
        (
            "V-CHV-08",
            "authority-1",
            Box::new(|e| {
                let i = index(e, "decryption", "authority-1");
                flip(&mut e[i].payload, 300); // inside a partial decryption
            }),
        ),
        (
            "V-CHV-09",
            "result",
            Box::new(|e| {
                let i = index(e, "result", "result");
                flip(&mut e[i].payload, 9); // the last candidate's count
            }),
        ),
        (
            // issue 45, finding 2: a shuffle posted under authority 1 that its node did not sign
            "V-CHV-11",
            "shuffle-authority-1",
            Box::new(|e| {
                let i = index(e, "signature", "shuffle-authority-1");
                flip(&mut e[i].payload, 5);
            }),
        ),
        (
            // a decryption share whose signature is another authority's
            "V-CHV-11",
            "decryption-authority-0",
            Box::new(|e| {
                let i = index(e, "signature", "decryption-authority-0");
                let j = index(e, "signature", "decryption-authority-2");
                e[i].payload = e[j].payload.clone();
            }),
        ),
        (
            // an authority opens a row of its shuffle although every vote is valid: the row of
            // a valid vote linked to its voter (spec/92.8)
            "V-CHV-10",
            "authority-2",
            Box::new(|e| {
                let mut payload = 1u64.to_be_bytes().to_vec();
                payload.extend([0u8; 16]);
                e.push(votum_chvote::record::Entry {
                    seq: e.len() as u64,
                    kind: "trace".into(),
                    name: "authority-2".into(),
                    payload,
                    hash: [0; 32],
                });
            }),
        ),
        (
            "V-CHV-01",
            "entry",
            Box::new(|e| {
                let i = index(e, "shuffle", "authority-0");
                let j = index(e, "shuffle", "authority-1");
                e.swap(i, j);
            }),
        ),
    ];
    // issue 46: every check of the registry has a tampering here that fails it
    let covered: std::collections::BTreeSet<&str> = cases.iter().map(|c| c.0).collect();
    let all: std::collections::BTreeSet<&str> =
        votum_verify::Check::CHV.iter().map(|c| c.id()).collect();
    assert_eq!(covered, all, "a check without a tampering that fails it");
    for (check, object, change) in cases {
        tamper(&path, &out, change);
        let failed = failing(&out);
        assert!(!failed.is_empty(), "{check}: nothing failed");
        assert_eq!(failed[0].0, check, "{check}: {failed:?}");
        assert!(
            failed[0].1.iter().any(|f| f.contains(object)),
            "{check} should name {object}: {failed:?}"
        );
    }
}

#[test]
fn a_swapped_pair_in_a_shuffle_fails_its_proof() {
    let dir = tempdir();
    let path = honest(dir.path(), Shape::Single, 5);
    let out = dir.path().join("swapped.vchv");
    let params = votum_chvote::Params::new(Level::One, 3).unwrap();
    tamper(&path, &out, |e| {
        let i = index(e, "shuffle", "authority-1");
        let mut rng = rand_core::OsRng;
        let (rows, proof) =
            votum_chvote::record::decode_shuffle(&params, &e[i].payload, 5, &mut rng).unwrap();
        let mut cts = rows.into_ciphertexts();
        cts.swap(0, 3);
        let rows = votum_shuffle::Rows::new(1, cts).unwrap();
        e[i].payload = votum_chvote::record::shuffle_bytes(&params, &rows, &proof);
    });
    let failed = failing(&out);
    assert_eq!(failed[0].0, "V-CHV-07", "{failed:?}");
    assert!(failed[0].1[0].contains("authority-1"), "{failed:?}");
}

#[test]
fn garbage_and_truncation_are_errors_not_passes() {
    let dir = tempdir();
    let path = honest(dir.path(), Shape::Single, 3);
    let bytes = std::fs::read(&path).unwrap();
    let out = dir.path().join("short.vchv");
    std::fs::write(&out, &bytes[..bytes.len() - 40]).unwrap();
    let all = statuses(&out);
    assert!(all
        .iter()
        .any(|(id, s, _)| *id == "V-CHV-01" && *s != Status::Pass));
    let (report, _) = verify_record(&out, Options::default());
    assert!(!report.passed());
}

struct TempDir(PathBuf);
impl TempDir {
    fn path(&self) -> &Path {
        &self.0
    }
}
impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
fn tempdir() -> TempDir {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    let p = std::env::temp_dir().join(format!(
        "votum-chvote-test-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&p).unwrap();
    TempDir(p)
}

/// The record's security level is reported with the verification (spec/50.1), without a floor.
#[test]
fn the_report_gives_the_records_security_level() {
    let dir = tempdir();
    let path = honest(dir.path(), Shape::Single, 3);
    let (report, _) = verify_record(&path, Options::default());
    assert!(report.passed());
    assert_eq!(report.soundness.len(), 1);
    assert_eq!(report.soundness[0].bits, 80.0);
    assert_eq!(report.soundness[0].floor, None);
    assert!(report.soundness[0].what.contains("level 1"));
}

/// The election digest binds the record's election id and joint key (issue 45, finding 9): a
/// record passed off as another election fails V-CHV-02, whether only its header is relabelled or
/// its parameters are rewritten to match (the key shares' proofs then fail: they are bound to the
/// id they were made for); a record without an id in its parameters is refused by version.
#[test]
fn a_record_passed_off_as_another_election_fails() {
    let dir = tempdir();
    let path = honest(dir.path(), Shape::Single, 3);
    let (id, entries) = read_all(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(id, votum_chvote::sim::ELECTION_ID);
    let (params, set, _) = votum_chvote::record::decode_parameters(&entries[0].payload).unwrap();
    let write = |id: &str, entries: &[votum_chvote::record::Entry]| {
        let out = dir.path().join("relabelled.vchv");
        let mut w = RecordWriter::new(Vec::new(), id).unwrap();
        for e in entries {
            w.append(&e.kind, &e.name, &e.payload).unwrap();
        }
        std::fs::write(&out, w.into_inner().unwrap()).unwrap();
        failing(&out)
    };
    // only the header says "another-election"
    let failed = write("another-election", &entries);
    assert_eq!(failed[0].0, "V-CHV-02", "{failed:?}");
    assert!(
        failed[0].1[0].contains("the parameters are election \"chvote\"'s"),
        "{failed:?}"
    );
    // header and parameters both say it: the key shares' proofs were made for "chvote"
    let mut relabelled = entries.clone();
    relabelled[0].payload =
        votum_chvote::record::parameters_bytes(&params, &set, "another-election");
    let failed = write("another-election", &relabelled);
    assert_eq!(failed[0].0, "V-CHV-02", "{failed:?}");
    assert!(
        failed[0].1[0].contains("proof of knowledge fails"),
        "{failed:?}"
    );
    // parameters from before the signing keys were bound: refused by version
    let keys = 8 + 32 * params.authorities();
    let mut old = entries.clone();
    let cut = old[0].payload.len() - keys;
    old[0].payload.truncate(cut);
    let failed = write(&id, &old);
    assert_eq!(failed[0].0, "V-CHV-02", "{failed:?}");
    assert!(
        failed[0].1[0].contains("name no signing keys"),
        "{failed:?}"
    );
    // parameters from before the id was bound: refused by version
    let mut old = entries.clone();
    let cut = old[0].payload.len() - keys - 8 - id.len();
    old[0].payload.truncate(cut);
    let failed = write(&id, &old);
    assert_eq!(failed[0].0, "V-CHV-02", "{failed:?}");
    assert!(
        failed[0].1[0].contains("carry no election id"),
        "{failed:?}"
    );
    // issue 45, finding 2: a board that names keys of its own making in the parameters, and signs
    // every shuffle and share with them, fails: the key shares' proofs cover the signing keys
    let rogue: Vec<votum_node::EnvelopeSigner> = (0..params.authorities())
        .map(|j| votum_node::EnvelopeSigner::from_seed(&[0xA0 + j as u8; 32]))
        .collect();
    let swapped = votum_chvote::Params::signed(
        params.level(),
        params.authorities(),
        rogue.iter().map(|k| k.verifying_key()).collect(),
    )
    .unwrap();
    let mut resigned = entries.clone();
    resigned[0].payload = votum_chvote::record::parameters_bytes(&swapped, &set, &id);
    let failed = write(&id, &resigned);
    assert_eq!(failed[0].0, "V-CHV-02", "{failed:?}");
    assert!(
        failed[0].1[0].contains("proof of knowledge fails"),
        "{failed:?}"
    );
}

/// Issue 43, item 5: a `parameters` payload with t = 0 elections and a huge voter count of
/// zero-width eligibility rows made both verifiers allocate for 2^64 rows (an abort). The count is
/// bounded by the payload whatever the item width, and t = 0 is refused by name.
#[test]
fn parameters_with_no_elections_are_refused_without_allocating() {
    let mut p = vec![1u8]; // level 1
    p.extend(3u64.to_be_bytes()); // s
    p.extend(0u64.to_be_bytes()); // t = 0
    p.extend(u64::MAX.to_be_bytes()); // N: rows of ⌈0/8⌉ = 0 bytes each
    let err = votum_chvote::record::decode_parameters(&p)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("no elections") || err.contains("cannot hold"),
        "{err}"
    );
    // the same through the verifier, as a record on disk
    let dir = tempdir();
    let path = dir.path().join("t0.vchv");
    let mut w = RecordWriter::new(Vec::new(), "t0").unwrap();
    w.append("parameters", "parameters", &p).unwrap();
    std::fs::write(&path, w.into_inner().unwrap()).unwrap();
    let failed = failing(&path);
    assert_eq!(failed[0].0, "V-CHV-02", "{failed:?}");
}
