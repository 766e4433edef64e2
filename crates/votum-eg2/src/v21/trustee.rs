//! A 2.1 guardian as a party of its own (spec/66.12): the state one guardian process keeps from its key
//! generation to its decryption, and the checks it makes of everything another party sends it. The
//! coordinator is one more party that may lie, so a guardian
//! - computes H_P and H_B itself from the group, n, k and the manifest's bytes;
//! - deals its shares (signed ElGamal under the receiver's κ, eqs. 15–22) only after it has checked every
//!   guardian's key record (Verification 2), and checks each share it receives (eqs. 22, 28, 29);
//! - computes K, K̂, H_G and H_E itself;
//! - decrypts only what it computes from a record whose parameters, manifest and guardians are its own
//!   (the caller has checked its private copy as far as the ballots, V-EG21-01…08): the weighted sums of
//!   the cast ballots, the cast ballots' contest data where the manifest says so, and the nonces of the
//!   ballots marked challenged; a record with an id, an id_B, a nonce ciphertext or a selection ciphertext
//!   twice stops it, since a copy of a cast ballot opened as challenged would publish that vote;
//! - reveals its commitment pairs only once it holds every available guardian's d_j, keeps the
//!   announcements it revealed against, derives each challenge itself, and answers once.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::io::BufRead;
use std::path::Path;

use rand_core::{CryptoRng, RngCore};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::election::Summary;
use crate::group::{parameter_inputs, Eg2Group};
use crate::manifest::{count, list, read_manifest, text, Manifest};
use crate::v21::decrypt::{
    combine, guardian as named, nonce_share, Announce, Decrypted, NoncePart, Reveal, Session,
    Target,
};
use crate::v21::election::{check_roster, joint_keys, Coordinator, Tally};
use crate::v21::hashes::{base_hash, parameter_hash};
use crate::v21::keys::{EncryptedShare, Guardian, KeyShares, ShareOpening};
use crate::v21::record::{self, el, element, sc, scalar, Ballot, GuardianKey, Keys};
use crate::{Eg2Error, Pair};

fn wrong(reason: impl Into<String>) -> Eg2Error {
    Eg2Error::Parameters(reason.into())
}

/// What a guardian holds between its announcement and its answer: the record's ballots and sums it
/// computed, the announcements it revealed against, and its session (its nonces).
struct Pending<G: Eg2Group> {
    tally: Tally<G>,
    available: Vec<u32>,
    digest: [u8; 32],
    session: Session<G>,
    /// every available guardian's announcement, fixed when this guardian revealed its pairs
    revealed: Option<Vec<Announce<G>>>,
}

/// Where a guardian is in its election.
enum Stage<G: Eg2Group> {
    /// made; the key records not yet agreed
    Made,
    /// every guardian's key record checked; shares being dealt and received
    Agreed(Vec<GuardianKey<G>>),
    /// every share in: the joint keys and this guardian's key shares
    Keyed(Box<Keys<G>>, KeyShares<G>),
    /// its announcement made; revealing and answering owed
    Decrypting(Box<Keys<G>>, KeyShares<G>, Box<Pending<G>>),
    /// it has answered, or refused mid-decryption: that round's nonces are spent; a new round may decrypt the
    /// same values again with other guardians
    Answered(Box<Keys<G>>, KeyShares<G>),
    /// between two stages (never left there)
    Done,
}

/// Where a guardian's keys were when a new announcement was asked for: put back if it is refused.
enum Before<G: Eg2Group> {
    Keyed,
    Decrypting(Box<Pending<G>>),
    Answered,
}

/// One guardian's whole part in a 2.1 election.
pub struct Trustee<G: Eg2Group> {
    group: G,
    n: u32,
    k: u32,
    hp: [u8; 32],
    hb: [u8; 32],
    manifest: Manifest,
    guardian: Guardian<G>,
    stage: Stage<G>,
    /// what this guardian decrypts, once it has announced: the digest of its targets without U. Every later
    /// round must be for the same values (another U only), so that two records differing in one ballot are
    /// never both decrypted (their tallies' difference would be that ballot's vote).
    decrypting_for: Option<[u8; 32]>,
}

impl<G: Eg2Group> std::fmt::Debug for Trustee<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Trustee21")
            .field("i", &self.guardian.i)
            .field("secrets", &"<redacted>")
            .finish()
    }
}

/// A share ciphertext as JSON: `from`, `to`, C₀, C₁ and the proof (c̄, v̄).
pub fn share_json<G: Eg2Group>(group: &G, s: &EncryptedShare<G>) -> Value {
    json!({
        "from": s.from,
        "to": s.to,
        "C0": el(group, &s.c0),
        "C1": record::hex(&s.c1),
        "c": sc(group, &s.proof.c),
        "v": sc(group, &s.proof.v),
    })
}

/// A receiver's opening of a share (spec/66.4) as JSON: β and the proof (c, v).
pub fn opening_json<G: Eg2Group>(group: &G, o: &ShareOpening<G>) -> Value {
    json!({
        "beta": el(group, &o.beta),
        "c": sc(group, &o.proof.c),
        "v": sc(group, &o.proof.v),
    })
}

/// A share opening from JSON; β's membership and the proof are checked by [`judge_complaint`].
pub fn read_opening<G: Eg2Group>(group: &G, v: &Value) -> Result<ShareOpening<G>, String> {
    Ok(ShareOpening {
        beta: element(group, v, "beta")?,
        proof: Pair {
            c: scalar(group, v, "c")?,
            v: scalar(group, v, "v")?,
        },
    })
}

/// A share ciphertext from JSON; C₀'s membership and the proof are checked by its receiver.
pub fn read_share<G: Eg2Group>(group: &G, v: &Value) -> Result<EncryptedShare<G>, String> {
    Ok(EncryptedShare {
        from: count(v, "from")?,
        to: count(v, "to")?,
        c0: element(group, v, "C0")?,
        c1: record::fixed(v, "C1")?,
        proof: Pair {
            c: scalar(group, v, "c")?,
            v: scalar(group, v, "v")?,
        },
    })
}

/// The digest of what is decrypted: the available guardians, each target's name and values, and each
/// challenged ballot's id and nonce ciphertext. Every guardian's announcement carries it, so that one made
/// for other values than the coordinator's is seen at once.
pub fn targets_digest<G: Eg2Group>(
    group: &G,
    available: &[u32],
    targets: &[Target<'_, G>],
    challenged: &[&Ballot<G>],
) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(b"votum/eg21-decryption/v1\0");
    for i in available {
        h.update(i.to_be_bytes());
    }
    for t in targets {
        h.update(t.name().as_bytes());
        h.update([0]);
        match t {
            Target::Tally { ct, .. } => {
                h.update(group.hash_bytes(&ct.pad));
                h.update(group.hash_bytes(&ct.data));
            }
            Target::Data { data, .. } => {
                h.update(group.hash_bytes(&data.c0));
                h.update(&data.c1);
            }
        }
    }
    for b in challenged {
        h.update(b.id.as_bytes());
        h.update([0]);
        h.update(group.hash_bytes(&b.nonce.c0));
    }
    h.finalize().into()
}

/// A guardian's announcement as JSON: its index, the digest, (M_i, d_i) per target and its part of each
/// challenged ballot's nonce.
fn announce_json<G: Eg2Group>(
    group: &G,
    a: &Announce<G>,
    digest: &[u8; 32],
    parts: &[(String, NoncePart<G>)],
) -> Value {
    json!({
        "i": a.i,
        "digest": record::hex(digest),
        "values": a.values.iter().map(|(m, d)| json!({"M": el(group, m), "d": record::hex(d)}))
            .collect::<Vec<_>>(),
        "nonce_parts": parts.iter().map(|(id, p)| json!({
            "ballot": id, "m": el(group, &p.m), "c": sc(group, &p.proof.c), "v": sc(group, &p.proof.v),
        })).collect::<Vec<_>>(),
    })
}

/// An announcement read: the guardian's (M_i, d_i) per target, the digest it was made for, and its nonce
/// parts by ballot id.
pub struct ReadAnnounce<G: Eg2Group> {
    pub announce: Announce<G>,
    pub digest: [u8; 32],
    pub parts: Vec<(String, NoncePart<G>)>,
}

/// An announcement from JSON, every element checked in the group.
pub fn read_announce<G: Eg2Group>(group: &G, v: &Value) -> Result<ReadAnnounce<G>, String> {
    let i = count(v, "i")?;
    let values = list(v, "values")?
        .iter()
        .map(|x| Ok((element(group, x, "M")?, record::fixed(x, "d")?)))
        .collect::<Result<Vec<_>, String>>()?;
    let parts = list(v, "nonce_parts")?
        .iter()
        .map(|x| {
            Ok((
                text(x, "ballot")?.to_owned(),
                NoncePart {
                    m: element(group, x, "m")?,
                    proof: Pair {
                        c: scalar(group, x, "c")?,
                        v: scalar(group, x, "v")?,
                    },
                },
            ))
        })
        .collect::<Result<Vec<_>, String>>()?;
    let refs: Vec<&G::Element> = values
        .iter()
        .map(|(m, _)| m)
        .chain(parts.iter().map(|(_, p)| &p.m))
        .collect();
    if !group.all_members(&refs) {
        return Err(format!("guardian {i}'s announcement holds a non-member"));
    }
    Ok(ReadAnnounce {
        announce: Announce { i, values },
        digest: record::fixed(v, "digest")?,
        parts,
    })
}

fn reveal_json<G: Eg2Group>(group: &G, r: &Reveal<G>) -> Value {
    json!({
        "i": r.i,
        "pairs": r.pairs.iter().map(|(a, b)| json!({"a": el(group, a), "b": el(group, b)}))
            .collect::<Vec<_>>(),
    })
}

/// A revealed set of commitment pairs from JSON, every element checked in the group.
pub fn read_reveal<G: Eg2Group>(group: &G, v: &Value) -> Result<Reveal<G>, String> {
    let i = count(v, "i")?;
    let pairs = list(v, "pairs")?
        .iter()
        .map(|x| Ok((element(group, x, "a")?, element(group, x, "b")?)))
        .collect::<Result<Vec<_>, String>>()?;
    let refs: Vec<&G::Element> = pairs.iter().flat_map(|(a, b)| [a, b]).collect();
    if !group.all_members(&refs) {
        return Err(format!("guardian {i}'s pairs hold a non-member"));
    }
    Ok(Reveal { i, pairs })
}

/// A guardian's answers from JSON: its index and one response per target.
pub fn read_answers<G: Eg2Group>(group: &G, v: &Value) -> Result<(u32, Vec<G::Scalar>), String> {
    let i = count(v, "i")?;
    let answers = list(v, "answers")?
        .iter()
        .map(|x| scalar(group, &json!({ "v": x }), "v"))
        .collect::<Result<Vec<_>, String>>()?;
    Ok((i, answers))
}

/// The available guardians U: distinct, within 1…n, at least k, sorted.
pub(crate) fn quorum(available: &[u32], n: u32, k: u32) -> Result<Vec<u32>, Eg2Error> {
    let u: BTreeSet<u32> = available.iter().copied().collect();
    if u.len() != available.len()
        || (u.len() as u64) < u64::from(k)
        || u.iter().any(|i| *i == 0 || *i > n)
    {
        return Err(wrong(format!(
            "the available guardians {available:?} are not a quorum of {k} of 1…{n}"
        )));
    }
    Ok(u.into_iter().collect())
}

/// A ballot's id_B, nonce ciphertext C₀ and each selection's α, as 16 bytes of SHA-256 each (with a letter
/// naming the kind): a record in which one of these appears twice holds a copied ballot. The guardians refuse
/// such a record, and the election service refuses such a ballot before it stores it (spec/80.11).
pub fn ballot_fingerprints<G: Eg2Group>(group: &G, b: &Ballot<G>) -> Vec<[u8; 16]> {
    let mut values = vec![(b"B" as &[u8], b.id_b.to_vec())];
    values.push((b"N", group.hash_bytes(&b.nonce.c0)));
    for c in &b.contests {
        for s in &c.selections {
            values.push((b"S", group.hash_bytes(&s.ct.pad)));
        }
    }
    values
        .into_iter()
        .map(|(kind, bytes)| {
            let full: [u8; 32] = Sha256::new()
                .chain_update(kind)
                .chain_update(&bytes)
                .finalize()
                .into();
            let mut d = [0u8; 16];
            d.copy_from_slice(&full[..16]);
            d
        })
        .collect()
}

/// A record's `ballots.jsonl` read a line at a time into a [`Tally`], refused when one id, id_B, nonce
/// ciphertext or selection ciphertext appears twice: a copy of a cast ballot opened as challenged, or counted
/// twice, would publish or shift that vote. What is held for the check is 16 bytes of SHA-256 per value (a
/// chance collision would refuse an honest record, never pass a copy).
pub fn read_ballots<G: Eg2Group>(
    group: &G,
    manifest: &Manifest,
    dir: &Path,
) -> Result<Tally<G>, Eg2Error> {
    let rec = |e: String| wrong(format!("the record: {e}"));
    let path = dir.join(record::BALLOTS);
    let file = std::fs::File::open(&path).map_err(|e| rec(format!("{}: {e}", record::BALLOTS)))?;
    let mut tally = Tally::new(group, manifest);
    let mut ids = HashSet::new();
    // each value's digest and the line it was first seen on
    let mut seen: HashMap<[u8; 16], usize> = HashMap::new();
    for (no, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|e| rec(e.to_string()))?;
        let v: Value = serde_json::from_str(&line).map_err(|e| {
            rec(format!(
                "{} line {}: not JSON: {e}",
                record::BALLOTS,
                no + 1
            ))
        })?;
        let b = Ballot::read(group, &v).map_err(|e| rec(format!("line {}: {e}", no + 1)))?;
        if !ids.insert(b.id.clone()) {
            return Err(rec(format!(
                "ballot id {} appears twice; nothing is decrypted",
                b.id
            )));
        }
        for d in ballot_fingerprints(group, &b) {
            if let Some(other) = seen.insert(d, no + 1) {
                return Err(rec(format!(
                    "ballot {} (line {}) repeats an id_B, nonce or ciphertext of the ballot on line {other}: a \
                     copied ballot; nothing is decrypted",
                    b.id,
                    no + 1
                )));
            }
        }
        tally.add(group, b);
    }
    Ok(tally)
}

impl<G: Eg2Group> Trustee<G> {
    /// Guardian `i` of `n` with quorum `k`, for an election on `manifest_bytes` (the bytes H_B hashes).
    pub fn new<R: RngCore + CryptoRng>(
        group: G,
        manifest_bytes: &[u8],
        (n, k): (u32, u32),
        i: u32,
        rng: &mut R,
    ) -> Result<Self, Eg2Error> {
        let doc: Value = serde_json::from_slice(manifest_bytes)
            .map_err(|e| Eg2Error::Manifest(format!("not JSON: {e}")))?;
        let manifest = read_manifest(&doc).map_err(Eg2Error::Manifest)?;
        if k == 0 || k > n || i == 0 || i > n {
            return Err(wrong(format!(
                "guardian {i} with quorum {k} of {n} guardians"
            )));
        }
        let hp = parameter_hash(&parameter_inputs(&group), n, k);
        let hb = base_hash(&hp, manifest_bytes);
        let guardian = Guardian::new(&group, &hp, i, k, rng);
        Ok(Self {
            group,
            n,
            k,
            hp,
            hb,
            manifest,
            guardian,
            stage: Stage::Made,
            decrypting_for: None,
        })
    }

    pub fn i(&self) -> u32 {
        self.guardian.i
    }

    pub fn group(&self) -> &G {
        &self.group
    }

    /// This guardian's key record (§3.2.2) as JSON.
    pub fn public(&self) -> Value {
        self.guardian.public().to_json(&self.group)
    }

    /// Takes every guardian's key record, guardians 1…n in order, this one's unchanged among them, each
    /// checked (Verification 2).
    pub fn agree(&mut self, docs: &[Value]) -> Result<(), Eg2Error> {
        if !matches!(self.stage, Stage::Made) {
            return Err(wrong("the key records were agreed already"));
        }
        let keys = docs
            .iter()
            .map(|d| GuardianKey::read(&self.group, d).map_err(wrong))
            .collect::<Result<Vec<_>, _>>()?;
        check_roster(&self.group, &self.hp, &keys, (self.n, self.k))?;
        if docs.get(self.guardian.i as usize - 1) != Some(&self.public()) {
            return Err(wrong(format!(
                "the key records do not hold guardian {}'s own",
                self.guardian.i
            )));
        }
        self.stage = Stage::Agreed(keys);
        Ok(())
    }

    fn agreed(&self) -> Result<&[GuardianKey<G>], Eg2Error> {
        match &self.stage {
            Stage::Agreed(keys) => Ok(keys),
            _ => Err(wrong("no agreed key records to deal or receive shares on")),
        }
    }

    /// The share for guardian `to`, encrypted under its κ with the proof of its nonce (eqs. 15–22), as
    /// JSON. Only its receiver can read it; the transport also seals it to the receiver.
    pub fn share_for<R: RngCore + CryptoRng>(
        &self,
        to: u32,
        rng: &mut R,
    ) -> Result<Value, Eg2Error> {
        let keys = self.agreed()?;
        if to == self.guardian.i {
            return Err(wrong("a guardian deals no share to itself"));
        }
        let receiver = keys
            .iter()
            .find(|g| g.i == to)
            .ok_or_else(|| wrong(format!("no guardian {to}")))?;
        let share = self
            .guardian
            .share_for(&self.group, &self.hp, receiver, rng);
        Ok(share_json(&self.group, &share))
    }

    /// Takes the share dealt by guardian `from`, once, checked (eqs. 22, 28, 29); a bad one is refused and
    /// names its dealer.
    pub fn receive(&mut self, from: u32, doc: &Value) -> Result<(), Eg2Error> {
        let dealer = self
            .agreed()?
            .iter()
            .find(|g| g.i == from && from != self.guardian.i)
            .cloned()
            .ok_or_else(|| wrong(format!("no other guardian {from}")))?;
        let share =
            read_share(&self.group, doc).map_err(|e| named(from, format!("its share: {e}")))?;
        self.guardian
            .receive(&self.group, &self.hp, self.k, &dealer, &share)
    }

    /// This guardian's opening (JSON) of the share dealt to it by guardian `from` (`doc`, as the board shows
    /// it), to go with its complaint of that dealer (spec/66.4): anyone can then see whether the share fails.
    pub fn open_share<R: RngCore + CryptoRng>(
        &self,
        from: u32,
        doc: &Value,
        rng: &mut R,
    ) -> Result<Value, Eg2Error> {
        self.agreed()?;
        let share =
            read_share(&self.group, doc).map_err(|e| named(from, format!("its share: {e}")))?;
        if share.from != from {
            return Err(named(from, format!("a share of guardian {}", share.from)));
        }
        let opening = self
            .guardian
            .open_share(&self.group, &self.hp, &share, rng)?;
        Ok(opening_json(&self.group, &opening))
    }

    /// Once a share from every other guardian is in: K, K̂, H_G and H_E computed here, and this guardian's
    /// key shares. Returns the guardians' document (spec/66.3) as this guardian computed it.
    pub fn joint(&mut self) -> Result<Value, Eg2Error> {
        let keys = self.agreed()?.to_vec();
        let shares = self.guardian.key_shares(&self.group, self.n)?;
        let keys = joint_keys(&self.group, (&self.hp, &self.hb), keys);
        let doc = keys.to_json(&self.group);
        self.stage = Stage::Keyed(Box::new(keys), shares);
        Ok(doc)
    }

    /// The record's parameters, manifest and guardians must be this guardian's own.
    fn check_record_is_ours(&self, dir: &Path, keys: &Keys<G>) -> Result<(), Eg2Error> {
        let rec = |e: String| wrong(format!("the record: {e}"));
        let read =
            |name: &str| std::fs::read(dir.join(name)).map_err(|e| rec(format!("{name}: {e}")));
        let params: Value = serde_json::from_slice(&read(record::PARAMETERS)?)
            .map_err(|e| rec(format!("{}: {e}", record::PARAMETERS)))?;
        if params != record::parameters_json(&self.group, self.n, self.k) {
            return Err(wrong(
                "the record's parameters are not this election's group, n and k",
            ));
        }
        if base_hash(&self.hp, &read(record::MANIFEST)?) != self.hb {
            return Err(wrong(
                "the record's manifest is not the one this guardian was given",
            ));
        }
        let theirs: Value = serde_json::from_slice(&read(record::GUARDIANS)?)
            .map_err(|e| rec(format!("{}: {e}", record::GUARDIANS)))?;
        if theirs != keys.to_json(&self.group) {
            return Err(wrong(
                "the record's guardians, K, K̂, H_G or H_E are not the ones this guardian computed",
            ));
        }
        Ok(())
    }

    /// Whether this guardian would announce now: keyed (a new round after an earlier one included, for the
    /// same values). Asked before the caller copies and checks a record, so that a request out of turn costs
    /// nothing.
    pub fn may_announce(&self) -> Result<(), Eg2Error> {
        match &self.stage {
            Stage::Keyed(..) | Stage::Decrypting(..) | Stage::Answered(..) => Ok(()),
            _ => Err(wrong("the key ceremony is not finished")),
        }
    }

    /// Round 1 of the decryption (spec/66.12): from the record at `dir` (a copy only this process writes,
    /// checked as far as its ballots by the caller) this guardian computes what is decrypted itself, and
    /// returns its announcement: M_i and d_i per target (eq. 88 or 99), and its part of each challenged
    /// ballot's nonce with its proof. `available` is U.
    ///
    /// A guardian may announce again, for another U (a guardian of the first U gone), with fresh nonces: the
    /// round before is dropped, its nonces never answered (or spent already). The values must be the same
    /// as the first announcement's, else it refuses: it decrypts one record.
    pub fn announce<R: RngCore + CryptoRng>(
        &mut self,
        dir: &Path,
        available: &[u32],
        rng: &mut R,
    ) -> Result<Value, Eg2Error> {
        self.may_announce()?;
        let (keys, shares, before) = match std::mem::replace(&mut self.stage, Stage::Done) {
            Stage::Keyed(keys, shares) => (keys, shares, Before::Keyed),
            Stage::Decrypting(keys, shares, pending) => (keys, shares, Before::Decrypting(pending)),
            Stage::Answered(keys, shares) => (keys, shares, Before::Answered),
            other => {
                self.stage = other;
                return Err(wrong("the key ceremony is not finished"));
            }
        };
        let made = self
            .announce_with(&keys, &shares, dir, available, rng)
            .and_then(|(pending, doc, values)| match self.decrypting_for {
                Some(first) if first != values => Err(wrong(
                    "this record's values are not those this guardian announced for: it decrypts one record",
                )),
                _ => Ok((pending, doc, values)),
            });
        match made {
            Ok((pending, doc, values)) => {
                self.decrypting_for = Some(values);
                self.stage = Stage::Decrypting(keys, shares, Box::new(pending));
                Ok(doc)
            }
            Err(e) => {
                // a record it refused leaves it as it was: a corrected record may be asked again
                self.stage = match before {
                    Before::Keyed => Stage::Keyed(keys, shares),
                    Before::Decrypting(pending) => Stage::Decrypting(keys, shares, pending),
                    Before::Answered => Stage::Answered(keys, shares),
                };
                Err(e)
            }
        }
    }

    fn announce_with<R: RngCore + CryptoRng>(
        &self,
        keys: &Keys<G>,
        shares: &KeyShares<G>,
        dir: &Path,
        available: &[u32],
        rng: &mut R,
    ) -> Result<(Pending<G>, Value, [u8; 32]), Eg2Error> {
        let group = &self.group;
        let available = quorum(available, self.n, self.k)?;
        if !available.contains(&self.guardian.i) {
            return Err(wrong(format!(
                "guardian {} is not among the available guardians {available:?}",
                self.guardian.i
            )));
        }
        self.check_record_is_ours(dir, keys)?;
        let tally = read_ballots(group, &self.manifest, dir)?;
        let targets = tally.targets(&self.manifest);
        let challenged = tally.challenged();
        let digest = targets_digest(group, &available, &targets, &challenged);
        let values = targets_digest(group, &[], &targets, &challenged);
        let (session, announce) = Session::start(
            group,
            (&keys.he, &self.manifest),
            shares,
            &available,
            &targets,
            rng,
        )?;
        let parts = challenged
            .iter()
            .map(|b| Ok((b.id.clone(), nonce_share(group, shares, b, rng)?)))
            .collect::<Result<Vec<_>, Eg2Error>>()?;
        let doc = announce_json(group, &announce, &digest, &parts);
        drop(targets);
        drop(challenged);
        Ok((
            Pending {
                tally,
                available,
                digest,
                session,
                revealed: None,
            },
            doc,
            values,
        ))
    }

    /// The announcements, one per available guardian (this one's unchanged among them), each made for the
    /// values this guardian computed.
    fn announcements(
        &self,
        pending: &Pending<G>,
        docs: &[Value],
    ) -> Result<Vec<Announce<G>>, Eg2Error> {
        let mut out = Vec::with_capacity(docs.len());
        for d in docs {
            let a = read_announce(&self.group, d).map_err(wrong)?;
            if a.digest != pending.digest {
                return Err(named(
                    a.announce.i,
                    "its announcement was made for other values than this guardian's: the record it read differs",
                ));
            }
            out.push(a.announce);
        }
        let got: BTreeSet<u32> = out.iter().map(|a| a.i).collect();
        if got.len() != out.len() || got.iter().copied().ne(pending.available.iter().copied()) {
            return Err(wrong(format!(
                "announcements from {:?}, not one from each available guardian {:?}",
                out.iter().map(|a| a.i).collect::<Vec<_>>(),
                pending.available
            )));
        }
        Ok(out)
    }

    /// Round 2: this guardian's commitment pairs, once every available guardian's announcement is in. The
    /// announcements are kept: the answer is computed against these and no others.
    pub fn reveal(&mut self, docs: &[Value]) -> Result<Value, Eg2Error> {
        let Stage::Decrypting(_, _, pending) = &self.stage else {
            return Err(wrong(
                "this guardian has made no announcement to reveal for",
            ));
        };
        if pending.revealed.is_some() {
            return Err(wrong("this guardian has revealed its pairs already"));
        }
        let announces = self.announcements(pending, docs)?;
        let reveal = pending.session.reveal(&announces)?;
        let doc = reveal_json(&self.group, &reveal);
        if let Stage::Decrypting(_, _, pending) = &mut self.stage {
            pending.revealed = Some(announces);
        }
        Ok(doc)
    }

    /// Round 3: every available guardian's pairs checked against the d_j it announced (a mismatch names
    /// the guardian, and nothing is answered), each challenge derived here, and the responses v_i. The
    /// nonces are spent whether it answers or refuses: it answers once per announcement.
    pub fn answer(&mut self, docs: &[Value]) -> Result<Value, Eg2Error> {
        let stage = std::mem::replace(&mut self.stage, Stage::Done);
        let Stage::Decrypting(keys, shares, pending) = stage else {
            self.stage = stage;
            return Err(wrong("this guardian has no decryption awaiting an answer"));
        };
        let pending = *pending;
        let Some(announces) = pending.revealed else {
            self.stage = Stage::Decrypting(
                keys,
                shares,
                Box::new(Pending {
                    revealed: None,
                    ..pending
                }),
            );
            return Err(wrong("this guardian has not revealed its pairs yet"));
        };
        // from here the round's nonces are spent, whatever the outcome: only a new announcement (fresh
        // nonces, the same values) decrypts again
        let answered = (|| {
            let reveals = docs
                .iter()
                .map(|d| read_reveal(&self.group, d).map_err(wrong))
                .collect::<Result<Vec<_>, _>>()?;
            let targets = pending.tally.targets(&self.manifest);
            let answers = pending.session.answer(
                (&self.group, &keys.he),
                &shares,
                &targets,
                &announces,
                &reveals,
            )?;
            Ok(json!({
                "i": shares.i,
                "answers": answers.iter().map(|v| sc(&self.group, v)).collect::<Vec<_>>(),
            }))
        })();
        self.stage = Stage::Answered(keys, shares);
        answered
    }
}

/// The coordinator's last step when the guardians are parties of their own (spec/66.12): each announcement
/// must be made for the coordinator's own values (the same digest); the answers are checked one by one and
/// combined ([`combine`]: a wrong one names its guardian), each challenged ballot opened from the
/// announced nonce parts, and the tally and openings written. U is the coordinator's
/// ([`Coordinator::available`]).
pub fn finish_with<G: Eg2Group>(
    coordinator: &mut Coordinator<G>,
    messages: (&[Value], &[Value], &[Value]),
) -> Result<Summary, Eg2Error> {
    let (decrypted, parts) = {
        let targets = coordinator.targets()?;
        let challenged = coordinator.challenged()?;
        combine_round(
            coordinator.group(),
            (coordinator.keys()?, &coordinator.available()?),
            (&targets, &challenged),
            messages,
            "the coordinator's",
        )?
    };
    coordinator.finish(decrypted, &parts)
}

/// A nonce's parts from the guardians of U, by ballot id.
pub type NonceParts<G> = BTreeMap<String, Vec<(u32, NoncePart<G>)>>;

/// The last step of a decryption round, wherever it is taken (the coordinator's [`finish_with`], the
/// service's `board::publish`): each announcement must be made for the values computed here (`whose`
/// names who computed them, for the refusal), its nonce parts kept by ballot id; the reveals and answers
/// read; the answers combined and each checked ([`combine`]: a wrong one names its guardian).
pub(crate) fn combine_round<G: Eg2Group>(
    group: &G,
    (keys, u): (&Keys<G>, &[u32]),
    (targets, challenged): (&[Target<'_, G>], &[&Ballot<G>]),
    (announces, reveals, answers): (&[Value], &[Value], &[Value]),
    whose: &str,
) -> Result<(Vec<Decrypted<G>>, NonceParts<G>), Eg2Error> {
    let digest = targets_digest(group, u, targets, challenged);
    let mut anns = Vec::with_capacity(announces.len());
    let mut parts: NonceParts<G> = BTreeMap::new();
    for d in announces {
        let a = read_announce(group, d).map_err(wrong)?;
        if a.digest != digest {
            return Err(named(
                a.announce.i,
                format!("decrypted other values than {whose}: the record it read differs"),
            ));
        }
        for (id, p) in a.parts {
            parts.entry(id).or_default().push((a.announce.i, p));
        }
        anns.push(a.announce);
    }
    let revs = reveals
        .iter()
        .map(|d| read_reveal(group, d).map_err(wrong))
        .collect::<Result<Vec<_>, _>>()?;
    let answered = answers
        .iter()
        .map(|d| read_answers(group, d).map_err(wrong))
        .collect::<Result<Vec<_>, _>>()?;
    let decrypted = combine(
        group,
        &keys.he,
        &keys.guardians,
        u,
        targets,
        &anns,
        &revs,
        &answered,
    )?;
    Ok((decrypted, parts))
}
