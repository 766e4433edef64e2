"""`/v1/elections/{id}/guardians/{gid}/shares`: decryption shares, checked as they arrive (spec/80.4)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, Field

import votum
from votum.asgi import store_of
from votum.eg import share_name
from votum.errors import InvalidInput, NotFound, WrongPhase
from votum.service.auth import require
from votum.service.codec import NegotiatedRoute
from votum.service.v1.ceremony import Posted, _as, append_once
from votum.service.v1.common import entry_out, text_of
from votum.service.v1.state import objects_of, one_point_zero

router = APIRouter(
    prefix="/v1/elections/{election_id}/guardians/{guardian_id}",
    tags=["decryption"],
    route_class=NegotiatedRoute,
    dependencies=[one_point_zero],
)


class PostShares(BaseModel):
    #: votum share messages (spec/64.7): this guardian's own shares of the tally or a spoiled ballot,
    #: or its compensated shares for a missing guardian
    shares: list[dict[str, Any]] = Field(min_length=1, max_length=10_000)


@router.post("/shares", response_model=Posted, status_code=201)
def post_shares(
    request: Request,
    election_id: str,
    guardian_id: str,
    body: PostShares,
    role: str = Depends(require("guardian:*")),
) -> dict[str, Any]:
    """Every proof is checked here, against the guardian's key (or, for compensated shares, the missing
    guardian's recovery key for this guardian); the batch is stored all or nothing."""
    _as(guardian_id, role)
    store = store_of(request)
    row = store.election(election_id)
    if row.phase != "closed":
        raise WrongPhase(f"election {election_id!r} is in phase {row.phase!r}; shares need closed")
    objects = objects_of(request, election_id)
    decryptor = objects.decryptor(max(row.cast_count, 1))
    tally = objects.tally_target()
    # a spoiled ballot's own shares and compensations share one parsed target
    targets = {tally.object_id: tally}
    checked = []
    for message in body.shares:
        text = text_of(message)
        shares = votum.EgShares.from_json(text)
        if shares.guardian_id != guardian_id:
            raise InvalidInput(f"shares of guardian {shares.guardian_id!r} posted by {guardian_id!r}")
        target_id = shares.object_id
        if target_id not in targets:
            b = store.ballot(election_id, target_id)
            if b is None or b.state != "spoiled":
                raise NotFound(f"{target_id!r} is neither the tally nor a spoiled ballot")
            targets[target_id] = votum.EgDecryptionTarget.from_ballot_json(
                store.entry(election_id, b.seq).text()
            )
        target = targets[target_id]
        decryptor.check_shares(target, shares)
        missing = shares.missing_guardian_id
        name = share_name(guardian_id, target_id, missing)
        checked.append((name, text))
    with store.write(election_id) as tx:
        tx.require_phase("closed")
        entries = [
            append_once(tx, "shares", name, text.encode(), f"the shares {name}") for name, text in checked
        ]
    return {"entries": [entry_out(e) for e in entries]}
