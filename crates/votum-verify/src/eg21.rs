//! An ElectionGuard 2.1 record as votum writes it (spec/66.3), checked with the 2.1.0 specification's
//! verifications 1–19 as V-EG21-01…19 (spec/50.12): the parameters and H_P with n and k, the guardians'
//! compact proofs and κ, K and K̂, H_G and H_E, selection encryption identifiers and the ballot nonce's
//! signed ElGamal, range proofs and selection limits under H_I, contest hashes, confirmation codes and
//! each device's chain, the weighted aggregation, the tally's decryptions, and the challenged ballots
//! re-encrypted from their released nonces. Ballots are read a batch at a time and checked in parallel.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::io::BufRead;
use std::ops::ControlFlow;
use std::path::Path;

use rayon::prelude::*;
use serde_json::{json, Value};
use sha2::Digest;
use votum_eg2::manifest::ManifestContest;
use votum_eg2::manifest::{read_manifest, Manifest};
use votum_eg2::read::{read_bytes, read_json};
use votum_eg2::v21::check::pre_vector;
use votum_eg2::v21::check::{check_data_proof, check_key, xor_pads};
use votum_eg2::v21::hashes::{
    base_hash, chaining_field, contest_hash, data_decryption_hash, data_pads, decryption_hash,
    extended_base_hash, guardian_record_hash, identifier_hash, parameter_hash, pre_contest_hash,
    range_hash, selection_hash, Codes, ShortCode, NO_CHAINING, SIMPLE_CHAINING,
};
use votum_eg2::v21::record::{
    self, Ballot, Contest, DataCiphertext, DecryptedData, Keys, Opened, OpenedContest, OpenedPre,
    PreContest, State, TallyValue,
};
use votum_eg2::{
    group::{parameter_inputs, TOY_GROUP},
    Eg2Group,
};
use votum_elgamal::Ciphertext;
use votum_group::{ModpGroup, P256};

use crate::checks::eg2::Ctx;
use crate::checks::Check;
use crate::options::{
    keyed_params, BallotWorkers, Due, InFlight, Intermediates, Keyed, Options, Progress,
};
use crate::report::{Ledger, Report};

/// Ballots decoded and checked per parallel batch.
const BATCH: usize = 256;

/// Whether `path` is a directory holding a 2.1 record (spec/66.3).
pub fn is_eg21_record(path: &Path) -> bool {
    record::is_record(path)
}

type Stop = (Check, String, String);

fn at(check: Check, object: &str) -> impl Fn(String) -> Stop + '_ {
    move |reason| (check, object.to_owned(), reason)
}

/// Verifies a 2.1 record directory; `options.progress` is told of the ballots checked after each batch; with
/// `options.ballot_workers` each ballot's membership tests and proofs run there (a cluster, spec/98.3) and
/// a ballot not passed is checked again here.
pub fn verify_eg21_record(path: &Path, options: Options<'_>) -> (Report, Intermediates) {
    let mut ledger = Ledger::new(&Check::EG21);
    let mut hooks = Hooks {
        progress: options.progress,
        workers: options.ballot_workers,
        until_tally: false,
        allow_toy: options.allow_toy_parameters,
    };
    let mut out = Intermediates::default();
    let ballots = match walk(path, &mut ledger, &mut out, &mut hooks) {
        Ok(n) => n,
        Err((check, object, reason)) => {
            ledger.error(check, &object, reason);
            0
        }
    };
    (
        ledger.finish(path.display().to_string(), "electionguard-2.1", ballots),
        out,
    )
}

/// Checks a 2.1 record as far as its ballots and devices (V-EG21-01…08, and 15…17 when it holds
/// pre-encrypted ballots; spec/66.12): what a guardian verifies before it decrypts anything, so that the
/// tally it computes from the record is over valid ballots. The checks of the tally and the openings are
/// left not run: the record has none yet.
pub fn verify_eg21_until_tally(path: &Path) -> Report {
    let mut ledger = Ledger::new(&Check::EG21);
    let mut hooks = Hooks {
        progress: None,
        workers: None,
        until_tally: true,
        // a guardian's own parameters are compared with the record's by the guardian itself: one on the toy
        // group reads a toy record, one on a standard group refuses it there
        allow_toy: true,
    };
    let mut out = Intermediates::default();
    let ballots = match walk(path, &mut ledger, &mut out, &mut hooks) {
        Ok(n) => n,
        Err((check, object, reason)) => {
            ledger.error(check, &object, reason);
            0
        }
    };
    ledger.finish(path.display().to_string(), "electionguard-2.1", ballots)
}

/// Who hears of the walk as it goes: the progress hook, and the workers that check ballots elsewhere.
struct Hooks<'o> {
    progress: Option<&'o mut dyn FnMut(Progress) -> ControlFlow<()>>,
    workers: Option<&'o mut dyn BallotWorkers>,
    /// stop once the ballots and devices are checked: what a guardian reads before it decrypts
    until_tally: bool,
    /// the record is a test's on the toy parameters (spec/66.1): V-EG21-01 passes them with a warning
    allow_toy: bool,
}

/// A ballot line: its number, and its text or why it did not read.
type Line = (usize, Result<String, String>);

/// A ballot line as a worker is handed it (an unreadable one as nothing).
fn line_text((_, line): &Line) -> Cow<'_, str> {
    Cow::Borrowed(line.as_deref().unwrap_or(""))
}

fn stopped(done: u64) -> Stop {
    (
        Check::Eg21v05,
        record::BALLOTS.into(),
        format!("stopped after {done} ballots"),
    )
}

fn walk(
    dir: &Path,
    ledger: &mut Ledger,
    out: &mut Intermediates,
    hooks: &mut Hooks<'_>,
) -> Result<u64, Stop> {
    let params =
        read_json(&dir.join(record::PARAMETERS)).map_err(at(Check::Eg21v01, record::PARAMETERS))?;
    match params["group"].as_str().unwrap_or("") {
        "Integer4096" => walk_on(ModpGroup::eg2_4096(), dir, &params, ledger, out, hooks),
        "Integer3072" => walk_on(ModpGroup::eg2_3072(), dir, &params, ledger, out, hooks),
        "P-256" => walk_on(P256, dir, &params, ledger, out, hooks),
        TOY_GROUP => {
            let object = record::PARAMETERS;
            if hooks.allow_toy {
                ledger.warn(
                    Check::Eg21v01,
                    object,
                    "the toy parameters (q of 64 bits): a test's record, checked as asked",
                );
            } else {
                ledger.fail(
                    Check::Eg21v01,
                    object,
                    "the toy parameters (q of 64 bits, the specification's appendix): for tests only, never \
                     an election; the rest is checked as a test's record would be",
                );
            }
            walk_on(ModpGroup::eg2_toy(), dir, &params, ledger, out, hooks)
        }
        other => Err((
            Check::Eg21v01,
            record::PARAMETERS.into(),
            format!(
                "the group {other:?} is none of the 2.1 standard group (Integer4096), its reduced one (Integer3072), its toy one (Toy-q64p256) and P-256"
            ),
        )),
    }
}

/// V-EG21-01 (1.A–1.F): the version, the group's constants, H_P with n and k, H_B from the manifest.
pub(crate) fn check_parameters<G: Eg2Group>(
    ledger: &mut Ledger,
    group: &G,
    params: &Value,
    (n, k): (u32, u32),
    (keys, manifest): (&Keys<G>, &[u8]),
) -> bool {
    ledger.examined(Check::Eg21v01, 1);
    let object = record::PARAMETERS;
    if params["version"] != votum_eg2::v21::hashes::VERSION {
        ledger.fail(Check::Eg21v01, object, "the version is not v2.1.0 (1.A)");
    }
    let (_, _, constants) = group.constants();
    for (name, value) in constants {
        let given = params["constants"][name].as_str().unwrap_or("");
        if !given.eq_ignore_ascii_case(&value) {
            ledger.fail(
                Check::Eg21v01,
                object,
                format!("`{name}` is not the standard value (1.B–1.D)"),
            );
        }
    }
    if k == 0 || k > n {
        ledger.fail(
            Check::Eg21v01,
            object,
            format!("a quorum of {k} of {n} guardians"),
        );
    }
    let hp = parameter_hash(&parameter_inputs(group), n, k);
    let mut ok = true;
    if hp != keys.hp {
        ledger.fail(
            Check::Eg21v01,
            record::GUARDIANS,
            "H_P does not recompute (1.E)",
        );
        ok = false;
    }
    if base_hash(&hp, manifest) != keys.hb {
        ledger.fail(
            Check::Eg21v01,
            record::GUARDIANS,
            "H_B does not recompute from the manifest (1.F)",
        );
        ok = false;
    }
    ok
}

/// V-EG21-02 (2.A–2.C) per guardian, the x-coordinates 1…n once each; V-EG21-03 (3.A, 3.B) K, K̂ and
/// votum's H_G (eq. 27); V-EG21-04 (4.A) H_E.
pub(crate) fn check_keys<G: Eg2Group>(
    ledger: &mut Ledger,
    group: &G,
    keys: &Keys<G>,
    (n, k): (u32, u32),
) {
    let object = record::GUARDIANS;
    let mut xs: Vec<u32> = keys.guardians.iter().map(|g| g.i).collect();
    xs.sort_unstable();
    ledger.examined(Check::Eg21v02, keys.guardians.len() as u64);
    if xs != (1..=n).collect::<Vec<_>>() {
        ledger.fail(
            Check::Eg21v02,
            object,
            format!("the guardians are {xs:?}, not 1…{n} once each"),
        );
    }
    let failures: Vec<(u32, String)> = keys
        .guardians
        .par_iter()
        .filter_map(|g| check_key(group, &keys.hp, g, k).err().map(|e| (g.i, e)))
        .collect();
    for (i, reason) in failures {
        ledger.fail(Check::Eg21v02, &format!("guardian {i}"), reason);
    }
    ledger.examined(Check::Eg21v03, 1);
    let key = keys.guardians.iter().fold(group.identity(), |a, g| {
        g.vote.first().map_or(a.clone(), |x| group.op(&a, x))
    });
    // a guardian without commitments fails V-EG21-02; here it adds nothing
    let key_hat = keys.guardians.iter().fold(group.identity(), |a, g| {
        g.data.first().map_or(a.clone(), |x| group.op(&a, x))
    });
    if key != keys.k {
        ledger.fail(
            Check::Eg21v03,
            object,
            "K is not the product of the guardians' K_i (3.A)",
        );
    }
    if key_hat != keys.k_hat {
        ledger.fail(
            Check::Eg21v03,
            object,
            "K̂ is not the product of the guardians' K̂_i (3.B)",
        );
    }
    let hg = guardian_record_hash(
        group,
        &keys.hb,
        (&keys.k, &keys.k_hat),
        keys.guardians.iter().flat_map(|g| &g.vote),
        keys.guardians.iter().flat_map(|g| &g.data),
        keys.guardians.iter().map(|g| &g.kappa),
    );
    if hg != keys.hg {
        ledger.fail(Check::Eg21v03, object, "H_G does not recompute (eq. 27)");
    }
    ledger.examined(Check::Eg21v04, 1);
    if extended_base_hash(group, &keys.hb, &keys.k, &keys.k_hat) != keys.he {
        ledger.fail(Check::Eg21v04, object, "H_E does not recompute (4.A)");
    }
}

/// What one ballot's checks found, and what the record-wide checks need of it.
pub(crate) struct Checked {
    findings: Vec<(Check, String)>,
    /// objects examined by V-EG21-05…08
    selections: u64,
    /// objects examined by V-EG21-15 (contests of a cast pre-encrypted ballot) and 17 (short codes)
    pre_contests: u64,
    short_codes: u64,
}

impl Checked {
    fn stop(findings: Vec<(Check, String)>) -> Self {
        Self {
            findings,
            selections: 0,
            pre_contests: 0,
            short_codes: 0,
        }
    }
}

/// The manifest and its hash-trimming function Ω (spec/66.10), as the ballot checks read them.
pub(crate) type Rules<'m> = (&'m Manifest, Option<ShortCode>);

/// V-EG21-05 (5.B and the nonce's proof), 06 (6.A–6.D and the ballot's shape), 07 (7.A–7.D), 08 (8.A,
/// 8.B) for one ballot; for a pre-encrypted one 15, 16 (16.A–16.C) and 17 in place of 8. Without `proofs`
/// (a ballot a cluster worker passed, spec/98.3), its membership tests and proofs are not checked again.
pub(crate) fn check_ballot<G: Eg2Group>(
    ctx: &Ctx<G>,
    (manifest, short): Rules<'_>,
    b: &Ballot<G>,
    proofs: bool,
) -> Checked {
    let g = &ctx.group;
    let mut f = Vec::new();
    if identifier_hash(&ctx.he, &b.id_b) != b.hi {
        f.push((
            Check::Eg21v05,
            "H_I does not recompute from id_B (5.B)".into(),
        ));
    }
    if proofs && !g.all_members(&b.elements()) {
        f.push((
            Check::Eg21v06,
            "an α, β or C_0 is not in the group (6.A)".into(),
        ));
        return Checked::stop(f);
    }
    if proofs && !votum_eg2::v21::check::check_nonce_proof(g, &b.hi, &b.nonce) {
        f.push((
            Check::Eg21v05,
            "the ballot nonce's proof does not verify (eq. 38)".into(),
        ));
    }
    let Some(style) = manifest.contests_for(&b.style) else {
        f.push((
            Check::Eg21v06,
            format!("style {:?} is not the manifest's", b.style),
        ));
        return Checked::stop(f);
    };
    let want: Vec<u32> = style.iter().map(|(_, mc)| mc.sequence).collect();
    let got: Vec<u32> = b.contests.iter().map(|c| c.index).collect();
    if want != got {
        f.push((
            Check::Eg21v06,
            format!("contests {got:?}, the style has {want:?}"),
        ));
        return Checked::stop(f);
    }
    let uncast = b.pre_encrypted && b.state == State::Challenged;
    let mut out = Checked::stop(Vec::new());
    let mut hashes = Vec::with_capacity(b.contests.len());
    for (c, (_, mc)) in b.contests.iter().zip(&style) {
        if uncast {
            if !c.selections.is_empty() || !c.proof.is_empty() {
                f.push((
                    Check::Eg21v06,
                    format!(
                        "contest {}: an uncast pre-encrypted ballot carries selections",
                        c.index
                    ),
                ));
            }
        } else if !check_selections(ctx, (b, proofs), (c, mc), &mut f, &mut out.selections) {
            continue;
        }
        match &c.pre {
            Some(pre) => {
                if c.data.is_some() {
                    f.push((
                        Check::Eg21v05,
                        format!(
                            "contest {}: a pre-encrypted ballot carries contest data (spec/66.11)",
                            c.index
                        ),
                    ));
                }
                let h = pre_contest_hash(&b.hi, c.index, &pre.hashes);
                check_pre_contest(ctx, (b, c, mc), (pre, short, h), &mut f, &mut out);
                hashes.push(h);
            }
            None => {
                check_data(ctx, (b, c, mc), proofs, &mut f);
                let cts: Vec<&Ciphertext<G>> = c.selections.iter().map(|s| &s.ct).collect();
                let h = contest_hash(
                    g,
                    &b.hi,
                    c.index,
                    &cts,
                    c.data.as_ref().map(DataCiphertext::parts),
                );
                if h != c.hash {
                    f.push((
                        Check::Eg21v08,
                        format!("contest {}: χ does not recompute (8.A)", c.index),
                    ));
                }
                hashes.push(h);
            }
        }
    }
    let codes = Codes::of(b.pre_encrypted);
    if codes.confirmation_code(&b.hi, &hashes, &b.chaining) != b.code {
        let (check, items) = chain_items(codes);
        f.push((check, format!("H_C does not recompute ({})", items[0])));
    }
    out.findings = f;
    out
}

/// V-EG21-05's contest data items (spec/66.11) for one contest of an ordinary ballot: data exactly where
/// the manifest asks for it, C₁ of 32·b bytes, and its proof (eq. 69).
fn check_data<G: Eg2Group>(
    ctx: &Ctx<G>,
    (b, c, mc): (&Ballot<G>, &Contest<G>, &ManifestContest),
    proofs: bool,
    f: &mut Vec<(Check, String)>,
) {
    let at = |what: &str| (Check::Eg21v05, format!("contest {}: {what}", c.index));
    match (&c.data, mc.data_blocks) {
        (None, None) => {}
        (None, Some(_)) => f.push(at(
            "no contest data where the manifest asks for it (spec/66.11)",
        )),
        (Some(_), None) => f.push(at(
            "contest data the manifest does not ask for (spec/66.11)",
        )),
        (Some(d), Some(blocks)) => {
            if d.c1.len() != blocks as usize * 32 {
                f.push(at(&format!(
                    "C₁ of {} bytes, not the manifest's {blocks} blocks of 32",
                    d.c1.len()
                )));
            }
            if proofs && !check_data_proof(&ctx.group, &b.hi, c.index, d) {
                f.push(at("the contest data's proof does not verify (eq. 69)"));
            }
        }
    }
}

/// V-EG21-06 and 07 for one contest's selections (6.B–6.D, 7.A–7.D); false if its options are not the
/// manifest's, so that nothing further of it is read.
fn check_selections<G: Eg2Group>(
    ctx: &Ctx<G>,
    (b, proofs): (&Ballot<G>, bool),
    (c, mc): (&Contest<G>, &ManifestContest),
    f: &mut Vec<(Check, String)>,
    selections: &mut u64,
) -> bool {
    let g = &ctx.group;
    let options: Vec<u32> = c.selections.iter().map(|s| s.option).collect();
    if options != mc.sequences {
        f.push((
            Check::Eg21v06,
            format!(
                "contest {}: options {options:?}, the manifest has {:?}",
                c.index, mc.sequences
            ),
        ));
        return false;
    }
    *selections += c.selections.len() as u64;
    if !proofs {
        return true;
    }
    for s in &c.selections {
        let r = ctx.check_range_with(&s.ct, &s.proof, mc.option_limit, |cm| {
            range_hash(
                g,
                &b.hi,
                (c.index, Some(s.option)),
                &s.ct,
                cm.iter().map(|(a, bb)| (a, bb)),
            )
        });
        if let Err(e) = r {
            f.push((
                Check::Eg21v06,
                format!("contest {} option {}: {e} (6.D)", c.index, s.option),
            ));
        }
    }
    let sum = c
        .selections
        .iter()
        .fold(Ciphertext::zero(g), |acc, s| acc.add(g, &s.ct));
    let r = ctx.check_range_with(&sum, &c.proof, mc.limit, |cm| {
        range_hash(
            g,
            &b.hi,
            (c.index, None),
            &sum,
            cm.iter().map(|(a, bb)| (a, bb)),
        )
    });
    if let Err(e) = r {
        f.push((Check::Eg21v07, format!("contest {}: {e} (7.D)", c.index)));
    }
    true
}

/// V-EG21-15 (15.A), 16 (16.A, 16.B) and 17 (17.A) for one contest of a pre-encrypted ballot: its m + L
/// selection hashes strictly increasing and giving χ (`h`, recomputed); on a cast ballot, L chosen vectors
/// of m encryptions whose ψ are among them, whose short codes are Ω(ψ), and whose product is the contest's
/// selection vector.
fn check_pre_contest<G: Eg2Group>(
    ctx: &Ctx<G>,
    (b, c, mc): (&Ballot<G>, &Contest<G>, &ManifestContest),
    (pre, short, h): (&PreContest<G>, Option<ShortCode>, [u8; 32]),
    f: &mut Vec<(Check, String)>,
    out: &mut Checked,
) {
    let g = &ctx.group;
    let m = mc.sequences.len();
    let l = mc.limit as usize;
    let at = |what: &str| format!("contest {}: {what}", c.index);
    if pre.hashes.len() != m + l || pre.hashes.windows(2).any(|w| w[0] >= w[1]) {
        f.push((
            Check::Eg21v16,
            at(&format!(
                "{} selection hashes, not m + L = {} in increasing order (16.B)",
                pre.hashes.len(),
                m + l
            )),
        ));
    }
    if h != c.hash {
        f.push((Check::Eg21v16, at("χ does not recompute (16.B)")));
    }
    if b.state == State::Challenged {
        if !pre.chosen.is_empty() {
            f.push((Check::Eg21v16, at("an uncast ballot lists chosen vectors")));
        }
        return;
    }
    out.pre_contests += 1;
    if pre.chosen.len() != l || pre.chosen.iter().any(|ch| ch.vector.len() != m) {
        f.push((
            Check::Eg21v15,
            at(&format!(
                "not L = {l} chosen vectors of m = {m} encryptions (15.A)"
            )),
        ));
        return;
    }
    let mut product = vec![Ciphertext::zero(g); m];
    for ch in &pre.chosen {
        out.short_codes += 1;
        let psi = selection_hash(g, &b.hi, &ch.vector);
        if pre.hashes.binary_search(&psi).is_err() {
            f.push((
                Check::Eg21v16,
                at("a chosen vector's ψ is not among the ballot's selection hashes (16.A)"),
            ));
        }
        if let Some(fault) = short_code_fault(short, &psi, &ch.short_code) {
            f.push((Check::Eg21v17, at(&fault)));
        }
        for (acc, ct) in product.iter_mut().zip(&ch.vector) {
            *acc = acc.add(g, ct);
        }
    }
    let same = product
        .iter()
        .zip(&c.selections)
        .all(|(p, s)| p.pad == s.ct.pad && p.data == s.ct.data);
    if !same {
        f.push((
            Check::Eg21v15,
            at("the selection vector is not the product of the chosen vectors (15.A)"),
        ));
    }
}

/// A ballot line read and checked, or why it did not read.
type Read<G> = Result<(Ballot<G>, Checked), String>;

/// What the record-wide checks keep of a ballot.
pub(crate) struct Kept {
    device: String,
    pre_encrypted: bool,
    code: [u8; 32],
    chaining: [u8; 36],
}

fn digest<G: Eg2Group>(g: &G, ct: &Ciphertext<G>) -> [u8; 32] {
    let mut h = sha2::Sha256::new();
    h.update(g.hash_bytes(&ct.pad));
    h.update(g.hash_bytes(&ct.data));
    h.finalize().into()
}

/// H_0 and the closing hash from a chaining field: eqs. 74, 77, or a printer's 117, 118.
/// The check of a chain and the specification's items it checks: H_C, H_DI, B_C without and with chaining,
/// H_0 and the closing hash; a device's (V-EG21-08: 8.B–8.G) or a printer's (V-EG21-16: 16.C–16.H).
fn chain_items(codes: Codes) -> (Check, [&'static str; 6]) {
    match codes {
        Codes::Device => (Check::Eg21v08, ["8.B", "8.C", "8.D", "8.E", "8.F", "8.G"]),
        Codes::Printer => (
            Check::Eg21v16,
            ["16.C", "16.D", "16.E", "16.F", "16.G", "16.H"],
        ),
    }
}

/// V-EG21-08 (8.C–8.G), and 16 (16.D–16.H) for a printer of pre-encrypted ballots: each device's H_DI and
/// chain, every ballot on exactly one device of its kind, in order.
pub(crate) fn check_devices(
    ledger: &mut Ledger,
    he: &[u8; 32],
    devices: &[record::Device],
    kept: &BTreeMap<String, Kept>,
) {
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    for d in devices {
        let object = format!("device {}", d.name);
        let codes = Codes::of(d.pre_encrypted);
        let (check, items) = chain_items(codes);
        ledger.examined(check, 1);
        let hdi = codes.device_hash(he, &d.name);
        if hdi != d.hdi {
            let reason = format!("H_DI does not recompute ({})", items[1]);
            ledger.fail(check, &object, reason);
        }
        let first = chaining_field(d.mode, &hdi);
        let mut last = codes.chain_hash(he, &first);
        if d.mode == SIMPLE_CHAINING && d.first != Some(last) {
            let reason = format!("H_0 does not recompute ({})", items[4]);
            ledger.fail(check, &object, reason);
        }
        if d.mode != NO_CHAINING && d.mode != SIMPLE_CHAINING {
            ledger.fail(
                check,
                &object,
                format!("chaining mode {} is neither 0 nor 1", d.mode),
            );
            continue;
        }
        for id in &d.ballots {
            let Some(b) = kept.get(id) else {
                ledger.fail(check, &object, format!("ballot {id} is not in the record"));
                continue;
            };
            if !seen.insert(id) || b.device != d.name {
                ledger.fail(
                    check,
                    &object,
                    format!("ballot {id} is listed twice or made elsewhere"),
                );
            }
            if b.pre_encrypted != d.pre_encrypted {
                ledger.fail(
                    check,
                    &object,
                    format!("ballot {id} is pre-encrypted and its device is not a printer, or the reverse"),
                );
            }
            let (want, reason) = if d.mode == SIMPLE_CHAINING {
                let reason = format!("B_C is not 0x00000001 ‖ the previous code ({})", items[3]);
                (chaining_field(SIMPLE_CHAINING, &last), reason)
            } else {
                (
                    first,
                    format!("B_C is not 0x00000000 ‖ H_DI ({})", items[2]),
                )
            };
            if b.chaining != want {
                ledger.fail(check, &format!("ballot {id}"), reason);
            }
            last = b.code;
        }
        if d.mode == SIMPLE_CHAINING {
            let field = codes.closing_field(he, &last, &first);
            if d.close != Some(codes.chain_hash(he, &field)) {
                let reason = format!("the closing hash does not recompute ({})", items[5]);
                ledger.fail(check, &object, reason);
            }
        }
    }
    for (id, b) in kept {
        if !seen.contains(id.as_str()) {
            let (check, _) = chain_items(Codes::of(b.pre_encrypted));
            ledger.fail(check, &format!("ballot {id}"), "no device lists it");
        }
    }
}

fn walk_on<G: Eg2Group>(
    group: G,
    dir: &Path,
    params: &Value,
    ledger: &mut Ledger,
    out: &mut Intermediates,
    hooks: &mut Hooks<'_>,
) -> Result<u64, Stop> {
    let count = |field: &str| {
        params[field]
            .as_u64()
            .and_then(|v| u32::try_from(v).ok())
            .ok_or_else(|| {
                (
                    Check::Eg21v01,
                    record::PARAMETERS.to_owned(),
                    format!("`{field}` is not a count"),
                )
            })
    };
    let (n, k) = (count("n")?, count("k")?);
    let manifest_bytes =
        read_bytes(&dir.join(record::MANIFEST)).map_err(at(Check::Eg21v01, record::MANIFEST))?;
    let manifest_json: Value = serde_json::from_slice(&manifest_bytes).map_err(|e| {
        (
            Check::Eg21v01,
            record::MANIFEST.to_owned(),
            format!("not JSON: {e}"),
        )
    })?;
    let manifest = read_manifest(&manifest_json).map_err(at(Check::Eg21v01, record::MANIFEST))?;
    let short = ShortCode::of_manifest(&manifest_json).unwrap_or_else(|e| {
        ledger.fail(Check::Eg21v17, record::MANIFEST, e);
        None
    });
    let keys_doc =
        read_json(&dir.join(record::GUARDIANS)).map_err(at(Check::Eg21v02, record::GUARDIANS))?;
    let keys = Keys::read(&group, &keys_doc).map_err(at(Check::Eg21v02, record::GUARDIANS))?;
    check_parameters(ledger, &group, params, (n, k), (&keys, &manifest_bytes));
    check_keys(ledger, &group, &keys, (n, k));
    let ctx = Ctx::new(group.clone(), keys.k.clone(), keys.he);

    // the ballots, a batch at a time
    let path = dir.join(record::BALLOTS);
    let file = std::fs::File::open(&path)
        .map_err(|e| (Check::Eg21v05, record::BALLOTS.to_owned(), e.to_string()))?;
    let mut lines = std::io::BufReader::new(file).lines();
    let mut kept: BTreeMap<String, Kept> = BTreeMap::new();
    let mut challenged: BTreeMap<String, Ballot<G>> = BTreeMap::new();
    let mut sums: BTreeMap<(u32, u32), Ciphertext<G>> = BTreeMap::new();
    let mut ids_b: BTreeSet<[u8; 32]> = BTreeSet::new();
    let mut codes: BTreeSet<[u8; 32]> = BTreeSet::new();
    let mut cts: BTreeSet<[u8; 32]> = BTreeSet::new();
    let mut done = 0u64;
    let mut line_no = 0usize;
    let mut cast = 0u64;
    let mut holding: BTreeMap<u32, u64> = BTreeMap::new();
    let mut pre_ballots = 0u64;
    // the cast ballots' contest data the manifest says the guardians decrypt (V-EG21-12)
    let decrypting: BTreeSet<u32> = manifest
        .contests
        .values()
        .filter(|mc| mc.decrypt_data)
        .map(|mc| mc.sequence)
        .collect();
    let mut pending: Pending<G> = BTreeMap::new();
    // with workers (a cluster, spec/98.3), batches in flight in record order; merged oldest first
    let mut in_flight: InFlight<Line> = InFlight::new();
    loop {
        let mut batch: Vec<Line> = Vec::with_capacity(BATCH);
        for line in lines.by_ref().take(BATCH) {
            line_no += 1;
            batch.push((line_no, line.map_err(|e| e.to_string())));
        }
        let last = batch.is_empty();
        let mut ready: Vec<Due<Line>> = Vec::new();
        match hooks.workers.as_mut() {
            None if last => break,
            None => ready.push((batch, None)),
            Some(w) => {
                if !last {
                    let params = || eg21_params(&ctx.group, &ctx.k, &ctx.he, &manifest_bytes);
                    if in_flight
                        .submit(&mut **w, params, batch, line_text)
                        .is_break()
                    {
                        return Err(stopped(done));
                    }
                }
                match in_flight.due(&mut **w, last) {
                    ControlFlow::Continue(due) => ready = due,
                    ControlFlow::Break(()) => return Err(stopped(done)),
                }
                if last && ready.is_empty() {
                    break;
                }
            }
        }
        for (batch, verdicts) in ready {
            // a ballot a worker passed is read here without its membership tests and proofs (spec/98.3)
            let results: Vec<(usize, Read<G>)> = batch
                .into_par_iter()
                .enumerate()
                .map(|(at, (no, line))| {
                    let passed = verdicts.as_ref().is_some_and(|v| v.get(at) == Some(&true));
                    let r = line.and_then(|l| {
                        let v: Value =
                            serde_json::from_str(&l).map_err(|e| format!("not JSON: {e}"))?;
                        let b = Ballot::read(&ctx.group, &v)?;
                        let c = check_ballot(&ctx, (&manifest, short), &b, !passed);
                        Ok((b, c))
                    });
                    (no, r)
                })
                .collect();
            for (no, r) in results {
                done += 1;
                let (b, c) = match r {
                    Ok(x) => x,
                    Err(e) => {
                        ledger.fail(Check::Eg21v06, &format!("{} line {no}", record::BALLOTS), e);
                        continue;
                    }
                };
                let object = format!("ballot {}", b.id);
                ledger.examined(Check::Eg21v05, 1);
                ledger.examined(Check::Eg21v06, c.selections);
                ledger.examined(Check::Eg21v07, b.contests.len() as u64);
                if b.pre_encrypted {
                    pre_ballots += 1;
                    ledger.examined(Check::Eg21v15, c.pre_contests);
                    ledger.examined(Check::Eg21v16, 1);
                    ledger.examined(Check::Eg21v17, c.short_codes);
                } else {
                    ledger.examined(Check::Eg21v08, 1);
                }
                for (check, reason) in c.findings {
                    ledger.fail(check, &object, reason);
                }
                if !ids_b.insert(b.id_b) {
                    ledger.fail(
                        Check::Eg21v05,
                        &object,
                        "its id_B is another ballot's (5.A)",
                    );
                }
                if !codes.insert(b.code) {
                    ledger.fail(
                        Check::Eg21v08,
                        &object,
                        "its confirmation code is another ballot's",
                    );
                }
                let digests: Vec<[u8; 32]> = b
                    .contests
                    .iter()
                    .flat_map(|c| c.selections.iter().map(|s| digest(&ctx.group, &s.ct)))
                    .collect();
                if digests.iter().any(|d| !cts.insert(*d)) {
                    ledger.fail(
                        Check::Eg21v08,
                        &object,
                        "a ciphertext of it is on another ballot (a copied ballot)",
                    );
                }
                if b.weight == 0 {
                    ledger.fail(Check::Eg21v09, &object, "a weight of 0");
                }
                if b.state == State::Cast {
                    for c in b.contests.iter().filter(|c| decrypting.contains(&c.index)) {
                        if let Some(d) = &c.data {
                            pending.insert((b.id.clone(), c.index), (b.hi, d.clone()));
                        }
                    }
                    cast += 1;
                    for c in &b.contests {
                        *holding.entry(c.index).or_default() += 1;
                    }
                    let w = ctx.group.scalar_from_u64(u64::from(b.weight));
                    for c in &b.contests {
                        for s in &c.selections {
                            let ct = if b.weight == 1 {
                                s.ct.clone()
                            } else {
                                Ciphertext {
                                    pad: ctx.group.pow(&s.ct.pad, &w),
                                    data: ctx.group.pow(&s.ct.data, &w),
                                }
                            };
                            let sum = sums
                                .entry((c.index, s.option))
                                .or_insert_with(|| Ciphertext::zero(&ctx.group));
                            *sum = sum.add(&ctx.group, &ct);
                        }
                    }
                }
                if kept.contains_key(&b.id) {
                    ledger.fail(Check::Eg21v05, &object, "two ballots have this id");
                    continue;
                }
                kept.insert(
                    b.id.clone(),
                    Kept {
                        device: b.device.clone(),
                        pre_encrypted: b.pre_encrypted,
                        code: b.code,
                        chaining: b.chaining,
                    },
                );
                if b.state == State::Challenged {
                    challenged.insert(b.id.clone(), b);
                }
            }
            if let Some(hook) = hooks.progress.as_mut() {
                if hook(Progress::Ballots(done)).is_break() {
                    return Err(stopped(done));
                }
            }
        }
    }
    ledger.examined(Check::Eg21v05, 0);
    let devices_doc =
        read_json(&dir.join(record::DEVICES)).map_err(at(Check::Eg21v08, record::DEVICES))?;
    let devices: Vec<record::Device> = devices_doc
        .as_array()
        .ok_or_else(|| {
            (
                Check::Eg21v08,
                record::DEVICES.to_owned(),
                "not a list".to_owned(),
            )
        })?
        .iter()
        .map(record::Device::read)
        .collect::<Result<_, _>>()
        .map_err(at(Check::Eg21v08, record::DEVICES))?;
    check_devices(ledger, &keys.he, &devices, &kept);
    if pre_ballots == kept.len() as u64 && !devices.iter().any(|d| !d.pre_encrypted) {
        // a vote-by-mail election: every ballot pre-encrypted, no encryption device
        ledger.examined(Check::Eg21v08, 0);
        ledger.warn(
            Check::Eg21v08,
            "record",
            "no encryption device in the record: every ballot is pre-encrypted",
        );
    }
    if hooks.until_tally {
        return Ok(kept.len() as u64);
    }

    let (counts, tally_sha256, write_ins) = check_tally(
        ledger,
        &ctx,
        &manifest,
        dir,
        (&sums, &pending, &keys.k_hat),
        (n, k),
    )?;
    // what `votum verify` prints (spec/50.2): counts by "contest/option" with the manifest's ids
    let name = |c: u32| manifest.contests.iter().find(|(_, mc)| mc.sequence == c);
    let mut flat = serde_json::Map::new();
    for ((c, o), t) in &counts {
        if let Some((id, mc)) = name(*c) {
            if let Some(at) = mc.sequences.iter().position(|x| x == o) {
                flat.insert(format!("{id}/{}", mc.options[at]), json!(t));
            }
        }
    }
    let per_contest: serde_json::Map<String, Value> = holding
        .iter()
        .filter_map(|(c, n)| name(*c).map(|(id, _)| (id.clone(), json!(n))))
        .collect();
    out.values.insert("counts".into(), Value::Object(flat));
    out.values.insert("cast".into(), json!(cast));
    out.values
        .insert("contest_ballots".into(), Value::Object(per_contest));
    // the decrypted write-ins by the manifest's contest ids, each text with its ballots (spec/66.11)
    let written: serde_json::Map<String, Value> = write_ins
        .iter()
        .filter_map(|(c, texts)| name(*c).map(|(id, _)| (id.clone(), json!(texts))))
        .collect();
    if !written.is_empty() {
        out.values
            .insert("write_ins".into(), Value::Object(written));
    }
    out.values.insert(
        "tally_sha256".into(),
        json!(crate::report::hex(&tally_sha256)),
    );
    out.values
        .insert("H_E".into(), json!(crate::report::hex(&keys.he)));
    out.values.insert("ballots".into(), json!(done));
    check_challenged(
        ledger,
        (&ctx, &keys.k_hat),
        (&manifest, short),
        dir,
        &challenged,
    )?;
    if pre_ballots == 0 {
        for &check in &Check::EG21[14..] {
            ledger.examined(check, 0);
            ledger.warn(check, "record", "no pre-encrypted ballots in the record");
        }
    } else if !challenged.values().any(|b| b.pre_encrypted) {
        for check in [Check::Eg21v18, Check::Eg21v19] {
            ledger.examined(check, 0);
            ledger.warn(check, "record", "no pre-encrypted ballot was left uncast");
        }
    }
    Ok(kept.len() as u64)
}

/// The tally's counts by (contest, option), and the SHA-256 of `tally.json` as read.
type Tallied = (BTreeMap<(u32, u32), u64>, [u8; 32], WriteIns);

/// The write-ins of the decrypted contest data that verified, by contest index: each text and how many
/// ballots wrote it.
pub(crate) type WriteIns = BTreeMap<u32, BTreeMap<String, u64>>;

/// The cast ballots' contest data that `tally.json` must decrypt, by (ballot id, contest index): H_I and the
/// data.
pub(crate) type Pending<G> = BTreeMap<(String, u32), ([u8; 32], DataCiphertext<G>)>;

/// What the tally is checked against: the weighted sums of the cast ballots, the contest data to decrypt,
/// and K̂.
type Against<'a, G> = (
    &'a BTreeMap<(u32, u32), Ciphertext<G>>,
    &'a Pending<G>,
    &'a <G as votum_group::Group>::Element,
);

/// V-EG21-09 (9.A, 9.B with weights), 10 (10.A–10.C), 11 (11.A–11.D) and 12 (12.A–12.C, spec/66.11).
pub(crate) fn check_tally<G: Eg2Group>(
    ledger: &mut Ledger,
    ctx: &Ctx<G>,
    manifest: &Manifest,
    dir: &Path,
    (sums, pending, k_hat): Against<'_, G>,
    (n, k): (u32, u32),
) -> Result<Tallied, Stop> {
    let g = &ctx.group;
    let bytes = read_bytes(&dir.join(record::TALLY)).map_err(at(Check::Eg21v10, record::TALLY))?;
    let doc: Value = serde_json::from_slice(&bytes).map_err(|e| {
        (
            Check::Eg21v10,
            record::TALLY.to_owned(),
            format!("not JSON: {e}"),
        )
    })?;
    let available: Vec<u32> = doc["available"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_u64().and_then(|v| u32::try_from(v).ok()))
                .collect()
        })
        .unwrap_or_default();
    ledger.examined(Check::Eg21v10, 0);
    let distinct: BTreeSet<u32> = available.iter().copied().collect();
    if distinct.len() != available.len()
        || (distinct.len() as u64) < u64::from(k)
        || distinct.iter().any(|i| *i == 0 || *i > n)
    {
        ledger.fail(
            Check::Eg21v10,
            record::TALLY,
            format!("the available guardians {available:?} are not a quorum of {k} of 1…{n}"),
        );
    }
    let values: Vec<TallyValue<G>> = doc["values"]
        .as_array()
        .ok_or_else(|| {
            (
                Check::Eg21v10,
                record::TALLY.to_owned(),
                "`values` is not a list".to_owned(),
            )
        })?
        .iter()
        .map(|v| TallyValue::read(g, v))
        .collect::<Result<_, _>>()
        .map_err(at(Check::Eg21v10, record::TALLY))?;
    let options: BTreeSet<(u32, u32)> = manifest
        .contests
        .values()
        .flat_map(|mc| mc.sequences.iter().map(|o| (mc.sequence, *o)))
        .collect();
    let mut listed = BTreeSet::new();
    ledger.examined(Check::Eg21v11, values.len() as u64);
    ledger.examined(Check::Eg21v09, values.len() as u64);
    let bad: Vec<(String, String)> = values
        .par_iter()
        .filter_map(|v| {
            let object = format!("contest {} option {}", v.contest, v.option);
            if !g.all_members(&[&v.ct.pad, &v.ct.data]) {
                return Some((object, "A or B is not in the group".to_owned()));
            }
            let t = ctx.k_pow(v.t);
            let m = g.div(&v.ct.data, &t);
            let a = ctx.pow2(g.generator(), &v.proof.v, &ctx.k, &v.proof.c);
            let b = ctx.pow2(&v.ct.pad, &v.proof.v, &m, &v.proof.c);
            let c = g.to_challenge(&decryption_hash(
                g,
                &ctx.he,
                (v.contest, v.option),
                &v.ct,
                (&a, &b),
                &m,
            ));
            (c != v.proof.c).then(|| {
                (
                    object,
                    format!("the proof of t = {} does not verify (10.B, 10.C)", v.t),
                )
            })
        })
        .collect();
    ledger.examined(Check::Eg21v10, values.len() as u64);
    for (object, reason) in bad {
        ledger.fail(Check::Eg21v10, &object, reason);
    }
    for v in &values {
        let key = (v.contest, v.option);
        let object = format!("contest {} option {}", v.contest, v.option);
        if !options.contains(&key) {
            ledger.fail(
                Check::Eg21v11,
                &object,
                "not an option of the manifest (11.A, 11.B)",
            );
        }
        if !listed.insert(key) {
            ledger.fail(Check::Eg21v11, &object, "listed twice");
        }
        let want = sums
            .get(&key)
            .cloned()
            .unwrap_or_else(|| Ciphertext::zero(g));
        if want.pad != v.ct.pad || want.data != v.ct.data {
            ledger.fail(
                Check::Eg21v09,
                &object,
                "(A, B) is not the weighted product of the cast ballots' (9.A, 9.B)",
            );
        }
    }
    for key in options.difference(&listed) {
        ledger.fail(
            Check::Eg21v11,
            &format!("contest {} option {}", key.0, key.1),
            "missing from the tally (11.C, 11.D)",
        );
    }
    let write_ins = check_contest_data(ledger, (ctx, k_hat), &doc, pending);
    let counts = values
        .iter()
        .map(|v| ((v.contest, v.option), v.t))
        .collect();
    Ok((counts, sha2::Sha256::digest(&bytes).into(), write_ins))
}

/// V-EG21-12 (12.1, 12.2, 12.A–12.C, spec/66.11) for each item of `tally.json`'s `contest_data`: it names a
/// pending contest data (a cast ballot's, in a contest the manifest says to decrypt) once; its proof holds
/// against K̂ and D is C₁ XOR the keys from β. Every pending one is listed. Returns the write-ins of those
/// that verified (spec/65.6's encoding read back), for the result.
fn check_contest_data<G: Eg2Group>(
    ledger: &mut Ledger,
    (ctx, k_hat): (&Ctx<G>, &G::Element),
    doc: &Value,
    pending: &Pending<G>,
) -> WriteIns {
    let g = &ctx.group;
    let items: Vec<Result<DecryptedData<G>, String>> = match &doc["contest_data"] {
        Value::Null => Vec::new(),
        Value::Array(a) => a.iter().map(|v| DecryptedData::read(g, v)).collect(),
        _ => vec![Err("`contest_data` is not a list".to_owned())],
    };
    ledger.examined(Check::Eg21v12, items.len() as u64);
    if items.is_empty() && pending.is_empty() {
        ledger.warn(
            Check::Eg21v12,
            record::TALLY,
            "no contest data decrypted: no contest of the manifest says decrypt_contest_data",
        );
    }
    let mut listed = BTreeSet::new();
    let mut to_check = Vec::with_capacity(items.len());
    for (no, item) in items.iter().enumerate() {
        let d = match item {
            Ok(d) => d,
            Err(e) => {
                let object = format!("{} contest_data item {}", record::TALLY, no + 1);
                ledger.fail(Check::Eg21v12, &object, e.clone());
                continue;
            }
        };
        let object = format!("ballot {} contest {} data", d.ballot, d.contest);
        let key = (d.ballot.clone(), d.contest);
        let Some((hi, data)) = pending.get(&key) else {
            ledger.fail(
                Check::Eg21v12,
                &object,
                "no cast ballot's contest data the manifest says to decrypt (spec/66.11)",
            );
            continue;
        };
        if !listed.insert(key) {
            ledger.fail(Check::Eg21v12, &object, "decrypted twice");
            continue;
        }
        to_check.push((object, hi, data, d));
    }
    // the proofs and decryptions on every core
    let faults: Vec<(String, &str)> = to_check
        .par_iter()
        .filter_map(|(object, hi, data, d)| {
            let fault = data_fault(ctx, k_hat, (hi, data), d)?;
            Some((object.clone(), fault))
        })
        .collect();
    let failed: BTreeSet<&String> = faults.iter().map(|(o, _)| o).collect();
    let mut write_ins = WriteIns::new();
    for (object, _, _, d) in &to_check {
        if failed.contains(object) {
            continue;
        }
        if let Some(plain) = votum_eg2::plain_data::Plain::decode(&d.d) {
            for w in plain.write_ins {
                *write_ins
                    .entry(d.contest)
                    .or_default()
                    .entry(w)
                    .or_default() += 1;
            }
        }
    }
    for (object, fault) in faults {
        ledger.fail(Check::Eg21v12, &object, fault);
    }
    for (ballot, contest) in pending.keys().filter(|k| !listed.contains(*k)) {
        ledger.fail(
            Check::Eg21v12,
            &format!("ballot {ballot} contest {contest} data"),
            "not decrypted, though the manifest says to decrypt the contest's data (spec/66.11)",
        );
    }
    write_ins
}

/// What is wrong with one decrypted contest data (V-EG21-12), if anything: β in the group, its proof (12.1,
/// 12.2, 12.B; v is in Z_q as read, 12.A), D from C₁ with the keys from β (12.3, 12.4, 12.C).
fn data_fault<G: Eg2Group>(
    ctx: &Ctx<G>,
    k_hat: &G::Element,
    (hi, data): (&[u8; 32], &DataCiphertext<G>),
    d: &DecryptedData<G>,
) -> Option<&'static str> {
    let g = &ctx.group;
    if !g.all_members(&[&d.beta]) {
        return Some("β is not in the group");
    }
    let a = ctx.pow2(g.generator(), &d.proof.v, k_hat, &d.proof.c);
    let b = ctx.pow2(&data.c0, &d.proof.v, &d.beta, &d.proof.c);
    let c = g.to_challenge(&data_decryption_hash(
        g,
        hi,
        d.contest,
        data.parts(),
        (&a, &b),
        &d.beta,
    ));
    if c != d.proof.c {
        return Some("the proof of β does not verify (12.B)");
    }
    let pads = data_pads(
        g,
        hi,
        d.contest,
        (&data.c0, &d.beta),
        (data.c1.len() / 32) as u32,
    );
    if xor_pads(&data.c1, &pads).as_ref() != Some(&d.d) {
        return Some("D is not C₁ decrypted with β's keys (12.C)");
    }
    None
}

/// A style's contests in index order, as `Manifest::contests_for` gives them.
type Style<'m> = Vec<(&'m str, &'m ManifestContest)>;

/// The ballot an opening names and its style's contests, after the steps an ordinary challenged ballot's
/// opening (V-EG21-13, 14) and an uncast pre-encrypted one's (V-EG21-18, 19) share: the ballot is in the
/// record, marked challenged and of the opening's kind; opened once; its contests `got` are its style's
/// (14.A, 14.B or 19.A, 19.B). `None` when there is nothing further to check.
fn match_opening<'b, 'm, G: Eg2Group>(
    ledger: &mut Ledger,
    (manifest, challenged): (&'m Manifest, &'b BTreeMap<String, Ballot<G>>),
    opened_ids: &mut BTreeSet<String>,
    (object, id, got): (&str, &str, &[u32]),
    pre_encrypted: bool,
) -> Option<(&'b Ballot<G>, Style<'m>)> {
    let (opening, contents, items, missing) = if pre_encrypted {
        (
            Check::Eg21v18,
            Check::Eg21v19,
            "19.A, 19.B",
            "no pre-encrypted ballot of the record left uncast has this id",
        )
    } else {
        (
            Check::Eg21v13,
            Check::Eg21v14,
            "14.A, 14.B",
            "no ballot of the record marked challenged (and not pre-encrypted) has this id",
        )
    };
    ledger.examined(opening, 1);
    ledger.examined(contents, 1);
    let Some(b) = challenged
        .get(id)
        .filter(|b| b.pre_encrypted == pre_encrypted)
    else {
        ledger.fail(opening, object, missing);
        return None;
    };
    if !opened_ids.insert(id.to_owned()) {
        ledger.fail(opening, object, "opened twice");
    }
    let style = manifest.contests_for(&b.style).unwrap_or_default();
    let want: Vec<u32> = style.iter().map(|(_, mc)| mc.sequence).collect();
    if got != want {
        ledger.fail(
            contents,
            object,
            format!("contests {got:?}, the style has {want:?} ({items})"),
        );
        return None;
    }
    Some((b, style))
}

/// Ω(ψ) against the short code `shown` (17.A): why not, if it is not.
fn short_code_fault(short: Option<ShortCode>, psi: &[u8; 32], shown: &str) -> Option<String> {
    match short {
        Some(omega) if omega.code(psi) == shown => None,
        Some(_) => Some(format!("short code {shown:?} is not Ω(ψ) (17.A)")),
        None => Some("the manifest names no short-code function (spec/66.10)".into()),
    }
}

/// V-EG21-13 (13.1–13.6, 13.A, 13.B) and 14 (14.A–14.F): each challenged ballot opened by its released
/// nonces, its contest data by its own (spec/66.11).
pub(crate) fn check_challenged<G: Eg2Group>(
    ledger: &mut Ledger,
    (ctx, k_hat): (&Ctx<G>, &G::Element),
    (manifest, short): Rules<'_>,
    dir: &Path,
    challenged: &BTreeMap<String, Ballot<G>>,
) -> Result<(), Stop> {
    let g = &ctx.group;
    let path = dir.join(record::CHALLENGED);
    let text = std::fs::read_to_string(&path)
        .map_err(|e| (Check::Eg21v13, record::CHALLENGED.to_owned(), e.to_string()))?;
    let mut opened_ids = BTreeSet::new();
    ledger.examined(Check::Eg21v13, 0);
    ledger.examined(Check::Eg21v14, 0);
    for (no, line) in text.lines().enumerate() {
        let object = format!("{} line {}", record::CHALLENGED, no + 1);
        let value = serde_json::from_str::<Value>(line).map_err(|e| e.to_string());
        if let Ok(v) = &value {
            if v["pre_encrypted"] == Value::Bool(true) {
                let read = OpenedPre::read(g, v);
                check_uncast(
                    ledger,
                    ctx,
                    (manifest, short),
                    (&object, read),
                    challenged,
                    &mut opened_ids,
                );
                continue;
            }
        }
        let opened = match value.and_then(|v| Opened::read(g, &v)) {
            Ok(o) => o,
            Err(e) => {
                ledger.fail(Check::Eg21v13, &object, e);
                continue;
            }
        };
        let object = format!("challenged ballot {}", opened.id);
        let got: Vec<u32> = opened.contests.iter().map(|c| c.index).collect();
        let opening = (object.as_str(), opened.id.as_str(), &got[..]);
        let Some((b, style)) = match_opening(
            ledger,
            (manifest, challenged),
            &mut opened_ids,
            opening,
            false,
        ) else {
            continue;
        };
        let mut hashes = Vec::with_capacity(got.len());
        let mut ok = true;
        for ((oc, (_, mc)), enc) in opened.contests.iter().zip(&style).zip(&b.contests) {
            let (index, opts) = (&oc.index, &oc.selections);
            if let Err(why) = check_opened_data(g, k_hat, &b.hi, (oc, enc)) {
                ledger.fail(Check::Eg21v13, &object, format!("contest {index}: {why}"));
                ok = false;
            }
            let options: Vec<u32> = opts.iter().map(|(o, _, _)| *o).collect();
            if options != mc.sequences {
                ledger.fail(
                    Check::Eg21v14,
                    &object,
                    format!(
                        "contest {index}: options {options:?}, the manifest has {:?} (14.C, 14.D)",
                        mc.sequences
                    ),
                );
                ok = false;
                continue;
            }
            if let Some((o, s, _)) = opts.iter().find(|(_, s, _)| *s > mc.option_limit) {
                ledger.fail(
                    Check::Eg21v14,
                    &object,
                    format!("contest {index} option {o}: {s} above the option limit (14.E)"),
                );
            }
            let total: u64 = opts.iter().map(|(_, s, _)| u64::from(*s)).sum();
            if total > u64::from(mc.limit) {
                ledger.fail(
                    Check::Eg21v14,
                    &object,
                    format!(
                        "contest {index}: {total} votes above the limit {} (14.F)",
                        mc.limit
                    ),
                );
            }
            let mut cts = Vec::with_capacity(opts.len());
            for ((o, sigma, xi), s) in opts.iter().zip(&enc.selections) {
                // (13.1), (13.2): the encryption again from the released nonce
                let e = g.scalar_add(&g.scalar_from_u64(u64::from(*sigma)), xi);
                let ct = Ciphertext {
                    pad: g.pow_generator(xi),
                    data: g.pow_table(&ctx.k_table, &e),
                };
                if ct.pad != s.ct.pad || ct.data != s.ct.data {
                    ledger.fail(Check::Eg21v13, &object, format!("contest {index} option {o}: the nonce and vote do not give the ballot's encryption"));
                    ok = false;
                }
                cts.push(ct);
            }
            let refs: Vec<&Ciphertext<G>> = cts.iter().collect();
            hashes.push(contest_hash(
                g,
                &b.hi,
                *index,
                &refs,
                enc.data.as_ref().map(DataCiphertext::parts),
            ));
        }
        if ok && Codes::Device.confirmation_code(&b.hi, &hashes, &b.chaining) != b.code {
            ledger.fail(
                Check::Eg21v13,
                &object,
                "the re-encrypted ballot does not give its confirmation code (13.B)",
            );
        }
    }
    for (id, b) in challenged {
        if !opened_ids.contains(id) {
            let check = if b.pre_encrypted {
                Check::Eg21v18
            } else {
                Check::Eg21v13
            };
            ledger.fail(check, &format!("challenged ballot {id}"), "not opened");
        }
    }
    Ok(())
}

/// 13.4–13.6 and 13.A for one opened contest (spec/66.11): its data opened exactly where the ballot carries
/// some, ξ giving C₀, and C₁ the released D XOR the keys from β = K̂^ξ.
fn check_opened_data<G: Eg2Group>(
    g: &G,
    k_hat: &G::Element,
    hi: &[u8; 32],
    (opened, enc): (&OpenedContest<G>, &Contest<G>),
) -> Result<(), &'static str> {
    match (&opened.data, &enc.data) {
        (None, None) => Ok(()),
        (None, Some(_)) => Err("its contest data is not opened"),
        (Some(_), None) => Err("contest data opened where the ballot carries none"),
        (Some(o), Some(d)) => {
            if g.pow_generator(&o.nonce) != d.c0 {
                return Err("the data's nonce does not give C₀ (13.4)");
            }
            let beta = g.pow(k_hat, &o.nonce);
            let pads = data_pads(
                g,
                hi,
                opened.index,
                (&d.c0, &beta),
                (d.c1.len() / 32) as u32,
            );
            if xor_pads(&o.d, &pads).as_ref() != Some(&d.c1) {
                return Err("C₁ is not the released D encrypted with the nonce's keys (13.A)");
            }
            Ok(())
        }
    }
}

/// V-EG21-17 (17.A), 18 (18.1–18.4, 18.A) and 19 (19.A–19.D) for one uncast pre-encrypted ballot opened:
/// every vector re-encrypted from its released nonces at its position, its ψ and short code, the ψ sorted
/// against the ballot's, χ and H_C; the labels the manifest's options in order and then L nulls.
fn check_uncast<G: Eg2Group>(
    ledger: &mut Ledger,
    ctx: &Ctx<G>,
    (manifest, short): Rules<'_>,
    (object, read): (&str, Result<OpenedPre<G>, String>),
    challenged: &BTreeMap<String, Ballot<G>>,
    opened_ids: &mut BTreeSet<String>,
) {
    let g = &ctx.group;
    let opened = match read {
        Ok(o) => o,
        Err(e) => {
            ledger.fail(Check::Eg21v18, object, e);
            return;
        }
    };
    let object = format!("uncast ballot {}", opened.id);
    let got: Vec<u32> = opened.contests.iter().map(|(c, _)| *c).collect();
    let opening = (object.as_str(), opened.id.as_str(), &got[..]);
    let Some((b, style)) = match_opening(ledger, (manifest, challenged), opened_ids, opening, true)
    else {
        return;
    };
    let mut hashes = Vec::with_capacity(got.len());
    for (((index, vectors), (_, mc)), enc) in opened.contests.iter().zip(&style).zip(&b.contests) {
        let m = mc.sequences.len();
        let labels: Vec<Option<&str>> = vectors.iter().map(|v| v.label.as_deref()).collect();
        let want: Vec<Option<&str>> = mc
            .options
            .iter()
            .map(|o| Some(o.as_str()))
            .chain(std::iter::repeat_n(None, mc.limit as usize))
            .collect();
        if labels != want {
            ledger.fail(
                Check::Eg21v19,
                &object,
                format!(
                    "contest {index}: labels {labels:?}, the manifest has {want:?} (19.C, 19.D)"
                ),
            );
            return;
        }
        let mut psis = Vec::with_capacity(vectors.len());
        let mut codes = BTreeSet::new();
        for (at, v) in vectors.iter().enumerate() {
            ledger.examined(Check::Eg21v17, 1);
            if v.nonces.len() != m {
                ledger.fail(
                    Check::Eg21v18,
                    &object,
                    format!(
                        "contest {index} vector {}: {} nonces, not m = {m}",
                        at + 1,
                        v.nonces.len()
                    ),
                );
                return;
            }
            // (18.1)–(18.3)
            let vector = pre_vector(g, &ctx.k_table, at + 1, &v.nonces);
            let psi = selection_hash(g, &b.hi, &vector);
            if let Some(fault) = short_code_fault(short, &psi, &v.short_code) {
                let reason = format!("contest {index} vector {}: {fault}", at + 1);
                ledger.fail(Check::Eg21v17, &object, reason);
            }
            if !codes.insert(v.short_code.as_str()) {
                ledger.fail(
                    Check::Eg21v17,
                    &object,
                    format!("contest {index}: short code {:?} twice", v.short_code),
                );
            }
            psis.push(psi);
        }
        psis.sort_unstable();
        if enc.pre.as_ref().map(|p| &p.hashes) != Some(&psis) {
            ledger.fail(
                Check::Eg21v18,
                &object,
                format!("contest {index}: the re-encrypted vectors do not give the ballot's selection hashes (18.3)"),
            );
        }
        // (18.4)
        hashes.push(pre_contest_hash(&b.hi, *index, &psis));
    }
    if Codes::Printer.confirmation_code(&b.hi, &hashes, &b.chaining) != b.code {
        ledger.fail(
            Check::Eg21v18,
            &object,
            "the re-encrypted ballot does not give its confirmation code (18.A)",
        );
    }
}

/// The first bytes of a 2.1 record's ballot-check parameters (spec/98.3).
pub const BALLOTS_TAG: &[u8] = b"eg21-ballots\n";

/// A 2.1 record's ballot-check parameters: [`keyed_params`] under [`BALLOTS_TAG`].
fn eg21_params<G: Eg2Group>(group: &G, k: &G::Element, he: &[u8; 32], manifest: &[u8]) -> Vec<u8> {
    keyed_params(
        BALLOTS_TAG,
        group.id().name(),
        &group.hash_bytes(k),
        he,
        manifest,
    )
}

/// One ballot's checks on a worker: whether its JSON text passes.
pub(crate) type OneBallot = Box<dyn Fn(&str) -> bool + Send + Sync>;

/// A worker's 2.1 ballot checks from its parameters, read: a ballot line passes when it reads and
/// V-EG21-05…08 (15…17 for a pre-encrypted one) find nothing in it, proofs included.
pub(crate) fn ballot_checker(
    (name, key, he, manifest_bytes): Keyed<'_>,
) -> Result<OneBallot, String> {
    let doc: Value =
        serde_json::from_slice(manifest_bytes).map_err(|e| format!("manifest: {e}"))?;
    let manifest = read_manifest(&doc)?;
    let short = ShortCode::of_manifest(&doc)?;
    fn build<G: Eg2Group>(
        group: G,
        key: &[u8],
        he: [u8; 32],
        (manifest, short): (Manifest, Option<ShortCode>),
    ) -> Result<OneBallot, String> {
        let k = group.read_element(key)?;
        if !group.all_members(&[&k]) {
            return Err("K is not in the group".into());
        }
        let ctx = Ctx::new(group, k, he);
        Ok(Box::new(move |text: &str| {
            let passes = |v: Value| -> Result<bool, String> {
                let b = Ballot::read(&ctx.group, &v)?;
                Ok(check_ballot(&ctx, (&manifest, short), &b, true)
                    .findings
                    .is_empty())
            };
            serde_json::from_str(text)
                .map_err(|e| e.to_string())
                .and_then(passes)
                .unwrap_or(false)
        }))
    }
    let rules = (manifest, short);
    match name {
        b"p256" => build(P256, key, he, rules),
        b"eg2-4096" => build(ModpGroup::eg2_4096(), key, he, rules),
        b"eg2-3072" => build(ModpGroup::eg2_3072(), key, he, rules),
        b"eg2-toy" => build(ModpGroup::eg2_toy(), key, he, rules),
        other => Err(format!("group {:?}", String::from_utf8_lossy(other))),
    }
}

/// One document of a 2.1 record checked alone on P-256 (the fuzz entry, spec/66.3): byte `which` picks (mod
/// 6) a ballot line (read, then V-EG21-05…08 or 15…17 against `manifest_bytes` and a key of g), the
/// guardians' document (read, then V-EG21-02…04), a tally value, an opened challenged ballot, an opened
/// uncast pre-encrypted ballot, or a cast ballot's decrypted contest data. Returns the findings.
pub fn check_document(manifest_bytes: &[u8], which: u8, doc: &[u8]) -> usize {
    let Ok(v) = serde_json::from_slice::<Value>(doc) else {
        return 1;
    };
    let group = P256;
    match which % 6 {
        0 => {
            let manifest_doc: Value = serde_json::from_slice(manifest_bytes).unwrap_or_default();
            let Ok(manifest) = read_manifest(&manifest_doc) else {
                return 0;
            };
            let ctx = Ctx::new(
                group,
                votum_group::Group::generator(&group).clone(),
                [0u8; 32],
            );
            match Ballot::read(&group, &v) {
                Ok(b) => {
                    let short = ShortCode::of_manifest(&manifest_doc).ok().flatten();
                    check_ballot(&ctx, (&manifest, short), &b, true)
                        .findings
                        .len()
                }
                Err(_) => 1,
            }
        }
        1 => match Keys::read(&group, &v) {
            Ok(keys) => {
                let mut ledger = Ledger::new(&Check::EG21);
                let n = keys.guardians.len() as u32;
                let k = keys.guardians.first().map_or(1, |g| g.vote.len() as u32);
                check_keys(&mut ledger, &group, &keys, (n, k));
                let report = ledger.finish("fuzz".into(), "electionguard-2.1", 0);
                report.checks.iter().map(|c| c.findings.len()).sum()
            }
            Err(_) => 1,
        },
        2 => usize::from(TallyValue::read(&group, &v).is_err()),
        3 => usize::from(Opened::read(&group, &v).is_err()),
        4 => usize::from(OpenedPre::read(&group, &v).is_err()),
        _ => usize::from(DecryptedData::read(&group, &v).is_err()),
    }
}

/// One 2.1 ballot checked alone, as the election service checks each ballot before it accepts it (spec/80.11):
/// the per-ballot items of V-EG21-05…08, proofs included. The chain and the device are the caller's to
/// check against what it has accepted.
pub struct Eg21BallotRules<G: Eg2Group> {
    ctx: Ctx<G>,
    manifest: Manifest,
    short: Option<ShortCode>,
}

impl<G: Eg2Group> Eg21BallotRules<G> {
    /// The rules of an election: its group, K, H_E and the manifest's bytes.
    pub fn new(
        group: G,
        k: G::Element,
        he: [u8; 32],
        manifest_bytes: &[u8],
    ) -> Result<Self, String> {
        let doc: Value =
            serde_json::from_slice(manifest_bytes).map_err(|e| format!("manifest: {e}"))?;
        let manifest = read_manifest(&doc)?;
        let short = ShortCode::of_manifest(&doc)?;
        if !group.all_members(&[&k]) {
            return Err("K is not in the group".into());
        }
        Ok(Self {
            ctx: Ctx::new(group, k, he),
            manifest,
            short,
        })
    }

    pub fn group(&self) -> &G {
        &self.ctx.group
    }

    /// The ballot's findings, each with its check's id; none when it passes.
    pub fn check(&self, b: &Ballot<G>) -> Vec<(&'static str, String)> {
        check_ballot(&self.ctx, (&self.manifest, self.short), b, true)
            .findings
            .into_iter()
            .map(|(check, reason)| (check.id(), reason))
            .collect()
    }
}
