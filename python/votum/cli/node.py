"""`votum node`: a party's identity, its trusted peers, and secure messages between election officials and
trustees over the channels of spec/95."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Coroutine
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from votum.cli._errors import fail
from votum.nodes import Card, Keystore, Message, Node, NodeError, keygen, open_node
from votum.nodes.channel import Handler
from votum.nodes.chat import printable
from votum.nodes.identity import CARD_FILE, KEY_FILE
from votum.nodes.keystore import PEERS_FILE

T = TypeVar("T")
node_app = typer.Typer(no_args_is_help=True, help="A party's identity, peers and secure messages (spec/95).")
peers_app = typer.Typer(no_args_is_help=True, help="The peers this node trusts.")
node_app.add_typer(peers_app, name="peers")

HOME = Annotated[
    Path,
    typer.Option(envvar="VOTUM_NODE_HOME", help="The node's directory (key.pem, card.json, peers.json)."),
]
DEFAULT_HOME = Path.home() / ".votum" / "node"
BIND_HOST = Annotated[str | None, typer.Option(help="Address to bind (default: the card's).")]
BIND_PORT = Annotated[int | None, typer.Option(help="Port to bind (default: the card's).")]
out = Console()
err = Console(stderr=True)


def passphrase_of(home: Path) -> bytes | None:
    """The passphrase of the node key in `home` if it is encrypted: VOTUM_NODE_PASSPHRASE, or asked."""
    try:
        encrypted = b"ENCRYPTED" in (home / KEY_FILE).read_bytes()
    except OSError:
        return None
    if not encrypted:
        return None
    given = os.environ.get("VOTUM_NODE_PASSPHRASE")
    if given is None:
        given = typer.prompt("passphrase of the node's key", hide_input=True)
    return given.encode()


def _open(home: Path) -> Node:
    try:
        return open_node(home, passphrase_of(home))
    except NodeError as e:
        err.print(f"[red]error:[/] {e}")
        raise typer.Exit(2) from None


def _fail(e: Exception) -> None:
    err.print(f"[red]error:[/] {e}")
    raise typer.Exit(1)


@node_app.command("keygen")
def keygen_cmd(
    name: Annotated[str, typer.Option(help="The node's name, as peers will see it.")],
    address: Annotated[str, typer.Option(help="HOST:PORT where this node listens.")] = "127.0.0.1:7800",
    home: HOME = DEFAULT_HOME,
    encrypt: Annotated[bool, typer.Option(help="Encrypt the key file with a passphrase.")] = False,
) -> None:
    """Makes this node's identity: key.pem (mode 0600) and card.json (public: give it to your peers)."""
    passphrase = None
    if encrypt:
        passphrase = (
            os.environ.get("VOTUM_NODE_PASSPHRASE")
            or typer.prompt("passphrase", hide_input=True, confirmation_prompt=True)
        ).encode()
    try:
        card = keygen(home, name, address, passphrase)
    except NodeError as e:
        _fail(e)
        return
    out.print(f"node [bold]{card.name}[/] at {card.address}")
    out.print(f"fingerprint [bold]{card.fingerprint}[/]")
    out.print(
        f"card: {home / CARD_FILE}  (peers add it with this fingerprint, compared by phone or in person)"
    )


@node_app.command("fingerprint")
def fingerprint_cmd(
    home: HOME = DEFAULT_HOME,
    card: Annotated[bool, typer.Option("--card", help="Print the whole public card (JSON).")] = False,
) -> None:
    """Prints this node's fingerprint, to read aloud and compare with a peer's owner."""
    try:
        text = (home / CARD_FILE).read_text()
        c = Card.from_json(text)
    except (OSError, NodeError) as e:
        _fail(e)
        return
    if card:
        out.print(text, end="", markup=False, highlight=False)
    else:
        out.print(f"{c.name}  {c.fingerprint}  {c.address or ''}")


@peers_app.command("add")
def peers_add(
    card_file: Annotated[Path, typer.Argument(help="The peer's card.json.")],
    fingerprint: Annotated[
        str | None, typer.Option(help="The fingerprint the peer's owner read to you; it must match.")
    ] = None,
    yes: Annotated[
        bool, typer.Option("--yes", help="Trust the card without a compared fingerprint.")
    ] = False,
    address: Annotated[str | None, typer.Option(help="Override the card's HOST:PORT.")] = None,
    home: HOME = DEFAULT_HOME,
) -> None:
    """Trusts a peer's card (checked: its certificate must be its own key's)."""
    try:
        card = Card.from_json(card_file.read_text())
        if address:
            card = Card(card.name, address, card.signing_key, card.sealing_key, card.certificate)
        ks = Keystore.load(home / PEERS_FILE)
        ks.add(card, fingerprint, yes)
        home.mkdir(parents=True, exist_ok=True)
        ks.save()
    except (OSError, NodeError) as e:
        _fail(e)
        return
    out.print(f"trusted {card.name} ({card.fingerprint}) at {card.address}")


@peers_app.command("list")
def peers_list(home: HOME = DEFAULT_HOME) -> None:
    """Lists the trusted peers."""
    try:
        ks = Keystore.load(home / PEERS_FILE)
    except NodeError as e:
        _fail(e)
        return
    table = Table("name", "fingerprint", "address")
    for c in ks.cards():
        table.add_row(c.name, c.fingerprint, c.address or "")
    out.print(table)


@peers_app.command("remove")
def peers_remove(
    peer: Annotated[str, typer.Argument(help="Name or fingerprint.")], home: HOME = DEFAULT_HOME
) -> None:
    """Stops trusting a peer (a running node keeps it until it restarts)."""
    try:
        ks = Keystore.load(home / PEERS_FILE)
        card = ks.remove(peer)
        ks.save()
    except NodeError as e:
        _fail(e)
        return
    out.print(f"removed {card.name} ({card.fingerprint})")


def _chat_handler(console: Console) -> Handler:
    async def chat(m: Message) -> bytes:
        stamp = time.strftime("%H:%M:%S")
        console.print(f"[dim]{stamp}[/] [bold]{escape(printable(m.peer.name))}[/]: ", end="", highlight=False)
        console.print(printable(m.payload.decode("utf-8", "replace")), markup=False, highlight=False)
        return b"ok"

    return chat


@node_app.command("listen")
def listen(
    home: HOME = DEFAULT_HOME,
    host: BIND_HOST = None,
    port: BIND_PORT = None,
    seconds: Annotated[
        float | None, typer.Option(help="Stop after this long (default: until Ctrl-C).")
    ] = None,
) -> None:
    """Listens for peers and prints the messages they send."""
    node = _open(home)
    h, p = node.identity.card.host_port() if node.identity.card.address else ("127.0.0.1", 7800)

    async def main() -> None:
        node.route("chat", _chat_handler(out))
        bound = await node.start(host or h, p if port is None else port)
        out.print(f"{node.name} ({node.identity.card.fingerprint}) listening on {bound[0]}:{bound[1]}")
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(stop.wait(), seconds)
        await node.close()

    _run(main())


def _run(coro: Coroutine[Any, Any, T]) -> T:
    """Runs a node command; an OS error (a port in use, a missing file) is one line and exit 2."""
    import uvloop

    try:
        return uvloop.run(coro)
    except OSError as err:
        fail(Console(stderr=True), err)


@node_app.command("send")
def send(
    peer: Annotated[str, typer.Argument(help="Name or fingerprint of a trusted peer.")],
    message: Annotated[str, typer.Argument(help="The text to send.")],
    home: HOME = DEFAULT_HOME,
) -> None:
    """Sends one message and waits for the peer to acknowledge it."""
    node = _open(home)

    async def main() -> None:
        try:
            t0 = time.perf_counter()
            await node.request(peer, "chat", message.encode(), timeout=30)
            out.print(f"delivered to {peer} in {(time.perf_counter() - t0) * 1e3:.1f} ms")
        except (NodeError, asyncio.TimeoutError) as e:
            _fail(e)
        finally:
            await node.close()

    _run(main())


@node_app.command("broadcast")
def broadcast(
    message: Annotated[str, typer.Argument(help="The text to send to every trusted peer.")],
    home: HOME = DEFAULT_HOME,
) -> None:
    """Sends a message to every trusted peer in parallel and shows each one's outcome."""
    node = _open(home)

    async def main() -> int:
        try:
            results = await node.broadcast("chat", message.encode())
        finally:
            await node.close()
        table = Table("peer", "outcome", "ms")
        for name, r in sorted(results.items()):
            table.add_row(name, "delivered" if r.ok else f"[red]{r.error}[/]", f"{r.seconds * 1e3:.1f}")
        out.print(table)
        return 0 if all(r.ok for r in results.values()) else 1

    raise typer.Exit(_run(main()))


@node_app.command("chat")
def chat(home: HOME = DEFAULT_HOME) -> None:
    """An interactive messenger: messages from peers appear above the line you type. Type /help for the
    commands. Each message you send shows whether it was delivered, or is queued for an offline peer (sent
    when it comes back, in order, even after a restart). The history is kept sealed to your node key in
    HOME. A line starting with / is never sent as a message."""
    from prompt_toolkit import PromptSession
    from prompt_toolkit.history import InMemoryHistory
    from prompt_toolkit.patch_stdout import patch_stdout

    from votum.nodes.chat import Chat

    node = _open(home)

    async def main() -> None:
        if node.identity.card.address:
            h, p = node.identity.card.host_port()
            await node.start(h, p)
        # typed lines come back with the arrow keys in this session only: nothing typed is kept in the clear
        session: PromptSession[str] = PromptSession(history=InMemoryHistory())
        with patch_stdout(raw=True):
            talk = Chat(node, lambda line: print(line, flush=True))
            talk.start()
            print(f"{node.name} ({node.identity.card.fingerprint}): /help lists the commands", flush=True)
            try:
                while True:
                    try:
                        line = await session.prompt_async(f"{talk.current or ''}> ")
                    except (EOFError, KeyboardInterrupt):
                        break
                    if not talk.command(line):
                        break
            finally:
                await talk.close()
                await node.close()

    _run(main())


@node_app.command("bench")
def bench(quick: Annotated[bool, typer.Option(help="A fifth of the repetitions.")] = False) -> None:
    """Measures the channels on loopback (a listening process and this one) against seed 002's figures."""
    from votum.nodes.bench import Row, run_bench

    table = Table("what", "votum", "seed 002", "target")

    def report(row: Row) -> None:
        out.print(f"{row.what}: {row.figure}")
        table.add_row(row.what, row.figure, row.seed, row.target)

    run_bench(report, quick)
    out.print(table)


@node_app.command("guardian")
def guardian(
    home: HOME = DEFAULT_HOME,
    host: BIND_HOST = None,
    port: BIND_PORT = None,
    coordinator: Annotated[
        str, typer.Option(help="The coordinator's name in this node's keystore.")
    ] = "coordinator",
    once: Annotated[bool, typer.Option(help="Stop when the ceremony finishes or aborts.")] = True,
) -> None:
    """Serves as a guardian in a key ceremony driven by the coordinator (votum ceremony --join, spec/96)."""
    from votum.parties.ceremony import serve_guardian

    card = Card.from_json((home / "card.json").read_text())
    h, p = card.host_port() if card.address else ("127.0.0.1", 7800)

    def announce(address: str) -> None:
        # one plain line, flushed: a launcher reads the address from it
        print(f"guardian node {card.name} ({card.fingerprint}) listening on {address}", flush=True)

    try:
        serve_guardian(home, host or h, p if port is None else port, coordinator, None, once, announce)
    except NodeError as e:
        _fail(e)


@node_app.command("sv-party")
def sv_party(
    home: HOME = DEFAULT_HOME,
    host: BIND_HOST = None,
    port: BIND_PORT = None,
) -> None:
    """Serves as one party of a split-value election (the board, the voters' client or a mix server, as the
    controller assigns; `votum sv --processes --join`, spec/97.13). The node's keystore must trust the
    controller (named `controller`) and the other parties; it stops when the election ends."""
    from votum.parties.sv import serve

    card = Card.from_json((home / "card.json").read_text())
    h, p = card.host_port() if card.address else ("127.0.0.1", 7800)

    def announce(address: str) -> None:
        print(f"split-value party {card.name} ({card.fingerprint}) listening on {address}", flush=True)

    try:
        serve(home, host or h, p if port is None else port, None, announce)
    except NodeError as e:
        _fail(e)
