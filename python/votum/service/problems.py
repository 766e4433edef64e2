"""One mapping from votum's exception hierarchy to HTTP: every error body is a problem document
`{"type": ..., "status": ..., "title": ..., "detail": ...}` (RFC 9457's fields; `type` is a short
machine-readable name, listed in `TYPES`), in JSON or MessagePack as the request asked."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response

from votum.errors import (
    Conflict,
    DecryptionFailed,
    DuplicateBallot,
    InvalidInput,
    InvalidProof,
    NotFound,
    RecordFormatError,
    UnsupportedVersion,
    VerificationFailed,
    VotumError,
    WrongPhase,
)
from votum.service.codec import MalformedBody, encode, response_type

log = logging.getLogger("votum.service")


class ApiError(Exception):
    """An error the service raises itself (authentication, disabled endpoints, limits)."""

    def __init__(self, status: int, type_: str, detail: str, headers: dict[str, str] | None = None):
        super().__init__(detail)
        self.status = status
        self.type = type_
        self.detail = detail
        self.headers = headers


#: problem type -> (HTTP status, title). Subclasses come before their bases in `_VOTUM`.
TYPES: dict[str, tuple[int, str]] = {
    "malformed_body": (400, "The body is not valid JSON or MessagePack"),
    "unauthorized": (401, "A valid bearer token is required"),
    "forbidden": (403, "This token's role may not do this"),
    "disabled": (403, "This endpoint is turned off on this server"),
    "not_found": (404, "No such resource"),
    "method_not_allowed": (405, "This resource does not take this method (see the Allow header)"),
    "duplicate_ballot": (409, "A different ballot with this id is already recorded"),
    "conflict": (409, "This contradicts what is already recorded"),
    "wrong_phase": (409, "The election is not in the phase this needs"),
    "wrong_spec": (409, "The election runs another ElectionGuard version than this route's"),
    "body_timeout": (408, "The request body did not arrive in time"),
    "body_too_large": (413, "The request body is larger than this server accepts"),
    "unsupported_media_type": (415, "Send application/json or application/msgpack"),
    "validation_error": (422, "The request does not match the endpoint's schema"),
    "invalid_input": (422, "A value is malformed or out of range"),
    "invalid_proof": (422, "A zero-knowledge proof does not verify"),
    "verification_failed": (422, "Evidence does not match what was published"),
    "decryption_failed": (422, "The decryption could not be completed"),
    "unsupported_version": (422, "A document declares a format version this server does not read"),
    "record_format": (422, "A document does not follow its format"),
    "internal": (500, "Internal error"),
    "busy": (503, "The server is serving as many of these as it allows; retry after the Retry-After seconds"),
}

_VOTUM: list[tuple[type[VotumError], str]] = [
    (DuplicateBallot, "duplicate_ballot"),
    (UnsupportedVersion, "unsupported_version"),
    (RecordFormatError, "record_format"),
    (InvalidInput, "invalid_input"),
    (InvalidProof, "invalid_proof"),
    (VerificationFailed, "verification_failed"),
    (DecryptionFailed, "decryption_failed"),
    (NotFound, "not_found"),
    (WrongPhase, "wrong_phase"),
    (Conflict, "conflict"),
]


def problem_type(error: VotumError) -> str:
    for cls, name in _VOTUM:
        if isinstance(error, cls):
            return name
    return "invalid_input"


def problem(
    request: Request,
    type_: str,
    detail: str,
    extra: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
) -> Response:
    status, title = TYPES[type_]
    body: dict[str, Any] = {"type": type_, "status": status, "title": title, "detail": detail}
    if extra:
        body.update(extra)
    media = response_type(request)
    return Response(encode(body, media), status_code=status, media_type=media, headers=headers)


def _jsonable_errors(errors: Any) -> list[dict[str, Any]]:
    out = []
    for e in errors:
        out.append(
            {
                "loc": [str(x) for x in e.get("loc", ())],
                "msg": str(e.get("msg", "")),
                "type": str(e.get("type", "")),
            }
        )
    return out


def install(app: FastAPI) -> None:
    """Registers the handlers: every error the service can raise becomes a problem document."""

    @app.exception_handler(ApiError)
    async def _api(request: Request, e: ApiError) -> Response:
        return problem(request, e.type, e.detail, headers=e.headers)

    @app.exception_handler(VotumError)
    async def _votum(request: Request, e: VotumError) -> Response:
        return problem(request, problem_type(e), str(e))

    @app.exception_handler(MalformedBody)
    async def _malformed(request: Request, e: MalformedBody) -> Response:
        return problem(request, "malformed_body", str(e))

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, e: RequestValidationError) -> Response:
        errors = _jsonable_errors(e.errors())
        if any(x["type"] == "json_invalid" for x in errors):
            return problem(request, "malformed_body", "the body is not valid JSON")
        first = errors[0] if errors else {"loc": [], "msg": "invalid request"}
        detail = f"{'.'.join(first['loc'])}: {first['msg']}"
        return problem(request, "validation_error", detail, {"errors": errors})

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, e: StarletteHTTPException) -> Response:
        by_status = {
            404: "not_found",
            405: "method_not_allowed",
            408: "body_timeout",
            413: "body_too_large",
            415: "unsupported_media_type",
        }
        kind = by_status.get(e.status_code)
        if kind is None:
            kind = "malformed_body" if e.status_code == 400 else "invalid_input"
        return problem(request, kind, str(e.detail), headers=getattr(e, "headers", None))

    @app.exception_handler(Exception)
    async def _internal(request: Request, e: Exception) -> Response:
        # never echo internals (they may hold request data); the log has the traceback
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        return problem(request, "internal", "internal error; the server log has the details")
