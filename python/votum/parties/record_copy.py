"""A record directory sent to a guardian over one stream (spec/65.9, 66.12): the guardian decrypts only what
it received over its channel from the coordinator and checked itself, never a path the coordinator names, so
a guardian needs no file system shared with the coordinator.

The stream is each regular file under the directory in sorted order, each as: the length of its name (u16,
big-endian), its name (UTF-8: a relative path of one to three parts, each `[A-Za-z0-9][A-Za-z0-9._-]{0,127}`),
its size (u64, big-endian) and its bytes. The receiver writes the files into a fresh private directory as they
arrive and answers with SHA-256 of the whole stream; the sender compares it with its own. A name that breaks
the rule or comes twice, more than `max_files` files or `max_bytes` bytes, or a stream that ends inside a file
aborts the copy and removes it."""

from __future__ import annotations

import asyncio
import hashlib
import re
import shutil
import struct
import tempfile
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import BinaryIO

from votum.nodes.streams import file_chunks

_PART = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_NAME = struct.Struct(">H")
_SIZE = struct.Struct(">Q")
#: a record of a million ballots in egk-ec's form is a million files; 2.1's form is seven
MAX_FILES = 4_000_000
#: 64 GiB: a 2.1 record of about two million 4096-bit ballots
MAX_BYTES = 64 << 30


class RecordCopyError(ValueError):
    """A record stream that breaks the rules above (the copy is removed)."""


def _valid(name: str) -> bool:
    parts = name.split("/")
    return 1 <= len(parts) <= 3 and all(_PART.fullmatch(p) for p in parts)


def files_of(root: Path) -> list[tuple[str, Path]]:
    """The record's regular files by their names in the stream, sorted."""
    out = []
    for p in sorted(root.rglob("*")):
        if p.is_file() and not p.is_symlink():
            name = p.relative_to(root).as_posix()
            if not _valid(name):
                raise RecordCopyError(f"{name}: not a record file's name")
            out.append((name, p))
    return out


async def record_chunks(root: Path, digest: hashlib._Hash | None = None) -> AsyncIterator[bytes]:
    """The stream of the record at `root`; `digest`, when given, is updated with every byte sent."""
    for name, path in files_of(root):
        encoded = name.encode()
        head = _NAME.pack(len(encoded)) + encoded + _SIZE.pack(path.stat().st_size)
        if digest is not None:
            digest.update(head)
        yield head
        async for data in file_chunks(path):
            if digest is not None:
                digest.update(data)
            yield data


class RecordSink:
    """Receives a record stream into a fresh private directory under `parent` (mode 0700, removed by
    `abort` or by the owner once it is replaced); `finish` answers SHA-256 of the stream."""

    def __init__(
        self,
        parent: Path | None = None,
        max_files: int = MAX_FILES,
        max_bytes: int = MAX_BYTES,
        done: Callable[[RecordSink], None] | None = None,
    ) -> None:
        self.done = done
        self.root = Path(tempfile.mkdtemp(prefix="votum-record-", dir=parent))
        self.max_files, self.max_bytes = max_files, max_bytes
        self._hash = hashlib.sha256()
        self._pending = bytearray()  # the current head, until whole
        self._file: BinaryIO | None = None
        self._left = 0  # bytes of the current file still to come
        self._names: set[str] = set()
        self.size = 0
        #: finished, aborted or removed: it writes nothing more
        self.ended = False

    def _take(self, data: bytes | memoryview) -> None:
        view = memoryview(data)
        self.size += len(view)
        if self.size > self.max_bytes:
            raise RecordCopyError(f"the record is larger than {self.max_bytes} bytes")
        self._hash.update(view)
        while len(view):
            if self._left and self._file is not None:
                n = min(self._left, len(view))
                self._file.write(view[:n])
                self._left -= n
                view = view[n:]
                if not self._left:
                    self._close_file()
                continue
            need = self._head_size()
            k = min(need - len(self._pending), len(view))
            self._pending += view[:k]
            view = view[k:]
            if len(self._pending) >= _NAME.size and len(self._pending) == self._head_size():
                self._open()

    def _head_size(self) -> int:
        """The bytes of the head being read: its name's length first, then the whole head."""
        if len(self._pending) < _NAME.size:
            return _NAME.size
        length: int = _NAME.unpack_from(self._pending)[0]
        return _NAME.size + length + _SIZE.size

    def _open(self) -> None:
        n = _NAME.unpack_from(self._pending)[0]
        size = _SIZE.unpack_from(self._pending, _NAME.size + n)[0]
        try:
            name = bytes(self._pending[_NAME.size : _NAME.size + n]).decode()
        except UnicodeDecodeError:
            raise RecordCopyError("a file name is not UTF-8") from None
        self._pending.clear()
        if not _valid(name):
            raise RecordCopyError(f"{name!r}: not a record file's name")
        if name in self._names:
            raise RecordCopyError(f"{name}: sent twice")
        self._names.add(name)
        if len(self._names) > self.max_files:
            raise RecordCopyError(f"the record has more than {self.max_files} files")
        target = self.root.joinpath(*name.split("/"))
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            self._file = open(target, "xb")  # noqa: SIM115 (closed once its bytes are in)
        except OSError as e:
            raise RecordCopyError(f"{name}: {e.strerror}") from None
        self._left = size
        if not size:
            self._close_file()

    def _close_file(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    async def write(self, data: bytes | memoryview) -> None:
        await asyncio.get_running_loop().run_in_executor(None, self._take, data)

    async def finish(self) -> bytes:
        if self._left or self._pending:
            self.remove()
            raise RecordCopyError("the record stream ends inside a file")
        self._close_file()
        self.ended = True
        if self.done is not None:
            self.done(self)
        return self._hash.digest()

    async def abort(self) -> None:
        self.remove()

    def remove(self) -> None:
        self.ended = True
        self._close_file()
        shutil.rmtree(self.root, ignore_errors=True)
