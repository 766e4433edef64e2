//! The CHVote record file (spec/92.10): a board file (spec/91.7's layout, magic `VOTUMCHV`) of the
//! parameters, the authorities' key shares and public voter data, every voter's ballot, the
//! authorities' responses, the confirmation and the finalizations, the input list, every shuffle,
//! every decryption share and the result. Encoders and decoders of every payload live here; the
//! verifier (votum-verify's `chv`) reads them back.

use std::io::{Read, Write};

use rand_core::{CryptoRng, RngCore};
use votum_arith::{Integer, Order};
use votum_group::{Group, ModElement, ModpGroup};
use votum_hash::board_file as bf;
use votum_mixnet::decrypt::DecryptionShare;
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
        bf::BoardReader::new(input, MAGIC, WHAT)
            .map(Self)
            .map_err(|e| e.to_string())
    }

    pub fn next_entry(&mut self) -> Result<Option<Entry>, String> {
        self.0.next_entry().map_err(|e| e.to_string())
    }

    pub fn head(&self) -> [u8; 32] {
        self.0.head()
    }
}

// --- byte helpers ----------------------------------------------------------------------------

#[derive(Default)]
struct Out(Vec<u8>);

impl Out {
    fn u32(&mut self, v: usize) {
        self.0.extend((v as u32).to_be_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend(v.to_be_bytes());
    }
    fn el(&mut self, g: &ModpGroup, e: &ModElement) {
        self.0.extend(g.encode_element(e));
    }
    fn els(&mut self, g: &ModpGroup, es: &[ModElement]) {
        self.u32(es.len());
        es.iter().for_each(|e| self.el(g, e));
    }
    fn int(&mut self, g: &ModpGroup, x: &Integer) {
        let digits = x.to_digits::<u8>(Order::Msf);
        let width = g.scalar_len();
        self.0
            .extend(std::iter::repeat_n(0u8, width.saturating_sub(digits.len())));
        self.0.extend(digits);
    }
    fn bytes(&mut self, b: &[u8]) {
        self.u32(b.len());
        self.0.extend_from_slice(b);
    }
}

struct In<'a> {
    what: &'static str,
    b: &'a [u8],
}

impl<'a> In<'a> {
    fn new(what: &'static str, b: &'a [u8]) -> Self {
        Self { what, b }
    }
    fn err(&self, why: &str) -> ChvoteError {
        bad(&format!("{}: {why}", self.what))
    }
    fn take(&mut self, n: usize) -> Result<&'a [u8], ChvoteError> {
        if self.b.len() < n {
            return Err(self.err("truncated"));
        }
        let (head, rest) = self.b.split_at(n);
        self.b = rest;
        Ok(head)
    }
    fn u8(&mut self) -> Result<u8, ChvoteError> {
        Ok(self.take(1)?[0])
    }
    fn u32(&mut self) -> Result<usize, ChvoteError> {
        let b = self.take(4)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize)
    }
    fn u64(&mut self) -> Result<u64, ChvoteError> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_be_bytes(a))
    }
    /// A count that the rest of the payload can hold at `unit` bytes an item.
    fn count(&mut self, unit: usize) -> Result<usize, ChvoteError> {
        let n = self.u32()?;
        if n.saturating_mul(unit.max(1)) > self.b.len() {
            return Err(self.err("a count longer than the payload"));
        }
        Ok(n)
    }
    fn el(&mut self, g: &ModpGroup, what: &'static str) -> Result<ModElement, ChvoteError> {
        let b = self.take(g.element_len())?;
        g.decode_element(b)
            .map_err(|_| ChvoteError::NotInGroup(what))
    }
    fn els(&mut self, g: &ModpGroup, what: &'static str) -> Result<Vec<ModElement>, ChvoteError> {
        let n = self.count(g.element_len())?;
        (0..n).map(|_| self.el(g, what)).collect()
    }
    fn int(&mut self, g: &ModpGroup) -> Result<Integer, ChvoteError> {
        Ok(Integer::from_digits(self.take(g.scalar_len())?, Order::Msf))
    }
    fn bytes(&mut self) -> Result<Vec<u8>, ChvoteError> {
        let n = self.count(1)?;
        Ok(self.take(n)?.to_vec())
    }
    fn done(&self) -> Result<(), ChvoteError> {
        if self.b.is_empty() {
            Ok(())
        } else {
            Err(self.err("bytes after the end"))
        }
    }
}

// --- payloads --------------------------------------------------------------------------------

/// `parameters`: level, s, then the election set (t, (n_j, k_j)…, N, each voter's eligibility as
/// ⌈t/8⌉ bytes).
pub fn parameters_bytes(params: &Params, set: &ElectionSet) -> Vec<u8> {
    let mut o = Out::default();
    o.0.push(params.level().number());
    o.u32(params.authorities());
    o.u32(set.elections());
    for (&n, &k) in set.candidates.iter().zip(&set.selections) {
        o.u32(n);
        o.u32(k);
    }
    o.u32(set.voters());
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
    o.0
}

pub fn decode_parameters(bytes: &[u8]) -> Result<(Params, ElectionSet), ChvoteError> {
    let mut i = In::new("parameters", bytes);
    let level = Level::from_number(i.u8()?)?;
    let s = i.u32()?;
    let t = i.count(8)?;
    let mut candidates = Vec::with_capacity(t);
    let mut selections = Vec::with_capacity(t);
    for _ in 0..t {
        candidates.push(i.u32()?);
        selections.push(i.u32()?);
    }
    let width = t.div_ceil(8);
    let voters = i.count(width)?;
    let mut eligible = Vec::with_capacity(voters);
    for _ in 0..voters {
        let b = i.take(width)?;
        eligible.push((0..t).map(|j| b[j / 8] >> (j % 8) & 1 == 1).collect());
    }
    i.done()?;
    let set = ElectionSet {
        candidates,
        selections,
        eligible,
    };
    set.check()?;
    Ok((Params::new(level, s)?, set))
}

pub fn key_share_bytes(params: &Params, pk: &ModElement) -> Vec<u8> {
    params.eg().encode_element(pk)
}

pub fn decode_key_share(params: &Params, bytes: &[u8]) -> Result<ModElement, ChvoteError> {
    let mut i = In::new("key share", bytes);
    let e = i.el(params.eg(), "a key share")?;
    i.done()?;
    Ok(e)
}

/// `voter-data`: per voter x̂_ij, ŷ_ij and the n point commitments.
pub fn voter_data_bytes(params: &Params, data: &[PublicVoterData]) -> Vec<u8> {
    let mut o = Out::default();
    o.u32(data.len());
    for d in data {
        o.el(params.ig(), &d.x_hat);
        o.el(params.ig(), &d.y_hat);
        o.u32(d.commitments.len());
        d.commitments.iter().for_each(|c| o.0.extend_from_slice(c));
    }
    o.0
}

pub fn decode_voter_data(
    params: &Params,
    bytes: &[u8],
) -> Result<Vec<PublicVoterData>, ChvoteError> {
    let ig = params.ig();
    let mut i = In::new("voter data", bytes);
    let n = i.count(2 * ig.element_len())?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let x_hat = i.el(ig, "a public voting credential")?;
        let y_hat = i.el(ig, "a public confirmation credential")?;
        let m = i.count(32)?;
        let mut commitments = Vec::with_capacity(m);
        for _ in 0..m {
            let mut c = [0u8; 32];
            c.copy_from_slice(i.take(32)?);
            commitments.push(c);
        }
        out.push(PublicVoterData {
            x_hat,
            y_hat,
            commitments,
        });
    }
    i.done()?;
    Ok(out)
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
        x_hat: i.el(ig, "x̂")?,
        queries: i.els(eg, "a query")?,
        b: i.el(eg, "b")?,
        proof: BallotProof {
            t1: i.el(ig, "t1")?,
            t2: i.el(eg, "t2")?,
            t3: i.el(eg, "t3")?,
            s1: i.int(ig)?,
            s2: i.el(eg, "s2")?,
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
    o.u32(rs.len());
    for r in rs {
        o.els(eg, &r.b);
        o.u32(r.c.len());
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
        let b = i.els(eg, "a response's b")?;
        let m = i.count(4)?;
        let c = (0..m).map(|_| i.bytes()).collect::<Result<Vec<_>, _>>()?;
        let d = i.els(eg, "a response's d")?;
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
        y_hat: i.el(ig, "ŷ")?,
        t: i.el(ig, "t")?,
        s: i.int(ig)?,
    };
    i.done()?;
    Ok(c)
}

/// `finalizations`: the s authorities' δ_j (F_j and the revealed exponents).
pub fn finalizations_bytes(params: &Params, fs: &[Finalization]) -> Vec<u8> {
    let mut o = Out::default();
    o.u32(fs.len());
    for f in fs {
        o.bytes(&f.f);
        o.u32(f.r.len());
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
    o.u64(rows.len() as u64);
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
    let len = i.u64()? as usize;
    let list = i.take(len)?;
    let out =
        Rows::decode(params.eg(), list, rng).map_err(|e| bad(&format!("shuffle list: {e}")))?;
    if out.len() != rows {
        return Err(bad("a shuffle of another length"));
    }
    let proof = ShuffleProof::decode(params.eg(), i.b, rows, 1, rng)
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
    o.u32(counts.len());
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
