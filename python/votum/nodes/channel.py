"""One connection between two nodes (spec/95.2-95.5): the hello, frames of signed envelopes read from the
connection's `Wire` (whose bounded queue sits between reading and checking) and checked in order, the writer
that puts every waiting envelope in one signed frame, and requests matched to their responses."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import itertools
import logging
import os
import time
from collections.abc import Awaitable, Callable, Coroutine
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

import msgpack  # type: ignore[import-untyped]

from votum import bounded
from votum.channels import NodePeerKey, digests, make_channel_id
from votum.nodes import errors
from votum.nodes.identity import Card
from votum.nodes.wire import FrameTimeout, FrameTooLarge, PeerClosed, Wire

if TYPE_CHECKING:
    from votum.nodes.identity import Identity

log = logging.getLogger("votum.nodes")

MAX_KIND = 64
FRAME_ENVELOPES = 256
FRAME_PAYLOAD = 4 << 20
#: frames at most this long are checked on the event loop: a hop to a worker thread costs more than the check
INLINE_CHECK = 64 << 10
HELLO_MAX = 1024
#: the envelope header's version (spec/95.3); 2 since payload digests are BLAKE3
ENVELOPE_VERSION = 2
#: payloads from this size on are written as their own buffer rather than copied into the frame's
BIG_PIECE = 64 << 10


@dataclass(frozen=True)
class ChannelSettings:
    max_frame: int = 64 << 20
    #: frames, and bytes of frames, a connection reads ahead of its consumer before it stops reading (the
    #: sender then waits, through TCP): a connection's read-ahead is at most `queue_bytes` and one frame
    queue_frames: int = 64
    queue_bytes: int = 16 << 20
    #: envelopes (or bytes of payload) waiting to be written before `send` waits for the writer
    out_envelopes: int = 4096
    out_bytes: int = 16 << 20
    #: requests a connection runs at once before it stops reading
    concurrent_requests: int = 64
    hello_timeout: float = 10.0


class Message(NamedTuple):
    """A received envelope, as a handler sees it (a named tuple: one is made for every envelope)."""

    peer: Card
    kind: str
    id: int
    payload: bytes
    channel: Channel


Handler = Callable[[Message], Awaitable[bytes | None]]


class Refused(Exception):
    """Raised inside the consumer to refuse a frame with a code (spec/95.4)."""

    def __init__(self, code: str, detail: str) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail


def _pack(obj: object) -> bytes:
    packed: bytes = msgpack.packb(obj, use_bin_type=True)
    return packed


def _bin_header(n: int) -> bytes:
    """The msgpack `bin` header for n bytes (the packer has no public call for it)."""
    if n < 1 << 8:
        return b"\xc4" + n.to_bytes(1, "big")
    if n < 1 << 16:
        return b"\xc5" + n.to_bytes(2, "big")
    return b"\xc6" + n.to_bytes(4, "big")


_array_header = msgpack.Packer(use_bin_type=True).pack_array_header


async def _read_hello(wire: Wire, timeout: float) -> dict[str, Any]:
    try:
        body = await asyncio.wait_for(wire.read_frame(), timeout)
    except FrameTooLarge as e:
        raise errors.MalformedFrame(f"a hello of {e.size} bytes") from None
    try:
        hello = msgpack.unpackb(body, raw=False)
    except (ValueError, msgpack.UnpackException) as e:
        raise errors.MalformedFrame(f"a hello that is not MessagePack: {e}") from None
    if not isinstance(hello, dict) or hello.get("v") != 1:
        raise errors.MalformedFrame("a hello is {v: 1, node, nonce}")
    node, nonce = hello.get("node"), hello.get("nonce")
    if not isinstance(node, bytes) or len(node) != 32 or not isinstance(nonce, bytes) or len(nonce) != 16:
        raise errors.MalformedFrame("a hello is {v: 1, node, nonce}")
    return hello


class Channel:
    """A connection to one peer. Both ends send requests and one-way messages; each direction has its own
    sequence numbers. Use `Node` rather than this class directly."""

    _ids = itertools.count(1)

    def __init__(
        self,
        identity: Identity,
        peer: Card,
        wire: Wire,
        channel_id: bytes,
        handlers: dict[str, Handler],
        executor: Executor,
        settings: ChannelSettings,
        on_refusal: Callable[[Card, str, str], None] | None = None,
    ) -> None:
        self.identity = identity
        self.peer = peer
        self._peer_key = NodePeerKey(peer.signing_key)
        self.channel_id = channel_id
        self._writer = wire
        self._handlers = handlers
        self._executor = executor
        self.settings = settings
        self._on_refusal = on_refusal
        self._send_seq = 1
        self._recv_seq = 1
        self._out: collections.deque[tuple[str, int, int | None, bytes]] = collections.deque()
        self._out_bytes = 0
        self._out_ready = asyncio.Event()
        self._room = asyncio.Event()
        self._room.set()
        self._flushed = asyncio.Event()
        self._flushed.set()
        self._flush_scheduled = False
        #: the writer task owns writing while the transport's buffer is full or a big batch is being hashed
        self._draining = False
        self._pending: dict[int, asyncio.Future[bytes]] = {}
        #: requests being answered; at `concurrent_requests` the consumer waits for `_request_done`
        self._running = 0
        self._request_done = asyncio.Event()
        self._out_cap = settings.out_envelopes
        self._out_byte_cap = settings.out_bytes
        self._request_tasks: set[asyncio.Task[None]] = set()
        self.error: errors.NodeError | None = None
        self.closed = False
        self.last_used = time.monotonic()
        self._closed_event = asyncio.Event()
        self._tasks = [
            asyncio.create_task(self._consume_loop()),
            asyncio.create_task(self._write_loop()),
        ]

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"Channel({self.identity.name} <-> {self.peer.name}, {state})"

    # -- opening ---------------------------------------------------------------------------------------------

    @staticmethod
    async def handshake(
        identity: Identity,
        peer: Card,
        wire: Wire,
        dialled: bool,
        timeout: float,
    ) -> bytes:
        """Sends this side's hello, reads the peer's, and returns the channel id (spec/95.2)."""
        nonce = os.urandom(16)
        hello = _pack({"v": 1, "node": identity.node_id, "nonce": nonce})
        wire.write(len(hello).to_bytes(4, "big") + hello)
        await wire.drain()
        theirs = await _read_hello(wire, timeout)
        if theirs["node"] != peer.node_id:
            raise errors.WrongPeer(
                f"the hello names another node than the certificate ({peer.name})", peer.name
            )
        if dialled:
            return make_channel_id(identity.node_id, peer.node_id, nonce, theirs["nonce"])
        return make_channel_id(peer.node_id, identity.node_id, theirs["nonce"], nonce)

    # -- sending ---------------------------------------------------------------------------------------------

    @property
    def inflight(self) -> int:
        return len(self._pending)

    def _check_open(self) -> None:
        if self.error is not None:
            raise self.error
        if self.closed:
            raise errors.PeerUnavailable("the connection is closed", self.peer.name)

    def _full(self) -> bool:
        return len(self._out) >= self._out_cap or self._out_bytes >= self._out_byte_cap

    async def _enqueue(self, kind: str, msg_id: int, re: int | None, payload: bytes) -> None:
        """Queues an envelope, waiting while the queue is full."""
        while self._full() and not self.closed:
            self._room.clear()
            await self._room.wait()
        self._put(kind, msg_id, re, payload)

    def _put(self, kind: str, msg_id: int, re: int | None, payload: bytes) -> None:
        """Queues an envelope now (the caller has seen room, or it is a response that must not wait)."""
        if len(kind) > MAX_KIND // 4 and len(kind.encode()) > MAX_KIND:
            raise errors.MalformedFrame(f"a kind is at most {MAX_KIND} bytes")
        if len(payload) + 4096 > self.settings.max_frame:
            raise errors.FrameTooLarge(
                f"a payload of {len(payload)} bytes does not fit a frame of {self.settings.max_frame}: "
                "stream it"
            )
        self._check_open()
        self._out.append((kind, msg_id, re, payload))
        self._out_bytes += len(payload)
        self._flushed.clear()
        self.last_used = time.monotonic()
        if self._draining:
            self._out_ready.set()
        elif not self._flush_scheduled:
            # every envelope queued in this turn of the event loop goes in one signed frame
            self._flush_scheduled = True
            asyncio.get_running_loop().call_soon(self._flush_now)

    async def send(self, kind: str, payload: bytes) -> None:
        """A one-way message: returns once it is queued for the writer (waiting while the queue is full)."""
        self._check_open()
        if self._full():
            await self._enqueue(kind, 0, None, payload)
        else:
            self._put(kind, 0, None, payload)

    def _new_request(self) -> tuple[int, asyncio.Future[bytes]]:
        """An id and the future its response will settle."""
        self._check_open()
        msg_id = next(self._ids)
        fut: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self._pending[msg_id] = fut
        return msg_id, fut

    async def request(self, kind: str, payload: bytes, timeout: float | None = None) -> bytes:
        """Sends a request and waits for its response; a refusal raises its typed error."""
        msg_id, fut = self._new_request()
        try:
            if self._full():
                await self._enqueue(kind, msg_id, None, payload)
            else:
                self._put(kind, msg_id, None, payload)
            return await asyncio.wait_for(fut, timeout) if timeout else await fut
        finally:
            self._pending.pop(msg_id, None)
            self.last_used = time.monotonic()

    async def submit(
        self, kind: str, payload: bytes, timeout: float | None = None
    ) -> Coroutine[Any, Any, bytes]:
        """Queues a request now, in order with whatever is queued after it, and returns the awaitable of its
        response (await it, or the request is forgotten)."""
        msg_id, fut = self._new_request()
        try:
            await self._enqueue(kind, msg_id, None, payload)
        except BaseException:
            self._pending.pop(msg_id, None)
            raise

        async def response() -> bytes:
            try:
                return await asyncio.wait_for(fut, timeout) if timeout else await fut
            finally:
                self._pending.pop(msg_id, None)
                self.last_used = time.monotonic()

        return response()

    async def flush(self) -> None:
        """Waits until every queued envelope has been handed to the socket."""
        while self._out and not self.closed:
            await self._flushed.wait()
        self._check_open()

    def _take_batch(self) -> tuple[list[list[object]], list[bytes], int]:
        items: list[list[object]] = []
        payloads: list[bytes] = []
        size = 0
        while self._out and len(items) < FRAME_ENVELOPES and size < FRAME_PAYLOAD:
            kind, msg_id, re, payload = self._out.popleft()
            items.append([kind, msg_id, re])
            payloads.append(payload)
            size += len(payload)
        self._out_bytes -= size
        self._room.set()
        return items, payloads, size

    def _write_batch(self, items: list[list[object]], payloads: list[bytes], hashes: list[bytes]) -> None:
        for item, h in zip(items, hashes, strict=True):
            item.append(h)
        header = _pack(
            {
                "v": ENVELOPE_VERSION,
                "ch": self.channel_id,
                "from": self.identity.node_id,
                "to": self.peer.node_id,
                "seq": self._send_seq,
                "items": items,
            }
        )
        self._send_seq += len(items)
        self.write_frame(header, self.identity.sign_header(header), payloads)

    def _flush_now(self) -> None:
        """Writes what is queued, small batches at once; hands over to the writer task when the transport's
        buffer is full or a batch is big enough to hash on a worker."""
        self._flush_scheduled = False
        if self.closed or self._draining:
            return
        try:
            while self._out:
                if self._out_bytes > INLINE_CHECK or self._writer.write_buffer_size() > (256 << 10):
                    self._draining = True
                    self._out_ready.set()
                    return
                items, payloads, _ = self._take_batch()
                self._write_batch(items, payloads, digests(payloads))
            self._flushed.set()
        except (ConnectionError, OSError) as e:
            self._fail(errors.PeerUnavailable(f"the connection broke while writing: {e}", self.peer.name))

    async def _write_loop(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            while True:
                await self._out_ready.wait()
                self._out_ready.clear()
                await self._writer.drain()
                ahead: tuple[list[list[object]], list[bytes], asyncio.Future[list[bytes]]] | None = None
                while self._out or ahead is not None:
                    if ahead is not None:
                        items, payloads, hashing = ahead
                        ahead = None
                        hashes = await hashing
                    else:
                        items, payloads, size = self._take_batch()
                        if size > INLINE_CHECK:
                            hashes = await loop.run_in_executor(self._executor, digests, payloads)
                        else:
                            hashes = digests(payloads)
                    if self._out and self._out_bytes > INLINE_CHECK:
                        # hash the next batch on a worker while this thread encrypts this one
                        nxt, nxt_payloads, _ = self._take_batch()
                        ahead = (
                            nxt,
                            nxt_payloads,
                            loop.run_in_executor(self._executor, digests, nxt_payloads),
                        )
                    self._write_batch(items, payloads, hashes)
                    await self._writer.drain()
                self._draining = False
                self._flushed.set()
        except (ConnectionError, OSError) as e:
            self._fail(errors.PeerUnavailable(f"the connection broke while writing: {e}", self.peer.name))
        except asyncio.CancelledError:
            raise
        except Exception as e:  # a bug: never leave callers waiting
            log.exception("writer of %r failed", self)
            self._fail(errors.NodeError(f"the writer failed: {e!r}", self.peer.name))

    def write_frame(self, header: bytes, signature: bytes, payloads: list[bytes]) -> None:
        """Writes one frame (spec/95.3). Small pieces are joined (each write is a TLS record); a big
        payload is written as it is, never copied into a joined buffer."""
        head = [
            _array_header(2 + len(payloads)),
            _bin_header(len(header)),
            header,
            _bin_header(64),
            signature,
        ]
        length = sum(len(p) for p in head) + sum(len(_bin_header(len(p))) + len(p) for p in payloads)
        pieces: list[bytes] = []
        small = [length.to_bytes(4, "big"), *head]
        for p in payloads:
            small.append(_bin_header(len(p)))
            if len(p) < BIG_PIECE:
                small.append(p)
            else:
                pieces.append(b"".join(small))
                pieces.append(p)
                small = []
        if small:
            pieces.append(b"".join(small))
        for piece in pieces:
            self._writer.write(piece)

    # -- receiving -------------------------------------------------------------------------------------------

    def _parse(self, body: bytes | bytearray) -> tuple[bytes, bytes, list[bytes], dict[str, Any]]:
        try:
            frame = bounded.unpackb(body, raw=False)
            if not isinstance(frame, list) or len(frame) < 3 or not all(isinstance(x, bytes) for x in frame):
                raise ValueError("not [header, signature, payload, ...]")
            header_bin, signature, payloads = frame[0], frame[1], frame[2:]
            header = bounded.unpackb(header_bin, raw=False)
            if not isinstance(header, dict) or header.get("v") != ENVELOPE_VERSION:
                raise ValueError(f"header version {header.get('v')!r}, not {ENVELOPE_VERSION}")
            for key, typ in (("ch", bytes), ("from", bytes), ("to", bytes), ("seq", int), ("items", list)):
                if not isinstance(header.get(key), typ):
                    raise ValueError(f"header field {key}")
            items = header["items"]
            if len(items) != len(payloads):
                raise ValueError("one item per payload")
            for item in items:
                if (
                    not isinstance(item, list)
                    or len(item) != 4
                    or not isinstance(item[0], str)
                    or len(item[0].encode()) > MAX_KIND
                    or not isinstance(item[1], int)
                    or item[1] < 0
                    or not (item[2] is None or isinstance(item[2], int))
                    or not isinstance(item[3], bytes)
                ):
                    raise ValueError("an item is [kind, id, re, digest]")
        except (ValueError, TypeError, msgpack.UnpackException) as e:
            raise Refused("malformed", f"the frame does not follow spec/95.3: {e}") from None
        return header_bin, signature, payloads, header

    async def _consume_loop(self) -> None:
        loop = asyncio.get_running_loop()
        wire = self._writer
        try:
            while True:
                try:
                    body = await wire.read_frame()
                except FrameTooLarge as e:
                    raise Refused("frame-too-large", str(e)) from None
                except PeerClosed as e:  # reading ended, after every frame before it
                    if e.partial:
                        log.info("%s: closed mid-frame; %d bytes discarded", self.peer.name, e.partial)
                    self._fail(errors.PeerUnavailable("the peer closed the connection", self.peer.name))
                    return
                except (ConnectionError, OSError, FrameTimeout) as e:
                    self._fail(errors.PeerUnavailable(f"the connection broke: {e}", self.peer.name))
                    return
                header_bin, signature, payloads, header = self._parse(body)
                if header["ch"] != self.channel_id or header["to"] != self.identity.node_id:
                    raise Refused("wrong-channel", "the envelope is for another connection or another node")
                if header["from"] != self.peer.node_id:
                    raise Refused("wrong-sender", f"the envelope claims another sender than {self.peer.name}")
                hashes = [item[3] for item in header["items"]]
                args = (header_bin, signature, payloads, hashes)
                if len(body) <= INLINE_CHECK:
                    code = self._peer_key.check_frame(*args)
                else:
                    code = await loop.run_in_executor(self._executor, self._peer_key.check_frame, *args)
                if code is not None:
                    raise Refused(code, "the signature or a payload digest does not verify")
                if header["seq"] != self._recv_seq:
                    raise Refused(
                        "bad-sequence",
                        f"envelope {header['seq']} where {self._recv_seq} was due (replay or reordering)",
                    )
                self._recv_seq += len(payloads)
                for (kind, msg_id, re, _), payload in zip(header["items"], payloads, strict=True):
                    await self._dispatch(kind, msg_id, re, payload)
        except Refused as r:
            await self._refuse(r)
        except asyncio.CancelledError:
            raise
        except Exception as e:
            log.exception("consumer of %r failed", self)
            self._fail(errors.NodeError(f"the consumer failed: {e!r}", self.peer.name))

    async def _dispatch(self, kind: str, msg_id: int, re: int | None, payload: bytes) -> None:
        if re is not None and kind in ("response", "error"):
            fut = self._pending.get(re)
            if fut is None or fut.done():
                return  # a late answer to a request that timed out
            if kind == "response":
                fut.set_result(payload)
            else:
                fut.set_exception(self._error_from(payload))
            return
        if kind == "error":  # the peer refused this connection (spec/95.4): it is closing it
            self._fail(self._error_from(payload))
            return
        handler = self._handlers.get(kind)
        message = Message(self.peer, kind, msg_id, payload, self)
        if handler is not None and msg_id != 0:
            while self._running >= self.settings.concurrent_requests:
                self._request_done.clear()
                await self._request_done.wait()
            self._running += 1
            task = asyncio.create_task(self._answer(handler, message))
            self._request_tasks.add(task)
            task.add_done_callback(self._request_tasks.discard)
            return
        if msg_id == 0:  # one-way: handled in order; a slow handler holds back this connection
            if handler is None:
                log.warning("%s: no handler for one-way %r; dropped and reported", self.peer.name, kind)
                self._report(self.peer, "no-handler", kind)
                return
            try:
                await handler(message)
            except Exception as e:
                log.warning("%s: handler for %r raised %r", self.peer.name, kind, e)
            return
        await self._enqueue(
            "error", 0, msg_id, _pack({"code": "no-handler", "detail": f"no handler for {kind!r}"})
        )
        self._report(self.peer, "no-handler", kind)

    async def _answer(self, handler: Handler, message: Message) -> None:
        try:
            try:
                result = await handler(message)
            except errors.NodeError as e:
                answer = ("error", _pack({"code": e.code, "detail": e.detail}))
            except Exception as e:
                log.warning("%s: handler for %r raised %r", self.peer.name, message.kind, e)
                answer = ("error", _pack({"code": "handler-error", "detail": f"{type(e).__name__}: {e}"}))
            else:
                answer = ("response", result or b"")
            if not self.closed:
                await self._enqueue(answer[0], 0, message.id, answer[1])
        except errors.NodeError:
            pass  # the connection closed while answering
        finally:
            self._running -= 1
            self._request_done.set()

    def _error_from(self, payload: bytes) -> errors.NodeError:
        try:
            body = msgpack.unpackb(payload, raw=False)
            return errors.error_for(str(body["code"]), str(body.get("detail", "")), self.peer.name)
        except Exception:
            return errors.MalformedFrame("an unreadable error envelope", self.peer.name)

    def _report(self, peer: Card, code: str, detail: str) -> None:
        if self._on_refusal is not None:
            self._on_refusal(peer, code, detail)

    async def _refuse(self, refusal: Refused) -> None:
        """Tells the peer why (one signed error envelope), then closes (spec/95.4)."""
        log.warning("%s: refused (%s): %s", self.peer.name, refusal.code, refusal.detail)
        self._report(self.peer, refusal.code, refusal.detail)
        err = errors.error_for(refusal.code, refusal.detail, self.peer.name)
        try:
            self._out.clear()
            self._out_bytes = 0
            await self._enqueue("error", 0, None, _pack({"code": refusal.code, "detail": refusal.detail}))
            await asyncio.wait_for(self.flush(), 2.0)
        except (errors.NodeError, asyncio.TimeoutError):
            pass
        self._fail(err)

    # -- closing ---------------------------------------------------------------------------------------------

    def _fail(self, error: errors.NodeError) -> None:
        if self.closed:
            return
        self.error = error
        self.closed = True
        for fut in self._pending.values():
            if not fut.done():
                fut.set_exception(error)
        self._room.set()
        self._flushed.set()
        current = asyncio.current_task()
        for t in self._tasks:
            if t is not current:
                t.cancel()
        for t in list(self._request_tasks):
            t.cancel()
        with contextlib.suppress(Exception):
            self._writer.close()
        self._closed_event.set()

    async def close(self) -> None:
        """Closes after handing every queued envelope to the socket."""
        if not self.closed:
            with contextlib.suppress(errors.NodeError, asyncio.TimeoutError):
                await asyncio.wait_for(self.flush(), 5.0)
            self._fail(errors.PeerUnavailable("closed by this node", self.peer.name))
            self.error = None  # closed on purpose: later use raises "the connection is closed"
        await self.wait_closed()

    async def wait_closed(self) -> None:
        await self._closed_event.wait()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._writer.wait_closed(), 2.0)
