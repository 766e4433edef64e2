//! Verificatum mix-net sessions (spec/99, checks V-VMN-01..07): the stored sessions written by VMN 3.1.0
//! (vectors/verificatum) pass, and a copy changed in each region fails under its own check.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};

use votum_verify::bytetree::Bt;
use votum_verify::{verify_record, Check, Options, Report, Status};

/// The check of registry id `s`.
fn id(s: &str) -> Check {
    Check::from_id(s).unwrap()
}

fn vectors() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../vectors/verificatum")
}

/// A copy of stored session `name` in a fresh temporary directory.
fn copy(name: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dst = tmp.path().join(name);
    copy_dir(&vectors().join(name), &dst);
    (tmp, dst)
}

fn copy_dir(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for e in std::fs::read_dir(src).unwrap() {
        let e = e.unwrap();
        let to = dst.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to);
        } else {
            std::fs::copy(e.path(), to).unwrap();
        }
    }
}

fn verify(path: &Path) -> Report {
    verify_record(path, Options::default()).0
}

fn status(r: &Report, c: Check) -> Status {
    r.result(c).unwrap().status
}

/// Only `check` did not pass (the others passed or were not reached after it).
fn fails_only(r: &Report, check: Check) {
    let bad = r.not_passed();
    assert!(
        bad.first() == Some(&check.id()),
        "expected {} to fail first, got {bad:?}: {:#?}",
        check.id(),
        r.result(check)
    );
    assert!(
        matches!(status(r, check), Status::Fail | Status::Error),
        "{:?}",
        r.result(check)
    );
}

fn nizkp(session: &Path) -> PathBuf {
    session.join("dir/nizkp/default")
}

/// Rewrites ByteTree file `file` after `change` edits its tree (as a party controlling the board can).
fn rewrite(file: &Path, change: impl FnOnce(&mut Vec<u8>, &Bt<'_>)) {
    let bytes = std::fs::read(file).unwrap();
    let tree = Bt::parse(&bytes).unwrap();
    let mut out = Vec::new();
    change(&mut out, &tree);
    std::fs::write(file, out).unwrap();
}

/// The tree with children `i` and `j` of the node at `path` (indices from the root) swapped.
fn swap<'a>(t: &Bt<'a>, path: &[usize], i: usize, j: usize) -> Bt<'a> {
    let Bt::Node(c) = t else { panic!("a leaf") };
    let mut c = c.clone();
    match path.split_first() {
        None => c.swap(i, j),
        Some((&k, rest)) => c[k] = swap(&c[k], rest, i, j),
    }
    Bt::Node(c)
}

fn swap_file(file: &Path, path: &[usize], i: usize, j: usize) {
    rewrite(file, |out, t| swap(t, path, i, j).write(out));
}

fn flip_byte(file: &Path, at: usize) {
    let mut b = std::fs::read(file).unwrap();
    let at = at.min(b.len() - 1);
    b[at] ^= 0x01;
    std::fs::write(file, b).unwrap();
}

#[test]
fn the_stored_sessions_pass() {
    let (r, out) = verify_record(&vectors().join("onpe100"), Options::default());
    assert!(r.passed(), "{:?}", r.not_passed());
    assert_eq!(r.result(id("V-VMN-03")).unwrap().checked, 2);
    assert_eq!(r.result(id("V-VMN-05")).unwrap().checked, 100);
    assert_eq!(r.result(id("V-VMN-06")).unwrap().checked, 100);
    assert_eq!(out.values["group"], "ECqPGroup(P-256)");
    assert_eq!(out.values["sessions"][0]["valid_shuffles"], 2);
    let r = verify(&vectors().join("modp"));
    assert!(r.passed(), "{:?}", r.not_passed());
    assert_eq!(r.result(id("V-VMN-03")).unwrap().checked, 1);
    // the proof directory itself names the session too (protInfo.xml found above it)
    let r = verify(&nizkp(&vectors().join("modp")));
    assert!(r.passed(), "{:?}", r.not_passed());
}

#[test]
fn a_session_that_does_not_read_is_v_vmn_01() {
    let (_t, s) = copy("modp");
    std::fs::write(nizkp(&s).join("type"), "bogus").unwrap();
    fails_only(&verify(&s), id("V-VMN-01"));
    let (_t, s) = copy("modp");
    std::fs::write(nizkp(&s).join("width"), "3").unwrap();
    fails_only(&verify(&s), id("V-VMN-01"));
    // the input list: a byte of a ciphertext changed
    let (_t, s) = copy("onpe100");
    flip_byte(&nizkp(&s).join("Ciphertexts.bt"), 100);
    fails_only(&verify(&s), id("V-VMN-01"));
    // protInfo.xml without its session identifier
    let (_t, s) = copy("modp");
    let info = std::fs::read_to_string(s.join("protInfo.xml")).unwrap();
    std::fs::write(
        s.join("protInfo.xml"),
        info.replace("<sid>SessionID</sid>", ""),
    )
    .unwrap();
    fails_only(&verify(&s), id("V-VMN-01"));
}

#[test]
fn a_key_that_is_not_the_sessions_is_v_vmn_02() {
    // a byte of y: no longer a point
    let (_t, s) = copy("onpe100");
    flip_byte(&nizkp(&s).join("FullPublicKey.bt"), 150);
    fails_only(&verify(&s), id("V-VMN-02"));
    // y replaced by the generator: a valid point, but not the polynomial's constant term
    let (_t, s) = copy("onpe100");
    swap_file(&nizkp(&s).join("FullPublicKey.bt"), &[], 0, 1);
    let r = verify(&s);
    assert_eq!(
        status(&r, id("V-VMN-02")),
        Status::Fail,
        "{:?}",
        r.result(id("V-VMN-02"))
    );
}

#[test]
fn a_bad_shuffle_is_v_vmn_03() {
    // one ciphertext of party 2's output swapped with another: its proof fails, leaving one valid
    // proof for a threshold of 2
    let (_t, s) = copy("onpe100");
    swap_file(&nizkp(&s).join("proofs/Ciphertexts02.bt"), &[0], 3, 7);
    let r = verify(&s);
    fails_only(&r, id("V-VMN-03"));
    let res = r.result(id("V-VMN-03")).unwrap();
    assert!(
        res.warnings.iter().any(|w| w.object.contains("party 2")),
        "{res:?}"
    );
    // a byte of party 1's reply
    let (_t, s) = copy("onpe100");
    flip_byte(&nizkp(&s).join("proofs/PoSReply01.bt"), 200);
    fails_only(&verify(&s), id("V-VMN-03"));
    // on the 512-bit ModP group: the only shuffle's output reordered
    let (_t, s) = copy("modp");
    swap_file(&nizkp(&s).join("ShuffledCiphertexts.bt"), &[1], 0, 1);
    fails_only(&verify(&s), id("V-VMN-03"));
}

/// The proofs lead to proofs/Ciphertexts02.bt; the list published beside them as the mix-net's output
/// (ShuffledCiphertexts.bt) is another file, which VMN's verifier never compares with it. Changed
/// here, every proof still holds, and votum refuses the session.
#[test]
fn a_published_shuffled_list_that_is_not_the_proven_one_is_v_vmn_03() {
    let (_t, s) = copy("onpe100");
    swap_file(&nizkp(&s).join("ShuffledCiphertexts.bt"), &[0], 0, 1);
    let r = verify(&s);
    fails_only(&r, id("V-VMN-03"));
    let res = r.result(id("V-VMN-03")).unwrap();
    assert!(
        res.findings[0]
            .reason
            .contains("published shuffled ciphertexts"),
        "{res:?}"
    );
}

/// A session with precomputation (PoSC over `maxciph` generators, then CCPoS over the kept part): the
/// stored one passes; a keep list that does not keep as many as there are ciphertexts is V-VMN-04; a
/// bad PoSC makes the party's shuffle invalid (a V-VMN-04 warning, then too few valid shuffles for
/// V-VMN-03), as a bad CCPoS does.
#[test]
fn a_precomputed_session_is_v_vmn_04() {
    let r = verify(&vectors().join("precomp"));
    assert!(r.passed(), "{:?}", r.not_passed());
    assert_eq!(r.result(id("V-VMN-04")).unwrap().checked, 1);
    let (_t, s) = copy("precomp");
    let keep = nizkp(&s).join("proofs/KeepList01.bt");
    rewrite(&keep, |out, t| {
        let mut b = t.leaf("keep").unwrap().to_vec();
        let i = b.iter().position(|&x| x == 1).unwrap();
        b[i] = 0;
        votum_verify::bytetree::write_leaf(out, &b);
    });
    let r = verify(&s);
    assert_eq!(
        status(&r, id("V-VMN-04")),
        Status::Fail,
        "{:?}",
        r.result(id("V-VMN-04"))
    );
    // a forged maxciph, far more than the commitment holds: refused before deriving anything
    let (_t, s) = copy("precomp");
    std::fs::write(nizkp(&s).join("proofs/maxciph"), "100000000").unwrap();
    let r = verify(&s);
    assert_eq!(status(&r, id("V-VMN-04")), Status::Fail);
    let (_t, s) = copy("precomp");
    flip_byte(&nizkp(&s).join("proofs/PoSCReply01.bt"), 400);
    let r = verify(&s);
    fails_only(&r, id("V-VMN-03"));
    assert!(!r.result(id("V-VMN-04")).unwrap().warnings.is_empty());
    let (_t, s) = copy("precomp");
    flip_byte(&nizkp(&s).join("proofs/CCPoSReply01.bt"), 300);
    fails_only(&verify(&s), id("V-VMN-03"));
}

#[test]
fn a_bad_decryption_factor_is_v_vmn_05() {
    // two of party 1's factors swapped: each a valid point, the batched proof fails
    let (_t, s) = copy("onpe100");
    swap_file(&nizkp(&s).join("proofs/DecryptionFactors01.bt"), &[], 0, 1);
    fails_only(&verify(&s), id("V-VMN-05"));
    // party 2's reply changed (party 3's is not combined, neither by VMN nor here: spec/99.6)
    let (_t, s) = copy("onpe100");
    flip_byte(&nizkp(&s).join("proofs/DecrFactReply02.bt"), 30);
    fails_only(&verify(&s), id("V-VMN-05"));
    // no party counted as correct
    let (_t, s) = copy("onpe100");
    let ci = nizkp(&s).join("proofs/CorrectIndices.bt");
    rewrite(&ci, |out, _| {
        votum_verify::bytetree::write_leaf(out, &[0, 0, 0, 0])
    });
    fails_only(&verify(&s), id("V-VMN-05"));
}

/// The bulletin board beside the session (party 1's messages, every party's signatures): a message
/// changed after signing, a signature removed, and a key that is another party's each fail V-VMN-07;
/// the stored board binds the proof files of party 1 to its signatures.
#[test]
fn an_unsigned_or_unbound_message_is_v_vmn_07() {
    let r = verify(&vectors().join("onpe100"));
    let board = r.result(id("V-VMN-07")).unwrap();
    // 17 messages with their publisher's signature, 10 of party 1's signatures of parties 2 and 3's
    // messages checked over the proof files they are, 7 proof files found on the board
    assert_eq!(board.checked, 17 + 10 + 7, "{board:?}");
    let pos = "httproot/1/MixNetElGamal.ONPE/ShufflerElGamal.SEG/ShufflerElGamalSession.ONPE.default/PoSTW.1/BullBoard.BullBoard";
    // a message changed after its publisher signed it: its signature fails, and the proof file is no
    // longer the message
    let (_t, s) = copy("onpe100");
    flip_byte(&s.join(pos).join("Reply"), 500);
    let r = verify(&s);
    fails_only(&r, id("V-VMN-07"));
    let findings = &r.result(id("V-VMN-07")).unwrap().findings;
    assert!(
        findings.iter().any(|f| f
            .reason
            .contains("party 1's signature of party 1's message")),
        "{findings:?}"
    );
    assert!(
        findings.iter().any(|f| f.object.ends_with("PoSReply01.bt")),
        "{findings:?}"
    );
    // a signature removed
    let (_t, s) = copy("onpe100");
    std::fs::remove_file(s.join(pos).join("Commitment.sig.1")).unwrap();
    fails_only(&verify(&s), id("V-VMN-07"));
    // party 1's key replaced by party 2's in protInfo.xml
    let (_t, s) = copy("onpe100");
    let info = std::fs::read_to_string(s.join("protInfo.xml")).unwrap();
    let keys: Vec<&str> = info
        .split("<pkey>")
        .skip(1)
        .map(|k| k.split("</pkey>").next().unwrap())
        .collect();
    assert_eq!(keys.len(), 3);
    std::fs::write(s.join("protInfo.xml"), info.replacen(keys[0], keys[1], 1)).unwrap();
    fails_only(&verify(&s), id("V-VMN-07"));
}

#[test]
fn a_changed_plaintext_is_v_vmn_06() {
    let (_t, s) = copy("onpe100");
    swap_file(&nizkp(&s).join("Plaintexts.bt"), &[], 10, 20);
    fails_only(&verify(&s), id("V-VMN-06"));
}

/// One byte changed in each file of the session: never a pass, and the check that fails first is
/// the file's own.
#[test]
fn one_byte_changed_in_each_file_fails_its_check() {
    let cases: [(&str, Check); 12] = [
        ("FullPublicKey.bt", id("V-VMN-02")),
        ("proofs/PermutationCommitment01.bt", id("V-VMN-03")),
        ("proofs/PoSCommitment01.bt", id("V-VMN-03")),
        ("proofs/PoSReply02.bt", id("V-VMN-03")),
        ("proofs/Ciphertexts01.bt", id("V-VMN-03")),
        ("proofs/Ciphertexts02.bt", id("V-VMN-03")),
        ("proofs/PolynomialInExponent.bt", id("V-VMN-05")),
        ("proofs/DecryptionFactors02.bt", id("V-VMN-05")),
        ("proofs/DecrFactCommitment01.bt", id("V-VMN-05")),
        ("proofs/DecrFactReply02.bt", id("V-VMN-05")),
        ("Plaintexts.bt", id("V-VMN-06")),
        ("ShuffledCiphertexts.bt", id("V-VMN-03")),
    ];
    for (file, check) in cases {
        let (_t, s) = copy("onpe100");
        let path = nizkp(&s).join(file);
        let len = std::fs::metadata(&path).unwrap().len() as usize;
        flip_byte(&path, len / 2);
        let r = verify(&s);
        assert!(!r.passed(), "{file}");
        assert_eq!(
            r.not_passed().first(),
            Some(&check.id()),
            "{file}: {:?}",
            r.checks
                .iter()
                .filter(|c| c.status != Status::Pass)
                .collect::<Vec<_>>()
        );
    }
}

/// What the plaintexts of a session decode to, as `votum verify` reports them.
fn counts(path: &Path) -> serde_json::Value {
    let (r, out) = verify_record(path, Options::default());
    assert!(r.passed(), "{}: {:?}", path.display(), r.not_passed());
    out.values["sessions"][0]["counts"].clone()
}

/// Sessions of width 2 and 3 and on every NIST curve, written by VMN 3.1.0 (vectors/verificatum/README):
/// each passes, and its plaintexts decode to what VMN's own `vmnc -plain` prints for them.
#[test]
fn wider_sessions_on_other_groups_pass_and_decode_as_vmn_decodes() {
    for (name, group) in [
        ("p192w3", "ECqPGroup(P-192)"),
        ("modpw3", "ModPGroup(512 bits)"),
        ("p224w2", "ECqPGroup(P-224)"),
        ("p521", "ECqPGroup(P-521)"),
        ("modpw2", "ModPGroup(1024 bits)"),
    ] {
        let (r, out) = verify_record(&vectors().join(name), Options::default());
        assert!(r.passed(), "{name}: {:?}", r.not_passed());
        assert_eq!(out.values["group"], group, "{name}");
    }
    // three parties, threshold 2, width 2: both shuffles, every party's factors, every signature of
    // the three boards merged (nothing left unchecked)
    let r = verify(&vectors().join("p224w2"));
    assert_eq!(r.result(id("V-VMN-03")).unwrap().checked, 2);
    let board = r.result(id("V-VMN-07")).unwrap();
    assert!(board.warnings.is_empty(), "{board:?}");
    assert!(board.checked > 100, "{board:?}");
    assert_eq!(
        counts(&vectors().join("p224w2")),
        serde_json::json!({"Alice": 4, "Bob": 2, "Carol": 1, "Dave, candidato con un nombre largo": 1,
            "nulo: marcado dos veces": 1, "una papeleta en blanco": 1})
    );
    assert_eq!(
        counts(&vectors().join("p521")),
        serde_json::json!({"Lista 1": 2, "Lista 2": 1, "Lista 3": 1, "voto en blanco": 1})
    );
    // a message of two elements of the safe-prime group, and one encoding nothing
    let text = "una papeleta con un texto largo que ocupa los dos elementos del grupo de 1024 bits, con eñes y acentos: más";
    assert_eq!(
        counts(&vectors().join("modpw2")),
        serde_json::json!({"": 1, "Lista 1": 2, "Lista 2": 1, text: 1})
    );
    // ONPE's: ten-digit codes, 100 of them
    let onpe = counts(&vectors().join("onpe100"));
    let total: u64 = onpe
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(total, 100);
    assert_eq!(onpe["0202010102"], 2);
}

/// Width 2: each factor of the product group has its own equations. A change confined to the second
/// factor (a re-encryption reply, a plaintext, the shuffled list) fails its check.
#[test]
fn a_change_in_the_second_factor_of_a_wide_session_fails() {
    // k_F's second component (the reply's last child, a node of two scalars)
    let (_t, s) = copy("p224w2");
    let reply = nizkp(&s).join("proofs/PoSReply02.bt");
    let len = std::fs::metadata(&reply).unwrap().len() as usize;
    flip_byte(&reply, len - 3);
    fails_only(&verify(&s), id("V-VMN-03"));
    // two plaintexts' different second elements swapped (column 1 of the array of G^2 elements; most
    // messages fit the first element, and their second elements, encoding nothing, are all the same)
    let (_t, s) = copy("p224w2");
    let plaintexts = nizkp(&s).join("Plaintexts.bt");
    let bytes = std::fs::read(&plaintexts).unwrap();
    let column = |t: &Bt<'_>| -> Vec<Vec<u8>> {
        let Bt::Node(c) = t else { panic!() };
        let Bt::Node(second) = &c[1] else { panic!() };
        second
            .iter()
            .map(|e| {
                let mut b = Vec::new();
                e.write(&mut b);
                b
            })
            .collect()
    };
    let second = column(&Bt::parse(&bytes).unwrap());
    let other = (1..second.len()).find(|&j| second[j] != second[0]).unwrap();
    swap_file(&plaintexts, &[1], 0, other);
    fails_only(&verify(&s), id("V-VMN-06"));
    // the second factors of two output ciphertexts' left halves swapped
    let (_t, s) = copy("p224w2");
    swap_file(&nizkp(&s).join("proofs/Ciphertexts02.bt"), &[0, 1], 2, 5);
    fails_only(&verify(&s), id("V-VMN-03"));
    // a decryption factor's second element, swapped with another
    let (_t, s) = copy("p224w2");
    swap_file(&nizkp(&s).join("proofs/DecryptionFactors01.bt"), &[1], 0, 1);
    fails_only(&verify(&s), id("V-VMN-05"));
}

/// Every signature on the board is checked, whoever made it: party 2's signature of party 1's message
/// (on party 2's board), and party 1's of party 2's (over the proof file the message is).
#[test]
fn another_partys_signature_that_does_not_hold_is_v_vmn_07() {
    let pos = |l: u32| {
        format!("MixNetElGamal.Sp224w2/ShufflerElGamal.SEG/ShufflerElGamalSession.Sp224w2.default/PoSTW.{l}/BullBoard.BullBoard")
    };
    // party 2's signature of party 1's commitment, replaced by its signature of party 1's reply
    let (_t, s) = copy("p224w2");
    let dir = s.join("httproot/1").join(pos(1));
    std::fs::copy(dir.join("Reply.sig.2"), dir.join("Commitment.sig.2")).unwrap();
    let r = verify(&s);
    fails_only(&r, id("V-VMN-07"));
    let findings = &r.result(id("V-VMN-07")).unwrap().findings;
    assert!(
        findings.iter().any(|f| f
            .reason
            .contains("party 2's signature of party 1's message")),
        "{findings:?}"
    );
    // party 1's signature of party 2's commitment, on ONPE's board (party 1's only: the message is the
    // proof file PoSCommitment02.bt)
    let (_t, s) = copy("onpe100");
    let dir = s.join("httproot/2/MixNetElGamal.ONPE/ShufflerElGamal.SEG/ShufflerElGamalSession.ONPE.default/PoSTW.2/BullBoard.BullBoard");
    std::fs::copy(dir.join("Reply.sig.1"), dir.join("Commitment.sig.1")).unwrap();
    fails_only(&verify(&s), id("V-VMN-07"));
    // the proof file changed instead: the signature of it fails as well as the proof
    // a signature by a party the session does not have
    let (_t, s) = copy("p224w2");
    let dir = s.join("httproot/1").join(pos(1));
    std::fs::copy(dir.join("Reply.sig.2"), dir.join("Reply.sig.9")).unwrap();
    fails_only(&verify(&s), id("V-VMN-07"));
}

/// Shuffle workers that check each proof at once with the cluster's own task (spec/98.3), or answer
/// every proof with the same lie.
struct Inline {
    params: Option<(Vec<u8>, Vec<u8>)>,
    pending: Vec<(Vec<u8>, Vec<u8>)>,
    lie: Option<Result<Option<String>, String>>,
    tasks: usize,
}

impl Inline {
    fn new(lie: Option<Result<Option<String>, String>>) -> Inline {
        Inline {
            params: None,
            pending: Vec::new(),
            lie,
            tasks: 0,
        }
    }
}

impl votum_verify::ShuffleWorkers for Inline {
    fn setup(&mut self, parameters: &[u8], joint: &[u8]) -> std::ops::ControlFlow<()> {
        self.params = Some((parameters.to_vec(), joint.to_vec()));
        std::ops::ControlFlow::Continue(())
    }

    fn submit(
        &mut self,
        _context: &[u8; 32],
        input: &[u8],
        payload: &[u8],
    ) -> std::ops::ControlFlow<()> {
        self.pending.push((input.to_vec(), payload.to_vec()));
        self.tasks += 1;
        std::ops::ControlFlow::Continue(())
    }

    fn collect(&mut self) -> std::ops::ControlFlow<(), Vec<Result<Option<String>, String>>> {
        let (parameters, joint) = self.params.clone().unwrap();
        let out = self
            .pending
            .drain(..)
            .map(|(input, payload)| match &self.lie {
                Some(lie) => lie.clone(),
                None => votum_verify::check_shuffle_task(
                    &parameters,
                    &joint,
                    &[0; 32],
                    &input,
                    &payload,
                ),
            })
            .collect();
        std::ops::ControlFlow::Continue(out)
    }
}

fn verify_with(path: &Path, workers: &mut Inline) -> Report {
    verify_record(
        path,
        Options {
            shuffle_workers: Some(workers),
            ..Options::default()
        },
    )
    .0
}

/// The proofs of shuffle checked as a cluster's tasks, one per party, give the in-process report,
/// on honest sessions and on one whose first shuffle fails (the second is then checked here, its
/// input being the first party's input); a worker that fails every proof or cannot check them
/// changes nothing, as the client checks those itself.
#[test]
fn shuffles_checked_as_cluster_tasks_give_the_in_process_report() {
    let (_t, bad) = copy("p224w2");
    let reply = nizkp(&bad).join("proofs/PoSReply01.bt");
    let len = std::fs::metadata(&reply).unwrap().len() as usize;
    flip_byte(&reply, len - 3);
    for session in [vectors().join("p224w2"), vectors().join("onpe100"), bad] {
        let local = verify(&session);
        let mut workers = Inline::new(None);
        let remote = verify_with(&session, &mut workers);
        assert_eq!(workers.tasks, 2, "{}", session.display());
        assert_eq!(
            format!("{:?}", remote.checks),
            format!("{:?}", local.checks),
            "{}",
            session.display()
        );
        for lie in [Ok(Some("a lie".to_string())), Err("cannot".to_string())] {
            let remote = verify_with(&session, &mut Inline::new(Some(lie)));
            assert_eq!(
                format!("{:?}", remote.checks),
                format!("{:?}", local.checks)
            );
        }
    }
    // the task fails the bad proof by itself, as the walker does
    let (_t, bad) = copy("p224w2");
    flip_byte(&nizkp(&bad).join("proofs/PoSReply02.bt"), 40);
    let mut workers = Inline::new(None);
    let r = verify_with(&bad, &mut workers);
    fails_only(&r, id("V-VMN-03"));
    // a precomputed session stays in process (no task)
    let mut workers = Inline::new(None);
    assert!(verify_with(&vectors().join("precomp"), &mut workers).passed());
    assert_eq!(workers.tasks, 0);
}

/// Workers that stop the verification (as Ctrl-C or a lost cluster does): the shuffles are not checked
/// here instead, and their checks stay not run.
#[test]
fn workers_that_stop_leave_the_shuffles_not_run() {
    struct Stop;
    impl votum_verify::ShuffleWorkers for Stop {
        fn setup(&mut self, _: &[u8], _: &[u8]) -> std::ops::ControlFlow<()> {
            std::ops::ControlFlow::Break(())
        }
        fn submit(&mut self, _: &[u8; 32], _: &[u8], _: &[u8]) -> std::ops::ControlFlow<()> {
            std::ops::ControlFlow::Break(())
        }
        fn collect(&mut self) -> std::ops::ControlFlow<(), Vec<Result<Option<String>, String>>> {
            std::ops::ControlFlow::Break(())
        }
    }
    let r = verify_record(
        &vectors().join("p224w2"),
        Options {
            shuffle_workers: Some(&mut Stop),
            ..Options::default()
        },
    )
    .0;
    assert_eq!(status(&r, id("V-VMN-03")), Status::NotRun);
    assert!(!r.passed());
}
