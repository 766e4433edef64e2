//! A whole ElectionGuard 2.1 election in one process (spec/66.7): the key ceremony with shares in signed
//! ElGamal and the guardians' record hash H_G compared, ballots encrypted on every core and chained per
//! device, the weighted tally (eq. 80), its decryption with the commitment round, the challenged ballots
//! opened by their nonces, every count compared with the plaintexts, and the record written (spec/66.3).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::time::Instant;

use rand_chacha::ChaCha20Rng;
use rand_core::{OsRng, SeedableRng};
use rayon::prelude::*;
use votum_elgamal::Ciphertext;

use crate::election::{choose, Dlog, Options as BaseOptions, Summary};
use crate::encrypt::{counted, PlainBallot, PlainContest};
use crate::group::{parameter_inputs, Eg2Group};
use crate::manifest::{read_manifest, Manifest, ManifestContest};
use crate::v21::ballot::{Chain, Device};
use crate::v21::data;
use crate::v21::decrypt::{data_plaintext, in_process, nonce_share, open_ballot, Target};
use crate::v21::hashes::{
    base_hash, extended_base_hash, guardian_record_hash, parameter_hash, ShortCode,
};
use crate::v21::keys::{Guardian, KeyShares};
use crate::v21::preencrypt::{Printed, PrintedContest, Printer, Recorder};
use crate::v21::record::{self, Ballot, DecryptedData, GuardianKey, Keys, State, TallyValue};
use crate::Eg2Error;

/// How to run a 2.1 election: the 2.x options, simple chaining or none, and weighted voters.
#[derive(Clone, Debug, Default)]
pub struct Options {
    pub base: BaseOptions,
    /// simple chaining (mode 1) on the device; no chaining (mode 0) otherwise
    pub simple_chaining: bool,
    /// voter i weighs 1 + (i mod 3) (eq. 80); every weight is 1 otherwise
    pub weighted: bool,
    /// ballots printed in advance (spec/66.10) besides `base.ballots`; every `challenge_every`-th is left
    /// uncast, the others marked by a voter and recorded
    pub pre_encrypted: usize,
    /// contest data on the ordinary ballots (spec/66.11)
    pub contest_data: ContestData,
}

/// Whether ballots carry contest data (spec/66.11), and whether the guardians decrypt the cast ones'.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ContestData {
    /// only where the manifest already asks for it
    #[default]
    AsManifest,
    /// in every contest: a contest whose manifest entry has no `contest_data_blocks` gets L + 1
    Encrypted,
    /// as `Encrypted`, and every contest without `decrypt_contest_data` gets it `true`
    Decrypted,
}

/// The manifest with what `options` asks for written into it (Ω for pre-encrypted ballots, spec/66.10;
/// contest data, spec/66.11), or `None` when it asks for nothing the manifest lacks.
fn amended(
    manifest: &serde_json::Value,
    options: &Options,
) -> Result<Option<serde_json::Value>, Eg2Error> {
    let mut out = manifest.clone();
    if options.pre_encrypted > 0
        && ShortCode::of_manifest(manifest)
            .map_err(Eg2Error::Manifest)?
            .is_none()
    {
        out["short_code"] = ShortCode::Hex2.name().into();
    }
    if options.contest_data != ContestData::AsManifest {
        for c in out["contests"].as_array_mut().into_iter().flatten() {
            if c["contest_data_blocks"].is_null() {
                let limit = c["votes_allowed"].as_u64().unwrap_or(1);
                c["contest_data_blocks"] = (limit + 1).into();
            }
            if options.contest_data == ContestData::Decrypted && c["decrypt_contest_data"].is_null()
            {
                c["decrypt_contest_data"] = true.into();
            }
        }
    }
    Ok((&out != manifest).then_some(out))
}

/// D as the device fills it for a voter's contest (spec/66.11), to compare an opening or a decryption with.
fn plain_data(
    mc: &ManifestContest,
    p: &PlainBallot,
    id: &str,
) -> Result<Option<Vec<u8>>, Eg2Error> {
    let bad = |reason: String| Eg2Error::Ballot {
        ballot: p.id.clone(),
        reason,
    };
    let Some(blocks) = mc.data_blocks else {
        return Ok(None);
    };
    let (_, plain) =
        counted(mc, p.contests.get(id).unwrap_or(&PlainContest::default())).map_err(bad)?;
    data::encode(&plain, blocks).map(Some).map_err(bad)
}

fn io(path: &Path, e: std::io::Error) -> Eg2Error {
    Eg2Error::Io(format!("{}: {e}", path.display()))
}

fn write_json(path: &Path, v: &serde_json::Value) -> Result<(), Eg2Error> {
    let text = serde_json::to_vec_pretty(v).map_err(|e| Eg2Error::Io(e.to_string()))?;
    std::fs::write(path, text).map_err(|e| io(path, e))
}

fn write_lines(
    path: &Path,
    lines: impl Iterator<Item = serde_json::Value>,
) -> Result<(), Eg2Error> {
    let file = std::fs::File::create(path).map_err(|e| io(path, e))?;
    let mut out = std::io::BufWriter::new(file);
    for v in lines {
        serde_json::to_writer(&mut out, &v).map_err(|e| Eg2Error::Io(e.to_string()))?;
        out.write_all(b"\n").map_err(|e| io(path, e))?;
    }
    out.flush().map_err(|e| io(path, e))
}

/// A contest's id, its manifest entry and the votes counted in it.
type Counted<'m> = (&'m str, &'m ManifestContest, Vec<u32>);

/// What a voter's plaintext counts in each contest of its style, by the device's own rule (`counted`): what
/// the decrypted tally and an opened ballot are compared with.
fn plain_votes<'m>(manifest: &'m Manifest, p: &PlainBallot) -> Result<Vec<Counted<'m>>, Eg2Error> {
    let none = PlainContest::default();
    manifest
        .contests_for(&p.style)
        .unwrap_or_default()
        .into_iter()
        .map(|(id, mc)| {
            let (votes, _) =
                counted(mc, p.contests.get(id).unwrap_or(&none)).map_err(|e| Eg2Error::Ballot {
                    ballot: p.id.clone(),
                    reason: e,
                })?;
            Ok((id, mc, votes))
        })
        .collect()
}

/// The key ceremony among `n` guardians in memory (§3.2.2): each checks every other's key record and the
/// share it receives; all compute H_G from their own views, which must agree.
pub fn ceremony<G: Eg2Group>(
    group: &G,
    (hp, hb): (&[u8; 32], &[u8; 32]),
    n: u32,
    k: u32,
) -> Result<(Keys<G>, Vec<KeyShares<G>>), Eg2Error> {
    let mut rng = ChaCha20Rng::from_rng(OsRng).map_err(|e| Eg2Error::Io(e.to_string()))?;
    let mut guardians: Vec<Guardian<G>> = (1..=n)
        .map(|i| Guardian::new(group, hp, i, k, &mut rng))
        .collect();
    let publics: Vec<GuardianKey<G>> = guardians.iter().map(Guardian::public).collect();
    for dealer in 0..guardians.len() {
        for to in 0..guardians.len() {
            if dealer == to {
                continue;
            }
            let share = guardians[dealer].share_for(group, hp, &publics[to], &mut rng);
            guardians[to].receive(group, hp, k, &publics[dealer], &share)?;
        }
    }
    let key = publics
        .iter()
        .fold(group.identity(), |acc, g| group.op(&acc, &g.vote[0]));
    let key_hat = publics
        .iter()
        .fold(group.identity(), |acc, g| group.op(&acc, &g.data[0]));
    let hg = guardian_record_hash(
        group,
        hb,
        (&key, &key_hat),
        publics.iter().flat_map(|g| &g.vote),
        publics.iter().flat_map(|g| &g.data),
        publics.iter().map(|g| &g.kappa),
    );
    let he = extended_base_hash(group, hb, &key, &key_hat);
    let shares = guardians
        .iter()
        .map(|g| g.key_shares(group, n))
        .collect::<Result<Vec<_>, _>>()?;
    let keys = Keys {
        hp: *hp,
        hb: *hb,
        guardians: publics,
        k: key,
        k_hat: key_hat,
        hg,
        he,
    };
    Ok((keys, shares))
}

/// What the printer and the recorder made: the voters' marks (uncast ones none), the record's ballots, the
/// paper of each uncast ballot (its short codes as printed) and the printer as a device.
struct PreEncrypted<G: Eg2Group> {
    plain: Vec<(PlainBallot, State, u32)>,
    ballots: Vec<Ballot<G>>,
    sheets: BTreeMap<String, Vec<PrintedContest>>,
    printer: record::Device,
}

/// A voter's marks on a pre-encrypted ballot: one mark per option at most, so a vote above 1 is 1.
fn marks(
    manifest: &Manifest,
    style: &str,
    voters: &mut ChaCha20Rng,
) -> BTreeMap<String, PlainContest> {
    let mut contests = choose(manifest, style, voters);
    for c in contests.values_mut() {
        for v in &mut c.votes {
            *v = (*v).min(1);
        }
    }
    contests
}

/// Prints `options.pre_encrypted` ballots on every core, seals them in print order on the printer's chain,
/// and records each as cast with a voter's marks or leaves it uncast (spec/66.10).
fn pre_encrypted<G: Eg2Group>(
    (group, keys, manifest, short): (&G, &Keys<G>, &Manifest, ShortCode),
    options: &Options,
    first: usize,
    voters: &mut ChaCha20Rng,
) -> Result<PreEncrypted<G>, Eg2Error> {
    let o = &options.base;
    let styles: Vec<&String> = manifest.styles.keys().collect();
    let name = format!("{}-printer", o.device);
    let printer = Printer::new(
        group.clone(),
        (&keys.k, &keys.k_hat),
        keys.he,
        (manifest, short),
        &name,
    );
    let mut printed: Vec<(Printed<G>, crate::encrypt::BallotNonce)> = (0..options.pre_encrypted)
        .into_par_iter()
        .map(|i| {
            let mut rng = ChaCha20Rng::from_rng(OsRng).map_err(|e| Eg2Error::Io(e.to_string()))?;
            let style = styles[i % styles.len()];
            printer.print(&format!("pre-{}", i + 1), style, &mut rng)
        })
        .collect::<Result<_, _>>()?;
    let mut chain = Chain::printer(&keys.he, &name, options.simple_chaining);
    for (p, _) in &mut printed {
        chain.seal(&mut p.ballot);
    }
    // the voters mark the ballots they cast, in print order
    let plain: Vec<(PlainBallot, State, u32)> = printed
        .iter()
        .enumerate()
        .map(|(i, (p, _))| {
            let uncast = o.challenge_every > 0 && (i + 1) % o.challenge_every == 0;
            let (state, contests) = if uncast {
                (State::Challenged, BTreeMap::new())
            } else {
                (State::Cast, marks(manifest, &p.ballot.style, voters))
            };
            let weight = if options.weighted {
                1 + ((first + i) % 3) as u32
            } else {
                1
            };
            (
                PlainBallot {
                    id: p.ballot.id.clone(),
                    style: p.ballot.style.clone(),
                    contests,
                },
                state,
                weight,
            )
        })
        .collect();
    // an uncast ballot's record line is its printed one, and its sheet is kept for its opening
    let sheets = printed
        .iter()
        .zip(&plain)
        .filter(|(_, (_, state, _))| *state == State::Challenged)
        .map(|((p, _), _)| (p.ballot.id.clone(), p.sheet.clone()))
        .collect();
    let recorder = Recorder::new(group.clone(), &keys.k, (manifest, short));
    let ballots: Vec<Ballot<G>> = printed
        .into_par_iter()
        .zip(&plain)
        .map(|((p, xi_b), (marked, state, weight))| {
            if *state == State::Challenged {
                return Ok(p.ballot);
            }
            let mut rng = ChaCha20Rng::from_rng(OsRng).map_err(|e| Eg2Error::Io(e.to_string()))?;
            recorder.record(&p, &xi_b, (marked, *weight), &mut rng)
        })
        .collect::<Result<_, _>>()?;
    Ok(PreEncrypted {
        plain,
        ballots,
        sheets,
        printer: chain.close(),
    })
}

/// `tally.json`: U, the tally's values and, when any was decrypted, the cast ballots' contest data.
fn tally_json<G: Eg2Group>(
    group: &G,
    available: &[u32],
    tally: &[TallyValue<G>],
    contest_data: &[DecryptedData<G>],
) -> serde_json::Value {
    let mut v = serde_json::json!({
        "available": available,
        "values": tally.iter().map(|t| t.to_json(group)).collect::<Vec<_>>(),
    });
    if !contest_data.is_empty() {
        v["contest_data"] = contest_data.iter().map(|d| d.to_json(group)).collect();
    }
    v
}

/// Runs a 2.1 election on `group` and writes its record to `dir` (created; it must not hold a record).
pub fn run<G: Eg2Group>(
    group: G,
    dir: &Path,
    manifest_bytes: &[u8],
    options: &Options,
) -> Result<Summary, Eg2Error> {
    let o = &options.base;
    let (n, k) = (o.guardians, o.quorum);
    let available = o.decrypting()?;
    if record::is_record(dir) {
        return Err(Eg2Error::Io(format!(
            "{} holds a record already",
            dir.display()
        )));
    }
    let mut manifest_json: serde_json::Value =
        serde_json::from_slice(manifest_bytes).map_err(|e| Eg2Error::Manifest(e.to_string()))?;
    // Ω for pre-encrypted ballots (spec/66.10) and contest data (spec/66.11) written into the manifest when
    // asked for and absent: the manifest's bytes are H_B's input, so they are fixed before any ballot
    let mut manifest_bytes = manifest_bytes.to_vec();
    if let Some(m) = amended(&manifest_json, options)? {
        manifest_bytes =
            serde_json::to_vec_pretty(&m).map_err(|e| Eg2Error::Manifest(e.to_string()))?;
        manifest_json = m;
    }
    let manifest = read_manifest(&manifest_json).map_err(Eg2Error::Manifest)?;
    let short = ShortCode::of_manifest(&manifest_json).map_err(Eg2Error::Manifest)?;
    let manifest_bytes = &manifest_bytes[..];
    std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    let mut seconds = Vec::new();
    let mut clock = Instant::now();
    let mut lap = |name: &'static str, seconds: &mut Vec<(&'static str, f64)>| {
        seconds.push((name, clock.elapsed().as_secs_f64()));
        clock = Instant::now();
    };

    let hp = parameter_hash(&parameter_inputs(&group), n, k);
    let hb = base_hash(&hp, manifest_bytes);
    let (keys, shares) = ceremony(&group, (&hp, &hb), n, k)?;
    lap("key ceremony", &mut seconds);

    // the voters and the device
    let styles: Vec<&String> = manifest.styles.keys().collect();
    if styles.is_empty() {
        return Err(Eg2Error::Manifest(
            "the manifest has no ballot style".into(),
        ));
    }
    let mut voters = ChaCha20Rng::seed_from_u64(o.seed);
    let plain: Vec<(PlainBallot, State, u32)> = (0..o.ballots)
        .map(|i| {
            let style = styles[i % styles.len()].clone();
            let contests = choose(&manifest, &style, &mut voters);
            let state = if o.challenge_every > 0 && (i + 1) % o.challenge_every == 0 {
                State::Challenged
            } else {
                State::Cast
            };
            let weight = if options.weighted {
                1 + (i % 3) as u32
            } else {
                1
            };
            (
                PlainBallot {
                    id: format!("ballot-{}", i + 1),
                    style,
                    contests,
                },
                state,
                weight,
            )
        })
        .collect();
    let device = Device::new(
        group.clone(),
        (keys.k.clone(), &keys.k_hat),
        keys.he,
        &manifest,
        &o.device,
    );
    let mut ballots: Vec<Ballot<G>> = plain
        .par_iter()
        .map(|(p, state, weight)| {
            let mut rng = ChaCha20Rng::from_rng(OsRng).map_err(|e| Eg2Error::Io(e.to_string()))?;
            device.encrypt(p, (*state, *weight), &mut rng)
        })
        .collect::<Result<_, _>>()?;
    let mut chain = Chain::new(&keys.he, &o.device, options.simple_chaining);
    for b in &mut ballots {
        chain.seal(b);
    }
    let mut devices = vec![chain.close()];
    lap("encryption", &mut seconds);

    // the pre-encrypted ballots: printed, then recorded as cast or left uncast (spec/66.10)
    let mut plain = plain;
    let mut sheets: BTreeMap<String, Vec<PrintedContest>> = BTreeMap::new();
    if let Some(short) = short.filter(|_| options.pre_encrypted > 0) {
        let pre = pre_encrypted(
            (&group, &keys, &manifest, short),
            options,
            plain.len(),
            &mut voters,
        )?;
        plain.extend(pre.plain);
        ballots.extend(pre.ballots);
        sheets = pre.sheets;
        devices.push(pre.printer);
        lap("pre-encrypted ballots", &mut seconds);
    }

    // the weighted tally (eq. 80) and the counts the plaintexts hold
    let mut sums: BTreeMap<(u32, u32), Ciphertext<G>> = BTreeMap::new();
    let mut expected: BTreeMap<(u32, u32), u64> = BTreeMap::new();
    let mut max_count = 0u64;
    for mc in manifest.contests.values() {
        for o_idx in &mc.sequences {
            sums.insert((mc.sequence, *o_idx), Ciphertext::zero(&group));
            expected.insert((mc.sequence, *o_idx), 0);
        }
    }
    for ((p, state, weight), b) in plain.iter().zip(&ballots) {
        if *state != State::Cast {
            continue;
        }
        let w = group.scalar_from_u64(u64::from(*weight));
        for (_, mc, votes) in plain_votes(&manifest, p)? {
            let contest = b.contests.iter().find(|c| c.index == mc.sequence);
            for ((o_idx, v), s) in mc
                .sequences
                .iter()
                .zip(votes)
                .zip(contest.map(|c| &c.selections[..]).unwrap_or(&[]))
            {
                *expected.entry((mc.sequence, *o_idx)).or_default() +=
                    u64::from(v) * u64::from(*weight);
                // W = 1 needs no power (most elections weigh every voter 1)
                let ct = if *weight == 1 {
                    s.ct.clone()
                } else {
                    Ciphertext {
                        pad: group.pow(&s.ct.pad, &w),
                        data: group.pow(&s.ct.data, &w),
                    }
                };
                let sum = sums
                    .entry((mc.sequence, *o_idx))
                    .or_insert_with(|| Ciphertext::zero(&group));
                *sum = sum.add(&group, &ct);
            }
            max_count += u64::from(mc.option_limit) * u64::from(*weight);
        }
    }
    lap("tally", &mut seconds);

    // the decryption, with the commitment round: the tally, and the cast ballots' contest data where the
    // manifest says to decrypt it (spec/66.11)
    let mut targets: Vec<Target<'_, G>> = sums
        .iter()
        .map(|((c, opt), ct)| Target::Tally {
            contest: *c,
            option: *opt,
            ct,
        })
        .collect();
    let tallied = targets.len();
    let mut data_expected = Vec::new();
    for ((p, state, _), b) in plain.iter().zip(&ballots) {
        if *state != State::Cast || b.pre_encrypted {
            continue;
        }
        for (id, mc) in manifest.contests_for(&p.style).unwrap_or_default() {
            if !mc.decrypt_data {
                continue;
            }
            if let Some(t) = Target::data(b, mc.sequence) {
                targets.push(t);
                data_expected.push(plain_data(mc, p, id)?);
            }
        }
    }
    let present: Vec<&KeyShares<G>> = shares.iter().filter(|s| available.contains(&s.i)).collect();
    let mut rng = ChaCha20Rng::from_rng(OsRng).map_err(|e| Eg2Error::Io(e.to_string()))?;
    let mut decrypted = in_process(&group, (&keys, &manifest), &present, &targets, &mut rng)?;
    let data_decrypted = decrypted.split_off(tallied);
    let mut contest_data = Vec::with_capacity(data_decrypted.len());
    for ((t, d), want) in targets[tallied..]
        .iter()
        .zip(data_decrypted)
        .zip(data_expected)
    {
        let Target::Data {
            ballot, contest, ..
        } = t
        else {
            continue;
        };
        let got = data_plaintext(&group, t, &d.value);
        if got != want {
            return Err(Eg2Error::Decryption(format!(
                "{} does not decrypt to what the voter's ballot holds",
                t.name()
            )));
        }
        contest_data.push(DecryptedData {
            ballot: ballot.id.clone(),
            contest: *contest,
            beta: d.value,
            proof: d.proof,
            d: got.unwrap_or_default(),
        });
    }
    let dlog = Dlog::new(&group, &keys.k, max_count);
    let mut tally = Vec::with_capacity(targets.len());
    let mut counts = BTreeMap::new();
    for (t, d) in targets.iter().zip(decrypted) {
        let Target::Tally {
            contest,
            option,
            ct,
        } = t
        else {
            continue;
        };
        let count = dlog.find(&group, &d.value).ok_or_else(|| {
            Eg2Error::Decryption(format!(
                "contest {contest} option {option}: no count up to {max_count}",
            ))
        })?;
        let want = expected.get(&(*contest, *option)).copied().unwrap_or(0);
        if count != want {
            return Err(Eg2Error::Decryption(format!(
                "contest {contest} option {option} decrypts to {count}, the ballots hold {want}",
            )));
        }
        // "contest/option" by the manifest's ids, as the verifier reports them
        let named = manifest
            .contests
            .iter()
            .find(|(_, mc)| mc.sequence == *contest)
            .and_then(|(id, mc)| {
                let at = mc.sequences.iter().position(|o| o == option)?;
                Some(format!("{id}/{}", mc.options[at]))
            });
        counts.insert(
            named.unwrap_or_else(|| format!("{contest}/{option}")),
            count,
        );
        tally.push(TallyValue {
            contest: *contest,
            option: *option,
            ct: (*ct).clone(),
            t: count,
            proof: d.proof,
        });
    }
    lap("decryption", &mut seconds);

    // the challenged ballots, opened by their nonces
    let mut opened: Vec<serde_json::Value> = Vec::new();
    let recorder = short.map(|s| Recorder::new(group.clone(), &keys.k, (&manifest, s)));
    for ((p, state, _), b) in plain.iter().zip(&ballots) {
        if *state != State::Challenged {
            continue;
        }
        let parts = present
            .iter()
            .map(|s| Ok((s.i, nonce_share(&group, s, b, &mut rng)?)))
            .collect::<Result<Vec<_>, Eg2Error>>()?;
        if b.pre_encrypted {
            let (Some(recorder), Some(sheet)) = (&recorder, sheets.get(&b.id)) else {
                return Err(Eg2Error::Ballot {
                    ballot: b.id.clone(),
                    reason: "an uncast pre-encrypted ballot with no paper".into(),
                });
            };
            opened.push(
                recorder
                    .open((b, sheet), &keys.guardians, &parts)?
                    .to_json(&group),
            );
            continue;
        }
        let open = open_ballot(&group, &keys, &manifest, b, &parts)?;
        for (id, mc, votes) in plain_votes(&manifest, p)? {
            let contest = open.contests.iter().find(|c| c.index == mc.sequence);
            let got: Vec<u32> = contest
                .map(|c| c.selections.iter().map(|(_, s, _)| *s).collect())
                .unwrap_or_default();
            let data = contest.and_then(|c| c.data.as_ref()).map(|d| d.d.clone());
            if got != votes || data != plain_data(mc, p, id)? {
                return Err(Eg2Error::Ballot {
                    ballot: p.id.clone(),
                    reason: format!(
                        "contest {}: opened as {got:?}, cast as {votes:?}, or its data differs",
                        mc.sequence
                    ),
                });
            }
        }
        opened.push(open.to_json(&group));
    }
    lap("challenged ballots", &mut seconds);

    write_json(
        &dir.join(record::PARAMETERS),
        &record::parameters_json(&group, n, k),
    )?;
    std::fs::write(dir.join(record::MANIFEST), manifest_bytes).map_err(|e| io(dir, e))?;
    write_json(&dir.join(record::GUARDIANS), &keys.to_json(&group))?;
    write_json(
        &dir.join(record::DEVICES),
        &serde_json::Value::Array(devices.iter().map(record::Device::to_json).collect()),
    )?;
    write_lines(
        &dir.join(record::BALLOTS),
        ballots.iter().map(|b| b.to_json(&group)),
    )?;
    write_json(
        &dir.join(record::TALLY),
        &tally_json(&group, &available, &tally, &contest_data),
    )?;
    write_lines(&dir.join(record::CHALLENGED), opened.iter().cloned())?;
    lap("record", &mut seconds);
    let challenged = opened.len();
    Ok(Summary {
        cast: ballots.len() - challenged,
        challenged,
        counts,
        seconds,
    })
}
