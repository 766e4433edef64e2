//! A constant-time check that can fail: votum's secret-exponent paths run under valgrind
//! memcheck with each secret's bytes marked undefined (the ctgrind technique). Memcheck then
//! reports every branch and every memory address that depends on a secret, which is what a
//! timing or cache side channel needs.
//!
//! Usage: `valgrind -q votum-ct` (or `make ct-check`). Each case counts the errors memcheck
//! reported while it ran. The process exits 0 only when every secret path reported none and the
//! control (a variable-time power, `Modulus::pow`, given the same secret) reported some: the
//! control shows that the instrument sees a leak when there is one. Outside valgrind the client
//! requests do nothing and the check refuses to pass.

use std::ffi::c_void;
use std::process::ExitCode;

use crabgrind::memcheck::{mark_mem, MemState};
use curve25519_dalek::Scalar;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha20Rng;
use votum_group::{Group, Integer, ModElement, ModScalar, ModpGroup, Ristretto255, Secret};

/// Marks `len` bytes at `ptr` as undefined (secret) or defined (public again).
fn mark(ptr: *const c_void, len: usize, state: MemState) {
    // The client request only changes memcheck's shadow state; the bytes are not written.
    let _ = mark_mem(ptr.cast_mut(), len, state);
}

fn limbs(x: &Integer) -> (*const c_void, usize) {
    let l = x.as_limbs();
    (l.as_ptr().cast(), std::mem::size_of_val(l))
}

fn secret_integer(x: &Integer) {
    let (p, n) = limbs(x);
    mark(p, n, MemState::Undefined);
}

/// A result that the protocol publishes (a public key, a decryption share) becomes public.
fn declassify_integer(x: &Integer) {
    let (p, n) = limbs(x);
    mark(p, n, MemState::Defined);
}

struct Case {
    name: &'static str,
    /// The control must leak; every other case must not.
    control: bool,
    run: Box<dyn Fn()>,
}

fn modp_cases(group: &ModpGroup, tag: &'static str, rng: &mut ChaCha20Rng) -> Vec<Case> {
    let base: ModElement = group.pow_generator(&group.random_scalar(rng));
    let mut cases = Vec::new();
    for (i, name) in [
        "pow_secret, generator (comb table)",
        "pow_secret, other base (window 5)",
        "pow_secret_with, comb table of another base",
        "control: Modulus::pow (variable time)",
    ]
    .into_iter()
    .enumerate()
    {
        let group = group.clone();
        let base = base.clone();
        let secret: Secret<ModScalar> = group.random_secret(rng);
        let table = group.secret_table(&base);
        // build the generator's table outside the measured part: it holds no secret
        let _ = group.pow_secret(
            group.generator(),
            &Secret::new(
                group
                    .scalar(&Integer::from(1))
                    .unwrap_or_else(|_| unreachable()),
            ),
        );
        let name: &'static str = Box::leak(format!("{tag}: {name}").into_boxed_str());
        cases.push(Case {
            name,
            control: i == 3,
            run: Box::new(move || {
                secret_integer(secret.expose().value());
                let out: Integer = match i {
                    0 => group.pow_secret(group.generator(), &secret).value().clone(),
                    1 => group.pow_secret(&base, &secret).value().clone(),
                    2 => group.pow_secret_with(&table, &secret).value().clone(),
                    _ => group
                        .modulus()
                        .pow(base.value(), secret.expose().value())
                        .unwrap_or_else(|_| unreachable()),
                };
                declassify_integer(&out);
                declassify_integer(secret.expose().value());
                std::hint::black_box(out);
            }),
        });
    }
    cases
}

/// CHVote's ephemeral powers (an authority's OT keys k = Γ(v)^r and d = pk^r, the client's queries):
/// `Params::comb_pow` of a short exponent on a base's comb, level 1 (1024-bit p).
fn chvote_case(rng: &mut ChaCha20Rng) -> Case {
    let params =
        votum_chvote::Params::new(votum_chvote::Level::One, 2).unwrap_or_else(|_| unreachable());
    let group = params.eg().clone();
    let base = group.pow_generator(&group.random_scalar(rng));
    let comb = params.ephemeral_comb(&base);
    let r = Secret::new(params.ephemeral(rng));
    Case {
        name: "CHVote level 1: Params::comb_pow (ephemeral exponent, comb of a base)",
        control: false,
        run: Box::new(move || {
            secret_integer(r.expose().value());
            let out = params.comb_pow(&comb, &r).value().clone();
            declassify_integer(&out);
            declassify_integer(r.expose().value());
            std::hint::black_box(out);
        }),
    }
}

fn ristretto_case(rng: &mut ChaCha20Rng) -> Case {
    let group = Ristretto255;
    let base = group.pow_generator(&group.random_scalar(rng));
    let secret: Secret<Scalar> = group.random_secret(rng);
    Case {
        name: "ristretto255: pow_secret (curve25519-dalek)",
        control: false,
        run: Box::new(move || {
            let bytes = secret.expose().as_bytes();
            mark(bytes.as_ptr().cast(), bytes.len(), MemState::Undefined);
            let out = group.pow_secret(&base, &secret);
            let enc = out.compress();
            mark(enc.as_bytes().as_ptr().cast(), 32, MemState::Defined);
            mark(bytes.as_ptr().cast(), bytes.len(), MemState::Defined);
            std::hint::black_box(enc);
        }),
    }
}

#[allow(clippy::panic)]
#[cold]
fn unreachable() -> ! {
    panic!("a fixed test input was refused")
}

fn main() -> ExitCode {
    if !matches!(crabgrind::run_mode(), crabgrind::RunMode::Valgrind) {
        eprintln!(
            "votum-ct: run me under valgrind (make ct-check); outside it nothing is measured"
        );
        return ExitCode::from(2);
    }
    let mut rng = ChaCha20Rng::seed_from_u64(45_12);
    let mut cases = Vec::new();
    cases.extend(modp_cases(
        &ModpGroup::eg_4096(),
        "4096-bit ElectionGuard group",
        &mut rng,
    ));
    cases.extend(modp_cases(
        &ModpGroup::rfc3526_2048(),
        "2048-bit RFC 3526 group",
        &mut rng,
    ));
    cases.push(ristretto_case(&mut rng));
    cases.push(chvote_case(&mut rng));
    let mut ok = true;
    for case in &cases {
        let before = crabgrind::count_errors();
        (case.run)();
        let errors = crabgrind::count_errors() - before;
        let pass = if case.control {
            errors > 0
        } else {
            errors == 0
        };
        ok &= pass;
        let verdict = match (case.control, pass) {
            (false, true) => "constant time",
            (false, false) => "LEAKS: secret-dependent branch or address",
            (true, true) => "leaks, as a control must",
            (true, false) => "CONTROL SAW NOTHING: the instrument is blind",
        };
        println!("{:<62} {errors:>4} errors  {verdict}", case.name);
    }
    if ok {
        println!("ct-check: every secret path is free of secret-dependent branches and addresses");
        ExitCode::SUCCESS
    } else {
        println!("ct-check: FAILED");
        ExitCode::FAILURE
    }
}
