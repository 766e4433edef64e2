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
from collections.abc import Callable
from pathlib import Path

from votum.nodes.identity import Card, Identity, keygen
from votum.nodes.keystore import PEERS_FILE, Keystore
from votum.nodes.node import Node, NodeSettings, open_node


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


def apply_roster(node: Node, roster: dict[str, str]) -> None:
    """Takes the addresses a controller's roster gives (name → address) for peers this node already trusts:
    a roster adds addresses, never trust (an unknown name is `UnknownPeer`)."""
    for name, address in roster.items():
        if name == node.name:
            continue
        known = node.keystore.find(str(name))
        if address and address != known.address:
            node.trust(dataclasses.replace(known, address=str(address)), known.fingerprint)


class PartyProcess(NodeProcess):
    """One party of an election run across processes: `python -m MODULE HOME [--fault F]`, announcing its
    address; `failed(phase, detail, party)` is the election's error for a party that does not start."""

    def __init__(
        self,
        module: str,
        home: Path,
        failed: Callable[[str, str, str], Exception],
        fault: str | None = None,
        prefix: list[str] | None = None,
        host: str = "127.0.0.1",
        env: dict[str, str] | None = None,
    ) -> None:
        super().__init__(module, home, ["--fault", fault] if fault else [], env, prefix, host)
        self.failed = failed

    def address(self, timeout: float) -> str:
        try:
            address = self.announced(timeout)
        except TimeoutError as e:
            raise self.failed("launch", str(e), self.home.name) from None
        if address is None:
            raise self.failed("launch", f"the process exited ({self.proc.poll()})", self.home.name)
        return address


def controller_node(home: Path, parties: list[Path], addresses: list[str], timeout: float) -> Node:
    """The controller's node (not started), trusting every party's key from its keystore at the address the
    party announced."""
    keystore = Keystore.load(home / PEERS_FILE)
    node = Node(Identity(home), keystore, NodeSettings(connect_timeout=min(timeout, 10.0)))
    for h, address in zip(parties, addresses, strict=True):
        card = keystore.find(h.name)
        node.trust(dataclasses.replace(card, address=address), card.fingerprint)
    return node


#: makes a party's handlers on its node: (node, fault, called when the election is over)
MakeParty = Callable[[Node, "str | None", Callable[[], None]], object]


def serve_party(
    home: Path, host: str, port: int, fault: str | None, make: MakeParty, announce: Callable[[str], None]
) -> None:
    """Runs one party's node until its election ends (or SIGINT/SIGTERM), announcing its address once it
    listens."""
    import asyncio

    import uvloop

    async def main() -> None:
        node = open_node(home, settings=NodeSettings(connect_timeout=10.0))
        stop = asyncio.Event()
        make(node, fault, stop.set)
        bound = await node.start(host, port)
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        announce(f"{bound[0]}:{bound[1]}")
        await stop.wait()
        await node.close()

    uvloop.run(main())


def party_main(argv: list[str], description: str, faults: tuple[str, ...], make: MakeParty) -> None:
    """`python -m …` of one party: HOME, --host, --port, --fault (tests); prints its address as JSON."""
    import argparse

    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("home", type=Path)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--fault", choices=faults, help="tests only")
    args = parser.parse_args(argv)
    serve_party(
        args.home,
        args.host,
        args.port,
        args.fault,
        make,
        lambda a: print(json.dumps({"address": a}), flush=True),
    )
