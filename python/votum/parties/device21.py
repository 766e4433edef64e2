"""An encryption device in an ElectionGuard 2.1 election on the service (spec/80.11).

The service may lie, so the device believes only what it can check before it encrypts a vote:
- the guardians' document on the board must be the one the n key records on the board make (every proof
  checked, K, K̂ and H_E recomputed), and its H_E must have the fingerprint the officials gave the device
  out of band (every guardian's tool and the official's `open` print it). A service that handed the device
  keys of its own making could otherwise read every vote it encrypts;
- its chain's start (H_DI, or H_0 under simple chaining) is computed here, and a service that answers another
  is refused;
- each receipt must carry the ballot's own code; the chain moves on only then.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import votum
from votum.client import Client, ServiceError
from votum.eg2 import he_fingerprint, token_weight
from votum.errors import Conflict, InvalidInput, NotFound, VerificationFailed
from votum.fingerprints import grouped


@dataclass
class Cast21:
    ballot_id: str
    state: str
    code: str
    seq: int
    hash: str


def normalise_fingerprint(text: str) -> str:
    """A fingerprint as typed (any case, spaces or none) in `he_fingerprint`'s form."""
    raw = "".join(ch for ch in text.lower() if ch in "0123456789abcdef")
    if len(raw) != 32:
        raise InvalidInput(f"an H_E fingerprint has 32 hex digits, got {len(raw)}")
    return grouped(raw)


def checked_keys(client: Client, election_id: str, expected_he: str) -> tuple[dict[str, Any], bytes, str]:
    """The election's election.json, manifest and guardians' document from the board, once the guardians'
    document is the one the n key records on the board make and its H_E has the fingerprint the officials
    gave (`expected_he`, normalised)."""
    base = f"/v1/elections/{election_id}"

    def entry(name: str) -> str:
        return str(client.get(f"{base}/board/by-name/{name}")["payload"])

    election = json.loads(entry("election.json"))
    if election.get("spec") != "2.1":
        raise InvalidInput(f"election {election_id!r} is not a 2.1 election")
    manifest = entry("manifest.json").encode()
    guardians = entry("guardians.json")
    n, k = int(election["number_of_guardians"]), int(election["quorum"])
    keys = dict(client.get(f"{base}/eg21")["keys"])
    records = [json.loads(keys[str(i)])["record"] for i in range(1, n + 1) if str(i) in keys]
    if len(records) != n:
        raise VerificationFailed(f"the board holds {len(records)} of {n} key records")
    made = votum.Eg21Ceremony(election["group"], manifest, n, k).joint(records)
    if json.loads(made) != json.loads(guardians):
        raise VerificationFailed("the board's guardians.json is not the one its key records make")
    if he_fingerprint(guardians) != expected_he:
        raise VerificationFailed(
            f"the election's H_E fingerprint is {he_fingerprint(guardians)}, not {expected_he} as "
            "the officials gave it: this device encrypts nothing under these keys"
        )
    return election, manifest, guardians


class Device21:
    """One 2.1 encryption device: its name, chaining mode, its token, and the H_E fingerprint it expects."""

    def __init__(
        self,
        client: Client,
        election_id: str,
        name: str,
        he: str,
        simple_chaining: bool = False,
        token_name: str | None = None,
    ) -> None:
        self.client = client
        #: the device token's name (`device:<name>`), whose weight in election.json its ballots carry
        self.token_name = token_name
        #: the weight of its ballots, read at start
        self.weight = 1
        self.election_id = election_id
        self.name = name
        self.expected_he = normalise_fingerprint(he)
        self.simple_chaining = simple_chaining
        self.base = f"/v1/elections/{election_id}"
        self.device: votum.Eg21Device | None = None
        #: the code the next ballot chains from (simple chaining), None before the first
        self.tail: str | None = None

    def __repr__(self) -> str:
        return f"Device21({self.election_id!r}, {self.name!r})"

    def entry(self, name: str) -> str:
        """The payload of the board's entry `name` (what the service says; check it before use)."""
        return str(self.client.get(f"{self.base}/board/by-name/{name}")["payload"])

    def start(self) -> str:
        """Reads and checks the election's keys, registers this device and checks its chain's start."""
        election, manifest, guardians = checked_keys(self.client, self.election_id, self.expected_he)
        self.device = votum.Eg21Device(
            election["group"], manifest, guardians.encode(), self.name, self.simple_chaining
        )
        self.weight = token_weight(election.get("weights") or {}, self.token_name)
        body = {"device": self.name, "simple_chaining": self.simple_chaining}
        answered = self.client.post(f"{self.base}/eg21/devices", body)
        if answered["start"] != self.device.chain_start:
            raise VerificationFailed("the service answered another chain start than this device's own")
        return self.device.chain_start

    def board_tail(self) -> str | None:
        """Under simple chaining, where the service says this device's chain ends (None: at its start). For a
        device that lost its own record of its tail: a wrong answer only gets the next ballot refused as a
        fork, or fails the record's V-EG21-08."""
        got = self.client.get(f"{self.base}/eg21/devices/{self.name}/tail")
        if self.device is None or got["tail"] == self.device.chain_start:
            return None
        return str(got["tail"])

    def encrypt(self, plain: dict[str, Any], state: str = "cast") -> str:
        """The ballot encrypted and sealed after this device's tail (JSON text), not yet sent."""
        if self.device is None:
            raise InvalidInput("start the device first")
        return self.device.encrypt(json.dumps(plain), state, self.weight, self.tail)

    def send(self, ballot: str) -> Cast21:
        """Sends one sealed ballot; its receipt must carry its code. The chain moves on to it."""
        code = str(json.loads(ballot)["H_C"])
        got = self.client.post(f"{self.base}/eg21/ballots", {"ballots": [ballot]})["receipts"][0]
        if got["code"] != code:
            raise VerificationFailed("the receipt's code is not the ballot's")
        if self.simple_chaining:
            self.tail = code
        return Cast21(got["ballot_id"], got["state"], got["code"], got["seq"], got["hash"])

    def cast(self, plain: dict[str, Any], state: str = "cast") -> Cast21:
        return self.send(self.encrypt(plain, state))


class PaperStore:
    """The printer's store of pre-encrypted ballots (§4.2): per printed ballot its id, its record line, its
    ballot nonce ξ_B and its sheet, one JSON line each, in a file only its owner reads (mode 0600). ξ_B opens
    every vector of the ballot: with it and a recorded ballot's short codes anyone could read the vote, so
    the store goes to the recorder and nowhere else, and is destroyed once the election is published."""

    def __init__(self, path: Path) -> None:
        self.path = path
        #: ballot id -> offset of its line, and the file size it was built at
        self._index: dict[str, int] = {}
        self._indexed = 0

    def add(self, items: list[dict[str, str]]) -> None:
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as f:
            for item in items:
                f.write(json.dumps(item, separators=(",", ":")) + "\n")
            f.flush()
            os.fsync(f.fileno())

    def get(self, ballot_id: str) -> dict[str, str]:
        """The store's item for `ballot_id` (the lines added since the last look are indexed first)."""
        if self.path.exists():
            with self.path.open("rb") as f:
                f.seek(self._indexed)
                while line := f.readline():
                    if line.endswith(b"\n"):
                        self._index.setdefault(str(json.loads(line)["id"]), self._indexed)
                        self._indexed += len(line)
                at = self._index.get(ballot_id)
                if at is not None:
                    f.seek(at)
                    return dict(json.loads(f.readline()))
        raise NotFound(f"ballot {ballot_id!r} is not in the printer's store {self.path}")

    def codes(self) -> list[tuple[str, str]]:
        """(id, code) of every ballot the store holds, in print order."""
        if not self.path.exists():
            return []
        with self.path.open(encoding="utf-8") as f:
            return [(item["id"], item["code"]) for item in map(json.loads, f)]

    def __repr__(self) -> str:
        return f"PaperStore({str(self.path)!r})"


class Printer21:
    """A printer of pre-encrypted ballots in a 2.1 election on the service (§4.2, spec/80.11). It believes
    the election's keys only as `Device21` does, keeps each ballot's nonce and sheet in its store before it
    posts the ballot, and moves its chain on only on a receipt that carries the ballot's own code."""

    def __init__(
        self,
        client: Client,
        election_id: str,
        name: str,
        he: str,
        store: Path,
        simple_chaining: bool = False,
    ) -> None:
        self.client = client
        self.election_id = election_id
        self.name = name
        self.expected_he = normalise_fingerprint(he)
        self.store = PaperStore(store)
        self.simple_chaining = simple_chaining
        self.base = f"/v1/elections/{election_id}"
        self.printer: votum.Eg21Printer | None = None
        self.tail: str | None = None

    def __repr__(self) -> str:
        return f"Printer21({self.election_id!r}, {self.name!r})"

    def start(self) -> str:
        """Reads and checks the election's keys, registers this printer and checks its chain's start."""
        election, manifest, guardians = checked_keys(self.client, self.election_id, self.expected_he)
        self.printer = votum.Eg21Printer(
            election["group"], manifest, guardians.encode(), self.name, self.simple_chaining
        )
        body = {"device": self.name, "simple_chaining": self.simple_chaining, "printer": True}
        answered = self.client.post(f"{self.base}/eg21/devices", body)
        if answered["start"] != self.printer.chain_start:
            raise VerificationFailed("the service answered another chain start than this printer's own")
        self.tail = self._resume() if self.simple_chaining else None
        return self.printer.chain_start

    def _resume(self) -> str | None:
        """The tail under simple chaining: the code of the last ballot of the store that the service took.
        A batch stored and never taken is skipped: its post failed, or its ids were taken already (the board
        holds another ballot, with another code, under the id)."""
        for ballot_id, code in reversed(self.store.codes()):
            try:
                got = self.client.get(f"{self.base}/eg21/ballots/{ballot_id}")
            except ServiceError as e:
                if e.status == 404:
                    continue
                raise
            if got["code"] == code:
                return code
        return None

    def print(self, ids: list[str], style: str) -> list[dict[str, Any]]:
        """Prints ballots `ids` of `style` and posts them (before any mark); returns each ballot's sheet for
        the press: per contest its index, its id and, in printed order (the options in the manifest's order,
        then the nulls), each option's id (None for a null) with its short code. A sheet is as secret as the
        paper: with a recording's short codes it tells the vote."""
        if self.printer is None:
            raise InvalidInput("start the printer first")
        made = self.printer.print(ids, style, self.tail)
        items = [
            {"id": i, "code": str(json.loads(line)["H_C"]), "printed": line, "nonce": nonce, "sheet": sheet}
            for i, (line, nonce, sheet) in zip(ids, made, strict=True)
        ]
        self.store.add(items)
        for at in range(0, len(items), 100):
            batch = items[at : at + 100]
            got = self.client.post(f"{self.base}/eg21/ballots", {"ballots": [b["printed"] for b in batch]})
            for item, r in zip(batch, got["receipts"], strict=True):
                if r["code"] != item["code"] or r["state"] != "printed":
                    raise VerificationFailed(f"ballot {item['id']}: the receipt is not this printed ballot's")
            if self.simple_chaining:
                self.tail = batch[-1]["code"]
        return [{"id": item["id"], "contests": _press(item["sheet"])} for item in items]


def _press(sheet: str) -> list[dict[str, Any]]:
    """A sheet as the press needs it: per contest its index, its id and its (option or None, short code)
    pairs; the selection hashes stay in the store."""
    return [
        {
            "index": c["index"],
            "contest": c["contest"],
            "options": list(zip(c["options"], c["short_codes"], strict=True)),
        }
        for c in json.loads(sheet)
    ]


class Recorder21:
    """The recorder of pre-encrypted ballots in a 2.1 election on the service (§4.3, spec/80.11): it records
    a voter's marks on a printed ballot with the ballot's nonce from the printer's store, checked first
    against the printed ballot the board holds (a store that gives another nonce is named), and posts the
    recording with its token's weight; the receipt must carry the ballot's code."""

    def __init__(
        self, client: Client, election_id: str, he: str, store: Path, token_name: str | None = None
    ) -> None:
        self.client = client
        self.election_id = election_id
        self.expected_he = normalise_fingerprint(he)
        self.store = PaperStore(store)
        self.token_name = token_name
        self.weight = 1
        self.base = f"/v1/elections/{election_id}"
        self.recorder: votum.Eg21Recorder | None = None

    def __repr__(self) -> str:
        return f"Recorder21({self.election_id!r})"

    def start(self) -> None:
        election, manifest, guardians = checked_keys(self.client, self.election_id, self.expected_he)
        self.recorder = votum.Eg21Recorder(election["group"], manifest, guardians.encode())
        self.weight = token_weight(election.get("weights") or {}, self.token_name)

    def record(self, ballot_id: str, marks: dict[str, list[int]]) -> Cast21:
        """Records `marks` (per contest id, 0 or 1 per option in the manifest's order; a contest left out is
        blank) on printed ballot `ballot_id`, of the style printed on it."""
        if self.recorder is None:
            raise InvalidInput("start the recorder first")
        item = self.store.get(ballot_id)
        try:
            held = self.client.get(f"{self.base}/eg21/ballots/{ballot_id}")
        except ServiceError as e:
            if e.status != 404:
                raise
            held = None
        if held is not None and held["state"] == "cast":
            # recorded already (a retry after a lost answer, or a second recording): a ballot counts once
            raise Conflict(f"ballot {ballot_id} is already recorded (board entry {held['seq']})")
        printed = str(self.client.get(f"{self.base}/board/by-name/eg21/ballots/{ballot_id}.json")["payload"])
        style = str(json.loads(printed)["style"])
        plain = {"id": ballot_id, "style": style, "contests": {c: {"votes": v} for c, v in marks.items()}}
        ballot = self.recorder.record(printed, item["sheet"], item["nonce"], json.dumps(plain), self.weight)
        got = self.client.post(f"{self.base}/eg21/recorded", {"ballots": [ballot]})["receipts"][0]
        if got["code"] != item["code"]:
            raise VerificationFailed("the receipt's code is not the ballot's")
        return Cast21(got["ballot_id"], got["state"], got["code"], got["seq"], got["hash"])
