"""`/v1/elections/{id}/guardians`: the key ceremony, one guardian at a time (spec/80.4).

Each guardian posts only public material: its record (commitments with Schnorr proofs) and its
partial-key backups, each sealed to its receiver. A receiver checks the backups addressed to it on its
own machine and reports the outcome; a disputed backup is answered in public by its sender and the
answer is checked here against the sender's commitments. No secret reaches the service.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, Field

import votum
from votum.asgi import store_of
from votum.errors import Conflict, InvalidInput
from votum.service.auth import guardian_of, require
from votum.service.codec import NegotiatedRoute
from votum.service.problems import ApiError
from votum.service.v1.common import EntryOut, entry_out, payload_of, text_of
from votum.service.v1.state import one_point_zero
from votum.store import Entry, Store, Tx, check_id, claim_guardian_key, payload_digest

router = APIRouter(
    prefix="/v1/elections/{election_id}/guardians",
    tags=["key ceremony"],
    route_class=NegotiatedRoute,
    dependencies=[one_point_zero],
)


def _as(guardian_id: str, role: str) -> None:
    if guardian_of(role) != guardian_id:
        raise ApiError(403, "forbidden", f"only guardian {guardian_id!r}'s token may post as {guardian_id!r}")


guardian_role = Depends(require("guardian:*"))


def record_of(store: Store, election_id: str, guardian_id: str) -> str:
    return store.require_named(
        election_id,
        f"guardians/guardian_{guardian_id}.json",
        f"guardian {guardian_id!r} has not posted a record in election {election_id!r}",
    ).text()


def append_once(tx: Tx, kind: str, name: str, payload: bytes, what: str) -> Entry:
    """Appends, or answers with the entry already there when its payload is the same (a retried
    request); a different payload under the same name fails `Conflict`."""
    digest = payload_digest(payload)
    found = tx.named([name]).get(name)
    if found is not None:
        if found.digest != digest:
            raise Conflict(f"{what} is already posted with different content")
        return found
    return tx.append(kind, name, payload, digest)


def _commitments(record: dict[str, Any]) -> set[int]:
    """A guardian record's coefficient commitments as numbers (hex spellings may differ in case)."""
    return {int(c, 16) for c in record.get("election_commitments", [])}


class PostRecord(BaseModel):
    #: the guardian's public record (electionguard's GuardianRecord)
    record: dict[str, Any]


class Posted(BaseModel):
    entries: list[EntryOut]


class GuardianRecords(BaseModel):
    #: guardian id -> its public record (JSON text exactly as on the board)
    records: dict[str, str]


@router.get("", response_model=GuardianRecords)
def guardian_records(request: Request, election_id: str) -> dict[str, Any]:
    store = store_of(request)
    store.election(election_id)
    out = {}
    for e in store.iter_entries(election_id, ["guardian"]):
        out[json.loads(e.text())["guardian_id"]] = e.text()
    return {"records": out}


@router.post("/{guardian_id}", response_model=Posted, status_code=201)
def post_record(
    request: Request, election_id: str, guardian_id: str, body: PostRecord, role: str = guardian_role
) -> dict[str, Any]:
    """A guardian's public record: its coefficient commitments and their Schnorr proofs, checked here."""
    _as(guardian_id, role)
    check_id(guardian_id, "guardian id")
    store = store_of(request)
    row = store.election(election_id)
    text = text_of(body.record)
    if body.record.get("guardian_id") != guardian_id:
        raise InvalidInput(
            f"the record is guardian {body.record.get('guardian_id')!r}'s, not {guardian_id!r}'s"
        )
    order = body.record.get("sequence_order")
    if not isinstance(order, int) or not 1 <= order <= row.number_of_guardians:
        raise InvalidInput(f"sequence_order must be in 1..{row.number_of_guardians}")
    votum.eg_verify_guardian_record(text, row.quorum)
    with store.write(election_id) as tx:
        tx.require_phase("ceremony")
        name = f"guardians/guardian_{guardian_id}.json"
        if name not in tx.named([name]):
            mine = _commitments(body.record)
            for e in tx.of_kind("guardian"):
                other = json.loads(e.text())
                if other["sequence_order"] == order:
                    raise Conflict(f"sequence order {order} is already guardian {e.name}'s")
                # the Schnorr proofs do not name the guardian, so a copy of another guardian's
                # record would verify; a repeated commitment is refused (honest guardians' secret
                # coefficients collide with probability about n²/q)
                if mine & _commitments(other):
                    raise Conflict(
                        f"guardian {guardian_id!r}'s commitments repeat guardian {other['guardian_id']!r}'s"
                    )
            claim_guardian_key(tx, body.record, guardian_id)
        entry = append_once(tx, "guardian", name, text.encode(), f"guardian {guardian_id!r}'s record")
    return {"entries": [entry_out(entry)]}


class PostBackups(BaseModel):
    #: receiver id -> the backup sealed to that receiver (`EgGuardian.backup_for`)
    backups: dict[str, dict[str, Any]] = Field(min_length=1, max_length=64)


@router.post("/{guardian_id}/backups", response_model=Posted, status_code=201)
def post_backups(
    request: Request, election_id: str, guardian_id: str, body: PostBackups, role: str = guardian_role
) -> dict[str, Any]:
    """Backups of this guardian's secret polynomial, each sealed to its receiver's key (public: only the
    receiver can open one). Both records must be posted."""
    _as(guardian_id, role)
    store = store_of(request)
    record_of(store, election_id, guardian_id)
    texts = []
    for receiver, backup in body.backups.items():
        receiver_record = json.loads(record_of(store, election_id, receiver))
        if receiver == guardian_id:
            raise InvalidInput("a guardian does not back up to itself")
        if backup.get("owner_id") != guardian_id or backup.get("designated_id") != receiver:
            raise InvalidInput(
                f"the backup for {receiver!r} names owner {backup.get('owner_id')!r} "
                f"and receiver {backup.get('designated_id')!r}"
            )
        if backup.get("designated_sequence_order") != receiver_record["sequence_order"]:
            raise InvalidInput(f"the backup for {receiver!r} has the wrong designated_sequence_order")
        texts.append((receiver, text_of(backup)))
    with store.write(election_id) as tx:
        tx.require_phase("ceremony")
        entries = [
            append_once(
                tx,
                "backup",
                f"ceremony/backups/{guardian_id}/{receiver}.json",
                text.encode(),
                f"the backup {guardian_id}→{receiver}",
            )
            for receiver, text in texts
        ]
    return {"entries": [entry_out(e) for e in entries]}


class Backups(BaseModel):
    #: sender id -> the backup it sealed to this guardian (JSON text)
    backups: dict[str, str]


@router.get("/{guardian_id}/backups", response_model=Backups)
def backups_for(request: Request, election_id: str, guardian_id: str) -> dict[str, Any]:
    """The backups sealed to `guardian_id` so far."""
    store = store_of(request)
    store.election(election_id)
    out = {}
    for e in store.iter_entries(election_id, ["backup"], prefix="ceremony/backups/"):
        sender, receiver = e.name[len("ceremony/backups/") : -len(".json")].split("/")
        if receiver == guardian_id:
            out[sender] = e.text()
    return {"backups": out}


class Verification(BaseModel):
    sender_id: str
    #: true: the backup opened and matched the sender's commitments; false: it is disputed, and the
    #: sender must answer in public
    verified: bool


@router.post("/{guardian_id}/verifications", response_model=Posted, status_code=201)
def post_verification(
    request: Request, election_id: str, guardian_id: str, body: Verification, role: str = guardian_role
) -> dict[str, Any]:
    """The receiver's report on one backup addressed to it."""
    _as(guardian_id, role)
    store = store_of(request)
    sender = body.sender_id
    store.require_named(
        election_id,
        f"ceremony/backups/{sender}/{guardian_id}.json",
        f"no backup from {sender!r} to {guardian_id!r}",
    )
    payload = payload_of({"receiver_id": guardian_id, "sender_id": sender})
    with store.write(election_id) as tx:
        tx.require_phase("ceremony")
        verified = f"ceremony/verified/{guardian_id}/{sender}.json"
        challenged = f"ceremony/challenges/{guardian_id}/{sender}.json"
        if body.verified:
            if challenged in tx.named([challenged]):
                raise Conflict(f"the backup from {sender!r} is already disputed")
            entry = append_once(tx, "backup_verified", verified, payload, "this verification")
        else:
            if verified in tx.named([verified]):
                raise Conflict(f"the backup from {sender!r} is already reported checked")
            entry = append_once(tx, "challenge", challenged, payload, "this challenge")
    return {"entries": [entry_out(entry)]}


class Answer(BaseModel):
    receiver_id: str
    #: the disputed share in the clear (`EgGuardian.answer_challenge`)
    answer: dict[str, Any]


@router.post("/{guardian_id}/answers", response_model=Posted, status_code=201)
def post_answer(
    request: Request, election_id: str, guardian_id: str, body: Answer, role: str = guardian_role
) -> dict[str, Any]:
    """The sender's public answer to a dispute, checked against its commitments; a wrong answer is
    refused (and the ceremony cannot open until the dispute is settled)."""
    _as(guardian_id, role)
    store = store_of(request)
    receiver = body.receiver_id
    store.require_named(
        election_id,
        f"ceremony/challenges/{receiver}/{guardian_id}.json",
        f"{receiver!r} has not disputed {guardian_id!r}'s backup",
    )
    text = text_of(body.answer)
    if body.answer.get("owner_id") != guardian_id or body.answer.get("designated_id") != receiver:
        raise InvalidInput("the answer names another sender or receiver")
    votum.eg_verify_challenge_answer(record_of(store, election_id, guardian_id), text)
    with store.write(election_id) as tx:
        tx.require_phase("ceremony")
        entry = append_once(
            tx,
            "challenge_answer",
            f"ceremony/answers/{guardian_id}/{receiver}.json",
            text.encode(),
            "this answer",
        )
    return {"entries": [entry_out(entry)]}
