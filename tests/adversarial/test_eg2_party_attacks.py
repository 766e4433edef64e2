"""A lying coordinator against ElectionGuard 2.x guardians that are parties of their own (spec/65.9).

The coordinator holds no secret and is believed on nothing a guardian can check. Each attack is scripted
against the real guardian service on real nodes (mutually authenticated channels on loopback): the
coordinator's node sends whatever it likes, and each test first shows the honest message accepted, so the
refusal is the attack's."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from guardian_mesh import ask_guardian, eg2_mesh, pack, run, send_record, unpack
from votum import Eg2Coordinator, Eg2Trustee
from votum.nodes import Node
from votum.nodes import errors as ne
from votum.verifier import verify

ELECTION = "e2e-test"


async def ask(coordinator: Node, i: int, kind: str, body: dict[str, Any]) -> bytes:
    return await ask_guardian(coordinator, ELECTION, i, kind, body)


async def started(coordinator: Node, n: int, quorum: int) -> dict[str, str]:
    """The start phase, honestly: each guardian's public record by id."""
    roster = [
        {"guardian_id": f"guardian-{i}", "x": i, "node_id": coordinator.keystore.find(f"g{i}").node_id}
        for i in range(1, n + 1)
    ]
    records = {}
    for i in range(1, n + 1):
        body = {"group": "p256", "manifest": None, "n": n, "quorum": quorum, "roster": roster}
        records[f"guardian-{i}"] = (
            await ask(coordinator, i, "eg2/start", {**body, "guardian_id": f"guardian-{i}"})
        ).decode()
    return records


async def keyed(coordinator: Node, out: Path, n: int = 3, quorum: int = 2) -> Eg2Coordinator:
    """Start, records, shares and joint key done honestly; the election open and 12 ballots cast."""
    records = await started(coordinator, n, quorum)
    answers = await asyncio.gather(
        *(ask(coordinator, i, "eg2/records", {"records": records}) for i in range(1, n + 1))
    )
    for a in answers:
        assert set(unpack(a)["verdicts"].values()) == {"ok"}
    c = Eg2Coordinator(out, "p256", None, n, quorum)
    key, he = c.open([records[f"guardian-{i}"] for i in range(1, n + 1)])
    for i in range(1, n + 1):
        theirs = unpack(await ask(coordinator, i, "eg2/joint", {}))
        assert (theirs["key"], theirs["he"]) == (key, he)
    c.cast(12, 4, 1)
    return c


def test_a_guardian_will_not_decrypt_one_voters_ballot_passed_off_as_the_tally(tmp_path: Path) -> None:
    """The coordinator writes the first voter's ciphertexts where the encrypted tally's are and asks for
    decryption shares: their combination would be that voter's vote. The guardian checks its own copy of the
    record first (V-EG2-08: the tally is not the sum of the cast ballots) and refuses; with the record as
    written it decrypts."""

    async def main() -> None:
        nodes, _ = await eg2_mesh(tmp_path, 3)
        out = tmp_path / "record"
        try:
            await keyed(nodes[0], out)
            tally_file = out / "encrypted_tally.json"
            honest = tally_file.read_bytes()
            ballot = json.loads((out / "encrypted_ballots/votum-device/eballot-id-1.json").read_text())
            tally = json.loads(honest)
            for bc in ballot["contests"]:
                tc = next(c for c in tally["contests"] if c["contest_id"] == bc["contest_id"])
                for ts, bs in zip(tc["selections"], bc["selections"], strict=True):
                    ts["encrypted_vote"] = bs["encrypted_vote"]
            tally_file.write_text(json.dumps(tally))
            await send_record(nodes[0], 1, out)
            with pytest.raises(ne.NodeError, match="V-EG2-08"):
                await ask(nodes[0], 1, "eg2/shares", {})
            tally_file.write_bytes(honest)
            await send_record(nodes[0], 1, out)
            shares = json.loads((await ask(nodes[0], 1, "eg2/shares", {})).decode())
            assert shares["x"] == 1 and len(shares["shares"]) > 0
        finally:
            for n in nodes:
                await n.close()

    run(main())


def test_records_shown_differently_to_two_guardians_stop_every_share(tmp_path: Path) -> None:
    """The coordinator shows guardian 1 a record of its own making in guardian 3's place (it holds that
    record's polynomial). Guardian 1 checks with every other guardian, over their own channels, that all were
    shown the same records, finds they were not, and deals no share."""

    async def main() -> None:
        nodes, services = await eg2_mesh(tmp_path, 3)
        try:
            records = await started(nodes[0], 3, 2)
            forged = Eg2Trustee("p256", None, 3, 2, "guardian-3", 3)
            shown = {**records, "guardian-3": forged.public_record()}
            outcome = await asyncio.gather(
                ask(nodes[0], 1, "eg2/records", {"records": shown}),
                ask(nodes[0], 2, "eg2/records", {"records": records}),
                ask(nodes[0], 3, "eg2/records", {"records": records}),
                return_exceptions=True,
            )
            assert isinstance(outcome[0], ne.NodeError) and "differ" in str(outcome[0])
            # no guardian took a share from guardian 1
            assert all("guardian-1" not in s.received for s in services)
        finally:
            for n in nodes:
                await n.close()

    run(main())


def test_a_guardian_answers_once_and_only_for_its_own_shares(tmp_path: Path) -> None:
    """The coordinator changes guardian 1's own shares in the list it sends back (so the challenge guardian 1
    would derive is not the one its shares commit to), then sends the honest list. Guardian 1 refuses the
    first, and its nonces are spent: it answers nothing more, so no two answers ever share a nonce. Guardian
    2, shown the honest list, answers."""

    async def main() -> None:
        nodes, _ = await eg2_mesh(tmp_path, 3)
        out = tmp_path / "record"
        try:
            await keyed(nodes[0], out)
            shares = []
            for i in (1, 2):
                await send_record(nodes[0], i, out)
                shares.append((await ask(nodes[0], i, "eg2/shares", {})).decode())
            await send_record(nodes[0], 1, out)
            with pytest.raises(ne.NodeError, match="once"):
                await ask(nodes[0], 1, "eg2/shares", {})
            changed = json.loads(shares[0])
            changed["shares"][0]["m"] = changed["shares"][1]["m"]
            with pytest.raises(ne.NodeError, match="own shares were changed"):
                await ask(nodes[0], 1, "eg2/answer", {"shares": [json.dumps(changed), shares[1]]})
            with pytest.raises(ne.NodeError, match="no shares awaiting an answer"):
                await ask(nodes[0], 1, "eg2/answer", {"shares": shares})
            answer = json.loads((await ask(nodes[0], 2, "eg2/answer", {"shares": shares})).decode())
            assert answer["x"] == 2
        finally:
            for n in nodes:
                await n.close()

    run(main())


def test_only_the_coordinator_drives_a_guardian_and_only_roster_guardians_deal_to_it(tmp_path: Path) -> None:
    """Guardian 2's node (a trusted peer, but not the coordinator) asks guardian 1 for decryption shares, and
    deals it a share under guardian 3's name: both are refused by who sent them."""

    async def main() -> None:
        nodes, _ = await eg2_mesh(tmp_path, 3)
        out = tmp_path / "record"
        try:
            await keyed(nodes[0], out)
            g2 = nodes[2]
            body = pack({"election": ELECTION})
            with pytest.raises(ne.NodeError, match="not this election's coordinator"):
                await g2.request("g1", "eg2/shares", body, 10)
            box = g2.seal("g1", f"eg2-share/{ELECTION}", bytes(32))
            body = pack({"election": ELECTION, "sender": "guardian-3", "box": box})
            with pytest.raises(ne.NodeError, match="not guardian 'guardian-3'"):
                await g2.request("g1", "eg2/share", body, 10)
        finally:
            for n in nodes:
                await n.close()

    run(main())


def test_an_election_driven_honestly_over_the_mesh_verifies(tmp_path: Path) -> None:
    """The same scripted coordinator, honest to the end: the record it writes passes the verifier."""

    async def main() -> None:
        nodes, _ = await eg2_mesh(tmp_path, 3)
        out = tmp_path / "record"
        try:
            c = await keyed(nodes[0], out)
            shares = []
            for i in (1, 3):
                await send_record(nodes[0], i, out)
                shares.append((await ask(nodes[0], i, "eg2/shares", {})).decode())
            answers = [(await ask(nodes[0], i, "eg2/answer", {"shares": shares})).decode() for i in (1, 3)]
            summary = c.finish(shares, answers)
            assert summary["cast"] + summary["challenged"] == 12
        finally:
            for n in nodes:
                await n.close()

    run(main())
    assert verify(tmp_path / "record").passed
