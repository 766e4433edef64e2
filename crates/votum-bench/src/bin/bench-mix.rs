//! `make bench-mix` (second part): whole mixnet elections, step by step (CHVote's step names),
//! with votes per hour for mixing and for the full cycle (nVotes' measure).
//!
//! Usage: bench-mix GROUP VOTERS MIXERS TRUSTEES [RULE]   e.g. `bench-mix modp-2048 1000 4 4`
//! RULE is plurality (a 1-of-3 election, the default) or irv (4 candidates, ranked).
//!
//! The record is written to `$BENCH_MIX_RECORD` (default: a file in the temporary directory,
//! removed afterwards), then checked by the independent verifier (`votum_verify::mix`), timed as
//! "verification". The peak resident memory of the whole process is printed last.

use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha20Rng;
use votum_group::{Group, ModpGroup, Ristretto255};
use votum_mixnet::count::Rule;
use votum_mixnet::election::run;
use votum_mixnet::params::{random_rows, Parameters};

fn go<G: Group>(group: G, voters: usize, mixers: usize, trustees: usize, rule: &str) {
    let (rule, candidates, width) = match rule {
        "irv" => (Rule::InstantRunoff, 4, 4),
        _ => (Rule::Plurality, 3, 1),
    };
    let p = Parameters {
        election_id: format!("bench-{voters}"),
        width,
        candidates,
        rule,
        ties: votum_mixnet::count::TieRule::LowerNumber,
        mixers,
        trustees,
        quorum: trustees,
        signers: Vec::new(),
    };
    let mut rng = ChaCha20Rng::seed_from_u64(2026);
    let votes = random_rows(&p, voters, &mut rng);
    let keep = std::env::var_os("BENCH_MIX_RECORD");
    let path = keep.clone().map_or_else(
        || std::env::temp_dir().join(format!("votum-bench-mix-{}.vmix", std::process::id())),
        std::path::PathBuf::from,
    );
    let file = match std::fs::File::create(&path) {
        Ok(f) => std::io::BufWriter::with_capacity(1 << 20, f),
        Err(e) => {
            eprintln!("cannot create {}: {e}", path.display());
            std::process::exit(1);
        }
    };
    let report = match run(&group, &p, &votes, &mut rng, file, |step| {
        eprintln!("… {step}");
        std::ops::ControlFlow::Continue(())
    }) {
        Ok((report, _)) => report,
        Err(e) => {
            eprintln!("election failed: {e}");
            std::process::exit(1);
        }
    };
    drop(votes);
    eprintln!("… verification");
    let t = std::time::Instant::now();
    let (check, _) = votum_verify::verify_mix_record(&path, votum_verify::Options::default());
    let verification = t.elapsed().as_secs_f64();
    let record_bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    if keep.is_none() {
        let _ = std::fs::remove_file(&path);
    }
    if !check.passed() {
        eprintln!("the verifier refused the record: {:?}", check.not_passed());
        std::process::exit(1);
    }
    println!(
        "group={} voters={voters} mixers={mixers} trustees={trustees} rule={} width={width} threads={} cpu={}",
        group.id().name(),
        p.rule.name(),
        rayon::current_num_threads(),
        votum_bench::cpu_model()
    );
    for (step, secs) in &report.steps {
        println!("  {step:<28} {:>10.0} ms", secs * 1e3);
    }
    println!(
        "  {:<28} {:>10.0} ms  (independent verifier, from the {:.1} MB record file)",
        "verification",
        verification * 1e3,
        record_bytes as f64 / 1e6
    );
    let get = |name: &str| {
        report
            .steps
            .iter()
            .find(|(s, _)| *s == name)
            .map(|(_, t)| *t)
            .unwrap_or(f64::NAN)
    };
    let mixing = get("mixing");
    let cycle = get("total simulation time");
    println!(
        "  shuffle checks before decryption: {}; multiset of plaintexts equals the cast: {}",
        report.shuffle_checks, report.multiset_ok
    );
    println!(
        "  votes/hour: mixing {:.0}, full cycle {:.0}",
        voters as f64 * 3600.0 / mixing,
        voters as f64 * 3600.0 / cycle
    );
    println!("  peak resident memory: {}", votum_bench::peak_rss());
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 4 {
        eprintln!("usage: bench-mix GROUP VOTERS MIXERS TRUSTEES [plurality|irv]");
        std::process::exit(2);
    }
    let num = |i: usize| args[i].parse::<usize>().unwrap_or(0);
    let rule = args.get(4).map(String::as_str).unwrap_or("plurality");
    match args[0].as_str() {
        "ristretto255" => go(Ristretto255, num(1), num(2), num(3), rule),
        "modp-2048" => go(ModpGroup::rfc3526_2048(), num(1), num(2), num(3), rule),
        "eg-4096" => go(ModpGroup::eg_4096(), num(1), num(2), num(3), rule),
        other => eprintln!("unknown group {other}"),
    }
}
