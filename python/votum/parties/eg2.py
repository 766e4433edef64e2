"""An ElectionGuard 2.x election whose guardians are processes of their own, over the channels (spec/65.9).

`Eg2GuardianService` is the guardian side: routes on a node, one `Eg2Trustee` holding this guardian's
secrets and nothing else. `coordinate` is the coordinator side: it holds no secret; it drives the phases,
writes the record, and is believed by no guardian on anything a guardian can check:
- a guardian deals shares only after every other guardian says, over its own channel, that it was shown the
  same roster and records; each share goes straight to its receiver, sealed to the receiver's key;
- each guardian computes K and H_E itself, and the coordinator's must equal every guardian's;
- before decrypting, a guardian copies the record and checks the copy as far as its encrypted tally
  (V-EG2-01…08): K, H_E and the guardians must be its own, and the tally the sum of the valid cast
  ballots; it decrypts only that tally and the ballots the record marks challenged, once;
- each guardian derives every challenge itself and answers once, for its own shares unchanged.
`run_local` starts the guardian processes on loopback and runs all of it."""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from votum import Eg2Coordinator, Eg2Trustee
from votum.errors import InvalidInput, VotumError
from votum.nodes import errors
from votum.nodes.channel import Message
from votum.nodes.identity import Card
from votum.nodes.local import PartyProcess, controller_node, party_main
from votum.nodes.messages import pack, unpack
from votum.nodes.node import Node
from votum.parties.ceremony import COORDINATOR, prepare_homes
from votum.parties.common import agree_with_everyone, roster_sender, take_roster, wait_for_records


class Eg2Failed(VotumError):
    """The election stopped in `phase`; `guardian` is the guardian at fault (or None). What the record
    directory holds then is incomplete and does not verify."""

    def __init__(self, phase: str, detail: str, guardian: str | None = None) -> None:
        self.phase = phase
        self.guardian = guardian
        self.detail = detail
        super().__init__(f"2.x election failed in phase {phase!r}: {detail}")


def _unpack(payload: bytes) -> dict[str, Any]:
    return unpack(payload, "2.x election message")


def _share_purpose(election: str) -> str:
    return f"eg2-share/{election}"


class Eg2GuardianService:
    """The guardian side of spec/65.9 on `node`: only the coordinator's node may drive it, and only the
    roster's guardians may send it shares."""

    def __init__(
        self,
        node: Node,
        coordinator: str = COORDINATOR,
        timeout: float = 60.0,
        on_done: Callable[[], None] | None = None,
    ) -> None:
        self.node = node
        self.coordinator = node.keystore.find(coordinator)
        self.timeout = timeout
        self.on_done = on_done
        self._reset()
        for kind, handler in (
            ("start", self._start),
            ("records", self._records),
            ("agree", self._agree),
            ("share", self._share),
            ("joint", self._joint),
            ("shares", self._shares),
            ("answer", self._answer),
            ("abort", self._abort),
        ):
            node.route(f"eg2/{kind}", handler)

    def _reset(self) -> None:
        self.election: str | None = None
        self.trustee: Eg2Trustee | None = None
        self.guardian_id = ""
        self.roster: dict[str, Card] = {}
        self.xs: dict[str, int] = {}
        self.digest = b""
        self.records_ready = asyncio.Event()
        self.received: dict[str, dict[str, Any]] = {}

    def _from_coordinator(self, m: Message) -> dict[str, Any]:
        if m.peer.node_id != self.coordinator.node_id:
            raise errors.WrongSender(f"{m.peer.name} is not this election's coordinator")
        body = _unpack(m.payload)
        if m.kind not in ("eg2/start", "eg2/abort") and body.get("election") != self.election:
            raise errors.HandlerError("not the election this guardian takes part in")
        return body

    def _mine(self) -> Eg2Trustee:
        if self.trustee is None:
            raise errors.HandlerError("no election started")
        return self.trustee

    async def _work(self, fn: Callable[..., Any], *args: Any) -> Any:
        try:
            return await self.node.run_in_worker(fn, *args)
        except VotumError as e:
            raise errors.HandlerError(str(e)) from None

    def _guardian_of(self, m: Message, claimed: object) -> str:
        return roster_sender(m, self.roster, self.guardian_id, claimed, "election")

    async def _start(self, m: Message) -> bytes:
        body = self._from_coordinator(m)
        if self.trustee is not None:
            raise errors.HandlerError(f"election {self.election} is under way; abort it first")
        n, quorum = int(body["n"]), int(body["quorum"])
        gid = str(body["guardian_id"])
        roster = take_roster(self.node, body["roster"], gid)
        xs = {str(e["guardian_id"]): int(e["x"]) for e in body["roster"]}
        if len(roster) != n or sorted(xs.values()) != list(range(1, n + 1)) or gid not in roster:
            raise errors.HandlerError(
                f"the roster must name {n} guardians at x = 1..{n}, this one among them"
            )
        manifest = body.get("manifest")
        self.trustee = await self._work(
            Eg2Trustee,
            str(body["group"]),
            None if manifest is None else bytes(manifest),
            n,
            quorum,
            gid,
            xs[gid],
        )
        self.election, self.guardian_id = str(body["election"]), gid
        self.roster, self.xs = roster, xs
        return str(self._mine().public_record()).encode()

    def _set_digest(self, records: dict[str, str]) -> bytes:
        shown = {
            "election": self.election,
            "roster": sorted([g, self.xs[g], c.node_id] for g, c in self.roster.items()),
            "records": sorted([g, r] for g, r in records.items()),
        }
        return hashlib.sha256(b"votum/eg2-election-set/v1\0" + pack(shown)).digest()

    async def _records(self, m: Message) -> bytes:
        body = self._from_coordinator(m)
        me = self._mine()
        records = {str(k): str(v) for k, v in body["records"].items()}
        if set(records) != set(self.roster):
            raise errors.HandlerError("the records are not the roster's guardians'")
        if self.digest:
            raise errors.HandlerError("the records of this election came already")
        self.digest = self._set_digest(records)  # claimed before the first await
        await self._work(me.agree, [records[g] for g in sorted(records, key=self.xs.__getitem__)])
        self.records_ready.set()
        # no share is dealt until every other guardian says it was shown the same roster and records
        await self._agree_with_everyone()
        receivers = sorted((g for g in self.roster if g != self.guardian_id), key=self.xs.__getitem__)

        async def deliver(gid: str) -> tuple[str, str]:
            card = self.roster[gid]
            share = me.share_for(self.xs[gid])
            box = self.node.seal(card, _share_purpose(self.election or ""), share)
            del share
            payload = pack({"election": self.election, "sender": self.guardian_id, "box": box})
            try:
                answer = _unpack(await self.node.request(card, "eg2/share", payload, self.timeout))
            except (errors.NodeError, asyncio.TimeoutError) as e:
                return gid, f"undelivered: {e or type(e).__name__}"
            return gid, "ok" if answer.get("verified") else f"refused: {answer.get('reason', '')}"

        verdicts = dict(await asyncio.gather(*(deliver(g) for g in receivers)))
        return pack({"verdicts": verdicts})

    async def _agree_with_everyone(self) -> None:
        body = {"election": self.election, "digest": self.digest}
        await agree_with_everyone(self.node, self.roster, self.guardian_id, "eg2/agree", body, self.timeout)

    async def _wait_for_records(self) -> None:
        await wait_for_records(self.records_ready, self.timeout)

    async def _agree(self, m: Message) -> bytes:
        body = _unpack(m.payload)
        if self.trustee is None or body.get("election") != self.election:
            raise errors.HandlerError("not the election this guardian takes part in")
        self._guardian_of(m, body.get("sender"))
        await self._wait_for_records()
        return pack({"digest": self.digest})

    async def _share(self, m: Message) -> bytes:
        body = _unpack(m.payload)
        if self.trustee is None or body.get("election") != self.election:
            raise errors.HandlerError("not the election this guardian takes part in")
        sender = self._guardian_of(m, body.get("sender"))
        await self._wait_for_records()
        if sender in self.received:
            raise errors.HandlerError(f"{sender} sent its share already")
        share = self.node.open_sealed(
            self.roster[sender], _share_purpose(self.election or ""), bytes(body["box"])
        )
        try:
            await self.node.run_in_worker(self._mine().receive, self.xs[sender], share)
            verdict: dict[str, Any] = {"verified": True, "reason": ""}
        except (VotumError, ValueError) as e:
            verdict = {"verified": False, "reason": str(e)}
        del share
        self.received[sender] = verdict
        return pack(verdict)

    async def _joint(self, m: Message) -> bytes:
        self._from_coordinator(m)
        bad = {g: v["reason"] for g, v in self.received.items() if not v["verified"]}
        if bad:
            raise errors.HandlerError(f"shares refused: {bad}")
        key, he = await self._work(self._mine().joint)
        return pack({"key": key, "he": he})

    async def _shares(self, m: Message) -> bytes:
        body = self._from_coordinator(m)
        shares = await self._work(self._mine().decryption_shares, Path(str(body["record"])))
        return str(shares).encode()

    async def _answer(self, m: Message) -> bytes:
        body = self._from_coordinator(m)
        answer = await self._work(self._mine().answer, [str(s) for s in body["shares"]])
        if self.on_done is not None:
            asyncio.get_running_loop().call_later(0.2, self.on_done)
        return str(answer).encode()

    async def _abort(self, m: Message) -> bytes:
        self._from_coordinator(m)
        self._reset()
        if self.on_done is not None:
            asyncio.get_running_loop().call_later(0.2, self.on_done)
        return pack({})


# -- the coordinator -----------------------------------------------------------------------------------------


@dataclasses.dataclass
class Eg2Run:
    election: str
    summary: dict[str, Any]
    #: phase -> seconds
    phases: dict[str, float]


@dataclasses.dataclass(frozen=True)
class Eg2Plan:
    group: str
    manifest: bytes | None
    quorum: int
    out: Path
    ballots: int
    challenge_every: int
    seed: int
    #: how many guardians decrypt (the first ones in order); all when None
    decrypting: int | None = None


async def coordinate(
    node: Node, guardians: Sequence[str | Card], plan: Eg2Plan, timeout: float = 60.0
) -> Eg2Run:
    """Runs the election of spec/65.9 with `guardians` (x = 1, 2, … in this order) and writes its record to
    `plan.out`. Raises `Eg2Failed` naming the guardian at fault; the guardians are then told to abort."""
    n = len(guardians)
    if not 1 <= plan.quorum <= n:
        raise InvalidInput(f"quorum must be in 1..{n} (the number of guardians)")
    cards = {f"guardian-{i}": node.keystore.find(g) for i, g in enumerate(guardians, start=1)}
    if len({c.node_id for c in cards.values()}) != n:
        raise InvalidInput("a node appears twice among the guardians")
    election = hashlib.sha256(f"{time.time_ns()}{plan.out}".encode()).hexdigest()[:16]
    phases: dict[str, float] = {}

    async def ask(phase: str, kind: str, bodies: dict[str, dict[str, Any]]) -> dict[str, bytes]:
        t0 = time.perf_counter()

        async def one(gid: str) -> bytes:
            payload = pack({"election": election, **bodies[gid]})
            try:
                return await node.request(cards[gid], kind, payload, timeout)
            except asyncio.TimeoutError:
                raise Eg2Failed(phase, f"{gid} did not answer within {timeout} s", gid) from None
            except errors.NodeError as e:
                raise Eg2Failed(phase, f"{gid}: {e}", gid) from None

        outcome = await asyncio.gather(*(one(g) for g in bodies), return_exceptions=True)
        for e in outcome:
            if isinstance(e, BaseException):
                raise e
        phases[phase] = phases.get(phase, 0.0) + time.perf_counter() - t0
        return {g: r for g, r in zip(bodies, outcome, strict=True) if isinstance(r, bytes)}

    try:
        return await _phases(node, cards, plan, election, phases, ask)
    except BaseException:
        abort = pack({"election": election})
        await asyncio.gather(
            *(node.request(card, "eg2/abort", abort, 5.0) for card in cards.values()), return_exceptions=True
        )
        raise


async def _phases(
    node: Node,
    cards: dict[str, Card],
    plan: Eg2Plan,
    election: str,
    phases: dict[str, float],
    ask: Callable[[str, str, dict[str, dict[str, Any]]], Any],
) -> Eg2Run:
    n = len(cards)
    loop = asyncio.get_running_loop()
    roster = [
        {"guardian_id": g, "x": i, "node_id": c.node_id, "address": c.address}
        for i, (g, c) in enumerate(cards.items(), start=1)
    ]
    start = {"group": plan.group, "manifest": plan.manifest, "n": n, "quorum": plan.quorum, "roster": roster}
    answers = await ask("start", "eg2/start", {g: {**start, "guardian_id": g} for g in cards})
    records = {g: answers[g].decode() for g in cards}

    answers = await ask("shares dealt", "eg2/records", {g: {"records": records} for g in cards})
    for dealer in cards:
        for receiver, verdict in _unpack(answers[dealer])["verdicts"].items():
            if verdict == "ok":
                continue
            at_fault = dealer if str(verdict).startswith("refused") else str(receiver)
            raise Eg2Failed("shares dealt", f"{dealer}'s share for {receiver}: {verdict}", at_fault)

    answers = await ask("joint key", "eg2/joint", {g: {} for g in cards})
    coordinator = Eg2Coordinator(plan.out, plan.group, plan.manifest, n, plan.quorum)
    try:
        key, he = await loop.run_in_executor(None, coordinator.open, [records[g] for g in cards])
    except VotumError as e:
        raise Eg2Failed("joint key", f"the records make no election: {e}") from None
    for gid in cards:
        theirs = _unpack(answers[gid])
        if (theirs["key"], theirs["he"]) != (key, he):
            raise Eg2Failed("joint key", f"{gid} computed another K or H_E", gid)

    t0 = time.perf_counter()
    await loop.run_in_executor(None, coordinator.cast, plan.ballots, plan.challenge_every, plan.seed)
    phases["ballots"] = time.perf_counter() - t0

    decrypting = list(cards)[: plan.decrypting or n]
    if len(decrypting) < plan.quorum:
        raise InvalidInput(f"{len(decrypting)} guardians cannot decrypt: the quorum is {plan.quorum}")
    answers = await ask("decryption shares", "eg2/shares", {g: {"record": str(plan.out)} for g in decrypting})
    shares = [answers[g].decode() for g in decrypting]
    answers = await ask("answers", "eg2/answer", {g: {"shares": shares} for g in decrypting})
    t0 = time.perf_counter()
    try:
        summary = await loop.run_in_executor(
            None, coordinator.finish, shares, [answers[g].decode() for g in decrypting]
        )
    except VotumError as e:
        raise Eg2Failed("combination", str(e), _named(str(e), decrypting)) from None
    phases["combination"] = time.perf_counter() - t0
    # guardians not decrypting are done too
    rest = [g for g in cards if g not in decrypting]
    if rest:
        await ask("done", "eg2/abort", {g: {} for g in rest})
    return Eg2Run(election, dict(summary), phases)


def _named(message: str, guardians: list[str]) -> str | None:
    """The guardian a core error names (its records call guardian i `guardian-i`)."""
    return next((g for g in guardians if g in message), None)


# -- guardian processes on loopback --------------------------------------------------------------------------


async def run_local(n: int, plan: Eg2Plan, homes: Path, timeout: float = 120.0) -> Eg2Run:
    """Starts n guardian processes on loopback (homes under `homes`) and runs the election with them. The
    processes are stopped however it ends."""
    coordinator_home, guardian_homes = prepare_homes(homes, n)
    procs = [PartyProcess("votum.parties.eg2", h, Eg2Failed) for h in guardian_homes]
    loop = asyncio.get_running_loop()
    try:
        addresses = await asyncio.gather(
            *(loop.run_in_executor(None, p.address, 60.0) for p in procs), return_exceptions=True
        )
        for a in addresses:
            if isinstance(a, BaseException):
                raise a
        node = controller_node(coordinator_home, guardian_homes, [str(a) for a in addresses], timeout)
        try:
            return await coordinate(node, [h.name for h in guardian_homes], plan, timeout)
        finally:
            await node.close()
    finally:
        await asyncio.gather(*(loop.run_in_executor(None, p.stop) for p in procs))


def _guardian(node: Node, fault: str | None, done: Callable[[], None]) -> Eg2GuardianService:
    """A 2.x guardian's handlers on its node, driven by the node trusted as the coordinator."""
    del fault  # a 2.x guardian has no test faults: the tests play the liars from outside (spec/65.9)
    return Eg2GuardianService(node, COORDINATOR, on_done=done)


if __name__ == "__main__":
    party_main(sys.argv[1:], "A guardian node of a 2.x election (spec/65.9).", (), _guardian)
