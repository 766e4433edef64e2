"""A record sent to a guardian as one stream (`votum.parties.record_copy`, spec/65.9): what arrives is the
directory sent, byte for byte, however the stream is cut into chunks; a name that leaves the directory or is
not a record file's, a name sent twice, too many files or bytes, and a stream ending inside a file are each
refused, and a refused copy leaves nothing behind."""

from __future__ import annotations

import asyncio
import hashlib
import struct
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from votum.parties.record_copy import RecordCopyError, RecordSink, files_of, record_chunks


def make_record(root: Path) -> Path:
    (root / "encrypted_ballots" / "device-1").mkdir(parents=True)
    (root / "manifest.json").write_text('{"contests": []}')
    (root / "empty.json").write_bytes(b"")
    (root / "ballots.jsonl").write_bytes(bytes(range(256)) * 3000)
    for i in range(3):
        (root / "encrypted_ballots" / "device-1" / f"b-{i}.json").write_text(f'{{"id": {i}}}')
    (root / "link.json").symlink_to(root / "manifest.json")  # not a regular file: not sent
    return root


def entry(name: bytes, body: bytes, size: int | None = None) -> bytes:
    return struct.pack(">H", len(name)) + name + struct.pack(">Q", len(body) if size is None else size) + body


async def receive(pieces: list[bytes], parent: Path, **limits: int) -> RecordSink:
    sink = RecordSink(parent, **limits)
    try:
        for p in pieces:
            await sink.write(p)
        await sink.finish()
    except RecordCopyError:
        await sink.abort()
        raise
    return sink


def stream_of(root: Path, digest: hashlib._Hash | None = None) -> bytes:
    async def collect() -> bytes:
        return b"".join([c async for c in record_chunks(root, digest)])

    return asyncio.run(collect())


@settings(max_examples=40, deadline=None)
@given(cuts=st.lists(st.integers(min_value=0, max_value=800_000), max_size=12))
def test_the_copy_is_the_record_however_the_stream_is_cut(
    tmp_path_factory: pytest.TempPathFactory, cuts: list[int]
) -> None:
    base = tmp_path_factory.mktemp("copy")
    root = make_record(base / "record")
    data = stream_of(root)
    points = sorted({c % (len(data) + 1) for c in cuts})
    pieces = [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]
    sink = asyncio.run(receive(pieces, base))
    sent = {name: path.read_bytes() for name, path in files_of(root)}
    got = {name: path.read_bytes() for name, path in files_of(sink.root)}
    assert got == sent and "link.json" not in got and "empty.json" in got
    sent = hashlib.sha256()
    assert stream_of(root, sent) == data and sent.digest() == hashlib.sha256(data).digest()
    assert sink.root.stat().st_mode & 0o077 == 0, "the copy is private to its guardian"
    sink.remove()
    assert not sink.root.exists()


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        (entry(b"../escape.json", b"{}"), "not a record file's name"),
        (entry(b"/etc/passwd", b"x"), "not a record file's name"),
        (entry(b"a/../../b", b"x"), "not a record file's name"),
        (entry(b"a/b/c/d.json", b"x"), "not a record file's name"),
        (entry(b"", b"x"), "not a record file's name"),
        (entry(b".hidden", b"x"), "not a record file's name"),
        (entry(b"\xff\xfe", b"x"), "not UTF-8"),
        (entry(b"a.json", b"x") + entry(b"a.json", b"y"), "sent twice"),
        (entry(b"a", b"x") + entry(b"a/b.json", b"y"), "a/b.json"),
        (entry(b"ballots.jsonl", b"{}", size=10), "ends inside a file"),
        (entry(b"ballots.jsonl", b"{}")[:5], "ends inside a file"),
    ],
)
def test_a_bad_stream_is_refused_and_leaves_nothing(tmp_path: Path, raw: bytes, why: str) -> None:
    parent = tmp_path / "guardian"
    parent.mkdir()
    with pytest.raises(RecordCopyError, match=why):
        asyncio.run(receive([raw], parent))
    assert list(parent.iterdir()) == [], "a refused copy is removed"
    assert not (tmp_path / "escape.json").exists()


def test_limits_on_files_and_bytes(tmp_path: Path) -> None:
    raw = b"".join(entry(f"f{i}.json".encode(), b"{}") for i in range(5))
    with pytest.raises(RecordCopyError, match="more than 4 files"):
        asyncio.run(receive([raw], tmp_path, max_files=4))
    assert len(raw) == 95
    with pytest.raises(RecordCopyError, match="larger than 90 bytes"):
        asyncio.run(receive([raw[:60], raw[60:]], tmp_path, max_bytes=90))
    assert list(tmp_path.iterdir()) == []
    sink = asyncio.run(receive([raw], tmp_path, max_files=5, max_bytes=len(raw)))
    assert len(files_of(sink.root)) == 5


@settings(max_examples=150, deadline=None)
@given(
    entries=st.lists(
        st.tuples(
            st.one_of(
                st.text(alphabet="ab./-_\\\0é", max_size=12),
                st.sampled_from(["..", "a/..", "../a", "/a", "a//b", "a/b/c/d", "ok.json", "d/ok.json"]),
            ),
            st.binary(max_size=40),
            st.integers(min_value=-3, max_value=3),
        ),
        max_size=6,
    ),
    tail=st.binary(max_size=8),
)
def test_whatever_arrives_nothing_is_written_outside_the_copy(
    tmp_path_factory: pytest.TempPathFactory, entries: list[tuple[str, bytes, int]], tail: bytes
) -> None:
    """Any stream, well formed or not (names of any characters, sizes that lie, bytes after the last file):
    the copy either fails and leaves nothing, or holds exactly the files named, each inside it."""
    base = tmp_path_factory.mktemp("any")
    parent = base / "guardian"
    parent.mkdir()
    raw = b"".join(entry(n.encode(), body, max(0, len(body) + lie)) for n, body, lie in entries) + tail
    try:
        sink = asyncio.run(receive([raw], parent))
    except RecordCopyError:
        assert list(parent.iterdir()) == []
    else:
        written = {name for name, _ in files_of(sink.root)}
        assert all(p.resolve().is_relative_to(sink.root.resolve()) for p in sink.root.rglob("*"))
        assert written <= {n for n, _, _ in entries}
    assert sorted(p.name for p in base.iterdir()) == ["guardian"], "nothing beside the guardian's folder"
