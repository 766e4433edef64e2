"""Nodes on one machine, for tests, benchmarks, `votum ceremony` and `votum sv --processes` on loopback:
identities made in a scratch directory, every node trusting every other, each listening on a free port, in
this process or in processes of their own."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
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


#: the flag a party started by a controller gets: it stops when its standard input ends, which happens
#: when the controller's process ends, however it ends (issue 43, item 10: after `kill -9` of a
#: controller every party kept running)
PARENT_PIPE = "--parent-pipe"


def stop_with_parent(stop: asyncio.Event) -> None:
    """Sets `stop` once this process's standard input ends: the write end is held only by the process
    that started it, so the end of input is that process's end."""
    loop = asyncio.get_running_loop()
    fd = sys.stdin.fileno()

    def readable() -> None:
        try:
            got = os.read(fd, 4096)
        except BlockingIOError:
            return
        except OSError:
            got = b""
        if not got:
            loop.remove_reader(fd)
            stop.set()

    os.set_blocking(fd, False)
    loop.add_reader(fd, readable)


@contextlib.contextmanager
def scratch_homes(prefix: str) -> Iterator[Path]:
    """A temporary directory for the parties' homes (private keys, sealed state) that goes even when this
    process is killed: a reaper process (`python -m votum.nodes.reaper DIR`) waits for its standard input
    to end, which it does when this process ends however it ends, and removes the directory then."""
    root = Path(tempfile.mkdtemp(prefix=prefix))
    reaper = subprocess.Popen(
        [sys.executable, "-m", "votum.nodes.reaper", str(root)],
        stdin=subprocess.PIPE,
        start_new_session=True,  # a Ctrl-C to the controller's group does not stop the cleanup
    )
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)
        assert reaper.stdin is not None
        reaper.stdin.close()
        try:
            reaper.wait(timeout=30)
        except subprocess.TimeoutExpired:
            reaper.kill()
            reaper.wait()


class NodeProcess:
    """`python -m MODULE HOME --host HOST --parent-pipe [ARGS]` in its own process, which announces its
    address as JSON on its first line of output and stops when this process ends (`PARENT_PIPE`);
    `prefix` runs it elsewhere (`ip netns exec NS` in the tests across interfaces)."""

    def __init__(
        self,
        module: str,
        home: Path,
        args: list[str] | None = None,
        env: dict[str, str] | None = None,
        prefix: list[str] | None = None,
        host: str = "127.0.0.1",
    ) -> None:
        python = [sys.executable, "-m", module, str(home), "--host", host, PARENT_PIPE]
        cmd = [*(prefix or []), *python, *(args or [])]
        self.home = home
        # its standard input is a pipe only this process writes: its end tells the party we are gone
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True)

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
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
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
    home: Path,
    host: str,
    port: int,
    fault: str | None,
    make: MakeParty,
    announce: Callable[[str], None],
    parent_pipe: bool = False,
) -> None:
    """Runs one party's node until its election ends (or SIGINT/SIGTERM, or with `parent_pipe` the end of
    its standard input), announcing its address once it listens."""
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
        if parent_pipe:
            stop_with_parent(stop)
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
    parser.add_argument(PARENT_PIPE, action="store_true", help="stop when standard input ends")
    args = parser.parse_args(argv)
    serve_party(
        args.home,
        args.host,
        args.port,
        args.fault,
        make,
        lambda a: print(json.dumps({"address": a}), flush=True),
        args.parent_pipe,
    )
