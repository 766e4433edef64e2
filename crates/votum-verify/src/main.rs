//! `votum-verify RECORD`: the verifier without Python, for auditors (spec/50).
//!
//! Exit status: 0 when every check passes, 1 when any fails or cannot be evaluated, 2 on bad usage.

use std::io::Write;
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use votum_verify::{verify_record_as, Options, Progress, Report, Status};

/// Verify an election record (an ElectionGuard 1.4 directory, a votum archive or a mix record),
/// every check.
#[derive(Parser)]
#[command(name = "votum-verify", version)]
struct Args {
    /// The record: an ElectionGuard 1.4 record directory, a votum archive, a mix, split-value or
    /// CHVote record file, a directory of IVXV decryption proofs, a Belenios archive, or a
    /// Verificatum mix-net session (protInfo.xml and its proof directories).
    record: PathBuf,
    /// The record's kind, when not detected from its files: electionguard, mix, split-value, chvote,
    /// ivxv, belenios or verificatum.
    #[arg(long, value_name = "KIND", value_parser = kind_name)]
    format: Option<votum_verify::Kind>,
    /// Print the report as JSON on standard output.
    #[arg(long)]
    json: bool,
    /// Write the recomputed hashes, keys, encrypted tally and counts to DIR/intermediates.json.
    #[arg(long, value_name = "DIR")]
    dump_intermediates: Option<PathBuf>,
    /// No progress lines on standard error.
    #[arg(long, short)]
    quiet: bool,
    /// An ElectionGuard 2.1 record on the specification's toy parameters is a test's: pass V-EG21-01 with
    /// a warning instead of failing it.
    #[arg(long)]
    allow_toy_parameters: bool,
}

fn kind_name(name: &str) -> Result<votum_verify::Kind, String> {
    votum_verify::Kind::from_name(name).ok_or_else(|| {
        let names: Vec<&str> = votum_verify::Kind::NAMES.iter().map(|(n, _)| *n).collect();
        format!("one of {}", names.join(", "))
    })
}

fn human(report: &Report) -> String {
    let mut out = format!(
        "record: {} ({}), {} ballots\n",
        report.record, report.form, report.ballots
    );
    for c in &report.checks {
        out += &format!(
            "{:<13} {:<8} {:>9}  {}\n",
            c.id,
            c.status.name(),
            c.checked,
            c.title
        );
        for f in &c.findings {
            out += &format!("{:>13}   {}: {}\n", "", f.object, f.reason);
        }
        if c.more > 0 {
            out += &format!("{:>13}   … and {} more\n", "", c.more);
        }
        for w in &c.warnings {
            out += &format!("{:>13}   warning: {}: {}\n", "", w.object, w.reason);
        }
    }
    for s in &report.soundness {
        let floor = s
            .floor
            .map(|f| format!(" (floor {f} bits)"))
            .unwrap_or_default();
        out += &format!("soundness: {}: {:.1} bits{floor}\n", s.what, s.bits);
    }
    let bad = report
        .checks
        .iter()
        .filter(|c| c.status != Status::Pass)
        .count();
    if bad == 0 {
        out += "every check passed\n";
    } else {
        out += &format!(
            "{bad} check(s) did not pass: {}\n",
            report.not_passed().join(", ")
        );
    }
    out
}

fn main() -> ExitCode {
    let args = Args::parse();
    let quiet = args.quiet;
    let mut last = 0u64;
    let mut progress = |p: Progress| {
        if quiet {
            return ControlFlow::Continue(());
        }
        match p {
            Progress::Ballots(n) if n >= last + 4096 => {
                last = n;
                eprintln!("  {n} ballots checked");
            }
            Progress::Document(kind) => eprintln!("  reading {}", kind.name()),
            Progress::Entry(name) => eprintln!("  checking {name}"),
            Progress::Ballots(_) => {}
        }
        ControlFlow::Continue(())
    };
    let (report, intermediates) = verify_record_as(
        &args.record,
        args.format,
        Options {
            progress: Some(&mut progress),
            allow_toy_parameters: args.allow_toy_parameters,
            ..Options::default()
        },
    );
    if let Some(dir) = &args.dump_intermediates {
        let text = serde_json::to_string_pretty(&intermediates.values).unwrap_or_default();
        if let Err(e) = std::fs::create_dir_all(dir)
            .and_then(|()| std::fs::write(dir.join("intermediates.json"), text))
        {
            eprintln!("votum-verify: cannot write {}: {e}", dir.display());
            return ExitCode::from(2);
        }
    }
    let text = if args.json {
        serde_json::to_string_pretty(&report).unwrap_or_default() + "\n"
    } else {
        human(&report)
    };
    let _ = std::io::stdout().write_all(text.as_bytes());
    if report.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
