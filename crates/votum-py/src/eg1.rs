//! ElectionGuard 1.0 proof checks (challenges as electionguard 1.4.0 computes them), for records
//! written by the reference implementation. Values must belong to the eg-4096 group.

use pyo3::prelude::*;
use votum_elgamal::Ciphertext;
use votum_group::{Group, ModElement, ModScalar, ModpGroup};
use votum_proofs::{
    ChaumPedersenProof, ConstantProof, DisjunctiveProof, Eg1Oracle, SchnorrProof, Statement,
};

use crate::convert::release;
use crate::errors::{NativeError, NativeResult};
use crate::group::{PyElement, PyScalar};

/// Verifies ElectionGuard 1.0 proofs under one election's extended base hash and joint key.
#[pyclass(frozen, name = "Eg1Verifier", module = "votum._native")]
pub struct PyEg1Verifier {
    group: ModpGroup,
    oracle: Eg1Oracle,
    public_key: ModElement,
}

fn el<'a>(g: &ModpGroup, e: &'a PyElement) -> NativeResult<&'a ModElement> {
    e.get(g)
}

fn sc<'a>(g: &ModpGroup, s: &'a PyScalar) -> NativeResult<&'a ModScalar> {
    s.get(g)
}

#[pymethods]
impl PyEg1Verifier {
    #[new]
    fn new(extended_base_hash: &PyScalar, public_key: &PyElement) -> PyResult<Self> {
        let group = ModpGroup::eg_4096();
        let q_ext = group.scalar_to_integer(sc(&group, extended_base_hash)?);
        Ok(Self {
            oracle: Eg1Oracle::new(q_ext),
            public_key: el(&group, public_key)?.clone(),
            group,
        })
    }

    /// A selection's disjunctive 0/1 proof; raises InvalidProof naming the failed check.
    #[allow(clippy::too_many_arguments)]
    fn verify_selection(
        &self,
        py: Python<'_>,
        pad: &PyElement,
        data: &PyElement,
        zero_pad: &PyElement,
        zero_data: &PyElement,
        one_pad: &PyElement,
        one_data: &PyElement,
        zero_challenge: &PyScalar,
        one_challenge: &PyScalar,
        challenge: &PyScalar,
        zero_response: &PyScalar,
        one_response: &PyScalar,
    ) -> PyResult<()> {
        let g = &self.group;
        let ct = Ciphertext {
            pad: el(g, pad)?.clone(),
            data: el(g, data)?.clone(),
        };
        let proof = DisjunctiveProof {
            zero_pad: el(g, zero_pad)?.clone(),
            zero_data: el(g, zero_data)?.clone(),
            one_pad: el(g, one_pad)?.clone(),
            one_data: el(g, one_data)?.clone(),
            zero_challenge: sc(g, zero_challenge)?.clone(),
            one_challenge: sc(g, one_challenge)?.clone(),
            challenge: sc(g, challenge)?.clone(),
            zero_response: sc(g, zero_response)?.clone(),
            one_response: sc(g, one_response)?.clone(),
        };
        release(py, || proof.verify(g, &self.oracle, &self.public_key, &ct))
            .map_err(NativeError::from)?;
        Ok(())
    }

    /// A contest's constant (selection-limit) proof that (pad, data) encrypts `expected`.
    #[allow(clippy::too_many_arguments)]
    fn verify_constant(
        &self,
        py: Python<'_>,
        pad: &PyElement,
        data: &PyElement,
        proof_pad: &PyElement,
        proof_data: &PyElement,
        challenge: &PyScalar,
        response: &PyScalar,
        constant: u64,
        expected: u64,
    ) -> PyResult<()> {
        let g = &self.group;
        let ct = Ciphertext {
            pad: el(g, pad)?.clone(),
            data: el(g, data)?.clone(),
        };
        let proof = ConstantProof {
            pad: el(g, proof_pad)?.clone(),
            data: el(g, proof_data)?.clone(),
            challenge: sc(g, challenge)?.clone(),
            response: sc(g, response)?.clone(),
            constant,
        };
        release(py, || {
            proof.verify(g, &self.oracle, &self.public_key, &ct, expected)
        })
        .map_err(NativeError::from)?;
        Ok(())
    }

    /// A decryption share M_i of (pad, data) by the holder of `key` (a guardian's public key, or a
    /// recovery public key for a compensated share): the challenge is H(Q', pad, data, a, b, M_i).
    #[allow(clippy::too_many_arguments)]
    fn verify_share(
        &self,
        py: Python<'_>,
        pad: &PyElement,
        data: &PyElement,
        key: &PyElement,
        share: &PyElement,
        proof_pad: &PyElement,
        proof_data: &PyElement,
        challenge: &PyScalar,
        response: &PyScalar,
    ) -> PyResult<()> {
        let g = &self.group;
        let (alpha, beta, k, m) = (el(g, pad)?, el(g, data)?, el(g, key)?, el(g, share)?);
        let proof = ChaumPedersenProof {
            pad: el(g, proof_pad)?.clone(),
            data: el(g, proof_data)?.clone(),
            challenge: sc(g, challenge)?.clone(),
            response: sc(g, response)?.clone(),
        };
        let st = Statement {
            g1: g.generator(),
            a: k,
            g2: alpha,
            b: m,
        };
        release(py, || {
            proof.verify(g, &self.oracle, &st, &[alpha, beta], &[m])
        })
        .map_err(NativeError::from)?;
        Ok(())
    }

    /// A guardian's Schnorr proof for a coefficient commitment: c = H(K, h).
    fn verify_schnorr(
        &self,
        public_key: &PyElement,
        commitment: &PyElement,
        challenge: &PyScalar,
        response: &PyScalar,
    ) -> PyResult<()> {
        let g = &self.group;
        let proof = SchnorrProof::<ModpGroup> {
            commitment: el(g, commitment)?.clone(),
            challenge: sc(g, challenge)?.clone(),
            response: sc(g, response)?.clone(),
        };
        proof
            .verify(g, &self.oracle, el(g, public_key)?)
            .map_err(NativeError::from)?;
        Ok(())
    }
}
