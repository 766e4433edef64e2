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
from dataclasses import dataclass
from typing import Any

import votum
from votum.client import Client
from votum.eg2 import he_fingerprint
from votum.errors import InvalidInput, VerificationFailed
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
        election = json.loads(self.entry("election.json"))
        if election.get("spec") != "2.1":
            raise InvalidInput(f"election {self.election_id!r} is not a 2.1 election")
        manifest = self.entry("manifest.json").encode()
        guardians = self.entry("guardians.json")
        n, k = int(election["number_of_guardians"]), int(election["quorum"])
        keys = dict(self.client.get(f"{self.base}/eg21")["keys"])
        records = [json.loads(keys[str(i)])["record"] for i in range(1, n + 1) if str(i) in keys]
        if len(records) != n:
            raise VerificationFailed(f"the board holds {len(records)} of {n} key records")
        made = votum.Eg21Ceremony(election["group"], manifest, n, k).joint(records)
        if json.loads(made) != json.loads(guardians):
            raise VerificationFailed("the board's guardians.json is not the one its key records make")
        if he_fingerprint(guardians) != self.expected_he:
            raise VerificationFailed(
                f"the election's H_E fingerprint is {he_fingerprint(guardians)}, not {self.expected_he} as "
                "the officials gave it: this device encrypts nothing under these keys"
            )
        self.device = votum.Eg21Device(
            election["group"], manifest, guardians.encode(), self.name, self.simple_chaining
        )
        weights = election.get("weights") or {}
        self.weight = int(weights.get(self.token_name, 1)) if self.token_name is not None else 1
        body = {"device": self.name, "simple_chaining": self.simple_chaining}
        answered = self.client.post(f"{self.base}/eg21/devices", body)
        if answered["start"] != self.device.chain_start:
            raise VerificationFailed("the service answered another chain start than this device's own")
        return self.device.chain_start

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
