//! `make bench-chvote` (votum's half): a whole CHVote election, every step of the proof of
//! concept's table under the same names, as JSON on the last line.
//!
//! Usage: bench-chvote LEVEL SHAPE VOTERS   e.g. `bench-chvote 2 single 1000`
//! SHAPE is `single` (SINGLE_VOTE) or `simple-sample` (SIMPLE_SAMPLE).
//!
//! The record is written to `$BENCH_CHVOTE_RECORD` (default: a file in the temporary directory,
//! removed afterwards) and checked by the independent verifier; both are timed apart from the
//! proof of concept's steps ("writing the record", "verification").

use votum_chvote::sim::{run, Config};
use votum_chvote::{Level, Shape};

#[allow(clippy::panic)]
fn fail(msg: &str) -> ! {
    eprintln!("bench-chvote: {msg}");
    std::process::exit(2)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 4 {
        fail("usage: bench-chvote LEVEL SHAPE VOTERS");
    }
    let level = args[1]
        .parse::<u8>()
        .ok()
        .and_then(|n| Level::from_number(n).ok())
        .unwrap_or_else(|| fail("LEVEL is 1 or 2"));
    let shape = Shape::from_name(&args[2]).unwrap_or_else(|e| fail(&e.to_string()));
    let voters = args[3]
        .parse::<usize>()
        .unwrap_or_else(|_| fail("VOTERS is a number"));
    let keep = std::env::var_os("BENCH_CHVOTE_RECORD");
    let path = keep.clone().map_or_else(
        || std::env::temp_dir().join(format!("votum-bench-chvote-{}.vchv", std::process::id())),
        std::path::PathBuf::from,
    );
    let config = Config {
        level,
        shape,
        voters,
        authorities: 4,
        record: Some(path.clone()),
        sheets: None,
    };
    let started = std::time::Instant::now();
    let report = run(&config, &mut |step| eprintln!("[bench-chvote] {step}"))
        .unwrap_or_else(|e| fail(&e.to_string()));
    let total = started.elapsed().as_secs_f64() * 1e3;
    if report.tally.counts != report.expected || report.tally.invalid != 0 {
        fail("the tally is not the votes cast");
    }
    let at = std::time::Instant::now();
    let (check, _) = votum_verify::verify_record(&path, votum_verify::Options::default());
    let verify_ms = at.elapsed().as_secs_f64() * 1e3;
    if keep.is_none() {
        let _ = std::fs::remove_file(&path);
    }
    if !check.passed() {
        fail(&format!(
            "the verifier did not pass the record: {:?}",
            check.not_passed()
        ));
    }
    println!("| step | ms |\n|---|---:|");
    for (name, ms) in &report.steps {
        println!("| {name} | {ms:.0} |");
    }
    let total = total - report.record_ms;
    println!("| total simulation time | {total:.0} |");
    println!("| (writing the record) | {:.0} |", report.record_ms);
    println!("| (verification) | {verify_ms:.0} |");
    let steps: Vec<String> = report
        .steps
        .iter()
        .map(|(n, ms)| format!("\"{n}\": {ms:.1}"))
        .chain([
            format!("\"total simulation time\": {total:.1}"),
            format!("\"(writing the record)\": {:.1}", report.record_ms),
            format!("\"(verification)\": {verify_ms:.1}"),
        ])
        .collect();
    let kernels = votum_arith::gmp_kernels::kernels().describe();
    println!("(GMP kernels: {kernels})");
    println!(
        "{{\"level\": {}, \"voters\": {voters}, \"p_bits\": {}, \"gmp_kernels\": \"{kernels}\", \"tally\": {:?}, \"steps\": {{{}}}}}",
        level.number(),
        report.p_bits,
        report.tally.counts,
        steps.join(", ")
    );
}
