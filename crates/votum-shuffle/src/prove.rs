//! The mixer's side: shuffle and prove (spec/90.2, 90.4).

use rand_chacha::ChaCha20Rng;
use rand_core::{CryptoRng, RngCore, SeedableRng};
use rayon::prelude::*;
use votum_elgamal::{Ciphertext, PublicKey};
use votum_group::Group;
use zeroize::Zeroize;

use crate::proof::ShuffleProof;
use crate::remote::{self, Base, PowWorkers};
use crate::rows::Rows;
use crate::transcript::{batching, challenge, Commitments, Statement};
use crate::{Generators, ShuffleError};

/// Order bits from which the chain runs by its recurrence within segments (one fixed-base power
/// and one 128-bit power per element) instead of its closed form (two fixed-base powers): a short
/// variable-base power is cheaper than a fixed-base one only when q is long (the 2048-bit group).
const RECURRENCE_FROM_BITS: u32 = 1024;
/// Order bits from which ω'_i (and so s'_i) are short (spec/90.4).
const SHORT_RESPONSES_FROM_BITS: u32 = 768;
/// Bits of ω'_i's random part where it is short: challenge (128) + batching (128) + statistical
/// hiding (128).
const MASK_BITS: u32 = 384;

impl<G: Group> Generators<G> {
    /// A fixed-base table of h, built on first use (the prover's commitments use it).
    fn h_table(&self, group: &G) -> &G::Table {
        self.h_table.get_or_init(|| group.table(&self.h))
    }
}

/// A shuffle whose secrets are drawn and whose ciphertext-independent work is done (spec/90.4
/// "offline"): the permutation, its commitment, the re-encryption factors Enc(1, r'), and t1, t2,
/// t3. [`PreparedShuffle::apply`] then shuffles and proves a list of exactly `rows × width`.
/// Secrets are zeroized when it is applied or dropped.
pub struct PreparedShuffle<G: Group> {
    group: G,
    pk: PublicKey<G>,
    generators: Generators<G>,
    rows: usize,
    width: usize,
    /// Output row i holds input row perm[i].
    perm: Vec<usize>,
    /// Enc(1, r'_ik), row-major by output row.
    factors: Vec<Ciphertext<G>>,
    nonces: Vec<G::Scalar>,
    /// r_j, by input row.
    r: Vec<G::Scalar>,
    commitments: Vec<G::Element>,
    r_hat: Vec<G::Scalar>,
    omega_hat: Vec<G::Scalar>,
    omega_prime: Vec<G::Scalar>,
    omega: [G::Scalar; 3],
    omega4: Vec<G::Scalar>,
    t: [G::Element; 3],
}

impl<G: Group> std::fmt::Debug for PreparedShuffle<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreparedShuffle")
            .field("rows", &self.rows)
            .field("width", &self.width)
            .finish_non_exhaustive()
    }
}

impl<G: Group> Drop for PreparedShuffle<G> {
    fn drop(&mut self) {
        self.perm.zeroize();
        self.nonces.zeroize();
        self.r.zeroize();
        self.r_hat.zeroize();
        self.omega_hat.zeroize();
        self.omega_prime.zeroize();
        self.omega.iter_mut().for_each(Zeroize::zeroize);
        self.omega4.zeroize();
    }
}

/// A shuffle's output list, its proof and what opens single outputs.
pub type OpenedShuffle<G> = (Rows<G>, ShuffleProof<G>, ShuffleOpening<G>);

/// What opens single outputs of a shuffle once it is made: output row o holds input row
/// `perm[o]` re-encrypted with `nonces[o·w .. (o+1)·w]`. Wiped when dropped; prints nothing secret.
pub struct ShuffleOpening<G: Group> {
    width: usize,
    perm: Vec<usize>,
    nonces: Vec<G::Scalar>,
}

impl<G: Group> ShuffleOpening<G> {
    /// The input row of output row `o`, and its re-encryption nonces (one per column).
    pub fn open(&self, o: usize) -> Option<(usize, &[G::Scalar])> {
        let i = *self.perm.get(o)?;
        Some((i, &self.nonces[o * self.width..(o + 1) * self.width]))
    }

    pub fn rows(&self) -> usize {
        self.perm.len()
    }
}

impl<G: Group> Drop for ShuffleOpening<G> {
    fn drop(&mut self) {
        self.perm.zeroize();
        self.nonces.zeroize();
    }
}

impl<G: Group> std::fmt::Debug for ShuffleOpening<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ShuffleOpening({} rows, <redacted>)", self.perm.len())
    }
}

/// A uniform index in `0..bound` (rejection sampling, no modulo bias).
fn uniform_below<R: RngCore>(rng: &mut R, bound: usize) -> usize {
    let bound = bound as u64;
    let zone = u64::MAX - (u64::MAX % bound);
    loop {
        let x = rng.next_u64();
        if x < zone {
            return (x % bound) as usize;
        }
    }
}

/// Per-row secrets, from the row's own ChaCha20 stream (90.4: the same for any thread count).
struct RowSecrets<G: Group> {
    nonces: Vec<G::Scalar>,
    r: G::Scalar,
    r_hat: G::Scalar,
    omega_hat: G::Scalar,
    omega_prime: G::Scalar,
}

fn row_secrets<G: Group>(
    group: &G,
    seed: &[u8; 32],
    row: usize,
    width: usize,
    nonce_bits: Option<u32>,
) -> RowSecrets<G> {
    let mut rng = ChaCha20Rng::from_seed(*seed);
    rng.set_stream(row as u64);
    RowSecrets {
        nonces: (0..width)
            .map(|_| nonce(group, nonce_bits, &mut rng))
            .collect(),
        r: group.random_scalar(&mut rng),
        r_hat: group.random_scalar(&mut rng),
        omega_hat: group.random_scalar(&mut rng),
        omega_prime: omega_prime(group, &mut rng),
    }
}

/// A re-encryption nonce: uniform in Z_q, or below 2^bits when the caller asks for short ones
/// (spec/90.4) and bits is below q's length.
fn nonce<G: Group, R: RngCore + CryptoRng>(group: &G, bits: Option<u32>, rng: &mut R) -> G::Scalar {
    match bits {
        Some(b) if b > 0 && b < group.order().significant_bits() => {
            let mut bytes = vec![0u8; b.div_ceil(8) as usize];
            rng.fill_bytes(&mut bytes);
            let mut x = votum_group::Integer::from_digits(&bytes, votum_group::Order::Msf);
            x.keep_bits_mut(b);
            bytes.zeroize();
            let s = group.scalar_from_integer(&x);
            votum_arith::wipe_integer(&mut x);
            s
        }
        _ => group.random_scalar(rng),
    }
}

/// ω'_i: it only has to hide c·u'_i < 2^256 in s'_i = ω'_i − c·u'_i, so where q is long (the
/// 2048-bit group) it is drawn from [2^256, 2^256 + 2^384) (statistical distance ≤ 2^−128, and
/// s'_i stays a 385-bit positive integer), which makes every power of ω'_i or s'_i short, for
/// the prover (t3, t4) and the verifier alike (spec/90.4). Elsewhere it is uniform mod q.
fn omega_prime<G: Group, R: RngCore + CryptoRng>(group: &G, rng: &mut R) -> G::Scalar {
    if group.order().significant_bits() < SHORT_RESPONSES_FROM_BITS {
        return group.random_scalar(rng);
    }
    let mut bytes = [0u8; 1 + MASK_BITS as usize / 8];
    rng.fill_bytes(&mut bytes[1..]);
    bytes[0] = 0;
    let mut x = votum_group::Integer::from_digits(&bytes, votum_group::Order::Msf);
    x += votum_group::Integer::from(1u32) << 256u32;
    bytes.zeroize();
    let s = group.scalar_from_integer(&x);
    votum_arith::wipe_integer(&mut x);
    s
}

impl<G: Group> PreparedShuffle<G> {
    /// Draws the secrets for a shuffle of `rows` rows of `width` ciphertexts and does the work
    /// that needs no ciphertexts. `pk` should carry a fixed-base table (one is built otherwise).
    pub fn prepare<R: RngCore + CryptoRng>(
        group: &G,
        pk: &PublicKey<G>,
        generators: &Generators<G>,
        rows: usize,
        width: usize,
        rng: &mut R,
    ) -> Result<Self, ShuffleError> {
        Self::prepare_with_nonce_bits(group, pk, generators, rows, width, None, rng)
    }

    /// [`PreparedShuffle::prepare`] with re-encryption nonces uniform below `2^bits` instead of
    /// in Z_q when `nonce_bits` is `Some(bits)` (short exponents, for a protocol that argues for
    /// them: CHVote, spec/92.8). The proof and its verification are unchanged.
    pub fn prepare_with_nonce_bits<R: RngCore + CryptoRng>(
        group: &G,
        pk: &PublicKey<G>,
        generators: &Generators<G>,
        rows: usize,
        width: usize,
        nonce_bits: Option<u32>,
        rng: &mut R,
    ) -> Result<Self, ShuffleError> {
        Self::prepare_inner(group, pk, generators, rows, width, nonce_bits, rng, None)
    }

    /// [`PreparedShuffle::prepare_with_nonce_bits`] with the batches of powers done by
    /// `workers` (spec/98.7). The secrets, and so the shuffle and its proof, are those the same
    /// `rng` gives in process.
    #[allow(clippy::too_many_arguments)]
    pub fn prepare_on<R: RngCore + CryptoRng>(
        group: &G,
        pk: &PublicKey<G>,
        generators: &Generators<G>,
        rows: usize,
        width: usize,
        nonce_bits: Option<u32>,
        rng: &mut R,
        workers: &mut dyn PowWorkers,
    ) -> Result<Self, ShuffleError> {
        workers
            .setup(
                group.id().name(),
                &group.encode_element(pk.element()),
                &group.encode_element(generators.h()),
            )
            .map_err(ShuffleError::Workers)?;
        Self::prepare_inner(
            group,
            pk,
            generators,
            rows,
            width,
            nonce_bits,
            rng,
            Some(workers),
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn prepare_inner<R: RngCore + CryptoRng>(
        group: &G,
        pk: &PublicKey<G>,
        generators: &Generators<G>,
        rows: usize,
        width: usize,
        nonce_bits: Option<u32>,
        rng: &mut R,
        mut workers: Option<&mut dyn PowWorkers>,
    ) -> Result<Self, ShuffleError> {
        if rows == 0 {
            return Err(ShuffleError::Length {
                what: "rows",
                expected: 1,
                got: 0,
            });
        }
        if width == 0 {
            return Err(ShuffleError::Length {
                what: "width",
                expected: 1,
                got: 0,
            });
        }
        generators.check_capacity(rows)?;
        let pk = if pk.has_table() {
            pk.clone()
        } else {
            PublicKey::with_table(group, pk.element().clone())
                .map_err(|_| ShuffleError::Encoding("public key (the identity)"))?
        };
        // Fisher–Yates
        let mut perm: Vec<usize> = (0..rows).collect();
        for i in (1..rows).rev() {
            let j = uniform_below(rng, i + 1);
            perm.swap(i, j);
        }
        let mut seed = [0u8; 32];
        rng.fill_bytes(&mut seed);
        let omega = [
            group.random_scalar(rng),
            group.random_scalar(rng),
            group.random_scalar(rng),
        ];
        let omega4: Vec<G::Scalar> = (0..width).map(|_| group.random_scalar(rng)).collect();
        let secrets: Vec<RowSecrets<G>> = (0..rows)
            .into_par_iter()
            .map(|i| row_secrets(group, &seed, i, width, nonce_bits))
            .collect();
        seed.zeroize();
        let mut nonces = Vec::with_capacity(rows * width);
        let (mut r, mut r_hat, mut omega_hat, mut omega_prime) = (
            Vec::with_capacity(rows),
            Vec::with_capacity(rows),
            Vec::with_capacity(rows),
            Vec::with_capacity(rows),
        );
        for s in secrets {
            nonces.extend(s.nonces);
            r.push(s.r);
            r_hat.push(s.r_hat);
            omega_hat.push(s.omega_hat);
            omega_prime.push(s.omega_prime);
        }
        // the re-encryption factors and g^r_j: on workers, one round of three batches
        let (factors, g_r): (Vec<Ciphertext<G>>, Vec<G::Element>) = match workers.as_deref_mut() {
            None => (
                nonces
                    .par_iter()
                    .map(|x| Ciphertext {
                        pad: group.pow_generator(x),
                        data: pk.pow(group, x),
                    })
                    .collect(),
                r.par_iter().map(|x| group.pow_generator(x)).collect(),
            ),
            Some(w) => {
                let batches = [
                    (Base::G, &nonces[..]),
                    (Base::Pk, &nonces[..]),
                    (Base::G, &r[..]),
                ];
                let [pads, datas, g_r]: [Vec<G::Element>; 3] = remote::fixed(group, w, &batches)?
                    .try_into()
                    .map_err(|_| ShuffleError::Workers("three batches asked for".into()))?;
                (
                    pads.into_iter()
                        .zip(datas)
                        .map(|(pad, data)| Ciphertext { pad, data })
                        .collect(),
                    g_r,
                )
            }
        };
        let mut inverse = vec![0usize; rows];
        for (i, &j) in perm.iter().enumerate() {
            inverse[j] = i;
        }
        let hs = generators.hs();
        let commitments: Vec<G::Element> = g_r
            .par_iter()
            .enumerate()
            .map(|(j, gr)| group.op(gr, &hs[inverse[j]]))
            .collect();
        inverse.zeroize();
        let hs_omega = match workers.as_deref_mut() {
            None => group
                .multi_pow_par(&hs[..rows], &omega_prime)
                .map_err(|_| ShuffleError::Encoding("generators"))?,
            Some(w) => remote::multi(group, w, &[(&hs[..rows], &omega_prime)])?.remove(0),
        };
        let t3 = group.op(&group.pow_generator(&omega[2]), &hs_omega);
        let t = [
            group.pow_generator(&omega[0]),
            group.pow_generator(&omega[1]),
            t3,
        ];
        // the h table is built here, offline, for the chain and t-hat (on workers, they hold it)
        if workers.is_none() {
            let _ = generators.h_table(group);
        }
        Ok(Self {
            group: group.clone(),
            pk,
            generators: generators.clone(),
            rows,
            width,
            perm,
            factors,
            nonces,
            r,
            commitments,
            r_hat,
            omega_hat,
            omega_prime,
            omega,
            omega4,
            t,
        })
    }

    pub fn rows(&self) -> usize {
        self.rows
    }

    pub fn width(&self) -> usize {
        self.width
    }

    /// Shuffles `inputs` (exactly `rows × width`) and proves it; `context` is bound into every
    /// challenge (in a cascade, the board's running hash, spec/90.3).
    pub fn apply(
        self,
        inputs: &Rows<G>,
        context: &[u8],
    ) -> Result<(Rows<G>, ShuffleProof<G>), ShuffleError> {
        self.apply_inner(inputs, context, None)
    }

    /// [`PreparedShuffle::apply`], keeping what opens single outputs afterwards (the permutation
    /// and the re-encryption nonces): for a mixer that may have to trace an output back to its
    /// input, as CHVote's authorities trace invalid votes (spec/92.8). The opening is as secret as
    /// the shuffle's permutation, and wipes itself when dropped.
    pub fn apply_keeping_opening(
        self,
        inputs: &Rows<G>,
        context: &[u8],
    ) -> Result<OpenedShuffle<G>, ShuffleError> {
        let opening = ShuffleOpening {
            width: self.width,
            perm: self.perm.clone(),
            nonces: self.nonces.clone(),
        };
        let (out, proof) = self.apply_inner(inputs, context, None)?;
        Ok((out, proof, opening))
    }

    /// [`PreparedShuffle::apply`] with the batches of powers done by `workers` (spec/98.7),
    /// which `prepare_on` set up; the outputs and proof are the in-process ones.
    pub fn apply_on(
        self,
        inputs: &Rows<G>,
        context: &[u8],
        workers: &mut dyn PowWorkers,
    ) -> Result<(Rows<G>, ShuffleProof<G>), ShuffleError> {
        self.apply_inner(inputs, context, Some(workers))
    }

    fn apply_inner(
        self,
        inputs: &Rows<G>,
        context: &[u8],
        mut workers: Option<&mut dyn PowWorkers>,
    ) -> Result<(Rows<G>, ShuffleProof<G>), ShuffleError> {
        let g = &self.group;
        let (n, w) = (self.rows, self.width);
        if inputs.len() != n {
            return Err(ShuffleError::Length {
                what: "input rows",
                expected: n,
                got: inputs.len(),
            });
        }
        if inputs.width() != w {
            return Err(ShuffleError::Length {
                what: "input width",
                expected: w,
                got: inputs.width(),
            });
        }
        let outputs: Vec<Ciphertext<G>> = (0..n * w)
            .into_par_iter()
            .map(|x| {
                let (i, k) = (x / w, x % w);
                let e = &inputs.row(self.perm[i])[k];
                let f = &self.factors[x];
                Ciphertext {
                    pad: g.op(&e.pad, &f.pad),
                    data: g.op(&e.data, &f.data),
                }
            })
            .collect();
        let outputs = Rows::new(w, outputs)?;
        let statement = Statement::<G> {
            context,
            generators_seed: self.generators.seed(),
            pk: self.pk.element(),
            width: w,
            rows: n,
            input_digest: inputs.digest(g),
            output_digest: outputs.digest(g),
        };
        let mut transcript = statement.transcript(g);
        let u = batching(&mut transcript, g, &self.commitments);
        let u_perm: Vec<G::Scalar> = self.perm.iter().map(|&j| u[j].clone()).collect();

        // U_i = Π_{k≤i} u'_k, R_i = R_{i-1}·u'_i + r̂_i, for i = 0 … n
        let mut big_u = Vec::with_capacity(n + 1);
        let mut big_r = Vec::with_capacity(n + 1);
        big_u.push(g.scalar_from_u64(1));
        big_r.push(g.scalar_from_u64(0));
        for i in 0..n {
            let next_u = g.scalar_mul(&big_u[i], &u_perm[i]);
            let next_r = g.scalar_add(&g.scalar_mul(&big_r[i], &u_perm[i]), &self.r_hat[i]);
            big_u.push(next_u);
            big_r.push(next_r);
        }
        let h_table = || self.generators.h_table(g);
        let closed = |i: usize| {
            g.op(
                &g.pow_generator(&big_r[i]),
                &g.pow_table(h_table(), &big_u[i]),
            )
        };
        // chain ĉ_1 … ĉ_n (index i-1 holds ĉ_i); on workers, by its closed form, in one round with
        // t̂_i = g^{ω̂_i + R_{i-1}ω'_i} · h^{U_{i-1}ω'_i}
        let mut t_hat_there: Option<Vec<G::Element>> = None;
        let chain: Vec<G::Element> = if let Some(w) = workers.as_deref_mut() {
            let (mut a, mut b): (Vec<G::Scalar>, Vec<G::Scalar>) = (0..n)
                .into_par_iter()
                .map(|i| {
                    let a = g.scalar_mul(&big_r[i], &self.omega_prime[i]);
                    (
                        g.scalar_add(&a, &self.omega_hat[i]),
                        g.scalar_mul(&big_u[i], &self.omega_prime[i]),
                    )
                })
                .unzip();
            let batches = [
                (Base::G, &big_r[1..]),
                (Base::H, &big_u[1..]),
                (Base::G, &a[..]),
                (Base::H, &b[..]),
            ];
            let got = remote::fixed(g, w, &batches);
            a.zeroize();
            b.zeroize();
            let [gr, hu, ga, hb]: [Vec<G::Element>; 4] = got?
                .try_into()
                .map_err(|_| ShuffleError::Workers("four batches asked for".into()))?;
            t_hat_there = Some(ga.iter().zip(&hb).map(|(x, y)| g.op(x, y)).collect());
            gr.iter().zip(&hu).map(|(x, y)| g.op(x, y)).collect()
        } else if g.order().significant_bits() >= RECURRENCE_FROM_BITS {
            let segment = n.div_ceil(4 * rayon::current_num_threads()).max(16);
            (0..n.div_ceil(segment))
                .into_par_iter()
                .flat_map_iter(|s| {
                    let lo = s * segment + 1;
                    let hi = ((s + 1) * segment).min(n);
                    let mut out = Vec::with_capacity(hi + 1 - lo);
                    out.push(closed(lo));
                    for i in lo + 1..=hi {
                        // ĉ_{i−1} is the last element pushed
                        let next = g.op(
                            &g.pow_generator(&self.r_hat[i - 1]),
                            &g.pow(&out[i - 1 - lo], &u_perm[i - 1]),
                        );
                        out.push(next);
                    }
                    out
                })
                .collect()
        } else {
            (1..=n).into_par_iter().map(closed).collect()
        };

        // per column k, Π pads^ω' and Π datas^ω'
        #[allow(clippy::type_complexity)]
        let columns: Vec<(Vec<G::Element>, Vec<G::Element>)> = (0..w)
            .map(|k| {
                (
                    (0..n).map(|i| outputs.row(i)[k].pad.clone()).collect(),
                    (0..n).map(|i| outputs.row(i)[k].data.clone()).collect(),
                )
            })
            .collect();
        let products: Vec<G::Element> = match workers {
            Some(workers) => {
                let op = self.omega_prime.as_slice();
                let jobs: Vec<remote::MultiJob<'_, G>> = columns
                    .iter()
                    .flat_map(|(p, d)| [(p.as_slice(), op), (d.as_slice(), op)])
                    .collect();
                remote::multi(g, workers, &jobs)?
            }
            None => {
                let mut out = Vec::with_capacity(2 * w);
                for (p, d) in &columns {
                    for bases in [p, d] {
                        out.push(
                            g.multi_pow_par(bases, &self.omega_prime)
                                .map_err(|_| ShuffleError::Encoding("outputs"))?,
                        );
                    }
                }
                out
            }
        };
        drop(columns);
        let t4: Vec<Ciphertext<G>> = (0..w)
            .map(|k| {
                let minus = g.scalar_neg(&self.omega4[k]);
                Ciphertext {
                    pad: g.op(&g.pow_generator(&minus), &products[2 * k]),
                    data: g.op(&self.pk.pow(g, &minus), &products[2 * k + 1]),
                }
            })
            .collect();
        // t̂_i = g^{ω̂_i + R_{i-1}ω'_i} · h^{U_{i-1}ω'_i}
        let t_hat: Vec<G::Element> = match t_hat_there {
            None => (0..n)
                .into_par_iter()
                .map(|i| {
                    let mut a = g.scalar_mul(&big_r[i], &self.omega_prime[i]);
                    a = g.scalar_add(&a, &self.omega_hat[i]);
                    let mut b = g.scalar_mul(&big_u[i], &self.omega_prime[i]);
                    let out = g.op(&g.pow_generator(&a), &g.pow_table(h_table(), &b));
                    a.zeroize();
                    b.zeroize();
                    out
                })
                .collect(),
            Some(t) => t,
        };
        let c = challenge(
            &mut transcript,
            g,
            &Commitments {
                chain: &chain,
                t1: &self.t[0],
                t2: &self.t[1],
                t3: &self.t[2],
                t4: &t4,
                t_hat: &t_hat,
            },
        );

        // responses
        let sum = |xs: &mut dyn Iterator<Item = G::Scalar>| {
            xs.fold(g.scalar_from_u64(0), |acc, x| g.scalar_add(&acc, &x))
        };
        let respond =
            |omega: &G::Scalar, secret: &G::Scalar| g.scalar_sub(omega, &g.scalar_mul(&c, secret));
        let mut r_bar = sum(&mut self.r.iter().cloned());
        let mut r_tilde = sum(&mut self.r.iter().zip(&u).map(|(r, u)| g.scalar_mul(r, u)));
        let s1 = respond(&self.omega[0], &r_bar);
        let s2 = respond(&self.omega[1], &big_r[n]);
        let s3 = respond(&self.omega[2], &r_tilde);
        r_bar.zeroize();
        r_tilde.zeroize();
        let s4: Vec<G::Scalar> = (0..w)
            .map(|k| {
                let mut r_k =
                    sum(&mut (0..n).map(|i| g.scalar_mul(&self.nonces[i * w + k], &u_perm[i])));
                let s = respond(&self.omega4[k], &r_k);
                r_k.zeroize();
                s
            })
            .collect();
        let s_hat: Vec<G::Scalar> = (0..n)
            .into_par_iter()
            .map(|i| respond(&self.omega_hat[i], &self.r_hat[i]))
            .collect();
        let s_prime: Vec<G::Scalar> = (0..n)
            .into_par_iter()
            .map(|i| respond(&self.omega_prime[i], &u_perm[i]))
            .collect();
        big_r.zeroize();
        big_u.zeroize();
        let [t1, t2, t3] = self.t.clone();
        let proof = ShuffleProof {
            commitments: self.commitments.clone(),
            chain,
            t1,
            t2,
            t3,
            t4,
            t_hat,
            s1,
            s2,
            s3,
            s4,
            s_hat,
            s_prime,
        };
        Ok((outputs, proof))
    }
}

/// [`shuffle_and_prove`] with the batches of powers done by `workers` (spec/98.7): the same
/// outputs and proof as in process for the same `rng`.
pub fn shuffle_and_prove_on<G: Group, R: RngCore + CryptoRng>(
    group: &G,
    pk: &PublicKey<G>,
    generators: &Generators<G>,
    context: &[u8],
    inputs: &Rows<G>,
    rng: &mut R,
    workers: &mut dyn PowWorkers,
) -> Result<(Rows<G>, ShuffleProof<G>), ShuffleError> {
    PreparedShuffle::prepare_on(
        group,
        pk,
        generators,
        inputs.len(),
        inputs.width(),
        None,
        rng,
        workers,
    )?
    .apply_on(inputs, context, workers)
}

/// Shuffles `inputs` with fresh secrets from `rng` and proves it (prepare, then apply).
pub fn shuffle_and_prove<G: Group, R: RngCore + CryptoRng>(
    group: &G,
    pk: &PublicKey<G>,
    generators: &Generators<G>,
    context: &[u8],
    inputs: &Rows<G>,
    rng: &mut R,
) -> Result<(Rows<G>, ShuffleProof<G>), ShuffleError> {
    PreparedShuffle::prepare(group, pk, generators, inputs.len(), inputs.width(), rng)?
        .apply(inputs, context)
}
