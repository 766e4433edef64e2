#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

//! Whole split-value elections in one process, each record checked by the independent verifier
//! (spec/97.9): exact tallies for several shapes, and each kind of cheating caught under its check.

use votum_splitvalue::election::{
    encode_votes, random_values, run, Cheat, Copies, RunOptions, Seeds, Summary,
};
use votum_splitvalue::params::{Choice, Params, RaceSpec, CUT_SOUNDNESS_FLOOR, DEFAULT_COPIES};
use votum_splitvalue::record::{MAGIC, WHAT};
use votum_verify::sv::verify_sv_stream;
use votum_verify::Options;
use votum_verify::{Check, Report, Status};

fn race(id: &str, n: usize, write_in: u8) -> RaceSpec {
    RaceSpec {
        id: id.into(),
        candidates: (1..=n).map(|i| format!("Candidate {i}")).collect(),
        write_in,
    }
}

fn election(
    params: &Params,
    values: &[Vec<u128>],
    seed: u8,
    cheat: Option<Cheat>,
) -> (Summary, Vec<u8>) {
    let mut out = Vec::new();
    let summary = run(
        params,
        "sv-test",
        values,
        RunOptions {
            seeds: Seeds::seeded([seed; 32]),
            cheat,
            progress: None,
            spill: None,
        },
        &mut out,
    )
    .unwrap();
    (summary, out)
}

fn verify(record: &[u8]) -> Report {
    verify_sv_stream(record, "test", Options::default()).0
}

fn failing(report: &Report) -> Vec<&'static str> {
    report.not_passed()
}

#[test]
fn honest_elections_of_several_shapes_give_exact_tallies() {
    // (n_fail, n_leak, copies, races)
    let shapes: Vec<(u8, u8, usize, Vec<RaceSpec>)> = vec![
        (0, 2, 132, vec![race("President", 2, 16)]),
        (1, 1, 134, vec![race("President", 2, 16)]),
        (
            0,
            2,
            136,
            vec![race("A", 3, 0), race("B", 5, 4), race("C", 0, 10)],
        ),
        (0, 0, 140, vec![race("Solo", 2, 0)]),
        (2, 1, 254, vec![race("Wide", 4, 3)]),
    ];
    for (shape, (f, l, copies, races)) in shapes.into_iter().enumerate() {
        let params = Params::new(f, l, copies, &races).unwrap();
        let n = 37 + shape * 11;
        let values = random_values(&params, n, &[shape as u8; 32]);
        let (summary, record) = election(&params, &values, shape as u8, None);
        for (ri, race) in params.races.iter().enumerate() {
            let want = race.tally(values[ri].iter().copied());
            assert_eq!(summary.tallies[ri], want, "shape {shape}, race {ri}");
            assert_eq!(
                want.counts.iter().sum::<u64>() + want.blank + want.write_ins.values().sum::<u64>(),
                n as u64
            );
        }
        let report = verify(&record);
        assert!(report.passed(), "shape {shape}: {:?}", failing(&report));
        assert_eq!(report.ballots, n as u64);
        for c in Check::SV {
            assert_eq!(report.result(c).unwrap().status, Status::Pass, "{}", c.id());
        }
    }
}

#[test]
fn chosen_votes_blanks_write_ins_and_invalid_values_are_counted() {
    let params = Params::new(0, 2, 136, &[race("Mayor", 2, 8)]).unwrap();
    let votes: Vec<Vec<Choice>> = [
        Choice::Candidate(1),
        Choice::Candidate(2),
        Choice::Candidate(2),
        Choice::Blank,
        Choice::WriteIn("Goofy".into()),
        Choice::WriteIn("Goofy".into()),
        Choice::WriteIn("Daisy".into()),
    ]
    .into_iter()
    .map(|c| vec![c])
    .collect();
    let mut values = encode_votes(&params, &votes).unwrap();
    // a device that splits a residue no choice has: counted as invalid
    values[0].push(2 + 67);
    let (summary, record) = election(&params, &values, 9, None);
    let t = &summary.tallies[0];
    assert_eq!(t.counts, vec![1, 2]);
    assert_eq!((t.blank, t.invalid), (1, 1));
    assert_eq!(t.write_ins.get("Goofy"), Some(&2));
    assert_eq!(t.write_ins.get("Daisy"), Some(&1));
    assert!(verify(&record).passed());
    // bad input is refused before anything is written
    assert!(encode_votes(&params, &[vec![Choice::Candidate(3)]]).is_err());
    assert!(encode_votes(&params, &[vec![Choice::WriteIn("much too long".into())]]).is_err());
    assert!(encode_votes(&params, &[vec![]]).is_err());
    let mut out = Vec::new();
    let bad = vec![vec![0, params.races[0].zm.modulus()]];
    assert!(run(&params, "sv-test", &bad, RunOptions::default(), &mut out).is_err());
    assert!(out.is_empty());
}

fn default_params() -> Params {
    // the fewest copies whose cut reaches the verifier's floor (spec/97.10)
    Params::new(0, 2, DEFAULT_COPIES, &[race("President", 2, 16)]).unwrap()
}

/// The checks a cheat trips (every other check passes).
fn caught(cheat: Cheat, seed: u8) -> Vec<&'static str> {
    let params = default_params();
    let values = random_values(&params, 64, &[1; 32]);
    let (_, record) = election(&params, &values, seed, Some(cheat));
    failing(&verify(&record))
}

#[test]
fn altering_many_votes_in_every_copy_is_caught_by_the_sides_even_when_covered() {
    let cheat = |cover| Cheat::Alter {
        race: 0,
        ballots: (0..40).collect(),
        delta: 1,
        copies: Copies::All,
        cover,
    };
    // every opened copy shows the same altered votes (V-SV-06 passes); honest t-values are not
    // zero sharings; covered ones are, and then each altered ballot survives only a left side
    // (probability 2^-40 for all 40)
    assert_eq!(caught(cheat(false), 3), vec!["V-SV-08"]);
    assert_eq!(caught(cheat(true), 3), vec!["V-SV-11"]);
}

#[test]
fn altering_one_copy_is_caught_whether_it_is_opened_or_checked() {
    let params = default_params();
    let values = random_values(&params, 64, &[1; 32]);
    let (_, honest) = election(&params, &values, 4, None);
    let (_, entries) = votum_hash::board_file::read_all(&honest, MAGIC, WHAT).unwrap();
    let cut = &entries.iter().find(|e| e.name == "cut").unwrap().payload[32..];
    let mut kinds = std::collections::BTreeSet::new();
    for k in 0..params.copies {
        let cheat = Cheat::Alter {
            race: 0,
            ballots: vec![7],
            delta: 1,
            copies: Copies::One(k),
            cover: false,
        };
        let got = caught(cheat, 4);
        // the cut moves with what is posted, so each outcome is one of the two
        assert!(
            got == vec!["V-SV-06"] || got == vec!["V-SV-08"],
            "copy {k}: {got:?}"
        );
        kinds.insert(got[0]);
    }
    assert_eq!(cut.len(), params.half());
    assert_eq!(
        kinds.len(),
        2,
        "both an opened and a checked altered copy occur"
    );
}

#[test]
fn dropped_and_duplicated_votes_are_caught() {
    let drop = Cheat::Drop {
        race: 0,
        column: 0,
        position: 3,
        copies: Copies::One(2),
    };
    assert!(!caught(drop, 5).is_empty());
    let dup = Cheat::Duplicate {
        race: 0,
        column: 2,
        from: 1,
        to: 2,
        copies: Copies::One(11),
    };
    assert!(!caught(dup, 6).is_empty());
}

#[test]
fn one_server_changing_its_share_breaks_the_zero_sharing_or_the_copies() {
    // 4×2 grid: extra rows make a single server's change inconsistent
    let params = Params::new(1, 1, 140, &[race("President", 2, 16)]).unwrap();
    let values = random_values(&params, 40, &[2; 32]);
    let cheat = Cheat::AlterShare {
        race: 0,
        row: 3,
        column: 1,
        position: 9,
        copies: Copies::All,
    };
    let (_, record) = election(&params, &values, 8, Some(cheat));
    let got = failing(&verify(&record));
    assert!(got.contains(&"V-SV-06"), "{got:?}");
}

#[test]
fn a_wrong_path_a_bad_opening_and_a_wrong_tally_are_caught_under_their_checks() {
    assert_eq!(caught(Cheat::WrongPath { race: 0 }, 7), vec!["V-SV-11"]);
    assert_eq!(caught(Cheat::BadOpening { race: 0 }, 7), vec!["V-SV-05"]);
    assert_eq!(
        caught(Cheat::BadInputOpening { race: 0 }, 7),
        vec!["V-SV-09"]
    );
    assert_eq!(caught(Cheat::BadTally { race: 0 }, 7), vec!["V-SV-12"]);
}

#[test]
fn a_board_edited_after_a_challenge_is_caught() {
    let params = default_params();
    let values = random_values(&params, 20, &[3; 32]);
    let (_, record) = election(&params, &values, 10, None);
    let (id, mut entries) = votum_hash::board_file::read_all(&record, MAGIC, WHAT).unwrap();
    // replace a root posted before the cut, and write the board out again (re-chained)
    let at = entries.iter().position(|e| e.kind == "outputs").unwrap();
    entries[at].payload[0] ^= 1;
    let rewritten = votum_hash::board_file::write_all(
        MAGIC,
        &id,
        &entries
            .iter()
            .map(|e| (e.kind.clone(), e.name.clone(), e.payload.clone()))
            .collect::<Vec<_>>(),
    )
    .unwrap();
    let got = failing(&verify(&rewritten));
    assert!(got.contains(&"V-SV-04"), "{got:?}");
    // a truncated record is an error, never a shorter record
    let report = verify(&record[..record.len() - 5]);
    assert_eq!(report.result(Check::Sv01).unwrap().status, Status::Error);
}

#[test]
fn seeded_runs_are_reproducible_and_seeds_change_everything_posted() {
    let params = default_params();
    let values = random_values(&params, 10, &[4; 32]);
    let (a, ra) = election(&params, &values, 1, None);
    let (b, rb) = election(&params, &values, 1, None);
    let (c, _) = election(&params, &values, 2, None);
    assert_eq!(ra, rb);
    assert_eq!(a.head, b.head);
    assert_ne!(a.head, c.head);
    assert_eq!(a.tallies, c.tallies);
}

/// The privacy test of spec/97.11. An observer knows the record. For each opened copy it tries to
/// link a left-side ballot p to an output position q through u_in(p) + t^u = u_out(q) (every
/// u_out of an opened copy can be regenerated from its posted seed). With the t-values the
/// reference simulation posts for every copy (indexed by input position) that finds every
/// left-side ballot's vote; with what votum posts (t-values of checked copies only) it finds none.
#[test]
fn test_sv_privacy_nothing_published_links_a_ballot_to_an_opened_vote() {
    use std::collections::HashMap;
    use votum_splitvalue::commit::output_splits;
    use votum_splitvalue::election::path_of;
    use votum_splitvalue::wire::Reader;

    let params = default_params();
    let race = &params.races[0];
    let zm = &race.zm;
    let n = 60;
    let values = random_values(&params, n, &[5; 32]);
    let master = [11u8; 32];
    let (_, record) = election(&params, &values, 11, None);
    let (_, entries) = votum_hash::board_file::read_all(&record, MAGIC, WHAT).unwrap();
    let get = |name: &str| {
        entries
            .iter()
            .find(|e| e.name == name)
            .unwrap()
            .payload
            .clone()
    };
    let checked: Vec<usize> = get("cut")[32..].iter().map(|&k| usize::from(k)).collect();
    let opened: Vec<usize> = (0..24).filter(|k| !checked.contains(k)).collect();
    let h2: [u8; 32] = get("sides").try_into().unwrap();
    let side = &votum_splitvalue::challenge::sides(&h2, 1, n)[0];
    // the opened input halves: u_in(p) for left-side ballots, per row
    let mut u_in = vec![[0u128; 3]; n];
    for row in 0..3 {
        let inputs = get(&format!("inputs-0-{}", row + 1));
        let mut r = Reader::new(&inputs, "inputs");
        for ballot in u_in.iter_mut() {
            ballot[row] = r.value(zm).unwrap();
            r.key().unwrap();
        }
    }
    // every u_out of an opened copy, regenerated from its posted seed, by value → position
    let opened_u = |k: usize, row: usize| -> HashMap<u128, usize> {
        let payload = get(&format!("opened-0-{k}-{}", row + 1));
        let tau: [u8; 32] = payload[..32].try_into().unwrap();
        let mut r = Reader::new(&payload[32..], "opened");
        let y = r.values(zm, n).unwrap();
        let mut m = HashMap::new();
        output_splits(zm, &tau, 0, &y, |q, u, _, _, _| {
            m.insert(u, q);
        });
        m
    };
    let attack = |k: usize, t_u: &dyn Fn(usize) -> u128| -> usize {
        let u_out = opened_u(k, 0);
        (0..n)
            .filter(|&p| side[p] == 0)
            .filter(|&p| u_out.contains_key(&zm.add(u_in[p][0], t_u(p))))
            .count()
    };
    let left = side.iter().filter(|&&s| s == 0).count();
    assert!(left > 10);

    // the reference's t-values for an opened copy, recomputed from the secret seeds this test
    // knows: every left-side ballot is linked
    let seeds = Seeds::seeded(master);
    let columns: Vec<[u8; 32]> = (0..3u8)
        .map(|j| seeds.seed(&[b"column".as_slice(), &[j]].concat()))
        .collect();
    let k = opened[0];
    let path = path_of(&columns, 0, k, n);
    let u_out: Vec<u128> = {
        let payload = get(&format!("opened-0-{k}-1"));
        let tau: [u8; 32] = payload[..32].try_into().unwrap();
        let y = Reader::new(&payload[32..], "o").values(zm, n).unwrap();
        let mut v = vec![0; n];
        output_splits(zm, &tau, 0, &y, |q, u, _, _, _| v[q] = u);
        v
    };
    let mut leaked = vec![0u128; n];
    for (q, &p) in path.iter().enumerate() {
        leaked[p as usize] = zm.sub(u_out[q], u_in[p as usize][0]);
    }
    assert_eq!(attack(k, &|p| leaked[p]), left);

    // what votum posts: t-values only for checked copies; applied to any opened copy they link
    // nothing
    for &kc in &checked {
        let path = Reader::new(&get(&format!("path-0-{kc}")), "p")
            .take(4 * n)
            .unwrap()
            .chunks_exact(4)
            .map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]) as usize)
            .collect::<Vec<_>>();
        let t = get(&format!("tvalues-0-{kc}-1"));
        let mut r = Reader::new(&t, "t");
        let mut by_input = vec![0u128; n];
        for &p in &path {
            by_input[p] = r.value(zm).unwrap();
            r.value(zm).unwrap();
        }
        for &ko in &opened {
            assert_eq!(
                attack(ko, &|p| by_input[p]),
                0,
                "checked copy {kc} against opened copy {ko}"
            );
        }
    }
    assert!(!entries.iter().any(|e| e.kind == "tvalues"
        && opened
            .iter()
            .any(|k| e.name.starts_with(&format!("tvalues-0-{k}-")))));
}

/// A record on disk is verified with its t-values read again from the file when the halves arrive
/// (bounded memory); the verdicts are those of the streamed verification.
#[test]
fn a_record_file_is_verified_like_a_stream() {
    let dir = std::env::temp_dir().join(format!("votum-sv-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let params = default_params();
    let values = random_values(&params, 50, &[6; 32]);
    for (i, cheat) in [None, Some(Cheat::WrongPath { race: 0 })]
        .into_iter()
        .enumerate()
    {
        let (_, record) = election(&params, &values, 12, cheat);
        let path = dir.join(format!("r{i}.vsv"));
        std::fs::write(&path, &record).unwrap();
        let from_file = votum_verify::sv::verify_sv_record(&path, Options::default()).0;
        assert_eq!(failing(&from_file), failing(&verify(&record)));
        assert_eq!(from_file.passed(), i == 0);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// How a lying worker changes a job's answer.
type Lie = fn(Vec<u8>) -> Result<Vec<u8>, String>;

/// Workers that run each job here, as a cluster's worker would (spec/98.3), optionally lying.
struct Inline {
    parameters: Vec<u8>,
    record: std::path::PathBuf,
    answers: Vec<Result<Vec<u8>, String>>,
    jobs: usize,
    lie: Option<Lie>,
}

impl votum_verify::SvWorkers for Inline {
    fn setup(&mut self, parameters: &[u8], record: &std::path::Path) -> std::ops::ControlFlow<()> {
        self.parameters = parameters.to_vec();
        self.record = record.to_path_buf();
        std::ops::ControlFlow::Continue(())
    }
    fn submit(&mut self, job: &[u8]) -> std::ops::ControlFlow<()> {
        self.jobs += 1;
        let a = votum_verify::check_sv_task(&self.parameters, &self.record, job);
        self.answers.push(match (self.lie, a) {
            (Some(lie), Ok(a)) => lie(a),
            (_, a) => a,
        });
        std::ops::ControlFlow::Continue(())
    }
    fn collect(&mut self) -> std::ops::ControlFlow<(), Vec<Result<Vec<u8>, String>>> {
        std::ops::ControlFlow::Continue(std::mem::take(&mut self.answers))
    }
}

fn inline(lie: Option<Lie>) -> Inline {
    Inline {
        parameters: Vec::new(),
        record: std::path::PathBuf::new(),
        answers: Vec::new(),
        jobs: 0,
        lie,
    }
}

/// The heavy checks on workers give the in-process report, finding for finding, for honest
/// records of several shapes and for each kind of cheating; a worker that lies about a finding or
/// answers nonsense changes nothing (the client walks the record again in process).
#[test]
fn workers_give_the_in_process_report() {
    let dir = std::env::temp_dir().join(format!("votum-sv-workers-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let three = Params::new(
        0,
        2,
        136,
        &[race("A", 3, 0), race("B", 5, 4), race("C", 0, 10)],
    )
    .unwrap();
    let cases: Vec<(Params, Option<Cheat>)> = vec![
        (default_params(), None),
        (three, None),
        (
            Params::new(1, 1, 140, &[race("President", 2, 16)]).unwrap(),
            None,
        ),
        (default_params(), Some(Cheat::WrongPath { race: 0 })),
        (default_params(), Some(Cheat::BadOpening { race: 0 })),
        (default_params(), Some(Cheat::BadInputOpening { race: 0 })),
        (default_params(), Some(Cheat::BadTally { race: 0 })),
        (
            default_params(),
            Some(Cheat::AlterShare {
                race: 0,
                row: 1,
                column: 1,
                position: 3,
                copies: Copies::All,
            }),
        ),
    ];
    let lies: [Option<Lie>; 3] = [
        None,
        Some(|a| {
            Ok(String::from_utf8(a)
                .unwrap()
                .replace("\"clean\":true", "\"clean\":false")
                .into_bytes())
        }),
        Some(|_| Err("lost".into())),
    ];
    for (i, (params, cheat)) in cases.into_iter().enumerate() {
        let values = random_values(&params, 40 + i, &[i as u8; 32]);
        let honest = cheat.is_none();
        let client_side = matches!(cheat, Some(Cheat::BadTally { .. }));
        let (_, record) = election(&params, &values, 20 + i as u8, cheat);
        let path = dir.join(format!("r{i}.vsv"));
        std::fs::write(&path, &record).unwrap();
        let mut steps_here = 0;
        let mut count = |_| {
            steps_here += 1;
            std::ops::ControlFlow::Continue(())
        };
        // one walk with every check in line (a stream has no file for jobs to read)
        let inline_walk = verify_sv_stream(
            record.as_slice(),
            "test",
            Options {
                progress: Some(&mut count),
                ..Options::default()
            },
        );
        // the file: its jobs on this machine's threads
        let here = votum_verify::sv::verify_sv_record(&path, Options::default());
        assert_eq!(failing(&here.0), failing(&inline_walk.0), "case {i}");
        for lie in lies {
            let mut workers = inline(lie);
            let mut steps = 0;
            let mut count = |_| {
                steps += 1;
                std::ops::ControlFlow::Continue(())
            };
            let there = votum_verify::sv::verify_sv_record(
                &path,
                Options {
                    progress: Some(&mut count),
                    sv_workers: Some(&mut workers),
                    ..Options::default()
                },
            );
            // the record is walked again in process exactly when a worker's answer was not a
            // clean pass: for a cheat the workers find, or a lying or lost worker (a wrong tally
            // is the client's own check)
            let again = !(honest || client_side) || lie.is_some();
            assert_eq!(steps > steps_here, again, "case {i}");
            assert_eq!(
                serde_json::to_string(&there.0).unwrap(),
                serde_json::to_string(&here.0).unwrap(),
                "case {i}"
            );
            assert_eq!(there.1.values, here.1.values, "case {i}");
            assert_eq!(here.0.passed(), honest, "case {i}");
            let races = params.races.len();
            assert_eq!(workers.jobs, races * (params.copies + 1), "case {i}");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A worker whose record differs from the client's (another file at the same path) refuses the
/// job instead of checking the wrong bytes; the client then verifies in process.
#[test]
fn a_worker_reading_another_record_refuses_the_job() {
    let dir = std::env::temp_dir().join(format!("votum-sv-other-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let params = default_params();
    let values = random_values(&params, 30, &[9; 32]);
    let (_, a) = election(&params, &values, 1, None);
    let (_, b) = election(&params, &values, 2, None);
    let (pa, pb) = (dir.join("a.vsv"), dir.join("b.vsv"));
    std::fs::write(&pa, &a).unwrap();
    std::fs::write(&pb, &b).unwrap();
    struct Elsewhere(Inline, std::path::PathBuf);
    impl votum_verify::SvWorkers for Elsewhere {
        fn setup(&mut self, p: &[u8], _: &std::path::Path) -> std::ops::ControlFlow<()> {
            let other = self.1.clone();
            self.0.setup(p, &other)
        }
        fn submit(&mut self, job: &[u8]) -> std::ops::ControlFlow<()> {
            self.0.submit(job)
        }
        fn collect(&mut self) -> std::ops::ControlFlow<(), Vec<Result<Vec<u8>, String>>> {
            let answers = self.0.collect();
            if let std::ops::ControlFlow::Continue(a) = &answers {
                let e = a[0].as_ref().unwrap_err();
                assert!(e.contains("is not the entry the client read"), "{e}");
            }
            answers
        }
    }
    let mut workers = Elsewhere(inline(None), pb.clone());
    let report = votum_verify::sv::verify_sv_record(
        &pa,
        Options {
            sv_workers: Some(&mut workers),
            ..Options::default()
        },
    )
    .0;
    assert!(report.passed());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A last-column server's lists spilled to disk come back as they went in; the file is gone from
/// the directory at once; a list changed on disk is refused (spec/97.13).
#[test]
fn spilled_lists_come_back_and_a_changed_one_is_refused() {
    use votum_splitvalue::servers::{LastColumn, ListStore};
    let dir = std::env::temp_dir().join(format!("votum-sv-spill-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let params = default_params();
    let zm = params.races[0].zm;
    let lists: Vec<Vec<u128>> = (0..4u128)
        .map(|k| (0..1000u128).map(|i| (i * 7919 + k) % 1_000_003).collect())
        .collect();
    let taus: Vec<[u8; 32]> = (0..4).map(|k| [k as u8; 32]).collect();
    let mut spilled = LastColumn::new(
        0,
        1,
        taus.clone(),
        ListStore::spilling(zm, 4, &dir).unwrap(),
    );
    let mut held = LastColumn::new(0, 1, taus, ListStore::in_memory(zm, 4));
    // nothing named in the directory, even while the file is in use
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
    assert!(spilled.roots().is_none());
    for (k, l) in lists.iter().enumerate().rev() {
        spilled.store(&zm, k, l.clone()).unwrap();
        held.store(&zm, k, l.clone()).unwrap();
    }
    assert_eq!(spilled.roots(), held.roots());
    for (k, l) in lists.iter().enumerate() {
        assert_eq!(*spilled.lists.get(k).unwrap(), *l);
    }
    // the bytes on disk are not the list: find the spill file through /proc and flip one byte
    let fd = std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|e| std::fs::read_link(e.unwrap().path()).ok())
        .find(|p| p.to_string_lossy().contains(".sv-lists-"))
        .expect("the spill file is open");
    assert!(fd.to_string_lossy().ends_with("(deleted)"));
    let bytes = {
        let mut f = std::fs::OpenOptions::new();
        f.read(true).write(true);
        let proc_path = std::fs::read_dir("/proc/self/fd")
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| std::fs::read_link(p).is_ok_and(|t| t == fd))
            .unwrap();
        let mut file = f.open(&proc_path).unwrap();
        use std::io::{Read, Seek, SeekFrom, Write};
        let mut all = Vec::new();
        file.read_to_end(&mut all).unwrap();
        file.seek(SeekFrom::Start(5)).unwrap();
        file.write_all(&[all[5] ^ 1]).unwrap();
        all
    };
    let plain = votum_splitvalue::servers::encode_list(&zm, &lists[3]);
    assert!(!bytes
        .windows(64)
        .any(|w| plain.windows(64).next() == Some(w)));
    // copy 3 was written first: its list holds the flipped byte
    let err = spilled.lists.get(3).unwrap_err();
    assert!(err.to_string().contains("changed on disk"), "{err}");
    assert_eq!(*spilled.lists.get(0).unwrap(), lists[0]);
    drop(spilled);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// An election whose last column spills its lists writes the same record, byte for byte, as one
/// that keeps them in memory (the same seeds).
#[test]
fn an_election_with_spilled_lists_writes_the_same_record() {
    let dir = std::env::temp_dir().join(format!("votum-sv-spill-run-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let params = Params::new(0, 2, 138, &[race("A", 3, 4), race("B", 2, 0)]).unwrap();
    let values = random_values(&params, 77, &[4; 32]);
    let (_, held) = election(&params, &values, 31, None);
    let mut out = Vec::new();
    run(
        &params,
        "sv-test",
        &values,
        RunOptions {
            seeds: Seeds::seeded([31; 32]),
            spill: Some(dir.clone()),
            ..RunOptions::default()
        },
        &mut out,
    )
    .unwrap();
    assert_eq!(out, held);
    assert!(verify(&out).passed());
    // nothing left behind
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A record with few copies is a proof of few bits (issue 45, finding 5): the verifier reports its
/// soundness and fails V-SV-02 below the floor, whatever else passes.
#[test]
fn a_record_below_the_soundness_floor_fails_its_parameters() {
    for (copies, fails) in [(2, true), (24, true), (130, true), (DEFAULT_COPIES, false)] {
        let params = Params::new(0, 2, copies, &[race("President", 2, 0)]).unwrap();
        let values = random_values(&params, 20, &[9; 32]);
        let (_, record) = election(&params, &values, 9, None);
        let report = verify(&record);
        let cut = &report.soundness[0];
        assert!((cut.bits - params.cut_soundness_bits()).abs() < 1e-9);
        assert_eq!(cut.floor, Some(CUT_SOUNDNESS_FLOOR));
        if fails {
            assert_eq!(failing(&report), vec!["V-SV-02"], "{copies} copies");
            let finding = &report.result(Check::Sv02).unwrap().findings[0];
            assert!(
                finding.reason.contains("below the floor of 128"),
                "{}",
                finding.reason
            );
        } else {
            assert!(report.passed(), "{copies} copies: {:?}", failing(&report));
        }
    }
}

/// Issue 46: every V-SV check has a record that fails it, and this test fails when a check of the
/// registry has none. Each case is a cheating run or an edited record; the check it names must be
/// among those that do not pass (the exact lists are asserted by the tests above for each cheat).
#[test]
fn every_split_value_check_has_a_record_that_fails_it() {
    use std::collections::BTreeSet;
    let params = default_params();
    let values = random_values(&params, 64, &[1; 32]);
    let (_, honest) = election(&params, &values, 3, None);
    let rewrite = |change: &dyn Fn(&mut Vec<votum_hash::board_file::Entry>)| {
        let (id, mut entries) = votum_hash::board_file::read_all(&honest, MAGIC, WHAT).unwrap();
        change(&mut entries);
        let all: Vec<(String, String, Vec<u8>)> = entries
            .iter()
            .map(|e| (e.kind.clone(), e.name.clone(), e.payload.clone()))
            .collect();
        failing(&verify(
            &votum_hash::board_file::write_all(MAGIC, &id, &all).unwrap(),
        ))
    };
    let four_by_two = Params::new(1, 1, 140, &[race("President", 2, 16)]).unwrap();
    let share = Cheat::AlterShare {
        race: 0,
        row: 3,
        column: 1,
        position: 9,
        copies: Copies::All,
    };
    let alter = Cheat::Alter {
        race: 0,
        ballots: (0..40).collect(),
        delta: 1,
        copies: Copies::All,
        cover: false,
    };
    let cases: Vec<(&str, Vec<&'static str>)> = vec![
        ("V-SV-01", failing(&verify(&honest[..honest.len() - 5]))),
        (
            "V-SV-02",
            // a modulus that is not the smallest prime above the bound (its last byte)
            rewrite(&|e| {
                let p = &mut e[0].payload;
                let at = p.len() - 1;
                p[at] ^= 2;
            }),
        ),
        ("V-SV-03", caught(Cheat::BadSeal, 7)),
        (
            "V-SV-04",
            rewrite(&|e| {
                let at = e.iter().position(|x| x.kind == "outputs").unwrap();
                e[at].payload[0] ^= 1;
            }),
        ),
        ("V-SV-05", caught(Cheat::BadOpening { race: 0 }, 7)),
        ("V-SV-06", {
            let values = random_values(&four_by_two, 40, &[2; 32]);
            failing(&verify(&election(&four_by_two, &values, 8, Some(share)).1))
        }),
        ("V-SV-07", caught(Cheat::RepeatedPath { race: 0 }, 7)),
        ("V-SV-08", caught(alter, 3)),
        ("V-SV-09", caught(Cheat::BadInputOpening { race: 0 }, 7)),
        ("V-SV-10", caught(Cheat::BadOtherCommitment { race: 0 }, 7)),
        ("V-SV-11", caught(Cheat::WrongPath { race: 0 }, 7)),
        ("V-SV-12", caught(Cheat::BadTally { race: 0 }, 7)),
    ];
    for (id, got) in &cases {
        assert!(got.contains(id), "{id}: {got:?}");
    }
    let covered: BTreeSet<&str> = cases.iter().map(|(id, _)| *id).collect();
    let all: BTreeSet<&str> = Check::SV.iter().map(|c| c.id()).collect();
    assert_eq!(covered, all, "a check without a record that fails it");
    // the three cheats added for this test fail their own check alone
    assert_eq!(cases[2].1, vec!["V-SV-03"]);
    assert_eq!(cases[9].1, vec!["V-SV-10"]);
    assert!(cases[6].1.starts_with(&["V-SV-07"]), "{:?}", cases[6].1);
}
