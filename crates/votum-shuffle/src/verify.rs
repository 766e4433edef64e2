//! Verification of a shuffle proof: one batched test, then one-by-one to name a failure (90.5).

use rand_chacha::ChaCha20Rng;
use rand_core::{CryptoRng, RngCore, SeedableRng};
use rayon::prelude::*;
use votum_group::Group;

use crate::proof::ShuffleProof;
use crate::rows::Rows;
use crate::transcript::{batching, challenge, Commitments, Statement, SHORT};
use crate::{short_scalar, Generators, ShuffleError};

/// Rows per piece of the batched multi-exponentiation (bounds the verifier's extra memory).
const MAX_PIECE_ROWS: usize = 4096;

/// One piece's share of the batch: left side, right side (t̂ powers), Π h_j, and its part of g's
/// exponent.
type Piece<G> = (
    <G as Group>::Element,
    <G as Group>::Element,
    <G as Group>::Element,
    <G as Group>::Scalar,
);

struct Weights<G: Group> {
    b1: G::Scalar,
    b2: G::Scalar,
    b3: G::Scalar,
    b4_pad: Vec<G::Scalar>,
    b4_data: Vec<G::Scalar>,
    gamma: Vec<G::Scalar>,
}

impl<G: Group> Weights<G> {
    /// Secret 128-bit weights for w columns and n rows, from a ChaCha20 generator seeded from `rng`.
    fn draw<R: RngCore>(g: &G, rng: &mut R, w: usize, n: usize) -> Self {
        let mut seed = [0u8; 32];
        rng.fill_bytes(&mut seed);
        let mut wr = ChaCha20Rng::from_seed(seed);
        let mut weight = || {
            let mut b = [0u8; SHORT];
            wr.fill_bytes(&mut b);
            short_scalar(g, &b)
        };
        Self {
            b1: weight(),
            b2: weight(),
            b3: weight(),
            b4_pad: (0..w).map(|_| weight()).collect(),
            b4_data: (0..w).map(|_| weight()).collect(),
            gamma: (0..n).map(|_| weight()).collect(),
        }
    }
}

/// What a proof is checked against.
struct Claim<'a, G: Group> {
    pk: &'a G::Element,
    generators: &'a Generators<G>,
    inputs: &'a Rows<G>,
    outputs: &'a Rows<G>,
}

/// The challenges recomputed from the transcript, and the product of the batching vector.
struct Challenges<G: Group> {
    u: Vec<G::Scalar>,
    c: G::Scalar,
    u_product: G::Scalar,
}

impl<G: Group> ShuffleProof<G> {
    /// Checks that `outputs` is a re-encrypted permutation of `inputs` under `pk`, for this
    /// `context` and these generators. The batch weights come from a ChaCha20 generator seeded
    /// from `rng` (in production: the operating system's; spec/90.5).
    #[allow(clippy::too_many_arguments)]
    pub fn verify<R: RngCore + CryptoRng>(
        &self,
        group: &G,
        pk: &G::Element,
        generators: &Generators<G>,
        context: &[u8],
        inputs: &Rows<G>,
        outputs: &Rows<G>,
        rng: &mut R,
    ) -> Result<(), ShuffleError> {
        let g = group;
        let (n, w) = (inputs.len(), inputs.width());
        let lengths = [
            ("rows", 1usize.max(n), n),
            ("output rows", n, outputs.len()),
            ("output width", w, outputs.width()),
            ("permutation commitment", n, self.commitments.len()),
            ("commitment chain", n, self.chain.len()),
            ("t-hat", n, self.t_hat.len()),
            ("s-hat", n, self.s_hat.len()),
            ("s-prime", n, self.s_prime.len()),
            ("t4", w, self.t4.len()),
            ("s4", w, self.s4.len()),
        ];
        for (what, expected, got) in lengths {
            if expected != got {
                return Err(ShuffleError::Length {
                    what,
                    expected,
                    got,
                });
            }
        }
        generators.check_capacity(n)?;
        let claim = Claim {
            pk,
            generators,
            inputs,
            outputs,
        };
        let ch = self.challenges(g, &claim, context);
        let wt = Weights::draw(g, rng, w, n);
        if self.batch_holds(g, &claim, &ch, &wt)? {
            return Ok(());
        }
        self.one_by_one(g, &claim, &ch)
    }

    /// u and c recomputed from the transcript (90.3), and Π u_j.
    fn challenges(&self, g: &G, claim: &Claim<'_, G>, context: &[u8]) -> Challenges<G> {
        let statement = Statement::<G> {
            context,
            generators_seed: claim.generators.seed(),
            pk: claim.pk,
            width: claim.inputs.width(),
            rows: claim.inputs.len(),
            input_digest: claim.inputs.digest(g),
            output_digest: claim.outputs.digest(g),
        };
        let mut transcript = statement.transcript(g);
        let u = batching(&mut transcript, g, &self.commitments);
        let c = challenge(
            &mut transcript,
            g,
            &Commitments {
                chain: &self.chain,
                t1: &self.t1,
                t2: &self.t2,
                t3: &self.t3,
                t4: &self.t4,
                t_hat: &self.t_hat,
            },
        );
        let u_product = u
            .iter()
            .fold(g.scalar_from_u64(1), |acc, x| g.scalar_mul(&acc, x));
        Challenges { u, c, u_product }
    }

    fn batch_holds(
        &self,
        g: &G,
        claim: &Claim<'_, G>,
        ch: &Challenges<G>,
        wt: &Weights<G>,
    ) -> Result<bool, ShuffleError> {
        let (pk, generators, inputs, outputs) =
            (claim.pk, claim.generators, claim.inputs, claim.outputs);
        let (u, c) = (&ch.u, &ch.c);
        let (n, w) = (inputs.len(), inputs.width());
        let hs = generators.hs();
        let threads = rayon::current_num_threads().max(1);
        let piece = n.div_ceil(2 * threads).clamp(256, MAX_PIECE_ROWS);
        let pieces: Vec<Piece<G>> = (0..n.div_ceil(piece))
            .into_par_iter()
            .map(|p| {
                let (lo, hi) = (p * piece, ((p + 1) * piece).min(n));
                let mut bases = Vec::with_capacity((hi - lo) * (3 + 4 * w));
                let mut exps = Vec::with_capacity(bases.capacity());
                let mut g_exp = g.scalar_from_u64(0);
                let mut h_prod = g.identity();
                for j in lo..hi {
                    let cu = g.scalar_mul(c, &u[j]);
                    let sp = &self.s_prime[j];
                    bases.push(self.commitments[j].clone());
                    exps.push(g.scalar_add(&g.scalar_mul(c, &wt.b1), &g.scalar_mul(&cu, &wt.b3)));
                    // h_j's other term, −β1·c, goes to the right side as (Π h_j)^{β1·c}: the
                    // exponent left here stays short where s'_j is (spec/90.4)
                    bases.push(hs[j].clone());
                    exps.push(g.scalar_mul(&wt.b3, sp));
                    h_prod = g.op(&h_prod, &hs[j]);
                    bases.push(self.chain[j].clone());
                    exps.push(if j + 1 < n {
                        g.scalar_add(
                            &g.scalar_mul(&wt.gamma[j], c),
                            &g.scalar_mul(&wt.gamma[j + 1], &self.s_prime[j + 1]),
                        )
                    } else {
                        g.scalar_mul(&g.scalar_add(&wt.gamma[j], &wt.b2), c)
                    });
                    for k in 0..w {
                        let e = &inputs.row(j)[k];
                        let o = &outputs.row(j)[k];
                        bases.push(e.pad.clone());
                        exps.push(g.scalar_mul(&wt.b4_pad[k], &cu));
                        bases.push(e.data.clone());
                        exps.push(g.scalar_mul(&wt.b4_data[k], &cu));
                        bases.push(o.pad.clone());
                        exps.push(g.scalar_mul(&wt.b4_pad[k], sp));
                        bases.push(o.data.clone());
                        exps.push(g.scalar_mul(&wt.b4_data[k], sp));
                    }
                    g_exp = g.scalar_add(&g_exp, &g.scalar_mul(&wt.gamma[j], &self.s_hat[j]));
                }
                let lhs = g.multi_pow(&bases, &exps);
                let rhs = g.multi_pow(&self.t_hat[lo..hi], &wt.gamma[lo..hi]);
                match (lhs, rhs) {
                    (Ok(l), Ok(r)) => Ok((l, r, h_prod, g_exp)),
                    _ => Err(ShuffleError::Encoding("shuffle proof")),
                }
            })
            .collect::<Result<_, _>>()?;
        let mut lhs = g.identity();
        let mut rhs = g.identity();
        let mut g_exp = g.scalar_add(
            &g.scalar_add(
                &g.scalar_mul(&wt.b1, &self.s1),
                &g.scalar_mul(&wt.b2, &self.s2),
            ),
            &g.scalar_mul(&wt.b3, &self.s3),
        );
        let mut h_prod = g.identity();
        for (l, r, h, e) in pieces {
            lhs = g.op(&lhs, &l);
            rhs = g.op(&rhs, &r);
            h_prod = g.op(&h_prod, &h);
            g_exp = g.scalar_add(&g_exp, &e);
        }
        let mut k_exp = g.scalar_from_u64(0);
        for k in 0..w {
            g_exp = g.scalar_sub(&g_exp, &g.scalar_mul(&wt.b4_pad[k], &self.s4[k]));
            k_exp = g.scalar_sub(&k_exp, &g.scalar_mul(&wt.b4_data[k], &self.s4[k]));
        }
        let h_exp = g.scalar_sub(
            &g.scalar_mul(&wt.gamma[0], &self.s_prime[0]),
            &g.scalar_mul(&g.scalar_mul(&wt.b2, c), &ch.u_product),
        );
        let fixed = g
            .multi_pow(
                &[g.generator().clone(), pk.clone(), generators.h().clone()],
                &[g_exp, k_exp, h_exp],
            )
            .map_err(|_| ShuffleError::Encoding("shuffle proof"))?;
        lhs = g.op(&lhs, &fixed);
        let mut t_bases = vec![self.t1.clone(), self.t2.clone(), self.t3.clone(), h_prod];
        let mut t_exps = vec![
            wt.b1.clone(),
            wt.b2.clone(),
            wt.b3.clone(),
            g.scalar_mul(&wt.b1, c),
        ];
        for k in 0..w {
            t_bases.push(self.t4[k].pad.clone());
            t_exps.push(wt.b4_pad[k].clone());
            t_bases.push(self.t4[k].data.clone());
            t_exps.push(wt.b4_data[k].clone());
        }
        let t = g
            .multi_pow(&t_bases, &t_exps)
            .map_err(|_| ShuffleError::Encoding("shuffle proof"))?;
        Ok(lhs == g.op(&rhs, &t))
    }

    /// Each equation alone, in the order of 90.5; the first failure is the error.
    fn one_by_one(
        &self,
        g: &G,
        claim: &Claim<'_, G>,
        ch: &Challenges<G>,
    ) -> Result<(), ShuffleError> {
        let (pk, generators, inputs, outputs) =
            (claim.pk, claim.generators, claim.inputs, claim.outputs);
        let (u, c) = (&ch.u, &ch.c);
        let (n, w) = (inputs.len(), inputs.width());
        let hs = &generators.hs()[..n];
        let fail = |name: &'static str, index: usize| ShuffleError::Equation { name, index };
        let multi = |bases: &[G::Element], exps: &[G::Scalar]| {
            g.multi_pow_par(bases, exps)
                .map_err(|_| ShuffleError::Encoding("shuffle proof"))
        };
        let product = |es: &[G::Element]| es.iter().fold(g.identity(), |a, b| g.op(&a, b));
        // t1 = c̄^c·g^{s1}
        let c_bar = g.div(&product(&self.commitments), &product(hs));
        if self.t1 != g.op(&g.pow(&c_bar, c), &g.pow_generator(&self.s1)) {
            return Err(fail("t1", 0));
        }
        // t2 = ĉ^c·g^{s2}, ĉ = ĉ_N / h^U
        let c_hat = g.div(&self.chain[n - 1], &g.pow(generators.h(), &ch.u_product));
        if self.t2 != g.op(&g.pow(&c_hat, c), &g.pow_generator(&self.s2)) {
            return Err(fail("t2", 0));
        }
        // t3 = c̃^c·g^{s3}·Π h_i^{s'_i}
        let cu: Vec<G::Scalar> = u.iter().map(|x| g.scalar_mul(c, x)).collect();
        let bases: Vec<G::Element> = self.commitments.iter().chain(hs).cloned().collect();
        let exps: Vec<G::Scalar> = cu.iter().chain(&self.s_prime).cloned().collect();
        if self.t3 != g.op(&multi(&bases, &exps)?, &g.pow_generator(&self.s3)) {
            return Err(fail("t3", 0));
        }
        // t4 = ẽ^c·Enc(1, −s4)·Π e'_i^{s'_i}, per column
        for k in 0..w {
            let minus = g.scalar_neg(&self.s4[k]);
            let pads: Vec<G::Element> = (0..n)
                .map(|j| inputs.row(j)[k].pad.clone())
                .chain((0..n).map(|i| outputs.row(i)[k].pad.clone()))
                .collect();
            let datas: Vec<G::Element> = (0..n)
                .map(|j| inputs.row(j)[k].data.clone())
                .chain((0..n).map(|i| outputs.row(i)[k].data.clone()))
                .collect();
            if self.t4[k].pad != g.op(&multi(&pads, &exps)?, &g.pow_generator(&minus)) {
                return Err(fail("t4", k));
            }
            if self.t4[k].data != g.op(&multi(&datas, &exps)?, &g.pow(pk, &minus)) {
                return Err(fail("t4", k));
            }
        }
        // t̂_i = ĉ_i^c·g^{ŝ_i}·ĉ_{i−1}^{s'_i}
        let bad = (0..n).into_par_iter().position_first(|i| {
            let prev = if i == 0 {
                generators.h()
            } else {
                &self.chain[i - 1]
            };
            let rhs = g.multi_pow(
                &[self.chain[i].clone(), prev.clone()],
                &[c.clone(), self.s_prime[i].clone()],
            );
            !matches!(rhs, Ok(r) if g.op(&r, &g.pow_generator(&self.s_hat[i])) == self.t_hat[i])
        });
        if let Some(i) = bad {
            return Err(fail("t-hat", i));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use votum_elgamal::{Ciphertext, KeyPair, PublicKey};
    use votum_group::{ModpGroup, Ristretto255};

    /// The batched test itself accepts honest proofs (the one-by-one fallback must not be what
    /// makes them pass) and rejects a tampered one.
    fn batch_accepts_honest<G: Group>(g: G) {
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        let kp = KeyPair::generate(&g, &mut rng);
        let pk = PublicKey::with_table(&g, kp.public.element().clone()).unwrap();
        let (n, w) = (300, 2);
        let gens = Generators::derive(&g, b"seed", n);
        let cts = (0..n * w)
            .map(|i| {
                Ciphertext::encrypt_element(
                    &g,
                    &pk,
                    g.generator(),
                    &g.scalar_from_u64(i as u64 + 1),
                )
            })
            .collect();
        let inputs = Rows::new(w, cts).unwrap();
        let (out, proof) =
            crate::shuffle_and_prove(&g, &pk, &gens, b"ctx", &inputs, &mut rng).unwrap();
        let claim = Claim {
            pk: pk.element(),
            generators: &gens,
            inputs: &inputs,
            outputs: &out,
        };
        let ch = proof.challenges(&g, &claim, b"ctx");
        let wt = Weights::draw(&g, &mut rng, w, n);
        assert!(proof.batch_holds(&g, &claim, &ch, &wt).unwrap());
        let mut bad = proof.clone();
        bad.s_hat[n / 2] = g.scalar_add(&bad.s_hat[n / 2], &g.scalar_from_u64(1));
        assert!(!bad.batch_holds(&g, &claim, &ch, &wt).unwrap());
    }

    #[test]
    fn batch_accepts_honest_proofs() {
        batch_accepts_honest(Ristretto255);
        batch_accepts_honest(ModpGroup::rfc3526_2048());
    }
}
