//! ElectionGuard 2.x's hash (spec/65.2): H(B₀; B₁) = HMAC-SHA-256(B₀, B₁), B₀ a 32-byte key (H_P, H_B, H_E or the
//! version bytes), B₁ the fields below in order, each fixed-width except strings and files.

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// H(key; fields…), built one field at a time.
#[derive(Clone)]
pub struct Hash(Hmac<Sha256>);

impl Hash {
    /// H keyed with `key` (32 bytes in every use the specification makes; HMAC takes any length).
    pub fn new(key: &[u8]) -> Self {
        // HMAC accepts keys of any length: new_from_slice does not fail
        match Hmac::<Sha256>::new_from_slice(key) {
            Ok(mac) => Self(mac),
            Err(_) => unreachable_key(),
        }
    }

    /// A domain-separation byte.
    pub fn byte(mut self, b: u8) -> Self {
        self.0.update(&[b]);
        self
    }

    /// b(v, 4): a small integer (an index, a count, a sequence order), big-endian.
    pub fn u32(mut self, v: u32) -> Self {
        self.0.update(&v.to_be_bytes());
        self
    }

    /// Bytes as they are: a fixed-width encoding (an element, a scalar, a hash) or egk-ec's string.
    pub fn bytes(mut self, b: &[u8]) -> Self {
        self.0.update(b);
        self
    }

    /// b(len(file), 4) ‖ file (a file longer than 4 GiB has no encoding: its length is cut to 32 bits,
    /// which the callers refuse before).
    pub fn file(self, b: &[u8]) -> Self {
        let len = u32::try_from(b.len()).unwrap_or(u32::MAX);
        self.u32(len).bytes(b)
    }

    pub fn finish(self) -> [u8; 32] {
        self.0.finalize().into_bytes().into()
    }
}

#[allow(clippy::panic)]
fn unreachable_key() -> ! {
    panic!("HMAC-SHA-256 refused a key")
}

/// The version key of H_P (2.0.0 eq. 4): the version string's UTF-8 bytes padded with zero bytes to 32.
pub fn version_key(version: &str) -> [u8; 32] {
    let mut key = [0u8; 32];
    let v = version.as_bytes();
    let n = v.len().min(32);
    key[..n].copy_from_slice(&v[..n]);
    key
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 4231 test case 2: H is HMAC-SHA-256, fields concatenated in order.
    #[test]
    fn it_is_hmac_sha256_of_the_fields_in_order() {
        let got = Hash::new(b"Jefe")
            .bytes(b"what do ya want ")
            .bytes(b"for nothing?")
            .finish();
        let want = "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843";
        let hex: String = got.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex, want);
        let a = Hash::new(&[1; 32]).byte(0x21).u32(7).finish();
        let b = Hash::new(&[1; 32]).bytes(&[0x21, 0, 0, 0, 7]).finish();
        assert_eq!(a, b);
        let f = Hash::new(&[1; 32]).file(b"abc").finish();
        assert_eq!(
            f,
            Hash::new(&[1; 32])
                .bytes(&[0, 0, 0, 3])
                .bytes(b"abc")
                .finish()
        );
        assert_eq!(&version_key("v2.0.0")[..7], b"v2.0.0\0");
    }
}
