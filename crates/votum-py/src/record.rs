//! votum's record archive (spec/70) from Python: a streaming writer, a streaming reader, and the
//! directory conversions. File errors arrive as `OSError`, format errors as `RecordFormatError`.

use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::path::PathBuf;
use std::sync::Mutex;

use pyo3::exceptions::PyOSError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use votum_record::{ArchiveReader, ArchiveWriter, Kind, RecordError, Summary};

use crate::convert::release;
use crate::errors::NativeError;

fn to_py(e: RecordError) -> PyErr {
    NativeError::Record(e).into()
}

fn summary_dict<'py>(py: Python<'py>, s: &Summary) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("frames", s.frames)?;
    d.set_item("chain", hex::encode(s.chain))?;
    d.set_item("bytes", s.bytes)?;
    Ok(d)
}

fn kind_of(name: &str) -> PyResult<Kind> {
    Kind::from_name(name).ok_or_else(|| {
        NativeError::Record(RecordError::Document {
            path: String::new(),
            reason: format!("unknown document kind {name:?}"),
        })
        .into()
    })
}

type Writer = ArchiveWriter<BufWriter<File>>;

/// Writes a record archive front to back: `append` each document, then `close`. An archive that is
/// never closed has no trailer and every reader refuses it as truncated.
#[pyclass(name = "RecordWriter", module = "votum._native")]
pub struct PyRecordWriter {
    inner: Mutex<Option<Writer>>,
    path: PathBuf,
}

#[pymethods]
impl PyRecordWriter {
    #[new]
    fn new(path: PathBuf) -> PyResult<Self> {
        let file = File::create(&path).map_err(|e| {
            to_py(RecordError::Io {
                path: path.display().to_string(),
                source: e,
            })
        })?;
        let writer =
            ArchiveWriter::new(BufWriter::new(file), &path.display().to_string()).map_err(to_py)?;
        Ok(Self {
            inner: Mutex::new(Some(writer)),
            path,
        })
    }

    /// Appends one document (JSON text) of `kind` at `path` of the ElectionGuard 1.4 layout.
    fn append(&self, py: Python<'_>, kind: &str, path: &str, json: &str) -> PyResult<()> {
        let kind = kind_of(kind)?;
        let mut guard = self
            .inner
            .lock()
            .map_err(|_| PyOSError::new_err("writer poisoned"))?;
        let writer = guard.as_mut().ok_or_else(|| {
            PyOSError::new_err(format!("{} is already closed", self.path.display()))
        })?;
        release(py, || writer.append_json(kind, path, json)).map_err(to_py)
    }

    /// Writes the trailer; returns `{"frames", "chain" (hex), "bytes"}`.
    fn close<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let writer = self
            .inner
            .lock()
            .map_err(|_| PyOSError::new_err("writer poisoned"))?
            .take()
            .ok_or_else(|| {
                PyOSError::new_err(format!("{} is already closed", self.path.display()))
            })?;
        let (summary, _) = release(py, || writer.finish()).map_err(to_py)?;
        summary_dict(py, &summary)
    }

    fn __repr__(&self) -> String {
        format!("RecordWriter({:?})", self.path.display().to_string())
    }
}

type Reader = ArchiveReader<BufReader<File>>;

/// Reads a record archive front to back: iterating yields `(kind, path, json)` per document; the
/// iteration raises at the first defect (the trailer included), so reaching its end means the whole
/// archive was read and its chain matched. `summary` is set then.
#[pyclass(name = "RecordReader", module = "votum._native")]
pub struct PyRecordReader {
    inner: Mutex<Reader>,
    path: PathBuf,
}

#[pymethods]
impl PyRecordReader {
    #[new]
    fn new(path: PathBuf) -> PyResult<Self> {
        let file = File::open(&path).map_err(|e| {
            to_py(RecordError::Io {
                path: path.display().to_string(),
                source: e,
            })
        })?;
        let reader = ArchiveReader::new(BufReader::new(file)).map_err(to_py)?;
        Ok(Self {
            inner: Mutex::new(reader),
            path,
        })
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Option<(&'static str, String, String)>> {
        let mut guard = self
            .inner
            .lock()
            .map_err(|_| PyOSError::new_err("reader poisoned"))?;
        let reader: &mut Reader = &mut guard;
        let next = release(py, || {
            reader
                .next()
                .map(|f| f.and_then(|f| Ok((f.kind.name(), f.path.clone(), f.into_json()?))))
        });
        match next {
            None => Ok(None),
            Some(Ok(item)) => Ok(Some(item)),
            Some(Err(e)) => Err(to_py(e)),
        }
    }

    /// `{"frames", "chain", "bytes"}` once the whole archive has been read, else None.
    #[getter]
    fn summary<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let reader = self
            .inner
            .lock()
            .map_err(|_| PyOSError::new_err("reader poisoned"))?;
        reader.summary().map(|s| summary_dict(py, s)).transpose()
    }

    fn __repr__(&self) -> String {
        format!("RecordReader({:?})", self.path.display().to_string())
    }
}

/// Packs an ElectionGuard 1.4 record directory into an archive (spec/70.5).
#[pyfunction]
pub fn record_pack<'py>(
    py: Python<'py>,
    directory: PathBuf,
    archive: PathBuf,
) -> PyResult<Bound<'py, PyDict>> {
    let summary = release(py, || votum_record::pack_dir(&directory, &archive)).map_err(to_py)?;
    summary_dict(py, &summary)
}

/// Unpacks an archive into an absent or empty directory, checking all of it (spec/70.5).
#[pyfunction]
pub fn record_unpack<'py>(
    py: Python<'py>,
    archive: PathBuf,
    directory: PathBuf,
) -> PyResult<Bound<'py, PyDict>> {
    let summary = release(py, || votum_record::unpack_file(&archive, &directory)).map_err(to_py)?;
    summary_dict(py, &summary)
}

/// Reads a whole archive and checks its framing, order and chain without converting any document
/// (spec/70.1–70.3); returns `{"frames", "chain", "bytes"}`.
#[pyfunction]
pub fn record_check<'py>(py: Python<'py>, archive: PathBuf) -> PyResult<Bound<'py, PyDict>> {
    let summary = release(py, || -> Result<Summary, RecordError> {
        let file = File::open(&archive).map_err(|e| RecordError::Io {
            path: archive.display().to_string(),
            source: e,
        })?;
        let mut reader = ArchiveReader::new(BufReader::new(file))?;
        for frame in reader.by_ref() {
            frame?;
        }
        reader
            .summary()
            .cloned()
            .ok_or(RecordError::Truncated { offset: 0 })
    })
    .map_err(to_py)?;
    summary_dict(py, &summary)
}
