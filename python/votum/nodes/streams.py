"""Streams (spec/95.5): a payload too big for one frame, sent as chunks of at most 1 MiB on one connection and
handed to a sink chunk by chunk as they arrive, so neither side ever holds the whole payload."""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import os
import struct
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from votum.nodes import errors
from votum.nodes.channel import Channel, Message

CHUNK = 1 << 20
#: a chunk's payload starts with its stream id (u64), index (u64) and last flag (u8), big-endian (spec/95.5)
_HEAD = struct.Struct(">QQB")
#: chunks between two acknowledgements: a sender has at most two windows in flight
WINDOW = 8
PREFIX = "stream:"


class StreamSink(Protocol):
    """Where a received stream goes: `write` each chunk in order, then `finish` (its result is the answer to
    the sender), or `abort` when the stream breaks off."""

    async def write(self, data: bytes | memoryview) -> None: ...

    async def finish(self) -> bytes | None: ...

    async def abort(self) -> None: ...


SinkFactory = Callable[[Message], StreamSink | Awaitable[StreamSink]]


class FileSink:
    """Writes a stream to `path` (through a temporary file renamed at the end, so a broken stream leaves no
    partial file) and answers with the SHA-256 of what it wrote."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._tmp = path.with_name(path.name + ".part")
        self._file = open(self._tmp, "wb")  # noqa: SIM115 (closed in finish or abort)
        self._hash = hashlib.sha256()
        self.size = 0

    def _write(self, data: bytes | memoryview) -> None:
        self._file.write(data)
        self._hash.update(data)

    async def write(self, data: bytes | memoryview) -> None:
        self.size += len(data)
        await asyncio.get_running_loop().run_in_executor(None, self._write, data)

    async def finish(self) -> bytes:
        self._file.close()
        os.replace(self._tmp, self.path)
        return self._hash.digest()

    async def abort(self) -> None:
        self._file.close()
        self._tmp.unlink(missing_ok=True)


async def file_chunks(path: Path, size: int = CHUNK) -> AsyncIterator[bytes]:
    """A file read in chunks off the event loop."""
    loop = asyncio.get_running_loop()
    with open(path, "rb") as f:
        while True:
            data = await loop.run_in_executor(None, f.read, size)
            if not data:
                return
            yield data


async def _pieces(source: AsyncIterable[bytes] | Iterable[bytes]) -> AsyncIterator[memoryview]:
    """The source's bytes in pieces of at most CHUNK, as views (copied once, into the chunk's payload)."""
    if isinstance(source, AsyncIterable):
        async for data in source:
            view = memoryview(data)
            for off in range(0, len(view), CHUNK):
                yield view[off : off + CHUNK]
    else:
        for data in source:
            view = memoryview(data)
            for off in range(0, len(view), CHUNK):
                yield view[off : off + CHUNK]


_ids = itertools.count(1)


async def send_stream(
    channel: Channel, kind: str, source: AsyncIterable[bytes] | Iterable[bytes], timeout: float | None = None
) -> bytes:
    """Sends `source` as one stream of `kind` on `channel` and returns the receiver's answer. The chunks are
    envelopes (stream id, index, last, bytes) of kind `stream:<kind>`: one-way, except every WINDOW-th,
    which is a request the receiver answers once it has taken that chunk, and the last, answered once its
    sink has finished (spec/95.5). At most two windows are in flight, so neither side holds more."""
    sid = next(_ids)
    index = 0
    held: bytes | memoryview | None = None
    wire = PREFIX + kind
    ack: asyncio.Future[bytes] | None = None
    try:
        async for piece in _pieces(source):
            if held is not None:
                chunk = b"".join((_HEAD.pack(sid, index, 0), held))
                if index % WINDOW == WINDOW - 1:
                    if ack is not None:
                        await ack  # the window before this one has been taken
                    # queued now, before the chunks after it; its answer is awaited a window later
                    ack = asyncio.ensure_future(await channel.submit(wire, chunk, timeout))
                else:
                    await channel.send(wire, chunk)
                index += 1
            held = piece
        if ack is not None:
            await ack
        last = b"".join((_HEAD.pack(sid, index, 1), held or b""))
        return await channel.request(wire, last, timeout)
    finally:
        if ack is not None and not ack.done():
            ack.cancel()


@dataclass
class _Open:
    turn: asyncio.Condition
    sink: StreamSink | None = None
    next: int = 0
    failed: errors.NodeError | None = None


#: seconds a chunk waits for the chunks before it (they may be handled by another task)
TURN_TIMEOUT = 60.0


def stream_handler(open_sink: SinkFactory) -> Callable[[Message], Awaitable[bytes | None]]:
    """The handler of `stream:<kind>` envelopes: feeds each stream's chunks, in order, to its own sink."""
    streams: dict[tuple[Channel, int], _Open] = {}

    async def purge() -> None:  # streams of connections that closed before their last chunk
        for key in [k for k in streams if k[0].closed]:
            sink = streams.pop(key).sink
            if sink is not None:
                await sink.abort()

    async def feed(entry: _Open, m: Message, sid: int, index: int, data: memoryview) -> None:
        try:
            await asyncio.wait_for(entry.turn.wait_for(lambda: entry.next >= index), TURN_TIMEOUT)
        except asyncio.TimeoutError:
            entry.failed = entry.failed or errors.BadSequence(f"stream {sid}: chunk {entry.next} never came")
        if entry.next != index:
            entry.failed = entry.failed or errors.BadSequence(
                f"stream {sid}: chunk {index}, not {entry.next}"
            )
        entry.next = max(entry.next, index + 1)
        if entry.failed is not None:
            return
        try:
            if entry.sink is None:
                made = open_sink(m)
                entry.sink = await made if isinstance(made, Awaitable) else made
            await entry.sink.write(data)
        except Exception as e:
            entry.failed = errors.HandlerError(f"the stream's sink failed: {type(e).__name__}: {e}")

    async def on_chunk(m: Message) -> bytes | None:
        if len(m.payload) < _HEAD.size or m.payload[_HEAD.size - 1] > 1:
            raise errors.MalformedFrame("a stream chunk starts with its id, index and last flag (spec/95.5)")
        sid, index, flag = _HEAD.unpack_from(m.payload)
        last = flag == 1
        data = memoryview(m.payload)[_HEAD.size :]
        key = (m.channel, sid)
        entry = streams.get(key)
        if entry is None:
            await purge()
            entry = streams[key] = _Open(asyncio.Condition())
        async with entry.turn:
            await feed(entry, m, sid, index, data)
            entry.turn.notify_all()
        if not last:
            if entry.failed is not None and m.id != 0:
                raise entry.failed  # an acknowledged chunk tells the sender at once
            return None
        streams.pop(key, None)
        if entry.failed is not None:
            if entry.sink is not None:
                await entry.sink.abort()
            raise entry.failed
        if entry.sink is None:  # not reached: the last chunk made the sink if nothing else did
            raise errors.HandlerError(f"stream {sid} has no sink")
        return await entry.sink.finish()

    return on_chunk
