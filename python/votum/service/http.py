"""uvicorn's HTTP/1.1 protocol with deadlines at both ends of a request and a cap per address:

- a connection that has not sent a whole request head within `seconds` of opening (or of its
  previous response) is closed. uvicorn has a keep-alive timeout but none for a request that is
  still arriving, so without this a client can hold any number of connections open by sending a
  request slowly (slowloris);
- a connection whose answer stops draining for `send_seconds` (the socket's buffer full, the client
  not reading) is aborted and its buffered bytes dropped (issue 43, item 2: a client that never read
  a 33 MB page held that memory for as long as it liked);
- one address holds at most `per_address` connections (issue 43, item 3).

`ChunkedBodies` (ASGI middleware) hands uvicorn an answer `CHUNK` bytes at a time: uvicorn waits for
the socket to drain before each message, so the bytes buffered for one connection stay within the
transport's high-water mark and one chunk, whatever the answer's size.

The protocol is uvicorn's httptools one (llhttp, in C: several times less CPU per request than the
pure-Python h11 parser, which mattered for devices that send one ballot per request)."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any, ClassVar

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from votum.localnet import is_loopback

#: what a refused connection is told before it is closed
BUSY = b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\nRetry-After: 5\r\n\r\n"

#: connections one address may hold when `max_connections_per_address` is not set (loopback exempt)
DEFAULT_PER_ADDRESS = 64


class HeaderDeadlineProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with a deadline of `seconds` for each request head. Module-level, so
    the workers of `votum serve --workers N` can import it by name (`IMPORT_NAME`); each worker sets
    `seconds` from its settings before it accepts a connection."""

    seconds: float = 10.0
    #: connections one peer address may hold at once (issue 43, item 3); `None`: DEFAULT_PER_ADDRESS
    #: for every address but loopback (a proxy on this machine, local tools)
    per_address: int | None = None
    #: open connections per peer address, in this process (one event loop: no lock)
    _open: ClassVar[Counter[str]] = Counter()
    #: seconds an answer may stay undrained (the write side paused) before the connection is aborted
    send_seconds: float = 60.0
    _peer: str | None = None
    _deadline: asyncio.TimerHandle | None = None
    _send_deadline: asyncio.TimerHandle | None = None
    _cycle_when_armed: Any = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        peer = transport.get_extra_info("peername")
        host = str(peer[0]) if peer else ""
        cap = self.per_address
        if cap is None:
            cap = 0 if is_loopback(host) else DEFAULT_PER_ADDRESS
        if cap and self._open[host] >= cap:
            # one address holding this many connections would crowd out everyone else's
            transport.write(BUSY)
            transport.close()
            return
        self._open[host] += 1
        self._peer = host
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self._resumed()
        if self._peer is not None:
            self._open[self._peer] -= 1
            if self._open[self._peer] <= 0:
                del self._open[self._peer]
            self._peer = None
        super().connection_lost(exc)

    def pause_writing(self) -> None:
        super().pause_writing()
        if self._send_deadline is None:
            self._send_deadline = self.loop.call_later(self.send_seconds, self._stalled)

    def resume_writing(self) -> None:
        self._resumed()
        super().resume_writing()

    def _resumed(self) -> None:
        if self._send_deadline is not None:
            self._send_deadline.cancel()
            self._send_deadline = None

    def _stalled(self) -> None:
        # the client has not taken its answer's bytes for send_seconds: drop them and the connection
        # (abort, not close: close would keep the buffer until it drained)
        self._send_deadline = None
        self.transport.abort()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._arm()  # the next request's head has the same deadline

    def _arm(self) -> None:
        self._disarm()
        self._cycle_when_armed = self.cycle
        self._deadline = self.loop.call_later(self.seconds, self._expire)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expire(self) -> None:
        self._deadline = None
        # a new request head makes a new cycle; none since arming means none arrived in time
        if self.cycle is self._cycle_when_armed and not self.transport.is_closing():
            self.transport.close()


IMPORT_NAME = "votum.service.http:HeaderDeadlineProtocol"


def with_limits(seconds: float, per_address: int | None, send_seconds: float) -> type[asyncio.Protocol]:
    """The protocol class to give `uvicorn.run(http=...)` in one process."""
    return type(
        "HeaderDeadlineProtocol",
        (HeaderDeadlineProtocol,),
        {"seconds": seconds, "per_address": per_address, "send_seconds": send_seconds, "_open": Counter()},
    )


#: the largest piece of an answer given to uvicorn at once
CHUNK = 256 * 1024


class ChunkedBodies:
    """ASGI middleware: an answer's body in messages of at most `CHUNK` bytes, so that uvicorn's wait
    for the socket to drain (before each message) bounds what it buffers per connection."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def in_chunks(message: Any) -> None:
            body = message.get("body", b"") if message["type"] == "http.response.body" else b""
            if len(body) <= CHUNK:
                await send(message)
                return
            more = message.get("more_body", False)
            view = memoryview(body)
            for start in range(0, len(body), CHUNK):
                last = start + CHUNK >= len(body)
                await send(
                    {
                        "type": "http.response.body",
                        "body": bytes(view[start : start + CHUNK]),
                        "more_body": more or not last,
                    }
                )

        await self.app(scope, receive, in_chunks)
