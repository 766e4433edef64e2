"""The token book: bearer tokens with roles, compared in constant time (HMAC-SHA256 digests of every
configured token against the presented one, all compared), and never logged. Below `auth` (the roles'
rules) and `state` (the app's typed state), which both use it."""

from __future__ import annotations

import hashlib
import hmac
import secrets


class TokenBook:
    def __init__(self, tokens: dict[str, str]) -> None:
        self._key = secrets.token_bytes(32)
        self._entries = [(self._digest(t), role) for t, role in tokens.items()]

    def _digest(self, token: str) -> bytes:
        return hmac.new(self._key, token.encode(), hashlib.sha256).digest()

    def role_of(self, token: str) -> str | None:
        presented = self._digest(token)
        found = None
        for digest, role in self._entries:  # no early exit: the time does not depend on which matched
            if hmac.compare_digest(digest, presented):
                found = role
        return found

    def __repr__(self) -> str:
        return f"TokenBook(<{len(self._entries)} tokens>)"


def bearer_token(authorization: str) -> str | None:
    """The token of an `Authorization: Bearer <token>` header, or None."""
    scheme, _, token = authorization.partition(" ")
    token = token.strip()
    return token if scheme.lower() == "bearer" and token else None
