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
use crate::v21::check::check_key;
use crate::v21::data;
use crate::v21::decrypt::{
    data_plaintext, in_process, nonce_share, open_ballot, Decrypted, NoncePart, Target,
};
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

pub(crate) fn write_json(path: &Path, v: &serde_json::Value) -> Result<(), Eg2Error> {
    let text = serde_json::to_vec_pretty(v).map_err(|e| Eg2Error::Io(e.to_string()))?;
    std::fs::write(path, text).map_err(|e| io(path, e))
}

pub(crate) fn write_lines(
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
    let shares = guardians
        .iter()
        .map(|g| g.key_shares(group, n))
        .collect::<Result<Vec<_>, _>>()?;
    let keys = joint_keys(group, (hp, hb), publics);
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
pub(crate) fn tally_json<G: Eg2Group>(
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

/// A record's ballots gathered one at a time (so that no one holds them all): the weighted sums of the
/// cast ones (eq. 80) for every option of the manifest, and the ballots the decryption needs, kept in record
/// order: the challenged ones and the cast ordinary ones with contest data the manifest says to decrypt. The
/// coordinator and each guardian gather the same from the same ballots.
pub struct Tally<G: Eg2Group> {
    pub sums: BTreeMap<(u32, u32), Ciphertext<G>>,
    pub kept: Vec<Ballot<G>>,
    /// every ballot gathered
    pub count: usize,
    /// the cast ballots' weights summed
    pub weight: u64,
    /// the largest option limit R of the manifest
    limit: u64,
    decrypting: Vec<u32>,
}

impl<G: Eg2Group> Tally<G> {
    pub fn new(group: &G, manifest: &Manifest) -> Self {
        let mut sums = BTreeMap::new();
        for mc in manifest.contests.values() {
            for o in &mc.sequences {
                sums.insert((mc.sequence, *o), Ciphertext::zero(group));
            }
        }
        let decrypting = manifest
            .contests
            .values()
            .filter(|mc| mc.decrypt_data)
            .map(|mc| mc.sequence)
            .collect();
        let limit = manifest
            .contests
            .values()
            .map(|mc| u64::from(mc.option_limit))
            .max()
            .unwrap_or(1)
            .max(1);
        Self {
            sums,
            kept: Vec::new(),
            count: 0,
            weight: 0,
            limit,
            decrypting,
        }
    }

    /// No count can exceed this: the cast ballots' weights summed, times the largest option limit (an
    /// option takes up to R votes on each ballot).
    pub fn bound(&self) -> u64 {
        self.weight.saturating_mul(self.limit)
    }

    /// Whether the decryption needs `b` after its sums are taken.
    fn needs(&self, b: &Ballot<G>) -> bool {
        b.state == State::Challenged
            || (b.state == State::Cast
                && !b.pre_encrypted
                && b.contests
                    .iter()
                    .any(|c| c.data.is_some() && self.decrypting.contains(&c.index)))
    }

    /// Adds `b` to the sums if it is cast, and keeps it if the decryption needs it.
    pub fn add(&mut self, group: &G, b: Ballot<G>) {
        self.count += 1;
        if b.state == State::Cast {
            self.weight += u64::from(b.weight);
            let w = group.scalar_from_u64(u64::from(b.weight));
            for c in &b.contests {
                for s in &c.selections {
                    // W = 1 needs no power (most elections weigh every voter 1)
                    let ct = if b.weight == 1 {
                        s.ct.clone()
                    } else {
                        Ciphertext {
                            pad: group.pow(&s.ct.pad, &w),
                            data: group.pow(&s.ct.data, &w),
                        }
                    };
                    let sum = self
                        .sums
                        .entry((c.index, s.option))
                        .or_insert_with(|| Ciphertext::zero(group));
                    *sum = sum.add(group, &ct);
                }
            }
        }
        if self.needs(&b) {
            self.kept.push(b);
        }
    }

    /// What the guardians decrypt ([`record_targets`]).
    pub fn targets(&self, manifest: &Manifest) -> Vec<Target<'_, G>> {
        record_targets(manifest, &self.sums, &self.kept)
    }

    /// The challenged ballots, in record order.
    pub fn challenged(&self) -> Vec<&Ballot<G>> {
        self.kept
            .iter()
            .filter(|b| b.state == State::Challenged)
            .collect()
    }
}

/// What one decryption of [`record_targets`]'s says: a count, or a contest data's plaintext (None: it does
/// not decode).
pub(crate) enum Said {
    Count(u64),
    Data(Option<Vec<u8>>),
}

/// The record's tally values, decrypted contest data and counts by "contest/option" from the decryptions of
/// `targets` (in their order): each count found by `dlog` up to `bound` (else an error), each contest data
/// decoded, and each passed to `check` first. The service's publication refuses data that does not decode;
/// the coordinator compares every value with the voters' plaintexts.
pub(crate) fn record_values<G: Eg2Group>(
    group: &G,
    manifest: &Manifest,
    (targets, decrypted): (&[Target<'_, G>], Vec<Decrypted<G>>),
    (dlog, bound): (&Dlog<G>, u64),
    mut check: impl FnMut(&Target<'_, G>, &Said) -> Result<(), Eg2Error>,
) -> Result<Values<G>, Eg2Error> {
    let mut tally = Vec::with_capacity(targets.len());
    let mut contest_data = Vec::new();
    let mut counts = BTreeMap::new();
    for (t, d) in targets.iter().zip(decrypted) {
        match t {
            Target::Tally {
                contest,
                option,
                ct,
            } => {
                let count = dlog.find(group, &d.value).ok_or_else(|| {
                    Eg2Error::Decryption(format!(
                        "contest {contest} option {option}: no count up to {bound}"
                    ))
                })?;
                check(t, &Said::Count(count))?;
                counts.insert(count_name(manifest, *contest, *option), count);
                tally.push(TallyValue {
                    contest: *contest,
                    option: *option,
                    ct: (*ct).clone(),
                    t: count,
                    proof: d.proof,
                });
            }
            Target::Data {
                ballot, contest, ..
            } => {
                let got = data_plaintext(group, t, &d.value);
                check(t, &Said::Data(got.clone()))?;
                contest_data.push(DecryptedData {
                    ballot: ballot.id.clone(),
                    contest: *contest,
                    beta: d.value,
                    proof: d.proof,
                    d: got.unwrap_or_default(),
                });
            }
        }
    }
    Ok((tally, contest_data, counts))
}

/// What [`record_values`] gives: the tally values, the decrypted contest data and the counts by name.
pub(crate) type Values<G> = (
    Vec<TallyValue<G>>,
    Vec<DecryptedData<G>>,
    BTreeMap<String, u64>,
);

/// What the guardians decrypt from a record's ballots (spec/66.6, 66.11), in this order: every tally value
/// by (contest, option), then each cast ordinary ballot's contest data where the manifest says to decrypt
/// it, ballots in record order and contests in the ballot's order.
pub fn record_targets<'a, G: Eg2Group>(
    manifest: &Manifest,
    sums: &'a BTreeMap<(u32, u32), Ciphertext<G>>,
    ballots: &'a [Ballot<G>],
) -> Vec<Target<'a, G>> {
    let mut targets: Vec<Target<'a, G>> = sums
        .iter()
        .map(|((c, opt), ct)| Target::Tally {
            contest: *c,
            option: *opt,
            ct,
        })
        .collect();
    let decrypting: Vec<u32> = manifest
        .contests
        .values()
        .filter(|mc| mc.decrypt_data)
        .map(|mc| mc.sequence)
        .collect();
    for b in ballots
        .iter()
        .filter(|b| b.state == State::Cast && !b.pre_encrypted)
    {
        for c in b.contests.iter().filter(|c| decrypting.contains(&c.index)) {
            if let Some(t) = Target::data(b, c.index) {
                targets.push(t);
            }
        }
    }
    targets
}

/// What was cast, as far as the rest of the election needs it: the tally gathered from the ballots, the
/// plaintext of each challenged ordinary ballot and each D the guardians decrypt (to compare the decryptions
/// with), the paper of each uncast pre-encrypted ballot, and the counts the cast plaintexts hold.
struct Cast<G: Eg2Group> {
    tally: Tally<G>,
    challenged_plain: BTreeMap<String, PlainBallot>,
    data_expected: BTreeMap<(String, u32), Option<Vec<u8>>>,
    sheets: BTreeMap<String, Vec<PrintedContest>>,
    expected: BTreeMap<(u32, u32), u64>,
    max_count: u64,
}

/// Voters' ballots encrypted per batch: enough to keep every core busy, few enough to hold.
const BATCH: usize = 4096;

impl<G: Eg2Group> Cast<G> {
    /// Takes a batch of plaintexts and their ballots (sealed on their chain, in order): each ballot written
    /// as a line of `out`, the cast plaintexts counted, and what the rest of the election needs kept.
    fn absorb(
        &mut self,
        (group, manifest): (&G, &Manifest),
        plain: Vec<(PlainBallot, State, u32)>,
        ballots: Vec<Ballot<G>>,
        out: &mut std::io::BufWriter<std::fs::File>,
    ) -> Result<(), Eg2Error> {
        for ((p, state, weight), b) in plain.into_iter().zip(ballots) {
            serde_json::to_writer(&mut *out, &b.to_json(group))
                .map_err(|e| Eg2Error::Io(e.to_string()))?;
            out.write_all(b"\n")
                .map_err(|e| Eg2Error::Io(format!("{}: {e}", record::BALLOTS)))?;
            if state == State::Cast {
                for (id, mc, votes) in plain_votes(manifest, &p)? {
                    for (o_idx, v) in mc.sequences.iter().zip(votes) {
                        *self.expected.entry((mc.sequence, *o_idx)).or_default() +=
                            u64::from(v) * u64::from(weight);
                    }
                    self.max_count += u64::from(mc.option_limit) * u64::from(weight);
                    if mc.decrypt_data && !b.pre_encrypted {
                        self.data_expected
                            .insert((p.id.clone(), mc.sequence), plain_data(mc, &p, id)?);
                    }
                }
            } else if !b.pre_encrypted {
                self.challenged_plain.insert(p.id.clone(), p);
            }
            self.tally.add(group, b);
        }
        Ok(())
    }
}

/// The coordinator of a 2.1 election (spec/66.7, 66.12): it holds no secret. It takes the guardians' key
/// records ([`Coordinator::open`]: each checked, K, K̂, H_G and H_E computed, the record's first documents
/// written), plays the voters and the devices ([`Coordinator::cast`]: ballots written), lists what the
/// guardians decrypt ([`Coordinator::targets`], [`Coordinator::challenged`]) and writes what they decrypted
/// ([`Coordinator::finish`]), each count and opening compared with the voters' plaintexts first.
pub struct Coordinator<G: Eg2Group> {
    group: G,
    dir: std::path::PathBuf,
    options: Options,
    manifest_bytes: Vec<u8>,
    manifest: Manifest,
    short: Option<ShortCode>,
    hp: [u8; 32],
    hb: [u8; 32],
    keys: Option<Keys<G>>,
    cast: Option<Cast<G>>,
    seconds: Vec<(&'static str, f64)>,
    clock: Instant,
}

fn not_yet(what: &str) -> Eg2Error {
    Eg2Error::Parameters(format!("{what} first"))
}

impl<G: Eg2Group> Coordinator<G> {
    /// A coordinator writing to `dir` (created; it must not hold a record) an election on `manifest_bytes`
    /// amended as `options` asks (Ω, contest data): the amended bytes are H_B's input.
    pub fn new(
        group: G,
        dir: &Path,
        manifest_bytes: &[u8],
        options: &Options,
    ) -> Result<Self, Eg2Error> {
        let o = &options.base;
        let (n, k) = (o.guardians, o.quorum);
        o.decrypting()?;
        if record::is_record(dir) {
            return Err(Eg2Error::Io(format!(
                "{} holds a record already",
                dir.display()
            )));
        }
        let mut manifest_json: serde_json::Value = serde_json::from_slice(manifest_bytes)
            .map_err(|e| Eg2Error::Manifest(e.to_string()))?;
        // Ω for pre-encrypted ballots (spec/66.10) and contest data (spec/66.11) written into the manifest
        // when asked for and absent: the manifest's bytes are H_B's input, so they are fixed before any key
        let mut manifest_bytes = manifest_bytes.to_vec();
        if let Some(m) = amended(&manifest_json, options)? {
            manifest_bytes =
                serde_json::to_vec_pretty(&m).map_err(|e| Eg2Error::Manifest(e.to_string()))?;
            manifest_json = m;
        }
        let manifest = read_manifest(&manifest_json).map_err(Eg2Error::Manifest)?;
        if manifest.styles.is_empty() {
            return Err(Eg2Error::Manifest(
                "the manifest has no ballot style".into(),
            ));
        }
        let short = ShortCode::of_manifest(&manifest_json).map_err(Eg2Error::Manifest)?;
        std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
        let hp = parameter_hash(&parameter_inputs(&group), n, k);
        let hb = base_hash(&hp, &manifest_bytes);
        Ok(Self {
            group,
            dir: dir.to_owned(),
            options: options.clone(),
            manifest_bytes,
            manifest,
            short,
            hp,
            hb,
            keys: None,
            cast: None,
            seconds: Vec::new(),
            clock: Instant::now(),
        })
    }

    fn lap(&mut self, name: &'static str) {
        self.seconds
            .push((name, self.clock.elapsed().as_secs_f64()));
        self.clock = Instant::now();
    }

    pub fn group(&self) -> &G {
        &self.group
    }

    /// U, the guardians that decrypt, sorted.
    pub fn available(&self) -> Result<Vec<u32>, Eg2Error> {
        let mut u = self.options.base.decrypting()?;
        u.sort_unstable();
        Ok(u)
    }

    /// Another U (spec/66.12): the decryption starts again with these guardians, one of the first U gone.
    /// At least k of 1…n, each once; what is decrypted stays the same.
    pub fn set_available(&mut self, available: &[u32]) -> Result<(), Eg2Error> {
        let mut base = self.options.base.clone();
        base.available = available.to_vec();
        base.decrypting()?;
        self.options.base = base;
        Ok(())
    }

    /// H_P and H_B.
    pub fn hashes(&self) -> (&[u8; 32], &[u8; 32]) {
        (&self.hp, &self.hb)
    }

    /// The manifest's bytes as amended: what the guardians are given and hash into H_B.
    pub fn manifest_bytes(&self) -> &[u8] {
        &self.manifest_bytes
    }

    pub fn keys(&self) -> Result<&Keys<G>, Eg2Error> {
        self.keys
            .as_ref()
            .ok_or_else(|| not_yet("the guardians' key records"))
    }

    /// Takes the guardians' key records, guardian 1…n in order, each checked (Verification 2); computes
    /// K, K̂, H_G and H_E; writes the parameters, the manifest and the guardians' document.
    pub fn open(&mut self, guardians: Vec<GuardianKey<G>>) -> Result<&Keys<G>, Eg2Error> {
        let o = &self.options.base;
        if self.keys.is_some() {
            return Err(Eg2Error::Parameters("the election is open already".into()));
        }
        check_roster(&self.group, &self.hp, &guardians, (o.guardians, o.quorum))?;
        let keys = joint_keys(&self.group, (&self.hp, &self.hb), guardians);
        write_json(
            &self.dir.join(record::PARAMETERS),
            &record::parameters_json(&self.group, o.guardians, o.quorum),
        )?;
        std::fs::write(self.dir.join(record::MANIFEST), &self.manifest_bytes)
            .map_err(|e| io(&self.dir, e))?;
        write_json(
            &self.dir.join(record::GUARDIANS),
            &keys.to_json(&self.group),
        )?;
        self.keys = Some(keys);
        self.lap("key ceremony");
        self.keys()
    }

    /// The voters' ballots encrypted on every core a batch at a time, chained per device and written as they
    /// come, the pre-encrypted ones printed and recorded, the weighted sums formed; the devices written. Only
    /// what the decryption needs is kept (spec/66.7).
    pub fn cast(&mut self) -> Result<(), Eg2Error> {
        if self.cast.is_some() {
            return Err(Eg2Error::Parameters("the ballots are cast already".into()));
        }
        let keys = self
            .keys
            .as_ref()
            .ok_or_else(|| not_yet("the guardians' key records"))?;
        let (group, manifest, options) = (&self.group, &self.manifest, &self.options);
        let o = &options.base;
        let styles: Vec<&String> = manifest.styles.keys().collect();
        let mut voters = ChaCha20Rng::seed_from_u64(o.seed);
        let device = Device::new(
            group.clone(),
            (keys.k.clone(), &keys.k_hat),
            keys.he,
            manifest,
            &o.device,
        );
        let path = self.dir.join(record::BALLOTS);
        let mut out =
            std::io::BufWriter::new(std::fs::File::create(&path).map_err(|e| io(&path, e))?);
        let mut cast = Cast {
            tally: Tally::new(group, manifest),
            challenged_plain: BTreeMap::new(),
            data_expected: BTreeMap::new(),
            sheets: BTreeMap::new(),
            expected: BTreeMap::new(),
            max_count: 0,
        };
        for key in cast.tally.sums.keys() {
            cast.expected.insert(*key, 0);
        }
        let mut chain = Chain::new(&keys.he, &o.device, options.simple_chaining);
        let mut first = 0;
        while first < o.ballots {
            let plain: Vec<(PlainBallot, State, u32)> = (first..o.ballots.min(first + BATCH))
                .map(|i| {
                    let style = styles[i % styles.len()].clone();
                    let contests = choose(manifest, &style, &mut voters);
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
            first += plain.len();
            let mut ballots: Vec<Ballot<G>> = plain
                .par_iter()
                .map(|(p, state, weight)| {
                    let mut rng =
                        ChaCha20Rng::from_rng(OsRng).map_err(|e| Eg2Error::Io(e.to_string()))?;
                    device.encrypt(p, (*state, *weight), &mut rng)
                })
                .collect::<Result<_, _>>()?;
            for b in &mut ballots {
                chain.seal(b);
            }
            cast.absorb((group, manifest), plain, ballots, &mut out)?;
        }
        let mut devices = vec![chain.close()];
        let mut laps = vec![("encryption", self.clock.elapsed().as_secs_f64())];
        let clock = Instant::now();

        // the pre-encrypted ballots: printed, then recorded as cast or left uncast (spec/66.10)
        if let Some(short) = self.short.filter(|_| options.pre_encrypted > 0) {
            let pre = pre_encrypted(
                (group, keys, manifest, short),
                options,
                o.ballots,
                &mut voters,
            )?;
            cast.absorb((group, manifest), pre.plain, pre.ballots, &mut out)?;
            cast.sheets = pre.sheets;
            devices.push(pre.printer);
            laps.push(("pre-encrypted ballots", clock.elapsed().as_secs_f64()));
        }
        out.flush().map_err(|e| io(&path, e))?;
        write_json(
            &self.dir.join(record::DEVICES),
            &serde_json::Value::Array(devices.iter().map(record::Device::to_json).collect()),
        )?;
        self.cast = Some(cast);
        self.seconds.extend(laps);
        self.clock = Instant::now();
        Ok(())
    }

    fn counted(&self) -> Result<&Cast<G>, Eg2Error> {
        self.cast.as_ref().ok_or_else(|| not_yet("the ballots"))
    }

    /// What the guardians decrypt ([`record_targets`]).
    pub fn targets(&self) -> Result<Vec<Target<'_, G>>, Eg2Error> {
        Ok(self.counted()?.tally.targets(&self.manifest))
    }

    /// The challenged ballots (uncast pre-encrypted ones among them), in record order: each is opened from
    /// the guardians' parts of its nonce.
    pub fn challenged(&self) -> Result<Vec<&Ballot<G>>, Eg2Error> {
        Ok(self.counted()?.tally.challenged())
    }

    /// Writes the decryptions (in the order of [`Coordinator::targets`]) and the challenged ballots opened
    /// from the guardians' nonce parts (by ballot id; each part checked, a wrong one named), after comparing
    /// every count, contest data and opening with the voters' plaintexts.
    pub fn finish(
        &mut self,
        decrypted: Vec<Decrypted<G>>,
        parts: &BTreeMap<String, Vec<(u32, NoncePart<G>)>>,
    ) -> Result<Summary, Eg2Error> {
        let group = &self.group;
        let keys = self.keys()?;
        let cast = self.counted()?;
        let manifest = &self.manifest;
        let targets = cast.tally.targets(manifest);
        if decrypted.len() != targets.len() {
            return Err(Eg2Error::Decryption(format!(
                "{} decryptions for {} values",
                decrypted.len(),
                targets.len()
            )));
        }
        let dlog = Dlog::new(group, &keys.k, cast.max_count);
        // every count and contest data compared with what the voters' ballots hold
        let check = |t: &Target<'_, G>, said: &Said| match (t, said) {
            (
                Target::Tally {
                    contest, option, ..
                },
                Said::Count(count),
            ) => {
                let want = cast
                    .expected
                    .get(&(*contest, *option))
                    .copied()
                    .unwrap_or(0);
                if *count == want {
                    return Ok(());
                }
                Err(Eg2Error::Decryption(format!(
                    "contest {contest} option {option} decrypts to {count}, the ballots hold {want}",
                )))
            }
            (
                Target::Data {
                    ballot, contest, ..
                },
                Said::Data(got),
            ) => {
                let want = cast
                    .data_expected
                    .get(&(ballot.id.clone(), *contest))
                    .cloned()
                    .flatten();
                if *got == want {
                    return Ok(());
                }
                Err(Eg2Error::Decryption(format!(
                    "{} does not decrypt to what the voter's ballot holds",
                    t.name()
                )))
            }
            _ => Err(Eg2Error::Decryption(format!(
                "{}: not what it decrypts",
                t.name()
            ))),
        };
        let (tally, contest_data, counts) = record_values(
            group,
            manifest,
            (&targets, decrypted),
            (&dlog, cast.max_count),
            check,
        )?;
        let mut seconds = vec![("decryption", self.clock.elapsed().as_secs_f64())];
        let clock = Instant::now();

        // the challenged ballots, opened by their nonces
        let mut opened: Vec<serde_json::Value> = Vec::new();
        let recorder = self
            .short
            .map(|s| Recorder::new(group.clone(), &keys.k, (manifest, s)));
        for b in cast.tally.challenged() {
            let parts = parts.get(&b.id).ok_or_else(|| Eg2Error::Ballot {
                ballot: b.id.clone(),
                reason: "no guardian's part of its nonce".into(),
            })?;
            if b.pre_encrypted {
                let (Some(recorder), Some(sheet)) = (&recorder, cast.sheets.get(&b.id)) else {
                    return Err(Eg2Error::Ballot {
                        ballot: b.id.clone(),
                        reason: "an uncast pre-encrypted ballot with no paper".into(),
                    });
                };
                opened.push(
                    recorder
                        .open((b, sheet), &keys.guardians, parts)?
                        .to_json(group),
                );
                continue;
            }
            let open = open_ballot(group, keys, manifest, b, parts)?;
            let p = cast
                .challenged_plain
                .get(&b.id)
                .ok_or_else(|| Eg2Error::Ballot {
                    ballot: b.id.clone(),
                    reason: "a challenged ballot no voter made".into(),
                })?;
            for (id, mc, votes) in plain_votes(manifest, p)? {
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
            opened.push(open.to_json(group));
        }
        seconds.push(("challenged ballots", clock.elapsed().as_secs_f64()));
        let clock = Instant::now();
        let available = self.available()?;
        write_json(
            &self.dir.join(record::TALLY),
            &tally_json(group, &available, &tally, &contest_data),
        )?;
        write_lines(&self.dir.join(record::CHALLENGED), opened.iter().cloned())?;
        seconds.push(("record", clock.elapsed().as_secs_f64()));
        let challenged = opened.len();
        let cast = cast.tally.count - challenged;
        let mut all = std::mem::take(&mut self.seconds);
        all.extend(seconds);
        Ok(Summary {
            cast,
            challenged,
            counts,
            seconds: all,
        })
    }
}

/// A count's name, "contest/option" by the manifest's ids, as the verifier reports them.
pub(crate) fn count_name(manifest: &Manifest, contest: u32, option: u32) -> String {
    manifest
        .contests
        .iter()
        .find(|(_, mc)| mc.sequence == contest)
        .and_then(|(id, mc)| {
            let at = mc.sequences.iter().position(|o| *o == option)?;
            Some(format!("{id}/{}", mc.options[at]))
        })
        .unwrap_or_else(|| format!("{contest}/{option}"))
}

/// Whether `keys` are the key records of guardians 1…n in order, each one's proofs holding (Verification 2);
/// a record whose proofs fail names its guardian. What the coordinator and each guardian check before
/// anything is computed from them.
pub fn check_roster<G: Eg2Group>(
    group: &G,
    hp: &[u8; 32],
    keys: &[GuardianKey<G>],
    (n, k): (u32, u32),
) -> Result<(), Eg2Error> {
    if keys.len() as u64 != u64::from(n) || keys.iter().zip(1..).any(|(g, i)| g.i != i) {
        return Err(Eg2Error::Parameters(format!(
            "the key records are not guardians 1…{n} in order"
        )));
    }
    for g in keys {
        check_key(group, hp, g, k).map_err(|reason| Eg2Error::Guardian {
            guardian: format!("guardian {}", g.i),
            reason,
        })?;
    }
    Ok(())
}

/// K, K̂ (eq. 25), H_G (eq. 27) and H_E from checked key records.
pub fn joint_keys<G: Eg2Group>(
    group: &G,
    (hp, hb): (&[u8; 32], &[u8; 32]),
    guardians: Vec<GuardianKey<G>>,
) -> Keys<G> {
    let key = guardians
        .iter()
        .fold(group.identity(), |acc, g| group.op(&acc, &g.vote[0]));
    let key_hat = guardians
        .iter()
        .fold(group.identity(), |acc, g| group.op(&acc, &g.data[0]));
    let hg = guardian_record_hash(
        group,
        hb,
        (&key, &key_hat),
        guardians.iter().flat_map(|g| &g.vote),
        guardians.iter().flat_map(|g| &g.data),
        guardians.iter().map(|g| &g.kappa),
    );
    let he = extended_base_hash(group, hb, &key, &key_hat);
    Keys {
        hp: *hp,
        hb: *hb,
        guardians,
        k: key,
        k_hat: key_hat,
        hg,
        he,
    }
}

/// Runs a 2.1 election on `group` with every guardian in this process and writes its record to `dir`
/// (created; it must not hold a record): the [`Coordinator`]'s steps, the guardians' key ceremony
/// ([`ceremony`]), their decryption rounds ([`in_process`]) and their nonce parts.
pub fn run<G: Eg2Group>(
    group: G,
    dir: &Path,
    manifest_bytes: &[u8],
    options: &Options,
) -> Result<Summary, Eg2Error> {
    let o = &options.base;
    let (n, k) = (o.guardians, o.quorum);
    let available = o.decrypting()?;
    let mut coordinator = Coordinator::new(group.clone(), dir, manifest_bytes, options)?;
    let (hp, hb) = {
        let (hp, hb) = coordinator.hashes();
        (*hp, *hb)
    };
    let (keys, shares) = ceremony(&group, (&hp, &hb), n, k)?;
    let opened = coordinator.open(keys.guardians.clone())?;
    if opened.hg != keys.hg || opened.he != keys.he {
        return Err(Eg2Error::Parameters(
            "the coordinator's H_G or H_E is not the guardians'".into(),
        ));
    }
    coordinator.cast()?;
    let manifest = read_manifest(
        &serde_json::from_slice(coordinator.manifest_bytes())
            .map_err(|e| Eg2Error::Manifest(e.to_string()))?,
    )
    .map_err(Eg2Error::Manifest)?;
    let present: Vec<&KeyShares<G>> = shares.iter().filter(|s| available.contains(&s.i)).collect();
    let mut rng = ChaCha20Rng::from_rng(OsRng).map_err(|e| Eg2Error::Io(e.to_string()))?;
    let decrypted = in_process(
        &group,
        (&keys, &manifest),
        &present,
        &coordinator.targets()?,
        &mut rng,
    )?;
    let mut parts = BTreeMap::new();
    for b in coordinator.challenged()? {
        let mine = present
            .iter()
            .map(|s| Ok((s.i, nonce_share(&group, s, b, &mut rng)?)))
            .collect::<Result<Vec<_>, Eg2Error>>()?;
        parts.insert(b.id.clone(), mine);
    }
    coordinator.finish(decrypted, &parts)
}
