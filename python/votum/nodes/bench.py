"""`votum node bench` / `make bench-nodes`: the channels measured on loopback against seed 002's figures. The
listening nodes run in another process (spawned), so each side has its own interpreter, as in production."""

from __future__ import annotations

import asyncio
import multiprocessing as mp
import os
import resource
import socket
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, cast

from votum.nodes.channel import Message
from votum.nodes.identity import Card, Identity, keygen
from votum.nodes.keystore import Keystore
from votum.nodes.node import _SESSION_KEY, Node, NodeSettings, _ResumingContext


async def _sink(m: Message) -> bytes:
    return b""


async def _echo(m: Message) -> bytes:
    return m.payload


class _NullSink:
    """Takes a stream and keeps only its length."""

    def __init__(self) -> None:
        self.size = 0

    async def write(self, data: bytes | memoryview) -> None:
        self.size += len(data)

    async def finish(self) -> bytes:
        return str(self.size).encode()

    async def abort(self) -> None:
        pass


class _BareEcho(asyncio.Protocol):
    """The floor: a TLS server that echoes bytes, with no frames, envelopes or signatures."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        self.transport.write(data)


class _BareSink(asyncio.BufferedProtocol):
    """The floor for bulk: TLS decrypts into one reused buffer; one byte answers every 256 MiB."""

    def __init__(self) -> None:
        self.buffer = bytearray(1 << 20)
        self.got = 0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)

    def get_buffer(self, sizehint: int) -> bytearray:
        return self.buffer

    def buffer_updated(self, nbytes: int) -> None:
        self.got += nbytes
        while self.got >= 256 << 20:
            self.got -= 256 << 20
            self.transport.write(b"k")


class _BareClient(asyncio.Protocol):
    def __init__(self) -> None:
        self.answer: asyncio.Future[bytes] | None = None
        self.room: asyncio.Future[None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        if self.answer is not None and not self.answer.done():
            self.answer.set_result(data)

    def pause_writing(self) -> None:
        self.room = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        if self.room is not None:
            self.room.set_result(None)
            self.room = None


def _rss_mib(field: str = "VmRSS") -> float:
    """This process's resident memory now (VmRSS) or at its peak (VmHWM), in MiB."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _serve(homes: list[str], client_card: dict[str, Any], conn: Any) -> None:
    import uvloop

    async def main() -> None:
        nodes = []
        cards = []
        for home in homes:
            # the last row holds 500 connections from the one client (50 per peer), past the default cap
            # of connections per peer (`max_peer_connections`, 16): this row measures capacity, not policy
            settings = NodeSettings(max_peer_connections=1024)
            node = Node(Identity(Path(home)), Keystore([Card.from_dict(client_card)]), settings)
            node.route("sink", _sink)
            node.route("echo", _echo)
            node.route("note", _sink)
            node.route_stream("null", lambda m: _NullSink())
            h, p = await node.start("127.0.0.1", 0)
            cards.append(replace(node.identity.card, address=f"{h}:{p}").to_dict())
            nodes.append(node)
        loop = asyncio.get_running_loop()
        ctx = nodes[0].identity.tls_context(True, Card.from_dict(client_card).certificate)
        bare = await loop.create_server(_BareEcho, "127.0.0.1", 0, ssl=ctx)
        sink = await loop.create_server(_BareSink, "127.0.0.1", 0, ssl=ctx)
        conn.send((cards, [srv.sockets[0].getsockname()[1] for srv in (bare, sink)]))
        while True:
            cmd = await loop.run_in_executor(None, conn.recv)
            if cmd == "stats":
                usage = resource.getrusage(resource.RUSAGE_SELF)
                conn.send(
                    {
                        "rss_mib": _rss_mib(),
                        "peak_mib": _rss_mib("VmHWM"),
                        "cpu_s": usage.ru_utime + usage.ru_stime,
                        "connections": sum(n.connections for n in nodes),
                    }
                )
            elif cmd == "stop":
                bare.close()
                sink.close()
                for n in nodes:
                    await n.close()
                conn.send("stopped")
                return

    uvloop.run(main())


@dataclass
class Row:
    what: str
    figure: str
    seed: str
    target: str


def _ms(xs: list[float]) -> str:
    xs = sorted(xs)
    return f"min {xs[0] * 1e3:.2f} / median {statistics.median(xs) * 1e3:.2f} ms"


async def _run(report: Callable[[Row], None], quick: bool) -> None:
    root = Path(tempfile.mkdtemp(prefix="votum-bench-nodes-"))
    client_card = keygen(root / "client", "client", None)
    homes = [str(root / f"peer{i}") for i in range(10)]
    for i, h in enumerate(homes):
        keygen(Path(h), f"peer{i}", None)
    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe()
    proc = ctx.Process(target=_serve, args=(homes, client_card.to_dict(), child), daemon=True)
    proc.start()
    card_dicts, bare_ports = parent.recv()
    cards = [Card.from_dict(c) for c in card_dicts]
    node = Node(Identity(root / "client"), Keystore(cards))
    scale = 0.2 if quick else 1.0
    try:
        await _floors(report, node, cards[0], bare_ports, scale)
        # one message on a new connection (handshake, hello, request, answer)
        times = []
        for _ in range(int(200 * scale)):
            t0 = time.perf_counter()
            ch = await node.dial("peer0")
            await ch.request("sink", b"x" * 256)
            times.append(time.perf_counter() - t0)
            await ch.close()
        report(Row("one 256 B message on a new connection", _ms(times), "20 ms", "<= 2 ms"))
        # round trips on a pooled connection
        await node.request("peer0", "sink", b"")
        for size, n in ((256, 3000), (64 << 10, 500), (16 << 20, 10)):
            payload = os.urandom(size)
            times = []
            for _ in range(max(3, int(n * scale))):
                t0 = time.perf_counter()
                await node.request("peer0", "sink", payload)
                times.append(time.perf_counter() - t0)
            label = {256: "256 B", 64 << 10: "64 KiB", 16 << 20: "16 MiB"}[size]
            target = "<= 0.3 ms" if size == 256 else ""
            report(Row(f"round trip, {label} request, pooled", _ms(times), "8-10 ms", target))
            if size == 16 << 20:
                mbs = size / statistics.median(times) / 1e6
                report(Row("bulk, one connection (16 MiB requests)", f"{mbs:.0f} MB/s", "", ">= 500 MB/s"))
        # a stream of 256 MiB on one connection (1 MiB chunks, acknowledged every 8)
        block = os.urandom(1 << 20)
        times = []
        for _ in range(max(2, int(5 * scale))):
            t0 = time.perf_counter()
            got = await node.stream("peer0", "null", (block for _ in range(256)))
            times.append(time.perf_counter() - t0)
            assert got == str(256 << 20).encode()
        mbs = (256 << 20) / statistics.median(times) / 1e6
        report(Row("bulk, one connection (a 256 MiB stream)", f"{mbs:.0f} MB/s", "", ">= 500 MB/s"))
        # sustained one-way messages, then pipelined requests
        for size in (256, 64 << 10):
            n = int((100_000 if size == 256 else 4000) * scale)
            payload = os.urandom(size)
            t0 = time.perf_counter()
            for _ in range(n):
                await node.send("peer0", "note", payload)
            await node.request("peer0", "sink", b"")  # handled after every message before it
            rate = n / (time.perf_counter() - t0)
            target = ">= 20,000/s" if size == 256 else ""
            report(Row(f"one-way {size} B messages, one connection", f"{rate:,.0f}/s", "70/s", target))
        # what the receiver held: its read-ahead is bounded per connection (queue_bytes and one frame)
        parent.send("stats")
        peak = parent.recv()["peak_mib"]
        report(Row("receiver's peak memory after the one-way rows", f"{peak:.0f} MiB", "", "bounded (C.14)"))
        # 256 callers, each sending its next request when the last is answered: 256 always in flight (a
        # semaphore over 100,000 waiting tasks would cost more than the channel, asyncio's waiters are a list)
        n = int(100_000 * scale) // 256 * 256
        payload = os.urandom(256)

        async def caller() -> None:
            for _ in range(n // 256):
                await node.request("peer0", "sink", payload)

        t0 = time.perf_counter()
        await asyncio.gather(*(caller() for _ in range(256)))
        rate = n / (time.perf_counter() - t0)
        report(Row("pipelined 256 B requests (256 in flight)", f"{rate:,.0f}/s", "", ">= 50,000/s"))
        # broadcast to 10 peers
        await node.broadcast("sink", b"")
        times = []
        for _ in range(int(200 * scale)):
            t0 = time.perf_counter()
            res = await node.broadcast("sink", b"x" * 256)
            times.append(time.perf_counter() - t0)
            assert all(r.ok for r in res.values())
        report(Row("broadcast of 256 B to 10 peers", _ms(times), "55 ms", "<= 3 ms"))
        # 100 idle connections, then 500 held at once
        parent.send("stats")
        before = parent.recv()
        held = [await node.dial(f"peer{i % 10}") for i in range(100)]
        parent.send("stats")
        mid = parent.recv()
        await asyncio.sleep(5)
        parent.send("stats")
        after = parent.recv()
        cpu = (after["cpu_s"] - mid["cpu_s"]) / 5 * 100
        rss = after["rss_mib"] - before["rss_mib"]
        report(Row("100 idle connections (listening side)", f"+{rss:.1f} MiB, {cpu:.1f}% CPU", "", ""))
        t0 = time.perf_counter()
        held += [await node.dial(f"peer{i % 10}") for i in range(400)]
        answers = await asyncio.gather(*(c.request("sink", b"") for c in held))
        parent.send("stats")
        s = parent.recv()
        report(
            Row(
                "500 connections held, one request on each",
                f"{s['connections']} open, "
                f"{time.perf_counter() - t0:.2f} s to open and use, {s['rss_mib']:.0f} MiB",
                "",
                "500",
            )
        )
        assert len(answers) == 500
        for c in held:
            await c.close()
    finally:
        await node.close()
        parent.send("stop")
        parent.recv()
        proc.join(10)


async def _floors(
    report: Callable[[Row], None], node: Node, peer: Card, ports: list[int], scale: float
) -> None:
    """What the machine allows before votum does anything: TLS 1.3 between the same two processes, with the
    same certificates (and session resumption, as votum's dialler), but no frames, envelopes, signatures or
    digests."""
    loop = asyncio.get_running_loop()
    ctx = node.identity.tls_context(False, peer.certificate, _ResumingContext)
    assert isinstance(ctx, _ResumingContext)
    ctx.sessions = {}
    key = _SESSION_KEY + "floor"
    for resumed in (False, True):
        times = []
        for _ in range(int(200 * scale)):
            t0 = time.perf_counter()
            transport, proto = await loop.create_connection(
                _BareClient, "127.0.0.1", ports[0], ssl=ctx, server_hostname=key
            )
            proto.answer = loop.create_future()
            transport.write(b"x" * 256)
            await proto.answer
            times.append(time.perf_counter() - t0)
            if resumed:
                ctx.sessions[key] = transport.get_extra_info("ssl_object").session
            transport.close()
        how = "resumed" if resumed else "full"
        report(Row(f"floor: bare TLS, new connection ({how} handshake) and one echo", _ms(times), "", ""))
    transport, proto = await loop.create_connection(_BareClient, "127.0.0.1", ports[0], ssl=ctx)
    sock = transport.get_extra_info("socket")
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    times = []
    for _ in range(int(3000 * scale)):
        proto.answer = loop.create_future()
        t0 = time.perf_counter()
        transport.write(b"x" * 256)
        await proto.answer
        times.append(time.perf_counter() - t0)
    report(Row("floor: bare TLS echo of 256 B, one connection", _ms(times), "", ""))
    transport.close()
    transport, proto = await loop.create_connection(_BareClient, "127.0.0.1", ports[1], ssl=ctx)
    block = os.urandom(1 << 20)
    rates = []
    for _ in range(3):
        proto.answer = loop.create_future()
        t0 = time.perf_counter()
        for _ in range(256):
            transport.write(block)
            if proto.room is not None:
                await proto.room
        await proto.answer
        rates.append((256 << 20) / (time.perf_counter() - t0) / 1e6)
    mbs = statistics.median(rates)
    report(Row("floor: bare TLS bulk, one connection (256 MiB)", f"{mbs:.0f} MB/s", "", ""))
    transport.close()


async def _ceremony(report: Callable[[Row], None], quick: bool) -> None:
    """The 5-guardian ceremony, quorum 3: guardian processes over the channels against one process."""
    import json

    from votum import EgManifest
    from votum.eg import run_ceremony
    from votum.election import synthetic_manifest
    from votum.parties.ceremony import run_local

    em = EgManifest.from_json(json.dumps(synthetic_manifest(3)))
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, run_ceremony, em, 5, 3)  # the group's tables, once
    one = []
    for _ in range(3 if quick else 10):
        t0 = time.perf_counter()
        await loop.run_in_executor(None, run_ceremony, em, 5, 3)
        one.append(time.perf_counter() - t0)
    report(Row("key ceremony, 5 guardians, one process", _ms(one), "", ""))
    root = Path(tempfile.mkdtemp(prefix="votum-bench-ceremony-"))
    spread, launch, whole = [], [], []
    for _ in range(2 if quick else 5):
        t0 = time.perf_counter()
        run = await run_local(5, 3, em, root)
        whole.append(time.perf_counter() - t0)
        spread.append(run.result.seconds)
        launch.append(run.launch_seconds)
    ratio = statistics.median(spread) / statistics.median(one)
    report(Row("key ceremony, 5 guardian processes over channels", f"{_ms(spread)} ({ratio:.1f}x)", "", ""))
    report(Row("  the same with starting the 5 processes", _ms(whole), "", ""))


def run_bench(report: Callable[[Row], None], quick: bool = False, ceremony: bool = True) -> None:
    import uvloop

    uvloop.run(_run(report, quick))
    if ceremony:
        uvloop.run(_ceremony(report, quick))
