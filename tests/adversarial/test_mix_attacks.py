"""A rogue controller against the mixnet's parties (issue 45; spec/91.8, 91.9).

Before spec/91.9, `votum mix` ran every party in one process: the organiser held every trustee's share and
every mixer's permutation, so it could decrypt any list, or mix with a permutation it knew, and the record
would still verify. Now each authority and the voters' client is a party with its own copy of the board, and
the controller is one more party that may lie. Each route by which it could link a voter to a vote is
scripted here against the real party code on real nodes (every party on its own node, in this process, so
the tests can wrap the controller's requests):

- a trustee asked to decrypt before the cascade has run (the input list is the ballots in voter order);
- a mixer asked to shuffle twice;
- a shuffle shown again under the next mixer's name;
- a board shown to one party that is not the board (equivocation);
- a share "from a dealer" that the controller sends itself;
- a second dealing.

Each is refused by the party it targets; where the election can go on, it ends in a record that verifies.
The Rust tests (crates/votum-mixnet/tests/parties.rs) script the same attacks on the state machine, with a
shuffle the controller makes and signs itself, and were run with its checks removed, where they fail."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import msgpack  # type: ignore[import-untyped]
import uvloop
from votum.nodes import Node
from votum.nodes import errors as ne
from votum.nodes.local import make_identities, start_mesh
from votum.parties.mix import CONTROLLER, Election, MixFailed, Party, authority_name, coordinate, party_names
from votum.verifier import verify

T = TypeVar("T")
ELECTION = Election()
VOTERS_N = 12


def run(coro: Awaitable[T], timeout: float = 180.0) -> T:
    async def bounded() -> T:
        return await asyncio.wait_for(coro, timeout)

    return uvloop.run(bounded())


def pack(obj: object) -> bytes:
    return bytes(msgpack.packb(obj))


Send = Callable[..., Awaitable[bytes]]
#: (the controller's own request function, the parties, kind, recipient, body), awaited before each request;
#: what it returns, when not None, is sent instead of the body (the rogue controller's own bookkeeping)
Hook = Callable[[Send, dict[str, Party], str, Any, dict[str, Any]], Awaitable[dict[str, Any] | None]]


async def election(tmp_path: Path, hook: Hook) -> tuple[dict[str, Party], Path]:
    """An honest election through `coordinate`, with `hook` awaited before each of the controller's requests:
    where a rogue controller slips in its own."""
    names = [CONTROLLER, *party_names(ELECTION.authorities)]
    nodes: list[Node] = await start_mesh(make_identities(tmp_path / "homes", names))
    controller = nodes[0]
    parties = {n.name: Party(n) for n in nodes[1:]}
    original = controller.request

    async def request(who: Any, kind: str, payload: bytes, timeout: float | None = None) -> bytes:
        body = msgpack.unpackb(payload) if payload else {}
        instead = await hook(original, parties, kind, who, body)
        return await original(who, kind, payload if instead is None else pack(instead), timeout)

    controller.request = request  # type: ignore[method-assign]
    record = tmp_path / "mix.vmix"
    try:
        # the parties know the controller's address from the mesh: the roster adds none
        await coordinate(controller, "", ELECTION, VOTERS_N, record, timeout=60)
    finally:
        for node in nodes:
            await node.close()
    return parties, record


def own_head(parties: dict[str, Party], who: str) -> bytes:
    """What a party's copy holds: a rogue request that shows it nothing new."""
    party = parties[who].party
    assert party is not None
    return party.head()


async def refused(send: Send, who: str, kind: str, body: dict[str, Any]) -> str:
    """The refusal of a rogue request (the test fails if the party answers)."""
    try:
        answer = await send(who, kind, pack(body), 10)
    except ne.NodeError as e:
        return str(e)
    raise AssertionError(f"{who} answered {kind}: {len(answer)} bytes")


def test_an_honest_election_between_the_parties_verifies(tmp_path: Path) -> None:
    async def ignore(*_: Any) -> dict[str, Any] | None:
        return None

    _, record = run(election(tmp_path, ignore))
    report = verify(record)
    assert report.passed, report.not_passed()
    signed = report.check("V-MIX-08")
    assert signed.checked == 9 and not signed.warnings


def test_a_trustee_refuses_to_decrypt_before_the_cascade_has_run(tmp_path: Path) -> None:
    """Right after the ballots, the last list is the input: the ballots in voter order. A trustee that
    decrypted it (and a quorum with it) would publish every voter's vote by name."""
    refusals: list[str] = []

    async def hook(
        send: Send, parties: dict[str, Party], kind: str, who: Any, body: dict[str, Any]
    ) -> dict[str, Any] | None:
        if kind == "mix/shuffle" and who == authority_name(1) and not refusals:
            # the board up to the ballots, shown with the decryption request, then the honest request
            # without them (this controller's own bookkeeping: it has shown them)
            rogue = {"election": body["election"], "entries": body["entries"], "head": body["head"]}
            refusals.append(await refused(send, who, "mix/decrypt", rogue))
            return dict(body, entries=[])
        return None

    _, record = run(election(tmp_path, hook))
    assert len(refusals) == 1 and "decryption is not due" in refusals[0], refusals
    assert verify(record).passed


def test_a_mixer_shuffles_once_and_a_shuffle_under_another_name_is_refused(tmp_path: Path) -> None:
    """A second shuffle from mixer 1 is refused by the mixer. A shuffle shown to trustee 3 again as the next
    mixer's is refused by the trustee's copy, naming that mixer (its proof is not of the list before it, nor
    its signature that mixer's); the trustee then refuses to act at all, and the run stops naming it."""
    refusals: list[str] = []
    forged_as: list[str] = []

    async def hook(
        send: Send, parties: dict[str, Party], kind: str, who: Any, body: dict[str, Any]
    ) -> dict[str, Any] | None:
        if kind == "mix/shuffle" and who == authority_name(2) and not refusals:
            again = {
                "election": body["election"],
                "entries": [],
                "head": own_head(parties, authority_name(1)),
            }
            refusals.append(await refused(send, authority_name(1), "mix/shuffle", again))
        entries = body.get("entries", [])
        mixes = [e for e in entries if e[0] == "mix"]
        if kind == "mix/sync" and who == authority_name(3) and mixes and len(refusals) == 1:
            # the last shuffle shown, and its mixer's signature, again as the next mixer's
            name = mixes[-1][1]
            signature = next(e for e in entries if e[0] == "signature" and e[1] == name)
            forged_as.append(f"mix-{int(name.removeprefix('mix-')) + 1}")
            forged = [
                *entries,
                ["mix", forged_as[0], mixes[-1][2]],
                ["signature", forged_as[0], signature[2]],
            ]
            rogue = {"election": body["election"], "entries": forged, "head": body["head"]}
            refusals.append(await refused(send, who, "mix/sync", rogue))
            return dict(body, entries=[])
        return None

    try:
        run(election(tmp_path, hook))
        raise AssertionError("trustee 3, shown a forged shuffle, went on")
    except MixFailed as e:  # trustee 3 refuses from then on
        assert e.party == authority_name(3), e
        assert "failed" in e.detail, e
    assert "has shuffled" in refusals[0], refusals
    assert f"mixer {forged_as[0].removeprefix('mix-')}" in refusals[1], refusals


def test_a_party_shown_another_board_refuses_everything_after(tmp_path: Path) -> None:
    """The controller shows the voters' client a head that is not the board's: the client refuses, and the
    election cannot go on without it."""
    refusals: list[str] = []

    async def hook(
        send: Send, parties: dict[str, Party], kind: str, who: Any, body: dict[str, Any]
    ) -> dict[str, Any] | None:
        if kind == "mix/cast" and not refusals:
            rogue = {"election": body["election"], "entries": body["entries"], "head": bytes(32)}
            refusals.append(await refused(send, who, "mix/sync", rogue))
        return None

    try:
        run(election(tmp_path, hook))
        raise AssertionError("the voters' client cast after being shown another board")
    except MixFailed as e:
        assert e.party == "voters", e
    assert "another board" in refusals[0], refusals


def test_shares_come_only_from_their_dealer_and_each_trustee_deals_once(tmp_path: Path) -> None:
    refusals: list[str] = []

    async def hook(
        send: Send, parties: dict[str, Party], kind: str, who: Any, body: dict[str, Any]
    ) -> dict[str, Any] | None:
        if kind == "mix/cast" and not refusals:
            election_id = body["election"]
            # a "share from trustee 1" that the controller sends itself
            fake = {"election": election_id, "dealer": 1, "box": b"\x00" * 64}
            refusals.append(await refused(send, authority_name(2), "mix/share", fake))
            # trustee 1 asked to deal again: new shares would let a coalition of the controller and trustee 2
            # learn two points of trustee 1's polynomials
            again = {"election": election_id, "entries": [], "head": own_head(parties, authority_name(1))}
            refusals.append(await refused(send, authority_name(1), "mix/deal", again))
        return None

    _, record = run(election(tmp_path, hook))
    assert "wrong-sender" in refusals[0], refusals
    assert "dealt already" in refusals[1], refusals
    assert verify(record).passed
