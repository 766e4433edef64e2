"""A lying coordinator against ElectionGuard 2.1 guardians that are parties of their own (spec/66.12).

The coordinator holds no secret and is believed on nothing a guardian can check. Each attack is scripted
against the real guardian service on real nodes (mutually authenticated channels on loopback): the
coordinator's node sends whatever it likes, and each test shows the honest message accepted too, so the
refusal is the attack's."""

from __future__ import annotations

import asyncio
import json
import shutil
import struct
from pathlib import Path
from typing import Any

import pytest
from guardian_mesh import ask_guardian, eg2_mesh, pack, run, send_record, unpack
from votum import Eg21Coordinator, Eg21Trustee
from votum.eg2 import Eg2Config, run_eg2_election
from votum.nodes import Node
from votum.nodes import errors as ne
from votum.parties.record_copy import record_chunks
from votum.verifier import verify

ELECTION = "e21-test"


async def ask(coordinator: Node, i: int, kind: str, body: dict[str, Any]) -> bytes:
    return await ask_guardian(coordinator, ELECTION, i, kind, body)


def coordinator_for(out: Path) -> Eg21Coordinator:
    """Three guardians, quorum 2, guardians 1 and 2 decrypting; contest data decrypted, every 4th of 12
    ballots challenged."""
    return Eg21Coordinator(out, "p256", None, 3, 2, [1, 2], 12, 4, 1, contest_data="decrypted")


async def started(coordinator: Node, c: Eg21Coordinator, n: int = 3) -> dict[str, str]:
    """The start phase, honestly: each guardian's key record by id."""
    roster = [
        {"guardian_id": f"guardian-{i}", "x": i, "node_id": coordinator.keystore.find(f"g{i}").node_id}
        for i in range(1, n + 1)
    ]
    body = {"group": "p256", "manifest": c.manifest, "n": n, "quorum": 2, "roster": roster, "version": "2.1"}
    return {
        f"guardian-{i}": (
            await ask(coordinator, i, "eg2/start", {**body, "guardian_id": f"guardian-{i}"})
        ).decode()
        for i in range(1, n + 1)
    }


async def keyed(coordinator: Node, out: Path) -> Eg21Coordinator:
    """Start, key records, shares and joint keys done honestly; the election open and its ballots cast."""
    c = coordinator_for(out)
    records = await started(coordinator, c)
    answers = await asyncio.gather(
        *(ask(coordinator, i, "eg2/records", {"records": records}) for i in (1, 2, 3))
    )
    for a in answers:
        assert set(unpack(a)["verdicts"].values()) == {"ok"}
    opened = json.loads(c.open([records[f"guardian-{i}"] for i in (1, 2, 3)]))
    for i in (1, 2, 3):
        assert json.loads(unpack(await ask(coordinator, i, "eg2/joint", {}))["keys"]) == opened
    c.cast()
    return c


async def announced(coordinator: Node, out: Path) -> list[str]:
    body = {"available": [1, 2]}
    for i in (1, 2):
        await send_record(coordinator, i, out)
    return [(await ask(coordinator, i, "eg2/announce", body)).decode() for i in (1, 2)]


def test_a_guardian_will_not_open_a_copy_of_a_cast_ballot_marked_challenged(tmp_path: Path) -> None:
    """The coordinator appends to the record a copy of the first cast ballot under another id, marked
    challenged: opening it would publish that voter's vote. The guardian checks its own copy of the record
    and refuses (the copy repeats the ballot's id_B and nonce); with the record as written it announces."""

    async def main() -> None:
        nodes, _ = await eg2_mesh(tmp_path, 3)
        out = tmp_path / "record"
        try:
            await keyed(nodes[0], out)
            ballots = out / "ballots.jsonl"
            honest = ballots.read_bytes()
            lines = [json.loads(x) for x in honest.decode().splitlines()]
            copy = dict(next(b for b in lines if b["state"] == "cast"))
            copy["id"], copy["state"] = "a-copy", "challenged"
            ballots.write_text("".join(json.dumps(b) + "\n" for b in [*lines, copy]))
            await send_record(nodes[0], 1, out)
            with pytest.raises(ne.NodeError, match=r"V-EG21-05|copied ballot"):
                await ask(nodes[0], 1, "eg2/announce", {"available": [1, 2]})
            ballots.write_bytes(honest)
            await send_record(nodes[0], 1, out)
            doc = json.loads(await ask(nodes[0], 1, "eg2/announce", {"available": [1, 2]}))
            assert doc["i"] == 1 and len(doc["nonce_parts"]) == 3
        finally:
            for n in nodes:
                await n.close()

    run(main())


def test_key_records_shown_differently_stop_every_share(tmp_path: Path) -> None:
    """The coordinator shows guardian 1 a key record of its own making in guardian 3's place (it would hold
    that record's secrets, and so read guardian 1's share for guardian 3). Guardian 1 checks with every other
    guardian over their own channels that all were shown the same records, and deals no share."""

    async def main() -> None:
        nodes, services = await eg2_mesh(tmp_path, 3)
        try:
            c = coordinator_for(tmp_path / "record")
            records = await started(nodes[0], c)
            forged = Eg21Trustee("p256", c.manifest, 3, 2, 3)
            shown = {**records, "guardian-3": forged.public_record()}
            outcome = await asyncio.gather(
                ask(nodes[0], 1, "eg2/records", {"records": shown}),
                ask(nodes[0], 2, "eg2/records", {"records": records}),
                ask(nodes[0], 3, "eg2/records", {"records": records}),
                return_exceptions=True,
            )
            assert isinstance(outcome[0], ne.NodeError) and "differ" in str(outcome[0])
            assert all("guardian-1" not in s.received for s in services)
        finally:
            for n in nodes:
                await n.close()

    run(main())


class _Dealer:
    """Guardian 1's trustee, which agrees to the records as asked but deals from another polynomial than the
    one its key record commits to."""

    def __init__(self, real: Eg21Trustee, impostor: Eg21Trustee, records: dict[str, str]) -> None:
        self.real, self.impostor, self.records = real, impostor, records

    def agree(self, records: list[str]) -> None:
        self.real.agree(records)
        self.impostor.agree([self.impostor.public_record(), *records[1:]])

    def share_for(self, to: int) -> bytes:
        return self.impostor.share_for(to)


def test_a_complaint_names_the_cheating_dealer_and_a_false_one_its_maker(tmp_path: Path) -> None:
    """Guardian 1 deals shares that do not match its key record. Guardians 2 and 3 refuse them and answer
    `eg2/joint` with their complaints, each with its opening of the share (spec/66.4); the coordinator
    judges them with no secret and names guardian 1, whatever guardian 1 says of its shares. Then guardian 3
    complains of a good share of guardian 1, opened honestly: the coordinator names guardian 3. Before
    complaints carried openings, the dealer's report decided who was blamed."""
    from votum import Eg21Ceremony
    from votum.parties.eg2 import Eg2Failed, judge_complaints, share_statement

    async def main() -> None:
        nodes, services = await eg2_mesh(tmp_path, 3)
        try:
            c = coordinator_for(tmp_path / "record")
            records = await started(nodes[0], c)
            impostor = Eg21Trustee("p256", c.manifest, 3, 2, 1)
            services[0].trustee = _Dealer(services[0].trustee, impostor, records)  # type: ignore[assignment]
            answers = await asyncio.gather(
                *(ask(nodes[0], i, "eg2/records", {"records": records}) for i in (1, 2, 3))
            )
            assert {r: v[:7] for r, v in unpack(answers[0])["verdicts"].items()} == {
                "guardian-2": "refused",
                "guardian-3": "refused",
            }
            joint = {f"guardian-{i}": unpack(await ask(nodes[0], i, "eg2/joint", {})) for i in (2, 3)}
            assert set(joint["guardian-2"]["complaints"]) == {"guardian-1"}
            ceremony = Eg21Ceremony("p256", c.manifest, 3, 2)
            keys = {f"guardian-{i}": nodes[i].identity.card.signing_key for i in (1, 2, 3)}

            def judge(records: dict[str, str], joint: dict[str, Any]) -> None:
                judge_complaints(ceremony, records, joint, ELECTION, keys)

            with pytest.raises(Eg2Failed) as named:
                judge(records, joint)
            assert named.value.guardian == "guardian-1" and "eq. 28" in named.value.detail
            # a false complaint: guardian 3 opens a good share of guardian 1's and says it is bad
            honest = Eg21Trustee("p256", c.manifest, 3, 2, 1, seed=b"\x01" * 32)
            receiver = services[2].trustee
            assert isinstance(receiver, Eg21Trustee)
            shown = {**records, "guardian-1": honest.public_record()}
            honest.agree([shown[f"guardian-{i}"] for i in (1, 2, 3)])
            share = honest.share_for(3)

            def signed(share: bytes, by: int = 1) -> str:
                return nodes[by].identity.sign_record(share_statement(ELECTION, 1, share)).hex()

            false = {
                "share": share.decode(),
                "signature": signed(share),
                "opening": receiver.open_share(1, share),
                "reason": "bad",
            }
            with pytest.raises(Eg2Failed) as named:
                judge(shown, {"guardian-3": {"complaints": {"guardian-1": false}}})
            assert named.value.guardian == "guardian-3" and "false" in named.value.detail
            # an opening made for another share than the one shown
            share_2 = honest.share_for(2)
            other = {**false, "share": share_2.decode(), "signature": signed(share_2)}
            with pytest.raises(Eg2Failed) as named:
                judge(shown, {"guardian-3": {"complaints": {"guardian-1": other}}})
            assert named.value.guardian == "guardian-3"
            # a share guardian 3 made up itself (its own ξ, garbage values, a proof that holds, opened
            # honestly) but could not sign as guardian 1's: guardian 3 is named, not guardian 1
            fake = Eg21Trustee("p256", c.manifest, 3, 2, 1)
            fake.agree([fake.public_record(), *[shown[f"guardian-{i}"] for i in (2, 3)]])
            made = fake.share_for(3)
            bad = {**false, "share": made.decode(), "signature": signed(made, by=3)}
            bad["opening"] = receiver.open_share(1, made)
            with pytest.raises(Eg2Failed) as named:
                judge(shown, {"guardian-3": {"complaints": {"guardian-1": bad}}})
            assert named.value.guardian == "guardian-3" and "not signed" in named.value.detail
        finally:
            for n in nodes:
                await n.close()

    run(main())


def test_a_share_dealt_unsigned_is_refused_and_blames_no_one_unproven(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Guardian 1's node sends its shares without its signature. Its receivers refuse them (no complaint
    could show a third party what was dealt) and say so at `eg2/joint`; the coordinator stops the run naming
    both in its message and neither as at fault, since nothing shows which of the two lies."""
    from votum import Eg21Ceremony
    from votum.parties.eg2 import Eg2Failed, judge_complaints

    async def main() -> None:
        nodes, _ = await eg2_mesh(tmp_path, 3)
        try:
            c = coordinator_for(tmp_path / "record")
            records = await started(nodes[0], c)
            monkeypatch.setattr(nodes[1].identity, "sign_record", lambda statement: b"")
            await asyncio.gather(*(ask(nodes[0], i, "eg2/records", {"records": records}) for i in (1, 2, 3)))
            joint = {f"guardian-{i}": unpack(await ask(nodes[0], i, "eg2/joint", {})) for i in (2, 3)}
            for i in (2, 3):
                assert set(joint[f"guardian-{i}"]["complaints"]) == {"guardian-1"}
                assert joint[f"guardian-{i}"]["complaints"]["guardian-1"]["unsigned"] == "1"
            keys = {f"guardian-{i}": nodes[i].identity.card.signing_key for i in (1, 2, 3)}
            ceremony = Eg21Ceremony("p256", c.manifest, 3, 2)
            with pytest.raises(Eg2Failed) as stopped:
                judge_complaints(ceremony, records, joint, ELECTION, keys)
            assert stopped.value.guardian is None and "guardian-1" in stopped.value.detail
        finally:
            for n in nodes:
                await n.close()

    run(main())


def test_the_commitment_round_cannot_be_steered_by_the_coordinator(tmp_path: Path) -> None:
    """The coordinator asks a guardian to reveal its pairs before every announcement is in, then with
    guardian 2's announcement changed (made for other values); both are refused, the second naming guardian
    2. Shown the true announcements, guardian 1 reveals once. Its answer is computed against the announcements
    it revealed for, so a guardian 2 pair that does not open guardian 2's d is named and nothing is answered;
    its nonces are then spent."""

    async def main() -> None:
        nodes, _ = await eg2_mesh(tmp_path, 3)
        out = tmp_path / "record"
        try:
            await keyed(nodes[0], out)
            announces = await announced(nodes[0], out)
            with pytest.raises(ne.NodeError, match="not one from each available guardian"):
                await ask(nodes[0], 1, "eg2/reveal", {"announces": announces[:1]})
            changed = json.loads(announces[1])
            changed["values"][0]["M"] = changed["values"][1]["M"]
            changed["digest"] = "00" * 32
            with pytest.raises(ne.NodeError, match="guardian 2"):
                await ask(nodes[0], 1, "eg2/reveal", {"announces": [announces[0], json.dumps(changed)]})
            reveals = [
                (await ask(nodes[0], i, "eg2/reveal", {"announces": announces})).decode() for i in (1, 2)
            ]
            with pytest.raises(ne.NodeError, match="revealed its pairs already"):
                await ask(nodes[0], 1, "eg2/reveal", {"announces": announces})
            lying = json.loads(reveals[1])
            lying["pairs"][0] = lying["pairs"][1]
            with pytest.raises(ne.NodeError, match="guardian 2"):
                await ask(nodes[0], 1, "eg2/answer", {"reveals": [reveals[0], json.dumps(lying)]})
            with pytest.raises(ne.NodeError, match="no decryption awaiting an answer"):
                await ask(nodes[0], 1, "eg2/answer", {"reveals": reveals})
        finally:
            for n in nodes:
                await n.close()

    run(main())


def test_a_2_1_election_driven_honestly_over_the_mesh_verifies(tmp_path: Path) -> None:
    """The same scripted coordinator, honest to the end: the record it writes passes the verifier."""

    async def main() -> None:
        nodes, _ = await eg2_mesh(tmp_path, 3)
        out = tmp_path / "record"
        try:
            c = await keyed(nodes[0], out)
            announces = await announced(nodes[0], out)
            reveals = [
                (await ask(nodes[0], i, "eg2/reveal", {"announces": announces})).decode() for i in (1, 2)
            ]
            answers = [(await ask(nodes[0], i, "eg2/answer", {"reveals": reveals})).decode() for i in (1, 2)]
            summary = c.finish(announces, reveals, answers)
            assert summary["cast"] + summary["challenged"] == 12
        finally:
            for n in nodes:
                await n.close()

    run(main())
    report = verify(tmp_path / "record")
    assert report.passed, report.not_passed if hasattr(report, "not_passed") else report


def test_a_2_1_election_with_guardian_processes_verifies(tmp_path: Path) -> None:
    """`votum election --spec 2.1 --eg2-record 2.1 --guardian-processes`: five guardian processes, two
    missing, pre-encrypted ballots, simple chaining and decrypted contest data; every check passes."""
    config = Eg2Config(
        ballots=20,
        guardians=5,
        quorum=3,
        missing=2,
        challenge_rate=0.2,
        out=tmp_path / "record",
        processes=True,
        record="2.1",
        chaining=True,
        pre_encrypted=5,
        contest_data="decrypted",
    )
    result = run_eg2_election(config)
    assert result.verification is not None and result.verification.passed
    assert result.cast + result.challenged == 25
    assert any(s.name.startswith("guardians: announcements") for s in result.steps)


def test_the_decryption_rounds_come_from_the_coordinator_and_in_their_turn(tmp_path: Path) -> None:
    """Guardian 2's node (a trusted peer, not the coordinator) asks guardian 1 to announce; the coordinator
    asks for an announcement before the joint keys, and for a reveal or an answer before any announcement.
    Each is refused, and guardian 1 still announces once the election is keyed and cast."""

    async def main() -> None:
        nodes, _ = await eg2_mesh(tmp_path, 3)
        out = tmp_path / "record"
        body = {"available": [1, 2]}
        try:
            c = coordinator_for(out)
            records = await started(nodes[0], c)
            with pytest.raises(ne.NodeError, match="key ceremony is not finished"):
                await ask(nodes[0], 1, "eg2/announce", body)
            await asyncio.gather(*(ask(nodes[0], i, "eg2/records", {"records": records}) for i in (1, 2, 3)))
            c.open([records[f"guardian-{i}"] for i in (1, 2, 3)])
            for i in (1, 2, 3):
                await ask(nodes[0], i, "eg2/joint", {})
            c.cast()
            with pytest.raises(ne.NodeError, match="no record received from the coordinator"):
                await ask(nodes[0], 1, "eg2/announce", body)
            await send_record(nodes[0], 1, out)
            with pytest.raises(ne.NodeError, match="no announcement to reveal for"):
                await ask(nodes[0], 1, "eg2/reveal", {"announces": []})
            with pytest.raises(ne.NodeError, match="no decryption awaiting an answer"):
                await ask(nodes[0], 1, "eg2/answer", {"reveals": []})
            payload = pack({"election": ELECTION, **body})
            with pytest.raises(ne.NodeError, match="not this election's coordinator"):
                await nodes[2].request("g1", "eg2/announce", payload, 10)
            assert json.loads(await ask(nodes[0], 1, "eg2/announce", body))["i"] == 1
        finally:
            for n in nodes:
                await n.close()

    run(main())


def test_a_guardian_decrypts_the_record_it_was_sent_never_a_path(tmp_path: Path) -> None:
    """The guardian reads no path the coordinator names: it decrypts the record the coordinator streamed to
    it over its channel, in a private directory of its own. A request naming the path of a record with a
    cast ballot copied as challenged changes nothing; the same record streamed is refused. A stream from
    another node, one with a name that leaves the directory, and one that ends inside a file are refused
    and leave no record behind."""

    async def main() -> None:
        nodes, services = await eg2_mesh(tmp_path, 3)
        out = tmp_path / "record"
        try:
            await keyed(nodes[0], out)
            bad = tmp_path / "bad"
            shutil.copytree(out, bad)
            lines = [json.loads(x) for x in (bad / "ballots.jsonl").read_text().splitlines()]
            copy = dict(next(b for b in lines if b["state"] == "cast"))
            copy["id"], copy["state"] = "a-copy", "challenged"
            (bad / "ballots.jsonl").write_text("".join(json.dumps(b) + "\n" for b in [*lines, copy]))

            # refused streams: from guardian 2's node, a name outside the directory, a file cut short
            with pytest.raises(ne.NodeError, match="not this election's coordinator"):
                await nodes[2].stream("g1", "eg2/record", record_chunks(out), 10)
            escape = b"../escape"
            raw = struct.pack(">H", len(escape)) + escape + struct.pack(">Q", 2) + b"{}"
            with pytest.raises(ne.NodeError, match="not a record file's name"):
                await nodes[0].stream("g1", "eg2/record", [raw], 10)
            assert not (tmp_path.parent / "escape").exists()
            name = b"ballots.jsonl"
            cut = struct.pack(">H", len(name)) + name + struct.pack(">Q", 100) + b"{}"
            with pytest.raises(ne.NodeError, match="ends inside a file"):
                await nodes[0].stream("g1", "eg2/record", [cut], 10)
            assert services[0].record is None
            with pytest.raises(ne.NodeError, match="no record received"):
                await ask(nodes[0], 1, "eg2/announce", {"record": str(out), "available": [1, 2]})

            await send_record(nodes[0], 1, bad)
            with pytest.raises(ne.NodeError, match=r"V-EG21-05|copied ballot"):
                await ask(nodes[0], 1, "eg2/announce", {"available": [1, 2]})
            await send_record(nodes[0], 1, out)
            received = services[0].record
            assert received is not None and received.root != out
            body = {"record": str(bad), "available": [1, 2]}
            doc = json.loads(await ask(nodes[0], 1, "eg2/announce", body))
            assert doc["i"] == 1, "the path named is not read: the streamed record is the one decrypted"
        finally:
            for n in nodes:
                await n.close()

    run(main())


def test_a_guardian_takes_one_record_stream_at_a_time(tmp_path: Path) -> None:
    """A coordinator that opens a second record stream while the first is still coming is refused (each may
    write up to the size limit: many at once would fill the guardian's disk); once the first ends, the
    next is taken."""

    async def main() -> None:
        nodes, services = await eg2_mesh(tmp_path, 3)
        out = tmp_path / "record"
        try:
            await keyed(nodes[0], out)
            held = asyncio.Event()
            data = b"".join([c async for c in record_chunks(out)])

            async def slow() -> Any:
                # a piece is sent once the next one is known (the last is marked so): two before waiting
                yield data[:10]
                yield data[10:20]
                await held.wait()
                yield data[20:]

            first = asyncio.ensure_future(nodes[0].stream("g1", "eg2/record", slow(), 30))
            for _ in range(200):  # until the guardian has opened the first stream's sink
                if services[0].incoming is not None:
                    break
                await asyncio.sleep(0.05)
            assert services[0].incoming is not None and not services[0].incoming.ended
            with pytest.raises(ne.NodeError, match="one stream at a time"):
                await send_record(nodes[0], 1, out)
            held.set()
            await first
            assert services[0].record is not None
            await send_record(nodes[0], 1, out)
        finally:
            for n in nodes:
                await n.close()

    run(main())
