//! The record as egk-ec writes it (spec/65.3): each document as JSON, numbers and hashes in base64, elements
//! and scalars at their fixed widths, nullable fields written as null.

use base64ct::{Base64, Encoding};
use serde_json::{json, Value};
use votum_elgamal::Ciphertext;

use crate::ceremony::PublicGuardian;
use crate::contest_data::Plain;
use crate::encrypt::EncryptedBallot;
use crate::group::Eg2Group;
use crate::{ContestData, Pair};

pub fn b64(bytes: &[u8]) -> Value {
    Value::String(Base64::encode_string(bytes))
}

pub fn element<G: Eg2Group>(group: &G, e: &G::Element) -> Value {
    b64(&group.hash_bytes(e))
}

pub fn scalar<G: Eg2Group>(group: &G, s: &G::Scalar) -> Value {
    b64(&group.scalar_bytes(s))
}

pub fn ciphertext<G: Eg2Group>(group: &G, ct: &Ciphertext<G>) -> Value {
    json!({"pad": element(group, &ct.pad), "data": element(group, &ct.data)})
}

fn pair<G: Eg2Group>(group: &G, p: &Pair<G>) -> Value {
    json!({"challenge": scalar(group, &p.c), "response": scalar(group, &p.v)})
}

fn range<G: Eg2Group>(group: &G, proof: &[Pair<G>]) -> Value {
    json!({"proofs": proof.iter().map(|p| pair(group, p)).collect::<Vec<_>>()})
}

pub fn contest_data<G: Eg2Group>(group: &G, d: &ContestData<G>, num_bytes: usize) -> Value {
    json!({"c0": element(group, &d.c0), "c1": b64(&d.c1), "c2": b64(&d.c2), "numBytes": num_bytes})
}

pub use crate::group::parameter_inputs;

pub fn constants<G: Eg2Group>(group: &G) -> Value {
    let (name, kind, named) = group.constants();
    let map: serde_json::Map<String, Value> = named
        .into_iter()
        .map(|(n, v)| (n.to_owned(), Value::String(v)))
        .collect();
    json!({"name": name, "type": kind, "protocolVersion": group.protocol_version(), "constants": map})
}

pub fn config(n: u32, k: u32, hp: &[u8; 32], hm: &[u8; 32], hb: &[u8; 32], baux0: &[u8]) -> Value {
    json!({
        "config_version": "2.1.0",
        "number_of_guardians": n,
        "quorum": k,
        "parameter_base_hash": b64(hp),
        "manifest_hash": b64(hm),
        "election_base_hash": b64(hb),
        "chain_confirmation_codes": false,
        "baux0": b64(baux0),
        "metadata": {"Created by": "votum"},
    })
}

pub fn initialized<G: Eg2Group>(
    group: &G,
    k: &G::Element,
    he: &[u8; 32],
    guardians: &[PublicGuardian<G>],
) -> Value {
    let guardians: Vec<Value> = guardians.iter().map(|g| guardian(group, g)).collect();
    json!({
        "joint_public_key": element(group, k),
        "extended_base_hash": b64(he),
        "guardians": guardians,
        "metadata": {"Created by": "votum"},
    })
}

/// A guardian's public record: id, x-coordinate, and each commitment with its proof.
pub fn guardian<G: Eg2Group>(group: &G, g: &PublicGuardian<G>) -> Value {
    let proofs: Vec<Value> = g
        .commitments
        .iter()
        .zip(&g.proofs)
        .map(|(kij, p)| {
            json!({"public_key": element(group, kij), "challenge": scalar(group, &p.c),
                   "response": scalar(group, &p.v)})
        })
        .collect();
    json!({"guardian_id": g.id, "x_coordinate": g.x, "coefficient_proofs": proofs})
}

fn upper_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02X}")).collect()
}

pub fn ballot<G: Eg2Group>(group: &G, b: &EncryptedBallot<G>) -> Value {
    let contests: Vec<Value> = b
        .contests
        .iter()
        .map(|c| {
            let selections: Vec<Value> = c
                .selections
                .iter()
                .map(|s| {
                    json!({"selection_id": s.id, "sequence_order": s.sequence,
                           "encrypted_vote": ciphertext(group, &s.ct), "proof": range(group, &s.proof)})
                })
                .collect();
            json!({
                "contest_id": c.id,
                "sequence_order": c.sequence,
                "contest_hash": b64(&c.hash),
                "selections": selections,
                "proof": range(group, &c.proof),
                "encrypted_contest_data": contest_data(group, &c.data, c.num_bytes),
                "pre_encryption": null,
            })
        })
        .collect();
    json!({
        "ballot_id": b.id,
        "ballot_style_id": b.style,
        "encrypting_device": b.device,
        "timestamp": b.timestamp,
        "code_baux": upper_hex(&b.baux),
        "confirmation_code": b64(&b.code),
        "election_id": b64(&b.he),
        "contests": contests,
        "state": b.state.name(),
        "encrypted_sn": null,
        "is_preencrypt": false,
    })
}

/// One decrypted option: its count, T = B/M, (A, B) and the proof.
pub struct DecryptedOption<G: Eg2Group> {
    pub id: String,
    pub count: u64,
    pub t: G::Element,
    pub ct: Ciphertext<G>,
    pub proof: Pair<G>,
}

/// A challenged ballot's decrypted contest data: the plaintext, (C₀, C₁, C₂), β and its proof.
pub struct DecryptedData<G: Eg2Group> {
    pub plain: Plain,
    pub data: ContestData<G>,
    pub num_bytes: usize,
    pub beta: G::Element,
    pub proof: Pair<G>,
}

pub struct DecryptedContest<G: Eg2Group> {
    pub id: String,
    pub sequence: u32,
    pub options: Vec<DecryptedOption<G>>,
    pub ballot_count: u64,
    pub data: Option<DecryptedData<G>>,
}

pub fn decrypted<G: Eg2Group>(
    group: &G,
    id: &str,
    he: &[u8; 32],
    contests: &[DecryptedContest<G>],
) -> Value {
    let contests: Vec<Value> = contests
        .iter()
        .map(|c| {
            let selections: Vec<Value> = c
                .options
                .iter()
                .map(|o| {
                    json!({"selection_id": o.id, "tally": o.count, "b_over_m": element(group, &o.t),
                           "encrypted_vote": ciphertext(group, &o.ct), "proof": pair(group, &o.proof)})
                })
                .collect();
            let data = c.data.as_ref().map_or(Value::Null, |d| {
                json!({
                    "contest_data": {"over_votes": d.plain.overvotes, "write_ins": d.plain.write_ins,
                                     "status": d.plain.status.name()},
                    "encrypted_contest_data": contest_data(group, &d.data, d.num_bytes),
                    "proof": pair(group, &d.proof),
                    "beta": element(group, &d.beta),
                })
            });
            json!({"contest_id": c.id, "selections": selections, "ballot_count": c.ballot_count,
                   "decrypted_contest_data": data})
        })
        .collect();
    json!({"id": id, "contests": contests, "election_id": b64(he)})
}

/// A contest of the encrypted tally: id, sequence order, (option, its sequence order, (A, B)) each, and the
/// number of cast ballots that hold the contest.
pub type TallyContest<G> = (String, u32, Vec<(String, u32, Ciphertext<G>)>, u64);

pub fn encrypted_tally<G: Eg2Group>(
    group: &G,
    id: &str,
    he: &[u8; 32],
    contests: &[TallyContest<G>],
    cast_ids: &[String],
) -> Value {
    let contests: Vec<Value> = contests
        .iter()
        .map(|(cid, seq, options, count)| {
            let selections: Vec<Value> = options
                .iter()
                .map(|(oid, oseq, ct)| {
                    json!({"selection_id": oid, "sequence_order": oseq,
                           "encrypted_vote": ciphertext(group, ct)})
                })
                .collect();
            json!({"contest_id": cid, "sequence_order": seq, "selections": selections, "ballot_count": count})
        })
        .collect();
    json!({"tally_id": id, "contests": contests, "cast_ballot_ids": cast_ids, "election_id": b64(he)})
}
