"""A mixnet election between separate processes (spec/91.9): the authorities (authority a is trustee a and
mixer a where those exist) and the voters' client, each a node on the channels of spec/95, driven by a
controller that is also the board and the record's only writer.

Every party keeps its own copy of the board (`votum.MixParty`): each request carries the entries the party has
not yet seen and the controller's head, and the party appends them through the board's own checks and compares
heads before it acts. It acts once per phase, on its copy only. A trustee's shares go sealed to each other
trustee over their own channel, never through the controller. Each authority's entries carry its node's
signature, which the board, every copy and the verifier check (V-MIX-08).

`run_local` starts every party on loopback and drives the election; `python -m votum.parties.mix HOME` is one
party's process.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from votum import MixBoardFile, MixParty, mix_parameters
from votum.errors import VotumError
from votum.nodes import errors
from votum.nodes.channel import Message
from votum.nodes.local import PartyProcess, apply_roster, controller_node, party_main, trusting_homes
from votum.nodes.messages import pack, unpack
from votum.nodes.node import Node
from votum.parties.common import CONTROLLER, Blamed, Handler, Program, send

VOTERS = "voters"
#: tests only: an authority that crashes in its shuffle, or answers without its signature
FAULTS = ("die-in-shuffle", "unsigned-answer")


def authority_name(a: int) -> str:
    """Authority a (1-based): trustee a and mixer a where those exist."""
    return f"authority-{a}"


def party_names(authorities: int) -> list[str]:
    return [VOTERS, *(authority_name(a) for a in range(1, authorities + 1))]


class MixFailed(VotumError):
    """A phase did not complete: names the phase and the party that failed it. No record is left."""

    def __init__(self, phase: str, detail: str, party: str | None = None) -> None:
        self.phase, self.detail, self.party = phase, detail, party
        who = f" ({party})" if party else ""
        super().__init__(f"{phase}{who}: {detail}")


def _share_purpose(election: str, dealer: int) -> str:
    return f"mix/{election}/share/{dealer}"


def rows_digest(rows: list[list[int]]) -> str:
    """A digest of a multiset of rows (sorted): the voters' client's cast rows against the decrypted ones."""
    h = hashlib.sha256()
    for row in sorted(rows):
        h.update(b",".join(str(v).encode() for v in row) + b";")
    return h.hexdigest()


class Party(Program):
    """One process's part; the role comes with the controller's `mix/setup`."""

    def __init__(
        self, node: Node, fault: str | None = None, on_done: Callable[[], None] | None = None
    ) -> None:
        self.fault, self.on_done = fault, on_done
        self.index = -1
        self.party: MixParty | None = None
        #: shares that came from their dealers, still sealed, until the next request hands them to the copy
        #: (a dealer's share can arrive while this trustee is dealing itself)
        self.boxes: dict[int, bytes] = {}
        #: one request at a time works on this party's copy, in the order they came
        self.lock = asyncio.Lock()
        routes: dict[str, Handler] = {
            "mix/setup": self._setup,
            "mix/sync": self._sync_only,
            "mix/deal": self._deal,
            "mix/share": self._share,
            "mix/cast": self._cast,
            "mix/shuffle": self._shuffle,
            "mix/decrypt": self._decrypt,
            "mix/close": self._close,
        }
        super().__init__(node, "mix", routes)

    # -- checks and helpers ----------------------------------------------------------------------------------

    def _mine(self) -> MixParty:
        if self.party is None:
            raise errors.HandlerError("not set up")
        return self.party

    async def _sync(self, body: dict[str, Any]) -> MixParty:
        """The controller's entries since the last request, appended to this party's copy (spec/91.9), after
        the shares that came in meanwhile (their dealers' keys may be among the entries)."""
        party = self._mine()
        boxes, self.boxes = self.boxes, {}
        for dealer, box in sorted(boxes.items()):
            share = self.node.open_sealed(authority_name(dealer), _share_purpose(self.election, dealer), box)
            await self._work(party.receive_share, dealer, share)
            del share
        entries = [(str(k), str(n), bytes(p)) for k, n, p in body.get("entries", [])]
        await self._work(party.sync, entries, bytes(body["head"]))
        return party

    def _signed(self, signed: dict[str, Any]) -> bytes:
        """An answer the board posts as this authority's entry: the payload and this node's signature on its
        statement (spec/91.9), which the board, every copy and the verifier check (V-MIX-08)."""
        payload = bytes(signed["payload"])
        if self.fault == "unsigned-answer":
            return payload
        return pack(
            {"payload": payload, "signature": self.node.identity.sign_record(bytes(signed["statement"]))}
        )

    # -- the phases ------------------------------------------------------------------------------------------

    async def _setup(self, m: Message) -> bytes:
        body = self._body(m)
        async with self.lock:
            if self.party is not None:
                raise errors.HandlerError("this party is set up already")
            index = int(body["index"])
            if self.node.name != (authority_name(index) if index else VOTERS):
                raise errors.HandlerError(f"{self.node.name} is not party {index}")
            apply_roster(self.node, dict(body.get("roster", {})))
            key = self.node.identity.card.signing_key if index else None
            self.party = await self._work(MixParty, bytes(body["parameters"]), index, key)
            self.election, self.index, self.timeout = str(body["election"]), index, float(body["timeout"])
        return b""

    async def _sync_only(self, m: Message) -> bytes:
        body = self._body(m)
        async with self.lock:
            party = await self._sync(body)
            return party.head()

    async def _deal(self, m: Message) -> bytes:
        """Its dealing, once: each share sealed to its trustee and sent to it directly, then the signed
        `trustee-a` entry for the board."""
        body = self._body(m)
        async with self.lock:
            party = await self._sync(body)
            signed, shares = await self._work(party.deal)
            boxes = [
                (j, self.node.seal(authority_name(j), _share_purpose(self.election, self.index), share))
                for j, share in shares
            ]
            del shares
            await asyncio.gather(
                *(
                    self._ask(authority_name(j), "mix/share", {"dealer": self.index, "box": box})
                    for j, box in boxes
                )
            )
            return self._signed(signed)

    async def _share(self, m: Message) -> bytes:
        """Trustee `dealer`'s share for this trustee, from the node trusted as that trustee, once. Kept sealed
        until this party's next request from the controller (its copy takes it then, spec/91.9)."""
        dealer = int(unpack(m.payload, m.kind).get("dealer", -1))
        body = self._body(m, sender=authority_name(dealer))
        self._mine()
        if dealer == self.index or dealer in self.boxes:
            raise errors.HandlerError(f"a second share from {authority_name(dealer)}")
        self.boxes[dealer] = bytes(body["box"])
        return b""

    async def _cast(self, m: Message) -> bytes:
        body = self._body(m)
        async with self.lock:
            party = await self._sync(body)
            choices = body.get("choices")
            votes = None if choices is None else [[int(v) for v in row] for row in choices]
            ballots, rows = await self._work(party.cast, int(body["voters"]), votes)
            return pack({"ballots": ballots, "expected": rows_digest(rows)})

    async def _shuffle(self, m: Message) -> bytes:
        body = self._body(m)
        async with self.lock:
            party = await self._sync(body)
            if self.fault == "die-in-shuffle":
                os._exit(17)  # a crash, as a killed process: nothing is flushed or answered
            return self._signed(await self._work(party.shuffle))

    async def _decrypt(self, m: Message) -> bytes:
        body = self._body(m)
        async with self.lock:
            party = await self._sync(body)
            return self._signed(await self._work(party.decrypt))

    async def _close(self, m: Message) -> bytes:
        self._body(m)
        self.party = None
        if self.on_done is not None:
            asyncio.get_running_loop().call_later(0.05, self.on_done)
        return b""


# -- the controller ------------------------------------------------------------------------------------------


@dataclasses.dataclass
class MixRun:
    """What a run across processes did: its phases (name, seconds), the outcome, whether the decrypted rows
    are the rows the voters' client cast (as a multiset), and the record."""

    phases: list[tuple[str, float]]
    outcome: dict[str, Any]
    exact: bool
    record: Path
    head: bytes
    #: the decrypted rows, as the board posted them, and the record's number of entries
    plaintexts: list[list[int]]
    entries: int
    parameters: bytes = b""
    launch_seconds: float = 0.0


@dataclasses.dataclass(frozen=True)
class Election:
    """What to run: the group, the ballot, the counting rule and the authorities."""

    group: str = "ristretto255"
    candidates: int = 3
    width: int = 1
    rule: str = "plurality"
    seats: int = 1
    k: int | None = None
    ties: str = "lower-number"
    mixers: int = 3
    trustees: int = 3
    quorum: int = 2

    @property
    def authorities(self) -> int:
        return max(self.mixers, self.trustees)


def signed_entry(answer: bytes, authority: str, phase: str) -> tuple[bytes, bytes]:
    """An authority's answer as (payload, signature); one that is not a signed answer fails the run naming the
    authority."""
    try:
        body = unpack(answer, "answer")
        return bytes(body["payload"]), bytes(body["signature"])
    except (VotumError, KeyError, TypeError, ValueError) as e:
        raise MixFailed(phase, f"not a signed answer ({type(e).__name__})", authority) from e


async def coordinate(
    node: Node,
    address: str,
    election: Election,
    voters: int,
    record: Path,
    choices: list[list[int]] | None = None,
    timeout: float = 600.0,
    progress: Callable[[str], object] | None = None,
) -> MixRun:
    """Drives the election from `node` (the controller and board, listening at `address`, trusting every
    party) and writes its record. Raises `MixFailed` naming the phase and the party when one fails; no record
    is left then."""
    election_id = f"mix-{os.urandom(6).hex()}"
    authorities = [authority_name(a) for a in range(1, election.authorities + 1)]
    trustees = authorities[: election.trustees]
    phases: list[tuple[str, float]] = []
    phase = "creating public parameters"
    t0 = time.perf_counter()
    board: MixBoardFile | None = None
    posted: list[tuple[str, str, bytes]] = []
    final_head = b""
    shown: dict[str, int] = {}
    locks: dict[str, asyncio.Lock] = {}
    #: the trustees' checks of each shuffle, running while the next mixer shuffles
    checks: list[asyncio.Task[bytes]] = []

    def begin(name: str) -> None:
        nonlocal phase, t0
        phase, t0 = name, time.perf_counter()
        if progress is not None:
            progress(name)

    def done() -> None:
        phases.append((phase, time.perf_counter() - t0))

    def post(kind: str, name: str, payload: bytes) -> None:
        assert board is not None
        board.post(kind, name, payload)
        posted.append((kind, name, payload))

    def post_signed(kind: str, name: str, authority: str, answer: bytes) -> bytes:
        payload, signature = signed_entry(answer, authority, phase)
        try:
            post(kind, name, payload)
            post("signature", name, signature)
        except VotumError as e:
            raise MixFailed(phase, f"{name}: {type(e).__name__}: {e}", authority) from e
        return payload

    async def ask(party: str, kind: str, body: dict[str, Any], show: bool = True) -> bytes:
        """A request with the entries `party` has not seen and the head after them (none with `show` off:
        the party acts on nothing new); one request at a time per party, in the order asked. Longer than the
        parties' own limit on what they ask each other, so theirs fires first and names the party that held
        them up."""
        async with locks.setdefault(party, asyncio.Lock()):
            start = shown.get(party, 0)
            entries, head = posted[start:], board.head() if board is not None else final_head
            if show:
                shown[party] = len(posted)
            else:
                entries = []
            payload = pack({"election": election_id, "entries": entries, "head": head, **body})
            try:
                return await send(node, party, "mix", kind, payload, timeout)
            except Blamed as e:
                raise MixFailed(phase, e.detail, e.party) from e

    signers = [node.keystore.find(a).signing_key for a in authorities]
    try:
        parameters = mix_parameters(
            election.group,
            candidates=election.candidates,
            width=election.width,
            rule=election.rule,
            signers=signers,
            seats=election.seats,
            k=election.k,
            ties=election.ties,
            mixers=election.mixers,
            trustees=election.trustees,
            quorum=election.quorum,
            election_id=election_id,
        )
        board = MixBoardFile(record, parameters)
        roster = {c.name: c.address for c in node.keystore.cards()}
        roster[CONTROLLER] = address
        common = {"parameters": parameters, "timeout": timeout, "roster": roster}
        await asyncio.gather(
            *(ask(p, "mix/setup", {**common, "index": i}) for i, p in enumerate([VOTERS, *authorities]))
        )
        done()
        begin("key generation")
        dealt = await asyncio.gather(*(ask(t, "mix/deal", {}) for t in trustees))
        for a, (t, answer) in enumerate(zip(trustees, dealt, strict=True), start=1):
            post_signed("trustee", f"trustee-{a}", t, answer)
        done()
        begin("voting phase")
        cast = unpack(await ask(VOTERS, "mix/cast", {"voters": voters, "choices": choices}), "cast")
        try:
            post("ballots", "ballots", bytes(cast["ballots"]))
        except VotumError as e:
            raise MixFailed(phase, f"ballots: {type(e).__name__}: {e}", VOTERS) from e
        done()
        begin("mixing")
        for m in range(1, election.mixers + 1):
            mixer = authority_name(m)
            post_signed("mix", f"mix-{m}", mixer, await ask(mixer, "mix/shuffle", {}))
            # the other trustees check this shuffle on their copies while the next mixer shuffles
            checks += [asyncio.create_task(ask(t, "mix/sync", {})) for t in trustees if t != mixer]
        await asyncio.gather(*checks)
        done()
        begin("decryption")
        answers = await asyncio.gather(*(ask(t, "mix/decrypt", {}) for t in trustees))
        shares = [
            post_signed("decryption", f"decryption-{a}", t, answer)
            for a, (t, answer) in enumerate(zip(trustees, answers, strict=True), start=1)
        ]
        done()
        begin("tallying")
        outcome = await asyncio.to_thread(board.post_result, shares)
        entries = board.entries()
        final_head = board.finish()
        board = None
        done()
        await asyncio.gather(*(ask(p, "mix/close", {}, show=False) for p in [VOTERS, *authorities]))
        rows = outcome.pop("plaintexts")
        exact = rows_digest(rows) == cast["expected"]
        return MixRun(phases, outcome, exact, record, final_head, rows, entries, parameters)
    except MixFailed:
        raise
    except VotumError as e:
        raise MixFailed(phase, f"{type(e).__name__}: {e}") from e
    finally:
        for task in checks:
            task.cancel()
        if board is not None:
            board.abort()


# -- processes on one machine --------------------------------------------------------------------------------


async def run_local(
    election: Election,
    voters: int,
    record: Path,
    homes: Path,
    choices: list[list[int]] | None = None,
    faults: dict[str, str] | None = None,
    timeout: float = 600.0,
    progress: Callable[[str], object] | None = None,
) -> MixRun:
    """Starts the voters' client and every authority as processes (identities under `homes`, made once and
    kept) and drives the election from this process. `faults` (party name → fault) are for tests. The
    processes are stopped however it ends."""
    names = party_names(election.authorities)
    all_homes = trusting_homes(homes, [CONTROLLER, *names])
    controller_home, party_homes = all_homes[0], all_homes[1:]
    faults = faults or {}
    t0 = time.perf_counter()
    procs = [PartyProcess("votum.parties.mix", h, MixFailed, faults.get(h.name)) for h in party_homes]
    loop = asyncio.get_running_loop()
    try:
        addresses = await asyncio.gather(*(loop.run_in_executor(None, p.address, 60.0) for p in procs))
        launch = time.perf_counter() - t0
        node = controller_node(controller_home, party_homes, list(addresses), timeout)
        try:
            host, port = await node.start("127.0.0.1", 0)
            result = await coordinate(
                node, f"{host}:{port}", election, voters, record, choices, timeout, progress
            )
        finally:
            await node.close()
        result.launch_seconds = launch
        return result
    finally:
        await asyncio.gather(*(loop.run_in_executor(None, p.stop) for p in procs))


if __name__ == "__main__":
    party_main(sys.argv[1:], "One party of a mixnet election (spec/91.9).", FAULTS, Party)
