//! votum's ElectionGuard 2.1 record (spec/66.3): the values §3.7 says a record holds, as JSON with numbers
//! in uppercase hexadecimal at fixed width (elements 512 bytes, scalars and hashes 32). The writer (behind
//! `prove`) and the verifier share these types and readers, so what is written is read the same way.

use std::path::Path;

use serde_json::{json, Value};
use votum_elgamal::Ciphertext;

use crate::group::Eg2Group;
use crate::manifest::{count, list, text};
use crate::Pair;

/// The record's files.
pub const PARAMETERS: &str = "parameters.json";
pub const MANIFEST: &str = "manifest.json";
pub const GUARDIANS: &str = "guardians.json";
pub const DEVICES: &str = "devices.json";
pub const BALLOTS: &str = "ballots.jsonl";
pub const TALLY: &str = "tally.json";
pub const CHALLENGED: &str = "challenged.jsonl";

/// Whether `dir` holds a 2.1 record: `parameters.json` says `v2.1.0`.
pub fn is_record(dir: &Path) -> bool {
    std::fs::read(dir.join(PARAMETERS))
        .ok()
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        .is_some_and(|v| v["version"] == crate::v21::hashes::VERSION)
}

pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02X}")).collect()
}

/// A field's hexadecimal bytes (either case).
pub fn unhex(v: &Value, field: &str) -> Result<Vec<u8>, String> {
    let s = v[field]
        .as_str()
        .ok_or_else(|| format!("`{field}` is not a string"))?;
    if !s.len().is_multiple_of(2) {
        return Err(format!("`{field}` is not hexadecimal"));
    }
    (0..s.len())
        .step_by(2)
        .map(|i| s.get(i..i + 2).and_then(|d| u8::from_str_radix(d, 16).ok()))
        .collect::<Option<Vec<u8>>>()
        .ok_or_else(|| format!("`{field}` is not hexadecimal"))
}

pub fn fixed<const N: usize>(v: &Value, field: &str) -> Result<[u8; N], String> {
    unhex(v, field)?
        .try_into()
        .map_err(|_| format!("`{field}` is not {N} bytes"))
}

pub fn element<G: Eg2Group>(group: &G, v: &Value, field: &str) -> Result<G::Element, String> {
    let b = unhex(v, field)?;
    if b.len() != group.hash_bytes(group.generator()).len() {
        return Err(format!("`{field}` is not an element's width"));
    }
    group
        .read_element(&b)
        .map_err(|e| format!("`{field}`: {e}"))
}

pub fn scalar<G: Eg2Group>(group: &G, v: &Value, field: &str) -> Result<G::Scalar, String> {
    let b: [u8; 32] = fixed(v, field)?;
    group.read_scalar(&b).map_err(|e| format!("`{field}`: {e}"))
}

pub fn el<G: Eg2Group>(group: &G, x: &G::Element) -> Value {
    Value::String(hex(&group.hash_bytes(x)))
}

pub fn sc<G: Eg2Group>(group: &G, s: &G::Scalar) -> Value {
    Value::String(hex(&group.scalar_bytes(s)))
}

fn items<'v>(v: &'v Value, field: &str) -> Result<&'v Vec<Value>, String> {
    list(v, field)
}

/// A guardian's compact proof (c, v_0 … v_k) of its k coefficients and ζ (eqs. 11, 13).
pub struct KeyProof<G: Eg2Group> {
    pub c: G::Scalar,
    pub v: Vec<G::Scalar>,
}

impl<G: Eg2Group> Clone for KeyProof<G> {
    fn clone(&self) -> Self {
        Self {
            c: self.c.clone(),
            v: self.v.clone(),
        }
    }
}

/// What the record holds of guardian i (§3.2.2): K_ij, K̂_ij, κ_i and the two proofs.
pub struct GuardianKey<G: Eg2Group> {
    pub i: u32,
    pub vote: Vec<G::Element>,
    pub data: Vec<G::Element>,
    pub kappa: G::Element,
    pub vote_proof: KeyProof<G>,
    pub data_proof: KeyProof<G>,
}

impl<G: Eg2Group> Clone for GuardianKey<G> {
    fn clone(&self) -> Self {
        Self {
            i: self.i,
            vote: self.vote.clone(),
            data: self.data.clone(),
            kappa: self.kappa.clone(),
            vote_proof: self.vote_proof.clone(),
            data_proof: self.data_proof.clone(),
        }
    }
}

fn proof_json<G: Eg2Group>(group: &G, p: &KeyProof<G>) -> Value {
    json!({"c": sc(group, &p.c), "v": p.v.iter().map(|v| sc(group, v)).collect::<Vec<_>>()})
}

fn read_proof<G: Eg2Group>(group: &G, v: &Value) -> Result<KeyProof<G>, String> {
    Ok(KeyProof {
        c: scalar(group, v, "c")?,
        v: items(v, "v")?
            .iter()
            .map(|x| {
                let w = json!({ "v": x });
                scalar(group, &w, "v")
            })
            .collect::<Result<_, _>>()?,
    })
}

fn elements<G: Eg2Group>(group: &G, v: &Value, field: &str) -> Result<Vec<G::Element>, String> {
    items(v, field)?
        .iter()
        .map(|x| element(group, &json!({ "x": x }), "x"))
        .collect()
}

impl<G: Eg2Group> GuardianKey<G> {
    pub fn to_json(&self, group: &G) -> Value {
        json!({
            "i": self.i,
            "K": self.vote.iter().map(|x| el(group, x)).collect::<Vec<_>>(),
            "K_hat": self.data.iter().map(|x| el(group, x)).collect::<Vec<_>>(),
            "kappa": el(group, &self.kappa),
            "proof_vote": proof_json(group, &self.vote_proof),
            "proof_data": proof_json(group, &self.data_proof),
        })
    }

    pub fn read(group: &G, v: &Value) -> Result<Self, String> {
        Ok(Self {
            i: count(v, "i")?,
            vote: elements(group, v, "K")?,
            data: elements(group, v, "K_hat")?,
            kappa: element(group, v, "kappa")?,
            vote_proof: read_proof(group, &v["proof_vote"])?,
            data_proof: read_proof(group, &v["proof_data"])?,
        })
    }
}

/// The ballot nonce encrypted under K̂ in signed ElGamal (§3.3.4): (C_0, C_1, (c_B, v_B)).
pub struct NonceCiphertext<G: Eg2Group> {
    pub c0: G::Element,
    pub c1: [u8; 32],
    pub proof: Pair<G>,
}

impl<G: Eg2Group> Clone for NonceCiphertext<G> {
    fn clone(&self) -> Self {
        Self {
            c0: self.c0.clone(),
            c1: self.c1,
            proof: self.proof.clone(),
        }
    }
}

/// A contest's data in signed ElGamal under K̂ (§3.3.10, spec/66.11): C₀ = g^ξ, C₁ = D ⊕ k (32·b bytes),
/// C₂ = (c, v) a Schnorr proof of ξ (eq. 69).
pub struct DataCiphertext<G: Eg2Group> {
    pub c0: G::Element,
    pub c1: Vec<u8>,
    pub proof: Pair<G>,
}

impl<G: Eg2Group> Clone for DataCiphertext<G> {
    fn clone(&self) -> Self {
        Self {
            c0: self.c0.clone(),
            c1: self.c1.clone(),
            proof: self.proof.clone(),
        }
    }
}

impl<G: Eg2Group> DataCiphertext<G> {
    /// (C₀, C₁, C₂) as the hashes take it.
    pub fn parts(&self) -> crate::v21::hashes::DataParts<'_, G> {
        (&self.c0, &self.c1, &self.proof)
    }

    pub fn to_json(&self, group: &G) -> Value {
        json!({
            "C0": el(group, &self.c0),
            "C1": hex(&self.c1),
            "c": sc(group, &self.proof.c),
            "v": sc(group, &self.proof.v),
        })
    }

    pub fn read(group: &G, v: &Value) -> Result<Self, String> {
        Ok(Self {
            c0: element(group, v, "C0")?,
            c1: unhex(v, "C1")?,
            proof: read_pair(group, v)?,
        })
    }
}

/// An encrypted selection: the option's index, (α, β), its range proof.
pub struct Selection<G: Eg2Group> {
    pub option: u32,
    pub ct: Ciphertext<G>,
    pub proof: Vec<Pair<G>>,
}

pub struct Contest<G: Eg2Group> {
    pub index: u32,
    pub selections: Vec<Selection<G>>,
    /// the selection-limit proof of the selections' product (eq. 62)
    pub proof: Vec<Pair<G>>,
    /// χ: eq. 70, or eq. 115 on a pre-encrypted ballot
    pub hash: [u8; 32],
    /// what a pre-encrypted ballot adds (spec/66.10)
    pub pre: Option<PreContest<G>>,
    /// the contest data, where the manifest asks for it (spec/66.11)
    pub data: Option<DataCiphertext<G>>,
}

/// A pre-encryption vector a voter chose, with the short code printed beside it (§4.4).
pub struct Chosen<G: Eg2Group> {
    pub short_code: String,
    pub vector: Vec<Ciphertext<G>>,
}

/// A pre-encrypted ballot's contest (§4.4): its m + L selection hashes in increasing order and, when cast,
/// the L chosen vectors whose product is the contest's selection vector.
pub struct PreContest<G: Eg2Group> {
    pub hashes: Vec<[u8; 32]>,
    pub chosen: Vec<Chosen<G>>,
}

/// Whether the ballot was cast or challenged (§3.7), written `cast` or `challenged`.
pub use crate::State;

fn state_name(state: State) -> &'static str {
    match state {
        State::Cast => "cast",
        State::Challenged => "challenged",
    }
}

/// An encrypted ballot as the record holds it.
pub struct Ballot<G: Eg2Group> {
    /// the ballot's label in the record (not hashed)
    pub id: String,
    pub style: String,
    pub device: String,
    pub id_b: [u8; 32],
    pub hi: [u8; 32],
    pub nonce: NonceCiphertext<G>,
    pub contests: Vec<Contest<G>>,
    pub chaining: [u8; 36],
    pub code: [u8; 32],
    pub state: State,
    /// W (eq. 80): 1 unless the election weighs its voters
    pub weight: u32,
    /// printed in advance (§4); its contests carry `pre`
    pub pre_encrypted: bool,
}

fn pairs_json<G: Eg2Group>(group: &G, proof: &[Pair<G>]) -> Value {
    Value::Array(
        proof
            .iter()
            .map(|p| json!({"c": sc(group, &p.c), "v": sc(group, &p.v)}))
            .collect(),
    )
}

pub fn read_pair<G: Eg2Group>(group: &G, v: &Value) -> Result<Pair<G>, String> {
    Ok(Pair {
        c: scalar(group, v, "c")?,
        v: scalar(group, v, "v")?,
    })
}

fn read_pairs<G: Eg2Group>(group: &G, v: &Value, field: &str) -> Result<Vec<Pair<G>>, String> {
    items(v, field)?
        .iter()
        .map(|p| read_pair(group, p))
        .collect()
}

pub fn ct_json<G: Eg2Group>(group: &G, c: &Ciphertext<G>) -> Value {
    json!({"alpha": el(group, &c.pad), "beta": el(group, &c.data)})
}

pub fn read_ct<G: Eg2Group>(group: &G, v: &Value) -> Result<Ciphertext<G>, String> {
    Ok(Ciphertext {
        pad: element(group, v, "alpha")?,
        data: element(group, v, "beta")?,
    })
}

impl<G: Eg2Group> Ballot<G> {
    pub fn to_json(&self, group: &G) -> Value {
        let contest = |c: &Contest<G>| {
            let mut v = json!({
                "index": c.index,
                "selections": c.selections.iter().map(|s| json!({
                    "option": s.option,
                    "alpha": el(group, &s.ct.pad),
                    "beta": el(group, &s.ct.data),
                    "proof": pairs_json(group, &s.proof),
                })).collect::<Vec<_>>(),
                "proof": pairs_json(group, &c.proof),
                "hash": hex(&c.hash),
            });
            if let Some(d) = &c.data {
                v["data"] = d.to_json(group);
            }
            if let Some(pre) = &c.pre {
                v["selection_hashes"] = pre.hashes.iter().map(|h| hex(h)).collect();
                v["chosen"] = pre
                    .chosen
                    .iter()
                    .map(|ch| {
                        json!({
                            "short_code": ch.short_code,
                            "vector": ch.vector.iter().map(|c| ct_json(group, c)).collect::<Vec<_>>(),
                        })
                    })
                    .collect();
            }
            v
        };
        let mut v = json!({
            "id": self.id,
            "style": self.style,
            "device": self.device,
            "state": state_name(self.state),
            "weight": self.weight,
            "id_B": hex(&self.id_b),
            "H_I": hex(&self.hi),
            "nonce": {
                "C0": el(group, &self.nonce.c0),
                "C1": hex(&self.nonce.c1),
                "c": sc(group, &self.nonce.proof.c),
                "v": sc(group, &self.nonce.proof.v),
            },
            "contests": self.contests.iter().map(contest).collect::<Vec<_>>(),
            "B_C": hex(&self.chaining),
            "H_C": hex(&self.code),
        });
        if self.pre_encrypted {
            v["pre_encrypted"] = true.into();
        }
        v
    }

    /// Reads a ballot; its elements' subgroup membership is the verifier's to test.
    pub fn read(group: &G, v: &Value) -> Result<Self, String> {
        let state = match text(v, "state")? {
            "cast" => State::Cast,
            "challenged" => State::Challenged,
            other => return Err(format!("state {other:?} is neither cast nor challenged")),
        };
        let nonce = &v["nonce"];
        let pre_encrypted = pre_encrypted(v)?;
        let contests = items(v, "contests")?
            .iter()
            .map(|c| {
                Ok(Contest {
                    pre: if pre_encrypted {
                        Some(read_pre(group, c)?)
                    } else {
                        None
                    },
                    index: count(c, "index")?,
                    selections: items(c, "selections")?
                        .iter()
                        .map(|s| {
                            Ok(Selection {
                                option: count(s, "option")?,
                                ct: read_ct(group, s)?,
                                proof: read_pairs(group, s, "proof")?,
                            })
                        })
                        .collect::<Result<_, String>>()?,
                    proof: read_pairs(group, c, "proof")?,
                    hash: fixed(c, "hash")?,
                    data: optional(c, "data", |d| DataCiphertext::read(group, d))?,
                })
            })
            .collect::<Result<_, String>>()?;
        Ok(Self {
            id: text(v, "id")?.to_owned(),
            style: text(v, "style")?.to_owned(),
            device: text(v, "device")?.to_owned(),
            id_b: fixed(v, "id_B")?,
            hi: fixed(v, "H_I")?,
            nonce: NonceCiphertext {
                c0: element(group, nonce, "C0")?,
                c1: fixed(nonce, "C1")?,
                proof: read_pair(group, nonce)?,
            },
            contests,
            chaining: fixed(v, "B_C")?,
            code: fixed(v, "H_C")?,
            state,
            weight: count(v, "weight")?,
            pre_encrypted,
        })
    }

    /// Every element the ballot carries (for one membership test).
    pub fn elements(&self) -> Vec<&G::Element> {
        let mut out = vec![&self.nonce.c0];
        for c in &self.contests {
            if let Some(d) = &c.data {
                out.push(&d.c0);
            }
            for s in &c.selections {
                out.push(&s.ct.pad);
                out.push(&s.ct.data);
            }
            for ch in c.pre.iter().flat_map(|p| &p.chosen) {
                for ct in &ch.vector {
                    out.push(&ct.pad);
                    out.push(&ct.data);
                }
            }
        }
        out
    }
}

/// An optional object `field`, read by `read` when present.
fn optional<T>(
    v: &Value,
    field: &str,
    read: impl FnOnce(&Value) -> Result<T, String>,
) -> Result<Option<T>, String> {
    match &v[field] {
        Value::Null => Ok(None),
        x => read(x).map(Some).map_err(|e| format!("`{field}`: {e}")),
    }
}

/// A ballot's or a device's `pre_encrypted` mark: absent is false.
fn pre_encrypted(v: &Value) -> Result<bool, String> {
    match &v["pre_encrypted"] {
        Value::Null => Ok(false),
        Value::Bool(b) => Ok(*b),
        _ => Err("`pre_encrypted` is not true or false".into()),
    }
}

fn hashes_of(v: &Value, field: &str) -> Result<Vec<[u8; 32]>, String> {
    items(v, field)?
        .iter()
        .map(|h| fixed(&json!({ "h": h }), "h"))
        .collect()
}

fn read_pre<G: Eg2Group>(group: &G, c: &Value) -> Result<PreContest<G>, String> {
    let chosen = match &c["chosen"] {
        Value::Null => Vec::new(),
        _ => items(c, "chosen")?
            .iter()
            .map(|ch| {
                Ok(Chosen {
                    short_code: text(ch, "short_code")?.to_owned(),
                    vector: items(ch, "vector")?
                        .iter()
                        .map(|x| read_ct(group, x))
                        .collect::<Result<_, String>>()?,
                })
            })
            .collect::<Result<_, String>>()?,
    };
    Ok(PreContest {
        hashes: hashes_of(c, "selection_hashes")?,
        chosen,
    })
}

/// A voting device as the record holds it (§3.4.3–3.4.4): S_device, H_DI, its chaining mode, its ballots
/// in the order it made them, and with simple chaining H_0 and the closing hash.
pub struct Device {
    pub name: String,
    /// a printer of pre-encrypted ballots (§4.1.4: its hashes use 0x42–0x44)
    pub pre_encrypted: bool,
    pub hdi: [u8; 32],
    pub mode: u32,
    pub ballots: Vec<String>,
    pub first: Option<[u8; 32]>,
    pub close: Option<[u8; 32]>,
}

impl Device {
    pub fn to_json(&self) -> Value {
        let mut v = json!({
            "device": self.name,
            "H_DI": hex(&self.hdi),
            "mode": self.mode,
            "ballots": self.ballots,
        });
        if let (Some(h0), Some(close)) = (self.first, self.close) {
            v["H_0"] = hex(&h0).into();
            v["H"] = hex(&close).into();
        }
        if self.pre_encrypted {
            v["pre_encrypted"] = true.into();
        }
        v
    }

    pub fn read(v: &Value) -> Result<Self, String> {
        let opt = |field: &str| -> Result<Option<[u8; 32]>, String> {
            if v[field].is_null() {
                Ok(None)
            } else {
                fixed(v, field).map(Some)
            }
        };
        Ok(Self {
            name: text(v, "device")?.to_owned(),
            pre_encrypted: pre_encrypted(v)?,
            hdi: fixed(v, "H_DI")?,
            mode: count(v, "mode")?,
            ballots: items(v, "ballots")?
                .iter()
                .map(|b| {
                    b.as_str()
                        .map(str::to_owned)
                        .ok_or("a ballot id is not a string")
                })
                .collect::<Result<_, _>>()?,
            first: opt("H_0")?,
            close: opt("H")?,
        })
    }
}

/// One option of the tally: (A, B), the count t and the decryption proof (c, v) (§3.6.5).
pub struct TallyValue<G: Eg2Group> {
    pub contest: u32,
    pub option: u32,
    pub ct: Ciphertext<G>,
    pub t: u64,
    pub proof: Pair<G>,
}

impl<G: Eg2Group> TallyValue<G> {
    pub fn to_json(&self, group: &G) -> Value {
        json!({
            "contest": self.contest,
            "option": self.option,
            "A": el(group, &self.ct.pad),
            "B": el(group, &self.ct.data),
            "t": self.t,
            "c": sc(group, &self.proof.c),
            "v": sc(group, &self.proof.v),
        })
    }

    pub fn read(group: &G, v: &Value) -> Result<Self, String> {
        Ok(Self {
            contest: count(v, "contest")?,
            option: count(v, "option")?,
            ct: Ciphertext {
                pad: element(group, v, "A")?,
                data: element(group, v, "B")?,
            },
            t: v["t"].as_u64().ok_or("`t` is not a count")?,
            proof: read_pair(group, v)?,
        })
    }
}

/// An opening's `contests`: per contest its `index` and its list `field`, each item read by `item`.
fn per_contest<T>(
    v: &Value,
    field: &str,
    item: impl Fn(&Value) -> Result<T, String>,
) -> Result<Vec<(u32, Vec<T>)>, String> {
    items(v, "contests")?
        .iter()
        .map(|c| {
            Ok((
                count(c, "index")?,
                items(c, field)?
                    .iter()
                    .map(&item)
                    .collect::<Result<_, String>>()?,
            ))
        })
        .collect()
}

/// One option of an opened ballot: its index, the vote σ and the encryption nonce ξ released for it.
pub type OpenedOption<G> = (u32, u32, <G as votum_group::Group>::Scalar);

/// An opened contest's data (eqs. 110–111): its encryption nonce ξ (eq. 64) and the plaintext D.
pub struct OpenedData<G: Eg2Group> {
    pub nonce: G::Scalar,
    pub d: Vec<u8>,
}

/// One contest of an opened ballot: its index, its options, and its data when it carries any.
pub struct OpenedContest<G: Eg2Group> {
    pub index: u32,
    pub selections: Vec<OpenedOption<G>>,
    pub data: Option<OpenedData<G>>,
}

/// A challenged ballot opened with its encryption nonces (§3.6.7): per contest, per option σ and ξ, and
/// the contest data's ξ and D.
pub struct Opened<G: Eg2Group> {
    pub id: String,
    pub contests: Vec<OpenedContest<G>>,
}

impl<G: Eg2Group> Opened<G> {
    pub fn to_json(&self, group: &G) -> Value {
        json!({
            "id": self.id,
            "contests": self.contests.iter().map(|c| {
                let mut v = json!({
                    "index": c.index,
                    "selections": c.selections.iter().map(|(o, sigma, xi)| json!({
                        "option": o, "vote": sigma, "nonce": sc(group, xi),
                    })).collect::<Vec<_>>(),
                });
                if let Some(d) = &c.data {
                    v["data"] = json!({"nonce": sc(group, &d.nonce), "D": hex(&d.d)});
                }
                v
            }).collect::<Vec<_>>(),
        })
    }

    pub fn read(group: &G, v: &Value) -> Result<Self, String> {
        let contests = items(v, "contests")?
            .iter()
            .map(|c| {
                Ok(OpenedContest {
                    index: count(c, "index")?,
                    selections: items(c, "selections")?
                        .iter()
                        .map(|s| {
                            Ok((
                                count(s, "option")?,
                                count(s, "vote")?,
                                scalar(group, s, "nonce")?,
                            ))
                        })
                        .collect::<Result<_, String>>()?,
                    data: optional(c, "data", |d| {
                        Ok(OpenedData {
                            nonce: scalar(group, d, "nonce")?,
                            d: unhex(d, "D")?,
                        })
                    })?,
                })
            })
            .collect::<Result<_, String>>()?;
        Ok(Self {
            id: text(v, "id")?.to_owned(),
            contests,
        })
    }
}

/// One cast ballot's contest data decrypted by the guardians (§3.6.6): β, the proof (c, v) (eqs. 97–103)
/// and D (eq. 106).
pub struct DecryptedData<G: Eg2Group> {
    pub ballot: String,
    pub contest: u32,
    pub beta: G::Element,
    pub proof: Pair<G>,
    pub d: Vec<u8>,
}

impl<G: Eg2Group> DecryptedData<G> {
    pub fn to_json(&self, group: &G) -> Value {
        json!({
            "ballot": self.ballot,
            "contest": self.contest,
            "beta": el(group, &self.beta),
            "c": sc(group, &self.proof.c),
            "v": sc(group, &self.proof.v),
            "D": hex(&self.d),
        })
    }

    pub fn read(group: &G, v: &Value) -> Result<Self, String> {
        Ok(Self {
            ballot: text(v, "ballot")?.to_owned(),
            contest: count(v, "contest")?,
            beta: element(group, v, "beta")?,
            proof: read_pair(group, v)?,
            d: unhex(v, "D")?,
        })
    }
}

/// One vector of an uncast pre-encrypted ballot as opened (§4.3): the option's label (None for a null
/// vote), the short code printed beside it, and the nonces ξ_i,j,1 … ξ_i,j,m of its m encryptions.
pub struct OpenedVector<G: Eg2Group> {
    pub label: Option<String>,
    pub short_code: String,
    pub nonces: Vec<G::Scalar>,
}

/// An uncast pre-encrypted ballot opened (spec/66.10): per contest, its m + L vectors in printed order.
pub struct OpenedPre<G: Eg2Group> {
    pub id: String,
    pub contests: Vec<(u32, Vec<OpenedVector<G>>)>,
}

impl<G: Eg2Group> OpenedPre<G> {
    pub fn to_json(&self, group: &G) -> Value {
        json!({
            "id": self.id,
            "pre_encrypted": true,
            "contests": self.contests.iter().map(|(c, vectors)| json!({
                "index": c,
                "vectors": vectors.iter().map(|v| json!({
                    "label": v.label,
                    "short_code": v.short_code,
                    "nonces": v.nonces.iter().map(|x| sc(group, x)).collect::<Vec<_>>(),
                })).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
        })
    }

    pub fn read(group: &G, v: &Value) -> Result<Self, String> {
        let vector = |x: &Value| -> Result<OpenedVector<G>, String> {
            Ok(OpenedVector {
                label: match &x["label"] {
                    Value::Null => None,
                    Value::String(s) => Some(s.clone()),
                    _ => return Err("`label` is neither a string nor null".into()),
                },
                short_code: text(x, "short_code")?.to_owned(),
                nonces: items(x, "nonces")?
                    .iter()
                    .map(|n| scalar(group, &json!({ "n": n }), "n"))
                    .collect::<Result<_, _>>()?,
            })
        };
        Ok(Self {
            id: text(v, "id")?.to_owned(),
            contests: per_contest(v, "vectors", vector)?,
        })
    }
}

/// The guardians' document: H_P, H_B, every guardian's key, K, K̂, H_G, H_E.
pub struct Keys<G: Eg2Group> {
    pub hp: [u8; 32],
    pub hb: [u8; 32],
    pub guardians: Vec<GuardianKey<G>>,
    pub k: G::Element,
    pub k_hat: G::Element,
    pub hg: [u8; 32],
    pub he: [u8; 32],
}

impl<G: Eg2Group> Keys<G> {
    pub fn to_json(&self, group: &G) -> Value {
        json!({
            "H_P": hex(&self.hp),
            "H_B": hex(&self.hb),
            "guardians": self.guardians.iter().map(|g| g.to_json(group)).collect::<Vec<_>>(),
            "K": el(group, &self.k),
            "K_hat": el(group, &self.k_hat),
            "H_G": hex(&self.hg),
            "H_E": hex(&self.he),
        })
    }

    pub fn read(group: &G, v: &Value) -> Result<Self, String> {
        Ok(Self {
            hp: fixed(v, "H_P")?,
            hb: fixed(v, "H_B")?,
            guardians: items(v, "guardians")?
                .iter()
                .map(|g| GuardianKey::read(group, g))
                .collect::<Result<_, _>>()?,
            k: element(group, v, "K")?,
            k_hat: element(group, v, "K_hat")?,
            hg: fixed(v, "H_G")?,
            he: fixed(v, "H_E")?,
        })
    }
}

/// The parameters' document: the version, the group's constants in hex, n and k.
pub fn parameters_json<G: Eg2Group>(group: &G, n: u32, k: u32) -> Value {
    let (name, _, constants) = group.constants();
    let mut c = serde_json::Map::new();
    for (key, value) in constants {
        c.insert(key.to_owned(), Value::String(value.to_uppercase()));
    }
    json!({"version": crate::v21::hashes::VERSION, "group": name, "constants": c, "n": n, "k": k})
}
