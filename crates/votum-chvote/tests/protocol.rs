#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

//! The protocol's promises (issue: CHVote end to end): exact tallies, codes that expose a lying
//! client, refused confirmations, attributed bad responses, and typed refusals that change nothing.

use std::sync::Arc;

use rand_core::OsRng;
use votum_chvote::authority::{Authority, SecretVoterData};
use votum_chvote::client::{self, CastSecrets, ClientTables};
use votum_chvote::messages::PublicBoard;
use votum_chvote::messages::{Ballot, Confirmation, Finalization, Response};
use votum_chvote::poly::Point;
use votum_chvote::printing::{voting_cards, VotingCard};
use votum_chvote::sim::{self, Config};
use votum_chvote::{ChvoteError, ElectionSet, Level, Params, Shape};
use votum_group::Group;

struct Election {
    board: Arc<PublicBoard>,
    authorities: Vec<Authority>,
    cards: Vec<VotingCard>,
    tables: ClientTables,
}

fn election(level: Level, shape: Shape, voters: usize) -> Election {
    let params = Params::new(level, 4).unwrap();
    let set = ElectionSet::of_shape(shape, voters).unwrap();
    let mut authorities: Vec<Authority> = (0..4)
        .map(|j| Authority::new(j, params.clone(), &mut OsRng))
        .collect();
    let keys: Vec<_> = authorities.iter().map(Authority::key_share).collect();
    let mut secret: Vec<Vec<SecretVoterData>> = Vec::new();
    let mut public = Vec::new();
    for a in authorities.iter_mut() {
        let (s, p) = a.gen_electorate_data(&set).unwrap();
        secret.push(s);
        public.push(p);
    }
    let board =
        Arc::new(PublicBoard::new(params.clone(), set, "protocol-test", keys, public).unwrap());
    for a in authorities.iter_mut() {
        a.attach(board.clone());
    }
    let cards = voting_cards(&params, &secret).unwrap();
    let tables = ClientTables::new(&board);
    Election {
        board,
        authorities,
        cards,
        tables,
    }
}

/// Every authority's response to `ballot` (each must accept it).
fn respond(e: &Election, voter: usize, ballot: &Ballot) -> Vec<Response> {
    e.authorities
        .iter()
        .map(|a| a.handle_ballot(voter, ballot, &mut OsRng).unwrap())
        .collect()
}

/// Casts `selections` for `voter` with `code`: the ballot, the client's secrets, the responses and
/// the points they give.
fn cast_ballot(e: &Election, voter: usize, code: &str, selections: &[usize]) -> Cast {
    let (ballot, secrets) =
        client::gen_ballot(&e.board, &e.tables, voter, code, selections, &mut OsRng).unwrap();
    let responses = respond(e, voter, &ballot);
    let points = client::get_points(&e.board, &secrets, &responses).unwrap();
    (ballot, secrets, responses, points)
}

/// Confirms with `code`: the confirmation and every authority's finalization (each must accept).
fn confirm(
    e: &Election,
    secrets: &CastSecrets,
    code: &str,
    points: &[Vec<Point>],
) -> (Confirmation, Vec<Finalization>) {
    let gamma = client::gen_confirmation(&e.board, secrets, code, points, &mut OsRng).unwrap();
    let parts = e
        .authorities
        .iter()
        .map(|a| a.handle_confirmation(secrets.voter, &gamma).unwrap())
        .collect();
    (gamma, parts)
}

type Cast = (Ballot, CastSecrets, Vec<Response>, Vec<Vec<Point>>);

#[test]
fn simulations_count_exactly_at_both_levels_and_shapes() {
    for (level, shape, voters) in [
        (Level::One, Shape::Single, 12),
        (Level::One, Shape::SimpleSample, 20),
        (Level::Two, Shape::Single, 6),
    ] {
        let report = sim::run(
            &Config {
                level,
                shape,
                voters,
                authorities: 4,
                record: None,
                sheets: None,
            },
            &mut |_| {},
        )
        .unwrap();
        assert_eq!(report.confirmed, voters);
        assert_eq!(report.tally.invalid, 0);
        assert_eq!(report.tally.counts, report.expected, "{level:?} {shape:?}");
        assert_eq!(
            report.tally.counts.iter().sum::<u64>(),
            report.expected.iter().sum::<u64>()
        );
        assert_eq!(report.steps.len(), sim::STEPS.len());
    }
}

#[test]
fn a_client_that_changes_the_vote_shows_codes_that_are_not_the_sheets() {
    let e = election(Level::One, Shape::Single, 3);
    let card = &e.cards[0];
    let intended = [1usize];
    let cast = [2usize]; // the client votes for candidate 2 instead
    let (_, _, _, points) = cast_ballot(&e, 0, &card.voting_code, &cast);
    let shown = client::return_codes(&e.board, &cast, &points);
    // a lying client must show codes for the intended candidate; it only has the cast one's
    assert!(!client::check_return_codes(
        &card.return_codes,
        &shown,
        &intended
    ));
    assert!(client::check_return_codes(
        &card.return_codes,
        &shown,
        &cast
    ));
    // every candidate's code differs from every other's on the sheet
    let distinct: std::collections::HashSet<_> = card.return_codes.iter().collect();
    assert_eq!(distinct.len(), card.return_codes.len());
}

#[test]
fn a_wrong_confirmation_code_is_refused_and_the_right_one_then_accepted() {
    let e = election(Level::One, Shape::Single, 2);
    let card = &e.cards[1];
    let (_, secrets, _, points) = cast_ballot(&e, 1, &card.voting_code, &[3]);
    let mut wrong = card.confirmation_code.clone();
    let last = wrong.pop().unwrap();
    wrong.push(if last == 'A' { 'B' } else { 'A' });
    let gamma = client::gen_confirmation(&e.board, &secrets, &wrong, &points, &mut OsRng).unwrap();
    for a in &e.authorities {
        assert_eq!(
            a.handle_confirmation(1, &gamma).unwrap_err(),
            ChvoteError::ConfirmationProof(1)
        );
    }
    // another voter's code is refused too
    let other = client::gen_confirmation(
        &e.board,
        &secrets,
        &e.cards[0].confirmation_code,
        &points,
        &mut OsRng,
    )
    .unwrap();
    assert!(e.authorities[0].handle_confirmation(1, &other).is_err());
    // nothing changed: the right code still confirms, and the finalization code matches
    let (gamma, parts) = confirm(&e, &secrets, &card.confirmation_code, &points);
    assert_eq!(
        client::finalization_code(&e.board, &parts),
        card.finalization_code
    );
    assert_eq!(
        e.authorities[2].handle_confirmation(1, &gamma).unwrap_err(),
        ChvoteError::AlreadyConfirmed(1)
    );
}

#[test]
fn a_bad_response_is_attributed_to_its_authority() {
    let e = election(Level::One, Shape::SimpleSample, 10);
    let card = &e.cards[0];
    let sel = client::random_selections(&e.board, 0, &mut OsRng);
    let (ballot, secrets) =
        client::gen_ballot(&e.board, &e.tables, 0, &card.voting_code, &sel, &mut OsRng).unwrap();
    let responses = respond(&e, 0, &ballot);
    // authority 2 flips a byte of the encrypted point of the first selected candidate
    let mut bad = responses.clone();
    bad[2].c[sel[0] - 1][5] ^= 0x40;
    match client::get_points(&e.board, &secrets, &bad) {
        Err(ChvoteError::BadResponse { authority, .. }) => assert_eq!(authority, 2),
        other => panic!("expected authority 2 to be named, got {other:?}"),
    }
    // authority 1 answers with the wrong exponent for one election's key (b and d disagree)
    let mut bad = responses.clone();
    bad[1].d[0] = e
        .board
        .params
        .eg()
        .op(&bad[1].d[0], e.board.params.eg().generator());
    match client::get_points(&e.board, &secrets, &bad) {
        Err(ChvoteError::BadResponse { authority, .. }) => assert_eq!(authority, 1),
        other => panic!("expected authority 1 to be named, got {other:?}"),
    }
    // the honest responses decode, and after confirmation the revealed exponents give them
    let points = client::get_points(&e.board, &secrets, &responses).unwrap();
    let (_, parts) = confirm(&e, &secrets, &card.confirmation_code, &points);
    for j in 0..4 {
        assert!(votum_chvote::messages::check_revealed_response(
            &e.board,
            0,
            &ballot,
            &responses[j],
            &parts[j].r
        ));
    }
    let mut r = parts[3].r.clone();
    r[0] += 1;
    assert!(!votum_chvote::messages::check_revealed_response(
        &e.board,
        0,
        &ballot,
        &responses[3],
        &r
    ));
}

#[test]
fn bad_input_gets_a_typed_error_and_changes_nothing() {
    let e = election(Level::One, Shape::Single, 3);
    let (card0, card1) = (&e.cards[0], &e.cards[1]);
    let a = &e.authorities[0];
    // a confirmation from a voter who has not voted
    let (_, secrets, _, points) = cast_ballot(&e, 0, &card0.voting_code, &[1]);
    let gamma = client::gen_confirmation(
        &e.board,
        &secrets,
        &card0.confirmation_code,
        &points,
        &mut OsRng,
    )
    .unwrap();
    assert_eq!(
        a.handle_confirmation(1, &gamma).unwrap_err(),
        ChvoteError::NoBallot(1)
    );
    // a second ballot from voter 0
    let (again, _) =
        client::gen_ballot(&e.board, &e.tables, 0, &card0.voting_code, &[2], &mut OsRng).unwrap();
    assert_eq!(
        a.handle_ballot(0, &again, &mut OsRng).unwrap_err(),
        ChvoteError::AlreadyVoted(0)
    );
    // voter 1's ballot with a bad proof, then with another voter's credential, then out of range
    let (mut b1, s1) =
        client::gen_ballot(&e.board, &e.tables, 1, &card1.voting_code, &[3], &mut OsRng).unwrap();
    b1.proof.s3 += 1;
    assert_eq!(
        a.handle_ballot(1, &b1, &mut OsRng).unwrap_err(),
        ChvoteError::BallotProof(1)
    );
    let (b_other, _) =
        client::gen_ballot(&e.board, &e.tables, 1, &card0.voting_code, &[3], &mut OsRng).unwrap();
    assert_eq!(
        a.handle_ballot(1, &b_other, &mut OsRng).unwrap_err(),
        ChvoteError::CredentialMismatch(1)
    );
    assert_eq!(
        a.handle_ballot(7, &b_other, &mut OsRng).unwrap_err(),
        ChvoteError::UnknownVoter(7)
    );
    // selections the voter may not make are refused by the client
    assert!(matches!(
        client::gen_ballot(
            &e.board,
            &e.tables,
            1,
            &card1.voting_code,
            &[1, 2],
            &mut OsRng
        ),
        Err(ChvoteError::Selections(_))
    ));
    // nothing changed: voter 1's honest ballot goes through to the end
    b1.proof.s3 -= 1;
    let responses = respond(&e, 1, &b1);
    let points = client::get_points(&e.board, &s1, &responses).unwrap();
    let shown = client::return_codes(&e.board, &[3], &points);
    assert!(client::check_return_codes(
        &card1.return_codes,
        &shown,
        &[3]
    ));
    let gamma =
        client::gen_confirmation(&e.board, &s1, &card1.confirmation_code, &points, &mut OsRng)
            .unwrap();
    let parts: Vec<_> = e
        .authorities
        .iter()
        .map(|a| a.handle_confirmation(1, &gamma).unwrap())
        .collect();
    assert_eq!(
        client::finalization_code(&e.board, &parts),
        card1.finalization_code
    );
    // voter 0 never confirmed: one encryption (voter 1's) goes to the mix
    assert_eq!(e.authorities[0].encryptions().len(), 1);
}

#[test]
fn debug_output_never_shows_secrets() {
    let e = election(Level::One, Shape::Single, 1);
    let shown = format!("{:?} {:?}", e.cards[0], e.authorities[0]);
    assert!(!shown.contains(&e.cards[0].voting_code));
    assert!(shown.contains("redacted"));
}

#[test]
fn a_code_sheet_prints_the_cards_codes() {
    let e = election(Level::One, Shape::SimpleSample, 10);
    let card = &e.cards[0];
    let html = votum_chvote::printing::sheet_html(card, &e.board.set);
    for code in [
        &card.voting_code,
        &card.confirmation_code,
        &card.finalization_code,
    ] {
        // printed in groups of four for typing, and read back as typed
        let printed = votum_chvote::codes::grouped(code);
        assert!(html.contains(&format!("<code>{printed}</code>")));
        assert_eq!(
            votum_chvote::codes::code_to_integer(&printed.to_lowercase()).unwrap(),
            votum_chvote::codes::code_to_integer(code).unwrap()
        );
    }
    for rc in &card.return_codes {
        let printed = votum_chvote::codes::grouped(rc);
        assert!(html.contains(&format!("<code>{printed}</code>")));
    }
    assert!(
        html.contains("Code sheet, voter 1<"),
        "voters are numbered from 1"
    );
    assert!(!html.contains("<script"));
    // voter 9 does not take part in the third election; its sheet says so
    let html9 = votum_chvote::printing::sheet_html(&e.cards[9], &e.board.set);
    assert!(html9.contains("(not on your ballot)"));
}
