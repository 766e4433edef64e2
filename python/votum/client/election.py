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
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from votum._native import (
    BoardChecker,
    EgContext,
    EgDecryptionTarget,
    EgEncryptionDevice,
    EgGuardian,
    EgManifest,
    eg_from_hex,
)
from votum.client import Client
from votum.eg import plaintext_ballot
from votum.errors import VerificationFailed

Progress = Callable[[str, int, int], None]


def _quiet(stage: str, done: int, total: int) -> None:
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

    @property
    def ballots_per_second(self) -> float:
        return self.ballots / self.stages["ballots"] if self.stages.get("ballots") else 0.0


def check_board(client: Client, election_id: str, page: int = 1000) -> dict[str, Any]:
    """Reads the whole board page by page and re-links every entry from genesis (spec/80.2); raises
    VerificationFailed at the first entry that does not chain, or when the last hash is not the head
    the service published. Returns that head."""
    checker = BoardChecker(election_id)
    after = -1
    head: dict[str, Any] = {}
    while True:
        got = client.get(f"/v1/elections/{election_id}/board?after={after}&limit={page}", name="GET board")
        head = got["head"]
        for e in got["entries"]:
            checker.push(e["seq"], e["kind"], e["name"], e["payload"].encode(), bytes.fromhex(e["hash"]))
        if not got["entries"] or got["entries"][-1]["seq"] >= head["seq"]:
            break
        after = got["entries"][-1]["seq"]
    if len(checker) != head["seq"] + 1 or checker.head.hex() != head["hash"]:
        raise VerificationFailed(f"the board's entries do not end at the published head {head}")
    return head


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
    progress: Progress = _quiet,
) -> StatefulRun:
    """Runs the election end to end against the service behind `client`; raises VerificationFailed
    when the published counts differ from the votes chosen here."""
    n = len(tokens.guardians)
    if not 0 <= missing <= n - quorum:
        raise ValueError(f"at most {n - quorum} guardians may be missing")
    rng = random.Random(seed)
    base = f"/v1/elections/{election_id}"
    stages: dict[str, float] = {}
    t_start = time.perf_counter()

    client.post(
        "/v1/elections",
        {"election_id": election_id, "manifest": manifest, "number_of_guardians": n, "quorum": quorum},
        token=tokens.admin,
    )
    em = EgManifest.from_json(json.dumps(manifest))

    # --- key ceremony: each guardian posts public material only ---------------------------------
    t0 = time.perf_counter()
    guardians = [EgGuardian(f"guardian-{i}", i, n, quorum) for i in range(1, n + 1)]
    gtoken = {g.guardian_id: tokens.guardians[g.guardian_id] for g in guardians}
    for g in guardians:
        client.post(
            f"{base}/guardians/{g.guardian_id}",
            {"record": json.loads(g.public_record())},
            token=gtoken[g.guardian_id],
            name="POST guardian record",
        )
    records: dict[str, str] = client.get(f"{base}/guardians")["records"]
    for done, g in enumerate(guardians, start=1):
        backups = {r: json.loads(g.backup_for(records[r])) for r in records if r != g.guardian_id}
        if backups:
            client.post(
                f"{base}/guardians/{g.guardian_id}/backups",
                {"backups": backups},
                token=gtoken[g.guardian_id],
                name="POST backups",
            )
        progress("key ceremony: backups", done, n)
    for done, g in enumerate(guardians, start=1):
        received = client.get(f"{base}/guardians/{g.guardian_id}/backups")["backups"]
        for sender, backup in received.items():
            g.receive_backup(records[sender], backup)
            client.post(
                f"{base}/guardians/{g.guardian_id}/verifications",
                {"sender_id": sender, "verified": True},
                token=gtoken[g.guardian_id],
                name="POST verification",
            )
        progress("key ceremony: backups checked", done, n)
    client.post(f"{base}/open", {}, token=tokens.admin)
    context = EgContext.from_json(client.get(f"{base}/board/by-name/context.json")["payload"])
    stages["key ceremony"] = time.perf_counter() - t0

    # --- ballots: encrypted on the device, submitted in batches ----------------------------------
    t0 = time.perf_counter()
    device_doc = {"device_id": 1, "session_id": 1, "launch_code": 1, "location": f"votum-load-{election_id}"}
    code_seed = client.post(f"{base}/devices", device_doc, token=tokens.device)["code_seed"]
    device = EgEncryptionDevice(em, context.elgamal_public_key, context.extended_base_hash)
    code = _scalar(code_seed)
    expected = {s["object_id"]: 0 for c in manifest["contests"] for s in c["ballot_selections"]}
    spoiled = 0
    for start in range(0, ballots, batch):
        items = []
        plans = []
        for i in range(start, min(start + batch, ballots)):
            chosen = _choose(manifest, rng)
            state = "spoiled" if rng.random() < spoil_rate else "cast"
            items.append((plaintext_ballot(manifest, f"ballot-{i:07d}", chosen), 1_795_000_000 + i, state))
            plans.append((chosen, state))
        encrypted, code = device.encrypt_many(items, code)
        body = []
        for ballot, (chosen, state) in zip(encrypted, plans, strict=True):
            if isinstance(ballot, Exception):
                raise ballot
            body.append({"ballot": json.loads(ballot), "state": state})
            if state == "cast":
                for s in chosen:
                    expected[s] += 1
            else:
                spoiled += 1
        client.post(
            f"{base}/ballots/batch", {"ballots": body}, token=tokens.device, name="POST ballots/batch"
        )
        progress("ballots", start + len(body), ballots)
    stages["ballots"] = time.perf_counter() - t0

    # --- decryption: present guardians post their shares and compensations ----------------------
    t0 = time.perf_counter()
    client.post(f"{base}/close", {}, token=tokens.admin)
    q_ext = context.extended_base_hash
    tally = EgDecryptionTarget.from_tally_json(
        client.get(f"{base}/board/by-name/encrypted_tally.json")["payload"], em
    )
    targets = [tally]
    after = -1
    while True:
        page = client.get(f"{base}/ballots?state=spoiled&after={after}&limit=1000")["ballots"]
        for b in page:
            entry = client.get(f"{base}/board/{b['seq']}", name="GET board entry")
            targets.append(EgDecryptionTarget.from_ballot_json(entry["payload"]))
        if len(page) < 1000:
            break
        after = page[-1]["seq"]
    present, absent = guardians[: n - missing], guardians[n - missing :]
    absent_records = [records[g.guardian_id] for g in absent]
    for done, g in enumerate(present, start=1):
        for begin in range(0, len(targets), 50):
            messages = [
                json.loads(s.to_json())
                for t in targets[begin : begin + 50]
                for s in g.all_shares(t, q_ext, absent_records)
            ]
            client.post(
                f"{base}/guardians/{g.guardian_id}/shares",
                {"shares": messages},
                token=gtoken[g.guardian_id],
                name="POST shares",
            )
        progress("decryption shares", done, len(present))
    client.post(f"{base}/publish", {}, token=tokens.admin)
    results = client.get(f"{base}/results")
    stages["decryption"] = time.perf_counter() - t0
    counts = {k: int(v) for k, v in results["counts"].items()}
    if counts != expected:
        raise VerificationFailed(f"published counts {counts} differ from the votes cast {expected}")
    head = check_board(client, election_id)
    return StatefulRun(
        election_id=election_id,
        ballots=ballots,
        spoiled=spoiled,
        seconds=time.perf_counter() - t_start,
        stages=stages,
        expected=expected,
        counts=counts,
        head=head,
        latencies=dict(client.latencies),
    )


def _scalar(hex_text: str) -> Any:
    from votum import Group

    return Group("eg-4096").scalar(eg_from_hex(hex_text))


def _choose(manifest: dict[str, Any], rng: random.Random) -> set[str]:
    chosen: set[str] = set()
    for c in manifest["contests"]:
        ids = [s["object_id"] for s in c["ballot_selections"]]
        k = rng.randint(0, c.get("votes_allowed", 1))
        chosen.update(rng.sample(ids, k))
    return chosen
