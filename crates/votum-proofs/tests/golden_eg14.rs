#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

//! Golden tests: records written by electionguard 1.4.0 (vectors/eg-1.4, see vectors/README.md)
//! verify with votum's math and votum's Eg1Oracle recomputes every challenge.

use serde_json::Value;
use votum_arith::Integer;
use votum_elgamal::threshold::lagrange_coefficient;
use votum_elgamal::Ciphertext;
use votum_group::{Group, ModElement, ModpGroup};
use votum_hash::eg::{from_hex, hash_elems, EgHashItem};
use votum_proofs::{
    ChaumPedersenProof, ConstantProof, DisjunctiveProof, Eg1Oracle, ProofError, SchnorrProof,
    Statement,
};

fn load(name: &str) -> Value {
    let path = format!("{}/../../vectors/eg-1.4/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}")))
        .unwrap()
}

fn int(v: &Value) -> Integer {
    from_hex(v.as_str().unwrap()).unwrap()
}

fn elem(g: &ModpGroup, v: &Value) -> ModElement {
    g.element(&int(v)).unwrap()
}

fn scalar(g: &ModpGroup, v: &Value) -> <ModpGroup as Group>::Scalar {
    g.scalar(&int(v)).unwrap()
}

fn ct(g: &ModpGroup, v: &Value) -> Ciphertext<ModpGroup> {
    Ciphertext {
        pad: elem(g, &v["pad"]),
        data: elem(g, &v["data"]),
    }
}

fn context() -> (ModpGroup, Eg1Oracle, ModElement) {
    let g = ModpGroup::eg_4096();
    let c = load("context.json");
    (
        g.clone(),
        Eg1Oracle::new(int(&c["crypto_extended_base_hash"])),
        elem(&g, &c["elgamal_public_key"]),
    )
}

fn disjunctive(g: &ModpGroup, p: &Value) -> DisjunctiveProof<ModpGroup> {
    DisjunctiveProof {
        zero_pad: elem(g, &p["proof_zero_pad"]),
        zero_data: elem(g, &p["proof_zero_data"]),
        one_pad: elem(g, &p["proof_one_pad"]),
        one_data: elem(g, &p["proof_one_data"]),
        zero_challenge: scalar(g, &p["proof_zero_challenge"]),
        one_challenge: scalar(g, &p["proof_one_challenge"]),
        challenge: scalar(g, &p["challenge"]),
        zero_response: scalar(g, &p["proof_zero_response"]),
        one_response: scalar(g, &p["proof_one_response"]),
    }
}

fn cp(g: &ModpGroup, p: &Value) -> ChaumPedersenProof<ModpGroup> {
    ChaumPedersenProof {
        pad: elem(g, &p["pad"]),
        data: elem(g, &p["data"]),
        challenge: scalar(g, &p["challenge"]),
        response: scalar(g, &p["response"]),
    }
}

#[test]
fn constants_match_votum_group() {
    let g = ModpGroup::eg_4096();
    let c = load("constants.json");
    assert_eq!(&int(&c["large_prime"]), g.p());
    assert_eq!(&int(&c["small_prime"]), g.order());
    assert_eq!(&int(&c["cofactor"]), g.cofactor());
    assert_eq!(&int(&c["generator"]), g.generator().value());
}

#[test]
fn extended_base_hash_recomputes() {
    let g = ModpGroup::eg_4096();
    let c = load("context.json");
    let q = hash_elems(
        &[
            EgHashItem::Num(int(&c["crypto_base_hash"])),
            EgHashItem::Num(int(&c["commitment_hash"])),
        ],
        g.order(),
    );
    assert_eq!(q, int(&c["crypto_extended_base_hash"]));
}

#[test]
fn ballot_proofs_verify_and_tampering_is_caught() {
    let (g, oracle, k) = context();
    for file in ["ciphertext_ballot.json", "submitted_ballot.json"] {
        let ballot = load(file);
        let mut checked = 0;
        for contest in ballot["contests"].as_array().unwrap() {
            for sel in contest["ballot_selections"].as_array().unwrap() {
                let c = ct(&g, &sel["ciphertext"]);
                let proof = disjunctive(&g, &sel["proof"]);
                proof.verify(&g, &oracle, &k, &c).unwrap();
                checked += 1;
                // tampering: one field at a time
                let mut t = proof.clone();
                t.zero_response = g.scalar_add(&t.zero_response, &g.scalar_from_u64(1));
                assert_eq!(
                    t.verify(&g, &oracle, &k, &c),
                    Err(ProofError::Equation {
                        proof: "disjunctive",
                        equation: "g^v0 = a0·α^c0"
                    })
                );
                let mut t = proof.clone();
                t.one_response = g.scalar_add(&t.one_response, &g.scalar_from_u64(1));
                assert_eq!(
                    t.verify(&g, &oracle, &k, &c),
                    Err(ProofError::Equation {
                        proof: "disjunctive",
                        equation: "g^v1 = a1·α^c1"
                    })
                );
                let mut t = proof.clone();
                t.zero_challenge = g.scalar_add(&t.zero_challenge, &g.scalar_from_u64(1));
                assert_eq!(
                    t.verify(&g, &oracle, &k, &c),
                    Err(ProofError::ChallengeSum {
                        proof: "disjunctive"
                    })
                );
                let mut t = proof.clone();
                t.one_data = g.op(&t.one_data, g.generator());
                assert_eq!(
                    t.verify(&g, &oracle, &k, &c),
                    Err(ProofError::ChallengeMismatch {
                        proof: "disjunctive"
                    })
                );
                let other = Ciphertext {
                    pad: c.pad.clone(),
                    data: g.op(&c.data, g.generator()),
                };
                assert_eq!(
                    proof.verify(&g, &oracle, &k, &other),
                    Err(ProofError::ChallengeMismatch {
                        proof: "disjunctive"
                    })
                );
            }
            let acc = ct(&g, &contest["ciphertext_accumulation"]);
            let p = &contest["proof"];
            let proof = ConstantProof {
                pad: elem(&g, &p["pad"]),
                data: elem(&g, &p["data"]),
                challenge: scalar(&g, &p["challenge"]),
                response: scalar(&g, &p["response"]),
                constant: p["constant"].as_u64().unwrap(),
            };
            proof.verify(&g, &oracle, &k, &acc, 1).unwrap();
            // the accumulation is the product of the selections
            let sum = Ciphertext::sum(
                &g,
                &contest["ballot_selections"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|s| ct(&g, &s["ciphertext"]))
                    .collect::<Vec<_>>(),
            );
            assert_eq!(sum, acc);
            assert_eq!(
                proof.verify(&g, &oracle, &k, &acc, 2),
                Err(ProofError::WrongConstant {
                    proof: "constant",
                    expected: 2,
                    got: 1
                })
            );
            let mut t = proof.clone();
            t.response = g.scalar_add(&t.response, &g.scalar_from_u64(1));
            assert_eq!(
                t.verify(&g, &oracle, &k, &acc, 1),
                Err(ProofError::Equation {
                    proof: "constant",
                    equation: "g^v = a·α^c"
                })
            );
            let mut t = proof.clone();
            t.pad = g.op(&t.pad, g.generator());
            assert_eq!(
                t.verify(&g, &oracle, &k, &acc, 1),
                Err(ProofError::ChallengeMismatch { proof: "constant" })
            );
        }
        assert_eq!(
            checked, 5,
            "one 1-of-4 contest: 4 selections + 1 placeholder"
        );
    }
}

#[test]
fn guardian_schnorr_proofs_verify() {
    let (g, oracle, _) = context();
    let rec = load("guardian_record_1.json");
    for (commitment, p) in rec["election_commitments"]
        .as_array()
        .unwrap()
        .iter()
        .zip(rec["election_proofs"].as_array().unwrap())
    {
        let k = elem(&g, commitment);
        assert_eq!(k, elem(&g, &p["public_key"]));
        let proof = SchnorrProof::<ModpGroup> {
            commitment: elem(&g, &p["commitment"]),
            challenge: scalar(&g, &p["challenge"]),
            response: scalar(&g, &p["response"]),
        };
        proof.verify(&g, &oracle, &k).unwrap();
        let mut t = proof.clone();
        t.response = g.scalar_add(&t.response, &g.scalar_from_u64(1));
        assert_eq!(
            t.verify(&g, &oracle, &k),
            Err(ProofError::Equation {
                proof: "schnorr",
                equation: "g^u = h·y^c"
            })
        );
        assert_eq!(
            proof.verify(&g, &oracle, g.generator()),
            Err(ProofError::ChallengeMismatch { proof: "schnorr" })
        );
    }
}

#[test]
fn decryption_shares_compensation_and_combination() {
    let (g, oracle, _) = context();
    let tally = load("plaintext_tally.one_selection.json");
    let sel = &tally["contests"]["mayor"]["selections"]["mayor-alice"];
    let message = ct(&g, &sel["message"]);
    let prefix = [&message.pad, &message.data];
    // guardian 1's direct share, in both files
    let rec = load("guardian_record_1.json");
    let k1 = elem(&g, &rec["election_public_key"]);
    let share_file = load("tally_decryption_share_guardian_1.json");
    let s1 = &share_file["contests"]["mayor"]["selections"]["mayor-alice"];
    let m1 = elem(&g, &s1["share"]);
    let st = Statement {
        g1: g.generator(),
        a: &k1,
        g2: &message.pad,
        b: &m1,
    };
    cp(&g, &s1["proof"])
        .verify(&g, &oracle, &st, &prefix, &[&m1])
        .unwrap();
    let wrong = g.op(&m1, g.generator());
    let st_wrong = Statement {
        g1: g.generator(),
        a: &k1,
        g2: &message.pad,
        b: &wrong,
    };
    assert_eq!(
        cp(&g, &s1["proof"]).verify(&g, &oracle, &st_wrong, &prefix, &[&wrong]),
        Err(ProofError::ChallengeMismatch {
            proof: "chaum-pedersen"
        })
    );
    // guardian 1's compensated share for missing guardian 4, against the published recovery key
    let comp = load("compensated_tally_share.json");
    let c1 = &comp["contests"]["mayor"]["selections"]["mayor-alice"];
    let rk = elem(&g, &c1["recovery_key"]);
    let cm = elem(&g, &c1["share"]);
    let st = Statement {
        g1: g.generator(),
        a: &rk,
        g2: &message.pad,
        b: &cm,
    };
    cp(&g, &c1["proof"])
        .verify(&g, &oracle, &st, &prefix, &[&cm])
        .unwrap();
    // Lagrange coefficients for present guardians {1, 2, 3}
    let lag = load("lagrange_coefficients.json");
    for i in 1..=3u64 {
        let w = lagrange_coefficient(&g, i, &[1, 2, 3]).unwrap();
        assert_eq!(w, scalar(&g, &lag["coefficients"][i.to_string()]));
    }
    // missing guardians' shares are the Lagrange combination of their recovered parts
    let shares = sel["shares"].as_array().unwrap();
    for s in shares {
        if let Some(parts) = s["recovered_parts"].as_object() {
            let mut pieces = Vec::new();
            for (id, part) in parts {
                let i: u64 = id.parse().unwrap();
                pieces.push((i, elem(&g, &part["share"])));
            }
            let combined = votum_elgamal::threshold::combine_partials(&g, &pieces, 3).unwrap();
            assert_eq!(combined, elem(&g, &s["share"]));
        }
    }
    // all five shares multiply to K^r, leaving g^t
    let all = shares
        .iter()
        .fold(g.identity(), |acc, s| g.op(&acc, &elem(&g, &s["share"])));
    let gt = message.decrypt_with_share(&g, &all);
    assert_eq!(gt, elem(&g, &sel["value"]));
    let t = sel["tally"].as_u64().unwrap();
    assert_eq!(gt, g.pow_generator(&g.scalar_from_u64(t)));
    let dlog = votum_elgamal::DlogTable::new(&g, 1000);
    assert_eq!(
        dlog.log(&gt).unwrap(),
        load("plaintext_tally.counts.json")["mayor-alice"]
            .as_u64()
            .unwrap()
    );
}
