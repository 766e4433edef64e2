//! The ElectionGuard 1.4 record directory (spec/70.3): which files a record holds, in archive order,
//! and what is not part of the layout (strays); and reading one document, a regular file of bounded
//! size. Both forms of reading (`source`) and the conversion to an archive (`convert`) use it.

use std::fs;
use std::io::Read;
use std::path::Path;

use crate::archive::{Kind, MAX_FRAME};
use crate::RecordError;

/// Every document of the directory in archive order, refusing anything outside the layout.
pub(crate) fn plan(dir: &Path) -> Result<Vec<(Kind, String)>, RecordError> {
    let (plan, strays) = survey(dir)?;
    match strays.first() {
        Some(stray) => Err(stray_error(stray)),
        None => Ok(plan),
    }
}

pub(crate) fn stray_error(path: &str) -> RecordError {
    RecordError::doc(path, "not part of an ElectionGuard 1.4 record layout")
}

/// A record's documents in archive order: (kind, path relative to the record).
pub(crate) type Plan = Vec<(Kind, String)>;

/// The layout's documents in archive order, and the paths that are not part of the layout
/// (strays). A record without manifest or context is refused.
pub(crate) fn survey(dir: &Path) -> Result<(Plan, Vec<String>), RecordError> {
    let entries = read_names(dir)?;
    let mut strays = Vec::new();
    let mut plan = Vec::new();
    let mut known_dirs = Vec::new();
    for kind in Kind::ALL {
        let (folder, name) = kind.layout();
        if folder.is_empty() {
            if entries.iter().any(|(n, is_dir)| n == name && !is_dir) {
                plan.push((kind, name.to_owned()));
            } else if matches!(kind, Kind::Manifest | Kind::Context) {
                return Err(RecordError::doc(
                    name,
                    format!("missing from {}", dir.display()),
                ));
            }
            continue;
        }
        known_dirs.push(folder);
        if !entries.iter().any(|(n, is_dir)| n == folder && *is_dir) {
            continue;
        }
        for (file, is_dir) in read_names(&dir.join(folder))? {
            let rel = format!("{folder}/{file}");
            if is_dir || !kind.path_fits(&rel) {
                strays.push(rel);
            } else {
                plan.push((kind, rel));
            }
        }
    }
    for (name, is_dir) in &entries {
        let known = if *is_dir {
            known_dirs.contains(&name.as_str())
        } else {
            Kind::ALL
                .iter()
                .any(|k| k.layout().0.is_empty() && k.layout().1 == name)
        };
        if !known {
            strays.push(name.clone());
        }
    }
    Ok((plan, strays))
}

/// File names of a directory in byte order, with whether each is a directory.
fn read_names(dir: &Path) -> Result<Vec<(String, bool)>, RecordError> {
    let mut names = Vec::new();
    for entry in fs::read_dir(dir).map_err(|e| RecordError::io(dir.display(), e))? {
        let entry = entry.map_err(|e| RecordError::io(dir.display(), e))?;
        let name = entry
            .file_name()
            .into_string()
            .map_err(|n| RecordError::doc(&n.to_string_lossy(), "a file name that is not UTF-8"))?;
        let is_dir = entry
            .file_type()
            .map_err(|e| RecordError::io(entry.path().display(), e))?
            .is_dir();
        names.push((name, is_dir));
    }
    names.sort();
    Ok(names)
}

/// The largest document a record directory may hold: the same as an archive's frame.
pub const MAX_DOCUMENT: u64 = MAX_FRAME as u64;

/// The text of the document at `full` (`path` in the layout). Only a regular file is read (a FIFO
/// would block forever, a device never end), and at most `MAX_DOCUMENT` bytes of it, whatever its
/// stated size; it is opened without blocking, so what it is can be asked of the open file.
pub(crate) fn read_document(full: &Path, path: &str) -> Result<String, RecordError> {
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options
        .open(full)
        .map_err(|e| RecordError::io(full.display(), e))?;
    let meta = file
        .metadata()
        .map_err(|e| RecordError::io(full.display(), e))?;
    let too_large = || {
        RecordError::doc(
            path,
            format!("larger than {MAX_DOCUMENT} bytes (left unread)"),
        )
    };
    if !meta.is_file() {
        return Err(RecordError::doc(path, "not a regular file (left unread)"));
    }
    if meta.len() > MAX_DOCUMENT {
        return Err(too_large());
    }
    let mut text = String::new();
    file.take(MAX_DOCUMENT + 1)
        .read_to_string(&mut text)
        .map_err(|e| RecordError::io(full.display(), e))?;
    if text.len() as u64 > MAX_DOCUMENT {
        return Err(too_large());
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn only_regular_files_of_bounded_size_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo.json");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        // a FIFO with no writer: reading it would block forever
        let err = read_document(&fifo, "fifo.json").unwrap_err().to_string();
        assert!(err.contains("not a regular file"), "{err}");
        let zero = dir.path().join("zero.json");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        let err = read_document(&zero, "zero.json").unwrap_err().to_string();
        assert!(err.contains("not a regular file"), "{err}");
        let big = dir.path().join("big.json");
        let f = fs::File::create(&big).unwrap();
        f.set_len(MAX_DOCUMENT + 1).unwrap(); // sparse: nothing written
        let err = read_document(&big, "big.json").unwrap_err().to_string();
        assert!(err.contains("larger than"), "{err}");
        let ok = dir.path().join("ok.json");
        fs::write(&ok, "{}").unwrap();
        assert_eq!(read_document(&ok, "ok.json").unwrap(), "{}");
        // a symlink to a regular file is followed
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(&ok, &link).unwrap();
        assert_eq!(read_document(&link, "link.json").unwrap(), "{}");
    }
}
