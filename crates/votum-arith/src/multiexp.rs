use rayon::prelude::*;
use rug::Integer;

use crate::fixed_base::window_digit;
use crate::mont::MontContext;
use crate::{ArithError, Modulus};

/// `prod_i bases[i]^exps[i] mod p` with public exponents.
///
/// The cheaper of two methods by an operation count of the given exponents:
/// * Straus' interleaved sliding windows: one shared chain of squarings, each base with a window
///   sized for its own exponent (a batch mixes 128-bit weights with 384-bit products);
/// * Pippenger's buckets, about `bits/c · 2^(c+1)` products plus one per nonzero digit: cheaper
///   from a few hundred bases on.
///
/// Products are Montgomery products on GMP's `mpn` layer (`MontContext`).
pub fn multi_pow(m: &Modulus, bases: &[Integer], exps: &[Integer]) -> Result<Integer, ArithError> {
    check_inputs(bases, exps)?;
    let pairs: Vec<(&Integer, &Integer)> = bases.iter().zip(exps).collect();
    multi_pow_pairs(m, &pairs)
}

fn multi_pow_pairs(m: &Modulus, pairs: &[(&Integer, &Integer)]) -> Result<Integer, ArithError> {
    let pairs: Vec<(&Integer, &Integer)> =
        pairs.iter().copied().filter(|(_, e)| **e != 0).collect();
    match pairs.as_slice() {
        [] => Ok(Integer::from(1)),
        [(b, e)] => m.pow(b, e),
        _ => {
            let ctx = m.mont()?;
            let bits: Vec<u32> = pairs.iter().map(|(_, e)| e.significant_bits()).collect();
            let c = pippenger_window(&bits);
            if straus_cost(&bits) <= pippenger_cost(&bits, c) {
                Ok(straus(m, ctx, &pairs))
            } else {
                Ok(pippenger(m, ctx, &pairs, c))
            }
        }
    }
}

/// [`multi_pow`] spread over the rayon threads: the bases, sorted by exponent length, are dealt
/// out in turn (so each part gets as many long exponents as the others), one part per thread.
pub fn multi_pow_parallel(
    m: &Modulus,
    bases: &[Integer],
    exps: &[Integer],
) -> Result<Integer, ArithError> {
    check_inputs(bases, exps)?;
    let threads = rayon::current_num_threads().max(1);
    if threads == 1 || bases.len() < PARALLEL_MIN_BASES {
        return multi_pow(m, bases, exps);
    }
    let mut order: Vec<usize> = (0..bases.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(exps[i].significant_bits()));
    let parts_count = threads.min(bases.len() / (PARALLEL_MIN_BASES / 2));
    let mut parts: Vec<Vec<(&Integer, &Integer)>> = vec![Vec::new(); parts_count];
    for (k, &i) in order.iter().enumerate() {
        parts[k % parts_count].push((&bases[i], &exps[i]));
    }
    let results: Vec<Integer> = parts
        .par_iter()
        .map(|part| multi_pow_pairs(m, part))
        .collect::<Result<_, _>>()?;
    Ok(results
        .iter()
        .fold(Integer::from(1), |acc, x| m.mul(&acc, x)))
}

/// Below this many bases [`multi_pow_parallel`] stays on one thread.
const PARALLEL_MIN_BASES: usize = 16;

fn check_inputs(bases: &[Integer], exps: &[Integer]) -> Result<(), ArithError> {
    if bases.len() != exps.len() {
        return Err(ArithError::LengthMismatch {
            bases: bases.len(),
            exponents: exps.len(),
        });
    }
    if exps.iter().any(|e| *e < 0) {
        return Err(ArithError::NegativeExponent);
    }
    Ok(())
}

/// The sliding window for one exponent of `bits` bits in Straus: the `w` that minimises the
/// table (`2^(w−1)` odd powers) plus the products (about `bits/(w+1)`).
fn straus_window(bits: u32) -> u32 {
    let cost = |w: u32| (1000u64 << (w - 1)) + 1000 * u64::from(bits) / u64::from(w + 1);
    (1..=8u32).min_by_key(|&w| cost(w)).unwrap_or(4)
}

/// Products and squarings Straus needs for these exponent lengths.
fn straus_cost(bits: &[u32]) -> u64 {
    let max = bits.iter().copied().max().unwrap_or(0);
    u64::from(max)
        + bits
            .iter()
            .map(|&b| {
                let w = straus_window(b);
                (1u64 << (w - 1)) + u64::from(b) / u64::from(w + 1)
            })
            .sum::<u64>()
}

/// Products and squarings Pippenger needs with window `c`.
fn pippenger_cost(bits: &[u32], c: u32) -> u64 {
    let max = bits.iter().copied().max().unwrap_or(0);
    let windows = u64::from(max.div_ceil(c));
    u64::from(max)
        + windows * (2u64 << c)
        + bits.iter().map(|&b| u64::from(b.div_ceil(c))).sum::<u64>()
}

fn pippenger_window(bits: &[u32]) -> u32 {
    (1..=16u32)
        .min_by_key(|&c| pippenger_cost(bits, c))
        .unwrap_or(4)
}

/// Sliding-window recoding: `(position, odd digit)` pairs, most significant first,
/// with `e = sum digit * 2^position`.
fn sliding_windows(e: &Integer, w: u32) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    let mut i = e.significant_bits() as i64 - 1;
    while i >= 0 {
        if !e.get_bit(i as u32) {
            i -= 1;
            continue;
        }
        let mut j = (i - i64::from(w) + 1).max(0);
        while !e.get_bit(j as u32) {
            j += 1;
        }
        let width = (i - j + 1) as u32;
        out.push((j as u32, window_digit(e, j as u32, width)));
        i = j - 1;
    }
    out
}

/// Straus over nonzero exponents, each base with its own window.
fn straus(m: &Modulus, ctx: &MontContext, pairs: &[(&Integer, &Integer)]) -> Integer {
    let n = ctx.limbs_len();
    let mut s = ctx.scratch();
    let max_bits = pairs
        .iter()
        .map(|(_, e)| e.significant_bits())
        .max()
        .unwrap_or(0);
    // odd powers b, b^3, ..., b^(2^w - 1) of each base, Montgomery form, one buffer per base
    let mut tables: Vec<Vec<u64>> = Vec::with_capacity(pairs.len());
    let mut recoded: Vec<Vec<(u32, u32)>> = Vec::with_capacity(pairs.len());
    let mut square = vec![0u64; n];
    for (b, e) in pairs {
        let w = straus_window(e.significant_bits());
        let count = 1usize << (w - 1);
        let mut t = vec![0u64; count * n];
        t[..n].copy_from_slice(&ctx.to_mont(&m.reduce(b), &mut s));
        if count > 1 {
            ctx.mul(&mut square, &t[..n], &t[..n], &mut s);
            for k in 1..count {
                let (done, todo) = t.split_at_mut(k * n);
                ctx.mul(&mut todo[..n], &done[(k - 1) * n..], &square, &mut s);
            }
        }
        tables.push(t);
        recoded.push(sliding_windows(e, w));
    }
    let mut cursor = vec![0usize; pairs.len()];
    let mut acc: Option<Vec<u64>> = None;
    for bit in (0..max_bits).rev() {
        if let Some(a) = acc.as_mut() {
            ctx.square_assign(a, &mut s);
        }
        for (k, windows) in recoded.iter().enumerate() {
            if let Some(&(pos, digit)) = windows.get(cursor[k]) {
                if pos == bit {
                    cursor[k] += 1;
                    let at = (digit >> 1) as usize * n;
                    let entry = &tables[k][at..at + n];
                    match acc.as_mut() {
                        None => acc = Some(entry.to_vec()),
                        Some(a) => ctx.mul_assign(a, entry, &mut s),
                    }
                }
            }
        }
    }
    match acc {
        Some(a) => ctx.out_of_mont(&a, &mut s),
        None => Integer::from(1),
    }
}

/// Pippenger with window `c` over nonzero exponents.
fn pippenger(m: &Modulus, ctx: &MontContext, pairs: &[(&Integer, &Integer)], c: u32) -> Integer {
    let max_bits = pairs
        .iter()
        .map(|(_, e)| e.significant_bits())
        .max()
        .unwrap_or(0);
    let n = ctx.limbs_len();
    let mut s = ctx.scratch();
    let windows = max_bits.div_ceil(c);
    let bases: Vec<Vec<u64>> = pairs
        .iter()
        .map(|(b, _)| ctx.to_mont(&m.reduce(b), &mut s))
        .collect();
    let mut acc: Option<Vec<u64>> = None;
    // a bucket is in use when its flag is set; its limbs are reused across windows
    let mut buckets: Vec<Vec<u64>> = vec![vec![0u64; n]; (1usize << c) - 1];
    let mut used = vec![false; buckets.len()];
    let mut running = vec![0u64; n];
    let mut total = vec![0u64; n];
    for k in (0..windows).rev() {
        if let Some(a) = acc.as_mut() {
            for _ in 0..c {
                ctx.square_assign(a, &mut s);
            }
        }
        used.iter_mut().for_each(|u| *u = false);
        for (b, (_, e)) in bases.iter().zip(pairs) {
            let d = window_digit(e, k * c, c) as usize;
            if d == 0 {
                continue;
            }
            if used[d - 1] {
                ctx.mul_assign(&mut buckets[d - 1], b, &mut s);
            } else {
                buckets[d - 1].copy_from_slice(b);
                used[d - 1] = true;
            }
        }
        // prod_d bucket[d]^d as a running product of suffix products
        let (mut have_running, mut have_total) = (false, false);
        for (bucket, &u) in buckets.iter().zip(&used).rev() {
            if u {
                if have_running {
                    ctx.mul_assign(&mut running, bucket, &mut s);
                } else {
                    running.copy_from_slice(bucket);
                    have_running = true;
                }
            }
            if have_running {
                if have_total {
                    ctx.mul_assign(&mut total, &running, &mut s);
                } else {
                    total.copy_from_slice(&running);
                    have_total = true;
                }
            }
        }
        if have_total {
            match acc.as_mut() {
                None => acc = Some(total.clone()),
                Some(a) => ctx.mul_assign(a, &total, &mut s),
            }
        }
    }
    match acc {
        Some(a) => ctx.out_of_mont(&a, &mut s),
        None => Integer::from(1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn naive(m: &Modulus, bases: &[Integer], exps: &[Integer]) -> Integer {
        bases
            .iter()
            .zip(exps)
            .fold(Integer::from(1), |acc, (b, e)| {
                m.mul(&acc, &m.pow(b, e).unwrap())
            })
    }

    fn modulus() -> Modulus {
        // 2^127 - 1 is prime
        Modulus::new((Integer::from(1) << 127u32) - 1u32).unwrap()
    }

    proptest! {
        #[test]
        fn multi_pow_equals_naive(pairs in proptest::collection::vec((any::<u128>(), any::<u128>()), 0..80)) {
            let m = modulus();
            let bases: Vec<Integer> = pairs.iter().map(|p| Integer::from(p.0)).collect();
            let exps: Vec<Integer> = pairs.iter().map(|p| Integer::from(p.1)).collect();
            prop_assert_eq!(multi_pow(&m, &bases, &exps).unwrap(), naive(&m, &bases, &exps));
            prop_assert_eq!(multi_pow_parallel(&m, &bases, &exps).unwrap(), naive(&m, &bases, &exps));
        }

        #[test]
        fn sliding_windows_reconstruct(e in any::<u128>(), w in 1u32..8) {
            let e = Integer::from(e);
            let mut sum = Integer::new();
            for (pos, d) in sliding_windows(&e, w) {
                prop_assert!(d % 2 == 1 && d < (1 << w));
                sum += Integer::from(d) << pos;
            }
            prop_assert_eq!(sum, e);
        }
    }

    proptest! {
        /// Mixed exponent lengths (as in a batch: 128-bit weights, 384-bit products, zeros) on a
        /// 1024-bit modulus, through both methods, the chooser and the parallel split.
        #[test]
        fn mixed_lengths_through_both_methods(
            pairs in proptest::collection::vec((any::<[u8; 16]>(), proptest::collection::vec(any::<u8>(), 0..50)), 0..40)
        ) {
            let m = Modulus::new((Integer::from(1) << 1023u32) + 0x1234_5679u32).unwrap();
            let bases: Vec<Integer> = pairs.iter().map(|p| Integer::from_digits(&p.0, rug::integer::Order::Msf)).collect();
            let exps: Vec<Integer> = pairs.iter().map(|p| Integer::from_digits(&p.1, rug::integer::Order::Msf)).collect();
            let want = naive(&m, &bases, &exps);
            let nonzero: Vec<(&Integer, &Integer)> = bases.iter().zip(&exps).filter(|(_, e)| **e != 0).collect();
            let ctx = m.mont().unwrap();
            if !nonzero.is_empty() {
                prop_assert_eq!(&straus(&m, ctx, &nonzero), &want);
                for c in [1u32, 3, 5] {
                    prop_assert_eq!(&pippenger(&m, ctx, &nonzero, c), &want);
                }
            }
            prop_assert_eq!(&multi_pow(&m, &bases, &exps).unwrap(), &want);
            prop_assert_eq!(&multi_pow_parallel(&m, &bases, &exps).unwrap(), &want);
        }
    }

    #[test]
    fn the_cheaper_method_is_chosen() {
        // a share batch: Straus; a ballot batch of thousands of bases: Pippenger
        let batch: Vec<u32> = [vec![128; 72], vec![384; 36], vec![256; 13]].concat();
        assert!(straus_cost(&batch) < pippenger_cost(&batch, pippenger_window(&batch)));
        let ballots = vec![256u32; 10_000];
        assert!(straus_cost(&ballots) > pippenger_cost(&ballots, pippenger_window(&ballots)));
    }

    #[test]
    fn pippenger_path_on_many_bases() {
        let m = modulus();
        let bases: Vec<Integer> = (1..=500u32)
            .map(|i| Integer::from(i) * 7919u32 + 3u32)
            .collect();
        let exps: Vec<Integer> = (1..=500u32)
            .map(|i| (Integer::from(i) << 100u32) + i * i)
            .collect();
        assert_eq!(
            multi_pow(&m, &bases, &exps).unwrap(),
            naive(&m, &bases, &exps)
        );
    }

    #[test]
    fn rejects_bad_input() {
        let m = modulus();
        let one = [Integer::from(2)];
        assert_eq!(
            multi_pow(&m, &one, &[]),
            Err(ArithError::LengthMismatch {
                bases: 1,
                exponents: 0
            })
        );
        assert_eq!(
            multi_pow(&m, &one, &[Integer::from(-1)]),
            Err(ArithError::NegativeExponent)
        );
    }
}
