//! votum against microsoft/electionguard-rust in one process, on one thread (`make bench-egrs`; built by
//! scripts/build-egrs-bench.sh in a scratch folder beside a checkout of electionguard-rust, never in the
//! repository): the same ballots encrypted and verified by each, on the 2.x 4096-bit group.
//!
//! The ballot is electionguard-rust's example ballot style 17 (contests 1, 2 and 3 of its example manifest:
//! one of 2, one of 3, one of 4 options; 9 options in all); votum encrypts the same contests, options and
//! limits from an egk-ec manifest of that shape. Each side: `ROUNDS` runs of `BALLOTS` ballots, ms per
//! ballot, min and median; then each side's ballots verified by its own verifier.
//!
//! Usage: `egrs-bench [BALLOTS] [ROUNDS]` (default 10 and 5).

use std::collections::BTreeMap;
use std::time::Instant;

use eg::ballot::BallotEncrypted;
use eg::contest_option_fields::ContestOptionFieldsPlaintexts;
use eg::example_election_manifest::example_election_manifest;
use eg::example_election_parameters::example_election_parameters;
use eg::guardian_secret_key::GuardianSecretKey;
use eg::hash::HValue;
use eg::index::Index;
use eg::pre_voting_data::PreVotingData;
use eg::voter_selections_plaintext::VoterSelectionsPlaintext;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha20Rng;
use util::csprng::Csprng;
use votum_eg2::encrypt::{Device, PlainBallot, PlainContest, State};
use votum_eg2::{read_manifest, Eg2Group};
use votum_group::{Group, ModpGroup};

/// Options per contest of style 17, and the option each ballot `b` votes for in each.
const SHAPE: [usize; 3] = [2, 3, 4];

fn votes(b: usize) -> Vec<Vec<u8>> {
    SHAPE
        .iter()
        .enumerate()
        .map(|(c, &n)| {
            let mut v = vec![0u8; n];
            v[(b + c) % n] = 1;
            v
        })
        .collect()
}

fn stats(mut ms: Vec<f64>) -> (f64, f64) {
    ms.sort_by(f64::total_cmp);
    (ms[0], ms[ms.len() / 2])
}

fn votum_manifest() -> String {
    let contests: Vec<String> = SHAPE
        .iter()
        .enumerate()
        .map(|(c, &n)| {
            let options: Vec<String> = (1..=n)
                .map(|o| format!(r#"{{"object_id": "c{c}o{o}", "sequence_order": {o}, "candidate_id": "x{c}{o}"}}"#))
                .collect();
            format!(
                r#"{{"object_id": "c{c}", "sequence_order": {}, "electoral_district_id": "all", "votes_allowed": 1,
                "option_selection_limit": 1, "ballot_selections": [{}]}}"#,
                c + 1,
                options.join(",")
            )
        })
        .collect();
    format!(
        r#"{{"contests": [{}], "ballot_styles": [{{"object_id": "s17", "geopolitical_unit_ids": ["all"]}}]}}"#,
        contests.join(",")
    )
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<usize> = std::env::args().skip(1).map(|a| a.parse()).collect::<Result<_, _>>()?;
    let ballots = args.first().copied().unwrap_or(10);
    let rounds = args.get(1).copied().unwrap_or(5);

    // electionguard-rust: its example parameters and manifest, five guardians of its own
    let parameters = example_election_parameters();
    let mut csprng = Csprng::new(b"votum egrs-bench");
    let keys: Vec<_> = (1..=parameters.varying_parameters.n.get_one_based_u32())
        .map(|i| {
            GuardianSecretKey::generate(&mut csprng, &parameters, Index::from_one_based_index(i).unwrap(), None)
                .make_public_key()
        })
        .collect();
    let pre = PreVotingData::try_from_parameters_manifest_gpks(parameters, example_election_manifest(), &keys)?;
    let selections = |b: usize| -> Result<VoterSelectionsPlaintext, Box<dyn std::error::Error>> {
        let mut contests = BTreeMap::new();
        for (c, v) in votes(b).into_iter().enumerate() {
            contests.insert((c as u32 + 1).try_into()?, ContestOptionFieldsPlaintexts::try_new_from(v)?);
        }
        Ok(VoterSelectionsPlaintext {
            h_e: pre.hashes_ext.h_e,
            ballot_style_ix: 17.try_into()?,
            contests_option_fields_plaintexts: contests,
        })
    };
    let mut theirs_enc = Vec::new();
    let mut theirs_ballots = Vec::new();
    for _ in 0..rounds {
        let t = Instant::now();
        theirs_ballots.clear();
        for b in 0..ballots {
            let xi = HValue::from_csprng(&mut csprng);
            theirs_ballots.push(BallotEncrypted::try_from_ballot_selection_data_plaintext(
                &pre,
                selections(b)?,
                Some(xi),
                &mut csprng,
            )?);
        }
        theirs_enc.push(t.elapsed().as_secs_f64() * 1e3 / ballots as f64);
    }
    let t = Instant::now();
    for b in &theirs_ballots {
        b.verify(&pre)?;
    }
    let theirs_ver = t.elapsed().as_secs_f64() * 1e3 / ballots as f64;

    // votum: the same contests on the same group
    let group = ModpGroup::eg2_4096();
    let doc: serde_json::Value = serde_json::from_str(&votum_manifest())?;
    let manifest = read_manifest(&doc)?;
    let k = group.pow_generator(&group.scalar_from_u64(987_654_321));
    let device = Device::new(group.clone(), k.clone(), [7u8; 32], &manifest, "bench");
    let plain: Vec<PlainBallot> = (0..ballots)
        .map(|b| PlainBallot {
            id: format!("b{b}"),
            style: "s17".into(),
            contests: votes(b)
                .into_iter()
                .enumerate()
                .map(|(c, v)| {
                    (format!("c{c}"), PlainContest { votes: v.into_iter().map(u32::from).collect(), write_ins: Vec::new() })
                })
                .collect(),
        })
        .collect();
    let mut rng = ChaCha20Rng::seed_from_u64(3);
    let mut ours_enc = Vec::new();
    let mut ours_ballots = Vec::new();
    for _ in 0..rounds {
        let t = Instant::now();
        ours_ballots.clear();
        for p in &plain {
            ours_ballots.push(device.encrypt(p, State::Cast, 0, &mut rng)?);
        }
        ours_enc.push(t.elapsed().as_secs_f64() * 1e3 / ballots as f64);
    }
    let mut params = votum_verify::Eg2BallotChecker::TAG.to_vec();
    params.extend_from_slice(b"eg2-4096\n");
    let kb = group.hash_bytes(&k);
    params.extend_from_slice(&(kb.len() as u64).to_be_bytes());
    params.extend_from_slice(&kb);
    params.extend_from_slice(&[7u8; 32]);
    params.extend_from_slice(votum_manifest().as_bytes());
    let checker = votum_verify::Eg2BallotChecker::new(&params)?;
    let texts: Vec<String> = ours_ballots
        .iter()
        .map(|b| votum_eg2::record::ballot(&group, b).to_string())
        .collect();
    let t = Instant::now();
    for text in &texts {
        if !checker.check(&[text.as_str()])[0] {
            return Err("a votum ballot did not verify".into());
        }
    }
    let ours_ver = t.elapsed().as_secs_f64() * 1e3 / ballots as f64;

    let (tmin, tmed) = stats(theirs_enc);
    let (omin, omed) = stats(ours_enc);
    println!("ballot: 3 contests, 9 options (electionguard-rust's example style 17); {ballots} ballots x {rounds} runs, one thread");
    println!("encrypt  electionguard-rust {tmin:8.2} ms min {tmed:8.2} median | votum {omin:6.2} ms min {omed:6.2} median | ratio {:.1}x (min) {:.1}x (median)", tmin / omin, tmed / omed);
    println!("verify   electionguard-rust {theirs_ver:8.2} ms per ballot | votum {ours_ver:6.2} ms | ratio {:.1}x", theirs_ver / ours_ver);
    Ok(())
}
