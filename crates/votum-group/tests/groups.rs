#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use proptest::prelude::*;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha20Rng;
use votum_group::{Group, GroupError, GroupId, Integer, ModpGroup, Ristretto255};

fn algebra<G: Group>(group: &G) {
    let mut rng = ChaCha20Rng::seed_from_u64(7);
    let g = group.generator().clone();
    let q = group.order().clone();
    // g^q = 1 and g != 1
    let q_minus_1 = group.scalar_from_integer(&(q.clone() - 1u32));
    assert_eq!(group.op(&group.pow(&g, &q_minus_1), &g), group.identity());
    assert_ne!(g, group.identity());
    for _ in 0..4 {
        let a = group.random_scalar(&mut rng);
        let b = group.random_scalar(&mut rng);
        let ga = group.pow_generator(&a);
        assert_eq!(ga, group.pow(&g, &a));
        assert_eq!(
            ga,
            group.pow_secret(&g, &votum_group::Secret::new(a.clone()))
        );
        let table = group.table(&ga);
        assert_eq!(group.pow_table(&table, &b), group.pow(&ga, &b));
        // g^a g^b = g^(a+b); (g^a)^b = g^(ab)
        assert_eq!(
            group.op(&ga, &group.pow_generator(&b)),
            group.pow_generator(&group.scalar_add(&a, &b))
        );
        assert_eq!(
            group.pow(&ga, &b),
            group.pow_generator(&group.scalar_mul(&a, &b))
        );
        assert_eq!(group.div(&ga, &ga), group.identity());
        // multi_pow = product of pows
        let gb = group.pow_generator(&b);
        assert_eq!(
            group
                .multi_pow(&[ga.clone(), gb.clone()], &[b.clone(), a.clone()])
                .unwrap(),
            group.op(&group.pow(&ga, &b), &group.pow(&gb, &a))
        );
        // encodings round trip at fixed width
        let bytes = group.encode_element(&ga);
        assert_eq!(bytes.len(), group.element_len());
        assert_eq!(group.decode_element(&bytes).unwrap(), ga);
        let sb = group.encode_scalar(&a);
        assert_eq!(sb.len(), group.scalar_len());
        assert_eq!(group.decode_scalar(&sb).unwrap(), a);
        let inv = group.scalar_inverse(&a).unwrap();
        assert_eq!(group.scalar_mul(&a, &inv), group.scalar_from_u64(1));
        assert_eq!(
            group.scalar_to_integer(&group.scalar_from_integer(&group.scalar_to_integer(&a))),
            group.scalar_to_integer(&a)
        );
    }
    assert_eq!(group.scalar_from_integer(&Integer::from(-1)), q_minus_1);
    assert_eq!(
        group.scalar_inverse(&group.scalar_from_u64(0)),
        Err(GroupError::ZeroInverse)
    );
    // wrong lengths
    assert!(matches!(
        group.decode_element(&[1, 2, 3]),
        Err(GroupError::WrongLength { .. })
    ));
    assert!(matches!(
        group.decode_scalar(&[1]),
        Err(GroupError::WrongLength { .. })
    ));
    // scalar q is out of range
    let mut q_bytes = q.to_digits::<u8>(votum_arith::Order::Msf);
    if group.id() == GroupId::Ristretto255 {
        q_bytes.reverse();
    }
    let mut padded = vec![0u8; group.scalar_len() - q_bytes.len()];
    padded.extend_from_slice(&q_bytes);
    if group.id() == GroupId::Ristretto255 {
        padded = q_bytes.clone();
        padded.resize(32, 0);
    }
    assert_eq!(
        group.decode_scalar(&padded),
        Err(GroupError::ScalarOutOfRange)
    );
    // hashing to the group gives members
    let h = group
        .element_from_uniform(&vec![0x5a; group.uniform_len()])
        .unwrap();
    assert_eq!(group.decode_element(&group.encode_element(&h)).unwrap(), h);
}

#[test]
fn algebra_all_groups() {
    algebra(&ModpGroup::eg_4096());
    algebra(&ModpGroup::rfc3526_2048());
    algebra(&ModpGroup::rfc3526_3072());
    algebra(&Ristretto255);
}

#[test]
fn eg_parameters_are_the_standard_ones() {
    let g = ModpGroup::eg_4096();
    let p = g.p().clone();
    let q = g.order().clone();
    assert_eq!(p.significant_bits(), 4096);
    assert_eq!(q, (Integer::from(1) << 256u32) - 189u32);
    assert_eq!(Integer::from(&p - 1u32), Integer::from(&q * g.cofactor()));
    assert_ne!(p.is_probably_prime(30), rug::integer::IsPrime::No);
    assert_ne!(q.is_probably_prime(30), rug::integer::IsPrime::No);
    let two_r = g.modulus().pow(&Integer::from(2), g.cofactor()).unwrap();
    assert_eq!(&two_r, g.generator().value());
    // top and bottom 256 bits all ones
    assert_eq!(
        Integer::from(&p >> 3840u32),
        (Integer::from(1) << 256u32) - 1u32
    );
    assert_eq!(
        &p % (Integer::from(1) << 256u32),
        (Integer::from(1) << 256u32) - 1u32
    );
}

#[test]
fn rfc3526_are_safe_primes_with_published_prefix() {
    for (g, bits) in [
        (ModpGroup::rfc3526_2048(), 2048u32),
        (ModpGroup::rfc3526_3072(), 3072),
    ] {
        let p = g.p().clone();
        assert_eq!(p.significant_bits(), bits);
        assert_ne!(p.is_probably_prime(30), rug::integer::IsPrime::No);
        assert_ne!(g.order().is_probably_prime(30), rug::integer::IsPrime::No);
        assert!(p
            .to_string_radix(16)
            .starts_with("ffffffffffffffffc90fdaa22168c234c4c6628b80dc1cd1"));
        assert_eq!(g.generator().value(), &Integer::from(2));
    }
}

#[test]
fn modp_rejects_non_members_and_out_of_range() {
    for group in [ModpGroup::eg_4096(), ModpGroup::rfc3526_2048()] {
        let len = group.element_len();
        let enc = |x: &Integer| {
            let d = x.to_digits::<u8>(votum_arith::Order::Msf);
            let mut v = vec![0u8; len - d.len()];
            v.extend_from_slice(&d);
            v
        };
        assert_eq!(
            group.decode_element(&vec![0u8; len]),
            Err(GroupError::OutOfRange)
        );
        assert_eq!(
            group.decode_element(&enc(group.p())),
            Err(GroupError::OutOfRange)
        );
        let p_minus_1 = Integer::from(group.p() - 1u32); // order 2: not in the subgroup
        assert_eq!(
            group.decode_element(&enc(&p_minus_1)),
            Err(GroupError::NotInSubgroup)
        );
        assert_eq!(
            group.decode_element(&vec![0xff; len]),
            Err(GroupError::OutOfRange)
        );
    }
    // 3 is a non-residue modulo the 2048-bit safe prime? Either way, membership must agree with x^q.
    let g = ModpGroup::rfc3526_2048();
    let three = Integer::from(3);
    let by_pow = g.modulus().pow(&three, g.order()).unwrap() == 1;
    assert_eq!(g.is_member(&three), by_pow);
}

#[test]
fn ristretto_rejects_non_canonical() {
    let g = Ristretto255;
    // 2^255 - 1 is not a canonical field element
    assert_eq!(g.decode_element(&[0xff; 32]), Err(GroupError::NonCanonical));
    assert_eq!(
        g.decode_scalar(&[0xff; 32]),
        Err(GroupError::ScalarOutOfRange)
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn decoders_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        let eg = ModpGroup::rfc3526_2048();
        let _ = eg.decode_element(&bytes);
        let _ = eg.decode_scalar(&bytes);
        let _ = Ristretto255.decode_element(&bytes);
        let _ = Ristretto255.decode_scalar(&bytes);
    }

    #[test]
    fn modp_decoded_elements_are_members(bytes in proptest::collection::vec(any::<u8>(), 256)) {
        let g = ModpGroup::rfc3526_2048();
        if let Ok(e) = g.decode_element(&bytes) {
            prop_assert!(g.modulus().pow(e.value(), g.order()).unwrap() == 1);
        }
    }
}
