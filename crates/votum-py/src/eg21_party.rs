//! ElectionGuard 2.1 with each guardian a party of its own (spec/66.12): `Eg21Trustee` is one guardian's
//! state, in its own process; `Eg21Coordinator` holds no secret, plays the voters and devices, and writes
//! the record. Messages between them are JSON text; the transport (spec/95) authenticates them and seals
//! each share to its receiver (on top of 2.1's own signed ElGamal under the receiver's κ).

use std::path::PathBuf;
use std::sync::Mutex;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use serde_json::Value;
use votum_eg2::election::Options as BaseOptions;
use votum_eg2::v21::board::{Ceremony, RoundCheck};
use votum_eg2::v21::election::{Coordinator, Options};
use votum_eg2::v21::record::GuardianKey;
use votum_eg2::v21::trustee::{finish_with, Trustee};
use votum_eg2::Eg2Error;
use votum_group::{ModpGroup, P256};

use crate::convert::{release, rng_from};
use crate::eg2::{contest_data_of, summary_dict};
use crate::eg2_party::{checked_copy, eg2, json_list, manifest_bytes};
use crate::errors::NativeError;

/// What a guardian checks of its private copy before it decrypts (spec/66.12).
const BEFORE_DECRYPTING: [&str; 8] = [
    "V-EG21-01",
    "V-EG21-02",
    "V-EG21-03",
    "V-EG21-04",
    "V-EG21-05",
    "V-EG21-06",
    "V-EG21-07",
    "V-EG21-08",
];

enum AnyTrustee {
    P256(Box<Trustee<P256>>),
    Modp(Box<Trustee<ModpGroup>>),
}

enum AnyCoordinator {
    P256(Box<Coordinator<P256>>),
    Modp(Box<Coordinator<ModpGroup>>),
}

/// Runs `$body` with `$t` bound to the trustee or coordinator of whichever group it is on.
macro_rules! each {
    ($kind:ident, $value:expr, $t:ident => $body:expr) => {
        match $value {
            $kind::P256($t) => $body,
            $kind::Modp($t) => $body,
        }
    };
}

/// The modular group a 2.1 party named `group` runs on, or P-256 (None).
fn modp(group: &str) -> PyResult<Option<ModpGroup>> {
    match group {
        "p256" => Ok(None),
        "eg2-4096" => Ok(Some(ModpGroup::eg2_4096())),
        "eg2-3072" => Ok(Some(ModpGroup::eg2_3072())),
        "eg2-toy" => Ok(Some(ModpGroup::eg2_toy())),
        other => Err(NativeError::Input(format!(
            "group {other:?}: a 2.1 election runs on p256, eg2-4096, eg2-3072 or eg2-toy"
        ))
        .into()),
    }
}

fn json(text: &[u8]) -> PyResult<Value> {
    serde_json::from_slice(text)
        .map_err(|e| NativeError::Input(format!("a message that is not JSON: {e}")).into())
}

/// One guardian of a 2.1 election, in its own process (spec/66.12). Its secrets never leave it: its shares
/// go out encrypted under each receiver's κ. `seed` (32 bytes) is for reproducible tests. `key_seed` (32
/// bytes) makes its secret keys from that seed and nothing else (the guardian's tool against the service
/// keeps only the seed, sealed, spec/80.11); every later nonce (shares, decryption) is then fresh from the
/// operating system, so a guardian made again from its seed never repeats one.
#[pyclass(frozen, name = "Eg21Trustee", module = "votum._native")]
pub struct Eg21Trustee {
    inner: Mutex<AnyTrustee>,
    i: u32,
    rng: Mutex<rand_chacha::ChaCha20Rng>,
}

impl Eg21Trustee {
    fn with<T>(&self, f: impl FnOnce(&mut AnyTrustee, &mut rand_chacha::ChaCha20Rng) -> T) -> T {
        let mut guard = self
            .inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut rng = self
            .rng
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        f(&mut guard, &mut rng)
    }
}

#[pymethods]
impl Eg21Trustee {
    #[new]
    #[pyo3(signature = (group, manifest, guardians, quorum, i, seed=None, key_seed=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        group: &str,
        manifest: Option<Vec<u8>>,
        guardians: u32,
        quorum: u32,
        i: u32,
        seed: Option<&[u8]>,
        key_seed: Option<&[u8]>,
    ) -> PyResult<Self> {
        if seed.is_some() && key_seed.is_some() {
            return Err(NativeError::Input("give seed or key_seed, not both".into()).into());
        }
        let mut rng = rng_from(seed)?;
        let mut keys_rng = match key_seed {
            Some(_) => rng_from(key_seed)?,
            None => rng.clone(),
        };
        let manifest = manifest_bytes(manifest);
        let modp = modp(group)?;
        let inner = release(py, || match modp {
            None => Trustee::new(P256, &manifest, (guardians, quorum), i, &mut keys_rng)
                .map(|t| AnyTrustee::P256(Box::new(t))),
            Some(g) => Trustee::new(g, &manifest, (guardians, quorum), i, &mut keys_rng)
                .map(|t| AnyTrustee::Modp(Box::new(t))),
        })
        .map_err(eg2)?;
        if key_seed.is_none() {
            // one stream, as before: the keys, then every nonce
            rng = keys_rng;
        }
        Ok(Self {
            inner: Mutex::new(inner),
            i,
            rng: Mutex::new(rng),
        })
    }

    #[getter]
    fn i(&self) -> u32 {
        self.i
    }

    /// This guardian's key record (JSON): its commitments K_ij and K̂_ij, κ_i and the two proofs.
    fn public_record(&self) -> String {
        self.with(|t, _| each!(AnyTrustee, t, t => t.public().to_string()))
    }

    /// Takes every guardian's key record, guardians 1…n in order (this one's unchanged among them), each
    /// checked.
    fn agree(&self, py: Python<'_>, records: Vec<String>) -> PyResult<()> {
        let docs = json_list(&records)?;
        release(py, || {
            self.with(|t, _| each!(AnyTrustee, t, t => t.agree(&docs)))
        })
        .map_err(eg2)
    }

    /// The share for guardian `to` (JSON bytes), in signed ElGamal under its κ.
    fn share_for<'py>(&self, py: Python<'py>, to: u32) -> PyResult<Bound<'py, PyBytes>> {
        let share = release(py, || {
            self.with(|t, rng| each!(AnyTrustee, t, t => t.share_for(to, rng)))
        })
        .map_err(eg2)?;
        Ok(PyBytes::new(py, share.to_string().as_bytes()))
    }

    /// Takes the share dealt by guardian `dealer`, checked (a bad one names its dealer).
    fn receive(&self, py: Python<'_>, dealer: u32, share: &[u8]) -> PyResult<()> {
        let doc = json(share)?;
        release(py, || {
            self.with(|t, _| each!(AnyTrustee, t, t => t.receive(dealer, &doc)))
        })
        .map_err(eg2)
    }

    /// This guardian's opening (JSON) of the share dealt to it by guardian `dealer`, to go with a complaint
    /// of that dealer (spec/66.4): β = C₀^ζ with its proof, from which anyone sees whether the share fails.
    fn open_share(&self, py: Python<'_>, dealer: u32, share: &[u8]) -> PyResult<String> {
        let doc = json(share)?;
        release(py, || {
            self.with(|t, rng| each!(AnyTrustee, t, t => t.open_share(dealer, &doc, rng)))
        })
        .map(|v| v.to_string())
        .map_err(eg2)
    }

    /// The guardians' document (JSON) as this guardian computed it once every share is in: K, K̂, H_G, H_E.
    fn joint(&self, py: Python<'_>) -> PyResult<String> {
        release(py, || {
            self.with(|t, _| each!(AnyTrustee, t, t => t.joint()))
        })
        .map(|v| v.to_string())
        .map_err(eg2)
    }

    /// Round 1 (JSON): after copying the record at `record` here and checking the copy as far as its ballots,
    /// M_i and d_i for every value this guardian computes from it, and its part of each challenged ballot's
    /// nonce. `available` is U. Once per guardian.
    fn announce(&self, py: Python<'_>, record: PathBuf, available: Vec<u32>) -> PyResult<String> {
        release(py, || {
            self.with(|t, _| each!(AnyTrustee, t, t => t.may_announce()))?;
            let private = checked_copy(
                &record,
                votum_verify::verify_eg21_until_tally,
                &BEFORE_DECRYPTING,
            )?;
            self.with(
                |t, rng| each!(AnyTrustee, t, t => t.announce(private.path(), &available, rng)),
            )
        })
        .map(|v| v.to_string())
        .map_err(eg2)
    }

    /// Round 2 (JSON): this guardian's commitment pairs, once every available guardian's announcement is in.
    fn reveal(&self, py: Python<'_>, announces: Vec<String>) -> PyResult<String> {
        let docs = json_list(&announces)?;
        release(py, || {
            self.with(|t, _| each!(AnyTrustee, t, t => t.reveal(&docs)))
        })
        .map(|v| v.to_string())
        .map_err(eg2)
    }

    /// Round 3 (JSON): the responses, every pair checked against its guardian's d_j and each challenge
    /// derived here. Once.
    fn answer(&self, py: Python<'_>, reveals: Vec<String>) -> PyResult<String> {
        let docs = json_list(&reveals)?;
        release(py, || {
            self.with(|t, _| each!(AnyTrustee, t, t => t.answer(&docs)))
        })
        .map(|v| v.to_string())
        .map_err(eg2)
    }

    fn __repr__(&self) -> String {
        format!("Eg21Trustee(i={})", self.i)
    }
}

/// The coordinator of a 2.1 election whose guardians are parties of their own (spec/66.12): it holds no
/// secret, plays the voters and the devices, and writes the record to `out`.
#[pyclass(frozen, name = "Eg21Coordinator", module = "votum._native")]
pub struct Eg21Coordinator(Mutex<AnyCoordinator>);

impl Eg21Coordinator {
    fn with<T>(&self, f: impl FnOnce(&mut AnyCoordinator) -> T) -> T {
        let mut guard = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        f(&mut guard)
    }
}

#[pymethods]
impl Eg21Coordinator {
    #[new]
    #[pyo3(signature = (out, group, manifest, guardians, quorum, available, ballots, challenge_every, seed, device="votum-device", simple_chaining=false, weighted=false, pre_encrypted=0, contest_data="manifest"))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        out: PathBuf,
        group: &str,
        manifest: Option<Vec<u8>>,
        guardians: u32,
        quorum: u32,
        available: Vec<u32>,
        ballots: usize,
        challenge_every: usize,
        seed: u64,
        device: &str,
        simple_chaining: bool,
        weighted: bool,
        pre_encrypted: usize,
        contest_data: &str,
    ) -> PyResult<Self> {
        let options = Options {
            base: BaseOptions {
                guardians,
                quorum,
                available,
                ballots,
                challenge_every,
                seed,
                device: device.to_owned(),
            },
            simple_chaining,
            weighted,
            pre_encrypted,
            contest_data: contest_data_of(contest_data, "2.1")?,
        };
        let manifest = manifest_bytes(manifest);
        let inner = match modp(group)? {
            None => Coordinator::new(P256, &out, &manifest, &options)
                .map(|c| AnyCoordinator::P256(Box::new(c))),
            Some(g) => Coordinator::new(g, &out, &manifest, &options)
                .map(|c| AnyCoordinator::Modp(Box::new(c))),
        }
        .map_err(eg2)?;
        Ok(Self(Mutex::new(inner)))
    }

    /// The manifest's bytes as the election uses them (amended for Ω or contest data): what every guardian
    /// is given and hashes into H_B.
    #[getter]
    fn manifest<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        self.with(|c| each!(AnyCoordinator, c, c => PyBytes::new(py, c.manifest_bytes())))
    }

    /// U, the guardians that decrypt.
    #[getter]
    fn available(&self) -> PyResult<Vec<u32>> {
        self.with(|c| each!(AnyCoordinator, c, c => c.available()))
            .map_err(eg2)
    }

    /// Another U: the decryption starts again with these guardians (one of the first U gone); at least k
    /// of 1…n, each once (spec/66.12).
    fn set_available(&self, available: Vec<u32>) -> PyResult<()> {
        self.with(|c| each!(AnyCoordinator, c, c => c.set_available(&available)))
            .map_err(eg2)
    }

    /// Takes the guardians' key records (JSON, guardians 1…n), checks each, writes the record's first
    /// documents, and returns the guardians' document (JSON) it computed: every guardian's must be equal.
    fn open(&self, py: Python<'_>, records: Vec<String>) -> PyResult<String> {
        let docs = json_list(&records)?;
        release(py, || {
            self.with(|c| {
                each!(AnyCoordinator, c, c => {
                    let keys = docs
                        .iter()
                        .map(|d| GuardianKey::read(c.group(), d).map_err(Eg2Error::Parameters))
                        .collect::<Result<Vec<_>, _>>()?;
                    let group = c.group().clone();
                    c.open(keys).map(|k| k.to_json(&group).to_string())
                })
            })
        })
        .map_err(eg2)
    }

    /// Encrypts the simulated voters' ballots (and prints and records the pre-encrypted ones) and writes
    /// the devices and the ballots.
    fn cast(&self, py: Python<'_>) -> PyResult<()> {
        release(py, || {
            self.with(|c| each!(AnyCoordinator, c, c => c.cast()))
        })
        .map_err(eg2)
    }

    /// Checks the decrypting guardians' announcements, reveals and answers (JSON; a wrong one names its
    /// guardian), combines them, opens the challenged ballots and writes the tally. Returns the run's
    /// summary.
    fn finish<'py>(
        &self,
        py: Python<'py>,
        announces: Vec<String>,
        reveals: Vec<String>,
        answers: Vec<String>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let (a, r, v) = (
            json_list(&announces)?,
            json_list(&reveals)?,
            json_list(&answers)?,
        );
        let summary = release(py, || {
            self.with(|c| each!(AnyCoordinator, c, c => finish_with(c, (&a, &r, &v))))
        })
        .map_err(eg2)?;
        summary_dict(py, &summary)
    }
}

enum AnyCeremony {
    P256(Box<Ceremony<P256>>),
    Modp(Box<Ceremony<ModpGroup>>),
}

/// What the election service checks of a 2.1 key ceremony on its board (spec/80.11), holding no secret:
/// each key record, each share's proof of its nonce, and the guardians' document computed from the n
/// records.
#[pyclass(frozen, name = "Eg21Ceremony", module = "votum._native")]
pub struct Eg21Ceremony(AnyCeremony);

#[pymethods]
impl Eg21Ceremony {
    #[new]
    fn new(group: &str, manifest: &[u8], guardians: u32, quorum: u32) -> PyResult<Self> {
        let inner = match modp(group)? {
            None => Ceremony::new(P256, manifest, (guardians, quorum))
                .map(|c| AnyCeremony::P256(Box::new(c))),
            Some(g) => Ceremony::new(g, manifest, (guardians, quorum))
                .map(|c| AnyCeremony::Modp(Box::new(c))),
        }
        .map_err(eg2)?;
        Ok(Self(inner))
    }

    /// H_B, the base hash (hex): the manifest's and the parameters' fingerprint.
    #[getter]
    fn base_hash(&self) -> String {
        each!(AnyCeremony, &self.0, c => hex::encode(c.hashes().1))
    }

    /// The record's parameters document (JSON text): the group's name and constants, n and k.
    #[getter]
    fn parameters(&self) -> String {
        each!(AnyCeremony, &self.0, c => c.parameters().to_string())
    }

    /// Guardian i's key record (JSON text) checked (Verification 2): returns i.
    fn check_key(&self, py: Python<'_>, record: &[u8]) -> PyResult<u32> {
        let doc = json(record)?;
        release(py, || each!(AnyCeremony, &self.0, c => c.check_key(&doc))).map_err(eg2)
    }

    /// A share ciphertext (JSON text) read and the proof of its nonce checked (eq. 22): returns (from, to).
    fn check_share(&self, share: &[u8]) -> PyResult<(u32, u32)> {
        let doc = json(share)?;
        each!(AnyCeremony, &self.0, c => c.check_share(&doc)).map_err(eg2)
    }

    /// Receiver ℓ's complaint of dealer i's share with its opening (JSON texts), judged with no secret
    /// (spec/66.4): returns the dealer's fault; raises when the complaint does not stand (the share opens to
    /// values that match the dealer's commitments, or the opening is not the receiver's).
    fn judge_complaint(
        &self,
        py: Python<'_>,
        dealer: &[u8],
        receiver: &[u8],
        share: &[u8],
        opening: &[u8],
    ) -> PyResult<String> {
        let (d, r, s, o) = (json(dealer)?, json(receiver)?, json(share)?, json(opening)?);
        release(
            py,
            || each!(AnyCeremony, &self.0, c => c.judge_complaint((&d, &r), &s, &o)),
        )
        .map_err(eg2)
    }

    /// The guardians' document (JSON text) from the key records of guardians 1…n in order, each checked.
    fn joint(&self, py: Python<'_>, records: Vec<String>) -> PyResult<String> {
        let docs = json_list(&records)?;
        release(py, || each!(AnyCeremony, &self.0, c => c.joint(&docs)))
            .map(|v| v.to_string())
            .map_err(eg2)
    }

    fn __repr__(&self) -> String {
        "Eg21Ceremony(..)".into()
    }
}

enum AnyRound {
    P256(Box<RoundCheck<P256>>),
    Modp(Box<RoundCheck<ModpGroup>>),
}

/// What the election service checks of each message of a 2.1 decryption round as it is posted (spec/80.11),
/// with no secret: made once per round from the record written from the board (`record`) and U. A message
/// that would make the other guardians stop is refused and names its guardian.
#[pyclass(frozen, name = "Eg21Round", module = "votum._native")]
pub struct Eg21Round(AnyRound);

#[pymethods]
impl Eg21Round {
    #[new]
    fn new(py: Python<'_>, group: &str, record: PathBuf, available: Vec<u32>) -> PyResult<Self> {
        let modp = modp(group)?;
        let inner = release(py, || match modp {
            None => RoundCheck::new(P256, &record, &available).map(|r| AnyRound::P256(Box::new(r))),
            Some(g) => RoundCheck::new(g, &record, &available).map(|r| AnyRound::Modp(Box::new(r))),
        })
        .map_err(eg2)?;
        Ok(Self(inner))
    }

    /// Guardian i's announcement (JSON text): made for the board's values, its nonce parts each proved.
    fn check_announce(&self, py: Python<'_>, i: u32, announce: &[u8]) -> PyResult<()> {
        let doc = json(announce)?;
        release(
            py,
            || each!(AnyRound, &self.0, r => r.check_announce(i, &doc)),
        )
        .map_err(eg2)
    }

    /// Guardian i's reveal (JSON text) against its announcement on the board (JSON text).
    fn check_reveal(&self, py: Python<'_>, i: u32, announce: &[u8], reveal: &[u8]) -> PyResult<()> {
        let (a, r) = (json(announce)?, json(reveal)?);
        release(
            py,
            || each!(AnyRound, &self.0, x => x.check_reveal(i, &a, &r)),
        )
        .map_err(eg2)
    }

    fn __repr__(&self) -> String {
        "Eg21Round(..)".into()
    }
}
