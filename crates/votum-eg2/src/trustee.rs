//! A guardian as a party of its own (spec/65.9): the state one guardian process keeps from its key ceremony
//! to its decryption, and the checks it makes of everything another party sends it. The coordinator is one
//! more party that may lie, so a guardian
//! - computes H_P, H_M and H_B itself from the manifest and the group;
//! - deals shares only after it has checked every guardian's public record (the transport carries each share
//!   sealed to its receiver, spec/96.3), and checks each share it receives against its dealer's commitments;
//! - computes K and H_E itself;
//! - decrypts only what it reads from a record it has checked as far as the encrypted tally (V-EG2-01…08):
//!   the record's K, H_E and guardians must be its own, the tally the sum of the record's valid cast
//!   ballots, and the ballots it opens the ones the record marks challenged;
//! - derives each proof's challenge itself, answers once, and only for the shares it made.

use std::path::Path;

use rand_core::{CryptoRng, RngCore};
use serde_json::{json, Value};
use sha2::Digest;
use votum_elgamal::Ciphertext;
use zeroize::Zeroizing;

use crate::ceremony::{Guardian, PublicGuardian};
use crate::decrypt::{combine, targets_digest, Keys, Nonces, Share, Target};
use crate::election::{base_hashes, check_roster, Coordinator, Summary};
use crate::group::Eg2Group;
use crate::hashes::extended_base_hash;
use crate::manifest::{count, list, read_manifest, text};
use crate::read::{self, ciphertext, contest_data, element, hash32, read_json};
use crate::record;
use crate::{ContestData, Eg2Error};

/// One value to decrypt, as a guardian read it from the record.
pub enum Owned<G: Eg2Group> {
    Vote(Ciphertext<G>),
    Data(ContestData<G>),
}

impl<G: Eg2Group> Owned<G> {
    fn target(&self) -> Target<'_, G> {
        match self {
            Owned::Vote(ct) => Target::Vote(ct),
            Owned::Data(d) => Target::Data(d),
        }
    }
}

/// A guardian's public record as JSON (the record's form, spec/65.3).
pub fn public_doc<G: Eg2Group>(group: &G, g: &PublicGuardian<G>) -> Value {
    record::guardian(group, g)
}

/// A guardian's public record from its JSON; its proofs are checked by the caller.
pub fn read_public<G: Eg2Group>(group: &G, v: &Value) -> Result<PublicGuardian<G>, String> {
    let id = text(v, "guardian_id")?.to_owned();
    let x = count(v, "x_coordinate")?;
    let mut commitments = Vec::new();
    let mut proofs = Vec::new();
    for c in list(v, "coefficient_proofs")? {
        commitments.push(element(group, c, "public_key")?);
        proofs.push(read::pair(group, c)?);
    }
    let refs: Vec<&G::Element> = commitments.iter().collect();
    if !group.all_members(&refs) {
        return Err(format!("{id}'s commitments are not all in the group"));
    }
    Ok(PublicGuardian {
        id,
        x,
        commitments,
        proofs,
    })
}

/// What a guardian keeps between its shares and its answers.
struct Pending<G: Eg2Group> {
    targets: Vec<Owned<G>>,
    digest: [u8; 32],
    shares: Vec<Share<G>>,
    nonces: Nonces<G>,
}

/// Where a guardian is in its election.
enum Stage<G: Eg2Group> {
    /// made; its record not yet agreed with the others'
    Made,
    /// every guardian's record checked; shares being dealt and received
    Agreed(Vec<PublicGuardian<G>>),
    /// every share in: K and H_E known
    Keyed(Vec<PublicGuardian<G>>, G::Element, [u8; 32]),
    /// its shares of a record's targets sent; the answer owed
    Sharing(
        Vec<PublicGuardian<G>>,
        G::Element,
        [u8; 32],
        Box<Pending<G>>,
    ),
    /// it has answered: it decrypts nothing more
    Answered,
}

/// One guardian's whole part in a 2.x election.
pub struct Trustee<G: Eg2Group> {
    group: G,
    n: u32,
    k: u32,
    hp: [u8; 32],
    hb: [u8; 32],
    guardian: Guardian<G>,
    stage: Stage<G>,
    dealt_from: std::collections::BTreeSet<u32>,
}

impl<G: Eg2Group> std::fmt::Debug for Trustee<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Trustee")
            .field("id", &self.guardian.id)
            .field("x", &self.guardian.x)
            .field("secrets", &"<redacted>")
            .finish()
    }
}

fn wrong(reason: impl Into<String>) -> Eg2Error {
    Eg2Error::Parameters(reason.into())
}

impl<G: Eg2Group> Trustee<G> {
    /// Guardian `id` at x-coordinate `x` of `n` with quorum `k`, for an election on `manifest_bytes`.
    pub fn new<R: RngCore + CryptoRng>(
        group: G,
        manifest_bytes: &[u8],
        n: u32,
        k: u32,
        id: &str,
        x: u32,
        rng: &mut R,
    ) -> Result<Self, Eg2Error> {
        let doc: Value = serde_json::from_slice(manifest_bytes)
            .map_err(|e| Eg2Error::Manifest(format!("not JSON: {e}")))?;
        read_manifest(&doc).map_err(Eg2Error::Manifest)?;
        if k == 0 || k > n || x == 0 || x > n {
            return Err(wrong(format!(
                "guardian {x} with quorum {k} of {n} guardians"
            )));
        }
        let (hp, _, hb) = base_hashes(&group, manifest_bytes, n, k);
        let guardian = Guardian::new(&group, &hp, id, x, k, rng);
        Ok(Self {
            group,
            n,
            k,
            hp,
            hb,
            guardian,
            stage: Stage::Made,
            dealt_from: std::collections::BTreeSet::new(),
        })
    }

    pub fn x(&self) -> u32 {
        self.guardian.x
    }

    pub fn group(&self) -> &G {
        &self.group
    }

    /// This guardian's public record, as JSON.
    pub fn public(&self) -> Value {
        public_doc(&self.group, &self.guardian.public())
    }

    /// Takes every guardian's public record (its own among them, unchanged) after checking the roster:
    /// `n` records, x-coordinates 1…n, each record's proofs.
    pub fn agree(&mut self, docs: &[Value]) -> Result<(), Eg2Error> {
        if !matches!(self.stage, Stage::Made) {
            return Err(wrong("the records were agreed already"));
        }
        let publics = docs
            .iter()
            .map(|d| read_public(&self.group, d).map_err(wrong))
            .collect::<Result<Vec<_>, _>>()?;
        check_roster(&self.group, &self.hp, &publics, self.n, self.k)?;
        let own = self.public();
        if !docs.contains(&own) {
            return Err(wrong(format!(
                "the records do not hold {}'s own record",
                self.guardian.id
            )));
        }
        self.stage = Stage::Agreed(publics);
        Ok(())
    }

    fn agreed(&self) -> Result<&[PublicGuardian<G>], Eg2Error> {
        match &self.stage {
            Stage::Agreed(p) => Ok(p),
            _ => Err(wrong("no agreed records to deal or receive shares on")),
        }
    }

    /// P(x): the share for the guardian at `x`, 32 bytes, to be sealed to that guardian alone.
    pub fn share_for(&self, x: u32) -> Result<Zeroizing<Vec<u8>>, Eg2Error> {
        self.agreed()?;
        if x == 0 || x > self.n || x == self.guardian.x {
            return Err(wrong(format!("no other guardian is at x = {x}")));
        }
        let share = self.guardian.share_for(&self.group, x);
        Ok(Zeroizing::new(self.group.scalar_bytes(share.expose())))
    }

    /// Takes the share dealt by the guardian at `from`, once, checked against that guardian's commitments;
    /// a bad one is refused and names its dealer.
    pub fn receive(&mut self, from: u32, share: &[u8]) -> Result<(), Eg2Error> {
        let dealer = self
            .agreed()?
            .iter()
            .find(|g| g.x == from && from != self.guardian.x)
            .cloned()
            .ok_or_else(|| wrong(format!("no other guardian is at x = {from}")))?;
        if self.dealt_from.contains(&from) {
            return Err(wrong(format!("{} dealt its share already", dealer.id)));
        }
        let value = self
            .group
            .read_scalar(share)
            .map_err(|e| Eg2Error::Guardian {
                guardian: dealer.id.clone(),
                reason: format!("its share is {e}"),
            })?;
        self.guardian.receive(
            &self.group,
            &self.hp,
            self.k,
            &dealer,
            votum_group::Secret::new(value),
        )?;
        self.dealt_from.insert(from);
        Ok(())
    }

    /// Once every other guardian's share is in: K and H_E, computed here.
    pub fn joint(&mut self) -> Result<(G::Element, [u8; 32]), Eg2Error> {
        let publics = self.agreed()?.to_vec();
        if self.dealt_from.len() as u64 + 1 != u64::from(self.n) {
            return Err(wrong(format!(
                "{} of {} shares received",
                self.dealt_from.len(),
                self.n - 1
            )));
        }
        let key = crate::ceremony::joint_key(&self.group, &publics);
        let he = extended_base_hash(&self.group, &self.hb, &key);
        self.stage = Stage::Keyed(publics, key.clone(), he);
        Ok((key, he))
    }

    /// The record's K, H_E, H_P, H_B and guardians must be this guardian's own.
    fn check_record_is_ours(
        &self,
        dir: &Path,
        publics: &[PublicGuardian<G>],
        key: &G::Element,
        he: &[u8; 32],
    ) -> Result<(), Eg2Error> {
        let rec = |e: String| wrong(format!("the record: {e}"));
        let config = read_json(&dir.join("election_config.json")).map_err(rec)?;
        if hash32(&config, "parameter_base_hash").map_err(rec)? != self.hp
            || hash32(&config, "election_base_hash").map_err(rec)? != self.hb
        {
            return Err(wrong(
                "the record's H_P or H_B is not this election's: another manifest, group or roster",
            ));
        }
        let init = read_json(&dir.join("election_initialized.json")).map_err(rec)?;
        if element(&self.group, &init, "joint_public_key").map_err(rec)? != *key
            || hash32(&init, "extended_base_hash").map_err(rec)? != *he
        {
            return Err(wrong(
                "the record's K or H_E is not the one this guardian computed",
            ));
        }
        let theirs: Vec<Value> = list(&init, "guardians").map_err(rec)?.to_vec();
        let ours: Vec<Value> = publics.iter().map(|g| public_doc(&self.group, g)).collect();
        if theirs != ours {
            return Err(wrong("the record's guardians are not the agreed ones"));
        }
        Ok(())
    }

    /// This guardian's shares of what the record `dir` asks decrypted: every option of its encrypted tally,
    /// then each challenged ballot's options and contest data, ballots by id. The caller has checked the
    /// record as far as the encrypted tally (V-EG2-01…08) and reads it from a copy no other party can change
    /// in between. Returns `{"x", "digest", "shares": [{m, a, b}…]}`; once per guardian.
    pub fn shares<R: RngCore + CryptoRng>(
        &mut self,
        dir: &Path,
        rng: &mut R,
    ) -> Result<Value, Eg2Error> {
        let (publics, key, he) = match &self.stage {
            Stage::Keyed(p, k, h) => (p.clone(), k.clone(), *h),
            Stage::Sharing(..) | Stage::Answered => {
                return Err(wrong(
                    "this guardian has decrypted already: it decrypts once",
                ))
            }
            _ => return Err(wrong("the key ceremony is not finished")),
        };
        self.check_record_is_ours(dir, &publics, &key, &he)?;
        let targets = read_targets(&self.group, dir)?;
        let views: Vec<Target<'_, G>> = targets.iter().map(Owned::target).collect();
        let digest = targets_digest(&self.group, &views);
        let (shares, nonces) = self.guardian.shares(&self.group, self.n, &views, rng)?;
        let doc = shares_doc(&self.group, self.guardian.x, &digest, &shares);
        drop(views);
        self.stage = Stage::Sharing(
            publics,
            key,
            he,
            Box::new(Pending {
                targets,
                digest,
                shares,
                nonces,
            }),
        );
        Ok(doc)
    }

    /// Answers for the shares this guardian made, the challenges derived here from `docs`: the shares of
    /// every guardian that decrypts (at least the quorum, this one's unchanged among them, all made for the
    /// same targets). The nonces are spent: a guardian answers once.
    pub fn answer(&mut self, docs: &[Value]) -> Result<Value, Eg2Error> {
        let stage = std::mem::replace(&mut self.stage, Stage::Answered);
        let Stage::Sharing(publics, key, he, pending) = stage else {
            self.stage = stage;
            return Err(wrong("this guardian has no shares awaiting an answer"));
        };
        let pending = *pending;
        let mut all = Vec::with_capacity(docs.len());
        let mut xs = std::collections::BTreeSet::new();
        for d in docs {
            let (x, digest, shares) = read_shares(&self.group, d).map_err(wrong)?;
            if digest != pending.digest {
                return Err(wrong(format!(
                    "guardian {x}'s shares were made for other targets"
                )));
            }
            if !publics.iter().any(|g| g.x == x) || !xs.insert(x) {
                return Err(wrong(format!("shares from x = {x}: no guardian, or twice")));
            }
            if shares.len() != pending.targets.len() || shares.iter().any(|s| s.x != x) {
                return Err(wrong(format!(
                    "guardian {x}'s shares are not one per target"
                )));
            }
            if x == self.guardian.x && !same_shares(&shares, &pending.shares) {
                return Err(wrong("this guardian's own shares were changed"));
            }
            all.push(shares);
        }
        if !xs.contains(&self.guardian.x) {
            return Err(wrong("this guardian's own shares are not among them"));
        }
        if (xs.len() as u64) < u64::from(self.k) {
            return Err(wrong(format!(
                "{} guardians' shares, the quorum is {}",
                xs.len(),
                self.k
            )));
        }
        let keys = Keys::new(&self.group, &he, &key, &publics);
        let views: Vec<Target<'_, G>> = pending.targets.iter().map(Owned::target).collect();
        let answers = self
            .guardian
            .answer(&keys, self.n, &views, &all, pending.nonces)?;
        Ok(json!({
            "x": self.guardian.x,
            "answers": answers.iter().map(|v| record::scalar(&self.group, v)).collect::<Vec<_>>(),
        }))
    }
}

fn same_shares<G: Eg2Group>(a: &[Share<G>], b: &[Share<G>]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(s, t)| s.x == t.x && s.m == t.m && s.a == t.a && s.b == t.b)
}

/// A guardian's shares as JSON.
pub fn shares_doc<G: Eg2Group>(group: &G, x: u32, digest: &[u8; 32], shares: &[Share<G>]) -> Value {
    let list: Vec<Value> = shares
        .iter()
        .map(|s| {
            json!({"m": record::element(group, &s.m), "a": record::element(group, &s.a),
                   "b": record::element(group, &s.b)})
        })
        .collect();
    json!({"x": x, "digest": record::b64(digest), "shares": list})
}

/// A guardian's shares as read: its x, the digest of the targets they were made for, the shares.
pub type SharesOf<G> = (u32, [u8; 32], Vec<Share<G>>);

/// A guardian's shares from JSON: its x, the targets' digest, and its shares (each element in the group).
pub fn read_shares<G: Eg2Group>(group: &G, v: &Value) -> Result<SharesOf<G>, String> {
    let x = count(v, "x")?;
    let digest = hash32(v, "digest")?;
    let mut shares = Vec::new();
    for s in list(v, "shares")? {
        shares.push(Share {
            x,
            m: element(group, s, "m")?,
            a: element(group, s, "a")?,
            b: element(group, s, "b")?,
        });
    }
    let refs: Vec<&G::Element> = shares.iter().flat_map(|s| [&s.m, &s.a, &s.b]).collect();
    if !group.all_members(&refs) {
        return Err(format!("guardian {x}'s shares are not all in the group"));
    }
    Ok((x, digest, shares))
}

/// A guardian's answers from JSON: its x and one scalar per target.
pub fn read_answers<G: Eg2Group>(group: &G, v: &Value) -> Result<(u32, Vec<G::Scalar>), String> {
    let x = count(v, "x")?;
    let answers = v["answers"]
        .as_array()
        .ok_or("no `answers` list")?
        .iter()
        .map(|a| {
            let bytes = a
                .as_str()
                .and_then(|s| {
                    use base64ct::{Base64, Encoding};
                    Base64::decode_vec(s).ok()
                })
                .ok_or("an answer is not base64")?;
            group
                .read_scalar(&bytes)
                .map_err(|e| format!("an answer is {e}"))
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok((x, answers))
}

/// What a record asks decrypted, in spec/65.9's order: every option of `encrypted_tally.json`; then each
/// ballot the record marks CHALLENGED, by ballot id, each contest's options and its contest data.
pub fn read_targets<G: Eg2Group>(group: &G, dir: &Path) -> Result<Vec<Owned<G>>, Eg2Error> {
    let rec = |e: String| wrong(format!("the record: {e}"));
    let tally = read_json(&dir.join("encrypted_tally.json")).map_err(rec)?;
    let mut out = Vec::new();
    for c in list(&tally, "contests").map_err(rec)? {
        for s in list(c, "selections").map_err(rec)? {
            out.push(Owned::Vote(
                ciphertext(group, &s["encrypted_vote"]).map_err(rec)?,
            ));
        }
    }
    let mut challenged: Vec<(String, Value)> = Vec::new();
    // every ciphertext of every ballot, by a digest of its pad: a ballot copied under another id (its
    // confirmation code recomputed for another device name, which anyone can do) still checks, and decrypting
    // the copy as challenged would publish the original's vote, or counting it twice would shift the tally by
    // that vote; so one ciphertext twice in a record stops the decryption
    let mut seen: std::collections::HashMap<[u8; 32], String> = std::collections::HashMap::new();
    let root = dir.join("encrypted_ballots");
    let devices = std::fs::read_dir(&root).map_err(|e| rec(format!("encrypted_ballots: {e}")))?;
    for device in devices {
        let device = device.map_err(|e| rec(e.to_string()))?.path();
        if !device.is_dir() {
            continue;
        }
        for f in std::fs::read_dir(&device).map_err(|e| rec(e.to_string()))? {
            let f = f.map_err(|e| rec(e.to_string()))?.path();
            if f.extension().and_then(|e| e.to_str()) != Some("json") {
                continue;
            }
            let b = read_json(&f).map_err(rec)?;
            let id = text(&b, "ballot_id").map_err(rec)?.to_owned();
            for c in list(&b, "contests").map_err(rec)? {
                for s in list(c, "selections").map_err(rec)? {
                    let pad = crate::read::b64(&s["encrypted_vote"], "pad").map_err(rec)?;
                    let digest: [u8; 32] = sha2::Sha256::digest(&pad).into();
                    if let Some(other) = seen.insert(digest, id.clone()) {
                        return Err(wrong(format!(
                            "the record: a ciphertext of ballot {id} appears twice (also in ballot {other}): \
                             a copied ballot; nothing is decrypted"
                        )));
                    }
                }
            }
            if b["state"].as_str() == Some("CHALLENGED") {
                challenged.push((id, b));
            }
        }
    }
    challenged.sort_by(|a, b| a.0.cmp(&b.0));
    for (_, b) in &challenged {
        for c in list(b, "contests").map_err(rec)? {
            for s in list(c, "selections").map_err(rec)? {
                out.push(Owned::Vote(
                    ciphertext(group, &s["encrypted_vote"]).map_err(rec)?,
                ));
            }
            out.push(Owned::Data(
                contest_data(group, &c["encrypted_contest_data"]).map_err(rec)?,
            ));
        }
    }
    let refs: Vec<&G::Element> = out
        .iter()
        .flat_map(|t| match t {
            Owned::Vote(ct) => vec![&ct.pad, &ct.data],
            Owned::Data(d) => vec![&d.c0],
        })
        .collect();
    if !group.all_members(&refs) {
        return Err(rec("a value to decrypt is not in the group".into()));
    }
    Ok(out)
}

/// The coordinator's last step when the guardians are parties of their own: each guardian's shares (made
/// for the coordinator's own targets) and answers are read, every answer checked against its guardian's
/// public key share (a wrong one names its guardian), combined, and the decryptions written.
pub fn finish_with<G: Eg2Group>(
    coordinator: &mut Coordinator<G>,
    shares: &[Value],
    answers: &[Value],
) -> Result<Summary, Eg2Error> {
    let group = &coordinator.group().clone();
    let decrypted = {
        let targets = coordinator.targets()?;
        let digest = targets_digest(group, &targets);
        let mut all = Vec::with_capacity(shares.len());
        let mut xs = Vec::with_capacity(shares.len());
        for d in shares {
            let (x, theirs, list) = read_shares(group, d).map_err(wrong)?;
            if theirs != digest {
                return Err(wrong(format!(
                    "guardian {x} decrypted other targets than the coordinator's: the record it read differs"
                )));
            }
            xs.push(x);
            all.push(list);
        }
        let mut by_x = Vec::with_capacity(answers.len());
        for d in answers {
            by_x.push(read_answers(group, d).map_err(wrong)?);
        }
        let ordered = xs
            .iter()
            .map(|x| {
                by_x.iter()
                    .find(|(ax, _)| ax == x)
                    .map(|(_, a)| a.clone())
                    .ok_or_else(|| wrong(format!("no answer from guardian {x}")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let keys = coordinator.keys()?;
        combine(&keys, &targets, &all, &ordered)?
    };
    coordinator.finish(decrypted)
}
