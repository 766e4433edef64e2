"""A guardian's own tool against the election service (spec/80.10): it joins the key ceremony and, after
the election closes, decrypts, each from this guardian's machine with this guardian's token.

The guardian's secret polynomial is made here and sealed at once to the guardian's own node key
(`votum node keygen`; spec/95.6's sealing, purpose `STATE_PURPOSE`), before anything is posted, so a
tool that stops half-way resumes with the same secret: its public record is the same bytes again, and
what it already posted is not posted twice. Nothing secret is sent: the service sees the public record,
backups sealed to their receivers' keys, reports on received backups, and decryption shares with
their proofs.

The service is one more party that may lie, so the tool believes only what it can check:
- every other guardian's record is checked here (its Schnorr proofs), and the orders and commitments
  must be distinct;
- the context the service publishes at opening must be the one these records make;
- before decrypting, the whole board is read and re-linked to the head the service publishes, every
  cast ballot on it is checked and aggregated here, and the encrypted tally on the board must equal
  that aggregate; the spoiled ballots decrypted are the ones the board marks spoiled. So a service
  cannot have a guardian decrypt a single ballot under the name of the tally.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import votum
from votum.client import Client, ServiceError
from votum.client.election import Progress, check_board, quiet
from votum.client.waiting import Waiter
from votum.eg import encrypted_tally_json, records_in_order, share_name
from votum.errors import Conflict, InvalidInput, VerificationFailed, VotumError
from votum.fingerprints import key_fingerprint
from votum.nodes.identity import Identity
from votum.parties.ceremony import STATE_PURPOSE

#: targets per request of shares (a request's body stays well under the service's limit)
SHARES_PER_REQUEST = 50


def state_path(home: Path, election_id: str) -> Path:
    """Where this guardian keeps its sealed secret state for `election_id`."""
    return home / f"eg-guardian-{election_id}.sealed"


def _seal(identity: Identity, path: Path, guardian: votum.EgGuardian) -> None:
    """Seals the guardian's state to its own key and replaces the file atomically (mode 0600)."""
    box = identity.seal_for(identity.card, STATE_PURPOSE, guardian.expose_secret_state())
    part = path.with_name(path.name + ".part")
    fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(box)
        f.flush()
        os.fsync(f.fileno())
    os.replace(part, path)


def _unseal(identity: Identity, path: Path, records: list[str]) -> votum.EgGuardian:
    box = path.read_bytes()
    return votum.EgGuardian.from_secret_state(
        identity.open_sealed(identity.card, STATE_PURPOSE, box), records
    )


@dataclass
class Joined:
    guardian_id: str
    #: this guardian's election public key, fingerprinted as every page and command shows it
    key_fingerprint: str
    #: the joint key's fingerprint, once the election is open (`None` if the tool did not wait for it)
    joint_fingerprint: str | None
    disputed: list[str] = field(default_factory=list)


def _check_records(records: dict[str, str], n: int, quorum: int) -> None:
    """The n records as one set (`eg_verify_guardian_records`: distinct ids and orders in 1..n, every
    Schnorr proof, batched, a failure naming its guardian), each under the id it was posted as, and no
    commitment repeated across them (a copied record would verify: the proofs do not name their guardian)."""
    if len(records) != n:
        raise VerificationFailed(f"{len(records)} guardian records where the election has {n}")
    try:
        votum.eg_verify_guardian_records(list(records.values()), quorum)
    except VotumError as e:
        raise VerificationFailed(f"the guardians' records do not verify: {e}") from None
    seen: dict[int, str] = {}
    for gid, text in records.items():
        doc = json.loads(text)
        if doc.get("guardian_id") != gid:
            raise VerificationFailed(f"the record posted as {gid!r} names {doc.get('guardian_id')!r}")
        for c in doc["election_commitments"]:
            first = seen.setdefault(int(c, 16), gid)
            if first != gid:
                raise VerificationFailed(f"guardian {gid!r} repeats a commitment of {first!r}")


class GuardianTool:
    """One guardian of one election: its identity (the node key its state is sealed to), its token, and
    the service."""

    def __init__(
        self,
        client: Client,
        election_id: str,
        guardian_id: str,
        identity: Identity,
        waiter: Waiter | None = None,
        progress: Progress = quiet,
    ) -> None:
        self.client = client
        self.election_id = election_id
        self.guardian_id = guardian_id
        self.identity = identity
        self.waiter = waiter or Waiter()
        self.progress = progress
        self.base = f"/v1/elections/{election_id}"
        self.path = state_path(identity.home, election_id)
        #: receivers whose dispute of this guardian's backup its guardian confirmed with them out of band:
        #: only those are answered (an answer publishes the share, and the service holds the board)
        self.answer: set[str] = set()
        #: what the guardian must act on (a dispute to confirm), each said once, through `tell`
        self.notices: list[str] = []
        self.tell: Callable[[str], None] = lambda notice: None

    def __repr__(self) -> str:
        return f"GuardianTool({self.election_id!r}, {self.guardian_id!r})"

    def _status(self) -> dict[str, Any]:
        return dict(self.client.get(self.base))

    def _records(self) -> dict[str, str]:
        return dict(self.client.get(f"{self.base}/guardians")["records"])

    # -- the key ceremony --------------------------------------------------------------------------------

    def join(self, order: int, wait_open: bool = True) -> Joined:
        """Makes (or reopens) this guardian's secret, posts its record, backs it up to every other
        guardian, checks the backups addressed to it, answers disputes about its own backups, and (with
        `wait_open`) waits until the official opens the election and checks the context."""
        status = self._status()
        n, quorum = status["number_of_guardians"], status["quorum"]
        if self.path.exists():
            guardian = _unseal(self.identity, self.path, [])
            if guardian.guardian_id != self.guardian_id or guardian.sequence_order != order:
                raise InvalidInput(
                    f"{self.path} holds guardian {guardian.guardian_id!r} (order {guardian.sequence_order}), "
                    f"not {self.guardian_id!r} (order {order})"
                )
        else:
            if status["phase"] != "ceremony":
                raise Conflict(
                    f"election {self.election_id!r} is {status['phase']}; its key ceremony is over"
                )
            if not 1 <= order <= n:
                raise InvalidInput(f"the sequence order must be in 1..{n}")
            guardian = votum.EgGuardian(self.guardian_id, order, n, quorum)
            _seal(self.identity, self.path, guardian)
        mine = guardian.public_record()
        if status["phase"] == "ceremony":
            self._post(f"{self.base}/guardians/{self.guardian_id}", {"record": json.loads(mine)})
        records = self._await_records(n)
        _check_records(records, n, quorum)
        if records.get(self.guardian_id) != mine:
            raise VerificationFailed("the service shows another record for this guardian than the one posted")
        disputed: list[str] = []
        if status["phase"] == "ceremony":
            self._send_backups(guardian, records)
            disputed = self._check_backups(guardian, records)
        joint = self._await_open(guardian, records) if wait_open else None
        return Joined(
            self.guardian_id, key_fingerprint(json.loads(mine)["election_public_key"]), joint, disputed
        )

    def _post(self, path: str, body: Any) -> Any:
        return self.client.post(path, body, name=path.rsplit("/", 1)[-1])

    def _await_records(self, n: int) -> dict[str, str]:
        got: dict[str, str] = {}

        def ready() -> bool:
            got.clear()
            got.update(self._records())
            self.progress("guardian records posted", len(got), n)
            return len(got) >= n

        self.waiter.until(f"the records of all {n} guardians", ready)
        return got

    def _send_backups(self, guardian: votum.EgGuardian, records: dict[str, str]) -> None:
        """A backup for each other guardian that has none from this one yet (a retried run posts only
        the ones missing: backups are sealed with fresh randomness, so a second one would differ)."""
        backups = {}
        for receiver, record in records.items():
            if receiver == self.guardian_id:
                continue
            held = self.client.get(f"{self.base}/guardians/{receiver}/backups")["backups"]
            if self.guardian_id not in held:
                backups[receiver] = json.loads(guardian.backup_for(record))
        if backups:
            self._post(f"{self.base}/guardians/{self.guardian_id}/backups", {"backups": backups})

    def _check_backups(self, guardian: votum.EgGuardian, records: dict[str, str]) -> list[str]:
        """Opens each backup addressed here, checks it against its sender's commitments and reports
        the outcome; returns the senders disputed. The state is sealed again with the backups held."""
        others = [g for g in records if g != self.guardian_id]
        received: dict[str, str] = {}

        def ready() -> bool:
            received.clear()
            received.update(self.client.get(f"{self.base}/guardians/{self.guardian_id}/backups")["backups"])
            self.progress("backups received", len(received), len(others))
            return all(g in received for g in others)

        self.waiter.until(f"the backups of {', '.join(others)}", ready)
        disputed = []
        for sender in others:
            if sender in guardian.backups_held:
                continue
            try:
                guardian.receive_backup(records[sender], received[sender])
                verified = True
            except (VerificationFailed, InvalidInput, ValueError):
                verified = False
                disputed.append(sender)
            try:
                self._post(
                    f"{self.base}/guardians/{self.guardian_id}/verifications",
                    {"sender_id": sender, "verified": verified},
                )
            except ServiceError as e:
                if e.type != "conflict":
                    raise
        _seal(self.identity, self.path, guardian)
        return disputed

    def _settle(self, guardian: votum.EgGuardian, records: dict[str, str]) -> None:
        """Answers in public every dispute about this guardian's backups, and takes the public answers
        to this guardian's own disputes."""
        names: dict[str, str] = {}

        def keep(e: dict[str, Any]) -> None:
            if e["name"].startswith(("ceremony/challenges/", "ceremony/answers/")):
                names[e["name"]] = e["payload"]

        check_board(self.client, self.election_id, visit=keep)
        changed = False
        for name, payload in names.items():
            _, kind, first, last = name.split("/")
            if kind == "challenges" and last == f"{self.guardian_id}.json":
                receiver = first
                if f"ceremony/answers/{self.guardian_id}/{receiver}.json" in names:
                    continue
                if receiver not in self.answer:
                    notice = (
                        f"{receiver} disputes your backup to it. Answering publishes that share: "
                        f"confirm with {receiver} that it raised the dispute, then run join again "
                        f"with --answer {receiver}"
                    )
                    if notice not in self.notices:
                        self.notices.append(notice)
                        self.tell(notice)
                    continue
                body = json.loads(guardian.answer_challenge(records[receiver]))
                self._post(
                    f"{self.base}/guardians/{self.guardian_id}/answers",
                    {"receiver_id": receiver, "answer": body},
                )
            if (
                kind == "answers"
                and last == f"{self.guardian_id}.json"
                and first not in guardian.backups_held
            ):
                guardian.accept_challenge_response(records[first], payload)
                changed = True
        if changed:
            _seal(self.identity, self.path, guardian)

    def _await_open(self, guardian: votum.EgGuardian, records: dict[str, str]) -> str:
        def ready() -> bool:
            phase = self._status()["phase"]
            if phase == "ceremony":
                self._settle(guardian, records)
                return False
            return True

        self.waiter.until("the official to open the election", ready)
        context = votum.EgContext.from_json(
            self.client.get(f"{self.base}/board/by-name/context.json")["payload"]
        )
        context.check(records_in_order(records.values()))
        return key_fingerprint(votum.eg_to_hex(context.elgamal_public_key.to_int()))

    # -- decryption --------------------------------------------------------------------------------------

    def decrypt(self, missing: list[str] | None = None) -> Decrypted:
        """After close: reads and checks the board, checks the encrypted tally against the cast ballots,
        and posts this guardian's shares of the tally and of every spoiled ballot, with compensations
        for each guardian in `missing`. Targets already decrypted by this guardian are skipped."""
        missing = missing or []
        status = self._status()
        if status["phase"] != "closed":
            raise Conflict(
                f"election {self.election_id!r} is {status['phase']}; shares are taken once it is closed"
            )
        board = BoardRead(self.progress)
        head = check_board(self.client, self.election_id, progress=self.progress, visit=board.take)
        records = board.records
        if self.guardian_id not in records:
            raise VerificationFailed(f"the board has no record of guardian {self.guardian_id!r}")
        unknown = [g for g in missing if g not in records or g == self.guardian_id]
        if unknown:
            raise InvalidInput(f"not another guardian of this election: {', '.join(unknown)}")
        guardian = _unseal(self.identity, self.path, records_in_order(records.values()))
        if guardian.public_record() != records[self.guardian_id]:
            raise VerificationFailed("the board's record of this guardian is not the sealed guardian's")
        targets = board.targets()
        q_ext = board.context.extended_base_hash
        # (target, missing guardian or None) this guardian has not posted yet
        todo = [
            (t, m)
            for t in targets
            for m in [None, *missing]
            if share_name(self.guardian_id, t.object_id, m) not in board.share_names
        ]
        for begin in range(0, len(todo), SHARES_PER_REQUEST):
            messages = [
                json.loads(
                    (
                        guardian.decryption_shares(t, q_ext)
                        if m is None
                        else guardian.compensated_shares(records[m], t, q_ext)
                    ).to_json()
                )
                for t, m in todo[begin : begin + SHARES_PER_REQUEST]
            ]
            self._post(f"{self.base}/guardians/{self.guardian_id}/shares", {"shares": messages})
            self.progress("shares posted", min(begin + SHARES_PER_REQUEST, len(todo)), len(todo))
        return Decrypted(head, board.cast, len(targets) - 1, len(todo))


@dataclass
class Decrypted:
    #: the board head this guardian read and re-linked
    head: dict[str, Any]
    cast: int
    spoiled: int
    #: share messages this run posted (an own share or a compensation per target; 0: all were posted)
    posted: int


class BoardRead:
    """What a guardian keeps of the board while it re-links it: the records, the context, the manifest,
    the cast ballots (checked and aggregated as they come) and the spoiled ones (kept as decryption
    targets), the encrypted tally, and which targets it has decrypted already."""

    def __init__(self, progress: Progress = quiet) -> None:
        self.progress = progress
        self.records: dict[str, str] = {}
        self.manifest: votum.EgManifest | None = None
        self.manifest_doc: dict[str, Any] = {}
        self._context: votum.EgContext | None = None
        self.verifier: votum.EgBallotVerifier | None = None
        self.tally: votum.EgTally | None = None
        self.cast = 0
        self.spoiled: list[votum.EgDecryptionTarget] = []
        self.encrypted_tally: str | None = None
        self.share_names: set[str] = set()
        #: every selection ciphertext seen, and the entry it came in: a repeat is a copied ballot
        self.ciphertexts: dict[tuple[str, str], str] = {}

    @property
    def context(self) -> votum.EgContext:
        if self._context is None:
            raise VerificationFailed("the board has no context: the election was never opened")
        return self._context

    def take(self, e: dict[str, Any]) -> None:
        kind, payload = e["kind"], e["payload"]
        if kind == "guardian":
            self.records[json.loads(payload)["guardian_id"]] = payload
        elif kind == "manifest":
            self.manifest_doc = json.loads(payload)
            self.manifest = votum.EgManifest.from_json(payload)
        elif kind == "context":
            context = votum.EgContext.from_json(payload)
            context.check(records_in_order(self.records.values()))
            assert self.manifest is not None
            if context.manifest_hash.to_int() != self.manifest.crypto_hash().to_int():
                raise VerificationFailed("the context is not of the manifest on the board")
            self._context = context
            self.verifier = votum.EgBallotVerifier(
                self.manifest, context.elgamal_public_key, context.extended_base_hash
            )
            self.tally = votum.EgTally(self.manifest)
        elif kind == "submitted_ballot":
            self._ballot(e["name"], payload)
        elif kind == "encrypted_tally":
            self.encrypted_tally = payload
        elif kind == "shares":
            self.share_names.add(e["name"])

    def _ballot(self, name: str, payload: str) -> None:
        if self.verifier is None or self.tally is None:
            raise VerificationFailed(f"{name} comes before the election was opened")
        state = {1: "cast", 2: "spoiled"}.get(json.loads(payload).get("state"))
        if state is None:
            raise VerificationFailed(f"{name} is neither cast nor spoiled")
        [checked] = self.verifier.verify_many([(payload, state)])
        if isinstance(checked, Exception):
            raise VerificationFailed(f"{name} does not verify: {checked}")
        # a ballot copied under another name (say, a cast one marked spoiled, to have it decrypted) repeats
        # ciphertexts: an honest device never does (spec/80.5)
        for c in checked.ciphertexts_hex:
            first = self.ciphertexts.setdefault(c, name)
            if first != name:
                raise VerificationFailed(f"{name} repeats the ciphertexts of {first}: a copied ballot")
        if state == "cast":
            self.tally.add_verified([checked])
            self.cast += 1
        else:
            self.spoiled.append(votum.EgDecryptionTarget.from_ballot_json(payload))

    def targets(self) -> list[votum.EgDecryptionTarget]:
        """The tally (checked against this guardian's own aggregate of the cast ballots) and the spoiled
        ballots."""
        if self.encrypted_tally is None:
            raise VerificationFailed("the board has no encrypted tally: the election is not closed")
        assert self.manifest is not None and self.tally is not None
        ours = encrypted_tally_json(self.manifest_doc, self.manifest, self.tally.ciphertexts())
        if json.loads(self.encrypted_tally) != ours:
            raise VerificationFailed(
                "the encrypted tally on the board is not the product of the cast ballots on the board"
            )
        tally = votum.EgDecryptionTarget.from_tally_json(json.dumps(ours), self.manifest)
        return [tally, *self.spoiled]
