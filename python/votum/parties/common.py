"""What the party programs share: who sent a message (by key); a controller's request too big for one
frame, sent as a stream (spec/95.5) and handed whole to its kind's handler; the checks and requests every
party makes (`Program`); and the controller's request to a party, with the blame it reports (`send`)."""

from __future__ import annotations

import asyncio
import dataclasses
import re
from collections.abc import Awaitable, Callable
from typing import Any

from votum.nodes import errors
from votum.nodes.channel import Message
from votum.nodes.identity import Card
from votum.nodes.messages import pack, unpack
from votum.nodes.node import Node

CONTROLLER = "controller"
#: a request from the controller larger than this goes as a stream (`<protocol>/blob`, spec/95.5)
STREAM_ABOVE = 4 << 20
#: how a party's error names another party as the one at fault
_BLAME = re.compile(r"blame=([a-z0-9-]+)")

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


class Program:
    """What every party program of a protocol (`prefix`: "chv", "mix") does alike: its requests routed by
    kind (a request too big for a frame arrives as `<prefix>/blob`), the body of a request checked for its
    sender and election, CPU work on the node's workers, and requests to other parties that blame the one
    that fails them. A subclass sets `election` and `timeout` at its setup."""

    def __init__(self, node: Node, prefix: str, routes: dict[str, Handler]) -> None:
        self.node, self.prefix = node, prefix
        node.keystore.find(CONTROLLER)  # UnknownPeer: a party trusts its controller before it starts
        self.election = ""
        self.timeout = 600.0
        self.handlers = routes
        for kind, fn in routes.items():
            node.route(kind, fn)
        node.route_stream(f"{prefix}/blob", lambda m: Relay(m, self.handlers))

    def _body(self, m: Message, sender: str = CONTROLLER) -> dict[str, Any]:
        """The body of a request from the node trusted as `sender`, for this party's election (its setup
        names the election)."""
        if not is_party(self.node, m, sender):
            raise errors.WrongSender(f"{m.peer.name} may not send {m.kind}")
        body = unpack(m.payload, m.kind)
        if m.kind != f"{self.prefix}/setup" and body.get("election") != self.election:
            raise errors.HandlerError("not the election this party takes part in")
        return body

    async def _work(self, fn: Callable[..., Any], *args: Any) -> Any:
        return await self.node.run_in_worker(fn, *args)

    async def _ask(self, to: str, kind: str, body: dict[str, Any]) -> bytes:
        """A request to another party within the phase's time; a party that does not answer in time, goes
        away or refuses is blamed by name in the error that reaches the controller."""
        try:
            return await self.node.request(to, kind, pack({"election": self.election, **body}), self.timeout)
        except asyncio.TimeoutError:
            raise errors.HandlerError(f"blame={to}: {kind} not answered within {self.timeout} s") from None
        except (errors.NodeError, OSError) as e:
            raise errors.HandlerError(f"blame={to}: {kind}: {e}") from None


async def send(node: Node, party: str, prefix: str, kind: str, payload: bytes, timeout: float) -> bytes:
    """The controller's request to `party`, as a stream when it is larger than a frame should carry; waits
    twice the parties' own limit on what they ask each other, so theirs fires first and names the party that
    held them up. Raises `Blamed` naming the party at fault."""
    try:
        if len(payload) > STREAM_ABOVE:
            return await node.stream(party, f"{prefix}/blob", [blob_head(kind), payload], 2 * timeout)
        return await node.request(party, kind, payload, 2 * timeout)
    except (errors.NodeError, asyncio.TimeoutError, OSError) as e:
        blamed = _BLAME.search(str(e))
        raise Blamed(f"{kind}: {type(e).__name__}: {e}", blamed[1] if blamed else party) from e


class Blamed(Exception):
    """A request the controller made failed: `detail`, and the party at fault (the one asked, or the one
    its error names)."""

    def __init__(self, detail: str, party: str) -> None:
        super().__init__(detail)
        self.detail, self.party = detail, party


# -- what the guardian services of a key ceremony share (spec/96, spec/65.9) ---------------------------------


def take_roster(node: Node, entries: list[dict[str, Any]], me: str) -> dict[str, Card]:
    """The cards of a roster's guardians (`guardian_id`, `node_id`, `address`), this node's own at id `me`.
    Every other node must be trusted already (UnknownPeer otherwise: a roster adds no trust); only its
    address may be updated from the roster."""
    roster: dict[str, Card] = {}
    for entry in entries:
        gid, node_id = str(entry["guardian_id"]), bytes(entry["node_id"])
        if gid == me:
            if node_id != node.identity.node_id:
                raise errors.WrongPeer(f"the roster gives {gid} to another node")
            roster[gid] = node.identity.card
            continue
        known = node.keystore.find(node_id)
        address = entry.get("address")
        if address and address != known.address:
            known = node.trust(dataclasses.replace(known, address=str(address)), known.fingerprint)
        roster[gid] = known
    return roster


def roster_sender(m: Message, roster: dict[str, Card], me: str, claimed: object, what: str) -> str:
    """The roster guardian id `claimed` by the sender of `m`, if the channel's peer is that guardian."""
    sender = str(claimed)
    card = roster.get(sender)
    if card is None or card.node_id != m.peer.node_id or sender == me:
        raise errors.WrongSender(f"{m.peer.name} is not guardian {sender!r} of this {what}")
    return sender


async def wait_for_records(ready: asyncio.Event, timeout: float) -> None:
    try:
        await asyncio.wait_for(ready.wait(), timeout)
    except asyncio.TimeoutError:
        raise errors.HandlerError("the records never came from the coordinator") from None


async def agree_with_everyone(
    node: Node, roster: dict[str, Card], me: str, kind: str, body: dict[str, Any], timeout: float
) -> None:
    """Asks every other roster guardian, over its own channel (`kind`), for the digest of what it was shown,
    and raises unless each equals `body["digest"]`, this guardian's own."""
    others = [g for g in roster if g != me]
    payload = pack({**body, "sender": me})

    async def ask(gid: str) -> bytes:
        answer = unpack(await node.request(roster[gid], kind, payload, timeout), kind)
        return bytes(answer["digest"])

    theirs = await asyncio.gather(*(ask(g) for g in others))
    differ = [g for g, d in zip(others, theirs, strict=True) if d != body["digest"]]
    if differ:
        raise errors.HandlerError(
            f"the record set shown to {me} differs from the one shown to {', '.join(differ)}: "
            "nothing was dealt"
        )
