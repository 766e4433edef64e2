//! The checks of a Belenios election (spec/50.9, spec/94), one function each, on decoded values. The
//! archive's reader and the walk through its events are `belenios.rs`.

use std::collections::HashMap;

use base64ct::{Base64Unpadded, Encoding};
use rayon::prelude::*;
use serde_json::Value;
use votum_arith::{FixedBaseTable, Integer, Modulus};

use crate::checks::ivxv::sha256;
use crate::checks::Check;
use crate::report::Ledger;

/// BELENIOS-2048 (Belenios specification 2.0, section 5.1), in decimal as published.
const BELENIOS_2048_P: &str = "20694785691422546401013643657505008064922989295751104097100884787057374219242717401922237254497684338129066633138078958404960054389636289796393038773905722803605973749427671376777618898589872735865049081167099310535867780980030790491654063777173764198678527273474476341835600035698305193144284561701911000786737307333564123971732897913240474578834468260652327974647951137672658693582180046317922073668860052627186363386088796882120769432366149491002923444346373222145884100586421050242120365433561201320481118852408731077014151666200162313177169372189248078507711827842317498073276598828825169183103125680162072880719";
const BELENIOS_2048_G: &str = "2402352677501852209227687703532399932712287657378364916510075318787663274146353219320285676155269678799694668298749389095083896573425601900601068477164491735474137283104610458681314511781646755400527402889846139864532661215055797097162016168270312886432456663834863635782106154918419982534315189740658186868651151358576410138882215396016043228843603930989333662772848406593138406010231675095763777982665103606822406635076697764025346253773085133173495194248967754052573659049492477631475991575198775177711481490920456600205478127054728238140972518639858334115700568353695553423781475582491896050296680037745308460627";
const BELENIOS_2048_Q: &str =
    "78571733251071885079927659812671450121821421258408794611510081919805623223441";

/// The group of an election, with a table for powers of g.
pub(crate) struct BelGroup {
    pub name: &'static str,
    pub m: Modulus,
    pub q: Integer,
    pub g: Integer,
    /// the subgroup is the quadratic residues (a safe prime): membership is a Jacobi symbol
    qr: bool,
    /// (padding bits, bits per integer) of the group's embedding of integers (spec/94.6), if it has one
    pub embedding: Option<(u32, u32)>,
    g_table: FixedBaseTable,
}

fn decimal(s: &str) -> Integer {
    Integer::from_str_radix(s, 10).unwrap_or_default()
}

impl BelGroup {
    /// The group called `name` in an election, or `None`.
    pub(crate) fn of_name(name: &str) -> Option<BelGroup> {
        let (name, p, q, g, qr, embedding) = match name {
            "BELENIOS-2048" => (
                "BELENIOS-2048",
                decimal(BELENIOS_2048_P),
                decimal(BELENIOS_2048_Q),
                decimal(BELENIOS_2048_G),
                false,
                None,
            ),
            "RFC-3526-2048" => {
                let p = votum_group::ModpGroup::rfc3526_2048().p().clone();
                let q = Integer::from(&p - 1u32) >> 1u32;
                ("RFC-3526-2048", p, q, Integer::from(2), true, Some((8, 8)))
            }
            _ => return None,
        };
        let m = Modulus::new(p).ok()?;
        let g_table = FixedBaseTable::new(&m, &g, q.significant_bits()).ok()?;
        Some(BelGroup {
            name,
            m,
            q,
            g,
            qr,
            embedding,
            g_table,
        })
    }

    /// Belenios' independent generator number `i` (spec/94.6): SHA-256(`ggen|i`) raised to (p − 1)/q.
    pub(crate) fn generator(&self, i: i64) -> Integer {
        let h = Integer::from_digits(
            &sha256(format!("ggen|{i}").as_bytes()),
            votum_arith::Order::Msf,
        );
        let cofactor = Integer::from(self.p() - 1u32) / &self.q;
        self.pow(&h, &cofactor)
    }

    /// The n integers that member `m` embeds (spec/94.6), or `None` without an embedding.
    pub(crate) fn decode_ints(&self, m: &Integer, n: usize) -> Option<Vec<u64>> {
        let (padding, bits) = self.embedding?;
        let mask = Integer::from((1u64 << bits) - 1);
        let mut x = Integer::from(m >> padding);
        let mut out = vec![0u64; n];
        for slot in out.iter_mut().rev() {
            *slot = Integer::from(&x & &mask).to_u64().unwrap_or(0);
            x >>= bits;
        }
        Some(out)
    }

    pub(crate) fn p(&self) -> &Integer {
        self.m.value()
    }

    /// Whether the subgroup is the quadratic residues (membership by the Jacobi symbol).
    pub(crate) fn qr_group(&self) -> bool {
        self.qr
    }

    /// 0 < x < p.
    pub(crate) fn in_range(&self, x: &Integer) -> bool {
        *x >= 1 && x < self.p()
    }

    /// 0 < x < p and x in the order-q subgroup.
    pub(crate) fn member(&self, x: &Integer) -> bool {
        if !self.in_range(x) {
            return false;
        }
        if self.qr {
            x.jacobi(self.p()) == 1
        } else {
            matches!(self.m.pow(x, &self.q), Ok(r) if r == 1)
        }
    }

    /// Both members (one pass for the two powers where the CPU allows, `Modulus::pow2`).
    pub(crate) fn members(&self, x: &Integer, y: &Integer) -> bool {
        if self.qr {
            return self.member(x) && self.member(y);
        }
        self.in_range(x)
            && self.in_range(y)
            && matches!(self.m.pow2([x, y], [&self.q, &self.q]), Ok([a, b]) if a == 1 && b == 1)
    }

    /// `[a^e, b^f]`.
    pub(crate) fn pow2(&self, a: &Integer, e: &Integer, b: &Integer, f: &Integer) -> [Integer; 2] {
        self.m
            .pow2([a, b], [e, f])
            .unwrap_or_else(|_| [Integer::new(), Integer::new()])
    }

    pub(crate) fn scalar_ok(&self, x: &Integer) -> bool {
        *x >= 0 && *x < self.q
    }

    pub(crate) fn gpow(&self, e: &Integer) -> Integer {
        self.g_table
            .pow(e)
            .unwrap_or_else(|_| self.m.pow(&self.g, e).unwrap_or_default())
    }

    pub(crate) fn pow(&self, b: &Integer, e: &Integer) -> Integer {
        self.m.pow(b, e).unwrap_or_default()
    }

    pub(crate) fn mul(&self, a: &Integer, b: &Integer) -> Integer {
        self.m.mul(a, b)
    }

    pub(crate) fn inverse(&self, a: &Integer) -> Integer {
        self.m.inverse(a).unwrap_or_default()
    }

    /// H(prefix, xs): SHA-256 of `prefix` and the decimal xs joined by commas, mod q (spec/94.2).
    pub(crate) fn hash(&self, prefix: &str, xs: &[&Integer]) -> Integer {
        let mut s = String::with_capacity(prefix.len() + xs.len() * 620);
        s.push_str(prefix);
        for (i, x) in xs.iter().enumerate() {
            if i > 0 {
                s.push(',');
            }
            s.push_str(&x.to_string());
        }
        let h = Integer::from_digits(&sha256(s.as_bytes()), votum_arith::Order::Msf);
        h % &self.q
    }

    /// A Schnorr proof of knowledge of log_g(key): c = H(prefix, g^r·key^c), c and r in [0, q).
    pub(crate) fn schnorr(&self, prefix: &str, key: &Integer, proof: &Pair) -> bool {
        if !self.scalar_ok(&proof.c) || !self.scalar_ok(&proof.r) {
            return false;
        }
        let a = self.mul(&self.gpow(&proof.r), &self.pow(key, &proof.c));
        self.hash(prefix, &[&a]) == proof.c
    }
}

/// An election key with its table.
pub(crate) struct Key {
    pub y: Integer,
    table: FixedBaseTable,
}

impl Key {
    pub(crate) fn new(group: &BelGroup, y: Integer) -> Option<Key> {
        let table = FixedBaseTable::new(&group.m, &y, group.q.significant_bits()).ok()?;
        Some(Key { y, table })
    }

    fn pow(&self, group: &BelGroup, e: &Integer) -> Integer {
        self.table.pow(e).unwrap_or_else(|_| group.pow(&self.y, e))
    }
}

/// A (challenge, response) pair.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Pair {
    pub c: Integer,
    pub r: Integer,
}

/// A decimal number written as a JSON string of digits (spec/94.2).
pub(crate) fn number(v: &Value, what: &str) -> Result<Integer, String> {
    let s = v
        .as_str()
        .ok_or_else(|| format!("{what}: not a string of digits"))?;
    if s.is_empty() || s.len() > 2000 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("{what}: not a decimal number"));
    }
    Ok(decimal(s))
}

pub(crate) fn field<'v>(v: &'v Value, name: &str, what: &str) -> Result<&'v Value, String> {
    v.get(name)
        .ok_or_else(|| format!("{what}: no `{name}` field"))
}

pub(crate) fn array<'v>(v: &'v Value, what: &str) -> Result<&'v Vec<Value>, String> {
    v.as_array().ok_or_else(|| format!("{what}: not a list"))
}

pub(crate) fn pair(v: &Value, what: &str) -> Result<Pair, String> {
    Ok(Pair {
        c: number(field(v, "challenge", what)?, what)?,
        r: number(field(v, "response", what)?, what)?,
    })
}

fn pairs(v: &Value, what: &str) -> Result<Vec<Pair>, String> {
    array(v, what)?.iter().map(|p| pair(p, what)).collect()
}

pub(crate) type Ciphertext = (Integer, Integer);

pub(crate) fn ciphertext(v: &Value, what: &str) -> Result<Ciphertext, String> {
    Ok((
        number(field(v, "alpha", what)?, what)?,
        number(field(v, "beta", what)?, what)?,
    ))
}

/// A homomorphic question.
#[derive(Clone, Debug)]
pub(crate) struct Question {
    /// the question's text and its answers' (for the report)
    pub text: String,
    pub names: Vec<String>,
    pub answers: usize,
    pub blank: bool,
    pub min: usize,
    pub max: usize,
    /// a non-homomorphic (mixnet) question: one ciphertext per ballot, shuffled, decrypted one by one
    pub nh: bool,
}

impl Question {
    /// Its number of ciphertexts in a ballot.
    pub(crate) fn width(&self) -> usize {
        if self.nh {
            1
        } else {
            self.answers + usize::from(self.blank)
        }
    }
}

/// The election's parameters that the checks use.
pub(crate) struct Election {
    pub group: BelGroup,
    pub key: Key,
    pub uuid: String,
    /// φ, the unpadded base64 SHA-256 of the election's bytes
    pub fingerprint: String,
    pub questions: Vec<Question>,
    /// g^{-M} for M = 0..=the largest M a proof needs
    ginv_pows: Vec<Integer>,
}

/// Reads the election entry (V-BEL-02). `Err` says why it is not an election votum verifies.
pub(crate) fn check_election(bytes: &[u8]) -> Result<Election, String> {
    let v: Value =
        serde_json::from_slice(bytes).map_err(|e| format!("the election is not JSON: {e}"))?;
    if v.get("version").and_then(Value::as_u64) != Some(1) {
        return Err("the election's version is not 1 (Belenios 2.0's protocol)".into());
    }
    let name = field(&v, "group", "the election")?
        .as_str()
        .ok_or("the election's group is not a string")?;
    let group = BelGroup::of_name(name).ok_or_else(|| {
        format!("group {name:?} is not one of Belenios 2.0's (BELENIOS-2048, RFC-3526-2048)")
    })?;
    let y = number(field(&v, "public_key", "the election")?, "the public key")?;
    if !group.member(&y) {
        return Err("the election's public key is not in the group".into());
    }
    let uuid = field(&v, "uuid", "the election")?
        .as_str()
        .ok_or("the uuid is not a string")?
        .to_string();
    const BASE58: &str = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
    if uuid.len() < 14 || !uuid.chars().all(|c| BASE58.contains(c)) {
        return Err(format!(
            "the uuid {uuid:?} is not 14 or more Base58 characters"
        ));
    }
    let mut questions = Vec::new();
    for (i, q) in array(field(&v, "questions", "the election")?, "questions")?
        .iter()
        .enumerate()
    {
        let what = format!("question {}", i + 1);
        let nh = match q.get("type") {
            None => false,
            Some(Value::String(t)) if t == "NonHomomorphic" => true,
            Some(t) => {
                return Err(format!(
                    "{what}: a question of type {t}, not one Belenios 2.0 has"
                ))
            }
        };
        // a mixnet question keeps its text and answers under `value` (spec/94.3)
        let body = if nh { field(q, "value", &what)? } else { q };
        if nh && group.embedding.is_none() {
            return Err(format!(
                "{what} is non-homomorphic, and group {} has no embedding of integers for its answers",
                group.name
            ));
        }
        let names: Vec<String> = array(field(body, "answers", &what)?, &what)?
            .iter()
            .map(|a| {
                a.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| format!("{what}: an answer is not a string"))
            })
            .collect::<Result<_, _>>()?;
        let answers = names.len();
        let text = field(body, "question", &what)?
            .as_str()
            .ok_or_else(|| format!("{what}: its text is not a string"))?
            .to_string();
        if nh {
            if names.is_empty() {
                return Err(format!("{what}: no answers"));
            }
            questions.push(Question {
                text,
                answers,
                names,
                blank: false,
                min: 0,
                max: 0,
                nh: true,
            });
            continue;
        }
        let small = |name: &str| -> Result<usize, String> {
            field(q, name, &what)?
                .as_u64()
                .and_then(|n| usize::try_from(n).ok())
                .ok_or_else(|| format!("{what}: `{name}` is not a small non-negative integer"))
        };
        let (min, max) = (small("min")?, small("max")?);
        let blank = match q.get("blank") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => return Err(format!("{what}: `blank` is not a boolean")),
        };
        if answers == 0 || min > max || max > answers {
            return Err(format!(
                "{what}: {answers} answers with min {min} and max {max}"
            ));
        }
        questions.push(Question {
            text,
            names,
            answers,
            blank,
            min,
            max,
            nh: false,
        });
    }
    let key = Key::new(&group, y).ok_or("the key's table")?;
    let top = questions.iter().map(|q| q.max + 1).max().unwrap_or(1);
    let ginv = group.inverse(&group.g);
    let mut ginv_pows = vec![Integer::from(1)];
    for i in 1..=top {
        let next = group.mul(&ginv_pows[i - 1], &ginv);
        ginv_pows.push(next);
    }
    Ok(Election {
        group,
        key,
        uuid,
        fingerprint: Base64Unpadded::encode_string(&sha256(bytes)),
        questions,
        ginv_pows,
    })
}

/// One trustee's key as the partial decryptions use it: its number (from 1), its key.
pub(crate) struct TrusteeKey {
    pub y: Integer,
}

/// How the factors combine: a single trustee's, or a threshold group's (its first owner's number,
/// its size, its threshold).
#[derive(Clone, Debug)]
pub(crate) enum Kind {
    Single(usize),
    Pedersen {
        first: usize,
        size: usize,
        threshold: usize,
    },
}

/// A threshold group's signed certificate or commitments: the message and its signature.
struct Signed {
    message: String,
    signature: Pair,
}

/// One entry of the trustees list, decoded.
enum Trustee {
    Single {
        y: Integer,
        pok: Pair,
    },
    Pedersen {
        threshold: usize,
        /// per trustee: its certificate (with the verification key it names), its signed commitments
        /// (with the values they hold)
        certs: Vec<(Signed, Integer, Integer)>,
        commitments: Vec<(Signed, Vec<Integer>)>,
        keys: Vec<(Integer, Pair)>,
    },
}

fn signed(v: &Value, what: &str) -> Result<Signed, String> {
    Ok(Signed {
        message: field(v, "message", what)?
            .as_str()
            .ok_or_else(|| format!("{what}: the message is not a string"))?
            .to_string(),
        signature: pair(field(v, "signature", what)?, what)?,
    })
}

fn decode_trustee(item: &Value, what: &str) -> Result<Trustee, String> {
    let kind = item
        .get(0)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("{what}: not [kind, value]"))?;
    let value = item
        .get(1)
        .ok_or_else(|| format!("{what}: not [kind, value]"))?;
    match kind {
        "Single" => Ok(Trustee::Single {
            y: number(field(value, "public_key", what)?, what)?,
            pok: pair(field(value, "pok", what)?, what)?,
        }),
        "Pedersen" => {
            let threshold = field(value, "threshold", what)?
                .as_u64()
                .and_then(|n| usize::try_from(n).ok())
                .ok_or_else(|| format!("{what}: the threshold is not an integer"))?;
            let mut certs = Vec::new();
            for cert in array(field(value, "certs", what)?, what)? {
                let c = signed(cert, what)?;
                let keys: Value = serde_json::from_str(&c.message)
                    .map_err(|e| format!("{what}: a certificate's keys: {e}"))?;
                let vk = number(field(&keys, "verification", what)?, what)?;
                let ek = number(field(&keys, "encryption", what)?, what)?;
                certs.push((c, vk, ek));
            }
            let mut commitments = Vec::new();
            for ce in array(field(value, "coefexps", what)?, what)? {
                let c = signed(ce, what)?;
                let inner: Value = serde_json::from_str(&c.message)
                    .map_err(|e| format!("{what}: commitments: {e}"))?;
                let list = array(field(&inner, "coefexps", what)?, what)?
                    .iter()
                    .map(|x| number(x, what))
                    .collect::<Result<_, _>>()?;
                commitments.push((c, list));
            }
            let keys = array(field(value, "verification_keys", what)?, what)?
                .iter()
                .map(|k| {
                    Ok((
                        number(field(k, "public_key", what)?, what)?,
                        pair(field(k, "pok", what)?, what)?,
                    ))
                })
                .collect::<Result<_, String>>()?;
            Ok(Trustee::Pedersen {
                threshold,
                certs,
                commitments,
                keys,
            })
        }
        other => Err(format!("{what}: unknown kind {other:?}")),
    }
}

/// The trustees (V-BEL-03): every proof of knowledge, every certificate and signed commitment, the
/// verification keys, and the election key as their product. Returns the owners' keys in order and the
/// kinds, as published, whatever their proofs gave (the partial decryptions are checked against them,
/// spec/50.1); `None` when the list does not read.
pub(crate) fn check_trustees(
    ledger: &mut Ledger,
    election: &Election,
    bytes: &[u8],
    object: &str,
) -> Option<(Vec<TrusteeKey>, Vec<Kind>)> {
    let g = &election.group;
    let decoded: Result<Vec<Trustee>, String> = serde_json::from_slice::<Value>(bytes)
        .map_err(|e| format!("not JSON: {e}"))
        .and_then(|v| {
            let items = v.as_array().ok_or("the trustees are not a list")?;
            items
                .iter()
                .enumerate()
                .map(|(i, item)| decode_trustee(item, &format!("trustee entry {}", i + 1)))
                .collect()
        });
    let trustees = match decoded {
        Ok(t) if !t.is_empty() => t,
        Ok(_) => {
            ledger.error(Check::Bel03, object, "no trustees");
            return None;
        }
        Err(e) => {
            ledger.error(Check::Bel03, object, e);
            return None;
        }
    };
    let pok_prefix = |y: &Integer| format!("pok|{}|{}|", g.name, y);
    let key_ok = |y: &Integer, pok: &Pair| g.member(y) && g.schnorr(&pok_prefix(y), y, pok);
    let mut keys = Vec::new();
    let mut kinds = Vec::new();
    let mut product = Integer::from(1);
    let mut problems = Vec::new();
    for (i, t) in trustees.iter().enumerate() {
        let what = format!("trustee entry {}", i + 1);
        ledger.examined(Check::Bel03, 1);
        match t {
            Trustee::Single { y, pok } => {
                if !key_ok(y, pok) {
                    problems.push(format!(
                        "{what}: the key is not in the group or its proof of knowledge fails"
                    ));
                }
                product = g.mul(&product, y);
                kinds.push(Kind::Single(keys.len() + 1));
                keys.push(TrusteeKey { y: y.clone() });
            }
            Trustee::Pedersen {
                threshold,
                certs,
                commitments,
                keys: vks,
            } => {
                let (n, t) = (certs.len(), *threshold);
                if n == 0 || commitments.len() != n || vks.len() != n || t == 0 || t > n {
                    problems.push(format!(
                        "{what}: {n} certificates, {} commitments, {} verification keys, threshold {t}",
                        commitments.len(),
                        vks.len()
                    ));
                }
                for (k, ((cert, vk, ek), (ce, list))) in certs.iter().zip(commitments).enumerate() {
                    let who = format!("{what}, trustee {}", k + 1);
                    if !g.member(vk) || !g.member(ek) {
                        problems.push(format!("{who}: a certificate key is not in the group"));
                    } else if !g.schnorr(&format!("sigmsg|{}|", cert.message), vk, &cert.signature)
                    {
                        problems.push(format!("{who}: the certificate's signature fails"));
                    } else if !g.schnorr(&format!("sigmsg|{}|", ce.message), vk, &ce.signature) {
                        problems.push(format!(
                            "{who}: the commitments' signature by the certificate's key fails"
                        ));
                    }
                    if list.len() != t || !list.iter().all(|x| g.member(x)) {
                        problems.push(format!(
                            "{who}: {} commitments for threshold {t}, or one not in the group",
                            list.len()
                        ));
                    }
                }
                let first = keys.len() + 1;
                for (j, (y, pok)) in vks.iter().enumerate() {
                    let who = format!("{what}, verification key {}", j + 1);
                    if !key_ok(y, pok) {
                        problems.push(format!("{who}: not in the group, or its proof fails"));
                    }
                    // Π_i Π_k A_{i,k}^{j^k}
                    let jj = Integer::from(j + 1);
                    let (mut bases, mut exps) = (Vec::new(), Vec::new());
                    for (_, c) in commitments {
                        let mut power = Integer::from(1);
                        for a in c {
                            bases.push(a.clone());
                            exps.push(power.clone());
                            power *= &jj;
                        }
                    }
                    let expected = votum_arith::multi_pow(&g.m, &bases, &exps).unwrap_or_default();
                    if expected != *y {
                        problems.push(format!(
                            "{who}: not the key that the trustees' commitments give"
                        ));
                    }
                    keys.push(TrusteeKey { y: y.clone() });
                }
                for (_, c) in commitments {
                    if let Some(a0) = c.first() {
                        product = g.mul(&product, a0);
                    }
                }
                kinds.push(Kind::Pedersen {
                    first,
                    size: vks.len(),
                    threshold: t,
                });
            }
        }
    }
    for p in problems {
        ledger.fail(Check::Bel03, object, p);
    }
    if product != election.key.y {
        ledger.fail(
            Check::Bel03,
            object,
            "the election's public key is not the product of the trustees' keys",
        );
    }
    Some((keys, kinds))
}

/// The credentials (V-BEL-04): credential (its decimal form) → weight.
pub(crate) fn check_credentials(
    ledger: &mut Ledger,
    group: &BelGroup,
    bytes: &[u8],
    object: &str,
) -> HashMap<String, Integer> {
    let mut out = HashMap::new();
    let list: Vec<String> = match serde_json::from_slice(bytes) {
        Ok(l) => l,
        Err(e) => {
            ledger.error(
                Check::Bel04,
                object,
                format!("not a JSON list of strings: {e}"),
            );
            return out;
        }
    };
    let checked: Vec<Result<(String, Integer), String>> = list
        .par_iter()
        .enumerate()
        .map(|(i, s)| {
            let (c, w) = match s.split_once(',') {
                Some((c, w)) => (c, Some(w)),
                None => (s.as_str(), None),
            };
            let digits = |x: &str| !x.is_empty() && x.bytes().all(|b| b.is_ascii_digit());
            let weight = match w {
                None => Integer::from(1),
                Some(w) if digits(w) && w.len() < 40 => decimal(w),
                Some(w) => return Err(format!("credential {}: weight {w:?}", i + 1)),
            };
            if !digits(c) || c.len() > 2000 || !group.member(&decimal(c)) {
                return Err(format!("credential {}: not a group element", i + 1));
            }
            // the decimal form without leading zeros, as a ballot writes it
            Ok((decimal(c).to_string(), weight))
        })
        .collect();
    ledger.examined(Check::Bel04, list.len() as u64);
    for r in checked {
        match r {
            Ok((c, w)) => {
                if out.insert(c, w).is_some() {
                    ledger.fail(Check::Bel04, object, "a credential is listed twice");
                }
            }
            Err(e) => ledger.fail(Check::Bel04, object, e),
        }
    }
    out
}

/// A ballot, decoded.
pub(crate) struct Ballot {
    pub credential: Integer,
    pub answers: Vec<Answer>,
    signature_hash: String,
    signature: Pair,
    election_uuid: String,
    election_hash: String,
}

/// An answer: to a homomorphic question, a ciphertext per place with proofs (spec/94.4); to a
/// non-homomorphic one, one ciphertext and a proof of knowledge of its randomness (spec/94.6), kept as a
/// one-item `choices` with the proof in `nh`.
pub(crate) struct Answer {
    pub choices: Vec<Ciphertext>,
    individual: Vec<Vec<Pair>>,
    overall: Vec<Pair>,
    blank: Option<Vec<Pair>>,
    nh: Option<Pair>,
}

impl Answer {
    fn decode(a: &Value) -> Result<Answer, String> {
        let choices = field(a, "choices", "an answer")?;
        if choices.is_object() {
            return Ok(Answer {
                choices: vec![ciphertext(choices, "a mixnet answer")?],
                individual: Vec::new(),
                overall: Vec::new(),
                blank: None,
                nh: Some(pair(
                    field(a, "proof", "a mixnet answer")?,
                    "a mixnet answer's proof",
                )?),
            });
        }
        Ok(Answer {
            choices: array(choices, "choices")?
                .iter()
                .map(|c| ciphertext(c, "a choice"))
                .collect::<Result<_, String>>()?,
            individual: array(
                field(a, "individual_proofs", "an answer")?,
                "individual proofs",
            )?
            .iter()
            .map(|p| pairs(p, "an individual proof"))
            .collect::<Result<_, String>>()?,
            overall: pairs(field(a, "overall_proof", "an answer")?, "the overall proof")?,
            blank: match a.get("blank_proof") {
                None => None,
                Some(b) => Some(pairs(b, "the blank proof")?),
            },
            nh: None,
        })
    }

    /// Whether it has the shape of an answer to `q`.
    pub(crate) fn fits(&self, q: &Question) -> bool {
        self.nh.is_some() == q.nh && self.choices.len() == q.width()
    }
}

impl Ballot {
    pub(crate) fn decode(v: &Value) -> Result<Ballot, String> {
        let what = "the ballot";
        let string = |name: &str| -> Result<String, String> {
            field(v, name, what)?
                .as_str()
                .map(str::to_string)
                .ok_or_else(|| format!("{what}: `{name}` is not a string"))
        };
        let sig = field(v, "signature", what)?;
        let answers = array(field(v, "answers", what)?, what)?
            .iter()
            .map(Answer::decode)
            .collect::<Result<_, String>>()?;
        Ok(Ballot {
            election_uuid: string("election_uuid")?,
            election_hash: string("election_hash")?,
            credential: number(field(v, "credential", what)?, "the credential")?,
            answers,
            signature_hash: field(sig, "hash", "the signature")?
                .as_str()
                .ok_or("the signature's hash is not a string")?
                .to_string(),
            signature: pair(field(sig, "proof", "the signature")?, "the signature")?,
        })
    }

    /// Belenios' canonical form (spec/94.4), with or without the signature.
    pub(crate) fn canonical(&self, with_signature: bool) -> String {
        use std::fmt::Write;
        let q = |s: &str| serde_json::to_string(s).unwrap_or_default();
        let pr = |out: &mut String, p: &Pair| {
            let _ = write!(
                out,
                "{{\"challenge\":\"{}\",\"response\":\"{}\"}}",
                p.c, p.r
            );
        };
        let prs = |out: &mut String, ps: &[Pair]| {
            out.push('[');
            for (i, p) in ps.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                pr(out, p);
            }
            out.push(']');
        };
        let mut out = String::with_capacity(16 * 1024);
        let _ = write!(
            out,
            "{{\"election_uuid\":{},\"election_hash\":{},\"credential\":\"{}\",\"answers\":[",
            q(&self.election_uuid),
            q(&self.election_hash),
            self.credential
        );
        for (i, a) in self.answers.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            if let (Some(p), [(al, be)]) = (&a.nh, a.choices.as_slice()) {
                let _ = write!(
                    out,
                    "{{\"choices\":{{\"alpha\":\"{al}\",\"beta\":\"{be}\"}},\"proof\":"
                );
                pr(&mut out, p);
                out.push('}');
                continue;
            }
            out.push_str("{\"choices\":[");
            for (k, (al, be)) in a.choices.iter().enumerate() {
                if k > 0 {
                    out.push(',');
                }
                let _ = write!(out, "{{\"alpha\":\"{al}\",\"beta\":\"{be}\"}}");
            }
            out.push_str("],\"individual_proofs\":[");
            for (k, p) in a.individual.iter().enumerate() {
                if k > 0 {
                    out.push(',');
                }
                prs(&mut out, p);
            }
            out.push_str("],\"overall_proof\":");
            prs(&mut out, &a.overall);
            if let Some(b) = &a.blank {
                out.push_str(",\"blank_proof\":");
                prs(&mut out, b);
            }
            out.push('}');
        }
        out.push(']');
        if with_signature {
            let _ = write!(
                out,
                ",\"signature\":{{\"hash\":{},\"proof\":",
                q(&self.signature_hash)
            );
            pr(&mut out, &self.signature);
            out.push('}');
        }
        out.push('}');
        out
    }
}

/// A ballot's form, election, credential and signature (V-BEL-05). `raw` is the entry's bytes.
pub(crate) fn check_ballot_signature(
    election: &Election,
    credentials: &HashMap<String, Integer>,
    raw: &[u8],
    ballot: &Ballot,
) -> Result<(), String> {
    if ballot.canonical(true).as_bytes() != raw {
        return Err("not in Belenios' canonical form".into());
    }
    if ballot.election_uuid != election.uuid || ballot.election_hash != election.fingerprint {
        return Err("made for another election (its uuid or fingerprint)".into());
    }
    let cred = ballot.credential.to_string();
    if !credentials.contains_key(&cred) {
        return Err("its credential is not in the list".into());
    }
    let hash = Base64Unpadded::encode_string(&sha256(ballot.canonical(false).as_bytes()));
    if ballot.signature_hash != hash {
        return Err("the signature's hash is not the ballot's".into());
    }
    let g = &election.group;
    // the credential is listed, hence a member (V-BEL-04)
    if !g.schnorr(
        &format!("sig|{}|", ballot.signature_hash),
        &ballot.credential,
        &ballot.signature,
    ) {
        return Err("the signature fails".into());
    }
    if ballot.answers.len() != election.questions.len() {
        return Err(format!(
            "{} answers for {} questions",
            ballot.answers.len(),
            election.questions.len()
        ));
    }
    Ok(())
}

/// Whether `proofs` prove that (α, β) encrypts g^{M_j} for the given statements (spec/94.4): each
/// statement j is a ciphertext and its M; Σc_j = H(prefix, A_0, B_0, …).
fn disjunction(
    election: &Election,
    prefix: &str,
    statements: &[(&Ciphertext, usize)],
    proofs: &[Pair],
) -> bool {
    let g = &election.group;
    if statements.len() != proofs.len() {
        return false;
    }
    let mut commitments = Vec::with_capacity(2 * proofs.len());
    let mut sum = Integer::new();
    for ((ct, m), p) in statements.iter().zip(proofs) {
        if !g.scalar_ok(&p.c) || !g.scalar_ok(&p.r) {
            return false;
        }
        let (alpha, beta) = ct;
        let Some(shift) = election.ginv_pows.get(*m) else {
            return false;
        };
        let nbeta = if *m == 0 {
            beta.clone()
        } else {
            g.mul(beta, shift)
        };
        let [alpha_c, nbeta_c] = g.pow2(alpha, &p.c, &nbeta, &p.c);
        let a = g.mul(&g.gpow(&p.r), &alpha_c);
        let b = g.mul(&election.key.pow(g, &p.r), &nbeta_c);
        commitments.push(a);
        commitments.push(b);
        sum += &p.c;
    }
    sum %= &g.q;
    let refs: Vec<&Integer> = commitments.iter().collect();
    g.hash(prefix, &refs) == sum
}

/// A ballot's ciphertexts and proofs (V-BEL-06).
pub(crate) fn check_ballot_proofs(election: &Election, ballot: &Ballot) -> Result<(), String> {
    let g = &election.group;
    let s0 = format!("{}|{}", election.fingerprint, ballot.credential);
    for (qi, (q, a)) in election.questions.iter().zip(&ballot.answers).enumerate() {
        let what = format!("question {}", qi + 1);
        if q.nh || a.nh.is_some() {
            check_nh_answer(election, &s0, q, a).map_err(|e| format!("{what}: {e}"))?;
            continue;
        }
        let n = a.choices.len();
        if n != q.width() || a.individual.len() != n {
            return Err(format!(
                "{what}: {n} ciphertexts and {} proofs for {} places",
                a.individual.len(),
                q.width()
            ));
        }
        for (k, ct) in a.choices.iter().enumerate() {
            if !g.members(&ct.0, &ct.1) {
                return Err(format!("{what}: ciphertext {} is not in the group", k + 1));
            }
            let prefix = format!("prove|{s0}|{},{}|", ct.0, ct.1);
            if !disjunction(election, &prefix, &[(ct, 0), (ct, 1)], &a.individual[k]) {
                return Err(format!(
                    "{what}: the proof that ciphertext {} holds 0 or 1 fails",
                    k + 1
                ));
            }
        }
        let mut joined = String::new();
        for (k, (al, be)) in a.choices.iter().enumerate() {
            if k > 0 {
                joined.push(',');
            }
            joined.push_str(&format!("{al},{be}"));
        }
        let s = format!("{s0}|{joined}");
        let product = |cts: &[Ciphertext]| -> Ciphertext {
            cts.iter()
                .fold((Integer::from(1), Integer::from(1)), |acc, c| {
                    (g.mul(&acc.0, &c.0), g.mul(&acc.1, &c.1))
                })
        };
        match (q.blank, &a.blank) {
            (false, None) => {
                let sum = product(&a.choices);
                let st: Vec<(&Ciphertext, usize)> = (q.min..=q.max).map(|m| (&sum, m)).collect();
                let prefix = format!("prove|{s}|{},{}|", sum.0, sum.1);
                if !disjunction(election, &prefix, &st, &a.overall) {
                    return Err(format!(
                        "{what}: the overall proof (min {}, max {}) fails",
                        q.min, q.max
                    ));
                }
            }
            (true, Some(blank)) => {
                let c0 = &a.choices[0];
                let sum = product(&a.choices[1..]);
                if !disjunction(
                    election,
                    &format!("bproof0|{s}|"),
                    &[(c0, 0), (&sum, 0)],
                    blank,
                ) {
                    return Err(format!("{what}: the blank proof fails"));
                }
                let mut st: Vec<(&Ciphertext, usize)> = vec![(c0, 1)];
                st.extend((q.min..=q.max).map(|m| (&sum, m)));
                if !disjunction(election, &format!("bproof1|{s}|"), &st, &a.overall) {
                    return Err(format!(
                        "{what}: the overall proof (blank, or min {}, max {}) fails",
                        q.min, q.max
                    ));
                }
            }
            (true, None) => {
                return Err(format!(
                    "{what}: no blank proof on a question that allows blank"
                ))
            }
            (false, Some(_)) => {
                return Err(format!("{what}: a blank proof on a question without blank"))
            }
        }
    }
    Ok(())
}

/// A mixnet answer's ciphertext and its proof of knowledge of the randomness (spec/94.6).
fn check_nh_answer(election: &Election, s0: &str, q: &Question, a: &Answer) -> Result<(), String> {
    let g = &election.group;
    let (Some(proof), true) = (&a.nh, q.nh) else {
        return Err("the answer's kind is not the question's (homomorphic or mixnet)".into());
    };
    let [(alpha, beta)] = a.choices.as_slice() else {
        return Err("a mixnet answer holds one ciphertext".into());
    };
    if !g.members(alpha, beta) {
        return Err("the ciphertext is not in the group".into());
    }
    if !g.scalar_ok(&proof.c) || !g.scalar_ok(&proof.r) {
        return Err("the proof's numbers are not in [0, q)".into());
    }
    let alpha_c = g.pow(alpha, &proof.c);
    let commitment = g.mul(&g.gpow(&proof.r), &alpha_c);
    let prefix = format!("raweg|{s0}|{},{alpha},{beta}|", election.key.y);
    if g.hash(&prefix, &[&commitment]) != proof.c {
        return Err("the proof of knowledge of the ciphertext's randomness fails".into());
    }
    Ok(())
}

/// A shuffle (spec/94.6): its output lists, one per mixnet question, and each list's proof (undecoded).
pub(crate) struct Shuffle {
    pub lists: Vec<Vec<Ciphertext>>,
    proofs: Vec<Value>,
}

impl Shuffle {
    pub(crate) fn decode(v: &Value) -> Result<Shuffle, String> {
        let lists = array(
            field(v, "ciphertexts", "the shuffle")?,
            "the shuffle's ciphertexts",
        )?
        .iter()
        .map(|l| {
            array(l, "a shuffled list")?
                .iter()
                .map(|c| ciphertext(c, "a shuffled ciphertext"))
                .collect()
        })
        .collect::<Result<Vec<Vec<Ciphertext>>, String>>()?;
        let proofs = array(field(v, "proofs", "the shuffle")?, "the shuffle's proofs")?.clone();
        Ok(Shuffle { lists, proofs })
    }

    pub(crate) fn proofs_len(&self) -> usize {
        self.proofs.len()
    }

    pub(crate) fn proof(&self, k: usize) -> &Value {
        &self.proofs[k]
    }
}

/// A proof of shuffle, decoded (spec/94.6: the commitments t, the responses s, the permutation
/// commitments d and the chained commitments d̂).
struct ShuffleProof {
    t: [Integer; 5],
    t_hat: Vec<Integer>,
    s: [Integer; 4],
    s_hat: Vec<Integer>,
    s_prime: Vec<Integer>,
    d: Vec<Integer>,
    d_hat: Vec<Integer>,
}

impl ShuffleProof {
    fn decode(v: &Value) -> Result<ShuffleProof, String> {
        let what = "a proof of shuffle";
        let tuple = |v: &Value, n: usize, name: &str| -> Result<Vec<Value>, String> {
            let a = array(v, what)?;
            if a.len() != n {
                return Err(format!("{what}: {name} has {} items, not {n}", a.len()));
            }
            Ok(a.clone())
        };
        let numbers = |v: &Value| -> Result<Vec<Integer>, String> {
            array(v, what)?.iter().map(|x| number(x, what)).collect()
        };
        let top = tuple(v, 4, "the proof")?;
        let t = tuple(&top[0], 5, "the commitments")?;
        let t4 = tuple(&t[3], 2, "t₄")?;
        let s = tuple(&top[1], 6, "the responses")?;
        Ok(ShuffleProof {
            t: [
                number(&t[0], what)?,
                number(&t[1], what)?,
                number(&t[2], what)?,
                number(&t4[0], what)?,
                number(&t4[1], what)?,
            ],
            t_hat: numbers(&t[4])?,
            s: [
                number(&s[0], what)?,
                number(&s[1], what)?,
                number(&s[2], what)?,
                number(&s[3], what)?,
            ],
            s_hat: numbers(&s[4])?,
            s_prime: numbers(&s[5])?,
            d: numbers(&top[2])?,
            d_hat: numbers(&top[3])?,
        })
    }
}

/// SHA-256 of `text` in lowercase hex.
fn sha256_hex(text: &[u8]) -> String {
    sha256(text).iter().map(|b| format!("{b:02x}")).collect()
}

/// A SHA-256 digest read as a big-endian integer, mod q.
fn digest_mod(g: &BelGroup, text: &[u8]) -> Integer {
    Integer::from_digits(&sha256(text), votum_arith::Order::Msf) % &g.q
}

/// Whether `proof` proves that `output` is a re-encryption and permutation of `input` under the election
/// key (spec/94.6; CHVote's CheckShuffleProof with Belenios' hashing). `Err` says what fails.
pub(crate) fn check_shuffle(
    election: &Election,
    input: &[Ciphertext],
    output: &[Ciphertext],
    proof: &Value,
) -> Result<(), String> {
    use std::fmt::Write;
    let g = &election.group;
    let n = input.len();
    if output.len() != n {
        return Err(format!("{} ciphertexts out for {n} in", output.len()));
    }
    let pi = ShuffleProof::decode(proof)?;
    if [
        pi.t_hat.len(),
        pi.s_hat.len(),
        pi.s_prime.len(),
        pi.d.len(),
        pi.d_hat.len(),
    ]
    .iter()
    .any(|&k| k != n)
    {
        return Err(format!("a list of the proof does not have {n} items"));
    }
    let elements = pi.t.iter().chain(&pi.t_hat).chain(&pi.d).chain(&pi.d_hat);
    let outputs = output.iter().flat_map(|(a, b)| [a, b]);
    let all: Vec<&Integer> = elements.chain(outputs).collect();
    if !all.par_iter().all(|x| g.member(x)) {
        return Err("an element of the proof or of the output is not in the group".into());
    }
    let scalars = pi.s.iter().chain(&pi.s_hat).chain(&pi.s_prime);
    if !scalars.into_iter().all(|x| g.scalar_ok(x)) {
        return Err("a response of the proof is not in [0, q)".into());
    }
    // the independent generators h = G(−1), hᵢ = G(i); Belenios refuses two that are equal
    let h = g.generator(-1);
    let hs: Vec<Integer> = (0..n as i64)
        .into_par_iter()
        .map(|i| g.generator(i))
        .collect();
    let mut distinct = std::collections::HashSet::with_capacity(n + 1);
    if !std::iter::once(&h)
        .chain(&hs)
        .all(|x| distinct.insert(x.clone()))
    {
        return Err("two independent generators collide".into());
    }
    let mut str1 = String::with_capacity((4 * n + 8) * 620);
    for (a, b) in input.iter().chain(output) {
        let _ = write!(str1, "{a},{b},");
    }
    for x in &pi.d {
        let _ = write!(str1, "{x},");
    }
    let phi = &election.fingerprint;
    let seed = sha256_hex(format!("shuffle-challenges|{phi}|{str1}").as_bytes());
    let u: Vec<Integer> = (0..n)
        .into_par_iter()
        .map(|i| {
            let text = format!("{seed}{}", sha256_hex(i.to_string().as_bytes()));
            Integer::from_str_radix(&sha256_hex(text.as_bytes()), 16).unwrap_or_default() % &g.q
        })
        .collect();
    let mut str2 = String::with_capacity((n + 5) * 620);
    for x in pi.t.iter().chain(&pi.t_hat) {
        let _ = write!(str2, "{x},");
    }
    let mut str3 = str1;
    for x in &pi.d_hat {
        let _ = write!(str3, "{x},");
    }
    let _ = write!(str3, "{}", election.key.y);
    let c = digest_mod(
        g,
        format!("shuffle-challenge|{phi}|{str2}{str3}").as_bytes(),
    );

    let m = &g.m;
    let multi = |bases: Vec<Integer>, exps: &[Integer]| -> Integer {
        votum_arith::multi_pow_parallel(m, &bases, exps).unwrap_or_default()
    };
    let product = |xs: &[Integer]| xs.iter().fold(Integer::from(1), |acc, x| g.mul(&acc, x));
    let inv_pow = |x: &Integer, e: &Integer| g.inverse(&g.pow(x, e));
    let d_bar = g.mul(&product(&pi.d), &g.inverse(&product(&hs)));
    let u_all = u.iter().fold(Integer::from(1), |acc, x| (acc * x) % &g.q);
    let last = pi.d_hat.last().unwrap_or(&h);
    let d_hat = g.mul(last, &inv_pow(&h, &u_all));
    let d_tilde = multi(pi.d.clone(), &u);
    let a_prime = multi(input.iter().map(|c| c.1.clone()).collect(), &u);
    let b_prime = multi(input.iter().map(|c| c.0.clone()).collect(), &u);
    let [s1, s2, s3, s4] = &pi.s;
    let t1 = g.mul(&inv_pow(&d_bar, &c), &g.gpow(s1));
    let t2 = g.mul(&inv_pow(&d_hat, &c), &g.gpow(s2));
    let t3 = g.mul(
        &inv_pow(&d_tilde, &c),
        &g.mul(&g.gpow(s3), &multi(hs, &pi.s_prime)),
    );
    let t41 = g.mul(
        &g.inverse(&g.mul(&g.pow(&a_prime, &c), &election.key.pow(g, s4))),
        &multi(output.iter().map(|c| c.1.clone()).collect(), &pi.s_prime),
    );
    let t42 = g.mul(
        &g.inverse(&g.mul(&g.pow(&b_prime, &c), &g.gpow(s4))),
        &multi(output.iter().map(|c| c.0.clone()).collect(), &pi.s_prime),
    );
    for (k, (mine, theirs)) in [t1, t2, t3, t41, t42].iter().zip(&pi.t).enumerate() {
        if mine != theirs {
            let name = ["t₁", "t₂", "t₃", "t₄₁", "t₄₂"][k];
            return Err(format!("the proof's commitment {name} does not verify"));
        }
    }
    let bad = (0..n).into_par_iter().position_first(|i| {
        let before = if i == 0 { &h } else { &pi.d_hat[i - 1] };
        let [a, b] = g.pow2(&pi.d_hat[i], &c, before, &pi.s_prime[i]);
        let value = g.mul(&g.mul(&g.inverse(&a), &g.gpow(&pi.s_hat[i])), &b);
        value != pi.t_hat[i]
    });
    if let Some(i) = bad {
        return Err(format!(
            "the proof's chained commitment t̂{} does not verify",
            i + 1
        ));
    }
    Ok(())
}

/// A shape of ciphertexts: one list per question.
pub(crate) type Tally = Vec<Vec<Ciphertext>>;

pub(crate) fn decode_tally(v: &Value) -> Result<Tally, String> {
    array(v, "the encrypted tally")?
        .iter()
        .map(|q| {
            array(q, "a question's tally")?
                .iter()
                .map(|c| ciphertext(c, "a tally ciphertext"))
                .collect()
        })
        .collect()
}

/// The published encrypted tally against the one the counted ballots give (V-BEL-07).
pub(crate) fn check_tally(
    ledger: &mut Ledger,
    published: &Tally,
    computed: &Tally,
    counts: ((u64, u64), (Integer, Integer)),
    object: &str,
) {
    ledger.examined(Check::Bel07, 1);
    let ((num_published, num_counted), (weight_published, weight_counted)) = counts;
    if num_published != num_counted {
        ledger.fail(
            Check::Bel07,
            object,
            format!("num_tallied is {num_published}; the ballots counted are {num_counted}"),
        );
    }
    if weight_published != weight_counted {
        ledger.fail(
            Check::Bel07,
            object,
            format!(
                "total_weight is {weight_published}; the counted ballots weigh {weight_counted}"
            ),
        );
    }
    if published != computed {
        ledger.fail(
            Check::Bel07,
            object,
            "the published encrypted tally is not the product of the counted ballots",
        );
    }
}

/// A partial decryption, decoded.
pub(crate) struct Partial {
    pub owner: usize,
    pub factors: Vec<Vec<Integer>>,
    proofs: Vec<Vec<Pair>>,
    pub object: String,
}

impl Partial {
    pub(crate) fn decode(owner: usize, v: &Value, object: String) -> Result<Partial, String> {
        let factors = array(
            field(v, "decryption_factors", "a partial decryption")?,
            "factors",
        )?
        .iter()
        .map(|q| {
            array(q, "factors")?
                .iter()
                .map(|f| number(f, "a factor"))
                .collect()
        })
        .collect::<Result<_, String>>()?;
        let proofs = array(
            field(v, "decryption_proofs", "a partial decryption")?,
            "proofs",
        )?
        .iter()
        .map(|q| pairs(q, "decryption proofs"))
        .collect::<Result<_, String>>()?;
        Ok(Partial {
            owner,
            factors,
            proofs,
            object,
        })
    }
}

/// Every partial decryption's factors and proofs against its owner's key (V-BEL-08); returns
/// whether each passed, by position.
pub(crate) fn check_partials(
    ledger: &mut Ledger,
    election: &Election,
    keys: &[TrusteeKey],
    tally: &Tally,
    partials: &[Partial],
) -> Vec<bool> {
    let g = &election.group;
    let mut seen = std::collections::HashSet::new();
    let mut ok = Vec::new();
    for pd in partials {
        ledger.examined(Check::Bel08, 1);
        let fail = |ledger: &mut Ledger, why: String| ledger.fail(Check::Bel08, &pd.object, why);
        if pd.owner == 0 || pd.owner > keys.len() {
            fail(
                ledger,
                format!("owner {} is not a trustee (1..={})", pd.owner, keys.len()),
            );
            ok.push(false);
            continue;
        }
        if !seen.insert(pd.owner) {
            fail(
                ledger,
                format!("trustee {} posted a second partial decryption", pd.owner),
            );
            ok.push(false);
            continue;
        }
        let shape_ok = pd.factors.len() == tally.len()
            && pd.proofs.len() == tally.len()
            && tally
                .iter()
                .zip(&pd.factors)
                .zip(&pd.proofs)
                .all(|((t, f), p)| t.len() == f.len() && t.len() == p.len());
        if !shape_ok {
            fail(ledger, "its shape is not the encrypted tally's".into());
            ok.push(false);
            continue;
        }
        let x = &keys[pd.owner - 1].y;
        let prefix = format!("decrypt|{}|{}|", election.fingerprint, x);
        let items: Vec<(&Ciphertext, &Integer, &Pair)> = tally
            .iter()
            .zip(&pd.factors)
            .zip(&pd.proofs)
            .flat_map(|((t, f), p)| t.iter().zip(f).zip(p).map(|((c, f), p)| (c, f, p)))
            .collect();
        let bad = items.par_iter().position_first(|(ct, f, p)| {
            !(g.scalar_ok(&p.c) && g.scalar_ok(&p.r) && {
                // f's membership and X^c in one pass where the group needs a power for it
                let (member, x_c) = if g.qr_group() {
                    (g.member(f), g.pow(x, &p.c))
                } else {
                    let [x_c, f_q] = g.pow2(x, &p.c, f, &g.q);
                    (g.in_range(f) && f_q == 1, x_c)
                };
                let [alpha_r, f_c] = g.pow2(&ct.0, &p.r, f, &p.c);
                let a = g.mul(&g.gpow(&p.r), &x_c);
                let b = g.mul(&alpha_r, &f_c);
                member && g.hash(&prefix, &[&a, &b]) == p.c
            })
        });
        if let Some(i) = bad {
            fail(
                ledger,
                format!("trustee {}: factor {} or its proof fails", pd.owner, i + 1),
            );
            ok.push(false);
        } else {
            ok.push(true);
        }
    }
    ok
}

/// λ_δ = Π_{k ∈ I, k ≠ δ} k/(k − δ) mod q.
fn lagrange(q: &Integer, indexes: &[usize], j: usize) -> Integer {
    let mut acc = Integer::from(1);
    for &k in indexes {
        if k == j {
            continue;
        }
        let num = Integer::from(k);
        let den = Integer::from(k as i64 - j as i64);
        let inv = den.invert(q).unwrap_or_default();
        acc = (acc * num * inv) % q;
        if acc < 0 {
            acc += q;
        }
    }
    acc
}

/// The result (V-BEL-09): the factors combined by the trustees' kinds, then g^r = β/F for every
/// result value r, each at most the total weight.
/// What the result is checked against: the trustees' kinds, the tally decrypted, the partial decryptions
/// and whether each verified (V-BEL-08).
pub(crate) struct Decryption<'a> {
    pub kinds: &'a [Kind],
    pub tally: &'a Tally,
    pub partials: &'a [Partial],
    pub valid: &'a [bool],
}

pub(crate) fn check_result(
    ledger: &mut Ledger,
    election: &Election,
    decryption: &Decryption<'_>,
    result: &Value,
    total_weight: &Integer,
    object: &str,
) -> Option<Vec<Value>> {
    let g = &election.group;
    let Decryption {
        kinds,
        tally,
        partials,
        valid,
    } = *decryption;
    ledger.examined(Check::Bel09, 1);
    let by_owner: HashMap<usize, (&Partial, bool)> = partials
        .iter()
        .zip(valid)
        .map(|(p, ok)| (p.owner, (p, *ok)))
        .collect();
    // the combined factor, as a list per question
    let mut combined: Vec<Vec<Integer>> = tally
        .iter()
        .map(|t| vec![Integer::from(1); t.len()])
        .collect();
    for kind in kinds {
        let chosen: Vec<(usize, usize)> = match kind {
            Kind::Single(i) => vec![(*i, 1)],
            Kind::Pedersen {
                first,
                size,
                threshold,
            } => {
                let posted: Vec<(usize, usize)> = (0..*size)
                    .filter(|k| by_owner.contains_key(&(first + k)))
                    .map(|k| (first + k, k + 1))
                    .take(*threshold)
                    .collect();
                if posted.len() < *threshold {
                    ledger.fail(
                        Check::Bel09,
                        object,
                        format!(
                            "a threshold group needs {threshold} partial decryptions; {} were posted",
                            posted.len()
                        ),
                    );
                    return None;
                }
                posted
            }
        };
        let indexes: Vec<usize> = chosen.iter().map(|(_, k)| *k).collect();
        for (owner, k) in &chosen {
            let Some((pd, ok)) = by_owner.get(owner) else {
                ledger.fail(
                    Check::Bel09,
                    object,
                    format!("trustee {owner} posted no partial decryption"),
                );
                return None;
            };
            if !ok {
                ledger.error(
                    Check::Bel09,
                    object,
                    format!("not checked: trustee {owner}'s partial decryption does not verify (V-BEL-08)"),
                );
                return None;
            }
            let lambda = if matches!(kind, Kind::Single(_)) {
                Integer::from(1)
            } else {
                lagrange(&g.q, &indexes, *k)
            };
            for (row, frow) in combined.iter_mut().zip(&pd.factors) {
                for (acc, f) in row.iter_mut().zip(frow) {
                    *acc = g.mul(acc, &g.pow(f, &lambda));
                }
            }
        }
    }
    let questions = field(result, "result", "the result").and_then(|r| array(r, "the result"));
    let questions = match questions {
        Ok(q) if q.len() == tally.len() && q.len() == election.questions.len() => q,
        Ok(_) => {
            ledger.fail(
                Check::Bel09,
                object,
                "its shape is not the encrypted tally's",
            );
            return None;
        }
        Err(e) => {
            ledger.fail(Check::Bel09, object, e);
            return None;
        }
    };
    let mut ok = true;
    let mut shown = Vec::with_capacity(questions.len());
    for (qi, (((q, v), cts), fs)) in election
        .questions
        .iter()
        .zip(questions)
        .zip(tally)
        .zip(&combined)
        .enumerate()
    {
        let fail = |ledger: &mut Ledger, why: String| {
            ledger.fail(Check::Bel09, object, format!("question {}: {why}", qi + 1));
        };
        let values = match array(v, "a question's result") {
            Ok(vals) if vals.len() == cts.len() => vals,
            Ok(_) => {
                fail(ledger, "its shape is not the encrypted tally's".into());
                ok = false;
                continue;
            }
            Err(e) => {
                fail(ledger, e);
                ok = false;
                continue;
            }
        };
        let plains: Vec<Integer> = cts
            .par_iter()
            .zip(fs)
            .map(|(ct, f)| g.mul(&ct.1, &g.inverse(f)))
            .collect();
        if q.nh {
            // each value the integers that its plaintext decodes to (spec/94.6)
            let mut answers = Vec::with_capacity(values.len());
            for (k, (x, plain)) in values.iter().zip(&plains).enumerate() {
                let decoded = g.decode_ints(plain, q.answers).unwrap_or_default();
                let given: Option<Vec<u64>> = x
                    .as_array()
                    .map(|a| a.iter().map(Value::as_u64).collect::<Option<Vec<u64>>>())
                    .unwrap_or(None);
                if given.as_ref() != Some(&decoded) {
                    fail(
                        ledger,
                        format!(
                            "answer {}: {x} is not what the shuffled ciphertext decrypts to",
                            k + 1
                        ),
                    );
                    ok = false;
                }
                answers.push(serde_json::json!(decoded));
            }
            shown.push(Value::Array(answers));
            continue;
        }
        let mut counts = Vec::with_capacity(values.len());
        for (k, (x, plain)) in values.iter().zip(&plains).enumerate() {
            let r = match x {
                Value::Number(n) => n
                    .as_u64()
                    .map(Integer::from)
                    .ok_or_else(|| format!("{n} is not a count")),
                Value::String(_) => number(x, "a count"),
                _ => Err("a count is not a number".to_string()),
            };
            match r {
                Ok(r) if r <= *total_weight && g.gpow(&r) == *plain => counts.push(r.to_string()),
                Ok(r) => {
                    fail(
                        ledger,
                        format!("answer {}: {r} is not what the tally decrypts to", k + 1),
                    );
                    ok = false;
                }
                Err(e) => {
                    fail(ledger, format!("answer {}: {e}", k + 1));
                    ok = false;
                }
            }
        }
        shown.push(serde_json::json!(counts));
    }
    ok.then_some(shown)
}
