//! The CHVote record file (spec/92.10): a board file (spec/91.7's layout, magic `VOTUMCHV`) of the
//! parameters, the authorities' key shares and public voter data, every voter's ballot, the
//! authorities' responses, the confirmation and the finalizations, the input list, every shuffle,
//! every decryption share and the result. Encoders and decoders of every payload live here; the
//! verifier (votum-verify's `chv`) reads them back.

use std::io::{Read, Write};

use rand_core::{CryptoRng, RngCore};
use votum_arith::{to_fixed_be, Integer, Order};
use votum_group::{Group, ModElement, ModpGroup};
use votum_hash::board_file as bf;
use votum_mixnet::decrypt::DecryptionShare;
use votum_mixnet::wire::Cursor;
use votum_proofs::{NativeOracle, SchnorrProof};
use votum_shuffle::{Rows, ShuffleProof};

use crate::election::ElectionSet;
use crate::messages::{Ballot, BallotProof, Confirmation, Finalization, PublicVoterData, Response};
use crate::params::{Level, Params};
use crate::ChvoteError;

pub const MAGIC: &[u8; 8] = b"VOTUMCHV";
const WHAT: &str = "CHVote record";

pub use bf::Entry;

/// Whether the file at `path` starts like a CHVote record.
pub fn is_chvote_record(path: &std::path::Path) -> bool {
    bf::has_magic(path, MAGIC)
}

fn bad(what: &str) -> ChvoteError {
    ChvoteError::Parameters(format!("record: {what}"))
}

/// Writes a record entry by entry.
pub struct RecordWriter<W: Write>(bf::BoardWriter<W>);

impl<W: Write> RecordWriter<W> {
    pub fn new(out: W, election_id: &str) -> Result<Self, ChvoteError> {
        bf::BoardWriter::new(out, MAGIC, election_id)
            .map(Self)
            .map_err(|e| bad(&e.to_string()))
    }

    pub fn append(&mut self, kind: &str, name: &str, payload: &[u8]) -> Result<(), ChvoteError> {
        self.0
            .append(kind, name, payload)
            .map(|_| ())
            .map_err(|e| bad(&e.to_string()))
    }

    pub fn head(&self) -> [u8; 32] {
        self.0.head()
    }

    pub fn into_inner(self) -> Result<W, ChvoteError> {
        self.0.into_inner().map_err(|e| bad(&e.to_string()))
    }
}

/// Reads a record entry by entry (the chain recomputed as it goes).
pub struct RecordReader<R: Read>(bf::BoardReader<R>);

impl<R: Read> RecordReader<R> {
    pub fn new(input: R) -> Result<Self, String> {
        Self::open(input).map_err(|e| e.to_string())
    }

    /// Reads and checks the header, its errors as the board file's (a version this build does not
    /// read is told apart).
    pub fn open(input: R) -> Result<Self, bf::BoardFileError> {
        bf::BoardReader::new(input, MAGIC, WHAT).map(Self)
    }

    pub fn next_entry(&mut self) -> Result<Option<Entry>, String> {
        self.0.next_entry().map_err(|e| e.to_string())
    }

    /// The next entry, its length checked against `bound(kind, name)` before it is read (see
    /// [`EntryBounds`]).
    pub fn next_entry_within(
        &mut self,
        bound: impl FnOnce(&str, &str) -> bf::Bound,
    ) -> Result<Option<Entry>, String> {
        self.0.next_entry_within(bound).map_err(|e| e.to_string())
    }

    pub fn head(&self) -> [u8; 32] {
        self.0.head()
    }

    /// The election id in the record's header.
    pub fn election_id(&self) -> &str {
        self.0.election_id()
    }
}

// --- byte helpers ----------------------------------------------------------------------------

/// Writes a payload: counts as u64, elements at their group's width (votum-mixnet's wire
/// encoding), integers at the width of their group's scalars.
#[derive(Default)]
pub(crate) struct Out(pub(crate) Vec<u8>);

impl Out {
    pub(crate) fn u64(&mut self, v: u64) {
        self.0.extend(v.to_be_bytes());
    }
    pub(crate) fn count(&mut self, n: usize) {
        self.u64(n as u64);
    }
    pub(crate) fn el(&mut self, g: &ModpGroup, e: &ModElement) {
        self.0.extend(g.encode_element(e));
    }
    pub(crate) fn els(&mut self, g: &ModpGroup, es: &[ModElement]) {
        votum_mixnet::wire::put_elements(g, es, &mut self.0);
    }
    pub(crate) fn int(&mut self, g: &ModpGroup, x: &Integer) {
        self.0.extend(to_fixed_be(x, g.scalar_len()));
    }
    pub(crate) fn bytes(&mut self, b: &[u8]) {
        self.count(b.len());
        self.0.extend_from_slice(b);
    }
}

/// Reads a payload with votum-mixnet's cursor, its errors as this crate's.
pub(crate) struct In<'a>(Cursor<'a>);

fn rec(e: votum_mixnet::MixError) -> ChvoteError {
    bad(&e.to_string())
}

impl<'a> In<'a> {
    pub(crate) fn new(what: &'static str, b: &'a [u8]) -> Self {
        Self(Cursor::new(what, b))
    }
    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], ChvoteError> {
        self.0.take(n).map_err(rec)
    }
    pub(crate) fn u8(&mut self) -> Result<u8, ChvoteError> {
        Ok(self.take(1)?[0])
    }
    pub(crate) fn u64(&mut self) -> Result<u64, ChvoteError> {
        self.0.u64().map_err(rec)
    }
    /// A number that must fit a `usize` (an index or a size, not a count of items that follow).
    pub(crate) fn num(&mut self) -> Result<usize, ChvoteError> {
        usize::try_from(self.u64()?).map_err(|_| bad("a number out of range"))
    }
    /// A count of items of `unit` bytes that the rest of the payload must hold.
    pub(crate) fn count(&mut self, unit: usize) -> Result<usize, ChvoteError> {
        self.0.count(unit).map_err(rec)
    }
    pub(crate) fn el(&mut self, g: &ModpGroup) -> Result<ModElement, ChvoteError> {
        self.0.element(g).map_err(rec)
    }
    pub(crate) fn els(&mut self, g: &ModpGroup) -> Result<Vec<ModElement>, ChvoteError> {
        self.0.elements(g).map_err(rec)
    }
    /// An integer at the width of `g`'s scalars, not reduced (proof checks test the range).
    pub(crate) fn int(&mut self, g: &ModpGroup) -> Result<Integer, ChvoteError> {
        Ok(Integer::from_digits(self.take(g.scalar_len())?, Order::Msf))
    }
    pub(crate) fn bytes(&mut self) -> Result<Vec<u8>, ChvoteError> {
        let n = self.count(1)?;
        Ok(self.take(n)?.to_vec())
    }
    pub(crate) fn done(&self) -> Result<(), ChvoteError> {
        self.0.done().map_err(rec)
    }
}

// --- payloads --------------------------------------------------------------------------------

/// How long each entry of a record may be, from its parameters (issue 43, item 9: a reader once read
/// any entry whole, up to 16 GiB, before any check). The bounds are generous (every element, scalar
/// and point counted at the widest of the record's widths, plus 8 bytes) but grow only with the
/// electorate and the ballot's shape, so a hostile length is refused before it is read.
#[derive(Clone, Copy, Debug)]
pub struct EntryBounds {
    /// The widest element, scalar or point of the record, plus 8.
    w: u64,
    authorities: u64,
    elections: u64,
    voters: u64,
    /// Σ n_j and Σ k_j.
    candidates: u64,
    selections: u64,
}

impl EntryBounds {
    pub fn new(params: &Params, set: &ElectionSet) -> Self {
        let (eg, ig) = (params.eg(), params.ig());
        let w = [
            eg.element_len(),
            eg.scalar_len(),
            ig.element_len(),
            ig.scalar_len(),
        ]
        .into_iter()
        .max()
        .unwrap_or(0) as u64
            + 8;
        Self {
            w,
            authorities: params.authorities() as u64,
            elections: set.elections() as u64,
            voters: set.voters() as u64,
            candidates: set.candidates.iter().sum::<usize>() as u64,
            selections: set.selections.iter().sum::<usize>() as u64,
        }
    }

    /// The bound of an entry of `kind` (an unknown kind is small: it is refused once read).
    pub fn of(&self, kind: &str) -> bf::Bound {
        let (w, s, t, n, k) = (
            self.w,
            self.authorities,
            self.elections,
            self.candidates,
            self.selections,
        );
        let voters = |per: u64, more: u64| self.voters.saturating_mul(per).saturating_add(more);
        bf::Bound::Max(match kind {
            "key-share" => 4 * w,
            // per voter x̂, ŷ, a count and a commitment per candidate
            "voter-data" => voters(2 * w + 8 + 32 * n, 8),
            "ballot" => (k + 10) * w,
            // per authority b per query, c per candidate (a point: two coordinates), d per election
            "responses" => 8 + s * (24 + k * w + n * (8 + 2 * w) + t * w),
            "confirmation" => 4 * w,
            "finalizations" => 8 + s * (24 + 2 * w + t * w),
            "input" => voters(2 * w, 64),
            // the list (two elements a row), then a Terelius–Wikström proof: three elements and
            // two scalars a row, and a few more of each
            "shuffle" => voters(8 * w, 64 * w),
            "decryption" => voters(w, 64 * w),
            "result" => 64 + 8 * n,
            "trace" => voters(16 + 3 * w, 8),
            "signature" => 64,
            _ => 64 * w,
        })
    }
}

/// The bound of a `parameters` payload from its own leading numbers (level, s, t, the t pairs
/// (n_j, k_j), then N): at most 1 MiB is looked at, and a payload longer than those numbers make it
/// is refused unread.
pub fn parameters_peek(b: &[u8]) -> bf::Peek {
    let num = |at: usize| -> Option<u64> {
        b.get(at..at + 8)
            .map(|x| u64::from_be_bytes(x.try_into().unwrap_or([0; 8])))
    };
    let Some(t) = num(9) else {
        return bf::Peek::More(17);
    };
    // a t the 1 MiB of peeking cannot hold is not a record's: bounded to what is read already
    let Some(n_at) = t
        .checked_mul(16)
        .and_then(|x| x.checked_add(17))
        .filter(|&x| x + 8 <= bf::PEEK_MAX)
    else {
        return bf::Peek::Max(17);
    };
    let Some(voters) = num(n_at as usize) else {
        return bf::Peek::More(n_at + 8);
    };
    bf::Peek::Max(
        voters
            .saturating_mul(t.div_ceil(8))
            .saturating_add(n_at + 16 + MAX_ELECTION_ID as u64 + 8 + 64 * 32),
    )
}

/// The longest election id a `parameters` payload takes.
pub const MAX_ELECTION_ID: usize = 256;

/// `parameters`: level, s, then the election set (t, (n_j, k_j)…, N, each voter's eligibility as
/// ⌈t/8⌉ bytes), then the election id (u64 length, UTF-8): the id is bound into the election
/// digest (spec/92.3) and must equal the record's.
pub fn parameters_bytes(params: &Params, set: &ElectionSet, election_id: &str) -> Vec<u8> {
    let mut o = Out::default();
    o.0.push(params.level().number());
    o.count(params.authorities());
    o.count(set.elections());
    for (&n, &k) in set.candidates.iter().zip(&set.selections) {
        o.count(n);
        o.count(k);
    }
    o.count(set.voters());
    let width = set.elections().div_ceil(8);
    for e in &set.eligible {
        let mut bytes = vec![0u8; width];
        for (j, &x) in e.iter().enumerate() {
            if x {
                bytes[j / 8] |= 1 << (j % 8);
            }
        }
        o.0.extend(bytes);
    }
    o.bytes(election_id.as_bytes());
    o.count(params.signers().len());
    params
        .signers()
        .iter()
        .for_each(|k| o.0.extend_from_slice(k));
    o.0
}

pub fn decode_parameters(bytes: &[u8]) -> Result<(Params, ElectionSet, String), ChvoteError> {
    let mut i = In::new("parameters", bytes);
    let level = Level::from_number(i.u8()?)?;
    let s = i.num()?;
    let t = i.count(8)?;
    if t == 0 {
        return Err(bad("no elections (t = 0)"));
    }
    let mut candidates = Vec::with_capacity(t);
    let mut selections = Vec::with_capacity(t);
    for _ in 0..t {
        candidates.push(i.num()?);
        selections.push(i.num()?);
    }
    let width = t.div_ceil(8);
    let voters = i.count(width)?;
    let mut eligible = Vec::with_capacity(voters);
    for _ in 0..voters {
        let b = i.take(width)?;
        eligible.push((0..t).map(|j| b[j / 8] >> (j % 8) & 1 == 1).collect());
    }
    if i.done().is_ok() {
        return Err(bad(
            "the parameters carry no election id (a record written before spec/92.3 bound the \
             election id and the joint key into the election digest): refused",
        ));
    }
    let id = i.bytes()?;
    if i.done().is_ok() {
        return Err(bad(
            "the parameters name no signing keys (a record written before spec/92.3 bound each \
             authority's node key into the election digest): refused",
        ));
    }
    let n = i.count(32)?;
    let signers = (0..n)
        .map(|_| {
            let mut k = [0u8; 32];
            k.copy_from_slice(i.take(32)?);
            Ok(k)
        })
        .collect::<Result<Vec<_>, ChvoteError>>()?;
    i.done()?;
    let election_id = String::from_utf8(id)
        .ok()
        .filter(|id| !id.is_empty() && id.len() <= MAX_ELECTION_ID)
        .ok_or_else(|| bad("the election id is not 1 to 256 bytes of UTF-8"))?;
    let set = ElectionSet {
        candidates,
        selections,
        eligible,
    };
    set.check()?;
    if signers.is_empty() {
        return Err(bad("the parameters name no signing keys"));
    }
    Ok((Params::signed(level, s, signers)?, set, election_id))
}

/// The context of authority `j`'s proof of knowledge of its key share (spec/92.3): the election
/// digest and `j`, so a proof is neither another election's nor another authority's.
pub fn key_share_oracle(digest: &[u8; 32], j: usize) -> NativeOracle {
    let mut context = b"votum/chvote/key-share/v1\0".to_vec();
    context.extend_from_slice(digest);
    context.extend_from_slice(&(j as u64).to_be_bytes());
    NativeOracle::new(&context)
}

/// `key-share`: pk_j, then its Schnorr proof (commitment, challenge, response).
pub fn key_share_bytes(
    params: &Params,
    pk: &ModElement,
    proof: &SchnorrProof<ModpGroup>,
) -> Vec<u8> {
    let g = params.eg();
    let mut o = Out::default();
    o.el(g, pk);
    o.el(g, &proof.commitment);
    o.0.extend(g.encode_scalar(&proof.challenge));
    o.0.extend(g.encode_scalar(&proof.response));
    o.0
}

/// Authority `j`'s key share, once its proof of knowledge verifies (spec/92.3): a share without
/// one (a record written before the proof, or a share chosen to cancel the others) is refused.
pub fn decode_key_share(
    params: &Params,
    digest: &[u8; 32],
    j: usize,
    bytes: &[u8],
) -> Result<ModElement, ChvoteError> {
    let g = params.eg();
    if bytes.len() == g.element_len() {
        return Err(bad(&format!(
            "authority {j}'s key share has no proof of knowledge (a record written before spec/92.3 \
             required one): refused"
        )));
    }
    let mut i = In::new("key share", bytes);
    let pk = i.el(g)?;
    let commitment = i.el(g)?;
    let scalar = |b: &[u8]| {
        g.decode_scalar(b)
            .map_err(|e| bad(&format!("key share: {e}")))
    };
    let challenge = scalar(i.take(g.scalar_len())?)?;
    let response = scalar(i.take(g.scalar_len())?)?;
    i.done()?;
    let proof = SchnorrProof {
        commitment,
        challenge,
        response,
    };
    proof
        .verify(g, &key_share_oracle(digest, j), &pk)
        .map_err(|e| {
            ChvoteError::Parameters(format!(
                "authority {j}'s key share: its proof of knowledge fails ({e})"
            ))
        })?;
    Ok(pk)
}

/// `voter-data`: per voter x̂_ij, ŷ_ij and the n point commitments.
pub fn voter_data_bytes(params: &Params, data: &[PublicVoterData]) -> Vec<u8> {
    let mut o = Out::default();
    o.count(data.len());
    for d in data {
        o.el(params.ig(), &d.x_hat);
        o.el(params.ig(), &d.y_hat);
        o.count(d.commitments.len());
        d.commitments.iter().for_each(|c| o.0.extend_from_slice(c));
    }
    o.0
}

pub fn decode_voter_data(
    params: &Params,
    bytes: &[u8],
) -> Result<Vec<PublicVoterData>, ChvoteError> {
    let ig = params.ig();
    let len = ig.element_len();
    let mut i = In::new("voter data", bytes);
    let n = i.count(2 * len)?;
    // the credentials' bytes first, then one batched membership test for all 2N of them
    let mut raw = Vec::with_capacity(2 * n * len);
    let mut all_commitments = Vec::with_capacity(n);
    for _ in 0..n {
        raw.extend_from_slice(i.take(2 * len)?);
        let m = i.count(32)?;
        let mut commitments = Vec::with_capacity(m);
        for _ in 0..m {
            let mut c = [0u8; 32];
            c.copy_from_slice(i.take(32)?);
            commitments.push(c);
        }
        all_commitments.push(commitments);
    }
    i.done()?;
    let elements = ig
        .decode_many(&raw, &mut rand_core::OsRng)
        .map_err(|(at, e)| bad(&format!("voter data: credential {at}: {e}")))?;
    // decode_many answers one element per `len` bytes: 2 per voter
    Ok(elements
        .chunks_exact(2)
        .zip(all_commitments)
        .map(|(pair, commitments)| PublicVoterData {
            x_hat: pair[0].clone(),
            y_hat: pair[1].clone(),
            commitments,
        })
        .collect())
}

pub fn ballot_bytes(params: &Params, b: &Ballot) -> Vec<u8> {
    let (eg, ig) = (params.eg(), params.ig());
    let mut o = Out::default();
    o.el(ig, &b.x_hat);
    o.els(eg, &b.queries);
    o.el(eg, &b.b);
    o.el(ig, &b.proof.t1);
    o.el(eg, &b.proof.t2);
    o.el(eg, &b.proof.t3);
    o.int(ig, &b.proof.s1);
    o.el(eg, &b.proof.s2);
    o.int(eg, &b.proof.s3);
    o.0
}

pub fn decode_ballot(params: &Params, bytes: &[u8]) -> Result<Ballot, ChvoteError> {
    let (eg, ig) = (params.eg(), params.ig());
    let mut i = In::new("ballot", bytes);
    let b = Ballot {
        x_hat: i.el(ig)?,
        queries: i.els(eg)?,
        b: i.el(eg)?,
        proof: BallotProof {
            t1: i.el(ig)?,
            t2: i.el(eg)?,
            t3: i.el(eg)?,
            s1: i.int(ig)?,
            s2: i.el(eg)?,
            s3: i.int(eg)?,
        },
    };
    i.done()?;
    Ok(b)
}

/// `responses`: the s authorities' responses to one ballot, in authority order.
pub fn responses_bytes(params: &Params, rs: &[Response]) -> Vec<u8> {
    let eg = params.eg();
    let mut o = Out::default();
    o.count(rs.len());
    for r in rs {
        o.els(eg, &r.b);
        o.count(r.c.len());
        r.c.iter().for_each(|c| o.bytes(c));
        o.els(eg, &r.d);
    }
    o.0
}

pub fn decode_responses(params: &Params, bytes: &[u8]) -> Result<Vec<Response>, ChvoteError> {
    let eg = params.eg();
    let mut i = In::new("responses", bytes);
    let n = i.count(12)?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let b = i.els(eg)?;
        let m = i.count(4)?;
        let c = (0..m).map(|_| i.bytes()).collect::<Result<Vec<_>, _>>()?;
        let d = i.els(eg)?;
        out.push(Response { b, c, d });
    }
    i.done()?;
    Ok(out)
}

pub fn confirmation_bytes(params: &Params, c: &Confirmation) -> Vec<u8> {
    let ig = params.ig();
    let mut o = Out::default();
    o.el(ig, &c.y_hat);
    o.el(ig, &c.t);
    o.int(ig, &c.s);
    o.0
}

pub fn decode_confirmation(params: &Params, bytes: &[u8]) -> Result<Confirmation, ChvoteError> {
    let ig = params.ig();
    let mut i = In::new("confirmation", bytes);
    let c = Confirmation {
        y_hat: i.el(ig)?,
        t: i.el(ig)?,
        s: i.int(ig)?,
    };
    i.done()?;
    Ok(c)
}

/// `finalizations`: the s authorities' δ_j (F_j and the revealed exponents).
pub fn finalizations_bytes(params: &Params, fs: &[Finalization]) -> Vec<u8> {
    let mut o = Out::default();
    o.count(fs.len());
    for f in fs {
        o.bytes(&f.f);
        o.count(f.r.len());
        f.r.iter().for_each(|r| o.int(params.eg(), r));
    }
    o.0
}

pub fn decode_finalizations(
    params: &Params,
    bytes: &[u8],
) -> Result<Vec<Finalization>, ChvoteError> {
    let eg = params.eg();
    let mut i = In::new("finalizations", bytes);
    let n = i.count(8)?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let f = i.bytes()?;
        let m = i.count(eg.scalar_len())?;
        let r = (0..m).map(|_| i.int(eg)).collect::<Result<Vec<_>, _>>()?;
        out.push(Finalization { f, r });
    }
    i.done()?;
    Ok(out)
}

/// `shuffle`: the output list, then the proof.
pub fn shuffle_bytes(
    params: &Params,
    out: &Rows<ModpGroup>,
    proof: &ShuffleProof<ModpGroup>,
) -> Vec<u8> {
    let mut o = Out::default();
    let rows = out.encode(params.eg());
    o.count(rows.len());
    o.0.extend(rows);
    o.0.extend(proof.encode(params.eg()));
    o.0
}

pub fn decode_shuffle<R: RngCore + CryptoRng>(
    params: &Params,
    bytes: &[u8],
    rows: usize,
    rng: &mut R,
) -> Result<(Rows<ModpGroup>, ShuffleProof<ModpGroup>), ChvoteError> {
    let mut i = In::new("shuffle", bytes);
    let len = i.count(1)?;
    let list = i.take(len)?;
    // the proof is the rest of the payload
    let rest = i.take(bytes.len() - 8 - len)?;
    i.done()?;
    let out =
        Rows::decode(params.eg(), list, rng).map_err(|e| bad(&format!("shuffle list: {e}")))?;
    if out.len() != rows {
        return Err(bad("a shuffle of another length"));
    }
    let proof = ShuffleProof::decode(params.eg(), rest, rows, 1, rng)
        .map_err(|e| bad(&format!("shuffle proof: {e}")))?;
    Ok((out, proof))
}

pub fn input_bytes(params: &Params, list: &Rows<ModpGroup>) -> Vec<u8> {
    list.encode(params.eg())
}

pub fn decode_input<R: RngCore + CryptoRng>(
    params: &Params,
    bytes: &[u8],
    rng: &mut R,
) -> Result<Rows<ModpGroup>, ChvoteError> {
    Rows::decode(params.eg(), bytes, rng).map_err(|e| bad(&format!("input list: {e}")))
}

pub fn share_bytes(params: &Params, share: &DecryptionShare<ModpGroup>) -> Vec<u8> {
    votum_mixnet::wire::share_bytes(params.eg(), share)
}

pub fn decode_share(
    params: &Params,
    bytes: &[u8],
) -> Result<DecryptionShare<ModpGroup>, ChvoteError> {
    votum_mixnet::wire::decode_share(params.eg(), bytes).map_err(|e| bad(&e.to_string()))
}

/// `result`: the count per candidate and the invalid count.
pub fn result_bytes(counts: &[u64], invalid: u64) -> Vec<u8> {
    let mut o = Out::default();
    o.count(counts.len());
    counts.iter().for_each(|&c| o.u64(c));
    o.u64(invalid);
    o.0
}

pub fn decode_result(bytes: &[u8]) -> Result<(Vec<u64>, u64), ChvoteError> {
    let mut i = In::new("result", bytes);
    let n = i.count(8)?;
    let counts = (0..n).map(|_| i.u64()).collect::<Result<Vec<_>, _>>()?;
    let invalid = i.u64()?;
    i.done()?;
    Ok((counts, invalid))
}

/// What an authority signs for an entry it posts (spec/92.10): the election digest, the entry's
/// kind and name, and its payload's SHA-256, under the node's record domain.
pub fn statement(digest: &[u8; 32], kind: &str, name: &str, payload: &[u8]) -> Vec<u8> {
    use sha2::Digest;
    let mut m = b"votum/v1/chvote/posted\0".to_vec();
    m.extend_from_slice(digest);
    for label in [kind, name] {
        m.push(label.len() as u8);
        m.extend_from_slice(label.as_bytes());
    }
    m.extend_from_slice(&sha2::Sha256::digest(payload));
    m
}

/// The `signature` entry's name for authority j's entry of `kind`.
pub fn signature_name(kind: &str, j: usize) -> String {
    format!("{kind}-authority-{j}")
}

/// Whether `signature` is authority j's (its key in the parameters) on its entry `kind`.
pub fn check_signature(
    params: &Params,
    digest: &[u8; 32],
    j: usize,
    kind: &str,
    payload: &[u8],
    signature: &[u8],
) -> bool {
    let (Some(key), Ok(sig)) = (params.signers().get(j), <[u8; 64]>::try_from(signature)) else {
        return false;
    };
    let name = format!("authority-{j}");
    votum_node::verify_record(key, &statement(digest, kind, &name, payload), &sig)
}

/// One step of tracing an invalid vote back through a shuffle (spec/92.8): authority j's output
/// row `output` is its input row `input`, `from`, re-encrypted with `nonce`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceStep {
    pub output: u64,
    pub input: u64,
    pub nonce: Integer,
    pub from: votum_elgamal::Ciphertext<ModpGroup>,
}

/// `trace`: u64 count, then per step output row (u64), input row (u64), the nonce (q's width),
/// the input row's pad and data.
pub fn trace_bytes(params: &Params, steps: &[TraceStep]) -> Vec<u8> {
    let eg = params.eg();
    let mut o = Out::default();
    o.count(steps.len());
    for t in steps {
        o.u64(t.output);
        o.u64(t.input);
        o.int(eg, &t.nonce);
        o.el(eg, &t.from.pad);
        o.el(eg, &t.from.data);
    }
    o.0
}

pub fn decode_trace(params: &Params, bytes: &[u8]) -> Result<Vec<TraceStep>, ChvoteError> {
    let eg = params.eg();
    let mut i = In::new("trace", bytes);
    let n = i.count(16 + eg.scalar_len() + 2 * eg.element_len())?;
    let steps = (0..n)
        .map(|_| {
            Ok(TraceStep {
                output: i.u64()?,
                input: i.u64()?,
                nonce: i.int(eg)?,
                from: votum_elgamal::Ciphertext {
                    pad: i.el(eg)?,
                    data: i.el(eg)?,
                },
            })
        })
        .collect::<Result<Vec<_>, ChvoteError>>()?;
    i.done()?;
    Ok(steps)
}

/// The voter a `voter-i` name is about.
pub fn voter_of(name: &str) -> Option<usize> {
    name.strip_prefix("voter-")?.parse().ok()
}

/// The authority an `authority-j` name is about.
pub fn authority_of(name: &str) -> Option<usize> {
    name.strip_prefix("authority-")?.parse().ok()
}

/// Every entry of a record held in memory (tests and small records): the election id and the
/// entries.
pub fn read_all(bytes: &[u8]) -> Result<(String, Vec<Entry>), ChvoteError> {
    bf::read_all(bytes, MAGIC, WHAT).map_err(|e| bad(&e.to_string()))
}
