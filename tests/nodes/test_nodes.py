"""Channels between election parties (spec/95): nodes on loopback, with honest traffic and each refusal."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import os
import stat
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import msgpack  # type: ignore[import-untyped]
import pytest
import uvloop
from votum.channels import NodePeerKey, digests, signed_message
from votum.nodes import Card, ChannelSettings, Identity, Keystore, Message, Node, NodeSettings, keygen
from votum.nodes import errors as ne
from votum.nodes.channel import ENVELOPE_VERSION, Channel
from votum.nodes.identity import fingerprint, normalise_fingerprint
from votum.nodes.local import make_identities, start_mesh

T = TypeVar("T")


def run(coro: Awaitable[T], timeout: float = 60.0) -> T:
    async def bounded() -> T:
        return await asyncio.wait_for(coro, timeout)

    return uvloop.run(bounded())


@contextlib.asynccontextmanager
async def mesh(root: Path, n: int, settings: NodeSettings | None = None) -> AsyncIterator[list[Node]]:
    nodes = await start_mesh(make_identities(root, [f"n{i}" for i in range(n)]), settings)
    try:
        yield nodes
    finally:
        for node in nodes:
            await node.close()


async def echo(m: Message) -> bytes:
    return m.payload


def collect(node: Node, kind: str) -> list[bytes]:
    """Routes one-way messages of `kind` on `node` into the returned list, in arrival order."""
    got: list[bytes] = []

    async def keep(m: Message) -> None:
        got.append(m.payload)

    node.route(kind, keep)
    return got


async def until(condition: Callable[[], bool], seconds: float = 30.0) -> None:
    """Waits, polling, until `condition()` holds; the caller asserts on it afterwards."""
    for _ in range(int(seconds / 0.05)):
        if condition():
            return
        await asyncio.sleep(0.05)


def forge(
    ch: Channel,
    payloads: list[bytes],
    *,
    kind: str = "echo",
    msg_id: int = 0,
    seq: int | None = None,
    channel_id: bytes | None = None,
    sender: bytes | None = None,
    recipient: bytes | None = None,
    signer: Identity | None = None,
    hashes: list[bytes] | None = None,
    version: int = ENVELOPE_VERSION,
) -> None:
    """Writes a hand-made frame on `ch`, honest unless told otherwise; advances the sequence."""
    items = [[kind, msg_id, None, h] for h in (hashes or digests(payloads))]
    header = msgpack.packb(
        {
            "v": version,
            "ch": channel_id or ch.channel_id,
            "from": sender or ch.identity.node_id,
            "to": recipient or ch.peer.node_id,
            "seq": ch._send_seq if seq is None else seq,
            "items": items,
        },
        use_bin_type=True,
    )
    if seq is None:
        ch._send_seq += len(items)
    ch.write_frame(header, (signer or ch.identity).sign_header(header), payloads)


async def refused_with(ch: Channel, error: type[ne.NodeError]) -> ne.NodeError:
    """Waits for the peer's refusal to close `ch` and returns the error it carried."""
    await asyncio.wait_for(ch.wait_closed(), 10)
    assert ch.closed
    assert isinstance(ch.error, error), ch.error
    return ch.error


# -- identities and keystore ---------------------------------------------------------------------------------


def test_key_file_is_private_and_a_passphrase_protects_it(tmp_path: Path) -> None:
    card = keygen(tmp_path / "a", "a", "127.0.0.1:1", passphrase=b"correct horse")
    key = tmp_path / "a" / "key.pem"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert b"ENCRYPTED PRIVATE KEY" in key.read_bytes()
    ident = Identity(tmp_path / "a", b"correct horse")
    assert ident.card.node_id == card.node_id
    assert "PRIVATE" not in repr(ident) and card.fingerprint in repr(ident)
    # envelopes are signed natively with the same key the card and the certificate carry
    from cryptography.hazmat.primitives import serialization

    pem = key.read_bytes().split(b"-----BEGIN")[1]
    seed = serialization.load_pem_private_key(b"-----BEGIN" + pem, b"correct horse").private_bytes_raw()
    signer = ident._signing
    assert signer.verifying_key() == card.signing_key
    assert seed.hex() not in repr(signer) and seed.hex()[:16] not in repr(signer)
    assert NodePeerKey(card.signing_key).check_frame(b"h", ident.sign_header(b"h"), [], []) is None
    assert NodePeerKey(card.signing_key).check_frame(b"H", ident.sign_header(b"h"), [], []) == "bad-signature"
    with pytest.raises(ValueError):
        NodePeerKey(b"\x01" + bytes(31))  # the identity point: a small-order key
    # the seed's one Python copy is overwritten in place
    from votum.nodes.identity import _wipe

    copy = bytes(bytearray(seed))
    _wipe(copy)
    assert copy == bytes(32)
    with pytest.raises(ne.KeyFileError, match="passphrase"):
        Identity(tmp_path / "a", b"wrong")
    with pytest.raises(ne.KeyFileError):
        Identity(tmp_path / "a", None)
    os.chmod(key, 0o640)
    with pytest.raises(ne.KeyFileError, match="readable by others"):
        Identity(tmp_path / "a", b"correct horse")
    with pytest.raises(ne.KeyFileError, match="exists"):
        keygen(tmp_path / "a", "a", None)


def test_cards_fingerprints_and_the_keystore(tmp_path: Path) -> None:
    a = keygen(tmp_path / "a", "a", "127.0.0.1:1")
    b = keygen(tmp_path / "b", "b", "127.0.0.1:2")
    assert Card.from_json(a.to_json()) == a
    fp = a.fingerprint
    assert len(fp) == 39 and fp.count("-") == 7 and fp == fingerprint(a.node_id)
    assert normalise_fingerprint(fp.lower().replace("-", " ")) == fp
    # a card whose certificate is another node's is refused
    forged = dict(a.to_dict(), certificate=b.certificate)
    with pytest.raises(ne.KeyFileError, match="not for the card's signing key"):
        Card.from_dict(forged)
    ks = Keystore(path=tmp_path / "peers.json")
    with pytest.raises(ne.KeyFileError, match="fingerprint"):
        ks.add(b)  # trust needs the compared fingerprint, or an explicit yes
    with pytest.raises(ne.KeyFileError, match="not trusted"):
        ks.add(b, fingerprint=a.fingerprint)
    ks.add(b, fingerprint=b.fingerprint.lower())
    ks.add(a, yes=True)
    ks.save()
    again = Keystore.load(tmp_path / "peers.json")
    assert [c.name for c in again.cards()] == ["a", "b"]
    assert again.find(b.fingerprint) == b and again.find("b") == b
    # the same node again under another name and address replaces its entry
    moved = dataclasses.replace(b, name="bee", address="127.0.0.1:3")
    again.add(moved, fingerprint=b.fingerprint)
    assert again.find("bee") == moved and again.find(b.fingerprint) == moved
    with pytest.raises(ne.UnknownPeer):
        again.find("b")
    again.remove("a")
    with pytest.raises(ne.UnknownPeer):
        again.find("a")


def test_sealed_boxes_open_only_for_their_recipient_and_purpose(tmp_path: Path) -> None:
    for name in "abc":
        keygen(tmp_path / name, name, None)
    a, b, c = (Identity(tmp_path / name) for name in "abc")
    box = a.seal_for(b.card, "backup", b"a secret share")
    assert b"a secret share" not in box
    assert b.open_sealed(a.card, "backup", box) == b"a secret share"
    with pytest.raises(ne.SealError):
        c.open_sealed(a.card, "backup", box)  # another recipient
    with pytest.raises(ne.SealError):
        b.open_sealed(a.card, "vote-share", box)  # another purpose
    with pytest.raises(ne.SealError):
        b.open_sealed(c.card, "backup", box)  # claimed by another sender
    with pytest.raises(ne.SealError):
        b.open_sealed(a.card, "backup", box[:-1] + bytes([box[-1] ^ 1]))


# -- honest traffic ------------------------------------------------------------------------------------------


def test_two_nodes_requests_one_way_messages_in_order_and_sealed_payloads(tmp_path: Path) -> None:
    async def main() -> None:
        async with mesh(tmp_path, 2) as (a, b):
            got = collect(b, "note")
            b.route("echo", echo)
            assert await a.request("n1", "echo", b"hello") == b"hello"
            big = os.urandom(3 << 20)
            assert await a.request("n1", "echo", big) == big
            for i in range(500):
                await a.send("n1", "note", i.to_bytes(4, "big"))
            await until(lambda: len(got) == 500)
            assert got == [i.to_bytes(4, "big") for i in range(500)]

            async def open_box(m: Message) -> bytes:
                return b.open_sealed(m.peer, "share", m.payload)

            b.route("share", open_box)
            assert await a.request("n1", "share", a.seal("n1", "share", b"s3cret")) == b"s3cret"
            # both directions on their own connections; the pool reused one connection for all of a's traffic
            assert await b.request("n0", "ping", b"") == b""
            assert a.connections == 2 and b.connections == 2
            assert not a.refusals and not b.refusals

    run(main())


def test_ten_nodes_broadcast_each_to_all(tmp_path: Path) -> None:
    async def main() -> None:
        async with mesh(tmp_path, 10) as nodes:
            seen: dict[str, list[str]] = {n.name: [] for n in nodes}
            for node in nodes:

                async def hear(m: Message, me: str = node.name) -> bytes:
                    seen[me].append(m.peer.name)
                    return me.encode()

                node.route("hear", hear)
            results = await asyncio.gather(*(n.broadcast("hear", n.name.encode()) for n in nodes))
            for node, res in zip(nodes, results, strict=True):
                assert set(res) == {n.name for n in nodes} - {node.name}
                assert all(r.ok and r.response == name.encode() for name, r in res.items())
            for name, heard in seen.items():
                assert sorted(heard) == sorted(n.name for n in nodes if n.name != name)
            # a peer that is down shows as its own failed result, the others still answer
            await nodes[9].close()
            res = await nodes[0].broadcast("hear", b"again", timeout=5)
            assert isinstance(res["n9"].error, ne.PeerUnavailable)
            assert all(r.ok for name, r in res.items() if name != "n9")

    run(main(), timeout=120)


# -- refusals ------------------------------------------------------------------------------------------------


def test_an_unknown_key_is_refused_in_the_handshake(tmp_path: Path) -> None:
    async def main() -> None:
        async with mesh(tmp_path, 2) as (a, b):
            b.route("echo", echo)
            keygen(tmp_path / "stranger", "stranger", None)
            stranger = Node(Identity(tmp_path / "stranger"), Keystore())
            try:
                # the stranger trusts b, but b does not know the stranger
                stranger.trust(a.keystore.find("n1"), yes=True)
                with pytest.raises(ne.UnknownPeer):
                    await stranger.request("n1", "echo", b"let me in")
                # and a node refuses to dial a peer it does not know
                with pytest.raises(ne.UnknownPeer):
                    await a.request("stranger", "echo", b"x")
            finally:
                await stranger.close()
            assert await a.request("n1", "echo", b"still fine") == b"still fine"

    run(main())


def test_a_known_node_at_the_wrong_address_is_refused(tmp_path: Path) -> None:
    async def main() -> None:
        async with mesh(tmp_path, 3) as (a, _, c):
            c.route("echo", echo)
            # a believes n1 lives at n2's address
            a.keystore.add(
                dataclasses.replace(a.keystore.find("n1"), address=a.keystore.find("n2").address), yes=True
            )
            with pytest.raises(ne.WrongPeer, match="n2"):
                await a.request("n1", "echo", b"for n1 only")
            assert await a.request("n2", "echo", b"x") == b"x"

    run(main())


@pytest.mark.parametrize(
    ("how", "error", "code"),
    [
        ("bad-signature", ne.BadSignature, "bad-signature"),
        ("bad-digest", ne.BadDigest, "bad-digest"),
        ("replay", ne.BadSequence, "bad-sequence"),
        ("reorder", ne.BadSequence, "bad-sequence"),
        ("other-channel", ne.WrongChannel, "wrong-channel"),
        ("other-recipient", ne.WrongChannel, "wrong-channel"),
        ("signed-by-another-node", ne.WrongSender, "wrong-sender"),
        ("malformed", ne.MalformedFrame, "malformed"),
        ("old-version", ne.MalformedFrame, "malformed"),
        ("oversize", ne.FrameTooLarge, "frame-too-large"),
    ],
)
def test_a_bad_frame_is_refused_and_the_connection_closed(
    tmp_path: Path, how: str, error: type[ne.NodeError], code: str
) -> None:
    async def main() -> None:
        settings = NodeSettings(channel=ChannelSettings(max_frame=1 << 20))
        async with mesh(tmp_path, 3, settings) as (a, b, c):
            delivered = collect(b, "note")
            b.route("echo", echo)
            ch = await a.dial("n1")
            forge(ch, [b"first"], kind="note")  # an honest envelope, seq 1
            if how == "bad-signature":
                forge(ch, [b"x"], kind="note")  # honest, seq 2
                # the next frame claims a's node but is signed with another key
                ch.identity = _Resigner(ch.identity)  # type: ignore[assignment]
                forge(ch, [b"y"], kind="note")
            elif how == "bad-digest":
                forge(ch, [b"payload"], kind="note", hashes=digests([b"another payload"]))
            elif how == "replay":
                forge(ch, [b"again"], kind="note", seq=1)
            elif how == "reorder":
                forge(ch, [b"later"], kind="note", seq=5)
            elif how == "other-channel":
                forge(ch, [b"elsewhere"], kind="note", channel_id=bytes(32))
            elif how == "other-recipient":
                forge(ch, [b"for c"], kind="note", recipient=c.identity.node_id)
            elif how == "signed-by-another-node":
                forge(ch, [b"from c"], kind="note", sender=c.identity.node_id, signer=c.identity)
            elif how == "malformed":
                body = msgpack.packb(["not", "bytes"], use_bin_type=True)
                ch._writer.write(len(body).to_bytes(4, "big") + body)
            elif how == "old-version":  # a node of version 1, whose digests were SHA-256
                forge(ch, [b"v1"], kind="note", hashes=[hashlib.sha256(b"v1").digest()], version=1)
            elif how == "oversize":
                ch._writer.write((2 << 20).to_bytes(4, "big") + b"\0" * 1024)
            err = await refused_with(ch, error)
            assert err.code == code
            assert [r.code for r in b.refusals] == [code]
            # only what came before the bad frame was delivered
            expected = [b"first", b"x"] if how == "bad-signature" else [b"first"]
            assert delivered == expected
            # b still serves a's honest connections
            assert await a.request("n1", "echo", b"ok") == b"ok"

    run(main())


class _Resigner:
    """An identity that signs with a fresh key: envelopes that claim its node but do not verify."""

    def __init__(self, real: Identity) -> None:
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        self._key = Ed25519PrivateKey.generate()
        self.node_id = real.node_id
        self.name = real.name

    def sign_header(self, header: bytes) -> bytes:
        return self._key.sign(signed_message(header))


def test_no_handler_and_a_failing_handler_keep_the_connection(tmp_path: Path) -> None:
    async def main() -> None:
        async with mesh(tmp_path, 2) as (a, b):
            b.route("echo", echo)

            async def boom(m: Message) -> bytes:
                raise RuntimeError("the handler broke")

            b.route("boom", boom)
            ch = await a.dial("n1")
            with pytest.raises(ne.NoHandler):
                await ch.request("nobody-home", b"")
            with pytest.raises(ne.HandlerError, match="the handler broke"):
                await ch.request("boom", b"")
            assert not ch.closed
            assert await ch.request("echo", b"kept") == b"kept"
            # a payload too big for a frame is refused before it is sent; the connection stays
            with pytest.raises(ne.FrameTooLarge):
                await ch.request("echo", b"\0" * (65 << 20))
            assert await ch.request("echo", b"still") == b"still"
            await ch.close()

    run(main())


def test_a_tls_record_altered_on_the_wire_closes_the_connection(tmp_path: Path) -> None:
    async def main() -> None:
        async with mesh(tmp_path, 2) as (a, b):
            b.route("echo", echo)
            target = a.keystore.find("n1").host_port()
            flipped = asyncio.Event()

            async def pipe(r: asyncio.StreamReader, w: asyncio.StreamWriter, tamper: bool) -> None:
                seen = 0
                try:
                    while data := await r.read(65536):
                        seen += len(data)
                        if tamper and seen > 4096 and not flipped.is_set():
                            data = data[:-1] + bytes([data[-1] ^ 0x01])
                            flipped.set()
                        w.write(data)
                        await w.drain()
                finally:
                    w.close()

            async def proxy(cr: asyncio.StreamReader, cw: asyncio.StreamWriter) -> None:
                sr, sw = await asyncio.open_connection(*target)
                await asyncio.gather(pipe(cr, sw, True), pipe(sr, cw, False), return_exceptions=True)

            server = await asyncio.start_server(proxy, "127.0.0.1", 0)
            paddr = server.sockets[0].getsockname()
            a.keystore.add(
                dataclasses.replace(a.keystore.find("n1"), address=f"{paddr[0]}:{paddr[1]}"), yes=True
            )
            ch = await a.dial("n1")
            with pytest.raises(ne.PeerUnavailable):
                for _ in range(100):
                    await ch.request("echo", b"z" * 1000, timeout=10)
            assert flipped.is_set()
            await ch.wait_closed()
            server.close()
            await server.wait_closed()

    run(main())


def test_a_peer_dying_mid_frame_delivers_nothing_and_breaks_only_its_requests(tmp_path: Path) -> None:
    async def main() -> None:
        async with mesh(tmp_path, 2) as (a, b):
            delivered = collect(b, "note")
            b.route("echo", echo)
            ch = await a.dial("n1")
            # half a frame, then the connection drops
            ch._writer.write((1000).to_bytes(4, "big") + b"\x93" + b"\0" * 100)
            await asyncio.sleep(0)
            ch._writer.transport.abort()
            await ch.wait_closed()
            assert delivered == []
            assert await a.request("n1", "echo", b"fine") == b"fine"

            # b dies while answering: a's request in flight fails with PeerUnavailable
            async def die(m: Message) -> bytes:
                m.channel._writer.transport.abort()
                await asyncio.sleep(30)
                return b""

            b.route("die", die)
            with pytest.raises(ne.PeerUnavailable):
                await a.request("n1", "die", b"", timeout=20)

    run(main())


def test_a_full_queue_holds_the_sender_back_and_loses_nothing(tmp_path: Path) -> None:
    """A slow reader (its handler waits) with a queue of two frames: the sender is held back by flow control
    until the reader goes on, and every message arrives, in order."""

    async def main() -> None:
        settings = NodeSettings(channel=ChannelSettings(queue_frames=2, out_envelopes=4, out_bytes=2 << 20))
        async with mesh(tmp_path, 2, settings) as (a, b):
            go = asyncio.Event()
            got: list[int] = []

            async def slow(m: Message) -> None:
                await go.wait()
                got.append(int.from_bytes(m.payload[:4], "big"))

            b.route("slow", slow)
            sent = 0
            total = 64
            chunk = 1 << 20

            async def sender() -> None:
                nonlocal sent
                for i in range(total):
                    await a.send("n1", "slow", i.to_bytes(4, "big") + b"\0" * (chunk - 4))
                    sent += 1

            task = asyncio.create_task(sender())
            # wait until the sender stops making progress (bounded: it must stall well before the end)
            last, still = -1, 0
            for _ in range(600):
                await asyncio.sleep(0.05)
                still = still + 1 if sent == last else 0
                last = sent
                if still >= 6 or task.done():
                    break
            assert not task.done() and sent < total, "flow control did not hold the sender back"
            assert got == []
            go.set()
            await asyncio.wait_for(task, 60)
            await until(lambda: len(got) == total)
            assert got == list(range(total))
            assert not a.refusals and not b.refusals

    run(main(), timeout=120)


def test_a_pooled_connection_to_a_restarted_peer_is_replaced(tmp_path: Path) -> None:
    async def main() -> None:
        async with mesh(tmp_path, 2) as (a, b):
            b.route("echo", echo)
            assert await a.request("n1", "echo", b"before") == b"before"
            old = a._pools[b.identity.node_id].channels[0]
            host, port = a.keystore.find("n1").host_port()
            await b.close()
            b2 = Node(Identity(tmp_path / "n1"), Keystore([a.identity.card]))
            b2.route("echo", echo)
            await b2.start(host, port)
            try:
                assert await a.request("n1", "echo", b"after") == b"after"
                assert old.closed
                assert a._pools[b.identity.node_id].channels[0] is not old
                # the restarted node has new ticket keys: a's saved session is declined, a full handshake runs
                assert not _resumed(a._pools[b.identity.node_id].channels[0])
            finally:
                await b2.close()
            # with nobody listening, dialling gives up after the connect timeout with a typed error
            a.settings = dataclasses.replace(a.settings, connect_timeout=0.5)
            with pytest.raises(ne.PeerUnavailable):
                await a.request("n1", "echo", b"nobody")

    run(main())


def _resumed(ch: Channel) -> bool:
    return bool(ch._writer.get_extra_info("ssl_object").session_reused)


def test_a_new_connection_resumes_tls_and_resumption_does_not_outlive_trust(tmp_path: Path) -> None:
    async def main() -> None:
        async with mesh(tmp_path, 3) as (a, b, c):
            b.route("echo", echo)
            first = await a.dial("n1")
            assert not _resumed(first)
            await first.close()
            again = await a.dial("n1")
            assert _resumed(again)  # no certificates signed or checked this time
            assert await again.request("echo", b"resumed") == b"resumed"
            # b's side of the first connection may still be closing: look for the resumed one
            await until(lambda: any(_resumed(ch) for ch in b._accepted))
            assert [ch.peer.name for ch in b._accepted if _resumed(ch)] == ["n0"]
            await again.close()
            # a's ticket from b is no use on the way to c
            to_c = await a.dial("n2")
            assert not _resumed(to_c)
            await to_c.close()
            # b stops trusting a: a resumed session is refused like a full handshake
            b.keystore.remove("n0")
            with pytest.raises(ne.UnknownPeer):
                await a.dial("n1")
            assert await c.request("n1", "echo", b"others unaffected") == b"others unaffected"

    run(main())


def test_idle_connections_are_closed_and_validated(tmp_path: Path) -> None:
    async def main() -> None:
        settings = NodeSettings(idle_timeout=0.3, validate_after=0.0)
        async with mesh(tmp_path, 2, settings) as (a, b):
            b.route("echo", echo)
            assert await a.request("n1", "echo", b"1") == b"1"
            assert await a.request("n1", "echo", b"2") == b"2"  # validated by a ping first
            await until(lambda: a.connections == 0, 5.0)
            assert a.connections == 0
            assert await a.request("n1", "echo", b"3") == b"3"

    run(main())


# -- the command line ----------------------------------------------------------------------------------------


def test_node_command_line_identity_and_peers(tmp_path: Path) -> None:
    from typer.testing import CliRunner
    from votum.cli import app

    runner = CliRunner()
    a, b = tmp_path / "a", tmp_path / "b"
    r = runner.invoke(
        app, ["node", "keygen", "--name", "alice", "--address", "127.0.0.1:7801", "--home", str(a)]
    )
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["node", "keygen", "--name", "bob", "--home", str(b)])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["node", "fingerprint", "--home", str(b)])
    assert r.exit_code == 0
    bob_fp = r.output.split()[1]
    assert bob_fp == Card.from_json((b / "card.json").read_text()).fingerprint
    # a fingerprint that does not match is refused and nothing is stored
    alice_fp = Card.from_json((a / "card.json").read_text()).fingerprint
    r = runner.invoke(
        app, ["node", "peers", "add", str(b / "card.json"), "--fingerprint", alice_fp, "--home", str(a)]
    )
    assert r.exit_code == 1 and "not trusted" in r.output
    assert not (a / "peers.json").exists()
    r = runner.invoke(
        app, ["node", "peers", "add", str(b / "card.json"), "--fingerprint", bob_fp, "--home", str(a)]
    )
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["node", "peers", "list", "--home", str(a)])
    assert "bob" in r.output and bob_fp in r.output
    r = runner.invoke(app, ["node", "send", "carol", "hi", "--home", str(a)])
    assert r.exit_code == 1 and "unknown-peer" in r.output
    r = runner.invoke(app, ["node", "peers", "remove", "bob", "--home", str(a)])
    assert r.exit_code == 0
    assert Keystore.load(a / "peers.json").cards() == []


def test_a_stream_of_hundreds_of_mib_goes_through_without_being_held_whole(tmp_path: Path) -> None:
    import tracemalloc

    from votum.nodes.streams import FileSink, file_chunks

    size = 200 << 20
    source = tmp_path / "big.bin"
    digest = hashlib.sha256()
    with open(source, "wb") as f:
        block = os.urandom(1 << 20)
        for i in range(size >> 20):
            chunk = i.to_bytes(4, "big") + block[4:]  # every MiB differs
            f.write(chunk)
            digest.update(chunk)

    async def main() -> None:
        async with mesh(tmp_path / "ids", 2) as (a, b):
            b.route_stream("file", lambda m: FileSink(tmp_path / "received.bin"))
            tracemalloc.start()
            try:
                answer = await a.stream("n1", "file", file_chunks(source))
                _, peak = tracemalloc.get_traced_memory()
            finally:
                tracemalloc.stop()
            assert answer == digest.digest()
            assert (tmp_path / "received.bin").stat().st_size == size
            # both sides live in this process: far less than the payload was ever held at once
            assert peak < size // 4, peak
            # a small stream, an empty one, and one from an in-memory iterable, on the same connection
            b.route_stream("mem", lambda m: FileSink(tmp_path / f"m{m.id}.bin"))
            assert await a.stream("n1", "mem", [b"abc", b"", b"def"]) == hashlib.sha256(b"abcdef").digest()
            assert await a.stream("n1", "mem", []) == hashlib.sha256(b"").digest()
            # a sink that never yields to the loop: the acknowledged chunks still come in order
            from votum.nodes.bench import _NullSink

            b.route_stream("null", lambda m: _NullSink())
            assert await a.stream("n1", "null", (block for _ in range(40))) == str(40 << 20).encode()

    run(main(), timeout=300)


def test_a_stream_whose_sink_fails_answers_with_the_error_and_leaves_no_file(tmp_path: Path) -> None:
    from votum.nodes.streams import FileSink

    class Full(FileSink):
        async def write(self, data: bytes | memoryview) -> None:
            if self.size >= 3 << 20:
                raise OSError("disk full")
            await super().write(data)

    async def main() -> None:
        async with mesh(tmp_path / "ids", 2) as (a, b):
            b.route_stream("file", lambda m: Full(tmp_path / "out.bin"))
            with pytest.raises(ne.HandlerError, match="disk full"):
                await a.stream("n1", "file", [os.urandom(8 << 20)])
            assert not list(tmp_path.glob("out.bin*"))
            # the connection is still good
            b.route("echo", echo)
            assert await a.request("n1", "echo", b"still here") == b"still here"

    run(main())


def test_listen_prints_peers_text_with_control_characters_escaped() -> None:
    """Issue 43, item 14: `votum node listen` printed a peer's text raw, so terminal escapes reached
    the terminal and a newline forged a line that seemed to come from another peer. Control and
    format characters are shown escaped; one message is one line."""
    import asyncio
    import io
    from types import SimpleNamespace

    from rich.console import Console
    from votum.cli.node import _chat_handler

    buffer = io.StringIO()
    console = Console(file=buffer, width=400, color_system=None)
    handler = _chat_handler(console)
    payload = "hi\n12:00:00 mallory: forged\x1b[2J\u202eevil".encode()
    message = SimpleNamespace(peer=SimpleNamespace(name="alice"), payload=payload)
    assert asyncio.run(handler(message)) == b"ok"  # type: ignore[arg-type]
    shown = buffer.getvalue()
    assert shown.count("\n") == 1 and shown.endswith("\n"), repr(shown)
    assert "\x1b" not in shown and "\u202e" not in shown
    assert "\\n12:00:00 mallory" in shown and "\\x1b[2J" in shown and "\\u202e" in shown


def test_silent_connections_cannot_crowd_out_a_trusted_peer(tmp_path: Path) -> None:
    """Issue 43, item 6: connections that never start TLS were not capped and were held 10 s each;
    1,100 of them from an outsider made every handshake of a trusted peer fail. Connections still in
    their handshake are now capped per address (4 here) and in all (10 here), and held for
    `handshake_timeout` (1 s here) at most: the ones beyond a cap are closed as they arrive, the
    rest after the deadline, and the trusted peer's requests go through meanwhile."""
    settings = NodeSettings(handshake_timeout=1.0, max_pending=10, max_pending_per_address=4)

    async def closed_within(reader: asyncio.StreamReader, seconds: float) -> bool:
        try:
            return await asyncio.wait_for(reader.read(1), seconds) == b""
        except TimeoutError:  # (an OSError: caught first)
            return False
        except OSError:
            return True

    async def main() -> None:
        async with mesh(tmp_path, 2, settings) as (a, b):
            b.route("echo", echo)
            host, port = a.keystore.find("n1").host_port()
            silent = []
            for source in ("127.0.0.2", "127.0.0.2", "127.0.0.2", "127.0.0.2", "127.0.0.2", "127.0.0.2",
                           "127.0.0.3", "127.0.0.3", "127.0.0.3", "127.0.0.3",
                           "127.0.0.4", "127.0.0.4", "127.0.0.4", "127.0.0.4"):  # fmt: skip
                silent.append(await asyncio.open_connection(host, port, local_addr=(source, 0)))
                await asyncio.sleep(0.01)  # accepted in this order
            early = await asyncio.gather(*(closed_within(reader, 0.3) for reader, _ in silent))
            # 127.0.0.2: 4 pending, its 5th and 6th closed; 127.0.0.3: 4 pending; 127.0.0.4: 2 pending
            # (10 in all), then over the total
            assert early == [False] * 4 + [True] * 2 + [False] * 6 + [True] * 2, early
            assert b.refused_pending == 4
            assert await a.request("n1", "echo", b"through") == b"through", "a trusted peer still gets in"
            late = await asyncio.gather(*(closed_within(reader, 3.0) for reader, _ in silent))
            assert all(late), "the handshake deadline closes the silent ones"
            for _, writer in silent:
                writer.close()
            assert await a.request("n1", "echo", b"again") == b"again"

    run(main())


def test_one_peer_cannot_hold_more_than_its_share_of_connections(tmp_path: Path) -> None:
    """Issue 43, item 8: a trusted peer could open any number of connections, each able to make the
    node buffer a frame of up to 64 MiB. One peer now holds at most `max_peer_connections` (3 here):
    the next is closed before its hello, named in the node's refusals, and one is let in again once
    one of the peer's connections closes."""
    settings = NodeSettings(max_peer_connections=3)

    async def main() -> None:
        async with mesh(tmp_path, 2, settings) as (a, b):
            b.route("echo", echo)
            held = [await a.dial("n1") for _ in range(3)]
            with pytest.raises(ne.NodeError):
                await a.dial("n1")
            assert [r.code for r in b.refusals] == ["too-many-connections"]
            await held.pop().close()
            await until(lambda: b.connections <= 2)
            again = await a.dial("n1")
            for ch in [*held, again]:
                await ch.close()

    run(main())


def test_a_slow_receiver_holds_back_the_sender_with_bounded_memory(tmp_path: Path) -> None:
    """Issue 42, C.14: a receiver whose one-way handler is slower than the sender kept up to 64 frames read
    ahead, whatever their size; the sender batches what it queues into frames of up to 16 MiB, so 64 KiB
    one-way messages grew a receiver to 320 MiB. What a connection reads ahead is now bounded in bytes: the
    sender waits (TCP's flow control) while the receiver's queue is full."""
    size, budget = 64 << 10, ChannelSettings().queue_bytes

    async def main() -> tuple[int, int, int]:
        async with mesh(tmp_path, 2) as (sender, receiver):
            release = asyncio.Event()
            handled = 0

            async def slow(m: Message) -> None:
                nonlocal handled
                await release.wait()
                handled += 1

            receiver.route("note", slow)
            payload = os.urandom(size)
            sent = 0

            async def flood() -> None:
                nonlocal sent
                for _ in range(8000):  # 500 MiB, far beyond any buffer on the way
                    await sender.send("n1", "note", payload)
                    sent += 1

            task = asyncio.create_task(flood())
            await asyncio.sleep(3.0)  # the sender runs until it is held back
            [channel] = receiver._accepted
            queued = sum(len(f) for f in channel._writer._frames)
            held_sent = sent
            release.set()
            await asyncio.wait_for(task, 120)
            await until(lambda: handled == 8000)
            return queued, held_sent, handled

    queued, held_sent, handled = run(main(), timeout=180)
    assert handled == 8000, "every message arrived, in the end"
    assert held_sent < 8000, "the sender was held back while the receiver was busy"
    # at most the budget plus the frame that crossed it, and that frame at most the sender's out_bytes
    assert queued <= budget + ChannelSettings().out_bytes + (1 << 20), f"{queued / 2**20:.0f} MiB read ahead"
