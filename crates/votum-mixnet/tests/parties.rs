//! A mixnet election between parties that each keep their own copy of the board (spec/91.9),
//! driven by a controller that is also the board, and the controller's attacks on them: each is
//! refused by the party it targets, or shows in the record (issue 45).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha20Rng;
use votum_group::{Group, Ristretto255};
use votum_mixnet::board::MixBoard;
use votum_mixnet::count::{count, Rule};
use votum_mixnet::election::decrypt_rows;
use votum_mixnet::params::{random_rows, Parameters};
use votum_mixnet::party::{MixParty, Role, Signed};
use votum_mixnet::record::{read_all, write_all};
use votum_mixnet::{wire, MixError};
use votum_verify::mix::verify_mix_stream;
use votum_verify::{Check, Options, Report, Status};

const AUTHORITIES: usize = 3;

fn signer(k: usize) -> votum_node::EnvelopeSigner {
    votum_node::EnvelopeSigner::from_seed(&[k as u8; 32])
}

fn params() -> Parameters {
    Parameters {
        election_id: "parties-election".into(),
        width: 1,
        candidates: 3,
        rule: Rule::Plurality,
        ties: votum_mixnet::count::TieRule::LowerNumber,
        mixers: AUTHORITIES,
        trustees: AUTHORITIES,
        quorum: 2,
        signers: (1..=AUTHORITIES)
            .map(|k| signer(k).verifying_key())
            .collect(),
    }
}

fn verify(record: &[u8]) -> Report {
    verify_mix_stream(record, "record", Options::default()).0
}

/// The controller and board, the authorities and the voters' client, each with its own copy.
struct Election {
    board: MixBoard<Ristretto255, Vec<u8>>,
    /// Every entry the controller posted, and how far each party has been shown (authorities
    /// 1..=3 at 0..3, the voters' client last).
    posted: Vec<(String, String, Vec<u8>)>,
    shown: Vec<usize>,
    authorities: Vec<MixParty<Ristretto255>>,
    voters: MixParty<Ristretto255>,
    rng: ChaCha20Rng,
}

impl Election {
    fn new() -> Self {
        let g = Ristretto255;
        let p = params();
        let bytes = p.encode_for(g.id());
        let authorities = (1..=AUTHORITIES)
            .map(|k| {
                let key = signer(k).verifying_key();
                MixParty::new(&g, &bytes, Role::Authority(k), Some(&key)).unwrap()
            })
            .collect();
        Self {
            board: MixBoard::create(&g, &p, Vec::new()).unwrap(),
            posted: Vec::new(),
            shown: vec![0; AUTHORITIES + 1],
            authorities,
            voters: MixParty::new(&g, &bytes, Role::Voters, None).unwrap(),
            rng: ChaCha20Rng::seed_from_u64(3),
        }
    }

    fn party(&mut self, who: usize) -> &mut MixParty<Ristretto255> {
        if who == AUTHORITIES {
            &mut self.voters
        } else {
            &mut self.authorities[who]
        }
    }

    /// Shows party `who` (0-based; AUTHORITIES is the voters' client) what it has not seen.
    fn show(&mut self, who: usize) -> Result<(), MixError> {
        let new = self.posted[self.shown[who]..].to_vec();
        self.shown[who] = self.posted.len();
        let head = self.board.head();
        self.party(who).sync(&new, &head)
    }

    fn show_all(&mut self) {
        for who in 0..=AUTHORITIES {
            self.show(who).unwrap();
        }
    }

    fn post(&mut self, kind: &str, name: &str, payload: &[u8]) -> Result<(), MixError> {
        self.board.post_bytes(kind, name, payload)?;
        self.posted
            .push((kind.into(), name.into(), payload.to_vec()));
        Ok(())
    }

    /// An authority's entry and its node's signature on it.
    fn post_signed(&mut self, k: usize, s: &Signed) -> Result<(), MixError> {
        self.post(s.kind, &s.name, &s.payload)?;
        let sig = signer(k).sign_record(&s.statement);
        self.post("signature", &s.name, &sig)
    }

    /// Keys: every trustee deals, its shares go straight to the other trustees.
    fn keys(&mut self) {
        for k in 1..=AUTHORITIES {
            let (signed, shares) = self.authorities[k - 1].deal(&mut self.rng).unwrap();
            for (j, share) in shares {
                self.authorities[j as usize - 1]
                    .receive_share(k as u64, &share)
                    .unwrap();
            }
            self.post_signed(k, &signed).unwrap();
        }
        self.show_all();
    }

    fn vote(&mut self, votes: &[Vec<u64>]) {
        let ballots = self.voters.cast(votes, &mut self.rng).unwrap();
        self.post("ballots", "ballots", &ballots).unwrap();
        self.show_all();
    }

    fn mix(&mut self, k: usize) {
        let signed = self.authorities[k - 1].shuffle(&mut self.rng).unwrap();
        self.post_signed(k, &signed).unwrap();
        self.show_all();
    }

    /// Decryption by every trustee, then the result; the record.
    fn finish(mut self) -> Vec<u8> {
        let mut shares = Vec::new();
        for k in 1..=AUTHORITIES {
            let signed = self.authorities[k - 1].decrypt(&mut self.rng).unwrap();
            shares.push(wire::decode_share(&Ristretto255, &signed.payload).unwrap());
            self.post_signed(k, &signed).unwrap();
        }
        let datas: Vec<_> = self
            .board
            .current()
            .unwrap()
            .ciphertexts()
            .iter()
            .map(|c| c.data)
            .collect();
        let p = params();
        let rows = decrypt_rows(&Ristretto255, &p, &datas, &shares).unwrap();
        let outcome = count(p.rule, p.ties, p.candidates, &rows);
        self.board.post_result(&rows, &outcome).unwrap();
        self.board.finish().unwrap().2
    }
}

fn votes() -> Vec<Vec<u64>> {
    random_rows(&params(), 12, &mut ChaCha20Rng::seed_from_u64(9))
}

fn honest() -> Vec<u8> {
    let mut e = Election::new();
    e.keys();
    e.vote(&votes());
    for k in 1..=AUTHORITIES {
        e.mix(k);
    }
    e.finish()
}

#[test]
fn parties_with_their_own_copies_hold_an_election_whose_signed_record_verifies() {
    let record = honest();
    let report = verify(&record);
    assert!(report.passed(), "{:?}", report.not_passed());
    let signed = report.result(Check::Mix08).unwrap();
    // 3 trustees' keys, 3 shuffles, 3 shares
    assert_eq!(signed.checked, 9);
    assert!(signed.warnings.is_empty());
    let (_, entries) = read_all(&record).unwrap();
    let (rows, _) =
        wire::decode_result(&entries.last().unwrap().payload, Rule::Plurality, 3).unwrap();
    let (mut got, mut cast) = (rows, votes());
    got.sort_unstable();
    cast.sort_unstable();
    assert_eq!(got, cast);
}

#[test]
fn a_signature_that_is_wrong_or_missing_fails_the_record() {
    let record = honest();
    let (id, entries) = read_all(&record).unwrap();
    let all: Vec<_> = entries
        .iter()
        .map(|e| (e.kind.clone(), e.name.clone(), e.payload.clone()))
        .collect();
    let at = |name: &str| {
        all.iter()
            .position(|(k, n, _)| k == "signature" && n == name)
            .unwrap()
    };
    // the last share's signature with one bit flipped: V-MIX-08 names it, and nothing else
    // fails (no later proof's context holds it)
    let mut flipped = all.clone();
    flipped[at("decryption-3")].2[5] ^= 1;
    let r = verify(&write_all(&id, &flipped).unwrap());
    assert_eq!(r.not_passed(), vec!["V-MIX-08"]);
    let f = &r.result(Check::Mix08).unwrap().findings[0];
    assert!(f.reason.contains("decryption-3"), "{}", f.reason);
    // trustee 3's share signed by authority 2, on the right statement: V-MIX-08
    let mut other = all.clone();
    let share = all
        .iter()
        .position(|(_, n, _)| n == "decryption-3")
        .unwrap();
    let digest = votum_hash::board::payload_digest(&all[0].2);
    let last_mix = entries.iter().rposition(|e| e.kind == "mix").unwrap();
    let forged = signer(2).sign_record(&votum_mixnet::signing::statement(
        &digest,
        &entries[last_mix].hash,
        "decryption",
        "decryption-3",
        &all[share].2,
    ));
    other[at("decryption-3")].2 = forged.to_vec();
    assert_eq!(
        verify(&write_all(&id, &other).unwrap()).not_passed(),
        vec!["V-MIX-08"]
    );
    // the same statement signed by authority 3 passes: the forgery failed for its key alone
    other[at("decryption-3")].2 = signer(3)
        .sign_record(&votum_mixnet::signing::statement(
            &digest,
            &entries[last_mix].hash,
            "decryption",
            "decryption-3",
            &all[share].2,
        ))
        .to_vec();
    assert!(verify(&write_all(&id, &other).unwrap()).passed());
    // mixer 2's signature flipped: V-MIX-08 names it (the later proofs' contexts change too)
    let mut flipped = all.clone();
    flipped[at("mix-2")].2[0] ^= 1;
    let r = verify(&write_all(&id, &flipped).unwrap());
    assert!(r.not_passed().contains(&"V-MIX-08"));
    let f = &r.result(Check::Mix08).unwrap().findings[0];
    assert!(f.reason.contains("mix-2"), "{}", f.reason);
    // a shuffle without its signature: V-MIX-01, out of turn
    let mut missing = all.clone();
    missing.remove(
        missing
            .iter()
            .position(|(k, n, _)| k == "signature" && n == "mix-1")
            .unwrap(),
    );
    let r = verify(&write_all(&id, &missing).unwrap());
    assert_eq!(r.not_passed()[0], "V-MIX-01");
    assert_eq!(r.result(Check::Mix01).unwrap().status, Status::Fail);
}

/// The controller asks a trustee to decrypt the input list, before any shuffle: it would link
/// every voter to their vote. Refused, as is a second decryption.
#[test]
fn a_trustee_decrypts_only_the_cascades_last_list_and_only_once() {
    let mut e = Election::new();
    e.keys();
    e.vote(&votes());
    let err = e.authorities[0].decrypt(&mut e.rng).err().unwrap();
    assert!(matches!(err, MixError::Refused(_)), "{err}");
    e.mix(1);
    e.mix(2);
    // two of three shuffles: still refused
    assert!(matches!(
        e.authorities[1].decrypt(&mut e.rng),
        Err(MixError::Refused(_))
    ));
    e.mix(3);
    e.authorities[0].decrypt(&mut e.rng).unwrap();
    assert!(matches!(
        e.authorities[0].decrypt(&mut e.rng),
        Err(MixError::Refused(_))
    ));
}

/// The controller makes mixer 2's shuffle itself (it would know the permutation) and signs it
/// with a key of its own: the board refuses the signature, and a party shown the entry with it
/// refuses it and everything after.
#[test]
fn a_shuffle_the_controller_made_is_refused_by_every_copy() {
    let mut e = Election::new();
    e.keys();
    e.vote(&votes());
    e.mix(1);
    // the controller's own shuffle, from the board's list, with the proof's context the head
    let g = Ristretto255;
    let joint = *e.board.public_key().unwrap();
    let pk = votum_elgamal::PublicKey::new(&g, joint).unwrap();
    let generators =
        votum_shuffle::Generators::derive(&g, &params().generators_seed(), votes().len());
    let ctx = e.board.head();
    let (out, proof) = votum_shuffle::shuffle_and_prove(
        &g,
        &pk,
        &generators,
        &ctx,
        e.board.current().unwrap(),
        &mut e.rng,
    )
    .unwrap();
    let mut payload = out.encode(&g);
    payload.extend_from_slice(&proof.encode(&g));
    e.post("mix", "mix-2", &payload).unwrap();
    let statement = votum_mixnet::signing::statement(
        &votum_hash::board::payload_digest(&params().encode_for(g.id())),
        &ctx,
        "mix",
        "mix-2",
        &payload,
    );
    let forged = signer(9).sign_record(&statement);
    let err = e.board.post_signature(&forged).err().unwrap();
    assert!(matches!(err, MixError::Signature(_)), "{err}");
    // a board that posts it all the same: trustee 1's copy refuses it, then refuses to decrypt
    e.posted
        .push(("signature".into(), "mix-2".into(), forged.to_vec()));
    let err = e.show(0).err().unwrap();
    assert!(matches!(err, MixError::Signature(_)), "{err}");
    assert!(matches!(
        e.authorities[0].decrypt(&mut e.rng),
        Err(MixError::Refused(_))
    ));
}

/// The controller shows a trustee a board other than its own (one trustee's key left out of the
/// copy it is shown): the heads differ, and the trustee refuses from then on.
#[test]
fn a_party_shown_another_board_refuses_everything_after() {
    let mut e = Election::new();
    e.keys();
    let votes = votes();
    let ballots = e.voters.cast(&votes, &mut e.rng).unwrap();
    e.post("ballots", "ballots", &ballots).unwrap();
    // trustee 2 is told the ballots are other ones: the copy's head is not the board's
    let mut fake = ballots.clone();
    let one = 8 + 3 * 32 + 2 * 32;
    fake.drain(8..8 + one);
    fake[..8].copy_from_slice(&((votes.len() - 1) as u64).to_be_bytes());
    e.shown[1] = e.posted.len();
    let err = e.authorities[1]
        .sync(
            &[("ballots".into(), "ballots".into(), fake)],
            &e.board.head(),
        )
        .err()
        .unwrap();
    assert!(matches!(err, MixError::Refused(_)), "{err}");
    assert!(matches!(
        e.authorities[1].shuffle(&mut e.rng),
        Err(MixError::Refused(_))
    ));
}

/// A trustee deals once, takes one share per dealer, none from itself; a dealer whose share does
/// not match its commitments is named when the keys are done.
#[test]
fn a_trustee_deals_once_and_a_bad_share_names_its_dealer() {
    let mut e = Election::new();
    let (signed, shares) = e.authorities[0].deal(&mut e.rng).unwrap();
    assert!(matches!(
        e.authorities[0].deal(&mut e.rng),
        Err(MixError::Refused(_))
    ));
    assert!(matches!(
        e.authorities[0].receive_share(1, &shares[0].1),
        Err(MixError::Refused(_))
    ));
    for (j, share) in &shares {
        e.authorities[*j as usize - 1]
            .receive_share(1, share)
            .unwrap();
    }
    assert!(matches!(
        e.authorities[1].receive_share(1, &shares[0].1),
        Err(MixError::Refused(_))
    ));
    e.post_signed(1, &signed).unwrap();
    for k in 2..=AUTHORITIES {
        let (signed, shares) = e.authorities[k - 1].deal(&mut e.rng).unwrap();
        for (j, share) in shares {
            // trustee 3 sends trustee 1 a share of another polynomial's value
            let bytes = if k == 3 && j == 1 {
                Ristretto255.encode_scalar(&Ristretto255.scalar_from_u64(7))
            } else {
                share.to_vec()
            };
            e.authorities[j as usize - 1]
                .receive_share(k as u64, &bytes)
                .unwrap();
        }
        e.post_signed(k, &signed).unwrap();
    }
    let err = e.show(0).err().unwrap();
    assert!(matches!(err, MixError::Key { trustee: 3, .. }), "{err}");
    e.show(1).unwrap();
}

/// Parameters that name another key in an authority's slot (a controller's own key, to sign in
/// its name) are refused by that authority; so are parameters without keys.
#[test]
fn an_authority_refuses_parameters_that_name_another_key_for_it() {
    let g = Ristretto255;
    let mut p = params();
    p.signers[1] = signer(9).verifying_key();
    let key = signer(2).verifying_key();
    let err = MixParty::new(&g, &p.encode_for(g.id()), Role::Authority(2), Some(&key))
        .err()
        .unwrap();
    assert!(matches!(err, MixError::Refused(_)), "{err}");
    p.signers.clear();
    assert!(matches!(
        MixParty::new(&g, &p.encode_for(g.id()), Role::Authority(2), Some(&key)),
        Err(MixError::Refused(_))
    ));
}

/// The voters' client checks the board's ballots are the ones it cast.
#[test]
fn the_voters_client_refuses_a_board_that_changed_its_ballots() {
    let mut e = Election::new();
    e.keys();
    let votes = votes();
    e.voters.cast(&votes, &mut e.rng).unwrap();
    // the controller posts ballots of its own making: a fresh client's, for the same key
    let g = Ristretto255;
    let mut other = MixParty::new(&g, &params().encode_for(g.id()), Role::Voters, None).unwrap();
    other.sync(&e.posted, &e.board.head()).unwrap();
    let ballots = other.cast(&votes, &mut e.rng).unwrap();
    e.post("ballots", "ballots", &ballots).unwrap();
    let err = e.show(AUTHORITIES).err().unwrap();
    assert!(matches!(err, MixError::Refused(_)), "{err}");
}

/// Parameters that name signing keys are version 2, and only they: an older verifier refuses a
/// signed record by its version instead of misreading it, and keys cannot be slipped into (or
/// dropped from) a line of the other version.
#[test]
fn signed_parameters_are_version_2_and_only_they() {
    let g = Ristretto255;
    let p = params();
    let line = String::from_utf8(p.encode_for(g.id())).unwrap();
    assert!(line.starts_with("votum-mix v2 "), "{line}");
    assert_eq!(Parameters::decode(line.as_bytes()).unwrap().1, p);
    assert!(Parameters::decode(line.replacen("v2", "v1", 1).as_bytes()).is_err());
    let unsigned = Parameters {
        signers: Vec::new(),
        ..p
    };
    let plain = String::from_utf8(unsigned.encode_for(g.id())).unwrap();
    assert!(plain.starts_with("votum-mix v1 "), "{plain}");
    assert!(Parameters::decode(plain.replacen("v1", "v2", 1).as_bytes()).is_err());
}
