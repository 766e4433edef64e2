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
import re
from collections.abc import Callable, Coroutine
from typing import Any

import msgpack  # type: ignore[import-untyped]
from fastapi import Request, Response
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute

from votum import bounded

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


#: Most items in one array or map of a request body (the largest legitimate lists are 10,000
#: ballots of a seed tally request and 5,000 of a /v1 batch).
MAX_CONTAINER_ITEMS = 65_536
#: Most arrays, maps and strings in one request body. Decoding builds a Python object for each (an
#: empty map costs ~64 bytes against 1 byte of MessagePack), so this bounds a request's memory
#: (~150 MB at most) where the body limit alone would allow gigabytes. A 5,000-ballot batch of
#: five-contest ballots has well under a million.
MAX_BODY_OBJECTS = 2_000_000

# bytes that start an array, a map or a string in MessagePack (fixmap, fixarray, fixstr, str8/16/32,
# array16/32, map16/32), and `{`, `[`, `"` in JSON. Counting them (one C pass) bounds from above
# how many such objects a decoder can build: they may also occur inside strings, never fewer times.
_MSGPACK_STARTS = bytes(range(0x80, 0xC0)) + bytes(range(0xD9, 0xE0))
_JSON_STARTS = b'{["'
_LONE_SURROGATE_HINT = re.compile(rb"\\u[dD][89a-fA-F]")


def _bounded(body: bytes, starts: bytes) -> None:
    if len(body) - len(body.translate(None, starts)) > MAX_BODY_OBJECTS:
        raise MalformedBody(f"the body has more than {MAX_BODY_OBJECTS} arrays, maps and strings")


def _only_json_values(value: Any) -> None:
    """Refuses what JSON cannot carry: MessagePack `bin`, `ext` and timestamps, and strings that are
    not valid Unicode (lone UTF-16 surrogates written as `\\ud800` in JSON)."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            try:
                v.encode()
            except UnicodeEncodeError as e:
                raise MalformedBody("the body has a string that is not valid Unicode") from e
        elif isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
        elif v is not None and not isinstance(v, (bool, int, float)):
            raise MalformedBody(f"the body has a value JSON cannot carry ({type(v).__name__})")


def _has_binary_types(body: bytes) -> bool:
    # bin8/16/32 (0xc4-0xc6) and ext/fixext (0xc7-0xc9, 0xd4-0xd8): a quick test on the raw bytes
    # (these bytes can also occur inside numbers and lengths; then the decoded value is walked)
    return len(body.translate(None, b"\xc4\xc5\xc6\xc7\xc8\xc9\xd4\xd5\xd6\xd7\xd8")) != len(body)


def decode_msgpack(body: bytes) -> Any:
    """A request body in MessagePack: the same values JSON carries, with bounded memory."""
    _bounded(body, _MSGPACK_STARTS)
    try:
        value = bounded.unpackb(
            body,
            raw=False,
            strict_map_key=True,
            max_array_len=MAX_CONTAINER_ITEMS,
            max_map_len=MAX_CONTAINER_ITEMS,
        )
    except bounded.DecodedTooLarge as e:
        raise MalformedBody(f"the body is too many values for its size ({e})") from e
    except Exception as e:  # msgpack raises several unrelated types for bad input
        raise MalformedBody(f"the body is not valid MessagePack ({type(e).__name__})") from e
    if _has_binary_types(body):
        _only_json_values(value)
    return value


def decode_json(body: bytes) -> Any:
    """A request body in JSON, with bounded memory; lone surrogates refused."""
    _bounded(body, _JSON_STARTS)
    try:
        bounded.json_within(body)
    except bounded.DecodedTooLarge as e:
        raise MalformedBody(f"the body is too many values for its size ({e})") from e
    try:
        value = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as e:
        raise MalformedBody("the body is not valid JSON") from e
    except ValueError as e:
        # an integer of more than sys.get_int_max_str_digits() digits (4,300): no count, size or
        # value votum takes is that long (issue 43, item 11)
        raise MalformedBody("the body holds a number too long to read") from e
    if _LONE_SURROGATE_HINT.search(body):
        _only_json_values(value)
    return value


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


class _DecodedRequest(Request):
    """A request whose body votum decoded itself (JSON or MessagePack), presented to FastAPI as
    already-decoded JSON."""

    def __init__(self, scope: Any, receive: Any, body: bytes, decoded: Any) -> None:
        super().__init__(scope, receive)
        self._body = body
        self._decoded = decoded

    async def json(self) -> Any:
        return self._decoded


#: Marks a dependency that checks the bearer token from the headers alone (`auth.require`); a route
#: with one runs it before its body is read.
AUTH_MARK = "votum_checks_headers_only"


def _header_checks(dependant: Any) -> list[Callable[[Request], Any]]:
    found = []
    for dep in dependant.dependencies:
        if getattr(dep.call, AUTH_MARK, False):
            found.append(dep.call)
        found.extend(_header_checks(dep))
    return found


class NegotiatedRoute(APIRoute):
    """For every route of the app: checks the token before anything of the body is read, decodes the
    body itself (JSON or MessagePack, both bounded, see `decode_json`/`decode_msgpack`), and picks the
    response's media type."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()
        header_checks = _header_checks(self.dependant)
        takes_body = self.body_field is not None

        async def negotiated(request: Request) -> Response:
            token = _RESPONSE_TYPE.set(response_type(request))
            try:
                for check in header_checks:
                    check(request)
                if takes_body:
                    body = await request.body()
                    msgpack_body = is_msgpack(request.headers.get("content-type"))
                    if not body:
                        decoded = None
                    elif msgpack_body:
                        decoded = decode_msgpack(body)
                    else:
                        decoded = decode_json(body)
                    scope = dict(request.scope)
                    scope["headers"] = [
                        (k, JSON.encode() if k == b"content-type" else v) for k, v in request.scope["headers"]
                    ]
                    if not any(k == b"content-type" for k, _ in scope["headers"]):
                        scope["headers"].append((b"content-type", JSON.encode()))
                    request = _DecodedRequest(scope, request.receive, body, decoded)
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
