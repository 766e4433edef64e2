//! `make bench-eg21` (its Rust half): ElectionGuard 2.x encryption and the whole pipeline in one process
//! (spec/65.8), on P-256 and the 2.x 4096-bit group.
//!
//! - Encryption on ONE thread: ballots of one contest (one of ten options, so every selection carries a
//!   0/1 range proof and the contest a 0…1 proof), µs per selection with its proof, the contest's proof,
//!   contest data and confirmation code shared out over its ten selections. Five runs, min and median.
//! - The whole election at N ballots on every core (key ceremony, encryption with the record written,
//!   tally, decryption, challenged ballots), then the record verified by votum-verify in the same process.
//!
//! Usage: `bench-eg21 [N]` (default 1000).

use std::time::Instant;

use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha20Rng;
use votum_bench::{cpu_model, per_op_us};
use votum_eg2::election::{run, Options, DEFAULT_MANIFEST};
use votum_eg2::encrypt::{Device, PlainBallot, PlainContest, State};
use votum_eg2::{read_manifest, Eg2Group};
use votum_group::{ModpGroup, P256};

const OPTIONS: usize = 10;

fn manifest() -> String {
    let options: Vec<String> = (1..=OPTIONS)
        .map(|i| {
            format!(r#"{{"object_id": "o{i}", "sequence_order": {i}, "candidate_id": "c{i}"}}"#)
        })
        .collect();
    format!(
        r#"{{"contests": [{{"object_id": "race", "sequence_order": 1, "electoral_district_id": "all",
        "votes_allowed": 1, "option_selection_limit": 1, "ballot_selections": [{}]}}],
        "ballot_styles": [{{"object_id": "s", "geopolitical_unit_ids": ["all"]}}]}}"#,
        options.join(",")
    )
}

fn encryption<G: Eg2Group>(
    group: G,
    name: &str,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let doc: serde_json::Value = serde_json::from_str(&manifest())?;
    let m = read_manifest(&doc)?;
    let k = group.pow_generator(&group.scalar_from_u64(123_456_789));
    let device = Device::new(group, k, [5u8; 32], &m, "bench");
    let ballots: Vec<PlainBallot> = (0..40)
        .map(|i| {
            let mut votes = vec![0u32; OPTIONS];
            votes[i % OPTIONS] = 1;
            PlainBallot {
                id: format!("b{i}"),
                style: "s".into(),
                contests: [(
                    "race".to_owned(),
                    PlainContest {
                        votes,
                        write_ins: Vec::new(),
                    },
                )]
                .into(),
            }
        })
        .collect();
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let mut failed = None;
    let (min, median) = per_op_us(5, ballots.len() * OPTIONS, || {
        for b in &ballots {
            if let Err(e) = device.encrypt(b, State::Cast, 0, &mut rng) {
                failed = Some(e);
            }
        }
    });
    if let Some(e) = failed {
        return Err(e.into());
    }
    println!(
        "{name}: encryption on one thread, one-of-{OPTIONS} contest: {min:.1} µs per selection min, {median:.1} median"
    );
    Ok(())
}

fn pipeline<G: Eg2Group>(group: G, name: &str, n: usize) -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::temp_dir().join(format!("votum-bench-eg21-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let options = Options {
        ballots: n,
        guardians: 5,
        quorum: 3,
        available: vec![1, 2, 4],
        challenge_every: 20,
        ..Options::default()
    };
    let t = Instant::now();
    let summary = run(group, &dir, DEFAULT_MANIFEST.as_bytes(), &options)?;
    let total = t.elapsed().as_secs_f64();
    let steps: Vec<String> = summary
        .seconds
        .iter()
        .map(|(s, secs)| format!("{s} {secs:.2} s"))
        .collect();
    let t = Instant::now();
    let (report, _) = votum_verify::verify_record(&dir, votum_verify::Options::default());
    let verify = t.elapsed().as_secs_f64();
    let bytes: u64 = walk(&dir);
    println!(
        "{name}: election of {n} ballots ({} cast, {} challenged) on {} threads: {total:.2} s ({}); \
         record {:.1} MiB ({:.1} KiB per ballot); votum-verify in-process {verify:.2} s, {}",
        summary.cast,
        summary.challenged,
        rayon::current_num_threads(),
        steps.join(", "),
        bytes as f64 / (1 << 20) as f64,
        bytes as f64 / 1024.0 / n as f64,
        if report.passed() { "every check passed" } else { "FAILED" }
    );
    let _ = std::fs::remove_dir_all(&dir);
    if !report.passed() {
        return Err("the record did not verify".into());
    }
    Ok(())
}

fn walk(dir: &std::path::Path) -> u64 {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| {
            let p = e.path();
            if p.is_dir() {
                walk(&p)
            } else {
                e.metadata().map_or(0, |m| m.len())
            }
        })
        .sum()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // `bench-eg21 encryption`: the one-thread encryption figures only (for a profiler)
    if std::env::args().nth(1).as_deref() == Some("encryption") {
        let one = rayon::ThreadPoolBuilder::new().num_threads(1).build()?;
        one.install(|| encryption(P256, "p256"))
            .map_err(|e| e.to_string())?;
        return Ok(());
    }
    let n: usize = std::env::args().nth(1).map_or(Ok(1000), |a| a.parse())?;
    println!(
        "# ElectionGuard 2.x (egk-ec profile), {} — {} cores",
        cpu_model(),
        rayon::current_num_threads()
    );
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build()?;
    one.install(|| encryption(P256, "p256"))
        .map_err(|e| e.to_string())?;
    one.install(|| encryption(ModpGroup::eg2_4096(), "eg2-4096"))
        .map_err(|e| e.to_string())?;
    pipeline(P256, "p256", n)?;
    pipeline(ModpGroup::eg2_4096(), "eg2-4096", n)?;
    Ok(())
}
