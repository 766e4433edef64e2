"""`/v1/elections/{id}/eg21/rounds`: an ElectionGuard 2.1 election's decryption on the board (spec/80.11).

The official names U, the guardians that decrypt, in a round; each guardian of U posts its announcement,
then (once every announcement of U is in) its reveal, then (once every reveal is in) its answer, each signed
by its node. A guardian computes what it decrypts from its own copy of the board and checks every other
guardian's messages itself; the service only keeps the order and checks the signatures. Publishing combines
the last round's answers (each checked, a wrong one named) into the tally and the challenged ballots'
openings. A round whose guardian is gone is replaced by a new round with another U: a guardian announces
again only for the same values (spec/66.12).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, Field

import votum
from votum.asgi import store_of
from votum.eg21_signing import round_statement, signature_holds
from votum.errors import Conflict, InvalidInput, WrongPhase
from votum.service.auth import guardian_of, require
from votum.service.codec import NegotiatedRoute
from votum.service.v1.ceremony import append_once
from votum.service.v1.common import EntryOut, election_doc, entry_out, payload_of
from votum.service.v1.eg21 import _own_index
from votum.service.v1.state import eg21_of, v1_state
from votum.store import Store
from votum.store.export import export_record_21

router = APIRouter(
    prefix="/v1/elections/{election_id}/eg21/rounds", tags=["ElectionGuard 2.1"], route_class=NegotiatedRoute
)
admin = Depends(require("admin"))
guardian_role = Depends(require("guardian:*"))

STEPS = ("announce", "reveal", "answer")


def round_name(r: int) -> str:
    return f"eg21/rounds/{r}.json"


def message_name(r: int, step: str, i: int) -> str:
    return f"eg21/rounds/{r}/{step}/{i}.json"


def latest_round(store: Store, election_id: str) -> dict[str, Any] | None:
    """The last round named on the board, with its messages so far: `{"round", "available", "announce":
    {i: payload}, "reveal": …, "answer": …}`."""
    found: dict[str, Any] | None = None
    for e in store.iter_entries(election_id, ["eg21_round", *(f"eg21_{s}" for s in STEPS)]):
        if e.kind == "eg21_round":
            doc = json.loads(e.text())
            found = {"round": doc["round"], "available": doc["available"], **{s: {} for s in STEPS}}
        elif found is not None:
            _, _, r, step, last = e.name.split("/")
            if int(r) == found["round"]:
                found[step][int(last.removesuffix(".json"))] = e.text()
    return found


class StartRound(BaseModel):
    #: U: the guardians that decrypt, at least the quorum, each once
    available: list[int] = Field(min_length=1, max_length=64)


class RoundOut(BaseModel):
    round: int
    available: list[int]
    #: step -> guardian index -> the message's payload (JSON text as on the board)
    announce: dict[int, str]
    reveal: dict[int, str]
    answer: dict[int, str]


def round_check(request: Request, store: Store, election_id: str, available: list[int]) -> votum.Eg21Round:
    """The checks of a round with guardians `available`, made once from the record written from the closed
    board (`votum.Eg21Round`): an announcement or reveal that would make the other guardians of U stop is
    refused as it is posted, naming its guardian, instead of stalling the round."""
    row = store.election(election_id)
    if row.phase != "closed":
        raise WrongPhase(f"election {election_id!r} is in phase {row.phase!r}; decryption rounds need closed")

    def make() -> votum.Eg21Round:
        group = election_doc(store, election_id)["group"]
        with tempfile.TemporaryDirectory(prefix="votum-eg21-round-") as tmp:
            record = Path(tmp) / "record"
            export_record_21(store, election_id, record)
            return votum.Eg21Round(group, record, available)

    return v1_state(request).objects.eg21_round(election_id, tuple(available), make)


def _round_of(request: Request, store: Store, election_id: str, r: int, i: int) -> votum.Eg21Round:
    """Round r's checks, for a message of guardian i (one of its U)."""
    entry = store.entry_named(election_id, round_name(r))
    if entry is None:
        raise Conflict(f"round {r} is not the election's current decryption round")
    available = json.loads(entry.text())["available"]
    if i not in available:
        raise Conflict(f"guardian {i} is not among the round's guardians {available}")
    return round_check(request, store, election_id, available)


@router.post("", response_model=RoundOut, status_code=201, dependencies=[admin])
def start_round(request: Request, election_id: str, body: StartRound) -> dict[str, Any]:
    """A decryption round with U = `available` (a new round replaces the one before: one of its guardians
    gone)."""
    store = store_of(request)
    eg21_of(request, election_id)
    row = store.election(election_id)
    u = sorted(body.available)
    if len(set(u)) != len(u) or len(u) < row.quorum or u[0] < 1 or u[-1] > row.number_of_guardians:
        raise InvalidInput(
            f"U {body.available}: at least {row.quorum} of guardians 1…{row.number_of_guardians}, each once"
        )
    round_check(request, store, election_id, u)  # the record read once now, before any message
    with store.write(election_id) as tx:
        tx.require_phase("closed")
        r = len(tx.of_kind("eg21_round")) + 1
        tx.append("eg21_round", round_name(r), payload_of({"round": r, "available": u}))
    return {"round": r, "available": u, "announce": {}, "reveal": {}, "answer": {}}


@router.get("", response_model=RoundOut | None)
def current_round(request: Request, election_id: str) -> dict[str, Any] | None:
    """The last round and its messages so far (public); null before the first."""
    eg21_of(request, election_id)
    return latest_round(store_of(request), election_id)


class PostMessage(BaseModel):
    #: the trustee's message, JSON text (`Eg21Trustee.announce`, `reveal`, `answer`)
    message: str = Field(max_length=1 << 26)
    #: its node's signature (hex) on the round's statement
    signature: str = Field(max_length=128)


def _post(
    request: Request, election_id: str, r: int, step: str, body: PostMessage, role: str
) -> dict[str, Any]:
    store = store_of(request)
    eg21_of(request, election_id)
    i, key = _own_index(store, election_id, guardian_of(role) or "")
    try:
        signature = bytes.fromhex(body.signature)
    except ValueError:
        signature = b""
    message = round_statement(step, election_id, r, i, body.message)
    if not signature_holds(bytes.fromhex(key["signing_key"]), message, signature):
        raise InvalidInput(f"the signature is not guardian {i}'s node's on this {step}")
    try:
        json.loads(body.message)
    except ValueError as e:
        raise InvalidInput(f"the {step} is not JSON: {e}") from e
    if step == "announce":
        _round_of(request, store, election_id, r, i).check_announce(i, body.message.encode())
    elif step == "reveal":
        announce = store.entry_named(election_id, message_name(r, "announce", i))
        if announce is not None:
            _round_of(request, store, election_id, r, i).check_reveal(
                i, json.loads(announce.text())["message"].encode(), body.message.encode()
            )
    payload = payload_of({"i": i, "message": body.message, "signature": signature.hex()})
    with store.write(election_id) as tx:
        tx.require_phase("closed")
        rounds = tx.of_kind("eg21_round")
        if not rounds or json.loads(rounds[-1].text())["round"] != r:
            raise Conflict(f"round {r} is not the election's current decryption round")
        u = json.loads(rounds[-1].text())["available"]
        if i not in u:
            raise Conflict(f"guardian {i} is not among the round's guardians {u}")
        before = STEPS[STEPS.index(step) - 1] if step != "announce" else None
        if before is not None:
            names = [message_name(r, before, j) for j in u]
            if len(tx.named(names)) != len(u):
                raise Conflict(f"a {step} comes once every guardian of U has posted its {before}")
        entry = append_once(tx, f"eg21_{step}", message_name(r, step, i), payload, f"guardian {i}'s {step}")
    return {"entries": [entry_out(entry)]}


class Posted(BaseModel):
    entries: list[EntryOut]


@router.post("/{r}/announce", response_model=Posted, status_code=201)
def post_announce(
    request: Request, election_id: str, r: int, body: PostMessage, role: str = guardian_role
) -> dict[str, Any]:
    """Round r's first message from a guardian of U: M_i and d_i per value, and its nonce parts."""
    return _post(request, election_id, r, "announce", body, role)


@router.post("/{r}/reveal", response_model=Posted, status_code=201)
def post_reveal(
    request: Request, election_id: str, r: int, body: PostMessage, role: str = guardian_role
) -> dict[str, Any]:
    """Round r's second message: the guardian's commitment pairs, once every announcement of U is in."""
    return _post(request, election_id, r, "reveal", body, role)


@router.post("/{r}/answer", response_model=Posted, status_code=201)
def post_answer(
    request: Request, election_id: str, r: int, body: PostMessage, role: str = guardian_role
) -> dict[str, Any]:
    """Round r's third message: the guardian's responses, once every reveal of U is in."""
    return _post(request, election_id, r, "answer", body, role)


def publish_21(
    request: Request, store: Store, election_id: str
) -> tuple[list[tuple[str, str, bytes]], dict[str, Any]]:
    """The entries `publish` appends for a 2.1 election from its last round, every guardian of U having
    answered: `tally.json` and each challenged ballot opened; and what its `published` phase entry says: U
    as `present`, the other guardians as `missing`, the counts."""
    row = store.election(election_id)
    if row.phase != "closed":
        raise WrongPhase(f"election {election_id!r} is in phase {row.phase!r}; publish needs closed")
    current = latest_round(store, election_id)
    if current is None:
        raise Conflict("no decryption round has been started (POST …/eg21/rounds with U)")
    u = current["available"]
    missing = [i for i in u if i not in current["answer"]]
    if missing:
        raise Conflict(f"round {current['round']}: guardians {missing} have not answered")

    def messages(step: str) -> list[str]:
        return [json.loads(current[step][i])["message"] for i in u]

    group = json.loads(store.require_named(election_id, "election.json", "no election").text())["group"]
    with tempfile.TemporaryDirectory(prefix="votum-eg21-publish-") as tmp:
        record = Path(tmp) / "record"
        export_record_21(store, election_id, record)
        summary = votum.eg21_publish(
            group, record, u, messages("announce"), messages("reveal"), messages("answer")
        )
        entries = [("tally", "tally.json", (record / "tally.json").read_bytes())]
        for line in (record / "challenged.jsonl").read_bytes().splitlines():
            if line:
                ballot_id = json.loads(line)["id"]
                entries.append(("eg21_challenged", f"eg21/challenged/{ballot_id}.json", line))
    absent = [str(i) for i in range(1, row.number_of_guardians + 1) if i not in u]
    return entries, {"present": [str(i) for i in u], "missing": absent, "counts": summary["counts"]}
