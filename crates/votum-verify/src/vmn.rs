//! A Verificatum mix-net (VMN 3.x) session (spec/99): `protInfo.xml` and one or more proof
//! directories (`nizkp/<auxsid>/`), checked as VMN's own verifier `vmnv` checks them, and stricter
//! where `vmnv` is silent (spec/99.9): a session whose valid proofs of shuffle are fewer than the
//! threshold fails here, where `vmnv` exits 0, and the shuffled ciphertexts published beside the
//! proofs must be the ones the proofs lead to.
//!
//! The checks are V-VMN-01..07 (spec/50.10); the cryptography is in `checks::vmn`.

use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use serde_json::json;

use crate::bytetree::Bt;
use crate::checks::vmn::{
    decode_wide_array, plaintexts_hold, verify_ccpos, verify_decryption, verify_posc,
    verify_shuffle, Ciphertexts, Decryption, Derive, ModP, Params, Shuffle, ShuffleProof, VGroup,
};
use crate::checks::vmn_ec::{P192, P224, P256, P384, P521};
use crate::checks::Check;
use crate::options::{Intermediates, Options, ShuffleWorkers};
use crate::report::{Ledger, Report};

/// The widest ciphertexts read (VMN sets no bound; a width is a count of plaintext elements per
/// ciphertext, a handful in practice).
const MAX_WIDTH: usize = 64;

/// The parameters of protInfo.xml that the proofs depend on.
#[derive(Debug, Clone)]
pub struct ProtInfo {
    pub version: String,
    pub sid: String,
    pub nopart: u32,
    pub statdist: u32,
    pub thres: u32,
    pub pgroup: String,
    pub keywidth: u32,
    pub vbitlenro: u32,
    pub ebitlenro: u32,
    pub prg: String,
    pub rohash: String,
    pub corr: String,
    pub width: u32,
    /// each party's `<pkey>` (its bulletin-board signature key), in party order
    pub pkeys: Vec<String>,
    /// the file as read (a cluster's task reads it again)
    pub text: String,
}

impl ProtInfo {
    /// Reads protInfo.xml (no DTD; the top-level elements of `<protocol>`, the parties' ignored).
    pub fn parse(text: &str) -> Result<ProtInfo, String> {
        let doc = roxmltree::Document::parse(text).map_err(|e| format!("not XML: {e}"))?;
        let root = doc.root_element();
        if root.tag_name().name() != "protocol" {
            return Err(format!(
                "the root element is <{}>, not <protocol>",
                root.tag_name().name()
            ));
        }
        let field = |name: &str| -> Result<String, String> {
            let mut found = root
                .children()
                .filter(|n| n.is_element() && n.tag_name().name() == name);
            let node = found.next().ok_or_else(|| format!("no <{name}>"))?;
            if found.next().is_some() {
                return Err(format!("<{name}> given twice"));
            }
            Ok(node.text().unwrap_or("").trim().to_string())
        };
        let int = |name: &str| -> Result<u32, String> {
            field(name)?
                .parse::<u32>()
                .map_err(|_| format!("<{name}> is not a non-negative integer"))
        };
        let info = ProtInfo {
            text: text.to_string(),
            version: field("version")?,
            sid: field("sid")?,
            nopart: int("nopart")?,
            statdist: int("statdist")?,
            thres: int("thres")?,
            pgroup: field("pgroup")?,
            keywidth: int("keywidth")?,
            vbitlenro: int("vbitlenro")?,
            ebitlenro: int("ebitlenro")?,
            prg: field("prg")?,
            rohash: field("rohash")?,
            corr: field("corr")?,
            width: int("width")?,
            pkeys: root
                .children()
                .filter(|n| n.is_element() && n.tag_name().name() == "party")
                .map(|p| {
                    p.children()
                        .find(|n| n.is_element() && n.tag_name().name() == "pkey")
                        .and_then(|n| n.text())
                        .unwrap_or("")
                        .trim()
                        .to_string()
                })
                .collect(),
        };
        if !valid_sid(&info.sid) {
            return Err(format!("<sid> `{}` is not a session identifier", info.sid));
        }
        if info.nopart == 0 || info.nopart > 25 || info.thres == 0 || info.thres > info.nopart {
            return Err(format!(
                "{} parties with threshold {}: VMN allows 1 to 25 parties and a threshold up to their number",
                info.nopart, info.thres
            ));
        }
        if info.statdist > 256
            || !(1..=4096).contains(&info.vbitlenro)
            || !(1..=4096).contains(&info.ebitlenro)
        {
            return Err("statdist, vbitlenro or ebitlenro out of range".into());
        }
        Ok(info)
    }

    /// The derivations (random oracle, PRG, generators, challenges) of the proof directory `auxsid`.
    fn derive(&self, auxsid: &str) -> Result<Derive, String> {
        Derive::new(&Params {
            version: &self.version,
            sid: &self.sid,
            auxsid,
            statdist: self.statdist,
            vbitlenro: self.vbitlenro,
            ebitlenro: self.ebitlenro,
            prg: &self.prg,
            pgroup: &self.pgroup,
            rohash: &self.rohash,
        })
    }
}

/// VMN's session identifiers: a letter, then letters and digits.
fn valid_sid(s: &str) -> bool {
    let mut c = s.chars();
    c.next().is_some_and(|f| f.is_ascii_alphabetic())
        && s.len() <= 1024
        && c.all(|x| x.is_ascii_alphanumeric())
}

/// The session's group, from its `pgroup` string (`<description>::<hex of a marshalled group>`).
enum AnyGroup {
    P192(P192),
    P224(P224),
    P256(P256),
    P384(P384),
    P521(P521),
    ModP(Box<ModP>),
}

/// `$body` with `$g` bound to the session's group, whichever it is.
macro_rules! with_group {
    ($group:expr, $g:ident => $body:expr) => {
        match $group {
            AnyGroup::P192($g) => $body,
            AnyGroup::P224($g) => $body,
            AnyGroup::P256($g) => $body,
            AnyGroup::P384($g) => $body,
            AnyGroup::P521($g) => $body,
            AnyGroup::ModP(boxed) => {
                let $g = boxed.as_ref();
                $body
            }
        }
    };
}

fn group_of(pgroup: &str) -> Result<AnyGroup, String> {
    let hex = pgroup
        .rsplit_once("::")
        .map(|(_, h)| h)
        .ok_or("<pgroup> is not `description::hex`")?;
    let bytes =
        crate::report::unhex(hex.trim()).ok_or("<pgroup>: the marshalled group is not hex")?;
    let tree = Bt::parse(&bytes).map_err(|e| format!("<pgroup>: {e}"))?;
    let c = tree.children(2, "<pgroup>")?;
    let class = c[0].leaf("<pgroup> class")?;
    match class {
        b"com.verificatum.arithm.ECqPGroup" => {
            let name = c[1].leaf("<pgroup> curve")?;
            let label = String::from_utf8_lossy(name).into_owned();
            match name {
                b"P-192" | b"secp192r1" => Ok(AnyGroup::P192(P192::new(&label))),
                b"P-224" | b"secp224r1" => Ok(AnyGroup::P224(P224::new(&label))),
                b"P-256" | b"secp256r1" => Ok(AnyGroup::P256(P256::new(&label))),
                b"P-384" | b"secp384r1" => Ok(AnyGroup::P384(P384::new(&label))),
                b"P-521" | b"secp521r1" => Ok(AnyGroup::P521(P521::new(&label))),
                _ => Err(format!(
                    "<pgroup>: the curve {label} (the NIST curves P-192, P-224, P-256, P-384 and P-521 are read)"
                )),
            }
        }
        b"com.verificatum.arithm.ModPGroup" => {
            Ok(AnyGroup::ModP(Box::new(ModP::from_tree(&c[1])?)))
        }
        other => Err(format!(
            "<pgroup>: the group class {} (ECqPGroup and ModPGroup are read)",
            String::from_utf8_lossy(other)
        )),
    }
}

/// Where protInfo.xml and the proof directories of a session are, from the path given: a proof
/// directory (it holds `type`), or a session directory holding `protInfo.xml` and `nizkp/*/` or
/// `dir/nizkp/*/`. protInfo.xml is looked for in the directory and its three parents.
fn locate(path: &Path) -> Result<(PathBuf, Vec<PathBuf>), String> {
    if !path.is_dir() {
        return Err(format!("{} is not a directory", path.display()));
    }
    let is_proof_dir = |p: &Path| p.join("type").is_file() && p.join("proofs").is_dir();
    let proof_dirs: Vec<PathBuf> = if is_proof_dir(path) {
        vec![path.to_path_buf()]
    } else {
        let mut found = Vec::new();
        for base in [path.join("nizkp"), path.join("dir").join("nizkp")] {
            if let Ok(entries) = std::fs::read_dir(&base) {
                let mut dirs: Vec<PathBuf> = entries
                    .flatten()
                    .map(|e| e.path())
                    .filter(|p| is_proof_dir(p))
                    .collect();
                dirs.sort();
                found.extend(dirs);
            }
        }
        found
    };
    if proof_dirs.is_empty() {
        return Err(format!(
            "{} holds no VMN proof directory (a directory with `type` and `proofs/`)",
            path.display()
        ));
    }
    let mut dir = Some(path);
    for _ in 0..4 {
        let Some(d) = dir else { break };
        let p = d.join("protInfo.xml");
        if p.is_file() {
            return Ok((p, proof_dirs));
        }
        dir = d.parent();
    }
    Err(format!(
        "no protInfo.xml in {} or its parents",
        path.display()
    ))
}

/// Whether `path` is a VMN session (see [`locate`]) whose protInfo.xml names a `<protocol>`.
pub fn is_vmn_record(path: &Path) -> bool {
    locate(path).is_ok_and(|(p, _)| {
        std::fs::read(&p).is_ok_and(|b| b.windows(10).any(|w| w == b"<protocol>"))
    })
}

fn read(path: &Path) -> Result<Vec<u8>, String> {
    // a list's bytes, its decoded elements (about as many bytes again for P-256), the list beside it
    // in a shuffle and the generators: about 4 times
    crate::options::read_whole(path, 4)
}

fn read_text(path: &Path) -> Result<String, String> {
    let b = read(path)?;
    String::from_utf8(b)
        .map(|s| s.trim().to_string())
        .map_err(|_| format!("{} is not text", path.display()))
}

/// Verifies a VMN session (see the module's description).
pub fn verify_vmn_record(path: &Path, mut options: Options<'_>) -> (Report, Intermediates) {
    let record = path.display().to_string();
    let mut ledger = Ledger::new(&Check::VMN);
    let mut out = Intermediates::default();
    let (info_path, dirs) = match locate(path) {
        Ok(x) => x,
        Err(e) => {
            ledger.error(Check::Vmn01, &record, e);
            return (ledger.finish(record, "unverified", 0), out);
        }
    };
    let info = match read(&info_path).and_then(|bytes| {
        out.values.insert(
            "protinfo_sha256".into(),
            json!(crate::report::hex(
                &crate::checks::vmn::Hash::Sha256.hash(&bytes)
            )),
        );
        let text = String::from_utf8(bytes).map_err(|_| "protInfo.xml is not UTF-8".to_string())?;
        ProtInfo::parse(&text)
    }) {
        Ok(i) => i,
        Err(e) => {
            ledger.error(Check::Vmn01, "protInfo.xml", e);
            return (ledger.finish(record, "unverified", 0), out);
        }
    };
    ledger.examined(Check::Vmn01, 1);
    let group = match group_of(&info.pgroup) {
        Ok(g) => g,
        Err(e) => {
            ledger.error(Check::Vmn02, "protInfo.xml", e);
            return (ledger.finish(record, "unverified", 0), out);
        }
    };
    let mut sessions = Vec::new();
    let mut total = 0u64;
    for dir in &dirs {
        let workers = options.shuffle_workers.as_deref_mut();
        let summary = with_group!(&group, g => verify_session(&mut ledger, &info, g, dir, workers));
        total += summary.ciphertexts as u64;
        sessions.push(summary);
    }
    if let Some(session_root) = info_path.parent() {
        board(&mut ledger, &info, session_root, &sessions);
    }
    let group_name = with_group!(&group, g => g.name());
    out.values.insert("group".into(), json!(group_name));
    out.values.insert("sid".into(), json!(info.sid));
    out.values.insert(
        "sessions".into(),
        json!(sessions
            .iter()
            .map(|s| json!({
                "auxsid": s.auxsid,
                "type": s.kind,
                "ciphertexts": s.ciphertexts,
                "valid_shuffles": s.valid_shuffles,
                "plaintexts": s.plaintexts,
                "counts": s.counts,
            }))
            .collect::<Vec<_>>()),
    );
    let form = if sessions
        .iter()
        .any(|s| s.kind == "decryption" || s.kind == "mixing")
    {
        "vmn-mixing"
    } else {
        "vmn-shuffling"
    };
    (ledger.finish(record, form, total), out)
}

/// What one proof directory held.
#[derive(Default)]
struct Summary {
    /// the proof directory
    dir: PathBuf,
    auxsid: String,
    kind: String,
    ciphertexts: usize,
    valid_shuffles: u32,
    plaintexts: usize,
    /// what the plaintexts decode to (VMN's encoding of bytes into group elements), and how many
    /// times each: text where the bytes are printable UTF-8, else `0x` and hex
    counts: BTreeMap<String, u64>,
}

/// The files of one proof directory, read and parsed on demand; an unreadable one is a finding.
struct Dir<'l> {
    root: PathBuf,
    name: String,
    ledger: &'l mut Ledger,
}

impl Dir<'_> {
    fn proofs(&self, file: &str) -> PathBuf {
        self.root.join("proofs").join(file)
    }

    /// Party l's output list: `proofs/CiphertextsNN.bt`, or for the last active party without one the
    /// session's `ShuffledCiphertexts.bt`.
    fn output(&self, l: u32, active: u32) -> PathBuf {
        let file = self.proofs(&format!("Ciphertexts{l:02}.bt"));
        if l == active && !file.exists() {
            self.root.join("ShuffledCiphertexts.bt")
        } else {
            file
        }
    }

    fn object(&self, file: &Path) -> String {
        let rel = file.strip_prefix(&self.root).unwrap_or(file);
        format!("{}/{}", self.name, rel.display())
    }

    /// The bytes of `file`, or an Error finding under `check`.
    fn bytes(&mut self, check: Check, file: &Path) -> Option<Vec<u8>> {
        match read(file) {
            Ok(b) => Some(b),
            Err(e) => {
                let o = self.object(file);
                self.ledger.error(check, &o, e);
                None
            }
        }
    }
}

fn verify_session<G: VGroup>(
    ledger: &mut Ledger,
    info: &ProtInfo,
    group: &G,
    root: &Path,
    workers: Option<&mut (dyn ShuffleWorkers + '_)>,
) -> Summary {
    let name = root.file_name().map_or_else(
        || "nizkp".into(),
        |n| format!("nizkp/{}", n.to_string_lossy()),
    );
    let mut dir = Dir {
        root: root.to_path_buf(),
        name,
        ledger,
    };
    let mut summary = Summary {
        dir: root.to_path_buf(),
        ..Summary::default()
    };
    let Some(setup) = session_setup(&mut dir, info, group) else {
        return summary;
    };
    summary.auxsid.clone_from(&setup.auxsid);
    summary.kind.clone_from(&setup.kind);
    let derive = match info.derive(&setup.auxsid) {
        Ok(d) => d,
        Err(e) => {
            dir.ledger.error(Check::Vmn01, "protInfo.xml", e);
            return summary;
        }
    };
    let Some(input) = read_ciphertexts(
        &mut dir,
        group,
        Check::Vmn01,
        &root.join("Ciphertexts.bt"),
        setup.width,
    ) else {
        return summary;
    };
    summary.ciphertexts = input.len();
    let mut current = input;
    // what this directory's type does not hold passes with nothing examined, and says so
    let none = |dir: &mut Dir<'_>, checks: &[Check], why: &str| {
        let o = dir.name.clone();
        for c in checks {
            dir.ledger.examined(*c, 0);
            dir.ledger.warn(*c, &o, format!("nothing to check: {why}"));
        }
    };
    if setup.kind == "decryption" {
        none(
            &mut dir,
            &[Check::Vmn03, Check::Vmn04],
            "a decryption session holds no shuffle",
        );
    } else if !dir.proofs("maxciph").exists() {
        none(
            &mut dir,
            &[Check::Vmn04],
            "the shuffles were not precomputed",
        );
    }
    if setup.kind == "shuffling" {
        none(
            &mut dir,
            &[Check::Vmn05, Check::Vmn06],
            "a shuffling session holds no decryption",
        );
    }
    if setup.kind != "decryption" {
        let remote = match workers {
            Some(w) if !dir.proofs("maxciph").exists() => {
                match remote_shuffles(&dir, info, &setup, w) {
                    ControlFlow::Continue(verdicts) => verdicts,
                    // the caller stopped (Ctrl-C, a lost cluster): the checks not reached stay not run
                    ControlFlow::Break(()) => return summary,
                }
            }
            _ => None,
        };
        match shuffles(&mut dir, info, group, &derive, &setup, current, remote) {
            Some((out, valid)) => {
                summary.valid_shuffles = valid;
                current = out;
            }
            None => return summary,
        }
    }
    if setup.kind != "shuffling" {
        if let Some(plaintexts) = decrypt(&mut dir, info, group, &derive, &setup, &current) {
            summary.plaintexts = current.len();
            summary.counts = decoded_counts(group, &plaintexts);
        }
    }
    summary
}

/// A proof directory's type, auxsid, key and active threshold (V-VMN-01, V-VMN-02).
struct Setup<E> {
    kind: String,
    auxsid: String,
    y: E,
    active: u32,
    /// the ciphertexts' width w (their plaintexts are in G^w)
    width: usize,
}

fn session_setup<G: VGroup>(dir: &mut Dir<'_>, info: &ProtInfo, group: &G) -> Option<Setup<G::E>> {
    let root = dir.root.clone();
    let text = |dir: &mut Dir<'_>, file: &Path| match read_text(file) {
        Ok(t) => Some(t),
        Err(e) => {
            let o = dir.object(file);
            dir.ledger.error(Check::Vmn01, &o, e);
            None
        }
    };
    let version = text(dir, &root.join("version"))?;
    let kind = text(dir, &root.join("type"))?;
    let auxsid = text(dir, &root.join("auxsid"))?;
    let width = text(dir, &root.join("width"))?;
    let active = text(dir, &dir.proofs("activethreshold"))?;
    let name = dir.name.clone();
    let bad = |dir: &mut Dir<'_>, reason: String| {
        dir.ledger.error(Check::Vmn01, &name, reason);
    };
    if version != info.version || !info.version.starts_with("3.") {
        bad(
            dir,
            format!(
                "proofs of VMN {version} under protInfo.xml of VMN {}: VMN 3.x proofs are read",
                info.version
            ),
        );
        return None;
    }
    if !["mixing", "shuffling", "decryption"].contains(&kind.as_str()) {
        bad(dir, format!("unknown type `{kind}`"));
        return None;
    }
    if !valid_sid(&auxsid) {
        bad(
            dir,
            format!("auxsid `{auxsid}` is not a session identifier"),
        );
        return None;
    }
    if info.corr != "noninteractive" {
        bad(
            dir,
            format!(
                "<corr> is `{}`: only non-interactive proofs can be verified",
                info.corr
            ),
        );
        return None;
    }
    let width = match width.parse::<usize>() {
        Ok(w) if (1..=MAX_WIDTH).contains(&w) => w,
        _ => {
            bad(
                dir,
                format!("width `{width}` is not a number from 1 to {MAX_WIDTH}"),
            );
            return None;
        }
    };
    if info.keywidth != 1 {
        bad(
            dir,
            format!(
                "key width {}: only key width 1 is read (one El Gamal key for every factor)",
                info.keywidth
            ),
        );
        return None;
    }
    let active: u32 = match active.parse() {
        Ok(a) if a >= info.thres && a <= info.nopart => a,
        _ => {
            bad(dir, format!("active threshold `{active}` is not between the threshold {} and the {} parties", info.thres, info.nopart));
            return None;
        }
    };
    dir.ledger.examined(Check::Vmn01, 1);
    // the joint key: (g, y), g the group's standard generator
    let fpk = root.join("FullPublicKey.bt");
    let bytes = dir.bytes(Check::Vmn02, &fpk)?;
    match joint_key(group, &bytes) {
        Ok(y) => {
            dir.ledger.examined(Check::Vmn02, 1);
            Some(Setup {
                kind,
                auxsid,
                y,
                active,
                width,
            })
        }
        Err(e) => {
            let o = dir.object(&fpk);
            dir.ledger.fail(Check::Vmn02, &o, e);
            None
        }
    }
}

/// The joint key y of FullPublicKey.bt, node(g, y), whose g must be the group's standard generator.
fn joint_key<G: VGroup>(group: &G, bytes: &[u8]) -> Result<G::E, String> {
    let t = Bt::parse(bytes)?;
    let c = t.children(2, "FullPublicKey")?;
    let (g, y) = (group.decode(&c[0], "g")?, group.decode(&c[1], "y")?);
    if g != group.g() {
        return Err("the key's basis is not the group's standard generator".into());
    }
    Ok(y)
}

fn read_ciphertexts<G: VGroup>(
    dir: &mut Dir<'_>,
    group: &G,
    check: Check,
    file: &Path,
    width: usize,
) -> Option<Ciphertexts<G::E>> {
    let bytes = dir.bytes(check, file)?;
    let o = dir.object(file);
    match Bt::parse(&bytes).and_then(|t| Ciphertexts::decode(group, &t, width, "ciphertexts")) {
        Ok(c) => Some(c),
        Err(e) => {
            dir.ledger.fail(check, &o, e);
            None
        }
    }
}

/// The proofs of shuffle of parties 1..=active (V-VMN-03), each taking the previous one's output:
/// a party whose proof fails is skipped, its output replaced by its input, as in VMN; fewer valid
/// proofs than the threshold fail the check. Returns the last output and the count of valid proofs.
fn shuffles<G: VGroup>(
    dir: &mut Dir<'_>,
    info: &ProtInfo,
    group: &G,
    derive: &Derive,
    setup: &Setup<G::E>,
    input: Ciphertexts<G::E>,
    remote: Option<Vec<(u32, Verdict)>>,
) -> Option<(Ciphertexts<G::E>, u32)> {
    let n = input.len();
    // with precomputation, the commitments and their proofs cover `maxciph` generators (V-VMN-04)
    let precomp = dir.proofs("maxciph").exists();
    let maxciph = if precomp {
        let file = dir.proofs("maxciph");
        // no more generators than the largest permutation commitment can hold (each element takes
        // at least 5 bytes): a forged count cannot make the verifier derive millions for nothing
        let room = (1..=setup.active)
            .filter_map(|l| {
                std::fs::metadata(dir.proofs(&format!("PermutationCommitment{l:02}.bt"))).ok()
            })
            .map(|m| m.len() as usize / 5)
            .max()
            .unwrap_or(0);
        match read_text(&file).map(|t| t.parse::<usize>()) {
            Ok(Ok(m)) if m >= n && m <= room => m,
            _ => {
                let o = dir.object(&file);
                dir.ledger.fail(
                    Check::Vmn04,
                    &o,
                    format!(
                        "not a count of at least the {n} ciphertexts and at most the {room} elements a permutation commitment holds"
                    ),
                );
                return None;
            }
        }
    } else {
        n
    };
    let h = derive.generators(group, maxciph);
    let mut current = input;
    let mut valid = 0u32;
    // a cluster's verdicts hold for each party's proof against the previous published output: they
    // are taken while every proof before passed (so that output is this party's input), and only a
    // pass is taken; anything else is checked here, as is everything after a proof that failed
    let mut remote = remote.map(|v| v.into_iter().collect::<std::collections::BTreeMap<_, _>>());
    let mut chain_intact = true;
    for l in 1..=setup.active {
        let (commitment_file, reply_file) = if precomp {
            (
                format!("CCPoSCommitment{l:02}.bt"),
                format!("CCPoSReply{l:02}.bt"),
            )
        } else {
            (
                format!("PoSCommitment{l:02}.bt"),
                format!("PoSReply{l:02}.bt"),
            )
        };
        let commitment_file = dir.proofs(&commitment_file);
        if !commitment_file.exists() {
            continue;
        }
        let out_file = dir.output(l, setup.active);
        let mut files = vec![
            dir.proofs(&format!("PermutationCommitment{l:02}.bt")),
            commitment_file,
            dir.proofs(&reply_file),
        ];
        if precomp {
            files.push(dir.proofs(&format!("PoSCCommitment{l:02}.bt")));
            files.push(dir.proofs(&format!("PoSCReply{l:02}.bt")));
            files.push(dir.proofs(&format!("KeepList{l:02}.bt")));
        }
        let mut bytes = Vec::new();
        for f in &files {
            bytes.push(dir.bytes(Check::Vmn03, f)?);
        }
        let output = read_ciphertexts(dir, group, Check::Vmn03, &out_file, setup.width)?;
        let statement = Shuffle {
            group,
            y: &setup.y,
            h: &h,
            input: &current,
            output: &output,
        };
        let from_cluster = remote
            .as_mut()
            .and_then(|r| r.remove(&l))
            .filter(|v| chain_intact && matches!(v, Ok(None)));
        let verdict = if from_cluster.is_some() {
            Ok(())
        } else if precomp {
            let keep = match keep_list(&bytes[5], maxciph, n) {
                Ok(k) => k,
                Err(e) => {
                    let o = dir.object(&files[5]);
                    dir.ledger.fail(Check::Vmn04, &o, e);
                    return None;
                }
            };
            precomputed(dir, derive, &statement, &bytes, &keep, l)
        } else {
            (|| {
                let proof = ShuffleProof {
                    permutation_commitment: Bt::parse(&bytes[0])?,
                    commitment: Bt::parse(&bytes[1])?,
                    reply: Bt::parse(&bytes[2])?,
                };
                verify_shuffle(derive, &statement, &proof)
            })()
        };
        dir.ledger.examined(Check::Vmn03, 1);
        match verdict {
            Ok(()) => {
                valid += 1;
                current = output;
            }
            Err(e) => {
                chain_intact = false;
                let o = format!("{}/proofs party {l}", dir.name);
                dir.ledger.warn(
                    Check::Vmn03,
                    &o,
                    format!("the proof of shuffle fails ({e}): as in VMN, this party's output is replaced by its input"),
                );
            }
        }
    }
    let name = dir.name.clone();
    if valid < info.thres {
        dir.ledger.fail(
            Check::Vmn03,
            &name,
            format!(
                "{valid} valid proofs of shuffle, fewer than the threshold {}: no honest party's shuffle is proven",
                info.thres
            ),
        );
        return None;
    }
    // the published shuffled list must be the one the valid proofs lead to
    let shuffled = dir.root.join("ShuffledCiphertexts.bt");
    if shuffled.exists() {
        let published = read_ciphertexts(dir, group, Check::Vmn03, &shuffled, setup.width)?;
        if published != current {
            let o = dir.object(&shuffled);
            dir.ledger.fail(
                Check::Vmn03,
                &o,
                "the published shuffled ciphertexts are not the output of the valid proofs of shuffle",
            );
            return None;
        }
    }
    Some((current, valid))
}

/// What a cluster's shuffle task of a VMN session starts with (spec/98.3): the tag, then a ByteTree
/// node of protInfo.xml, the proof directory's auxsid and its width. The mix record's task tells
/// the two apart by the tag (`crate::mix::check_shuffle_task`).
pub(crate) const SHUFFLE_TAG: &[u8] = b"vmn-shuffle\n";

/// A shuffle task's answer: `Ok(None)` the proof holds, `Ok(Some(reason))` it does not, `Err` it
/// could not be checked.
type Verdict = Result<Option<String>, String>;

/// Hands every party's proof of shuffle to the cluster at once (`workers`), each against the output
/// published before it (the input list for the first), and collects the verdicts, by party. `None`
/// when the files cannot be read (the proofs are then all checked here, for their findings); `Break`
/// when the workers stop the verification.
fn remote_shuffles(
    dir: &Dir<'_>,
    info: &ProtInfo,
    setup: &Setup<impl Clone>,
    workers: &mut (dyn ShuffleWorkers + '_),
) -> ControlFlow<(), Option<Vec<(u32, Verdict)>>> {
    let mut params = SHUFFLE_TAG.to_vec();
    crate::bytetree::write_node(&mut params, 3);
    crate::bytetree::write_leaf(&mut params, info.text.as_bytes());
    crate::bytetree::write_leaf(&mut params, setup.auxsid.as_bytes());
    crate::bytetree::write_leaf(&mut params, setup.width.to_string().as_bytes());
    let Ok(joint) = read(&dir.root.join("FullPublicKey.bt")) else {
        return ControlFlow::Continue(None);
    };
    let Ok(mut input) = read(&dir.root.join("Ciphertexts.bt")) else {
        return ControlFlow::Continue(None);
    };
    // every party's files first: a file that does not read leaves every proof to this process
    let mut jobs = Vec::new();
    for l in 1..=setup.active {
        let commitment = dir.proofs(&format!("PoSCommitment{l:02}.bt"));
        if !commitment.exists() {
            continue;
        }
        let out_file = dir.output(l, setup.active);
        let files = [
            dir.proofs(&format!("PermutationCommitment{l:02}.bt")),
            commitment,
            dir.proofs(&format!("PoSReply{l:02}.bt")),
            out_file,
        ];
        let mut payload = Vec::new();
        crate::bytetree::write_node(&mut payload, files.len());
        let mut output = Vec::new();
        for f in &files {
            let Ok(bytes) = read(f) else {
                return ControlFlow::Continue(None);
            };
            crate::bytetree::write_leaf(&mut payload, &bytes);
            output = bytes;
        }
        jobs.push((l, std::mem::replace(&mut input, output), payload));
    }
    workers.setup(&params, &joint)?;
    let mut parties = Vec::new();
    for (l, input, payload) in jobs {
        let mut context = [0u8; 32];
        context[..4].copy_from_slice(&l.to_be_bytes());
        workers.submit(&context, &input, &payload)?;
        parties.push(l);
    }
    let verdicts = workers.collect()?;
    if verdicts.len() != parties.len() {
        return ControlFlow::Continue(None);
    }
    ControlFlow::Continue(Some(parties.into_iter().zip(verdicts).collect()))
}

/// One party's proof of shuffle of a VMN session checked on its own (a cluster's task, spec/98.3):
/// `parameters` as [`SHUFFLE_TAG`] says, `joint` the session's FullPublicKey.bt, `input` the list
/// the party shuffled, `payload` a node of its permutation commitment, PoS commitment, reply and
/// output list. `Ok(None)` the proof holds, `Ok(Some(reason))` it does not, `Err` a file that does
/// not read.
pub fn check_shuffle_task(
    parameters: &[u8],
    joint: &[u8],
    input: &[u8],
    payload: &[u8],
) -> Result<Option<String>, String> {
    let body = parameters
        .strip_prefix(SHUFFLE_TAG)
        .ok_or("not a Verificatum shuffle task")?;
    let tree = Bt::parse(body)?;
    let c = tree.children(3, "task parameters")?;
    let info = std::str::from_utf8(c[0].leaf("protInfo.xml")?)
        .map_err(|_| "protInfo.xml is not UTF-8".to_string())
        .and_then(ProtInfo::parse)?;
    let auxsid = std::str::from_utf8(c[1].leaf("auxsid")?).map_err(|e| e.to_string())?;
    let width: usize = std::str::from_utf8(c[2].leaf("width")?)
        .ok()
        .and_then(|w| w.parse().ok())
        .filter(|w| (1..=MAX_WIDTH).contains(w))
        .ok_or("a bad width")?;
    let group = group_of(&info.pgroup)?;
    with_group!(&group, g => shuffle_task(g, &info, auxsid, width, joint, input, payload))
}

fn shuffle_task<G: VGroup>(
    group: &G,
    info: &ProtInfo,
    auxsid: &str,
    width: usize,
    joint: &[u8],
    input: &[u8],
    payload: &[u8],
) -> Result<Option<String>, String> {
    let derive = info.derive(auxsid)?;
    let y = joint_key(group, joint)?;
    let input = Ciphertexts::decode(group, &Bt::parse(input)?, width, "ciphertexts")?;
    let files = Bt::parse(payload)?;
    let files = files.children(4, "task payload")?;
    let leaf = |i: usize| files[i].leaf("task file");
    let output = Ciphertexts::decode(group, &Bt::parse(leaf(3)?)?, width, "ciphertexts")?;
    let h = derive.generators(group, input.len());
    let statement = Shuffle {
        group,
        y: &y,
        h: &h,
        input: &input,
        output: &output,
    };
    let verdict = (|| {
        let proof = ShuffleProof {
            permutation_commitment: Bt::parse(leaf(0)?)?,
            commitment: Bt::parse(leaf(1)?)?,
            reply: Bt::parse(leaf(2)?)?,
        };
        verify_shuffle(&derive, &statement, &proof)
    })();
    Ok(verdict.err())
}

/// A keep list: a leaf of `maxciph` bytes, each 0 or 1, `n` of them 1 (which of the precomputed
/// commitment's elements the shuffle of `n` ciphertexts uses).
fn keep_list(bytes: &[u8], maxciph: usize, n: usize) -> Result<Vec<bool>, String> {
    let t = Bt::parse(bytes)?;
    let b = t.leaf("keep list")?;
    if b.len() != maxciph || b.iter().any(|&x| x > 1) {
        return Err(format!("a keep list of {} bytes for {maxciph}", b.len()));
    }
    let keep: Vec<bool> = b.iter().map(|&x| x == 1).collect();
    let kept = keep.iter().filter(|&&k| k).count();
    if kept != n {
        return Err(format!(
            "a keep list that keeps {kept} of {maxciph} for {n} ciphertexts"
        ));
    }
    Ok(keep)
}

/// A precomputed shuffle (VMN's PoSC then CCPoS): the proof that the permutation commitment commits
/// to a permutation, over all `maxciph` generators (V-VMN-04; a failure is a warning and the party's
/// shuffle is then invalid, as in VMN), then the commitment-consistent proof over the kept part.
/// `bytes` are the permutation commitment, the CCPoS commitment and reply, the PoSC commitment and
/// reply (and the keep list, already read into `keep`).
fn precomputed<G: VGroup>(
    dir: &mut Dir<'_>,
    derive: &Derive,
    s: &Shuffle<'_, G>,
    bytes: &[Vec<u8>],
    keep: &[bool],
    l: u32,
) -> Result<(), String> {
    let group = s.group;
    let u = Bt::parse(&bytes[0]).and_then(|t| group.decode_array(&t, "permutation commitment"))?;
    let posc = (|| {
        verify_posc(
            derive,
            group,
            s.h,
            &u,
            &Bt::parse(&bytes[3])?,
            &Bt::parse(&bytes[4])?,
        )
    })();
    dir.ledger.examined(Check::Vmn04, 1);
    if let Err(e) = posc {
        let o = format!("{}/proofs party {l}", dir.name);
        dir.ledger.warn(
            Check::Vmn04,
            &o,
            format!("the precomputed proof of the permutation commitment fails ({e})"),
        );
        return Err(format!("its permutation commitment is not proven: {e}"));
    }
    let kept: Vec<G::E> = u
        .iter()
        .zip(keep)
        .filter(|(_, k)| **k)
        .map(|(x, _)| x.clone())
        .collect();
    verify_ccpos(
        derive,
        s,
        &kept,
        &Bt::parse(&bytes[1])?,
        &Bt::parse(&bytes[2])?,
    )
}

/// The decryption (V-VMN-05) and the plaintexts (V-VMN-06); returns the count of plaintexts.
fn decrypt<G: VGroup>(
    dir: &mut Dir<'_>,
    info: &ProtInfo,
    group: &G,
    derive: &Derive,
    setup: &Setup<G::E>,
    input: &Ciphertexts<G::E>,
) -> Option<Vec<Vec<G::E>>> {
    let k = info.nopart;
    let name = dir.name.clone();
    let fail = |dir: &mut Dir<'_>, reason: String| {
        dir.ledger.fail(Check::Vmn05, &name, reason);
    };
    // the polynomial in the exponent: `thres` coefficients, the constant one the joint key
    let pie_file = dir.proofs("PolynomialInExponent.bt");
    let pie_bytes = dir.bytes(Check::Vmn05, &pie_file)?;
    let pie = match Bt::parse(&pie_bytes) {
        Ok(t) => t,
        Err(e) => {
            fail(dir, format!("PolynomialInExponent.bt: {e}"));
            return None;
        }
    };
    let coefficients = pie
        .node("PolynomialInExponent")
        .and_then(|_| group.decode_array(&pie, "PolynomialInExponent"));
    match coefficients {
        Ok(c) if c.len() == info.thres as usize && c[0] == setup.y => {}
        Ok(_) => {
            dir.ledger.fail(
                Check::Vmn02,
                &format!("{name}/proofs/PolynomialInExponent.bt"),
                "the polynomial's constant term is not the joint key, or its degree is not threshold - 1",
            );
            return None;
        }
        Err(e) => {
            fail(dir, e);
            return None;
        }
    }
    // which parties' factors are combined
    let ci = dir.proofs("CorrectIndices.bt");
    let ci_bytes = dir.bytes(Check::Vmn05, &ci)?;
    let correct =
        match Bt::parse(&ci_bytes).and_then(|t| t.leaf("CorrectIndices").map(<[u8]>::to_vec)) {
            Ok(b) if b.len() == k as usize + 1 && b.iter().all(|&x| x <= 1) => b,
            _ => {
                fail(
                    dir,
                    "CorrectIndices.bt is not a list of the parties' verdicts".into(),
                );
                return None;
            }
        };
    let set: Vec<u32> = (1..=k)
        .filter(|&l| correct[l as usize] == 1)
        .take(info.thres as usize)
        .collect();
    if set.len() < info.thres as usize {
        fail(
            dir,
            format!(
                "{} correct decryption factors, fewer than the threshold {}",
                set.len(),
                info.thres
            ),
        );
        return None;
    }
    let mut factors = Vec::new();
    let mut commitments = Vec::new();
    let mut replies = Vec::new();
    let mut raw = Vec::new();
    for l in 1..=k {
        let files = [
            dir.proofs(&format!("DecryptionFactors{l:02}.bt")),
            dir.proofs(&format!("DecrFactCommitment{l:02}.bt")),
            dir.proofs(&format!("DecrFactReply{l:02}.bt")),
        ];
        let mut three = Vec::new();
        for f in &files {
            three.push(dir.bytes(Check::Vmn05, f)?);
        }
        raw.push(three);
    }
    for (l, three) in raw.iter().enumerate() {
        let parsed = (|| {
            let decoded = decode_wide_array(
                group,
                &Bt::parse(&three[0])?,
                setup.width,
                "decryption factors",
            )?;
            Ok::<_, String>((decoded, Bt::parse(&three[1])?, Bt::parse(&three[2])?))
        })();
        match parsed {
            Ok((decoded, c, r)) => {
                factors.push(decoded);
                commitments.push(c);
                replies.push(r);
            }
            Err(e) => {
                fail(dir, format!("party {}: {e}", l + 1));
                return None;
            }
        }
    }
    let verdict = verify_decryption(
        derive,
        &Decryption {
            group,
            y: &setup.y,
            input,
            polynomial: &pie,
            factors: &factors,
            commitments: &commitments,
            replies: &replies,
            set: &set,
        },
    );
    let combined = match verdict {
        Ok(c) => {
            dir.ledger.examined(Check::Vmn05, input.len() as u64);
            c
        }
        Err(e) => {
            fail(dir, e);
            return None;
        }
    };
    // the plaintexts: v_i times the combined factor
    let pf = dir.root.join("Plaintexts.bt");
    let pb = dir.bytes(Check::Vmn06, &pf)?;
    let o = dir.object(&pf);
    let published = match Bt::parse(&pb)
        .and_then(|t| decode_wide_array(group, &t, setup.width, "plaintexts"))
    {
        Ok(p) => p,
        Err(e) => {
            dir.ledger.fail(Check::Vmn06, &o, e);
            return None;
        }
    };
    if published[0].len() != input.len() {
        dir.ledger.fail(
            Check::Vmn06,
            &o,
            format!(
                "{} plaintexts for {} ciphertexts",
                published[0].len(),
                input.len()
            ),
        );
        return None;
    }
    if let Err(i) = plaintexts_hold(group, input, &factors, &combined, &published) {
        dir.ledger.fail(
            Check::Vmn06,
            &o,
            format!("plaintext {i} is not its ciphertext's decryption"),
        );
        return None;
    }
    dir.ledger.examined(Check::Vmn06, input.len() as u64);
    Some(published)
}

/// The bytes each plaintext (its w elements, in order) encodes, counted (spec/99.6).
fn decoded_counts<G: VGroup>(group: &G, plaintexts: &[Vec<G::E>]) -> BTreeMap<String, u64> {
    let mut counts = BTreeMap::new();
    for i in 0..plaintexts.first().map_or(0, Vec::len) {
        let bytes: Vec<u8> = plaintexts
            .iter()
            .flat_map(|column| group.decode_plain(&column[i]))
            .collect();
        let shown = match String::from_utf8(bytes) {
            Ok(text) if !text.chars().any(char::is_control) => text,
            Ok(text) => format!("0x{}", crate::report::hex(text.as_bytes())),
            Err(e) => format!("0x{}", crate::report::hex(e.as_bytes())),
        };
        *counts.entry(shown).or_insert(0) += 1;
    }
    counts
}

/// The parties' bulletin-board keys: `<pkey>` is `description::hex` of a marshalled
/// `SignaturePKeyHeuristic`, a node of its class name and node(leaf(X.509 SubjectPublicKeyInfo DER of an RSA
/// key), int(bit length)).
fn party_keys(info: &ProtInfo) -> Result<Vec<rsa::RsaPublicKey>, String> {
    use rsa::pkcs8::DecodePublicKey;
    if info.pkeys.len() != info.nopart as usize {
        return Err(format!(
            "{} parties with a <pkey> for {} parties",
            info.pkeys.len(),
            info.nopart
        ));
    }
    info.pkeys
        .iter()
        .enumerate()
        .map(|(i, k)| {
            let what = format!("party {}'s <pkey>", i + 1);
            let hex = k
                .rsplit_once("::")
                .map(|(_, h)| h)
                .ok_or(format!("{what}: not `description::hex`"))?;
            let bytes = crate::report::unhex(hex.trim()).ok_or(format!("{what}: not hex"))?;
            let tree = Bt::parse(&bytes).map_err(|e| format!("{what}: {e}"))?;
            let c = tree.children(2, &what)?;
            if c[0].leaf(&what)? != b"com.verificatum.crypto.SignaturePKeyHeuristic" {
                return Err(format!("{what}: not an RSA key of SignaturePKeyHeuristic"));
            }
            let inner = c[1].children(2, &what)?;
            rsa::RsaPublicKey::from_public_key_der(inner[0].leaf(&what)?)
                .map_err(|e| format!("{what}: {e}"))
        })
        .collect()
}

/// Every file under `dir`, as paths relative to it (at most 100,000 of them).
fn files_under(dir: &Path, out: &mut Vec<PathBuf>, base: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        if out.len() >= 100_000 {
            return;
        }
        let p = e.path();
        match e.file_type() {
            Ok(t) if t.is_dir() => files_under(&p, out, base),
            Ok(t) if t.is_file() => {
                if let Ok(rel) = p.strip_prefix(base) {
                    out.push(rel.to_path_buf());
                }
            }
            _ => {}
        }
    }
}

/// The proof files that party l's messages on the board are, for every proof directory (spec/99.8):
/// (the message's label under `httproot/<l>/`, the proof file).
fn proof_messages(info: &ProtInfo, sessions: &[Summary]) -> Vec<(usize, PathBuf, PathBuf)> {
    let mut out = Vec::new();
    for s in sessions.iter().filter(|s| !s.auxsid.is_empty()) {
        let proofs = s.dir.join("proofs");
        for l in 1..=info.nopart as usize {
            let board = PathBuf::from(format!("MixNetElGamal.{}", info.sid));
            let shuffler = board
                .join("ShufflerElGamal.SEG")
                .join(format!("ShufflerElGamalSession.{}.{}", info.sid, s.auxsid));
            let pos = shuffler
                .join(format!("PoSTW.{l}"))
                .join("BullBoard.BullBoard");
            let dec = board
                .join("DistrElGamal.DEG")
                .join(format!("DistrElGamalSession.{}.{}", info.sid, s.auxsid))
                .join("BullBoard.BullBoard");
            let cc = shuffler
                .join(format!("CCPoSW.{l}"))
                .join("BullBoard.BullBoard");
            let pc = shuffler.join(format!("PermutationCommitment.{l}"));
            let pcb = pc.join("BullBoard.BullBoard");
            let posc = pc.join("PoSCTW").join("BullBoard.BullBoard");
            let pairs = [
                (pos.join("PermutationCommitment"), "PermutationCommitment"),
                (pcb.join("Commitment"), "PermutationCommitment"),
                (pcb.join("KeepList"), "KeepList"),
                (posc.join("Commitment"), "PoSCCommitment"),
                (posc.join("Reply"), "PoSCReply"),
                (cc.join("Commitment"), "CCPoSCommitment"),
                (cc.join("Reply"), "CCPoSReply"),
                (pos.join("Commitment"), "PoSCommitment"),
                (pos.join("Reply"), "PoSReply"),
                (
                    shuffler.join("BullBoard.BullBoard").join("Ciphertext"),
                    "Ciphertexts",
                ),
                (dec.join("DecryptionFactors"), "DecryptionFactors"),
                (dec.join("Commitment"), "DecrFactCommitment"),
                (dec.join("Reply"), "DecrFactReply"),
            ];
            for (label, file) in pairs {
                let proof = proofs.join(format!("{file}{l:02}.bt"));
                if proof.is_file() {
                    out.push((l, label, proof));
                }
            }
        }
    }
    out
}

/// Party `s`'s signature `sig` (a ByteTree leaf) of party `l`'s message `message` under `label`: RSA
/// PKCS #1 v1.5 with SHA-256 over SHA-256(node(leaf("<l>/<label>"), message)).
fn signature_holds(
    key: &rsa::RsaPublicKey,
    l: usize,
    label: &str,
    message: &[u8],
    sig: &[u8],
) -> Result<(), String> {
    use rsa::signature::Verifier;
    Bt::parse(message).map_err(|e| format!("not a ByteTree: {e}"))?;
    let sig_tree = Bt::parse(sig).map_err(|e| format!("signature: {e}"))?;
    let sig_bytes = sig_tree.leaf("signature")?;
    let mut full = Vec::with_capacity(message.len() + label.len() + 20);
    crate::bytetree::write_node(&mut full, 2);
    crate::bytetree::write_leaf(&mut full, format!("{l}/{label}").as_bytes());
    full.extend_from_slice(message);
    let digest = crate::checks::vmn::Hash::Sha256.hash(&full);
    let signature =
        rsa::pkcs1v15::Signature::try_from(sig_bytes).map_err(|e| format!("signature: {e}"))?;
    rsa::pkcs1v15::VerifyingKey::<sha2::Sha256>::new(key.clone())
        .verify(&digest, &signature)
        .map_err(|_| "the signature does not verify".to_string())
}

/// V-VMN-07 (spec/99.8): the bulletin board beside the session (`httproot/<l>/…`: party l's messages,
/// and the signatures of them that the board's owner holds), when there is one, one party's board
/// or several merged. Every message there carries its publisher's signature `<label>.sig.<l>`; every
/// signature `<label>.sig.<s>` there, by any party s, is checked over the message, taken from the
/// board or, when the board does not hold it, from the proof file it is; and every proof file the
/// board also holds is, byte for byte, the message its party signed.
fn board(ledger: &mut Ledger, info: &ProtInfo, root: &Path, sessions: &[Summary]) {
    let http = root.join("httproot");
    if !http.is_dir() {
        ledger.examined(Check::Vmn07, 0);
        ledger.warn(
            Check::Vmn07,
            "httproot",
            "nothing to check: no bulletin board (httproot/) beside protInfo.xml, so the proof files are not bound to the parties' signatures",
        );
        return;
    }
    let keys = match party_keys(info) {
        Ok(k) => k,
        Err(e) => {
            ledger.error(Check::Vmn07, "protInfo.xml", e);
            return;
        }
    };
    let proof_files = proof_messages(info, sessions);
    let mut signed = 0u64;
    let mut unheld = 0u64;
    for l in 1..=keys.len() {
        let base = http.join(l.to_string());
        let mut files = Vec::new();
        files_under(&base, &mut files, &base);
        files.sort();
        for rel in &files {
            let name = rel.to_string_lossy().into_owned();
            let object = format!("httproot/{l}/{name}");
            let (label, signer) = match name.rsplit_once(".sig.") {
                Some((label, s)) => match s.parse::<usize>() {
                    Ok(s) if (1..=keys.len()).contains(&s) => (label.to_string(), Some(s)),
                    _ => {
                        ledger.fail(
                            Check::Vmn07,
                            &object,
                            format!(
                                "a signature by `{s}`, not one of the {} parties",
                                keys.len()
                            ),
                        );
                        continue;
                    }
                },
                None => (name.clone(), None),
            };
            let Some(s) = signer else {
                // a message: its publisher must have signed it
                if !base.join(format!("{label}.sig.{l}")).is_file() {
                    ledger.fail(
                        Check::Vmn07,
                        &object,
                        format!("no signature by its publisher, party {l}"),
                    );
                }
                continue;
            };
            // the message signed: on the board, or the proof file it is
            let on_board = base.join(&label);
            let message_file = if on_board.is_file() {
                Some(on_board)
            } else {
                proof_files
                    .iter()
                    .find(|(pl, pl_label, _)| *pl == l && pl_label.as_path() == Path::new(&label))
                    .map(|(_, _, f)| f.clone())
            };
            let Some(message_file) = message_file else {
                unheld += 1;
                continue;
            };
            let verdict = match (read(&message_file), read(&base.join(rel))) {
                (Ok(m), Ok(sig)) => signature_holds(&keys[s - 1], l, &label, &m, &sig)
                    .map_err(|e| format!("party {s}'s signature of party {l}'s message: {e}")),
                (Err(e), _) | (_, Err(e)) => Err(e),
            };
            match verdict {
                Ok(()) => signed += 1,
                Err(e) => ledger.fail(Check::Vmn07, &object, e),
            }
        }
    }
    ledger.examined(Check::Vmn07, signed);
    if unheld > 0 {
        ledger.warn(
            Check::Vmn07,
            "httproot",
            format!("{unheld} signatures of messages this board does not hold (other parties' boards) were not checked"),
        );
    }
    // the proof files against what their parties signed
    let mut bound = 0u64;
    for (l, label, proof) in &proof_files {
        let posted = http.join(l.to_string()).join(label);
        if !posted.is_file() {
            continue;
        }
        let same = matches!((read(&posted), read(proof)), (Ok(a), Ok(b)) if a == b);
        if same {
            bound += 1;
        } else {
            let rel = proof.strip_prefix(root).unwrap_or(proof);
            ledger.fail(
                Check::Vmn07,
                &rel.display().to_string(),
                format!("not the message party {l} signed on the bulletin board"),
            );
        }
    }
    ledger.examined(Check::Vmn07, bound);
    if bound == 0 {
        ledger.warn(
            Check::Vmn07,
            "httproot",
            "no proof file is on this bulletin board (the board holds another party's messages, or another session's)",
        );
    }
}
