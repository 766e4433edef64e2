//! Reading a submitted ballot (ElectionGuard 1.4 JSON): shape and ranges only; membership and
//! proofs are the verifier's.

use rayon::prelude::*;
use serde_json::Value;
use votum_elgamal::Ciphertext;
use votum_group::{ModElement, ModScalar, ModpGroup};
use votum_proofs::{ConstantProof, DisjunctiveProof};

use super::*;
use crate::encrypted::{EncryptedBallot, EncryptedContest, EncryptedSelection};
use crate::json::{commitment, field, hexnum, in_range, int, scalar, text};

pub(crate) fn optional_nonce(
    g: &ModpGroup,
    v: &Value,
    object: &str,
) -> Result<Option<ModScalar>, BallotError> {
    match v.get("nonce") {
        None | Some(Value::Null) => Ok(None),
        Some(_) => Ok(Some(scalar(g, v, "nonce", object)?)),
    }
}

pub(crate) fn parse_selection(g: &ModpGroup, v: &Value) -> Result<EncryptedSelection, BallotError> {
    let id = text(v, "object_id", "selection")?.to_owned();
    let ct = field(v, "ciphertext", &id)?;
    let p = field(v, "proof", &id)?;
    Ok(EncryptedSelection {
        sequence_order: int(v, "sequence_order", &id)?,
        description_hash: hexnum(v, "description_hash", &id)?,
        // range only here: the ballot is an UncheckedBallot until the verifier has tested
        // membership (one batched test, spec/62.4)
        ciphertext: Ciphertext {
            pad: in_range(g, ct, "pad", &id)?.into_unchecked_part(),
            data: in_range(g, ct, "data", &id)?.into_unchecked_part(),
        },
        crypto_hash: hexnum(v, "crypto_hash", &id)?,
        is_placeholder: field(v, "is_placeholder_selection", &id)?
            .as_bool()
            .ok_or_else(|| {
                BallotError::Format(format!("{id}: is_placeholder_selection must be a boolean"))
            })?,
        nonce: optional_nonce(g, v, &id)?,
        proof: DisjunctiveProof {
            zero_pad: commitment(g, p, "proof_zero_pad", &id)?,
            zero_data: commitment(g, p, "proof_zero_data", &id)?,
            one_pad: commitment(g, p, "proof_one_pad", &id)?,
            one_data: commitment(g, p, "proof_one_data", &id)?,
            zero_challenge: scalar(g, p, "proof_zero_challenge", &id)?,
            one_challenge: scalar(g, p, "proof_one_challenge", &id)?,
            challenge: scalar(g, p, "challenge", &id)?,
            zero_response: scalar(g, p, "proof_zero_response", &id)?,
            one_response: scalar(g, p, "proof_one_response", &id)?,
        },
        object_id: id,
    })
}

pub(crate) fn parse_contest(g: &ModpGroup, v: &Value) -> Result<EncryptedContest, BallotError> {
    let id = text(v, "object_id", "contest")?.to_owned();
    let selections = field(v, "ballot_selections", &id)?
        .as_array()
        .ok_or_else(|| BallotError::Format(format!("{id}: ballot_selections must be a list")))?
        .par_iter()
        .map(|s| parse_selection(g, s))
        .collect::<Result<Vec<_>, _>>()?;
    let acc = field(v, "ciphertext_accumulation", &id)?;
    let p = field(v, "proof", &id)?;
    let constant = field(p, "constant", &id)?.as_u64().ok_or_else(|| {
        BallotError::Format(format!(
            "{id}: proof constant must be a non-negative integer"
        ))
    })?;
    Ok(EncryptedContest {
        sequence_order: int(v, "sequence_order", &id)?,
        description_hash: hexnum(v, "description_hash", &id)?,
        // compared with the product of the selections' ciphertexts (V-BALLOT-04)
        accumulation: Ciphertext {
            pad: in_range(g, acc, "pad", &id)?.into_unchecked_part(),
            data: in_range(g, acc, "data", &id)?.into_unchecked_part(),
        },
        crypto_hash: hexnum(v, "crypto_hash", &id)?,
        nonce: optional_nonce(g, v, &id)?,
        proof: ConstantProof {
            pad: commitment(g, p, "pad", &id)?,
            data: commitment(g, p, "data", &id)?,
            challenge: scalar(g, p, "challenge", &id)?,
            response: scalar(g, p, "response", &id)?,
            constant,
        },
        selections,
        object_id: id,
    })
}

/// A ballot read from outside whose ciphertexts are only known to be in range. Nothing can be
/// done with its elements until it has become an [`EncryptedBallot`]: through the verifier
/// ([`BallotVerifier::verify`], [`BallotVerifier::verify_many`]: proofs, hashes and subgroup
/// membership), or through [`UncheckedBallot::check_members`] (membership only, for a ballot a
/// verifier has refused or that passed a ballot box before).
#[derive(Clone, Debug)]
pub struct UncheckedBallot(pub(crate) EncryptedBallot);

impl UncheckedBallot {
    pub fn object_id(&self) -> &str {
        &self.0.object_id
    }

    /// The ballot, after the full subgroup test of every ciphertext (selections and contest
    /// accumulations; one batch). Proofs and hashes are not checked.
    pub fn check_members(self) -> Result<EncryptedBallot, BallotError> {
        Self::check_members_of(vec![self])
            .pop()
            .unwrap_or_else(|| Err(BallotError::Format("not processed".into())))
    }

    /// [`UncheckedBallot::check_members`] for many ballots, with one batched test; each ballot
    /// gets its own result.
    pub fn check_members_of(
        ballots: Vec<UncheckedBallot>,
    ) -> Vec<Result<EncryptedBallot, BallotError>> {
        let g = ModpGroup::eg_4096();
        let refs: Vec<&ModElement> = ballots
            .iter()
            .flat_map(|b| ciphertext_parts(&b.0).map(|(_, _, x)| x))
            .collect();
        if g.members_hold(&refs, &mut crate::batch::batch_rng()) {
            return ballots.into_iter().map(|b| Ok(b.0)).collect();
        }
        ballots
            .into_iter()
            .map(|b| {
                let bad = ciphertext_parts(&b.0)
                    .find(|(_, _, x)| !g.is_member(x.value()))
                    .map(|(object, what, _)| (object.to_owned(), what));
                match bad {
                    None => Ok(b.0),
                    Some((object, what)) => Err(BallotError::BadElement {
                        object,
                        what,
                        reason: votum_group::GroupError::NotInSubgroup,
                    }),
                }
            })
            .collect()
    }
}

/// Every ciphertext component of a ballot (contest accumulations and selections), with the object
/// it belongs to and which part it is.
pub(crate) fn ciphertext_parts(
    b: &EncryptedBallot,
) -> impl Iterator<Item = (&str, &'static str, &ModElement)> {
    b.contests.iter().flat_map(|c| {
        let accumulation = [
            (c.object_id.as_str(), "pad", &c.accumulation.pad),
            (c.object_id.as_str(), "data", &c.accumulation.data),
        ];
        accumulation
            .into_iter()
            .chain(c.selections.iter().flat_map(|s| {
                [
                    (s.object_id.as_str(), "pad", &s.ciphertext.pad),
                    (s.object_id.as_str(), "data", &s.ciphertext.data),
                ]
            }))
    })
}

impl From<EncryptedBallot> for UncheckedBallot {
    /// Any ballot may be checked again.
    fn from(ballot: EncryptedBallot) -> Self {
        Self(ballot)
    }
}

/// Parses a ballot in electionguard 1.4.0's JSON (private `CiphertextBallot` or `SubmittedBallot`).
pub fn parse_ballot(json: &str) -> Result<UncheckedBallot, BallotError> {
    let g = ModpGroup::eg_4096();
    let v: Value = serde_json::from_str(json).map_err(|e| BallotError::Format(e.to_string()))?;
    let id = text(&v, "object_id", "ballot")?.to_owned();
    let contests = field(&v, "contests", &id)?
        .as_array()
        .ok_or_else(|| BallotError::Format(format!("{id}: contests must be a list")))?
        .iter()
        .map(|c| parse_contest(&g, c))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(UncheckedBallot(EncryptedBallot {
        style_id: text(&v, "style_id", &id)?.to_owned(),
        manifest_hash: hexnum(&v, "manifest_hash", &id)?,
        code_seed: hexnum(&v, "code_seed", &id)?,
        contests,
        code: hexnum(&v, "code", &id)?,
        timestamp: int(&v, "timestamp", &id)?,
        crypto_hash: hexnum(&v, "crypto_hash", &id)?,
        nonce: optional_nonce(&g, &v, &id)?,
        object_id: id,
    }))
}
