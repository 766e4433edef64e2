"""Nodes on one machine, for tests, benchmarks, `votum ceremony` and `votum sv --processes` on loopback:
identities made in a scratch directory, every node trusting every other, each listening on a free port, in
this process or in processes of their own."""

from __future__ import annotations

import dataclasses
import json
import os
import selectors
import signal
import subprocess
import sys
from pathlib import Path

from votum.nodes.identity import Card, Identity, keygen
from votum.nodes.keystore import PEERS_FILE, Keystore
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


def trusting_homes(root: Path, names: list[str]) -> list[Path]:
    """One home per name under `root` (identities made once, kept between runs), each one's keystore trusting
    every other."""
    homes = [root / name for name in names]
    cards = []
    for name, home in zip(names, homes, strict=True):
        if not (home / "key.pem").exists():
            keygen(home, name, None)
        cards.append(Card.from_json((home / "card.json").read_text()))
    for home, card in zip(homes, cards, strict=True):
        store = Keystore(path=home / PEERS_FILE)
        for other in cards:
            if other.node_id != card.node_id:
                store.add(other, other.fingerprint)
        store.save()
    return homes


class NodeProcess:
    """`python -m MODULE HOME --host HOST [ARGS]` in its own process, which announces its address as JSON on
    its first line of output; `prefix` runs it elsewhere (`ip netns exec NS` in the tests across
    interfaces)."""

    def __init__(
        self,
        module: str,
        home: Path,
        args: list[str] | None = None,
        env: dict[str, str] | None = None,
        prefix: list[str] | None = None,
        host: str = "127.0.0.1",
    ) -> None:
        cmd = [*(prefix or []), sys.executable, "-m", module, str(home), "--host", host, *(args or [])]
        self.home = home
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, env=env, text=True)

    def announced(self, timeout: float) -> str | None:
        """The address it announced; None when it exited first; `TimeoutError` when it said nothing in
        time."""
        assert self.proc.stdout is not None
        with selectors.DefaultSelector() as sel:
            sel.register(self.proc.stdout, selectors.EVENT_READ)
            if not sel.select(timeout):
                raise TimeoutError(f"no announcement within {timeout} s")
        line = self.proc.stdout.readline()
        return str(json.loads(line)["address"]) if line else None

    def stop(self, timeout: float = 5.0) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def environment(unset: str, value: str | None) -> dict[str, str]:
    """This process's environment with `unset` set to `value`, or removed when it is None."""
    env = dict(os.environ)
    env.pop(unset, None)
    if value is not None:
        env[unset] = value
    return env
