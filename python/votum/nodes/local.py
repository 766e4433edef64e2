"""Nodes on one machine, for tests, benchmarks and `votum ceremony` on loopback: identities made in a scratch
directory, every node trusting every other, each listening on a free port."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from votum.nodes.identity import Card, Identity, keygen
from votum.nodes.keystore import Keystore
from votum.nodes.node import Node, NodeSettings


def make_identities(root: Path, names: list[str]) -> list[Path]:
    """One identity directory per name under `root` (no address yet: nodes listen on free ports)."""
    homes = []
    for name in names:
        home = root / name
        keygen(home, name, None)
        homes.append(home)
    return homes


async def start_mesh(
    homes: list[Path], settings: NodeSettings | None = None, host: str = "127.0.0.1"
) -> list[Node]:
    """Starts one node per identity and makes every node trust every other at its bound address."""
    nodes = [Node(Identity(home), Keystore(), settings) for home in homes]
    cards: list[Card] = []
    for node in nodes:
        h, p = await node.start(host, 0)
        cards.append(dataclasses.replace(node.identity.card, address=f"{h}:{p}"))
    for node in nodes:
        for card in cards:
            if card.node_id != node.identity.node_id:
                node.trust(card, fingerprint=card.fingerprint)
    return nodes
