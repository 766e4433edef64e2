//! The encryption device: plaintext ballots to ciphertext ballots with proofs, deterministic
//! given the ballot's master nonce, exactly as electionguard 1.4.0 derives every value
//! (spec/61-eg-encryption.md). All exponentiations use fixed-base tables of g and K.

use std::collections::HashMap;
use std::collections::HashSet;

use votum_arith::Integer;
use votum_elgamal::Ciphertext;
use votum_elgamal::PublicKey;
use votum_group::{Group, ModElement};
use votum_group::{ModScalar, ModpGroup};
use votum_hash::eg::{hash_elems, EgHashItem};
use votum_proofs::Eg1Oracle;
use votum_proofs::{ConstantProof, DisjunctiveProof, ProofError};

use crate::encrypted::{EncryptedBallot, EncryptedContest, EncryptedSelection};
use crate::manifest::{
    contests_for_style, placeholders, ContestDescription, Manifest, SelectionDescription,
};
use crate::nonces::Nonces;
pub use crate::plaintext::{EncryptError, PlaintextBallot, PlaintextContest, PlaintextSelection};

/// One election's encryption parameters, with the fixed-base tables built once.
pub struct EncryptionContext {
    pub group: ModpGroup,
    pub public_key: PublicKey<ModpGroup>,
    pub extended_base_hash: Integer,
    pub manifest_hash: Integer,
    oracle: Eg1Oracle,
}

impl EncryptionContext {
    pub fn new(
        public_key: ModElement,
        extended_base_hash: Integer,
        manifest_hash: Integer,
    ) -> Result<Self, EncryptError> {
        let group = ModpGroup::eg_4096();
        let public_key = PublicKey::with_table(&group, public_key).map_err(|_| {
            EncryptError::Proof(ProofError::NotABit {
                proof: "public key is the identity",
            })
        })?;
        Ok(Self {
            oracle: Eg1Oracle::new(extended_base_hash.clone()),
            group,
            public_key,
            extended_base_hash,
            manifest_hash,
        })
    }
}

fn q() -> Integer {
    ModpGroup::eg_4096().order().clone()
}

fn h(items: &[EgHashItem]) -> Integer {
    hash_elems(items, &q())
}

fn num(x: &Integer) -> EgHashItem {
    EgHashItem::Num(x.clone())
}

fn scalar(g: &ModpGroup, x: &Integer) -> ModScalar {
    g.scalar_from_integer(x)
}

fn encrypt_selection(
    ctx: &EncryptionContext,
    desc: &SelectionDescription,
    vote: u64,
    nonce_seed: &Integer,
    is_placeholder: bool,
) -> Result<EncryptedSelection, EncryptError> {
    let g = &ctx.group;
    let description_hash = desc.crypto_hash();
    let sequence = Nonces::new(&description_hash, &[num(nonce_seed)]);
    let nonce = scalar(g, &sequence.get(desc.sequence_order as u64));
    if nonce == g.scalar_from_u64(0) {
        return Err(EncryptError::ZeroNonce);
    }
    let proof_seed = sequence.get(0);
    let ciphertext = Ciphertext::encrypt_exp(g, &ctx.public_key, vote, &nonce);
    let proof_nonces = Nonces::new(
        &proof_seed,
        &[EgHashItem::Str("disjoint-chaum-pedersen-proof".to_owned())],
    );
    let (n0, n1, n2) = (
        scalar(g, &proof_nonces.get(0)),
        scalar(g, &proof_nonces.get(1)),
        scalar(g, &proof_nonces.get(2)),
    );
    // electionguard draws (c1, v, u0) for 0 and (w, v, u1) for 1 with c0 = -w; the simulated
    // response is v + c_sim·r.
    let c_sim = if vote == 0 { n0 } else { g.scalar_neg(&n0) };
    let v_sim = g.scalar_add(&n1, &g.scalar_mul(&c_sim, &nonce));
    let proof = DisjunctiveProof::prove_with_nonces(
        g,
        &ctx.oracle,
        &ctx.public_key,
        &ciphertext,
        vote,
        &nonce,
        [&c_sim, &v_sim, &n2],
    )?;
    let crypto_hash = h(&[
        EgHashItem::Str(desc.object_id.clone()),
        num(&description_hash),
        num(&h(&[
            num(ciphertext.pad.value()),
            num(ciphertext.data.value()),
        ])),
    ]);
    Ok(EncryptedSelection {
        object_id: desc.object_id.clone(),
        sequence_order: desc.sequence_order,
        description_hash,
        ciphertext,
        crypto_hash,
        is_placeholder,
        nonce: Some(nonce),
        proof,
    })
}

fn encrypt_contest(
    ctx: &EncryptionContext,
    desc: &ContestDescription,
    votes: &HashMap<&str, u64>,
    ballot_nonce_seed: &Integer,
) -> Result<EncryptedContest, EncryptError> {
    let g = &ctx.group;
    let description_hash = desc.crypto_hash();
    let sequence = Nonces::new(&description_hash, &[num(ballot_nonce_seed)]);
    let contest_nonce = sequence.get(desc.sequence_order as u64);
    let proof_seed = sequence.get(0);
    let mut selections = Vec::new();
    let mut count = 0u64;
    for s in &desc.ballot_selections {
        let vote = votes.get(s.object_id.as_str()).copied().unwrap_or(0);
        count += vote;
        selections.push(encrypt_selection(ctx, s, vote, &contest_nonce, false)?);
    }
    for p in placeholders(desc) {
        let vote = u64::from(count < desc.number_elected as u64);
        count += vote;
        selections.push(encrypt_selection(ctx, &p, vote, &contest_nonce, true)?);
    }
    let accumulation = selections
        .iter()
        .fold(Ciphertext::zero(g), |acc, s| acc.add(g, &s.ciphertext));
    let aggregate_nonce = selections
        .iter()
        .flat_map(|s| s.nonce.iter())
        .fold(g.scalar_from_u64(0), |acc, n| g.scalar_add(&acc, n));
    let u = scalar(
        g,
        &Nonces::new(
            &proof_seed,
            &[EgHashItem::Str("constant-chaum-pedersen-proof".to_owned())],
        )
        .get(0),
    );
    let proof = ConstantProof::prove_with_nonce(
        g,
        &ctx.oracle,
        &ctx.public_key,
        &accumulation,
        desc.number_elected as u64,
        &aggregate_nonce,
        &u,
    );
    let mut items = vec![
        EgHashItem::Str(desc.object_id.clone()),
        num(&description_hash),
    ];
    let mut sorted: Vec<&EncryptedSelection> = selections.iter().collect();
    sorted.sort_by_key(|s| s.sequence_order);
    items.extend(sorted.iter().map(|s| num(&s.crypto_hash)));
    Ok(EncryptedContest {
        object_id: desc.object_id.clone(),
        sequence_order: desc.sequence_order,
        description_hash,
        crypto_hash: h(&items),
        selections,
        accumulation,
        nonce: Some(scalar(g, &contest_nonce)),
        proof,
    })
}

/// Checks a plaintext contest against its description: known selections, bits, no overvote.
fn contest_votes<'a>(
    desc: &ContestDescription,
    contest: &'a PlaintextContest,
) -> Result<HashMap<&'a str, u64>, EncryptError> {
    let mut votes = HashMap::new();
    let mut total = 0u64;
    for s in &contest.ballot_selections {
        if !desc
            .ballot_selections
            .iter()
            .any(|d| d.object_id == s.object_id)
        {
            return Err(EncryptError::UnknownSelection {
                contest: desc.object_id.clone(),
                selection: s.object_id.clone(),
            });
        }
        let vote = match s.vote {
            0 => 0,
            1 => 1,
            _ => return Err(EncryptError::NotABit(s.object_id.clone())),
        };
        total += vote;
        votes.insert(s.object_id.as_str(), vote);
    }
    if total > desc.votes_allowed as u64 {
        return Err(EncryptError::Overvote {
            contest: desc.object_id.clone(),
            votes: total,
            allowed: desc.votes_allowed as u64,
        });
    }
    Ok(votes)
}

/// Encrypts a ballot. Every contest of the ballot's style is encrypted (missing contests as all
/// zeros); `master_nonce` determines every nonce; the ballot code chains from `code_seed`.
pub fn encrypt_ballot(
    ctx: &EncryptionContext,
    manifest: &Manifest,
    ballot: &PlaintextBallot,
    master_nonce: &ModScalar,
    code_seed: &Integer,
    timestamp: i64,
) -> Result<EncryptedBallot, EncryptError> {
    let mut encrypted = encrypt_unchained(ctx, manifest, ballot, master_nonce, timestamp)?;
    encrypted.chain(code_seed);
    Ok(encrypted)
}

/// One ballot to encrypt in a batch: the plaintext, its master nonce and its timestamp.
pub struct BallotRequest<'a> {
    pub ballot: &'a PlaintextBallot,
    pub master_nonce: &'a ModScalar,
    pub timestamp: i64,
}

/// Encrypts a batch of ballots on one device, on all cores. The ballots' contents do not depend
/// on the code chain (electionguard derives every nonce from the master nonce), so they are
/// encrypted in parallel and then chained in order: each ballot's code seeds the next. A ballot
/// that fails takes no place in the chain. Returns the outcomes in order and the last code.
pub fn encrypt_many(
    ctx: &EncryptionContext,
    manifest: &Manifest,
    requests: &[BallotRequest<'_>],
    code_seed: &Integer,
) -> (Vec<Result<EncryptedBallot, EncryptError>>, Integer) {
    use rayon::prelude::*;
    let mut outcomes: Vec<Result<EncryptedBallot, EncryptError>> = requests
        .par_iter()
        .map(|r| encrypt_unchained(ctx, manifest, r.ballot, r.master_nonce, r.timestamp))
        .collect();
    let mut seed = code_seed.clone();
    for ballot in outcomes.iter_mut().flatten() {
        ballot.chain(&seed);
        seed = ballot.code.clone();
    }
    (outcomes, seed)
}

/// Places a ballot encrypted elsewhere (a cluster's worker, which chained it from any seed) in a
/// device's chain after `code_seed` (spec/98.4): its code is `H(code_seed, timestamp,
/// crypto_hash)`, and the values of its top-level `code_seed` and `code` fields in `json` (as
/// [`EncryptedBallot::to_eg14_json`] writes them, compact) are replaced. Nothing else of a ballot
/// depends on its place in the chain, so with the same master nonce the result is byte for byte
/// the in-process device's. `None` when `json` does not have each field exactly once.
pub fn rechain_text(
    json: &str,
    timestamp: i64,
    crypto_hash: &Integer,
    code_seed: &Integer,
) -> Option<(String, Integer)> {
    let code = h(&[num(code_seed), EgHashItem::Int(timestamp), num(crypto_hash)]);
    let text = replace_value(json, "code_seed", &votum_hash::eg::to_hex(code_seed))?;
    let text = replace_value(&text, "code", &votum_hash::eg::to_hex(&code))?;
    Some((text, code))
}

/// `json` with the string value of its one `"key":"…"` replaced by `value`.
fn replace_value(json: &str, key: &str, value: &str) -> Option<String> {
    let pattern = format!("\"{key}\":\"");
    let mut found = json.match_indices(&pattern);
    let (at, _) = found.next()?;
    if found.next().is_some() {
        return None;
    }
    let from = at + pattern.len();
    let len = json[from..].find('"')?;
    Some([&json[..from], value, &json[from + len..]].concat())
}

/// Everything of an encrypted ballot except its place in the device's code chain.
fn encrypt_unchained(
    ctx: &EncryptionContext,
    manifest: &Manifest,
    ballot: &PlaintextBallot,
    master_nonce: &ModScalar,
    timestamp: i64,
) -> Result<EncryptedBallot, EncryptError> {
    let style_contests = contests_for_style(manifest, &ballot.style_id)
        .ok_or_else(|| EncryptError::UnknownStyle(ballot.style_id.clone()))?;
    let mut seen = HashSet::new();
    for c in &ballot.contests {
        if !seen.insert(c.object_id.as_str()) {
            return Err(EncryptError::DuplicateContest(c.object_id.clone()));
        }
        if !style_contests.iter().any(|d| d.object_id == c.object_id) {
            return Err(EncryptError::ContestNotOnStyle(
                c.object_id.clone(),
                ballot.style_id.clone(),
            ));
        }
    }
    let nonce_seed = h(&[
        num(&ctx.manifest_hash),
        EgHashItem::Str(ballot.object_id.clone()),
        num(master_nonce.value()),
    ]);
    let empty = PlaintextContest {
        object_id: String::new(),
        ballot_selections: Vec::new(),
    };
    let contests = style_contests
        .iter()
        .map(|desc| {
            let plain = ballot
                .contests
                .iter()
                .find(|c| c.object_id == desc.object_id)
                .unwrap_or(&empty);
            let votes = contest_votes(desc, plain)?;
            encrypt_contest(ctx, desc, &votes, &nonce_seed)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut items = vec![
        EgHashItem::Str(ballot.object_id.clone()),
        num(&ctx.manifest_hash),
    ];
    let mut sorted: Vec<&EncryptedContest> = contests.iter().collect();
    sorted.sort_by_key(|c| c.sequence_order);
    items.extend(sorted.iter().map(|c| num(&c.crypto_hash)));
    let crypto_hash = h(&items);
    Ok(EncryptedBallot {
        object_id: ballot.object_id.clone(),
        style_id: ballot.style_id.clone(),
        manifest_hash: ctx.manifest_hash.clone(),
        code_seed: Integer::new(),
        contests,
        code: Integer::new(),
        timestamp,
        crypto_hash,
        nonce: Some(master_nonce.clone()),
    })
}

impl EncryptedBallot {
    /// Places the ballot in its device's chain: code = H(code_seed, timestamp, crypto hash).
    fn chain(&mut self, code_seed: &Integer) {
        self.code = h(&[
            num(code_seed),
            EgHashItem::Int(self.timestamp),
            num(&self.crypto_hash),
        ]);
        self.code_seed = code_seed.clone();
    }
}
