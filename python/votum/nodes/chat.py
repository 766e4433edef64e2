"""`votum node chat`: a messenger between officials and trustees over the channels (spec/95.8).

What the terminal shows is in `Chat`; the terminal itself (a line editor that keeps incoming messages above
the line being typed) is the CLI's. `Chat`:

- takes commands (`/help`, `/peers`, `/to`, `/send`, `/broadcast`, `/history`, `/queue`, `/quit`); a
  line starting with `/` is never sent as a message, and `//text` sends `/text`;
- sends each message in the background, so typing never waits for a peer, and reports its delivery:
  delivered (the peer acknowledged it), queued (the peer is offline), or failed (the peer refused it);
- keeps each peer's messages in order. A queued message is tried again, with growing pauses (1 s to 30 s),
  before any later message to that peer, and also when the peer sends something;
- keeps the history (every message in and out, and each delivery) on disk. Each record is sealed to the node's
  own key (spec/95.6, purpose `chat-history`), so the file is unreadable without the node key. Messages still
  queued when the chat stops are queued again when it restarts.

Messages are the channels' `chat` requests. A text payload is what `votum node send` and `listen` exchange.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import struct
import time
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgpack  # type: ignore[import-untyped]

from votum.nodes import errors
from votum.nodes.channel import Message
from votum.nodes.identity import Identity
from votum.nodes.node import Node

PURPOSE = "chat-history"
HISTORY_FILE = "chat-history.sealed"
#: seconds a delivery may take before the peer is taken as offline and the message queued
DELIVERY_TIMEOUT = 10.0
#: pauses between tries of a queued message: doubling from the first to the last
RETRY_FIRST, RETRY_LAST = 1.0, 30.0
#: the largest message a peer may send (its text is shown whole)
MAX_TEXT = 64 << 10

HELP = """commands (a line that starts with / is never sent):
  /to NAME            send the next lines to NAME
  /send NAME TEXT     send TEXT to NAME
  /broadcast TEXT     send TEXT to every trusted peer
  /peers              the trusted peers
  /history [N]        the last N messages (20)
  /queue              messages waiting for an offline peer
  /help               this list
  /quit               leave (queued messages are kept and sent next time)
  //TEXT              send a line that starts with /"""


def printable(text: str) -> str:
    """`text` with control and format characters (newlines, terminal escapes, bidirectional overrides) shown
    escaped, as `\\n`, `\\x1b`, `\\u202e`: a peer's text can neither drive the terminal nor forge a line that
    seems to come from another peer (issue 43, item 14)."""
    return "".join(ch if unicodedata.category(ch) not in ("Cc", "Cf") else ascii(ch)[1:-1] for ch in text)


class HistoryFile:
    """The chat's history, one sealed record after another (a 4-byte length, then the box), appended and
    flushed as it happens; mode 0600."""

    def __init__(self, identity: Identity, path: Path | None = None) -> None:
        self.identity = identity
        self.path = path or identity.home / HISTORY_FILE

    def append(self, record: dict[str, Any]) -> None:
        box = self.identity.seal_for(self.identity.card, PURPOSE, msgpack.packb(record, use_bin_type=True))
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        with os.fdopen(fd, "ab") as f:
            f.write(struct.pack(">I", len(box)) + box)
            f.flush()
            os.fsync(f.fileno())

    def read(self) -> list[dict[str, Any]]:
        """Every record; a torn last record (the chat stopped while writing it) is left out."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return []
        out, at = [], 0
        while at + 4 <= len(data):
            (n,) = struct.unpack_from(">I", data, at)
            if at + 4 + n > len(data):
                break
            plain = self.identity.open_sealed(self.identity.card, PURPOSE, data[at + 4 : at + 4 + n])
            out.append(dict(msgpack.unpackb(plain, raw=False)))
            at += 4 + n
        return out


@dataclass
class Outgoing:
    id: str
    peer: str
    text: str
    at: float
    #: sending, delivered, queued, failed
    status: str = "sending"
    tries: int = 0


@dataclass
class _PeerLine:
    """One peer's messages in order, and the task that delivers them."""

    waiting: list[Outgoing] = field(default_factory=list)
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None


class Chat:
    """The chat of one node: `show` prints a line to the person (the CLI keeps it above the input line)."""

    def __init__(
        self,
        node: Node,
        show: Callable[[str], None],
        history: HistoryFile | None = None,
        delivery_timeout: float = DELIVERY_TIMEOUT,
        retry: tuple[float, float] = (RETRY_FIRST, RETRY_LAST),
    ) -> None:
        self.node = node
        self.show = show
        self.history = history or HistoryFile(node.identity)
        self.delivery_timeout = delivery_timeout
        self.retry = retry
        self.current: str | None = None
        self.sent: dict[str, Outgoing] = {}
        self._lines: dict[str, _PeerLine] = {}
        self._ids = itertools.count(1)
        self._session = os.urandom(4).hex()

    # -- start and stop -------------------------------------------------------------------------------

    def start(self) -> None:
        """Routes incoming messages here and queues again what an earlier session left undelivered."""
        self.node.route("chat", self._incoming)
        for o in self.undelivered():
            self._queue(o)
        if self.sent:
            self.show(f"{len(self.sent)} message(s) from an earlier session are queued again")

    async def close(self) -> None:
        for line in self._lines.values():
            if line.task is not None:
                line.task.cancel()
        for line in self._lines.values():
            if line.task is not None:
                with contextlib.suppress(asyncio.CancelledError):
                    await line.task

    def undelivered(self) -> list[Outgoing]:
        """Messages out whose last recorded status is neither delivered nor failed, in the order sent."""
        out: dict[str, Outgoing] = {}
        for r in self.history.read():
            if r.get("dir") == "out":
                out[r["id"]] = Outgoing(r["id"], r["peer"], r["text"], r["at"])
            elif r.get("dir") == "status" and r["id"] in out:
                out[r["id"]].status = r["status"]
        return [o for o in out.values() if o.status not in ("delivered", "failed")]

    # -- incoming ---------------------------------------------------------------------------------------

    async def _incoming(self, m: Message) -> bytes:
        text = m.payload[:MAX_TEXT].decode("utf-8", "replace")
        self.history.append({"dir": "in", "peer": m.peer.name, "text": text, "at": time.time()})
        stamp = time.strftime("%H:%M:%S")
        self.show(f"{stamp} {printable(m.peer.name)}: {printable(text)}")
        line = self._lines.get(m.peer.name)
        if line is not None and line.waiting:
            line.wake.set()  # the peer is back: try its queue now
        return b"ok"

    # -- commands ---------------------------------------------------------------------------------------

    def command(self, raw: str) -> bool:
        """Handles one typed line; returns False for /quit. Never waits for a peer."""
        line = raw.strip()
        if not line:
            return True
        if line.startswith("//"):
            self._to_current(line[1:])
            return True
        if not line.startswith("/"):
            self._to_current(line)
            return True
        name, _, rest = line[1:].partition(" ")
        rest = rest.strip()
        if name == "quit":
            return False
        if name == "help":
            self.show(HELP)
        elif name == "peers":
            for c in self.node.keystore.cards():
                self.show(f"  {c.name}  {c.fingerprint}  {c.address or '(no address)'}")
        elif name == "to":
            self._choose(rest)
        elif name == "send":
            peer, _, text = rest.partition(" ")
            if self._choose(peer) and text.strip():
                self.send(peer, text.strip())
        elif name == "broadcast":
            if rest:
                for c in self.node.keystore.cards():
                    self.send(c.name, rest)
        elif name == "history":
            self._show_history(int(rest) if rest.isdigit() else 20)
        elif name == "queue":
            waiting = [o for line in self._lines.values() for o in line.waiting]
            for o in waiting:
                self.show(f"  to {o.peer} ({o.tries} tries): {printable(o.text)}")
            if not waiting:
                self.show("  nothing is queued")
        else:
            self.show(f"unknown command /{name}: nothing was sent (/help lists the commands)")
        return True

    def _choose(self, peer: str) -> bool:
        if not peer:
            self.show(f"talking to {self.current or 'nobody'}; /to NAME chooses")
            return False
        try:
            self.node.keystore.find(peer)
        except errors.NodeError as e:
            self.show(f"{e}: /peers lists the trusted peers")
            return False
        self.current = peer
        self.show(f"talking to {peer}")
        return True

    def _to_current(self, text: str) -> None:
        if self.current is None:
            self.show("no peer chosen: /to NAME first (or /send NAME TEXT)")
            return
        self.send(self.current, text)

    def _show_history(self, n: int) -> None:
        for r in [r for r in self.history.read() if r.get("dir") in ("in", "out")][-n:]:
            stamp = time.strftime("%Y-%m-%d %H:%M", time.localtime(r["at"]))
            arrow = "→" if r["dir"] == "out" else "←"
            self.show(f"  {stamp} {arrow} {printable(r['peer'])}: {printable(r['text'])}")

    # -- sending ----------------------------------------------------------------------------------------

    def send(self, peer: str, text: str) -> Outgoing:
        """Records the message and hands it to the peer's line; returns at once."""
        o = Outgoing(f"{self._session}-{next(self._ids)}", peer, text, time.time())
        self.history.append({"dir": "out", "id": o.id, "peer": peer, "text": text, "at": o.at})
        self._queue(o)
        return o

    def _queue(self, o: Outgoing) -> None:
        self.sent[o.id] = o
        line = self._lines.setdefault(o.peer, _PeerLine())
        line.waiting.append(o)
        line.wake.set()
        if line.task is None or line.task.done():
            line.task = asyncio.get_running_loop().create_task(self._deliver(o.peer, line))

    def _status(self, o: Outgoing, status: str, note: str = "") -> None:
        o.status = status
        self.history.append({"dir": "status", "id": o.id, "status": status, "at": time.time()})
        self.show(f"  [{status}] to {printable(o.peer)}: {printable(o.text[:40])}{note}")

    async def _deliver(self, peer: str, line: _PeerLine) -> None:
        """Delivers the peer's messages in order; an offline peer's head waits, with growing pauses."""
        pause = self.retry[0]
        while line.waiting:
            o = line.waiting[0]
            o.tries += 1
            try:
                await self.node.request(peer, "chat", o.text.encode(), timeout=self.delivery_timeout)
            except (errors.PeerUnavailable, asyncio.TimeoutError, OSError):
                if o.status != "queued":
                    self._status(o, "queued", f" ({peer} is offline; tried again until it answers)")
                line.wake.clear()
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(line.wake.wait(), pause)
                pause = min(pause * 2, self.retry[1])
                continue
            except errors.NodeError as e:
                line.waiting.pop(0)
                self._status(o, "failed", f" ({e})")
                continue
            line.waiting.pop(0)
            pause = self.retry[0]
            self._status(o, "delivered")
