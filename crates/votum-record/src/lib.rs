//! votum's record archive (spec/70): an ElectionGuard 1.4 election record in one file, written and read
//! as a stream of hash-chained frames, numbers as bytes.
//!
//! - [`doc`]: one JSON document to and from its MessagePack transcription (spec/70.4);
//! - [`archive`]: [`ArchiveWriter`] and [`ArchiveReader`] (spec/70.1–70.3);
//! - [`layout`]: the ElectionGuard 1.4 record directory: its documents in archive order, strays, one
//!   document read (a regular file of bounded size);
//! - [`convert`]: an ElectionGuard 1.4 record directory to an archive and back (spec/70.5);
//! - [`source`]: [`Documents`], either form read one document at a time, in archive order.
//!
//! This crate knows formats only: no group arithmetic, no proofs, no secrets (the verifier depends on it).

pub mod archive;
pub mod convert;
pub mod doc;
pub mod layout;
pub mod source;

pub use archive::{ArchiveReader, ArchiveWriter, Frame, Kind, Summary};
pub use convert::{pack_dir, unpack_file};
pub use source::{Document, Documents, Form};

/// Everything that can go wrong reading or writing a record archive.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("I/O error on {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("not a votum record archive (the file does not start with \"VOTUMREC\")")]
    BadMagic,
    #[error("record archive version {version} flags {flags:#06x}: this build reads version 1 with flags 0")]
    UnsupportedVersion { version: u16, flags: u16 },
    #[error("at byte {offset}: {reason}")]
    Malformed { offset: u64, reason: String },
    #[error("document {path}: {reason}")]
    Document { path: String, reason: String },
    #[error("the archive ends at byte {offset} without its trailer (truncated?)")]
    Truncated { offset: u64 },
    #[error("trailer: {reason}")]
    Trailer { reason: String },
}

impl RecordError {
    pub(crate) fn io(path: impl std::fmt::Display, source: std::io::Error) -> Self {
        RecordError::Io {
            path: path.to_string(),
            source,
        }
    }

    pub(crate) fn doc(path: &str, reason: impl Into<String>) -> Self {
        RecordError::Document {
            path: path.to_owned(),
            reason: reason.into(),
        }
    }
}
