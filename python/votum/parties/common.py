"""What the party programs share: who sent a message (by key), and a controller's request too big for one
frame, sent as a stream (spec/95.5) and handed whole to its kind's handler."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from votum.nodes import errors
from votum.nodes.channel import Message
from votum.nodes.node import Node

Handler = Callable[[Message], Awaitable[bytes]]


def is_party(node: Node, m: Message, name: str) -> bool:
    """Whether `m` comes from the node this one trusts as `name` (by key, not by the name a card gives)."""
    try:
        return m.peer.node_id == node.keystore.find(name).node_id
    except errors.UnknownPeer:
        return False


def blob_head(kind: str) -> bytes:
    """The first bytes of a blob stream: the request's kind, a length byte then the name."""
    return bytes([len(kind)]) + kind.encode("ascii")


class Relay:
    """One blob stream (`chv/blob`, `mix/blob`): a controller's request too big for one frame, its kind
    (`blob_head`) and then its body. Handed whole to that kind's handler, whose answer answers the stream."""

    def __init__(self, m: Message, handlers: dict[str, Handler]) -> None:
        self.m, self.handlers, self.data = m, handlers, bytearray()

    async def write(self, data: bytes | memoryview) -> None:
        self.data += data

    async def finish(self) -> bytes:
        n = self.data[0] if self.data else 0
        kind = bytes(self.data[1 : 1 + n]).decode("ascii", errors="replace")
        handler = self.handlers.get(kind)
        if handler is None:
            raise errors.MalformedFrame(f"a {self.m.kind} of kind {kind!r}")
        body, self.data = bytes(self.data[1 + n :]), bytearray()
        return await handler(Message(self.m.peer, kind, self.m.id, body, self.m.channel))

    async def abort(self) -> None:
        self.data = bytearray()
