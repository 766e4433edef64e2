"""`/v1/elections/{id}/board`: the bulletin board, public (spec/80.7)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Path, Query, Request
from pydantic import BaseModel

from votum.asgi import MAX_SEQ, store_of
from votum.service.codec import NegotiatedRoute
from votum.service.state import service_state
from votum.service.v1.common import EntryOut, Head, entry_out

router = APIRouter(
    prefix="/v1/elections/{election_id}/board", tags=["bulletin board"], route_class=NegotiatedRoute
)


class BoardPage(BaseModel):
    election_id: str
    #: the head when the page was read: entries up to it are final
    head: Head
    entries: list[EntryOut]


@router.get("", response_model=BoardPage)
def board_page(
    request: Request,
    election_id: str,
    after: int = Query(default=-1, ge=-1, le=MAX_SEQ),
    limit: int = Query(default=100, ge=1, le=1000),
    payloads: bool = True,
) -> dict[str, Any]:
    """Entries with `seq > after`, in order: at most `limit`, and with payloads, fewer when their
    payloads reach the server's page size (`board_page_bytes`, 2 MiB by default). Read on from the
    last entry's `seq`. Check a copy with `votum.client.check_board`."""
    store = store_of(request)
    row = store.election(election_id)
    budget = service_state(request).settings.board_page_bytes
    entries = store.entries(election_id, after, limit, with_payload=payloads, max_bytes=budget)
    return {
        "election_id": election_id,
        "head": {"seq": row.head_seq, "hash": row.head_hash.hex()},
        "entries": [entry_out(e) for e in entries if e.seq <= row.head_seq],
    }


@router.get("/head", response_model=Head)
def board_head(request: Request, election_id: str) -> dict[str, Any]:
    row = store_of(request).election(election_id)
    return {"seq": row.head_seq, "hash": row.head_hash.hex()}


@router.get("/by-name/{name:path}", response_model=EntryOut)
def entry_by_name(request: Request, election_id: str, name: str) -> dict[str, Any]:
    """The entry under `name` (for the record's documents, their path in electionguard's layout)."""
    entry = store_of(request).require_named(election_id, name, f"no board entry named {name!r}")
    return entry_out(entry)


@router.get("/{seq}", response_model=EntryOut)
def entry_by_seq(request: Request, election_id: str, seq: int = Path(ge=0, le=MAX_SEQ)) -> dict[str, Any]:
    return entry_out(store_of(request).entry(election_id, seq))
