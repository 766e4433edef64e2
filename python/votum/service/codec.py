"""JSON and MessagePack on every endpoint, both ways.

A request body is read as MessagePack when its `Content-Type` is `application/msgpack` (or
`application/x-msgpack`), as JSON otherwise; a response is MessagePack when the request's `Accept`
asks for it (or, with no `Accept` preference, when the request itself was MessagePack, as the seed's
clients expect), JSON otherwise. Both carry the same documents: MessagePack maps, arrays, strings
and integers where JSON has them, so one pydantic model validates either and OpenAPI documents both.
"""

from __future__ import annotations

import contextvars
import json
from collections.abc import Callable, Coroutine
from typing import Any

import msgpack  # type: ignore[import-untyped]
from fastapi import Request, Response
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute

MSGPACK = "application/msgpack"
JSON = "application/json"
_MSGPACK_TYPES = (MSGPACK, "application/x-msgpack")

#: The media type the current request's response must have (set per request by `NegotiatedRoute`).
_RESPONSE_TYPE: contextvars.ContextVar[str] = contextvars.ContextVar("votum_response_type", default=JSON)


class MalformedBody(Exception):
    """The body is not valid JSON or MessagePack (mapped to 400 `malformed_body`)."""


def _media_type(header: str | None) -> str:
    return (header or "").split(";", 1)[0].strip().lower()


def is_msgpack(content_type: str | None) -> bool:
    return _media_type(content_type) in _MSGPACK_TYPES


def response_type(request: Request) -> str:
    """MessagePack or JSON for the response to `request` (see the module's doc)."""
    accept = request.headers.get("accept", "")
    ranked: list[tuple[float, str]] = []
    for part in accept.split(","):
        fields = part.strip().split(";")
        media = fields[0].strip().lower()
        q = 1.0
        for f in fields[1:]:
            k, _, v = f.strip().partition("=")
            if k == "q":
                try:
                    q = float(v)
                except ValueError:
                    q = 0.0
        if media in _MSGPACK_TYPES or media == JSON:
            ranked.append((q, MSGPACK if media in _MSGPACK_TYPES else JSON))
    ranked = [r for r in ranked if r[0] > 0]
    if ranked:
        # the highest quality wins; JSON on a tie
        ranked.sort(key=lambda r: (-r[0], r[1] != JSON))
        return ranked[0][1]
    return MSGPACK if is_msgpack(request.headers.get("content-type")) else JSON


def encode(content: Any, media_type: str) -> bytes:
    if media_type == MSGPACK:
        return bytes(msgpack.packb(content, use_bin_type=True))
    return json.dumps(content, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()


def decode_msgpack(body: bytes) -> Any:
    try:
        return msgpack.unpackb(body, raw=False, strict_map_key=True)
    except Exception as e:  # msgpack raises several unrelated types for bad input
        raise MalformedBody(f"the body is not valid MessagePack ({type(e).__name__})") from e


class NegotiatedResponse(JSONResponse):
    """The response class of every route: JSON or MessagePack, as the request asked."""

    def __init__(
        self,
        content: Any,
        status_code: int = 200,
        headers: dict[str, str] | None = None,
        media_type: str | None = None,
        background: Any = None,
    ) -> None:
        self.media_type = media_type or _RESPONSE_TYPE.get()
        super().__init__(content, status_code, headers, None, background)

    def render(self, content: Any) -> bytes:
        return encode(content, self.media_type or JSON)


class _MsgpackRequest(Request):
    """A MessagePack request presented to FastAPI as already-decoded JSON."""

    def __init__(self, scope: Any, receive: Any, body: bytes, decoded: Any) -> None:
        super().__init__(scope, receive)
        self._body = body
        self._decoded = decoded

    async def json(self) -> Any:
        return self._decoded


class NegotiatedRoute(APIRoute):
    """Reads MessagePack bodies and picks the response's media type, for every route of the app."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def negotiated(request: Request) -> Response:
            token = _RESPONSE_TYPE.set(response_type(request))
            try:
                if is_msgpack(request.headers.get("content-type")):
                    body = await request.body()
                    decoded = decode_msgpack(body) if body else None
                    scope = dict(request.scope)
                    scope["headers"] = [
                        (k, JSON.encode() if k == b"content-type" else v) for k, v in request.scope["headers"]
                    ]
                    request = _MsgpackRequest(scope, request.receive, body, decoded)
                return await handler(request)
            finally:
                _RESPONSE_TYPE.reset(token)

        return negotiated


#: What the OpenAPI document says every request body and response may also be.
OPENAPI_MSGPACK_NOTE = (
    "Every request body may be sent as JSON (`application/json`) or MessagePack (`application/msgpack`); "
    "every response is MessagePack when `Accept` asks for `application/msgpack` (or, without an Accept "
    "preference, when the request was MessagePack), JSON otherwise. Both carry the same documents."
)
