//! The archive file (spec/70.1–70.3): header, frames of named documents, a SHA-256 chain over the
//! frames, and a trailer holding the frame count and the chain's last value.

use std::io::{Read, Write};

use rmpv::Value;
use sha2::{Digest, Sha256};

use crate::doc::{json_to_msgpack, msgpack_to_json, MAX_DEPTH};
use crate::RecordError;

pub const MAGIC: &[u8; 8] = b"VOTUMREC";
pub const VERSION: u16 = 1;
const CHAIN_TAG: &[u8] = b"votum-record-v1";
const TRAILER: u8 = 0xFF;
const TRAILER_LEN: u32 = 40;
/// Largest frame a reader accepts (spec/70.1).
pub const MAX_FRAME: u32 = 64 << 20;

/// The documents of an ElectionGuard 1.4 record, in the order an archive holds them (spec/70.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    Manifest = 1,
    Context = 2,
    Constants = 3,
    Guardian = 4,
    Device = 5,
    SubmittedBallot = 6,
    SpoiledBallotTally = 7,
    EncryptedTally = 8,
    Tally = 9,
    Coefficients = 10,
}

impl Kind {
    pub const ALL: [Kind; 10] = [
        Kind::Manifest,
        Kind::Context,
        Kind::Constants,
        Kind::Guardian,
        Kind::Device,
        Kind::SubmittedBallot,
        Kind::SpoiledBallotTally,
        Kind::EncryptedTally,
        Kind::Tally,
        Kind::Coefficients,
    ];

    pub fn from_byte(b: u8) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| *k as u8 == b)
    }

    /// Its name in APIs and reports (`"submitted_ballot"`, …).
    pub fn name(self) -> &'static str {
        match self {
            Kind::Manifest => "manifest",
            Kind::Context => "context",
            Kind::Constants => "constants",
            Kind::Guardian => "guardian",
            Kind::Device => "device",
            Kind::SubmittedBallot => "submitted_ballot",
            Kind::SpoiledBallotTally => "spoiled_ballot",
            Kind::EncryptedTally => "encrypted_tally",
            Kind::Tally => "tally",
            Kind::Coefficients => "coefficients",
        }
    }

    pub fn from_name(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// At most one document of this kind.
    pub fn single(self) -> bool {
        !matches!(
            self,
            Kind::Guardian | Kind::Device | Kind::SubmittedBallot | Kind::SpoiledBallotTally
        )
    }

    /// `(folder, file prefix)` of the many-document kinds, or the single file's name.
    pub fn layout(self) -> (&'static str, &'static str) {
        match self {
            Kind::Manifest => ("", "manifest.json"),
            Kind::Context => ("", "context.json"),
            Kind::Constants => ("", "constants.json"),
            Kind::Guardian => ("guardians", "guardian_"),
            Kind::Device => ("encryption_devices", "device_"),
            Kind::SubmittedBallot => ("submitted_ballots", "submitted_ballot_"),
            Kind::SpoiledBallotTally => ("spoiled_ballots", "spoiled_ballot_"),
            Kind::EncryptedTally => ("", "encrypted_tally.json"),
            Kind::Tally => ("", "tally.json"),
            Kind::Coefficients => ("", "coefficients.json"),
        }
    }

    /// Whether `path` is where a document of this kind lives in the ElectionGuard 1.4 layout.
    pub fn path_fits(self, path: &str) -> bool {
        let (folder, name) = self.layout();
        if folder.is_empty() {
            return path == name;
        }
        let Some(file) = path
            .strip_prefix(folder)
            .and_then(|rest| rest.strip_prefix('/'))
        else {
            return false;
        };
        file.len() > name.len() + ".json".len()
            && file.starts_with(name)
            && file.ends_with(".json")
            && !file.contains('/')
            && !file.contains('\\')
            && file != "."
            && !file.contains("..")
            && !file.contains('\0')
    }
}

/// One document read from an archive.
#[derive(Debug, Clone)]
pub struct Frame {
    pub kind: Kind,
    /// Its path in the ElectionGuard 1.4 layout.
    pub path: String,
    /// The document as MessagePack (numbers as bytes).
    pub document: Value,
}

impl Frame {
    /// The document as compact JSON text.
    pub fn json(&self) -> Result<String, RecordError> {
        msgpack_to_json(self.document.clone()).map_err(|r| RecordError::doc(&self.path, r))
    }

    /// The document as compact JSON text, consuming the frame.
    pub fn into_json(self) -> Result<String, RecordError> {
        msgpack_to_json(self.document).map_err(|r| RecordError::doc(&self.path, r))
    }
}

/// What a finished archive holds: frame count and the chain's last value (spec/70.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    pub frames: u64,
    pub chain: [u8; 32],
    pub bytes: u64,
}

fn header_bytes() -> [u8; 12] {
    let mut h = [0u8; 12];
    h[..8].copy_from_slice(MAGIC);
    h[8..10].copy_from_slice(&VERSION.to_be_bytes());
    h
}

fn chain_start(header: &[u8]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(CHAIN_TAG);
    h.update(header);
    h.finalize().into()
}

fn chain_step(prev: &[u8; 32], kind: u8, len: u32, payload: &[u8]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(prev);
    h.update([kind]);
    h.update(len.to_be_bytes());
    h.update(payload);
    h.finalize().into()
}

/// Order rule shared by writer and reader (spec/70.3).
fn check_order(last: Option<Kind>, kind: Kind, path: &str) -> Result<(), String> {
    if let Some(prev) = last {
        if kind < prev {
            return Err(format!(
                "a {} document after a {} one (kinds must not go back)",
                kind.name(),
                prev.name()
            ));
        }
        if kind == prev && kind.single() {
            return Err(format!("a second {} document", kind.name()));
        }
    } else if kind != Kind::Manifest {
        return Err(format!(
            "the first document is a {}, not the manifest",
            kind.name()
        ));
    }
    if kind > Kind::Context && last < Some(Kind::Context) {
        return Err(format!("a {} document before the context", kind.name()));
    }
    if !kind.path_fits(path) {
        return Err(format!(
            "path {path:?} is not where a {} document lives",
            kind.name()
        ));
    }
    Ok(())
}

/// Writes an archive front to back; [`ArchiveWriter::finish`] writes the trailer. Dropping a writer
/// without finishing leaves a file every reader refuses as truncated.
pub struct ArchiveWriter<W: Write> {
    out: W,
    chain: [u8; 32],
    frames: u64,
    bytes: u64,
    last: Option<Kind>,
    name: String,
}

impl<W: Write> ArchiveWriter<W> {
    /// Starts an archive on `out`; `name` names it in errors.
    pub fn new(mut out: W, name: &str) -> Result<Self, RecordError> {
        let header = header_bytes();
        out.write_all(&header)
            .map_err(|e| RecordError::io(name, e))?;
        Ok(ArchiveWriter {
            out,
            chain: chain_start(&header),
            frames: 0,
            bytes: header.len() as u64,
            last: None,
            name: name.to_owned(),
        })
    }

    /// Appends one document given as JSON text at `path` of the ElectionGuard 1.4 layout.
    pub fn append_json(&mut self, kind: Kind, path: &str, json: &str) -> Result<(), RecordError> {
        let document = json_to_msgpack(json).map_err(|r| RecordError::doc(path, r))?;
        self.append(kind, path, document)
    }

    /// Appends one document already transcribed (spec/70.4).
    pub fn append(&mut self, kind: Kind, path: &str, document: Value) -> Result<(), RecordError> {
        check_order(self.last, kind, path).map_err(|r| RecordError::doc(path, r))?;
        let mut payload = Vec::new();
        let pair = Value::Array(vec![Value::from(path), document]);
        rmpv::encode::write_value(&mut payload, &pair)
            .map_err(|e| RecordError::doc(path, format!("cannot be encoded: {e}")))?;
        let len = u32::try_from(payload.len())
            .ok()
            .filter(|l| *l <= MAX_FRAME)
            .ok_or_else(|| RecordError::doc(path, "larger than the 64 MiB frame limit"))?;
        let mut head = [0u8; 5];
        head[0] = kind as u8;
        head[1..].copy_from_slice(&len.to_be_bytes());
        self.out
            .write_all(&head)
            .and_then(|()| self.out.write_all(&payload))
            .map_err(|e| RecordError::io(&self.name, e))?;
        self.chain = chain_step(&self.chain, kind as u8, len, &payload);
        self.frames += 1;
        self.bytes += 5 + u64::from(len);
        self.last = Some(kind);
        Ok(())
    }

    /// Writes the trailer and flushes; returns what the archive holds.
    pub fn finish(mut self) -> Result<(Summary, W), RecordError> {
        if self.last < Some(Kind::Context) {
            return Err(RecordError::Trailer {
                reason: "an archive needs at least the manifest and the context".into(),
            });
        }
        let mut t = Vec::with_capacity(45);
        t.push(TRAILER);
        t.extend_from_slice(&TRAILER_LEN.to_be_bytes());
        t.extend_from_slice(&self.frames.to_be_bytes());
        t.extend_from_slice(&self.chain);
        self.out
            .write_all(&t)
            .and_then(|()| self.out.flush())
            .map_err(|e| RecordError::io(&self.name, e))?;
        self.bytes += t.len() as u64;
        Ok((
            Summary {
                frames: self.frames,
                chain: self.chain,
                bytes: self.bytes,
            },
            self.out,
        ))
    }
}

/// Reads an archive front to back as an iterator of frames; the last item is an error unless the
/// trailer is present and matches (spec/70.1). After the iterator ends, [`ArchiveReader::summary`]
/// holds the verified frame count and chain.
pub struct ArchiveReader<R: Read> {
    input: R,
    chain: [u8; 32],
    frames: u64,
    offset: u64,
    last: Option<Kind>,
    done: bool,
    summary: Option<Summary>,
}

impl<R: Read> ArchiveReader<R> {
    /// Reads and checks the header.
    pub fn new(mut input: R) -> Result<Self, RecordError> {
        let mut header = [0u8; 12];
        read_exact_or(&mut input, &mut header, 0)?;
        if &header[..8] != MAGIC {
            return Err(RecordError::BadMagic);
        }
        let version = u16::from_be_bytes([header[8], header[9]]);
        let flags = u16::from_be_bytes([header[10], header[11]]);
        if version != VERSION || flags != 0 {
            return Err(RecordError::UnsupportedVersion { version, flags });
        }
        Ok(ArchiveReader {
            input,
            chain: chain_start(&header),
            frames: 0,
            offset: 12,
            last: None,
            done: false,
            summary: None,
        })
    }

    /// The frame count and chain, once every frame and the trailer have been read and checked.
    pub fn summary(&self) -> Option<&Summary> {
        self.summary.as_ref()
    }

    fn malformed(&self, at: u64, reason: impl Into<String>) -> RecordError {
        RecordError::Malformed {
            offset: at,
            reason: reason.into(),
        }
    }

    fn next_frame(&mut self) -> Result<Option<Frame>, RecordError> {
        let at = self.offset;
        let mut head = [0u8; 5];
        read_exact_or(&mut self.input, &mut head, at)?;
        let len = u32::from_be_bytes([head[1], head[2], head[3], head[4]]);
        if head[0] == TRAILER {
            return self.read_trailer(at, len).map(|()| None);
        }
        let kind = Kind::from_byte(head[0])
            .ok_or_else(|| self.malformed(at, format!("unknown frame kind {}", head[0])))?;
        if len > MAX_FRAME {
            return Err(self.malformed(at, format!("a frame of {len} bytes (the limit is 64 MiB)")));
        }
        let mut payload = vec![0u8; len as usize];
        read_exact_or(&mut self.input, &mut payload, at + 5)?;
        let mut cursor = &payload[..];
        let pair = rmpv::decode::read_value_with_max_depth(&mut cursor, MAX_DEPTH)
            .map_err(|e| self.malformed(at, format!("payload is not MessagePack: {e}")))?;
        if !cursor.is_empty() {
            return Err(self.malformed(at, "bytes after the payload's document"));
        }
        let Value::Array(mut items) = pair else {
            return Err(self.malformed(at, "payload is not a [path, document] pair"));
        };
        if items.len() != 2 {
            return Err(self.malformed(at, "payload is not a [path, document] pair"));
        }
        let document = items.pop().unwrap_or(Value::Nil);
        let path = match items.pop() {
            Some(Value::String(s)) => s.into_str(),
            _ => None,
        }
        .ok_or_else(|| self.malformed(at, "the document's path is not a string"))?;
        check_order(self.last, kind, &path).map_err(|r| self.malformed(at, r))?;
        self.chain = chain_step(&self.chain, head[0], len, &payload);
        self.frames += 1;
        self.offset = at + 5 + u64::from(len);
        self.last = Some(kind);
        Ok(Some(Frame {
            kind,
            path,
            document,
        }))
    }

    fn read_trailer(&mut self, at: u64, len: u32) -> Result<(), RecordError> {
        if len != TRAILER_LEN {
            return Err(self.malformed(at, "a trailer of the wrong length"));
        }
        let mut body = [0u8; 40];
        read_exact_or(&mut self.input, &mut body, at + 5)?;
        let mut count = [0u8; 8];
        count.copy_from_slice(&body[..8]);
        let frames = u64::from_be_bytes(count);
        if frames != self.frames {
            return Err(RecordError::Trailer {
                reason: format!(
                    "it counts {frames} frames, the archive holds {}",
                    self.frames
                ),
            });
        }
        if body[8..] != self.chain {
            return Err(RecordError::Trailer {
                reason: "its chain value differs from the frames' (altered or reordered content)"
                    .into(),
            });
        }
        if self.last < Some(Kind::Context) {
            return Err(RecordError::Trailer {
                reason: "the archive has no manifest and context".into(),
            });
        }
        let mut extra = [0u8; 1];
        match self.input.read(&mut extra) {
            Ok(0) => {}
            Ok(_) => return Err(self.malformed(at + 45, "bytes after the trailer")),
            Err(e) => return Err(RecordError::io("archive", e)),
        }
        self.summary = Some(Summary {
            frames,
            chain: self.chain,
            bytes: at + 45,
        });
        Ok(())
    }
}

fn read_exact_or<R: Read>(input: &mut R, buf: &mut [u8], at: u64) -> Result<(), RecordError> {
    input.read_exact(buf).map_err(|e| {
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            RecordError::Truncated { offset: at }
        } else {
            RecordError::io("archive", e)
        }
    })
}

impl<R: Read> Iterator for ArchiveReader<R> {
    type Item = Result<Frame, RecordError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.next_frame() {
            Ok(Some(frame)) => Some(Ok(frame)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<u8> {
        let big = "AB".repeat(512);
        let Ok(mut w) = ArchiveWriter::new(Vec::new(), "test") else {
            unreachable!("writing to memory")
        };
        let docs = [
            (
                Kind::Manifest,
                "manifest.json".to_owned(),
                r#"{"election_scope_id":"x"}"#.to_owned(),
            ),
            (
                Kind::Context,
                "context.json".to_owned(),
                format!(r#"{{"elgamal_public_key":"{big}"}}"#),
            ),
            (
                Kind::Guardian,
                "guardians/guardian_g1.json".to_owned(),
                r#"{"guardian_id":"g1"}"#.to_owned(),
            ),
            (
                Kind::SubmittedBallot,
                "submitted_ballots/submitted_ballot_b1.json".to_owned(),
                format!(r#"{{"object_id":"b1","pad":"{big}"}}"#),
            ),
            (
                Kind::SubmittedBallot,
                "submitted_ballots/submitted_ballot_b2.json".to_owned(),
                r#"{"object_id":"b2"}"#.to_owned(),
            ),
            (
                Kind::Tally,
                "tally.json".to_owned(),
                r#"{"object_id":"t"}"#.to_owned(),
            ),
        ];
        for (kind, path, json) in docs {
            assert!(w.append_json(kind, &path, &json).is_ok());
        }
        match w.finish() {
            Ok((summary, bytes)) => {
                assert_eq!(summary.frames, 6);
                assert_eq!(summary.bytes, bytes.len() as u64);
                bytes
            }
            Err(e) => unreachable!("{e}"),
        }
    }

    fn read_all(bytes: &[u8]) -> Result<Vec<(Kind, String, String)>, RecordError> {
        let reader = ArchiveReader::new(bytes)?;
        reader
            .map(|f| f.and_then(|f| Ok((f.kind, f.path.clone(), f.into_json()?))))
            .collect()
    }

    #[test]
    fn writes_and_reads_back() {
        let bytes = sample();
        let Ok(docs) = read_all(&bytes) else {
            unreachable!("a good archive")
        };
        assert_eq!(docs.len(), 6);
        assert_eq!(docs[3].1, "submitted_ballots/submitted_ballot_b1.json");
        assert!(docs[3].2.contains(&"AB".repeat(512)));
        // numbers as bytes: the 4096-bit values take about half their hex length
        assert!(bytes.len() < 2 * 1024 + 400, "{}", bytes.len());
    }

    #[test]
    fn every_truncation_is_refused() {
        let bytes = sample();
        for cut in 0..bytes.len() {
            let r =
                ArchiveReader::new(&bytes[..cut]).and_then(|r| r.collect::<Result<Vec<_>, _>>());
            assert!(
                r.is_err(),
                "a file cut at {cut} of {} bytes was read",
                bytes.len()
            );
        }
    }

    #[test]
    fn altered_bytes_are_refused() {
        let bytes = sample();
        // every byte after the header, flipped: the chain, the framing or the trailer catches it
        for i in 12..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0x01;
            assert!(read_all(&b).is_err(), "a flip at byte {i} went unnoticed");
        }
        let mut extra = bytes.clone();
        extra.push(0);
        assert!(matches!(
            read_all(&extra),
            Err(RecordError::Malformed { .. })
        ));
        let mut v2 = bytes.clone();
        v2[9] = 2;
        assert!(matches!(
            ArchiveReader::new(&v2[..]).err(),
            Some(RecordError::UnsupportedVersion { version: 2, .. })
        ));
        assert!(matches!(
            ArchiveReader::new(&b"VOTUMRED\0\x01\0\0"[..]).err(),
            Some(RecordError::BadMagic)
        ));
    }

    #[test]
    fn order_and_paths_are_enforced_on_write() {
        let Ok(mut w) = ArchiveWriter::new(Vec::new(), "test") else {
            unreachable!("writing to memory")
        };
        assert!(w.append_json(Kind::Context, "context.json", "{}").is_err()); // manifest first
        assert!(w.append_json(Kind::Manifest, "manifest.json", "{}").is_ok());
        assert!(w
            .append_json(Kind::Manifest, "manifest.json", "{}")
            .is_err()); // only one
        assert!(w
            .append_json(Kind::Guardian, "guardians/guardian_1.json", "{}")
            .is_err()); // context first
        assert!(w.append_json(Kind::Context, "context.json", "{}").is_ok());
        for bad in [
            "guardians/guardian_.json",
            "guardians/../guardian_1.json",
            "guardians/guardian_1.txt",
            "/guardians/guardian_1.json",
            "guardians/guardian_a/b.json",
            "submitted_ballots/submitted_ballot_1.json",
        ] {
            assert!(w.append_json(Kind::Guardian, bad, "{}").is_err(), "{bad}");
        }
        assert!(w
            .append_json(Kind::Guardian, "guardians/guardian_1.json", "{}")
            .is_ok());
        assert!(w.append_json(Kind::Tally, "tally.json", "{}").is_ok());
        assert!(w
            .append_json(
                Kind::SubmittedBallot,
                "submitted_ballots/submitted_ballot_1.json",
                "{}"
            )
            .is_err()); // kinds never go back
        assert!(w
            .append_json(Kind::Coefficients, "coefficients.json", "[")
            .is_err()); // not JSON
    }

    #[test]
    fn an_archive_without_context_is_refused() {
        let Ok(mut w) = ArchiveWriter::new(Vec::new(), "test") else {
            unreachable!("writing to memory")
        };
        assert!(w.append_json(Kind::Manifest, "manifest.json", "{}").is_ok());
        assert!(matches!(w.finish(), Err(RecordError::Trailer { .. })));
    }
}
