#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha20Rng;
use votum_group::{Group, ModpGroup, Ristretto255};
use votum_mixnet::count::{count, Rule};
use votum_mixnet::election::{random_rows, run, verify_record, MixRecord, Parameters};
use votum_mixnet::MixError;
use votum_shuffle::{Rows, ShuffleError};

fn params(rule: Rule, candidates: usize, width: usize) -> Parameters {
    Parameters {
        election_id: "test-election".into(),
        width,
        candidates,
        rule,
        mixers: 3,
        trustees: 3,
        quorum: 2,
    }
}

fn election<G: Group>(
    group: &G,
    p: &Parameters,
    voters: usize,
) -> (MixRecord<G>, votum_mixnet::election::Report, Vec<Vec<u64>>) {
    let mut rng = ChaCha20Rng::seed_from_u64(voters as u64);
    let votes = random_rows(p, voters, &mut rng);
    let (rec, report) = run(group, p, &votes, &mut rng, |_| {}).unwrap();
    (rec, report, votes)
}

#[test]
fn whole_elections_count_what_was_cast() {
    let g = Ristretto255;
    for (rule, n, w) in [
        (Rule::Plurality, 3, 1),
        (Rule::KOfN { k: 2, seats: 2 }, 5, 2),
        (Rule::Approval { seats: 1 }, 4, 4),
        (Rule::InstantRunoff, 4, 4),
        (Rule::Stv { seats: 2 }, 5, 3),
    ] {
        let p = params(rule, n, w);
        let (rec, report, votes) = election(&g, &p, 60);
        assert!(report.multiset_ok, "{rule:?}");
        assert_eq!(report.outcome, count(rule, n, &votes), "{rule:?}");
        assert_eq!(
            report.shuffle_checks, 6,
            "3 trustees each check the 2 other mixers"
        );
        assert_eq!(rec.board.len(), 1 + 3 + 1 + 2 + 3 + 2 + 1);
        assert_eq!(report.board_head, rec.board.last().unwrap().head);
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        verify_record(&g, &rec, &mut rng).unwrap();
        // the mixed list is not the cast list in order
        assert_ne!(rec.plaintexts, votes);
    }
}

#[test]
fn modp_2048_election() {
    let g = ModpGroup::rfc3526_2048();
    let p = Parameters {
        mixers: 2,
        trustees: 2,
        quorum: 2,
        ..params(Rule::Plurality, 3, 1)
    };
    let (rec, report, votes) = election(&g, &p, 12);
    assert!(report.multiset_ok);
    assert_eq!(report.outcome, count(Rule::Plurality, 3, &votes));
    verify_record(&g, &rec, &mut ChaCha20Rng::seed_from_u64(2)).unwrap();
}

fn reencode<G: Group>(
    g: &G,
    bytes: &[u8],
    f: impl Fn(&mut Vec<votum_elgamal::Ciphertext<G>>),
) -> Vec<u8> {
    let rows = Rows::decode(g, bytes, &mut ChaCha20Rng::seed_from_u64(0)).unwrap();
    let w = rows.width();
    let mut cts = rows.into_ciphertexts();
    f(&mut cts);
    Rows::new(w, cts).unwrap().encode(g)
}

fn expect_shuffle_error<G: Group>(g: &G, rec: &MixRecord<G>, mixer: usize) {
    match verify_record(g, rec, &mut ChaCha20Rng::seed_from_u64(3)) {
        Err(MixError::Shuffle {
            mixer: m,
            source: ShuffleError::Equation { .. },
        }) => assert_eq!(m, mixer),
        other => panic!("expected a failed shuffle of mixer {mixer}, got {other:?}"),
    }
}

#[test]
fn tampered_records_are_rejected() {
    let g = Ristretto255;
    let p = params(Rule::Plurality, 3, 1);
    let (rec, _, _) = election(&g, &p, 20);
    let pk = votum_elgamal::PublicKey::new(&g, rec.public_key).unwrap();

    // two output ciphertexts of mixer 2 swapped
    let mut bad = clone_record(&rec);
    bad.mixes[1].0 = reencode(&g, &rec.mixes[1].0, |c| c.swap(0, 1));
    expect_shuffle_error(&g, &bad, 2);
    // one re-encrypted with another nonce
    let mut bad = clone_record(&rec);
    bad.mixes[0].0 = reencode(&g, &rec.mixes[0].0, |c| {
        c[5] = c[5].reencrypt(&g, &pk, &g.scalar_from_u64(77))
    });
    expect_shuffle_error(&g, &bad, 1);
    // one replaced by an encryption of another vote
    let mut bad = clone_record(&rec);
    let other =
        votum_elgamal::Ciphertext::encrypt_element(&g, &pk, g.generator(), &g.scalar_from_u64(5));
    bad.mixes[2].0 = reencode(&g, &rec.mixes[2].0, |c| c[0] = other.clone());
    expect_shuffle_error(&g, &bad, 3);
    // a proof of the wrong length
    let mut bad = clone_record(&rec);
    bad.mixes[0].1.pop();
    assert!(matches!(
        verify_record(&g, &bad, &mut ChaCha20Rng::seed_from_u64(3)),
        Err(MixError::Shuffle {
            mixer: 1,
            source: ShuffleError::Length { .. }
        })
    ));
    // a ciphertext outside the group (not a canonical ristretto encoding)
    let mut bad = clone_record(&rec);
    let at = 16 + 32 * 3;
    bad.mixes[1].0[at..at + 32].fill(0xff);
    assert!(matches!(
        verify_record(&g, &bad, &mut ChaCha20Rng::seed_from_u64(3)),
        Err(MixError::Shuffle {
            mixer: 2,
            source: ShuffleError::Element { .. }
        })
    ));
    // mixers posting out of turn: their proofs are bound to the board before them
    let mut bad = clone_record(&rec);
    bad.mixes.swap(0, 1);
    assert!(matches!(
        verify_record(&g, &bad, &mut ChaCha20Rng::seed_from_u64(3)),
        Err(MixError::Shuffle { mixer: 1, .. })
    ));
    // a wrong decryption share
    let mut bad = clone_record(&rec);
    bad.shares[1].partials[4] = g.op(&bad.shares[1].partials[4], g.generator());
    match verify_record(&g, &bad, &mut ChaCha20Rng::seed_from_u64(3)) {
        Err(MixError::Decryption { trustee, .. }) => assert_eq!(trustee, bad.shares[1].trustee),
        other => panic!("expected a failed decryption share, got {other:?}"),
    }
    // a wrong count, and wrong plaintexts
    let mut bad = clone_record(&rec);
    bad.outcome.tallies[0] += 1;
    assert!(matches!(
        verify_record(&g, &bad, &mut ChaCha20Rng::seed_from_u64(3)),
        Err(MixError::Count(_))
    ));
    let mut bad = clone_record(&rec);
    bad.plaintexts.swap(0, 1);
    if bad.plaintexts != rec.plaintexts {
        assert!(matches!(
            verify_record(&g, &bad, &mut ChaCha20Rng::seed_from_u64(3)),
            Err(MixError::Count(_))
        ));
    }
    // a ballot's proof of knowledge broken, or a ballot copied under another voter
    let mut bad = clone_record(&rec);
    bad.ballots[3].proofs[0].response =
        g.scalar_add(&bad.ballots[3].proofs[0].response, &g.scalar_from_u64(1));
    assert!(matches!(
        verify_record(&g, &bad, &mut ChaCha20Rng::seed_from_u64(3)),
        Err(MixError::Ballot { index: 3, .. })
    ));
    let mut bad = clone_record(&rec);
    bad.ballots[4].cts = bad.ballots[5].cts.clone();
    bad.ballots[4].proofs = bad.ballots[5].proofs.clone();
    assert!(matches!(
        verify_record(&g, &bad, &mut ChaCha20Rng::seed_from_u64(3)),
        Err(MixError::Ballot { index: 4, .. })
    ));
    // a board entry that does not match its payload
    let mut bad = clone_record(&rec);
    bad.board[2].digest[0] ^= 1;
    assert!(matches!(
        verify_record(&g, &bad, &mut ChaCha20Rng::seed_from_u64(3)),
        Err(MixError::Input(_))
    ));
}

fn clone_record<G: Group>(r: &MixRecord<G>) -> MixRecord<G> {
    MixRecord {
        parameters: r.parameters.clone(),
        trustee_commitments: r.trustee_commitments.clone(),
        trustee_proofs: r.trustee_proofs.clone(),
        public_key: r.public_key.clone(),
        ballots: r.ballots.clone(),
        input: r.input.clone(),
        mixes: r.mixes.clone(),
        shares: r.shares.clone(),
        plaintexts: r.plaintexts.clone(),
        outcome: r.outcome.clone(),
        board: r.board.clone(),
    }
}

#[test]
fn bad_parameters_are_refused() {
    let g = Ristretto255;
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    for p in [
        Parameters {
            quorum: 4,
            ..params(Rule::Plurality, 3, 1)
        },
        Parameters {
            width: 2,
            ..params(Rule::Plurality, 3, 1)
        },
        Parameters {
            candidates: 0,
            ..params(Rule::Plurality, 3, 1)
        },
        Parameters {
            mixers: 0,
            ..params(Rule::Plurality, 3, 1)
        },
        params(Rule::Stv { seats: 6 }, 5, 3),
    ] {
        assert!(
            matches!(
                run(&g, &p, &[vec![1]], &mut rng, |_| {}),
                Err(MixError::Input(_))
            ),
            "{p:?}"
        );
    }
    let p = params(Rule::Plurality, 3, 1);
    assert!(matches!(
        run(&g, &p, &[], &mut rng, |_| {}),
        Err(MixError::Input(_))
    ));
    assert!(matches!(
        run(&g, &p, &[vec![9]], &mut rng, |_| {}),
        Err(MixError::Input(_))
    ));
    assert!(matches!(
        run(&g, &p, &[vec![1, 2]], &mut rng, |_| {}),
        Err(MixError::Input(_))
    ));
}

#[test]
fn counting_rules_on_known_ballots() {
    // plurality with a blank and an invalid row
    let o = count(
        Rule::Plurality,
        3,
        &[vec![1], vec![2], vec![2], vec![0], vec![4]],
    );
    assert_eq!(
        (o.tallies.clone(), o.valid, o.invalid, o.winners.clone()),
        (vec![1, 2, 0], 4, 1, vec![2])
    );
    // k-of-n: duplicates are invalid
    let o = count(
        Rule::KOfN { k: 2, seats: 2 },
        3,
        &[vec![1, 2], vec![1, 1], vec![3, 0], vec![1, 0]],
    );
    assert_eq!(
        (o.tallies.clone(), o.invalid, o.winners.clone()),
        (vec![2, 1, 1], 1, vec![1, 2])
    );
    // IRV: A 4, B 3, C 2 (C → B): B wins in round 2
    let mut rows = vec![vec![1, 0, 0]; 4];
    rows.extend(vec![vec![2, 0, 0]; 3]);
    rows.extend(vec![vec![3, 2, 0]; 2]);
    let o = count(Rule::InstantRunoff, 3, &rows);
    assert_eq!(o.tallies, vec![4, 3, 2]);
    assert_eq!(o.rounds, vec![vec![4, 5, 0]]);
    assert_eq!(o.winners, vec![2]);
    // a gap in a ranking is invalid
    let o = count(Rule::InstantRunoff, 3, &[vec![1, 0, 2]]);
    assert_eq!(o.invalid, 1);
    // STV, 2 seats, 10 ballots: quota 10/3+1 = 3.33…; A has 6 → surplus flows to C
    let mut rows = vec![vec![1, 3, 0]; 6];
    rows.extend(vec![vec![2, 0, 0]; 2]);
    rows.extend(vec![vec![3, 0, 0]; 2]);
    let o = count(Rule::Stv { seats: 2 }, 3, &rows);
    assert_eq!(o.winners, vec![1, 3]);
}
