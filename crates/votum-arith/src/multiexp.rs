use rayon::prelude::*;
use rug::Integer;

use crate::fixed_base::window_digit;
use crate::mont::MontContext;
use crate::{ArithError, Modulus};

/// Below this many bases, Straus (interleaved sliding windows) beats Pippenger's buckets.
const STRAUS_MAX_BASES: usize = 32;

/// `prod_i bases[i]^exps[i] mod p` with public exponents.
///
/// Few bases: Straus' interleaved sliding windows (one shared chain of squarings).
/// Many bases: Pippenger's bucket method, about `bits/c * (n + 2^(c+1))` multiplications.
pub fn multi_pow(m: &Modulus, bases: &[Integer], exps: &[Integer]) -> Result<Integer, ArithError> {
    check_inputs(bases, exps)?;
    if bases.is_empty() {
        return Ok(Integer::from(1));
    }
    if bases.len() == 1 {
        return m.pow(&bases[0], &exps[0]);
    }
    if bases.len() <= STRAUS_MAX_BASES {
        Ok(straus(m, bases, exps))
    } else {
        pippenger(m, bases, exps)
    }
}

/// [`multi_pow`] with the bases split into one chunk per rayon thread.
pub fn multi_pow_parallel(
    m: &Modulus,
    bases: &[Integer],
    exps: &[Integer],
) -> Result<Integer, ArithError> {
    check_inputs(bases, exps)?;
    let threads = rayon::current_num_threads().max(1);
    if threads == 1 || bases.len() < 4 * STRAUS_MAX_BASES {
        return multi_pow(m, bases, exps);
    }
    let chunk = bases.len().div_ceil(threads);
    let parts: Vec<Integer> = bases
        .par_chunks(chunk)
        .zip(exps.par_chunks(chunk))
        .map(|(b, e)| multi_pow(m, b, e))
        .collect::<Result<_, _>>()?;
    Ok(parts.iter().fold(Integer::from(1), |acc, x| m.mul(&acc, x)))
}

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

fn straus_window(bits: u32) -> u32 {
    match bits {
        0..=24 => 2,
        25..=80 => 3,
        81..=240 => 4,
        241..=768 => 5,
        _ => 6,
    }
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

fn straus(m: &Modulus, bases: &[Integer], exps: &[Integer]) -> Integer {
    let max_bits = exps.iter().map(|e| e.significant_bits()).max().unwrap_or(0);
    if max_bits == 0 {
        return Integer::from(1);
    }
    let w = straus_window(max_bits);
    // odd powers b, b^3, ..., b^(2^w - 1) of each base
    let tables: Vec<Vec<Integer>> = bases
        .iter()
        .map(|b| {
            let b = m.reduce(b);
            let b2 = m.mul(&b, &b);
            let mut t = Vec::with_capacity(1 << (w - 1));
            t.push(b);
            for k in 1..(1usize << (w - 1)) {
                let next = m.mul(&t[k - 1], &b2);
                t.push(next);
            }
            t
        })
        .collect();
    let recoded: Vec<Vec<(u32, u32)>> = exps.iter().map(|e| sliding_windows(e, w)).collect();
    let mut cursor = vec![0usize; bases.len()];
    let mut acc: Option<Integer> = None;
    for bit in (0..max_bits).rev() {
        if let Some(a) = acc.as_mut() {
            m.square_assign(a);
        }
        for (k, windows) in recoded.iter().enumerate() {
            if let Some(&(pos, digit)) = windows.get(cursor[k]) {
                if pos == bit {
                    cursor[k] += 1;
                    let entry = &tables[k][(digit >> 1) as usize];
                    match acc.as_mut() {
                        None => acc = Some(entry.clone()),
                        Some(a) => m.mul_assign(a, entry),
                    }
                }
            }
        }
    }
    acc.unwrap_or_else(|| Integer::from(1))
}

fn pippenger_window(n: usize, bits: u32) -> u32 {
    (1..=16u32)
        .min_by_key(|&c| u64::from(bits.div_ceil(c)) * (n as u64 + (2u64 << c)))
        .unwrap_or(4)
}

fn pippenger(m: &Modulus, bases: &[Integer], exps: &[Integer]) -> Result<Integer, ArithError> {
    let max_bits = exps.iter().map(|e| e.significant_bits()).max().unwrap_or(0);
    if max_bits == 0 {
        return Ok(Integer::from(1));
    }
    // Montgomery products throughout (mpn_mul_n + REDC instead of mpz_mul + division)
    let ctx = MontContext::new(m)?;
    let n = ctx.limbs_len();
    let mut s = ctx.scratch();
    let c = pippenger_window(bases.len(), max_bits);
    let windows = max_bits.div_ceil(c);
    let bases: Vec<Vec<u64>> = bases
        .iter()
        .map(|b| ctx.to_mont(&m.reduce(b), &mut s))
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
        for (b, e) in bases.iter().zip(exps) {
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
    Ok(match acc {
        Some(a) => ctx.out_of_mont(&a, &mut s),
        None => Integer::from(1),
    })
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
