"""The ElectionGuard key ceremony between guardian processes over the channels (spec/96).

`GuardianService` is the guardian side: routes on a node, one `EgGuardian` holding this guardian's secret
polynomial and nothing else. `coordinate` is the coordinator side: it drives the phases, checks everything
public, resolves disputed backups in public, and returns the outcome (which `votum ceremony` then publishes
to a board). `run_local` starts guardian processes on loopback and runs all of it."""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import os
import secrets
import signal
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from votum import (
    EgContext,
    EgGuardian,
    EgManifest,
    Group,
    eg_from_hex,
    eg_to_hex,
    eg_verify_challenge_answer,
    eg_verify_guardian_record,
    eg_verify_guardian_records,
)
from votum.errors import InvalidInput, VotumError
from votum.nodes import errors
from votum.nodes.channel import Message
from votum.nodes.identity import Card, Identity
from votum.nodes.keystore import PEERS_FILE, Keystore
from votum.nodes.local import PARENT_PIPE, NodeProcess, environment, stop_with_parent, trusting_homes
from votum.nodes.messages import pack, unpack
from votum.nodes.node import Node, NodeSettings, open_node
from votum.parties.common import agree_with_everyone, roster_sender, take_roster, wait_for_records

SEED_ENV = "VOTUM_CEREMONY_SEED"
COORDINATOR = "coordinator"
#: test-only misbehaviour of a guardian process (`--fault`): see `GuardianService`
FAULTS = ("vanish-at-records", "bad-backup", "bad-answer", "refuse-answer")


class CeremonyFailed(VotumError):
    """The ceremony stopped; `guardian` is the guardian at fault (or None), `phase` where it stopped.
    Nothing was published."""

    def __init__(self, phase: str, detail: str, guardian: str | None = None) -> None:
        self.phase = phase
        self.guardian = guardian
        self.detail = detail
        super().__init__(f"key ceremony failed in phase {phase!r}: {detail}")


def guardian_seed(seed: int, order: int) -> bytes:
    """Guardian `order`'s 32-byte seed for a reproducible ceremony (spec/96.5; tests only)."""
    return hashlib.sha256(
        b"votum/ceremony-seed/v1\0" + seed.to_bytes(8, "big", signed=False) + order.to_bytes(4, "big")
    ).digest()


def _pack(obj: object) -> bytes:
    return pack(obj)


def _unpack(payload: bytes) -> dict[str, Any]:
    return unpack(payload, "ceremony message")


def _backup_purpose(ceremony: str) -> str:
    return f"eg-backup/{ceremony}"


#: the purpose a guardian seals its own secret state for (spec/95.6)
STATE_PURPOSE = "eg-guardian-state"


def state_path(home: Path, ceremony: str) -> Path:
    """Where a guardian keeps its secret state of `ceremony`, sealed to its own key."""
    return home / f"eg-guardian-{ceremony}.sealed"


def _tamper(backup_json: str) -> str:
    """A backup whose encrypted coordinate is altered (its MAC then fails at the receiver)."""
    doc = json.loads(backup_json)
    enc = doc["encrypted_coordinate"]
    enc["data"] = ("1" if enc["data"][0] != "1" else "2") + enc["data"][1:]
    return json.dumps(doc)


class GuardianService:
    """The guardian side of spec/96 on `node`. Only the coordinator's node may drive it, and only the roster's
    guardians may send it backups. `fault` makes it misbehave on purpose (tests only):
    `vanish-at-records` exits the process when the records arrive, `bad-backup` alters the backup to the
    first receiver in order, `bad-answer` answers a dispute wrongly, `refuse-answer` raises instead (several
    are joined by commas)."""

    def __init__(
        self,
        node: Node,
        coordinator: str = COORDINATOR,
        seed: bytes | None = None,
        fault: str | None = None,
        timeout: float = 60.0,
        on_done: Callable[[], None] | None = None,
    ) -> None:
        self.faults = set(fault.split(",")) if fault else set()
        if not self.faults <= set(FAULTS):
            raise InvalidInput(f"unknown fault in {fault!r}; each one of {', '.join(FAULTS)}")
        self.node = node
        self.coordinator = node.keystore.find(coordinator)
        self._seed = seed
        self.timeout = timeout
        self.on_done = on_done
        self._reset()
        for kind, handler in (
            ("start", self._start),
            ("records", self._records),
            ("agree", self._agree),
            ("backup", self._backup),
            ("report", self._report),
            ("answer", self._answer),
            ("accept", self._accept),
            ("finish", self._finish),
            ("abort", self._abort),
        ):
            node.route(f"ceremony/{kind}", handler)

    def _reset(self) -> None:
        self.ceremony: str | None = None
        self.guardian: EgGuardian | None = None
        self.guardian_id = ""
        self.quorum = 0
        self.roster: dict[str, Card] = {}
        self.order: dict[str, int] = {}
        self.records: dict[str, str] = {}
        self.records_ready = asyncio.Event()
        #: the digest of the roster and record set this guardian was shown (spec/96.3)
        self.set_digest = b""
        self.received: dict[str, dict[str, Any]] = {}
        #: receivers that disputed this guardian's backup, as each told this guardian over its own channel
        self.disputed_by: set[str] = set()
        #: receivers whose dispute this guardian has answered (once each, spec/96.4)
        self.answered: set[str] = set()
        #: senders whose answer this guardian has accepted (once each)
        self.accepted: set[str] = set()
        self.finished = False

    # -- checks ---------------------------------------------------------------------------------------------

    def _from_coordinator(self, m: Message) -> dict[str, Any]:
        if m.peer.node_id != self.coordinator.node_id:
            raise errors.WrongSender(f"{m.peer.name} is not this ceremony's coordinator")
        body = _unpack(m.payload)
        if m.kind not in ("ceremony/start", "ceremony/abort") and body.get("ceremony") != self.ceremony:
            raise errors.HandlerError("not the ceremony this guardian takes part in")
        return body

    def _mine(self) -> EgGuardian:
        if self.guardian is None:
            raise errors.HandlerError("no ceremony started")
        return self.guardian

    async def _work(self, fn: Callable[..., Any], *args: Any) -> Any:
        return await self.node.run_in_worker(fn, *args)

    def _guardian_of(self, m: Message, claimed: object) -> str:
        """The roster guardian id `claimed` by the sender of `m`, if the channel's peer is that guardian."""
        return roster_sender(m, self.roster, self.guardian_id, claimed, "ceremony")

    def _set_digest(self, records: dict[str, str]) -> bytes:
        """What every guardian must have been shown alike: the ceremony, n, the quorum, the roster (ids,
        orders, node ids) and every record."""
        shown = {
            "ceremony": self.ceremony,
            "quorum": self.quorum,
            "roster": sorted([g, self.order[g], c.node_id] for g, c in self.roster.items()),
            "records": sorted([g, r] for g, r in records.items()),
        }
        return hashlib.sha256(b"votum/eg-ceremony-set/v1\0" + _pack(shown)).digest()

    # -- handlers -------------------------------------------------------------------------------------------

    async def _start(self, m: Message) -> bytes:
        body = self._from_coordinator(m)
        if self.guardian is not None and not self.finished:
            # one ceremony at a time: a second start would throw away a polynomial whose backups may be out
            raise errors.HandlerError(f"ceremony {self.ceremony} is under way; abort it first")
        self._reset()
        n, quorum = int(body["n"]), int(body["quorum"])
        roster = take_roster(self.node, body["roster"], str(body["guardian_id"]))
        order = {str(e["guardian_id"]): int(e["order"]) for e in body["roster"]}
        if len(roster) != n or sorted(order.values()) != list(range(1, n + 1)):
            raise errors.HandlerError(f"the roster must name {n} guardians with orders 1..{n}")
        self.ceremony = str(body["ceremony"])
        self.guardian_id, self.quorum = str(body["guardian_id"]), quorum
        self.roster, self.order = roster, order
        self.guardian = await self._work(
            EgGuardian, self.guardian_id, order[self.guardian_id], n, quorum, self._seed
        )
        return str(self._mine().public_record()).encode()

    async def _records(self, m: Message) -> bytes:
        body = self._from_coordinator(m)
        if "vanish-at-records" in self.faults:
            os._exit(3)
        me = self._mine()
        records = {str(k): str(v) for k, v in body["records"].items()}
        if set(records) != set(self.roster):
            raise errors.HandlerError("the records are not the roster's guardians'")
        if records[self.guardian_id] != me.public_record():
            raise errors.HandlerError("the records carry another record under this guardian's id")
        if self.set_digest:
            raise errors.HandlerError("the records of this ceremony came already")
        # claimed before the first await, so two `records` messages at once cannot both be taken
        self.set_digest = self._set_digest(records)
        await self._work(eg_verify_guardian_records, list(records.values()), self.quorum)  # one batch
        self.records = records
        self.records_ready.set()
        # no backup is made until every other guardian says it was shown the same roster and records: a
        # coordinator that shows this guardian a record of its own making would get the backup made for it
        await self._agree_with_everyone()
        # the backups in sequence order of their receivers: a seeded guardian draws as eg_key_ceremony does
        receivers = sorted((g for g in self.roster if g != self.guardian_id), key=self.order.__getitem__)
        backups: dict[str, str] = {}
        for gid in receivers:
            backups[gid] = await self._work(me.backup_for, records[gid])
        if "bad-backup" in self.faults and receivers:
            backups[receivers[0]] = _tamper(backups[receivers[0]])

        async def deliver(gid: str) -> tuple[str, str]:
            card = self.roster[gid]
            box = self.node.seal(card, _backup_purpose(self.ceremony or ""), backups[gid].encode())
            payload = _pack({"ceremony": self.ceremony, "sender": self.guardian_id, "box": box})
            try:
                answer = _unpack(await self.node.request(card, "ceremony/backup", payload, self.timeout))
            except (errors.NodeError, asyncio.TimeoutError) as e:
                return gid, f"undelivered: {e or type(e).__name__}"
            if answer.get("verified"):
                return gid, "ok"
            self.disputed_by.add(gid)  # the receiver says so itself, over its own channel
            return gid, f"disputed: {answer.get('reason', '')}"

        verdicts = dict(await asyncio.gather(*(deliver(g) for g in receivers)))
        return _pack({"backups": backups, "verdicts": verdicts})

    async def _agree_with_everyone(self) -> None:
        body = {"ceremony": self.ceremony, "digest": self.set_digest}
        await agree_with_everyone(
            self.node, self.roster, self.guardian_id, "ceremony/agree", body, self.timeout
        )

    async def _wait_for_records(self) -> None:
        await wait_for_records(self.records_ready, self.timeout)

    async def _agree(self, m: Message) -> bytes:
        """Another guardian's digest of what it was shown: answered with this guardian's own digest (each
        side compares; spec/96.3)."""
        body = _unpack(m.payload)
        if self.guardian is None or body.get("ceremony") != self.ceremony:
            raise errors.HandlerError("not the ceremony this guardian takes part in")
        self._guardian_of(m, body.get("sender"))
        await self._wait_for_records()
        return _pack({"digest": self.set_digest})

    async def _backup(self, m: Message) -> bytes:
        body = _unpack(m.payload)
        if self.guardian is None or body.get("ceremony") != self.ceremony:
            raise errors.HandlerError("not the ceremony this guardian takes part in")
        sender = self._guardian_of(m, body.get("sender"))
        card = self.roster[sender]
        await self._wait_for_records()
        if sender in self.received:
            raise errors.HandlerError(f"{sender} sent its backup already")
        backup = self.node.open_sealed(card, _backup_purpose(self.ceremony or ""), bytes(body["box"]))
        try:
            await self._work(self.guardian.receive_backup, self.records[sender], backup.decode())
            verdict: dict[str, Any] = {"verified": True, "reason": ""}
        except (VotumError, ValueError) as e:
            verdict = {"verified": False, "reason": str(e)}
        self.received[sender] = verdict
        return _pack(verdict)

    async def _report(self, m: Message) -> bytes:
        self._from_coordinator(m)
        return _pack({"received": self.received})

    async def _answer(self, m: Message) -> bytes:
        body = self._from_coordinator(m)
        receiver = str(body["receiver"])
        # the answer reveals the receiver's share in public: only for a receiver that disputed this
        # guardian's backup itself (its verdict came back on its own channel), and only once (spec/96.4)
        if receiver not in self.disputed_by:
            raise errors.HandlerError(f"{receiver} did not dispute {self.guardian_id}'s backup")
        if receiver in self.answered:
            raise errors.HandlerError(f"{receiver}'s dispute was answered already")
        self.answered.add(receiver)
        if "refuse-answer" in self.faults:
            raise errors.HandlerError("this guardian will not answer")
        answer = str(await self._work(self._mine().answer_challenge, self.records[receiver]))
        if "bad-answer" in self.faults:
            doc = json.loads(answer)
            value = int(doc["coordinate"], 16)
            doc["coordinate"] = f"{value + 1:X}"
            answer = json.dumps(doc)
        return answer.encode()

    async def _accept(self, m: Message) -> bytes:
        body = self._from_coordinator(m)
        sender = str(body["sender"])
        if self.received.get(sender, {}).get("verified", True) or sender in self.accepted:
            raise errors.HandlerError(f"{self.guardian_id} has no open dispute with {sender}")
        self.accepted.add(sender)
        await self._work(self._mine().accept_challenge_response, self.records[sender], str(body["answer"]))
        self.received[sender] = {"verified": True, "reason": "answered in public"}
        return _pack({})

    async def _finish(self, m: Message) -> bytes:
        body = self._from_coordinator(m)
        me = self._mine()
        if self.finished:
            raise errors.HandlerError(f"ceremony {self.ceremony} is finished already")
        if str(body.get("joint_key", "")).upper() != _joint_key(self.records):
            raise errors.HandlerError("the joint key is not the product of the agreed records' keys")
        held = len(me.backups_held)
        if held != len(self.roster) - 1:
            raise errors.HandlerError(f"this guardian holds {held} backups, not {len(self.roster) - 1}")
        path = state_path(self.node.identity.home, self.ceremony or "")
        state = me.expose_secret_state()
        box = self.node.identity.seal_for(self.node.identity.card, STATE_PURPOSE, state)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(box)
        self.finished = True
        if self.on_done is not None:
            asyncio.get_running_loop().call_later(0.2, self.on_done)
        return _pack({"backups_held": held, "state": path.name})

    async def _abort(self, m: Message) -> bytes:
        self._from_coordinator(m)
        self._reset()
        if self.on_done is not None:
            asyncio.get_running_loop().call_later(0.2, self.on_done)
        return _pack({})


def _joint_key(records: dict[str, str]) -> str:
    """The joint public key of a record set: the product of the guardians' election public keys."""
    group = Group("eg-4096")
    joint = group.identity
    for record in records.values():
        joint = joint * group.element_from_int(eg_from_hex(json.loads(record)["election_public_key"]))
    return str(eg_to_hex(joint.to_int())).upper()


def load_guardian_state(identity: Identity, ceremony: str, records: list[str]) -> EgGuardian:
    """A guardian's secret state as `finish` kept it, opened with its own key."""
    box = state_path(identity.home, ceremony).read_bytes()
    state = identity.open_sealed(identity.card, STATE_PURPOSE, box)
    return EgGuardian.from_secret_state(state, records)


# -- the coordinator -----------------------------------------------------------------------------------------


@dataclasses.dataclass
class Phase:
    name: str
    messages: int
    seconds: float


@dataclasses.dataclass
class Dispute:
    sender: str
    receiver: str
    reason: str
    answer: str


@dataclasses.dataclass
class CeremonyResult:
    ceremony: str
    quorum: int
    #: guardian id -> its card (sequence order is the roster's)
    guardians: dict[str, Card]
    records: dict[str, str]
    #: sender id -> receiver id -> backup JSON
    backups: dict[str, dict[str, str]]
    disputes: list[Dispute]
    context: EgContext
    phases: list[Phase]

    @property
    def joint_key(self) -> str:
        return str(eg_to_hex(self.context.elgamal_public_key.to_int()))

    @property
    def seconds(self) -> float:
        return sum(p.seconds for p in self.phases)


async def coordinate(
    node: Node,
    guardians: Sequence[str | Card],
    quorum: int,
    manifest: EgManifest,
    timeout: float = 60.0,
) -> CeremonyResult:
    """Runs the ceremony of spec/96 with `guardians` (in sequence order: guardian-1 is the first) and returns
    its outcome. Raises `CeremonyFailed` naming the guardian at fault; the guardians are then told to
    abort."""
    n = len(guardians)
    if n < 1 or not 1 <= quorum <= n:
        raise InvalidInput(f"quorum must be in 1..{n} (the number of guardians)")
    cards = {f"guardian-{i}": node.keystore.find(g) for i, g in enumerate(guardians, start=1)}
    if len({c.node_id for c in cards.values()}) != n:
        raise InvalidInput("a node appears twice among the guardians")
    ceremony = secrets.token_hex(8)
    phases: list[Phase] = []
    names = {gid: f"{gid} ({card.name})" for gid, card in cards.items()}

    async def ask_all(phase: str, kind: str, bodies: dict[str, dict[str, Any]]) -> dict[str, bytes]:
        t0 = time.perf_counter()

        async def one(gid: str) -> bytes:
            payload = _pack({"ceremony": ceremony, **bodies[gid]})
            try:
                return await node.request(cards[gid], kind, payload, timeout)
            except asyncio.TimeoutError:
                raise CeremonyFailed(phase, f"{names[gid]} did not answer within {timeout} s", gid) from None
            except errors.NodeError as e:
                raise CeremonyFailed(phase, f"{names[gid]}: {e}", gid) from None

        outcome = await asyncio.gather(*(one(g) for g in bodies), return_exceptions=True)
        failed = [e for e in outcome if isinstance(e, BaseException)]
        if failed:
            first = failed[0]
            if isinstance(first, CeremonyFailed) and len(failed) > 1:
                others = ", ".join(f.guardian or "?" for f in failed[1:] if isinstance(f, CeremonyFailed))
                raise CeremonyFailed(phase, f"{first.detail} (also failed: {others})", first.guardian)
            raise first
        if phases and phases[-1].name == phase:
            phases[-1].messages += len(bodies)
            phases[-1].seconds += time.perf_counter() - t0
        else:
            phases.append(Phase(phase, len(bodies), time.perf_counter() - t0))
        return {g: r for g, r in zip(bodies, outcome, strict=True) if isinstance(r, bytes)}

    try:
        return await _phases(node, cards, names, quorum, manifest, ceremony, phases, ask_all)
    except BaseException:
        abort = _pack({"ceremony": ceremony})
        await node.broadcast("ceremony/abort", abort, cards.values(), 5.0)
        raise


AskAll = Callable[[str, str, dict[str, dict[str, Any]]], Awaitable[dict[str, bytes]]]


async def _phases(
    node: Node,
    cards: dict[str, Card],
    names: dict[str, str],
    quorum: int,
    manifest: EgManifest,
    ceremony: str,
    phases: list[Phase],
    ask_all: AskAll,
) -> CeremonyResult:
    n = len(cards)
    loop = asyncio.get_running_loop()
    roster = [
        {"guardian_id": g, "order": i, "node_id": c.node_id, "address": c.address}
        for i, (g, c) in enumerate(cards.items(), start=1)
    ]
    # 1. start: each guardian makes its polynomial and answers with its public record
    answers = await ask_all(
        "start",
        "ceremony/start",
        {
            g: {"guardian_id": g, "order": i, "n": n, "quorum": quorum, "roster": roster}
            for i, g in enumerate(cards, start=1)
        },
    )
    records = {g: answers[g].decode() for g in cards}
    t0 = time.perf_counter()
    docs: dict[str, dict[str, Any]] = {}
    for i, gid in enumerate(cards, start=1):
        try:
            doc = json.loads(records[gid])
        except ValueError as e:
            raise CeremonyFailed("start", f"{names[gid]} sent a record that is not JSON: {e}", gid) from None
        if not isinstance(doc, dict) or doc.get("guardian_id") != gid or doc.get("sequence_order") != i:
            named = (doc.get("guardian_id"), doc.get("sequence_order")) if isinstance(doc, dict) else None
            raise CeremonyFailed("start", f"{names[gid]} sent a bad record: it names {named}", gid)
        docs[gid] = doc

    def check_proofs(gid: str) -> None:
        try:
            eg_verify_guardian_record(records[gid], quorum)
        except (VotumError, ValueError) as e:
            raise CeremonyFailed("start", f"{names[gid]} sent a bad record: {e}", gid) from None

    try:  # one batched check of every proof; when it fails, one record at a time names the guardian
        await loop.run_in_executor(None, eg_verify_guardian_records, list(records.values()), quorum)
    except (VotumError, ValueError) as e:
        for gid in cards:
            await loop.run_in_executor(None, check_proofs, gid)
        raise CeremonyFailed("start", f"the records do not hold together: {e}") from None
    seen: dict[str, str] = {}
    for gid, doc in docs.items():
        for c in doc["election_commitments"]:
            other = seen.setdefault(str(c).upper(), gid)
            if other != gid:
                raise CeremonyFailed("start", f"{names[gid]} repeats a commitment of {names[other]}", gid)
    phases[-1].seconds += time.perf_counter() - t0

    # 2. backups, point to point between the guardians
    answers = await ask_all("backups", "ceremony/records", {g: {"records": records} for g in cards})
    backups: dict[str, dict[str, str]] = {}
    for gid in cards:
        body = _unpack(answers[gid])
        backups[gid] = {str(r): str(b) for r, b in body["backups"].items()}
        for receiver, verdict in body["verdicts"].items():
            if str(verdict).startswith("undelivered"):
                raise CeremonyFailed(
                    "backups", f"{names[str(receiver)]} did not take {gid}'s backup: {verdict}", str(receiver)
                )
    phases[-1].messages += n * (n - 1)

    # 3. the receivers' verdicts decide
    answers = await ask_all("reports", "ceremony/report", {g: {} for g in cards})
    disputed: list[tuple[str, str, str]] = []
    for receiver in cards:
        received = _unpack(answers[receiver])["received"]
        for sender in cards:
            if sender == receiver:
                continue
            verdict = received.get(sender)
            if verdict is None:
                raise CeremonyFailed(
                    "reports", f"{names[receiver]} never received {sender}'s backup", receiver
                )
            if not verdict["verified"]:
                disputed.append((sender, receiver, str(verdict.get("reason", ""))))

    # 4. each dispute answered by its sender in public, checked here, accepted by its receiver
    disputes: list[Dispute] = []
    by_sender: dict[str, list[tuple[str, str]]] = {}
    for sender, receiver, reason in disputed:
        by_sender.setdefault(sender, []).append((receiver, reason))
    for k in range(max((len(v) for v in by_sender.values()), default=0)):
        asked = {s: v[k] for s, v in by_sender.items() if k < len(v)}
        answers = await ask_all(
            "disputes", "ceremony/answer", {s: {"receiver": r} for s, (r, _) in asked.items()}
        )
        for sender, (receiver, reason) in asked.items():
            answer = answers[sender].decode()
            try:
                doc = json.loads(answer)
                if doc.get("owner_id") != sender or doc.get("designated_id") != receiver:
                    raise InvalidInput("the answer names another sender or receiver")
                await loop.run_in_executor(None, eg_verify_challenge_answer, records[sender], answer)
            except (VotumError, ValueError) as e:
                raise CeremonyFailed(
                    "disputes", f"{names[sender]} answered {receiver}'s dispute wrongly: {e}", sender
                ) from None
            disputes.append(Dispute(sender, receiver, reason, answer))
    by_receiver: dict[str, list[Dispute]] = {}
    for d in disputes:
        by_receiver.setdefault(d.receiver, []).append(d)
    for k in range(max((len(v) for v in by_receiver.values()), default=0)):
        await ask_all(
            "disputes",
            "ceremony/accept",
            {
                r: {"sender": ds[k].sender, "answer": ds[k].answer}
                for r, ds in by_receiver.items()
                if k < len(ds)
            },
        )

    # 5. the joint key, and every guardian confirms it holds its backups
    try:
        context = await loop.run_in_executor(None, EgContext, [records[g] for g in cards], quorum, manifest)
    except VotumError as e:
        raise CeremonyFailed("finish", f"the records make no context: {e}") from None
    joint = eg_to_hex(context.elgamal_public_key.to_int())
    await ask_all("finish", "ceremony/finish", {g: {"joint_key": joint} for g in cards})
    return CeremonyResult(ceremony, quorum, cards, records, backups, disputes, context, phases)


# -- guardian processes on loopback --------------------------------------------------------------------------


def prepare_homes(root: Path, n: int) -> tuple[Path, list[Path]]:
    """The coordinator's and n guardians' homes under `root` (identities made once, kept between runs), each
    trusting the others: the coordinator trusts every guardian, each guardian the coordinator and the
    others."""
    homes = trusting_homes(root, [COORDINATOR] + [f"guardian-{i}" for i in range(1, n + 1)])
    return homes[0], homes[1:]


class GuardianProcess(NodeProcess):
    """`python -m votum.parties.ceremony HOME` in its own process, listening on a free port of `host` (on
    loopback by default); `prefix` runs it elsewhere (`ip netns exec NS` in the tests across interfaces)."""

    def __init__(
        self,
        home: Path,
        seed: bytes | None = None,
        fault: str | None = None,
        prefix: list[str] | None = None,
        host: str = "127.0.0.1",
    ) -> None:
        env = environment(SEED_ENV, seed.hex() if seed is not None else None)
        args = ["--fault", fault] if fault else []
        super().__init__("votum.parties.ceremony", home, args, env, prefix, host)

    def address(self, timeout: float) -> str:
        """The address it announced on its first line of output."""
        try:
            address = self.announced(timeout)
        except TimeoutError:
            raise CeremonyFailed(
                "launch", f"no guardian process announced itself within {timeout} s"
            ) from None
        if address is None:
            raise CeremonyFailed(
                "launch", f"the guardian process of {self.home.name} exited ({self.proc.poll()})"
            )
        return address


@dataclasses.dataclass
class LocalRun:
    result: CeremonyResult
    #: seconds to start the guardian processes (until each listens)
    launch_seconds: float


async def run_local(
    n: int,
    quorum: int,
    manifest: EgManifest,
    homes: Path,
    seed: int | None = None,
    faults: dict[int, str] | None = None,
    timeout: float = 60.0,
    placement: Callable[[int], tuple[list[str], str]] | None = None,
) -> LocalRun:
    """Starts n guardian processes on loopback (homes under `homes`) and coordinates their ceremony. `faults`
    (guardian order -> fault) is for tests, and so is `placement` (guardian order -> command prefix and
    host to bind). The processes are stopped however it ends."""
    coordinator_home, guardian_homes = prepare_homes(homes, n)
    faults = faults or {}
    t0 = time.perf_counter()
    procs = [
        GuardianProcess(
            h,
            guardian_seed(seed, i) if seed is not None else None,
            faults.get(i),
            *(placement(i) if placement else ([], "127.0.0.1")),
        )
        for i, h in enumerate(guardian_homes, start=1)
    ]
    loop = asyncio.get_running_loop()
    try:
        addresses = await asyncio.gather(
            *(loop.run_in_executor(None, p.address, 60.0) for p in procs), return_exceptions=True
        )
        for a in addresses:
            if isinstance(a, BaseException):
                raise a
        launch = time.perf_counter() - t0
        settings = NodeSettings(connect_timeout=min(timeout, 5.0))
        keystore = Keystore.load(coordinator_home / PEERS_FILE)
        node = Node(Identity(coordinator_home), keystore, settings)
        try:
            for h, address in zip(guardian_homes, addresses, strict=True):
                card = keystore.find(h.name)
                node.trust(dataclasses.replace(card, address=str(address)), card.fingerprint)
            result = await coordinate(node, [h.name for h in guardian_homes], quorum, manifest, timeout)
        finally:
            await node.close()
        return LocalRun(result, launch)
    finally:
        await asyncio.gather(*(loop.run_in_executor(None, p.stop) for p in procs))


def serve_guardian(
    home: Path,
    host: str = "127.0.0.1",
    port: int = 0,
    coordinator: str = COORDINATOR,
    fault: str | None = None,
    once: bool = True,
    announce: Callable[[str], None] | None = None,
    parent_pipe: bool = False,
) -> None:
    """Runs a guardian node until SIGTERM (or, with `once`, until its ceremony finishes or aborts; with
    `parent_pipe`, until its standard input ends: the coordinator that started it is gone). The seed,
    for a reproducible ceremony in tests only, comes from the environment (VOTUM_CEREMONY_SEED, hex)."""
    import uvloop

    seed_hex = os.environ.get(SEED_ENV)
    seed = bytes.fromhex(seed_hex) if seed_hex else None

    async def main() -> None:
        node = open_node(home, settings=NodeSettings(connect_timeout=5.0))
        stop = asyncio.Event()
        GuardianService(node, coordinator, seed, fault, on_done=stop.set if once else None)
        loop = asyncio.get_running_loop()
        # the group's fixed-base tables are built once per process (about 0.3 s): before the ceremony starts
        warm = loop.run_in_executor(None, _warm_up)
        bound = await node.start(host, port)
        await warm
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        if parent_pipe:
            stop_with_parent(stop)
        if announce is not None:
            announce(f"{bound[0]}:{bound[1]}")
        await stop.wait()
        await node.close()

    uvloop.run(main())


def _warm_up() -> None:
    """The group's tables, before the ceremony starts: the fast table of g, and the constant-time comb of g
    that every secret power of g uses (about 0.16 s, which the first backup paid inside the ceremony, in
    every guardian process at once)."""
    Group("eg-4096").warm()
    EgGuardian("warm-up", 1, 1, 1)


def _main(argv: list[str]) -> None:
    import argparse

    parser = argparse.ArgumentParser(description="A guardian node of a key ceremony (spec/96).")
    parser.add_argument("home", type=Path)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--coordinator", default=COORDINATOR)
    parser.add_argument("--fault", help="test only: " + ", ".join(FAULTS) + " (joined by commas)")
    parser.add_argument(PARENT_PIPE, action="store_true", help="stop when standard input ends")
    args = parser.parse_args(argv)

    def announce(address: str) -> None:
        print(json.dumps({"address": address}), flush=True)

    serve_guardian(
        args.home, args.host, args.port, args.coordinator, args.fault, True, announce, args.parent_pipe
    )


if __name__ == "__main__":
    _main(sys.argv[1:])
