"""Record exports shared by every reader (issue 43, item 1).

`GET /v1/elections/{id}/record` used to rebuild the whole archive for each request, on the thread pool
that ballot intake uses: anonymous readers looping on it starved intake. Now an election's record is
exported once per board head into a private directory of this process, by one thread of its own, and
every reader of that head gets the same file:

- a reader whose election has an export at the current head gets it at once;
- while the board moves (ballots coming in), an export younger than `interval` seconds is served
  as it is, with the head it covers in `X-Votum-Head` / `X-Votum-Head-Seq`, so a flood of readers
  costs at most one export per election per `interval`;
- otherwise a new export is made, one at a time for the whole process, on the exports' own thread;
  readers of that election queue behind it and then share it.

An export covers the entries up to the head it was started at, whatever is appended meanwhile. The
files are removed when replaced and when the server stops.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from votum.store import ElectionRow


@dataclass(frozen=True)
class Export:
    """One export: its file (open for reading, so a newer export can replace it meanwhile) and the
    board head it covers."""

    file: IO[bytes]
    size: int
    head_seq: int
    head: str


class RecordExports:
    def __init__(
        self, interval: float, export: Callable[[Any, str, Path, int], int], downloads: int = 4
    ) -> None:
        #: a directory of this process's own (mode 0700, made atomically), at the first export
        self._root: Path | None = None
        self.interval = interval
        self._export = export
        #: one export at a time, off the pool that serves requests and ballot intake (made on first use:
        #: an app whose lifespan ended and began again exports again)
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        #: election id -> (file, head_seq, head hex, made at)
        self._latest: dict[str, tuple[Path, int, str, float]] = {}
        #: archives being sent at once (`record_downloads`)
        self.downloads = threading.BoundedSemaphore(downloads)

    def root(self) -> Path:
        with self._lock:
            if self._root is None:
                self._root = Path(tempfile.mkdtemp(prefix="votum-records-"))
            return self._root

    def _stem(self, election_id: str) -> str:
        return hashlib.sha256(election_id.encode()).hexdigest()[:32]

    def cached(self, row: ElectionRow) -> Export | None:
        """The export to serve for `row` without exporting: one at its head, or one younger than
        `interval` while the board moves. Cheap; any thread."""
        with self._lock:
            latest = self._latest.get(row.id)
            if latest is None:
                return None
            path, seq, head, made = latest
            if seq != row.head_seq and time.monotonic() - made >= self.interval:
                return None
            try:
                return _open(path, seq, head)
            except OSError:  # removed under us (the server stopping): export again
                del self._latest[row.id]
                return None

    def build(self, store: Any, election_id: str) -> Export:
        """Exports the election at its current head unless a fresh enough export exists (another
        reader's, made while this one waited). Runs on `pool`."""
        row = store.election(election_id)
        ready = self.cached(row)
        if ready is not None:
            return ready
        head = row.head_hash.hex()
        path = self.root() / f"{self._stem(election_id)}-{row.head_seq}.votum"
        partial = path.with_suffix(".partial")
        try:
            self._export(store, election_id, partial, row.head_seq)
            os.replace(partial, path)
        except BaseException:
            partial.unlink(missing_ok=True)
            raise
        with self._lock:
            old = self._latest.get(election_id)
            self._latest[election_id] = (path, row.head_seq, head, time.monotonic())
            opened = _open(path, row.head_seq, head)
        if old is not None and old[0] != path:
            # readers that opened it keep their handle; the name goes
            old[0].unlink(missing_ok=True)
        return opened

    @property
    def pool(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="votum-record-export")
            return self._pool

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
        with self._lock:
            root, self._root = self._root, None
            self._latest.clear()
        if root is not None:
            shutil.rmtree(root, ignore_errors=True)


def _open(path: Path, seq: int, head: str) -> Export:
    f = path.open("rb")
    return Export(f, os.fstat(f.fileno()).st_size, seq, head)


def chunks(export: Export, release: Callable[[], None], size: int = 1 << 20) -> Any:
    """The export's bytes, a chunk at a time; the file closes and `release` runs at the end or when
    the reader goes."""
    try:
        with contextlib.closing(export.file) as f:
            while chunk := f.read(size):
                yield chunk
    finally:
        release()
