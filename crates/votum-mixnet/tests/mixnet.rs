#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha20Rng;
use votum_elgamal::Ciphertext;
use votum_group::{Group, ModpGroup, Ristretto255};
use votum_hash::board::payload_digest;
use votum_mixnet::ballot::EncryptedBallot;
use votum_mixnet::board::{MixBoard, Phase};
use votum_mixnet::count::{count, Rule, TieRule};
use votum_mixnet::election::{cast_ballots, decrypt_rows, decrypt_share, key_share, run, Dealing};
use votum_mixnet::params::{random_rows, Parameters};
use votum_mixnet::record::{read_all, write_all, RecordWriter};
use votum_mixnet::{wire, MixError};
use votum_shuffle::{shuffle_and_prove, Generators, Rows, ShuffleError};
use votum_verify::mix::verify_mix_stream;
use votum_verify::{Options, Report, Status};

fn params(rule: Rule, candidates: usize, width: usize) -> Parameters {
    Parameters {
        election_id: "test-election".into(),
        width,
        candidates,
        rule,
        ties: votum_mixnet::count::TieRule::LowerNumber,
        mixers: 3,
        trustees: 3,
        quorum: 2,
        signers: Vec::new(),
    }
}

fn verify(record: &[u8]) -> Report {
    verify_mix_stream(record, "record", Options::default()).0
}

/// The ids of the checks that did not pass.
fn not_passed(record: &[u8]) -> Vec<&'static str> {
    verify(record).not_passed()
}

fn election<G: Group>(
    group: &G,
    p: &Parameters,
    voters: usize,
) -> (Vec<u8>, votum_mixnet::election::Report, Vec<Vec<u64>>) {
    let mut rng = ChaCha20Rng::seed_from_u64(voters as u64);
    let votes = random_rows(p, voters, &mut rng);
    let (report, record) = run(group, p, &votes, &mut rng, Vec::new(), |_| {
        std::ops::ControlFlow::Continue(())
    })
    .unwrap();
    (record, report, votes)
}

#[test]
fn whole_elections_count_what_was_cast_and_verify() {
    let g = Ristretto255;
    for (rule, n, w) in [
        (Rule::Plurality, 3, 1),
        (Rule::KOfN { k: 2, seats: 2 }, 5, 2),
        (Rule::Approval { seats: 1 }, 4, 4),
        (Rule::InstantRunoff, 4, 4),
        (Rule::Stv { seats: 2 }, 5, 3),
    ] {
        let p = params(rule, n, w);
        let (record, report, votes) = election(&g, &p, 60);
        assert!(report.multiset_ok, "{rule:?}");
        assert_eq!(
            report.outcome,
            count(rule, votum_mixnet::count::TieRule::LowerNumber, n, &votes),
            "{rule:?}"
        );
        assert_eq!(
            report.shuffle_checks, 6,
            "3 trustees each check the 2 other mixers"
        );
        // parameters, 3 trustees, key, ballots, input, 3 mixes, 3 shares, result
        let (id, entries) = read_all(&record).unwrap();
        assert_eq!(id, "test-election");
        assert_eq!(entries.len(), 1 + 3 + 1 + 2 + 3 + 3 + 1);
        assert_eq!(report.board_entries, entries.len() as u64);
        assert_eq!(report.board_head, entries.last().unwrap().hash);
        let v = verify(&record);
        assert!(v.passed(), "{rule:?}: {:?}", v.not_passed());
        assert_eq!(v.ballots, 60);
        assert_eq!(v.checks.len(), 8);
        // one process made every entry: V-MIX-08 says the record shows no authority's hand
        let signed = v.result(votum_verify::Check::Mix08).unwrap();
        assert!(signed.warnings[0].reason.contains("no signing keys"));
        // the mixed list is not the cast list in order
        assert_ne!(report.plaintexts, votes);
    }
}

#[test]
fn modp_2048_election() {
    let g = ModpGroup::rfc3526_2048();
    let p = Parameters {
        mixers: 2,
        trustees: 2,
        quorum: 2,
        signers: Vec::new(),
        ..params(Rule::Plurality, 3, 1)
    };
    let (record, report, votes) = election(&g, &p, 12);
    assert!(report.multiset_ok);
    assert_eq!(
        report.outcome,
        count(Rule::Plurality, TieRule::LowerNumber, 3, &votes)
    );
    assert!(verify(&record).passed());
}

/// An election driven party by party with the public step functions, writing straight to a
/// record (no board checks): what a dishonest board operator could publish. The hooks change the
/// ballots before they are posted and a mixer's output before it is posted; every later step is
/// computed honestly on what was posted (trustees that decrypt without checking the shuffles).
fn raw_election<G: Group>(
    g: &G,
    p: &Parameters,
    votes: &[Vec<u64>],
    on_ballots: &dyn Fn(&mut Vec<EncryptedBallot<G>>),
    on_mix: &dyn Fn(usize, &mut Vec<Ciphertext<G>>),
) -> Vec<u8> {
    let mut rng = ChaCha20Rng::seed_from_u64(99);
    let mut w = RecordWriter::new(Vec::new(), &p.election_id).unwrap();
    let pbytes = p.encode_for(g.id());
    w.append("parameters", "parameters", &pbytes).unwrap();
    let digest = payload_digest(&pbytes);
    let dealings: Vec<Dealing<G>> = (1..=p.trustees as u64)
        .map(|i| Dealing::new(g, p, &digest, i, &mut rng).unwrap())
        .collect();
    for (i, d) in dealings.iter().enumerate() {
        let payload = wire::trustee_bytes(g, &d.commitments, &d.proof);
        w.append("trustee", &format!("trustee-{}", i + 1), &payload)
            .unwrap();
    }
    let joint = dealings
        .iter()
        .fold(g.identity(), |a, d| g.op(&a, &d.commitments[0]));
    let ctx = w
        .append("public-key", "public-key", &g.encode_element(&joint))
        .unwrap();
    let shares: Vec<_> = (1..=p.trustees as u64)
        .map(|j| key_share(g, &dealings, j).unwrap())
        .collect();
    let pk = votum_elgamal::PublicKey::new(g, joint).unwrap();
    let mut ballots = cast_ballots(g, p, &pk, &ctx, votes, &mut rng).unwrap();
    on_ballots(&mut ballots);
    w.append("ballots", "ballots", &wire::ballots_bytes(g, &ballots))
        .unwrap();
    let cts = ballots.iter().flat_map(|b| b.cts.clone()).collect();
    let mut current = Rows::new(p.width, cts).unwrap();
    w.append("input", "input", &current.encode(g)).unwrap();
    let generators = Generators::derive(g, &p.generators_seed(), votes.len());
    for m in 1..=p.mixers {
        let ctx = w.head();
        let (out, proof) =
            shuffle_and_prove(g, &pk, &generators, &ctx, &current, &mut rng).unwrap();
        let mut cts = out.into_ciphertexts();
        on_mix(m, &mut cts);
        let out = Rows::new(p.width, cts).unwrap();
        let mut payload = out.encode(g);
        payload.extend_from_slice(&proof.encode(g));
        w.append("mix", &format!("mix-{m}"), &payload).unwrap();
        current = out;
    }
    let dctx = w.head();
    let pads: Vec<_> = current
        .ciphertexts()
        .iter()
        .map(|c| c.pad.clone())
        .collect();
    let datas: Vec<_> = current
        .ciphertexts()
        .iter()
        .map(|c| c.data.clone())
        .collect();
    let mut dshares = Vec::new();
    for (i, x) in shares.iter().enumerate() {
        let s = decrypt_share(g, i as u64 + 1, x, &dctx, &pads, &mut rng).unwrap();
        w.append(
            "decryption",
            &format!("decryption-{}", i + 1),
            &wire::share_bytes(g, &s),
        )
        .unwrap();
        dshares.push(s);
    }
    let rows = decrypt_rows(g, p, &datas, &dshares).unwrap();
    let outcome = count(p.rule, p.ties, p.candidates, &rows);
    w.append(
        "result",
        "result",
        &wire::result_bytes(&rows, p.width, &outcome),
    )
    .unwrap();
    w.into_inner().unwrap()
}

/// Rewrites one entry's payload of a record (the chain is recomputed by every reader).
fn rewrite(record: &[u8], name: &str, f: impl Fn(&mut Vec<u8>)) -> Vec<u8> {
    let (id, entries) = read_all(record).unwrap();
    let mut found = false;
    let entries: Vec<(String, String, Vec<u8>)> = entries
        .into_iter()
        .map(|mut e| {
            if e.name == name {
                f(&mut e.payload);
                found = true;
            }
            (e.kind, e.name, e.payload)
        })
        .collect();
    assert!(found, "no entry {name}");
    write_all(&id, &entries).unwrap()
}

fn finding(record: &[u8], id: &str) -> String {
    let r = verify(record);
    let c = r.checks.iter().find(|c| c.id == id).unwrap();
    c.findings
        .iter()
        .map(|f| format!("{}: {}", f.object, f.reason))
        .collect::<Vec<_>>()
        .join("; ")
}

#[test]
fn each_tampering_fails_exactly_its_check() {
    let g = Ristretto255;
    let p = params(Rule::Plurality, 3, 1);
    let votes = random_rows(&p, 20, &mut ChaCha20Rng::seed_from_u64(5));
    let none_b = |_: &mut Vec<EncryptedBallot<Ristretto255>>| {};
    let none_m = |_: usize, _: &mut Vec<Ciphertext<Ristretto255>>| {};
    let honest = raw_election(&g, &p, &votes, &none_b, &none_m);
    assert!(verify(&honest).passed(), "{:?}", not_passed(&honest));

    // V-MIX-04: mixer 2 swaps two of its outputs; mixer 1 re-encrypts one with another nonce;
    // mixer 3 replaces one by an encryption of another vote
    let (_, entries) = read_all(&honest).unwrap();
    let joint = g.decode_element(&entries[4].payload).unwrap();
    let pk = votum_elgamal::PublicKey::new(&g, joint).unwrap();
    let pk3 = votum_elgamal::PublicKey::new(&g, joint).unwrap();
    let two = votum_mixnet::codec::ValueCodec::new(&g, 3)
        .unwrap()
        .encode(2)
        .unwrap();
    type Tamper<'a> = Box<dyn Fn(&mut Vec<Ciphertext<Ristretto255>>) + 'a>;
    let cases: Vec<(usize, Tamper)> = vec![
        (2, Box::new(|c| c.swap(0, 1))),
        (
            1,
            Box::new(move |c| c[5] = c[5].reencrypt(&g, &pk, &g.scalar_from_u64(77))),
        ),
        (
            3,
            Box::new(move |c| {
                c[0] = Ciphertext::encrypt_element(&g, &pk3, &two, &g.scalar_from_u64(5));
            }),
        ),
    ];
    for (mixer, f) in &cases {
        let bad = raw_election(&g, &p, &votes, &none_b, &|m, c| {
            if m == *mixer {
                f(c)
            }
        });
        assert_eq!(not_passed(&bad), vec!["V-MIX-04"], "mixer {mixer}");
        let why = finding(&bad, "V-MIX-04");
        assert!(
            why.starts_with(&format!("mix-{mixer}: shuffle proof")),
            "{why}"
        );
    }

    // V-MIX-03: a ballot copied under another voter (its proofs are bound to the voter)
    let bad = raw_election(
        &g,
        &p,
        &votes,
        &|b| {
            b[4].cts = b[5].cts.clone();
            b[4].proofs = b[5].proofs.clone();
        },
        &none_m,
    );
    assert_eq!(not_passed(&bad), vec!["V-MIX-03"]);
    assert!(finding(&bad, "V-MIX-03").contains("ballot #4"));

    // V-MIX-05: one partial decryption of trustee 2 changed (a quorum of good shares remains)
    let bad = rewrite(&honest, "decryption-2", |pl| {
        let mut s = wire::decode_share(&g, pl).unwrap();
        s.partials[4] = g.op(&s.partials[4], g.generator());
        *pl = wire::share_bytes(&g, &s);
    });
    assert_eq!(not_passed(&bad), vec!["V-MIX-05"]);
    assert!(finding(&bad, "V-MIX-05").contains("trustee 2"));

    // V-MIX-06: two posted rows swapped (the outcome, a count, does not change)
    let result = |rec: &[u8]| {
        let (_, e) = read_all(rec).unwrap();
        wire::decode_result(&e.last().unwrap().payload, p.rule, p.candidates).unwrap()
    };
    let (rows, outcome) = result(&honest);
    let j = rows.iter().position(|r| *r != rows[0]).unwrap();
    let bad = rewrite(&honest, "result", |pl| {
        let mut r = rows.clone();
        r.swap(0, j);
        *pl = wire::result_bytes(&r, 1, &outcome);
    });
    assert_eq!(not_passed(&bad), vec!["V-MIX-06"]);

    // V-MIX-07: a wrong count
    let bad = rewrite(&honest, "result", |pl| {
        let mut o = outcome.clone();
        o.tallies[0] += 1;
        *pl = wire::result_bytes(&rows, 1, &o);
    });
    assert_eq!(not_passed(&bad), vec!["V-MIX-07"]);

    // V-MIX-02: a trustee's proof of knowledge
    let bad = rewrite(&honest, "trustee-2", |pl| {
        let (c, mut proof) = wire::decode_trustee(&g, pl).unwrap();
        proof.response = g.scalar_add(&proof.response, &g.scalar_from_u64(1));
        *pl = wire::trustee_bytes(&g, &c, &proof);
    });
    assert!(not_passed(&bad).contains(&"V-MIX-02"));

    // V-MIX-01: mixers posting out of turn; a truncated record; an entry after the result
    let (id, entries) = read_all(&honest).unwrap();
    let mut swapped: Vec<_> = entries
        .iter()
        .map(|e| (e.kind.clone(), e.name.clone(), e.payload.clone()))
        .collect();
    swapped.swap(7, 8);
    let bad = write_all(&id, &swapped).unwrap();
    assert_eq!(not_passed(&bad)[0], "V-MIX-01");
    assert!(
        finding(&bad, "V-MIX-01").contains("out of turn"),
        "{}",
        finding(&bad, "V-MIX-01")
    );
    let r = verify(&honest[..honest.len() - 3]);
    let c = r.result(votum_verify::Check::Mix01).unwrap();
    assert_eq!(c.status, Status::Error);
    assert!(c.findings[0].reason.contains("truncated"));
    let mut extra = swapped.clone();
    extra.swap(7, 8);
    extra.push(("mix".into(), "mix-4".into(), vec![]));
    assert_eq!(
        not_passed(&write_all(&id, &extra).unwrap()),
        vec!["V-MIX-01"]
    );
    // an output element that is not a group element: V-MIX-04 cannot read mixer 2's list
    let bad = rewrite(&honest, "mix-2", |pl| pl[16 + 32..16 + 64].fill(0xff));
    let r = verify(&bad);
    assert_eq!(
        r.result(votum_verify::Check::Mix04).unwrap().status,
        Status::Error
    );
    // a wrong magic or version
    let mut bad = honest.clone();
    bad[8..10].copy_from_slice(&7u16.to_be_bytes());
    assert_eq!(
        verify(&bad)
            .result(votum_verify::Check::Mix01)
            .unwrap()
            .status,
        Status::Error
    );
}

/// A board being written: every refused posting leaves the record as it was.
#[test]
fn the_board_refuses_bad_postings_and_appends_nothing() {
    let g = Ristretto255;
    let p = Parameters {
        mixers: 2,
        ..params(Rule::Plurality, 3, 1)
    };
    let mut rng = ChaCha20Rng::seed_from_u64(8);
    let votes = random_rows(&p, 10, &mut rng);
    let mut board = MixBoard::create(&g, &p, Vec::new()).unwrap();
    let unchanged = |b: &MixBoard<Ristretto255, Vec<u8>>, e: u64, h: [u8; 32]| {
        assert_eq!((b.entries(), b.head()), (e, h));
    };
    let digest = board.parameters_digest();
    let dealings: Vec<Dealing<Ristretto255>> = (1..=3)
        .map(|i| Dealing::new(&g, &p, &digest, i, &mut rng).unwrap())
        .collect();
    // trustee 2 before trustee 1; a proof for another trustee's key
    let (e, h) = (board.entries(), board.head());
    assert!(matches!(
        board.post_trustee(2, &dealings[1].commitments, &dealings[1].proof),
        Err(MixError::OutOfTurn(_))
    ));
    assert!(matches!(
        board.post_trustee(1, &dealings[0].commitments, &dealings[1].proof),
        Err(MixError::Key { trustee: 1, .. })
    ));
    unchanged(&board, e, h);
    for (i, d) in dealings.iter().enumerate() {
        board
            .post_trustee(i as u64 + 1, &d.commitments, &d.proof)
            .unwrap();
    }
    assert_eq!(board.phase(), Phase::Ballots);
    let shares: Vec<_> = (1..=3)
        .map(|j| key_share(&g, &dealings, j).unwrap())
        .collect();
    let joint = *board.public_key().unwrap();
    let pk = votum_elgamal::PublicKey::new(&g, joint).unwrap();
    let mut ballots = cast_ballots(&g, &p, &pk, &board.ballot_context(), &votes, &mut rng).unwrap();
    // a mix before the ballots
    let (e, h) = (board.entries(), board.head());
    assert!(matches!(
        board.post_mix(1, &[], &[]),
        Err(MixError::OutOfTurn(_))
    ));
    // a ballot with a broken proof
    let good = ballots[3].proofs[0].response;
    ballots[3].proofs[0].response = g.scalar_add(&good, &g.scalar_from_u64(1));
    assert!(matches!(
        board.post_ballots(&ballots),
        Err(MixError::Ballot { index: 3, .. })
    ));
    unchanged(&board, e, h);
    ballots[3].proofs[0].response = good;
    board.post_ballots(&ballots).unwrap();

    let gens = Generators::derive(&g, &p.generators_seed(), votes.len());
    let input = board.current().unwrap().clone();
    let (out, proof) = shuffle_and_prove(&g, &pk, &gens, &board.head(), &input, &mut rng).unwrap();
    let (out_bytes, proof_bytes) = (out.encode(&g), proof.encode(&g));
    let (e, h) = (board.entries(), board.head());
    // mixer 2 out of turn
    assert!(matches!(
        board.post_mix(2, &out_bytes, &proof_bytes),
        Err(MixError::OutOfTurn(_))
    ));
    // a ciphertext outside the group
    let mut outside = out_bytes.clone();
    outside[16..48].fill(0xff);
    assert!(matches!(
        board.post_mix(1, &outside, &proof_bytes),
        Err(MixError::Shuffle {
            mixer: 1,
            source: ShuffleError::Element { .. }
        })
    ));
    // a proof of the wrong length, a list of the wrong size
    assert!(matches!(
        board.post_mix(1, &out_bytes, &proof_bytes[..proof_bytes.len() - 1]),
        Err(MixError::Shuffle {
            mixer: 1,
            source: ShuffleError::Length { .. }
        })
    ));
    let shorter = Rows::new(1, out.ciphertexts()[1..].to_vec())
        .unwrap()
        .encode(&g);
    assert!(matches!(
        board.post_mix(1, &shorter, &proof_bytes),
        Err(MixError::Shuffle { mixer: 1, .. })
    ));
    // a decryption share before the mixing is done
    let early = decrypt_share(&g, 1, &shares[0], &h, &[*g.generator()], &mut rng).unwrap();
    assert!(matches!(
        board.post_decryption(&early),
        Err(MixError::OutOfTurn(_))
    ));
    unchanged(&board, e, h);
    board.post_mix(1, &out_bytes, &proof_bytes).unwrap();
    let ctx = board.head();
    let (out2, proof2) = shuffle_and_prove(&g, &pk, &gens, &ctx, &out, &mut rng).unwrap();
    board
        .post_mix(2, &out2.encode(&g), &proof2.encode(&g))
        .unwrap();
    // mixer 2 again
    let (e, h) = (board.entries(), board.head());
    assert!(matches!(
        board.post_mix(2, &out2.encode(&g), &proof2.encode(&g)),
        Err(MixError::OutOfTurn(_))
    ));

    let dctx = board.decryption_context();
    let pads: Vec<_> = out2.ciphertexts().iter().map(|c| c.pad).collect();
    let datas: Vec<_> = out2.ciphertexts().iter().map(|c| c.data).collect();
    let s1 = decrypt_share(&g, 1, &shares[0], &dctx, &pads, &mut rng).unwrap();
    // trustee 1's share claimed by trustee 2, by trustee 9; a wrong partial
    let mut as2 = s1.clone();
    as2.trustee = 2;
    assert!(matches!(
        board.post_decryption(&as2),
        Err(MixError::Decryption { trustee: 2, .. })
    ));
    as2.trustee = 9;
    assert!(matches!(
        board.post_decryption(&as2),
        Err(MixError::Decryption { trustee: 9, .. })
    ));
    let mut wrong = s1.clone();
    wrong.partials[0] = g.op(&wrong.partials[0], g.generator());
    assert!(matches!(
        board.post_decryption(&wrong),
        Err(MixError::Decryption { trustee: 1, .. })
    ));
    // the result before a quorum
    assert!(matches!(
        board.post_result(&[], &count(p.rule, p.ties, 3, &[])),
        Err(MixError::OutOfTurn(_))
    ));
    unchanged(&board, e, h);
    board.post_decryption(&s1).unwrap();
    assert!(matches!(
        board.post_decryption(&s1),
        Err(MixError::OutOfTurn(_))
    ));
    let s3 = decrypt_share(&g, 3, &shares[2], &dctx, &pads, &mut rng).unwrap();
    board.post_decryption(&s3).unwrap();
    let rows = decrypt_rows(&g, &p, &datas, &[s1, s3]).unwrap();
    let outcome = count(p.rule, p.ties, p.candidates, &rows);
    let (e, h) = (board.entries(), board.head());
    assert!(matches!(
        board.post_result(&rows[1..], &outcome),
        Err(MixError::Input(_))
    ));
    unchanged(&board, e, h);
    board.post_result(&rows, &outcome).unwrap();
    assert!(matches!(
        board.post_result(&rows, &outcome),
        Err(MixError::OutOfTurn(_))
    ));
    let (head, entries, record) = board.finish().unwrap();
    let (_, read) = read_all(&record).unwrap();
    assert_eq!(
        (read.len() as u64, read.last().unwrap().hash),
        (entries, head)
    );
    assert!(verify(&record).passed(), "{:?}", not_passed(&record));
    let mut cast = votes.clone();
    let mut got = rows;
    cast.sort_unstable();
    got.sort_unstable();
    assert_eq!(cast, got);
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
        Parameters {
            election_id: "has space".into(),
            ..params(Rule::Plurality, 3, 1)
        },
    ] {
        assert!(
            matches!(
                run(&g, &p, &[vec![1]], &mut rng, Vec::new(), |_| {
                    std::ops::ControlFlow::Continue(())
                }),
                Err(MixError::Input(_))
            ),
            "{p:?}"
        );
    }
    let p = params(Rule::Plurality, 3, 1);
    assert!(matches!(
        run(&g, &p, &[], &mut rng, Vec::new(), |_| {
            std::ops::ControlFlow::Continue(())
        }),
        Err(MixError::Input(_))
    ));
    assert!(matches!(
        run(&g, &p, &[vec![9]], &mut rng, Vec::new(), |_| {
            std::ops::ControlFlow::Continue(())
        }),
        Err(MixError::Input(_))
    ));
    assert!(matches!(
        run(&g, &p, &[vec![1, 2]], &mut rng, Vec::new(), |_| {
            std::ops::ControlFlow::Continue(())
        }),
        Err(MixError::Input(_))
    ));
}

#[test]
fn counting_rules_on_known_ballots() {
    // plurality with a blank and an invalid row
    let o = count(
        Rule::Plurality,
        TieRule::LowerNumber,
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
        TieRule::LowerNumber,
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
    let o = count(Rule::InstantRunoff, TieRule::LowerNumber, 3, &rows);
    assert_eq!(o.tallies, vec![4, 3, 2]);
    assert_eq!(o.rounds, vec![vec![4, 5, 0]]);
    assert_eq!(o.winners, vec![2]);
    // a gap in a ranking is invalid
    let o = count(
        Rule::InstantRunoff,
        TieRule::LowerNumber,
        3,
        &[vec![1, 0, 2]],
    );
    assert_eq!(o.invalid, 1);
    // STV, 2 seats, 10 ballots: quota 10/3+1 = 3.33…; A has 6 → surplus flows to C
    let mut rows = vec![vec![1, 3, 0]; 6];
    rows.extend(vec![vec![2, 0, 0]; 2]);
    rows.extend(vec![vec![3, 0, 0]; 2]);
    let o = count(Rule::Stv { seats: 2 }, TieRule::LowerNumber, 3, &rows);
    assert_eq!(o.winners, vec![1, 3]);
}

/// Shuffle workers that check each proof at once with `check_shuffle_task`, as a cluster's task
/// would (spec/98.3), and may lie.
struct Inline {
    setup: Option<(Vec<u8>, Vec<u8>)>,
    verdicts: Vec<Result<Option<String>, String>>,
    lie: bool,
}

impl votum_verify::ShuffleWorkers for Inline {
    fn setup(&mut self, parameters: &[u8], joint: &[u8]) -> std::ops::ControlFlow<()> {
        self.setup = Some((parameters.to_vec(), joint.to_vec()));
        std::ops::ControlFlow::Continue(())
    }

    fn submit(
        &mut self,
        context: &[u8; 32],
        input: &[u8],
        payload: &[u8],
    ) -> std::ops::ControlFlow<()> {
        let (parameters, joint) = self.setup.as_ref().unwrap();
        let verdict = if self.lie {
            Ok(None)
        } else {
            votum_verify::check_shuffle_task(parameters, joint, context, input, payload)
        };
        self.verdicts.push(verdict);
        std::ops::ControlFlow::Continue(())
    }

    fn collect(&mut self) -> std::ops::ControlFlow<(), Vec<Result<Option<String>, String>>> {
        std::ops::ControlFlow::Continue(std::mem::take(&mut self.verdicts))
    }
}

fn verify_with(record: &[u8], workers: &mut Inline) -> Report {
    verify_mix_stream(
        record,
        "record",
        Options {
            shuffle_workers: Some(workers),
            ..Options::default()
        },
    )
    .0
}

#[test]
fn shuffle_proofs_checked_elsewhere_give_the_same_report() {
    let g = ModpGroup::rfc3526_2048();
    let p = params(Rule::Plurality, 3, 1);
    let votes = random_rows(&p, 12, &mut ChaCha20Rng::seed_from_u64(8));
    let none_b = |_: &mut Vec<EncryptedBallot<ModpGroup>>| {};
    let honest = raw_election(&g, &p, &votes, &none_b, &|_, _| {});
    let swapped = raw_election(&g, &p, &votes, &none_b, &|m, c| {
        if m == 2 {
            c.swap(0, 1)
        }
    });
    for record in [&honest, &swapped] {
        let mut w = Inline {
            setup: None,
            verdicts: Vec::new(),
            lie: false,
        };
        let here = verify(record);
        let there = verify_with(record, &mut w);
        assert_eq!(format!("{:?}", here.checks), format!("{:?}", there.checks));
        assert!(w.setup.is_some());
    }
    assert_eq!(not_passed(&swapped), vec!["V-MIX-04"]);
    // workers that pass every proof are believed (the cluster is the verifier's own, spec/98):
    // the client still checks what it reads itself, but not the proofs
    let mut liar = Inline {
        setup: None,
        verdicts: Vec::new(),
        lie: true,
    };
    assert!(verify_with(&swapped, &mut liar).passed());
}

#[test]
fn trustees_checks_done_elsewhere_run_and_a_failed_one_stops_the_election() {
    let g = ModpGroup::rfc3526_2048();
    let p = params(Rule::Plurality, 3, 1);
    let votes = random_rows(&p, 10, &mut ChaCha20Rng::seed_from_u64(9));
    let mut rng = ChaCha20Rng::seed_from_u64(10);
    let mut honest = Inline {
        setup: None,
        verdicts: Vec::new(),
        lie: false,
    };
    let (report, record) = votum_mixnet::election::run_with(
        &g,
        &p,
        &votes,
        &mut rng,
        Vec::new(),
        |_| std::ops::ControlFlow::Continue(()),
        Some(&mut honest),
    )
    .unwrap();
    assert_eq!(report.shuffle_checks, p.mixers * (p.trustees - 1));
    assert!(report.multiset_ok);
    assert!(verify(&record).passed());

    struct Refuse;
    impl votum_verify::ShuffleWorkers for Refuse {
        fn setup(&mut self, _: &[u8], _: &[u8]) -> std::ops::ControlFlow<()> {
            std::ops::ControlFlow::Continue(())
        }
        fn submit(&mut self, _: &[u8; 32], _: &[u8], _: &[u8]) -> std::ops::ControlFlow<()> {
            std::ops::ControlFlow::Continue(())
        }
        fn collect(&mut self) -> std::ops::ControlFlow<(), Vec<Result<Option<String>, String>>> {
            // every check sent: mixers × (trustees − 1), the first of mixer 1 refused
            let mut v: Vec<Result<Option<String>, String>> = vec![Ok(None); 3 * 2];
            v[0] = Ok(Some("equation t1 fails".into()));
            std::ops::ControlFlow::Continue(v)
        }
    }
    let e = votum_mixnet::election::run_with(
        &g,
        &p,
        &votes,
        &mut rng,
        Vec::new(),
        |_| std::ops::ControlFlow::Continue(()),
        Some(&mut Refuse),
    )
    .unwrap_err();
    assert!(e.to_string().contains("mixer 1"), "{e}");
}

/// The parameters state the tie rule (spec/91.4): under `unresolved` a tied seat stays empty, the
/// record says so and verifies, and a result that broke the tie anyway fails V-MIX-07. The rule
/// round-trips through the parameters line, which names it only when it is not the default.
#[test]
fn a_tie_under_the_unresolved_rule_leaves_the_seat_empty_and_is_verified() {
    use votum_mixnet::wire::result_bytes;
    let g = Ristretto255;
    let p = Parameters {
        ties: TieRule::Unresolved,
        ..params(Rule::Plurality, 3, 1)
    };
    let line = p.encode_for(g.id());
    assert!(String::from_utf8_lossy(&line).contains(" ties=unresolved "));
    assert_eq!(Parameters::decode(&line).unwrap().1, p);
    let default = params(Rule::Plurality, 3, 1).encode_for(g.id());
    assert!(!String::from_utf8_lossy(&default).contains("ties="));
    let mut bad = line.clone();
    let at = String::from_utf8_lossy(&bad).find("unresolved").unwrap();
    bad[at] = b'U';
    assert!(Parameters::decode(&bad).is_err());

    // two votes each for candidates 1 and 2: a tie for the one seat
    let votes = vec![vec![1], vec![2], vec![2], vec![1], vec![3]];
    let mut rng = ChaCha20Rng::seed_from_u64(9);
    let (report, record) = run(&g, &p, &votes, &mut rng, Vec::new(), |_| {
        std::ops::ControlFlow::Continue(())
    })
    .unwrap();
    assert!(report.outcome.winners.is_empty());
    assert_eq!(report.outcome.ties.len(), 1);
    assert_eq!(report.outcome.ties[0].among, vec![1, 2]);
    assert!(report.outcome.ties[0].chosen.is_empty());
    let (_, intermediates) = verify_mix_stream(&record[..], "record", Options::default());
    assert!(verify(&record).passed());
    assert_eq!(intermediates.values["tie_rule"], "unresolved");
    assert_eq!(
        intermediates.values["winners"].as_array().map(Vec::len),
        Some(0)
    );

    // the organiser posts the tie broken for candidate 1 (the default rule's answer) anyway
    let broken = count(Rule::Plurality, TieRule::LowerNumber, 3, &report.plaintexts);
    assert_eq!(broken.winners, vec![1]);
    let posted = rewrite(&record, "result", |payload| {
        *payload = result_bytes(&report.plaintexts, 1, &broken);
    });
    assert_eq!(not_passed(&posted), vec!["V-MIX-07"]);
}
