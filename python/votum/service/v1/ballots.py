"""`/v1/elections/{id}/devices` and `/ballots`: encryption devices and ballot submission (spec/80.5)."""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from fastapi import APIRouter, Depends, Query, Request
from pydantic import BaseModel, Field

import votum
from votum.errors import DuplicateBallot, InvalidInput, NotFound, WrongPhase
from votum.service.auth import require
from votum.service.codec import NegotiatedRoute
from votum.service.v1.ceremony import Posted, append_once
from votum.service.v1.common import MAX_SEQ, Receipt, entry_out, objects_of, payload_of, store_of
from votum.store import add_ballots, add_codes, chain_from, check_id, existing_ballots

router = APIRouter(prefix="/v1/elections/{election_id}", tags=["ballots"], route_class=NegotiatedRoute)
device_role = Depends(require("device", "admin"))

#: the encrypted tally's object id; no ballot may take it (spoiled ballots and the tally share one
#: namespace of decryption targets)
TALLY_ID = "election-results"


class Device(BaseModel):
    device_id: int = Field(ge=0, lt=2**63)
    session_id: int = Field(ge=0, lt=2**63)
    launch_code: int = Field(ge=0, lt=2**63)
    location: str = Field(min_length=1, max_length=256)


class DeviceOut(Posted):
    #: the device's hash: its first ballot's code_seed (hex)
    code_seed: str


@router.post("/devices", response_model=DeviceOut, status_code=201, dependencies=[device_role])
def register_device(request: Request, election_id: str, body: Device) -> dict[str, Any]:
    """An encryption device: its hash starts a chain of ballot codes."""
    store = store_of(request)
    doc = body.model_dump()
    code = votum.eg_to_hex(
        votum.eg_hash_elems(body.device_id, body.session_id, body.launch_code, body.location).to_int()
    )
    with store.write(election_id) as tx:
        tx.require_phase("open")
        name = f"encryption_devices/device_{body.device_id}.json"
        fresh = name not in tx.named([name])
        entry = append_once(tx, "device", name, payload_of(doc), f"device {body.device_id}")
        if fresh:
            add_codes(tx, [code])
    return {"entries": [entry_out(entry)], "code_seed": code}


class Submission(BaseModel):
    #: the device's ElectionGuard 1.4 CiphertextBallot (with or without nonces)
    ballot: dict[str, Any]
    state: Literal["cast", "spoiled"] = "cast"


class Batch(BaseModel):
    ballots: list[Submission] = Field(min_length=1, max_length=5000)


class Receipts(BaseModel):
    receipts: list[Receipt]


def submit(request: Request, election_id: str, items: list[Submission]) -> list[dict[str, Any]]:
    """Checks every ballot (outside the lock), then stores the batch in one transaction: all or nothing."""
    store = store_of(request)
    row = store.election(election_id)
    if row.phase != "open":
        raise WrongPhase(f"election {election_id!r} is in phase {row.phase!r}; ballots need open")
    objects = objects_of(request, election_id)
    texts: list[tuple[str, str]] = []
    seen: dict[str, str] = {}
    for item in items:
        ballot_id = item.ballot.get("object_id")
        check_id(ballot_id, "ballot id")  # type: ignore[arg-type]
        if ballot_id == TALLY_ID:
            raise InvalidInput(f"ballot id {TALLY_ID!r} is the tally's")
        text = json.dumps(item.ballot, separators=(",", ":"))
        if seen.get(ballot_id, text) != text:  # type: ignore[arg-type]
            raise DuplicateBallot(f"ballot {ballot_id!r} appears twice in this batch with different content")
        if ballot_id in seen:
            continue
        seen[ballot_id] = text  # type: ignore[index]
        texts.append((text, item.state))
    checked = []
    for outcome in objects.verifier().verify_many(texts):
        if isinstance(outcome, Exception):
            raise outcome
        ballot_id, _code, canonical = outcome
        doc = json.loads(canonical)
        payload = canonical.encode()
        checked.append((ballot_id, doc["state"], doc["code"], doc["code_seed"], payload, canonical))
    receipts: dict[str, dict[str, Any]] = {}
    with store.write(election_id) as tx:
        tx.require_phase("open")
        ids = [c[0] for c in checked]
        have = existing_ballots(tx, ids)
        fresh = []
        for ballot_id, state_code, code, seed, payload, canonical in checked:
            old = have.get(ballot_id)
            if old is not None:
                if old.digest != hashlib.sha256(payload).digest():
                    raise DuplicateBallot(f"ballot {ballot_id!r} is already recorded with different content")
                continue
            fresh.append((ballot_id, _state_name(state_code), code, seed, payload, canonical))
        if have:
            names = {f"submitted_ballots/submitted_ballot_{b}.json": b for b in have}
            for name, e in tx.named(list(names)).items():
                b = have[names[name]]
                receipts[b.ballot_id] = {
                    "ballot_id": b.ballot_id,
                    "state": b.state,
                    "code": b.code,
                    "seq": e.seq,
                    "hash": e.hash.hex(),
                }
        if fresh:
            add_codes(tx, [f[2] for f in fresh])
            chain_from(tx, [(f[3], f[0]) for f in fresh])
            rows = []
            for ballot_id, state, code, _seed, payload, _c in fresh:
                e = tx.append(
                    "submitted_ballot", f"submitted_ballots/submitted_ballot_{ballot_id}.json", payload
                )
                rows.append(
                    {"ballot_id": ballot_id, "state": state, "code": code, "seq": e.seq, "digest": e.digest}
                )
                receipts[ballot_id] = {
                    "ballot_id": ballot_id,
                    "state": state,
                    "code": code,
                    "seq": e.seq,
                    "hash": e.hash.hex(),
                }
            add_ballots(tx, rows)
            cast = [c for _b, state, _code, _s, _p, c in fresh if state == "cast"]
            assert tx.election.tally is not None
            if cast:
                tally = votum.EgTally.from_bytes(objects.manifest, tx.election.tally)
                tally.add_verified(cast)
                tx.set(tally=tally.to_bytes())
            tx.set(
                cast_count=tx.election.cast_count + len(cast),
                spoiled_count=tx.election.spoiled_count + len(fresh) - len(cast),
            )
    return [receipts[c[0]] for c in checked]


def _state_name(code: Any) -> str:
    # electionguard 1.4 writes BallotBoxState as 1 (cast) or 2 (spoiled)
    return {1: "cast", 2: "spoiled", "CAST": "cast", "SPOILED": "spoiled"}[code]


@router.post("/ballots", response_model=Receipt, status_code=201, dependencies=[device_role])
def submit_ballot(request: Request, election_id: str, body: Submission) -> dict[str, Any]:
    """One ballot, cast or spoiled: every proof checked once, stored durably, receipt returned.
    Resubmitting the same ballot returns the same receipt; a different ballot under a taken id is 409."""
    return submit(request, election_id, [body])[0]


@router.post("/ballots/batch", response_model=Receipts, status_code=201, dependencies=[device_role])
def submit_batch(request: Request, election_id: str, body: Batch) -> dict[str, Any]:
    """Up to 5,000 ballots in one transaction: if any is refused, none is stored."""
    return {"receipts": submit(request, election_id, body.ballots)}


@router.get("/ballots/{ballot_id}", response_model=Receipt)
def ballot_receipt(request: Request, election_id: str, ballot_id: str) -> dict[str, Any]:
    store = store_of(request)
    b = store.ballot(election_id, ballot_id)
    if b is None:
        store.election(election_id)
        raise NotFound(f"no ballot {ballot_id!r} in election {election_id!r}")
    e = store.entry(election_id, b.seq)
    return {"ballot_id": b.ballot_id, "state": b.state, "code": b.code, "seq": b.seq, "hash": e.hash.hex()}


class BallotList(BaseModel):
    #: (ballot id, state, code, board seq) of each ballot after `after`, in board order
    ballots: list[dict[str, Any]]


@router.get("/ballots", response_model=BallotList)
def list_ballots(
    request: Request,
    election_id: str,
    state: Literal["cast", "spoiled"] | None = None,
    after: int = Query(default=-1, ge=-1, le=MAX_SEQ),
    limit: int = Query(default=1000, ge=1, le=1000),
) -> dict[str, Any]:
    store = store_of(request)
    store.election(election_id)
    rows = store.ballots(election_id, state, after, limit)
    return {
        "ballots": [{"ballot_id": b.ballot_id, "state": b.state, "code": b.code, "seq": b.seq} for b in rows]
    }
