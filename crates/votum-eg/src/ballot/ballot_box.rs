//! The ballot box: verified ballots in, duplicates refused, cast ballots tallied.

use std::collections::{BTreeMap, HashSet};

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
    pub(crate) seen: HashSet<String>,
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
        Ok(self.record(ballot, state))
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
                    let id = b.object_id().to_owned();
                    if self.seen.contains(&id) || !batch_seen.insert(id.clone()) {
                        Err(BallotError::Duplicate(id))
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
            .map(|(r, (_, state))| r.map(|b| self.record(b, *state)))
            .collect()
    }

    pub(crate) fn record(&mut self, ballot: EncryptedBallot, state: BallotState) -> Receipt {
        let g = &self.verifier.group;
        if state == BallotState::Cast {
            add_ballot(g, &mut self.tally, &ballot);
            self.cast += 1;
        } else {
            self.spoiled += 1;
        }
        self.seen.insert(ballot.object_id.clone());
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
