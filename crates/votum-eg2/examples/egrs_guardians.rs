//! Writes `n` votum guardians' public keys (quorum `k`) in electionguard-rust's form (spec/65.10), for its
//! command line to read: `cargo run --release -p votum-eg2 --example egrs_guardians -- DIR n k` writes
//! `DIR/guardian_<i>.public_key_canonical.bin.json` (the name its `write-joint-election-public-key` reads) and
//! `DIR/guardian_<i>.public_key.json.json`. The secrets are dropped: this shows the exchange, it holds no
//! election.

use rand_chacha::ChaCha20Rng;
use rand_core::{OsRng, SeedableRng};
use serde_json::json;
use votum_eg2::ceremony::Guardian;
use votum_eg2::group::Eg2Group;
use votum_eg2::hashes::parameter_hash;
use votum_eg2::record::parameter_inputs;
use votum_group::ModpGroup;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02X}")).collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let [_, dir, n, k] = args.as_slice() else {
        return Err("usage: egrs_guardians DIR n k".into());
    };
    let (n, k): (u32, u32) = (n.parse()?, k.parse()?);
    let group = ModpGroup::eg2_4096();
    // electionguard-rust's H_P is egk-ec's and votum's on this group (version key v2.0.0)
    let hp = parameter_hash(group.protocol_version(), &parameter_inputs(&group));
    let mut rng = ChaCha20Rng::from_rng(OsRng)?;
    for i in 1..=n {
        let name = format!("votum guardian {i}");
        let public = Guardian::new(&group, &hp, &name, i, k, &mut rng).public();
        let doc = json!({
            "i": i,
            "name": name,
            "coefficient_commitments": public.commitments.iter().map(|c| hex(&group.hash_bytes(c))).collect::<Vec<_>>(),
            "coefficient_proofs": public.proofs.iter().map(|p| json!({
                "challenge": hex(&group.scalar_bytes(&p.c)),
                "response": hex(&group.scalar_bytes(&p.v)),
            })).collect::<Vec<_>>(),
        });
        std::fs::write(
            format!("{dir}/guardian_{i}.public_key_canonical.bin.json"),
            serde_json::to_string(&doc)?,
        )?;
        std::fs::write(
            format!("{dir}/guardian_{i}.public_key.json.json"),
            serde_json::to_string_pretty(&doc)?,
        )?;
    }
    println!("H_P = {}; {n} guardians written to {dir}", hex(&hp));
    Ok(())
}
