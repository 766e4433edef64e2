"""An ElectionGuard 2.x election whose guardians are processes of their own, over the channels: egk-ec's form
(spec/65.9) or ElectionGuard 2.1 itself (spec/66.12).

`Eg2GuardianService` is the guardian side: routes on a node, one `Eg2Trustee` (egk-ec's form) or
`Eg21Trustee` (2.1) holding this guardian's secrets and nothing else. `coordinate` is the coordinator side:
it holds no secret; it drives the phases, writes the record, and is believed by no guardian on anything a
guardian can check:
- a guardian deals shares only after every other guardian says, over its own channel, that it was shown the
  same roster and records; each share goes straight to its receiver, sealed to the receiver's key;
- each guardian computes K and H_E itself, and the coordinator's must equal every guardian's;
- before decrypting, a guardian copies the record and checks the copy as far as its encrypted tally
  (V-EG2-01…08): K, H_E and the guardians must be its own, and the tally the sum of the valid cast
  ballots; it decrypts only that tally and the ballots the record marks challenged, once;
- each guardian derives every challenge itself and answers once, for its own shares unchanged.
In 2.1 each guardian also checks every key record (Verification 2) before dealing, deals its shares in
signed ElGamal under the receiver's κ, computes K, K̂, H_G and H_E itself, and decrypts in the commitment
round: it computes the tally, the contest data to decrypt and the challenged ballots from its checked copy
of the record, announces M_i and d_i, reveals its pairs only once every d_j is in, and answers against the
announcements it revealed for.
`run_local` starts the guardian processes on loopback and runs all of it."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import json
import re
import sys
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar

from votum import Eg2Coordinator, Eg2Trustee, Eg21Ceremony, Eg21Coordinator, Eg21Trustee
from votum.eg21_signing import SHARE_STATEMENT, signature_holds, statement
from votum.errors import InvalidInput, VotumError
from votum.nodes import errors
from votum.nodes.channel import Message
from votum.nodes.identity import Card
from votum.nodes.local import PartyProcess, controller_node, party_main
from votum.nodes.messages import pack, unpack
from votum.nodes.node import Node
from votum.parties.ceremony import COORDINATOR, prepare_homes
from votum.parties.common import agree_with_everyone, roster_sender, take_roster, wait_for_records
from votum.parties.record_copy import RecordSink, record_chunks

T = TypeVar("T")


class Eg2Failed(VotumError):
    """The election stopped in `phase`; `guardian` is the guardian at fault (or None). What the record
    directory holds then is incomplete and does not verify."""

    def __init__(self, phase: str, detail: str, guardian: str | None = None, gone: bool = False) -> None:
        self.phase = phase
        self.guardian = guardian
        self.detail = detail
        #: `guardian` did not answer (no answer in time, or its connection broke), rather than refusing
        self.gone = gone
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
        self.record: RecordSink | None = None
        #: the record stream being received: one at a time, so a coordinator cannot fill the disk with many
        self.incoming: RecordSink | None = None
        self._reset()
        for kind, handler in (
            ("start", self._start),
            ("records", self._records),
            ("agree", self._agree),
            ("share", self._share),
            ("joint", self._joint),
            ("shares", self._shares),
            ("announce", self._announce),
            ("reveal", self._reveal),
            ("answer", self._answer),
            ("abort", self._abort),
        ):
            node.route(f"eg2/{kind}", handler)
        node.route_stream("eg2/record", self._record_sink)

    def _reset(self) -> None:
        self.election: str | None = None
        self.trustee: Eg2Trustee | Eg21Trustee | None = None
        self.guardian_id = ""
        self.roster: dict[str, Card] = {}
        self.xs: dict[str, int] = {}
        self.digest = b""
        self.records_ready = asyncio.Event()
        self.received: dict[str, dict[str, Any]] = {}
        #: 2.1: each share refused, by dealer: the share as sent and this guardian's opening of it
        self.complaints: dict[str, dict[str, str]] = {}
        #: the joint keys computed: from then on the coordinator may send the record
        self.keyed = False
        self._drop_record()

    def _drop_record(self) -> None:
        """Removes the record copy received last (if any)."""
        old, self.record = self.record, None
        if old is not None:
            old.remove()

    def _record_sink(self, m: Message) -> RecordSink:
        """A record streamed by the coordinator (`eg2/record`, spec/65.9): written into a private directory of
        this guardian's, which replaces the one received before once the whole stream is in."""
        if m.peer.node_id != self.coordinator.node_id:
            raise errors.WrongSender(f"{m.peer.name} is not this election's coordinator")
        self._keyed()
        if self.incoming is not None and not self.incoming.ended:
            raise errors.HandlerError("a record is being received already: one stream at a time")

        def received(sink: RecordSink) -> None:
            self._drop_record()
            self.record = sink

        # under the node's home (mode 0700 directories of its own), not a shared temporary folder
        self.incoming = RecordSink(Path(self.node.identity.home), done=received)
        return self.incoming

    def _keyed(self) -> None:
        self._mine()
        if not self.keyed:
            raise errors.HandlerError("the key ceremony is not finished: no joint keys yet")

    def _received_record(self) -> Path:
        """The record the coordinator streamed: a guardian never reads a path the coordinator names."""
        self._keyed()
        if self.record is None:
            raise errors.HandlerError("no record received from the coordinator")
        return self.record.root

    def _from_coordinator(self, m: Message) -> dict[str, Any]:
        if m.peer.node_id != self.coordinator.node_id:
            raise errors.WrongSender(f"{m.peer.name} is not this election's coordinator")
        body = _unpack(m.payload)
        if m.kind not in ("eg2/start", "eg2/abort") and body.get("election") != self.election:
            raise errors.HandlerError("not the election this guardian takes part in")
        return body

    def _mine(self) -> Eg2Trustee | Eg21Trustee:
        if self.trustee is None:
            raise errors.HandlerError("no election started")
        return self.trustee

    def _mine_20(self) -> Eg2Trustee:
        me = self._mine()
        if not isinstance(me, Eg2Trustee):
            raise errors.HandlerError("a 2.0 (egk-ec form) step in a 2.1 election")
        return me

    def _mine_21(self) -> Eg21Trustee:
        me = self._mine()
        if not isinstance(me, Eg21Trustee):
            raise errors.HandlerError("a 2.1 step in an egk-ec form election")
        return me

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
        manifest = None if manifest is None else bytes(manifest)
        if body.get("version", "egk-ec") == "2.1":
            self.trustee = await self._work(Eg21Trustee, str(body["group"]), manifest, n, quorum, xs[gid])
        else:
            self.trustee = await self._work(Eg2Trustee, str(body["group"]), manifest, n, quorum, gid, xs[gid])
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
            # 2.1: signed, so that a receiver's complaint of it can be judged by anyone (spec/66.12)
            signature = b""
            if not isinstance(me, Eg2Trustee):  # 2.1
                signature = self.node.identity.sign_record(self._share_statement(self.guardian_id, share))
            del share
            payload = pack(
                {"election": self.election, "sender": self.guardian_id, "box": box, "signature": signature}
            )
            try:
                answer = _unpack(await self.node.request(card, "eg2/share", payload, self.timeout))
            except (errors.NodeError, asyncio.TimeoutError) as e:
                return gid, f"undelivered: {e or type(e).__name__}"
            return gid, "ok" if answer.get("verified") else f"refused: {answer.get('reason', '')}"

        verdicts = dict(await asyncio.gather(*(deliver(g) for g in receivers)))
        return pack({"verdicts": verdicts})

    def _share_statement(self, dealer: str, share: bytes) -> bytes:
        """What a 2.1 dealer's node signs about a share it deals (its JSON names dealer and receiver)."""
        return share_statement(self.election or "", self.xs[dealer], share)

    def _signed_share(self, dealer: str, share: bytes, signature: bytes) -> bool:
        """Whether `signature` is the dealer's node's on `share` (a share that is not text is not)."""
        try:
            statement = self._share_statement(dealer, share)
        except UnicodeDecodeError:
            return False
        return signature_holds(self.roster[dealer].signing_key, statement, signature)

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
        me = self._mine()
        signature = bytes(body.get("signature") or b"")
        try:
            if isinstance(me, Eg21Trustee) and not self._signed_share(sender, share, signature):
                # no proof of what the dealer dealt: refused, and the complaint can show nothing (spec/66.12)
                self.received[sender] = {"verified": False, "reason": "the share is not signed by its dealer"}
                self.complaints[sender] = {"unsigned": "1"}
                return pack(self.received[sender])
            await self.node.run_in_worker(me.receive, self.xs[sender], share)
            verdict: dict[str, Any] = {"verified": True, "reason": ""}
        except (VotumError, ValueError) as e:
            verdict = {"verified": False, "reason": str(e)}
            if isinstance(me, Eg21Trustee):
                # 2.1: the complaint carries this guardian's opening of the share (spec/66.4), which the
                # coordinator judges with no secret: a cheating dealer is named, a false complaint too
                try:
                    opening = await self.node.run_in_worker(me.open_share, self.xs[sender], share)
                    self.complaints[sender] = {
                        "share": share.decode(),
                        "signature": signature.hex(),
                        "opening": str(opening),
                    }
                except (VotumError, ValueError) as why:
                    verdict["reason"] += f" (and it cannot be opened: {why})"
        del share
        self.received[sender] = verdict
        return pack(verdict)

    async def _joint(self, m: Message) -> bytes:
        self._from_coordinator(m)
        bad = {g: v["reason"] for g, v in self.received.items() if not v["verified"]}
        me = self._mine()
        if bad and isinstance(me, Eg21Trustee) and set(bad) == set(self.complaints):
            return pack({"complaints": {g: {**self.complaints[g], "reason": bad[g]} for g in sorted(bad)}})
        if bad:
            raise errors.HandlerError(f"shares refused: {bad}")
        if isinstance(me, Eg21Trustee):
            keys = await self._work(me.joint)
            self.keyed = True
            return pack({"keys": keys})
        key, he = await self._work(me.joint)
        self.keyed = True
        return pack({"key": key, "he": he})

    async def _shares(self, m: Message) -> bytes:
        self._from_coordinator(m)  # no path in it: the record is the one streamed to this guardian
        try:
            shares = await self._work(self._mine_20().decryption_shares, self._received_record())
        finally:
            self._drop_record()  # the trustee checked and kept its own copy; a refused one is sent again
        return str(shares).encode()

    async def _announce(self, m: Message) -> bytes:
        body = self._from_coordinator(m)
        available = [int(i) for i in body["available"]]
        try:
            doc = await self._work(self._mine_21().announce, self._received_record(), available)
        finally:
            self._drop_record()  # the trustee checked and kept its own copy; a refused one is sent again
        return str(doc).encode()

    async def _reveal(self, m: Message) -> bytes:
        body = self._from_coordinator(m)
        doc = await self._work(self._mine_21().reveal, [str(a) for a in body["announces"]])
        return str(doc).encode()

    async def _answer(self, m: Message) -> bytes:
        body = self._from_coordinator(m)
        me = self._mine()
        if isinstance(me, Eg21Trustee):
            answer = await self._work(me.answer, [str(r) for r in body["reveals"]])
        else:
            answer = await self._work(me.answer, [str(s) for s in body["shares"]])
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
    #: "egk-ec" (spec/65.9) or "2.1" (spec/66.12)
    version: str = "egk-ec"
    #: with 2.1: simple chaining, ballots printed in advance, contest data (as `Eg2Config`)
    chaining: bool = False
    pre_encrypted: int = 0
    contest_data: str = "manifest"

    @property
    def work_seconds(self) -> float:
        """How long a guardian may take to answer the first decryption request: it copies the record, checks
        every ballot with the verifier and recomputes the tally first (WORK_BASE, and WORK_PER_BALLOT for
        each ballot). A guardian that is gone is still seen at once: its channel closes."""
        return WORK_BASE + WORK_PER_BALLOT * (self.ballots + self.pre_encrypted)


class Ask(Protocol):
    """The coordinator's request to some guardians, one body each; `seconds` instead of its timeout."""

    def __call__(
        self, phase: str, kind: str, bodies: dict[str, dict[str, Any]], seconds: float | None = None
    ) -> Awaitable[dict[str, bytes]]: ...


#: the seconds every decryption request may take, whatever the record (see `Eg2Plan.work_seconds`)
WORK_BASE = 120.0
#: the seconds per ballot on top: a 4096-bit ballot's whole check takes about 25 ms on one core here, and the
#: guardians of one machine share its cores (three guardians on two cores: about 40 ms a ballot)
WORK_PER_BALLOT = 0.1


async def _every(work: Iterable[Awaitable[T]]) -> list[T]:
    """Every one of `work` run to its end, then the first exception raised, if any (none is left running)."""
    outcome = await asyncio.gather(*work, return_exceptions=True)
    for e in outcome:
        if isinstance(e, BaseException):
            raise e
    return [r for r in outcome if not isinstance(r, BaseException)]


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

    async def ask(
        phase: str, kind: str, bodies: dict[str, dict[str, Any]], seconds: float | None = None
    ) -> dict[str, bytes]:
        t0 = time.perf_counter()
        wait = timeout if seconds is None else seconds

        async def one(gid: str) -> bytes:
            payload = pack({"election": election, **bodies[gid]})
            try:
                return await node.request(cards[gid], kind, payload, wait)
            except asyncio.TimeoutError:
                raise Eg2Failed(phase, f"{gid} did not answer within {wait:.0f} s", gid, gone=True) from None
            except errors.PeerUnavailable as e:
                raise Eg2Failed(phase, f"{gid}: {e}", gid, gone=True) from None
            except errors.NodeError as e:
                raise Eg2Failed(phase, f"{gid}: {e}", gid) from None

        outcome = await _every(one(g) for g in bodies)
        phases[phase] = phases.get(phase, 0.0) + time.perf_counter() - t0
        return dict(zip(bodies, outcome, strict=True))

    try:
        return await _phases(node, cards, plan, election, phases, ask)
    except BaseException:
        abort = pack({"election": election})
        await node.broadcast("eg2/abort", abort, cards.values(), 5.0)
        raise


async def _phases(
    node: Node,
    cards: dict[str, Card],
    plan: Eg2Plan,
    election: str,
    phases: dict[str, float],
    ask: Ask,
) -> Eg2Run:
    n = len(cards)
    loop = asyncio.get_running_loop()
    decrypting = list(cards)[: plan.decrypting or n]
    if len(decrypting) < plan.quorum:
        raise InvalidInput(f"{len(decrypting)} guardians cannot decrypt: the quorum is {plan.quorum}")
    coordinator: Eg2Coordinator | Eg21Coordinator
    manifest = plan.manifest
    if plan.version == "2.1":
        coordinator = Eg21Coordinator(
            plan.out,
            plan.group,
            plan.manifest,
            n,
            plan.quorum,
            list(range(1, len(decrypting) + 1)),
            plan.ballots,
            plan.challenge_every,
            plan.seed,
            simple_chaining=plan.chaining,
            pre_encrypted=plan.pre_encrypted,
            contest_data=plan.contest_data,
        )
        # the manifest as amended for Ω or contest data: its bytes are H_B's input
        manifest = coordinator.manifest
    else:
        coordinator = Eg2Coordinator(plan.out, plan.group, plan.manifest, n, plan.quorum)
    roster = [
        {"guardian_id": g, "x": i, "node_id": c.node_id, "address": c.address}
        for i, (g, c) in enumerate(cards.items(), start=1)
    ]
    start = {
        "group": plan.group,
        "manifest": manifest,
        "n": n,
        "quorum": plan.quorum,
        "roster": roster,
        "version": plan.version,
    }
    answers = await ask("start", "eg2/start", {g: {**start, "guardian_id": g} for g in cards})
    records = {g: answers[g].decode() for g in cards}

    answers = await ask("shares dealt", "eg2/records", {g: {"records": records} for g in cards})
    for dealer in cards:
        for receiver, verdict in _unpack(answers[dealer])["verdicts"].items():
            # in 2.1 a refusal is the receiver's complaint, judged on its opening at the next step: the
            # dealer's word that its share was refused (or taken) decides nothing
            if verdict == "ok" or (plan.version == "2.1" and str(verdict).startswith("refused")):
                continue
            at_fault = dealer if str(verdict).startswith("refused") else str(receiver)
            raise Eg2Failed("shares dealt", f"{dealer}'s share for {receiver}: {verdict}", at_fault)

    answers = await ask("joint key", "eg2/joint", {g: {} for g in cards})
    if plan.version == "2.1":
        ceremony = Eg21Ceremony(plan.group, manifest or b"", n, plan.quorum)
        keys = {g: c.signing_key for g, c in cards.items()}
        judge_complaints(ceremony, records, {g: _unpack(a) for g, a in answers.items()}, election, keys)
    try:
        opened = await loop.run_in_executor(None, coordinator.open, [records[g] for g in cards])
    except VotumError as e:
        raise Eg2Failed(
            "joint key", f"the records make no election: {e}", _named(str(e), list(cards))
        ) from None
    for gid in cards:
        theirs = _unpack(answers[gid])
        if isinstance(opened, str):
            if json.loads(str(theirs["keys"])) != json.loads(opened):
                raise Eg2Failed("joint key", f"{gid} computed another K, K̂, H_G or H_E", gid)
        elif (theirs["key"], theirs["he"]) != opened:
            raise Eg2Failed("joint key", f"{gid} computed another K or H_E", gid)

    t0 = time.perf_counter()
    if isinstance(coordinator, Eg21Coordinator):
        await loop.run_in_executor(None, coordinator.cast)
    else:
        await loop.run_in_executor(None, coordinator.cast, plan.ballots, plan.challenge_every, plan.seed)
    phases["ballots"] = time.perf_counter() - t0

    await _send_record(node, {g: cards[g] for g in decrypting}, plan.out, phases)
    if isinstance(coordinator, Eg21Coordinator):
        summary, decrypting = await _decrypt_21_with_spares(
            node, cards, coordinator, plan, decrypting, phases, ask
        )
    else:
        summary = await _decrypt_20(coordinator, plan, decrypting, phases, ask)
    # guardians not decrypting are done too (one that has gone does not answer: that changes nothing now)
    rest = [g for g in cards if g not in decrypting]
    if rest:
        with contextlib.suppress(Eg2Failed):
            await ask("done", "eg2/abort", {g: {} for g in rest}, 5.0)
    return Eg2Run(election, dict(summary), phases)


async def _decrypt_20(
    coordinator: Eg2Coordinator,
    plan: Eg2Plan,
    decrypting: list[str],
    phases: dict[str, float],
    ask: Ask,
) -> dict[str, Any]:
    """egk-ec's form (spec/65.9): shares, then answers to the challenges each guardian derives."""
    answers = await ask("decryption shares", "eg2/shares", {g: {} for g in decrypting}, plan.work_seconds)
    shares = [answers[g].decode() for g in decrypting]
    answers = await ask("answers", "eg2/answer", {g: {"shares": shares} for g in decrypting})
    return await _combine(
        phases, decrypting, coordinator.finish, shares, [answers[g].decode() for g in decrypting]
    )


async def _decrypt_21(
    coordinator: Eg21Coordinator,
    plan: Eg2Plan,
    decrypting: list[str],
    phases: dict[str, float],
    ask: Ask,
) -> dict[str, Any]:
    """2.1's commitment round (spec/66.12): announcements (M_i, d_i and nonce parts), then the pairs once
    every d_j is in, then the responses; the coordinator checks each and names a wrong one."""
    body = {"available": coordinator.available}
    answers = await ask("announcements", "eg2/announce", {g: body for g in decrypting}, plan.work_seconds)
    announces = [answers[g].decode() for g in decrypting]
    answers = await ask("reveals", "eg2/reveal", {g: {"announces": announces} for g in decrypting})
    reveals = [answers[g].decode() for g in decrypting]
    answers = await ask("answers", "eg2/answer", {g: {"reveals": reveals} for g in decrypting})
    answered = [answers[g].decode() for g in decrypting]
    return await _combine(phases, decrypting, coordinator.finish, announces, reveals, answered)


async def _combine(
    phases: dict[str, float], decrypting: list[str], finish: Callable[..., dict[str, Any]], *args: Any
) -> dict[str, Any]:
    """The coordinator's `finish` off the event loop: every answer checked and combined, the record
    written; a core error names the guardian at fault."""
    t0 = time.perf_counter()
    try:
        summary = await asyncio.get_running_loop().run_in_executor(None, finish, *args)
    except VotumError as e:
        raise Eg2Failed("combination", str(e), _named(str(e), decrypting)) from None
    phases["combination"] = time.perf_counter() - t0
    return summary


#: the rounds of 2.1's decryption a guardian may be gone in, and the decryption started again without it
ROUNDS_21 = ("announcements", "reveals", "answers")


async def _decrypt_21_with_spares(
    node: Node,
    cards: dict[str, Card],
    coordinator: Eg21Coordinator,
    plan: Eg2Plan,
    decrypting: list[str],
    phases: dict[str, float],
    ask: Ask,
) -> tuple[dict[str, Any], list[str]]:
    """2.1's decryption (spec/66.12), started again with another U when a guardian of U is gone in one of its
    rounds (no answer in time, or its connection broke) and enough others are left: each guardian of the new
    U announces again for the same values, with fresh nonces (one that refuses, rather than goes, stops the
    election). The record goes to every guardian of the new U first. Returns the summary and the U that
    decrypted."""
    gone: set[str] = set()
    while True:
        try:
            return await _decrypt_21(coordinator, plan, decrypting, phases, ask), decrypting
        except Eg2Failed as e:
            if not (e.gone and e.phase in ROUNDS_21 and e.guardian in decrypting):
                raise
            gone.add(str(e.guardian))
            left = [g for g in cards if g not in gone]
            if len(left) < plan.quorum:
                raise Eg2Failed(
                    e.phase, f"{e.detail}; fewer than {plan.quorum} guardians are left", e.guardian
                ) from None
            decrypting = left[: len(decrypting)]
            coordinator.set_available([list(cards).index(g) + 1 for g in decrypting])
            # to every guardian of the new U: each dropped its copy once it had announced
            await _send_record(node, {g: cards[g] for g in decrypting}, plan.out, phases)


async def _send_record(node: Node, to: dict[str, Card], out: Path, phases: dict[str, float]) -> None:
    """Streams the record as it stands (the ballots, before any decryption) to every guardian that decrypts
    (spec/65.9); each must answer the SHA-256 of the bytes sent to it."""
    t0 = time.perf_counter()

    async def one(gid: str) -> None:
        sent = hashlib.sha256()
        try:
            got = await node.stream(to[gid], "eg2/record", record_chunks(out, sent))
        except errors.NodeError as e:
            raise Eg2Failed("record sent", f"{gid}: {e}", gid) from None
        if got != sent.digest():
            raise Eg2Failed("record sent", f"{gid} received another record", gid)

    await _every(one(g) for g in to)
    phases["record sent"] = phases.get("record sent", 0.0) + time.perf_counter() - t0


def share_statement(election: str, dealer: int, share: bytes) -> bytes:
    """What a 2.1 dealer's node signs about a share it deals over the channels (spec/66.12)."""
    return statement(SHARE_STATEMENT, election, dealer, share.decode())


def judge_complaints(
    ceremony: Eg21Ceremony,
    records: dict[str, str],
    joint: dict[str, dict[str, Any]],
    election: str,
    signing_keys: dict[str, bytes],
) -> None:
    """2.1 over the channels (spec/66.12): each guardian's `eg2/joint` answer either holds its guardians'
    document or the shares it refused, each as its dealer signed it and with its opening (spec/66.4). The
    coordinator judges each with no secret and names who cheated: the dealer when the opened share fails its
    commitments, the complaining guardian when it does not (a false complaint), when its opening is not its
    own, or when the share it shows is not signed by the dealer's node (`signing_keys`, the roster's)."""
    ids = list(records)
    for receiver, answer in joint.items():
        for dealer, complaint in dict(answer.get("complaints") or {}).items():
            if dealer not in records or dealer == receiver or not isinstance(complaint, dict):
                raise Eg2Failed(
                    "joint key",
                    f"{receiver} sent a complaint of {dealer!r} that names no other guardian's share",
                    receiver,
                )
            if complaint.get("unsigned"):
                raise Eg2Failed(
                    "joint key",
                    f"{receiver} says {dealer}'s share came without its node's signature: one of the two "
                    "is at fault, and nothing shows which",
                    None,
                )
            try:
                share = str(complaint["share"]).encode()
                if json.loads(share).get("from") != ids.index(dealer) + 1:
                    raise InvalidInput(f"the share it shows is not {dealer}'s")
                signed = share_statement(election, ids.index(dealer) + 1, share)
                if not signature_holds(
                    signing_keys[dealer], signed, bytes.fromhex(str(complaint["signature"]))
                ):
                    raise InvalidInput(f"the share it shows is not signed by {dealer}'s node")
                fault = ceremony.judge_complaint(
                    records[dealer].encode(),
                    records[receiver].encode(),
                    share,
                    str(complaint["opening"]).encode(),
                )
            except (VotumError, ValueError, KeyError, TypeError, AttributeError) as e:
                raise Eg2Failed(
                    "joint key", f"{receiver}'s complaint of {dealer}'s share does not stand: {e!r}", receiver
                ) from None
            raise Eg2Failed("joint key", f"{dealer}'s share for {receiver} is bad (opened): {fault}", dealer)


def _named(message: str, guardians: list[str]) -> str | None:
    """The guardian a core error names: egk-ec's records call guardian i `guardian-i`, 2.1's errors
    `guardian i`."""
    for i, g in enumerate(guardians, start=1):
        if g in message or re.search(rf"\bguardian {i}\b", message):
            return g
    return None


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
