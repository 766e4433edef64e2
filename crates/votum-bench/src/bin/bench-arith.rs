//! `make bench-arith`: modular exponentiation against raw GMP, fixed-base tables,
//! multi-exponentiation, ristretto255. Prints a table and writes bench-results/arith-rust.json.

use curve25519_dalek::ristretto::RistrettoPoint;
use curve25519_dalek::scalar::Scalar;
use curve25519_dalek::traits::VartimeMultiscalarMul;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha20Rng;
use rug::Integer;
use serde_json::json;
use std::hint::black_box;
use votum_arith::{multi_pow, multi_pow_parallel, FixedBaseTable, SecretBaseTable};
use votum_bench::{cpu_model, per_op_us};
use votum_group::{Group, ModpGroup, Ristretto255};

fn main() {
    let runs: usize = std::env::var("BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let mut rng = ChaCha20Rng::seed_from_u64(2026);
    let eg = ModpGroup::eg_4096();
    let m = eg.modulus().clone();
    let p = eg.p().clone();
    let scalars: Vec<_> = (0..200).map(|_| eg.random_scalar(&mut rng)).collect();
    let exps: Vec<Integer> = scalars.iter().map(|s| s.value().clone()).collect();
    let bases: Vec<Integer> = scalars
        .iter()
        .map(|s| eg.pow_generator(s).value().clone())
        .collect();
    let mut results = serde_json::Map::new();
    let mut row = |name: &str, (min, med): (f64, f64)| {
        println!("| {name} | {min:.1} | {med:.1} |");
        results.insert(name.to_owned(), json!({"min_us": min, "median_us": med}));
    };
    println!(
        "machine: {} ({} cores), runs: {runs}",
        cpu_model(),
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    );
    println!("| operation (4096-bit p, 256-bit exponent unless noted) | min µs/op | median µs/op |\n|---|---|---|");

    let n = 100;
    row(
        "raw GMP mpz_powm (rug pow_mod_ref)",
        per_op_us(runs, n, || {
            for i in 0..n {
                black_box(
                    bases[i]
                        .pow_mod_ref(&exps[i], &p)
                        .map(Integer::from)
                        .unwrap_or_default(),
                );
            }
        }),
    );
    row(
        "votum Modulus::pow",
        per_op_us(runs, n, || {
            for i in 0..n {
                black_box(m.pow(&bases[i], &exps[i]).unwrap_or_default());
            }
        }),
    );
    row(
        "raw GMP mpz_powm_sec (rug secure_pow_mod_ref)",
        per_op_us(runs, n, || {
            for i in 0..n {
                black_box(Integer::from(bases[i].secure_pow_mod_ref(&exps[i], &p)));
            }
        }),
    );
    row(
        "votum Modulus::pow_secret (constant-time window 5)",
        per_op_us(runs, n, || {
            for i in 0..n {
                black_box(m.pow_secret(&bases[i], &exps[i]).unwrap_or_default());
            }
        }),
    );
    for rows in [5u32, 6, 7] {
        let secret_table = SecretBaseTable::new(&m, &bases[0], 256, rows)
            .unwrap_or_else(|_| unreachable_secret_table());
        row(
            &format!("votum constant-time comb, one base, {rows} rows: per exponent"),
            per_op_us(runs, n, || {
                for e in &exps[..n] {
                    black_box(secret_table.pow(e).unwrap_or_default());
                }
            }),
        );
        row(
            &format!("votum constant-time comb, {rows} rows: table build"),
            per_op_us(runs, 10, || {
                for b in &bases[..10] {
                    black_box(
                        SecretBaseTable::new(&m, b, 256, rows)
                            .unwrap_or_else(|_| unreachable_secret_table()),
                    );
                }
            }),
        );
    }
    let table = FixedBaseTable::new(&m, eg.generator().value(), 256)
        .unwrap_or_else(|_| unreachable_table());
    println!("(fixed-base window: {} bits)", table.window());
    row(
        "votum fixed-base table (g)",
        per_op_us(runs, 200, || {
            for e in &exps {
                black_box(table.pow(e).unwrap_or_default());
            }
        }),
    );
    row(
        "votum product of two powers (Straus)",
        per_op_us(runs, n / 2, || {
            for i in 0..n / 2 {
                black_box(
                    multi_pow(&m, &bases[2 * i..2 * i + 2], &exps[2 * i..2 * i + 2])
                        .unwrap_or_default(),
                );
            }
        }),
    );
    let table_build = per_op_us(1.max(runs / 2), 1, || {
        black_box(FixedBaseTable::new(&m, &bases[0], 256).unwrap_or_else(|_| unreachable_table()));
    });
    row("fixed-base table build (one base, window 12)", table_build);

    // the batch of a decryption's share proofs (5 guardians, 2 missing, 4 selections): 72 bases
    // with 128-bit weights, 36 with 384-bit products, 13 with 256-bit exponents
    let (mixed_b, mixed_e): (Vec<Integer>, Vec<Integer>) = (0..121usize)
        .map(|i| {
            let bits = match i {
                0..=71 => 128u32,
                72..=107 => 384,
                _ => 256,
            };
            let e =
                Integer::from(&exps[i % exps.len()] * &exps[(i + 1) % exps.len()]).keep_bits(bits);
            (bases[i % bases.len()].clone(), e)
        })
        .unzip();
    row(
        "multi-exponentiation, a share batch (72×128 + 36×384 + 13×256 bits), whole, 1 thread",
        per_op_us(runs, 1, || {
            black_box(multi_pow(&m, &mixed_b, &mixed_e).unwrap_or_default());
        }),
    );
    row(
        "multi-exponentiation, the same share batch, whole, all threads",
        per_op_us(runs, 1, || {
            black_box(multi_pow_parallel(&m, &mixed_b, &mixed_e).unwrap_or_default());
        }),
    );

    // N-base multi-exponentiation, per base
    for big_n in [1_000usize, 100_000] {
        let reps = if big_n > 10_000 { 1 } else { runs };
        let bs: Vec<Integer> = (0..big_n).map(|i| bases[i % bases.len()].clone()).collect();
        let es: Vec<Integer> = (0..big_n)
            .map(|i| &exps[i % exps.len()] ^ Integer::from(i))
            .collect();
        row(
            &format!("multi-exponentiation N={big_n}, per base (1 thread)"),
            per_op_us(reps, big_n, || {
                black_box(multi_pow(&m, &bs, &es).unwrap_or_default());
            }),
        );
    }

    // batch of 10,000 fixed-base exponentiations, the Rust loop the Python batch is compared with
    let batch: Vec<_> = (0..10_000).map(|_| eg.random_scalar(&mut rng)).collect();
    let g = eg.clone();
    row(
        "Rust loop: 10,000 g^s via pow_generator (1 thread), per item",
        per_op_us(runs.min(3), batch.len(), || {
            for s in &batch {
                black_box(g.pow_generator(s));
            }
        }),
    );

    // ristretto255
    let r = Ristretto255;
    let rs: Vec<Scalar> = (0..1000).map(|_| r.random_scalar(&mut rng)).collect();
    let pts: Vec<RistrettoPoint> = rs.iter().map(|s| r.pow_generator(s)).collect();
    row(
        "ristretto255 fixed-base (basepoint table)",
        per_op_us(runs, rs.len(), || {
            for s in &rs {
                black_box(r.pow_generator(s));
            }
        }),
    );
    row(
        "ristretto255 variable-base",
        per_op_us(runs, rs.len(), || {
            for (pt, s) in pts.iter().zip(rs.iter().rev()) {
                black_box(r.pow(pt, s));
            }
        }),
    );
    let rbatch: Vec<Scalar> = (0..10_000).map(|_| r.random_scalar(&mut rng)).collect();
    row(
        "Rust loop: 10,000 ristretto255 g^s (1 thread), per item",
        per_op_us(runs * 2, rbatch.len(), || {
            for s in &rbatch {
                black_box(r.pow_generator(s));
            }
        }),
    );
    let n4 = 10_000;
    let mpts: Vec<RistrettoPoint> = (0..n4)
        .map(|i| pts[i % pts.len()] + pts[(i * 7) % pts.len()])
        .collect();
    let mss: Vec<Scalar> = (0..n4)
        .map(|i| rs[(i * 13) % rs.len()] + Scalar::from(i as u64))
        .collect();
    row(
        "ristretto255 multiscalar N=10,000, per point",
        per_op_us(runs, n4, || {
            black_box(RistrettoPoint::vartime_multiscalar_mul(&mss, &mpts));
        }),
    );

    let out = json!({
        "cpu": cpu_model(),
        "nproc": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        "runs": runs,
        "results": results,
    });
    let _ = std::fs::create_dir_all("bench-results");
    let _ = std::fs::write(
        "bench-results/arith-rust.json",
        serde_json::to_string_pretty(&out).unwrap_or_default(),
    );
}

#[allow(clippy::panic)]
fn unreachable_table() -> FixedBaseTable {
    panic!("table parameters refused")
}

#[allow(clippy::panic)]
fn unreachable_secret_table() -> SecretBaseTable {
    panic!("constant-time comb parameters rejected")
}
