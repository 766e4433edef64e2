"""A TCP relay that adds a fixed one-way delay to every byte in both directions: the latency this machine's
kernel cannot add (it has no `sch_netem`). `python delay_relay.py DELAY_MS LISTEN=TARGET ...` forwards each
`HOST:PORT=HOST:PORT` pair until terminated; order is kept and bandwidth is not limited, so a connection
through it behaves as a link with `DELAY_MS` each way (round trips `2 × DELAY_MS` longer). Used by
`benches/bench_cluster_netns.py`."""

from __future__ import annotations

import asyncio
import collections
import sys
import time


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay: float) -> None:
    """Reads what arrives, and writes each piece `delay` seconds after it arrived, in order."""
    queue: collections.deque[tuple[float, bytes]] = collections.deque()
    arrived = asyncio.Event()
    done = False

    async def read() -> None:
        nonlocal done
        try:
            while data := await reader.read(1 << 16):
                queue.append((time.monotonic() + delay, data))
                arrived.set()
        except (ConnectionError, OSError):
            pass
        done = True
        arrived.set()

    task = asyncio.create_task(read())
    try:
        while True:
            if not queue:
                if done:
                    break
                arrived.clear()
                await arrived.wait()
                continue
            due, data = queue[0]
            wait = due - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            queue.popleft()
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        task.cancel()
    finally:
        try:
            writer.write_eof()
        except (OSError, RuntimeError):
            writer.close()


async def _serve(listen: str, target: str, delay: float) -> asyncio.Server:
    lhost, lport = listen.rsplit(":", 1)
    thost, tport = target.rsplit(":", 1)

    async def handle(client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        try:
            server_r, server_w = await asyncio.open_connection(thost, int(tport))
        except OSError:
            client_w.close()
            return
        await asyncio.gather(_pump(client_r, server_w, delay), _pump(server_r, client_w, delay))
        for w in (client_w, server_w):
            w.close()

    return await asyncio.start_server(handle, lhost, int(lport), reuse_address=True)


async def _main(delay_ms: float, pairs: list[str]) -> None:
    servers = [await _serve(*p.split("=", 1), delay_ms / 1000) for p in pairs]
    print("ready", flush=True)
    await asyncio.gather(*(s.serve_forever() for s in servers))


if __name__ == "__main__":
    asyncio.run(_main(float(sys.argv[1]), sys.argv[2:]))
