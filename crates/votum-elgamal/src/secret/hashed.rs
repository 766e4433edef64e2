//! Hashed ElGamal: a KEM on the group and an HMAC-SHA256 stream cipher with a tag.
//!
//! `pad = g^r`, `shared = K^r`, `(k_enc, k_mac) = expand(H(tag, pad, shared))`,
//! `body = m ⊕ HMAC(k_enc, i)_{i=0,1,…}`, `tag = HMAC(k_mac, pad ‖ body)`.
//! Decryption checks the tag (constant time) before it returns anything.

use votum_group::Group;
use votum_hash::{expand, hmac_sha256, hmac_sha256_verify, tags, Transcript};
use zeroize::Zeroize;

use crate::keys::PublicKey;
use crate::secret::SecretKey;
use crate::ElGamalError;

pub struct HashedCiphertext<G: Group> {
    pub pad: G::Element,
    pub body: Vec<u8>,
    pub tag: [u8; 32],
}

impl<G: Group> Clone for HashedCiphertext<G> {
    fn clone(&self) -> Self {
        Self {
            pad: self.pad.clone(),
            body: self.body.clone(),
            tag: self.tag,
        }
    }
}

impl<G: Group> PartialEq for HashedCiphertext<G> {
    fn eq(&self, other: &Self) -> bool {
        self.pad == other.pad && self.body == other.body && self.tag == other.tag
    }
}

impl<G: Group> Eq for HashedCiphertext<G> {}

impl<G: Group> std::fmt::Debug for HashedCiphertext<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HashedCiphertext")
            .field("pad", &self.pad)
            .field("body_len", &self.body.len())
            .finish()
    }
}

fn keys<G: Group>(group: &G, pad: &G::Element, shared: &G::Element) -> (Vec<u8>, Vec<u8>) {
    let mut t = Transcript::new(tags::HASHED_ELGAMAL);
    t.append_bytes("group", group.id().name().as_bytes());
    t.append_element(group, "pad", pad);
    t.append_element(group, "shared", shared);
    let mut material = expand(&t.digest(), b"keys", 64);
    let mac = material.split_off(32);
    (material, mac)
}

fn apply_stream(k_enc: &[u8], data: &mut [u8]) {
    for (i, chunk) in data.chunks_mut(32).enumerate() {
        let block = hmac_sha256(k_enc, &[&(i as u64).to_be_bytes()]);
        for (b, k) in chunk.iter_mut().zip(block.iter()) {
            *b ^= k;
        }
    }
}

impl<G: Group> HashedCiphertext<G> {
    pub fn encrypt(group: &G, pk: &PublicKey<G>, message: &[u8], r: &G::Scalar) -> Self {
        Self::encrypt_with(group, message, r, |r| pk.pow(group, r))
    }

    /// [`HashedCiphertext::encrypt`] with `K^r` computed by `key_pow` (from a table the caller
    /// keeps for a key it seals several messages to; it must return the recipient key to the
    /// power `r`).
    pub fn encrypt_with(
        group: &G,
        message: &[u8],
        r: &G::Scalar,
        key_pow: impl FnOnce(&G::Scalar) -> G::Element,
    ) -> Self {
        let pad = group.pow_generator(r);
        let shared = key_pow(r);
        let (mut k_enc, mut k_mac) = keys(group, &pad, &shared);
        let mut body = message.to_vec();
        apply_stream(&k_enc, &mut body);
        let tag = hmac_sha256(&k_mac, &[&group.encode_element(&pad), &body]);
        k_enc.zeroize();
        k_mac.zeroize();
        Self { pad, body, tag }
    }

    pub fn decrypt(&self, group: &G, sk: &SecretKey<G>) -> Result<Vec<u8>, ElGamalError> {
        let shared = group.pow_secret(&self.pad, sk.secret());
        let (mut k_enc, mut k_mac) = keys(group, &self.pad, &shared);
        let ok = hmac_sha256_verify(
            &k_mac,
            &[&group.encode_element(&self.pad), &self.body],
            &self.tag,
        );
        k_mac.zeroize();
        if !ok {
            k_enc.zeroize();
            return Err(ElGamalError::BadTag);
        }
        let mut out = self.body.clone();
        apply_stream(&k_enc, &mut out);
        k_enc.zeroize();
        Ok(out)
    }

    /// `pad ‖ tag ‖ body`.
    pub fn to_bytes(&self, group: &G) -> Vec<u8> {
        let mut out = group.encode_element(&self.pad);
        out.extend_from_slice(&self.tag);
        out.extend_from_slice(&self.body);
        out
    }

    pub fn from_bytes(group: &G, bytes: &[u8]) -> Result<Self, ElGamalError> {
        let n = group.element_len();
        if bytes.len() < n + 32 {
            return Err(ElGamalError::MalformedCiphertext);
        }
        let pad = group.decode_element(&bytes[..n])?;
        let mut tag = [0u8; 32];
        tag.copy_from_slice(&bytes[n..n + 32]);
        Ok(Self {
            pad,
            tag,
            body: bytes[n + 32..].to_vec(),
        })
    }
}
