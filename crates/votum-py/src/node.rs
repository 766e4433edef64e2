//! The native checks of votum's channels (spec/95): envelope signatures and payload digests, node and channel ids.

use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::convert::release;

/// Frames whose payloads total at most this many bytes are checked or hashed holding the GIL: the check takes
/// tens of microseconds, less than handing the GIL back could cost the event loop that waits for it.
const HOLD_GIL_BYTES: usize = 64 << 10;
use crate::errors::NativeError;

fn array<const N: usize>(value: &[u8], what: &'static str) -> PyResult<[u8; N]> {
    value
        .try_into()
        .map_err(|_| NativeError::Value(what).into())
}

/// Runs `work` holding the GIL when it reads at most HOLD_GIL_BYTES, else without it.
fn by_size<T: Send>(py: Python<'_>, bytes: usize, work: impl FnOnce() -> T + Send) -> T {
    if bytes > HOLD_GIL_BYTES {
        release(py, work)
    } else {
        work()
    }
}

/// Checks a received frame with `check` after decoding its signature and digests: None when it holds, else the
/// refusal code (a signature of the wrong length is `bad-signature`, a digest of the wrong length `malformed`).
fn check_received(
    py: Python<'_>,
    signature: &[u8],
    payloads: &[Bound<'_, PyBytes>],
    digests: &[Bound<'_, PyBytes>],
    check: impl FnOnce(&[u8; 64], &[&[u8]], &[[u8; 32]]) -> Result<(), votum_node::FrameError> + Send,
) -> Option<&'static str> {
    let Ok(signature) = <[u8; 64]>::try_from(signature) else {
        return Some("bad-signature");
    };
    let mut want = Vec::with_capacity(digests.len());
    for d in digests {
        match <[u8; 32]>::try_from(d.as_bytes()) {
            Ok(d) => want.push(d),
            Err(_) => return Some("malformed"),
        }
    }
    let payloads: Vec<&[u8]> = payloads.iter().map(|p| p.as_bytes()).collect();
    let total = payloads.iter().map(|p| p.len()).sum();
    let result = by_size(py, total, || check(&signature, &payloads, &want));
    result.err().map(|e| e.code())
}

/// Checks a received frame (spec/95.4): the Ed25519 signature over the tagged header, then every payload against
/// its digest. Returns None when the frame holds, else the refusal code (`bad-signature`, `bad-digest`,
/// `malformed`). Frames with more than 64 KiB of payload are checked without the GIL.
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
    Ok(check_received(
        py,
        signature,
        &payloads,
        &digests,
        |sig, p, d| votum_node::check_frame(&key, header, sig, p, d),
    ))
}

/// A node's envelope signer (spec/95.3): holds the Ed25519 key, zeroized when dropped; never shows it.
#[pyclass(frozen, name = "NodeSigner", module = "votum._native")]
pub struct PyNodeSigner {
    inner: votum_node::EnvelopeSigner,
}

#[pymethods]
impl PyNodeSigner {
    /// The signer of the Ed25519 key with this 32-byte seed (RFC 8032's private key).
    #[new]
    fn new(seed: &[u8]) -> PyResult<Self> {
        let seed: [u8; 32] = array(seed, "an Ed25519 seed is 32 bytes")?;
        let inner = votum_node::EnvelopeSigner::from_seed(&seed);
        let mut seed = seed;
        zeroize::Zeroize::zeroize(&mut seed);
        Ok(PyNodeSigner { inner })
    }

    /// The public key (32 bytes).
    fn verifying_key<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.verifying_key())
    }

    /// The signature (64 bytes) of a frame header over the domain tag and the header.
    fn sign_header<'py>(&self, py: Python<'py>, header: &[u8]) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.sign_header(header))
    }

    /// The node's signature (64 bytes) on a statement about something it posts to a record, in
    /// the record domain (never an envelope's).
    fn sign_record<'py>(&self, py: Python<'py>, statement: &[u8]) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.sign_record(statement))
    }

    fn __repr__(&self) -> String {
        format!("{:?}", self.inner)
    }
}

/// A peer's signing key decoded once, for the checks of every frame on a connection.
#[pyclass(frozen, name = "NodePeerKey", module = "votum._native")]
pub struct PyNodePeerKey {
    inner: votum_node::PeerKey,
}

#[pymethods]
impl PyNodePeerKey {
    #[new]
    fn new(signing_key: &[u8]) -> PyResult<Self> {
        let key: [u8; 32] = array(signing_key, "a signing key is 32 bytes")?;
        let inner = votum_node::PeerKey::new(&key)
            .map_err(|_| PyErr::from(NativeError::Value("not a valid Ed25519 public key")))?;
        Ok(PyNodePeerKey { inner })
    }

    /// As `node_check_frame`, with this key: None when the frame holds, else the refusal code. Frames with
    /// more than 64 KiB of payload are checked without the GIL.
    fn check_frame(
        &self,
        py: Python<'_>,
        header: &[u8],
        signature: &[u8],
        payloads: Vec<Bound<'_, PyBytes>>,
        digests: Vec<Bound<'_, PyBytes>>,
    ) -> Option<&'static str> {
        check_received(py, signature, &payloads, &digests, |sig, p, d| {
            self.inner.check_frame(header, sig, p, d)
        })
    }
}

/// SHA-256 of each payload (without the GIL when they total more than 64 KiB).
#[pyfunction]
pub fn node_digests<'py>(
    py: Python<'py>,
    payloads: Vec<Bound<'py, PyBytes>>,
) -> Vec<Bound<'py, PyBytes>> {
    let views: Vec<&[u8]> = payloads.iter().map(|p| p.as_bytes()).collect();
    let hash = || {
        views
            .iter()
            .map(|p| votum_node::digest(p))
            .collect::<Vec<_>>()
    };
    let out = by_size(py, views.iter().map(|p| p.len()).sum(), hash);
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
