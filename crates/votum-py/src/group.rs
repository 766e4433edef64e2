use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use votum_group::{Group, GroupId};

use crate::convert::{int_to_py, py_to_int, release, rng_from};
use crate::dual::{AnyGroup, Bridge, ElementF, ScalarF, Tagged};
use crate::errors::{NativeError, NativeResult};
use crate::with_group;

/// A prime-order group: "eg-4096", "modp-2048", "modp-3072" or "ristretto255".
#[pyclass(frozen, name = "Group", module = "votum._native")]
#[derive(Clone)]
pub struct PyGroup {
    pub inner: AnyGroup,
}

/// An element of a group. Immutable, hashable, picklable.
#[pyclass(frozen, name = "Element", module = "votum._native")]
#[derive(Clone)]
pub struct PyElement {
    pub inner: Tagged<ElementF>,
}

/// An integer modulo the group order. Its value is never shown in `repr`.
#[pyclass(frozen, name = "Scalar", module = "votum._native")]
#[derive(Clone)]
pub struct PyScalar {
    pub inner: Tagged<ScalarF>,
}

pub fn group_of(id: GroupId) -> AnyGroup {
    AnyGroup::from_id(id)
}

impl PyElement {
    pub fn wrap<G: Bridge>(g: &G, e: G::Element) -> Self {
        Self {
            inner: Tagged::new(g, e),
        }
    }
    pub fn get<G: Bridge>(&self, g: &G) -> NativeResult<&G::Element> {
        self.inner.get(g)
    }
    pub fn bytes(&self) -> Vec<u8> {
        with_group!(&group_of(self.inner.group), g => self.get(g).map(|e| g.encode_element(e)).unwrap_or_default())
    }
}

impl PyScalar {
    pub fn wrap<G: Bridge>(g: &G, s: G::Scalar) -> Self {
        Self {
            inner: Tagged::new(g, s),
        }
    }
    pub fn get<G: Bridge>(&self, g: &G) -> NativeResult<&G::Scalar> {
        self.inner.get(g)
    }
    pub fn bytes(&self) -> Vec<u8> {
        with_group!(&group_of(self.inner.group), g => self.get(g).map(|s| g.encode_scalar(s)).unwrap_or_default())
    }
}

pub fn elements<G: Bridge>(g: &G, xs: &[PyRef<'_, PyElement>]) -> NativeResult<Vec<G::Element>> {
    xs.iter().map(|x| x.get(g).cloned()).collect()
}

pub fn scalars<G: Bridge>(g: &G, xs: &[PyRef<'_, PyScalar>]) -> NativeResult<Vec<G::Scalar>> {
    xs.iter().map(|x| x.get(g).cloned()).collect()
}

fn hash_bytes(b: &[u8]) -> u64 {
    let mut h = DefaultHasher::new();
    b.hash(&mut h);
    h.finish()
}

#[pymethods]
impl PyGroup {
    #[new]
    pub fn new(name: &str) -> PyResult<Self> {
        Ok(Self {
            inner: group_of(GroupId::from_name(name).map_err(NativeError::from)?),
        })
    }

    /// Names of every supported group.
    #[staticmethod]
    fn names() -> Vec<&'static str> {
        GroupId::ALL.iter().map(|g| g.name()).collect()
    }

    #[getter]
    fn name(&self) -> &'static str {
        self.inner.id().name()
    }

    /// The prime order q.
    #[getter]
    fn order<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        with_group!(&self.inner, g => int_to_py(py, g.order()))
    }

    /// The modulus p (modp groups only).
    #[getter]
    fn p<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match &self.inner {
            AnyGroup::Modp(g) => int_to_py(py, g.p()),
            AnyGroup::Ristretto(g) => Err(NativeError::NotModp(g.id()).into()),
        }
    }

    /// Builds the generator's precomputed tables now instead of at the first exponentiation that
    /// needs them (about 0.4 s for eg-4096; nothing to do for ristretto255, whose table is static).
    fn warm(&self, py: Python<'_>) {
        if let AnyGroup::Modp(g) = &self.inner {
            py.allow_threads(|| g.warm());
        }
    }

    #[getter]
    fn element_len(&self) -> usize {
        with_group!(&self.inner, g => g.element_len())
    }

    #[getter]
    fn scalar_len(&self) -> usize {
        with_group!(&self.inner, g => g.scalar_len())
    }

    #[getter]
    fn generator(&self) -> PyElement {
        with_group!(&self.inner, g => PyElement::wrap(g, g.generator().clone()))
    }

    #[getter]
    fn identity(&self) -> PyElement {
        with_group!(&self.inner, g => PyElement::wrap(g, g.identity()))
    }

    /// Decodes a canonical element; raises InvalidInput on bad length, range or subgroup.
    pub fn element_from_bytes(&self, py: Python<'_>, data: &[u8]) -> PyResult<PyElement> {
        let data = data.to_vec();
        with_group!(&self.inner, g => Ok(PyElement::wrap(g, release(py, || g.decode_element(&data)).map_err(NativeError::from)?)))
    }

    /// An element from its integer value (modp groups; checks subgroup membership).
    fn element_from_int(&self, value: &Bound<'_, PyAny>) -> PyResult<PyElement> {
        let x = py_to_int(value)?;
        match &self.inner {
            AnyGroup::Modp(g) => Ok(PyElement::wrap(
                g,
                g.element(&x).map_err(NativeError::from)?,
            )),
            AnyGroup::Ristretto(g) => Err(NativeError::NotModp(g.id()).into()),
        }
    }

    pub fn scalar_from_bytes(&self, data: &[u8]) -> PyResult<PyScalar> {
        with_group!(&self.inner, g => Ok(PyScalar::wrap(g, g.decode_scalar(data).map_err(NativeError::from)?)))
    }

    /// A scalar from an int in [0, q); raises InvalidInput otherwise.
    fn scalar(&self, value: &Bound<'_, PyAny>) -> PyResult<PyScalar> {
        let x = py_to_int(value)?;
        with_group!(&self.inner, g => {
            if x < 0 || x >= *g.order() {
                return Err(NativeError::Group(votum_group::GroupError::ScalarOutOfRange).into());
            }
            Ok(PyScalar::wrap(g, g.scalar_from_integer(&x)))
        })
    }

    /// A scalar from any int, reduced modulo q.
    fn scalar_mod(&self, value: &Bound<'_, PyAny>) -> PyResult<PyScalar> {
        let x = py_to_int(value)?;
        with_group!(&self.inner, g => Ok(PyScalar::wrap(g, g.scalar_from_integer(&x))))
    }

    /// A uniformly random scalar (from the OS, or from a 32-byte seed for reproducible runs).
    #[pyo3(signature = (seed=None))]
    fn random_scalar(&self, seed: Option<&[u8]>) -> PyResult<PyScalar> {
        let mut rng = rng_from(seed)?;
        with_group!(&self.inner, g => Ok(PyScalar::wrap(g, g.random_scalar(&mut rng))))
    }

    /// `[g^s for s in scalars]`, in parallel without the GIL.
    fn pow_generator_many(
        &self,
        py: Python<'_>,
        scalars: Vec<PyRef<'_, PyScalar>>,
    ) -> PyResult<Vec<PyElement>> {
        use rayon::prelude::*;
        with_group!(&self.inner, g => {
            let s = crate::group::scalars(g, &scalars)?;
            let out: Vec<_> = release(py, || s.par_iter().map(|x| g.pow_generator(x)).collect());
            Ok(out.into_iter().map(|e| PyElement::wrap(g, e)).collect())
        })
    }

    /// `[b^s for b, s in zip(bases, scalars)]`, in parallel without the GIL.
    fn pow_many(
        &self,
        py: Python<'_>,
        bases: Vec<PyRef<'_, PyElement>>,
        scalars: Vec<PyRef<'_, PyScalar>>,
    ) -> PyResult<Vec<PyElement>> {
        use rayon::prelude::*;
        if bases.len() != scalars.len() {
            return Err(NativeError::LengthMismatch {
                what: "pow_many",
                left: bases.len(),
                right: scalars.len(),
            }
            .into());
        }
        with_group!(&self.inner, g => {
            let b = elements(g, &bases)?;
            let s = crate::group::scalars(g, &scalars)?;
            let out: Vec<_> = release(py, || b.par_iter().zip(s.par_iter()).map(|(x, e)| g.pow(x, e)).collect());
            Ok(out.into_iter().map(|e| PyElement::wrap(g, e)).collect())
        })
    }

    /// `prod(b^s)` by multi-exponentiation, without the GIL.
    fn multi_pow(
        &self,
        py: Python<'_>,
        bases: Vec<PyRef<'_, PyElement>>,
        scalars: Vec<PyRef<'_, PyScalar>>,
    ) -> PyResult<PyElement> {
        with_group!(&self.inner, g => {
            let b = elements(g, &bases)?;
            let s = crate::group::scalars(g, &scalars)?;
            let out = release(py, || g.multi_pow(&b, &s)).map_err(NativeError::from)?;
            Ok(PyElement::wrap(g, out))
        })
    }

    /// `count` elements with unknown discrete logs, derived from a public seed.
    fn independent_generators(&self, py: Python<'_>, seed: &[u8], count: usize) -> Vec<PyElement> {
        let seed = seed.to_vec();
        with_group!(&self.inner, g => {
            let out = release(py, || votum_hash::independent_generators(g, &seed, count));
            out.into_iter().map(|e| PyElement::wrap(g, e)).collect()
        })
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .downcast::<PyGroup>()
            .map(|o| o.get().inner.id() == self.inner.id())
            .unwrap_or(false)
    }

    fn __hash__(&self) -> u64 {
        hash_bytes(self.inner.id().name().as_bytes())
    }

    fn __repr__(&self) -> String {
        format!("Group('{}')", self.inner.id().name())
    }

    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let cls = py.get_type::<PyGroup>();
        (cls, (self.inner.id().name(),)).into_pyobject(py)
    }
}

#[pymethods]
impl PyElement {
    #[getter]
    fn group(&self) -> PyGroup {
        PyGroup {
            inner: group_of(self.inner.group),
        }
    }

    /// Canonical fixed-width encoding.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.bytes())
    }

    #[staticmethod]
    fn from_bytes(py: Python<'_>, group: &PyGroup, data: &[u8]) -> PyResult<PyElement> {
        group.element_from_bytes(py, data)
    }

    /// The integer value (modp groups).
    fn to_int<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match &group_of(self.inner.group) {
            AnyGroup::Modp(g) => int_to_py(py, self.get(g)?.value()),
            AnyGroup::Ristretto(g) => Err(NativeError::NotModp(g.id()).into()),
        }
    }

    fn __mul__(&self, other: &PyElement) -> PyResult<PyElement> {
        with_group!(&group_of(self.inner.group), g => Ok(PyElement::wrap(g, g.op(self.get(g)?, other.get(g)?))))
    }

    fn __truediv__(&self, other: &PyElement) -> PyResult<PyElement> {
        with_group!(&group_of(self.inner.group), g => Ok(PyElement::wrap(g, g.div(self.get(g)?, other.get(g)?))))
    }

    fn __pow__(
        &self,
        py: Python<'_>,
        exponent: &PyScalar,
        modulo: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyElement> {
        if modulo.is_some_and(|m| !m.is_none()) {
            return Err(NativeError::Value("three-argument pow is not supported").into());
        }
        with_group!(&group_of(self.inner.group), g => {
            let (b, e) = (self.get(g)?.clone(), exponent.get(g)?.clone());
            Ok(PyElement::wrap(g, release(py, || g.pow(&b, &e))))
        })
    }

    fn inverse(&self) -> PyResult<PyElement> {
        with_group!(&group_of(self.inner.group), g => Ok(PyElement::wrap(g, g.inverse(self.get(g)?))))
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .downcast::<PyElement>()
            .map(|o| {
                let o = o.get();
                o.inner.group == self.inner.group && o.inner.value == self.inner.value
            })
            .unwrap_or(false)
    }

    fn __hash__(&self) -> u64 {
        hash_bytes(&self.bytes())
    }

    pub fn __repr__(&self) -> String {
        let b = self.bytes();
        let hex: String = b.iter().take(8).map(|x| format!("{x:02x}")).collect();
        format!("Element({}, {hex}…)", self.inner.group)
    }

    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        crate::convert::reduce_from_bytes(py, "_restore_element", self.inner.group, &self.bytes())
    }
}

#[pymethods]
impl PyScalar {
    #[getter]
    fn group(&self) -> PyGroup {
        PyGroup {
            inner: group_of(self.inner.group),
        }
    }

    /// Canonical fixed-width encoding (big-endian for modp groups, little-endian for ristretto255).
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.bytes())
    }

    #[staticmethod]
    fn from_bytes(group: &PyGroup, data: &[u8]) -> PyResult<PyScalar> {
        group.scalar_from_bytes(data)
    }

    fn to_int<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        with_group!(&group_of(self.inner.group), g => int_to_py(py, &g.scalar_to_integer(self.get(g)?)))
    }

    fn __add__(&self, other: &PyScalar) -> PyResult<PyScalar> {
        with_group!(&group_of(self.inner.group), g => Ok(PyScalar::wrap(g, g.scalar_add(self.get(g)?, other.get(g)?))))
    }

    fn __sub__(&self, other: &PyScalar) -> PyResult<PyScalar> {
        with_group!(&group_of(self.inner.group), g => Ok(PyScalar::wrap(g, g.scalar_sub(self.get(g)?, other.get(g)?))))
    }

    fn __mul__(&self, other: &PyScalar) -> PyResult<PyScalar> {
        with_group!(&group_of(self.inner.group), g => Ok(PyScalar::wrap(g, g.scalar_mul(self.get(g)?, other.get(g)?))))
    }

    fn __neg__(&self) -> PyResult<PyScalar> {
        with_group!(&group_of(self.inner.group), g => Ok(PyScalar::wrap(g, g.scalar_neg(self.get(g)?))))
    }

    fn inverse(&self) -> PyResult<PyScalar> {
        with_group!(&group_of(self.inner.group), g => Ok(PyScalar::wrap(g, g.scalar_inverse(self.get(g)?).map_err(NativeError::from)?)))
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .downcast::<PyScalar>()
            .map(|o| {
                let o = o.get();
                o.inner.group == self.inner.group && o.inner.value == self.inner.value
            })
            .unwrap_or(false)
    }

    fn __hash__(&self) -> u64 {
        hash_bytes(&self.bytes())
    }

    fn __repr__(&self) -> String {
        format!("Scalar({}, <hidden>)", self.inner.group)
    }

    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        crate::convert::reduce_from_bytes(py, "_restore_scalar", self.inner.group, &self.bytes())
    }
}

#[pyfunction]
pub fn _restore_element(py: Python<'_>, group: &str, data: &[u8]) -> PyResult<PyElement> {
    PyGroup::new(group)?.element_from_bytes(py, data)
}

#[pyfunction]
pub fn _restore_scalar(group: &str, data: &[u8]) -> PyResult<PyScalar> {
    PyGroup::new(group)?.scalar_from_bytes(data)
}
