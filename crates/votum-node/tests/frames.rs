use ed25519_dalek::{Signer, SigningKey};
use proptest::prelude::*;
use rand_core::OsRng;
use votum_node::{
    channel_id, check_frame, digest, node_id, signed_message, EnvelopeSigner, FrameError, PeerKey,
};

fn signed(key: &SigningKey, header: &[u8]) -> [u8; 64] {
    key.sign(&signed_message(header)).to_bytes()
}

#[test]
fn an_honest_frame_is_accepted() {
    let key = SigningKey::generate(&mut OsRng);
    let payloads: Vec<&[u8]> = vec![b"one", b"", b"three"];
    let digests: Vec<[u8; 32]> = payloads.iter().map(|p| digest(p)).collect();
    let header = b"a header naming the digests";
    let sig = signed(&key, header);
    assert_eq!(
        check_frame(
            key.verifying_key().as_bytes(),
            header,
            &sig,
            &payloads,
            &digests
        ),
        Ok(())
    );
}

#[test]
fn tampering_is_refused_with_its_code() {
    let key = SigningKey::generate(&mut OsRng);
    let other = SigningKey::generate(&mut OsRng);
    let payloads: Vec<&[u8]> = vec![b"one", b"two"];
    let digests: Vec<[u8; 32]> = payloads.iter().map(|p| digest(p)).collect();
    let header = b"header";
    let sig = signed(&key, header);
    let pk = key.verifying_key().to_bytes();
    // another header under the same signature
    let e = check_frame(&pk, b"headex", &sig, &payloads, &digests);
    assert_eq!(e, Err(FrameError::BadSignature));
    assert_eq!(FrameError::BadSignature.code(), "bad-signature");
    // signed by another node
    let e = check_frame(&pk, header, &signed(&other, header), &payloads, &digests);
    assert_eq!(e, Err(FrameError::BadSignature));
    // a changed payload names its index
    let changed: Vec<&[u8]> = vec![b"one", b"twO"];
    let e = check_frame(&pk, header, &sig, &changed, &digests);
    assert_eq!(e, Err(FrameError::BadDigest(1)));
    assert_eq!(FrameError::BadDigest(1).code(), "bad-digest");
    // a missing payload
    let e = check_frame(&pk, header, &sig, &payloads[..1], &digests);
    assert!(matches!(
        e,
        Err(FrameError::CountMismatch {
            payloads: 1,
            digests: 2
        })
    ));
    // a signature without the domain tag (a raw Ed25519 signature over the header) is not an envelope signature
    let raw = key.sign(header).to_bytes();
    assert_eq!(
        check_frame(&pk, header, &raw, &payloads, &digests),
        Err(FrameError::BadSignature)
    );
}

#[test]
fn a_small_order_key_is_refused() {
    // the identity point: every signature "verifies" under it without strict checks
    let mut identity = [0u8; 32];
    identity[0] = 1;
    let e = check_frame(&identity, b"h", &[0u8; 64], &[], &[]);
    assert!(matches!(
        e,
        Err(FrameError::BadSignature) | Err(FrameError::BadKey)
    ));
}

#[test]
fn ids_depend_on_every_input() {
    let a = [1u8; 32];
    let b = [2u8; 32];
    assert_ne!(node_id(&a, &b), node_id(&b, &a));
    let c = channel_id(&a, &b, b"n1", b"n2");
    assert_ne!(c, channel_id(&b, &a, b"n1", b"n2"));
    assert_ne!(c, channel_id(&a, &b, b"n2", b"n1"));
    // lengths are framed: moving a byte from one nonce to the other changes the id
    assert_ne!(
        channel_id(&a, &b, b"n1x", b"n2"),
        channel_id(&a, &b, b"n1", b"xn2")
    );
}

proptest! {
    #[test]
    fn any_flipped_bit_of_the_header_is_refused(header in proptest::collection::vec(any::<u8>(), 1..200), bit in 0usize..1600) {
        let key = SigningKey::from_bytes(&[7u8; 32]);
        let sig = signed(&key, &header);
        let mut bad = header.clone();
        let i = bit % (bad.len() * 8);
        bad[i / 8] ^= 1 << (i % 8);
        prop_assert_eq!(check_frame(key.verifying_key().as_bytes(), &bad, &sig, &[], &[]), Err(FrameError::BadSignature));
    }
}

#[test]
fn the_envelope_signer_signs_what_check_frame_accepts() {
    let seed = [9u8; 32];
    let signer = EnvelopeSigner::from_seed(&seed);
    let reference = SigningKey::from_bytes(&seed);
    assert_eq!(signer.verifying_key(), reference.verifying_key().to_bytes());
    let header = b"a header";
    let sig = signer.sign_header(header);
    // the same bytes as signing the tagged header with the key directly (Ed25519 is deterministic)
    assert_eq!(sig, signed(&reference, header));
    let peer = PeerKey::new(&signer.verifying_key()).unwrap();
    assert_eq!(peer.check_frame(header, &sig, &[], &[]), Ok(()));
    assert_eq!(
        peer.check_frame(b"another", &sig, &[], &[]),
        Err(FrameError::BadSignature)
    );
    // the debug form names the public key only
    let shown = format!("{signer:?}");
    assert!(shown.starts_with("EnvelopeSigner("));
    assert!(!shown.contains("0909"));
}

#[test]
fn a_peer_key_refuses_small_order_and_invalid_keys() {
    let mut identity = [0u8; 32];
    identity[0] = 1;
    assert_eq!(PeerKey::new(&identity).err(), Some(FrameError::BadKey));
    // y = 2 is not on the curve
    let mut off = [0u8; 32];
    off[0] = 2;
    assert_eq!(PeerKey::new(&off).err(), Some(FrameError::BadKey));
}

proptest! {
    #[test]
    fn a_peer_key_agrees_with_check_frame(header in proptest::collection::vec(any::<u8>(), 0..200), flip in any::<bool>(), payload in proptest::collection::vec(any::<u8>(), 0..100)) {
        let signer = EnvelopeSigner::from_seed(&[3u8; 32]);
        let pk = signer.verifying_key();
        let peer = PeerKey::new(&pk).unwrap();
        let mut sig = signer.sign_header(&header);
        if flip { sig[5] ^= 0x10; }
        let payloads: Vec<&[u8]> = vec![&payload];
        let digests = vec![digest(&payload)];
        prop_assert_eq!(peer.check_frame(&header, &sig, &payloads, &digests), check_frame(&pk, &header, &sig, &payloads, &digests));
        prop_assert_eq!(peer.check_frame(&header, &sig, &payloads, &digests).is_ok(), !flip);
    }
}

/// The payload digest is BLAKE3-256 (spec/95.3), pinned by the BLAKE3 team's test vectors.
#[test]
fn payload_digest_is_blake3() {
    assert_eq!(
        hex(&digest(b"")),
        "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"
    );
    assert_eq!(
        hex(&digest(b"abc")),
        "6437b3ac38465133ffb63b75273a8db548c558465d79db03fd359c6cd5bd9d85"
    );
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
