//! Verifying an ElectionGuard 1.4 election record (either form), one document at a time (spec/50).

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::ops::ControlFlow;
use std::path::Path;

use serde::Deserialize;
use serde_json::{json, Value};
use votum_arith::Integer;
use votum_eg::ballot::{
    accumulate, add_ballot, check_params, parse_ballot, BallotBox, BallotError, BallotHash,
    BallotState, BallotVerifier, TallyMap,
};
use votum_eg::ceremony::{CeremonyError, GuardianPublicKey};
use votum_eg::context::{base_hash, ElectionContext};
use votum_eg::decrypt::{DecryptionError, DecryptionTarget, Decryptor, Mismatched, SelectionShare};
use votum_eg::json::{check_ciphertexts, ciphertext_in_range, CiphertextInRange, FieldError};
use votum_eg::Manifest;
use votum_elgamal::threshold::lagrange_coefficient;
use votum_elgamal::{Ciphertext, PublicKey};
use votum_group::{Group, GroupError, ModpGroup};
use votum_hash::eg::{from_hex, hash_elems, EgHashItem};
use votum_record::{Document, Documents, Kind};

use crate::checks::eg::{check_guardian_count, check_guardians, check_joint_values};
use crate::checks::Check;
use crate::options::{BallotWorkers, Intermediates, Options, Progress};
use crate::report::{Ledger, Report};

/// Ballots checked together (spec/50.2).
pub const BATCH: usize = 256;

/// A batch of ballots as read: (path, JSON, state, (code_seed, code, id) as published).
type Batch = Vec<(String, String, BallotState, Option<ChainLink>)>;

/// Verifies the ElectionGuard 1.4 record at `path` (a directory or a votum archive).
pub fn verify_eg_record(path: &Path, options: Options<'_>) -> (Report, Intermediates) {
    let mut v = Verifier::new(options);
    let form = match Documents::open(path) {
        Ok(mut docs) => {
            let form = docs.form().name();
            v.ledger.examined(Check::Record01, 0);
            for doc in docs.by_ref() {
                if v.stopped {
                    break;
                }
                match doc {
                    Ok(d) => {
                        v.ledger.examined(Check::Record01, 1);
                        v.document(d);
                    }
                    Err(e) => {
                        v.ledger
                            .error(Check::Record01, &path.display().to_string(), e.to_string())
                    }
                }
            }
            v.archive_chain = docs.archive_chain();
            form
        }
        Err(e) => {
            // nothing could be read: every other check is left not run
            if matches!(e, votum_record::RecordError::UnsupportedVersion { .. }) {
                v.ledger.version_refused();
            }
            v.ledger
                .error(Check::Record01, &path.display().to_string(), e.to_string());
            let report = v.ledger.finish(path.display().to_string(), "unreadable", 0);
            return (report, v.out);
        }
    };
    v.finish(path.display().to_string(), form)
}

#[derive(Deserialize)]
struct BallotHead {
    object_id: String,
    state: i64,
    #[serde(default)]
    code: String,
    #[serde(default)]
    code_seed: String,
}

/// A ballot's place in its device's chain: (code_seed, code, ballot id).
type ChainLink = (Integer, Integer, String);

struct Verifier<'a> {
    ledger: Ledger,
    group: ModpGroup,
    /// A directory's record digest (spec/50.2): a chain over every document read, in archive order.
    digest: [u8; 32],
    /// An archive's own chain (spec/70.2), its record digest, once its trailer is checked.
    archive_chain: Option<[u8; 32]>,
    progress: Option<&'a mut dyn FnMut(Progress) -> ControlFlow<()>>,
    workers: Option<&'a mut dyn BallotWorkers>,
    /// batches handed to the workers, oldest first, not yet merged
    in_flight: VecDeque<Batch>,
    /// the manifest's text (the workers' parameters carry it)
    manifest_json: String,
    /// The progress hook asked to stop.
    stopped: bool,
    manifest: Option<Manifest>,
    context: Option<ElectionContext>,
    constants: bool,
    guardians: Vec<GuardianPublicKey>,
    guardians_done: bool,
    devices: HashSet<Integer>,
    ballot_box: Option<BallotBox>,
    batch: Batch,
    ballots: u64,
    /// (code_seed, code, ballot id) of every accepted ballot, for the chains (V-BALLOT-06)
    chain: Vec<ChainLink>,
    /// spoiled ballots whose decryption has not been read yet
    spoiled: HashMap<String, String>,
    /// product of the cast ballots the ballot box refused but that could be read: the encrypted
    /// tally is compared with the product of every cast ballot as published (V-TALLY-01), so a
    /// bad ballot is reported once, under its own check
    refused_cast: TallyMap,
    /// submitted ballots that could not be read at all (their state is unknown)
    unreadable: u64,
    /// a spoiled ballot's decryption was left unchecked (no context): V-SPOILED-02 is not run
    spoiled_unchecked: bool,
    decryptor: Option<Decryptor>,
    encrypted_tally: bool,
    /// the encrypted tally as published, when it is complete and readable: what the tally's
    /// decryption is checked against (V-DECRYPT-01..04) when the product of the cast ballots
    /// cannot be recomputed
    published_tally: Option<TallyMap>,
    tally: bool,
    /// sequence orders of the guardians whose own shares decrypted the tally
    present: Option<Vec<(String, u64)>>,
    coefficients: bool,
    out: Intermediates,
}

/// Whether a refused ballot could not be read at all (an Error: the evidence cannot be evaluated)
/// rather than read and found wrong (a Fail). A number outside its range is a wrong encoding, not
/// a wrong value; one in range but outside the subgroup is wrong evidence.
fn is_unreadable(e: &BallotError) -> bool {
    match e {
        BallotError::Format(_) => true,
        BallotError::BadElement { reason, .. } => unreadable_element(reason),
        _ => false,
    }
}

fn unreadable_element(reason: &GroupError) -> bool {
    !matches!(reason, GroupError::NotInSubgroup)
}

fn hex(x: &Integer) -> Value {
    Value::String(votum_hash::eg::to_hex(x))
}

impl<'a> Verifier<'a> {
    fn new(options: Options<'a>) -> Self {
        Self {
            ledger: Ledger::new(&Check::EG),
            group: ModpGroup::eg_4096(),
            progress: options.progress,
            workers: options.ballot_workers,
            in_flight: VecDeque::new(),
            manifest_json: String::new(),
            stopped: false,
            manifest: None,
            context: None,
            constants: false,
            guardians: Vec::new(),
            digest: [0; 32],
            archive_chain: None,
            guardians_done: false,
            devices: HashSet::new(),
            ballot_box: None,
            batch: Vec::new(),
            ballots: 0,
            chain: Vec::new(),
            spoiled: HashMap::new(),
            refused_cast: BTreeMap::new(),
            unreadable: 0,
            spoiled_unchecked: false,
            decryptor: None,
            encrypted_tally: false,
            published_tally: None,
            tally: false,
            present: None,
            coefficients: false,
            out: Intermediates::default(),
        }
    }

    fn tell(&mut self, p: Progress) {
        if let Some(f) = self.progress.as_mut() {
            if f(p).is_break() {
                self.stopped = true;
            }
        }
    }

    fn document(&mut self, d: Document) {
        // the record digest: D ← SHA-256(D ‖ u32 len(path) ‖ path ‖ SHA-256(JSON text))
        let mut link = Vec::with_capacity(32 + 4 + d.path.len() + 32);
        link.extend_from_slice(&self.digest);
        link.extend_from_slice(&(d.path.len() as u32).to_be_bytes());
        link.extend_from_slice(d.path.as_bytes());
        link.extend_from_slice(&votum_hash::board::payload_digest(d.json.as_bytes()));
        self.digest = votum_hash::board::payload_digest(&link);
        if d.kind > Kind::Guardian && !self.guardians_done {
            self.finish_guardians();
        }
        if d.kind != Kind::SubmittedBallot {
            self.drain();
            self.tell(Progress::Document(d.kind));
        }
        match d.kind {
            Kind::Manifest => self.manifest(&d),
            Kind::Context => self.context(&d),
            Kind::Constants => self.constants(&d),
            Kind::Guardian => self.guardian(&d),
            Kind::Device => self.device(&d),
            Kind::SubmittedBallot => self.ballot(d),
            Kind::SpoiledBallotTally => self.spoiled_decryption(&d),
            Kind::EncryptedTally => self.encrypted_tally(&d),
            Kind::Tally => self.tally(&d),
            Kind::Coefficients => self.coefficients(&d),
        }
    }

    fn parse(&mut self, check: Check, d: &Document) -> Option<Value> {
        match serde_json::from_str(&d.json) {
            Ok(v) => Some(v),
            Err(e) => {
                self.ledger.error(check, &d.path, format!("not JSON: {e}"));
                None
            }
        }
    }

    fn manifest(&mut self, d: &Document) {
        match Manifest::from_json(&d.json) {
            Ok(m) => {
                for (object, why) in m.warnings() {
                    self.ledger.warn(Check::Param02, &object, why);
                }
                self.manifest = Some(m);
                self.manifest_json = d.json.clone();
            }
            Err(votum_eg::ManifestError::Json { .. }) => {
                self.ledger
                    .error(Check::Param02, &d.path, "not a manifest (malformed JSON)")
            }
            Err(e) => self.ledger.fail(Check::Param02, &d.path, e.to_string()),
        }
    }

    fn context(&mut self, d: &Document) {
        let Some(v) = self.parse(Check::Param03, d) else {
            return;
        };
        let ctx = match ElectionContext::from_eg14_json(&v) {
            Ok(c) => c,
            Err(e) => {
                self.ledger.error(Check::Param03, &d.path, e.to_string());
                return;
            }
        };
        match &self.manifest {
            Some(m) => {
                self.ledger.examined(Check::Param02, 1);
                match m.crypto_hash() {
                    Ok(h) if h == ctx.manifest_hash => {
                        self.out.values.insert("manifest_hash".into(), hex(&h));
                    }
                    Ok(h) => self.ledger.fail(
                        Check::Param02,
                        &d.path,
                        format!(
                            "manifest_hash {} is not the manifest's hash {}",
                            votum_hash::eg::to_hex(&ctx.manifest_hash),
                            votum_hash::eg::to_hex(&h)
                        ),
                    ),
                    Err(e) => self
                        .ledger
                        .fail(Check::Param02, "manifest.json", e.to_string()),
                }
            }
            None => self.ledger.error(
                Check::Param02,
                "manifest.json",
                "the record has no readable manifest",
            ),
        }
        let q = base_hash(ctx.number_of_guardians, ctx.quorum, &ctx.manifest_hash);
        self.ledger.examined(Check::Param03, 1);
        if q != ctx.crypto_base_hash {
            self.ledger.fail(
                Check::Param03,
                &d.path,
                "crypto_base_hash is not H(p, q, g, n, k, manifest_hash)",
            );
        }
        self.out.values.insert("crypto_base_hash".into(), hex(&q));
        self.context = Some(ctx);
    }

    fn constants(&mut self, d: &Document) {
        self.constants = true;
        let Some(v) = self.parse(Check::Param01, d) else {
            return;
        };
        self.ledger.examined(Check::Param01, 1);
        let g = &self.group;
        let expected = [
            ("large_prime", g.p().clone()),
            ("small_prime", g.order().clone()),
            ("cofactor", g.cofactor().clone()),
            ("generator", g.generator().value().clone()),
        ];
        for (name, want) in expected {
            match v.get(name).and_then(Value::as_str).map(from_hex) {
                Some(Ok(got)) if got == want => {}
                Some(Ok(_)) => self.ledger.fail(
                    Check::Param01,
                    &d.path,
                    format!("{name} is not ElectionGuard 1.0's"),
                ),
                _ => self.ledger.error(
                    Check::Param01,
                    &d.path,
                    format!("{name} is missing or not a hex number"),
                ),
            }
        }
    }

    fn guardian(&mut self, d: &Document) {
        let Some(v) = self.parse(Check::Guard01, d) else {
            return;
        };
        match GuardianPublicKey::from_eg14_json(&self.group, &v) {
            Ok(g) => self.guardians.push(g),
            Err(CeremonyError::Field(FieldError::BadElement { what, reason, .. })) => {
                if unreadable_element(&reason) {
                    self.ledger
                        .error(Check::Guard02, &d.path, format!("{what}: {reason}"))
                } else {
                    self.ledger
                        .fail(Check::Guard02, &d.path, format!("{what}: {reason}"))
                }
            }
            Err(CeremonyError::Field(e)) => {
                self.ledger.error(Check::Guard01, &d.path, e.to_string())
            }
            Err(e) => self.ledger.fail(Check::Guard01, &d.path, e.to_string()),
        }
    }

    /// Once every guardian record is in: the guardian checks and the context's joint values.
    fn finish_guardians(&mut self) {
        self.guardians_done = true;
        let Some(ctx) = self.context.clone() else {
            self.ledger.error(
                Check::Param03,
                "context.json",
                "the record has no readable context",
            );
            return;
        };
        let n = self.guardians.len();
        self.ledger.examined(Check::Guard01, n as u64);
        self.ledger.examined(Check::Guard02, n as u64);
        if !check_guardian_count(&mut self.ledger, &ctx, n) {
            return;
        }
        check_guardians(
            &mut self.ledger,
            &self.group,
            &self.guardians,
            ctx.quorum as usize,
        );
        let joint = check_joint_values(&mut self.ledger, &self.group, &self.guardians, &ctx);
        let values = &mut self.out.values;
        values.insert("elgamal_public_key".into(), hex(joint.key.value()));
        values.insert("commitment_hash".into(), hex(&joint.commitment_hash));
        values.insert("crypto_extended_base_hash".into(), hex(&joint.extended));
        self.ballot_checker(&ctx);
    }

    /// The ballot box every submitted ballot goes through, against the context as published (its
    /// own checks are above), handed to the workers too.
    fn ballot_checker(&mut self, ctx: &ElectionContext) {
        let Some(manifest) = self.manifest.clone() else {
            return;
        };
        let key = match PublicKey::new(&self.group, ctx.elgamal_public_key.clone()) {
            Ok(k) => k,
            Err(e) => {
                self.ledger
                    .fail(Check::Guard03, "context.json", e.to_string());
                return;
            }
        };
        match BallotVerifier::new(manifest, &key, ctx.crypto_extended_base_hash.clone()) {
            // ballots name the manifest hash the context commits to (V-PARAM-02 compares the two)
            Ok(bv) => {
                self.ballot_box = Some(BallotBox::new(
                    bv.with_manifest_hash(ctx.manifest_hash.clone()),
                ));
                if let Some(w) = self.workers.as_mut() {
                    let params = check_params(
                        &self.manifest_json,
                        key.element().value(),
                        &ctx.crypto_extended_base_hash,
                        &ctx.manifest_hash,
                    );
                    if w.setup(&params).is_break() {
                        self.stopped = true;
                    }
                }
            }
            Err(e) => self
                .ledger
                .fail(Check::Param02, "manifest.json", e.to_string()),
        }
    }

    fn device(&mut self, d: &Document) {
        let Some(v) = self.parse(Check::Ballot06, d) else {
            return;
        };
        let int = |name: &str| v.get(name).and_then(Value::as_i64);
        let (Some(id), Some(session), Some(launch), Some(location)) = (
            int("device_id"),
            int("session_id"),
            int("launch_code"),
            v.get("location").and_then(Value::as_str),
        ) else {
            self.ledger.error(
                Check::Ballot06,
                &d.path,
                "a device needs integer device_id, session_id, launch_code and a string location",
            );
            return;
        };
        let h = hash_elems(
            &[
                EgHashItem::Int(id),
                EgHashItem::Int(session),
                EgHashItem::Int(launch),
                EgHashItem::Str(location.to_string()),
            ],
            self.group.order(),
        );
        self.devices.insert(h);
    }

    fn ballot(&mut self, d: Document) {
        let head: BallotHead = match serde_json::from_str(&d.json) {
            Ok(h) => h,
            Err(e) => {
                self.unreadable += 1;
                self.ledger.error(
                    Check::Ballot01,
                    &d.path,
                    format!("not a submitted ballot: {e}"),
                );
                return;
            }
        };
        let state = match head.state {
            1 => BallotState::Cast,
            2 => BallotState::Spoiled,
            s => {
                self.ledger.examined(Check::Ballot01, 1);
                self.ledger.fail(
                    Check::Ballot01,
                    &d.path,
                    format!("state {s} is neither cast (1) nor spoiled (2)"),
                );
                return;
            }
        };
        if state == BallotState::Spoiled {
            self.spoiled.insert(head.object_id.clone(), d.json.clone());
        }
        // linked as published; a code that does not recompute is the ballot box's finding
        let link = match (from_hex(&head.code_seed), from_hex(&head.code)) {
            (Ok(seed), Ok(code)) => Some((seed, code, head.object_id)),
            _ => None,
        };
        self.batch.push((d.path, d.json, state, link));
        if self.batch.len() >= BATCH {
            self.flush();
        }
    }

    /// Checks the pending ballots in one batch, here or by the workers (then merged once the
    /// window of batches in flight is full).
    fn flush(&mut self) {
        if self.batch.is_empty() || self.stopped {
            return;
        }
        let batch = std::mem::take(&mut self.batch);
        if self.ballot_box.is_none() {
            // no manifest, context or joint key to check against (reported under their own
            // checks): the ballot checks are not run
            self.ballots += batch.len() as u64;
            return;
        }
        let Some(w) = self.workers.as_mut() else {
            self.merge(batch, None);
            return;
        };
        let jsons: Vec<&str> = batch.iter().map(|(_, j, _, _)| j.as_str()).collect();
        if w.submit(&jsons).is_break() {
            self.stopped = true;
            return;
        }
        let window = w.window().max(1);
        self.in_flight.push_back(batch);
        while self.in_flight.len() >= window && !self.stopped {
            self.merge_oldest();
        }
    }

    /// Flushes the pending ballots and merges every batch in flight.
    fn drain(&mut self) {
        self.flush();
        while !self.in_flight.is_empty() && !self.stopped {
            self.merge_oldest();
        }
    }

    fn merge_oldest(&mut self) {
        let (Some(w), Some(batch)) = (self.workers.as_mut(), self.in_flight.pop_front()) else {
            return;
        };
        match w.collect() {
            ControlFlow::Continue(verdicts) => self.merge(batch, Some(verdicts)),
            ControlFlow::Break(()) => self.stopped = true,
        }
    }

    /// Records a batch in the ballot box (checking it here unless `verdicts` come from the
    /// workers, spec/98.3) and reports each refused ballot under its check.
    fn merge(&mut self, batch: Batch, verdicts: Option<Vec<bool>>) {
        let n = batch.len() as u64;
        let Some(bb) = self.ballot_box.as_mut() else {
            self.ballots += n;
            return;
        };
        let items: Vec<(&str, BallotState)> =
            batch.iter().map(|(_, j, s, _)| (j.as_str(), *s)).collect();
        let results = match &verdicts {
            Some(v) => bb.submit_judged(&items, v),
            None => bb.submit_many(&items),
        };
        for c in Check::BALLOT {
            self.ledger.examined(c, n);
        }
        for ((path, json, state, link), r) in batch.into_iter().zip(results) {
            // a repeated ballot is reported as a duplicate, not as a fork of its own chain
            if !matches!(r, Err(BallotError::Duplicate(_))) {
                if let Some(link) = link {
                    self.chain.push(link);
                }
            }
            match r {
                Ok(_) => {}
                Err(e) => {
                    if state == BallotState::Cast && !matches!(e, BallotError::Duplicate(_)) {
                        self.add_refused_cast(&json);
                    }
                    let check = self.ballot_check(&e);
                    if is_unreadable(&e) {
                        self.ledger.error(check, &path, e.to_string());
                    } else {
                        self.ledger.fail(check, &path, e.to_string());
                    }
                }
            }
        }
        self.ballots += n;
        let done = self.ballots;
        self.tell(Progress::Ballots(done));
    }

    fn add_refused_cast(&mut self, json: &str) {
        match parse_ballot(json) {
            // its ciphertexts enter a product only once they are known to be subgroup members
            Ok(ballot) => match ballot.check_members() {
                Ok(ballot) => add_ballot(&self.group, &mut self.refused_cast, &ballot),
                Err(_) => self.unreadable += 1,
            },
            Err(_) => self.unreadable += 1,
        }
    }

    fn ballot_check(&self, e: &BallotError) -> Check {
        match e {
            BallotError::Format(_)
            | BallotError::BadState(_)
            | BallotError::WrongManifest
            | BallotError::UnknownStyle(_)
            | BallotError::ContestMismatch(_)
            | BallotError::SelectionMismatch { .. } => Check::Ballot01,
            BallotError::BadElement { .. } => Check::Ballot03,
            BallotError::Duplicate(_) | BallotError::Replayed { .. } => Check::Ballot05,
            BallotError::HashMismatch { which, .. } => match which {
                BallotHash::ContestDescription => Check::Ballot01,
                BallotHash::CiphertextAccumulation => Check::Ballot04,
                BallotHash::BallotCode => Check::Ballot06,
                BallotHash::SelectionCrypto
                | BallotHash::ContestCrypto
                | BallotHash::BallotCrypto => Check::Ballot02,
            },
            BallotError::Proof { object, .. } => {
                let is_contest = self
                    .manifest
                    .as_ref()
                    .is_some_and(|m| m.contest(object).is_some());
                if is_contest {
                    Check::Ballot04
                } else {
                    Check::Ballot03
                }
            }
        }
    }

    fn decryptor(&mut self) -> Option<&Decryptor> {
        if self.decryptor.is_none() {
            let ctx = self.context.as_ref()?;
            // the guardian records were checked under V-GUARD-01/02; shares are checked against
            // the keys as published whatever those checks found
            self.decryptor = Some(Decryptor::from_checked(
                self.guardians.clone(),
                ctx.quorum as usize,
                ctx.crypto_extended_base_hash.clone(),
                self.ballots.max(1),
            ));
        }
        self.decryptor.as_ref()
    }

    fn decryption_check(e: &DecryptionError) -> (Check, bool) {
        // (check, whether it is an Error rather than a Fail)
        match e {
            DecryptionError::Field(_)
            | DecryptionError::Ceremony(_)
            | DecryptionError::Ballot(_) => (Check::Decrypt01, true),
            DecryptionError::UnknownGuardian(_)
            | DecryptionError::DuplicateShare(_)
            | DecryptionError::ShareCount { .. } => (Check::Decrypt01, false),
            DecryptionError::TooFewGuardians { .. } | DecryptionError::NotEnoughHelpers { .. } => {
                (Check::Decrypt03, false)
            }
            DecryptionError::Proof { for_missing, .. } => (
                if for_missing.is_some() {
                    Check::Decrypt02
                } else {
                    Check::Decrypt01
                },
                false,
            ),
            DecryptionError::Mismatch { what, .. } => {
                let check = match what {
                    Mismatched::RecoveryKey { .. } | Mismatched::RecoveredPartIds => {
                        Check::Decrypt02
                    }
                    Mismatched::RebuiltShare(_) => Check::Decrypt03,
                    Mismatched::Value | Mismatched::Tally => Check::Decrypt04,
                    Mismatched::Document(_)
                    | Mismatched::SelfCompensation(_)
                    | Mismatched::CompensationForPresent(_)
                    | Mismatched::ShareNotInSubgroup(_)
                    | Mismatched::CommitmentsNotInSubgroup(_)
                    | Mismatched::CompensatedShares => Check::Decrypt01,
                };
                (check, false)
            }
            DecryptionError::CountOutOfRange { .. } => (Check::Decrypt04, false),
        }
    }

    fn spoiled_decryption(&mut self, d: &Document) {
        let Some(v) = self.parse(Check::Spoiled02, d) else {
            return;
        };
        let Some(id) = v
            .get("object_id")
            .and_then(Value::as_str)
            .map(str::to_string)
        else {
            self.ledger.error(Check::Spoiled02, &d.path, "no object_id");
            return;
        };
        self.ledger.examined(Check::Spoiled01, 1);
        let Some(ballot) = self.spoiled.remove(&id) else {
            self.ledger.fail(
                Check::Spoiled01,
                &d.path,
                format!("no spoiled ballot {id:?} in the record"),
            );
            return;
        };
        // without a context (an Error of V-PARAM-03) there is nothing to check against
        if self.decryptor().is_none() {
            self.spoiled_unchecked = true;
            return;
        }
        self.ledger.examined(Check::Spoiled02, 1);
        let target = match DecryptionTarget::from_ballot_json(&ballot) {
            Ok(t) => t,
            Err(e) => {
                self.ledger.error(Check::Spoiled02, &d.path, e.to_string());
                return;
            }
        };
        let Some(dec) = self.decryptor() else {
            return;
        };
        match dec.verify_eg14(&target, &v) {
            Ok(record) => {
                for (_, sels) in &record.contests {
                    for s in sels.iter().filter(|s| s.count > 1) {
                        self.ledger.fail(
                            Check::Spoiled02,
                            &d.path,
                            format!("{}: a spoiled ballot's count is {}", s.object_id, s.count),
                        );
                    }
                }
            }
            Err(e) => {
                let (sub, _) = Self::decryption_check(&e);
                self.ledger
                    .fail(Check::Spoiled02, &d.path, format!("{}: {e}", sub.id()));
            }
        }
    }

    fn encrypted_tally(&mut self, d: &Document) {
        self.encrypted_tally = true;
        let Some(v) = self.parse(Check::Tally01, d) else {
            return;
        };
        let Some(m) = self.manifest.as_ref() else {
            return; // no manifest (an Error of V-PARAM-02): nothing to compare with
        };
        // kept for the tally's decryption in case the cast ballots' product cannot be recomputed
        let published = v.get("contests").and_then(Value::as_object);
        let mut theirs: BTreeMap<(String, String), Option<CiphertextInRange>> = BTreeMap::new();
        for c in &m.contests {
            for s in &c.ballot_selections {
                let ct = published
                    .and_then(|p| p.get(&c.object_id))
                    .and_then(|pc| pc.get("selections"))
                    .and_then(|ps| ps.get(&s.object_id))
                    .and_then(|ps| ps.get("ciphertext"))
                    .map(|ct| ciphertext_in_range(&self.group, ct, &s.object_id));
                let key = (c.object_id.clone(), s.object_id.clone());
                match ct {
                    Some(Ok(ct)) => theirs.insert(key, Some(ct)),
                    Some(Err(e)) => {
                        self.ledger.error(Check::Tally01, &d.path, e.to_string());
                        theirs.insert(key, None)
                    }
                    None => theirs.insert(key, None),
                };
            }
        }
        let contests_match = published.map_or(0, serde_json::Map::len) == m.contests.len();
        if theirs.values().all(Option::is_some) && contests_match {
            // what may be decrypted in place of the product of the ballots: members only
            let keys: Vec<&(String, String)> = theirs.keys().collect();
            let read = theirs.values().flatten().cloned().collect();
            match check_ciphertexts(&self.group, read) {
                Ok(cts) => {
                    self.published_tally =
                        Some(keys.iter().map(|k| (*k).clone()).zip(cts).collect());
                }
                Err((bad, what)) => self.ledger.fail(
                    Check::Tally01,
                    &keys
                        .get(bad)
                        .map_or_else(|| d.path.clone(), |(c, s)| format!("{c}/{s}")),
                    format!(
                        "the {what} of a ciphertext of the encrypted tally is not in the subgroup"
                    ),
                ),
            }
        }
        let Some(ours) = self.cast_product() else {
            return; // the ballots could not be checked: V-TALLY-01 is not run
        };
        let mut mismatches = Vec::new();
        let mut recomputed = serde_json::Map::new();
        let zero = Ciphertext::zero(&self.group);
        for ((cid, sid), published_ct) in &theirs {
            let ct = ours.get(&(cid.clone(), sid.clone())).unwrap_or(&zero);
            let name = format!("{cid}/{sid}");
            recomputed.insert(
                name.clone(),
                json!({"pad": hex(ct.pad.value()), "data": hex(ct.data.value())}),
            );
            match published_ct {
                Some(p) if p.matches(ct) => {}
                Some(_) => mismatches.push((
                    name,
                    "is not the product of the cast ballots' ciphertexts".to_string(),
                )),
                None => {
                    mismatches.push((name, "absent or unreadable in the encrypted tally".into()))
                }
            }
        }
        if !contests_match {
            mismatches.push((d.path.clone(), "its contests are not the manifest's".into()));
        }
        self.ledger.examined(Check::Tally01, theirs.len() as u64);
        let unreadable = self.unreadable;
        for (object, reason) in mismatches {
            if unreadable > 0 {
                // some cast ballots may be among those that could not be read
                self.ledger.error(
                    Check::Tally01,
                    &object,
                    format!("{reason}, but {unreadable} submitted ballots could not be read"),
                );
            } else {
                self.ledger.fail(Check::Tally01, &object, reason);
            }
        }
        self.out
            .values
            .insert("encrypted_tally".into(), Value::Object(recomputed));
    }

    /// The product of every cast ballot as published, accepted and refused ones alike (`None` when
    /// the ballots could not be checked at all).
    fn cast_product(&self) -> Option<TallyMap> {
        let mut product = self.ballot_box.as_ref()?.tally();
        for (key, ct) in &self.refused_cast {
            accumulate(&self.group, &mut product, key.clone(), ct);
        }
        Some(product)
    }

    fn tally(&mut self, d: &Document) {
        self.tally = true;
        let Some(v) = self.parse(Check::Decrypt01, d) else {
            return;
        };
        let Some(m) = self.manifest.as_ref() else {
            return; // no manifest (an Error of V-PARAM-02): nothing to check against
        };
        // what should have been decrypted: the product of the cast ballots (V-TALLY-01 compares
        // the published encrypted tally with it); the published encrypted tally when some ballots
        // could not be read or none could be checked
        let product = self.cast_product();
        let ciphertexts = match (product, &self.published_tally) {
            (Some(p), _) if self.unreadable == 0 => p,
            (_, Some(t)) => t.clone(),
            (Some(p), None) => p,
            (None, None) => return, // no encrypted tally and no ballots: not run
        };
        let target = DecryptionTarget::from_tally("election-results", m, &ciphertexts);
        let selections = target.len() as u64;
        let Some(dec) = self.decryptor() else {
            return; // no context (an Error of V-PARAM-03)
        };
        let result = dec.verify_eg14(&target, &v);
        for c in Check::DECRYPTION {
            self.ledger.examined(c, selections);
        }
        match result {
            Ok(record) => {
                let mut counts = serde_json::Map::new();
                for (cid, sels) in &record.contests {
                    for s in sels {
                        counts.insert(format!("{cid}/{}", s.object_id), json!(s.count));
                    }
                }
                let present: Vec<(String, u64)> = record
                    .contests
                    .first()
                    .and_then(|(_, s)| s.first())
                    .map(|s| {
                        s.shares
                            .iter()
                            .filter_map(|sh| match sh {
                                SelectionShare::Direct { guardian_id, .. } => {
                                    Some(guardian_id.clone())
                                }
                                SelectionShare::Reconstructed { .. } => None,
                            })
                            .filter_map(|id| {
                                self.guardians
                                    .iter()
                                    .find(|g| g.id == id)
                                    .map(|g| (id, g.sequence_order))
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                self.present = Some(present);
                self.out
                    .values
                    .insert("counts".into(), Value::Object(counts));
                // the ballots the counts are of: with the votes allowed, they give each contest's
                // undervotes (the ballot box's accepted ones; every one when every check passes)
                if let Some(bb) = self.ballot_box.as_ref() {
                    let (cast, spoiled) = bb.counts();
                    self.out.values.insert("cast".into(), json!(cast));
                    self.out.values.insert("spoiled".into(), json!(spoiled));
                }
            }
            Err(e) => {
                let (check, is_error) = Self::decryption_check(&e);
                if is_error {
                    self.ledger.error(check, &d.path, e.to_string());
                } else {
                    self.ledger.fail(check, &d.path, e.to_string());
                }
            }
        }
    }

    fn coefficients(&mut self, d: &Document) {
        self.coefficients = true;
        let Some(v) = self.parse(Check::Decrypt03, d) else {
            return;
        };
        let Some(present) = self.present.clone() else {
            return; // the tally did not decrypt: reported there
        };
        let Some(published) = v.get("coefficients").and_then(Value::as_object) else {
            self.ledger
                .error(Check::Decrypt03, &d.path, "no coefficients map");
            return;
        };
        let orders: Vec<u64> = present.iter().map(|(_, o)| *o).collect();
        if published.len() != present.len() {
            self.ledger.fail(
                Check::Decrypt03,
                &d.path,
                format!(
                    "{} coefficients for {} guardians who decrypted",
                    published.len(),
                    present.len()
                ),
            );
        }
        for (id, order) in &present {
            let want = lagrange_coefficient(&self.group, *order, &orders);
            let got = published.get(id).and_then(Value::as_str).map(from_hex);
            match (want, got) {
                (Ok(w), Some(Ok(g))) if w.value() == &g => {}
                _ => self.ledger.fail(
                    Check::Decrypt03,
                    &d.path,
                    format!("the Lagrange coefficient of {id:?} is absent or wrong"),
                ),
            }
        }
    }

    fn finish(mut self, record: String, form: &'static str) -> (Report, Intermediates) {
        // an archive is known by its chain; a directory by the chain of its documents (spec/50.2)
        let digest = crate::report::hex(&self.archive_chain.unwrap_or(self.digest));
        self.out
            .values
            .insert("record_digest".into(), json!(digest));
        if !self.guardians_done {
            self.finish_guardians();
        }
        self.drain();
        if self.manifest.is_none() {
            self.ledger.error(
                Check::Param02,
                "manifest.json",
                "the record has no readable manifest",
            );
        }
        if !self.constants {
            self.ledger.error(
                Check::Param01,
                "constants.json",
                "the record has no constants",
            );
        }
        // the chains of ballot codes (V-BALLOT-06)
        let mut seeds: HashMap<&Integer, &str> = HashMap::new();
        let codes: HashSet<&Integer> = self.chain.iter().map(|(_, c, _)| c).collect();
        let mut chain_failures = Vec::new();
        for (seed, _, id) in &self.chain {
            if let Some(other) = seeds.insert(seed, id) {
                chain_failures.push((
                    id.clone(),
                    format!("chained from the same code as {other:?} (a fork)"),
                ));
            }
            if !self.devices.contains(seed) && !codes.contains(seed) {
                chain_failures.push((
                    id.clone(),
                    "its code_seed is neither a device's hash nor another ballot's code"
                        .to_string(),
                ));
            }
        }
        for (object, reason) in chain_failures {
            self.ledger.fail(Check::Ballot06, &object, reason);
        }
        let mut left: Vec<&String> = self.spoiled.keys().collect();
        left.sort();
        for id in left {
            self.ledger.examined(Check::Spoiled01, 1);
            self.ledger.fail(
                Check::Spoiled01,
                id,
                "a spoiled ballot without its decryption",
            );
        }
        self.ledger.examined(Check::Spoiled01, 0);
        if !self.spoiled_unchecked {
            self.ledger.examined(Check::Spoiled02, 0);
        }
        if !self.encrypted_tally {
            self.ledger.error(
                Check::Tally01,
                "encrypted_tally.json",
                "the record has no encrypted tally",
            );
        }
        if !self.tally {
            self.ledger
                .error(Check::Decrypt01, "tally.json", "the record has no tally");
        }
        let ballots = self.ballots;
        let mut out = self.out;
        let mut devices: Vec<Value> = self.devices.iter().map(hex).collect();
        devices.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
        out.values
            .insert("device_hashes".into(), Value::Array(devices));
        out.values.insert("ballots".into(), json!(ballots));
        (self.ledger.finish(record, form, ballots), out)
    }
}
