//! ElectionGuard 2.1 ballots on the election service (spec/80.11): `Eg21BallotBox` is what the service checks
//! of each ballot before it stores it (no secret: the verifier's per-ballot checks, the ballot's device and
//! chain field, the values a copied ballot would repeat) and how it closes a device's chain; `Eg21Device` is
//! an encryption device's part, which encrypts and seals a ballot after the last code the service took.

use std::collections::BTreeMap;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use rayon::prelude::*;
use serde_json::Value;
use votum_eg2::encrypt::BallotNonce;
use votum_eg2::encrypt::{PlainBallot, PlainContest};
use votum_eg2::manifest::{read_manifest, Manifest};
use votum_eg2::v21::ballot::{Chain, Device};
use votum_eg2::v21::board::publish;
use votum_eg2::v21::hashes::{Codes, ShortCode, SIMPLE_CHAINING};
use votum_eg2::v21::preencrypt::{Printed, PrintedContest, Printer, Recorder};
use votum_eg2::v21::record::{hex as hex_of, Ballot, Keys};
use votum_eg2::v21::trustee::ballot_fingerprints;
use votum_eg2::{Eg2Error, Eg2Group, State};
use votum_group::{ModpGroup, P256};
use votum_verify::Eg21BallotRules;
use zeroize::Zeroize;

use crate::convert::{release, rng_from};
use crate::eg2::summary_dict;
use crate::eg2_party::eg2;
use crate::errors::NativeError;

fn input(reason: impl Into<String>) -> PyErr {
    NativeError::Input(reason.into()).into()
}

fn json(text: &[u8], what: &str) -> PyResult<Value> {
    serde_json::from_slice(text).map_err(|e| input(format!("{what} is not JSON: {e}")))
}

fn unhex32(text: &str, what: &str) -> PyResult<[u8; 32]> {
    let bytes = hex::decode(text).map_err(|_| input(format!("{what} is not hex")))?;
    bytes
        .try_into()
        .map_err(|_| input(format!("{what} is not 32 bytes")))
}

/// The group a service election runs on (the toy parameters are for tests: refused by the service's routes,
/// taken here so that tests of these bindings can use them).
enum AnyGroup {
    P256(P256),
    Modp(ModpGroup),
}

fn group_of(name: &str) -> PyResult<AnyGroup> {
    Ok(match name {
        "p256" => AnyGroup::P256(P256),
        "eg2-4096" => AnyGroup::Modp(ModpGroup::eg2_4096()),
        "eg2-3072" => AnyGroup::Modp(ModpGroup::eg2_3072()),
        "eg2-toy" => AnyGroup::Modp(ModpGroup::eg2_toy()),
        other => return Err(input(format!("group {other:?}"))),
    })
}

/// The election's keys and H_E from its guardians' document.
fn keys_of<G: Eg2Group>(group: &G, guardians: &[u8]) -> PyResult<Keys<G>> {
    Keys::read(group, &json(guardians, "the guardians' document")?)
        .map_err(|e| input(format!("the guardians' document: {e}")))
}

fn manifest_of(bytes: &[u8]) -> PyResult<Manifest> {
    read_manifest(&json(bytes, "the manifest")?).map_err(|e| input(format!("the manifest: {e}")))
}

struct Box21<G: Eg2Group> {
    rules: Eg21BallotRules<G>,
    he: [u8; 32],
}

enum AnyBox {
    P256(Box<Box21<P256>>),
    Modp(Box<Box21<ModpGroup>>),
}

/// What the service checks of a 2.1 ballot before it stores it (spec/80.11), holding no secret.
#[pyclass(frozen, name = "Eg21BallotBox", module = "votum._native")]
pub struct Eg21BallotBox(AnyBox);

/// What a checked ballot says, for the service's rules under the election's lock.
fn facts<'py, G: Eg2Group>(
    py: Python<'py>,
    group: &G,
    b: &Ballot<G>,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("id", &b.id)?;
    d.set_item("device", &b.device)?;
    d.set_item("state", b.state.name().to_lowercase())?;
    d.set_item("weight", b.weight)?;
    d.set_item("pre_encrypted", b.pre_encrypted)?;
    d.set_item("code", hex_of(&b.code))?;
    let mode = u32::from_be_bytes([b.chaining[0], b.chaining[1], b.chaining[2], b.chaining[3]]);
    d.set_item("mode", mode)?;
    d.set_item("after", hex_of(&b.chaining[4..]))?;
    let prints: Vec<Bound<'py, PyBytes>> = ballot_fingerprints(group, b)
        .iter()
        .map(|f| PyBytes::new(py, f))
        .collect();
    d.set_item("fingerprints", prints)?;
    Ok(d)
}

/// A ballot read and checked (what fails it, as an error); without the GIL.
fn read_checked<G: Eg2Group>(b: &Box21<G>, text: &[u8]) -> Result<Ballot<G>, NativeError> {
    let v: Value = serde_json::from_slice(text)
        .map_err(|e| NativeError::Input(format!("the ballot is not JSON: {e}")))?;
    let ballot = Ballot::read(b.rules.group(), &v)
        .map_err(|e| NativeError::Input(format!("the ballot: {e}")))?;
    if let Some((check, reason)) = b.rules.check(&ballot).first() {
        return Err(NativeError::Eg2(Eg2Error::Unverified(format!(
            "ballot {}: {check}: {reason}",
            ballot.id
        ))));
    }
    Ok(ballot)
}

/// Ballots checked on every core; the first that fails (in the given order) is the error.
fn check_all<'py, G: Eg2Group>(
    py: Python<'py>,
    b: &Box21<G>,
    texts: &[Vec<u8>],
) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let checked: Vec<Result<Ballot<G>, NativeError>> = release(py, || {
        texts.par_iter().map(|t| read_checked(b, t)).collect()
    });
    let group = b.rules.group().clone();
    checked
        .into_iter()
        .map(|r| facts(py, &group, &r?))
        .collect()
}

fn codes_of(printer: bool) -> Codes {
    if printer {
        Codes::Printer
    } else {
        Codes::Device
    }
}

fn device_start(he: &[u8; 32], name: &str, simple: bool, printer: bool) -> String {
    let codes = codes_of(printer);
    let hdi = codes.device_hash(he, name);
    if simple {
        let field = votum_eg2::v21::hashes::chaining_field(SIMPLE_CHAINING, &hdi);
        hex_of(&codes.chain_hash(he, &field))
    } else {
        hex_of(&hdi)
    }
}

impl Eg21BallotBox {
    fn he(&self) -> [u8; 32] {
        match &self.0 {
            AnyBox::P256(b) => b.he,
            AnyBox::Modp(b) => b.he,
        }
    }
}

#[pymethods]
impl Eg21BallotBox {
    #[new]
    fn new(group: &str, manifest: &[u8], guardians: &[u8]) -> PyResult<Self> {
        fn make<G: Eg2Group>(group: G, manifest: &[u8], guardians: &[u8]) -> PyResult<Box21<G>> {
            let keys = keys_of(&group, guardians)?;
            let rules =
                Eg21BallotRules::new(group, keys.k.clone(), keys.he, manifest).map_err(input)?;
            Ok(Box21 { rules, he: keys.he })
        }
        Ok(Self(match group_of(group)? {
            AnyGroup::P256(g) => AnyBox::P256(Box::new(make(g, manifest, guardians)?)),
            AnyGroup::Modp(g) => AnyBox::Modp(Box::new(make(g, manifest, guardians)?)),
        }))
    }

    /// Where device `name`'s chain starts (hex): H_DI, which every ballot's chaining field holds under no
    /// chaining; with simple chaining H_0, which its first ballot's field holds. A printer of pre-encrypted
    /// ballots (`printer`) hashes with its own domain bytes (§4.1.4).
    #[pyo3(signature = (name, simple, printer=false))]
    fn chain_start(&self, name: &str, simple: bool, printer: bool) -> String {
        let he = self.he();
        device_start(&he, name, simple, printer)
    }

    /// Whether `cast` (a recorded pre-encrypted ballot, checked) is the recording of `printed` (the printed
    /// ballot on the board, checked): the same id, style, printer, id_B, nonce ciphertext, chaining field,
    /// code, contests, χ and selection hashes; what differs is named. A recorder that changed any of them
    /// would count a vote on a ballot no printer made.
    fn same_paper(&self, printed: &[u8], cast: &[u8]) -> PyResult<()> {
        match &self.0 {
            AnyBox::P256(b) => same_paper(b.rules.group(), printed, cast),
            AnyBox::Modp(b) => same_paper(b.rules.group(), printed, cast),
        }
    }

    /// One ballot (JSON text, a line of `ballots.jsonl`) checked: V-EG21-05…08's per-ballot items, proofs
    /// included. Returns its id, device, state, weight, code, chaining mode and the 32 bytes after it
    /// (`after`), whether it is pre-encrypted, and its fingerprints (id_B, C₀, each α).
    fn check<'py>(&self, py: Python<'py>, ballot: &[u8]) -> PyResult<Bound<'py, PyDict>> {
        let mut all = self.check_many(py, vec![ballot.to_vec()])?;
        Ok(all.remove(0))
    }

    /// As `check`, for several ballots checked on every core; the first that fails, in order, is the error.
    fn check_many<'py>(
        &self,
        py: Python<'py>,
        ballots: Vec<Vec<u8>>,
    ) -> PyResult<Vec<Bound<'py, PyDict>>> {
        match &self.0 {
            AnyBox::P256(b) => check_all(py, b, &ballots),
            AnyBox::Modp(b) => check_all(py, b, &ballots),
        }
    }

    /// Device `name`'s record (JSON text) as `devices.json` holds it, from the ballots the service accepted
    /// from it, in order, the last with code `last` (hex; None if it has none); `printer`: a printer of
    /// pre-encrypted ballots.
    #[pyo3(signature = (name, simple, ballots, last=None, printer=false))]
    fn close_device(
        &self,
        name: &str,
        simple: bool,
        ballots: Vec<String>,
        last: Option<&str>,
        printer: bool,
    ) -> PyResult<String> {
        let he = self.he();
        let last = last.map(|l| unhex32(l, "the last code")).transpose()?;
        let chain = Chain::resumed((codes_of(printer), &he), name, simple, last, ballots);
        Ok(chain.close().to_json().to_string())
    }

    fn __repr__(&self) -> String {
        "Eg21BallotBox(..)".into()
    }
}

/// Whether `cast` records `printed` (both JSON text): every field the printer made is equal.
fn same_paper<G: Eg2Group>(group: &G, printed: &[u8], cast: &[u8]) -> PyResult<()> {
    let read = |text: &[u8], what: &str| -> PyResult<Ballot<G>> {
        Ballot::read(group, &json(text, what)?).map_err(|e| input(format!("{what}: {e}")))
    };
    let (p, c) = (
        read(printed, "the printed ballot")?,
        read(cast, "the recorded ballot")?,
    );
    let differs = |what: &str| {
        Err(input(format!(
            "ballot {}: its {what} is not the printed ballot's",
            c.id
        )))
    };
    if !(p.pre_encrypted && c.pre_encrypted) {
        return differs("pre-encrypted mark");
    }
    let fields: [(&str, bool); 7] = [
        ("id", p.id == c.id),
        ("style", p.style == c.style),
        ("printer", p.device == c.device),
        ("id_B", p.id_b == c.id_b && p.hi == c.hi),
        (
            "ballot nonce ciphertext",
            p.nonce.c0 == c.nonce.c0
                && p.nonce.c1 == c.nonce.c1
                && p.nonce.proof.c == c.nonce.proof.c
                && p.nonce.proof.v == c.nonce.proof.v,
        ),
        ("chaining field", p.chaining == c.chaining),
        ("confirmation code", p.code == c.code),
    ];
    if let Some((what, _)) = fields.iter().find(|(_, same)| !same) {
        return differs(what);
    }
    let sheet = |b: &Ballot<G>| -> Vec<(u32, [u8; 32], Vec<[u8; 32]>)> {
        b.contests
            .iter()
            .map(|x| {
                let hashes = x
                    .pre
                    .as_ref()
                    .map(|pre| pre.hashes.clone())
                    .unwrap_or_default();
                (x.index, x.hash, hashes)
            })
            .collect()
    };
    if sheet(&p) != sheet(&c) {
        return differs("contests, contest hashes χ or selection hashes ψ");
    }
    Ok(())
}

/// A device's made parts: the device (K and K̂ with their tables, H_E, the manifest) and H_E.
struct Made<G: Eg2Group> {
    device: Device<'static, G>,
    he: [u8; 32],
}

enum AnyDevice {
    P256(Box<Made<P256>>),
    Modp(Box<Made<ModpGroup>>),
}

/// A 2.1 encryption device (spec/80.11): K, K̂ and H_E from the guardians' document, the manifest, its name
/// and chaining mode, its tables made once. It holds no chain: each ballot is sealed after the code given,
/// the last the service took.
#[pyclass(frozen, name = "Eg21Device", module = "votum._native")]
pub struct Eg21Device {
    inner: AnyDevice,
    name: String,
    simple: bool,
}

fn plain_of(v: &Value) -> PyResult<PlainBallot> {
    let text = |field: &str| -> PyResult<String> {
        v.get(field)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| input(format!("a plaintext ballot's {field:?} is not text")))
    };
    let mut contests = BTreeMap::new();
    if let Some(map) = v.get("contests").and_then(Value::as_object) {
        for (id, c) in map {
            let votes = c
                .get("votes")
                .and_then(Value::as_array)
                .ok_or_else(|| input(format!("contest {id:?}: votes is not a list")))?
                .iter()
                .map(|x| {
                    x.as_u64()
                        .and_then(|n| u32::try_from(n).ok())
                        .ok_or_else(|| input(format!("contest {id:?}: a vote is not a count")))
                })
                .collect::<PyResult<Vec<u32>>>()?;
            let write_ins = c
                .get("write_ins")
                .and_then(Value::as_array)
                .map(|w| {
                    w.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default();
            contests.insert(id.clone(), PlainContest { votes, write_ins });
        }
    }
    Ok(PlainBallot {
        id: text("id")?,
        style: text("style")?,
        contests,
    })
}

fn make_device<G: Eg2Group>(
    group: G,
    manifest: &[u8],
    guardians: &[u8],
    name: &str,
) -> PyResult<Made<G>> {
    let keys = keys_of(&group, guardians)?;
    let manifest = manifest_of(manifest)?;
    let device = Device::owned(
        group,
        (keys.k.clone(), &keys.k_hat),
        keys.he,
        manifest,
        name,
    );
    Ok(Made {
        device,
        he: keys.he,
    })
}

fn encrypt_with<G: Eg2Group>(
    made: &Made<G>,
    (name, simple): (&str, bool),
    plain: &PlainBallot,
    (state, weight): (State, u32),
    after: Option<[u8; 32]>,
) -> PyResult<String> {
    let mut rng = rng_from(None)?;
    let mut ballot = made
        .device
        .encrypt(plain, (state, weight), &mut rng)
        .map_err(eg2)?;
    let mut chain = Chain::resumed((Codes::Device, &made.he), name, simple, after, Vec::new());
    chain.seal(&mut ballot);
    Ok(ballot.to_json(&made.device.group).to_string())
}

#[pymethods]
impl Eg21Device {
    #[new]
    #[pyo3(signature = (group, manifest, guardians, name, simple_chaining=false))]
    fn new(
        py: Python<'_>,
        group: &str,
        manifest: &[u8],
        guardians: &[u8],
        name: &str,
        simple_chaining: bool,
    ) -> PyResult<Self> {
        let group = group_of(group)?;
        let inner = release(py, || -> PyResult<AnyDevice> {
            Ok(match group {
                AnyGroup::P256(g) => {
                    AnyDevice::P256(Box::new(make_device(g, manifest, guardians, name)?))
                }
                AnyGroup::Modp(g) => {
                    AnyDevice::Modp(Box::new(make_device(g, manifest, guardians, name)?))
                }
            })
        })?;
        Ok(Self {
            inner,
            name: name.to_owned(),
            simple: simple_chaining,
        })
    }

    /// Where this device's chain starts (hex): H_DI under no chaining, H_0 under simple chaining.
    #[getter]
    fn chain_start(&self) -> String {
        let he = match &self.inner {
            AnyDevice::P256(m) => m.he,
            AnyDevice::Modp(m) => m.he,
        };
        device_start(&he, &self.name, self.simple, false)
    }

    /// A plaintext ballot (`{"id", "style", "contests": {contest id: {"votes": [...], "write_ins": [...]}}}`)
    /// encrypted and sealed after code `after` (hex; None: the chain's start). Returns the ballot's JSON.
    #[pyo3(signature = (plain, state="cast", weight=1, after=None))]
    fn encrypt(
        &self,
        py: Python<'_>,
        plain: &str,
        state: &str,
        weight: u32,
        after: Option<&str>,
    ) -> PyResult<String> {
        let plain = plain_of(&json(plain.as_bytes(), "the plaintext ballot")?)?;
        let state = match state {
            "cast" => State::Cast,
            "challenged" => State::Challenged,
            other => return Err(input(format!("state {other:?}: cast or challenged"))),
        };
        let after = after.map(|a| unhex32(a, "the last code")).transpose()?;
        let who = (self.name.as_str(), self.simple);
        release(py, || match &self.inner {
            AnyDevice::P256(m) => encrypt_with(m, who, &plain, (state, weight), after),
            AnyDevice::Modp(m) => encrypt_with(m, who, &plain, (state, weight), after),
        })
    }

    fn __repr__(&self) -> String {
        format!("Eg21Device({:?})", self.name)
    }
}

/// What the printer and the recorder of pre-encrypted ballots hold: the group, the election's keys, the
/// manifest and its short-code function Ω (§4.6).
struct Paper<G: Eg2Group> {
    group: G,
    keys: Keys<G>,
    manifest: Manifest,
    short: ShortCode,
}

enum AnyPaper {
    P256(Box<Paper<P256>>),
    Modp(Box<Paper<ModpGroup>>),
}

fn paper_of(py: Python<'_>, group: &str, manifest: &[u8], guardians: &[u8]) -> PyResult<AnyPaper> {
    fn make<G: Eg2Group>(group: G, manifest: &[u8], guardians: &[u8]) -> PyResult<Paper<G>> {
        let doc = json(manifest, "the manifest")?;
        let short = ShortCode::of_manifest(&doc)
            .map_err(input)?
            .ok_or_else(|| {
                input("the manifest names no short_code function (§4.6): pre-encrypted ballots need one")
            })?;
        Ok(Paper {
            keys: keys_of(&group, guardians)?,
            manifest: read_manifest(&doc).map_err(|e| input(format!("the manifest: {e}")))?,
            group,
            short,
        })
    }
    let group = group_of(group)?;
    release(py, || {
        Ok(match group {
            AnyGroup::P256(g) => AnyPaper::P256(Box::new(make(g, manifest, guardians)?)),
            AnyGroup::Modp(g) => AnyPaper::Modp(Box::new(make(g, manifest, guardians)?)),
        })
    })
}

/// A printed ballot's sheet as JSON: per contest its index, its id, the option beside each vector (the
/// options' ids in the manifest's order, then null for each null vector), each vector's ψ and short code.
fn sheet_json(manifest: &Manifest, sheet: &[PrintedContest], indices: &[u32]) -> String {
    let contests: Vec<Value> = sheet
        .iter()
        .zip(indices)
        .map(|(c, index)| {
            let found = manifest
                .contests
                .iter()
                .find(|(_, mc)| mc.sequence == *index);
            let options: Vec<Value> = (0..c.psi.len())
                .map(|at| {
                    found
                        .and_then(|(_, mc)| mc.options.get(at))
                        .map_or(Value::Null, |o| Value::String(o.clone()))
                })
                .collect();
            serde_json::json!({
                "index": index,
                "contest": found.map(|(id, _)| id.clone()),
                "options": options,
                "psi": c.psi.iter().map(|p| hex_of(p)).collect::<Vec<_>>(),
                "short_codes": c.short_codes,
            })
        })
        .collect();
    Value::Array(contests).to_string()
}

fn sheet_of(text: &str) -> PyResult<Vec<PrintedContest>> {
    let v = json(text.as_bytes(), "the sheet")?;
    let bad = || input("the sheet is not a list of {index, psi, short_codes}");
    v.as_array()
        .ok_or_else(bad)?
        .iter()
        .map(|c| {
            let psi = c["psi"]
                .as_array()
                .ok_or_else(bad)?
                .iter()
                .map(|p| unhex32(p.as_str().unwrap_or_default(), "a selection hash ψ"))
                .collect::<PyResult<Vec<_>>>()?;
            let short_codes = c["short_codes"]
                .as_array()
                .ok_or_else(bad)?
                .iter()
                .map(|s| s.as_str().map(str::to_owned).ok_or_else(bad))
                .collect::<PyResult<Vec<_>>>()?;
            Ok(PrintedContest { psi, short_codes })
        })
        .collect()
}

fn print_with<G: Eg2Group>(
    p: &Paper<G>,
    (name, simple): (&str, bool),
    (ids, style): (&[String], &str),
    after: Option<[u8; 32]>,
) -> PyResult<Vec<(String, String, String)>> {
    let mut rng = rng_from(None)?;
    let printer = Printer::new(
        p.group.clone(),
        (&p.keys.k, &p.keys.k_hat),
        p.keys.he,
        (&p.manifest, p.short),
        name,
    );
    let mut chain = Chain::resumed(
        (Codes::Printer, &p.keys.he),
        name,
        simple,
        after,
        Vec::new(),
    );
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        let (mut printed, xi_b) = printer.print(id, style, &mut rng).map_err(eg2)?;
        chain.seal(&mut printed.ballot);
        let indices: Vec<u32> = printed.ballot.contests.iter().map(|c| c.index).collect();
        out.push((
            printed.ballot.to_json(&p.group).to_string(),
            hex_of(xi_b.bytes()),
            sheet_json(&p.manifest, &printed.sheet, &indices),
        ));
    }
    Ok(out)
}

/// A printer of pre-encrypted ballots on the service (spec/80.11, §4.2): the election's keys from its
/// guardians' document, the manifest with its short-code function, the printer's name and chaining mode.
/// It holds no chain: each batch is sealed after the code given, the last the service took.
#[pyclass(frozen, name = "Eg21Printer", module = "votum._native")]
pub struct Eg21Printer {
    inner: AnyPaper,
    name: String,
    simple: bool,
}

#[pymethods]
impl Eg21Printer {
    #[new]
    #[pyo3(signature = (group, manifest, guardians, name, simple_chaining=false))]
    fn new(
        py: Python<'_>,
        group: &str,
        manifest: &[u8],
        guardians: &[u8],
        name: &str,
        simple_chaining: bool,
    ) -> PyResult<Self> {
        Ok(Self {
            inner: paper_of(py, group, manifest, guardians)?,
            name: name.to_owned(),
            simple: simple_chaining,
        })
    }

    /// Where this printer's chain starts (hex), with the printer's domain bytes (§4.1.4).
    #[getter]
    fn chain_start(&self) -> String {
        let he = match &self.inner {
            AnyPaper::P256(p) => p.keys.he,
            AnyPaper::Modp(p) => p.keys.he,
        };
        device_start(&he, &self.name, self.simple, true)
    }

    /// Prints ballots `ids` of `style`, sealed in order after code `after` (hex; None: the chain's start).
    /// Returns, per ballot, its record line (JSON, uncast: what the service takes before any mark), its
    /// ballot nonce ξ_B (hex: secret, for the printer's store only) and its sheet (JSON: per contest its
    /// index and id, and in printed order (the options, then the nulls) each vector's option id or null, ψ
    /// and short code; the short codes are on the paper and nowhere else until the ballot is recorded or
    /// opened).
    #[pyo3(signature = (ids, style, after=None))]
    fn print(
        &self,
        py: Python<'_>,
        ids: Vec<String>,
        style: &str,
        after: Option<&str>,
    ) -> PyResult<Vec<(String, String, String)>> {
        let after = after.map(|a| unhex32(a, "the last code")).transpose()?;
        let who = (self.name.as_str(), self.simple);
        release(py, || match &self.inner {
            AnyPaper::P256(p) => print_with(p, who, (&ids, style), after),
            AnyPaper::Modp(p) => print_with(p, who, (&ids, style), after),
        })
    }

    fn __repr__(&self) -> String {
        format!("Eg21Printer({:?})", self.name)
    }
}

fn record_with<G: Eg2Group>(
    p: &Paper<G>,
    (printed, sheet): (&[u8], Vec<PrintedContest>),
    xi_b: &BallotNonce,
    (marks, weight): (&PlainBallot, u32),
) -> PyResult<String> {
    let mut rng = rng_from(None)?;
    let ballot = Ballot::read(&p.group, &json(printed, "the printed ballot")?)
        .map_err(|e| input(format!("the printed ballot: {e}")))?;
    let printed = Printed { ballot, sheet };
    let recorder = Recorder::new(p.group.clone(), &p.keys.k, (&p.manifest, p.short));
    let cast = recorder
        .record(&printed, xi_b, (marks, weight), &mut rng)
        .map_err(eg2)?;
    Ok(cast.to_json(&p.group).to_string())
}

/// The recorder of pre-encrypted ballots on the service (spec/80.11, §4.3): the election's keys, the
/// manifest with its short-code function. It records a voter's marks on a printed ballot with the ballot's
/// nonce from the printer's store, which it checks against the printed ballot first.
#[pyclass(frozen, name = "Eg21Recorder", module = "votum._native")]
pub struct Eg21Recorder(AnyPaper);

#[pymethods]
impl Eg21Recorder {
    #[new]
    fn new(py: Python<'_>, group: &str, manifest: &[u8], guardians: &[u8]) -> PyResult<Self> {
        Ok(Self(paper_of(py, group, manifest, guardians)?))
    }

    /// The cast ballot (JSON) recording `marks` (a plaintext ballot: `{"id", "style", "contests": {contest
    /// id: {"votes": [0 or 1 per option]}}}`) on printed ballot `printed` (its record line) with its
    /// `sheet` and its nonce ξ_B (hex) from the printer's store; a nonce that does not give the printed
    /// ballot is refused, naming the store.
    #[pyo3(signature = (printed, sheet, nonce, marks, weight=1))]
    fn record(
        &self,
        py: Python<'_>,
        printed: &str,
        sheet: &str,
        nonce: &str,
        marks: &str,
        weight: u32,
    ) -> PyResult<String> {
        let mut bytes = unhex32(nonce, "the ballot nonce")?;
        let xi_b = BallotNonce::from_bytes(bytes);
        bytes.zeroize();
        let sheet = sheet_of(sheet)?;
        let marks = plain_of(&json(marks.as_bytes(), "the marks")?)?;
        release(py, || match &self.0 {
            AnyPaper::P256(p) => {
                record_with(p, (printed.as_bytes(), sheet), &xi_b, (&marks, weight))
            }
            AnyPaper::Modp(p) => {
                record_with(p, (printed.as_bytes(), sheet), &xi_b, (&marks, weight))
            }
        })
    }

    fn __repr__(&self) -> String {
        "Eg21Recorder(..)".into()
    }
}

/// The service's last step in a 2.1 election (spec/80.11): from the record at `record` as far as its ballots
/// (the board written out) and U's announcements, reveals and answers (JSON text each), writes `tally.json`
/// and `challenged.jsonl` into it; a guardian whose answer or nonce part fails is named. Returns the summary
/// (cast, challenged, counts).
#[pyfunction]
pub fn eg21_publish<'py>(
    py: Python<'py>,
    group: &str,
    record: std::path::PathBuf,
    available: Vec<u32>,
    announces: Vec<String>,
    reveals: Vec<String>,
    answers: Vec<String>,
) -> PyResult<Bound<'py, PyDict>> {
    let read = |texts: &[String]| -> PyResult<Vec<Value>> {
        texts
            .iter()
            .map(|t| json(t.as_bytes(), "a guardian's message"))
            .collect()
    };
    let (a, r, w) = (read(&announces)?, read(&reveals)?, read(&answers)?);
    let messages = (a.as_slice(), r.as_slice(), w.as_slice());
    let group = group_of(group)?;
    let summary = release(py, || match group {
        AnyGroup::P256(g) => publish(&g, &record, &available, messages),
        AnyGroup::Modp(g) => publish(&g, &record, &available, messages),
    })
    .map_err(eg2)?;
    summary_dict(py, &summary)
}
