//! An ElectionGuard 1.4 record directory to an archive and back (spec/70.5), one document at a time.

use std::fs;
use std::io::{BufReader, BufWriter};
use std::path::Path;

use crate::archive::{ArchiveReader, ArchiveWriter, Summary};
use crate::layout::{plan, read_document};
use crate::RecordError;

/// Packs the record in `dir` into a new archive at `file`; returns what it holds. A file that is not
/// part of the layout is refused (it would otherwise be lost); so is a record without manifest or
/// context. On error the partial archive is removed.
pub fn pack_dir(dir: &Path, file: &Path) -> Result<Summary, RecordError> {
    let result = pack_inner(dir, file);
    if result.is_err() {
        let _ = fs::remove_file(file);
    }
    result
}

fn pack_inner(dir: &Path, file: &Path) -> Result<Summary, RecordError> {
    let plan = plan(dir)?;
    let out = fs::File::create(file).map_err(|e| RecordError::io(file.display(), e))?;
    let mut writer = ArchiveWriter::new(BufWriter::new(out), &file.display().to_string())?;
    for (kind, rel) in plan {
        let full = dir.join(&rel);
        let text = read_document(&full, &rel)?;
        writer.append_json(kind, &rel, &text)?;
    }
    Ok(writer.finish()?.0)
}

/// Unpacks the archive at `file` into `dir` (absent or empty), one compact JSON file per document.
/// The whole archive is checked (trailer included) before this returns Ok; on error, what was
/// written so far stays for inspection and the error says why.
pub fn unpack_file(file: &Path, dir: &Path) -> Result<Summary, RecordError> {
    if dir.exists()
        && fs::read_dir(dir)
            .map_err(|e| RecordError::io(dir.display(), e))?
            .next()
            .is_some()
    {
        return Err(RecordError::doc(
            &dir.display().to_string(),
            "the target directory is not empty",
        ));
    }
    let input = fs::File::open(file).map_err(|e| RecordError::io(file.display(), e))?;
    let mut reader = ArchiveReader::new(BufReader::new(input))?;
    for frame in reader.by_ref() {
        let frame = frame?;
        let target = dir.join(&frame.path);
        if let Some(parent) = target.parent() {
            fs::create_dir_all(parent).map_err(|e| RecordError::io(parent.display(), e))?;
        }
        let path = frame.path.clone();
        let text = frame.into_json()?;
        fs::write(&target, text).map_err(|e| RecordError::io(&path, e))?;
    }
    reader
        .summary()
        .cloned()
        .ok_or(RecordError::Truncated { offset: 0 })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, rel: &str, text: &str) {
        let p = dir.join(rel);
        if let Some(parent) = p.parent() {
            assert!(fs::create_dir_all(parent).is_ok());
        }
        assert!(fs::write(p, text).is_ok());
    }

    fn record(dir: &Path) {
        let big = "C3".repeat(512);
        write(dir, "manifest.json", r#"{"election_scope_id": "e"}"#);
        write(
            dir,
            "context.json",
            &format!(r#"{{"elgamal_public_key": "{big}"}}"#),
        );
        write(dir, "constants.json", r#"{"generator": "02"}"#);
        write(dir, "guardians/guardian_g2.json", r#"{"id": 2}"#);
        write(dir, "guardians/guardian_g1.json", r#"{"id": 1}"#);
        for i in 0..5 {
            write(
                dir,
                &format!("submitted_ballots/submitted_ballot_b{i}.json"),
                &format!(r#"{{"object_id": "b{i}", "pad": "{big}"}}"#),
            );
        }
        write(dir, "tally.json", r#"{"object_id": "t"}"#);
    }

    #[test]
    fn pack_then_unpack_gives_the_same_documents() {
        let Ok(tmp) = tempfile::tempdir() else {
            unreachable!("a temporary directory")
        };
        let src = tmp.path().join("src");
        record(&src);
        let file = tmp.path().join("r.votum");
        let Ok(summary) = pack_dir(&src, &file) else {
            unreachable!("packing a good record")
        };
        assert_eq!(summary.frames, 11);
        let dst = tmp.path().join("dst");
        let Ok(again) = unpack_file(&file, &dst) else {
            unreachable!("unpacking what was packed")
        };
        assert_eq!(again, summary);
        for rel in [
            "manifest.json",
            "context.json",
            "guardians/guardian_g1.json",
            "submitted_ballots/submitted_ballot_b4.json",
            "tally.json",
        ] {
            let a: serde_json::Value =
                serde_json::from_str(&fs::read_to_string(src.join(rel)).unwrap_or_default())
                    .unwrap_or_default();
            let b: serde_json::Value =
                serde_json::from_str(&fs::read_to_string(dst.join(rel)).unwrap_or_default())
                    .unwrap_or_default();
            assert!(!a.is_null());
            assert_eq!(a, b, "{rel}");
        }
        // unpacking again into a non-empty directory is refused
        assert!(unpack_file(&file, &dst).is_err());
    }

    #[test]
    fn stray_files_and_missing_context_are_refused_and_leave_no_archive() {
        let Ok(tmp) = tempfile::tempdir() else {
            unreachable!("a temporary directory")
        };
        let file = tmp.path().join("r.votum");
        let src = tmp.path().join("a");
        record(&src);
        write(&src, "notes.txt", "hello");
        assert!(
            matches!(pack_dir(&src, &file), Err(RecordError::Document { path, .. }) if path == "notes.txt")
        );
        assert!(!file.exists());
        let src = tmp.path().join("b");
        record(&src);
        write(&src, "submitted_ballots/ballot.json", "{}");
        assert!(pack_dir(&src, &file).is_err());
        let src = tmp.path().join("c");
        record(&src);
        assert!(fs::remove_file(src.join("context.json")).is_ok());
        assert!(pack_dir(&src, &file).is_err());
        let src = tmp.path().join("d");
        record(&src);
        write(&src, "tally.json", "{broken");
        assert!(pack_dir(&src, &file).is_err());
        assert!(!file.exists());
    }
}
