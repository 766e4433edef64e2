"""A CHVote election between separate processes (spec/92.12): s authorities, the printing authority and the
voters' client, each a node talking over the channels of spec/95, driven by a controller that is also the
board (the record's only writer). Each authority's key, points and accepted ballots stay in its process; its
secret voter data reaches the printing authority sealed to it, and the voting cards reach the voters' client
sealed to it (spec/95.6). All arithmetic is the Rust core's (`votum.ChvoteAuthority`, `ChvoteVoters`,
`chvote_print_cards`, `chvote_tally`), the functions `votum chvote` runs in one process.

`run_local` starts every party on loopback and drives the election; `python -m votum.parties.chvote HOME` is
one party's process.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import re
import struct
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from votum import (
    ChvoteAuthority,
    ChvoteRecordFile,
    ChvoteVoters,
    chvote_parameters,
    chvote_print_cards,
    chvote_tally,
)
from votum.errors import VotumError
from votum.nodes import errors
from votum.nodes.channel import Message
from votum.nodes.local import PartyProcess, apply_roster, controller_node, party_main, trusting_homes
from votum.nodes.messages import pack, unpack, unpack_list
from votum.nodes.node import Node, NodeSettings
from votum.parties.common import CONTROLLER, Blamed, Handler, Program, is_party, send

PRINTER = "printer"
VOTERS = "voters"
#: voters the voters' client has in flight at once (each waits on every authority twice)
IN_FLIGHT = 32
FAULTS = ("die-in-shuffle", "bad-response", "die-voting", "cheating-client", "unsigned-answer")
_AUTHORITY = re.compile(r"authority (\d+)")
_COUNT = struct.Struct(">Q")


def authority_name(j: int) -> str:
    return f"authority-{j}"


def party_names(authorities: int) -> list[str]:
    return [PRINTER, VOTERS, *(authority_name(j) for j in range(authorities))]


class ChvoteFailed(VotumError):
    """A phase did not complete: names the phase and the party that failed it. No record is left."""

    def __init__(self, phase: str, detail: str, party: str | None = None) -> None:
        self.phase, self.detail, self.party = phase, detail, party
        who = f" ({party})" if party else ""
        super().__init__(f"{phase}{who}: {detail}")


def largest_message(level: int, voters: int, authorities: int) -> int:
    """A bound on the largest message of a run that is not streamed (an authority's answer to `chv/shuffle`:
    its output list and proof, spec/92.12), in bytes: under eight group elements per voter (7.2 measured)."""
    element = 128 if level == 1 else 256
    return 4096 + voters * element * 8


def check_size(level: int, voters: int, authorities: int, frame: int) -> None:
    """Refuses, before anything starts, an election whose messages would not fit a frame (spec/92.12)."""
    need = largest_message(level, voters, authorities)
    if need > frame:
        raise ChvoteFailed(
            "creating public parameters",
            f"{voters:,} voters need messages of up to {need:,} bytes between the parties, more than a frame "
            f"holds ({frame:,}); run this election in one process (without --processes), or with fewer "
            "voters",
        )


def joined(parts: list[bytes]) -> bytes:
    """The record's list of every authority's item (`responses`, `finalizations`: spec/92.10) from each
    authority's one-item list: the count, then the items in authority order."""
    for p in parts:
        if len(p) < _COUNT.size or _COUNT.unpack_from(p)[0] != 1:
            raise errors.MalformedFrame("an authority answers with a list of one item")
    return _COUNT.pack(len(parts)) + b"".join(p[_COUNT.size :] for p in parts)


def _secret_purpose(election: str, authority: int) -> str:
    return f"chvote/{election}/secret-voter-data/{authority}"


def _cards_purpose(election: str) -> str:
    return f"chvote/{election}/voting-cards"


class Party(Program):
    """One process's part; the role comes with the controller's `chv/setup`."""

    def __init__(
        self, node: Node, fault: str | None = None, on_done: Callable[[], None] | None = None
    ) -> None:
        self.fault, self.on_done = fault, on_done
        self.role = ""
        self.parameters = b""
        self.authorities = 0
        self.sheets: str | None = None
        self.authority: ChvoteAuthority | None = None
        self.voters: ChvoteVoters | None = None
        self.secret: dict[int, bytes] = {}
        self.cards_ready = asyncio.Event()
        routes: dict[str, Handler] = {
            "chv/setup": self._setup,
            "chv/electoral-data": self._electoral_data,
            "chv/secret-data": self._secret_data,
            "chv/board": self._board,
            "chv/print": self._print,
            "chv/cards": self._cards,
            "chv/vote": self._vote,
            "chv/ballot": self._ballot,
            "chv/confirm": self._confirm,
            "chv/input": self._input,
            "chv/shuffle": self._shuffle,
            "chv/decrypt": self._decrypt,
            "chv/trace": self._trace,
            "chv/close": self._close,
        }
        super().__init__(node, "chv", routes)

    # -- checks and helpers ----------------------------------------------------------------------------------

    def _role(self, *roles: str) -> None:
        if self.role not in roles:
            raise errors.HandlerError(f"a {self.role or 'party not set up'} does not do this")

    def _auth(self) -> ChvoteAuthority:
        if self.authority is None:
            raise errors.HandlerError("not an authority")
        return self.authority

    def _die(self, when: str) -> None:
        if self.fault == when:
            os._exit(17)  # a crash, as a killed process: nothing is flushed or answered

    # -- setup and electoral data ----------------------------------------------------------------------------

    async def _setup(self, m: Message) -> bytes:
        body = self._body(m)
        self.election, self.role = str(body["election"]), str(body["role"])
        self.parameters, self.authorities = bytes(body["parameters"]), int(body["authorities"])
        self.timeout, self.sheets = float(body["timeout"]), body.get("sheets")
        apply_roster(self.node, dict(body.get("roster", {})))
        if self.role == "authority":
            index = int(body["index"])
            if self.node.name != authority_name(index):
                raise errors.HandlerError(f"{self.node.name} is not {authority_name(index)}")
            self.authority = await self._work(
                ChvoteAuthority, self.parameters, index, self.node.identity.card.signing_key
            )
            return self._auth().key_share()
        return b""

    async def _electoral_data(self, m: Message) -> bytes:
        self._body(m)
        self._role("authority")
        auth = self._auth()
        secret, public = await self._work(auth.electoral_data)
        box = self.node.seal(PRINTER, _secret_purpose(self.election, auth.index), secret)
        del secret
        await self._ask(PRINTER, "chv/secret-data", {"authority": auth.index, "box": box})
        return bytes(public)

    async def _secret_data(self, m: Message) -> bytes:
        j = int(unpack(m.payload, m.kind).get("authority", -1))
        body = self._body(m, sender=authority_name(j))
        self._role("printer")
        if j in self.secret:
            raise errors.HandlerError(f"{authority_name(j)} has already sent its secret voter data")
        self.secret[j] = self.node.open_sealed(m.peer, _secret_purpose(self.election, j), bytes(body["box"]))
        return b""

    async def _board(self, m: Message) -> bytes:
        body = self._body(m)
        self._role("authority", "voters")
        shares, data = [bytes(x) for x in body["key_shares"]], [bytes(x) for x in body["voter_data"]]
        if self.role == "authority":
            await self._work(self._auth().attach, self.parameters, shares, data)
        else:
            self.voters = await self._work(ChvoteVoters, self.parameters, shares, data)
        return b""

    async def _print(self, m: Message) -> bytes:
        self._body(m)
        self._role("printer")
        if sorted(self.secret) != list(range(self.authorities)):
            raise errors.HandlerError(f"secret voter data from {sorted(self.secret)}, not every authority")
        secret = [self.secret[j] for j in range(self.authorities)]
        self.secret.clear()
        cards = await self._work(chvote_print_cards, self.parameters, secret, self.sheets)
        box = self.node.seal(VOTERS, _cards_purpose(self.election), pack(cards))
        del cards, secret
        await self._ask(VOTERS, "chv/cards", {"box": box})
        return b""

    async def _cards(self, m: Message) -> bytes:
        body = self._body(m, sender=PRINTER)
        self._role("voters")
        if self.voters is None:
            raise errors.HandlerError("the voters' client has not seen the board")
        cards = unpack_list(
            self.node.open_sealed(m.peer, _cards_purpose(self.election), bytes(body["box"])), "list of cards"
        )
        for card in cards:
            self.voters.add_card(card)
        del cards
        self.cards_ready.set()
        return b""

    # -- voting ----------------------------------------------------------------------------------------------

    async def _vote(self, m: Message) -> bytes:
        """Every voter: ballot to every authority, return codes checked, confirmation to every authority,
        finalization code checked. Transcripts go to the board in voter order, a chunk at a time."""
        body = self._body(m)
        self._role("voters")
        voters = self.voters
        if voters is None or not self.cards_ready.is_set():
            raise errors.HandlerError("the voters' client has no cards")
        n = int(body["voters"])
        choices = body.get("choices")
        names = [authority_name(j) for j in range(self.authorities)]
        counts: dict[int, int] = {}

        async def one(i: int) -> list[Any]:
            chosen = None if choices is None else [int(x) for x in choices[i]]
            if self.fault == "cheating-client" and i == 0 and chosen:
                # a cheating client (issue 45, finding 7): voter 0's first query encodes Γ(c)², its codes
                # still the card's
                ballot = await self._work(voters.cheating_ballot, i, chosen, 0)
            else:
                ballot = await self._work(voters.ballot, i, chosen)
            responses = await asyncio.gather(
                *(self._ask(a, "chv/ballot", {"voter": i, "ballot": ballot}) for a in names)
            )
            try:
                confirmation = await self._work(voters.confirm, i, list(responses))
            except VotumError as e:
                who = _AUTHORITY.search(str(e))
                blame = f"blame={authority_name(int(who[1]))}: " if who and "response" in str(e) else ""
                raise errors.HandlerError(f"{blame}voter {i}: {e}") from None
            finals = await asyncio.gather(
                *(self._ask(a, "chv/confirm", {"voter": i, "confirmation": confirmation}) for a in names)
            )
            selections = await self._work(voters.finalize, i, list(finals))
            for s in selections:
                counts[s] = counts.get(s, 0) + 1
            return [i, ballot, joined(list(responses)), confirmation, joined(list(finals))]

        for start in range(0, n, IN_FLIGHT):
            if start >= IN_FLIGHT:
                self._die("die-voting")
            chunk = await asyncio.gather(*(one(i) for i in range(start, min(n, start + IN_FLIGHT))))
            await self._ask(CONTROLLER, "chv/transcripts", {"entries": chunk})
        return pack({"expected": {str(k): v for k, v in counts.items()}})

    async def _ballot(self, m: Message) -> bytes:
        body = self._body(m, sender=VOTERS)
        self._role("authority")
        r: bytes = await self._work(self._auth().ballot, int(body["voter"]), bytes(body["ballot"]))
        if self.fault == "bad-response":  # a flipped bit in the last encrypted point
            r = r[:-1] + bytes([r[-1] ^ 1])
        return r

    async def _confirm(self, m: Message) -> bytes:
        body = self._body(m, sender=VOTERS)
        self._role("authority")
        r: bytes = await self._work(
            self._auth().confirmation, int(body["voter"]), bytes(body["confirmation"])
        )
        return r

    # -- mixing, decryption ----------------------------------------------------------------------------------

    async def _input(self, m: Message) -> bytes:
        self._body(m)
        self._role("authority")
        r: bytes = await self._work(self._auth().input)
        return r

    async def _shuffle(self, m: Message) -> bytes:
        body = self._body(m)
        self._role("authority")
        self._die("die-in-shuffle")
        r: bytes = await self._work(
            self._auth().shuffle, bytes(body["input"]), [bytes(x) for x in body["shuffles"]]
        )
        return self._signed("shuffle", r)

    async def _decrypt(self, m: Message) -> bytes:
        body = self._body(m)
        self._role("authority")
        r: bytes = await self._work(
            self._auth().decrypt, bytes(body["input"]), [bytes(x) for x in body["shuffles"]]
        )
        return self._signed("decryption", r)

    def _signed(self, kind: str, payload: bytes) -> bytes:
        """An answer that the board posts as this authority's entry of `kind`: the payload and this node's
        signature on it (spec/92.10), which the record keeps and the verifier checks (V-CHV-11)."""
        if self.fault == "unsigned-answer":
            return payload  # an authority that answers without its signature
        statement = self._auth().statement(kind, payload)
        return pack({"payload": payload, "signature": self.node.identity.sign_record(statement)})

    async def _trace(self, m: Message) -> bytes:
        """The rows of its shuffle that invalid votes lead back to, opened (spec/92.8): the authority works
        out which rows itself from the chain, the shares and the later traces, and traces once."""
        body = self._body(m)
        self._role("authority")
        r: bytes = await self._work(
            self._auth().trace,
            bytes(body["input"]),
            [bytes(x) for x in body["shuffles"]],
            [bytes(x) for x in body["shares"]],
            [bytes(x) for x in body["later"]],
        )
        return self._signed("trace", r)

    async def _close(self, m: Message) -> bytes:
        self._body(m)
        self.authority = None
        self.voters = None
        self.secret.clear()
        if self.on_done is not None:
            asyncio.get_running_loop().call_later(0.05, self.on_done)
        return b""


# -- the controller ------------------------------------------------------------------------------------------


@dataclasses.dataclass
class ChvoteRun:
    """What a run across processes did: its phases (name, seconds), the tally against the votes cast."""

    phases: list[tuple[str, float]]
    tally: list[int]
    expected: list[int]
    invalid: int
    confirmed: int
    record: Path
    #: the `parameters` payload (spec/92.10) the parties read the election from
    parameters: bytes = b""
    launch_seconds: float = 0.0

    @property
    def exact(self) -> bool:
        return self.tally == self.expected and self.invalid == 0


def posted(out: ChvoteRecordFile, phase: str, kind: str, authority: str, answer: bytes) -> bytes:
    """Posts an authority's signed answer (spec/92.10): its entry of `kind`, then the `signature` entry;
    returns the payload. The board checks nothing of the signature: the verifier does (V-CHV-11). An answer
    that is not {payload, signature} fails the run, naming the authority."""
    try:
        body = unpack(answer, kind)
        payload, signature = bytes(body["payload"]), bytes(body["signature"])
    except (VotumError, KeyError, TypeError, ValueError) as e:
        raise ChvoteFailed(phase, f"{kind}: not a signed answer ({type(e).__name__})", authority) from e
    out.append(kind, authority, payload)
    out.append("signature", f"{kind}-{authority}", signature)
    return payload


async def coordinate(
    node: Node,
    address: str,
    level: int,
    shape: str,
    voters: int,
    authorities: int,
    record: Path,
    sheets: Path | None = None,
    choices: list[list[int]] | None = None,
    timeout: float = 600.0,
    progress: Callable[[str], object] | None = None,
) -> ChvoteRun:
    """Drives the election from `node` (the controller and board, listening at `address`, trusting every
    party) and writes its record. Raises `ChvoteFailed` naming the phase and the party when one fails; no
    record is left then."""
    election = f"chv-{os.urandom(6).hex()}"
    names = [authority_name(j) for j in range(authorities)]
    phases: list[tuple[str, float]] = []
    phase = "creating public parameters"
    t0 = time.perf_counter()
    out: ChvoteRecordFile | None = None
    next_voter = 0

    def begin(name: str) -> None:
        nonlocal phase, t0
        phase, t0 = name, time.perf_counter()
        if progress is not None:
            progress(name)

    def done() -> None:
        phases.append((phase, time.perf_counter() - t0))

    async def ask(party: str, kind: str, body: dict[str, Any]) -> bytes:
        # longer than the parties' own limit on what they ask each other, so theirs fires first and names
        # the party that held them up
        try:
            return await send(node, party, "chv", kind, pack({"election": election, **body}), timeout)
        except Blamed as e:
            raise ChvoteFailed(phase, e.detail, e.party) from e

    async def each(kind: str, body: Callable[[int], dict[str, Any]]) -> list[bytes]:
        return list(await asyncio.gather(*(ask(a, kind, body(j)) for j, a in enumerate(names))))

    async def take(m: Message) -> bytes:
        """A chunk of voters' transcripts, appended to the record at once, in voter order: the board holds
        no more than one chunk."""
        nonlocal next_voter
        if not is_party(node, m, VOTERS):
            raise errors.WrongSender(f"{m.peer.name} does not post voters' transcripts")
        body = unpack(m.payload, m.kind)
        if body.get("election") != election or out is None or phase != "voting phase":
            raise errors.HandlerError("not this election's voting phase")
        for i, ballot, responses, confirmation, finals in body["entries"]:
            if int(i) != next_voter:
                raise errors.HandlerError(f"voter {i}'s transcript where voter {next_voter}'s was due")
            name = f"voter-{next_voter}"
            out.append("ballot", name, bytes(ballot))
            out.append("responses", name, bytes(responses))
            out.append("confirmation", name, bytes(confirmation))
            out.append("finalizations", name, bytes(finals))
            next_voter += 1
        return b""

    node.route("chv/transcripts", take)
    check_size(level, voters, authorities, node.settings.channel.max_frame)
    # each authority's node key, from the cards this controller trusts: named in the parameters, bound into
    # the election digest, and each authority refuses parameters that name another key in its slot
    signers = [node.keystore.find(a).signing_key for a in names]
    try:
        parameters = await asyncio.to_thread(
            lambda: chvote_parameters(
                level, shape, voters, authorities, election_id=election, signers=signers
            )
        )
        out = ChvoteRecordFile(record, election)
        out.append("parameters", "parameters", parameters)
        done()
        begin("key generation")
        roster = {c.name: c.address for c in node.keystore.cards()}
        roster[CONTROLLER] = address
        common = {"parameters": parameters, "authorities": authorities, "timeout": timeout, "roster": roster}
        await ask(
            PRINTER, "chv/setup", {**common, "role": "printer", "sheets": str(sheets) if sheets else None}
        )
        await ask(VOTERS, "chv/setup", {**common, "role": "voters"})
        key_shares = await each("chv/setup", lambda j: {**common, "role": "authority", "index": j})
        for j, k in enumerate(key_shares):
            out.append("key-share", authority_name(j), k)
        done()
        begin("generating electoral data")
        voter_data = await each("chv/electoral-data", lambda j: {})
        for j, d in enumerate(voter_data):
            out.append("voter-data", authority_name(j), d)
        done()
        begin("build public credentials")
        board = {"key_shares": key_shares, "voter_data": voter_data}
        await asyncio.gather(ask(VOTERS, "chv/board", board), each("chv/board", lambda j: board))
        done()
        begin("printing code sheets")
        await ask(PRINTER, "chv/print", {})
        done()
        begin("voting phase")
        answer = unpack(await ask(VOTERS, "chv/vote", {"voters": voters, "choices": choices}), "vote")
        if next_voter != voters:
            raise ChvoteFailed(phase, f"transcripts of {next_voter} voters, not {voters}", VOTERS)
        done()
        begin("mixing")
        inputs = await each("chv/input", lambda j: {})
        if any(x != inputs[0] for x in inputs):
            raise ChvoteFailed(phase, "the authorities do not hold the same confirmed ballots")
        out.append("input", "input", inputs[0])
        shuffles: list[bytes] = []
        for a in names:
            signed = await ask(a, "chv/shuffle", {"input": inputs[0], "shuffles": shuffles})
            shuffles.append(posted(out, phase, "shuffle", a, signed))
        done()
        begin("decryption")
        signed_shares = await each("chv/decrypt", lambda j: {"input": inputs[0], "shuffles": shuffles})
        shares = [posted(out, phase, "decryption", a, s) for a, s in zip(names, signed_shares, strict=True)]
        done()
        begin("tallying")
        result, counts, invalid = await asyncio.to_thread(
            chvote_tally, parameters, key_shares, voter_data, inputs[0], shuffles, shares
        )
        out.append("result", "result", result)
        if invalid:
            done()
            # an invalid vote comes from a cheating client: the authorities, last first, open the rows it
            # leads back to, and the record names the voter (spec/92.8)
            begin("tracing invalid votes")
            traces: list[bytes] = []
            for a in reversed(names):
                body = {"input": inputs[0], "shuffles": shuffles, "shares": shares, "later": traces}
                traces.append(posted(out, phase, "trace", a, await ask(a, "chv/trace", body)))
        out.finish()
        out = None
        done()
        expected = [0] * len(counts)
        for k, v in answer["expected"].items():
            expected[int(k) - 1] = int(v)
        await asyncio.gather(*(ask(p, "chv/close", {}) for p in [PRINTER, VOTERS, *names]))
        return ChvoteRun(phases, list(counts), expected, int(invalid), voters, record, parameters)
    except ChvoteFailed:
        raise
    except VotumError as e:
        raise ChvoteFailed(phase, f"{type(e).__name__}: {e}") from e
    finally:
        if out is not None:
            out.abort()


# -- processes on one machine --------------------------------------------------------------------------------


async def run_local(
    level: int,
    shape: str,
    voters: int,
    authorities: int,
    record: Path,
    homes: Path,
    sheets: Path | None = None,
    choices: list[list[int]] | None = None,
    faults: dict[str, str] | None = None,
    timeout: float = 600.0,
    progress: Callable[[str], object] | None = None,
) -> ChvoteRun:
    """Starts the printing authority, the voters' client and every authority as processes (identities under
    `homes`, made once and kept) and drives the election from this process. `faults` (party name → fault)
    are for tests. The processes are stopped however it ends."""
    check_size(level, voters, authorities, NodeSettings().channel.max_frame)
    names = party_names(authorities)
    all_homes = trusting_homes(homes, [CONTROLLER, *names])
    controller_home, party_homes = all_homes[0], all_homes[1:]
    faults = faults or {}
    t0 = time.perf_counter()
    procs = [PartyProcess("votum.parties.chvote", h, ChvoteFailed, faults.get(h.name)) for h in party_homes]
    loop = asyncio.get_running_loop()
    try:
        addresses = await asyncio.gather(*(loop.run_in_executor(None, p.address, 60.0) for p in procs))
        launch = time.perf_counter() - t0
        node = controller_node(controller_home, party_homes, list(addresses), timeout)
        try:
            host, port = await node.start("127.0.0.1", 0)
            result = await coordinate(
                node,
                f"{host}:{port}",
                level,
                shape,
                voters,
                authorities,
                record,
                sheets,
                choices,
                timeout,
                progress,
            )
        finally:
            await node.close()
        result.launch_seconds = launch
        return result
    finally:
        await asyncio.gather(*(loop.run_in_executor(None, p.stop) for p in procs))


if __name__ == "__main__":
    party_main(sys.argv[1:], "One party of a CHVote election (spec/92.12).", FAULTS, Party)
