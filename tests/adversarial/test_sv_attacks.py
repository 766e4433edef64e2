"""A rogue controller against the split-value parties (issue 45, finding 3; spec/97.13, 97.14).

The controller drives a split-value election between separate parties, and it is one more party that may lie.
Each route by which it could link ballots to votes is scripted here against the real party code on real nodes
(every party on its own node, in this process, so the tests can wrap the controller's requests):

- a test seed sent over the network, from which every secret follows;
- a second cut (a new h₁), after which the column leaders would reveal an opened copy's permutations;
- a last-column server's `opened` payload for a checked copy;
- a second h₂, after which a first-column server would post the other half of every input;
- an entry name the board already holds;
- a checked copy's path of the controller's choosing, which would align a last-column server's t-values
  with other voters' values than its copy's.

Each must be refused by the party, and the honest election must still verify."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import msgpack  # type: ignore[import-untyped]
import pytest
import uvloop
from votum import SvParams, sv_cut
from votum.nodes import Node
from votum.nodes import errors as ne
from votum.nodes.local import make_identities, start_mesh
from votum.parties.sv import BOARD, CONTROLLER, VOTERS, Party, coordinate, server_name
from votum.parties.sv import test_seed as seed_of
from votum.verifier import verify

T = TypeVar("T")
PARAMS = SvParams([("Q", ["Yes", "No"], 0)], n_fail=0, n_leak=1)
VOTERS_N = 12


def run(coro: Awaitable[T], timeout: float = 180.0) -> T:
    async def bounded() -> T:
        return await asyncio.wait_for(coro, timeout)

    return uvloop.run(bounded())


def pack(obj: object) -> bytes:
    return bytes(msgpack.packb(obj))


Send = Callable[..., Awaitable[bytes]]
#: (the controller's own request function, the controller, the parties, kind, recipient, body)
Hook = Callable[[Send, Node, dict[str, Party], str, Any, dict[str, Any]], Awaitable[None]]


async def election(tmp_path: Path, hook: Hook) -> tuple[dict[str, Party], Path]:
    """An honest election through `coordinate`, with `hook(controller, parties, kind, to, body)` awaited
    before each of the controller's requests: where a rogue controller slips in its own."""
    servers = [server_name(i, j) for i in range(1, PARAMS.rows + 1) for j in range(1, PARAMS.columns + 1)]
    names = [CONTROLLER, BOARD, VOTERS, *servers]
    nodes: list[Node] = await start_mesh(make_identities(tmp_path / "homes", names))
    controller = nodes[0]
    parties = {n.name: Party(n) for n in nodes[1:]}
    original = controller.request

    async def request(who: Any, kind: str, payload: bytes, timeout: float | None = None) -> bytes:
        body = msgpack.unpackb(payload) if payload else {}
        await hook(original, controller, parties, kind, who, body)
        return await original(who, kind, payload, timeout)

    controller.request = request  # type: ignore[method-assign]
    record = tmp_path / "sv.vsv"
    try:
        await coordinate(controller, PARAMS, VOTERS_N, record, timeout=60)
    finally:
        for node in nodes:
            await node.close()
    return parties, record


async def ignore(*_: Any) -> None:
    return None


def test_an_honest_election_between_the_parties_verifies(tmp_path: Path) -> None:
    _, record = run(election(tmp_path, ignore))
    assert verify(record).passed


def test_a_seed_sent_by_the_controller_is_refused(tmp_path: Path) -> None:
    """Today `sv/setup` takes a test seed from the controller, and every secret of the party follows from it
    (column seeds, output seeds, the voters' shares). A seed comes only from the party's own environment."""
    refused: list[str] = []

    async def hook(
        send: Send, controller: Node, parties: dict[str, Party], kind: str, who: Any, body: dict[str, Any]
    ) -> None:
        if (
            kind == "sv/setup"
            and body.get("role") == "server"
            and body.get("row") == 1
            and body.get("column") == 1
        ):
            rogue = dict(body, seed=1234)
            try:
                await send(server_name(1, 1), "sv/setup", pack(rogue), 10)
            except ne.NodeError as e:
                refused.append(str(e))

    parties, record = run(election(tmp_path, hook))
    assert parties[server_name(1, 1)].column_seed != seed_of(1234, "column-1"), (
        "the controller chose the seed"
    )
    assert refused and "seed" in refused[0]
    assert verify(record).passed


def test_a_second_cut_is_refused_and_no_opened_permutation_leaves_a_leader(tmp_path: Path) -> None:
    leaked: list[bytes] = []
    refusals: list[str] = []

    async def hook(
        send: Send, controller: Node, parties: dict[str, Party], kind: str, who: Any, body: dict[str, Any]
    ) -> None:
        if kind != "sv/send-splits" or leaked or refusals:
            return
        election_id = body["election"]
        # a cut of the controller's choosing, then the permutation of a copy the record's cut opens
        real = parties[server_name(1, 1)].checked
        fake_h1 = bytes(32)
        fake = set(sv_cut(fake_h1, PARAMS.copies))
        target = next(k for k in fake if k not in real)
        try:
            await send(server_name(1, 1), "sv/cut", pack({"election": election_id, "h1": fake_h1}), 10)
            leaked.append(
                await send(
                    server_name(1, 1),
                    "sv/permutations",
                    pack({"election": election_id, "race": 0, "copy": target, "n": VOTERS_N}),
                    10,
                )
            )
        except ne.NodeError as e:
            refusals.append(str(e))

    _, record = run(election(tmp_path, hook))
    assert not leaked, "a column leader revealed the permutation of an opened copy"
    assert refusals
    assert verify(record).passed


def test_a_last_server_gives_no_opened_payload_for_a_checked_copy(tmp_path: Path) -> None:
    leaked: list[bytes] = []
    refusals: list[str] = []

    async def hook(
        send: Send, controller: Node, parties: dict[str, Party], kind: str, who: Any, body: dict[str, Any]
    ) -> None:
        if kind != "sv/send-splits" or leaked or refusals:
            return
        checked = min(parties[server_name(1, 1)].checked)
        last = server_name(1, PARAMS.columns)
        try:
            leaked.append(
                await send(
                    last, "sv/opened", pack({"election": body["election"], "race": 0, "copy": checked}), 10
                )
            )
        except ne.NodeError as e:
            refusals.append(str(e))

    _, record = run(election(tmp_path, hook))
    assert not leaked, "a last-column server opened a checked copy"
    assert refusals
    assert verify(record).passed


def test_a_second_sides_challenge_is_refused(tmp_path: Path) -> None:
    """With two h₂ a first-column server would post both halves of many inputs: their votes."""
    leaked: list[bytes] = []
    refusals: list[str] = []

    async def hook(
        send: Send, controller: Node, parties: dict[str, Party], kind: str, who: Any, body: dict[str, Any]
    ) -> None:
        if kind != "sv/expect" or body.get("name") != "inputs-0-1" or leaked or refusals:
            return
        e_id, who = body["election"], body["poster"]
        other = bytes(32)
        try:
            await send(
                BOARD,
                "sv/expect",
                pack({"election": e_id, "kind": "inputs", "name": "inputs-0-1x", "poster": str(who)}),
                10,
            )
            leaked.append(
                await send(
                    who,
                    "sv/post",
                    pack({"election": e_id, "kind": "inputs", "name": "inputs-0-1x", "race": 0, "h2": other}),
                    10,
                )
            )
        except ne.NodeError as e:
            refusals.append(str(e))

    _, record = run(election(tmp_path, hook))
    assert not leaked, "a first-column server posted the inputs' halves for a second h2"
    assert refusals
    assert verify(record).passed


def test_the_board_refuses_an_entry_name_it_holds(tmp_path: Path) -> None:
    refusals: list[str] = []
    posted: list[bytes] = []

    async def hook(
        send: Send, controller: Node, parties: dict[str, Party], kind: str, who: Any, body: dict[str, Any]
    ) -> None:
        # before the honest announcement of the next root: the rogue's own announcement and post come first
        if kind != "sv/expect" or body.get("name") != "outputs-0-2" or posted or refusals:
            return
        e_id = body["election"]
        again = {
            "election": e_id,
            "kind": "outputs",
            "name": "outputs-0-1",
            "poster": server_name(1, PARAMS.columns),
        }
        try:
            await send(BOARD, "sv/expect", pack(again), 10)
            posted.append(
                await send(
                    server_name(1, PARAMS.columns),
                    "sv/post",
                    pack({"election": e_id, "kind": "outputs", "name": "outputs-0-1", "race": 0}),
                    10,
                )
            )
        except ne.NodeError as e:
            refusals.append(str(e))

    _, record = run(election(tmp_path, hook))
    assert not posted, "the board appended a second entry under one name"
    assert refusals
    assert verify(record).passed


@pytest.mark.parametrize("which", ["cut", "sides"])
def test_the_board_refuses_a_challenge_that_is_not_its_head(tmp_path: Path, which: str) -> None:
    """The controller posts the challenges; the board appends one only if it is the board's own head (and,
    for the cut, the head after every output root)."""
    refusals: list[str] = []

    async def hook(
        send: Send, controller: Node, parties: dict[str, Party], kind: str, who: Any, body: dict[str, Any]
    ) -> None:
        if kind != "sv/expect" or body.get("name") != which or refusals:
            return
        e_id = body["election"]
        await send(BOARD, "sv/expect", pack(body), 10)
        payload = bytes(32) + (bytes(sv_cut(bytes(32), PARAMS.copies)) if which == "cut" else b"")
        from votum.parties.sv import _blob

        try:
            await controller.stream(BOARD, "sv/entry", _blob({"kind": "challenge", "name": which}, payload))
        except ne.NodeError as e:
            refusals.append(str(e))
        _ = e_id

    _, record = run(election(tmp_path, hook))
    assert refusals, f"the board appended a {which} challenge of the controller's making"
    assert verify(record).passed


def test_ballots_whose_input_halves_went_public_are_never_mixed_again(tmp_path: Path) -> None:
    """Issue 45, finding 4. Election A fails before its sides are drawn; B reruns A's sealed ballots and fails
    after posting its input halves; rerunning A again (its own record never reached the sides) would draw
    fresh sides and publish the other half of about half the shares: their votes. The first-column servers
    keep each ballot set's lineage and refuse to reload one whose halves were ever revealed."""
    from votum.parties.sv import Rerun, SvFailed, run_local

    params = SvParams([("Q", ["Yes", "No"], 0)], n_fail=0, n_leak=1)
    votes: list[list[int | str]] = [[1 + i % 2] for i in range(10)]
    homes = tmp_path / "homes"
    first = tmp_path / "a.vsv"
    with pytest.raises(SvFailed):
        run(
            run_local(
                params, 10, first, homes, votes=votes, faults={server_name(2, 2): "die-in-mix"}, timeout=20
            )
        )
    second = tmp_path / "b.vsv"
    with pytest.raises(SvFailed) as b_failed:
        run(
            run_local(
                params,
                10,
                second,
                homes,
                faults={server_name(1, 2): "die-at-halves"},
                timeout=20,
                rerun=Rerun.from_record(first),
            )
        )
    assert b_failed.value.phase == "proving"
    assert b"inputs-0-1" in second.read_bytes(), "B posted its input halves before it failed"
    with pytest.raises(SvFailed) as refused:
        run(run_local(params, 10, tmp_path / "c.vsv", homes, timeout=20, rerun=Rerun.from_record(first)))
    assert refused.value.phase == "setup"
    assert "revealed" in str(refused.value)


def test_a_path_of_the_controllers_choosing_is_refused(tmp_path: Path) -> None:
    """The controller composed a checked copy's path from the column leaders' permutations and handed it
    to the last-column servers, which computed their t-values and halves along it. A last-column server
    now composes the path itself from the leaders' permutations, and refuses a path that differs."""
    leaked: list[bytes] = []
    refusals: list[str] = []

    async def hook(
        send: Send, controller: Node, parties: dict[str, Party], kind: str, who: Any, body: dict[str, Any]
    ) -> None:
        if kind != "sv/post" or body.get("kind") != "tvalues" or leaked or refusals:
            return
        real = bytes(body["path"])
        indexes = [real[i : i + 4] for i in range(0, len(real), 4)]
        chosen = b"".join(indexes[1:] + indexes[:1])  # every voter shifted by one: another alignment
        name = str(body["name"]) + "-rogue"
        await send(BOARD, "sv/expect", pack({"election": body["election"], "kind": "tvalues", "name": name,
                                              "poster": who}), 10)  # fmt: skip
        try:
            leaked.append(await send(who, "sv/post", pack(dict(body, name=name, path=chosen)), 10))
        except ne.NodeError as e:
            refusals.append(str(e))
        # the honest entry is due again
        honest = {"election": body["election"], "kind": "tvalues", "name": body["name"], "poster": who}
        await send(BOARD, "sv/expect", pack(honest), 10)

    _, record = run(election(tmp_path, hook))
    assert not leaked, "a last-column server posted t-values along the controller's path"
    assert refusals and "not the composition" in refusals[0], refusals
    assert verify(record).passed
