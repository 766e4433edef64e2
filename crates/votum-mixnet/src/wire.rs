//! The payloads of a mixnet election's board entries (spec/91.7): their canonical bytes and the
//! decoders a board or a verifier reads them back with. Every decoder checks lengths, that every
//! element is in the group and every scalar below q, and that nothing trails.

use rayon::prelude::*;
use votum_elgamal::Ciphertext;
use votum_group::{Group, GroupId};
use votum_proofs::SchnorrProof;

use crate::ballot::EncryptedBallot;
use crate::count::{Outcome, Rule, TieRule};
use crate::decrypt::DecryptionShare;
use crate::params::Parameters;
use crate::MixError;

/// Reads a payload front to back; every error names the payload and the byte offset.
pub struct Cursor<'a> {
    what: &'static str,
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    pub fn new(what: &'static str, bytes: &'a [u8]) -> Self {
        Self { what, bytes, at: 0 }
    }

    fn err(&self, reason: impl std::fmt::Display) -> MixError {
        MixError::Input(format!("{} payload, byte {}: {reason}", self.what, self.at))
    }

    pub fn take(&mut self, n: usize) -> Result<&'a [u8], MixError> {
        if self.bytes.len() - self.at < n {
            return Err(self.err(format!("{n} bytes expected, the payload ends")));
        }
        let s = &self.bytes[self.at..self.at + n];
        self.at += n;
        Ok(s)
    }

    pub fn u64(&mut self) -> Result<u64, MixError> {
        let b = self.take(8)?;
        Ok(u64::from_be_bytes(b.try_into().unwrap_or([0; 8])))
    }

    /// A count of items, refused when the rest of the payload cannot hold that many of `item_len`.
    /// Items of length 0 count as 1 byte each: a count is never larger than the bytes left, so no
    /// caller allocates for more items than the payload's length (issue 43, item 5: a count of
    /// zero-width rows once asked for 2^64 of them).
    pub fn count(&mut self, item_len: usize) -> Result<usize, MixError> {
        let n = self.u64()?;
        let rest = (self.bytes.len() - self.at) as u64;
        if n > rest / item_len.max(1) as u64 {
            return Err(self.err(format!("a count of {n} that the payload cannot hold")));
        }
        usize::try_from(n).map_err(|_| self.err("count out of range"))
    }

    pub fn element<G: Group>(&mut self, group: &G) -> Result<G::Element, MixError> {
        let at = self.at;
        let b = self.take(group.element_len())?;
        group
            .decode_element(b)
            .map_err(|e| MixError::Input(format!("{} payload, byte {at}: element: {e}", self.what)))
    }

    pub fn scalar<G: Group>(&mut self, group: &G) -> Result<G::Scalar, MixError> {
        let at = self.at;
        let b = self.take(group.scalar_len())?;
        group
            .decode_scalar(b)
            .map_err(|e| MixError::Input(format!("{} payload, byte {at}: scalar: {e}", self.what)))
    }

    pub fn elements<G: Group>(&mut self, group: &G) -> Result<Vec<G::Element>, MixError> {
        let n = self.count(group.element_len())?;
        let at = self.at;
        let b = self.take(n * group.element_len())?;
        votum_group::decode_each(group, b).map_err(|(i, e)| {
            MixError::Input(format!(
                "{} payload, byte {}: element #{i}: {e}",
                self.what,
                at + i * group.element_len()
            ))
        })
    }

    /// The payload must end here.
    pub fn done(&self) -> Result<(), MixError> {
        if self.at != self.bytes.len() {
            return Err(self.err(format!("{} trailing bytes", self.bytes.len() - self.at)));
        }
        Ok(())
    }
}

fn hex_key(key: &[u8; 32]) -> String {
    key.iter().map(|b| format!("{b:02x}")).collect()
}

/// A 32-byte key from exactly 64 lower-case hex digits (the canonical form check catches the rest).
fn key_from_hex(text: &str) -> Option<[u8; 32]> {
    if text.len() != 64 || !text.is_ascii() {
        return None;
    }
    let mut key = [0u8; 32];
    for (i, b) in key.iter_mut().enumerate() {
        *b = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(key)
}

/// An election id: spec/80.1's identifiers (it is written unquoted in the parameters line).
impl Parameters {
    /// The parameters line (the board's first payload), for a record in group `group`.
    pub fn encode_for(&self, group: GroupId) -> Vec<u8> {
        let mut rule = match self.rule {
            Rule::KOfN { k, seats } => format!("k-of-n k={k} seats={seats}"),
            Rule::Approval { seats } | Rule::Stv { seats } => {
                format!("{} seats={seats}", self.rule.name())
            }
            _ => self.rule.name().to_owned(),
        };
        // the default tie rule is left out, so that records made before the key still read
        if self.ties != TieRule::default() {
            rule.push_str(" ties=");
            rule.push_str(self.ties.name());
        }
        // v2: the authorities sign their entries (spec/91.9); v1, one process wrote every entry
        let mut line = format!(
            "votum-mix v{} group={} election={} width={} candidates={} rule={} mixers={} trustees={} quorum={}",
            if self.signed() { 2 } else { 1 },
            group.name(),
            self.election_id,
            self.width,
            self.candidates,
            rule,
            self.mixers,
            self.trustees,
            self.quorum
        );
        if self.signed() {
            let keys: Vec<String> = self.signers.iter().map(hex_key).collect();
            line.push_str(" signers=");
            line.push_str(&keys.join(","));
        }
        line.into_bytes()
    }

    /// Reads a parameters line back: the group it names and the parameters, checked (the line
    /// must be exactly the one [`Parameters::encode_for`] writes).
    pub fn decode(bytes: &[u8]) -> Result<(GroupId, Parameters), MixError> {
        let bad = |r: &str| MixError::Input(format!("parameters: {r}"));
        let text = std::str::from_utf8(bytes).map_err(|_| bad("not UTF-8"))?;
        let (version, rest) = if let Some(rest) = text.strip_prefix("votum-mix v1 ") {
            (1, rest)
        } else if let Some(rest) = text.strip_prefix("votum-mix v2 ") {
            (2, rest)
        } else {
            return Err(bad("not a votum-mix v1 or v2 parameters line"));
        };
        let mut fields = std::collections::BTreeMap::new();
        for token in rest.split(' ') {
            let (k, v) = token
                .split_once('=')
                .ok_or_else(|| bad(&format!("token {token:?} is not key=value")))?;
            if fields.insert(k, v).is_some() {
                return Err(bad(&format!("{k} given twice")));
            }
        }
        let get = |k: &str| {
            fields
                .get(k)
                .copied()
                .ok_or_else(|| bad(&format!("no {k}")))
        };
        let num = |k: &str| -> Result<usize, MixError> {
            get(k)?
                .parse::<usize>()
                .map_err(|_| bad(&format!("{k} is not a number")))
        };
        let group = GroupId::from_name(get("group")?).map_err(|e| bad(&e.to_string()))?;
        let rule = match get("rule")? {
            "plurality" => Rule::Plurality,
            "k-of-n" => Rule::KOfN {
                k: num("k")?,
                seats: num("seats")?,
            },
            "approval" => Rule::Approval {
                seats: num("seats")?,
            },
            "irv" => Rule::InstantRunoff,
            "stv" => Rule::Stv {
                seats: num("seats")?,
            },
            other => return Err(bad(&format!("unknown rule {other:?}"))),
        };
        let params = Parameters {
            election_id: get("election")?.to_owned(),
            width: num("width")?,
            candidates: num("candidates")?,
            rule,
            ties: match fields.get("ties") {
                None => TieRule::default(),
                Some(t) => {
                    TieRule::from_name(t).ok_or_else(|| bad(&format!("unknown tie rule {t:?}")))?
                }
            },
            mixers: num("mixers")?,
            trustees: num("trustees")?,
            quorum: num("quorum")?,
            signers: match fields.get("signers") {
                None => Vec::new(),
                Some(v) => v
                    .split(',')
                    .map(|k| {
                        key_from_hex(k).ok_or_else(|| bad("a signing key is not 64 hex digits"))
                    })
                    .collect::<Result<_, _>>()?,
            },
        };
        params.check()?;
        if (version == 2) != params.signed() {
            return Err(bad(
                "v2 parameters name the authorities' signing keys, and only v2",
            ));
        }
        if params.encode_for(group) != bytes {
            return Err(bad("not in canonical form"));
        }
        Ok((group, params))
    }
}

pub fn put_elements<G: Group>(group: &G, es: &[G::Element], out: &mut Vec<u8>) {
    out.extend_from_slice(&(es.len() as u64).to_be_bytes());
    for e in es {
        out.extend_from_slice(&group.encode_element(e));
    }
}

/// `trustee-i`: the commitments of its polynomial, then a proof of knowledge of its constant term.
pub fn trustee_bytes<G: Group>(
    group: &G,
    commitments: &[G::Element],
    proof: &SchnorrProof<G>,
) -> Vec<u8> {
    let mut out = Vec::new();
    put_elements(group, commitments, &mut out);
    out.extend_from_slice(&group.encode_element(&proof.commitment));
    out.extend_from_slice(&group.encode_scalar(&proof.challenge));
    out.extend_from_slice(&group.encode_scalar(&proof.response));
    out
}

pub fn decode_trustee<G: Group>(
    group: &G,
    bytes: &[u8],
) -> Result<(Vec<G::Element>, SchnorrProof<G>), MixError> {
    let mut c = Cursor::new("trustee", bytes);
    let commitments = c.elements(group)?;
    let proof = SchnorrProof {
        commitment: c.element(group)?,
        challenge: c.scalar(group)?,
        response: c.scalar(group)?,
    };
    c.done()?;
    Ok((commitments, proof))
}

/// `ballots`: the number of ballots, then per ballot its voter number and, per position, the
/// ciphertext (a, b) and its proof (commitment, challenge, response).
pub fn ballots_bytes<G: Group>(group: &G, ballots: &[EncryptedBallot<G>]) -> Vec<u8> {
    let parts: Vec<Vec<u8>> = ballots
        .par_iter()
        .with_min_len(256)
        .map(|b| {
            let mut out = b.voter.to_be_bytes().to_vec();
            for (ct, p) in b.cts.iter().zip(&b.proofs) {
                out.extend_from_slice(&group.encode_element(&ct.pad));
                out.extend_from_slice(&group.encode_element(&ct.data));
                out.extend_from_slice(&group.encode_element(&p.commitment));
                out.extend_from_slice(&group.encode_scalar(&p.challenge));
                out.extend_from_slice(&group.encode_scalar(&p.response));
            }
            out
        })
        .collect();
    let mut out = Vec::with_capacity(8 + parts.iter().map(Vec::len).sum::<usize>());
    out.extend_from_slice(&(ballots.len() as u64).to_be_bytes());
    for p in parts {
        out.extend_from_slice(&p);
    }
    out
}

/// Reads [`ballots_bytes`] for ballots of width `w`, checking every element in parallel.
pub fn decode_ballots<G: Group>(
    group: &G,
    bytes: &[u8],
    w: usize,
) -> Result<Vec<EncryptedBallot<G>>, MixError> {
    let el = group.element_len();
    let sc = group.scalar_len();
    let one = 8 + w * (3 * el + 2 * sc);
    let mut c = Cursor::new("ballots", bytes);
    let n = c.count(one)?;
    let body = c.take(n * one)?;
    c.done()?;
    body.par_chunks(one)
        .enumerate()
        .map(|(index, b)| {
            let parse = || -> Result<EncryptedBallot<G>, MixError> {
                let mut c = Cursor::new("ballot", b);
                let voter = c.u64()?;
                let mut cts = Vec::with_capacity(w);
                let mut proofs = Vec::with_capacity(w);
                for _ in 0..w {
                    let pad = c.element(group)?;
                    let data = c.element(group)?;
                    cts.push(Ciphertext { pad, data });
                    proofs.push(SchnorrProof {
                        commitment: c.element(group)?,
                        challenge: c.scalar(group)?,
                        response: c.scalar(group)?,
                    });
                }
                Ok(EncryptedBallot { voter, cts, proofs })
            };
            parse().map_err(|e| MixError::Ballot {
                index,
                reason: e.to_string(),
            })
        })
        .collect()
}

/// `decryption-i`: the trustee's number, its partial decryptions, then t_g, t_a and v.
pub fn share_bytes<G: Group>(group: &G, s: &DecryptionShare<G>) -> Vec<u8> {
    let mut out = s.trustee.to_be_bytes().to_vec();
    put_elements(group, &s.partials, &mut out);
    out.extend_from_slice(&group.encode_element(&s.commit_g));
    out.extend_from_slice(&group.encode_element(&s.commit_a));
    out.extend_from_slice(&group.encode_scalar(&s.response));
    out
}

pub fn decode_share<G: Group>(group: &G, bytes: &[u8]) -> Result<DecryptionShare<G>, MixError> {
    let mut c = Cursor::new("decryption", bytes);
    let trustee = c.u64()?;
    let partials = c.elements(group)?;
    let s = DecryptionShare {
        trustee,
        partials,
        commit_g: c.element(group)?,
        commit_a: c.element(group)?,
        response: c.scalar(group)?,
    };
    c.done()?;
    Ok(s)
}

/// `result`: N and w, the decrypted rows (u64 each), then the outcome: valid, invalid, the
/// first-round tallies, the later rounds, the winners (each list preceded by its length).
pub fn result_bytes(plaintexts: &[Vec<u64>], w: usize, outcome: &Outcome) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 + plaintexts.len() * w * 8);
    let put = |out: &mut Vec<u8>, v: u64| out.extend_from_slice(&v.to_be_bytes());
    put(&mut out, plaintexts.len() as u64);
    put(&mut out, w as u64);
    for row in plaintexts {
        for &v in row {
            put(&mut out, v);
        }
    }
    put(&mut out, outcome.valid);
    put(&mut out, outcome.invalid);
    put(&mut out, outcome.tallies.len() as u64);
    for &t in &outcome.tallies {
        put(&mut out, t);
    }
    put(&mut out, outcome.rounds.len() as u64);
    for r in &outcome.rounds {
        put(&mut out, r.len() as u64);
        for &t in r {
            put(&mut out, t);
        }
    }
    put(&mut out, outcome.winners.len() as u64);
    for &c in &outcome.winners {
        put(&mut out, u64::from(c));
    }
    out
}

/// The rows and the outcome's numbers of a `result` payload (`rule` and `candidates` come from
/// the parameters).
pub fn decode_result(
    bytes: &[u8],
    rule: Rule,
    candidates: usize,
) -> Result<(Vec<Vec<u64>>, Outcome), MixError> {
    let mut c = Cursor::new("result", bytes);
    let n = c.u64()?;
    let w = usize::try_from(c.u64()?).map_err(|_| c.err("width out of range"))?;
    if w == 0 {
        return Err(c.err("width 0"));
    }
    let n = usize::try_from(n).map_err(|_| c.err("count out of range"))?;
    // both counts come from the payload: a product that overflows is refused, not computed
    if w.checked_mul(8)
        .and_then(|row| n.checked_mul(row))
        .is_none_or(|len| len > bytes.len())
    {
        return Err(c.err(format!("{n} rows of width {w} do not fit")));
    }
    let mut rows = Vec::with_capacity(n);
    for _ in 0..n {
        let mut row = Vec::with_capacity(w);
        for _ in 0..w {
            row.push(c.u64()?);
        }
        rows.push(row);
    }
    let valid = c.u64()?;
    let invalid = c.u64()?;
    let list = |c: &mut Cursor<'_>| -> Result<Vec<u64>, MixError> {
        let k = c.count(8)?;
        (0..k).map(|_| c.u64()).collect()
    };
    let tallies = list(&mut c)?;
    let k = c.count(8)?;
    let mut rounds = Vec::with_capacity(k);
    for _ in 0..k {
        rounds.push(list(&mut c)?);
    }
    let winners = list(&mut c)?
        .into_iter()
        .map(|v| {
            u32::try_from(v).map_err(|_| MixError::Input("result: a winner out of range".into()))
        })
        .collect::<Result<Vec<u32>, _>>()?;
    c.done()?;
    Ok((
        rows,
        Outcome {
            rule: rule.name(),
            candidates,
            valid,
            invalid,
            tallies,
            rounds,
            exhausted: Vec::new(),
            quota: 0,
            ties: Vec::new(),
            winners,
        },
    ))
}

/// `mix-m`: the output list (spec/90.6, self-delimiting: N and w lead) then the shuffle proof.
/// Returns the two halves.
pub fn split_mix(bytes: &[u8], element_len: usize) -> Result<(&[u8], &[u8]), MixError> {
    let bad = || MixError::Input("mix payload shorter than its list".into());
    if bytes.len() < 16 {
        return Err(bad());
    }
    let n = u64::from_be_bytes(bytes[0..8].try_into().unwrap_or([0; 8]));
    let w = u64::from_be_bytes(bytes[8..16].try_into().unwrap_or([0; 8]));
    let len = n
        .checked_mul(w)
        .and_then(|x| x.checked_mul(2 * element_len as u64))
        .and_then(|x| x.checked_add(16))
        .filter(|&l| l <= bytes.len() as u64)
        .ok_or_else(bad)?;
    Ok(bytes.split_at(len as usize))
}
