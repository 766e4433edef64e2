//! `make bench-mix` (first part): per-ciphertext cost of one shuffle — re-encrypt and permute,
//! prove, verify — and of one trustee's decryption share with its batched proof (and that
//! proof's check), for each group, at the thread count of `RAYON_NUM_THREADS`.
//!
//! Usage: bench-shuffle [GROUP=N ...]   (default: ristretto255=10000 modp-2048=1000 eg-4096=500)

use std::time::Instant;

use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha20Rng;
use votum_elgamal::{Ciphertext, KeyPair, PublicKey};
use votum_group::{Group, ModpGroup, Ristretto255};
use votum_shuffle::{Generators, PreparedShuffle, Rows, ShuffleProof};

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

fn run<G: Group>(group: G, n: usize, runs: usize) {
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let kp = KeyPair::generate(&group, &mut rng);
    let t = Instant::now();
    let pk = PublicKey::with_table(&group, kp.public.element().clone())
        .unwrap_or_else(|_| unreachable!());
    let table_ms = ms(t);
    let t = Instant::now();
    let gens = Generators::derive(&group, b"bench generators", n);
    let gens_ms = ms(t);
    let cts: Vec<Ciphertext<G>> = (0..n as u64)
        .map(|i| {
            Ciphertext::encrypt_element(
                &group,
                &pk,
                group.generator(),
                &group.scalar_from_u64(i + 1),
            )
        })
        .collect();
    let inputs = match Rows::new(1, cts) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{e}");
            return;
        }
    };
    let _ = inputs.digest(&group);
    let mut offline = Vec::new();
    let mut online = Vec::new();
    let mut verify = Vec::new();
    let mut codec = Vec::new();
    let mut decrypt = Vec::new();
    let mut check_share = Vec::new();
    let mut plain = Vec::new();
    let pads: Vec<G::Element> = inputs.ciphertexts().iter().map(|c| c.pad.clone()).collect();
    let public_share = kp.public.element().clone();
    for _ in 0..runs {
        // what a mixer costs without proving: fresh nonces, re-encryption and a permutation
        let t = Instant::now();
        let nonces: Vec<G::Scalar> = (0..n).map(|_| group.random_scalar(&mut rng)).collect();
        let mut mixed: Vec<Ciphertext<G>> = {
            use rayon::prelude::*;
            inputs
                .ciphertexts()
                .par_iter()
                .zip(nonces.par_iter())
                .map(|(c, r)| c.reencrypt(&group, &pk, r))
                .collect()
        };
        for i in (1..n).rev() {
            let j = (rand_chacha::rand_core::RngCore::next_u64(&mut rng) % (i as u64 + 1)) as usize;
            mixed.swap(i, j);
        }
        plain.push(ms(t));
        drop(mixed);
        let t = Instant::now();
        let prepared = match PreparedShuffle::prepare(&group, &pk, &gens, n, 1, &mut rng) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("{e}");
                return;
            }
        };
        offline.push(ms(t));
        let t = Instant::now();
        let (out, proof) = match prepared.apply(&inputs, b"bench") {
            Ok(x) => x,
            Err(e) => {
                eprintln!("{e}");
                return;
            }
        };
        online.push(ms(t));
        let t = Instant::now();
        let bytes = proof.encode(&group);
        let out_bytes = out.encode(&group);
        let proof = ShuffleProof::decode(&group, &bytes, n, 1, &mut rng);
        let out = Rows::decode(&group, &out_bytes, &mut rng);
        codec.push(ms(t));
        let (Ok(proof), Ok(out)) = (proof, out) else {
            eprintln!("decode failed");
            return;
        };
        let t = Instant::now();
        let ok = proof.verify(
            &group,
            pk.element(),
            &gens,
            b"bench",
            &inputs,
            &out,
            &mut rng,
        );
        verify.push(ms(t));
        if let Err(e) = ok {
            eprintln!("verification failed: {e}");
            return;
        }
        let t = Instant::now();
        let share =
            votum_mixnet::election::decrypt_share(&group, 1, &kp.secret, b"bench", &pads, &mut rng);
        decrypt.push(ms(t));
        let t = Instant::now();
        let ok = share.and_then(|s| {
            votum_mixnet::decrypt::verify_share(&group, &public_share, b"bench", &pads, &s)
        });
        check_share.push(ms(t));
        if let Err(e) = ok {
            eprintln!("decryption share failed: {e}");
            return;
        }
    }
    let stat = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        (v[0], v[v.len() / 2])
    };
    let per = |x: f64| x * 1e3 / n as f64;
    println!(
        "{:<13} N={:<6} threads={} pk table {:.0} ms, generators {:.0} ms ({:.1} µs each)",
        group.id().name(),
        n,
        rayon::current_num_threads(),
        table_ms,
        gens_ms,
        per(gens_ms)
    );
    for (name, v) in [
        ("re-encrypt + permute alone (no proof)", &mut plain),
        ("offline (commitment, re-encryption factors)", &mut offline),
        ("online (shuffle + proof)", &mut online),
        ("encode + decode proof and output", &mut codec),
        ("verify", &mut verify),
        ("decrypt with proof (one trustee's share)", &mut decrypt),
        ("check that share's proof", &mut check_share),
    ] {
        let (min, med) = stat(v);
        println!(
            "  {name:<44} min {:>9.1} ms  median {:>9.1} ms  = {:>8.1} µs/ciphertext (min)",
            min,
            med,
            per(min)
        );
    }
    let total = stat(&mut offline).0 + stat(&mut online).0;
    println!(
        "  {:<44} {:>8.1} µs/ciphertext",
        "shuffle + prove (offline + online)",
        per(total)
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let jobs: Vec<(String, usize)> = if args.is_empty() {
        vec![
            ("ristretto255".into(), 10_000),
            ("modp-2048".into(), 1_000),
            ("eg-4096".into(), 500),
        ]
    } else {
        args.iter()
            .filter_map(|a| {
                let (g, n) = a.split_once('=')?;
                Some((g.to_owned(), n.parse().ok()?))
            })
            .collect()
    };
    println!("cpu: {}", votum_bench::cpu_model());
    for (g, n) in jobs {
        match g.as_str() {
            "ristretto255" => run(Ristretto255, n, 3),
            "modp-2048" => run(ModpGroup::rfc3526_2048(), n, 3),
            "eg-4096" => run(ModpGroup::eg_4096(), n, 3),
            other => eprintln!("unknown group {other}"),
        }
    }
}
