//! Conversions between Python objects and core values, and the one GIL-release helper.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyInt};
use rand_chacha::rand_core::{OsRng, RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use votum_arith::{Integer, Order};

use crate::errors::{NativeError, NativeResult};

/// Runs heavy work without the GIL. All long computations go through here.
pub fn release<T: Send>(py: Python<'_>, work: impl FnOnce() -> T + Send) -> T {
    py.allow_threads(work)
}

/// A ChaCha20 generator: seeded (32 bytes, for reproducible runs) or from the OS.
pub fn rng_from(seed: Option<&[u8]>) -> NativeResult<ChaCha20Rng> {
    match seed {
        Some(s) => {
            let arr: [u8; 32] = s.try_into().map_err(|_| NativeError::SeedLength(s.len()))?;
            Ok(ChaCha20Rng::from_seed(arr))
        }
        None => {
            let mut arr = [0u8; 32];
            OsRng.fill_bytes(&mut arr);
            Ok(ChaCha20Rng::from_seed(arr))
        }
    }
}

pub fn int_to_py<'py>(py: Python<'py>, x: &Integer) -> PyResult<Bound<'py, PyAny>> {
    let digits = x.to_digits::<u8>(Order::Msf);
    let value = py
        .get_type::<PyInt>()
        .call_method1("from_bytes", (PyBytes::new(py, &digits), "big"))?;
    if *x < 0 {
        value.neg()
    } else {
        Ok(value)
    }
}

pub fn py_to_int(obj: &Bound<'_, PyAny>) -> PyResult<Integer> {
    if !obj.is_instance_of::<PyInt>() {
        return Err(NativeError::Value("expected an int").into());
    }
    let negative = obj.lt(0)?;
    let magnitude = if negative { obj.neg()? } else { obj.clone() };
    let bits: usize = magnitude.call_method0("bit_length")?.extract()?;
    let bytes: Vec<u8> = magnitude
        .call_method1("to_bytes", (bits.div_ceil(8), "big"))?
        .extract()?;
    let x = Integer::from_digits(&bytes, Order::Msf);
    Ok(if negative { -x } else { x })
}

/// Splits `bytes` into fields of the given sizes, refusing any other total length.
pub fn split_fixed<'a>(bytes: &'a [u8], sizes: &[usize]) -> NativeResult<Vec<&'a [u8]>> {
    let total: usize = sizes.iter().sum();
    if bytes.len() != total {
        return Err(NativeError::Group(votum_group::GroupError::WrongLength {
            expected: total,
            got: bytes.len(),
        }));
    }
    let mut out = Vec::with_capacity(sizes.len());
    let mut at = 0;
    for s in sizes {
        out.push(&bytes[at..at + s]);
        at += s;
    }
    Ok(out)
}

/// `__reduce__` for values restored from canonical bytes by a module-level `_restore_*` function.
pub fn reduce_from_bytes<'py>(
    py: Python<'py>,
    restore: &str,
    group: votum_group::GroupId,
    bytes: &[u8],
) -> PyResult<Bound<'py, PyAny>> {
    let restore = py.import("votum._native")?.getattr(restore)?;
    (restore, (group.name(), PyBytes::new(py, bytes)))
        .into_pyobject(py)
        .map(|t| t.into_any())
}
