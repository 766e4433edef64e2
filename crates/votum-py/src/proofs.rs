use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyInt, PyList, PyString, PyTuple};
use votum_group::{Group, ModpGroup};
use votum_hash::eg::{self, EgHashItem};
use votum_proofs::batch::{
    encrypt_bits_with_proofs as encrypt_bits, verify_bits as verify_bits_core, ProvenBit,
};
use votum_proofs::{ChaumPedersenProof, NativeOracle, SchnorrProof, Statement};

use crate::convert::{int_to_py, py_to_int, release, rng_from, split_fixed};
use crate::dual::{Bridge, ChaumPedersenF, ProvenBitF, SchnorrF, Tagged};
use crate::elgamal::{PyCiphertext, PyPublicKey, PySecretKey};
use crate::errors::{NativeError, NativeResult};
use crate::group::{group_of, PyElement, PyGroup, PyScalar};
use crate::with_group;

/// Proof of knowledge of the secret key behind a public element (votum transcript challenge).
#[pyclass(frozen, name = "SchnorrProof", module = "votum._native")]
#[derive(Clone)]
pub struct PySchnorrProof {
    inner: Tagged<SchnorrF>,
}

/// Proof that log_{g1} A = log_{g2} B (votum transcript challenge over the whole statement).
#[pyclass(frozen, name = "ChaumPedersenProof", module = "votum._native")]
#[derive(Clone)]
pub struct PyChaumPedersenProof {
    inner: Tagged<ChaumPedersenF>,
}

/// An encryption of 0 or 1 with its disjunctive proof.
#[pyclass(frozen, name = "ProvenBit", module = "votum._native")]
#[derive(Clone)]
pub struct PyProvenBit {
    inner: Tagged<ProvenBitF>,
}

impl PySchnorrProof {
    pub fn wrap<G: Bridge>(g: &G, p: SchnorrProof<G>) -> Self {
        Self {
            inner: Tagged::new(g, p),
        }
    }
}

#[pymethods]
impl PySchnorrProof {
    /// Proves knowledge of `secret_key`, bound to `context` (an election or board hash, a role).
    #[staticmethod]
    #[pyo3(signature = (secret_key, context, seed=None))]
    fn prove(secret_key: &PySecretKey, context: &[u8], seed: Option<&[u8]>) -> PyResult<Self> {
        let mut rng = rng_from(seed)?;
        let oracle = NativeOracle::new(context);
        with_group!(&group_of(secret_key.inner.group), g => {
            let sk = secret_key.get(g)?;
            let public = sk.public_element(g);
            Ok(Self { inner: Tagged::new(g, SchnorrProof::prove(g, &oracle, sk.secret(), &public, &mut rng)) })
        })
    }

    /// Raises InvalidProof unless this proves knowledge of log_g(public) under `context`.
    fn verify(&self, py: Python<'_>, public: &PyElement, context: &[u8]) -> PyResult<()> {
        let oracle = NativeOracle::new(context);
        with_group!(&group_of(self.inner.group), g => {
            let (p, y) = (self.inner.get(g)?, public.get(g)?);
            Ok(release(py, || p.verify(g, &oracle, y)).map_err(NativeError::from)?)
        })
    }

    #[getter]
    fn commitment(&self) -> PyResult<PyElement> {
        with_group!(&group_of(self.inner.group), g => Ok(PyElement::wrap(g, self.inner.get(g)?.commitment.clone())))
    }

    #[getter]
    fn challenge(&self) -> PyResult<PyScalar> {
        with_group!(&group_of(self.inner.group), g => Ok(PyScalar::wrap(g, self.inner.get(g)?.challenge.clone())))
    }

    #[getter]
    fn response(&self) -> PyResult<PyScalar> {
        with_group!(&group_of(self.inner.group), g => Ok(PyScalar::wrap(g, self.inner.get(g)?.response.clone())))
    }

    /// commitment ‖ challenge ‖ response at fixed widths.
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        with_group!(&group_of(self.inner.group), g => {
            let p = self.inner.get(g)?;
            let mut b = g.encode_element(&p.commitment);
            b.extend(g.encode_scalar(&p.challenge));
            b.extend(g.encode_scalar(&p.response));
            Ok(PyBytes::new(py, &b))
        })
    }

    #[staticmethod]
    fn from_bytes(group: &PyGroup, data: &[u8]) -> PyResult<Self> {
        with_group!(&group.inner, g => {
            let parts = split_fixed(data, &[g.element_len(), g.scalar_len(), g.scalar_len()])?;
            let p = SchnorrProof {
                commitment: g.decode_element(parts[0]).map_err(NativeError::from)?,
                challenge: g.decode_scalar(parts[1]).map_err(NativeError::from)?,
                response: g.decode_scalar(parts[2]).map_err(NativeError::from)?,
            };
            Ok(Self { inner: Tagged::new(g, p) })
        })
    }

    fn __repr__(&self) -> String {
        format!("SchnorrProof({})", self.inner.group)
    }
}

fn cp_statement<'a, G: Bridge>(
    g: &G,
    g1: &'a PyElement,
    a: &'a PyElement,
    g2: &'a PyElement,
    b: &'a PyElement,
) -> NativeResult<Statement<'a, G>> {
    Ok(Statement {
        g1: g1.get(g)?,
        a: a.get(g)?,
        g2: g2.get(g)?,
        b: b.get(g)?,
    })
}

#[pymethods]
impl PyChaumPedersenProof {
    /// Proves A = g1^s and B = g2^s for the secret key s, binding (g1, A, g2, B) and `context`.
    #[staticmethod]
    #[pyo3(signature = (g1, a, g2, b, secret_key, context, seed=None))]
    #[allow(clippy::too_many_arguments)]
    fn prove(
        g1: &PyElement,
        a: &PyElement,
        g2: &PyElement,
        b: &PyElement,
        secret_key: &PySecretKey,
        context: &[u8],
        seed: Option<&[u8]>,
    ) -> PyResult<Self> {
        let mut rng = rng_from(seed)?;
        let oracle = NativeOracle::new(context);
        with_group!(&group_of(secret_key.inner.group), g => {
            let st = cp_statement(g, g1, a, g2, b)?;
            let prefix = [st.g1, st.a, st.g2, st.b];
            let p = ChaumPedersenProof::prove(g, &oracle, &st, secret_key.get(g)?.expose(), &prefix, &[], &mut rng);
            Ok(Self { inner: Tagged::new(g, p) })
        })
    }

    /// Raises InvalidProof unless log_{g1} A = log_{g2} B is proven under `context`.
    fn verify(
        &self,
        py: Python<'_>,
        g1: &PyElement,
        a: &PyElement,
        g2: &PyElement,
        b: &PyElement,
        context: &[u8],
    ) -> PyResult<()> {
        let oracle = NativeOracle::new(context);
        with_group!(&group_of(self.inner.group), g => {
            let st = cp_statement(g, g1, a, g2, b)?;
            let p = self.inner.get(g)?;
            let prefix = [st.g1, st.a, st.g2, st.b];
            Ok(release(py, || p.verify(g, &oracle, &st, &prefix, &[])).map_err(NativeError::from)?)
        })
    }

    /// pad ‖ data ‖ challenge ‖ response at fixed widths.
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        with_group!(&group_of(self.inner.group), g => {
            let p = self.inner.get(g)?;
            let mut out = g.encode_element(&p.pad);
            out.extend(g.encode_element(&p.data));
            out.extend(g.encode_scalar(&p.challenge));
            out.extend(g.encode_scalar(&p.response));
            Ok(PyBytes::new(py, &out))
        })
    }

    #[staticmethod]
    fn from_bytes(group: &PyGroup, data: &[u8]) -> PyResult<Self> {
        with_group!(&group.inner, g => {
            let (e, s) = (g.element_len(), g.scalar_len());
            let parts = split_fixed(data, &[e, e, s, s])?;
            let p = ChaumPedersenProof {
                pad: g.decode_element(parts[0]).map_err(NativeError::from)?,
                data: g.decode_element(parts[1]).map_err(NativeError::from)?,
                challenge: g.decode_scalar(parts[2]).map_err(NativeError::from)?,
                response: g.decode_scalar(parts[3]).map_err(NativeError::from)?,
            };
            Ok(Self { inner: Tagged::new(g, p) })
        })
    }

    fn __repr__(&self) -> String {
        format!("ChaumPedersenProof({})", self.inner.group)
    }
}

#[pymethods]
impl PyProvenBit {
    #[getter]
    fn ciphertext(&self) -> PyResult<PyCiphertext> {
        with_group!(&group_of(self.inner.group), g => Ok(PyCiphertext::wrap(g, self.inner.get(g)?.ciphertext.clone())))
    }

    /// Raises InvalidProof unless the ciphertext provably encrypts 0 or 1 under `public_key`.
    fn verify(&self, public_key: &PyElement, context: &[u8]) -> PyResult<()> {
        let oracle = NativeOracle::new(context);
        with_group!(&group_of(self.inner.group), g => {
            let it = self.inner.get(g)?;
            Ok(it.proof.verify(g, &oracle, public_key.get(g)?, &it.ciphertext).map_err(NativeError::from)?)
        })
    }

    /// The same proof attached to another ciphertext (for tests and tampering drills).
    fn with_ciphertext(&self, ciphertext: &PyCiphertext) -> PyResult<Self> {
        with_group!(&group_of(self.inner.group), g => {
            let mut it: ProvenBit<_> = self.inner.get(g)?.clone();
            it.ciphertext = ciphertext.get(g)?.clone();
            Ok(Self { inner: Tagged::new(g, it) })
        })
    }

    fn __repr__(&self) -> String {
        format!("ProvenBit({})", self.inner.group)
    }
}

/// Encrypts each bit (0 or 1) and proves it, in parallel without the GIL.
#[pyfunction]
#[pyo3(signature = (public_key, bits, context, seed=None))]
pub fn encrypt_bits_with_proofs(
    py: Python<'_>,
    public_key: &PyPublicKey,
    bits: Vec<u64>,
    context: &[u8],
    seed: Option<&[u8]>,
) -> PyResult<Vec<PyProvenBit>> {
    let mut rng = rng_from(seed)?;
    let oracle = NativeOracle::new(context);
    with_group!(&group_of(public_key.inner.group), g => {
        let pk = public_key.get(g)?;
        let items = release(py, || encrypt_bits(g, &oracle, pk, &bits, &mut rng)).map_err(NativeError::from)?;
        Ok(items.into_iter().map(|it| PyProvenBit { inner: Tagged::new(g, it) }).collect())
    })
}

/// Verifies every bit proof in parallel; raises InvalidProof naming the first bad index.
#[pyfunction]
pub fn verify_bits(
    py: Python<'_>,
    public_key: &PyElement,
    items: Vec<PyRef<'_, PyProvenBit>>,
    context: &[u8],
) -> PyResult<()> {
    let oracle = NativeOracle::new(context);
    with_group!(&group_of(public_key.inner.group), g => {
        let k = public_key.get(g)?;
        let its = items.iter().map(|i| i.inner.get(g).cloned()).collect::<NativeResult<Vec<_>>>()?;
        release(py, || verify_bits_core(g, &oracle, k, &its)).map_err(|(i, e)| NativeError::ProofAt(i, e))?;
        Ok(())
    })
}

fn eg_item(obj: &Bound<'_, PyAny>) -> PyResult<EgHashItem> {
    if obj.is_none() {
        return Ok(EgHashItem::Null);
    }
    if let Ok(b) = obj.downcast::<PyBool>() {
        return Ok(EgHashItem::Bool(b.is_true()));
    }
    if obj.is_instance_of::<PyInt>() {
        let v: i64 = obj.extract()?;
        return Ok(EgHashItem::Int(v));
    }
    if let Ok(s) = obj.downcast::<PyString>() {
        return Ok(EgHashItem::Str(s.to_str()?.to_owned()));
    }
    if let Ok(e) = obj.downcast::<PyElement>() {
        let eg = ModpGroup::eg_4096();
        return match &group_of(e.get().inner.group) {
            crate::dual::AnyGroup::Modp(g) => Ok(EgHashItem::Num(e.get().get(g)?.value().clone())),
            crate::dual::AnyGroup::Ristretto(_) => Err(NativeError::NotModp(eg.id()).into()),
        };
    }
    if let Ok(s) = obj.downcast::<PyScalar>() {
        return with_group!(&group_of(s.get().inner.group), g => Ok(EgHashItem::Num(g.scalar_to_integer(s.get().get(g)?))));
    }
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        let items = obj
            .try_iter()?
            .map(|x| eg_item(&x?))
            .collect::<PyResult<Vec<_>>>()?;
        return Ok(EgHashItem::List(items));
    }
    Err(NativeError::Value(
        "hash_elems takes Element, Scalar, str, int, bool, None or lists of them",
    )
    .into())
}

/// ElectionGuard 1.0 `hash_elems(*items)` mod q, as electionguard 1.4.0 computes it.
/// Elements and scalars hash as minimal uppercase hex; ints as decimal.
#[pyfunction]
#[pyo3(signature = (*items))]
pub fn eg_hash_elems(items: &Bound<'_, PyTuple>) -> PyResult<PyScalar> {
    let parsed = items
        .iter()
        .map(|x| eg_item(&x))
        .collect::<PyResult<Vec<_>>>()?;
    let g = ModpGroup::eg_4096();
    let h = eg::hash_elems(&parsed, g.order());
    Ok(PyScalar::wrap(&g, g.scalar_from_integer(&h)))
}

/// Minimal uppercase hex of a non-negative int, as electionguard writes it ("00", "0100").
#[pyfunction]
pub fn eg_to_hex(value: &Bound<'_, PyAny>) -> PyResult<String> {
    let x = py_to_int(value)?;
    if x < 0 {
        return Err(NativeError::Value("electionguard hex is for non-negative integers").into());
    }
    Ok(eg::to_hex(&x))
}

/// Parses electionguard hex (either case) into an int.
#[pyfunction]
pub fn eg_from_hex<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    int_to_py(py, &eg::from_hex(text).map_err(NativeError::from)?)
}
