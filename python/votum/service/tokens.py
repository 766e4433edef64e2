"""The token book: bearer tokens with roles, compared in constant time (every configured entry against
the presented token, all compared), and never logged. A token is configured in the clear (`VOTUM_TOKENS`,
the settings) or as its SHA-256 (`votum tokens new`, `data_dir/tokens.json`, spec/80.8): the book then
holds no token at all. Below `auth` (the roles' rules) and `state` (the app's typed state)."""

from __future__ import annotations

import hashlib
import hmac
import secrets


def token_hash(token: str) -> str:
    """How a token is stored (spec/80.8): the hex SHA-256 of its UTF-8 text. A token is 32 random bytes
    (`secrets.token_urlsafe(32)`), so the hash needs no salt or stretching."""
    return hashlib.sha256(token.encode()).hexdigest()


class TokenBook:
    def __init__(self, tokens: dict[str, str], hashed: dict[str, str] | None = None) -> None:
        """`tokens`: token -> role; `hashed`: SHA-256 hex of a token -> role."""
        self._key = secrets.token_bytes(32)
        # (is the entry a hash, digest, role): a token in the clear is kept only as an HMAC under a key of
        # this process, so neither kind of entry holds a token
        self._entries = [(False, self._digest(t), role) for t, role in tokens.items()]
        self._entries += [(True, bytes.fromhex(h), role) for h, role in (hashed or {}).items()]

    def _digest(self, token: str) -> bytes:
        return hmac.new(self._key, token.encode(), hashlib.sha256).digest()

    def role_of(self, token: str) -> str | None:
        presented = self._digest(token)
        stored = hashlib.sha256(token.encode()).digest()
        found = None
        for is_hash, digest, role in self._entries:  # no early exit: the time does not say which matched
            if hmac.compare_digest(digest, stored if is_hash else presented):
                found = role
        return found

    def __repr__(self) -> str:
        return f"TokenBook(<{len(self._entries)} tokens>)"


def bearer_token(authorization: str) -> str | None:
    """The token of an `Authorization: Bearer <token>` header, or None."""
    scheme, _, token = authorization.partition(" ")
    token = token.strip()
    return token if scheme.lower() == "bearer" and token else None
