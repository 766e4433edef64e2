"""The request body size limit, enforced before a route reads the body: by `Content-Length` when
the client gives one (answered at once, nothing read), and by counting the bytes of a streamed
body as they arrive (the read stops with a 413 `HTTPException`, which the one error mapping turns
into a problem document)."""

from __future__ import annotations

from typing import Any

from fastapi import HTTPException

from votum.service.auth import TokenBook, bearer_token
from votum.service.codec import JSON, encode


class BodyTooLarge(HTTPException):
    def __init__(self, limit: int) -> None:
        super().__init__(413, f"the request body is larger than {limit} bytes")


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
    ) -> None:
        self.app = app
        self.limit = limit
        self.tokens = tokens
        self.open_paths = open_paths

    def _limit(self, scope: dict[str, Any]) -> int:
        if self.tokens is None or scope.get("path") in self.open_paths:
            return self.limit
        for name, value in scope.get("headers", []):
            if name == b"authorization":
                token = bearer_token(value.decode("latin-1"))
                if token is not None and self.tokens.role_of(token) is not None:
                    return self.limit
        return min(self.limit, ANONYMOUS_LIMIT)

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

        async def counting() -> Any:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise BodyTooLarge(limit)
            return message

        await self.app(scope, counting, send)
