//! A prover's powers computed elsewhere (spec/98.7): the shuffle's heavy work is batches of
//! powers of three fixed bases (g, the key, h) and a few multi-exponentiations, which seed 004
//! sent in bulk to a cluster. A [`PowWorkers`] takes those batches as canonical bytes; the prover
//! keeps everything else (the permutation, the transcript, the challenges, the responses). The
//! workers belong to the mixer's own trust domain: the exponents they see are the mixer's secrets.

use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use rayon::prelude::*;
use sha2::{Digest, Sha256};
use votum_elgamal::PublicKey;
use votum_group::Group;
use zeroize::Zeroize;

use crate::ShuffleError;

/// A fixed base the prover raises to many exponents.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Base {
    /// The group's generator.
    G,
    /// The election's public key.
    Pk,
    /// The chain's generator h (spec/90.1).
    H,
}

impl Base {
    pub fn name(self) -> &'static str {
        match self {
            Base::G => "g",
            Base::Pk => "pk",
            Base::H => "h",
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "g" => Some(Base::G),
            "pk" => Some(Base::Pk),
            "h" => Some(Base::H),
            _ => None,
        }
    }
}

/// Batches of powers done elsewhere, for one shuffle at a time. Scalars and elements cross as the
/// group's canonical fixed-width encodings, concatenated.
pub trait PowWorkers {
    /// Once per shuffle: the group's name, the key and h, encoded (workers build their tables of
    /// the three bases from them once and keep them).
    fn setup(&mut self, group: &str, pk: &[u8], h: &[u8]) -> Result<(), String>;
    /// For each chunk (a base, scalars), the base raised to each scalar, in order; all chunks in
    /// flight at once. The scalars are secrets: the caller wipes them after.
    fn fixed(&mut self, chunks: &[(Base, Vec<u8>)]) -> Result<Vec<Vec<u8>>, String>;
    /// For each job (bases, scalars), the product of the powers; all jobs in flight at once.
    fn multi(&mut self, jobs: &[(Vec<u8>, Vec<u8>)]) -> Result<Vec<Vec<u8>>, String>;
    /// How many pieces to cut a batch into (about twice the workers' threads).
    fn pieces(&self) -> usize;
}

/// Elements the caller's own workers computed: decoded with the group's batched membership test,
/// its weights drawn from a hash of the bytes (the elements come from inside the trust domain; a
/// wrong one makes a proof that fails its checks, never a wrong answer).
pub(crate) fn decode_trusted<G: Group>(
    group: &G,
    bytes: &[u8],
    n: usize,
) -> Result<Vec<G::Element>, ShuffleError> {
    if bytes.len() != n * group.element_len() {
        return Err(ShuffleError::Workers(format!(
            "{} bytes where {n} elements were asked for",
            bytes.len()
        )));
    }
    let mut rng = ChaCha20Rng::from_seed(Sha256::digest(bytes).into());
    group
        .decode_many(bytes, &mut rng)
        .map_err(|(i, e)| ShuffleError::Workers(format!("element {i} of an answer: {e}")))
}

fn encode_scalars<G: Group>(group: &G, xs: &[G::Scalar]) -> Vec<u8> {
    let mut out = Vec::with_capacity(xs.len() * group.scalar_len());
    for x in xs {
        let mut b = group.encode_scalar(x);
        out.extend_from_slice(&b);
        b.zeroize();
    }
    out
}

fn decode_scalars<G: Group>(group: &G, bytes: &[u8]) -> Result<Vec<G::Scalar>, String> {
    let len = group.scalar_len();
    if !bytes.len().is_multiple_of(len) {
        return Err(format!(
            "{} bytes are not whole scalars of {len}",
            bytes.len()
        ));
    }
    bytes
        .par_chunks(len)
        .map(|c| group.decode_scalar(c).map_err(|e| e.to_string()))
        .collect()
}

/// For each batch (a base, its exponents), the base raised to each, on `workers`: every batch cut
/// into their number of pieces, all pieces of all batches in flight at once.
pub(crate) fn fixed<G: Group>(
    group: &G,
    workers: &mut dyn PowWorkers,
    batches: &[(Base, &[G::Scalar])],
) -> Result<Vec<Vec<G::Element>>, ShuffleError> {
    let pieces = workers.pieces().max(1);
    let mut chunks: Vec<(Base, Vec<u8>)> = Vec::new();
    let mut sizes: Vec<Vec<usize>> = Vec::with_capacity(batches.len());
    for (base, xs) in batches {
        let per = xs.len().div_ceil(pieces).max(1);
        sizes.push(xs.chunks(per).map(<[_]>::len).collect());
        chunks.extend(xs.chunks(per).map(|c| (*base, encode_scalars(group, c))));
    }
    let got = workers.fixed(&chunks);
    chunks.iter_mut().for_each(|(_, c)| c.zeroize());
    let got = got.map_err(ShuffleError::Workers)?;
    let want: usize = sizes.iter().map(Vec::len).sum();
    if got.len() != want {
        return Err(ShuffleError::Workers(format!(
            "{} answers for {want} pieces",
            got.len()
        )));
    }
    let mut answers = got.into_iter();
    sizes
        .iter()
        .map(|batch| {
            let bytes: Vec<u8> = answers.by_ref().take(batch.len()).flatten().collect();
            decode_trusted(group, &bytes, batch.iter().sum())
        })
        .collect()
}

/// A multi-exponentiation to do: its bases and exponents.
pub(crate) type MultiJob<'a, G> = (&'a [<G as Group>::Element], &'a [<G as Group>::Scalar]);

/// For each (bases, exponents) pair, Π bᵢ^eᵢ, on `workers`, each cut into their number of
/// pieces, every piece in flight at once.
pub(crate) fn multi<G: Group>(
    group: &G,
    workers: &mut dyn PowWorkers,
    jobs: &[MultiJob<'_, G>],
) -> Result<Vec<G::Element>, ShuffleError> {
    let pieces = workers.pieces().max(1);
    let mut sent = Vec::new();
    let mut owner = Vec::new();
    for (j, (bases, xs)) in jobs.iter().enumerate() {
        if bases.len() != xs.len() {
            return Err(ShuffleError::Length {
                what: "exponents",
                expected: bases.len(),
                got: xs.len(),
            });
        }
        let per = bases.len().div_ceil(pieces).max(1);
        for (b, x) in bases.chunks(per).zip(xs.chunks(per)) {
            let mut eb = Vec::with_capacity(b.len() * group.element_len());
            for e in b {
                eb.extend_from_slice(&group.encode_element(e));
            }
            sent.push((eb, encode_scalars(group, x)));
            owner.push(j);
        }
    }
    let got = workers.multi(&sent);
    for (_, x) in &mut sent {
        x.zeroize();
    }
    let got = got.map_err(ShuffleError::Workers)?;
    if got.len() != owner.len() {
        return Err(ShuffleError::Workers(format!(
            "{} answers for {} pieces",
            got.len(),
            owner.len()
        )));
    }
    let parts = decode_trusted(group, &got.concat(), owner.len())?;
    let mut out = vec![group.identity(); jobs.len()];
    for (j, p) in owner.into_iter().zip(parts) {
        out[j] = group.op(&out[j], &p);
    }
    Ok(out)
}

/// A worker's side (spec/98.7): tables of g, the key and h for one shuffle's key, and the two
/// batch operations on canonical bytes, in parallel on this process's threads.
pub struct PowTables<G: Group> {
    group: G,
    pk: PublicKey<G>,
    h: G::Table,
}

impl<G: Group> PowTables<G> {
    /// From the key and h, encoded (each checked for membership once).
    pub fn new(group: G, pk: &[u8], h: &[u8]) -> Result<Self, String> {
        let key = group.decode_element(pk).map_err(|e| format!("key: {e}"))?;
        let pk = PublicKey::with_table(&group, key).map_err(|e| format!("key: {e}"))?;
        let h = group.decode_element(h).map_err(|e| format!("h: {e}"))?;
        let h = group.table(&h);
        Ok(Self { group, pk, h })
    }

    /// `base` raised to each scalar of `exps`, encoded and concatenated in order.
    pub fn fixed(&self, base: Base, exps: &[u8]) -> Result<Vec<u8>, String> {
        let g = &self.group;
        let mut xs = decode_scalars(g, exps)?;
        let out: Vec<Vec<u8>> = xs
            .par_iter()
            .map(|x| {
                let e = match base {
                    Base::G => g.pow_generator(x),
                    Base::Pk => self.pk.pow(g, x),
                    Base::H => g.pow_table(&self.h, x),
                };
                g.encode_element(&e)
            })
            .collect();
        xs.zeroize();
        Ok(out.concat())
    }

    /// Π bᵢ^eᵢ of encoded bases and scalars, encoded.
    pub fn multi(&self, bases: &[u8], exps: &[u8]) -> Result<Vec<u8>, String> {
        let g = &self.group;
        let n = bases.len() / g.element_len().max(1);
        let bases = decode_trusted(g, bases, n).map_err(|e| e.to_string())?;
        let mut xs = decode_scalars(g, exps)?;
        let out = g
            .multi_pow_par(&bases, &xs)
            .map_err(|e| format!("multi-exponentiation: {e}"));
        xs.zeroize();
        Ok(g.encode_element(&out?))
    }
}
