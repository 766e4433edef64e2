"""`data_dir/tokens.json` (spec/80.8): the service's tokens, each kept as the SHA-256 of the token with its
role, never the token itself. `votum tokens new` makes a token, prints it once and stores its hash; `votum
serve` reads the file. A file of the earlier form (`{token: role}`, tokens in the clear, which `votum
ceremony`'s file board still writes for its own in-process parties) is read as it always was."""

from __future__ import annotations

import json
import os
import secrets
import time
from pathlib import Path
from typing import Any

from votum.errors import InvalidInput
from votum.service.settings import Settings, check_role
from votum.service.tokens import token_hash

FORMAT = "votum-tokens v1"


def _load(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise InvalidInput(f"{path}: not a tokens file ({type(e).__name__})") from None


def _split(path: Path, doc: Any) -> tuple[dict[str, str], dict[str, str]]:
    if isinstance(doc, dict) and doc.get("format") == FORMAT:
        return {}, {str(t["sha256"]): str(t["role"]) for t in doc.get("tokens", [])}
    if isinstance(doc, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in doc.items()):
        return dict(doc), {}
    raise InvalidInput(f"{path}: not a tokens file (neither {FORMAT!r} nor token -> role)")


def read(path: Path) -> tuple[dict[str, str], dict[str, str]]:
    """The file's tokens in the clear (token -> role; the earlier form) and its hashes (hash -> role)."""
    return _split(path, _load(path))


def _entries(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    doc = _load(path)
    plain, _ = _split(path, doc)
    if plain:
        raise InvalidInput(
            f"{path} holds tokens in the clear (an earlier form, or a ceremony's file board): "
            "make new tokens in another data directory"
        )
    return list(doc.get("tokens", []))


def _write(path: Path, entries: list[dict[str, Any]]) -> None:
    """Writes the file whole (mode 0600) under a temporary name, then renames it in."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump({"format": FORMAT, "tokens": entries}, f, indent=1)
    os.replace(tmp, path)


def new(path: Path, role: str) -> str:
    """A new token for `role`: its hash is added to the file, and the token is returned (to be shown once)."""
    try:
        check_role(role)
    except ValueError as e:
        raise InvalidInput(str(e)) from None
    entries = _entries(path)
    token = secrets.token_urlsafe(32)
    entries.append(
        {
            "role": role,
            "sha256": token_hash(token),
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
    )
    _write(path, entries)
    return token


def listed(path: Path) -> list[dict[str, Any]]:
    """The file's entries: role, the hash's first 12 digits, and when it was made."""
    return [
        {"role": e["role"], "id": str(e["sha256"])[:12], "created": e.get("created", "")}
        for e in _entries(path)
    ]


def revoke(path: Path, what: str) -> int:
    """Removes every entry whose role is `what`, or whose hash starts with `what` (at least 8 digits);
    returns how many went."""
    entries = _entries(path)
    keep = [
        e
        for e in entries
        if not (e["role"] == what or (len(what) >= 8 and str(e["sha256"]).startswith(what)))
    ]
    if len(keep) != len(entries):
        _write(path, keep)
    return len(entries) - len(keep)


def ensure_tokens(settings: Settings) -> tuple[Settings, Path | None, str | None]:
    """Settings with their tokens: those configured, else `data_dir/tokens.json` (spec/80.8); when there is
    neither, an admin token is made, its hash stored there (mode 0600), and the token returned to be shown
    once. Returns the settings, the file when used, and the new token if one was made."""
    if settings.tokens or settings.token_hashes:
        return settings, None, None
    path = settings.data_dir / "tokens.json"
    made = None
    if not path.exists():
        made = new(path, "admin")
    plain, hashed = read(path)
    checked = Settings(tokens=plain, token_hashes=hashed)
    return (
        settings.model_copy(update={"tokens": checked.tokens, "token_hashes": checked.token_hashes}),
        path,
        made,
    )
