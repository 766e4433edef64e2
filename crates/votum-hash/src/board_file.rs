//! Board files (spec/91.7): a board written entry after entry as it is posted and read back as a
//! stream, behind an 8-byte magic naming the kind of record (`VOTUMMIX` for mix records,
//! `VOTUMSVR` for split-value records). The file holds the payloads; the chain of spec/80.2 is
//! recomputed by whoever reads it, so the head hash a reader ends with is the commitment to the
//! whole record.

use std::io::{Read, Write};

use crate::board::ChainChecker;

/// The format version this code writes and reads.
pub const VERSION: u16 = 1;
/// The largest payload a reader accepts (16 GiB; a list of 10^8 ristretto255 rows of width 1 is
/// 6.4 GB).
pub const MAX_PAYLOAD: u64 = 1 << 34;

/// How long an entry's payload may be, as its kind says (issue 43, item 9: the reader once read any
/// entry whole, up to [`MAX_PAYLOAD`], so a sparse 3 GiB entry cost 3 GiB of memory before any check).
#[derive(Clone, Copy, Debug)]
pub enum Bound {
    /// At most this many bytes.
    Max(u64),
    /// A list that leads with its count n (8 bytes, big-endian) of items of `item` bytes each: the payload
    /// must be exactly 8 + n × `item` bytes, and at most `max`; checked on those 8 bytes before the rest
    /// is read.
    Counted { item: u64, max: u64 },
    /// A payload whose own leading bytes say how long it may be: `peek` is shown the first bytes
    /// (never more than [`PEEK_MAX`]) and asks for more or names the bound.
    Peek(fn(&[u8]) -> Peek),
}

/// What a [`Bound::Peek`] function makes of a payload's first bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Peek {
    /// Show me the first n bytes (more than shown so far; a payload shorter than that is shown whole).
    More(u64),
    /// The payload may be at most this long.
    Max(u64),
}

/// The most of a payload a [`Bound::Peek`] function is shown.
pub const PEEK_MAX: u64 = 1 << 20;

/// Why a board file could not be written or read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BoardFileError {
    /// A label or election id the format cannot hold.
    #[error("{0}")]
    Input(String),
    /// The bytes at `offset` are not what the format allows.
    #[error("record, byte {offset}: {reason}")]
    Record { offset: u64, reason: String },
    #[error("i/o: {0}")]
    Io(String),
    /// A format version this build does not read (the header's bytes 8–9).
    #[error("record, byte 8: version {0} (this build reads version {VERSION})")]
    Version(u16),
}

/// Checks an election id (spec/80.1): letters, digits, '.', '_', '-', at most 128 bytes, starting
/// with a letter or digit.
pub fn check_election_id(id: &str) -> Result<(), BoardFileError> {
    let ok = !id.is_empty()
        && id.len() <= 128
        && id.as_bytes()[0].is_ascii_alphanumeric()
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
    if ok {
        Ok(())
    } else {
        Err(BoardFileError::Input(format!(
            "election id {id:?}: letters, digits, '.', '_', '-', at most 128, starting with a letter or digit"
        )))
    }
}

/// One entry: its place, kind and name, its payload and the chain hash after it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub seq: u64,
    pub kind: String,
    pub name: String,
    pub payload: Vec<u8>,
    pub hash: [u8; 32],
}

fn label_ok(s: &str) -> bool {
    !s.is_empty() && s.len() <= 255 && s.bytes().all(|b| b.is_ascii_graphic())
}

fn io_err(e: std::io::Error) -> BoardFileError {
    BoardFileError::Io(e.to_string())
}

/// Appends entries to a record and keeps the running hash.
pub struct BoardWriter<W: Write> {
    out: W,
    chain: ChainChecker,
}

impl<W: Write> BoardWriter<W> {
    /// Starts a record for `election_id` (spec/80.1's identifiers) behind `magic`: writes the header.
    pub fn new(mut out: W, magic: &[u8; 8], election_id: &str) -> Result<Self, BoardFileError> {
        check_election_id(election_id)?;
        let mut header = magic.to_vec();
        header.extend_from_slice(&VERSION.to_be_bytes());
        header.extend_from_slice(&0u16.to_be_bytes());
        header.push(election_id.len() as u8);
        header.extend_from_slice(election_id.as_bytes());
        out.write_all(&header).map_err(io_err)?;
        Ok(Self {
            out,
            chain: ChainChecker::new(election_id),
        })
    }

    /// Appends one entry and returns the new head hash.
    pub fn append(
        &mut self,
        kind: &str,
        name: &str,
        payload: &[u8],
    ) -> Result<[u8; 32], BoardFileError> {
        if !label_ok(kind) || !label_ok(name) {
            return Err(BoardFileError::Input(format!(
                "entry kind {kind:?} / name {name:?}: 1 to 255 printable ASCII characters"
            )));
        }
        let mut frame = Vec::with_capacity(2 + kind.len() + name.len() + 8);
        frame.push(kind.len() as u8);
        frame.extend_from_slice(kind.as_bytes());
        frame.push(name.len() as u8);
        frame.extend_from_slice(name.as_bytes());
        frame.extend_from_slice(&(payload.len() as u64).to_be_bytes());
        self.out.write_all(&frame).map_err(io_err)?;
        self.out.write_all(payload).map_err(io_err)?;
        self.out.flush().map_err(io_err)?;
        Ok(self.chain.append(kind, name, payload))
    }

    /// The hash after the last entry (genesis before the first).
    pub fn head(&self) -> [u8; 32] {
        self.chain.head()
    }

    /// Entries written.
    pub fn len(&self) -> u64 {
        self.chain.len()
    }

    pub fn is_empty(&self) -> bool {
        self.chain.is_empty()
    }

    pub fn into_inner(mut self) -> Result<W, BoardFileError> {
        self.out.flush().map_err(io_err)?;
        Ok(self.out)
    }
}

/// Reads a record entry by entry, recomputing the chain.
pub struct BoardReader<R: Read> {
    input: R,
    election_id: String,
    chain: ChainChecker,
    offset: u64,
}

impl<R: Read> BoardReader<R> {
    /// Reads and checks the header, which must start with `magic` (`what` names the format in the
    /// error).
    pub fn new(mut input: R, magic: &[u8; 8], what: &str) -> Result<Self, BoardFileError> {
        let bad = |offset: u64, reason: &str| BoardFileError::Record {
            offset,
            reason: reason.into(),
        };
        let mut header = [0u8; 13];
        read_exact(&mut input, &mut header, 0, "the header")?;
        if &header[..8] != magic {
            return Err(bad(0, &format!("not a {what} (magic)")));
        }
        let version = u16::from_be_bytes([header[8], header[9]]);
        if version != VERSION {
            return Err(BoardFileError::Version(version));
        }
        if header[10] != 0 || header[11] != 0 {
            return Err(bad(10, "unknown flags"));
        }
        let mut id = vec![0u8; header[12] as usize];
        read_exact(&mut input, &mut id, 13, "the election id")?;
        let election_id = String::from_utf8(id).map_err(|_| bad(13, "election id not UTF-8"))?;
        check_election_id(&election_id).map_err(|e| bad(13, &e.to_string()))?;
        let offset = 13 + election_id.len() as u64;
        Ok(Self {
            input,
            chain: ChainChecker::new(&election_id),
            election_id,
            offset,
        })
    }

    pub fn election_id(&self) -> &str {
        &self.election_id
    }

    /// The hash after the entries read so far.
    pub fn head(&self) -> [u8; 32] {
        self.chain.head()
    }

    /// Bytes read so far: after `next_entry`, the entry's payload ends here.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The next entry, or `None` at the end of the file (a file ending inside an entry is an
    /// error, never a shorter record).
    pub fn next_entry(&mut self) -> Result<Option<Entry>, BoardFileError> {
        self.next_entry_within(|_, _| Bound::Max(MAX_PAYLOAD))
    }

    /// [`Self::next_entry`], with the payload's length checked against `bound(kind, name)` before it is
    /// read: a payload longer than its kind allows is an error, and nothing of it is read.
    pub fn next_entry_within(
        &mut self,
        bound: impl FnOnce(&str, &str) -> Bound,
    ) -> Result<Option<Entry>, BoardFileError> {
        let start = self.offset;
        let mut len = [0u8; 1];
        match self.input.read(&mut len) {
            Ok(0) => return Ok(None),
            Ok(_) => {}
            Err(e) => return Err(io_err(e)),
        }
        self.offset += 1;
        let kind = self.label(len[0], "kind")?;
        let mut nlen = [0u8; 1];
        read_exact(&mut self.input, &mut nlen, self.offset, "a name length")?;
        self.offset += 1;
        let name = self.label(nlen[0], "name")?;
        let mut plen = [0u8; 8];
        read_exact(&mut self.input, &mut plen, self.offset, "a payload length")?;
        let plen = u64::from_be_bytes(plen);
        if plen > MAX_PAYLOAD {
            return Err(BoardFileError::Record {
                offset: self.offset,
                reason: format!("payload of {plen} bytes (limit {MAX_PAYLOAD})"),
            });
        }
        self.offset += 8;
        let too_long = |what: String| BoardFileError::Record {
            offset: start,
            reason: format!(
                "entry {} ({kind} {name}): payload of {plen} bytes, {what}",
                self.chain.len()
            ),
        };
        let mut payload = Vec::new();
        match bound(&kind, &name) {
            Bound::Max(max) if plen > max.min(MAX_PAYLOAD) => {
                return Err(too_long(format!(
                    "more than a {kind} entry can hold ({max})"
                )));
            }
            Bound::Max(_) => {}
            Bound::Peek(peek) => {
                let mut shown = 0u64;
                loop {
                    match peek(&payload) {
                        Peek::Max(max) if plen > max.min(MAX_PAYLOAD) => {
                            return Err(too_long(format!(
                                "more than its first bytes allow ({max})"
                            )));
                        }
                        Peek::Max(_) => break,
                        Peek::More(want) if want > shown && want <= PEEK_MAX => {
                            let want = want.min(plen);
                            if want == shown {
                                break; // shown whole
                            }
                            let at = payload.len();
                            payload.resize(want as usize, 0);
                            read_exact(
                                &mut self.input,
                                &mut payload[at..],
                                self.offset,
                                "a payload's first bytes",
                            )?;
                            shown = want;
                        }
                        Peek::More(want) => {
                            return Err(too_long(format!(
                                "whose first bytes ask for {want} bytes to be judged"
                            )));
                        }
                    }
                }
            }
            Bound::Counted { item, max } => {
                if plen > max.min(MAX_PAYLOAD) || plen < 8 {
                    return Err(too_long(format!(
                        "not a list a {kind} entry can hold ({max})"
                    )));
                }
                let mut count = [0u8; 8];
                read_exact(&mut self.input, &mut count, self.offset, "a list's count")?;
                let n = u64::from_be_bytes(count);
                let expected = n.checked_mul(item).and_then(|b| b.checked_add(8));
                if expected != Some(plen) {
                    return Err(too_long(format!(
                        "where its count of {n} items of {item} bytes makes {}",
                        expected.map_or("more than 2^64".to_string(), |e| e.to_string())
                    )));
                }
                payload.extend_from_slice(&count);
            }
        }
        let rest = plen - payload.len() as u64;
        let got = payload.len() as u64
            + (&mut self.input)
                .take(rest)
                .read_to_end(&mut payload)
                .map_err(io_err)? as u64;
        if got != plen {
            return Err(BoardFileError::Record {
                offset: start,
                reason: format!(
                    "entry {} ({kind} {name}) ends after {got} of its {plen} payload bytes (a truncated record)",
                    self.chain.len()
                ),
            });
        }
        self.offset += plen;
        let seq = self.chain.len();
        let hash = self.chain.append(&kind, &name, &payload);
        Ok(Some(Entry {
            seq,
            kind,
            name,
            payload,
            hash,
        }))
    }

    fn label(&mut self, len: u8, what: &str) -> Result<String, BoardFileError> {
        let mut b = vec![0u8; len as usize];
        read_exact(&mut self.input, &mut b, self.offset, what)?;
        let s = String::from_utf8(b).ok().filter(|s| label_ok(s));
        let s = s.ok_or_else(|| BoardFileError::Record {
            offset: self.offset,
            reason: format!("entry {}: {what} is not printable ASCII", self.chain.len()),
        })?;
        self.offset += u64::from(len);
        Ok(s)
    }
}

fn read_exact<R: Read>(
    input: &mut R,
    buf: &mut [u8],
    offset: u64,
    what: &str,
) -> Result<(), BoardFileError> {
    input.read_exact(buf).map_err(|e| {
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            BoardFileError::Record {
                offset,
                reason: format!("the file ends inside {what} (a truncated record)"),
            }
        } else {
            io_err(e)
        }
    })
}

/// Whether the file at `path` starts with `magic`.
pub fn has_magic(path: &std::path::Path, magic: &[u8; 8]) -> bool {
    let mut head = [0u8; 8];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok()
        && &head == magic
}

/// Every entry of a board file held in memory (tests and small records).
pub fn read_all(
    bytes: &[u8],
    magic: &[u8; 8],
    what: &str,
) -> Result<(String, Vec<Entry>), BoardFileError> {
    let mut r = BoardReader::new(bytes, magic, what)?;
    let mut out = Vec::new();
    while let Some(e) = r.next_entry()? {
        out.push(e);
    }
    Ok((r.election_id, out))
}

/// A board file in memory from entries (tests and tools that rewrite a record).
pub fn write_all(
    magic: &[u8; 8],
    election_id: &str,
    entries: &[(String, String, Vec<u8>)],
) -> Result<Vec<u8>, BoardFileError> {
    let mut w = BoardWriter::new(Vec::new(), magic, election_id)?;
    for (kind, name, payload) in entries {
        w.append(kind, name, payload)?;
    }
    w.into_inner()
}
