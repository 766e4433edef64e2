//! The checks of an IVXV record (spec/50.8, spec/93), one function each, on decoded values.

use std::collections::{BTreeMap, HashMap, HashSet};

use base64ct::{Base64, Encoding};
use rayon::prelude::*;
use serde_json::Value;
use votum_arith::Integer;

use crate::asn1::{self, Reader};
use crate::checks::Check;
use crate::report::Ledger;

/// `x` as an integer from big-endian bytes.
pub(crate) fn int(bytes: &[u8]) -> Integer {
    Integer::from_digits(bytes, votum_arith::Order::Msf)
}

pub(crate) fn sha256(data: &[u8]) -> [u8; 32] {
    use sha2::Digest;
    sha2::Sha256::digest(data).into()
}

/// IVXV's ElGamal algorithm identifier, 1.3.6.1.4.1.3029.2.1 (its DER contents).
const ELGAMAL_OID: &[u8] = &[0x2B, 0x06, 0x01, 0x04, 0x01, 0x97, 0x55, 0x02, 0x01];

/// The election's public key: the SubjectPublicKeyInfo as written (it enters every challenge) and
/// what it holds.
pub struct IvxvKey {
    pub spki: Vec<u8>,
    pub p: Integer,
    pub q: Integer,
    pub g: Integer,
    pub y: Integer,
    pub election: String,
}

impl IvxvKey {
    /// Reads a PEM `PUBLIC KEY`: SEQUENCE { SEQUENCE { OID, SEQUENCE { p, g, GeneralString election } },
    /// BIT STRING { SEQUENCE { y } } }.
    pub fn from_pem(pem: &[u8]) -> Result<IvxvKey, String> {
        let text = std::str::from_utf8(pem).map_err(|_| "the key file is not text")?;
        let body: String = text
            .lines()
            .map(str::trim)
            .skip_while(|l| *l != "-----BEGIN PUBLIC KEY-----")
            .skip(1)
            .take_while(|l| *l != "-----END PUBLIC KEY-----")
            .collect();
        let spki =
            Base64::decode_vec(&body).map_err(|e| format!("the key is not base64 PEM: {e}"))?;
        Self::from_der(spki).map_err(|e| format!("the key: {e}"))
    }

    fn from_der(spki: Vec<u8>) -> Result<IvxvKey, asn1::DerError> {
        let mut r = Reader::new(&spki);
        let mut info = r.sequence("SubjectPublicKeyInfo")?;
        r.end("the key")?;
        let mut alg = info.sequence("AlgorithmIdentifier")?;
        let oid = alg.expect(asn1::OID, "algorithm")?;
        if oid.contents != ELGAMAL_OID {
            return Err(asn1::DerError("the algorithm is not IVXV's ElGamal".into()));
        }
        let mut params = alg.sequence("parameters")?;
        let p = int(params.unsigned("p")?);
        let g = int(params.unsigned("g")?);
        let election = params.expect(asn1::GENERAL_STRING, "election id")?.contents;
        params.end("parameters")?;
        alg.end("AlgorithmIdentifier")?;
        let bits = info.expect(asn1::BIT_STRING, "subjectPublicKey")?.contents;
        info.end("SubjectPublicKeyInfo")?;
        let Some((0, key)) = bits.split_first() else {
            return Err(asn1::DerError(
                "the key's BIT STRING has unused bits".into(),
            ));
        };
        let mut kr = Reader::new(key);
        let mut ks = kr.sequence("public key")?;
        kr.end("public key")?;
        let y = int(ks.unsigned("y")?);
        ks.end("public key")?;
        let q = (p.clone() - 1u32) >> 1u32;
        let election = String::from_utf8_lossy(election).into_owned();
        Ok(IvxvKey {
            spki,
            p,
            q,
            g,
            y,
            election,
        })
    }

    fn in_group(&self, x: &Integer) -> bool {
        *x > 0u32 && *x < self.p && x.jacobi(&self.p) == 1
    }

    /// b^e mod p; the exponents here are decoded unsigned, so never negative (a negative one would
    /// give 0, which no equation of a proof accepts).
    fn pow(&self, b: &Integer, e: &Integer) -> Integer {
        b.pow_mod_ref(e, &self.p)
            .map(Integer::from)
            .unwrap_or_default()
    }
}

/// V-IVXV-02: the key is on RFC 3526's 3072-bit group with g = 2 (the standard IVXV uses), y is in
/// its subgroup of quadratic residues, and the key names the proof file's election. Returns whether
/// the group is the standard one (the proofs are checked only then).
pub fn check_key(ledger: &mut Ledger, key: &IvxvKey, election: &str, object: &str) -> bool {
    ledger.examined(Check::Ivxv02, 1);
    let standard = votum_group::ModpGroup::rfc3526_3072();
    let group_ok = key.p == *standard.p() && key.g == 2u32;
    if !group_ok {
        ledger.fail(
            Check::Ivxv02,
            object,
            "the key's group is not RFC 3526's 3072-bit group with g = 2",
        );
    } else if !key.in_group(&key.y) {
        ledger.fail(
            Check::Ivxv02,
            object,
            "the public key is not in the group's subgroup",
        );
    }
    if key.election != election {
        ledger.fail(
            Check::Ivxv02,
            object,
            format!(
                "the key is for election {:?}, the proofs for {election:?}",
                key.election
            ),
        );
    }
    group_ok
}

/// One proof of the file, decoded (the decoding's failure is kept for the check it belongs to).
pub struct Item {
    pub index: usize,
    pub ciphertext_b64: String,
    /// The ciphertext's DER and (u, v), or why it does not decode or is not in the group (checked once,
    /// as the items are decoded in parallel).
    pub ciphertext: Result<(Vec<u8>, Integer, Integer), String>,
    /// The message as it enters the challenge and as a group element, or why not.
    pub message: Result<Message, String>,
    /// (a, b, s) and the encodings of a and b, or why not.
    pub proof: Result<Proof, String>,
}

pub struct Message {
    /// The bytes the proof's challenge covers.
    pub decrypted: Vec<u8>,
    /// The padded encoding, as an integer (before it is taken into the subgroup).
    pub encoded: Integer,
    /// The vote the message gives, as text.
    pub vote: Result<String, String>,
    pub padded: bool,
}

pub struct Proof {
    pub a: Integer,
    pub b: Integer,
    pub s: Integer,
}

impl Item {
    pub fn decode(i: usize, c: &str, m: &str, p: &str, key: &IvxvKey) -> Item {
        let width = key.p.significant_bits().div_ceil(8) as usize;
        Item {
            index: i,
            ciphertext_b64: c.to_string(),
            ciphertext: ciphertext(c).and_then(|(der, u, v)| {
                if key.in_group(&u) && key.in_group(&v) {
                    Ok((der, u, v))
                } else {
                    Err("u or v is not in the group".into())
                }
            }),
            message: message(m, width),
            proof: proof(p),
        }
    }

    pub fn object(&self) -> String {
        format!("proof {}", self.index)
    }

    pub fn profile(&self) -> &'static str {
        match &self.message {
            Ok(m) if m.padded => "ivxv-padded",
            _ => "ivxv-text",
        }
    }
}

fn ciphertext(b64: &str) -> Result<(Vec<u8>, Integer, Integer), String> {
    let der = Base64::decode_vec(b64).map_err(|e| format!("the ciphertext is not base64: {e}"))?;
    let (u, v) = {
        let mut r = Reader::new(&der);
        let mut c = r.sequence("ciphertext").map_err(|e| e.to_string())?;
        r.end("ciphertext").map_err(|e| e.to_string())?;
        let mut alg = c.sequence("algorithm").map_err(|e| e.to_string())?;
        let oid = alg
            .expect(asn1::OID, "algorithm")
            .map_err(|e| e.to_string())?;
        if oid.contents != ELGAMAL_OID || !alg.is_empty() {
            return Err("the ciphertext's algorithm is not IVXV's ElGamal".into());
        }
        let mut uv = c.sequence("(u, v)").map_err(|e| e.to_string())?;
        c.end("ciphertext").map_err(|e| e.to_string())?;
        let u = int(uv.unsigned("u").map_err(|e| e.to_string())?);
        let v = int(uv.unsigned("v").map_err(|e| e.to_string())?);
        uv.end("(u, v)").map_err(|e| e.to_string())?;
        (u, v)
    };
    Ok((der, u, v))
}

/// The message in either of IVXV's forms: base64 of the padded encoding (EP2024), or the vote as text
/// (RK2023), which is padded here as IVXV pads it: 00 01 FF…FF 00 ‖ text, `width` bytes in all.
fn message(m: &str, width: usize) -> Result<Message, String> {
    if let Ok(bytes) = Base64::decode_vec(m) {
        if bytes.len() == width && bytes.starts_with(&[0, 1]) {
            let vote = unpad(&bytes);
            return Ok(Message {
                encoded: int(&bytes),
                decrypted: bytes,
                vote,
                padded: true,
            });
        }
    }
    let text = m.as_bytes();
    if text.len() + 11 > width {
        return Err(format!(
            "a message of {} bytes does not fit the group",
            text.len()
        ));
    }
    let mut padded = vec![0u8, 1];
    padded.resize(width - text.len() - 1, 0xFF);
    padded.push(0);
    padded.extend_from_slice(text);
    Ok(Message {
        encoded: int(&padded),
        decrypted: text.to_vec(),
        vote: Ok(m.to_string()),
        padded: false,
    })
}

/// The text of a padded encoding: 00 01, at least eight FF bytes, 00, then UTF-8.
fn unpad(bytes: &[u8]) -> Result<String, String> {
    let body = &bytes[2..];
    let ffs = body.iter().take_while(|&&b| b == 0xFF).count();
    if ffs < 8 || body.get(ffs) != Some(&0) {
        return Err("the padding is not 00 01 FF…FF 00".into());
    }
    String::from_utf8(body[ffs + 1..].to_vec()).map_err(|_| "the vote is not UTF-8".into())
}

fn proof(b64: &str) -> Result<Proof, String> {
    let der = Base64::decode_vec(b64).map_err(|e| format!("the proof is not base64: {e}"))?;
    let mut r = Reader::new(&der);
    let mut s = r.sequence("proof").map_err(|e| e.to_string())?;
    r.end("proof").map_err(|e| e.to_string())?;
    let a = int(s.unsigned("a").map_err(|e| e.to_string())?);
    let b = int(s.unsigned("b").map_err(|e| e.to_string())?);
    let z = int(s.unsigned("s").map_err(|e| e.to_string())?);
    s.end("proof").map_err(|e| e.to_string())?;
    Ok(Proof { a, b, s: z })
}

/// V-IVXV-03: every ciphertext decodes, u and v are in the group, and no ciphertext is decrypted
/// twice (each vote is counted once).
pub fn check_ciphertexts(ledger: &mut Ledger, items: &[Item]) {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for item in items {
        ledger.examined(Check::Ivxv03, 1);
        if let Err(e) = &item.ciphertext {
            ledger.fail(Check::Ivxv03, &item.object(), e.clone());
        }
        if let Some(first) = seen.insert(item.ciphertext_b64.as_str(), item.index) {
            ledger.fail(
                Check::Ivxv03,
                &item.object(),
                format!("the same ciphertext as proof {first}: a vote counted twice"),
            );
        }
    }
}

/// V-IVXV-03, with the mixer's output: the proofs decrypt exactly the ciphertexts the last mixer
/// output (every district, every question), each once.
pub fn check_mixed(ledger: &mut Ledger, items: &[Item], bytes: &[u8], object: &str) {
    let doc: Value = match serde_json::from_slice(bytes) {
        Ok(v) => v,
        Err(e) => return ledger.fail(Check::Ivxv03, object, format!("not JSON: {e}")),
    };
    let mut mixed: Vec<&str> = Vec::new();
    let walk = doc.get("districts").and_then(Value::as_object);
    for (_, district) in walk.into_iter().flatten() {
        for (_, station) in district.as_object().into_iter().flatten() {
            for (_, list) in station.as_object().into_iter().flatten() {
                mixed.extend(
                    list.as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(Value::as_str),
                );
            }
        }
    }
    let mut ours: Vec<&str> = items.iter().map(|i| i.ciphertext_b64.as_str()).collect();
    mixed.sort_unstable();
    ours.sort_unstable();
    if mixed != ours {
        let m: HashSet<&str> = mixed.iter().copied().collect();
        let o: HashSet<&str> = ours.iter().copied().collect();
        ledger.fail(
            Check::Ivxv03,
            object,
            format!(
                "the proofs decrypt {} ciphertexts the mixer did not output, and miss {} it did",
                o.difference(&m).count() + ours.len().saturating_sub(o.len()),
                m.difference(&o).count() + mixed.len().saturating_sub(m.len()),
            ),
        );
    }
}

/// The proof's challenge: SHA-256 in counter mode over the DER of SEQUENCE { "DECRYPTION", key,
/// ciphertext, decrypted, a, b }, as many bytes as q has, the bits above q's length cleared, until
/// it is below q (the counter runs on).
pub fn challenge(key: &IvxvKey, ciphertext: &[u8], decrypted: &[u8], p: &Proof) -> Integer {
    let seed = asn1::tlv(
        asn1::SEQUENCE,
        &[
            asn1::tlv(asn1::GENERAL_STRING, b"DECRYPTION"),
            key.spki.clone(),
            ciphertext.to_vec(),
            asn1::tlv(asn1::OCTET_STRING, decrypted),
            asn1::unsigned(&p.a.to_digits(votum_arith::Order::Msf)),
            asn1::unsigned(&p.b.to_digits(votum_arith::Order::Msf)),
        ]
        .concat(),
    );
    let bits = key.q.significant_bits() as usize;
    let n = bits.div_ceil(8);
    let mut counter: u64 = 1;
    loop {
        let mut out = Vec::with_capacity(n + 32);
        while out.len() < n {
            let mut block = counter.to_be_bytes().to_vec();
            block.extend_from_slice(&seed);
            out.extend_from_slice(&sha256(&block));
            counter += 1;
        }
        out.truncate(n);
        if !bits.is_multiple_of(8) {
            out[0] &= (1u8 << (bits % 8)) - 1;
        }
        let k = int(&out);
        if k < key.q {
            return k;
        }
    }
}

/// V-IVXV-04: every decryption proof: a and b in the group, s below q, and, with k the challenge and
/// m the message taken into the subgroup (m, or p − m when m is not a residue),
/// u^s = a·(v/m)^k and g^s = b·y^k. Returns per proof whether it holds.
///
/// The equations of a chunk of proofs are checked at once (spec/93.5): with random 64-bit r_i,
/// Π u_i^(r_i·s_i) · w_i^(r_i·k_i) = Π a_i^(r_i) (w_i = m_i/v_i) and
/// g^(Σ r_i·s_i) = y^(Σ r_i·k_i) · Π b_i^(r_i), every element checked in the subgroup of order q first;
/// a false proof passes a chunk with probability at most 2^-64. A chunk that fails is checked proof by
/// proof, so each false proof is named.
pub fn check_proofs(ledger: &mut Ledger, items: &[&Item], key: &IvxvKey) -> Vec<bool> {
    let prepared: Vec<Result<Prepared, String>> =
        items.par_iter().map(|i| prepare(i, key)).collect();
    let mut verdicts: Vec<Result<(), String>> = prepared
        .iter()
        .map(|p| p.as_ref().map(|_| ()).map_err(Clone::clone))
        .collect();
    let modulus = votum_arith::Modulus::new(key.p.clone()).ok();
    let ready: Vec<usize> = (0..items.len()).filter(|&i| prepared[i].is_ok()).collect();
    for chunk in ready.chunks(BATCH) {
        let batch: Vec<&Prepared> = chunk
            .iter()
            .filter_map(|&i| prepared[i].as_ref().ok())
            .collect();
        let holds = modulus
            .as_ref()
            .is_some_and(|m| batch_holds(m, key, &batch));
        if !holds {
            let one: Vec<Result<(), String>> =
                batch.par_iter().map(|p| equations(p, key)).collect();
            for (&i, v) in chunk.iter().zip(one) {
                verdicts[i] = v;
            }
        }
    }
    verdicts
        .into_iter()
        .zip(items)
        .map(|(v, item)| {
            ledger.examined(Check::Ivxv04, 1);
            match v {
                Ok(()) => true,
                Err(e) => {
                    ledger.fail(Check::Ivxv04, &item.object(), e);
                    false
                }
            }
        })
        .collect()
}

/// A cluster worker's check of IVXV decryption proofs (spec/98.1): built from the parameters
/// [`ProofChecker::params`] (the tag, then the election key's PEM), it checks a chunk of proofs, each
/// the JSON array of its ciphertext, message and proof strings as the proof file gives them, with
/// the same batched equations as the verifier (V-IVXV-04). A proof that does not decode fails.
pub struct ProofChecker {
    key: IvxvKey,
}

impl ProofChecker {
    /// What the parameters start with.
    pub const TAG: &'static [u8] = b"ivxv-proofs\n";

    pub fn params(key_pem: &[u8]) -> Vec<u8> {
        [Self::TAG, key_pem].concat()
    }

    pub fn new(params: &[u8]) -> Result<ProofChecker, String> {
        let pem = params
            .strip_prefix(Self::TAG)
            .ok_or("not IVXV proof-check parameters")?;
        Ok(ProofChecker {
            key: IvxvKey::from_pem(pem)?,
        })
    }

    /// One verdict per proof, in order: its equations hold.
    pub fn check(&self, proofs: &[&str]) -> Vec<bool> {
        let parsed: Vec<Option<Item>> = proofs
            .par_iter()
            .enumerate()
            .map(|(i, text)| {
                let v: Vec<String> = serde_json::from_str(text).ok()?;
                let [c, m, p] = v.as_slice() else {
                    return None;
                };
                Some(Item::decode(i, c, m, p, &self.key))
            })
            .collect();
        let present: Vec<bool> = parsed.iter().map(Option::is_some).collect();
        let decoded: Vec<Item> = parsed.into_iter().flatten().collect();
        let mut scratch = Ledger::new(&Check::IVXV);
        let decoded: Vec<&Item> = decoded.iter().collect();
        let mut verdicts = check_proofs(&mut scratch, &decoded, &self.key).into_iter();
        present
            .into_iter()
            .map(|p| p && verdicts.next().unwrap_or(false))
            .collect()
    }
}

/// Proofs checked together (a multi-exponentiation of 2·BATCH bases amortizes well; memory stays
/// a few megabytes).
const BATCH: usize = 4096;

/// A proof's values, checked one by one, ready for its equations.
struct Prepared {
    u: Integer,
    /// m/v, so that u^s · w^k = a
    w: Integer,
    a: Integer,
    b: Integer,
    s: Integer,
    k: Integer,
}

fn prepare(item: &Item, key: &IvxvKey) -> Result<Prepared, String> {
    let (der, u, v) = item
        .ciphertext
        .as_ref()
        .map_err(|_| "not checked: its ciphertext fails V-IVXV-03")?;
    let m = item.message.as_ref().map_err(Clone::clone)?;
    let p = item.proof.as_ref().map_err(Clone::clone)?;
    for (name, x) in [("a", &p.a), ("b", &p.b)] {
        if !key.in_group(x) {
            return Err(format!("{name} is not in the group"));
        }
    }
    if p.s >= key.q {
        return Err("s is not below q".into());
    }
    let mut element = m.encoded.clone();
    if element >= key.p || element == 0u32 {
        return Err("the message is not below p".into());
    }
    if element.jacobi(&key.p) != 1 {
        element = key.p.clone() - element;
    }
    let k = challenge(key, der, &m.decrypted, p);
    let v_inverse = Integer::from(v.invert_ref(&key.p).ok_or("v has no inverse")?);
    let w = Integer::from(&element * &v_inverse) % &key.p;
    Ok(Prepared {
        u: u.clone(),
        w,
        a: p.a.clone(),
        b: p.b.clone(),
        s: p.s.clone(),
        k,
    })
}

/// One proof's two equations.
fn equations(p: &Prepared, key: &IvxvKey) -> Result<(), String> {
    let left1 = Integer::from(&key.pow(&p.u, &p.s) * &key.pow(&p.w, &p.k)) % &key.p;
    if left1 != p.a {
        return Err("u^s ≠ a·(v/m)^k: the proof does not show this decryption".into());
    }
    let right2 = Integer::from(&p.b * &key.pow(&key.y, &p.k)) % &key.p;
    if key.pow(&key.g, &p.s) != right2 {
        return Err("g^s ≠ b·y^k: the proof is not by the key's holder".into());
    }
    Ok(())
}

/// Both equations of every proof of `batch` at once, with random weights (see [`check_proofs`]).
fn batch_holds(m: &votum_arith::Modulus, key: &IvxvKey, batch: &[&Prepared]) -> bool {
    use rand_core::RngCore;
    let mut rng = rand_core::OsRng;
    let r: Vec<Integer> = batch
        .iter()
        .map(|_| Integer::from(rng.next_u64() | 1))
        .collect();
    let mut bases = Vec::with_capacity(2 * batch.len());
    let mut exps = Vec::with_capacity(2 * batch.len());
    let (mut sum_s, mut sum_k) = (Integer::new(), Integer::new());
    for (p, r) in batch.iter().zip(&r) {
        let rs = Integer::from(r * &p.s) % &key.q;
        let rk = Integer::from(r * &p.k) % &key.q;
        sum_s += &rs;
        sum_k += &rk;
        bases.push(p.u.clone());
        exps.push(rs);
        bases.push(p.w.clone());
        exps.push(rk);
    }
    sum_s %= &key.q;
    sum_k %= &key.q;
    let a: Vec<Integer> = batch.iter().map(|p| p.a.clone()).collect();
    let b: Vec<Integer> = batch.iter().map(|p| p.b.clone()).collect();
    let (Ok(left1), Ok(right1), Ok(bs)) = (
        votum_arith::multi_pow_parallel(m, &bases, &exps),
        votum_arith::multi_pow_parallel(m, &a, &r),
        votum_arith::multi_pow_parallel(m, &b, &r),
    ) else {
        return false;
    };
    let right2 = Integer::from(&bs * &key.pow(&key.y, &sum_k)) % &key.p;
    left1 == right1 && key.pow(&key.g, &sum_s) == right2
}

/// V-IVXV-05: every message is a vote in the file's one form (all padded, or all text), and its
/// padding is IVXV's; returns the votes per choice that the proofs prove.
pub fn check_plaintexts(
    ledger: &mut Ledger,
    items: &[Item],
    proven: &[bool],
) -> BTreeMap<String, u64> {
    let mut counts = BTreeMap::new();
    let form = items.first().map(Item::profile);
    for (item, ok) in items.iter().zip(proven) {
        ledger.examined(Check::Ivxv05, 1);
        match &item.message {
            Err(e) => ledger.fail(Check::Ivxv05, &item.object(), e.clone()),
            Ok(m) => {
                if Some(item.profile()) != form {
                    ledger.fail(
                        Check::Ivxv05,
                        &item.object(),
                        "its message is in another form than the first's",
                    );
                }
                match &m.vote {
                    Err(e) => ledger.fail(Check::Ivxv05, &item.object(), e.clone()),
                    Ok(vote) if *ok => *counts.entry(vote.clone()).or_insert(0) += 1,
                    Ok(_) => {}
                }
            }
        }
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session() -> (IvxvKey, Vec<Item>) {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../vectors/ivxv/rk2023-live");
        let key = IvxvKey::from_pem(&std::fs::read(dir.join("RK2023_LIVEDEMO-pub.pem")).unwrap())
            .unwrap();
        let doc: Value =
            serde_json::from_slice(&std::fs::read(dir.join("RK2023_LIVEDEMO-proof")).unwrap())
                .unwrap();
        let items = doc["proofs"]
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let f = |n: &str| p[n].as_str().unwrap().to_string();
                Item::decode(i, &f("ciphertext"), &f("message"), &f("proof"), &key)
            })
            .collect();
        (key, items)
    }

    /// The batch is what passes an honest session (not the proof-by-proof fallback), and it catches one
    /// false proof among many: each equation on its own.
    #[test]
    fn the_batch_holds_for_honest_proofs_and_fails_for_one_false_one() {
        let (key, items) = session();
        let m = votum_arith::Modulus::new(key.p.clone()).unwrap();
        let prepared: Vec<Prepared> = items.iter().map(|i| prepare(i, &key).unwrap()).collect();
        let all: Vec<&Prepared> = prepared.iter().collect();
        assert!(batch_holds(&m, &key, &all));
        for p in &prepared {
            assert!(equations(p, &key).is_ok());
        }
        // a commitment a from another proof (the first equation), then b (the second)
        for second in [false, true] {
            let mut bad: Vec<Prepared> = items.iter().map(|i| prepare(i, &key).unwrap()).collect();
            if second {
                bad[30].b = bad[31].b.clone();
            } else {
                bad[30].a = bad[31].a.clone();
            }
            let refs: Vec<&Prepared> = bad.iter().collect();
            assert!(!batch_holds(&m, &key, &refs), "second equation: {second}");
            assert!(equations(&bad[30], &key).is_err());
        }
    }
}
