"""The bytes of one connection (spec/95.3): length-prefixed frames cut out of what TLS decrypts, without the
copies of asyncio's StreamReader, and the writing side with its flow control.

TLS decrypts straight into the buffers this protocol hands out (`asyncio.BufferedProtocol`). Small frames
share one buffer and are copied out once each; a frame that does not fit gets a buffer of its own, which
becomes the frame itself: it starts at 1 MiB and doubles as bytes arrive (never allocated on the word of a
length prefix alone), and the frame has `frame_seconds` to arrive whole, else the connection ends. Frames
wait in a queue for the channel's consumer, in order, followed by the reason reading ended. Reading pauses
while that queue is full, so a slow consumer holds the sender back through TCP instead of growing memory."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import socket
from collections.abc import Callable
from typing import Any, cast

#: the shared buffer for small frames; a frame longer than this gets a buffer of its own
BUFFER = 32 << 10
#: free space below which the shared buffer is compacted before handing it out
MIN_FREE = 4 << 10
#: a big frame's buffer starts at this size and doubles as its bytes arrive (never allocated whole
#: on the word of its length prefix)
BIG_FIRST = 1 << 20
#: seconds a frame that did not fit the shared buffer has to arrive whole
FRAME_SECONDS = 120.0


class FrameTooLarge(Exception):
    """The peer announced a frame over the limit (spec/95.4 `frame-too-large`)."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"a frame of {size} bytes (at most {limit})")
        self.size = size
        self.limit = limit


class FrameTimeout(Exception):
    """A frame did not arrive whole within the wire's `frame_seconds` (issue 43, item 8)."""

    def __init__(self, seconds: float, got: int, size: int) -> None:
        super().__init__(f"{got} of a frame's {size} bytes arrived in {seconds:g} s")


class PeerClosed(Exception):
    """The peer closed the connection; `partial` bytes of an unfinished frame were lost with it."""

    def __init__(self, partial: int) -> None:
        super().__init__(f"the peer closed the connection ({partial} bytes of a frame unread)")
        self.partial = partial


class Wire(asyncio.BufferedProtocol):
    """One connection's transport and frames. The first frame (the hello) may be at most `hello_limit`
    bytes; later ones at most `limit`."""

    def __init__(
        self,
        limit: int,
        hello_limit: int,
        queue_frames: int = 64,
        on_connect: Callable[[Wire], None] | None = None,
        frame_seconds: float = FRAME_SECONDS,
        queue_bytes: int = 16 << 20,
    ) -> None:
        self.limit = limit
        self._frame_seconds = frame_seconds
        self._big_size = 0
        self._big_deadline: asyncio.TimerHandle | None = None
        self._next_limit = hello_limit
        self._queue_frames = queue_frames
        #: bytes of frames read ahead before reading pauses (issue 42, C.14: a count alone let 64 frames of
        #: up to 16 MiB wait, 320 MiB for one slow connection); a frame is always taken whole, so a
        #: connection holds at most this plus one frame
        self._queue_bytes = queue_bytes
        self._queued = 0
        self._on_connect = on_connect
        self.transport: asyncio.Transport | None = None
        self._buf = bytearray(BUFFER)
        self._view = memoryview(self._buf)
        self._start = 0
        self._end = 0
        self._big: bytearray | None = None
        self._big_got = 0
        self._frames: collections.deque[bytes | bytearray] = collections.deque()
        #: why reading ended, raised once every frame before it has been read
        self._end_error: BaseException | None = None
        self._partial = 0
        self._reader: asyncio.Future[None] | None = None
        self._reading_paused = False
        self._write_paused = False
        self._drainers: list[asyncio.Future[None]] = []
        self._lost: BaseException | None = None
        self._closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    # -- the transport ---------------------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's does not subclass asyncio's
        sock = self.transport.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self._on_connect is not None:
            self._on_connect(self)

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self.transport.get_extra_info(name, default) if self.transport is not None else default

    def connection_lost(self, exc: Exception | None) -> None:
        if self._big_deadline is not None:
            self._big_deadline.cancel()
            self._big_deadline = None
        self._lost = exc or ConnectionResetError("the connection closed")
        if self._end_error is None:
            self._end_error = exc if exc is not None else PeerClosed(self._pending_bytes())
        self._wake_reader()
        for d in self._drainers:
            if not d.done():
                d.set_exception(ConnectionResetError("the connection closed while writing"))
        self._drainers.clear()
        if not self._closed.done():
            self._closed.set_result(None)

    def eof_received(self) -> bool:
        if self._end_error is None:
            self._end_error = PeerClosed(self._pending_bytes())
            self._wake_reader()
        return False  # close the transport

    def _pending_bytes(self) -> int:
        """Bytes of an incomplete frame received so far (reported when the peer closes mid-frame)."""
        if self._big is not None:
            return self._big_got + 4
        return self._end - self._start

    # -- reading ---------------------------------------------------------------------------------------------

    def get_buffer(self, sizehint: int) -> memoryview:
        if self._big is not None:
            if self._big_got == len(self._big):
                # full: double it (a new buffer and one copy; the loop may still hold a view)
                grown = bytearray(min(self._big_size, 2 * len(self._big)))
                grown[: self._big_got] = self._big
                self._big = grown
            return memoryview(self._big)[self._big_got :]
        if BUFFER - self._end < MIN_FREE:
            # move the unread bytes to the front
            n = self._end - self._start
            self._buf[:n] = self._buf[self._start : self._end]
            self._start, self._end = 0, n
        return self._view[self._end :]

    def buffer_updated(self, nbytes: int) -> None:
        if self._end_error is not None:
            return  # a refused frame: nothing after it is read
        if self._big is not None:
            self._big_got += nbytes
            if self._big_got < self._big_size:
                return
            self._end_big()
            return
        self._end += nbytes
        buf = self._buf
        while self._end - self._start >= 4:
            s = self._start
            n = int.from_bytes(buf[s : s + 4], "big")
            if not 0 < n <= self._next_limit:
                self._end_error = FrameTooLarge(n, self._next_limit)
                self._wake_reader()
                return
            self._next_limit = self.limit
            have = self._end - s - 4
            if have >= n:
                self._emit(bytes(self._view[s + 4 : s + 4 + n]))
                self._start = s + 4 + n
                continue
            if n + 4 > BUFFER - MIN_FREE:
                # a big frame gets its own buffer, filled directly from here on; it grows with the
                # bytes that arrive, and the whole frame has `frame_seconds` to come
                big = bytearray(min(n, max(have, BIG_FIRST)))
                big[:have] = self._view[s + 4 : self._end]
                self._start = self._end = 0
                self._big = big
                self._big_got = have
                self._big_size = n
                self._big_deadline = asyncio.get_running_loop().call_later(
                    self._frame_seconds, self._big_too_slow
                )
            break
        if self._start == self._end:
            self._start = self._end = 0

    def _end_big(self) -> None:
        assert self._big is not None
        if self._big_deadline is not None:
            self._big_deadline.cancel()
            self._big_deadline = None
        frame, self._big = self._big, None
        self._big_got = self._big_size = 0
        self._emit(frame)

    def _big_too_slow(self) -> None:
        self._big_deadline = None
        if self._big is None or self._end_error is not None:
            return
        self._end_error = FrameTimeout(self._frame_seconds, self._big_got, self._big_size)
        self._big = None  # its memory goes now
        self._wake_reader()
        if self.transport is not None:
            self.transport.close()

    def _emit(self, frame: bytes | bytearray) -> None:
        self._frames.append(frame)
        self._queued += len(frame)
        full = len(self._frames) >= self._queue_frames or self._queued >= self._queue_bytes
        if full and not self._reading_paused:
            self._reading_paused = True
            assert self.transport is not None
            self.transport.pause_reading()
        self._wake_reader()

    def _wake_reader(self) -> None:
        r = self._reader
        if r is not None and not r.done():
            r.set_result(None)

    async def read_frame(self) -> bytes | bytearray:
        """The next frame's body. When reading has ended, raises why: `PeerClosed`, `FrameTooLarge`, or the
        connection's error."""
        while not self._frames:
            if self._end_error is not None:
                raise self._end_error
            self._reader = asyncio.get_running_loop().create_future()
            try:
                await self._reader
            finally:
                self._reader = None
        frame = self._frames.popleft()
        self._queued -= len(frame)
        room = len(self._frames) <= self._queue_frames // 2 and self._queued <= self._queue_bytes // 2
        if self._reading_paused and room and self._lost is None:
            self._reading_paused = False
            assert self.transport is not None
            self.transport.resume_reading()
        return frame

    # -- writing ---------------------------------------------------------------------------------------------

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if self._lost is not None:
            raise ConnectionResetError("the connection is closed")
        assert self.transport is not None
        self.transport.write(data)

    def write_buffer_size(self) -> int:
        return self.transport.get_write_buffer_size() if self.transport is not None else 0

    def pause_writing(self) -> None:
        self._write_paused = True

    def resume_writing(self) -> None:
        self._write_paused = False
        for d in self._drainers:
            if not d.done():
                d.set_result(None)
        self._drainers.clear()

    async def drain(self) -> None:
        """Waits while the transport's buffer is over its high-water mark."""
        if self._lost is not None:
            raise ConnectionResetError("the connection is closed")
        if self._write_paused:
            d: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._drainers.append(d)
            await d

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()

    def abort(self) -> None:
        if self.transport is not None:
            self.transport.abort()

    async def wait_closed(self) -> None:
        await asyncio.shield(self._closed)
