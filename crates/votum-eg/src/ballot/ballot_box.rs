//! The ballot box: verified ballots in, duplicates refused, cast ballots tallied.

use std::collections::{BTreeMap, HashSet};
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use rayon::prelude::*;
use votum_arith::Integer;

use super::*;
use crate::encrypted::EncryptedBallot;

/// Cast or spoiled (Benaloh challenge).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BallotState {
    Cast,
    Spoiled,
}

/// Ballots in, one verification each, a running encrypted tally of the cast ones.
pub struct BallotBox {
    pub(crate) verifier: BallotVerifier,
    /// The recorded ballots' ids, to refuse a repeated one; each id is held once, shared with `ids`.
    pub(crate) seen: HashSet<Arc<str>>,
    /// Every selection ciphertext of the recorded ballots (spec/62.5), naming its ballot in `ids`.
    sightings: HashSet<Sighting>,
    /// The recorded ballots' ids, in order: what a [`Sighting`]'s ordinal names.
    ids: Vec<Arc<str>>,
    pub(crate) tally: TallyMap,
    pub(crate) cast: u64,
    pub(crate) spoiled: u64,
}

/// What the box says about an accepted ballot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Receipt {
    pub ballot_id: String,
    pub code: Integer,
    pub state: BallotState,
}

impl BallotBox {
    pub fn new(verifier: BallotVerifier) -> Self {
        Self {
            verifier,
            seen: HashSet::new(),
            sightings: HashSet::new(),
            ids: Vec::new(),
            tally: BTreeMap::new(),
            cast: 0,
            spoiled: 0,
        }
    }

    /// Parses and checks a ballot without recording it (a duplicate id is not an error here).
    pub fn check(&self, json: &str) -> Result<EncryptedBallot, BallotError> {
        self.verifier.verify(parse_ballot(json)?)
    }

    /// Parses, checks and records one ballot; a refused ballot changes nothing.
    pub fn submit(&mut self, json: &str, state: BallotState) -> Result<Receipt, BallotError> {
        let ballot = parse_ballot(json)?;
        if self.seen.contains(ballot.object_id()) {
            return Err(BallotError::Duplicate(ballot.object_id().to_owned()));
        }
        let ballot = self.verifier.verify(ballot)?;
        self.record(ballot, state)
    }

    /// Parses, checks (in one batch, spec/62.4) and records many ballots, in order; each gets
    /// its own result and a refused ballot changes nothing. A ballot id repeated within the
    /// batch is a duplicate from its second occurrence on.
    pub fn submit_many(
        &mut self,
        items: &[(&str, BallotState)],
    ) -> Vec<Result<Receipt, BallotError>> {
        let candidates = self.candidates(items);
        let mut rng = crate::batch::batch_rng();
        let verified = self.verifier.verify_parsed(candidates, &mut rng);
        self.record_all(verified, items)
    }

    /// [`BallotBox::submit_many`] with the checks already done elsewhere (a cluster's workers,
    /// spec/98.3): `passed[i]` says whether `items[i]` passed every check of a [`BallotVerifier`]
    /// built from the same parameters. Duplicates are found here, before any verdict is looked
    /// at; a ballot that passed is recorded without being checked again; every other ballot is
    /// checked here, in one batch, so each refusal is this box's own error. A missing verdict
    /// counts as not passed.
    pub fn submit_judged(
        &mut self,
        items: &[(&str, BallotState)],
        passed: &[bool],
    ) -> Vec<Result<Receipt, BallotError>> {
        // the ballots that passed are taken as they are; the rest (errors pass through) are
        // checked here in one batch; both are then put back in order
        let mut trusted = Vec::new();
        let mut rest = Vec::new();
        let mut from_trusted = Vec::with_capacity(items.len());
        for (i, c) in self.candidates(items).into_iter().enumerate() {
            let took = match c {
                Ok(b) if passed.get(i).copied().unwrap_or(false) => {
                    trusted.push(b.0);
                    true
                }
                other => {
                    rest.push(other);
                    false
                }
            };
            from_trusted.push(took);
        }
        let mut rng = crate::batch::batch_rng();
        let mut checked = self.verifier.verify_parsed(rest, &mut rng).into_iter();
        let mut trusted = trusted.into_iter();
        let verified = from_trusted
            .into_iter()
            .map(|t| {
                let next = if t {
                    trusted.next().map(Ok)
                } else {
                    checked.next()
                };
                next.unwrap_or_else(|| Err(BallotError::Format("not processed".into())))
            })
            .collect();
        self.record_all(verified, items)
    }

    /// Parses a batch and marks repeated ids (seen before, or earlier in the batch) as duplicates.
    fn candidates(
        &self,
        items: &[(&str, BallotState)],
    ) -> Vec<Result<UncheckedBallot, BallotError>> {
        let parsed: Vec<Result<UncheckedBallot, BallotError>> = items
            .par_iter()
            .map(|(json, _)| parse_ballot(json))
            .collect();
        let mut batch_seen = HashSet::new();
        parsed
            .into_iter()
            .map(|p| {
                p.and_then(|b| {
                    let id = b.object_id();
                    if self.seen.contains(id) || !batch_seen.insert(id.to_owned()) {
                        Err(BallotError::Duplicate(id.to_owned()))
                    } else {
                        Ok(b)
                    }
                })
            })
            .collect()
    }

    fn record_all(
        &mut self,
        verified: Vec<Result<EncryptedBallot, BallotError>>,
        items: &[(&str, BallotState)],
    ) -> Vec<Result<Receipt, BallotError>> {
        verified
            .into_iter()
            .zip(items)
            .map(|(r, (_, state))| r.and_then(|b| self.record(b, *state)))
            .collect()
    }

    /// Records a verified ballot unless one of its selection ciphertexts was seen before.
    pub(crate) fn record(
        &mut self,
        ballot: EncryptedBallot,
        state: BallotState,
    ) -> Result<Receipt, BallotError> {
        let ordinal = u32::try_from(self.ids.len()).unwrap_or(u32::MAX);
        let mut mine = HashSet::new();
        let mut repeated = None;
        for fingerprint in fingerprints(&ballot) {
            let sighting = Sighting::new(fingerprint, ordinal);
            let earlier = self.sightings.get(&sighting).map(|s| s.ordinal());
            if earlier.is_some() || !mine.insert(sighting) {
                repeated = Some(earlier);
                break;
            }
        }
        if let Some(earlier) = repeated {
            let original = earlier
                .and_then(|o| self.ids.get(o as usize).map(|id| id.to_string()))
                .unwrap_or_else(|| ballot.object_id.clone());
            return Err(BallotError::Replayed {
                ballot: ballot.object_id,
                original,
            });
        }
        self.sightings.extend(mine);
        let id: Arc<str> = Arc::from(ballot.object_id.as_str());
        self.ids.push(Arc::clone(&id));
        self.seen.insert(id);
        Ok(self.tally_in(ballot, state))
    }

    fn tally_in(&mut self, ballot: EncryptedBallot, state: BallotState) -> Receipt {
        let g = &self.verifier.group;
        if state == BallotState::Cast {
            add_ballot(g, &mut self.tally, &ballot);
            self.cast += 1;
        } else {
            self.spoiled += 1;
        }
        Receipt {
            ballot_id: ballot.object_id,
            code: ballot.code,
            state,
        }
    }

    /// The encrypted tally of the cast ballots, by (contest, selection), every selection of the
    /// manifest present ([`complete_tally`]).
    pub fn tally(&self) -> TallyMap {
        complete_tally(&self.verifier.manifest, &self.tally)
    }

    pub fn counts(&self) -> (u64, u64) {
        (self.cast, self.spoiled)
    }
}

/// A selection ciphertext seen in a recorded ballot: the low 96 bits of its pad, and the ordinal of
/// its ballot in the box's `ids`. Equal and hashed by the pad bits alone. Honest pads are uniform in
/// the subgroup, so two honest ones share 96 bits with probability about N²/2^97 for N selections;
/// a copier cannot make a new pad share them with another without about 2^96 work, since a valid
/// 0/1 proof needs the pad's nonce (spec/62.5).
#[derive(Clone, Copy, Debug)]
struct Sighting(u128);

impl Sighting {
    const PAD_BITS: u128 = (1 << 96) - 1;

    fn new(pad_bits: u128, ordinal: u32) -> Self {
        Self(((pad_bits & Self::PAD_BITS) << 32) | u128::from(ordinal))
    }

    fn pad_bits(self) -> u128 {
        self.0 >> 32
    }

    fn ordinal(self) -> u32 {
        (self.0 & u128::from(u32::MAX)) as u32
    }
}

impl PartialEq for Sighting {
    fn eq(&self, other: &Self) -> bool {
        self.pad_bits() == other.pad_bits()
    }
}

impl Eq for Sighting {}

impl Hash for Sighting {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.pad_bits().hash(state);
    }
}

/// The low 128 bits of every selection ciphertext's pad, placeholders included.
fn fingerprints(ballot: &EncryptedBallot) -> impl Iterator<Item = u128> + '_ {
    ballot
        .contests
        .iter()
        .flat_map(|c| c.selections.iter())
        .map(|s| s.ciphertext.pad.value().to_u128_wrapping())
}
