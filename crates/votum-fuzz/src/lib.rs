//! Every decoder of untrusted bytes as a fuzz target: one function per target, taking the raw
//! input. Each must return (never panic, never allocate without bound) on any input, and each
//! asserts the properties its decoder promises: canonical encodings re-encode to the same bytes,
//! a batched membership test agrees with the one-by-one test, a batch ballot check agrees with
//! the individual one.
//!
//! `fuzz/` (cargo-fuzz, nightly) drives these under libFuzzer; `tests/corpus.rs` replays the
//! seeds and every regression input on stable (and a local working corpus when there is one), so
//! CI runs them all on each change.
//! Multi-decoder targets read their first byte as a selector, so one corpus covers several
//! decoders of one format.

use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha20Rng;
use serde_json::Value;
use std::sync::OnceLock;
use votum_eg::ballot::{parse_ballot, tally_from_bytes, tally_to_bytes, BallotVerifier};
use votum_eg::ceremony::{BackupChallengeResponse, Guardian, GuardianPublicKey, PartialKeyBackup};
use votum_eg::context::ElectionContext;
use votum_eg::decrypt::{shares_from_json, shares_to_json, DecryptionTarget};
use votum_eg::Manifest;
use votum_group::{Group, GroupId, ModpGroup, Ristretto255};
use votum_mixnet::params::Parameters;
use votum_mixnet::{record, wire};

/// The names of the targets, as cargo-fuzz and the corpus directories know them.
pub const TARGETS: [&str; 15] = [
    "group_codec",
    "mix_wire",
    "mix_record",
    "archive",
    "eg_json",
    "manifest",
    "sv_record",
    "chv_record",
    "node_frame",
    "ivxv_record",
    "belenios_record",
    "vmn_session",
    "eg2_record",
    "eg2_party",
    "eg21_record",
];

/// Runs target `name` on `data` (the corpus replay uses this).
pub fn run(name: &str, data: &[u8]) {
    match name {
        "group_codec" => group_codec(data),
        "mix_wire" => mix_wire(data),
        "mix_record" => mix_record(data),
        "archive" => archive(data),
        "eg_json" => eg_json(data),
        "manifest" => manifest(data),
        "sv_record" => sv_record(data),
        "chv_record" => chv_record(data),
        "node_frame" => node_frame(data),
        "ivxv_record" => ivxv_record(data),
        "belenios_record" => belenios_record(data),
        "vmn_session" => vmn_session(data),
        "eg2_record" => eg2_record(data),
        "eg2_party" => eg2_party(data),
        "eg21_record" => eg21_record(data),
        "eg21_party" => eg21_party(data),
        _ => {}
    }
}

fn rng() -> ChaCha20Rng {
    ChaCha20Rng::seed_from_u64(7)
}

// ---------------------------------------------------------------------------------------------
// group element and scalar codecs

/// Byte 0 picks the group (mod 4), byte 1 the decoder; the rest is the encoding.
pub fn group_codec(data: &[u8]) {
    let [g, op, rest @ ..] = data else { return };
    match GroupId::ALL[usize::from(*g) % 4] {
        GroupId::Eg4096 => codec_of(&ModpGroup::eg_4096(), *op, rest),
        GroupId::Modp2048 => codec_of(&ModpGroup::rfc3526_2048(), *op, rest),
        GroupId::Modp3072 => codec_of(&ModpGroup::rfc3526_3072(), *op, rest),
        GroupId::Ristretto255 => codec_of(&Ristretto255, *op, rest),
        other => {
            if let Some(group) = ModpGroup::of_id(other) {
                codec_of(&group, *op, rest)
            }
        }
    }
}

fn codec_of<G: Group>(group: &G, op: u8, bytes: &[u8]) {
    match op % 4 {
        0 => {
            if let Ok(e) = group.decode_element(bytes) {
                assert_eq!(
                    group.encode_element(&e),
                    bytes,
                    "element encoding not canonical"
                );
            }
        }
        1 => {
            if let Ok(s) = group.decode_scalar(bytes) {
                assert_eq!(
                    group.encode_scalar(&s),
                    bytes,
                    "scalar encoding not canonical"
                );
            }
        }
        2 => {
            // the batched membership test must name the same first bad element as the
            // one-by-one test, and decode the same elements when all are good
            let batched = group.decode_many(bytes, &mut rng());
            let each = votum_group::decode_each(group, bytes);
            match (batched, each) {
                (Ok(a), Ok(b)) => assert!(a == b, "decode_many decoded other elements"),
                (Err((i, _)), Err((j, _))) => assert_eq!(i, j, "first bad element differs"),
                (a, b) => assert_eq!(a.is_ok(), b.is_ok(), "decode_many and one by one disagree"),
            }
        }
        _ => {
            // the ElectionGuard JSON form of a number: hex text, range-checked
            if let Ok(text) = std::str::from_utf8(bytes) {
                let v = Value::String(text.to_owned());
                let g = ModpGroup::eg_4096();
                if let Ok(x) = votum_eg::json::in_range(&g, &v, "x", "fuzz") {
                    let _ = g.check(x);
                }
                let _ = votum_eg::json::scalar(&g, &v, "x", "fuzz");
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// mixnet wire payloads and the mix record

/// Byte 0 picks the group (ristretto255 or modp-2048), byte 1 the payload kind, byte 2 a width.
pub fn mix_wire(data: &[u8]) {
    let [g, kind, w, rest @ ..] = data else {
        return;
    };
    if g % 2 == 0 {
        wire_of(&Ristretto255, *kind, *w, rest);
    } else {
        wire_of(&ModpGroup::rfc3526_2048(), *kind, *w, rest);
    }
}

fn wire_of<G: Group>(group: &G, kind: u8, byte: u8, bytes: &[u8]) {
    // ballots: width 1 to 8; result: the rule and 3 to 6 candidates
    let w = usize::from(byte % 8) + 1;
    match kind % 7 {
        0 => {
            if let Ok((id, p)) = Parameters::decode(bytes) {
                assert_eq!(p.encode_for(id), bytes);
            }
        }
        1 => {
            if let Ok((commitments, proof)) = wire::decode_trustee(group, bytes) {
                assert_eq!(wire::trustee_bytes(group, &commitments, &proof), bytes);
            }
        }
        2 => {
            if let Ok(ballots) = wire::decode_ballots(group, bytes, w) {
                assert_eq!(wire::ballots_bytes(group, &ballots), bytes);
            }
        }
        3 => {
            if let Ok(share) = wire::decode_share(group, bytes) {
                assert_eq!(wire::share_bytes(group, &share), bytes);
            }
        }
        4 => {
            let rule = match byte % 5 {
                0 => votum_mixnet::count::Rule::Plurality,
                1 => votum_mixnet::count::Rule::KOfN { k: 2, seats: 1 },
                2 => votum_mixnet::count::Rule::Approval { seats: 2 },
                3 => votum_mixnet::count::Rule::InstantRunoff,
                _ => votum_mixnet::count::Rule::Stv { seats: 2 },
            };
            let _ = wire::decode_result(bytes, rule, 3 + usize::from(byte / 5 % 4));
        }
        5 => {
            if let Ok((list, proof)) = wire::split_mix(bytes, group.element_len()) {
                let rng = &mut rng();
                if let Ok(rows) = votum_shuffle::Rows::decode(group, list, rng) {
                    let _ = votum_shuffle::ShuffleProof::decode(
                        group,
                        proof,
                        rows.len(),
                        rows.width(),
                        rng,
                    );
                }
            }
        }
        _ => {
            let rng = &mut rng();
            if let Ok(rows) = votum_shuffle::Rows::decode(group, bytes, rng) {
                assert_eq!(rows.encode(group), bytes, "list encoding not canonical");
            }
        }
    }
}

/// The mix record reader, then the whole mix verifier on the same bytes.
pub fn mix_record(data: &[u8]) {
    if let Ok((id, entries)) = record::read_all(data) {
        let rewritten: Vec<(String, String, Vec<u8>)> = entries
            .into_iter()
            .map(|e| (e.kind, e.name, e.payload))
            .collect();
        if let Ok(again) = record::write_all(&id, &rewritten) {
            assert_eq!(again, data, "a record read back and rewritten differs");
        }
    }
    let (report, _) = votum_verify::mix::verify_mix_stream(data, "fuzz", Default::default());
    assert!(!report.checks.is_empty());
}

// ---------------------------------------------------------------------------------------------
// the record archive

/// Every frame of an archive, each converted to JSON text as the verifier reads it.
pub fn archive(data: &[u8]) {
    let Ok(reader) = votum_record::ArchiveReader::new(data) else {
        return;
    };
    for frame in reader {
        match frame {
            Ok(f) => {
                let _ = f.json();
            }
            Err(_) => return,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// ElectionGuard 1.4 JSON documents

struct Election {
    manifest: Manifest,
    verifier: BallotVerifier,
}

fn election() -> Option<&'static Election> {
    static E: OnceLock<Option<Election>> = OnceLock::new();
    E.get_or_init(|| {
        let manifest =
            Manifest::from_json(include_str!("../../../vectors/eg-1.4/manifest.json")).ok()?;
        let context: Value =
            serde_json::from_str(include_str!("../../../vectors/eg-1.4/context.json")).ok()?;
        let context = ElectionContext::from_eg14_json(&context).ok()?;
        let g = ModpGroup::eg_4096();
        let key = votum_elgamal_key(&g, &context)?;
        let verifier =
            BallotVerifier::new(manifest.clone(), &key, context.crypto_extended_base_hash).ok()?;
        Some(Election { manifest, verifier })
    })
    .as_ref()
}

fn votum_elgamal_key(
    g: &ModpGroup,
    context: &ElectionContext,
) -> Option<votum_elgamal::PublicKey<ModpGroup>> {
    votum_elgamal::PublicKey::new(g, context.elgamal_public_key.clone()).ok()
}

/// Byte 0 picks the document: a submitted ballot (parsed, then checked both batched and alone),
/// a guardian record, decryption shares, a sealed backup, a challenge answer, an encrypted
/// tally, a spoiled ballot as a decryption target, a stored tally, a guardian's secret state,
/// an election context.
pub fn eg_json(data: &[u8]) {
    let [kind, rest @ ..] = data else { return };
    if *kind % 10 == 7 {
        // the stored tally is bytes, not JSON
        if let Some(e) = election() {
            if let Ok(t) = tally_from_bytes(&e.manifest, rest) {
                assert_eq!(tally_to_bytes(&e.manifest, &t), rest);
            }
        }
        return;
    }
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let g = ModpGroup::eg_4096();
    match *kind % 10 {
        0 => {
            let Some(e) = election() else { return };
            let Ok(ballot) = parse_ballot(text) else {
                return;
            };
            let alone = e.verifier.verify_individually(ballot.clone());
            let batched = e.verifier.verify(ballot);
            assert_eq!(
                batched.is_ok(),
                alone.is_ok(),
                "batched and individual ballot checks disagree"
            );
        }
        1 => {
            if let Ok(v) = serde_json::from_str::<Value>(text) {
                if let Ok(k) = GuardianPublicKey::from_eg14_json(&g, &v) {
                    let _ = k.verify(&g, 3);
                }
            }
        }
        2 => {
            if let Ok(v) = serde_json::from_str::<Value>(text) {
                if let Ok((object, guardian, missing, shares)) = shares_from_json(&v) {
                    let again = shares_to_json(&guardian, missing.as_deref(), &object, &shares);
                    assert_eq!(
                        shares_from_json(&again).ok().map(|s| s.3.len()),
                        Some(shares.len())
                    );
                }
            }
        }
        3 => {
            if let Ok(v) = serde_json::from_str::<Value>(text) {
                let _ = PartialKeyBackup::from_json(&v);
            }
        }
        4 => {
            if let Ok(v) = serde_json::from_str::<Value>(text) {
                let _ = BackupChallengeResponse::from_json(&v);
            }
        }
        5 => {
            if let (Some(e), Ok(v)) = (election(), serde_json::from_str::<Value>(text)) {
                let _ = DecryptionTarget::from_tally_json(&e.manifest, &v);
            }
        }
        6 => {
            let _ = DecryptionTarget::from_ballot_json(text);
        }
        8 => {
            let _ = Guardian::import_secret_state(text, &[]);
        }
        _ => {
            if let Ok(v) = serde_json::from_str::<Value>(text) {
                let _ = ElectionContext::from_eg14_json(&v);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// the manifest

/// A manifest: parsed and validated, then hashed and its warnings listed.
pub fn manifest(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(m) = Manifest::from_json(text) {
        let _ = m.crypto_hash();
        let _ = m.warnings();
    }
}

// ---------------------------------------------------------------------------------------------
// split-value and CHVote records, and the channels' frames (issue 46, C)

/// A split-value record (spec/97.8) through the whole verifier: the board-file reader, the
/// entries' bounds and decoders, and every check's walker.
pub fn sv_record(data: &[u8]) {
    let (report, _) = votum_verify::sv::verify_sv_stream(data, "fuzz", Default::default());
    assert!(!report.checks.is_empty());
}

/// A CHVote record (spec/92.10) through the whole verifier.
pub fn chv_record(data: &[u8]) {
    let (report, _) = votum_verify::chv::verify_chvote_stream(data, "fuzz", Default::default());
    assert!(!report.checks.is_empty());
}

/// A frame's check (spec/95.3) on a stranger's bytes: byte 0 says how many payloads (0..=7) and
/// digests (one more or fewer when its high bit is set), the rest is cut into the sender's key,
/// the signature, the header and the payloads. Never panics; a key that decodes gives the same
/// verdict through `PeerKey` as through `check_frame`; and a frame signed honestly over the same
/// header and payloads passes, then fails naming the payload whose digest is changed.
pub fn node_frame(data: &[u8]) {
    use votum_node::{check_frame, digest, EnvelopeSigner, FrameError, PeerKey};
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let n = usize::from(first & 7);
    let digests_n = if first & 0x80 != 0 { n + 1 } else { n };
    let take = |rest: &[u8], k: usize| -> Vec<u8> { rest.iter().copied().take(k).collect() };
    let key: [u8; 32] = take(rest, 32).try_into().unwrap_or([0; 32]);
    let rest = rest.get(32..).unwrap_or_default();
    let signature: [u8; 64] = take(rest, 64).try_into().unwrap_or([0; 64]);
    let rest = rest.get(64..).unwrap_or_default();
    let mut parts: Vec<&[u8]> = rest.chunks(rest.len().div_ceil(n + 1).max(1)).collect();
    parts.resize(n + 1, &[]);
    let (header, payloads) = (parts[0], &parts[1..]);
    let digests: Vec<[u8; 32]> = (0..digests_n)
        .map(|i| payloads.get(i).map_or([i as u8; 32], |p| digest(p)))
        .collect();
    let verdict = check_frame(&key, header, &signature, payloads, &digests);
    if let Ok(peer) = PeerKey::new(&key) {
        let again = peer.check_frame(header, &signature, payloads, &digests);
        assert_eq!(format!("{verdict:?}"), format!("{again:?}"));
    }
    if digests_n != n {
        assert!(matches!(verdict, Err(FrameError::CountMismatch { .. })));
        return;
    }
    let signer = EnvelopeSigner::from_seed(&[7; 32]);
    let honest = signer.sign_header(header);
    let mine = signer.verifying_key();
    assert!(check_frame(&mine, header, &honest, payloads, &digests).is_ok());
    if let Some(last) = n.checked_sub(1) {
        let mut wrong = digests.clone();
        wrong[last][0] ^= 1;
        assert!(matches!(
            check_frame(&mine, header, &honest, payloads, &wrong),
            Err(FrameError::BadDigest(i)) if i == last
        ));
    }
}

// ---------------------------------------------------------------------------------------------
// other systems' records (issue 41)

/// Estonia's IVXV (spec/93): byte 0 picks what the rest is. 0: a proof file, checked against the
/// stored EP2024 key and mixer output; 1: a public key (PEM), with the stored proof file; 2: DER,
/// read TLV by TLV down every SEQUENCE, each re-encoded to the same bytes (the reader takes only
/// canonical DER).
pub fn ivxv_record(data: &[u8]) {
    const KEY: &[u8] = include_bytes!("../../../vectors/ivxv/ep2024-test/EP_2024-pub.pem");
    const PROOFS: &[u8] = include_bytes!("../../../vectors/ivxv/ep2024-test/EP_2024-proof");
    const MIXED: &[u8] = include_bytes!("../../../vectors/ivxv/ep2024-test/shuffled.json");
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    let run = |proofs: &[u8], key: &[u8]| {
        let (report, _) = votum_verify::ivxv::verify_ivxv_files(
            "fuzz".into(),
            ("proof", proofs),
            ("key", key),
            Some(("shuffled.json", MIXED)),
        );
        assert_eq!(report.checks.len(), 5);
    };
    match which % 3 {
        0 => run(rest, KEY),
        1 => run(PROOFS, rest),
        _ => der_round_trip(rest, 0),
    }
}

/// A Belenios archive (spec/94): byte 0 picks what the rest is. 0: a whole archive; 1: a ballot,
/// the first cast in the stored election; 2, 3, 4: the election, the trustees or
/// the credentials of a new archive that has the stored election's other two; 5: a partial
/// decryption (the rest's first byte its owner) posted after the stored ones. The archives are
/// built with every hash right, so the bytes reach the decoder they are meant for.
pub fn belenios_record(data: &[u8]) {
    let archive = belenios_archive(data);
    let (report, _) = votum_verify::verify_belenios_archive("fuzz".into(), archive.as_slice());
    assert_eq!(report.checks.len(), 10);
}

/// The archive [`belenios_record`] checks for `data`: by its first byte mod 7, the bytes themselves (0),
/// a ballot (1), an election, trustees or credentials (2..=4), a partial decryption (5) or a shuffle
/// of the stored mixnet election (6), each placed in a well-formed archive.
pub fn belenios_archive(data: &[u8]) -> Vec<u8> {
    const STORED: &[u8] =
        include_bytes!("../../../vectors/belenios/threshold-2048/BqGSmZhyf6voPQ.bel");
    let Some((&which, rest)) = data.split_first() else {
        return Vec::new();
    };
    const MIXNET: &[u8] =
        include_bytes!("../../../vectors/belenios/mixnet-3526/mRKGq7vW5wfnLV.bel");
    match which % 7 {
        0 => rest.to_vec(),
        1 => belenios::appended(STORED, "Ballot", &[(rest, "Ballot", None)]),
        2..=4 => belenios::setup(STORED, usize::from(which % 7 - 2), rest),
        6 => {
            // a shuffle (its owner byte first) posted first after the mixnet election's tally
            let Some((&owner, shuffle)) = rest.split_first() else {
                return Vec::new();
            };
            belenios::appended(MIXNET, "Shuffle", &[(shuffle, "Shuffle", Some(owner))])
        }
        _ => {
            let Some((&owner, partial)) = rest.split_first() else {
                return Vec::new();
            };
            belenios::appended(
                STORED,
                "Result",
                &[(partial, "PartialDecryption", Some(owner))],
            )
        }
    }
}

/// Belenios archives built around fuzzed bytes.
mod belenios {
    use serde_json::Value;

    fn sha256_hex(data: &[u8]) -> String {
        use sha2::Digest;
        sha2::Sha256::digest(data)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    /// (name, content) of each entry of a well-formed archive.
    fn entries(bytes: &[u8]) -> Vec<(String, Vec<u8>)> {
        let mut out = Vec::new();
        let mut at = 0;
        while at + 512 <= bytes.len() && bytes[at..at + 512].iter().any(|b| *b != 0) {
            let h = &bytes[at..at + 512];
            let end = h[..100].iter().position(|b| *b == 0).unwrap_or(100);
            let name = String::from_utf8_lossy(&h[..end]).into_owned();
            let size = std::str::from_utf8(&h[124..135])
                .ok()
                .and_then(|s| usize::from_str_radix(s, 8).ok())
                .unwrap_or(0);
            out.push((name, bytes[at + 512..at + 512 + size].to_vec()));
            at += 512 + size.div_ceil(512) * 512;
        }
        out
    }

    fn archive(entries: &[(String, Vec<u8>)]) -> Vec<u8> {
        let mut out = Vec::new();
        for (name, data) in entries {
            let mut h = vec![0u8; 512];
            h[..name.len()].copy_from_slice(name.as_bytes());
            h[100..107].copy_from_slice(b"0000644");
            h[108..115].copy_from_slice(b"0000000");
            h[116..123].copy_from_slice(b"0000000");
            h[124..135].copy_from_slice(format!("{:011o}", data.len()).as_bytes());
            h[136..147].copy_from_slice(b"00000000000");
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

    fn data(content: &[u8]) -> (String, Vec<u8>) {
        (
            format!("{}.data.json", sha256_hex(content)),
            content.to_vec(),
        )
    }

    fn event(
        parent: Option<&str>,
        height: u64,
        kind: &str,
        payload: Option<&str>,
    ) -> (String, Vec<u8>) {
        let mut e = serde_json::Map::new();
        if let Some(p) = parent {
            e.insert("parent".into(), p.into());
        }
        e.insert("height".into(), height.into());
        e.insert("type".into(), kind.into());
        if let Some(p) = payload {
            e.insert("payload".into(), p.into());
        }
        let bytes = serde_json::to_vec(&Value::Object(e)).unwrap_or_default();
        (format!("{}.event.json", sha256_hex(&bytes)), bytes)
    }

    /// The stored archive up to (not including) its first event of type `before` and the data
    /// entries that event needs, then each (payload, event type, owner) appended with its event.
    pub fn appended(stored: &[u8], before: &str, items: &[(&[u8], &str, Option<u8>)]) -> Vec<u8> {
        let all = entries(stored);
        let mut kept: Vec<(String, Vec<u8>)> = Vec::new();
        let mut pending: Vec<(String, Vec<u8>)> = Vec::new();
        let (mut last, mut height) = (String::new(), 0u64);
        for (name, content) in all {
            if name.ends_with(".event.json") {
                let e: Value = serde_json::from_slice(&content).unwrap_or_default();
                if e["type"] == before {
                    break;
                }
                kept.append(&mut pending);
                last = name.trim_end_matches(".event.json").to_string();
                height = e["height"].as_u64().unwrap_or(0);
                kept.push((name, content));
            } else {
                pending.push((name, content));
            }
        }
        for (payload, kind, owner) in items {
            let named = match owner {
                None => data(payload),
                Some(o) => {
                    let inner = data(payload);
                    let hash = inner.0.trim_end_matches(".data.json").to_string();
                    kept.push(inner);
                    data(format!("{{\"owner\":{o},\"payload\":\"{hash}\"}}").as_bytes())
                }
            };
            let hash = named.0.trim_end_matches(".data.json").to_string();
            kept.push(named);
            height += 1;
            let e = event(Some(&last), height, kind, Some(&hash));
            last = e.0.trim_end_matches(".event.json").to_string();
            kept.push(e);
        }
        archive(&kept)
    }

    /// A new archive holding only a setup: the stored election, trustees and credentials with
    /// number `which` (0, 1, 2) of them replaced by `replacement`.
    pub fn setup(stored: &[u8], which: usize, replacement: &[u8]) -> Vec<u8> {
        let all = entries(stored);
        let Some(header) = all.first().cloned() else {
            return Vec::new();
        };
        // the first three data entries are the election, the trustees and the credentials
        let mut parts: Vec<Vec<u8>> = all.iter().skip(1).take(3).map(|(_, d)| d.clone()).collect();
        if let Some(p) = parts.get_mut(which) {
            *p = replacement.to_vec();
        }
        let mut out = vec![header];
        let hashes: Vec<String> = parts.iter().map(|p| sha256_hex(p)).collect();
        for p in &parts {
            out.push(data(p));
        }
        if hashes.len() == 3 {
            let setup = format!(
                "{{\"election\":\"{}\",\"trustees\":\"{}\",\"credentials\":\"{}\"}}",
                hashes[0], hashes[1], hashes[2]
            );
            let s = data(setup.as_bytes());
            let hash = s.0.trim_end_matches(".data.json").to_string();
            out.push(s);
            out.push(event(None, 0, "Setup", Some(&hash)));
        }
        archive(&out)
    }
}

fn der_round_trip(bytes: &[u8], depth: usize) {
    use votum_verify::asn1::{tlv, Reader, SEQUENCE};
    let mut r = Reader::new(bytes);
    while !r.is_empty() {
        let Ok(t) = r.any() else { return };
        assert_eq!(
            tlv(t.tag, t.contents),
            t.whole,
            "DER re-encodes to its own bytes"
        );
        if t.tag == SEQUENCE && depth < 32 {
            der_round_trip(t.contents, depth + 1);
        }
    }
}

/// A Verificatum mix-net session (spec/99): byte 0 picks a stored session (mod 8: the ModP shuffle, the
/// P-256 mixing session, the precomputed P-256 shuffle, the three-party P-224 width-2 mixing session with
/// every board, the P-521 and the ModP width-2 mixing sessions, the P-192 and ModP width-3 shuffles), byte
/// 1 one of its files (protInfo.xml included), and the rest replaces
/// that file in a fresh copy; the rest is also parsed as a ByteTree. The report always holds the seven
/// checks, and a session whose file changed never passes unless the bytes are the same.
pub fn vmn_session(data: &[u8]) {
    let [which, file, rest @ ..] = data else {
        return;
    };
    if let Ok(tree) = votum_verify::bytetree::Bt::parse(rest) {
        let mut again = Vec::new();
        tree.write(&mut again);
        assert_eq!(again, rest, "a parsed ByteTree writes back to its bytes");
    }
    let name = [
        "modp", "onpe100", "precomp", "p224w2", "p521", "modpw2", "p192w3", "modpw3",
    ][usize::from(*which) % 8];
    let stored = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../vectors/verificatum")
        .join(name);
    let mut files = Vec::new();
    list_files(&stored, &stored, &mut files);
    files.sort();
    let Some(target) = files.get(usize::from(*file) % files.len().max(1)) else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("votum-fuzz-vmn-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for f in &files {
        let to = dir.join(f);
        if let Some(parent) = to.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        let _ = std::fs::copy(stored.join(f), &to);
    }
    let same = std::fs::read(stored.join(target)).is_ok_and(|b| b == rest);
    let _ = std::fs::write(dir.join(target), rest);
    // read as a Verificatum session whatever its files say (as `--format verificatum`): a protInfo.xml
    // changed into something else is the session's fault, reported under V-VMN-01
    let (report, _) = votum_verify::verify_record_as(
        &dir,
        Some(votum_verify::Kind::Vmn),
        votum_verify::Options::default(),
    );
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(report.checks.len(), 7);
    // the text files are read trimmed: only ByteTree files are byte-exact
    if !same && target.extension().is_some_and(|e| e == "bt") {
        assert!(
            !report.passed(),
            "{} changed and still passed",
            target.display()
        );
    }
}

fn list_files(root: &std::path::Path, dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                list_files(root, &p, out);
            } else if let Ok(rel) = p.strip_prefix(root) {
                out.push(rel.to_path_buf());
            }
        }
    }
}

/// An ElectionGuard 2.x document as egk-ec writes it (spec/65.3): byte 0 picks what the rest is (mod 4: a
/// ballot, a manifest, an encrypted tally, a decrypted tally or challenged ballot), checked alone on P-256
/// against the stored P-256 record's manifest. A seed from the stored record gives no finding but the proofs
/// that need the record's own key and H_E.
pub fn eg2_record(data: &[u8]) {
    const MANIFEST: &[u8] =
        include_bytes!("../../../vectors/eg2/egk-ec-all-available-p256/manifest.json");
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    let _ = votum_verify::eg2::check_document(MANIFEST, which, rest);
}

/// A document of an ElectionGuard 2.1 record as votum writes it (spec/66.3): byte 0 picks (mod 6) a ballot
/// line (ordinary or pre-encrypted), the guardians' document, a tally value, an opened challenged ballot,
/// an opened uncast pre-encrypted ballot or a decrypted contest data, read and checked alone on P-256
/// against the embedded manifest with contest data of L + 1 blocks in every contest (spec/66.11).
pub fn eg21_record(data: &[u8]) {
    static MANIFEST: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    let manifest = MANIFEST.get_or_init(|| {
        let mut m: Value =
            serde_json::from_str(include_str!("../../votum-eg2/src/default_manifest.json"))
                .unwrap_or_default();
        for c in m["contests"].as_array_mut().into_iter().flatten() {
            let limit = c["votes_allowed"].as_u64().unwrap_or(1);
            c["contest_data_blocks"] = (limit + 1).into();
            c["decrypt_contest_data"] = true.into();
        }
        serde_json::to_vec(&m).unwrap_or_default()
    });
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    let _ = votum_verify::eg21::check_document(manifest, which, rest);
}

/// What a 2.1 guardian and coordinator read from other parties (spec/66.12): byte 0 picks (mod 5) a key
/// record, a share in signed ElGamal, an announcement, a reveal or answers, the rest being its JSON, read on
/// P-256 and the 4096-bit group. A key record or a share read back must write the same JSON.
pub fn eg21_party(data: &[u8]) {
    use votum_eg2::v21::record::GuardianKey;
    use votum_eg2::v21::trustee::{
        read_announce, read_answers, read_reveal, read_share, share_json,
    };
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    let Ok(doc) = serde_json::from_slice::<Value>(rest) else {
        return;
    };
    fn on<G: votum_eg2::Eg2Group>(group: &G, which: u8, doc: &Value) {
        match which % 5 {
            0 => {
                if let Ok(k) = GuardianKey::read(group, doc) {
                    let again = k.to_json(group);
                    let back = GuardianKey::read(group, &again)
                        .ok()
                        .map(|b| b.to_json(group));
                    assert_eq!(
                        back.as_ref(),
                        Some(&again),
                        "a key record written reads back"
                    );
                }
            }
            1 => {
                if let Ok(share) = read_share(group, doc) {
                    let again = share_json(group, &share);
                    let back = read_share(group, &again)
                        .ok()
                        .map(|b| share_json(group, &b));
                    assert_eq!(back.as_ref(), Some(&again), "a share written reads back");
                }
            }
            2 => {
                let _ = read_announce(group, doc);
            }
            3 => {
                let _ = read_reveal(group, doc);
            }
            _ => {
                let _ = read_answers(group, doc);
            }
        }
    }
    on(&votum_group::P256, which, &doc);
    on(&ModpGroup::eg2_4096(), which, &doc);
}

/// What a 2.x guardian reads from other parties (spec/65.9) and what the verifier reads of
/// electionguard-rust's artifacts (spec/65.10): byte 0 picks (mod 4) a guardian's public record, a
/// guardian's decryption shares, its answers (each on P-256 and the 4096-bit group), or an electionguard-rust
/// artifact set of one file, the rest being that file. A record read back must write the same JSON.
pub fn eg2_party(data: &[u8]) {
    use votum_eg2::trustee::{public_doc, read_answers, read_public, read_shares};
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    if which % 4 == 3 {
        let _ = votum_verify::egrs::check_one_key(rest);
        return;
    }
    let Ok(doc) = serde_json::from_slice::<Value>(rest) else {
        return;
    };
    fn on<G: votum_eg2::Eg2Group>(group: &G, which: u8, doc: &Value) {
        match which % 4 {
            0 => {
                if let Ok(p) = read_public(group, doc) {
                    let again = public_doc(group, &p);
                    let back = read_public(group, &again)
                        .ok()
                        .map(|b| public_doc(group, &b));
                    assert_eq!(back.as_ref(), Some(&again), "a record written reads back");
                }
            }
            1 => {
                let _ = read_shares(group, doc);
            }
            _ => {
                let _ = read_answers(group, doc);
            }
        }
    }
    on(&votum_group::P256, which, &doc);
    on(&ModpGroup::eg2_4096(), which, &doc);
}
