#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha20Rng;
use votum_elgamal::{Ciphertext, KeyPair, PublicKey};
use votum_group::{Group, ModpGroup, Ristretto255};
use votum_proofs::*;

fn all_proofs<G: Group, O: ChallengeOracle<G>>(group: &G, oracle: &O, seed: u64) {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let kp = KeyPair::generate(group, &mut rng);
    let pk = PublicKey::with_table(group, kp.public.element().clone()).unwrap();
    let k = pk.element().clone();
    // Schnorr
    let sp = SchnorrProof::prove(group, oracle, kp.secret.secret(), &k, &mut rng);
    sp.verify(group, oracle, &k).unwrap();
    let mut t = sp.clone();
    t.challenge = group.scalar_add(&t.challenge, &group.scalar_from_u64(1));
    assert_eq!(
        t.verify(group, oracle, &k),
        Err(ProofError::ChallengeMismatch { proof: "schnorr" })
    );
    let mut t = sp.clone();
    t.commitment = group.op(&t.commitment, group.generator());
    assert_eq!(
        t.verify(group, oracle, &k),
        Err(ProofError::ChallengeMismatch { proof: "schnorr" })
    );
    let mut t = sp.clone();
    t.response = group.scalar_add(&t.response, &group.scalar_from_u64(1));
    assert!(matches!(
        t.verify(group, oracle, &k),
        Err(ProofError::Equation { .. })
    ));
    // Chaum–Pedersen: a correct decryption share
    let r = group.random_scalar(&mut rng);
    let c = Ciphertext::encrypt_exp(group, &pk, 1, &r);
    let m = c.partial_decrypt(group, &kp.secret);
    let st = Statement {
        g1: group.generator(),
        a: &k,
        g2: &c.pad,
        b: &m,
    };
    let prefix = [&c.pad, &c.data];
    let cp = ChaumPedersenProof::prove(
        group,
        oracle,
        &st,
        kp.secret.expose(),
        &prefix,
        &[&m],
        &mut rng,
    );
    cp.verify(group, oracle, &st, &prefix, &[&m]).unwrap();
    let mut t = cp.clone();
    t.response = group.scalar_add(&t.response, &group.scalar_from_u64(1));
    assert_eq!(
        t.verify(group, oracle, &st, &prefix, &[&m]),
        Err(ProofError::Equation {
            proof: "chaum-pedersen",
            equation: "g1^v = a·A^c"
        })
    );
    let mut t = cp.clone();
    t.data = group.op(&t.data, group.generator());
    assert_eq!(
        t.verify(group, oracle, &st, &prefix, &[&m]),
        Err(ProofError::ChallengeMismatch {
            proof: "chaum-pedersen"
        })
    );
    // a wrong share with a proof made for it anyway (prover does not know the log) fails
    let wrong = group.op(&m, group.generator());
    let st_wrong = Statement {
        g1: group.generator(),
        a: &k,
        g2: &c.pad,
        b: &wrong,
    };
    let forged = ChaumPedersenProof::prove(
        group,
        oracle,
        &st_wrong,
        kp.secret.expose(),
        &prefix,
        &[&wrong],
        &mut rng,
    );
    assert_eq!(
        forged.verify(group, oracle, &st_wrong, &prefix, &[&wrong]),
        Err(ProofError::Equation {
            proof: "chaum-pedersen",
            equation: "g2^v = b·B^c"
        })
    );
    // Disjunctive, both bits; not a bit refuses
    for bit in [0u64, 1] {
        let r = group.random_scalar(&mut rng);
        let c = Ciphertext::encrypt_exp(group, &pk, bit, &r);
        let n: Vec<_> = (0..3).map(|_| group.random_scalar(&mut rng)).collect();
        let p = DisjunctiveProof::prove_with_nonces(
            group,
            oracle,
            &pk,
            &c,
            bit,
            &r,
            [&n[0], &n[1], &n[2]],
        )
        .unwrap();
        p.verify(group, oracle, &k, &c).unwrap();
        // the same proof does not fit a ciphertext of 2
        let c2 = Ciphertext::encrypt_exp(group, &pk, 2, &r);
        assert!(p.verify(group, oracle, &k, &c2).is_err());
        // a cheating prover claiming bit for an encryption of 2 fails
        let cheat = DisjunctiveProof::prove_with_nonces(
            group,
            oracle,
            &pk,
            &c2,
            bit,
            &r,
            [&n[0], &n[1], &n[2]],
        )
        .unwrap();
        assert!(matches!(
            cheat.verify(group, oracle, &k, &c2),
            Err(ProofError::Equation { .. })
        ));
    }
    let c2 = Ciphertext::encrypt_exp(group, &pk, 2, &r);
    let n = group.scalar_from_u64(5);
    assert!(matches!(
        DisjunctiveProof::prove_with_nonces(group, oracle, &pk, &c2, 2, &r, [&n, &n, &n]),
        Err(ProofError::NotABit { .. })
    ));
    // Constant proof over a sum of selections
    let rs: Vec<_> = (0..4).map(|_| group.random_scalar(&mut rng)).collect();
    let bits = [0u64, 1, 1, 0];
    let cts: Vec<_> = bits
        .iter()
        .zip(&rs)
        .map(|(b, r)| Ciphertext::encrypt_exp(group, &pk, *b, r))
        .collect();
    let acc = Ciphertext::sum(group, &cts);
    let r_sum = rs
        .iter()
        .fold(group.scalar_from_u64(0), |a, r| group.scalar_add(&a, r));
    let u = group.random_scalar(&mut rng);
    let p = ConstantProof::prove_with_nonce(group, oracle, &pk, &acc, 2, &r_sum, &u);
    p.verify(group, oracle, &k, &acc, 2).unwrap();
    let lie = ConstantProof::prove_with_nonce(group, oracle, &pk, &acc, 1, &r_sum, &u);
    assert_eq!(
        lie.verify(group, oracle, &k, &acc, 1),
        Err(ProofError::Equation {
            proof: "constant",
            equation: "g^(cL)·K^v = b·β^c"
        })
    );
}

#[test]
fn proofs_native_oracle_all_groups() {
    let oracle = NativeOracle::new(b"test-election");
    all_proofs(&Ristretto255, &oracle, 1);
    all_proofs(&ModpGroup::rfc3526_2048(), &oracle, 2);
}

#[test]
fn proofs_eg1_oracle() {
    let oracle = Eg1Oracle::new(votum_arith::Integer::from(12345));
    all_proofs(&ModpGroup::eg_4096(), &oracle, 3);
}

#[test]
fn native_context_separates_proofs() {
    let g = Ristretto255;
    let mut rng = ChaCha20Rng::seed_from_u64(4);
    let kp = KeyPair::generate(&g, &mut rng);
    let p = SchnorrProof::prove(
        &g,
        &NativeOracle::new(b"a"),
        kp.secret.secret(),
        kp.public.element(),
        &mut rng,
    );
    assert_eq!(
        p.verify(&g, &NativeOracle::new(b"b"), kp.public.element()),
        Err(ProofError::ChallengeMismatch { proof: "schnorr" })
    );
}

#[test]
fn batch_bits_prove_and_verify() {
    use votum_proofs::batch::{encrypt_bits_with_proofs, verify_bits};
    let g = Ristretto255;
    let oracle = NativeOracle::new(b"batch");
    let mut rng = ChaCha20Rng::seed_from_u64(11);
    let kp = KeyPair::generate(&g, &mut rng);
    let bits: Vec<u64> = (0..50).map(|i| i % 3 % 2).collect();
    let mut items = encrypt_bits_with_proofs(&g, &oracle, &kp.public, &bits, &mut rng).unwrap();
    verify_bits(&g, &oracle, kp.public.element(), &items).unwrap();
    // deterministic given the seed
    let again = encrypt_bits_with_proofs(
        &g,
        &oracle,
        &kp.public,
        &bits,
        &mut ChaCha20Rng::seed_from_u64(11),
    )
    .unwrap();
    let first = encrypt_bits_with_proofs(
        &g,
        &oracle,
        &kp.public,
        &bits,
        &mut ChaCha20Rng::seed_from_u64(11),
    )
    .unwrap();
    assert_eq!(again[7].ciphertext, first[7].ciphertext);
    // swap two ciphertexts: the first bad index is reported
    let c = items[3].ciphertext.clone();
    items[3].ciphertext = items[9].ciphertext.clone();
    items[9].ciphertext = c;
    assert_eq!(
        verify_bits(&g, &oracle, kp.public.element(), &items).unwrap_err(),
        (
            3,
            ProofError::ChallengeMismatch {
                proof: "disjunctive"
            }
        )
    );
    assert!(encrypt_bits_with_proofs(&g, &oracle, &kp.public, &[0, 2], &mut rng).is_err());
}
