"""A whole election through the stateful API (`/v1`, spec/80), as its participants would run it.

Each guardian is an `EgGuardian` in this process holding its own secrets and talking to the service
with its own token: it posts its public record and sealed backups, checks the backups addressed to
it, and later posts its decryption shares. An encryption device encrypts ballots locally and submits
them in batches; the administrator opens, closes and publishes. The final counts must equal the
counts of the votes the driver chose, and the board must re-link from genesis to the head the
service publishes (`check_board`).
"""

from __future__ import annotations

import json
import random
import resource
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from votum import (
    BoardChecker,
    EgContext,
    EgDecryptionTarget,
    EgEncryptionDevice,
    EgGuardian,
    EgManifest,
    eg_from_hex,
)
from votum.client import Client
from votum.eg import plaintext_ballot, random_choices
from votum.eg2 import Eg21RecordWriter
from votum.errors import InvalidInput, VerificationFailed

Progress = Callable[[str, int, int], None]


def quiet(stage: str, done: int, total: int) -> None:
    pass


@dataclass(frozen=True)
class Tokens:
    admin: str
    device: str
    #: guardian id -> its token
    guardians: dict[str, str] = field(repr=False)

    def __repr__(self) -> str:
        return f"Tokens(<admin, device, {len(self.guardians)} guardians>)"

    @staticmethod
    def generate(number_of_guardians: int) -> Tokens:
        import secrets

        return Tokens(
            secrets.token_urlsafe(24),
            secrets.token_urlsafe(24),
            {f"guardian-{i}": secrets.token_urlsafe(24) for i in range(1, number_of_guardians + 1)},
        )

    @staticmethod
    def from_roles(roles: dict[str, str], number_of_guardians: int) -> Tokens:
        """From a token -> role map (`votum serve`'s tokens: VOTUM_TOKENS or data_dir/tokens.json): the
        admin's, a device's (the admin's when there is none) and guardian-1 … guardian-n's."""
        by_role = {role: token for token, role in roles.items()}
        if "admin" not in by_role:
            raise InvalidInput("the tokens have no admin token")
        wanted = [f"guardian-{i}" for i in range(1, number_of_guardians + 1)]
        lacking = [g for g in wanted if f"guardian:{g}" not in by_role]
        if lacking:
            raise InvalidInput(f"the tokens have none for {', '.join(lacking)} (role guardian:<id>)")
        return Tokens(
            by_role["admin"],
            by_role.get("device", by_role["admin"]),
            {g: by_role[f"guardian:{g}"] for g in wanted},
        )

    def env(self) -> str:
        """The tokens as `VOTUM_TOKENS` spells them (role=token,…)."""
        return ",".join(f"{role}={token}" for token, role in self.settings_map().items())

    def settings_map(self) -> dict[str, str]:
        """token -> role, as `votum serve`'s settings take them."""
        out = {self.admin: "admin", self.device: "device"}
        out.update({t: f"guardian:{g}" for g, t in self.guardians.items()})
        return out


@dataclass
class StatefulRun:
    election_id: str
    ballots: int
    spoiled: int
    seconds: float
    #: seconds per stage (ceremony, ballots, decryption)
    stages: dict[str, float]
    expected: dict[str, int]
    counts: dict[str, int]
    head: dict[str, Any]
    latencies: dict[str, list[float]] = field(default_factory=dict)
    #: this process's peak resident memory (MiB) at the end of each stage (it never goes down, so
    #: the first stage whose figure jumps is the one that needed the memory)
    peak_mib: dict[str, float] = field(default_factory=dict)

    @property
    def ballots_per_second(self) -> float:
        return self.ballots / self.stages["ballots"] if self.stages.get("ballots") else 0.0


def check_board(
    client: Client,
    election_id: str,
    page: int = 100,
    progress: Progress = quiet,
    visit: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Reads the whole board page by page and re-links every entry from genesis (spec/80.2); raises
    VerificationFailed at the first entry that does not chain, or when the last hash is not the head
    the service published. Returns that head. `visit` sees each entry once it has chained (a reader
    that keeps what it needs: a guardian keeps the ballots it aggregates).

    Memory stays bounded whatever the board's length: one page is held at a time and each entry is
    dropped once hashed (a page of 100 ballot entries is about 4 MB)."""
    checker = BoardChecker(election_id)
    after = -1
    head: dict[str, Any] = {}
    while True:
        got = client.get(f"/v1/elections/{election_id}/board?after={after}&limit={page}", name="GET board")
        head = got["head"]
        entries = got.pop("entries")
        del got
        last = entries[-1]["seq"] if entries else None
        for i, e in enumerate(entries):
            try:
                checker.push(e["seq"], e["kind"], e["name"], e["payload"].encode(), bytes.fromhex(e["hash"]))
            except VerificationFailed as err:
                raise VerificationFailed(f"board of {election_id!r}: {err}") from err
            if visit is not None:
                visit(e)
            entries[i] = None  # the payload's memory goes now, not with the page
        del entries
        progress("board entries checked", len(checker), head["seq"] + 1)
        if last is None or last >= head["seq"]:
            break
        after = last
    if len(checker) != head["seq"] + 1 or checker.head.hex() != head["hash"]:
        raise VerificationFailed(f"the board's entries do not end at the published head {head}")
    return head


def write_eg21_record(client: Client, election_id: str, out: Path) -> dict[str, Any]:
    """A 2.1 election's record written into the new directory `out` from its whole board, re-linked to the
    head the service publishes (`check_board`, spec/80.11); returns that head."""
    writer = Eg21RecordWriter(out)
    try:
        return check_board(
            client, election_id, visit=lambda e: writer.take(e["kind"], e["name"], e["payload"].encode())
        )
    finally:
        writer.close()


@dataclass
class Plan:
    """One ballot the driver chose: its id, the selections marked, cast or spoiled, and its encryption."""

    ballot_id: str
    chosen: set[str]
    state: str
    ballot: dict[str, Any] = field(repr=False)


class ElectionDriver:
    """The participants of one election, in this process: the administrator, n guardians (each an
    `EgGuardian` holding its own secrets), one encryption device. Each step is one method, so a test
    can stop between them (or kill the server in the middle of `submit`)."""

    def __init__(
        self,
        client: Client,
        tokens: Tokens,
        election_id: str,
        manifest: dict[str, Any],
        quorum: int,
        seed: int = 2026,
    ) -> None:
        self.client = client
        self.tokens = tokens
        self.election_id = election_id
        self.manifest = manifest
        self.quorum = quorum
        self.n = len(tokens.guardians)
        self.rng = random.Random(seed)
        self.base = f"/v1/elections/{election_id}"
        self.em = EgManifest.from_json(json.dumps(manifest))
        self.guardians = [EgGuardian(f"guardian-{i}", i, self.n, quorum) for i in range(1, self.n + 1)]
        self.records: dict[str, str] = {}
        self.context: EgContext | None = None
        self.device: EgEncryptionDevice | None = None
        self.code: Any = None
        self.next_ballot = 0
        #: ballot ids are this prefix and a number (a named device token's ids start with its name and "-")
        self.ballot_prefix = "ballot-"
        #: votes of the ballots the service acknowledged as cast, per selection id
        self.expected = {s["object_id"]: 0 for c in manifest["contests"] for s in c["ballot_selections"]}
        self.spoiled = 0
        self._lock = threading.Lock()

    def _token(self, g: EgGuardian) -> str:
        return self.tokens.guardians[g.guardian_id]

    def ceremony(self, progress: Progress = quiet) -> EgContext:
        """Creates the election, runs the key ceremony through the service, opens the election and
        registers the device. Returns the context."""
        c, base, n = self.client, self.base, self.n
        c.post(
            "/v1/elections",
            {
                "election_id": self.election_id,
                "manifest": self.manifest,
                "number_of_guardians": n,
                "quorum": self.quorum,
            },
            token=self.tokens.admin,
        )
        for g in self.guardians:
            c.post(
                f"{base}/guardians/{g.guardian_id}",
                {"record": json.loads(g.public_record())},
                token=self._token(g),
                name="POST guardian record",
            )
        self.records = c.get(f"{base}/guardians")["records"]
        for done, g in enumerate(self.guardians, start=1):
            backups = {
                r: json.loads(g.backup_for(self.records[r])) for r in self.records if r != g.guardian_id
            }
            if backups:
                c.post(
                    f"{base}/guardians/{g.guardian_id}/backups",
                    {"backups": backups},
                    token=self._token(g),
                    name="POST backups",
                )
            progress("key ceremony: backups", done, n)
        for done, g in enumerate(self.guardians, start=1):
            received = c.get(f"{base}/guardians/{g.guardian_id}/backups")["backups"]
            for sender, backup in received.items():
                g.receive_backup(self.records[sender], backup)
                c.post(
                    f"{base}/guardians/{g.guardian_id}/verifications",
                    {"sender_id": sender, "verified": True},
                    token=self._token(g),
                    name="POST verification",
                )
            progress("key ceremony: backups checked", done, n)
        c.post(f"{base}/open", {}, token=self.tokens.admin)
        self.context = EgContext.from_json(c.get(f"{base}/board/by-name/context.json")["payload"])
        self.device = EgEncryptionDevice(
            self.em, self.context.elgamal_public_key, self.context.extended_base_hash
        )
        self.code = self.register_device(1)
        return self.context

    def register_device(self, device_id: int, token: str | None = None, location: str | None = None) -> Any:
        """Registers encryption device `device_id` (with `token`, the device token by default); returns its
        hash, the first code_seed of its chain."""
        doc = {
            "device_id": device_id,
            "session_id": 1,
            "launch_code": 1,
            "location": location or f"votum-{self.election_id}",
        }
        code_seed = self.client.post(f"{self.base}/devices", doc, token=token or self.tokens.device)[
            "code_seed"
        ]
        return _scalar(code_seed)

    def plan(self, count: int, spoil_rate: float = 0.0) -> list[Plan]:
        """The next `count` ballots, chosen and encrypted (continuing the device's code chain)."""
        plans, self.code = self.plan_chain(count, self.code, spoil_rate)
        return plans

    def plan_chain(self, count: int, code: Any, spoil_rate: float = 0.0) -> tuple[list[Plan], Any]:
        """`count` ballots chained from `code` (another device's chain); returns them and the next code."""
        assert self.device is not None, "run ceremony() first"
        items, chosen_states = [], []
        with self._lock:
            first = self.next_ballot
            self.next_ballot += count
            for i in range(first, first + count):
                style, choices = random_choices(self.manifest, self.rng)
                chosen = set(choices)
                state = "spoiled" if self.rng.random() < spoil_rate else "cast"
                plaintext = plaintext_ballot(self.manifest, f"{self.ballot_prefix}{i:07d}", chosen, style)
                items.append((plaintext, 1_795_000_000 + i, state))
                chosen_states.append((f"{self.ballot_prefix}{i:07d}", chosen, state))
        encrypted, code = self.device.encrypt_many(items, code)
        plans = []
        for ballot, (ballot_id, chosen, state) in zip(encrypted, chosen_states, strict=True):
            if isinstance(ballot, Exception):
                raise ballot
            plans.append(Plan(ballot_id, chosen, state, json.loads(ballot)))
        return plans, code

    def count(self, plans: list[Plan]) -> None:
        """Adds acknowledged ballots to the expected counts."""
        with self._lock:
            for p in plans:
                if p.state == "cast":
                    for s in p.chosen:
                        self.expected[s] += 1
                else:
                    self.spoiled += 1

    def submit(self, plans: list[Plan], token: str | None = None) -> list[dict[str, Any]]:
        """One batch (with `token`, the device token by default); on success the ballots count towards
        the expected result."""
        body = {"ballots": [{"ballot": p.ballot, "state": p.state} for p in plans]}
        receipts: list[dict[str, Any]] = self.client.post(
            f"{self.base}/ballots/batch", body, token=token or self.tokens.device, name="POST ballots/batch"
        )["receipts"]
        self.count(plans)
        return receipts

    def decrypt_and_publish(self, missing: int = 0, progress: Progress = quiet) -> dict[str, int]:
        """Closes the election; the first n − `missing` guardians post their shares of the tally and of
        every spoiled ballot (and compensations for the missing); publishes; returns the counts."""
        c, base = self.client, self.base
        if not 0 <= missing <= self.n - self.quorum:
            raise ValueError(f"at most {self.n - self.quorum} guardians may be missing")
        assert self.context is not None, "run ceremony() first"
        c.post(f"{base}/close", {}, token=self.tokens.admin)
        q_ext = self.context.extended_base_hash
        targets = [
            EgDecryptionTarget.from_tally_json(
                c.get(f"{base}/board/by-name/encrypted_tally.json")["payload"], self.em
            )
        ]
        after = -1
        while True:
            page = c.get(f"{base}/ballots?state=spoiled&after={after}&limit=1000")["ballots"]
            for b in page:
                entry = c.get(f"{base}/board/{b['seq']}", name="GET board entry")
                targets.append(EgDecryptionTarget.from_ballot_json(entry["payload"]))
            if len(page) < 1000:
                break
            after = page[-1]["seq"]
        present = self.guardians[: self.n - missing]
        absent_records = [self.records[g.guardian_id] for g in self.guardians[self.n - missing :]]
        for done, g in enumerate(present, start=1):
            for begin in range(0, len(targets), 50):
                messages = [
                    json.loads(s.to_json())
                    for t in targets[begin : begin + 50]
                    for s in g.all_shares(t, q_ext, absent_records)
                ]
                c.post(
                    f"{base}/guardians/{g.guardian_id}/shares",
                    {"shares": messages},
                    token=self._token(g),
                    name="POST shares",
                )
            progress("decryption shares", done, len(present))
        c.post(f"{base}/publish", {}, token=self.tokens.admin)
        return {k: int(v) for k, v in c.get(f"{base}/results")["counts"].items()}


def run_stateful_election(
    client: Client,
    tokens: Tokens,
    election_id: str,
    manifest: dict[str, Any],
    ballots: int,
    quorum: int,
    batch: int = 100,
    spoil_rate: float = 0.0,
    missing: int = 0,
    seed: int = 2026,
    progress: Progress = quiet,
) -> StatefulRun:
    """Runs the election end to end against the service behind `client`; raises VerificationFailed
    when the published counts differ from the votes chosen here or the board does not re-link."""
    t_start = time.perf_counter()
    driver = ElectionDriver(client, tokens, election_id, manifest, quorum, seed)
    stages: dict[str, float] = {}
    peaks: dict[str, float] = {}
    t0 = time.perf_counter()
    driver.ceremony(progress)
    stages["key ceremony"] = time.perf_counter() - t0
    peaks["key ceremony"] = _peak_mib()
    t0 = time.perf_counter()
    encrypting = 0.0
    for start in range(0, ballots, batch):
        e0 = time.perf_counter()
        plans = driver.plan(min(batch, ballots - start), spoil_rate)
        encrypting += time.perf_counter() - e0
        driver.submit(plans)
        progress("ballots", start + len(plans), ballots)
    stages["ballots"] = time.perf_counter() - t0 - encrypting
    stages["encryption (client)"] = encrypting
    peaks["ballots"] = _peak_mib()
    t0 = time.perf_counter()
    counts = driver.decrypt_and_publish(missing, progress)
    stages["decryption"] = time.perf_counter() - t0
    peaks["decryption"] = _peak_mib()
    if counts != driver.expected:
        raise VerificationFailed(f"published counts {counts} differ from the votes cast {driver.expected}")
    t0 = time.perf_counter()
    head = check_board(client, election_id, progress=progress)
    stages["board check"] = time.perf_counter() - t0
    peaks["board check"] = _peak_mib()
    return StatefulRun(
        election_id=election_id,
        ballots=ballots,
        spoiled=driver.spoiled,
        seconds=time.perf_counter() - t_start,
        stages=stages,
        expected=driver.expected,
        counts=counts,
        head=head,
        latencies=dict(client.latencies),
        peak_mib=peaks,
    )


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _scalar(hex_text: str) -> Any:
    from votum import Group

    return Group("eg-4096").scalar(eg_from_hex(hex_text))
