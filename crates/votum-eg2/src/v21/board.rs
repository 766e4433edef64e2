//! What the election service checks of a 2.1 key ceremony held on its board (spec/80.11), with no secret:
//! each guardian's key record (Verification 2) as it is posted, the proof of each share ciphertext's nonce
//! (eq. 22; only the receiver can check the values), and the guardians' document (K, K̂, H_G, H_E) computed
//! from the n records, which every guardian's own computation must equal before the election opens; and, once
//! the guardians have answered, the tally and the challenged ballots opened ([`publish`]).

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::election::{Dlog, Summary};
use crate::group::{parameter_inputs, Eg2Group};
use crate::manifest::{read_manifest, Manifest};
use crate::v21::check::check_key;
use crate::v21::decrypt::{check_nonce_part, guardian, open_ballot, NoncePart, Target};
use crate::v21::election::{
    check_roster, joint_keys, record_values, tally_json, write_json, write_lines, Said, Tally,
};
use crate::v21::hashes::{base_hash, parameter_hash, ShortCode};
use crate::v21::keys::{check_share_proof, judge_complaint};
use crate::v21::preencrypt::Recorder;
use crate::v21::record::{self, GuardianKey, Keys};
use crate::v21::trustee::{
    combine_round, quorum, read_announce, read_ballots, read_opening, read_reveal, read_share,
    targets_digest, ReadAnnounce,
};
use crate::Eg2Error;

/// A 2.1 election's public parameters: the group, n, k, H_P and H_B (from the manifest's bytes).
pub struct Ceremony<G: Eg2Group> {
    group: G,
    n: u32,
    k: u32,
    hp: [u8; 32],
    hb: [u8; 32],
}

fn wrong(reason: impl Into<String>) -> Eg2Error {
    Eg2Error::Parameters(reason.into())
}

impl<G: Eg2Group> Ceremony<G> {
    /// The election on `manifest_bytes` (a 2.x manifest with at least one ballot style) with `n` guardians
    /// and quorum `k`.
    pub fn new(group: G, manifest_bytes: &[u8], (n, k): (u32, u32)) -> Result<Self, Eg2Error> {
        let doc: Value = serde_json::from_slice(manifest_bytes)
            .map_err(|e| Eg2Error::Manifest(format!("not JSON: {e}")))?;
        let manifest = read_manifest(&doc).map_err(Eg2Error::Manifest)?;
        if manifest.styles.is_empty() {
            return Err(Eg2Error::Manifest(
                "the manifest has no ballot style".into(),
            ));
        }
        if k == 0 || k > n {
            return Err(wrong(format!("quorum {k} of {n} guardians")));
        }
        let hp = parameter_hash(&parameter_inputs(&group), n, k);
        let hb = base_hash(&hp, manifest_bytes);
        Ok(Self {
            group,
            n,
            k,
            hp,
            hb,
        })
    }

    /// H_P and H_B.
    pub fn hashes(&self) -> (&[u8; 32], &[u8; 32]) {
        (&self.hp, &self.hb)
    }

    /// The record's parameters document (spec/66.3): the group's name and constants, n and k.
    pub fn parameters(&self) -> Value {
        crate::v21::record::parameters_json(&self.group, self.n, self.k)
    }

    /// Guardian i's key record, read and checked (Verification 2, i in 1…n): returns i.
    pub fn check_key(&self, record: &Value) -> Result<u32, Eg2Error> {
        let key = GuardianKey::read(&self.group, record).map_err(wrong)?;
        if key.i == 0 || key.i > self.n {
            return Err(wrong(format!(
                "a key record of guardian {} of {}",
                key.i, self.n
            )));
        }
        check_key(&self.group, &self.hp, &key, self.k).map_err(|reason| Eg2Error::Guardian {
            guardian: format!("guardian {}", key.i),
            reason,
        })?;
        Ok(key.i)
    }

    /// A share ciphertext, read and its nonce's proof checked (eq. 22): returns (from, to), two guardians of
    /// 1…n, not the same.
    pub fn check_share(&self, share: &Value) -> Result<(u32, u32), Eg2Error> {
        let s = read_share(&self.group, share).map_err(wrong)?;
        if s.from == s.to || !(1..=self.n).contains(&s.from) || !(1..=self.n).contains(&s.to) {
            return Err(wrong(format!(
                "a share from {} to {} of {} guardians",
                s.from, s.to, self.n
            )));
        }
        check_share_proof(&self.group, &self.hp, &s).map_err(|reason| Eg2Error::Guardian {
            guardian: format!("guardian {}", s.from),
            reason,
        })?;
        Ok((s.from, s.to))
    }

    /// Receiver ℓ's complaint of dealer i's share with its opening (spec/66.4, 80.11), judged with no secret:
    /// the dealer's fault when the opened share fails (`Ok`, the reason), otherwise an error saying why the
    /// complaint does not stand (a false complaint, or an opening that does not verify).
    pub fn judge_complaint(
        &self,
        (dealer, receiver): (&Value, &Value),
        share: &Value,
        opening: &Value,
    ) -> Result<String, Eg2Error> {
        let key = |doc: &Value| GuardianKey::read(&self.group, doc).map_err(wrong);
        let (dealer, receiver) = (key(dealer)?, key(receiver)?);
        let share = read_share(&self.group, share).map_err(wrong)?;
        let opening = read_opening(&self.group, opening)
            .map_err(|e| wrong(format!("the complaint's opening: {e}")))?;
        judge_complaint(
            &self.group,
            &self.hp,
            self.k,
            (&dealer, &receiver),
            &share,
            &opening,
        )
        .map_err(|reason| Eg2Error::Guardian {
            guardian: format!("guardian {}", receiver.i),
            reason: format!("its complaint does not stand: {reason}"),
        })
    }

    /// The guardians' document (spec/66.3) from the key records of guardians 1…n in order, each checked.
    pub fn joint(&self, records: &[Value]) -> Result<Value, Eg2Error> {
        let keys = records
            .iter()
            .map(|d| GuardianKey::read(&self.group, d).map_err(wrong))
            .collect::<Result<Vec<_>, _>>()?;
        check_roster(&self.group, &self.hp, &keys, (self.n, self.k))?;
        Ok(joint_keys(&self.group, (&self.hp, &self.hb), keys).to_json(&self.group))
    }
}

/// The record at `dir` as far as its ballots (the service's own board written out: parameters, manifest,
/// guardians, devices, ballots): its manifest, keys and what is decrypted, computed as every guardian
/// computes it ([`read_ballots`]: a record with a value twice is refused).
fn read_record<G: Eg2Group>(group: &G, dir: &Path) -> Result<BoardRecord<G>, Eg2Error> {
    let rec = |e: String| wrong(format!("the record: {e}"));
    let read = |name: &str| std::fs::read(dir.join(name)).map_err(|e| rec(format!("{name}: {e}")));
    let json = |name: &str| -> Result<Value, Eg2Error> {
        serde_json::from_slice(&read(name)?).map_err(|e| rec(format!("{name}: {e}")))
    };
    let params = json(record::PARAMETERS)?;
    let n = params["n"].as_u64().unwrap_or(0) as u32;
    let k = params["k"].as_u64().unwrap_or(0) as u32;
    if params != record::parameters_json(group, n, k) {
        return Err(wrong("the record's parameters are not this group's"));
    }
    let manifest_doc: Value = serde_json::from_slice(&read(record::MANIFEST)?)
        .map_err(|e| Eg2Error::Manifest(e.to_string()))?;
    let manifest = read_manifest(&manifest_doc).map_err(Eg2Error::Manifest)?;
    let short = ShortCode::of_manifest(&manifest_doc).map_err(Eg2Error::Manifest)?;
    let keys = Keys::read(group, &json(record::GUARDIANS)?).map_err(rec)?;
    let tally = read_ballots(group, &manifest, dir)?;
    Ok(BoardRecord {
        n,
        k,
        manifest,
        short,
        keys,
        tally,
    })
}

/// What [`read_record`] reads.
struct BoardRecord<G: Eg2Group> {
    n: u32,
    k: u32,
    manifest: Manifest,
    /// the manifest's short-code function Ω (§4.6), which pre-encrypted ballots need
    short: Option<ShortCode>,
    keys: Keys<G>,
    tally: Tally<G>,
}

/// What the election service publishes once the guardians of U have answered (spec/80.11), with no secret and
/// no voter's plaintext to compare against: from the record at `dir` as far as its ballots (the service's own
/// board written out: parameters, manifest, guardians, devices, ballots), what is decrypted is computed as
/// every guardian computes it ([`read_ballots`]: a record with a value twice is refused); each announcement
/// must be made for these values; the answers are combined, each checked ([`combine`]: a wrong one names its
/// guardian); each count is found up to the cast ballots' total weight; the contest data decrypted; the
/// challenged ballots opened from the guardians' nonce parts (each checked, a wrong one named). Writes
/// `tally.json` and `challenged.jsonl` into `dir`; the verifier checks the whole record after.
pub fn publish<G: Eg2Group>(
    group: &G,
    dir: &Path,
    available: &[u32],
    messages: (&[Value], &[Value], &[Value]),
) -> Result<Summary, Eg2Error> {
    let BoardRecord {
        n,
        k,
        manifest,
        short,
        keys,
        tally,
    } = read_record(group, dir)?;
    let u = quorum(available, n, k)?;
    let targets = tally.targets(&manifest);
    let challenged = tally.challenged();
    let (decrypted, parts) = combine_round(
        group,
        (&keys, &u),
        (&targets, &challenged),
        messages,
        "the board's",
    )?;
    let dlog = Dlog::new(group, &keys.k, tally.bound());
    // no voter's plaintext to compare with: a contest data that does not decode is refused
    let check = |t: &Target<'_, G>, said: &Said| match said {
        Said::Data(None) => Err(Eg2Error::Decryption(format!(
            "{}: its data does not decode",
            t.name()
        ))),
        _ => Ok(()),
    };
    let (values, contest_data, counts) = record_values(
        group,
        &manifest,
        (&targets, decrypted),
        (&dlog, tally.bound()),
        check,
    )?;
    let mut opened = Vec::with_capacity(challenged.len());
    let recorder = short.map(|s| Recorder::new(group.clone(), &keys.k, (&manifest, s)));
    for b in &challenged {
        let parts = parts.get(&b.id).ok_or_else(|| Eg2Error::Ballot {
            ballot: b.id.clone(),
            reason: "no guardian's part of its nonce".into(),
        })?;
        if b.pre_encrypted {
            // an uncast printed ballot: opened from its nonce, its sheet recomputed (no paper here)
            let recorder = recorder.as_ref().ok_or_else(|| Eg2Error::Ballot {
                ballot: b.id.clone(),
                reason: "a pre-encrypted ballot, and the manifest names no short-code function"
                    .into(),
            })?;
            opened.push(
                recorder
                    .open_unseen(b, &keys.guardians, parts)?
                    .to_json(group),
            );
            continue;
        }
        opened.push(open_ballot(group, &keys, &manifest, b, parts)?.to_json(group));
    }
    write_json(
        &dir.join(record::TALLY),
        &tally_json(group, &u, &values, &contest_data),
    )?;
    write_lines(&dir.join(record::CHALLENGED), opened.iter().cloned())?;
    Ok(Summary {
        cast: tally.count - opened.len(),
        challenged: opened.len(),
        counts,
        seconds: Vec::new(),
    })
}

/// What the election service checks of each message of a decryption round as it is posted (spec/80.11), with
/// no secret, so that a guardian of U whose message would make the others stop is refused, and named, at once
/// instead of stalling the round: an announcement must be made for the values computed here (the digest, one
/// (M_i, d_i) per value) and hold one part of each challenged ballot's nonce, each with its proof against the
/// guardian's ballot-data key; a reveal must open the guardian's own d_i (eqs. 88, 99). An answer is checked
/// at publication ([`publish`] names a wrong one).
pub struct RoundCheck<G: Eg2Group> {
    group: G,
    record: BoardRecord<G>,
    u: Vec<u32>,
    digest: [u8; 32],
}

impl<G: Eg2Group> RoundCheck<G> {
    /// The round with guardians `available` on the record at `dir` (as [`publish`] reads it).
    pub fn new(group: G, dir: &Path, available: &[u32]) -> Result<Self, Eg2Error> {
        let record = read_record(&group, dir)?;
        let u = quorum(available, record.n, record.k)?;
        let digest = {
            let targets = record.tally.targets(&record.manifest);
            targets_digest(&group, &u, &targets, &record.tally.challenged())
        };
        Ok(Self {
            group,
            record,
            u,
            digest,
        })
    }

    fn read(&self, i: u32, announce: &Value) -> Result<ReadAnnounce<G>, Eg2Error> {
        let a = read_announce(&self.group, announce).map_err(|e| guardian(i, e))?;
        if a.announce.i != i || !self.u.contains(&i) {
            return Err(guardian(
                i,
                format!(
                    "an announcement of guardian {} in a round of {:?}",
                    a.announce.i, self.u
                ),
            ));
        }
        Ok(a)
    }

    /// Guardian i's announcement (JSON), as every other guardian of U would check it before revealing.
    pub fn check_announce(&self, i: u32, announce: &Value) -> Result<(), Eg2Error> {
        let a = self.read(i, announce)?;
        if a.digest != self.digest {
            return Err(guardian(
                i,
                "its announcement is made for other values than the board's: the record it read differs",
            ));
        }
        let targets = self.record.tally.targets(&self.record.manifest);
        if a.announce.values.len() != targets.len() {
            return Err(guardian(
                i,
                format!(
                    "its announcement holds {} values of {}",
                    a.announce.values.len(),
                    targets.len()
                ),
            ));
        }
        let challenged = self.record.tally.challenged();
        let parts: BTreeMap<&str, &NoncePart<G>> =
            a.parts.iter().map(|(id, p)| (id.as_str(), p)).collect();
        if parts.len() != a.parts.len() || parts.len() != challenged.len() {
            return Err(guardian(
                i,
                format!(
                    "its announcement holds {} nonce parts for {} challenged ballots",
                    a.parts.len(),
                    challenged.len()
                ),
            ));
        }
        for b in challenged {
            let part = parts.get(b.id.as_str()).ok_or_else(|| {
                guardian(
                    i,
                    format!("its announcement holds no part of ballot {}'s nonce", b.id),
                )
            })?;
            if !check_nonce_part(&self.group, &self.record.keys.guardians, b, i, part) {
                return Err(guardian(
                    i,
                    format!(
                        "its part of ballot {}'s nonce does not verify against its ballot-data key",
                        b.id
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Guardian i's reveal (JSON) against its announcement on the board: each pair must open its d_i.
    pub fn check_reveal(&self, i: u32, announce: &Value, reveal: &Value) -> Result<(), Eg2Error> {
        let a = self.read(i, announce)?;
        let r = read_reveal(&self.group, reveal).map_err(|e| guardian(i, e))?;
        let targets = self.record.tally.targets(&self.record.manifest);
        if r.i != i || r.pairs.len() != targets.len() || a.announce.values.len() != targets.len() {
            return Err(guardian(
                i,
                format!(
                    "a reveal of guardian {} with {} pairs for {} values",
                    r.i,
                    r.pairs.len(),
                    targets.len()
                ),
            ));
        }
        let he = &self.record.keys.he;
        for (t, ((m, d), (x, y))) in targets.iter().zip(a.announce.values.iter().zip(&r.pairs)) {
            t.check_pair(&self.group, he, i, (x, y), (m, d), &self.u)?;
        }
        Ok(())
    }
}
