//! Either form of a record, one document at a time: an ElectionGuard 1.4 directory (read in archive
//! order, spec/70.3) or votum's archive (each frame checked as it is read; the trailer at the end).

use std::fs;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use crate::archive::{ArchiveReader, Kind};
use crate::layout::{read_document, stray_error, survey};
use crate::RecordError;

/// One document of a record: its kind, its path in the ElectionGuard 1.4 layout, its JSON text.
#[derive(Debug, Clone)]
pub struct Document {
    pub kind: Kind,
    pub path: String,
    pub json: String,
}

/// Which form a record is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// An ElectionGuard 1.4 record directory.
    Directory,
    /// votum's record archive (spec/70).
    Archive,
}

impl Form {
    pub fn name(self) -> &'static str {
        match self {
            Form::Directory => "electionguard-1.4 directory",
            Form::Archive => "votum archive",
        }
    }
}

enum Inner {
    Directory {
        root: PathBuf,
        /// paths that are not part of the layout: reported (as errors) before the documents
        strays: std::vec::IntoIter<String>,
        plan: std::vec::IntoIter<(Kind, String)>,
    },
    Archive(Box<ArchiveReader<BufReader<fs::File>>>),
}

/// The documents of a record in archive order. For an archive, an integrity failure (truncation,
/// altered bytes, a bad trailer) is the last item. A directory without manifest or context is
/// refused up front; each file that is not part of the layout is an error item before the
/// documents (it is left unread, and the rest of the record can still be checked).
pub struct Documents {
    inner: Inner,
}

impl Documents {
    /// Opens `path`: a directory is read as an ElectionGuard 1.4 record, a file as an archive.
    pub fn open(path: &Path) -> Result<Self, RecordError> {
        let meta = fs::metadata(path).map_err(|e| RecordError::io(path.display(), e))?;
        if meta.is_dir() {
            let (plan, strays) = survey(path)?;
            Ok(Self {
                inner: Inner::Directory {
                    root: path.to_path_buf(),
                    strays: strays.into_iter(),
                    plan: plan.into_iter(),
                },
            })
        } else {
            let file = fs::File::open(path).map_err(|e| RecordError::io(path.display(), e))?;
            Ok(Self {
                inner: Inner::Archive(Box::new(ArchiveReader::new(BufReader::new(file))?)),
            })
        }
    }

    /// An archive's chain (spec/70.2: the trailer's value, as `votum record pack` prints it), once
    /// every frame and the trailer have been read and checked; `None` for a directory or before.
    pub fn archive_chain(&self) -> Option<[u8; 32]> {
        match &self.inner {
            Inner::Archive(reader) => reader.summary().map(|s| s.chain),
            Inner::Directory { .. } => None,
        }
    }

    pub fn form(&self) -> Form {
        match self.inner {
            Inner::Directory { .. } => Form::Directory,
            Inner::Archive(_) => Form::Archive,
        }
    }
}

impl Iterator for Documents {
    type Item = Result<Document, RecordError>;

    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.inner {
            Inner::Directory { root, strays, plan } => {
                if let Some(stray) = strays.next() {
                    return Some(Err(stray_error(&stray)));
                }
                let (kind, path) = plan.next()?;
                let full = root.join(&path);
                Some(read_document(&full, &path).map(|json| Document { kind, path, json }))
            }
            Inner::Archive(reader) => {
                let frame = match reader.next()? {
                    Ok(frame) => frame,
                    Err(e) => return Some(Err(e)),
                };
                let (kind, path) = (frame.kind, frame.path.clone());
                Some(frame.into_json().map(|json| Document { kind, path, json }))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_and_its_archive_give_the_same_documents() {
        let dir = tempfile::tempdir().unwrap();
        let rec = dir.path().join("rec");
        fs::create_dir_all(rec.join("submitted_ballots")).unwrap();
        fs::write(rec.join("manifest.json"), r#"{"election_scope_id":"x"}"#).unwrap();
        fs::write(rec.join("context.json"), r#"{"quorum":1}"#).unwrap();
        fs::write(
            rec.join("submitted_ballots/submitted_ballot_b1.json"),
            r#"{"object_id":"b1"}"#,
        )
        .unwrap();
        let file = dir.path().join("rec.votum");
        crate::pack_dir(&rec, &file).unwrap();
        let a: Vec<Document> = Documents::open(&rec).unwrap().map(Result::unwrap).collect();
        let b: Vec<Document> = Documents::open(&file)
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(Documents::open(&rec).unwrap().form(), Form::Directory);
        assert_eq!(Documents::open(&file).unwrap().form(), Form::Archive);
        assert_eq!(a.len(), 3);
        for (x, y) in a.iter().zip(&b) {
            assert_eq!((x.kind, &x.path), (y.kind, &y.path));
            let (vx, vy): (serde_json::Value, serde_json::Value) = (
                serde_json::from_str(&x.json).unwrap(),
                serde_json::from_str(&y.json).unwrap(),
            );
            assert_eq!(vx, vy);
        }
        assert_eq!(a[2].kind, Kind::SubmittedBallot);
    }

    #[test]
    fn a_truncated_archive_ends_with_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let rec = dir.path().join("rec");
        fs::create_dir_all(&rec).unwrap();
        fs::write(rec.join("manifest.json"), r#"{"a":1}"#).unwrap();
        fs::write(rec.join("context.json"), r#"{"b":2}"#).unwrap();
        let file = dir.path().join("rec.votum");
        crate::pack_dir(&rec, &file).unwrap();
        let bytes = fs::read(&file).unwrap();
        fs::write(&file, &bytes[..bytes.len() - 3]).unwrap();
        let items: Vec<_> = Documents::open(&file).unwrap().collect();
        assert!(items[..2].iter().all(Result::is_ok));
        assert!(matches!(
            items.last(),
            Some(Err(RecordError::Truncated { .. }))
        ));
    }

    #[test]
    fn a_stray_file_is_an_error_item_and_the_documents_still_come() {
        let dir = tempfile::tempdir().unwrap();
        let rec = dir.path().join("rec");
        fs::create_dir_all(rec.join("guardians")).unwrap();
        fs::write(rec.join("manifest.json"), r#"{"a":1}"#).unwrap();
        fs::write(rec.join("context.json"), r#"{"b":2}"#).unwrap();
        fs::write(rec.join("notes.txt"), "hello").unwrap();
        fs::write(rec.join("guardians/other.bin"), "x").unwrap();
        let items: Vec<_> = Documents::open(&rec).unwrap().collect();
        assert_eq!(items.len(), 4);
        let strays: Vec<String> = items[..2]
            .iter()
            .map(|i| i.as_ref().unwrap_err().to_string())
            .collect();
        assert!(strays[0].contains("guardians/other.bin"), "{strays:?}");
        assert!(strays[1].contains("notes.txt"), "{strays:?}");
        assert_eq!(items[2].as_ref().unwrap().kind, Kind::Manifest);
        // packing refuses the same directory: the stray would be lost
        assert!(crate::pack_dir(&rec, &dir.path().join("r.votum")).is_err());
    }
}
