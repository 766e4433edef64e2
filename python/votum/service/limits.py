"""The request body size limit, enforced before a route reads the body: by `Content-Length` when
the client gives one (answered at once, nothing read), and by counting the bytes of a streamed
body as they arrive (the read stops with a 413 `HTTPException`, which the one error mapping turns
into a problem document)."""

from __future__ import annotations

from typing import Any

from fastapi import HTTPException

from votum.service.codec import JSON, encode


class BodyTooLarge(HTTPException):
    def __init__(self, limit: int) -> None:
        super().__init__(413, f"the request body is larger than {limit} bytes")


class BodyLimit:
    """Pure ASGI middleware (added with `app.add_middleware(BodyLimit, limit=...)`)."""

    def __init__(self, app: Any, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", []):
            if name == b"content-length" and value.isdigit() and int(value) > self.limit:
                body = encode(
                    {
                        "type": "body_too_large",
                        "status": 413,
                        "title": "The request body is larger than this server accepts",
                        "detail": f"the request body is larger than {self.limit} bytes",
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
                if received > self.limit:
                    raise BodyTooLarge(self.limit)
            return message

        await self.app(scope, counting, send)
