//! The mix record's checks (spec/91.7, V-MIX-02..08), one function per check and entry, on
//! decoded values: the walker (`crate::mix`) reads the record's framing, order and chain (V-MIX-01)
//! and calls them in line; a cluster's shuffle task (`crate::mix::check_shuffle_task`) calls
//! [`check_mix`] where the proof is sent.

use rand_core::{CryptoRng, RngCore};
use votum_elgamal::Ciphertext;
use votum_group::Group;
use votum_mixnet::ballot::verify_ballots;
use votum_mixnet::board::{public_share, trustee_oracle};
use votum_mixnet::codec::{decode_rows, ValueCodec};
use votum_mixnet::count::{count, Outcome};
use votum_mixnet::decrypt::{combine, verify_share, DecryptionShare};
use votum_mixnet::params::{weights_rng, Parameters};
use votum_mixnet::signing::check_signature_of_digest;
use votum_mixnet::wire;
use votum_shuffle::{Generators, Rows, ShuffleProof};

use crate::checks::Check;
use crate::report::Ledger;

/// What an authority's `signature` entry signs (spec/91.9): the entry's kind and name, the board's
/// head the authority acted on, and the entry's payload digest.
pub(crate) struct Signed {
    pub kind: &'static str,
    pub name: String,
    pub head: [u8; 32],
    pub payload: [u8; 32],
}

/// V-MIX-08: `signature` is the signature of the authority the parameters name for `signed`.
pub(crate) fn check_signature(
    ledger: &mut Ledger,
    p: &Parameters,
    digest: &[u8; 32],
    signed: &Signed,
    object: &str,
    signature: &[u8],
) {
    ledger.examined(Check::Mix08, 1);
    if !check_signature_of_digest(
        p,
        digest,
        &signed.head,
        signed.kind,
        &signed.name,
        &signed.payload,
        signature,
    ) {
        ledger.fail(
            Check::Mix08,
            object,
            format!(
                "not the signature of the authority the parameters name for {}",
                signed.name
            ),
        );
    }
}

/// V-MIX-08 in a record whose parameters name no keys: vacuous, and said so.
pub(crate) fn check_unsigned(ledger: &mut Ledger) {
    ledger.examined(Check::Mix08, 0);
    ledger.warn(
        Check::Mix08,
        "parameters",
        "the parameters name no signing keys: one process made every authority's entries \
         (votum mix without --processes), and the record cannot show which authority made which",
    );
}

/// V-MIX-02, trustee `i`'s entry: a quorum of commitments and a proof of knowledge of the first
/// one's key under the parameters' digest. Returns its commitments (one placeholder when it posted
/// none, so that the shares can still be named), or `None` when it cannot be read (an Error; the
/// walk stops).
pub(crate) fn check_trustee<G: Group>(
    ledger: &mut Ledger,
    group: &G,
    p: &Parameters,
    digest: &[u8; 32],
    (i, name): (u64, &str),
    payload: &[u8],
) -> Option<Vec<G::Element>> {
    ledger.examined(Check::Mix02, 1);
    let (c, proof) = match wire::decode_trustee(group, payload) {
        Ok(x) => x,
        Err(e) => {
            ledger.error(Check::Mix02, name, e.to_string());
            return None;
        }
    };
    if c.len() != p.quorum {
        ledger.fail(
            Check::Mix02,
            name,
            format!("{} commitments (quorum {})", c.len(), p.quorum),
        );
    } else if let Err(e) = proof.verify(group, &trustee_oracle(digest, i), &c[0]) {
        ledger.fail(
            Check::Mix02,
            name,
            format!("proof of knowledge of the key: {e}"),
        );
    }
    Some(if c.is_empty() {
        vec![group.identity()]
    } else {
        c
    })
}

/// V-MIX-02, the posted public key: the product `joint` of the trustees' constant commitments.
pub(crate) fn check_public_key<G: Group>(
    ledger: &mut Ledger,
    group: &G,
    payload: &[u8],
    joint: &G::Element,
) {
    ledger.examined(Check::Mix02, 1);
    if payload != group.encode_element(joint) {
        ledger.fail(
            Check::Mix02,
            "public-key",
            "not the product of the trustees' constant commitments",
        );
    }
}

/// V-MIX-03, the ballots: each one's proofs of knowledge under `context` (the head after the public
/// key). Returns the number of ballots and their ciphertexts in ballot order, or `None` when the
/// entry cannot be read (an Error; the walk stops).
pub(crate) fn check_ballots<G: Group>(
    ledger: &mut Ledger,
    group: &G,
    context: &[u8; 32],
    w: usize,
    payload: &[u8],
) -> Option<(u64, Vec<Ciphertext<G>>)> {
    let ballots = match wire::decode_ballots(group, payload, w) {
        Ok(b) => b,
        Err(e) => {
            ledger.error(Check::Mix03, "ballots", e.to_string());
            return None;
        }
    };
    let n = ballots.len() as u64;
    ledger.examined(Check::Mix03, n);
    if let Err(e) = verify_ballots(group, context, w, &ballots) {
        ledger.fail(Check::Mix03, "ballots", e.to_string());
    }
    Some((n, ballots.into_iter().flat_map(|b| b.cts).collect()))
}

/// V-MIX-03, the input list: the ballots' ciphertexts `cast`, in ballot order, `w` to a row.
/// Returns the list, or `None` when it cannot be read (an Error; the walk stops).
pub(crate) fn check_input<G: Group>(
    ledger: &mut Ledger,
    group: &G,
    payload: &[u8],
    cast: &[Ciphertext<G>],
    w: usize,
    rng: &mut (impl RngCore + CryptoRng),
) -> Option<Rows<G>> {
    let input = match Rows::decode(group, payload, rng) {
        Ok(r) => r,
        Err(e) => {
            ledger.error(Check::Mix03, "input", format!("input list: {e}"));
            return None;
        }
    };
    ledger.examined(Check::Mix03, 1);
    if input.width() != w || input.ciphertexts() != cast {
        ledger.fail(
            Check::Mix03,
            "input",
            "the input list is not the ballots' ciphertexts in ballot order",
        );
    }
    Some(input)
}

/// Why a shuffle's output list cannot be its input's (another length or width), if it cannot.
pub(crate) fn size_mismatch<G: Group>(out: &Rows<G>, input: &Rows<G>, w: usize) -> Option<String> {
    (out.len() != input.len() || out.width() != w).then(|| {
        format!(
            "{} rows of width {} (the input has {} of width {w})",
            out.len(),
            out.width(),
            input.len()
        )
    })
}

/// V-MIX-04, one mixer's entry: Ok((output, None)) when its proof verifies, Ok((output,
/// Some(reason))) when it does not, Err(reason) when the list or the proof cannot be read (or there
/// is no input list to check it against).
pub(crate) fn check_mix<G: Group>(
    group: &G,
    joint: &G::Element,
    generators: Option<&Generators<G>>,
    context: &[u8; 32],
    input: Option<&Rows<G>>,
    payload: &[u8],
    w: usize,
) -> Result<(Rows<G>, Option<String>), String> {
    let rng = &mut weights_rng(&mut rand_core::OsRng);
    let (list, proof) = wire::split_mix(payload, group.element_len()).map_err(|e| e.to_string())?;
    let out = Rows::decode(group, list, rng).map_err(|e| format!("output list: {e}"))?;
    let (Some(input), Some(generators)) = (input, generators) else {
        return Err("no readable input list to check the shuffle against".into());
    };
    if let Some(reason) = size_mismatch(&out, input, w) {
        return Ok((out, Some(reason)));
    }
    let proof = ShuffleProof::decode(group, proof, input.len(), w, rng)
        .map_err(|e| format!("proof: {e}"))?;
    let verdict = proof
        .verify(group, joint, generators, context, input, &out, rng)
        .err()
        .map(|e| match e {
            // its own text already says "shuffle proof: equation …"
            votum_shuffle::ShuffleError::Equation { .. } => e.to_string(),
            _ => format!("shuffle proof: {e}"),
        });
    Ok((out, verdict))
}

/// V-MIX-04, as the ledger records a mixer's verdict (from here or from a worker).
pub(crate) fn record_mix<G: Group>(
    ledger: &mut Ledger,
    name: &str,
    result: Result<(Rows<G>, Option<String>), String>,
) -> Option<Rows<G>> {
    ledger.examined(Check::Mix04, 1);
    match result {
        Ok((out, None)) => Some(out),
        Ok((out, Some(e))) => {
            ledger.fail(Check::Mix04, name, e);
            Some(out)
        }
        Err(e) => {
            ledger.error(Check::Mix04, name, e);
            None
        }
    }
}

/// V-MIX-05, one decryption entry `name`: a share of a trustee that has posted none before
/// (`seen`), named after it, whose proof holds against the trustee's public share (from the
/// trustees' `commitments`) for the pads of the `last` list under `context`. Returns the share when
/// it holds, `Err(readable)` otherwise (`readable` false: it could not be decoded).
#[allow(clippy::too_many_arguments)]
pub(crate) fn check_share<G: Group>(
    ledger: &mut Ledger,
    group: &G,
    p: &Parameters,
    commitments: &[Vec<G::Element>],
    context: &[u8; 32],
    last: Option<&Rows<G>>,
    (name, payload): (&str, &[u8]),
    seen: &mut Vec<u64>,
) -> Result<DecryptionShare<G>, bool> {
    ledger.examined(Check::Mix05, 1);
    let share = match wire::decode_share(group, payload) {
        Ok(s) => s,
        Err(e) => {
            ledger.error(Check::Mix05, name, e.to_string());
            return Err(false);
        }
    };
    let t = share.trustee;
    if name != format!("decryption-{t}") || t == 0 || t > p.trustees as u64 || seen.contains(&t) {
        ledger.fail(
            Check::Mix05,
            name,
            format!("a share of trustee {t}: not a trustee, posted twice or misnamed"),
        );
        return Err(true);
    }
    seen.push(t);
    let Some(last) = last else {
        return Err(true);
    };
    let pads: Vec<G::Element> = last.ciphertexts().iter().map(|c| c.pad.clone()).collect();
    match public_share(group, commitments, t)
        .and_then(|x| verify_share(group, &x, context, &pads, &share))
    {
        Ok(()) => Ok(share),
        Err(e) => {
            ledger.fail(Check::Mix05, name, e.to_string());
            Err(true)
        }
    }
}

/// V-MIX-05, when the result is posted: a quorum of valid shares came before it.
pub(crate) fn check_quorum(ledger: &mut Ledger, valid: usize, quorum: usize) {
    if valid < quorum {
        ledger.fail(
            Check::Mix05,
            "decryption",
            format!("{valid} valid decryption shares; the quorum is {quorum}"),
        );
    }
}

/// V-MIX-06: the posted rows are the decryption of the `last` list with a quorum of `shares`,
/// decoded.
pub(crate) fn check_decrypted<G: Group>(
    ledger: &mut Ledger,
    group: &G,
    p: &Parameters,
    last: &Rows<G>,
    shares: &[DecryptionShare<G>],
    rows: &[Vec<u64>],
) {
    ledger.examined(Check::Mix06, rows.len() as u64);
    let datas: Vec<G::Element> = last.ciphertexts().iter().map(|c| c.data.clone()).collect();
    let refs: Vec<&DecryptionShare<G>> = shares.iter().collect();
    let decoded = combine(group, &datas, &refs).and_then(|els| {
        let codec = ValueCodec::new(group, p.candidates as u64)?;
        decode_rows(&codec, &els, p.width)
    });
    match decoded {
        Ok(d) if d == rows => {}
        Ok(d) => {
            let at = d
                .iter()
                .zip(rows)
                .position(|(a, b)| a != b)
                .unwrap_or(d.len().min(rows.len()));
            ledger.fail(
                Check::Mix06,
                "result",
                format!(
                    "posted row {at} is not the decryption of the last list's row {at} ({} rows posted, {} decrypted)",
                    rows.len(),
                    d.len()
                ),
            );
        }
        Err(e) => ledger.fail(Check::Mix06, "result", e.to_string()),
    }
}

/// V-MIX-07: the posted outcome is the count of the posted rows. Returns the recount, or `None`
/// when a row is of another width.
pub(crate) fn check_outcome(
    ledger: &mut Ledger,
    p: &Parameters,
    rows: &[Vec<u64>],
    posted: &Outcome,
) -> Option<Outcome> {
    ledger.examined(Check::Mix07, 1);
    if rows.iter().any(|r| r.len() != p.width) {
        ledger.fail(Check::Mix07, "result", "rows of another width");
        return None;
    }
    let recount = count(p.rule, p.ties, p.candidates, rows);
    if !recount.same_posted(posted) {
        ledger.fail(
            Check::Mix07,
            "result",
            format!(
                "the posted outcome (winners {:?}, tallies {:?}) is not the count of the posted rows (winners {:?}, tallies {:?})",
                posted.winners, posted.tallies, recount.winners, recount.tallies
            ),
        );
    }
    Some(recount)
}
