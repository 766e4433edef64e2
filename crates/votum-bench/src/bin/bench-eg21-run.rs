//! `make bench-eg21-memory`: one ElectionGuard 2.1 election (spec/66.7) of N ballots on P-256 in this
//! process (5 guardians, 3 decrypting, every 20th ballot challenged, the embedded manifest), its record
//! written to a temporary directory; prints each step's seconds and the process's peak resident memory
//! (Linux's VmHWM).
//!
//! Usage: `bench-eg21-run [N]` (default 100000).

use votum_eg2::election::{Options as BaseOptions, DEFAULT_MANIFEST};
use votum_eg2::v21::election::{run, Options};
use votum_group::P256;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n: usize = std::env::args().nth(1).map_or(Ok(100_000), |a| a.parse())?;
    let scratch = tempfile::tempdir()?;
    let options = Options {
        base: BaseOptions {
            guardians: 5,
            quorum: 3,
            available: vec![1, 2, 3],
            ballots: n,
            challenge_every: 20,
            seed: 1,
            device: "bench".into(),
        },
        ..Options::default()
    };
    let summary = run(
        P256,
        &scratch.path().join("record"),
        DEFAULT_MANIFEST.as_bytes(),
        &options,
    )?;
    println!(
        "p256, {n} ballots: {} cast, {} challenged",
        summary.cast, summary.challenged
    );
    for (step, seconds) in &summary.seconds {
        println!("  {step}: {seconds:.2} s");
    }
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    if let Some(line) = status.lines().find(|l| l.starts_with("VmHWM:")) {
        println!("peak resident memory: {}", line["VmHWM:".len()..].trim());
    }
    Ok(())
}
