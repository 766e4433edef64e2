"""A receiver's peak memory under a flood of 64 KiB one-way messages on one connection, with the read-ahead
bounded in bytes (`ChannelSettings.queue_bytes`, 16 MiB by default) and, for comparison, unbounded in bytes
(only the 64-frame count, as before issue 42's C.14). Run by `make bench-nodes-memory`.

    python benches/bench_node_readahead.py [MESSAGES] [REPEATS]
"""

from __future__ import annotations

import asyncio
import multiprocessing as mp
import os
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from votum.nodes import Card, ChannelSettings, Identity, Keystore, Message, Node, NodeSettings, keygen


def _peak_mib() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _receiver(home: str, client: dict[str, Any], queue_bytes: int, conn: Any) -> None:
    import uvloop

    async def main() -> None:
        settings = NodeSettings(channel=ChannelSettings(queue_bytes=queue_bytes))
        node = Node(Identity(Path(home)), Keystore([Card.from_dict(client)]), settings)

        async def sink(m: Message) -> None:
            return None

        node.route("note", sink)
        host, port = await node.start("127.0.0.1", 0)
        conn.send(replace(node.identity.card, address=f"{host}:{port}").to_dict())
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, conn.recv)
        conn.send(_peak_mib())
        await node.close()

    uvloop.run(main())


async def _flood(root: Path, card: dict[str, Any], n: int) -> float:
    node = Node(Identity(root / "client"), Keystore([Card.from_dict(card)]))
    payload = os.urandom(64 << 10)
    t0 = time.perf_counter()
    for _ in range(n):
        await node.send("peer", "note", payload)
    await node.request("peer", "ping", b"")  # answered after every message before it
    rate = n / (time.perf_counter() - t0)
    await node.close()
    return rate


def one(queue_bytes: int, n: int) -> tuple[float, float]:
    import uvloop

    root = Path(tempfile.mkdtemp(prefix="votum-readahead-"))
    client = keygen(root / "client", "client", None)
    keygen(root / "peer", "peer", None)
    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe()
    proc = ctx.Process(target=_receiver, args=(str(root / "peer"), client.to_dict(), queue_bytes, child))
    proc.start()
    card = parent.recv()
    rate = uvloop.run(_flood(root, card, n))
    parent.send("peak")
    peak = parent.recv()
    proc.join(timeout=30)
    return peak, rate


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 8000
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    print(f"{n} one-way 64 KiB messages on one connection, {repeats} runs each (receiver peak VmHWM)")
    for label, queue_bytes in (("bounded (16 MiB)", ChannelSettings().queue_bytes), ("frames only", 1 << 40)):
        runs = [one(queue_bytes, n) for _ in range(repeats)]
        peaks = sorted(p for p, _ in runs)
        rates = sorted(r for _, r in runs)
        print(
            f"{label:16} peak MiB min {peaks[0]:.0f} median {statistics.median(peaks):.0f}; "
            f"messages/s min {rates[0]:,.0f} median {statistics.median(rates):,.0f}"
        )


if __name__ == "__main__":
    main()
