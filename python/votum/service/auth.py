"""Bearer tokens with roles. Tokens are compared in constant time (HMAC-SHA256 digests of every
configured token against the presented one, all compared), and never logged."""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from fastapi import Request

from votum.service.codec import AUTH_MARK
from votum.service.problems import ApiError
from votum.service.settings import ROLE_PREFIX_DEVICE, ROLE_PREFIX_GUARDIAN
from votum.service.state import service_state
from votum.service.tokens import TokenBook, bearer_token

__all__ = [
    "TokenBook",
    "bearer_role",
    "bearer_token",
    "device_name_of",
    "guardian_of",
    "owner_of",
    "require",
    "token_owner",
]


def bearer_role(request: Request) -> str:
    token = bearer_token(request.headers.get("authorization", ""))
    if token is None:
        raise ApiError(401, "unauthorized", "missing bearer token", {"WWW-Authenticate": "Bearer"})
    book = service_state(request).tokens
    role = book.role_of(token)
    if role is None:
        raise ApiError(401, "unauthorized", "unknown bearer token", {"WWW-Authenticate": "Bearer"})
    return role


def owner_of(token: str) -> str:
    """Who a bearer token is, as stored beside what it owns (a device's chain of ballot codes): a
    domain-separated SHA-256 of the token, so the database never holds a token (spec/80.5)."""
    return hashlib.sha256(b"votum/v1/token-owner\x00" + token.encode()).hexdigest()[:32]


def token_owner(request: Request) -> str:
    """`owner_of` the request's bearer token (the route has checked it: `require`)."""
    return owner_of(bearer_token(request.headers.get("authorization", "")) or "")


def require(*roles: str) -> Callable[[Request], str]:
    """A dependency: the request's token must have one of `roles` (`guardian:*` allows any guardian,
    `device` any device token, named or not)."""

    def check(request: Request) -> str:
        role = bearer_role(request)
        for wanted in roles:
            if (
                role == wanted
                or (wanted == "guardian:*" and role.startswith(ROLE_PREFIX_GUARDIAN))
                or (wanted == "device" and role.startswith(ROLE_PREFIX_DEVICE))
            ):
                return role
        raise ApiError(403, "forbidden", f"this needs the role {' or '.join(roles)}")

    # it reads headers only, so NegotiatedRoute runs it before the body is read
    setattr(check, AUTH_MARK, True)
    return check


def device_name_of(role: str) -> str | None:
    """The name of a named device token's role (`device:<name>`), else None."""
    return role[len(ROLE_PREFIX_DEVICE) :] if role.startswith(ROLE_PREFIX_DEVICE) else None


def guardian_of(role: str) -> str | None:
    return role[len(ROLE_PREFIX_GUARDIAN) :] if role.startswith(ROLE_PREFIX_GUARDIAN) else None
