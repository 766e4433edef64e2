//! The checks of votum's channels between election parties (spec/95).
//!
//! Channels carry frames of envelopes signed with the sender's Ed25519 key. This crate holds what must be fast and
//! exact on the receiving side: the strict signature check over the domain-separated header, the payload digests,
//! and the node and channel ids; and on the sending side the envelope signature, with the node's key held by an
//! [`EnvelopeSigner`] that zeroizes it when dropped.

use ed25519_dalek::{Signature, VerifyingKey};
#[cfg(feature = "sign")]
use ed25519_dalek::{Signer, SigningKey};
use sha2::{Digest, Sha256};

/// What an envelope signature signs before the header (spec/95.3).
pub const ENVELOPE_TAG: &[u8] = b"votum-node/envelope/v1\0";
/// The domain of a node's signature on something it posts to a record (spec/95.3): never an envelope's.
pub const RECORD_TAG: &[u8] = b"votum-node/record/v1\0";
/// The prefix of a node id (spec/95.1).
pub const NODE_ID_TAG: &[u8] = b"votum-node/id/v1\0";
/// The prefix of a channel id (spec/95.2).
pub const CHANNEL_TAG: &[u8] = b"votum-node/channel/v1\0";

/// Why a frame was refused; `code()` is the refusal code of spec/95.4.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    #[error("the sender's signing key is not a valid Ed25519 key")]
    BadKey,
    #[error("the frame's signature does not verify under the sender's key")]
    BadSignature,
    #[error("payload {0} does not match its digest in the signed header")]
    BadDigest(usize),
    #[error("{payloads} payloads but {digests} digests in the header")]
    CountMismatch { payloads: usize, digests: usize },
}

impl FrameError {
    /// The refusal code sent back to the peer.
    pub fn code(&self) -> &'static str {
        match self {
            FrameError::BadKey | FrameError::BadSignature => "bad-signature",
            FrameError::BadDigest(_) => "bad-digest",
            FrameError::CountMismatch { .. } => "malformed",
        }
    }
}

/// The digest of one payload, as carried in a header item: BLAKE3 with its 32-byte output (spec/95.3). A digest
/// is computed by the sender and again by the receiver for every byte a channel carries, so it is the hash of the
/// bulk path: BLAKE3 runs at several GB/s on one core where SHA-256 with SHA-NI runs at about 1.5 GB/s.
pub fn digest(payload: &[u8]) -> [u8; 32] {
    blake3::hash(payload).into()
}

/// The id of a node from its two public keys.
pub fn node_id(signing_key: &[u8; 32], sealing_key: &[u8; 32]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(NODE_ID_TAG);
    h.update(signing_key);
    h.update(sealing_key);
    h.finalize().into()
}

/// The id of one connection, fresh for each (both nonces are random).
pub fn channel_id(
    dialler: &[u8; 32],
    acceptor: &[u8; 32],
    dialler_nonce: &[u8],
    acceptor_nonce: &[u8],
) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(CHANNEL_TAG);
    h.update(dialler);
    h.update(acceptor);
    h.update((dialler_nonce.len() as u64).to_be_bytes());
    h.update(dialler_nonce);
    h.update((acceptor_nonce.len() as u64).to_be_bytes());
    h.update(acceptor_nonce);
    h.finalize().into()
}

/// The bytes an envelope signature covers.
pub fn signed_message(header: &[u8]) -> Vec<u8> {
    let mut m = Vec::with_capacity(ENVELOPE_TAG.len() + header.len());
    m.extend_from_slice(ENVELOPE_TAG);
    m.extend_from_slice(header);
    m
}

/// A node's Ed25519 key for envelope signatures. The key is zeroized when the signer is dropped and never
/// leaves it; the same key signs the node's TLS certificate (spec/95.1).
#[cfg(feature = "sign")]
pub struct EnvelopeSigner {
    key: SigningKey,
}

#[cfg(feature = "sign")]
impl EnvelopeSigner {
    /// The signer of the Ed25519 key whose 32-byte seed is `seed` (RFC 8032's private key).
    pub fn from_seed(seed: &[u8; 32]) -> Self {
        EnvelopeSigner {
            key: SigningKey::from_bytes(seed),
        }
    }

    /// The public key, as a card lists it.
    pub fn verifying_key(&self) -> [u8; 32] {
        self.key.verifying_key().to_bytes()
    }

    /// The signature of a frame header: Ed25519 over the domain tag, then the header (spec/95.3).
    pub fn sign_header(&self, header: &[u8]) -> [u8; 64] {
        self.key.sign(&signed_message(header)).to_bytes()
    }
}

#[cfg(feature = "sign")]
impl EnvelopeSigner {
    /// The node's signature on a statement about something it posts to a record: Ed25519 over
    /// [`RECORD_TAG`], then the statement, so no record signature is an envelope's or the reverse.
    pub fn sign_record(&self, statement: &[u8]) -> [u8; 64] {
        let mut m = RECORD_TAG.to_vec();
        m.extend_from_slice(statement);
        self.key.sign(&m).to_bytes()
    }
}

/// Checks a node's record signature (strict Ed25519: canonical encodings, no small-order key).
pub fn verify_record(signing_key: &[u8; 32], statement: &[u8], signature: &[u8; 64]) -> bool {
    let Ok(key) = VerifyingKey::from_bytes(signing_key) else {
        return false;
    };
    if key.is_weak() {
        return false;
    }
    let mut m = RECORD_TAG.to_vec();
    m.extend_from_slice(statement);
    key.verify_strict(&m, &Signature::from_bytes(signature))
        .is_ok()
}

#[cfg(feature = "sign")]
impl std::fmt::Debug for EnvelopeSigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "EnvelopeSigner({})", hex_prefix(&self.verifying_key()))
    }
}

#[cfg(feature = "sign")]
fn hex_prefix(bytes: &[u8]) -> String {
    bytes.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// A peer's signing key, decoded once (a connection checks every frame against it).
#[derive(Clone, Debug)]
pub struct PeerKey {
    key: VerifyingKey,
}

impl PeerKey {
    /// The peer key of a 32-byte Ed25519 public key; refuses encodings that are not a point and small-order keys.
    pub fn new(bytes: &[u8; 32]) -> Result<Self, FrameError> {
        let key = VerifyingKey::from_bytes(bytes).map_err(|_| FrameError::BadKey)?;
        if key.is_weak() {
            return Err(FrameError::BadKey);
        }
        Ok(PeerKey { key })
    }

    /// Checks a frame as [`check_frame`] does, without decoding the key again.
    pub fn check_frame(
        &self,
        header: &[u8],
        signature: &[u8; 64],
        payloads: &[&[u8]],
        digests: &[[u8; 32]],
    ) -> Result<(), FrameError> {
        one_digest_each(payloads, digests)?;
        let signature = Signature::from_bytes(signature);
        self.key
            .verify_strict(&signed_message(header), &signature)
            .map_err(|_| FrameError::BadSignature)?;
        for (i, (payload, expected)) in payloads.iter().zip(digests).enumerate() {
            if &digest(payload) != expected {
                return Err(FrameError::BadDigest(i));
            }
        }
        Ok(())
    }
}

/// Checks a frame: the signature over the header (strict Ed25519: canonical encodings, no small-order key), then
/// each payload against the digest the header lists for it, in order.
pub fn check_frame(
    signing_key: &[u8; 32],
    header: &[u8],
    signature: &[u8; 64],
    payloads: &[&[u8]],
    digests: &[[u8; 32]],
) -> Result<(), FrameError> {
    one_digest_each(payloads, digests)?;
    PeerKey::new(signing_key)?.check_frame(header, signature, payloads, digests)
}

/// A frame lists one digest per payload (checked before the key, so a malformed frame is reported as such).
fn one_digest_each(payloads: &[&[u8]], digests: &[[u8; 32]]) -> Result<(), FrameError> {
    if payloads.len() != digests.len() {
        return Err(FrameError::CountMismatch {
            payloads: payloads.len(),
            digests: digests.len(),
        });
    }
    Ok(())
}
