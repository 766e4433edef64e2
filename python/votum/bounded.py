"""Decoding MessagePack and JSON from others with memory bounded by the input's size (issue 43, item 17).

A decoder builds a Python object per value: one byte of MessagePack (an empty array) becomes a list of
56 bytes and its slot in the parent, and two bytes of JSON (`1,`) an integer and its slot. Bounding the
raw size alone let an authenticated sender make a service decode seven times a body's size in JSON
numbers and a split-value party 74 times a message's size in MessagePack. Here the decoded size is
estimated as it is built (`CONTAINER` bytes per array or map, `ITEM` per item in one) and the decoding
stops, `DecodedTooLarge`, once the estimate passes `factor` times the input plus `slack`. Strings and byte
strings are counted as items; their contents are at most the input's own bytes."""

from __future__ import annotations

from typing import Any

import msgpack  # type: ignore[import-untyped]

#: estimated bytes of one decoded array or map, and of one item in one (its slot and, for most values,
#: the object: an int of 28 bytes, a small bytes or str of 33 to 49)
CONTAINER = 64
ITEM = 48


class DecodedTooLarge(ValueError):
    """The decoded value would take more memory than its input's bound allows."""


def unpackb(
    payload: bytes | bytearray | memoryview, *, factor: int = 4, slack: int = 1 << 20, **options: Any
) -> Any:
    """`msgpack.unpackb(payload, **options)` with decoded memory at most about twice `factor` ×
    len(payload) + `slack` (estimated as above), else `DecodedTooLarge`: no one array or map may hold
    more items than the bound (msgpack refuses its header before building it), and the hooks count each
    container once built (so the decoding stops at most one container past the bound)."""
    budget = factor * len(payload) + slack
    options["max_array_len"] = min(options.get("max_array_len", budget), budget // ITEM)
    options["max_map_len"] = min(options.get("max_map_len", budget), budget // (2 * ITEM))
    spent = 0

    def charge(n: int) -> None:
        nonlocal spent
        spent += CONTAINER + ITEM * n
        if spent > budget:
            raise DecodedTooLarge(f"decoded, {len(payload)} bytes would take more than {budget} bytes")

    def on_list(items: list[Any]) -> list[Any]:
        charge(len(items))
        return items

    def on_map(pairs: list[tuple[Any, Any]]) -> dict[Any, Any]:
        charge(2 * len(pairs))
        return dict(pairs)

    return msgpack.unpackb(payload, list_hook=on_list, object_pairs_hook=on_map, **options)


def json_within(body: bytes, *, factor: int = 4, slack: int = 1 << 20) -> None:
    """Raises `DecodedTooLarge` unless decoding the JSON `body` fits `factor` × len(body) + `slack`.
    Counted from the raw bytes before decoding, an upper bound: every item after an array's or map's
    first follows a `,`, every container starts with `[` or `{`, and either may also occur inside
    strings (then counted when it is not there)."""
    containers = body.count(b"[") + body.count(b"{")
    items = body.count(b",") + body.count(b":") + containers
    if containers * CONTAINER + items * ITEM > factor * len(body) + slack:
        raise DecodedTooLarge(f"decoded, {len(body)} bytes of JSON would take more than its bound")
