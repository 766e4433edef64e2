//! A whole 2.x election in one process (spec/65.8), written as an egk-ec record: key ceremony, ballots
//! encrypted on every core and written as they come, the encrypted tally, its decryption by the available
//! guardians, and the challenged ballots' decryptions. Every count decrypted is compared with the plaintext
//! ballots before the record is done.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use rand_chacha::ChaCha20Rng;
use rand_core::{OsRng, RngCore, SeedableRng};
use rayon::prelude::*;
use votum_elgamal::Ciphertext;

use crate::ceremony::{ceremony, joint_key, Guardian, PublicGuardian};
use crate::contest_data::{self, Plain};
use crate::decrypt::{decrypt_with, Keys, Target};
use crate::encrypt::{counted, Device, PlainBallot, PlainContest, State};
use crate::group::Eg2Group;
use crate::hashes::{election_base_hash, extended_base_hash, manifest_hash, parameter_hash};
use crate::manifest::{read_manifest, Manifest};
use crate::record::{self, DecryptedContest, DecryptedData, DecryptedOption};
use crate::{ContestData, Eg2Error};

/// The embedded manifest `votum election --spec 2.1` uses when none is given: three contests (one of three,
/// two of four, and a score contest of up to 2 points per option and 4 in all) on two styles.
pub const DEFAULT_MANIFEST: &str = include_str!("default_manifest.json");

/// How to run the election.
#[derive(Clone, Debug)]
pub struct Options {
    pub guardians: u32,
    pub quorum: u32,
    /// the x-coordinates of the guardians that decrypt (all when empty)
    pub available: Vec<u32>,
    pub ballots: usize,
    /// every `challenge_every`-th ballot is challenged (none when 0)
    pub challenge_every: usize,
    /// seed of the voters' choices (not of any nonce)
    pub seed: u64,
    pub device: String,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            guardians: 3,
            quorum: 2,
            available: Vec::new(),
            ballots: 100,
            challenge_every: 10,
            seed: 1,
            device: "votum-device".into(),
        }
    }
}

/// What the run did: the counts ("contest/option" → votes), ballots by state, and each step's seconds.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    pub cast: usize,
    pub challenged: usize,
    pub counts: BTreeMap<String, u64>,
    pub seconds: Vec<(&'static str, f64)>,
}

fn io(path: &Path, e: std::io::Error) -> Eg2Error {
    Eg2Error::Io(format!("{}: {e}", path.display()))
}

fn write(path: &Path, v: &serde_json::Value) -> Result<(), Eg2Error> {
    let text = serde_json::to_vec_pretty(v).map_err(|e| Eg2Error::Io(e.to_string()))?;
    std::fs::write(path, text).map_err(|e| io(path, e))
}

/// A voter's random choices on `style`: within each contest's limits, sometimes a null vote.
fn choose(
    manifest: &Manifest,
    style: &str,
    rng: &mut ChaCha20Rng,
) -> BTreeMap<String, PlainContest> {
    let mut out = BTreeMap::new();
    for (id, mc) in manifest.contests_for(style).unwrap_or_default() {
        let mut votes = vec![0u32; mc.options.len()];
        let mut left = mc.limit;
        if !rng.next_u32().is_multiple_of(10) {
            while left > 0 && !votes.is_empty() {
                let i = (rng.next_u32() as usize) % votes.len();
                if votes[i] < mc.option_limit {
                    votes[i] += 1;
                }
                left -= 1;
            }
        }
        // a voter with a vote to spare sometimes writes a name in (kept in the contest data, counted nowhere)
        let used: u32 = votes.iter().sum();
        let write_ins = if used < mc.limit && rng.next_u32().is_multiple_of(4) {
            vec![format!("Write-in {}", rng.next_u32() % 100)]
        } else {
            Vec::new()
        };
        out.insert(id.to_owned(), PlainContest { votes, write_ins });
    }
    out
}

/// t with K^t = T, for t ≤ `max` (a table of K^0 … K^max).
struct Dlog {
    table: std::collections::HashMap<Vec<u8>, u64>,
}

impl Dlog {
    fn new<G: Eg2Group>(group: &G, k: &G::Element, max: u64) -> Self {
        let mut table = std::collections::HashMap::with_capacity(max as usize + 1);
        let mut acc = group.identity();
        for t in 0..=max {
            table.insert(group.hash_bytes(&acc), t);
            acc = group.op(&acc, k);
        }
        Self { table }
    }

    fn find<G: Eg2Group>(&self, group: &G, t: &G::Element) -> Option<u64> {
        self.table.get(&group.hash_bytes(t)).copied()
    }
}

/// Runs a whole election on `group` and writes its record to `dir` (which must not hold one already).
pub fn run<G: Eg2Group>(
    group: G,
    dir: &Path,
    manifest_bytes: &[u8],
    options: &Options,
) -> Result<Summary, Eg2Error> {
    let mut summary = Summary::default();
    let mut clock = Instant::now();
    let mut lap = |summary: &mut Summary, step: &'static str| {
        summary.seconds.push((step, clock.elapsed().as_secs_f64()));
        clock = Instant::now();
    };
    let (n, k) = (options.guardians, options.quorum);
    let manifest_doc: serde_json::Value = serde_json::from_slice(manifest_bytes)
        .map_err(|e| Eg2Error::Manifest(format!("not JSON: {e}")))?;
    let manifest = read_manifest(&manifest_doc).map_err(Eg2Error::Manifest)?;
    if u32::try_from(manifest_bytes.len()).is_err() {
        return Err(Eg2Error::Manifest("longer than 4 GiB".into()));
    }
    if dir.join("constants.json").exists() {
        return Err(Eg2Error::Io(format!(
            "{} already holds a record",
            dir.display()
        )));
    }
    let available: Vec<u32> = if options.available.is_empty() {
        (1..=n).collect()
    } else {
        options.available.clone()
    };
    if (available.len() as u64) < u64::from(k) || available.iter().any(|x| *x == 0 || *x > n) {
        return Err(Eg2Error::Parameters(format!(
            "guardians {available:?} cannot decrypt: the quorum is {k} of 1…{n}"
        )));
    }
    let mut rng = ChaCha20Rng::from_rng(OsRng).map_err(|e| Eg2Error::Io(e.to_string()))?;

    // parameters and the key ceremony
    let hp = parameter_hash(group.protocol_version(), &record::parameter_inputs(&group));
    let hm = manifest_hash(&hp, manifest_bytes);
    let hb = election_base_hash(&hp, &hm, n, k);
    let guardians: Vec<Guardian<G>> = ceremony(&group, &hp, n, k, &mut rng)?;
    let publics: Vec<PublicGuardian<G>> = guardians.iter().map(Guardian::public).collect();
    let key = joint_key(&group, &publics);
    let he = extended_base_hash(&group, &hb, &key);
    std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    write(&dir.join("constants.json"), &record::constants(&group))?;
    write(
        &dir.join("election_config.json"),
        &record::config(n, k, &hp, &hm, &hb, options.device.as_bytes()),
    )?;
    std::fs::write(dir.join("manifest.json"), manifest_bytes).map_err(|e| io(dir, e))?;
    write(
        &dir.join("election_initialized.json"),
        &record::initialized(&group, &key, &he, &publics),
    )?;
    lap(&mut summary, "key ceremony");

    // ballots, 1,000 at a time, each written as it comes; cast ones summed
    let device = Device::new(group.clone(), key.clone(), he, &manifest, &options.device);
    let ballot_dir = dir.join("encrypted_ballots").join(&options.device);
    std::fs::create_dir_all(&ballot_dir).map_err(|e| io(&ballot_dir, e))?;
    let styles: Vec<&String> = manifest.styles.keys().collect();
    if styles.is_empty() {
        return Err(Eg2Error::Manifest("no ballot style".into()));
    }
    let mut voters = ChaCha20Rng::seed_from_u64(options.seed);
    let timestamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let mut sums: BTreeMap<(String, String), Ciphertext<G>> = BTreeMap::new();
    let mut expected: BTreeMap<String, u64> = BTreeMap::new();
    let mut ballots_per_contest: BTreeMap<String, u64> = BTreeMap::new();
    let mut cast_ids = Vec::new();
    let mut challenged = Vec::new();
    let mut challenged_ids: Vec<String> = Vec::new();
    let mut next = 0usize;
    while next < options.ballots {
        let end = (next + 1000).min(options.ballots);
        let plain: Vec<(PlainBallot, State)> = (next..end)
            .map(|i| {
                let style = styles[i % styles.len()].clone();
                let contests = choose(&manifest, &style, &mut voters);
                let state = if options.challenge_every > 0 && (i + 1) % options.challenge_every == 0
                {
                    State::Challenged
                } else {
                    State::Cast
                };
                (
                    PlainBallot {
                        id: format!("id-{}", i + 1),
                        style,
                        contests,
                    },
                    state,
                )
            })
            .collect();
        let encrypted = device.encrypt_many(&plain, timestamp)?;
        for ((p, state), e) in plain.iter().zip(&encrypted) {
            write(
                &ballot_dir.join(format!("eballot-{}.json", e.id)),
                &record::ballot(&group, e),
            )?;
            if *state == State::Challenged {
                challenged.push(
                    e.contests
                        .iter()
                        .map(|c| {
                            (
                                c.id.clone(),
                                c.selections
                                    .iter()
                                    .map(|s| s.ct.clone())
                                    .collect::<Vec<_>>(),
                                c.data.clone(),
                                c.num_bytes,
                            )
                        })
                        .collect::<Vec<_>>(),
                );
                challenged_ids.push(e.id.clone());
                continue;
            }
            cast_ids.push(e.id.clone());
            for c in &e.contests {
                *ballots_per_contest.entry(c.id.clone()).or_default() += 1;
                // what the device counts for this contest, by the device's own rule
                let none = PlainContest::default();
                let mc = &manifest.contests[&c.id];
                let (votes, _) =
                    counted(mc, p.contests.get(&c.id).unwrap_or(&none)).map_err(|reason| {
                        Eg2Error::Ballot {
                            ballot: e.id.clone(),
                            reason,
                        }
                    })?;
                for (i, s) in c.selections.iter().enumerate() {
                    let acc = sums
                        .entry((c.id.clone(), s.id.clone()))
                        .or_insert_with(|| Ciphertext::zero(&group));
                    *acc = acc.add(&group, &s.ct);
                    *expected.entry(format!("{}/{}", c.id, s.id)).or_default() +=
                        u64::from(votes[i]);
                }
            }
        }
        next = end;
    }
    summary.cast = cast_ids.len();
    lap(&mut summary, "encryption");

    // the encrypted tally: every option of the manifest, (1, 1) where no cast ballot has it
    let mut tally_contests = Vec::new();
    let mut contests_sorted: Vec<(&String, &crate::ManifestContest)> =
        manifest.contests.iter().collect();
    contests_sorted.sort_by_key(|(_, c)| c.sequence);
    for (cid, mc) in &contests_sorted {
        let options_ct = mc
            .options
            .iter()
            .zip(&mc.sequences)
            .map(|(o, s)| {
                let ct = sums
                    .get(&((*cid).clone(), o.clone()))
                    .cloned()
                    .unwrap_or_else(|| Ciphertext::zero(&group));
                (o.clone(), *s, ct)
            })
            .collect::<Vec<_>>();
        tally_contests.push((
            (*cid).clone(),
            mc.sequence,
            options_ct,
            ballots_per_contest.get(*cid).copied().unwrap_or(0),
        ));
    }
    write(
        &dir.join("encrypted_tally.json"),
        &record::encrypted_tally(&group, "votum-tally", &he, &tally_contests, &cast_ids),
    )?;
    lap(&mut summary, "tally");

    // decryption by the available guardians
    let keys = Keys::new(&group, &he, &key, &publics);
    let present: Vec<&Guardian<G>> = guardians
        .iter()
        .filter(|g| available.contains(&g.x))
        .collect();
    let max_r = manifest
        .contests
        .values()
        .map(|c| u64::from(c.option_limit))
        .max()
        .unwrap_or(1);
    let dlog = Dlog::new(
        &group,
        &key,
        (cast_ids.len() as u64).saturating_mul(max_r).max(max_r),
    );
    let targets: Vec<Target<'_, G>> = tally_contests
        .iter()
        .flat_map(|(_, _, opts, _)| opts.iter().map(|(_, _, ct)| Target::Vote(ct)))
        .collect();
    let proofs = decrypt_with(&keys, n, &present, &targets, &mut rng)?;
    let mut proofs = proofs.into_iter();
    let mut decrypted = Vec::new();
    for (cid, seq, opts, count) in &tally_contests {
        let mut options_out = Vec::new();
        for (oid, _, ct) in opts {
            let (m, proof) = proofs
                .next()
                .ok_or_else(|| Eg2Error::Decryption("a proof is missing".into()))?;
            let t = group.div(&ct.data, &m);
            let value = dlog.find(&group, &t).ok_or_else(|| {
                Eg2Error::Decryption(format!("{cid}/{oid} does not decrypt to a count"))
            })?;
            let label = format!("{cid}/{oid}");
            if expected.get(&label).copied().unwrap_or(0) != value {
                return Err(Eg2Error::Decryption(format!(
                    "{label} decrypts to {value}, the ballots hold {}",
                    expected.get(&label).copied().unwrap_or(0)
                )));
            }
            summary.counts.insert(label, value);
            options_out.push(DecryptedOption {
                id: oid.clone(),
                count: value,
                t,
                ct: ct.clone(),
                proof,
            });
        }
        decrypted.push(DecryptedContest {
            id: cid.clone(),
            sequence: *seq,
            options: options_out,
            ballot_count: *count,
            data: None,
        });
    }
    write(
        &dir.join("tally.json"),
        &record::decrypted(&group, "votum-tally", &he, &decrypted),
    )?;
    lap(&mut summary, "tally decryption");

    // the challenged ballots, each decrypted by the same guardians
    let challenged_dir = dir.join("challenged_ballots");
    std::fs::create_dir_all(&challenged_dir).map_err(|e| io(&challenged_dir, e))?;
    let ids = challenged_ids;
    let board = Board {
        keys: &keys,
        n,
        present: &present,
        manifest: &manifest,
        dlog: &dlog,
    };
    // one ballot per rayon task, each with its own generator seeded from the operating system
    let opened: Vec<Vec<DecryptedContest<G>>> = ids
        .par_iter()
        .zip(&challenged)
        .map(|(id, contests)| {
            let mut rng = ChaCha20Rng::from_rng(OsRng).map_err(|e| Eg2Error::Io(e.to_string()))?;
            board.open(id, contests, &mut rng)
        })
        .collect::<Result<_, _>>()?;
    for (id, out) in ids.iter().zip(&opened) {
        write(
            &challenged_dir.join(format!("dballot-{id}.json")),
            &record::decrypted(&group, id, &he, out),
        )?;
    }
    summary.challenged = ids.len();
    lap(&mut summary, "challenged ballots");
    Ok(summary)
}

/// A challenged ballot as recorded: each contest's id, its ciphertexts in the manifest's order, its contest
/// data and the data's length.
type Challenged<G> = (String, Vec<Ciphertext<G>>, ContestData<G>, usize);

/// What decrypting a challenged ballot needs: the public values, the guardians present, the manifest and
/// the table of K's powers.
struct Board<'a, G: Eg2Group> {
    keys: &'a Keys<'a, G>,
    n: u32,
    present: &'a [&'a Guardian<G>],
    manifest: &'a Manifest,
    dlog: &'a Dlog,
}

impl<G: Eg2Group> Board<'_, G> {
    /// Decrypts one challenged ballot, its votes and its contest data, each with its proof.
    fn open(
        &self,
        id: &str,
        contests: &[Challenged<G>],
        rng: &mut ChaCha20Rng,
    ) -> Result<Vec<DecryptedContest<G>>, Eg2Error> {
        let group = self.keys.group;
        let mut targets = Vec::new();
        for (_, cts, data, _) in contests {
            targets.extend(cts.iter().map(Target::Vote));
            targets.push(Target::Data(data));
        }
        let mut proofs = decrypt_with(self.keys, self.n, self.present, &targets, rng)?.into_iter();
        let mut out = Vec::new();
        for (cid, cts, data, num_bytes) in contests {
            let mc = &self.manifest.contests[cid];
            let mut options_out = Vec::new();
            for (oid, ct) in mc.options.iter().zip(cts) {
                let (m, proof) = proofs
                    .next()
                    .ok_or_else(|| Eg2Error::Decryption("a proof is missing".into()))?;
                let t = group.div(&ct.data, &m);
                let value = self
                    .dlog
                    .find(group, &t)
                    .filter(|v| *v <= u64::from(mc.option_limit))
                    .ok_or_else(|| {
                        Eg2Error::Decryption(format!("ballot {id}: {cid}/{oid} is not a vote"))
                    })?;
                options_out.push(DecryptedOption {
                    id: oid.clone(),
                    count: value,
                    t,
                    ct: ct.clone(),
                    proof,
                });
            }
            let (beta, proof) = proofs
                .next()
                .ok_or_else(|| Eg2Error::Decryption("a proof is missing".into()))?;
            let message = contest_data::decrypt(
                group,
                self.keys.he,
                self.keys.k,
                data,
                &beta,
                cid,
                *num_bytes,
            )
            .ok_or_else(|| {
                Eg2Error::Decryption(format!("ballot {id}: {cid}'s contest data does not open"))
            })?;
            let plain = Plain::decode(&message).ok_or_else(|| {
                Eg2Error::Decryption(format!("ballot {id}: {cid}'s contest data does not read"))
            })?;
            out.push(DecryptedContest {
                id: cid.clone(),
                sequence: mc.sequence,
                options: options_out,
                ballot_count: 1,
                data: Some(DecryptedData {
                    plain,
                    data: data.clone(),
                    num_bytes: *num_bytes,
                    beta,
                    proof,
                }),
            });
        }
        Ok(out)
    }
}
