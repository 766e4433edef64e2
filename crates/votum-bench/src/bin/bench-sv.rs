//! `make bench-sv`: split-value elections in one process (spec/97), the thesis's default election
//! (one race of two candidates and a 16-character write-in, a 3×3 grid) at the sizes given on the
//! command line, with 2m = 132 copies (the fewest at the verifier's floor of 128 bits, spec/97.10;
//! `BENCH_SV_COPIES` sets another 2m, 24 being the thesis's): wall time per phase, the verifier's
//! time, the record's size and the process's peak memory. Usage: `bench-sv N [N …]` (each N a
//! number of voters).

use std::time::Instant;

use votum_splitvalue::election::{random_values, run, RunOptions, Seeds};
use votum_splitvalue::params::{Params, RaceSpec, CUT_SOUNDNESS_FLOOR, DEFAULT_COPIES};
use votum_verify::Options;

fn peak_rss_mib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1).map(str::to_owned))
        })
        .and_then(|kb| kb.parse::<u64>().ok())
        .map_or(0, |kb| kb / 1024)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse())
        .collect::<Result<_, _>>()?;
    let copies = match std::env::var("BENCH_SV_COPIES") {
        Ok(v) => v.parse()?,
        Err(_) => DEFAULT_COPIES,
    };
    let params = Params::new(
        0,
        2,
        copies,
        &[RaceSpec {
            id: "President".into(),
            candidates: vec!["Smith".into(), "Jones".into()],
            write_in: 16,
        }],
    )?;
    let dir = std::env::temp_dir().join(format!("votum-bench-sv-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    println!(
        "# split-value, 3x3 grid, 2m = {copies} ({:.1} bits), one race (2 candidates + 16-character write-in), {} threads",
        params.cut_soundness_bits(),
        rayon::current_num_threads()
    );
    for n in sizes {
        let values = random_values(&params, n, &[7; 32]);
        let path = dir.join(format!("sv-{n}.votum"));
        let file = std::fs::File::create(&path)?;
        let t = Instant::now();
        let summary = run(
            &params,
            "bench-sv",
            &values,
            RunOptions {
                seeds: Seeds::seeded([n as u8; 32]),
                spill: Some(std::env::temp_dir()),
                ..RunOptions::default()
            },
            file,
        )?;
        let election = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let (report, _) = votum_verify::sv::verify_sv_record(&path, Options::default());
        let verify = t.elapsed().as_secs_f64();
        // below the floor the verifier refuses the parameters (V-SV-02), and nothing else may fail
        let weak = params.cut_soundness_bits() < CUT_SOUNDNESS_FLOOR;
        if !(report.passed() || weak && report.not_passed() == ["V-SV-02"]) {
            return Err(format!(
                "the record of {n} voters does not verify: {:?}",
                report.not_passed()
            )
            .into());
        }
        let phases: Vec<String> = summary
            .phases
            .iter()
            .map(|(p, d)| format!("{p} {:.2}s", d.as_secs_f64()))
            .collect();
        println!(
            "N={n}: election {election:.2}s ({}), verify {verify:.2}s, total {:.2}s; record {:.1} MB in {} entries ({:.0} bytes/voter); peak RSS {} MiB",
            phases.join(", "),
            election + verify,
            summary.bytes as f64 / 1e6,
            summary.entries,
            summary.bytes as f64 / n as f64,
            peak_rss_mib()
        );
        std::fs::remove_file(&path)?;
    }
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}
