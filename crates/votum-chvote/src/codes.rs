//! Codes written over Crockford's base-32 alphabet (spec/92.2) and MarkByteArray (spec/92.5).

use votum_arith::{Integer, Order};

use crate::params::{ALPHABET, CODE_BITS};
use crate::ChvoteError;

/// `x` as exactly `chars` characters, most significant first, left-padded with `0`.
pub fn integer_to_code(x: &Integer, chars: usize) -> String {
    let mut out = vec![ALPHABET[0]; chars];
    let mut v = x.clone();
    for slot in out.iter_mut().rev() {
        let digit = v.mod_u(1 << CODE_BITS) as usize;
        *slot = ALPHABET[digit];
        v >>= CODE_BITS;
    }
    String::from_utf8(out).unwrap_or_default()
}

/// A typed character's digit, as Crockford reads it: either case, `O` as 0, `I` and `L` as 1; 0xFF for a
/// character that is not a digit. One table for every character, so a secret code is decoded without
/// a search whose length depends on it.
const DIGITS: [u8; 256] = {
    let mut table = [0xFFu8; 256];
    let mut d = 0;
    while d < ALPHABET.len() {
        table[ALPHABET[d] as usize] = d as u8;
        table[ALPHABET[d].to_ascii_lowercase() as usize] = d as u8;
        d += 1;
    }
    table[b'O' as usize] = 0;
    table[b'o' as usize] = 0;
    table[b'I' as usize] = 1;
    table[b'i' as usize] = 1;
    table[b'L' as usize] = 1;
    table[b'l' as usize] = 1;
    table
};

/// The integer a code writes, read as a person types it: either case, the look-alikes `O`, `I`, `L`
/// taken for `0`, `1`, `1`, and hyphens and spaces (the groups a sheet prints) skipped. An error names
/// the first character outside the alphabet.
pub fn code_to_integer(code: &str) -> Result<Integer, ChvoteError> {
    let mut v = Integer::new();
    for c in code.bytes() {
        if c == b'-' || c == b' ' {
            continue;
        }
        let digit = DIGITS[c as usize];
        if digit == 0xFF {
            return Err(ChvoteError::Parameters(format!(
                "{:?} is not a code character",
                c as char
            )));
        }
        v <<= CODE_BITS;
        v += u32::from(digit);
    }
    Ok(v)
}

/// Bytes as a code of ⌈8·len/5⌉ characters.
pub fn bytes_to_code(bytes: &[u8]) -> String {
    let chars = (8 * bytes.len()).div_ceil(CODE_BITS as usize);
    integer_to_code(&Integer::from_digits(bytes, Order::Msf), chars)
}

/// A code as a sheet prints it: groups of four characters joined by hyphens (typed back with or
/// without them).
pub fn grouped(code: &str) -> String {
    code.as_bytes()
        .chunks(4)
        .map(|g| String::from_utf8_lossy(g).into_owned())
        .collect::<Vec<_>>()
        .join("-")
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
        let code = integer_to_code(&x, 45);
        assert_eq!(code.len(), 45);
        assert_eq!(code_to_integer(&code).unwrap(), x);
        assert!(code_to_integer("abc!").is_err());
        assert!(code_to_integer("U").is_err(), "U is not in the alphabet");
        assert!(code.bytes().all(|c| ALPHABET.contains(&c)));
    }

    #[test]
    fn codes_are_read_as_typed() {
        let x = Integer::from(0x1234_5678_9abc_def0_u64);
        let code = integer_to_code(&x, 13);
        // lower case, the printed groups, and look-alikes read as the digits they resemble
        assert_eq!(code_to_integer(&code.to_lowercase()).unwrap(), x);
        assert_eq!(code_to_integer(&grouped(&code)).unwrap(), x);
        assert_eq!(
            code_to_integer("0I-L 1").unwrap(),
            code_to_integer("o111").unwrap()
        );
        assert_eq!(code_to_integer("O0").unwrap(), Integer::from(0));
        assert_eq!(grouped("ABCDEFGHJ"), "ABCD-EFGH-J");
        // no two characters of the alphabet look alike: no I, L, O, U, no lower case, no punctuation
        assert!(!ALPHABET
            .iter()
            .any(|c| b"ILOU".contains(c) || !c.is_ascii_alphanumeric()));
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
