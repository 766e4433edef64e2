"""Election records in either form, written and read as a stream of documents.

A record is a sequence of ElectionGuard 1.4 documents, each with a kind and a path in that layout
(spec/70.3). It is stored either as the ElectionGuard 1.4 directory (one JSON file per document, what
other tools read) or as votum's archive (one hash-chained file, numbers as bytes: spec/70). Writers
(`DirectorySink`, `ArchiveSink`) take documents in archive order; `documents()` yields them back in
the same order from either form, one at a time, so memory stays flat however many ballots there are.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

from votum._native import RecordReader, RecordWriter, record_check
from votum.errors import InvalidInput, RecordFormatError

#: Kinds in archive order, with their place in the ElectionGuard 1.4 layout: a file name, or a folder
#: and file prefix for the kinds that have one document per guardian, device or ballot.
LAYOUT: list[tuple[str, str, str]] = [
    ("manifest", "", "manifest.json"),
    ("context", "", "context.json"),
    ("constants", "", "constants.json"),
    ("guardian", "guardians", "guardian_"),
    ("device", "encryption_devices", "device_"),
    ("submitted_ballot", "submitted_ballots", "submitted_ballot_"),
    ("spoiled_ballot", "spoiled_ballots", "spoiled_ballot_"),
    ("encrypted_tally", "", "encrypted_tally.json"),
    ("tally", "", "tally.json"),
    ("coefficients", "", "coefficients.json"),
]
RECORD_FILES = [name for _k, folder, name in LAYOUT if not folder]
RECORD_DIRS = [folder for _k, folder, _n in LAYOUT if folder]
MAGIC = b"VOTUMREC"


def path_of(kind: str, object_id: str | None = None) -> str:
    """Where a document of `kind` (for `object_id`, for the per-object kinds) lives in the layout."""
    for k, folder, name in LAYOUT:
        if k == kind:
            if not folder:
                return name
            if not object_id:
                raise InvalidInput(f"a {kind} document needs an object id")
            return f"{folder}/{name}{object_id}.json"
    raise InvalidInput(f"unknown document kind {kind!r}")


def is_archive(path: Path) -> bool:
    if not path.is_file():
        return False
    with path.open("rb") as f:
        return f.read(len(MAGIC)) == MAGIC


class RecordSink(Protocol):
    """Receives a record's documents in archive order."""

    def add(self, kind: str, path: str, text: str) -> int:
        """Stores one document; returns the bytes it took."""
        ...

    def close(self) -> None: ...

    def abort(self) -> None: ...


def _partial(path: Path) -> Path:
    """Where a record is written until it is whole: beside `path`, hidden, named for this process."""
    return path.with_name(f".{path.name}.partial-{os.getpid()}")


class DirectorySink:
    """The ElectionGuard 1.4 layout: one JSON file per document. An earlier record in the directory
    is replaced (stale ballots never mix with new ones); any other non-empty directory is refused. The
    documents go to a hidden directory beside it, renamed into place by `close`; `abort` removes them, so
    a failed or interrupted run leaves nothing that looks like a record (issue 42, C.13)."""

    def __init__(self, root: Path) -> None:
        if root.exists() and not root.is_dir():
            raise InvalidInput(f"{root} exists and is not a directory")
        if root.is_dir() and any(root.iterdir()):
            names = {p.name for p in root.iterdir()}
            if not names <= set(RECORD_FILES) | set(RECORD_DIRS) or "manifest.json" not in names:
                raise InvalidInput(
                    f"{root} is not empty and does not look like an election record; choose another directory"
                )
        root.parent.mkdir(parents=True, exist_ok=True)
        self.root = root
        self.work = _partial(root)
        shutil.rmtree(self.work, ignore_errors=True)
        self.work.mkdir()
        self._made: set[Path] = set()

    def add(self, kind: str, path: str, text: str) -> int:
        target = self.work / path
        if target.parent not in self._made:
            target.parent.mkdir(parents=True, exist_ok=True)
            self._made.add(target.parent)
        target.write_text(text)
        return len(text)

    def close(self) -> None:
        """The whole record replaces an earlier one at `root` (checked to be one when this sink opened)."""
        if self.root.is_dir():
            shutil.rmtree(self.root)
        self.work.rename(self.root)

    def abort(self) -> None:
        shutil.rmtree(self.work, ignore_errors=True)


class ArchiveSink:
    """votum's archive (spec/70). An earlier archive at the path is replaced; any other file is refused.
    The archive is written beside it under a hidden name and renamed into place by `close` (after the
    trailer); `abort` removes it."""

    def __init__(self, path: Path) -> None:
        if path.exists() and not is_archive(path):
            raise InvalidInput(f"{path} exists and is not a votum record archive; choose another path")
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.work = _partial(path)
        self._writer = RecordWriter(self.work)
        self.summary: dict[str, object] = {}

    def add(self, kind: str, path: str, text: str) -> int:
        self._writer.append(kind, path, text)
        return len(text)

    def close(self) -> None:
        self.summary = self._writer.close()
        self.work.replace(self.path)

    def abort(self) -> None:
        self.work.unlink(missing_ok=True)


def documents(record: Path) -> Iterator[tuple[str, str, str]]:
    """Every document of a record (directory or archive) as `(kind, path, json)`, in archive order.
    An archive's integrity is checked whole before the first document is yielded."""
    if record.is_file():
        # integrity first (framing, order, chain: one fast pass without converting documents), so a
        # damaged archive is reported as damaged, not as whatever check its first bad byte would fail
        record_check(record)
        yield from RecordReader(record)
        return
    if not record.is_dir():
        raise InvalidInput(f"{record}: no election record (neither a directory nor an archive)")
    for kind, folder, name in LAYOUT:
        if not folder:
            p = record / name
            if p.is_file():
                yield kind, name, p.read_text()
            continue
        d = record / folder
        if d.is_dir():
            for p in sorted(d.iterdir()):
                if not (p.is_file() and p.name.startswith(name) and p.suffix == ".json"):
                    # a verifier never skips what it does not understand
                    raise RecordFormatError(f"{folder}/{p.name}: not part of an ElectionGuard 1.4 record")
                yield kind, f"{folder}/{p.name}", p.read_text()
