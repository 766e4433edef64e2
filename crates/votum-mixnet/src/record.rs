//! The mix record file (spec/91.7): a mixnet election's board in the board-file layout of
//! `votum_hash::board_file` behind the magic `VOTUMMIX`.

use votum_hash::board_file::{self as bf, BoardFileError};
pub use votum_hash::board_file::{Entry, MAX_PAYLOAD, VERSION};

use crate::MixError;

/// The first bytes of every mix record.
pub const MAGIC: &[u8; 8] = b"VOTUMMIX";
const WHAT: &str = "votum mix record";

impl From<BoardFileError> for MixError {
    fn from(e: BoardFileError) -> Self {
        match e {
            BoardFileError::Input(s) => MixError::Input(s),
            BoardFileError::Record { offset, reason } => MixError::Record { offset, reason },
            BoardFileError::Io(s) => MixError::Io(s),
            e @ BoardFileError::Version(_) => MixError::Record {
                offset: 8,
                reason: e.to_string(),
            },
        }
    }
}

/// Appends entries to a mix record and keeps the running hash.
pub struct RecordWriter<W: std::io::Write>(bf::BoardWriter<W>);

impl<W: std::io::Write> RecordWriter<W> {
    /// Starts a record for `election_id` (spec/80.1's identifiers): writes the header.
    pub fn new(out: W, election_id: &str) -> Result<Self, MixError> {
        Ok(Self(bf::BoardWriter::new(out, MAGIC, election_id)?))
    }

    /// Appends one entry and returns the new head hash.
    pub fn append(&mut self, kind: &str, name: &str, payload: &[u8]) -> Result<[u8; 32], MixError> {
        Ok(self.0.append(kind, name, payload)?)
    }

    /// The hash after the last entry (genesis before the first).
    pub fn head(&self) -> [u8; 32] {
        self.0.head()
    }

    /// Entries written.
    pub fn len(&self) -> u64 {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn into_inner(self) -> Result<W, MixError> {
        Ok(self.0.into_inner()?)
    }
}

/// Reads a mix record entry by entry, recomputing the chain.
pub struct RecordReader<R: std::io::Read>(bf::BoardReader<R>);

impl<R: std::io::Read> RecordReader<R> {
    /// Reads and checks the header.
    pub fn new(input: R) -> Result<Self, MixError> {
        Ok(Self(bf::BoardReader::new(input, MAGIC, WHAT)?))
    }

    /// Reads and checks the header, its errors as the board file's (a version this build does not
    /// read is told apart).
    pub fn open(input: R) -> Result<Self, BoardFileError> {
        bf::BoardReader::new(input, MAGIC, WHAT).map(Self)
    }

    pub fn election_id(&self) -> &str {
        self.0.election_id()
    }

    /// The hash after the entries read so far.
    pub fn head(&self) -> [u8; 32] {
        self.0.head()
    }

    /// The next entry, or `None` at the end of the file (a file ending inside an entry is an
    /// error, never a shorter record).
    pub fn next_entry(&mut self) -> Result<Option<Entry>, MixError> {
        Ok(self.0.next_entry()?)
    }

    /// The next entry, its length checked against `bound(kind, name)` before it is read.
    pub fn next_entry_within(
        &mut self,
        bound: impl FnOnce(&str, &str) -> bf::Bound,
    ) -> Result<Option<Entry>, MixError> {
        Ok(self.0.next_entry_within(bound)?)
    }
}

/// Whether the file at `path` starts like a mix record.
pub fn is_mix_record(path: &std::path::Path) -> bool {
    bf::has_magic(path, MAGIC)
}

/// Every entry of a record held in memory (tests and small records).
pub fn read_all(bytes: &[u8]) -> Result<(String, Vec<Entry>), MixError> {
    Ok(bf::read_all(bytes, MAGIC, WHAT)?)
}

/// A record in memory from entries (tests and tools that rewrite a record).
pub fn write_all(
    election_id: &str,
    entries: &[(String, String, Vec<u8>)],
) -> Result<Vec<u8>, MixError> {
    Ok(bf::write_all(MAGIC, election_id, entries)?)
}
