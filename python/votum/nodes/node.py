"""A node: the server side (bounded accept handling, one channel per connection), the client side (a pool of
connections per peer with idle timeout, validation and reconnect with back-off), requests, one-way messages,
parallel broadcast and sealed boxes (spec/95)."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import errno
import logging
import os
import resource
import socket
import ssl
import time
from collections.abc import AsyncIterable, Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from votum.nodes import errors
from votum.nodes.channel import HELLO_MAX, Channel, ChannelSettings, Handler, Message
from votum.nodes.identity import Card, Identity, signing_key_of_certificate
from votum.nodes.keystore import Keystore
from votum.nodes.streams import PREFIX, SinkFactory, send_stream, stream_handler
from votum.nodes.wire import PeerClosed, Wire

log = logging.getLogger("votum.nodes")

BACKLOG = 1024


@dataclass(frozen=True)
class NodeSettings:
    channel: ChannelSettings = field(default_factory=ChannelSettings)
    max_channels: int = 2
    idle_timeout: float = 60.0
    validate_after: float = 5.0
    connect_timeout: float = 10.0
    #: connections being set up at once (TLS handshakes are CPU work); more wait in the backlog
    max_handshakes: int = 64
    #: seconds a new connection has to complete its TLS handshake: until then nothing is known of who
    #: sent it, so an outsider's silent connection is held this long at most (issue 43, item 6)
    handshake_timeout: float = 5.0
    #: connections still in their TLS handshake at once, in total and from one address; more are closed
    #: as they are accepted, so an outsider's silent connections cannot take the node's descriptors
    max_pending: int = 128
    max_pending_per_address: int = 32
    #: connections one trusted peer may hold at once (its pool uses `max_channels`; streams and
    #: reconnects a few more); more are refused after TLS, before the hello (issue 43, item 8)
    max_peer_connections: int = 16
    workers: int = max(2, os.cpu_count() or 2)


@dataclass(frozen=True)
class Refusal:
    peer: str
    code: str
    detail: str


@dataclass(frozen=True)
class PeerResult:
    """One peer's outcome of a broadcast: its response, or the typed error."""

    peer: str
    response: bytes | None
    error: errors.NodeError | None
    seconds: float

    @property
    def ok(self) -> bool:
        return self.error is None


#: what `Node.dial` passes as the server name: a key into the client context's sessions, never sent (no SNI)
_SESSION_KEY = "votum-peer:"


class _ResumingContext(ssl.SSLContext):
    """The client context: offers the last TLS session ticket each peer gave this node, so a new connection to
    a peer it has talked to skips the certificates' signatures and checks (spec/95.2). The server name asyncio
    passes in is this node's key for the peer; OpenSSL gets none, so no name is sent in the clear."""

    sessions: dict[str, ssl.SSLSession]

    def wrap_bio(  # type: ignore[override]
        self,
        incoming: ssl.MemoryBIO,
        outgoing: ssl.MemoryBIO,
        server_side: bool = False,
        server_hostname: str | None = None,
        session: ssl.SSLSession | None = None,
    ) -> ssl.SSLObject:
        if server_hostname is not None and server_hostname.startswith(_SESSION_KEY):
            session = session or self.sessions.get(server_hostname)
            server_hostname = None
        return super().wrap_bio(incoming, outgoing, server_side, server_hostname, session)


async def _ping(message: Message) -> bytes:
    return b""


class _Pool:
    """The connections to one peer."""

    def __init__(self, node: Node, peer: Card) -> None:
        self.node = node
        self.peer = peer
        self.channels: list[Channel] = []
        self._dialling = asyncio.Lock()

    def ready(self) -> Channel | None:
        """A pooled connection that can take a request now without validation or dialling, if there is one
        (the common case, checked without a coroutine)."""
        best: Channel | None = None
        for c in self.channels:
            if c.closed:
                return None  # checkout clears it out
            if best is None or len(c._pending) < len(best._pending):
                best = c
        if best is None:
            return None
        if best._pending:
            return best if len(self.channels) >= self.node.settings.max_channels else None
        return best if time.monotonic() - best.last_used <= self.node.settings.validate_after else None

    async def checkout(self) -> Channel:
        settings = self.node.settings
        now = time.monotonic()
        self.channels = [c for c in self.channels if not c.closed]
        best = min(self.channels, key=lambda c: c.inflight, default=None)
        if best is not None and best.inflight == 0 and now - best.last_used > settings.validate_after:
            try:
                await best.request("ping", b"", timeout=2.0)
            except (errors.NodeError, asyncio.TimeoutError):
                log.info("%s: a pooled connection failed validation; dialling again", self.peer.name)
                await best.close()
                self.channels.remove(best)
                best = None
        if best is not None and (best.inflight == 0 or len(self.channels) >= settings.max_channels):
            return best
        async with self._dialling:
            self.channels = [c for c in self.channels if not c.closed]
            if len(self.channels) < settings.max_channels:
                channel = await self.node.dial(self.peer)
                self.channels.append(channel)
                return channel
        return min(self.channels, key=lambda c: c.inflight)

    async def reap(self, idle_timeout: float) -> None:
        now = time.monotonic()
        for c in list(self.channels):
            if c.closed or (c.inflight == 0 and now - c.last_used > idle_timeout):
                self.channels.remove(c)
                await c.close()

    async def close(self) -> None:
        for c in self.channels:
            await c.close()
        self.channels.clear()


class Node:
    """One election party on the network. Register handlers with `route`, `start` to listen, then `request`,
    `send` and `broadcast` to peers by name, fingerprint or card."""

    def __init__(self, identity: Identity, keystore: Keystore, settings: NodeSettings | None = None) -> None:
        self.identity = identity
        self.keystore = keystore
        self.settings = settings or NodeSettings()
        self.handlers: dict[str, Handler] = {"ping": _ping}
        self.refusals: collections.deque[Refusal] = collections.deque(maxlen=1000)
        self._pools: dict[bytes, _Pool] = {}
        self._accepted: set[Channel] = set()
        self._accepting: set[asyncio.Task[None]] = set()
        self._securing: set[asyncio.Task[None]] = set()
        self._listener: socket.socket | None = None
        self._accept_loop: asyncio.Task[None] | None = None
        #: connections in their TLS handshake, by peer address, and in all
        self._pending: collections.Counter[str] = collections.Counter()
        #: accepted channels by peer node id
        self._per_peer: collections.Counter[bytes] = collections.Counter()
        #: connections closed unheard because too many were pending (in all, or from their address)
        self.refused_pending = 0
        self._executor = ThreadPoolExecutor(self.settings.workers, thread_name_prefix="votum-node")
        self._handshakes = asyncio.Semaphore(self.settings.max_handshakes)
        self._server_ctx: ssl.SSLContext | None = None
        self._client_ctx: _ResumingContext | None = None
        self._reaper: asyncio.Task[None] | None = None
        self._build_contexts()

    def __repr__(self) -> str:
        return f"Node({self.identity.name!r}, {len(self.keystore)} peers)"

    @property
    def name(self) -> str:
        return self.identity.name

    def _build_contexts(self) -> None:
        trusted = self.keystore.trusted_pem()
        self._server_ctx = self.identity.tls_context(True, trusted)
        client = self.identity.tls_context(False, trusted, _ResumingContext)
        assert isinstance(client, _ResumingContext)
        client.sessions = {}
        self._client_ctx = client

    def trust(self, card: Card, fingerprint: str | None = None, yes: bool = False) -> Card:
        """Adds a peer while running (new connections trust it at once)."""
        card = self.keystore.add(card, fingerprint, yes)
        for ctx in (self._server_ctx, self._client_ctx):
            assert ctx is not None
            ctx.load_verify_locations(cadata=card.certificate)
        return card

    def route(self, kind: str, handler: Handler) -> None:
        """Handles envelopes of `kind`: a request's handler returns its response (bytes or None)."""
        self.handlers[kind] = handler

    def route_stream(self, kind: str, open_sink: SinkFactory) -> None:
        """Handles streams of `kind` (spec/95.5): `open_sink(first chunk's message)` makes a sink per stream,
        which gets every chunk in order; what its `finish` returns answers the sender."""
        self.handlers[PREFIX + kind] = stream_handler(open_sink)

    async def stream(
        self,
        who: str | bytes | Card,
        kind: str,
        source: AsyncIterable[bytes] | Iterable[bytes],
        timeout: float | None = None,
    ) -> bytes:
        """Sends a payload of any size (chunks of at most 1 MiB, on one pooled connection) and returns the
        receiver's answer. Neither side holds the whole payload; a slow receiver holds the sender back."""
        channel = await self._pool(who).checkout()
        return await send_stream(channel, kind, source, timeout)

    def on(self, kind: str) -> Callable[[Handler], Handler]:
        def register(fn: Handler) -> Handler:
            self.route(kind, fn)
            return fn

        return register

    def _refused(self, peer: Card, code: str, detail: str) -> None:
        self.refusals.append(Refusal(peer.name, code, detail))

    def _peer_of(self, wire: Wire) -> Card | None:
        """The keystore's card for the key of the certificate the peer presented in the handshake."""
        der = wire.get_extra_info("ssl_object").getpeercert(binary_form=True)
        return self.keystore.by_signing_key(signing_key_of_certificate(der))

    def _wire(self, on_connect: Callable[[Wire], None] | None = None) -> Wire:
        settings = self.settings.channel
        return Wire(
            settings.max_frame, HELLO_MAX, settings.queue_frames, on_connect, queue_bytes=settings.queue_bytes
        )

    def _channel(self, peer: Card, wire: Wire, channel_id: bytes) -> Channel:
        return Channel(
            self.identity,
            peer,
            wire,
            channel_id,
            self.handlers,
            self._executor,
            self.settings.channel,
            self._refused,
        )

    # -- server ----------------------------------------------------------------------------------------------

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> tuple[str, int]:
        """Listens; returns the bound address. Port 0 picks a free port."""
        _raise_descriptor_limit()
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self._listener = socket.create_server((host, port), family=family, backlog=BACKLOG)
        self._listener.setblocking(False)
        self._accept_loop = asyncio.create_task(self._accept_connections(self._listener))
        self._reaper = asyncio.create_task(self._reap_loop())
        bound = self._listener.getsockname()
        return str(bound[0]), int(bound[1])

    async def _accept_connections(self, listener: socket.socket) -> None:
        """Accepts connections; each goes through TLS on a task of its own, unless too many are still in
        their handshake, in all (`max_pending`) or from its address (`max_pending_per_address`): then it
        is closed at once. Before its handshake nothing says who sent a connection, so these caps are
        what stands between an outsider and the node's descriptors (issue 43, item 6)."""
        loop = asyncio.get_running_loop()
        settings = self.settings
        while True:
            try:
                conn, address = await loop.sock_accept(listener)
            except OSError as e:
                if e.errno in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
                    log.warning("accepting a connection failed (%s); trying again shortly", e.strerror)
                    await asyncio.sleep(0.1)
                    continue
                raise
            where = str(address[0])
            if (
                self._pending.total() >= settings.max_pending
                or self._pending[where] >= settings.max_pending_per_address
            ):
                self.refused_pending += 1
                conn.close()
                continue
            self._pending[where] += 1
            task = loop.create_task(self._secure(conn, where))
            self._securing.add(task)
            task.add_done_callback(self._securing.discard)

    async def _secure(self, conn: socket.socket, where: str) -> None:
        """The TLS handshake of an accepted connection, within `handshake_timeout`; then `_connected`."""
        try:
            await asyncio.get_running_loop().connect_accepted_socket(
                lambda: self._wire(self._connected),
                conn,
                ssl=self._server_ctx,
                ssl_handshake_timeout=self.settings.handshake_timeout,
            )
        except (OSError, ssl.SSLError, asyncio.TimeoutError) as e:
            log.debug("a connection from %s failed its TLS handshake: %r", where, e)
        finally:
            self._pending[where] -= 1
            if self._pending[where] <= 0:
                del self._pending[where]

    def _connected(self, wire: Wire) -> None:
        """A connection was accepted and its TLS handshake done: the hello and the channel follow."""
        task = asyncio.get_running_loop().create_task(self._accept(wire))
        self._accepting.add(task)
        task.add_done_callback(self._accepting.discard)

    async def _accept(self, wire: Wire) -> None:
        async with self._handshakes:
            try:
                peer = self._peer_of(wire)
                if peer is None:  # trusted by TLS but removed from the keystore since
                    raise errors.UnknownPeer("the peer's key is not in the keystore")
                if self._per_peer[peer.node_id] >= self.settings.max_peer_connections:
                    self._refused(peer, "too-many-connections", "connection refused before its hello")
                    raise errors.NodeError(
                        f"{peer.name} holds {self.settings.max_peer_connections} connections already"
                    )
                channel_id = await Channel.handshake(
                    self.identity, peer, wire, False, self.settings.channel.hello_timeout
                )
            except (
                errors.NodeError,
                PeerClosed,
                asyncio.TimeoutError,
                OSError,
                ValueError,
            ) as e:
                log.warning("a connection was refused before its hello completed: %r", e)
                wire.close()
                return
        channel = self._channel(peer, wire, channel_id)
        self._accepted.add(channel)
        self._per_peer[peer.node_id] += 1
        try:
            await channel.wait_closed()
        finally:
            self._accepted.discard(channel)
            self._per_peer[peer.node_id] -= 1
            if self._per_peer[peer.node_id] <= 0:
                del self._per_peer[peer.node_id]

    # -- client ----------------------------------------------------------------------------------------------

    async def dial(self, who: str | bytes | Card) -> Channel:
        """A new connection to a peer (not pooled), retrying refused connections with back-off (spec/95.7)."""
        peer = self.keystore.find(who)
        host, port = peer.host_port()
        session_key = _SESSION_KEY + peer.node_id.hex()
        deadline = time.monotonic() + self.settings.connect_timeout
        delay = 0.05
        while True:
            try:
                _, wire = await asyncio.wait_for(
                    asyncio.get_running_loop().create_connection(
                        self._wire, host, port, ssl=self._client_ctx, server_hostname=session_key
                    ),
                    max(0.1, deadline - time.monotonic()),
                )
                break
            except ssl.SSLCertVerificationError as e:
                raise errors.UnknownPeer(
                    f"the node at {peer.address} has a key this node does not trust: {e.verify_message}",
                    peer.name,
                ) from None
            except (ConnectionRefusedError, ConnectionResetError, asyncio.TimeoutError, OSError) as e:
                if time.monotonic() + delay >= deadline:
                    raise errors.PeerUnavailable(
                        f"no connection to {peer.address} within {self.settings.connect_timeout} s: {e!r}",
                        peer.name,
                    ) from None
                await asyncio.sleep(delay)
                delay = min(delay * 2, 2.0)
        try:
            got = self._peer_of(wire)
            if got is None or got.node_id != peer.node_id:
                shown = got.name if got is not None else "an unknown node"
                raise errors.WrongPeer(
                    f"{peer.address} is {shown}, not {peer.name} ({peer.fingerprint})", peer.name
                )
            channel_id = await Channel.handshake(
                self.identity, peer, wire, True, self.settings.channel.hello_timeout
            )
            # the peer's tickets arrive before its hello: keep the newest for the next connection
            session = wire.get_extra_info("ssl_object").session
            if session is not None:
                assert self._client_ctx is not None
                self._client_ctx.sessions[session_key] = session
        except ssl.SSLError as e:
            wire.close()
            raise errors.UnknownPeer(
                f"{peer.name} refused this node's key in the handshake ({e.reason})", peer.name
            ) from None
        except (PeerClosed, ConnectionError) as e:
            wire.close()
            raise errors.UnknownPeer(
                f"{peer.name} closed the connection during the hello (it does not trust this node, or this "
                f"node holds its share of {peer.name}'s connections already?): {e!r}",
                peer.name,
            ) from None
        except BaseException:
            wire.close()
            raise
        return self._channel(peer, wire, channel_id)

    def _pool(self, who: str | bytes | Card) -> _Pool:
        peer = self.keystore.find(who)
        pool = self._pools.get(peer.node_id)
        if pool is None:
            pool = self._pools[peer.node_id] = _Pool(self, peer)
        return pool

    async def request(
        self, who: str | bytes | Card, kind: str, payload: bytes, timeout: float | None = None
    ) -> bytes:
        """Sends a request on a pooled connection and returns the response."""
        pool = self._pool(who)
        channel = pool.ready() or await pool.checkout()
        return await channel.request(kind, payload, timeout)

    async def send(self, who: str | bytes | Card, kind: str, payload: bytes) -> None:
        """Sends a one-way message on a pooled connection (returns once it is queued)."""
        pool = self._pool(who)
        channel = pool.ready() or await pool.checkout()
        await channel.send(kind, payload)

    async def broadcast(
        self,
        kind: str,
        payload: bytes,
        peers: Iterable[str | Card] | None = None,
        timeout: float | None = 30.0,
    ) -> dict[str, PeerResult]:
        """One request to every peer (or to `peers`) in parallel; one result per peer, errors included.
        `timeout` bounds each request as a whole, dialling included: dialling a peer that has gone retries
        refused connections for `connect_timeout`, which would otherwise hold the answer that long."""
        targets = [self.keystore.find(p) for p in peers] if peers is not None else self.keystore.cards()
        targets = [c for c in targets if c.node_id != self.identity.node_id]

        async def one(card: Card) -> PeerResult:
            t0 = time.perf_counter()
            try:
                response = await asyncio.wait_for(self.request(card, kind, payload, timeout), timeout)
                return PeerResult(card.name, response, None, time.perf_counter() - t0)
            except errors.NodeError as e:
                return PeerResult(card.name, None, e, time.perf_counter() - t0)
            except OSError as e:
                err = errors.PeerUnavailable(f"no connection: {e}", card.name)
                return PeerResult(card.name, None, err, time.perf_counter() - t0)
            except asyncio.TimeoutError:
                err = errors.PeerUnavailable(f"no answer within {timeout} s", card.name)
                return PeerResult(card.name, None, err, time.perf_counter() - t0)

        results = await asyncio.gather(*(one(c) for c in targets))
        return {r.peer: r for r in results}

    def seal(self, who: str | bytes | Card, purpose: str, data: bytes) -> bytes:
        """`data` sealed to a peer for `purpose` (spec/95.6)."""
        return self.identity.seal_for(self.keystore.find(who), purpose, data)

    def open_sealed(self, sender: str | bytes | Card, purpose: str, box: bytes) -> bytes:
        return self.identity.open_sealed(self.keystore.find(sender), purpose, box)

    async def run_in_worker(self, fn: Callable[..., object], *args: object) -> object:
        """Runs CPU work (native code releases the GIL) on the node's worker pool."""
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn, *args)

    # -- life cycle ------------------------------------------------------------------------------------------

    async def _reap_loop(self) -> None:
        period = max(0.05, min(self.settings.idle_timeout / 4, 5.0))
        while True:
            await asyncio.sleep(period)
            for pool in list(self._pools.values()):
                await pool.reap(self.settings.idle_timeout)

    @property
    def connections(self) -> int:
        """Open connections: dialled (pooled) and accepted."""
        return sum(len([c for c in p.channels if not c.closed]) for p in self._pools.values()) + len(
            self._accepted
        )

    async def close(self) -> None:
        """Stops listening, closes every connection (flushing what is queued) and the worker pool."""
        if self._reaper is not None:
            self._reaper.cancel()
        if self._accept_loop is not None:
            self._accept_loop.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._accept_loop
        if self._listener is not None:
            self._listener.close()
        for task in list(self._securing):
            task.cancel()  # handshakes in progress: their connections close with them
        for pool in list(self._pools.values()):
            await pool.close()
        for channel in list(self._accepted):
            await channel.close()
        self._executor.shutdown(wait=False)

    async def __aenter__(self) -> Node:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


def _raise_descriptor_limit() -> None:
    """The soft limit on open files raised to the hard one (a node holds a descriptor per connection;
    the usual soft limit of 1,024 was what an outsider's silent connections exhausted)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 16)
    if soft != resource.RLIM_INFINITY and soft < target:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))


def open_node(
    home: os.PathLike[str] | str, passphrase: bytes | None = None, settings: NodeSettings | None = None
) -> Node:
    """The node whose identity and keystore live in `home`."""
    from pathlib import Path

    from votum.nodes.keystore import PEERS_FILE

    path = Path(home)
    identity = Identity(path, passphrase)
    node = Node(identity, Keystore.load(path / PEERS_FILE), settings)
    identity.forget_passphrase()
    return node
