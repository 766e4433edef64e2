//! GMP's kernels swapped in by `gmp_kernels::tune` compute exactly what GMP's own choice does.
//! One test in its own process: the results are taken before the swap, then after it.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use rug::integer::Order;
use rug::Integer;
use votum_arith::gmp_kernels::{self, Kernels};

/// SplitMix64: deterministic test operands (rug is built without its random numbers).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn bits(&mut self, bits: u32) -> Integer {
        let limbs: Vec<u64> = (0..bits.div_ceil(64)).map(|_| self.next()).collect();
        Integer::from_digits(&limbs, Order::Lsf).keep_bits(bits)
    }
}

/// Products, squares, quotients, remainders and modular powers over operand sizes that take
/// every path (basecase, Toom, Montgomery reduction) of the kernels that may be swapped.
fn workload(seed: u64) -> Vec<Integer> {
    let mut rng = Rng(seed);
    let mut out = Vec::new();
    for bits in [64u32, 100, 640, 1024, 1536, 2048, 3072, 4096, 8192] {
        for _ in 0..4 {
            let a = rng.bits(bits);
            let b = rng.bits(bits);
            let mut m = rng.bits(bits);
            m.set_bit(0, true);
            m.set_bit(bits - 1, true);
            let e = rng.bits(bits.min(2048));
            out.push(Integer::from(&a * &b));
            out.push(Integer::from(a.square_ref()));
            out.push(Integer::from(&a - &b));
            out.push(Integer::from(&a * &b) % &m);
            out.push(Integer::from(&a * 3u32 + &b) / (Integer::from(&m >> 7) + 1u32));
            out.push(a.clone().pow_mod(&e, &m).unwrap());
            out.push(a.clone().secure_pow_mod(&e, &m));
            out.push(Integer::from(a.gcd_ref(&b)));
        }
    }
    out
}

#[test]
fn swapped_kernels_compute_what_gmps_compute() {
    // no Modulus has been made in this process yet, so these ran on GMP's own choice
    assert_eq!(gmp_kernels::kernels(), Kernels::Gmp);
    let before = workload(7);
    let chosen = gmp_kernels::tune();
    assert_eq!(gmp_kernels::kernels(), chosen);
    assert_eq!(gmp_kernels::tune(), chosen, "tune is idempotent");
    eprintln!("kernels: {}", chosen.describe());
    let after = workload(7);
    assert_eq!(before.len(), after.len());
    for (i, (x, y)) in before.iter().zip(&after).enumerate() {
        assert_eq!(x, y, "result {i} differs after the swap");
    }
    // and the arithmetic layer built on them agrees with plain GMP powers
    let p = Integer::from_str_radix(
        "FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A08798E3404DDEF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7EDEE386BFB5A899FA5AE9F24117C4B1FE649286651ECE45B3DC2007CB8A163BF0598DA48361C55D39A69163FA8FD24CF5F83655D23DCA3AD961C62F356208552BB9ED529077096966D670C354E4ABC9804F1746C08CA237327FFFFFFFFFFFFFFFF",
        16,
    )
    .unwrap();
    let m = votum_arith::Modulus::new(p.clone()).unwrap();
    let base = Integer::from(5u32);
    let table = votum_arith::FixedBaseTable::new(&m, &base, 1024).unwrap();
    let mut rng = Rng(11);
    for _ in 0..8 {
        let e = rng.bits(1024);
        assert_eq!(
            table.pow(&e).unwrap(),
            base.clone().pow_mod(&e, &p).unwrap()
        );
    }
}
