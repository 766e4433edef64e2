#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use proptest::prelude::*;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha20Rng;
use votum_elgamal::hashed::HashedCiphertext;
use votum_elgamal::secret::*;
use votum_elgamal::threshold::*;
use votum_elgamal::{Ciphertext, DlogTable, ElGamalError, KeyPair, PublicKey};
use votum_group::{Group, ModpGroup, Ristretto255};

fn roundtrip<G: Group>(group: &G, seed: u64) {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let kp = KeyPair::generate(group, &mut rng);
    let pk = PublicKey::with_table(group, kp.public.element().clone()).unwrap();
    let dlog = DlogTable::new(group, 1000);
    let r1 = group.random_scalar(&mut rng);
    let r2 = group.random_scalar(&mut rng);
    let c1 = Ciphertext::encrypt_exp(group, &pk, 17, &r1);
    let c2 = Ciphertext::encrypt_exp(group, &kp.public, 25, &r2);
    // homomorphism
    assert_eq!(
        dlog.log(&c1.add(group, &c2).decrypt(group, &kp.secret))
            .unwrap(),
        42
    );
    // re-encryption keeps the plaintext and changes the ciphertext
    let r3 = group.random_scalar(&mut rng);
    let re = c1.reencrypt(group, &pk, &r3);
    assert_ne!(re, c1);
    assert_eq!(dlog.log(&re.decrypt(group, &kp.secret)).unwrap(), 17);
    // element ElGamal
    let m = group.pow_generator(&group.random_scalar(&mut rng));
    let ce = Ciphertext::encrypt_element(group, &pk, &m, &r1);
    assert_eq!(ce.decrypt(group, &kp.secret), m);
    // sum
    let cts: Vec<_> = (0..20u64)
        .map(|i| Ciphertext::encrypt_exp(group, &pk, i % 2, &group.scalar_from_u64(i + 1)))
        .collect();
    assert_eq!(
        dlog.log(&Ciphertext::sum(group, &cts).decrypt(group, &kp.secret))
            .unwrap(),
        10
    );
    // hashed
    let msg = b"a message longer than one thirty-two byte block of key stream".to_vec();
    let h = HashedCiphertext::encrypt(group, &pk, &msg, &r2);
    assert_eq!(h.decrypt(group, &kp.secret).unwrap(), msg);
    let parsed = HashedCiphertext::from_bytes(group, &h.to_bytes(group)).unwrap();
    assert_eq!(parsed, h);
    let mut bad = h.clone();
    bad.body[3] ^= 1;
    assert_eq!(bad.decrypt(group, &kp.secret), Err(ElGamalError::BadTag));
    let other = KeyPair::generate(group, &mut rng);
    assert_eq!(h.decrypt(group, &other.secret), Err(ElGamalError::BadTag));
    assert_eq!(
        HashedCiphertext::from_bytes(group, &[0u8; 3]),
        Err(ElGamalError::MalformedCiphertext)
    );
}

#[test]
fn elgamal_all_groups() {
    roundtrip(&Ristretto255, 1);
    roundtrip(&ModpGroup::rfc3526_2048(), 2);
    roundtrip(&ModpGroup::eg_4096(), 3);
}

#[test]
fn dlog_bounds() {
    let g = Ristretto255;
    let t = DlogTable::new(&g, 10_000);
    for m in [0u64, 1, 99, 100, 101, 9_999, 10_000] {
        assert_eq!(t.log(&g.pow_generator(&g.scalar_from_u64(m))).unwrap(), m);
    }
    assert_eq!(
        t.log(&g.pow_generator(&g.scalar_from_u64(10_001))),
        Err(ElGamalError::DlogNotFound { max: 10_000 })
    );
}

#[test]
fn identity_public_key_rejected() {
    let g = Ristretto255;
    assert_eq!(
        PublicKey::new(&g, g.identity()).unwrap_err(),
        ElGamalError::IdentityKey
    );
}

#[test]
fn threshold_decryption_any_quorum() {
    let group = ModpGroup::rfc3526_2048();
    let mut rng = ChaCha20Rng::seed_from_u64(9);
    let (n, k) = (5u64, 3usize);
    // each of n guardians deals a polynomial; joint key = product of constant commitments
    let polys: Vec<SecretPolynomial<ModpGroup>> = (0..n)
        .map(|_| SecretPolynomial::random(&group, k, &mut rng).unwrap())
        .collect();
    let commitments: Vec<_> = polys.iter().map(|p| p.commitments(&group)).collect();
    let joint = commitments
        .iter()
        .fold(group.identity(), |acc, c| group.op(&acc, &c[0]));
    let pk = PublicKey::new(&group, joint).unwrap();
    // guardian i's key share: sum over dealers of f_d(i), each checked against commitments
    let shares: Vec<_> = (1..=n)
        .map(|i| {
            polys
                .iter()
                .zip(&commitments)
                .fold(group.scalar_from_u64(0), |acc, (p, c)| {
                    let s = p.evaluate(&group, i);
                    verify_share(&group, c, i, &votum_group::Secret::new(s.clone())).unwrap();
                    group.scalar_add(&acc, &s)
                })
        })
        .collect();
    let r = group.random_scalar(&mut rng);
    let ct = Ciphertext::encrypt_exp(&group, &pk, 7, &r);
    let dlog = DlogTable::new(&group, 100);
    for present in [
        vec![1u64, 2, 3],
        vec![2, 4, 5],
        vec![5, 1, 3],
        vec![1, 2, 3, 4, 5],
    ] {
        let partials: Vec<_> = present
            .iter()
            .map(|&i| (i, group.pow(&ct.pad, &shares[(i - 1) as usize])))
            .collect();
        let combined = combine_partials(&group, &partials, k).unwrap();
        assert_eq!(
            dlog.log(&ct.decrypt_with_share(&group, &combined)).unwrap(),
            7
        );
        let secret_shares: Vec<_> = present
            .iter()
            .map(|&i| (i, shares[(i - 1) as usize].clone()))
            .collect();
        let s = recover_secret(&group, &secret_shares, k).unwrap();
        assert_eq!(group.pow_generator(&s), *pk.element());
    }
    // a wrong share is caught, too few shares and duplicates are refused
    let bad = group.scalar_add(&polys[0].evaluate(&group, 2), &group.scalar_from_u64(1));
    assert_eq!(
        verify_share(&group, &commitments[0], 2, &votum_group::Secret::new(bad)),
        Err(ElGamalError::InvalidShare { index: 2 })
    );
    assert_eq!(
        combine_partials(&group, &[(1, group.identity())], k).unwrap_err(),
        ElGamalError::TooFewShares { needed: 3, got: 1 }
    );
    assert_eq!(
        lagrange_coefficient(&group, 1, &[1, 2, 2]).unwrap_err(),
        ElGamalError::DuplicateIndex(2)
    );
    assert_eq!(
        lagrange_coefficient(&group, 4, &[1, 2, 3]).unwrap_err(),
        ElGamalError::NotPresent(4)
    );
    // the recovery public key g^{f(i)} is computed from commitments alone
    assert_eq!(
        public_share(&group, &commitments[1], 4).unwrap(),
        group.pow_generator(&polys[1].evaluate(&group, 4))
    );
    assert!(format!("{:?}", polys[0]).contains("redacted"));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn lagrange_reconstructs_from_any_quorum(seed in any::<u64>(), n in 2u64..8, pick in any::<u64>()) {
        let group = Ristretto255;
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let k = 1 + (pick % n) as usize;
        let poly = SecretPolynomial::random(&group, k, &mut rng).unwrap();
        // a pseudo-random subset of size >= k
        let mut ids: Vec<u64> = (1..=n).collect();
        ids.rotate_left((pick % n) as usize);
        let subset: Vec<_> = ids.iter().take(k + (pick as usize / 7) % (n as usize - k + 1)).map(|&i| (i, poly.evaluate(&group, i))).collect();
        let s = recover_secret(&group, &subset, k).unwrap();
        prop_assert_eq!(&s, poly.coefficients()[0].expose());
    }

    #[test]
    fn reencryption_preserves_plaintext(m in 0u64..1000, seed in any::<u64>(), rounds in 1usize..5) {
        let group = Ristretto255;
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let kp = KeyPair::generate(&group, &mut rng);
        let mut c = Ciphertext::encrypt_exp(&group, &kp.public, m, &group.random_scalar(&mut rng));
        for _ in 0..rounds {
            let next = c.reencrypt(&group, &kp.public, &group.random_scalar(&mut rng));
            prop_assert_ne!(&next, &c);
            c = next;
        }
        prop_assert_eq!(DlogTable::new(&group, 1000).log(&c.decrypt(&group, &kp.secret)).unwrap(), m);
    }

    #[test]
    fn homomorphic_sum(ms in proptest::collection::vec(0u64..50, 1..12), seed in any::<u64>()) {
        let group = Ristretto255;
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let kp = KeyPair::generate(&group, &mut rng);
        let cts: Vec<_> = ms.iter().map(|&m| Ciphertext::encrypt_exp(&group, &kp.public, m, &group.random_scalar(&mut rng))).collect();
        let dlog = DlogTable::new(&group, 1000);
        prop_assert_eq!(dlog.log(&Ciphertext::sum(&group, &cts).decrypt(&group, &kp.secret)).unwrap(), ms.iter().sum::<u64>());
    }
}
