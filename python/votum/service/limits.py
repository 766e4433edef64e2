"""The request body size limit, enforced before a route reads the body: by `Content-Length` when
the client gives one (answered at once, nothing read), and by counting the bytes of a streamed
body as they arrive (the read stops with a 413 `HTTPException`, which the one error mapping turns
into a problem document)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

from fastapi import HTTPException

from votum.service.codec import JSON, encode
from votum.service.tokens import TokenBook, bearer_token


class BodyTooLarge(HTTPException):
    def __init__(self, limit: int) -> None:
        super().__init__(413, f"the request body is larger than {limit} bytes")


class BodyTimeout(HTTPException):
    def __init__(self, seconds: float) -> None:
        super().__init__(408, f"the request body did not arrive whole within {seconds:g} s")


#: where `has_known_token` keeps its answer in an ASGI scope, for the next middleware that asks
_KNOWN = "votum.known_token"


def has_known_token(scope: dict[str, Any], tokens: TokenBook) -> bool:
    """Whether the request's first `Authorization` header is a bearer token the book knows (the one
    header the routes read, `auth.bearer_role`). Computed once per request: the answer is kept in the
    scope, where the body limit and the anonymous gate both find it."""
    known = scope.get(_KNOWN)
    if known is None:
        known = False
        for name, value in scope.get("headers", []):
            if name == b"authorization":
                token = bearer_token(value.decode("latin-1"))
                known = token is not None and tokens.role_of(token) is not None
                break
        scope[_KNOWN] = known
    return bool(known)


#: The body limit of a request without a known token, outside the open paths.
ANONYMOUS_LIMIT = 64 * 1024


class BodyLimit:
    """Pure ASGI middleware (added with `app.add_middleware(BodyLimit, limit=..., tokens=...)`).

    A request with a known bearer token, or to one of `open_paths` (the seed endpoints when they are
    on), may send `limit` bytes; any other request `ANONYMOUS_LIMIT`: an outsider cannot make the
    server hold a large body, whatever route it names."""

    def __init__(
        self,
        app: Any,
        limit: int,
        tokens: TokenBook | None = None,
        open_paths: frozenset[str] = frozenset(),
        body_timeout: float | None = None,
    ) -> None:
        self.app = app
        self.limit = limit
        self.tokens = tokens
        self.open_paths = open_paths
        #: seconds a whole body may take to arrive, from the request head (issue 43, item 16)
        self.body_timeout = body_timeout

    def _limit(self, scope: dict[str, Any]) -> int:
        if self.tokens is None or scope.get("path") in self.open_paths:
            return self.limit
        return self.limit if has_known_token(scope, self.tokens) else min(self.limit, ANONYMOUS_LIMIT)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self._limit(scope)
        for name, value in scope.get("headers", []):
            if name == b"content-length" and value.isdigit() and int(value) > limit:
                body = encode(
                    {
                        "type": "body_too_large",
                        "status": 413,
                        "title": "The request body is larger than this server accepts",
                        "detail": f"the request body is larger than {limit} bytes",
                    },
                    JSON,
                )
                await send(
                    {
                        "type": "http.response.start",
                        "status": 413,
                        "headers": [
                            (b"content-type", JSON.encode()),
                            (b"content-length", str(len(body)).encode()),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        received = 0
        complete = False
        end = None if self.body_timeout is None else time.monotonic() + self.body_timeout

        async def counting() -> Any:
            nonlocal received, complete
            if complete or end is None:
                # after the body only a disconnect can come, whenever the client goes (a long
                # download listens for it): no deadline then
                message = await receive()
            else:
                try:
                    message = await asyncio.wait_for(receive(), max(0.0, end - time.monotonic()))
                except asyncio.TimeoutError:
                    raise BodyTimeout(self.body_timeout or 0.0) from None
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise BodyTooLarge(limit)
                complete = not message.get("more_body", False)
            return message

        await self.app(scope, counting, send)


class AnonymousGate:
    """Pure ASGI middleware that keeps the room for requests with a known token (issue 43, items 1
    and 3: 40 anonymous clients looping on any read raised a device's p95 about 16 times).

    A request without a known token (outside `open_paths`) waits for one of `concurrency` slots, and
    before it starts it waits while requests with a token are in flight (at most `max_wait` seconds,
    so anonymous readers are slowed, never starved). It holds its slot until its answer starts: the work
    of building an answer is what the slots bound, not the time a client takes to read it; each later
    piece of a long answer waits too while requests with a token are in flight, at most `piece_wait`."""

    def __init__(
        self,
        app: Any,
        tokens: TokenBook | None,
        concurrency: int,
        max_wait: float = 1.0,
        open_paths: frozenset[str] = frozenset(),
        piece_wait: float = 0.02,
    ) -> None:
        self.app = app
        self.tokens = tokens
        self.concurrency = concurrency
        self.max_wait = max_wait
        #: the longest a piece of a long answer waits (a 256 KiB piece per 20 ms, 12 MB/s, while requests
        #: with a token never stop)
        self.piece_wait = piece_wait
        self.open_paths = open_paths
        self._authenticated = 0
        self._idle: asyncio.Event | None = None
        self._slots: asyncio.Semaphore | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("path") in self.open_paths:
            await self.app(scope, receive, send)
            return
        loop = asyncio.get_running_loop()
        if self._loop is None:  # made in the server's event loop (one per server process)
            self._loop = loop
            self._idle = asyncio.Event()
            self._idle.set()
            self._slots = asyncio.Semaphore(self.concurrency)
        elif loop is not self._loop or self._idle is None or self._slots is None:
            # another event loop (a test client's per-request loop): asyncio's primitives belong to one
            await self.app(scope, receive, send)
            return
        if self.tokens is None or has_known_token(scope, self.tokens):
            self._authenticated += 1
            self._idle.clear()
            try:
                await self.app(scope, receive, send)
            finally:
                self._authenticated -= 1
                if self._authenticated == 0:
                    self._idle.set()
            return
        await self._slots.acquire()
        held = True

        def release() -> None:
            nonlocal held
            if held:
                held = False
                assert self._slots is not None
                self._slots.release()

        async def releasing(message: Any) -> None:
            if message["type"] == "http.response.start":
                release()
            elif self._authenticated:
                # a long answer (a record download) goes on between the requests with a token
                assert self._idle is not None
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self._idle.wait(), self.piece_wait)
            await send(message)

        try:
            if self._authenticated:
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self._idle.wait(), self.max_wait)
            await self.app(scope, receive, releasing)
        finally:
            release()
