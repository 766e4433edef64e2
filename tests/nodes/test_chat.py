"""The messenger (`votum.nodes.chat`, spec/95.8; issue 42, C.7): commands are never sent, typing never waits
for a peer, a message for an offline peer is queued and delivered in order when it comes back (also after a
restart), the history is sealed to the node's key, and a peer's text cannot drive the terminal."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import pytest
import uvloop
from votum.localnet import free_port
from votum.nodes import Identity, Keystore, Message, Node, NodeSettings, keygen
from votum.nodes.chat import Chat, HistoryFile
from votum.nodes.errors import SealError

T = TypeVar("T")
FAST = NodeSettings(connect_timeout=0.3)


def run(coro: Awaitable[T], timeout: float = 60.0) -> T:
    async def bounded() -> T:
        return await asyncio.wait_for(coro, timeout)

    return uvloop.run(bounded())


async def until(condition: Callable[[], bool], seconds: float = 30.0) -> None:
    for _ in range(int(seconds / 0.02)):
        if condition():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("the condition did not come true in time")


class Pair:
    """alice (chatting) and bob, whose card names a port where nothing listens until `bob_up`."""

    def __init__(self, root: Path) -> None:
        self.alice_home, self.bob_home = root / "alice", root / "bob"
        alice_card = keygen(self.alice_home, "alice", None)
        bob_card = keygen(self.bob_home, "bob", None)
        self.port = free_port()
        self.bob_card = dataclasses.replace(bob_card, address=f"127.0.0.1:{self.port}")
        self.alice_card = alice_card
        self.bob_got: list[str] = []
        self.bob: Node | None = None

    def alice(self) -> Node:
        return Node(Identity(self.alice_home), Keystore([self.bob_card]), FAST)

    async def bob_up(self) -> Node:
        bob = Node(Identity(self.bob_home), Keystore([self.alice_card]), FAST)

        async def keep(m: Message) -> bytes:
            self.bob_got.append(m.payload.decode())
            return b"ok"

        bob.route("chat", keep)
        await bob.start("127.0.0.1", self.port)
        self.bob = bob
        return bob


def test_commands_are_not_sent_and_an_offline_peer_gets_its_messages_in_order_later(tmp_path: Path) -> None:
    pair = Pair(tmp_path)
    shown: list[str] = []

    async def main() -> None:
        alice = pair.alice()
        chat = Chat(alice, shown.append, retry=(0.05, 0.2))
        chat.start()
        # commands stay here: /help, an unknown command, /to, and a line with no peer chosen
        assert chat.command("/help") and chat.command("/frobnicate now") and chat.command("no peer yet")
        assert any("unknown command /frobnicate" in s for s in shown)
        assert any("no peer chosen" in s for s in shown)
        assert chat.command("/to bob")
        # bob is offline: the lines are accepted at once and queued, in order
        first, second = chat.send("bob", "first"), chat.send("bob", "second")
        assert chat.command("//slash line")
        await until(lambda: first.status == "queued")
        assert second.status == "sending" and pair.bob_got == []
        chat.command("/queue")
        assert any("to bob" in s and "first" in s for s in shown)
        bob = await pair.bob_up()
        await until(lambda: all(o.status == "delivered" for o in chat.sent.values()))
        assert pair.bob_got == ["first", "second", "/slash line"], "in order, once each, commands never"
        assert first.tries >= 2
        assert not chat.command("/quit")
        await chat.close()
        await alice.close()
        await bob.close()

    run(main())


def test_queued_messages_survive_a_restart_and_the_history_is_sealed(tmp_path: Path) -> None:
    pair = Pair(tmp_path)

    async def first_session() -> None:
        alice = pair.alice()
        chat = Chat(alice, lambda s: None, retry=(0.05, 0.2))
        chat.start()
        o = chat.send("bob", "meet at the counting centre at 9")
        await until(lambda: o.status == "queued")
        await chat.close()
        await alice.close()

    run(first_session())
    sealed = (pair.alice_home / "chat-history.sealed").read_bytes()
    assert b"counting centre" not in sealed, "the history is on disk in the clear"
    assert (pair.alice_home / "chat-history.sealed").stat().st_mode & 0o777 == 0o600
    records = HistoryFile(Identity(pair.alice_home)).read()
    assert [r["dir"] for r in records] == ["out", "status"] and records[1]["status"] == "queued"
    # another node's key does not open it
    with pytest.raises(SealError):
        HistoryFile(Identity(pair.bob_home), pair.alice_home / "chat-history.sealed").read()

    shown: list[str] = []

    async def second_session() -> None:
        await pair.bob_up()
        alice = pair.alice()
        chat = Chat(alice, shown.append, retry=(0.05, 0.2))
        chat.start()
        await until(lambda: pair.bob_got == ["meet at the counting centre at 9"])
        await until(lambda: all(o.status == "delivered" for o in chat.sent.values()))
        await chat.close()
        await alice.close()
        assert pair.bob is not None
        await pair.bob.close()

    run(second_session())
    assert any("queued again" in s for s in shown)
    assert HistoryFile(Identity(pair.alice_home)).read()[-1]["status"] == "delivered"
    # a third session has nothing left to send
    assert Chat(pair.alice(), lambda s: None).undelivered() == []


def test_a_peers_text_cannot_drive_the_terminal_and_a_refusal_is_shown(tmp_path: Path) -> None:
    pair = Pair(tmp_path)
    shown: list[str] = []

    async def main() -> None:
        bob = await pair.bob_up()
        alice_card = dataclasses.replace(pair.alice_card, address=None)
        alice = Node(Identity(pair.alice_home), Keystore([pair.bob_card]), FAST)
        chat = Chat(alice, shown.append)
        chat.start()
        h, p = await alice.start("127.0.0.1", 0)
        bob.trust(dataclasses.replace(alice_card, address=f"{h}:{p}"), fingerprint=alice_card.fingerprint)
        await bob.request("alice", "chat", "\x1b[2Jhi\nalice: fake line\u202e".encode())
        await until(lambda: any("hi" in s for s in shown))
        line = next(s for s in shown if "hi" in s)
        assert "\x1b" not in line and "\n" not in line and "\u202e" not in line
        assert "\\x1b[2J" in line and "\\n" in line
        # a peer that refuses (no chat handler) is a failure, shown, and the next message goes
        bob.handlers.pop("chat")
        refused = chat.send("bob", "are you there?")
        await until(lambda: refused.status == "failed")
        await chat.close()
        await alice.close()
        await bob.close()

    run(main())
