use pyo3::prelude::*;
use pyo3::types::PyBytes;
use votum_elgamal::hashed::HashedCiphertext;
use votum_elgamal::secret;
use votum_elgamal::threshold;
use votum_elgamal::{Ciphertext, DlogTable, PublicKey, SecretKey};
use votum_group::Group;

use crate::convert::{release, rng_from, split_fixed};
use crate::dual::{AnyGroup, Bridge, CiphertextF, DlogF, HashedF, PublicKeyF, SecretKeyF, Tagged};
use crate::errors::{NativeError, NativeResult};
use crate::group::{elements, group_of, PyElement, PyGroup, PyScalar};
use crate::with_group;

/// A secret exponent. Never printed, never pickled; wiped when collected.
#[pyclass(frozen, name = "SecretKey", module = "votum._native")]
pub struct PySecretKey {
    pub inner: Tagged<SecretKeyF>,
}

/// An ElGamal public key, with a fixed-base table when precomputed.
#[pyclass(frozen, name = "PublicKey", module = "votum._native")]
#[derive(Clone)]
pub struct PyPublicKey {
    pub inner: Tagged<PublicKeyF>,
}

/// An ElGamal ciphertext (pad, data).
#[pyclass(frozen, name = "Ciphertext", module = "votum._native")]
#[derive(Clone)]
pub struct PyCiphertext {
    pub inner: Tagged<CiphertextF>,
}

/// Baby-step giant-step table for discrete logs in [0, max].
#[pyclass(frozen, name = "DlogTable", module = "votum._native")]
pub struct PyDlogTable {
    inner: Tagged<DlogF>,
}

/// Hashed ElGamal ciphertext of a byte string.
#[pyclass(frozen, name = "HashedCiphertext", module = "votum._native")]
pub struct PyHashedCiphertext {
    inner: Tagged<HashedF>,
}

impl PyCiphertext {
    pub fn wrap<G: Bridge>(g: &G, c: Ciphertext<G>) -> Self {
        Self {
            inner: Tagged::new(g, c),
        }
    }
    pub fn get<G: Bridge>(&self, g: &G) -> NativeResult<&Ciphertext<G>> {
        self.inner.get(g)
    }
    fn bytes(&self) -> Vec<u8> {
        with_group!(&group_of(self.inner.group), g => self.get(g).map(|c| {
            let mut b = g.encode_element(&c.pad);
            b.extend(g.encode_element(&c.data));
            b
        }).unwrap_or_default())
    }
}

impl PyPublicKey {
    pub fn get<G: Bridge>(&self, g: &G) -> NativeResult<&PublicKey<G>> {
        self.inner.get(g)
    }
}

impl PySecretKey {
    pub fn get<G: Bridge>(&self, g: &G) -> NativeResult<&SecretKey<G>> {
        self.inner.get(g)
    }
}

#[pymethods]
impl PySecretKey {
    /// A fresh random secret key (from the OS, or a 32-byte seed).
    #[staticmethod]
    #[pyo3(signature = (group, seed=None))]
    fn generate(group: &PyGroup, seed: Option<&[u8]>) -> PyResult<Self> {
        let mut rng = rng_from(seed)?;
        with_group!(&group.inner, g => loop {
            let sk = SecretKey::random(g, &mut rng);
            if sk.public_element(g) != g.identity() {
                return Ok(Self { inner: Tagged::new(g, sk) });
            }
        })
    }

    /// A secret key from a scalar (for example a guardian's share).
    #[staticmethod]
    fn from_scalar(value: &PyScalar) -> PyResult<Self> {
        with_group!(&group_of(value.inner.group), g => Ok(Self { inner: Tagged::new(g, SecretKey::new(value.get(g)?.clone())) }))
    }

    #[getter]
    fn group(&self) -> PyGroup {
        PyGroup {
            inner: group_of(self.inner.group),
        }
    }

    /// The secret as a scalar. Handle with care: it leaves the key's protection.
    fn expose_secret(&self) -> PyResult<PyScalar> {
        with_group!(&group_of(self.inner.group), g => Ok(PyScalar::wrap(g, self.get(g)?.expose().clone())))
    }

    /// The public key g^s; with `precompute`, a fixed-base table for fast encryption.
    #[pyo3(signature = (precompute=false))]
    fn public_key(&self, py: Python<'_>, precompute: bool) -> PyResult<PyPublicKey> {
        with_group!(&group_of(self.inner.group), g => {
            let element = self.get(g)?.public_element(g);
            let pk = release(py, || if precompute { PublicKey::with_table(g, element) } else { PublicKey::new(g, element) })
                .map_err(NativeError::from)?;
            Ok(PyPublicKey { inner: Tagged::new(g, pk) })
        })
    }

    /// pad^s: this key holder's decryption share of a ciphertext (constant time).
    fn partial_decrypt(&self, ct: &PyCiphertext) -> PyResult<PyElement> {
        with_group!(&group_of(self.inner.group), g => Ok(PyElement::wrap(g, ct.get(g)?.partial_decrypt(g, self.get(g)?))))
    }

    /// data / pad^s: the plaintext element.
    fn decrypt(&self, ct: &PyCiphertext) -> PyResult<PyElement> {
        with_group!(&group_of(self.inner.group), g => Ok(PyElement::wrap(g, ct.get(g)?.decrypt(g, self.get(g)?))))
    }

    /// Decryption shares of many ciphertexts, in parallel without the GIL.
    fn partial_decrypt_many(
        &self,
        py: Python<'_>,
        cts: Vec<PyRef<'_, PyCiphertext>>,
    ) -> PyResult<Vec<PyElement>> {
        use rayon::prelude::*;
        with_group!(&group_of(self.inner.group), g => {
            let sk = self.get(g)?;
            let cs = cts.iter().map(|c| c.get(g).cloned()).collect::<NativeResult<Vec<_>>>()?;
            let out: Vec<_> = release(py, || cs.par_iter().map(|c| c.partial_decrypt(g, sk)).collect());
            Ok(out.into_iter().map(|e| PyElement::wrap(g, e)).collect())
        })
    }

    fn __repr__(&self) -> String {
        format!("SecretKey({}, <redacted>)", self.inner.group)
    }
}

#[pymethods]
impl PyPublicKey {
    #[new]
    #[pyo3(signature = (element, precompute=false))]
    fn new(py: Python<'_>, element: &PyElement, precompute: bool) -> PyResult<Self> {
        with_group!(&group_of(element.inner.group), g => {
            let e = element.get(g)?.clone();
            let pk = release(py, || if precompute { PublicKey::with_table(g, e) } else { PublicKey::new(g, e) })
                .map_err(NativeError::from)?;
            Ok(Self { inner: Tagged::new(g, pk) })
        })
    }

    #[getter]
    fn group(&self) -> PyGroup {
        PyGroup {
            inner: group_of(self.inner.group),
        }
    }

    #[getter]
    fn element(&self) -> PyResult<PyElement> {
        with_group!(&group_of(self.inner.group), g => Ok(PyElement::wrap(g, self.get(g)?.element().clone())))
    }

    #[getter]
    fn precomputed(&self) -> PyResult<bool> {
        with_group!(&group_of(self.inner.group), g => Ok(self.get(g)?.has_table()))
    }

    /// Exponential ElGamal encryption of a small non-negative integer.
    #[pyo3(signature = (message, nonce=None))]
    fn encrypt(&self, message: u64, nonce: Option<&PyScalar>) -> PyResult<PyCiphertext> {
        with_group!(&group_of(self.inner.group), g => {
            let r = match nonce { Some(n) => n.get(g)?.clone(), None => g.random_scalar(&mut rng_from(None)?) };
            Ok(PyCiphertext::wrap(g, Ciphertext::encrypt_exp(g, self.get(g)?, message, &r)))
        })
    }

    /// Element ElGamal encryption of a group element.
    #[pyo3(signature = (message, nonce=None))]
    fn encrypt_element(
        &self,
        message: &PyElement,
        nonce: Option<&PyScalar>,
    ) -> PyResult<PyCiphertext> {
        with_group!(&group_of(self.inner.group), g => {
            let r = match nonce { Some(n) => n.get(g)?.clone(), None => g.random_scalar(&mut rng_from(None)?) };
            Ok(PyCiphertext::wrap(g, Ciphertext::encrypt_element(g, self.get(g)?, message.get(g)?, &r)))
        })
    }

    /// Encrypts many small integers with fresh nonces, in parallel without the GIL.
    #[pyo3(signature = (messages, seed=None))]
    fn encrypt_many(
        &self,
        py: Python<'_>,
        messages: Vec<u64>,
        seed: Option<&[u8]>,
    ) -> PyResult<Vec<PyCiphertext>> {
        let mut rng = rng_from(seed)?;
        with_group!(&group_of(self.inner.group), g => {
            let pk = self.get(g)?;
            let nonces: Vec<_> = messages.iter().map(|_| g.random_scalar(&mut rng)).collect();
            let out = release(py, || votum_elgamal::secret::encrypt_exp_many(g, pk, &messages, &nonces));
            Ok(out.into_iter().map(|c| PyCiphertext::wrap(g, c)).collect())
        })
    }

    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        with_group!(&group_of(self.inner.group), g => Ok(PyBytes::new(py, &g.encode_element(self.get(g)?.element()))))
    }

    #[staticmethod]
    #[pyo3(signature = (group, data, precompute=false))]
    fn from_bytes(
        py: Python<'_>,
        group: &PyGroup,
        data: &[u8],
        precompute: bool,
    ) -> PyResult<Self> {
        let e = group.element_from_bytes(py, data)?;
        Self::new(py, &e, precompute)
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        let Ok(o) = other.downcast::<PyPublicKey>() else {
            return false;
        };
        let o = o.get();
        o.inner.group == self.inner.group
            && with_group!(&group_of(self.inner.group), g => match (self.get(g), o.get(g)) {
                (Ok(a), Ok(b)) => a.element() == b.element(),
                _ => false,
            })
    }

    fn __repr__(&self) -> PyResult<String> {
        Ok(format!("PublicKey({})", self.element()?.__repr__()))
    }

    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let cls = py.get_type::<PyPublicKey>();
        (cls, (self.element()?, self.precomputed()?))
            .into_pyobject(py)
            .map(|t| t.into_any())
    }
}

#[pymethods]
impl PyCiphertext {
    #[new]
    fn new(pad: &PyElement, data: &PyElement) -> PyResult<Self> {
        with_group!(&group_of(pad.inner.group), g => Ok(Self::wrap(g, Ciphertext { pad: pad.get(g)?.clone(), data: data.get(g)?.clone() })))
    }

    #[getter]
    fn group(&self) -> PyGroup {
        PyGroup {
            inner: group_of(self.inner.group),
        }
    }

    #[getter]
    fn pad(&self) -> PyResult<PyElement> {
        with_group!(&group_of(self.inner.group), g => Ok(PyElement::wrap(g, self.get(g)?.pad.clone())))
    }

    #[getter]
    fn data(&self) -> PyResult<PyElement> {
        with_group!(&group_of(self.inner.group), g => Ok(PyElement::wrap(g, self.get(g)?.data.clone())))
    }

    /// pad ‖ data, each at the group's fixed width.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.bytes())
    }

    #[staticmethod]
    fn from_bytes(py: Python<'_>, group: &PyGroup, data: &[u8]) -> PyResult<Self> {
        with_group!(&group.inner, g => {
            let n = g.element_len();
            let parts = split_fixed(data, &[n, n])?;
            let (a, b) = (parts[0].to_vec(), parts[1].to_vec());
            let c = release(py, || -> NativeResult<_> {
                Ok(Ciphertext { pad: g.decode_element(&a)?, data: g.decode_element(&b)? })
            })?;
            Ok(Self::wrap(g, c))
        })
    }

    /// Homomorphic addition.
    fn __add__(&self, other: &PyCiphertext) -> PyResult<PyCiphertext> {
        with_group!(&group_of(self.inner.group), g => Ok(Self::wrap(g, self.get(g)?.add(g, other.get(g)?))))
    }

    /// The homomorphic sum of many ciphertexts, in parallel without the GIL.
    #[staticmethod]
    fn sum(
        py: Python<'_>,
        group: &PyGroup,
        cts: Vec<PyRef<'_, PyCiphertext>>,
    ) -> PyResult<PyCiphertext> {
        with_group!(&group.inner, g => {
            let cs = cts.iter().map(|c| c.get(g).cloned()).collect::<NativeResult<Vec<_>>>()?;
            Ok(Self::wrap(g, release(py, || Ciphertext::sum(g, &cs))))
        })
    }

    /// A fresh encryption of the same plaintext.
    #[pyo3(signature = (public_key, nonce=None))]
    fn reencrypt(
        &self,
        public_key: &PyPublicKey,
        nonce: Option<&PyScalar>,
    ) -> PyResult<PyCiphertext> {
        with_group!(&group_of(self.inner.group), g => {
            let r = match nonce { Some(n) => n.get(g)?.clone(), None => g.random_scalar(&mut rng_from(None)?) };
            Ok(Self::wrap(g, self.get(g)?.reencrypt(g, public_key.get(g)?, &r)))
        })
    }

    /// data / share: the plaintext element once the combined decryption share is known.
    fn decrypt_with_share(&self, share: &PyElement) -> PyResult<PyElement> {
        with_group!(&group_of(self.inner.group), g => Ok(PyElement::wrap(g, self.get(g)?.decrypt_with_share(g, share.get(g)?))))
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .downcast::<PyCiphertext>()
            .map(|o| {
                let o = o.get();
                o.inner.group == self.inner.group && o.inner.value == self.inner.value
            })
            .unwrap_or(false)
    }

    fn __hash__(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.bytes().hash(&mut h);
        h.finish()
    }

    fn __repr__(&self) -> String {
        format!("Ciphertext({})", self.inner.group)
    }

    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        crate::convert::reduce_from_bytes(
            py,
            "_restore_ciphertext",
            self.inner.group,
            &self.bytes(),
        )
    }
}

#[pyfunction]
pub fn _restore_ciphertext(py: Python<'_>, group: &str, data: &[u8]) -> PyResult<PyCiphertext> {
    PyCiphertext::from_bytes(py, &PyGroup::new(group)?, data)
}

#[pymethods]
impl PyDlogTable {
    #[new]
    fn new(py: Python<'_>, group: &PyGroup, max: u64) -> Self {
        with_group!(&group.inner, g => Self { inner: Tagged::new(g, release(py, || DlogTable::new(g, max))) })
    }

    #[getter]
    fn max(&self) -> PyResult<u64> {
        with_group!(&group_of(self.inner.group), g => Ok(self.inner.get(g)?.max()))
    }

    /// The t in [0, max] with g^t = element; raises DecryptionFailed when there is none.
    fn log(&self, py: Python<'_>, element: &PyElement) -> PyResult<u64> {
        with_group!(&group_of(self.inner.group), g => {
            let t = self.inner.get(g)?;
            let e = element.get(g)?.clone();
            Ok(release(py, || t.log(&e)).map_err(NativeError::from)?)
        })
    }
}

fn group_of_list(xs: &[PyRef<'_, PyElement>]) -> NativeResult<AnyGroup> {
    xs.first()
        .map(|x| group_of(x.inner.group))
        .ok_or(NativeError::Value("empty list of elements"))
}

/// Checks g^share = Π K_j^{x^j}; raises VerificationFailed otherwise.
#[pyfunction]
pub fn verify_share(
    py: Python<'_>,
    commitments: Vec<PyRef<'_, PyElement>>,
    x: u64,
    share: &PyScalar,
) -> PyResult<()> {
    with_group!(&group_of_list(&commitments)?, g => {
        let cs = elements(g, &commitments)?;
        let s = votum_group::Secret::new(share.get(g)?.clone());
        Ok(release(py, || secret::verify_share(g, &cs, x, &s)).map_err(NativeError::from)?)
    })
}

/// Π K_j^{x^j} = g^{f(x)}: participant x's public share (a recovery key), from commitments alone.
#[pyfunction]
pub fn public_share(
    py: Python<'_>,
    commitments: Vec<PyRef<'_, PyElement>>,
    x: u64,
) -> PyResult<PyElement> {
    with_group!(&group_of_list(&commitments)?, g => {
        let cs = elements(g, &commitments)?;
        Ok(PyElement::wrap(g, release(py, || threshold::public_share(g, &cs, x)).map_err(NativeError::from)?))
    })
}

/// w_i = Π_{j≠i} j/(j−i) mod q.
#[pyfunction]
pub fn lagrange_coefficient(group: &PyGroup, i: u64, present: Vec<u64>) -> PyResult<PyScalar> {
    with_group!(&group.inner, g => Ok(PyScalar::wrap(g, threshold::lagrange_coefficient(g, i, &present).map_err(NativeError::from)?)))
}

/// Π M_i^{w_i} from (i, M_i) pairs.
#[pyfunction]
pub fn combine_partials(
    py: Python<'_>,
    group: &PyGroup,
    partials: Vec<(u64, PyRef<'_, PyElement>)>,
    quorum: usize,
) -> PyResult<PyElement> {
    with_group!(&group.inner, g => {
        let ps = partials.iter().map(|(i, m)| m.get(g).map(|m| (*i, m.clone()))).collect::<NativeResult<Vec<_>>>()?;
        Ok(PyElement::wrap(g, release(py, || threshold::combine_partials(g, &ps, quorum)).map_err(NativeError::from)?))
    })
}

/// f(0) from (i, f(i)) pairs.
#[pyfunction]
pub fn recover_secret(
    group: &PyGroup,
    shares: Vec<(u64, PyRef<'_, PyScalar>)>,
    quorum: usize,
) -> PyResult<PySecretKey> {
    with_group!(&group.inner, g => {
        let ss = shares.iter().map(|(i, s)| s.get(g).map(|s| (*i, s.clone()))).collect::<NativeResult<Vec<_>>>()?;
        Ok(PySecretKey { inner: Tagged::new(g, SecretKey::new(secret::recover_secret(g, &ss, quorum).map_err(NativeError::from)?)) })
    })
}

#[pymethods]
impl PyHashedCiphertext {
    #[staticmethod]
    #[pyo3(signature = (public_key, message, seed=None))]
    fn encrypt(public_key: &PyPublicKey, message: &[u8], seed: Option<&[u8]>) -> PyResult<Self> {
        let mut rng = rng_from(seed)?;
        with_group!(&group_of(public_key.inner.group), g => {
            let r = g.random_scalar(&mut rng);
            Ok(Self { inner: Tagged::new(g, HashedCiphertext::encrypt(g, public_key.get(g)?, message, &r)) })
        })
    }

    /// The message; raises DecryptionFailed when the key is wrong or the ciphertext was altered.
    fn decrypt<'py>(
        &self,
        py: Python<'py>,
        secret_key: &PySecretKey,
    ) -> PyResult<Bound<'py, PyBytes>> {
        with_group!(&group_of(self.inner.group), g => {
            let m = self.inner.get(g)?.decrypt(g, secret_key.get(g)?).map_err(NativeError::from)?;
            Ok(PyBytes::new(py, &m))
        })
    }

    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        with_group!(&group_of(self.inner.group), g => Ok(PyBytes::new(py, &self.inner.get(g)?.to_bytes(g))))
    }

    #[staticmethod]
    fn from_bytes(group: &PyGroup, data: &[u8]) -> PyResult<Self> {
        with_group!(&group.inner, g => Ok(Self { inner: Tagged::new(g, HashedCiphertext::from_bytes(g, data).map_err(NativeError::from)?) }))
    }

    fn __repr__(&self) -> String {
        format!("HashedCiphertext({})", self.inner.group)
    }
}
