#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

//! The parties' objects (spec/92.12), driven by hand in one process as the processes drive them over
//! the channels: only bytes pass between them. The election counts exactly, its record passes the
//! independent verifier, and bad bytes between parties are refused.

use votum_chvote::parties::{self, AuthorityParty, VotersClient};
use votum_chvote::record::RecordWriter;
use votum_chvote::ChvoteError;

/// The record's list of every authority's item from each authority's one-item list.
fn joined(parts: &[Vec<u8>]) -> Vec<u8> {
    let mut out = (parts.len() as u64).to_be_bytes().to_vec();
    for p in parts {
        assert_eq!(p[..8], 1u64.to_be_bytes());
        out.extend_from_slice(&p[8..]);
    }
    out
}

fn views(v: &[Vec<u8>]) -> Vec<&[u8]> {
    v.iter().map(Vec::as_slice).collect()
}

/// (parameters, authorities, key shares, secret voter data, public voter data)
type Published = (
    Vec<u8>,
    Vec<AuthorityParty>,
    Vec<Vec<u8>>,
    Vec<Vec<u8>>,
    Vec<Vec<u8>>,
);

/// The parties of an election of `s` authorities and `voters` voters, with their key shares and
/// electoral data made and the board attached by every authority.
/// Authority j's node signer (a fixed seed per authority: the tests' nodes).
fn signer(j: usize) -> votum_node::EnvelopeSigner {
    votum_node::EnvelopeSigner::from_seed(&[j as u8 + 1; 32])
}

fn signers(s: usize) -> Vec<[u8; 32]> {
    (0..s).map(|j| signer(j).verifying_key()).collect()
}

/// The `signature` entry's payload: authority j's node signature on its entry.
fn signature(a: &AuthorityParty, kind: &str, payload: &[u8]) -> Vec<u8> {
    signer(a.index())
        .sign_record(&a.statement(kind, payload).unwrap())
        .to_vec()
}

/// Appends authority j's entry and its signature, as the board posts them.
fn post<W: std::io::Write>(
    w: &mut RecordWriter<W>,
    a: &AuthorityParty,
    kind: &str,
    payload: &[u8],
) {
    let j = a.index();
    w.append(kind, &format!("authority-{j}"), payload).unwrap();
    w.append(
        "signature",
        &votum_chvote::record::signature_name(kind, j),
        &signature(a, kind, payload),
    )
    .unwrap();
}

/// A record file opened as the board opens it: the parameters, every key share and voter data.
fn record_opening(
    path: &std::path::Path,
    parameters: &[u8],
    key_shares: &[Vec<u8>],
    voter_data: &[Vec<u8>],
) -> RecordWriter<std::fs::File> {
    let mut w = RecordWriter::new(std::fs::File::create(path).unwrap(), "parties-test").unwrap();
    w.append("parameters", "parameters", parameters).unwrap();
    for (j, k) in key_shares.iter().enumerate() {
        w.append("key-share", &format!("authority-{j}"), k).unwrap();
    }
    for (j, d) in voter_data.iter().enumerate() {
        w.append("voter-data", &format!("authority-{j}"), d)
            .unwrap();
    }
    w
}

/// Voter i's transcript, as the board posts it.
fn post_voter<W: std::io::Write>(
    w: &mut RecordWriter<W>,
    i: usize,
    ballot: &[u8],
    responses: &[Vec<u8>],
    confirmation: &[u8],
    finals: &[Vec<u8>],
) {
    let name = format!("voter-{i}");
    w.append("ballot", &name, ballot).unwrap();
    w.append("responses", &name, &joined(responses)).unwrap();
    w.append("confirmation", &name, confirmation).unwrap();
    w.append("finalizations", &name, &joined(finals)).unwrap();
}

fn published(s: usize, voters: usize) -> Published {
    let parameters =
        parties::parameters(1, "single", voters, s, "parties-test", &signers(s)).unwrap();
    let mut authorities: Vec<AuthorityParty> = (0..s)
        .map(|j| AuthorityParty::new(&parameters, j, &signers(s)[j]).unwrap())
        .collect();
    let key_shares: Vec<Vec<u8>> = authorities.iter().map(AuthorityParty::key_share).collect();
    let mut secret = Vec::new();
    let mut voter_data = Vec::new();
    for a in authorities.iter_mut() {
        let (sd, pd) = a.electoral_data().unwrap();
        secret.push(sd.to_vec());
        voter_data.push(pd);
    }
    for a in authorities.iter_mut() {
        a.attach(&parameters, &views(&key_shares), &views(&voter_data))
            .unwrap();
    }
    (parameters, authorities, key_shares, secret, voter_data)
}

#[test]
fn an_election_through_the_parties_bytes_counts_exactly_and_verifies() {
    let s = 3;
    let voters = 6;
    let (parameters, authorities, key_shares, secret, voter_data) = published(s, voters);
    // the printing authority refuses secret data that is not every authority's, or not whole
    assert!(parties::print_cards(&parameters, &views(&secret[..2]), None).is_err());
    let mut cut = secret.clone();
    cut[1].pop();
    assert!(parties::print_cards(&parameters, &views(&cut), None).is_err());
    let cards = parties::print_cards(&parameters, &views(&secret), None).unwrap();
    let mut client =
        VotersClient::new(&parameters, &views(&key_shares), &views(&voter_data)).unwrap();
    assert!(client.add_card(&cards[0][..cards[0].len() - 1]).is_err());
    for card in &cards {
        client.add_card(card).unwrap();
    }
    assert!(format!("{client:?}").contains("redacted"));

    let path = std::env::temp_dir().join(format!("votum-parties-{}.vchv", std::process::id()));
    let mut w = record_opening(&path, &parameters, &key_shares, &voter_data);
    let mut expected = [0u64; 3];
    for i in 0..voters {
        let choice = 1 + i % 3;
        expected[choice - 1] += 1;
        let ballot = client.ballot(i, Some(vec![choice])).unwrap();
        let responses: Vec<Vec<u8>> = authorities
            .iter()
            .map(|a| a.ballot(i, &ballot).unwrap())
            .collect();
        // a response cut short is refused and names its authority
        let mut bad = responses.clone();
        bad[2].pop();
        assert!(matches!(
            client.confirm(i, &views(&bad)),
            Err(ChvoteError::BadResponse { authority: 2, .. })
        ));
        let confirmation = client.confirm(i, &views(&responses)).unwrap();
        let finals: Vec<Vec<u8>> = authorities
            .iter()
            .map(|a| a.confirmation(i, &confirmation).unwrap())
            .collect();
        assert_eq!(client.finalize(i, &views(&finals)).unwrap(), vec![choice]);
        post_voter(&mut w, i, &ballot, &responses, &confirmation, &finals);
    }
    let input = authorities[0].input().unwrap();
    assert!(authorities.iter().all(|a| a.input().unwrap() == input));
    w.append("input", "input", &input).unwrap();
    let mut shuffles: Vec<Vec<u8>> = Vec::new();
    // an authority shuffles in its turn only
    assert!(authorities[1].shuffle(&input, &[]).is_err());
    for (j, a) in authorities.iter().enumerate() {
        let sh = a.shuffle(&input, &views(&shuffles)).unwrap();
        assert_eq!(a.index(), j);
        post(&mut w, a, "shuffle", &sh);
        shuffles.push(sh);
    }
    // a tampered shuffle is refused by every other authority at decryption, naming its mixer
    let mut tampered = shuffles.clone();
    let at = tampered[1].len() - 3;
    tampered[1][at] ^= 1;
    assert!(matches!(
        authorities[0].decrypt(&input, &views(&tampered)),
        Err(ChvoteError::Shuffle { authority: 1, .. })
    ));
    let shares: Vec<Vec<u8>> = authorities
        .iter()
        .map(|a| a.decrypt(&input, &views(&shuffles)).unwrap())
        .collect();
    for (a, sh) in authorities.iter().zip(&shares) {
        post(&mut w, a, "decryption", sh);
    }
    let board =
        parties::public_board(&parameters, &views(&key_shares), &views(&voter_data)).unwrap();
    let (result, counts, invalid) =
        parties::tally_result(&board, &input, &views(&shuffles), &views(&shares)).unwrap();
    assert_eq!(counts, expected.to_vec());
    assert_eq!(invalid, 0);
    // a decryption share that is another's does not count
    let swapped = [shares[1].clone(), shares[0].clone(), shares[2].clone()];
    assert!(parties::tally_result(&board, &input, &views(&shuffles), &views(&swapped)).is_err());
    w.append("result", "result", &result).unwrap();
    w.into_inner().unwrap();
    let (report, _) = votum_verify::verify_record(&path, votum_verify::Options::default());
    std::fs::remove_file(&path).unwrap();
    assert!(report.passed(), "{:?}", report.not_passed());
}

/// Issue 45, finding 6: the authority that publishes its key share last chooses it as
/// g^x / Π pk_j, so that the joint key is g^x and it alone can decrypt every ballot. A key share
/// carries a proof of knowledge of its secret, which such a share cannot have; every other
/// authority, the voters' client and the verifier refuse it before anything is encrypted.
#[test]
fn a_key_share_chosen_to_cancel_the_others_is_refused_by_every_party() {
    use votum_group::Group;
    let s = 3;
    let parameters = parties::parameters(1, "single", 4, s, "parties-test", &signers(s)).unwrap();
    let (params, _, _) = votum_chvote::record::decode_parameters(&parameters).unwrap();
    let eg = params.eg();
    let mut authorities: Vec<AuthorityParty> = (0..s)
        .map(|j| AuthorityParty::new(&parameters, j, &signers(s)[j]).unwrap())
        .collect();
    let mut key_shares: Vec<Vec<u8>> = authorities.iter().map(AuthorityParty::key_share).collect();
    // the rogue (the last) replaces its share by g^x / (pk_0 · pk_1), keeping the rest of its payload
    let width = eg.element_len();
    let x = eg.scalar_from_integer(&votum_arith::Integer::from(123_456_789u64));
    let mut rogue = eg.pow_generator(&x);
    for k in &key_shares[..s - 1] {
        let pk = eg.decode_element(&k[..width]).unwrap();
        rogue = eg.op(&rogue, &eg.inverse(&pk));
    }
    key_shares[s - 1].splice(..width, eg.encode_element(&rogue));
    let mut voter_data = Vec::new();
    for a in authorities.iter_mut() {
        voter_data.push(a.electoral_data().unwrap().1);
    }
    for a in authorities.iter_mut().take(s - 1) {
        assert!(
            a.attach(&parameters, &views(&key_shares), &views(&voter_data))
                .is_err(),
            "an honest authority accepted a key share without a valid proof"
        );
    }
    assert!(VotersClient::new(&parameters, &views(&key_shares), &views(&voter_data)).is_err());
}

/// An election through the parties up to the mix: the parameters, the authorities (each holding
/// every confirmed ballot), the key shares and voter data.
type Voted = (Vec<u8>, Vec<AuthorityParty>, Vec<Vec<u8>>, Vec<Vec<u8>>);

fn voted(s: usize, voters: usize) -> Voted {
    let (parameters, authorities, key_shares, secret, voter_data) = published(s, voters);
    let cards = parties::print_cards(&parameters, &views(&secret), None).unwrap();
    let mut client =
        VotersClient::new(&parameters, &views(&key_shares), &views(&voter_data)).unwrap();
    for card in &cards {
        client.add_card(card).unwrap();
    }
    for i in 0..voters {
        let ballot = client.ballot(i, Some(vec![1 + i % 3])).unwrap();
        let responses: Vec<Vec<u8>> = authorities
            .iter()
            .map(|a| a.ballot(i, &ballot).unwrap())
            .collect();
        let confirmation = client.confirm(i, &views(&responses)).unwrap();
        for a in &authorities {
            a.confirmation(i, &confirmation).unwrap();
        }
    }
    (parameters, authorities, key_shares, voter_data)
}

/// Issue 45, finding 2: a Terelius–Wikström proof needs no secret, so a controller can make the
/// whole chain of shuffles itself, keep every permutation and have the authorities decrypt it;
/// or it can hand the first authority an input without some confirmed ballots. Each authority
/// derives the input from its own confirmed ballots and decrypts only a chain whose slot of its
/// own is the shuffle it made.
#[test]
fn a_controller_cannot_drop_confirmed_ballots_or_mix_for_the_authorities() {
    use votum_chvote::messages::{mixing_generators, shuffle_context};
    use votum_chvote::record;
    let (s, voters) = (3, 5);
    let (parameters, authorities, key_shares, voter_data) = voted(s, voters);
    let input = authorities[0].input().unwrap();
    let board =
        parties::public_board(&parameters, &views(&key_shares), &views(&voter_data)).unwrap();
    let params = &board.params;
    let mut rng = rand_core::OsRng;
    let first = record::decode_input(params, &input, &mut rng).unwrap();

    // an input without voter 0's confirmed ballot
    let fewer = votum_shuffle::Rows::new(1, first.ciphertexts()[1..].to_vec()).unwrap();
    let dropped = record::input_bytes(params, &fewer);
    assert!(
        authorities[0].shuffle(&dropped, &[]).is_err(),
        "an authority shuffled an input without a ballot it confirmed"
    );

    // the controller's own chain, every permutation known to it
    let gens = mixing_generators(&board, voters);
    let mut list = first;
    let mut chain: Vec<Vec<u8>> = Vec::new();
    for j in 0..s {
        let (out, proof) = votum_shuffle::PreparedShuffle::prepare_with_nonce_bits(
            params.eg(),
            board.mix_key(),
            &gens,
            list.len(),
            list.width(),
            Some(params.ephemeral_bits()),
            &mut rng,
        )
        .and_then(|p| p.apply(&list, &shuffle_context(&board, j)))
        .unwrap();
        chain.push(record::shuffle_bytes(params, &out, &proof));
        list = out;
    }
    for (j, a) in authorities.iter().enumerate() {
        assert!(
            a.decrypt(&input, &views(&chain)).is_err(),
            "authority {j} decrypted a chain in which it never shuffled"
        );
    }
    // the honest chain: each authority shuffles once, then every authority decrypts it
    let mut shuffles: Vec<Vec<u8>> = Vec::new();
    for a in &authorities {
        shuffles.push(a.shuffle(&input, &views(&shuffles)).unwrap());
    }
    for a in &authorities {
        a.decrypt(&input, &views(&shuffles)).unwrap();
    }
    // an authority's own slot replaced by the controller's shuffle of the same list is refused
    let mut swapped = shuffles.clone();
    swapped[s - 1] = chain[s - 1].clone();
    assert!(authorities[s - 1]
        .decrypt(&input, &views(&swapped))
        .is_err());
}

/// Issue 45, finding 7: a cheating voting client sends a query for Γ(c)²·pk^r. The OT still gives
/// candidate c's point (the client takes the square root of its key), so the return codes and
/// the finalization code are the card's, and the vote is counted invalid. Each authority, last
/// first, opens the rows of its shuffle that the invalid vote leads back to, checking the later
/// authorities' openings first; the record names the voter, and the verifier checks every step.
/// An authority opens nothing when every vote is valid, and nothing a forged later trace points to.
#[test]
fn an_invalid_vote_from_a_cheating_client_is_traced_to_its_voter() {
    let (s, voters, cheater) = (3, 6, 4);
    let (parameters, authorities, key_shares, secret, voter_data) = published(s, voters);
    let cards = parties::print_cards(&parameters, &views(&secret), None).unwrap();
    let mut client =
        VotersClient::new(&parameters, &views(&key_shares), &views(&voter_data)).unwrap();
    for card in &cards {
        client.add_card(card).unwrap();
    }
    let path = std::env::temp_dir().join(format!("votum-trace-{}.vchv", std::process::id()));
    let mut w = record_opening(&path, &parameters, &key_shares, &voter_data);
    for i in 0..voters {
        let choice = 1 + i % 3;
        let ballot = if i == cheater {
            client.cheating_ballot(i, vec![choice], 0).unwrap()
        } else {
            client.ballot(i, Some(vec![choice])).unwrap()
        };
        let responses: Vec<Vec<u8>> = authorities
            .iter()
            .map(|a| a.ballot(i, &ballot).unwrap())
            .collect();
        // the cheater's codes match the card: the voter sees nothing wrong
        let confirmation = client.confirm(i, &views(&responses)).unwrap();
        let finals: Vec<Vec<u8>> = authorities
            .iter()
            .map(|a| a.confirmation(i, &confirmation).unwrap())
            .collect();
        assert_eq!(client.finalize(i, &views(&finals)).unwrap(), vec![choice]);
        post_voter(&mut w, i, &ballot, &responses, &confirmation, &finals);
    }
    let input = authorities[0].input().unwrap();
    w.append("input", "input", &input).unwrap();
    let mut shuffles: Vec<Vec<u8>> = Vec::new();
    for (j, a) in authorities.iter().enumerate() {
        let sh = a.shuffle(&input, &views(&shuffles)).unwrap();
        assert_eq!(a.index(), j);
        post(&mut w, a, "shuffle", &sh);
        shuffles.push(sh);
    }
    let shares: Vec<Vec<u8>> = authorities
        .iter()
        .map(|a| a.decrypt(&input, &views(&shuffles)).unwrap())
        .collect();
    for (a, sh) in authorities.iter().zip(&shares) {
        post(&mut w, a, "decryption", sh);
    }
    let board =
        parties::public_board(&parameters, &views(&key_shares), &views(&voter_data)).unwrap();
    let (result, _, invalid) =
        parties::tally_result(&board, &input, &views(&shuffles), &views(&shares)).unwrap();
    assert_eq!(invalid, 1, "the cheating client's vote is counted invalid");
    w.append("result", "result", &result).unwrap();

    // the first authority cannot trace before the later ones have (their traces are due)
    assert!(authorities[0]
        .trace(&input, &views(&shuffles), &views(&shares), &[])
        .is_err());
    let mut traces: Vec<Vec<u8>> = Vec::new();
    for j in (0..s).rev() {
        if j == s - 2 {
            // a forged later trace (another output row opened) is refused
            let params = &board.params;
            let mut forged = votum_chvote::record::decode_trace(params, &traces[0]).unwrap();
            forged[0].output = (forged[0].output + 1) % voters as u64;
            let forged = votum_chvote::record::trace_bytes(params, &forged);
            assert!(authorities[j]
                .trace(&input, &views(&shuffles), &views(&shares), &[&forged])
                .is_err());
        }
        let t = authorities[j]
            .trace(&input, &views(&shuffles), &views(&shares), &views(&traces))
            .unwrap();
        post(&mut w, &authorities[j], "trace", &t);
        traces.push(t);
    }
    // once only
    assert!(authorities[s - 1]
        .trace(&input, &views(&shuffles), &views(&shares), &[])
        .is_err());
    w.into_inner().unwrap();
    let (report, _) = votum_verify::verify_record(&path, votum_verify::Options::default());
    assert!(report.passed(), "{:?}", report.not_passed());
    let warned: Vec<String> = report
        .checks
        .iter()
        .flat_map(|c| {
            c.warnings
                .iter()
                .map(move |w| format!("{} {}: {}", c.id, w.object, w.reason))
        })
        .collect();
    assert!(
        warned
            .iter()
            .any(|w| w.starts_with("V-CHV-10 voter-4:") && w.contains("cheating")),
        "{warned:?}"
    );

    // the record without its traces fails V-CHV-10
    let bytes = std::fs::read(&path).unwrap();
    // the record up to its first trace entry (kind "trace", name "authority-2")
    let first_trace = b"\x05trace\x0bauthority-2";
    let cut = bytes
        .windows(first_trace.len())
        .position(|w| w == first_trace)
        .unwrap();
    let short = path.with_extension("short.vchv");
    std::fs::write(&short, &bytes[..cut]).unwrap();
    let (report, _) = votum_verify::verify_record(&short, votum_verify::Options::default());
    assert_eq!(report.not_passed(), vec!["V-CHV-10"], "{:?}", report.checks);
    std::fs::remove_file(&short).unwrap();
    std::fs::remove_file(&path).unwrap();
}

/// No message makes an authority open a row when every vote is valid: a trace would link a valid
/// vote to its voter.
#[test]
fn an_authority_traces_nothing_when_every_vote_is_valid() {
    let (s, voters) = (2, 4);
    let (_, authorities, _, _) = voted(s, voters);
    let input = authorities[0].input().unwrap();
    let mut shuffles: Vec<Vec<u8>> = Vec::new();
    for a in &authorities {
        shuffles.push(a.shuffle(&input, &views(&shuffles)).unwrap());
    }
    let shares: Vec<Vec<u8>> = authorities
        .iter()
        .map(|a| a.decrypt(&input, &views(&shuffles)).unwrap())
        .collect();
    let refused = authorities[s - 1]
        .trace(&input, &views(&shuffles), &views(&shares), &[])
        .unwrap_err();
    assert!(
        refused.to_string().contains("nothing to trace"),
        "{refused}"
    );
}
