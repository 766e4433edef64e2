"""MessagePack bodies of the requests between election parties (spec/96.2, spec/97.13)."""

from __future__ import annotations

from typing import Any

import msgpack  # type: ignore[import-untyped]

from votum import bounded
from votum.nodes import errors


def pack(obj: object) -> bytes:
    packed: bytes = msgpack.packb(obj, use_bin_type=True)
    return packed


def unpack(payload: bytes, what: str = "message") -> dict[str, Any]:
    """A map, or `MalformedFrame` naming `what`."""
    try:
        body = bounded.unpackb(payload, raw=False)
    except Exception as e:
        raise errors.MalformedFrame(f"a {what} is not MessagePack: {e}") from None
    if not isinstance(body, dict):
        raise errors.MalformedFrame(f"a {what} is a map")
    return body


def unpack_list(payload: bytes, what: str = "list") -> list[bytes]:
    """A list of byte strings, or `MalformedFrame` naming `what`."""
    try:
        items = bounded.unpackb(payload, raw=False)
    except Exception as e:
        raise errors.MalformedFrame(f"a {what} is not MessagePack: {e}") from None
    if not isinstance(items, list) or not all(isinstance(x, bytes) for x in items):
        raise errors.MalformedFrame(f"a {what} is a list of byte strings")
    return items
