//! Writes the fuzzers' starting inputs into `fuzz/seeds/<target>/`: valid encodings from every
//! group, the payloads and record of a small mix election, an archive of the verifier's vector
//! record, the ElectionGuard 1.4 vectors, the sample manifests. libFuzzer mutates from these;
//! `make fuzz` merges what it finds into `fuzz/corpus/`.
//!
//! `cargo run --release -p votum-fuzz --example seed_corpus`

use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha20Rng;
use std::fs;
use std::path::{Path, PathBuf};
use votum_group::{Group, ModpGroup, Ristretto255};
use votum_mixnet::count::Rule;
use votum_mixnet::election::run;
use votum_mixnet::params::Parameters;
use votum_mixnet::record;

type Error = Box<dyn std::error::Error>;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn put(target: &str, name: &str, bytes: &[u8]) -> Result<(), Error> {
    let dir = root().join("fuzz/seeds").join(target);
    fs::create_dir_all(&dir)?;
    fs::write(dir.join(name), bytes)?;
    Ok(())
}

fn prefixed(prefix: &[u8], body: &[u8]) -> Vec<u8> {
    let mut v = prefix.to_vec();
    v.extend_from_slice(body);
    v
}

fn group_seeds<G: Group>(group: &G, selector: u8, name: &str) -> Result<(), Error> {
    let rng = &mut ChaCha20Rng::seed_from_u64(1);
    let s = group.random_scalar(rng);
    let e = group.pow_generator(&s);
    let g = group.encode_element(group.generator());
    put(
        "group_codec",
        &format!("{name}-element"),
        &prefixed(&[selector, 0], &g),
    )?;
    put(
        "group_codec",
        &format!("{name}-scalar"),
        &prefixed(&[selector, 1], &group.encode_scalar(&s)),
    )?;
    let mut many = g.clone();
    many.extend(group.encode_element(&e));
    many.extend(group.encode_element(&group.identity()));
    put(
        "group_codec",
        &format!("{name}-many"),
        &prefixed(&[selector, 2], &many),
    )?;
    Ok(())
}

fn mix_seeds<G: Group>(group: &G, selector: u8, name: &str) -> Result<(), Error> {
    let params = Parameters {
        election_id: format!("fuzz-{name}"),
        width: 2,
        candidates: 3,
        rule: Rule::KOfN { k: 2, seats: 1 },
        ties: votum_mixnet::count::TieRule::LowerNumber,
        mixers: 2,
        trustees: 2,
        quorum: 2,
        signers: Vec::new(),
    };
    let votes: Vec<Vec<u64>> = (0..4).map(|i| vec![1 + i % 3, 1 + (i + 1) % 3]).collect();
    let rng = &mut ChaCha20Rng::seed_from_u64(2);
    let (_, bytes) = run(group, &params, &votes, rng, Vec::new(), |_| {
        std::ops::ControlFlow::Continue(())
    })?;
    put("mix_record", &format!("{name}-record"), &bytes)?;
    let (_, entries) = record::read_all(&bytes)?;
    for e in entries {
        let kind = match e.kind.as_str() {
            "parameters" => 0,
            "trustee" => 1,
            "ballots" => 2,
            "decryption" => 3,
            "result" => 4,
            "mix" => 5,
            _ => continue,
        };
        // byte 1: width 2 for the ballots, k-of-n with 3 candidates for the result
        let w = 1;
        put(
            "mix_wire",
            &format!("{name}-{}", e.name),
            &prefixed(&[selector, kind, w], &e.payload),
        )?;
        if kind == 5 {
            let (list, _) = votum_mixnet::wire::split_mix(&e.payload, group.element_len())?;
            put(
                "mix_wire",
                &format!("{name}-{}-list", e.name),
                &prefixed(&[selector, 6, w], list),
            )?;
        }
    }
    Ok(())
}

fn main() -> Result<(), Error> {
    group_seeds(&ModpGroup::eg_4096(), 0, "eg4096")?;
    group_seeds(&ModpGroup::rfc3526_2048(), 1, "modp2048")?;
    group_seeds(&ModpGroup::rfc3526_3072(), 2, "modp3072")?;
    group_seeds(&Ristretto255, 3, "ristretto255")?;
    let g = ModpGroup::eg_4096();
    let hex = votum_hash::eg::to_hex(g.generator().value());
    put("group_codec", "eg-hex", &prefixed(&[0, 3], hex.as_bytes()))?;

    mix_seeds(&Ristretto255, 0, "ristretto255")?;
    mix_seeds(&ModpGroup::rfc3526_2048(), 1, "modp2048")?;

    let tmp = std::env::temp_dir().join(format!("votum-seed-{}.votum", std::process::id()));
    votum_record::pack_dir(&root().join("vectors/verify/record"), &tmp)?;
    put("archive", "vector-record", &fs::read(&tmp)?)?;
    fs::remove_file(&tmp)?;

    let v = root().join("vectors/eg-1.4");
    let docs: [(u8, &str); 7] = [
        (0, "submitted_ballot.json"),
        (0, "ciphertext_ballot.json"),
        (1, "guardian_record_1.json"),
        (2, "tally_decryption_share_guardian_1.json"),
        (2, "compensated_tally_share.json"),
        (6, "submitted_ballot.json"),
        (9, "context.json"),
    ];
    for (kind, file) in docs {
        put(
            "eg_json",
            &format!("{kind}-{file}"),
            &prefixed(&[kind], &fs::read(v.join(file))?),
        )?;
    }
    let r = root().join("vectors/verify/record");
    put(
        "eg_json",
        "5-encrypted_tally.json",
        &prefixed(&[5], &fs::read(r.join("encrypted_tally.json"))?),
    )?;
    for entry in fs::read_dir(r.join("guardians"))? {
        let p = entry?.path();
        let name = p
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("g")
            .to_owned();
        put(
            "eg_json",
            &format!("1-{name}"),
            &prefixed(&[1], &fs::read(&p)?),
        )?;
    }

    for dir in [root().join("vectors/eg-manifests"), v] {
        for entry in fs::read_dir(&dir)? {
            let p = entry?.path();
            let name = p
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("m")
                .to_owned();
            if name.contains("manifest") {
                put("manifest", &name, &fs::read(&p)?)?;
            }
        }
    }
    Ok(())
}
