"""`make bench-arith`, Python half: gmpy2 and Python's pow against votum, and the 10,000-item batch
called from Python with one and with two threads, compared with the Rust loop measured by
`bench-arith` (bench-results/arith-rust.json). Prints a Markdown table for BENCHMARKS.md."""

from __future__ import annotations

import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import gmpy2
import votum

RUNS = int(os.environ.get("BENCH_RUNS", "5"))
ROOT = Path(__file__).resolve().parent.parent


def per_op_us(fn, ops: int, runs: int = RUNS) -> tuple[float, float]:
    samples = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t) * 1e6 / ops)
    return min(samples), statistics.median(samples)


def batch_child(group_name: str) -> None:
    """Runs in a subprocess with RAYON_NUM_THREADS set: times 10,000 g^s from Python."""
    group = votum.Group(group_name)
    scalars = [group.random_scalar(hashlib.sha256(b"b%d" % i).digest()) for i in range(10_000)]
    group.pow_generator_many(scalars[:10])  # build the generator's table outside the timing
    runs = RUNS * 2 if group_name == "ristretto255" else min(RUNS, 3)
    mn, med = per_op_us(lambda: group.pow_generator_many(scalars), len(scalars), runs=runs)
    print(json.dumps({"min_us": mn, "median_us": med}))


def batch(group_name: str, threads: int) -> dict[str, float]:
    env = dict(os.environ, RAYON_NUM_THREADS=str(threads))
    out = subprocess.run(
        [sys.executable, __file__, "--batch-child", group_name],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    group = votum.Group("eg-4096")
    p = group.p
    scalars = [group.random_scalar(hashlib.sha256(b"s%d" % i).digest()) for i in range(100)]
    bases = group.pow_generator_many(scalars)
    ints_b = [b.to_int() for b in bases]
    ints_e = [s.to_int() for s in scalars[::-1]]
    gb = [gmpy2.mpz(x) for x in ints_b]
    ge = [gmpy2.mpz(x) for x in ints_e]
    gp = gmpy2.mpz(p)
    rev = scalars[::-1]
    rows: list[tuple[str, tuple[float, float]]] = [
        (
            "gmpy2.powmod",
            per_op_us(lambda: [gmpy2.powmod(b, e, gp) for b, e in zip(gb, ge, strict=True)], 100),
        ),
        (
            "Python pow(b, e, p)",
            per_op_us(lambda: [pow(b, e, p) for b, e in zip(ints_b, ints_e, strict=True)], 100),
        ),
        (
            "votum Element ** Scalar, one call each",
            per_op_us(lambda: [b**s for b, s in zip(bases, rev, strict=True)], 100),
        ),
    ]
    rust_path = ROOT / "bench-results" / "arith-rust.json"
    rust = json.loads(rust_path.read_text())["results"] if rust_path.exists() else {}
    results = {
        (name, threads): batch(name, threads) for name in ("eg-4096", "ristretto255") for threads in (1, 2)
    }
    for (name, threads), res in results.items():
        label = f"votum pow_generator_many, 10,000 from Python, {name}, {threads} thread(s), per item"
        rows.append((label, (res["min_us"], res["median_us"])))
    print("| operation (4096-bit p, 256-bit exponent unless noted) | min µs/op | median µs/op |")
    print("|---|---|---|")
    for label, (mn, med) in rows:
        print(f"| {label} | {mn:.1f} | {med:.1f} |")
    print()
    loops = {
        "eg-4096": "Rust loop: 10,000 g^s via pow_generator (1 thread), per item",
        "ristretto255": "Rust loop: 10,000 ristretto255 g^s (1 thread), per item",
    }
    for name, key in loops.items():
        one, two = results[(name, 1)], results[(name, 2)]
        loop = rust.get(key)
        if loop:
            d_min = one["min_us"] - loop["min_us"]
            d_med = one["median_us"] - loop["median_us"]
            print(
                f"{name}: per-item overhead of the Python batch over the Rust loop (1 thread): "
                f"{d_min:.2f} µs min, {d_med:.2f} µs median"
            )
        print(
            f"{name}: batch speed-up with 2 threads over 1: {one['min_us'] / two['min_us']:.2f}x min, "
            f"{one['median_us'] / two['median_us']:.2f}x median"
        )
    raw = rust.get("raw GMP mpz_powm (rug pow_mod_ref)")
    if raw:
        g_min = rows[0][1][0]
        ours = rust["votum Modulus::pow"]["min_us"] / raw["min_us"]
        print(
            f"votum Modulus::pow / raw mpz_powm: {ours:.3f} (min); gmpy2 / raw: {g_min / raw['min_us']:.3f}"
        )


if __name__ == "__main__":
    if "--batch-child" in sys.argv:
        batch_child(sys.argv[-1])
    else:
        main()
