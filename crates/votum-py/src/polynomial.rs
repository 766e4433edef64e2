//! `SecretPolynomial`: a dealer's secret polynomial for Shamir/Feldman sharing, its commitments,
//! shares and the Schnorr proofs of its coefficients. A module of its own, above both `elgamal`
//! (its constant term is a `SecretKey`) and `proofs` (its coefficients' proofs), so neither of
//! those imports the other.

use pyo3::prelude::*;
use votum_elgamal::secret::SecretPolynomial;
use votum_elgamal::SecretKey;

use crate::convert::rng_from;
use crate::dual::{PolynomialF, Tagged};
use crate::elgamal::PySecretKey;
use crate::errors::NativeError;
use crate::group::{group_of, PyElement, PyGroup, PyScalar};
use crate::proofs::PySchnorrProof;
use crate::with_group;

/// A secret polynomial for Shamir/Feldman sharing. Never printed, never pickled.
#[pyclass(frozen, name = "SecretPolynomial", module = "votum._native")]
pub struct PySecretPolynomial {
    inner: Tagged<PolynomialF>,
}

#[pymethods]
impl PySecretPolynomial {
    /// A random polynomial with `quorum` coefficients (degree quorum − 1).
    #[staticmethod]
    #[pyo3(signature = (group, quorum, seed=None))]
    fn random(group: &PyGroup, quorum: usize, seed: Option<&[u8]>) -> PyResult<Self> {
        let mut rng = rng_from(seed)?;
        with_group!(&group.inner, g => Ok(Self {
            inner: Tagged::new(g, SecretPolynomial::random(g, quorum, &mut rng).map_err(NativeError::from)?)
        }))
    }

    #[getter]
    fn quorum(&self) -> PyResult<usize> {
        with_group!(&group_of(self.inner.group), g => Ok(self.inner.get(g)?.quorum()))
    }

    /// Feldman commitments g^{a_j}.
    fn commitments(&self) -> PyResult<Vec<PyElement>> {
        with_group!(&group_of(self.inner.group), g => Ok(self.inner.get(g)?.commitments(g).into_iter().map(|e| PyElement::wrap(g, e)).collect()))
    }

    /// The share f(x) for participant x ≥ 1. A secret: send it only to participant x.
    fn evaluate(&self, x: u64) -> PyResult<PyScalar> {
        if x == 0 {
            return Err(NativeError::ElGamal(votum_elgamal::ElGamalError::BadIndex {
                index: 0,
                max: u64::MAX,
            })
            .into());
        }
        with_group!(&group_of(self.inner.group), g => Ok(PyScalar::wrap(g, self.inner.get(g)?.evaluate(g, x))))
    }

    /// The constant term as a secret key (the dealer's own key).
    fn secret_key(&self) -> PyResult<PySecretKey> {
        with_group!(&group_of(self.inner.group), g => Ok(PySecretKey {
            inner: Tagged::new(g, SecretKey::new(self.inner.get(g)?.coefficients()[0].expose().clone()))
        }))
    }

    /// One Schnorr proof of knowledge per coefficient, bound to `context`, in commitment order.
    #[pyo3(signature = (context, seed=None))]
    fn coefficient_proofs(
        &self,
        context: &[u8],
        seed: Option<&[u8]>,
    ) -> PyResult<Vec<PySchnorrProof>> {
        let mut rng = rng_from(seed)?;
        let oracle = votum_proofs::NativeOracle::new(context);
        with_group!(&group_of(self.inner.group), g => {
            let poly = self.inner.get(g)?;
            Ok(poly.coefficients().iter().zip(poly.commitments(g)).map(|(a, k)| {
                PySchnorrProof::wrap(g, votum_proofs::SchnorrProof::prove(g, &oracle, a, &k, &mut rng))
            }).collect())
        })
    }

    fn __repr__(&self) -> String {
        format!("SecretPolynomial({}, <redacted>)", self.inner.group)
    }
}
