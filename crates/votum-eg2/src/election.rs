//! A whole 2.x election in one process (spec/65.8), written as an egk-ec record: key ceremony, ballots
//! encrypted on every core and written as they come, the encrypted tally, its decryption by the available
//! guardians, and the challenged ballots' decryptions. Every count decrypted is compared with the plaintext
//! ballots before the record is done.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use rand_chacha::ChaCha20Rng;
use rand_core::{OsRng, RngCore, SeedableRng};
use votum_elgamal::Ciphertext;

use crate::ceremony::{ceremony, check_public, joint_key, Guardian, PublicGuardian};
use crate::contest_data::{self, Plain};
use crate::decrypt::{decrypt_with, Decrypted, Keys, Target};
use crate::encrypt::{counted, Device, PlainBallot, PlainContest, State};
use crate::group::Eg2Group;
use crate::hashes::{election_base_hash, extended_base_hash, manifest_hash, parameter_hash};
use crate::manifest::{read_manifest, Manifest};
use crate::record::{self, DecryptedContest, DecryptedData, DecryptedOption, TallyContest};
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

impl Options {
    /// The x-coordinates of the guardians that decrypt (all when `available` is empty): at least the quorum,
    /// each in 1…n once, with a quorum of 1…n.
    pub fn decrypting(&self) -> Result<Vec<u32>, Eg2Error> {
        let (n, k) = (self.guardians, self.quorum);
        let available: Vec<u32> = if self.available.is_empty() {
            (1..=n).collect()
        } else {
            self.available.clone()
        };
        let distinct: std::collections::BTreeSet<u32> = available.iter().copied().collect();
        if k == 0
            || k > n
            || (available.len() as u64) < u64::from(k)
            || distinct.len() != available.len()
            || available.iter().any(|x| *x == 0 || *x > n)
        {
            return Err(Eg2Error::Parameters(format!(
                "guardians {available:?} cannot decrypt: the quorum is {k} of 1…{n}"
            )));
        }
        Ok(available)
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
pub(crate) fn choose(
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

/// t with K^t = T, for t ≤ `max`, by baby steps and giant steps: a table of K^0 … K^(m−1) with
/// m = ⌈√(max + 1)⌉, then T·K^(−m·i) looked up for i = 0, 1, … A table of every K^t up to `max` grew with the
/// ballots' weights (a count of 10^8 took 10^8 entries; it takes 10^4 here), at the cost of up to m lookups
/// per value instead of one.
pub(crate) struct Dlog<G: Eg2Group> {
    table: std::collections::HashMap<Vec<u8>, u64>,
    m: u64,
    max: u64,
    /// K^(−m)
    giant: G::Element,
}

impl<G: Eg2Group> Dlog<G> {
    pub(crate) fn new(group: &G, k: &G::Element, max: u64) -> Self {
        let n = max.saturating_add(1);
        let r = n.isqrt();
        let m = if r * r < n { r + 1 } else { r };
        let mut table = std::collections::HashMap::with_capacity(m as usize);
        let mut acc = group.identity();
        for j in 0..m {
            table.insert(group.hash_bytes(&acc), j);
            acc = group.op(&acc, k);
        }
        // acc = K^m
        Self {
            table,
            m,
            max,
            giant: group.inverse(&acc),
        }
    }

    pub(crate) fn find(&self, group: &G, t: &G::Element) -> Option<u64> {
        let mut y = t.clone();
        for i in 0..=self.max / self.m {
            if let Some(j) = self.table.get(&group.hash_bytes(&y)) {
                let found = i * self.m + j;
                return (found <= self.max).then_some(found);
            }
            y = group.op(&y, &self.giant);
        }
        None
    }
}

/// Runs a whole election on `group` in one process and writes its record to `dir` (which must not hold one
/// already): the guardians are made here, and the coordinator's steps are [`Coordinator`]'s.
pub fn run<G: Eg2Group>(
    group: G,
    dir: &Path,
    manifest_bytes: &[u8],
    options: &Options,
) -> Result<Summary, Eg2Error> {
    let (n, k) = (options.guardians, options.quorum);
    let available = options.decrypting()?;
    let mut coordinator =
        Coordinator::new(group.clone(), dir, manifest_bytes, n, k, &options.device)?;
    let mut rng = ChaCha20Rng::from_rng(OsRng).map_err(|e| Eg2Error::Io(e.to_string()))?;
    let guardians: Vec<Guardian<G>> = ceremony(&group, &coordinator.hp, n, k, &mut rng)?;
    coordinator.open(guardians.iter().map(Guardian::public).collect())?;
    coordinator.cast(options.ballots, options.challenge_every, options.seed)?;
    let present: Vec<&Guardian<G>> = guardians
        .iter()
        .filter(|g| available.contains(&g.x))
        .collect();
    let decrypted = {
        let keys = coordinator.keys()?;
        let targets = coordinator.targets()?;
        decrypt_with(&keys, n, &present, &targets, &mut rng)?
    };
    coordinator.finish(decrypted)
}

/// What the coordinator holds once the guardians' public records are in: the records, K and H_E.
struct Keyed<G: Eg2Group> {
    publics: Vec<PublicGuardian<G>>,
    key: G::Element,
    he: [u8; 32],
}

/// What the ballots left: the encrypted tally's contests, the cast ballots' ids, the counts the plaintexts
/// hold, and the challenged ballots sorted by id.
struct Counted<G: Eg2Group> {
    tally: Vec<TallyContest<G>>,
    cast_ids: Vec<String>,
    expected: BTreeMap<String, u64>,
    challenged: Vec<(String, Vec<Challenged<G>>)>,
}

/// The coordinator of a 2.x election (spec/65.8–65.9): it holds no secret. It writes the record's first
/// documents from the guardians' public records ([`Coordinator::open`]), encrypts the simulated voters'
/// ballots and sums the cast ones ([`Coordinator::cast`]), lists what the guardians decrypt
/// ([`Coordinator::targets`]: every option of the encrypted tally, then each challenged ballot's options and
/// contest data, by ballot id), and writes the decryptions it is given ([`Coordinator::finish`]), each count
/// compared with the plaintexts first.
pub struct Coordinator<G: Eg2Group> {
    group: G,
    dir: PathBuf,
    manifest_bytes: Vec<u8>,
    manifest: Manifest,
    n: u32,
    k: u32,
    device: String,
    /// H_P, H_M, H_B
    pub hp: [u8; 32],
    hm: [u8; 32],
    hb: [u8; 32],
    keyed: Option<Keyed<G>>,
    counted: Option<Counted<G>>,
    summary: Summary,
    clock: Instant,
}

impl<G: Eg2Group> Coordinator<G> {
    /// A coordinator for `n` guardians with quorum `k` on `manifest_bytes`, writing to `dir`.
    pub fn new(
        group: G,
        dir: &Path,
        manifest_bytes: &[u8],
        n: u32,
        k: u32,
        device: &str,
    ) -> Result<Self, Eg2Error> {
        let manifest_doc: serde_json::Value = serde_json::from_slice(manifest_bytes)
            .map_err(|e| Eg2Error::Manifest(format!("not JSON: {e}")))?;
        let manifest = read_manifest(&manifest_doc).map_err(Eg2Error::Manifest)?;
        if u32::try_from(manifest_bytes.len()).is_err() {
            return Err(Eg2Error::Manifest("longer than 4 GiB".into()));
        }
        if manifest.styles.is_empty() {
            return Err(Eg2Error::Manifest("no ballot style".into()));
        }
        if k == 0 || k > n {
            return Err(Eg2Error::Parameters(format!("quorum {k} of {n} guardians")));
        }
        if dir.join("constants.json").exists() {
            return Err(Eg2Error::Io(format!(
                "{} already holds a record",
                dir.display()
            )));
        }
        let (hp, hm, hb) = base_hashes(&group, manifest_bytes, n, k);
        Ok(Self {
            group,
            dir: dir.to_owned(),
            manifest_bytes: manifest_bytes.to_owned(),
            manifest,
            n,
            k,
            device: device.to_owned(),
            hp,
            hm,
            hb,
            keyed: None,
            counted: None,
            summary: Summary::default(),
            clock: Instant::now(),
        })
    }

    pub fn group(&self) -> &G {
        &self.group
    }

    fn lap(&mut self, step: &'static str) {
        self.summary
            .seconds
            .push((step, self.clock.elapsed().as_secs_f64()));
        self.clock = Instant::now();
    }

    fn write(&self, name: &str, v: &serde_json::Value) -> Result<(), Eg2Error> {
        write(&self.dir.join(name), v)
    }

    /// Takes the guardians' public records (each checked: its proofs, x-coordinates 1…n once each, ids
    /// distinct), computes K and H_E, and writes constants, config, manifest and the initialized election.
    pub fn open(
        &mut self,
        publics: Vec<PublicGuardian<G>>,
    ) -> Result<(G::Element, [u8; 32]), Eg2Error> {
        if self.keyed.is_some() {
            return Err(Eg2Error::Parameters("the election is open already".into()));
        }
        check_roster(&self.group, &self.hp, &publics, self.n, self.k)?;
        let key = joint_key(&self.group, &publics);
        let he = extended_base_hash(&self.group, &self.hb, &key);
        std::fs::create_dir_all(&self.dir).map_err(|e| io(&self.dir, e))?;
        self.write("constants.json", &record::constants(&self.group))?;
        self.write(
            "election_config.json",
            &record::config(
                self.n,
                self.k,
                &self.hp,
                &self.hm,
                &self.hb,
                self.device.as_bytes(),
            ),
        )?;
        std::fs::write(self.dir.join("manifest.json"), &self.manifest_bytes)
            .map_err(|e| io(&self.dir, e))?;
        self.write(
            "election_initialized.json",
            &record::initialized(&self.group, &key, &he, &publics),
        )?;
        self.keyed = Some(Keyed {
            publics,
            key: key.clone(),
            he,
        });
        self.lap("key ceremony");
        Ok((key, he))
    }

    fn keyed(&self) -> Result<&Keyed<G>, Eg2Error> {
        self.keyed
            .as_ref()
            .ok_or_else(|| Eg2Error::Parameters("the guardians' records are not in yet".into()))
    }

    /// Encrypts `ballots` simulated voters' ballots (every `challenge_every`-th challenged; the choices
    /// drawn from `seed`), 1,000 at a time, each written as it comes; then sums the cast ones into the
    /// encrypted tally and writes it.
    pub fn cast(
        &mut self,
        ballots: usize,
        challenge_every: usize,
        seed: u64,
    ) -> Result<(), Eg2Error> {
        if self.counted.is_some() {
            return Err(Eg2Error::Parameters("the ballots are cast already".into()));
        }
        let group = self.group.clone();
        let manifest = &self.manifest;
        let keyed = self.keyed()?;
        let he = keyed.he;
        let device = Device::new(
            group.clone(),
            keyed.key.clone(),
            keyed.he,
            manifest,
            &self.device,
        );
        let ballot_dir = self.dir.join("encrypted_ballots").join(&self.device);
        std::fs::create_dir_all(&ballot_dir).map_err(|e| io(&ballot_dir, e))?;
        let styles: Vec<&String> = manifest.styles.keys().collect();
        let mut voters = ChaCha20Rng::seed_from_u64(seed);
        let timestamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let mut sums: BTreeMap<(String, String), Ciphertext<G>> = BTreeMap::new();
        let mut expected: BTreeMap<String, u64> = BTreeMap::new();
        let mut ballots_per_contest: BTreeMap<String, u64> = BTreeMap::new();
        let mut cast_ids = Vec::new();
        let mut challenged: Vec<(String, Vec<Challenged<G>>)> = Vec::new();
        let mut next = 0usize;
        while next < ballots {
            let end = (next + 1000).min(ballots);
            let plain: Vec<(PlainBallot, State)> = (next..end)
                .map(|i| {
                    let style = styles[i % styles.len()].clone();
                    let contests = choose(manifest, &style, &mut voters);
                    let state = if challenge_every > 0 && (i + 1) % challenge_every == 0 {
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
                    let contests = e
                        .contests
                        .iter()
                        .map(|c| {
                            (
                                c.id.clone(),
                                c.selections.iter().map(|s| s.ct.clone()).collect(),
                                c.data.clone(),
                                c.num_bytes,
                            )
                        })
                        .collect();
                    challenged.push((e.id.clone(), contests));
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
        self.summary.cast = cast_ids.len();
        self.lap("encryption");

        // the encrypted tally: every option of the manifest, (1, 1) where no cast ballot has it
        let mut tally_contests = Vec::new();
        let mut contests_sorted: Vec<(&String, &crate::ManifestContest)> =
            self.manifest.contests.iter().collect();
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
        self.write(
            "encrypted_tally.json",
            &record::encrypted_tally(&group, TALLY_ID, &he, &tally_contests, &cast_ids),
        )?;
        // the order every guardian reads them in (spec/65.9)
        challenged.sort_by(|a, b| a.0.cmp(&b.0));
        self.counted = Some(Counted {
            tally: tally_contests,
            cast_ids,
            expected,
            challenged,
        });
        self.lap("tally");
        Ok(())
    }

    fn counted(&self) -> Result<&Counted<G>, Eg2Error> {
        self.counted
            .as_ref()
            .ok_or_else(|| Eg2Error::Parameters("no ballots are cast yet".into()))
    }

    /// The public values the decryption needs (K, H_E, the guardians' records).
    pub fn keys(&self) -> Result<Keys<'_, G>, Eg2Error> {
        let keyed = self.keyed()?;
        Ok(Keys::new(
            &self.group,
            &keyed.he,
            &keyed.key,
            &keyed.publics,
        ))
    }

    /// What the guardians decrypt, in the order of spec/65.9: every option of the encrypted tally; then, for
    /// each challenged ballot by id, each contest's options and its contest data.
    pub fn targets(&self) -> Result<Vec<Target<'_, G>>, Eg2Error> {
        let counted = self.counted()?;
        let mut targets: Vec<Target<'_, G>> = counted
            .tally
            .iter()
            .flat_map(|(_, _, opts, _)| opts.iter().map(|(_, _, ct)| Target::Vote(ct)))
            .collect();
        for (_, contests) in &counted.challenged {
            for (_, cts, data, _) in contests {
                targets.extend(cts.iter().map(Target::Vote));
                targets.push(Target::Data(data));
            }
        }
        Ok(targets)
    }

    /// Writes the decrypted tally and the challenged ballots from `decrypted` (one per target, in the
    /// order of [`Coordinator::targets`]); each count must be what the plaintext ballots hold.
    pub fn finish(&mut self, decrypted: Vec<Decrypted<G>>) -> Result<Summary, Eg2Error> {
        self.lap("decryption");
        let group = &self.group;
        let keyed = self.keyed()?;
        let counted = self.counted()?;
        let max_r = self
            .manifest
            .contests
            .values()
            .map(|c| u64::from(c.option_limit))
            .max()
            .unwrap_or(1);
        let dlog = Dlog::new(
            group,
            &keyed.key,
            (counted.cast_ids.len() as u64)
                .saturating_mul(max_r)
                .max(max_r),
        );
        let mut proofs = decrypted.into_iter();
        let mut next = || {
            proofs
                .next()
                .ok_or_else(|| Eg2Error::Decryption("a decryption is missing".into()))
        };
        let mut counts = BTreeMap::new();
        let mut tally_out = Vec::new();
        for (cid, seq, opts, count) in &counted.tally {
            let mut options_out = Vec::new();
            for (oid, _, ct) in opts {
                let (m, proof) = next()?;
                let t = group.div(&ct.data, &m);
                let value = dlog.find(group, &t).ok_or_else(|| {
                    Eg2Error::Decryption(format!("{cid}/{oid} does not decrypt to a count"))
                })?;
                let label = format!("{cid}/{oid}");
                let want = counted.expected.get(&label).copied().unwrap_or(0);
                if want != value {
                    return Err(Eg2Error::Decryption(format!(
                        "{label} decrypts to {value}, the ballots hold {want}"
                    )));
                }
                counts.insert(label, value);
                options_out.push(DecryptedOption {
                    id: oid.clone(),
                    count: value,
                    t,
                    ct: ct.clone(),
                    proof,
                });
            }
            tally_out.push(DecryptedContest {
                id: cid.clone(),
                sequence: *seq,
                options: options_out,
                ballot_count: *count,
                data: None,
            });
        }
        let mut opened = Vec::with_capacity(counted.challenged.len());
        for (id, contests) in &counted.challenged {
            opened.push(self.open_ballot(id, contests, &dlog, &mut next)?);
        }
        self.write(
            "tally.json",
            &record::decrypted(group, TALLY_ID, &keyed.he, &tally_out),
        )?;
        let challenged_dir = self.dir.join("challenged_ballots");
        std::fs::create_dir_all(&challenged_dir).map_err(|e| io(&challenged_dir, e))?;
        for ((id, _), out) in counted.challenged.iter().zip(&opened) {
            write(
                &challenged_dir.join(format!("dballot-{id}.json")),
                &record::decrypted(group, id, &keyed.he, out),
            )?;
        }
        self.summary.counts = counts;
        self.summary.challenged = opened.len();
        self.lap("decrypted record");
        Ok(self.summary.clone())
    }

    /// One challenged ballot's decryptions: its votes (each within the option's limit) and contest data.
    fn open_ballot(
        &self,
        id: &str,
        contests: &[Challenged<G>],
        dlog: &Dlog<G>,
        next: &mut impl FnMut() -> Result<Decrypted<G>, Eg2Error>,
    ) -> Result<Vec<DecryptedContest<G>>, Eg2Error> {
        let group = &self.group;
        let keyed = self.keyed()?;
        let mut out = Vec::new();
        for (cid, cts, data, num_bytes) in contests {
            let mc = &self.manifest.contests[cid];
            let mut options_out = Vec::new();
            for (oid, ct) in mc.options.iter().zip(cts) {
                let (m, proof) = next()?;
                let t = group.div(&ct.data, &m);
                let value = dlog
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
            let (beta, proof) = next()?;
            let message =
                contest_data::decrypt(group, &keyed.he, &keyed.key, data, &beta, cid, *num_bytes)
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

/// The tally's id in the record.
const TALLY_ID: &str = "votum-tally";

/// H_P, H_M and H_B of an election on `group` with this manifest, `n` guardians and quorum `k`.
pub fn base_hashes<G: Eg2Group>(
    group: &G,
    manifest_bytes: &[u8],
    n: u32,
    k: u32,
) -> ([u8; 32], [u8; 32], [u8; 32]) {
    let hp = parameter_hash(group.protocol_version(), &record::parameter_inputs(group));
    let hm = manifest_hash(&hp, manifest_bytes);
    let hb = election_base_hash(&hp, &hm, n, k);
    (hp, hm, hb)
}

/// The guardians' public records as a roster: `n` of them, x-coordinates 1…n once each, ids distinct, each
/// record's `k` commitments proven.
pub fn check_roster<G: Eg2Group>(
    group: &G,
    hp: &[u8; 32],
    publics: &[PublicGuardian<G>],
    n: u32,
    k: u32,
) -> Result<(), Eg2Error> {
    let mut xs: Vec<u32> = publics.iter().map(|g| g.x).collect();
    xs.sort_unstable();
    if xs != (1..=n).collect::<Vec<_>>() {
        return Err(Eg2Error::Parameters(format!(
            "the guardians' x-coordinates are {xs:?}, not 1…{n} once each"
        )));
    }
    let ids: std::collections::BTreeSet<&str> = publics.iter().map(|g| g.id.as_str()).collect();
    if ids.len() != publics.len() {
        return Err(Eg2Error::Parameters("two guardians share an id".into()));
    }
    for g in publics {
        check_public(group, hp, g, k)?;
    }
    Ok(())
}

/// A challenged ballot as recorded: each contest's id, its ciphertexts in the manifest's order, its contest
/// data and the data's length.
type Challenged<G> = (String, Vec<Ciphertext<G>>, ContestData<G>, usize);

#[cfg(test)]
mod tests {
    use super::Dlog;
    use votum_group::{Group, P256};

    #[test]
    fn the_discrete_log_finds_every_count_up_to_its_bound_and_none_past_it() {
        let group = P256;
        let k = group.pow_generator(&group.scalar_from_u64(7));
        let power = |t: u64| group.pow(&k, &group.scalar_from_u64(t));
        for max in [0u64, 1, 2, 3, 15, 16, 17, 24, 25, 26, 1000] {
            let dlog = Dlog::new(&group, &k, max);
            for t in 0..=max {
                assert_eq!(dlog.find(&group, &power(t)), Some(t), "max {max}, t {t}");
            }
            assert_eq!(dlog.find(&group, &power(max + 1)), None, "max {max}");
            assert_eq!(dlog.find(&group, &group.generator().clone()), None);
            assert!(dlog.table.len() as u64 <= 2 + (max + 1).isqrt());
        }
        // a count up to 10^8 from a table of 10^4 entries
        let big = Dlog::new(&group, &k, 100_000_000);
        assert_eq!(big.table.len(), 10_001);
        assert_eq!(big.find(&group, &power(99_999_999)), Some(99_999_999));
    }
}
