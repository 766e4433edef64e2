"""A rogue coordinator against the ElectionGuard key ceremony between guardian processes (spec/96.8; issue 45,
finding 1). The coordinator is one more party that may lie: it must learn no secret, and it must not be able
to show different guardians different record sets.

Each attack is scripted against the real guardian service on real nodes (mutually authenticated channels on
loopback); the coordinator's node sends whatever it likes."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from guardian_mesh import pack, run, unpack
from votum import EgGuardian, EgManifest, Group
from votum.election import synthetic_manifest
from votum.nodes import Node
from votum.nodes import errors as ne
from votum.nodes.local import make_identities, start_mesh
from votum.parties.ceremony import CeremonyFailed, GuardianService, coordinate

EM = EgManifest.from_json(json.dumps(synthetic_manifest(2)))
EG = Group("eg-4096")


async def mesh(tmp_path: Path, n: int) -> list[Node]:
    names = ["coordinator"] + [f"g{i}" for i in range(1, n + 1)]
    nodes: list[Node] = await start_mesh(make_identities(tmp_path, names))
    for g in nodes[1:]:
        GuardianService(g, "coordinator", timeout=10)
    return nodes


def interpolate_at_zero(points: dict[int, int], q: int) -> int:
    """Lagrange interpolation of P(0) over Z_q from points x -> P(x)."""
    total = 0
    for xi, yi in points.items():
        num, den = 1, 1
        for xj in points:
            if xj != xi:
                num = num * xj % q
                den = den * (xj - xi) % q
        total = (total + yi * num * pow(den, -1, q)) % q
    return total


def test_a_coordinator_cannot_collect_backup_shares_by_asking_for_answers_nobody_disputed(
    tmp_path: Path,
) -> None:
    """Today's attack: after an honest ceremony without disputes, the coordinator asks every guardian to
    'answer the dispute' of each receiver (and of itself). Each answer is a share P_i(j) in the clear; k of
    them give P_i(0), every guardian's secret, hence the joint secret key. The guardians must refuse: no
    receiver disputed anything."""

    async def main() -> None:
        nodes = await mesh(tmp_path, 3)
        try:
            coordinator = nodes[0]
            result = await coordinate(coordinator, ["g1", "g2", "g3"], 2, EM, timeout=10)
            assert result.disputes == []
            leaked: dict[str, dict[int, int]] = {}
            refusals = 0
            for i in range(1, 4):
                gid = f"guardian-{i}"
                for j in range(1, 4):
                    body = pack({"ceremony": result.ceremony, "receiver": f"guardian-{j}"})
                    try:
                        answer = await coordinator.request(f"g{i}", "ceremony/answer", body, 10)
                    except ne.NodeError:
                        refusals += 1
                        continue
                    leaked.setdefault(gid, {})[j] = int(json.loads(answer)["coordinate"], 16)
            secrets_found = 0
            for gid, points in leaked.items():
                if len(points) >= 2:
                    a0 = interpolate_at_zero(points, EG.order)
                    key = EG.pow_generator_many([EG.scalar(a0)])[0]
                    public = int(json.loads(result.records[gid])["election_public_key"], 16)
                    secrets_found += key == EG.element_from_int(public)
            assert secrets_found == 0, f"the coordinator recovered {secrets_found} guardians' secret keys"
            assert refusals == 9
        finally:
            for node in nodes:
                await node.close()

    run(main())


def test_a_guardian_answers_a_real_dispute_once_and_only_for_the_receiver_that_raised_it(
    tmp_path: Path,
) -> None:
    """With a real dispute (guardian-3's backup to guardian-1 altered), the honest path still settles it in
    public; asking guardian-3 again for the same receiver, or for another, is refused."""

    async def main() -> None:
        names = ["coordinator", "g1", "g2", "g3"]
        nodes: list[Node] = await start_mesh(make_identities(tmp_path, names))
        try:
            for g in nodes[1:3]:
                GuardianService(g, "coordinator", timeout=10)
            GuardianService(nodes[3], "coordinator", fault="bad-backup", timeout=10)
            result = await coordinate(nodes[0], ["g1", "g2", "g3"], 2, EM, timeout=10)
            assert [(d.sender, d.receiver) for d in result.disputes] == [("guardian-3", "guardian-1")]
            for receiver in ("guardian-1", "guardian-2", "guardian-3"):
                body = pack({"ceremony": result.ceremony, "receiver": receiver})
                with pytest.raises(ne.NodeError):
                    await nodes[0].request("g3", "ceremony/answer", body, 10)
        finally:
            for node in nodes:
                await node.close()

    run(main())


def test_a_coordinator_cannot_show_one_guardian_a_record_set_of_its_own_making(tmp_path: Path) -> None:
    """Today's attack: the coordinator shows guardian-1 a record set in which guardian-2's record is one the
    coordinator made (its own secret key). guardian-1's backup for 'guardian-2' is then encrypted to the
    coordinator, and comes back to it in guardian-1's answer: one share of guardian-1's polynomial. The
    guardians must agree on one record set before any backup is made."""

    async def main() -> None:
        nodes = await mesh(tmp_path, 3)
        try:
            coordinator = nodes[0]
            roster = [
                {
                    "guardian_id": f"guardian-{i}",
                    "order": i,
                    "node_id": nodes[i].identity.node_id,
                    "address": None,
                }
                for i in range(1, 4)
            ]
            ceremony = "c0ffee"
            records: dict[str, str] = {}
            for i in range(1, 4):
                gid = f"guardian-{i}"
                body = {
                    "ceremony": ceremony,
                    "guardian_id": gid,
                    "order": i,
                    "n": 3,
                    "quorum": 2,
                    "roster": roster,
                }
                records[gid] = (await coordinator.request(f"g{i}", "ceremony/start", pack(body), 10)).decode()
            fake = EgGuardian("guardian-2", 2, 3, 2)
            views = {gid: records for gid in records}
            views["guardian-1"] = dict(records, **{"guardian-2": fake.public_record()})
            outcomes = await asyncio.gather(
                *(
                    coordinator.request(
                        f"g{i}",
                        "ceremony/records",
                        pack({"ceremony": ceremony, "records": views[f"guardian-{i}"]}),
                        10,
                    )
                    for i in range(1, 4)
                ),
                return_exceptions=True,
            )
            answer = outcomes[0]
            if isinstance(answer, bytes):
                fake.receive_backup(records["guardian-1"], unpack(answer)["backups"]["guardian-2"])
                assert "guardian-1" not in fake.backups_held, "the coordinator holds a share of guardian-1's"
            assert isinstance(answer, ne.NodeError), answer
            assert "record set" in str(answer)
        finally:
            for node in nodes:
                await node.close()

    run(main())


def test_an_honest_ceremony_still_agrees_and_finishes(tmp_path: Path) -> None:
    async def main() -> None:
        nodes = await mesh(tmp_path, 4)
        try:
            result = await coordinate(nodes[0], ["g1", "g2", "g3", "g4"], 3, EM, timeout=10)
            assert result.disputes == [] and len(result.records) == 4
        finally:
            for node in nodes:
                await node.close()

    run(main())


def test_a_guardian_keeps_no_state_for_a_joint_key_other_than_its_records_make(tmp_path: Path) -> None:
    """A coordinator that announces another joint key at the end (one it could publish for ballots to be
    encrypted to) is refused by every guardian: nobody keeps a sealed state, the ceremony fails."""

    async def main() -> None:
        nodes = await mesh(tmp_path, 3)
        try:
            original = nodes[0].request

            async def lying(who: Any, kind: str, payload: bytes, timeout: float | None = None) -> bytes:
                if kind == "ceremony/finish":
                    body = unpack(payload)
                    # another number: the last digit changed (electionguard hex may start with a padding 0)
                    key = body["joint_key"]
                    body["joint_key"] = key[:-1] + ("1" if key[-1] != "1" else "2")
                    payload = pack(body)
                return await original(who, kind, payload, timeout)

            nodes[0].request = lying  # type: ignore[method-assign]
            with pytest.raises(CeremonyFailed) as failed:
                await coordinate(nodes[0], ["g1", "g2", "g3"], 2, EM, timeout=10)
            assert failed.value.phase == "finish"
            assert not list(tmp_path.glob("*/*.sealed"))
        finally:
            for node in nodes:
                await node.close()

    run(main())


def test_a_guardian_takes_one_start_per_ceremony_and_finishes_once(tmp_path: Path) -> None:
    """A coordinator that starts a guardian again mid-ceremony (after its backups went out) would make it
    throw away the polynomial the others hold shares of; a second finish would seal its state twice. Both are
    refused, and the ceremony goes on."""
    refusals: list[str] = []

    async def main() -> None:
        nodes = await mesh(tmp_path, 3)
        try:
            original = nodes[0].request

            async def rogue(who: Any, kind: str, payload: bytes, timeout: float | None = None) -> bytes:
                answer = await original(who, kind, payload, timeout)
                body = unpack(payload)
                if kind in ("ceremony/report", "ceremony/finish") and who == nodes[0].keystore.find("g1"):
                    again = (
                        {**body, "guardian_id": "guardian-1", "order": 1, "n": 3, "quorum": 2, "roster": []}
                        if kind == "ceremony/report"
                        else body
                    )
                    try:
                        await original(who, kind.replace("report", "start"), pack(again), timeout)
                    except ne.NodeError as e:
                        refusals.append(f"{kind}: {e}")
                return answer

            nodes[0].request = rogue  # type: ignore[method-assign]
            result = await coordinate(nodes[0], ["g1", "g2", "g3"], 2, EM, timeout=10)
            assert result.disputes == []
        finally:
            for node in nodes:
                await node.close()

    run(main())
    assert len(refusals) == 2, refusals
    assert "under way" in refusals[0] and "finished already" in refusals[1]
