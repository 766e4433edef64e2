#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha20Rng;
use votum_elgamal::{Ciphertext, KeyPair, PublicKey};
use votum_group::{Group, GroupError, ModpGroup, Ristretto255};
use votum_shuffle::{
    shuffle_and_prove, Generators, PreparedShuffle, Rows, ShuffleError, ShuffleProof,
};

const CONTEXT: &[u8] = b"board head before the mixer posts";

struct Setup<G: Group> {
    group: G,
    kp: KeyPair<G>,
    pk: PublicKey<G>,
    gens: Generators<G>,
    messages: Vec<G::Element>,
    inputs: Rows<G>,
}

fn setup<G: Group>(group: G, n: usize, w: usize, seed: u64) -> Setup<G> {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let kp = KeyPair::generate(&group, &mut rng);
    let pk = PublicKey::with_table(&group, kp.public.element().clone()).unwrap();
    let gens = Generators::derive(&group, b"election generators", n);
    let messages: Vec<G::Element> = (0..n * w)
        .map(|_| group.pow_generator(&group.random_scalar(&mut rng)))
        .collect();
    let cts = messages
        .iter()
        .map(|m| Ciphertext::encrypt_element(&group, &pk, m, &group.random_scalar(&mut rng)))
        .collect();
    let inputs = Rows::new(w, cts).unwrap();
    Setup {
        group,
        kp,
        pk,
        gens,
        messages,
        inputs,
    }
}

fn rows_of<G: Group>(s: &Setup<G>, rows: &Rows<G>) -> Vec<Vec<G::Element>> {
    (0..rows.len())
        .map(|i| {
            rows.row(i)
                .iter()
                .map(|ct| ct.decrypt(&s.group, &s.kp.secret))
                .collect()
        })
        .collect()
}

fn verify<G: Group>(
    s: &Setup<G>,
    out: &Rows<G>,
    proof: &ShuffleProof<G>,
) -> Result<(), ShuffleError> {
    proof.verify(
        &s.group,
        s.pk.element(),
        &s.gens,
        CONTEXT,
        &s.inputs,
        out,
        &mut ChaCha20Rng::seed_from_u64(99),
    )
}

fn honest<G: Group>(group: G, n: usize, w: usize) {
    let s = setup(group, n, w, n as u64 * 10 + w as u64);
    let mut rng = ChaCha20Rng::seed_from_u64(7);
    let (out, proof) =
        shuffle_and_prove(&s.group, &s.pk, &s.gens, CONTEXT, &s.inputs, &mut rng).unwrap();
    assert_eq!((out.len(), out.width()), (n, w));
    verify(&s, &out, &proof).unwrap();
    // the rows' plaintexts are the same multiset (rows kept whole), every ciphertext changed
    let mut before: Vec<Vec<Vec<u8>>> = rows_of(&s, &s.inputs)
        .iter()
        .map(|r| r.iter().map(|e| s.group.encode_element(e)).collect())
        .collect();
    let mut after: Vec<Vec<Vec<u8>>> = rows_of(&s, &out)
        .iter()
        .map(|r| r.iter().map(|e| s.group.encode_element(e)).collect())
        .collect();
    assert_eq!(before.len(), s.messages.len() / w);
    before.sort();
    after.sort();
    assert_eq!(before, after);
    for ct in out.ciphertexts() {
        assert!(!s.inputs.ciphertexts().contains(ct));
    }
    // encodings round-trip
    let bytes = proof.encode(&s.group);
    assert_eq!(bytes.len(), ShuffleProof::<G>::encoded_len(&s.group, n, w));
    let mut r = ChaCha20Rng::seed_from_u64(1);
    let back = ShuffleProof::decode(&s.group, &bytes, n, w, &mut r).unwrap();
    assert_eq!(back, proof);
    let out_bytes = out.encode(&s.group);
    let out_back = Rows::decode(&s.group, &out_bytes, &mut r).unwrap();
    assert_eq!(out_back, out);
    assert_eq!(out_back.digest(&s.group), out.digest(&s.group));
    verify(&s, &out_back, &back).unwrap();
}

#[test]
fn honest_shuffles_verify_ristretto() {
    for w in 1..=3 {
        for n in [1, 2, 100] {
            honest(Ristretto255, n, w);
        }
    }
    honest(Ristretto255, 10_000, 1);
}

#[test]
fn honest_shuffles_verify_modp_2048() {
    for w in 1..=3 {
        for n in [1, 2, 17] {
            honest(ModpGroup::rfc3526_2048(), n, w);
        }
    }
    honest(ModpGroup::rfc3526_2048(), 100, 1);
}

#[test]
fn honest_shuffles_verify_eg_4096() {
    for (n, w) in [(1, 1), (2, 3), (20, 2)] {
        honest(ModpGroup::eg_4096(), n, w);
    }
}

fn expect_equation<G: Group>(s: &Setup<G>, out: &Rows<G>, proof: &ShuffleProof<G>) {
    match verify(s, out, proof) {
        Err(ShuffleError::Equation { .. }) => {}
        other => panic!("expected an equation failure, got {other:?}"),
    }
}

fn tampering<G: Group>(group: G) {
    let (n, w) = (12, 2);
    let s = setup(group, n, w, 5);
    let g = &s.group;
    let mut rng = ChaCha20Rng::seed_from_u64(8);
    let (out, proof) = shuffle_and_prove(g, &s.pk, &s.gens, CONTEXT, &s.inputs, &mut rng).unwrap();
    verify(&s, &out, &proof).unwrap();
    let rebuild = |f: &dyn Fn(&mut Vec<Ciphertext<G>>)| {
        let mut cts = out.ciphertexts().to_vec();
        f(&mut cts);
        Rows::new(w, cts).unwrap()
    };
    // two output rows swapped
    expect_equation(
        &s,
        &rebuild(&|c| {
            c.swap(0, w);
            c.swap(1, w + 1);
        }),
        &proof,
    );
    // one output re-encrypted with another nonce (same plaintext)
    expect_equation(
        &s,
        &rebuild(&|c| {
            c[3] = c[3].reencrypt(g, &s.pk, &g.scalar_from_u64(5));
        }),
        &proof,
    );
    // one output replaced by a fresh encryption of its plaintext's neighbour
    expect_equation(
        &s,
        &rebuild(&|c| {
            c[4] = Ciphertext::encrypt_element(g, &s.pk, &s.messages[0], &g.scalar_from_u64(9));
        }),
        &proof,
    );
    // inputs changed after the fact
    let mut inputs = s.inputs.ciphertexts().to_vec();
    inputs[0] = inputs[0].reencrypt(g, &s.pk, &g.scalar_from_u64(3));
    let other = Rows::new(w, inputs).unwrap();
    assert!(matches!(
        proof.verify(
            g,
            s.pk.element(),
            &s.gens,
            CONTEXT,
            &other,
            &out,
            &mut rand_chacha::ChaCha20Rng::seed_from_u64(1)
        ),
        Err(ShuffleError::Equation { .. })
    ));
    // another context, key or generator seed
    let mut r = ChaCha20Rng::seed_from_u64(2);
    assert!(proof
        .verify(
            g,
            s.pk.element(),
            &s.gens,
            b"other",
            &s.inputs,
            &out,
            &mut r
        )
        .is_err());
    let other_key = g.pow_generator(&g.scalar_from_u64(12345));
    assert!(proof
        .verify(g, &other_key, &s.gens, CONTEXT, &s.inputs, &out, &mut r)
        .is_err());
    let other_gens = Generators::derive(g, b"other seed", n);
    assert!(proof
        .verify(
            g,
            s.pk.element(),
            &other_gens,
            CONTEXT,
            &s.inputs,
            &out,
            &mut r
        )
        .is_err());
    // each part of the proof
    let one = g.scalar_from_u64(1);
    let bump = |e: &G::Element| g.op(e, g.generator());
    let mut cases: Vec<(&str, ShuffleProof<G>)> = Vec::new();
    let mut p = proof.clone();
    p.commitments[2] = bump(&p.commitments[2]);
    cases.push(("commitment", p));
    let mut p = proof.clone();
    p.chain[5] = bump(&p.chain[5]);
    cases.push(("chain", p));
    let mut p = proof.clone();
    p.t1 = bump(&p.t1);
    cases.push(("t1", p));
    let mut p = proof.clone();
    p.t3 = bump(&p.t3);
    cases.push(("t3", p));
    let mut p = proof.clone();
    p.t4[1].data = bump(&p.t4[1].data);
    cases.push(("t4", p));
    let mut p = proof.clone();
    p.t_hat[n - 1] = bump(&p.t_hat[n - 1]);
    cases.push(("t-hat", p));
    let mut p = proof.clone();
    p.s2 = g.scalar_add(&p.s2, &one);
    cases.push(("s2", p));
    let mut p = proof.clone();
    p.s4[0] = g.scalar_add(&p.s4[0], &one);
    cases.push(("s4", p));
    let mut p = proof.clone();
    p.s_hat[3] = g.scalar_add(&p.s_hat[3], &one);
    cases.push(("s-hat", p));
    let mut p = proof.clone();
    p.s_prime[7] = g.scalar_add(&p.s_prime[7], &one);
    cases.push(("s-prime", p));
    for (what, p) in &cases {
        assert!(
            matches!(verify(&s, &out, p), Err(ShuffleError::Equation { .. })),
            "{what} tampered but accepted"
        );
    }
    // a wrong s-hat fails exactly its own t-hat equation (challenges unchanged)
    assert_eq!(
        verify(&s, &out, &cases[8].1),
        Err(ShuffleError::Equation {
            name: "t-hat",
            index: 3
        })
    );
    assert_eq!(
        verify(&s, &out, &cases[7].1),
        Err(ShuffleError::Equation {
            name: "t4",
            index: 0
        })
    );
    // wrong lengths
    let mut p = proof.clone();
    p.s_prime.pop();
    assert!(matches!(
        verify(&s, &out, &p),
        Err(ShuffleError::Length { .. })
    ));
    let fewer = Rows::new(w, out.ciphertexts()[..2 * w].to_vec()).unwrap();
    assert!(matches!(
        verify(&s, &fewer, &proof),
        Err(ShuffleError::Length { .. })
    ));
}

#[test]
fn tampering_is_rejected_ristretto() {
    tampering(Ristretto255);
}

#[test]
fn tampering_is_rejected_modp_2048() {
    tampering(ModpGroup::rfc3526_2048());
}

#[test]
fn decoding_rejects_bad_bytes() {
    let g = ModpGroup::rfc3526_2048();
    let s = setup(g.clone(), 3, 1, 11);
    let mut rng = ChaCha20Rng::seed_from_u64(3);
    let (out, proof) = shuffle_and_prove(&g, &s.pk, &s.gens, CONTEXT, &s.inputs, &mut rng).unwrap();
    let bytes = proof.encode(&g);
    let dec = |b: &[u8], n: usize, w: usize| {
        ShuffleProof::decode(&g, b, n, w, &mut ChaCha20Rng::seed_from_u64(4))
    };
    assert!(dec(&bytes, 3, 1).is_ok());
    assert!(matches!(
        dec(&bytes, 4, 1),
        Err(ShuffleError::Length { .. })
    ));
    assert!(matches!(
        dec(&bytes, 3, 2),
        Err(ShuffleError::Length { .. })
    ));
    assert!(matches!(
        dec(&bytes[..bytes.len() - 1], 3, 1),
        Err(ShuffleError::Length { .. })
    ));
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(matches!(
        dec(&longer, 3, 1),
        Err(ShuffleError::Length { .. })
    ));
    let mut v2 = bytes.clone();
    v2[13] = 2;
    assert!(matches!(dec(&v2, 3, 1), Err(ShuffleError::Encoding(_))));
    assert!(matches!(
        ShuffleProof::decode(&Ristretto255, &bytes, 3, 1, &mut rng),
        Err(ShuffleError::Encoding(_))
    ));
    // p − 1 has Jacobi symbol −1 modulo the safe prime: not in the subgroup
    let at = 13 + 2 + "modp-2048".len() + 16 + 256; // the second commitment
    let mut bad = bytes.clone();
    let minus_one =
        votum_group::Integer::from(g.p() - 1u32).to_digits::<u8>(votum_group::Order::Msf);
    bad[at..at + 256].copy_from_slice(&minus_one);
    assert_eq!(
        dec(&bad, 3, 1),
        Err(ShuffleError::Element {
            what: "shuffle proof element",
            index: 1,
            source: GroupError::NotInSubgroup
        })
    );
    // a scalar ≥ q
    let mut bad = bytes.clone();
    let end = bad.len();
    bad[end - 256..].fill(0xff);
    // the last of 3 + w + 2N = 10 scalars
    assert!(matches!(
        dec(&bad, 3, 1),
        Err(ShuffleError::Element {
            what: "shuffle proof scalar",
            index: 9,
            ..
        })
    ));
    // ciphertext lists
    let ob = out.encode(&g);
    assert!(Rows::decode(&g, &ob, &mut rng).is_ok());
    assert!(matches!(
        Rows::<ModpGroup>::decode(&g, &ob[..ob.len() - 3], &mut rng),
        Err(ShuffleError::Length { .. })
    ));
    assert!(matches!(
        Rows::<ModpGroup>::decode(&g, &ob[..7], &mut rng),
        Err(ShuffleError::Encoding(_))
    ));
    let mut bad = ob.clone();
    bad[16 + 256..16 + 512].copy_from_slice(&minus_one);
    assert!(matches!(
        Rows::<ModpGroup>::decode(&g, &bad, &mut rng),
        Err(ShuffleError::Element {
            index: 1,
            source: GroupError::NotInSubgroup,
            ..
        })
    ));
}

#[test]
fn eg_4096_batched_membership_names_the_non_member() {
    // an element of Jacobi symbol 1 outside the order-q subgroup: 4 = 2^2 has order dividing (p−1)/2
    // but (for this p) not q
    let g = ModpGroup::eg_4096();
    let el = g.element_len();
    let mut bytes = Vec::new();
    for i in 1..=5u64 {
        bytes.extend(g.encode_element(&g.pow_generator(&g.scalar_from_u64(i))));
    }
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    assert_eq!(g.decode_many(&bytes, &mut rng).unwrap().len(), 5);
    let four = votum_group::Integer::from(4u32);
    assert!(!g.is_member(&four));
    let mut four_bytes = vec![0u8; el];
    four_bytes[el - 1] = 4;
    bytes[2 * el..3 * el].copy_from_slice(&four_bytes);
    assert_eq!(
        g.decode_many(&bytes, &mut rng).unwrap_err(),
        (2, GroupError::NotInSubgroup)
    );
}

#[test]
fn seeded_runs_do_not_depend_on_threads() {
    let s = setup(Ristretto255, 300, 2, 1);
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let mut rng = ChaCha20Rng::seed_from_u64(42);
            shuffle_and_prove(&s.group, &s.pk, &s.gens, CONTEXT, &s.inputs, &mut rng).unwrap()
        })
    };
    let (o1, p1) = run(1);
    let (o2, p2) = run(3);
    assert_eq!(o1, o2);
    assert_eq!(p1, p2);
}

#[test]
fn prepared_shuffle_checks_its_inputs() {
    let s = setup(Ristretto255, 5, 1, 2);
    let mut rng = ChaCha20Rng::seed_from_u64(3);
    let prepared = PreparedShuffle::prepare(&s.group, &s.pk, &s.gens, 4, 1, &mut rng).unwrap();
    assert!(format!("{prepared:?}").contains("rows: 4"));
    assert!(matches!(
        prepared.apply(&s.inputs, CONTEXT),
        Err(ShuffleError::Length {
            what: "input rows",
            ..
        })
    ));
    let small = Generators::derive(&s.group, b"g", 2);
    assert!(matches!(
        PreparedShuffle::prepare(&s.group, &s.pk, &small, 5, 1, &mut rng),
        Err(ShuffleError::Length { .. })
    ));
    assert!(matches!(
        PreparedShuffle::prepare(&s.group, &s.pk, &s.gens, 0, 1, &mut rng),
        Err(ShuffleError::Length { what: "rows", .. })
    ));
    // an offline preparation applied later gives a valid proof
    let prepared = PreparedShuffle::prepare(&s.group, &s.pk, &s.gens, 5, 1, &mut rng).unwrap();
    let (out, proof) = prepared.apply(&s.inputs, CONTEXT).unwrap();
    verify(&s, &out, &proof).unwrap();
}

#[test]
fn short_nonces_re_encrypt_with_short_exponents_and_verify() {
    let group = ModpGroup::rfc3526_2048();
    // one row of two: the permutation is the identity, so out.pad / in.pad = g^r for each nonce
    let s = setup(group.clone(), 1, 2, 5);
    let mut rng = ChaCha20Rng::seed_from_u64(6);
    let prepared =
        PreparedShuffle::prepare_with_nonce_bits(&group, &s.pk, &s.gens, 1, 2, Some(12), &mut rng)
            .unwrap();
    let (out, proof) = prepared.apply(&s.inputs, CONTEXT).unwrap();
    verify(&s, &out, &proof).unwrap();
    assert_eq!(rows_of(&s, &out), rows_of(&s, &s.inputs));
    for k in 0..2 {
        let ratio = group.div(&out.row(0)[k].pad, &s.inputs.row(0)[k].pad);
        // the discrete logarithm of the ratio is found below 2^12 by stepping through g^i
        let mut x = group.identity();
        let found = (0..1u32 << 12).any(|_| {
            let hit = x == ratio;
            x = group.op(&x, group.generator());
            hit
        });
        assert!(found, "nonce {k} is not below 2^12");
    }
    // a full-length run of the same shuffle is not (2^-2036 chance of a false failure)
    let mut rng = ChaCha20Rng::seed_from_u64(6);
    let (out, _) = shuffle_and_prove(&group, &s.pk, &s.gens, CONTEXT, &s.inputs, &mut rng).unwrap();
    let ratio = group.div(&out.row(0)[0].pad, &s.inputs.row(0)[0].pad);
    let mut x = group.identity();
    assert!((0..1u32 << 12).all(|_| {
        let miss = x != ratio;
        x = group.op(&x, group.generator());
        miss
    }));
    // five rows with short nonces: the proof verifies and the messages are kept
    let s = setup(group.clone(), 5, 1, 7);
    let prepared =
        PreparedShuffle::prepare_with_nonce_bits(&group, &s.pk, &s.gens, 5, 1, Some(224), &mut rng)
            .unwrap();
    let (out, proof) = prepared.apply(&s.inputs, CONTEXT).unwrap();
    verify(&s, &out, &proof).unwrap();
    let mut a = rows_of(&s, &out);
    let mut b = rows_of(&s, &s.inputs);
    a.sort_by_key(|r| group.encode_element(&r[0]));
    b.sort_by_key(|r| group.encode_element(&r[0]));
    assert_eq!(a, b);
}

/// Powers done on "workers" (spec/98.7): here, tables in this process behind the byte interface a
/// cluster uses, optionally corrupting one answer.
struct Inline<G: Group> {
    group: G,
    tables: Option<votum_shuffle::remote::PowTables<G>>,
    corrupt: bool,
    batches: usize,
}

impl<G: Group> votum_shuffle::remote::PowWorkers for Inline<G> {
    fn setup(&mut self, group: &str, pk: &[u8], h: &[u8]) -> Result<(), String> {
        assert_eq!(group, self.group.id().name());
        self.tables = Some(votum_shuffle::remote::PowTables::new(
            self.group.clone(),
            pk,
            h,
        )?);
        Ok(())
    }
    fn fixed(
        &mut self,
        chunks: &[(votum_shuffle::remote::Base, Vec<u8>)],
    ) -> Result<Vec<Vec<u8>>, String> {
        self.batches += 1;
        let t = self.tables.as_ref().unwrap();
        let mut out = chunks
            .iter()
            .map(|(base, c)| t.fixed(*base, c))
            .collect::<Result<Vec<_>, _>>()?;
        if self.corrupt {
            // one power of h replaced by another group element: g
            if let Some(k) = chunks
                .iter()
                .position(|(b, _)| *b == votum_shuffle::remote::Base::H)
            {
                let len = self.group.element_len();
                out[k][..len].copy_from_slice(&self.group.encode_element(self.group.generator()));
            }
        }
        Ok(out)
    }
    fn multi(&mut self, jobs: &[(Vec<u8>, Vec<u8>)]) -> Result<Vec<Vec<u8>>, String> {
        self.batches += 1;
        let t = self.tables.as_ref().unwrap();
        jobs.iter().map(|(b, e)| t.multi(b, e)).collect()
    }
    fn pieces(&self) -> usize {
        3
    }
}

fn on_workers_is_in_process<G: Group>(group: G, n: usize, w: usize) {
    let s = setup(group.clone(), n, w, 41);
    let (here_out, here_proof) = shuffle_and_prove(
        &group,
        &s.pk,
        &s.gens,
        CONTEXT,
        &s.inputs,
        &mut ChaCha20Rng::seed_from_u64(9),
    )
    .unwrap();
    let inline = |corrupt| Inline {
        group: group.clone(),
        tables: None,
        corrupt,
        batches: 0,
    };
    let mut workers = inline(false);
    let (out, proof) = votum_shuffle::shuffle_and_prove_on(
        &group,
        &s.pk,
        &s.gens,
        CONTEXT,
        &s.inputs,
        &mut ChaCha20Rng::seed_from_u64(9),
        &mut workers,
    )
    .unwrap();
    // byte for byte: the same secrets, the same outputs, the same proof
    assert_eq!(out.encode(&group), here_out.encode(&group));
    assert_eq!(proof.encode(&group), here_proof.encode(&group));
    // rounds: factors and commitments; t3; the chain and t-hat; t4
    assert_eq!(workers.batches, 4);
    verify(&s, &out, &proof).unwrap();

    // a worker that answers a wrong power makes a proof its check refuses
    let mut liar = inline(true);
    let (out, proof) = votum_shuffle::shuffle_and_prove_on(
        &group,
        &s.pk,
        &s.gens,
        CONTEXT,
        &s.inputs,
        &mut ChaCha20Rng::seed_from_u64(9),
        &mut liar,
    )
    .unwrap();
    assert!(matches!(
        verify(&s, &out, &proof),
        Err(ShuffleError::Equation { .. })
    ));
}

#[test]
fn a_shuffle_proved_on_workers_is_the_in_process_shuffle() {
    on_workers_is_in_process(ModpGroup::rfc3526_2048(), 23, 2);
    on_workers_is_in_process(Ristretto255, 40, 3);
}
