//! Codes written over the 64-character alphabet (spec/92.2) and MarkByteArray (spec/92.5).

use votum_arith::{Integer, Order};

use crate::params::ALPHABET;
use crate::ChvoteError;

/// `x` as exactly `chars` characters, most significant first, left-padded with `A`.
pub fn integer_to_code(x: &Integer, chars: usize) -> String {
    let mut out = vec![ALPHABET[0]; chars];
    let mut v = x.clone();
    for slot in out.iter_mut().rev() {
        let digit = v.mod_u(64) as usize;
        *slot = ALPHABET[digit];
        v >>= 6u32;
    }
    String::from_utf8(out).unwrap_or_default()
}

/// The integer a code writes; an error for a character outside the alphabet.
pub fn code_to_integer(code: &str) -> Result<Integer, ChvoteError> {
    let mut v = Integer::new();
    for c in code.bytes() {
        let digit = ALPHABET.iter().position(|&a| a == c).ok_or_else(|| {
            ChvoteError::Parameters(format!("{:?} is not a code character", c as char))
        })?;
        v <<= 6u32;
        v += digit as u32;
    }
    Ok(v)
}

/// Bytes as a code of ⌈8·len/6⌉ characters.
pub fn bytes_to_code(bytes: &[u8]) -> String {
    let chars = (8 * bytes.len()).div_ceil(6);
    integer_to_code(&Integer::from_digits(bytes, Order::Msf), chars)
}

/// The return code of candidate `candidate` (0-based) from the XOR of the authorities' shares
/// (7.13, 7.28).
pub fn return_code(shares_xor: &[u8], candidate: usize) -> String {
    bytes_to_code(&mark(shares_xor, candidate, crate::params::N_MAX))
}

/// MarkByteArray(B, m, m_max): the bits of m spread over B, so that codes of different candidates
/// differ (spec/92.5).
pub fn mark(bytes: &[u8], m: usize, m_max: usize) -> Vec<u8> {
    let mut out = bytes.to_vec();
    let l = (usize::BITS - m_max.leading_zeros()) as usize;
    let s = (8 * out.len()) as f64 / l as f64;
    let mut m = m;
    for i in 0..l {
        let pos = (i as f64 * s).floor() as usize;
        let (byte, bit) = (pos / 8, 7 - pos % 8);
        if m % 2 == 1 {
            out[byte] |= 1 << bit;
        } else {
            out[byte] &= !(1 << bit);
        }
        m /= 2;
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip() {
        let x = Integer::from_str_radix(
            "98B770B562A4F6D850C77DC464E1F00DB4AA85EE5E9F7C2E9A374213",
            16,
        )
        .unwrap();
        let code = integer_to_code(&x, 38);
        assert_eq!(code.len(), 38);
        assert_eq!(code_to_integer(&code).unwrap(), x);
        assert!(code_to_integer("abc!").is_err());
    }

    #[test]
    fn marks_differ_between_candidates() {
        let b = [0u8, 0];
        let all: std::collections::HashSet<Vec<u8>> = (0..crate::params::N_MAX)
            .map(|m| mark(&b, m, crate::params::N_MAX))
            .collect();
        assert_eq!(all.len(), crate::params::N_MAX);
    }
}
