"""A split-value election between separate processes (spec/97.13): a controller, a board, a voters' client
and rows × columns mix servers, every one a node talking over the channels of spec/95. Vote shares travel only
sealed to their server, point to point; the board is the only writer of the record and appends only the entry
the controller has announced, from the party it named. All arithmetic is the Rust core's (`votum.SvParams`,
`sv_cast`, `sv_mix`, `SvRowInputs`, `SvLastColumn`, …), the same functions `votum sv` runs in one process.

`run_local` starts every process on loopback (or, with `placement`, elsewhere) and drives the election;
`python -m votum.parties.sv HOME` is one party's process.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import hashlib
import os
import re
import struct
import sys
import time
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any

from votum import (
    SvBoardFile,
    SvLastColumn,
    SvParams,
    SvRowInputs,
    sv_cast,
    sv_compose,
    sv_cut,
    sv_mix,
    sv_permutation,
    sv_record_ballots,
    sv_tally,
)
from votum.errors import VotumError
from votum.nodes import errors, local
from votum.nodes.channel import Message
from votum.nodes.identity import Card
from votum.nodes.local import apply_roster, environment, trusting_homes
from votum.nodes.messages import pack, unpack
from votum.nodes.node import Node, NodeSettings, open_node

#: a party's test seed (an integer, tests and benchmarks only): read from its own environment, never from a
#: message (spec/97.14)
SEED_ENV = "VOTUM_SV_SEED"
CONTROLLER = "controller"
BOARD = "board"
VOTERS = "voters"
#: ballots per `ballots` entry (spec/97.8 allows up to 65,536)
CHUNK = 16_384
#: output lists a server has in flight to the next column
IN_FLIGHT = 2
FAULTS = ("die-in-mix", "die-posting", "die-at-halves", "bad-packet", "hang-in-mix")
#: how a party's error names another party as the one at fault (the controller reads it)
_BLAME = re.compile(r"blame=([a-z0-9-]+)")
_LEN = struct.Struct(">I")


def server_name(row: int, column: int) -> str:
    """The node name of the server in row `row` and column `column` (1-based, as in spec/97)."""
    return f"server-{row}-{column}"


class SvFailed(VotumError):
    """A phase did not complete: names the phase and the party that failed it. Nothing is posted as a
    result."""

    def __init__(self, phase: str, detail: str, party: str | None = None) -> None:
        self.phase, self.detail, self.party = phase, detail, party
        who = f" ({party})" if party else ""
        super().__init__(f"{phase}{who}: {detail}")


def _pack(obj: object) -> bytes:
    return pack(obj)


def _unpack(payload: bytes) -> dict[str, Any]:
    return unpack(payload, "split-value message")


def _blob(header: dict[str, Any], *parts: bytes) -> Iterable[bytes]:
    """A stream's content: the header's length and MessagePack, then the parts, each after its length. The
    stream cuts each part into views of at most 1 MiB (copied once, into the chunk's payload)."""
    head = _pack(header)
    yield _LEN.pack(len(head)) + head
    for p in parts:
        yield _LEN.pack(len(p))
        yield p


def _split_blob(data: memoryview) -> tuple[dict[str, Any], list[bytes]]:
    """The header and the parts of a received stream (each part copied once, out of the stream's buffer)."""
    (n,) = _LEN.unpack_from(data)
    header = _unpack(bytes(data[4 : 4 + n]))
    parts, at = [], 4 + n
    while at < len(data):
        (size,) = _LEN.unpack_from(data, at)
        parts.append(bytes(data[at + 4 : at + 4 + size]))
        at += 4 + size
    if at != len(data):
        raise errors.MalformedFrame("a blob's parts do not add up to its length")
    return header, parts


class _BlobSink:
    """Collects one stream and hands (sender, header, parts) to `handle`, whose bytes answer the sender."""

    def __init__(
        self, m: Message, handle: Callable[[Card, dict[str, Any], list[bytes]], Awaitable[bytes]]
    ) -> None:
        self.peer, self.handle, self.data = m.peer, handle, bytearray()

    async def write(self, data: bytes | memoryview) -> None:
        self.data += data

    async def finish(self) -> bytes:
        with memoryview(self.data) as view:
            header, parts = _split_blob(view)
        self.data = bytearray()
        return await self.handle(self.peer, header, parts)

    async def abort(self) -> None:
        self.data = bytearray()


def _peak_rss_kib() -> int:
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def _cast_chunk(
    p: SvParams, first: int, count: int, votes: list[list[int | str]] | None, seed: bytes | None
) -> tuple[bytes, list[bytes]]:
    if votes is not None:
        return sv_cast(p, first, votes=votes[first : first + count])
    return sv_cast(p, first, count=count, seed=seed)


def _column_seed_purpose(election: str, column: int) -> str:
    return f"sv-column-seed/{election}/{column}"


def _packet_purpose(election: str, row: int) -> str:
    return f"sv-packet/{election}/{row}"


def _kept_purpose(election: str, row: int) -> str:
    return f"sv-kept/{election}/{row}"


def _splits_purpose(election: str, row: int) -> str:
    return f"sv-splits/{election}/{row}"


def test_seed(seed: int, purpose: str) -> bytes:
    """Reproducible secret seeds for tests only: SHA-256 of the run's seed and the purpose."""
    return hashlib.sha256(b"votum/sv-seed/v1\0" + seed.to_bytes(8, "big") + purpose.encode()).digest()


# -- one party --------------------------------------------------------------------------------------------


class Party:
    """One process's part: the role comes with the controller's `sv/setup`."""

    def __init__(
        self, node: Node, fault: str | None = None, on_done: Callable[[], None] | None = None
    ) -> None:
        self.node, self.fault, self.on_done = node, fault, on_done
        self.controller = node.keystore.find(CONTROLLER)
        self.role = ""
        self.election = ""
        self.params: SvParams | None = None
        self.row = self.column = 0
        seed = os.environ.get(SEED_ENV)
        self.seed: int | None = int(seed) if seed else None
        #: the challenges this party acts on, each taken once per election from the board and compared with
        #: the controller's word (spec/97.14)
        self.challenges: dict[str, bytes] = {}
        #: a last-column server's paths of checked copies, (race, copy) -> path, composed here from the
        #: column leaders' permutations (never taken from the controller)
        self.paths: dict[tuple[int, int], bytes] = {}
        self.over = False
        self.column_seed: bytes | None = None
        self.seed_ready = asyncio.Event()
        self.inputs: SvRowInputs | None = None
        self.last: list[SvLastColumn] = []
        self.splits: dict[int, tuple[bytes, bytes]] = {}
        self.splits_ready: dict[int, asyncio.Event] = {}
        self.flight = asyncio.Semaphore(IN_FLIGHT)
        #: the checked copies, once this party knows the cut (None before)
        self.checked: set[int] | None = None
        self.resumed_from = ""
        #: the election whose voters cast the ballots this first-column server holds (spec/97.12)
        self.origin = ""
        #: seconds a stream to another party may take (the controller's phase timeout)
        self.timeout = 600.0
        self.storing = asyncio.Lock()
        #: bytes streamed to each party (lists, packets, splits, entries)
        self.sent: dict[str, int] = {}
        # the board's state
        self.board: SvBoardFile | None = None
        self.due: tuple[str, str, str] | None = None
        #: every entry name the board holds (a name is posted once)
        self.names: set[str] = set()
        self.next_chunk = 0
        self.ballots = 0
        for kind, fn in (
            ("sv/setup", self._setup),
            ("sv/column-seed", self._column_seed),
            ("sv/cast", self._cast),
            ("sv/mix", self._mix),
            ("sv/post", self._post),
            ("sv/permutations", self._permutations),
            ("sv/cut", self._cut),
            ("sv/send-splits", self._send_splits),
            ("sv/opened", self._opened),
            ("sv/expect", self._expect),
            ("sv/head", self._head),
            ("sv/challenge", self._read_challenge),
            ("sv/close", self._close),
            ("sv/abort", self._abort),
        ):
            node.route(kind, fn)
        for kind, handle in (
            ("sv/packets", self._packets),
            ("sv/list", self._list),
            ("sv/splits", self._splits),
            ("sv/entry", self._entry),
        ):
            node.route_stream(kind, functools.partial(_BlobSink, handle=handle))

    # -- checks and helpers -------------------------------------------------------------------------------

    def _from_controller(self, m: Message, also: frozenset[str] = frozenset()) -> dict[str, Any]:
        """The body of a request from this election's controller (or from one of the parties named in
        `also`), for this election, while it is not over."""
        if m.peer.node_id != self.controller.node_id and m.peer.name not in also:
            raise errors.WrongSender(f"{m.peer.name} is not this election's controller")
        body = _unpack(m.payload)
        if m.kind != "sv/setup" and body.get("election") != self.election:
            raise errors.HandlerError("not the election this party takes part in")
        if self.over and m.kind != "sv/abort":
            raise errors.HandlerError(f"election {self.election} is over for {self.node.name}")
        return body

    async def _challenge(self, name: str, claimed: bytes) -> bytes:
        """The payload of the board's challenge entry `name` ("cut": h1 and the checked copies; "sides": h2)
        as this party acts on it: read from the board itself, which appends a challenge only when it is its
        own head (spec/97.14), and equal to what the controller says. Taken once per election: a second,
        different value is refused, so neither the controller nor the board alone can make a party act on
        two challenges, or on one of its own choosing."""
        kept = self.challenges.get(name)
        if kept is None:
            try:
                kept = await self.node.request(
                    BOARD, "sv/challenge", _pack({"election": self.election, "name": name}), self.timeout
                )
            except (errors.NodeError, asyncio.TimeoutError, OSError) as e:
                raise errors.HandlerError(f"blame={BOARD}: the board gave no {name} challenge: {e}") from None
            self.challenges[name] = kept
        if kept[:32] != claimed:
            raise errors.HandlerError(
                f"the controller's {name} challenge is not the board's "
                f"({self.node.name} acts on one per election)"
            )
        return kept

    async def _cut_known_here(self, h1: bytes) -> None:
        payload = await self._challenge("cut", h1)
        self.checked = set(sv_cut(payload[:32], self._p().copies))

    def _need_cut(self, copy: int, checked: bool) -> None:
        """A copy's secrets go out only after the cut, and only the half the cut allows: an opened copy's
        outputs, a checked copy's permutations, t-values and halves."""
        if self.checked is None:
            raise errors.HandlerError(f"{self.node.name} does not know the cut yet")
        if (copy in self.checked) != checked:
            raise errors.HandlerError(f"copy {copy} is {'an opened' if checked else 'a checked'} copy")

    def _p(self) -> SvParams:
        if self.params is None:
            raise errors.HandlerError("no election set up")
        return self.params

    async def _work(self, fn: Callable[..., Any], *args: Any) -> Any:
        return await self.node.run_in_worker(fn, *args)

    async def _stream(self, to: str, kind: str, header: dict[str, Any], *parts: bytes) -> bytes:
        """Streams to another party within the phase's time; a party that does not take it in time, or goes
        away, is blamed by name in the error that reaches the controller."""
        self.sent[to] = self.sent.get(to, 0) + sum(len(p) for p in parts)
        try:
            return await asyncio.wait_for(self.node.stream(to, kind, _blob(header, *parts)), self.timeout)
        except asyncio.TimeoutError:
            raise errors.HandlerError(f"blame={to}: {kind} not taken within {self.timeout} s") from None
        except (errors.PeerUnavailable, OSError) as e:
            raise errors.HandlerError(f"blame={to}: {kind}: {e}") from None

    def _die(self, when: str) -> None:
        if self.fault == when:
            os._exit(17)  # a crash, as a killed process: nothing is flushed or answered

    # -- setup ----------------------------------------------------------------------------------------------

    async def _setup(self, m: Message) -> bytes:
        body = self._from_controller(m)
        if body.get("seed") is not None:
            raise errors.HandlerError(
                f"a test seed comes only from {self.node.name}'s own environment ({SEED_ENV}), "
                "never from a message"
            )
        if self.role:
            raise errors.HandlerError(f"{self.node.name} is set up for election {self.election} already")
        self.election = str(body["election"])
        self.role = str(body["role"])
        self.params = SvParams.decode(bytes(body["params"]))
        self.timeout = float(body.get("timeout", self.timeout))
        apply_roster(self.node, dict(body.get("roster", {})))
        if self.role == BOARD:
            self.board = SvBoardFile(str(body["record"]), self.election)
            head = self.board.append("parameters", "parameters", bytes(body["params"]))
            return _pack({"head": head})
        if self.role == "server":
            self.row, self.column = int(body["row"]), int(body["column"])
            p = self._p()
            if self.column == 1:
                self.inputs = SvRowInputs(p, self.row - 1)
                self.origin = self.election
                if body.get("resume"):
                    self.resumed_from = str(body["resume"])
                    self.origin = self._origin_of(self.resumed_from)
                    if self._revealed(self.origin).exists():
                        raise errors.HandlerError(
                            f"the input halves of the ballots first cast in {self.origin} were revealed in "
                            "an election rerun from them: they are never mixed again (spec/97.12)"
                        )
                    await self._work(self._reload, self.resumed_from)
                self._write_durably(self._origin_file(self.election), self.origin.encode())
            if self.column == p.columns:
                self.last = [
                    SvLastColumn(
                        p,
                        race,
                        self.row - 1,
                        None if self.seed is None else test_seed(self.seed, f"out-{self.row}"),
                        # the 2m lists wait sealed on disk: memory holds one at a time (spec/97.13)
                        spill=str(self.node.identity.home),
                    )
                    for race in range(p.races)
                ]
            if self.row == 1:
                # the column's leader draws the column's seed and seals it to the others of its column
                seed = os.urandom(32) if self.seed is None else test_seed(self.seed, f"column-{self.column}")
                self.column_seed = seed
                self.seed_ready.set()
                purpose = _column_seed_purpose(self.election, self.column)
                await asyncio.gather(
                    *(
                        self.node.request(
                            server_name(i, self.column),
                            "sv/column-seed",
                            _pack(
                                {
                                    "election": self.election,
                                    "box": self.node.seal(server_name(i, self.column), purpose, seed),
                                }
                            ),
                        )
                        for i in range(2, p.rows + 1)
                    )
                )
            return _pack({"held": self.inputs.count() if self.inputs is not None else None})
        return _pack({})

    async def _column_seed(self, m: Message) -> bytes:
        body = _unpack(m.payload)
        if body.get("election") != self.election or m.peer.name != server_name(1, self.column):
            raise errors.WrongSender(f"{m.peer.name} is not the leader of column {self.column}")
        self.column_seed = self.node.open_sealed(
            m.peer, _column_seed_purpose(self.election, self.column), bytes(body["box"])
        )
        self.seed_ready.set()
        return _pack({})

    # -- casting --------------------------------------------------------------------------------------------

    async def _cast(self, m: Message) -> bytes:
        """The voters' client: casts every chunk, sealing each row's packet to its first-column server and
        posting the chunk's ballots once every one of them has accepted its packet."""
        body = self._from_controller(m)
        p = self._p()
        voters = int(body["voters"])
        votes = body.get("votes")
        first = 0
        chunk = 0
        while first < voters:
            count = min(CHUNK, voters - first)
            seed = None if self.seed is None else test_seed(self.seed, "votes")
            ballots, packets = await self._work(_cast_chunk, p, first, count, votes, seed)
            if self.fault == "bad-packet" and chunk == 0:
                packets = [packets[0][:-1] + bytes([packets[0][-1] ^ 1]), *packets[1:]]

            async def deliver(i: int, packet: bytes, ballots: bytes = ballots, chunk: int = chunk) -> None:
                name = server_name(i, 1)
                box = self.node.seal(name, _packet_purpose(self.election, i), packet)
                await self._stream(
                    name, "sv/packets", {"election": self.election, "chunk": chunk}, ballots, box
                )

            await asyncio.gather(*(deliver(i + 1, pk) for i, pk in enumerate(packets)))
            await self._stream(BOARD, "sv/entry", {"kind": "ballots", "name": f"ballots-{chunk}"}, ballots)
            first += count
            chunk += 1
        return _pack({"ballots": voters, "chunks": chunk})

    async def _packets(self, peer: Card, header: dict[str, Any], parts: list[bytes]) -> bytes:
        if peer.name != VOTERS or header.get("election") != self.election or self.inputs is None:
            raise errors.WrongSender(f"{peer.name} sends no packets to {self.node.name}")
        ballots, box = parts
        packet = self.node.open_sealed(peer, _packet_purpose(self.election, self.row), box)
        inputs = self.inputs
        count = await self._work(inputs.add, ballots, packet)
        await self._work(self._keep, ballots, packet)
        return _pack({"held": count})

    def _kept(self, election: str) -> Path:
        return self.node.identity.home / f"sv-packets-{election}-row{self.row}.sealed"

    def _origin_file(self, election: str) -> Path:
        """Names the election whose voters cast the ballots `election` mixes (itself, or the one it reran)."""
        return self.node.identity.home / f"sv-origin-{election}-row{self.row}"

    def _origin_of(self, election: str) -> str:
        try:
            return self._origin_file(election).read_text()
        except FileNotFoundError:
            return election

    def _revealed(self, origin: str) -> Path:
        """Present once any election mixing the ballots first cast in `origin` posted input halves."""
        return self.node.identity.home / f"sv-revealed-{origin}-row{self.row}"

    @staticmethod
    def _write_durably(path: Path, data: bytes) -> None:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())

    def _keep(self, ballots: bytes, packet: bytes) -> None:
        """Keeps an accepted chunk, sealed to this node itself (mode 0600), so a failed election can be rerun
        from its sealed ballots (spec/97.12) without the voters casting again."""
        me = self.node.identity.card
        box = self.node.identity.seal_for(
            me, _kept_purpose(self.election, self.row), _LEN.pack(len(ballots)) + ballots + packet
        )
        path = self._kept(self.election)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        with os.fdopen(fd, "ab") as f:
            f.write(_LEN.pack(len(box)) + box)
            f.flush()
            os.fsync(f.fileno())

    def _reload(self, election: str) -> int:
        """The chunks this server accepted in `election`, checked again against their ballots."""
        assert self.inputs is not None
        me = self.node.identity.card
        data = self._kept(election).read_bytes()
        at = 0
        while at < len(data):
            (size,) = _LEN.unpack_from(data, at)
            plain = self.node.identity.open_sealed(
                me, _kept_purpose(election, self.row), data[at + 4 : at + 4 + size]
            )
            (n,) = _LEN.unpack_from(plain)
            self.inputs.add(plain[4 : 4 + n], plain[4 + n :])
            self._keep(plain[4 : 4 + n], plain[4 + n :])  # kept again under the rerun's election id
            at += 4 + size
        return self.inputs.count()

    # -- mixing ---------------------------------------------------------------------------------------------

    async def _mix(self, m: Message) -> bytes:
        """The first column's start: every race's every copy through this row (the rest of the row follows as
        lists arrive); answered when the row's last server holds them all."""
        self._from_controller(m)
        p = self._p()
        if self.column != 1 or self.inputs is None:
            raise errors.HandlerError("only the first column starts the mix")
        await self.seed_ready.wait()
        inputs = self.inputs

        async def one(race: int, copy: int, x: bytes) -> None:
            async with self.flight:
                await self._pass(race, copy, x)

        jobs = []
        for race in range(p.races):
            x = await self._work(inputs.shares, race)
            jobs += [one(race, copy, x) for copy in range(p.copies)]
        await asyncio.gather(*jobs)
        return _pack({})

    async def _pass(self, race: int, copy: int, x: bytes) -> None:
        """This server's pass over one list, then on to the next column (or kept, in the last)."""
        p = self._p()
        assert self.column_seed is not None
        y = await self._work(sv_mix, p, race, self.row - 1, self.column_seed, copy, x)
        self._die("die-in-mix")
        if self.fault == "hang-in-mix":
            await asyncio.sleep(3600)  # alive, answering pings, but never passing the list on
        if self.column == p.columns:
            async with self.storing:  # one list at a time into the native object (it is borrowed mutably)
                await self._work(self.last[race].store, copy, y)
            return
        await self._stream(
            server_name(self.row, self.column + 1),
            "sv/list",
            {"election": self.election, "race": race, "copy": copy},
            y,
        )

    async def _list(self, peer: Card, header: dict[str, Any], parts: list[bytes]) -> bytes:
        if peer.name != server_name(self.row, self.column - 1) or header.get("election") != self.election:
            raise errors.WrongSender(f"{peer.name} is not the server before {self.node.name}")
        await self.seed_ready.wait()
        await self._pass(int(header["race"]), int(header["copy"]), parts[0])
        return _pack({})

    # -- proving --------------------------------------------------------------------------------------------

    async def _permutations(self, m: Message) -> bytes:
        """A column leader's permutation of one checked copy (only after the cut, and only for checked
        copies: an opened copy's permutations stay secret), to the controller or to a last-column server
        (which composes its checked copies' paths itself)."""
        p = self._p()
        body = self._from_controller(m, frozenset(server_name(i, p.columns) for i in range(1, p.rows + 1)))
        if self.row != 1 or self.column_seed is None:
            raise errors.HandlerError("only a column's leader reveals its permutations")
        copy = int(body["copy"])
        self._need_cut(copy, checked=True)
        return bytes(
            await self._work(sv_permutation, int(body["race"]), self.column_seed, copy, int(body["n"]))
        )

    async def _cut(self, m: Message) -> bytes:
        """The cut: h1 as the board posted it, equal to the controller's (once per election)."""
        body = self._from_controller(m)
        await self._cut_known_here(bytes(body["h1"]))
        return _pack({})

    async def _send_splits(self, m: Message) -> bytes:
        """A first-column server sends its row's input split values, sealed, to the row's last server (what
        its t-values need, spec/97.7 step 4)."""
        self._from_controller(m)
        p = self._p()
        if self.inputs is None:
            raise errors.HandlerError("only the first column holds the inputs")
        inputs = self.inputs
        to = server_name(self.row, p.columns)
        for race in range(p.races):
            u, v = await self._work(inputs.splits, race)
            purpose = _splits_purpose(self.election, self.row)
            if to == self.node.name:
                self.splits[race] = (u, v)
                self.splits_ready.setdefault(race, asyncio.Event()).set()
                continue
            await self._stream(
                to, "sv/splits", {"election": self.election, "race": race}, self.node.seal(to, purpose, u + v)
            )
        return _pack({})

    async def _splits(self, peer: Card, header: dict[str, Any], parts: list[bytes]) -> bytes:
        if peer.name != server_name(self.row, 1) or header.get("election") != self.election:
            raise errors.WrongSender(f"{peer.name} is not the first server of row {self.row}")
        both = self.node.open_sealed(peer, _splits_purpose(self.election, self.row), parts[0])
        race = int(header["race"])
        half = len(both) // 2
        self.splits[race] = (both[:half], both[half:])
        self.splits_ready.setdefault(race, asyncio.Event()).set()
        return _pack({})

    async def _opened(self, m: Message) -> bytes:
        """A last server's `opened` payload of one opened copy (the controller counts the tally from them)."""
        body = self._from_controller(m)
        copy = int(body["copy"])
        self._need_cut(copy, checked=False)
        last = self.last[int(body["race"])]
        return bytes(await self._work(last.opened, copy))

    async def _path(self, race: int, copy: int, claimed: bytes) -> bytes:
        """A checked copy's path through the grid as this last-column server acts on it: composed here from
        the column leaders' permutations, which it asks for itself, and equal to the controller's (a
        path of the controller's choosing would align this server's t-values and halves with other
        voters' values than its copy's)."""
        path = self.paths.get((race, copy))
        if path is None:
            p = self._p()
            n = len(claimed) // 4
            ask = _pack({"election": self.election, "race": race, "copy": copy, "n": n})

            async def permutation(leader: str) -> bytes:
                if leader == self.node.name:  # this server leads its column too
                    assert self.column_seed is not None
                    return bytes(await self._work(sv_permutation, race, self.column_seed, copy, n))
                return await self.node.request(leader, "sv/permutations", ask, self.timeout)

            try:
                perms = await asyncio.gather(
                    *(permutation(server_name(1, j)) for j in range(1, p.columns + 1))
                )
            except (errors.NodeError, asyncio.TimeoutError, OSError) as e:
                raise errors.HandlerError(
                    f"the column leaders gave no permutations of copy {copy}: {e}"
                ) from None
            path = bytes(sv_compose(list(perms)))
            self.paths[(race, copy)] = path
        if path != claimed:
            raise errors.HandlerError(
                f"the controller's path of copy {copy} is not the composition of the column leaders' "
                "permutations"
            )
        return path

    async def _post(self, m: Message) -> bytes:
        """Makes one entry (the controller says which) and streams it to the board; answers the board's
        head."""
        body = self._from_controller(m)
        kind, name, race = str(body["kind"]), str(body["name"]), int(body.get("race", 0))
        self._die("die-posting")
        if kind == "halves":
            self._die("die-at-halves")
        if kind in ("opened", "tvalues", "halves"):
            self._need_cut(int(body["copy"]), checked=kind != "opened")
        if kind in ("inputs", "halves"):
            await self._challenge("sides", bytes(body["h2"]))
        if kind == "outputs":
            payload = await self._work(self.last[race].roots)
        elif kind == "opened":
            payload = await self._work(self.last[race].opened, int(body["copy"]))
        elif kind == "tvalues":
            ready = self.splits_ready.setdefault(race, asyncio.Event())
            await ready.wait()
            u, v = self.splits[race]
            path = await self._path(race, int(body["copy"]), bytes(body["path"]))
            payload = await self._work(self.last[race].tvalues, int(body["copy"]), path, u, v)
        elif kind == "inputs":
            assert self.inputs is not None
            # before any half leaves: these ballots are never mixed again under fresh sides (spec/97.12)
            self._write_durably(self._revealed(self.origin), self.election.encode())
            payload = await self._work(self.inputs.halves, race, bytes(body["h2"]))
        elif kind == "halves":
            path = await self._path(race, int(body["copy"]), bytes(body["path"]))
            payload = await self._work(self.last[race].halves, int(body["copy"]), path, bytes(body["h2"]))
        else:
            raise errors.HandlerError(f"{self.node.name} posts no {kind}")
        return await self._stream(BOARD, "sv/entry", {"kind": kind, "name": name}, payload)

    # -- the board ------------------------------------------------------------------------------------------

    async def _expect(self, m: Message) -> bytes:
        body = self._from_controller(m)
        self.due = (str(body["kind"]), str(body["name"]), str(body["poster"]))
        return _pack({})

    async def _entry(self, peer: Card, header: dict[str, Any], parts: list[bytes]) -> bytes:
        """Appends the announced entry from the announced poster; anything else is refused and changes
        nothing. Ballot chunks come in order from the poster announced for all of them (the voters' client, or
        the controller when it reruns an election from its sealed ballots)."""
        if self.board is None:
            raise errors.HandlerError("no board open")
        kind, name = str(header["kind"]), str(header["name"])
        if name in self.names:
            raise errors.BadSequence(f"the board holds an entry {name!r} already")
        if kind == "ballots" and self.due == ("ballots", "*", peer.name):
            if name != f"ballots-{self.next_chunk}":
                raise errors.BadSequence(f"{name} where ballots-{self.next_chunk} is due")
            self.next_chunk += 1
        elif self.due != (kind, name, peer.name):
            raise errors.BadSequence(f"{kind} {name} from {peer.name} where {self.due} is due")
        else:
            self.due = None
        if kind == "challenge":
            self._check_challenge(name, parts[0])
        board = self.board
        head = await self._work(board.append, kind, name, parts[0])
        self.names.add(name)
        if kind == "challenge":
            self.challenges[name] = parts[0]
        return bytes(head)

    def _check_challenge(self, name: str, payload: bytes) -> None:
        """A challenge is the board's own head, drawn once everything it covers is posted (spec/97.7): the cut
        after every output root, the sides after every checked copy's t-values."""
        assert self.board is not None
        p = self._p()
        head = bytes(self.board.head())
        if name == "cut":
            due = {f"outputs-{r}-{i}" for r in range(p.races) for i in range(1, p.rows + 1)}
            expected = head + bytes(sv_cut(head, p.copies))
        elif name == "sides" and "cut" in self.challenges:
            checked = self.challenges["cut"][32:]  # the cut this board appended, checked against its head
            due = {
                f"tvalues-{r}-{k}-{i}" for r in range(p.races) for k in checked for i in range(1, p.rows + 1)
            }
            expected = head
        else:
            raise errors.BadSequence(f"no {name} challenge is due")
        if not due <= self.names:
            raise errors.BadSequence(
                f"the {name} challenge comes before {len(due - self.names)} of its entries"
            )
        if payload != expected:
            raise errors.BadSequence(f"the {name} challenge is not drawn from the board's head")

    async def _read_challenge(self, m: Message) -> bytes:
        """A posted challenge's payload, to any party of the election (it acts on the board's, spec/97.14)."""
        body = _unpack(m.payload)
        if body.get("election") != self.election or self.board is None:
            raise errors.HandlerError("not the election this board holds")
        kept = self.challenges.get(str(body.get("name")))
        if kept is None:
            raise errors.HandlerError(f"no {body.get('name')} challenge is posted")
        return kept

    async def _head(self, m: Message) -> bytes:
        self._from_controller(m)
        if self.board is None:
            raise errors.HandlerError("no board open")
        return bytes(self.board.head())

    async def _close(self, m: Message) -> bytes:
        self._from_controller(m)
        if self.board is None:
            raise errors.HandlerError("no board open")
        entries = self.board.entries()
        head = self.board.head()
        self.board.close()
        self.board = None
        return _pack({"entries": entries, "head": head})

    async def _abort(self, m: Message) -> bytes:
        """Forgets the election (the board closes its record as it stands); answers what this process used."""
        body = self._from_controller(m)
        self.over = True
        if self.board is not None:
            self.board.close()  # what was posted stays; no tally was
        if self.inputs is not None and not body.get("keep", True):
            # the election is over (its ballots, and those of the election it reran, are counted)
            for election in (self.election, self.resumed_from):
                if election:
                    with contextlib.suppress(OSError):
                        self._kept(election).unlink()
        self._done()
        return _pack({"peak_rss_kib": _peak_rss_kib(), "sent": self.sent})

    def _done(self) -> None:
        if self.on_done is not None:
            asyncio.get_running_loop().call_later(0.2, self.on_done)


# -- the controller ---------------------------------------------------------------------------------------


@dataclasses.dataclass
class Phase:
    name: str
    seconds: float


@dataclasses.dataclass
class Rerun:
    """A failed election's sealed ballots, to run the mix and the proof again (spec/97.12)."""

    election: str
    params: SvParams
    ballots: list[tuple[str, bytes]]

    @property
    def voters(self) -> int:
        return sum(int.from_bytes(p[8:12], "big") for _, p in self.ballots)

    @classmethod
    def from_record(cls, path: Path) -> Rerun:
        """Refused (`WrongPhase`) when the record was never sealed or reached the sides challenge."""
        election, params, ballots = sv_record_ballots(str(path))
        return cls(election, SvParams.decode(params), ballots)


@dataclasses.dataclass
class SvRun:
    election: str
    phases: list[Phase]
    tallies: list[dict[str, Any]]
    head: bytes
    entries: int
    record: Path
    #: seconds to start the processes (until each listens)
    launch_seconds: float = 0.0
    #: per party: its peak resident memory (KiB) and the bytes it streamed to each other party
    usage: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)


async def coordinate(
    node: Node,
    params: SvParams,
    voters: int,
    record: Path,
    votes: list[list[int | str]] | None = None,
    timeout: float = 600.0,
    progress: Callable[[str, int, int], object] | None = None,
    rerun: Rerun | None = None,
) -> SvRun:
    """Drives the election (spec/97.13) from `node`, which trusts the board, the voters' client and every
    server. Raises `SvFailed` naming the phase and party when one fails; the board then holds what was posted
    before, and no tally. With `rerun` (a failed election's sealed ballots, `Rerun.from_record`), nobody
    casts: the controller posts the same ballots again and the first-column servers take their packets from
    what they kept (spec/97.12)."""
    election = f"sv-{os.urandom(6).hex()}"
    rows, cols, copies, races = params.rows, params.columns, params.copies, params.races
    servers = [server_name(i, j) for i in range(1, rows + 1) for j in range(1, cols + 1)]
    parties = [BOARD, VOTERS, *servers]
    phases: list[Phase] = []
    phase = "setup"
    t0 = time.perf_counter()

    def tell(done: int, total: int) -> None:
        if progress is not None:
            progress(phase, done, total)

    async def ask(party: str, kind: str, body: dict[str, Any]) -> bytes:
        # longer than the parties' own limit on what they send each other, so theirs fires first and names
        # the party that held them up
        try:
            return await node.request(party, kind, _pack({"election": election, **body}), 2 * timeout)
        except (errors.NodeError, asyncio.TimeoutError, OSError) as e:
            blamed = _BLAME.search(str(e))
            raise SvFailed(phase, f"{kind}: {type(e).__name__}: {e}", blamed[1] if blamed else party) from e

    async def post(kind: str, name: str, poster: str, **body: Any) -> bytes:
        await ask(BOARD, "sv/expect", {"kind": kind, "name": name, "poster": poster})
        if poster == CONTROLLER:
            try:
                return await node.stream(
                    BOARD, "sv/entry", _blob({"kind": kind, "name": name}, body["payload"])
                )
            except (errors.NodeError, asyncio.TimeoutError, OSError) as e:
                raise SvFailed(phase, f"posting {name}: {e}", BOARD) from e
        return await ask(poster, "sv/post", {"kind": kind, "name": name, **body})

    def done(name: str) -> None:
        nonlocal t0
        phases.append(Phase(name, time.perf_counter() - t0))
        t0 = time.perf_counter()

    try:
        roster = {c.name: c.address for c in node.keystore.cards()}
        common = {"params": params.encode(), "roster": roster, "timeout": timeout}
        await ask(BOARD, "sv/setup", {**common, "role": BOARD, "record": str(record)})
        await ask(VOTERS, "sv/setup", {**common, "role": VOTERS})
        resume = {"resume": rerun.election} if rerun is not None else {}
        # followers first, so a column's leader finds them ready for its seed
        for i in range(rows, 0, -1):
            answers = await asyncio.gather(
                *(
                    ask(
                        server_name(i, j),
                        "sv/setup",
                        {**common, **resume, "role": "server", "row": i, "column": j},
                    )
                    for j in range(1, cols + 1)
                )
            )
            held = _unpack(answers[0]).get("held")
            if rerun is not None and held != voters:
                raise SvFailed(
                    phase, f"kept {held} of the {voters} sealed ballots' packets", server_name(i, 1)
                )
        done("setup")

        phase = "casting"
        tell(0, voters)
        if rerun is None:
            await ask(BOARD, "sv/expect", {"kind": "ballots", "name": "*", "poster": VOTERS})
            await ask(VOTERS, "sv/cast", {"voters": voters, "votes": votes})
        else:
            await ask(BOARD, "sv/expect", {"kind": "ballots", "name": "*", "poster": CONTROLLER})
            for name, payload in rerun.ballots:
                try:
                    await node.stream(BOARD, "sv/entry", _blob({"kind": "ballots", "name": name}, payload))
                except (errors.NodeError, asyncio.TimeoutError, OSError) as e:
                    raise SvFailed(phase, f"posting {name}: {e}", BOARD) from e
        await post("seal", "seal", CONTROLLER, payload=voters.to_bytes(8, "big"))
        tell(voters, voters)
        done("casting")

        phase = "mixing"
        await asyncio.gather(*(ask(server_name(i, 1), "sv/mix", {}) for i in range(1, rows + 1)))
        for race in range(races):
            for i in range(1, rows + 1):
                await post("outputs", f"outputs-{race}-{i}", server_name(i, cols), race=race)
        done("mixing")

        phase = "proving"
        h1 = await ask(BOARD, "sv/head", {})
        checked = sv_cut(h1, copies)
        opened = [k for k in range(copies) if k not in checked]
        await post("challenge", "cut", CONTROLLER, payload=h1 + bytes(checked))
        # the column leaders (permutations) and the last column (openings, t-values, halves) act on the cut
        told = {server_name(1, j) for j in range(1, cols + 1)} | {
            server_name(i, cols) for i in range(1, rows + 1)
        }
        await asyncio.gather(*(ask(s, "sv/cut", {"h1": h1}) for s in sorted(told)))
        await asyncio.gather(*(ask(server_name(i, 1), "sv/send-splits", {}) for i in range(1, rows + 1)))
        paths: dict[tuple[int, int], bytes] = {}
        for race in range(races):
            for k in opened:
                for i in range(1, rows + 1):
                    await post("opened", f"opened-{race}-{k}-{i}", server_name(i, cols), race=race, copy=k)
            for k in checked:
                perms = await asyncio.gather(
                    *(
                        ask(server_name(1, j), "sv/permutations", {"race": race, "copy": k, "n": voters})
                        for j in range(1, cols + 1)
                    )
                )
                path = sv_compose(list(perms))
                paths[(race, k)] = path
                await post("path", f"path-{race}-{k}", CONTROLLER, payload=path)
                for i in range(1, rows + 1):
                    await post(
                        "tvalues",
                        f"tvalues-{race}-{k}-{i}",
                        server_name(i, cols),
                        race=race,
                        copy=k,
                        path=path,
                    )
        h2 = await ask(BOARD, "sv/head", {})
        await post("challenge", "sides", CONTROLLER, payload=h2)
        for race in range(races):
            for i in range(1, rows + 1):
                await post("inputs", f"inputs-{race}-{i}", server_name(i, 1), race=race, h2=h2)
            for k in checked:
                for i in range(1, rows + 1):
                    await post(
                        "halves",
                        f"halves-{race}-{k}-{i}",
                        server_name(i, cols),
                        race=race,
                        copy=k,
                        path=paths[(race, k)],
                        h2=h2,
                    )
        done("proving")

        phase = "tallying"
        tallies = []
        for race in range(races):
            rows_opened = [
                await ask(server_name(i, cols), "sv/opened", {"race": race, "copy": opened[0]})
                for i in range(1, rows + 1)
            ]
            payload, tally = sv_tally(params, race, rows_opened)
            await post("tally", f"tally-{race}", CONTROLLER, payload=payload)
            tallies.append(tally)
        closed = _unpack(await ask(BOARD, "sv/close", {}))
        done("tallying")
    except SvFailed as failed:
        # the party that failed a request may only have seen another one die: name who is gone
        dead = await _unreachable(node, parties)
        if dead and failed.party not in dead:
            failed = SvFailed(failed.phase, f"{failed.detail} (unreachable: {', '.join(dead)})", dead[0])
        await node.broadcast("sv/abort", _pack({"election": election}), parties, 3.0)
        raise failed from None
    usage: dict[str, dict[str, Any]] = {}
    for p in parties:
        with contextlib.suppress(Exception):
            usage[p] = _unpack(
                await node.request(p, "sv/abort", _pack({"election": election, "keep": False}), 5.0)
            )
    return SvRun(
        election, phases, tallies, bytes(closed["head"]), int(closed["entries"]), record, usage=usage
    )


async def join(
    controller_home: Path,
    params: SvParams,
    voters: int,
    record: Path,
    timeout: float = 600.0,
    progress: Callable[[str, int, int], object] | None = None,
    rerun: Rerun | None = None,
) -> SvRun:
    """Drives parties already running elsewhere (`votum node sv-party`): the controller's node lives in
    `controller_home` and its keystore names the board, the voters' client and every `server-i-j` with their
    addresses (`votum node peers add`)."""
    node = open_node(controller_home, settings=NodeSettings(connect_timeout=min(timeout, 10.0)))
    try:
        return await coordinate(node, params, voters, record, None, timeout, progress, rerun)
    finally:
        await node.close()


async def _unreachable(node: Node, parties: list[str]) -> list[str]:
    results = await node.broadcast("ping", b"", parties, 3.0)
    return [p for p, r in results.items() if r.error is not None]


# -- processes on one machine ------------------------------------------------------------------------------


def party_names(rows: int, cols: int) -> list[str]:
    return [BOARD, VOTERS] + [server_name(i, j) for i in range(1, rows + 1) for j in range(1, cols + 1)]


def prepare_homes(root: Path, names: list[str]) -> tuple[Path, list[Path]]:
    """The controller's and every party's home under `root` (identities made once, kept between runs), every
    one trusting every other."""
    homes = trusting_homes(root, [CONTROLLER, *names])
    return homes[0], homes[1:]


class PartyProcess(local.PartyProcess):
    """`python -m votum.parties.sv HOME` in its own process; `prefix` runs it elsewhere (`ip netns exec NS`);
    `seed` (tests only) reaches it in its environment, never over the network."""

    def __init__(
        self,
        home: Path,
        fault: str | None = None,
        prefix: list[str] | None = None,
        host: str = "127.0.0.1",
        seed: int | None = None,
    ) -> None:
        env = environment(SEED_ENV, None if seed is None else str(seed))
        super().__init__("votum.parties.sv", home, SvFailed, fault, prefix, host, env)


async def run_local(
    params: SvParams,
    voters: int,
    record: Path,
    homes: Path,
    votes: list[list[int | str]] | None = None,
    seed: int | None = None,
    faults: dict[str, str] | None = None,
    timeout: float = 600.0,
    placement: Callable[[str], tuple[list[str], str]] | None = None,
    progress: Callable[[str, int, int], object] | None = None,
    rerun: Rerun | None = None,
) -> SvRun:
    """Starts the board, the voters' client and every server as processes (homes under `homes`) and drives
    the election. `faults` (party name → fault) and `placement` (party name → command prefix and host) are
    for tests. The processes are stopped however it ends."""
    names = party_names(params.rows, params.columns)
    controller_home, party_homes = prepare_homes(homes, names)
    faults = faults or {}
    t0 = time.perf_counter()
    procs = [
        PartyProcess(
            h, faults.get(h.name), *(placement(h.name) if placement else ([], "127.0.0.1")), seed=seed
        )
        for h in party_homes
    ]
    loop = asyncio.get_running_loop()
    try:
        addresses = await asyncio.gather(*(loop.run_in_executor(None, p.address, 60.0) for p in procs))
        launch = time.perf_counter() - t0
        node = local.controller_node(controller_home, party_homes, list(addresses), timeout)
        try:
            result = await coordinate(node, params, voters, record, votes, timeout, progress, rerun)
        finally:
            await node.close()
        result.launch_seconds = launch
        return result
    finally:
        await asyncio.gather(*(loop.run_in_executor(None, p.stop) for p in procs))


def serve(home: Path, host: str, port: int, fault: str | None, announce: Callable[[str], None]) -> None:
    """Runs one party until its election ends (or SIGTERM)."""
    local.serve_party(home, host, port, fault, Party, announce)


if __name__ == "__main__":
    local.party_main(sys.argv[1:], "One party of a split-value election (spec/97.13).", FAULTS, Party)
