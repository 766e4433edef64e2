//! The key-ceremony artifacts microsoft/electionguard-rust writes (spec/65.10): a directory `public/` (or the
//! directory itself) of JSON files in uppercase hex, on the 2.x 4096-bit group. The checks are the first
//! four of the 2.x record (V-EG2-01…04): the standard parameters and H_P, H_M, H_B; each guardian's
//! coefficient proofs; K; H_E. electionguard-rust writes no ballots, tally or decryption from its command
//! line (its own CLI stops there; at its May 2025 head every command is a stub), so a set of its artifacts
//! is a key ceremony's record, not an election's.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use votum_arith::{to_fixed_be, Integer};
use votum_eg2::hashes::{extended_base_hash, parameter_hash, schnorr_hash};
use votum_eg2::read::{file_name, read_bytes, read_json};
use votum_eg2::Eg2Group;
use votum_group::{Group, ModpGroup};
use votum_hash::eg2::Hash;

use crate::checks::Check;
use crate::options::{Intermediates, Options};
use crate::report::{Ledger, Report};

/// The checks of a set of electionguard-rust artifacts.
pub const CHECKS: [Check; 4] = [Check::Eg2v01, Check::Eg2v02, Check::Eg2v03, Check::Eg2v04];

/// The directory holding the public artifacts: `path/public`, or `path` itself.
fn public_dir(path: &Path) -> PathBuf {
    let public = path.join("public");
    if public.is_dir() {
        public
    } else {
        path.to_owned()
    }
}

/// Whether `path` holds electionguard-rust's public artifacts: `election_parameters.json` whose fixed
/// parameters name a design-specification version, beside `hashes.json`.
pub fn is_egrs_record(path: &Path) -> bool {
    if !path.is_dir() {
        return false;
    }
    let dir = public_dir(path);
    dir.join("hashes.json").is_file()
        && read_json(&dir.join("election_parameters.json"))
            .map(|v| {
                v["fixed_parameters"]["ElectionGuard_Design_Specification_version"].is_object()
            })
            .unwrap_or(false)
}

type Stop = (Check, String, String);

fn at(check: Check, object: &str) -> impl Fn(String) -> Stop + '_ {
    move |reason| (check, object.to_owned(), reason)
}

/// An uppercase-hex number as electionguard-rust writes it.
fn hexnum(v: &Value, field: &str) -> Result<Integer, String> {
    v[field]
        .as_str()
        .and_then(|s| Integer::from_str_radix(s, 16).ok())
        .ok_or_else(|| format!("`{field}` is not hexadecimal"))
}

fn hash_field(v: &Value, field: &str) -> Result<[u8; 32], String> {
    let n = hexnum(v, field)?;
    if n.significant_bits() > 256 {
        return Err(format!("`{field}` is longer than 32 bytes"));
    }
    to_fixed_be(&n, 32)
        .try_into()
        .map_err(|_| format!("`{field}` is not 32 bytes"))
}

/// An element of the group, read from hex: in [1, p) and of order q.
fn element(
    group: &ModpGroup,
    v: &Value,
    field: &str,
) -> Result<<ModpGroup as Group>::Element, String> {
    let n = hexnum(v, field)?;
    let e = group
        .read_element(&to_fixed_be(&n, 512))
        .map_err(|e| format!("`{field}` is {e}"))?;
    if !group.all_members(&[&e]) {
        return Err(format!("`{field}` is not in the order-q subgroup"));
    }
    Ok(e)
}

/// A guardian's public key as read: i, name, commitments K_ij and proofs (c, v).
struct PublicKey {
    i: u32,
    name: String,
    commitments: Vec<<ModpGroup as Group>::Element>,
    proofs: Vec<(<ModpGroup as Group>::Scalar, <ModpGroup as Group>::Scalar)>,
}

fn public_key(group: &ModpGroup, v: &Value) -> Result<PublicKey, String> {
    let i = v["i"]
        .as_u64()
        .and_then(|i| u32::try_from(i).ok())
        .ok_or("`i` is not a guardian number")?;
    let commitments = v["coefficient_commitments"]
        .as_array()
        .ok_or("no `coefficient_commitments`")?
        .iter()
        .map(|c| element(group, &json!({"k": c}), "k"))
        .collect::<Result<Vec<_>, _>>()?;
    let scalar = |p: &Value, field: &str| -> Result<_, String> {
        let n = hexnum(p, field)?;
        if &n >= group.order() {
            return Err(format!("a proof's `{field}` is not below q"));
        }
        Ok(group.scalar_from_integer(&n))
    };
    let proofs = v["coefficient_proofs"]
        .as_array()
        .ok_or("no `coefficient_proofs`")?
        .iter()
        .map(|p| Ok((scalar(p, "challenge")?, scalar(p, "response")?)))
        .collect::<Result<Vec<_>, String>>()?;
    Ok(PublicKey {
        i,
        name: v["name"].as_str().unwrap_or("").to_owned(),
        commitments,
        proofs,
    })
}

/// The coefficients j of guardian `i`'s key whose proof does not verify: h = g^v K_ij^c must give
/// c = H(H_P; 0x10, i, j, K_ij, h).
fn failed_proofs(group: &ModpGroup, hp: &[u8; 32], i: u32, key: &PublicKey) -> Vec<usize> {
    key.commitments
        .iter()
        .zip(&key.proofs)
        .enumerate()
        .filter(|(j, (kij, (c, v)))| {
            let h = group.op(&group.pow_generator(v), &group.pow(kij, c));
            group.to_challenge(&schnorr_hash(group, hp, i, *j as u32, kij, &h)) != *c
        })
        .map(|(j, _)| j)
        .collect()
}

/// Verifies a set of electionguard-rust's public artifacts (spec/65.10).
pub fn verify_egrs_record(path: &Path, _options: Options<'_>) -> (Report, Intermediates) {
    let mut ledger = Ledger::new(&CHECKS);
    let mut out = Intermediates::default();
    if let Err((check, object, reason)) = walk(&public_dir(path), &mut ledger, &mut out) {
        ledger.error(check, &object, reason);
    }
    (
        ledger.finish(path.display().to_string(), "electionguard-rust", 0),
        out,
    )
}

fn walk(dir: &Path, ledger: &mut Ledger, out: &mut Intermediates) -> Result<(), Stop> {
    let group = ModpGroup::eg2_4096();
    // V-EG2-01: the standard parameters, H_P, H_M, H_B
    let params = read_json(&dir.join("election_parameters.json"))
        .map_err(at(Check::Eg2v01, "election_parameters.json"))?;
    let fixed = &params["fixed_parameters"];
    let p01 = at(Check::Eg2v01, "election_parameters.json");
    let (p, q, g) = (
        hexnum(&fixed["group"], "p").map_err(&p01)?,
        hexnum(&fixed["field"], "q").map_err(&p01)?,
        hexnum(&fixed["group"], "g").map_err(&p01)?,
    );
    ledger.examined(Check::Eg2v01, 1);
    for (name, ok) in [
        ("p", &p == group.p()),
        ("q", &q == group.order()),
        ("g", &g == group.generator().value()),
    ] {
        if !ok {
            ledger.fail(
                Check::Eg2v01,
                "election_parameters.json",
                format!("{name} is not the 2.x standard parameters' {name} (spec/65.1)"),
            );
        }
    }
    let number = fixed["ElectionGuard_Design_Specification_version"]["number"]
        .as_array()
        .map(|v| v.iter().filter_map(Value::as_u64).collect::<Vec<_>>())
        .unwrap_or_default();
    let version = match number.as_slice() {
        [major, minor] => format!("v{major}.{minor}.0"),
        [major, minor, patch] => format!("v{major}.{minor}.{patch}"),
        _ => return Err(p01("no design-specification version number".into())),
    };
    let varying = &params["varying_parameters"];
    let count = |field: &str| -> Result<u32, Stop> {
        varying[field]
            .as_u64()
            .and_then(|v| u32::try_from(v).ok())
            .filter(|v| *v >= 1)
            .ok_or_else(|| p01(format!("`{field}` is not a positive count")))
    };
    let (n, k) = (count("n")?, count("k")?);
    let text = |field: &str| varying[field].as_str().unwrap_or("").to_owned();
    let (date, info) = (text("date"), text("info"));
    let hp = parameter_hash(
        &version,
        &[
            to_fixed_be(&p, 512),
            to_fixed_be(&q, 32),
            to_fixed_be(&g, 512),
        ],
    );
    let manifest = read_bytes(&dir.join("election_manifest_canonical.bin"))
        .map_err(at(Check::Eg2v01, "election_manifest_canonical.bin"))?;
    // electionguard-rust's H_M and H_B (spec/65.10): the canonical manifest bytes without a length, and
    // H_B over n, k, the date and the info string before H_M
    let hm = Hash::new(&hp).byte(0x01).bytes(&manifest).finish();
    let hb = Hash::new(&hp)
        .byte(0x02)
        .u32(n)
        .u32(k)
        .bytes(date.as_bytes())
        .bytes(info.as_bytes())
        .bytes(&hm)
        .finish();
    let hashes = read_json(&dir.join("hashes.json")).map_err(at(Check::Eg2v01, "hashes.json"))?;
    for (name, want) in [("h_p", hp), ("h_m", hm), ("h_b", hb)] {
        let got = hash_field(&hashes, name).map_err(at(Check::Eg2v01, "hashes.json"))?;
        if got != want {
            ledger.fail(
                Check::Eg2v01,
                "hashes.json",
                format!("{name} is not the one the parameters and manifest give"),
            );
        }
    }
    out.values
        .insert("H_P".into(), json!(crate::report::hex(&hp)));
    out.values
        .insert("H_B".into(), json!(crate::report::hex(&hb)));

    // V-EG2-02: each guardian's public key, its k commitments and their proofs; one key per guardian 1…n
    let mut keys: BTreeMap<u32, (String, Value)> = BTreeMap::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| (Check::Eg2v02, dir.display().to_string(), e.to_string()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = file_name(p);
            name.starts_with("guardian_") && name.contains(".public_key")
        })
        .collect();
    files.sort();
    for f in &files {
        let name = file_name(f);
        let doc = read_json(f).map_err(at(Check::Eg2v02, &name))?;
        let i = doc["i"].as_u64().unwrap_or(0) as u32;
        if let Some((other, seen)) = keys.get(&i) {
            if *seen != doc {
                ledger.fail(
                    Check::Eg2v02,
                    &name,
                    format!("guardian {i}'s key differs from the one in {other}"),
                );
            }
            continue;
        }
        keys.insert(i, (name, doc));
    }
    if keys.keys().copied().collect::<Vec<_>>() != (1..=n).collect::<Vec<_>>() {
        ledger.fail(
            Check::Eg2v02,
            "public",
            format!(
                "the guardians' keys are of guardians {:?}, not 1…{n}",
                keys.keys().collect::<Vec<_>>()
            ),
        );
    }
    let mut joint = group.identity();
    for (i, (name, doc)) in &keys {
        ledger.examined(Check::Eg2v02, 1);
        let key = match public_key(&group, doc) {
            Ok(key) => key,
            Err(e) => {
                ledger.fail(Check::Eg2v02, name, e);
                continue;
            }
        };
        if key.i != *i || key.commitments.len() != k as usize || key.proofs.len() != k as usize {
            ledger.fail(
                Check::Eg2v02,
                name,
                format!(
                    "{} commitments and {} proofs, the quorum is {k}",
                    key.commitments.len(),
                    key.proofs.len()
                ),
            );
            continue;
        }
        if key.commitments.iter().any(|c| *c == group.identity()) {
            ledger.fail(
                Check::Eg2v02,
                name,
                format!("{} commits to a coefficient 0", key.name),
            );
        }
        for j in failed_proofs(&group, &hp, *i, &key) {
            ledger.fail(
                Check::Eg2v02,
                name,
                format!("{}'s proof of coefficient {j} does not verify", key.name),
            );
        }
        joint = group.op(&joint, &key.commitments[0]);
    }

    // V-EG2-03: K is the product of the guardians' K_i0
    let file = "joint_election_public_key.json";
    let doc = read_json(&dir.join(file)).map_err(at(Check::Eg2v03, file))?;
    let k_rec =
        element(&group, &doc, "joint_election_public_key").map_err(at(Check::Eg2v03, file))?;
    ledger.examined(Check::Eg2v03, 1);
    if k_rec != joint {
        ledger.fail(
            Check::Eg2v03,
            file,
            "K is not the product of the guardians' first commitments",
        );
    }

    // V-EG2-04: H_E = H(H_B; 0x12, K)
    let file = "hashes_ext.json";
    let doc = read_json(&dir.join(file)).map_err(at(Check::Eg2v04, file))?;
    let he = hash_field(&doc, "h_e").map_err(at(Check::Eg2v04, file))?;
    ledger.examined(Check::Eg2v04, 1);
    if he != extended_base_hash(&group, &hb, &k_rec) {
        ledger.fail(Check::Eg2v04, file, "H_E is not H(H_B; 0x12, K)");
    }
    out.values
        .insert("H_E".into(), json!(crate::report::hex(&he)));

    // the pre-voting data, where written, must repeat the same hashes, K and H_E
    let file = "pre_voting_data.json";
    if dir.join(file).is_file() {
        let doc = read_json(&dir.join(file)).map_err(at(Check::Eg2v04, file))?;
        let same = hash_field(&doc["hashes"], "h_b").ok() == Some(hb)
            && hash_field(&doc["hashes_ext"], "h_e").ok() == Some(he)
            && element(&group, &doc["public_key"], "joint_election_public_key").ok() == Some(k_rec);
        if !same {
            ledger.fail(
                Check::Eg2v04,
                file,
                "its H_B, K or H_E is not the one the other artifacts give",
            );
        }
    }
    Ok(())
}

/// One guardian's public key file as electionguard-rust writes it, checked alone against the 4096-bit group
/// (the fuzz target's entry): how many of its coefficient proofs verify under the standard H_P.
pub fn check_one_key(bytes: &[u8]) -> usize {
    let group = ModpGroup::eg2_4096();
    let Ok(doc) = serde_json::from_slice::<Value>(bytes) else {
        return 0;
    };
    let Ok(key) = public_key(&group, &doc) else {
        return 0;
    };
    let hp = parameter_hash(
        "v2.0.0",
        &[
            to_fixed_be(group.p(), 512),
            to_fixed_be(group.order(), 32),
            to_fixed_be(group.generator().value(), 512),
        ],
    );
    key.proofs.len() - failed_proofs(&group, &hp, key.i, &key).len()
}
