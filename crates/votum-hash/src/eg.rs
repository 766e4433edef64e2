//! ElectionGuard 1.0 `hash_elems`, as electionguard 1.4.0 computes it.
//!
//! `H(a1..an) = int(SHA256("|" ‖ s(a1) ‖ "|" ‖ … ‖ s(an) ‖ "|")) mod q`, with
//! `s(element) = minimal uppercase hex`, `s(str) = str`, `s(int) = decimal`, `s(bool) = "True"/"False"`,
//! `s(None) = s([]) = "null"`, `s(non-empty list) = s(H(list…))`.

use sha2::{Digest, Sha256};
use votum_arith::{Integer, Order};

use crate::HashError;

/// One argument of `hash_elems`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EgHashItem {
    /// An element mod p or mod q, or an object's crypto hash: written as minimal uppercase hex.
    Num(Integer),
    Str(String),
    Int(i64),
    Bool(bool),
    /// Python `None`.
    Null,
    /// A list: the empty list hashes as `"null"`, any other as the hex of its own hash.
    List(Vec<EgHashItem>),
}

impl From<&Integer> for EgHashItem {
    fn from(x: &Integer) -> Self {
        EgHashItem::Num(x.clone())
    }
}

impl From<&str> for EgHashItem {
    fn from(s: &str) -> Self {
        EgHashItem::Str(s.to_owned())
    }
}

/// Minimal uppercase hex of the big-endian bytes, even length (`0` → `"00"`).
pub fn to_hex(x: &Integer) -> String {
    let mut s = x.to_string_radix(16).to_uppercase();
    if s.len() % 2 == 1 {
        s.insert(0, '0');
    }
    s
}

/// Parses electionguard hex into a non-negative integer. Either case is accepted (as electionguard
/// does); the digits must be the canonical ones [`to_hex`] writes: an even number of them and no
/// leading zero byte (`"00"` alone is zero). A second spelling of the same number would let a
/// record's bytes change without any hash noticing.
pub fn from_hex(s: &str) -> Result<Integer, HashError> {
    if s.is_empty() {
        return Err(HashError::EmptyHex);
    }
    if !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(HashError::NotHex);
    }
    if s.len() % 2 == 1 {
        return Err(HashError::NonCanonicalHex("odd number of digits"));
    }
    if s.len() > 2 && s.starts_with("00") {
        return Err(HashError::NonCanonicalHex("leading zero byte"));
    }
    Integer::from_str_radix(s, 16).map_err(|_| HashError::NotHex)
}

fn item_string(item: &EgHashItem, q: &Integer) -> String {
    match item {
        EgHashItem::Num(x) => to_hex(x),
        EgHashItem::Str(s) => s.clone(),
        EgHashItem::Int(i) => i.to_string(),
        EgHashItem::Bool(true) => "True".to_owned(),
        EgHashItem::Bool(false) => "False".to_owned(),
        EgHashItem::Null => "null".to_owned(),
        EgHashItem::List(items) if items.is_empty() => "null".to_owned(),
        EgHashItem::List(items) => to_hex(&hash_elems(items, q)),
    }
}

/// `hash_elems(*items)` reduced modulo `q`.
pub fn hash_elems(items: &[EgHashItem], q: &Integer) -> Integer {
    let mut h = Sha256::new();
    h.update(b"|");
    for item in items {
        h.update(item_string(item, q).as_bytes());
        h.update(b"|");
    }
    let digest = h.finalize();
    Integer::from_digits(digest.as_slice(), Order::Msf) % q
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_is_minimal_even_uppercase() {
        assert_eq!(to_hex(&Integer::from(0)), "00");
        assert_eq!(to_hex(&Integer::from(1)), "01");
        assert_eq!(to_hex(&Integer::from(256)), "0100");
        assert_eq!(to_hex(&Integer::from(0xabcdef)), "ABCDEF");
        assert_eq!(from_hex("abCD").unwrap(), 0xabcd);
        assert_eq!(from_hex(""), Err(HashError::EmptyHex));
        assert_eq!(from_hex("0x12"), Err(HashError::NotHex));
        assert_eq!(from_hex("-1"), Err(HashError::NotHex));
        assert_eq!(from_hex("00").unwrap(), 0);
        assert!(matches!(
            from_hex("001F"),
            Err(HashError::NonCanonicalHex(_))
        ));
        assert!(matches!(
            from_hex("1F2"),
            Err(HashError::NonCanonicalHex(_))
        ));
        assert!(matches!(
            from_hex("0000"),
            Err(HashError::NonCanonicalHex(_))
        ));
        // every value round-trips through its one spelling
        for x in [0u64, 1, 15, 16, 255, 256, 0xFFFF, 0x1_0000, u64::MAX] {
            let x = Integer::from(x);
            assert_eq!(from_hex(&to_hex(&x)).unwrap(), x);
        }
    }

    #[test]
    fn empty_list_and_null_agree() {
        let q = (Integer::from(1) << 256u32) - 189u32;
        assert_eq!(
            hash_elems(&[EgHashItem::Null], &q),
            hash_elems(&[EgHashItem::List(vec![])], &q)
        );
        let inner = hash_elems(&[EgHashItem::Int(1), EgHashItem::Str("a".into())], &q);
        assert_eq!(
            hash_elems(
                &[EgHashItem::List(vec![
                    EgHashItem::Int(1),
                    EgHashItem::Str("a".into())
                ])],
                &q
            ),
            hash_elems(&[EgHashItem::Num(inner)], &q)
        );
    }
}
