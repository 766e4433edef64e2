"""What the attack tests against guardian processes share (tests/adversarial): a bounded event loop, the
channels' message packing, and a mesh of real nodes on loopback where the first node plays the coordinator
and sends whatever a test likes to 2.x guardian services (spec/65.9, 66.12)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from pathlib import Path
from typing import Any, TypeVar

import msgpack  # type: ignore[import-untyped]
import uvloop
from votum.nodes import Node
from votum.nodes.local import make_identities, start_mesh
from votum.parties.eg2 import Eg2GuardianService

T = TypeVar("T")


def run(coro: Awaitable[T], timeout: float = 120.0) -> T:
    """Runs `coro` on uvloop, stopped after `timeout` seconds."""

    async def bounded() -> T:
        return await asyncio.wait_for(coro, timeout)

    return uvloop.run(bounded())


def pack(obj: object) -> bytes:
    return bytes(msgpack.packb(obj))


def unpack(data: bytes) -> Any:
    return msgpack.unpackb(data)


async def eg2_mesh(tmp_path: Path, n: int) -> tuple[list[Node], list[Eg2GuardianService]]:
    """The node `coordinator` and n guardian nodes g1…gn, each with a 2.x guardian service driven by it."""
    names = ["coordinator"] + [f"g{i}" for i in range(1, n + 1)]
    nodes: list[Node] = await start_mesh(make_identities(tmp_path / "homes", names))
    services = [Eg2GuardianService(g, "coordinator", timeout=10) for g in nodes[1:]]
    return nodes, services


async def ask_guardian(coordinator: Node, election: str, i: int, kind: str, body: dict[str, Any]) -> bytes:
    """The coordinator's request `kind` to guardian node g`i` about `election`."""
    return await coordinator.request(f"g{i}", kind, pack({"election": election, **body}), 10)


async def send_record(coordinator: Node, i: int, record: Path) -> bytes:
    """The coordinator streams `record` to guardian node g`i` (`eg2/record`); the guardian's answer is the
    stream's SHA-256."""
    from votum.parties.record_copy import record_chunks

    return await coordinator.stream(f"g{i}", "eg2/record", record_chunks(record), 30)
