//! The native checks of votum's channels (spec/95): envelope signatures and payload digests, node and channel ids.

use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::convert::release;
use crate::errors::NativeError;

fn array<const N: usize>(value: &[u8], what: &'static str) -> PyResult<[u8; N]> {
    value
        .try_into()
        .map_err(|_| NativeError::Value(what).into())
}

/// Checks a received frame (spec/95.4): the Ed25519 signature over the tagged header, then every payload against
/// its digest. Returns None when the frame holds, else the refusal code (`bad-signature`, `bad-digest`,
/// `malformed`). Runs without the GIL.
#[pyfunction]
pub fn node_check_frame(
    py: Python<'_>,
    signing_key: &[u8],
    header: &[u8],
    signature: &[u8],
    payloads: Vec<Bound<'_, PyBytes>>,
    digests: Vec<Bound<'_, PyBytes>>,
) -> PyResult<Option<&'static str>> {
    let key: [u8; 32] = array(signing_key, "a signing key is 32 bytes")?;
    let Ok(signature) = <[u8; 64]>::try_from(signature) else {
        return Ok(Some("bad-signature"));
    };
    let mut want = Vec::with_capacity(digests.len());
    for d in &digests {
        match <[u8; 32]>::try_from(d.as_bytes()) {
            Ok(d) => want.push(d),
            Err(_) => return Ok(Some("malformed")),
        }
    }
    let payloads: Vec<&[u8]> = payloads.iter().map(|p| p.as_bytes()).collect();
    let result = release(py, || {
        votum_node::check_frame(&key, header, &signature, &payloads, &want)
    });
    Ok(result.err().map(|e| e.code()))
}

/// SHA-256 of each payload, without the GIL.
#[pyfunction]
pub fn node_digests<'py>(
    py: Python<'py>,
    payloads: Vec<Bound<'py, PyBytes>>,
) -> Vec<Bound<'py, PyBytes>> {
    let views: Vec<&[u8]> = payloads.iter().map(|p| p.as_bytes()).collect();
    let out = release(py, || {
        views
            .iter()
            .map(|p| votum_node::digest(p))
            .collect::<Vec<_>>()
    });
    out.iter().map(|d| PyBytes::new(py, d)).collect()
}

/// A node's id from its Ed25519 and X25519 public keys (spec/95.1).
#[pyfunction]
pub fn node_id<'py>(
    py: Python<'py>,
    signing_key: &[u8],
    sealing_key: &[u8],
) -> PyResult<Bound<'py, PyBytes>> {
    let s = array(signing_key, "a signing key is 32 bytes")?;
    let x = array(sealing_key, "a sealing key is 32 bytes")?;
    Ok(PyBytes::new(py, &votum_node::node_id(&s, &x)))
}

/// The id of one connection from both node ids and both hello nonces (spec/95.2).
#[pyfunction]
pub fn node_channel_id<'py>(
    py: Python<'py>,
    dialler: &[u8],
    acceptor: &[u8],
    dialler_nonce: &[u8],
    acceptor_nonce: &[u8],
) -> PyResult<Bound<'py, PyBytes>> {
    let d = array(dialler, "a node id is 32 bytes")?;
    let a = array(acceptor, "a node id is 32 bytes")?;
    Ok(PyBytes::new(
        py,
        &votum_node::channel_id(&d, &a, dialler_nonce, acceptor_nonce),
    ))
}

/// The bytes an envelope signature covers: the domain tag, then the header.
#[pyfunction]
pub fn node_signed_message<'py>(py: Python<'py>, header: &[u8]) -> Bound<'py, PyBytes> {
    PyBytes::new(py, &votum_node::signed_message(header))
}
