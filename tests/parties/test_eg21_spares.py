"""2.1's decryption started again without a guardian that is gone (spec/66.12): the coordinator names another
U from the guardians left, streams them the record, and each announces again for the same values with fresh
nonces; a guardian that is gone with too few left stops the election, naming it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from guardian_mesh import eg2_mesh, run
from votum.nodes.channel import Message
from votum.parties.eg2 import Eg2Failed, Eg2Plan, Eg2Run, coordinate
from votum.verifier import verify


def plan(out: Path, quorum: int, decrypting: int) -> Eg2Plan:
    return Eg2Plan(
        group="p256",
        manifest=None,
        quorum=quorum,
        out=out,
        ballots=12,
        challenge_every=4,
        seed=3,
        decrypting=decrypting,
        version="2.1",
    )


async def hang(m: Message) -> bytes:
    """A guardian that is gone: it never answers."""
    del m
    await asyncio.Event().wait()
    return b""


async def election(tmp_path: Path, n: int, quorum: int, gone_at: str) -> Eg2Run:
    nodes, _ = await eg2_mesh(tmp_path, n)
    try:
        nodes[2].route(gone_at, hang)  # guardian 2
        names = [f"g{i}" for i in range(1, n + 1)]
        return await coordinate(nodes[0], names, plan(tmp_path / "record", quorum, quorum), timeout=6.0)
    finally:
        for node in nodes:
            await node.close()


@pytest.mark.parametrize("gone_at", ["eg2/reveal", "eg2/answer"])
def test_a_guardian_gone_in_the_decryption_is_replaced(tmp_path: Path, gone_at: str) -> None:
    """U = {1, 2} of four guardians with quorum 2; guardian 2 never reveals (or never answers, after guardian
    1 has answered): the decryption ends with U = {1, 3}, and the record verifies."""
    result = run(election(tmp_path, 4, 2, gone_at))
    assert result.summary["cast"] + result.summary["challenged"] == 12
    report = verify(tmp_path / "record")
    assert report.passed, report.not_passed()
    assert json.loads((tmp_path / "record" / "tally.json").read_text())["available"] == [1, 3]


def test_too_few_guardians_left_stops_the_election_naming_the_one_gone(tmp_path: Path) -> None:
    with pytest.raises(Eg2Failed, match="fewer than 2 guardians are left") as failed:
        run(election(tmp_path, 2, 2, "eg2/reveal"))
    assert failed.value.guardian == "guardian-2"
