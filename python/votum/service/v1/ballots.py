"""`/v1/elections/{id}/devices` and `/ballots`: encryption devices and ballot submission (spec/80.5)."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Depends, Query, Request
from pydantic import BaseModel, Field

import votum
from votum.asgi import MAX_SEQ, store_of
from votum.errors import Conflict, NotFound
from votum.service.auth import bearer_role, device_name_of, require, token_owner
from votum.service.codec import NegotiatedRoute
from votum.service.problems import ApiError
from votum.service.v1.ceremony import Posted, append_once
from votum.service.v1.common import Receipt, entry_out, payload_of, receipt
from votum.service.v1.state import one_point_zero, v1_state
from votum.store import add_codes, code_links

router = APIRouter(
    prefix="/v1/elections/{election_id}",
    tags=["ballots"],
    route_class=NegotiatedRoute,
    dependencies=[one_point_zero],
)
device_role = Depends(require("device", "admin"))


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
    """An encryption device: its hash starts a chain of ballot codes. A named device token's devices are
    its own: their location starts with `<name>-` and they are posted as `device_<name>-<device_id>.json`,
    so another token cannot take its device ids or its devices' hashes."""
    scope = device_name_of(bearer_role(request))
    check_names(request, scope, [body.location], "device location")
    store = store_of(request)
    doc = body.model_dump()
    code = votum.eg_to_hex(
        votum.eg_hash_elems(body.device_id, body.session_id, body.launch_code, body.location).to_int()
    )
    owner = token_owner(request)
    with store.write(election_id) as tx:
        tx.require_phase("open")
        device = f"{scope}-{body.device_id}" if scope is not None else str(body.device_id)
        name = f"encryption_devices/device_{device}.json"
        entry = append_once(tx, "device", name, payload_of(doc), f"device {body.device_id}")
        if tx.appended:  # a new device (a repeated registration appends nothing)
            add_codes(tx, [code], owner)
        else:
            link = code_links(tx, [code]).get(code)
            if link is not None and not link.extendable_by(owner):
                raise Conflict(f"device {body.device_id} is registered with another device token")
    return {"entries": [entry_out(entry)], "code_seed": code}


class Submission(BaseModel):
    #: the device's ElectionGuard 1.4 CiphertextBallot (with or without nonces)
    ballot: dict[str, Any]
    state: Literal["cast", "spoiled"] = "cast"


class Batch(BaseModel):
    ballots: list[Submission] = Field(min_length=1, max_length=5000)


class Receipts(BaseModel):
    receipts: list[Receipt]


def check_names(request: Request, scope: str | None, names: list[Any], what: str) -> None:
    """What a named device token names belongs to it (issue 43, item 15): a `device:<name>` token's
    ballot ids and device locations start with `<name>-`, and no other token may use one that starts
    with a configured name and `-`, so no token can take another's ids (or its device's hash) first.
    `scope` is the caller's device name (None for a plain device token or the administrator). Checked
    before anything is stored; values that are not strings are left to their own checks."""
    configured = v1_state(request).device_names
    if not configured:
        return
    for value in names:
        if not isinstance(value, str):
            continue
        owner, dash, _ = value.partition("-")
        if scope is not None and not (dash and owner == scope):
            raise ApiError(403, "forbidden", f"{what}s of this device token start with {scope + '-'!r}")
        if scope is None and dash and owner in configured:
            raise ApiError(403, "forbidden", f"{what} {value!r} belongs to another device token")


def submit(request: Request, election_id: str, items: list[Submission]) -> list[dict[str, Any]]:
    """Through the election's intake (`intake.py`): checked in a batch with whatever else is waiting,
    stored in one transaction with it, answered on its own; all or nothing for this request."""
    scope = device_name_of(bearer_role(request)) if v1_state(request).device_names else None
    check_names(request, scope, [item.ballot.get("object_id") for item in items], "ballot id")
    intake = v1_state(request).intake
    return intake.submit(election_id, [(item.ballot, item.state) for item in items], token_owner(request))


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
    return receipt(b.ballot_id, b.state, b.code, store.entry(election_id, b.seq))


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
