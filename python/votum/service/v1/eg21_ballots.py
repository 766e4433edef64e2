"""`/v1/elections/{id}/eg21/devices` and `/eg21/ballots`: an ElectionGuard 2.1 election's encryption devices
and ballots (spec/80.11).

Each ballot is checked before the write transaction as the verifier checks it (V-EG21-05…08's per-ballot
items, proofs included: `votum.Eg21BallotBox`), then under the election's lock against what is stored: its
id, its device (registered by the same device token), its chaining field (simple chaining: a code on that
device's chain that no other ballot has chained from), and its id_B, nonce ciphertext and selection
ciphertexts, none already on the board. A guardian refuses to decrypt a record in which one of these repeats,
so one copied ballot accepted here would stop the election's decryption.
"""

from __future__ import annotations

import hashlib
import json
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, Field

import votum
from votum.asgi import store_of
from votum.eg2 import token_weight
from votum.errors import Conflict, DuplicateBallot, InvalidInput, NotFound
from votum.service.auth import bearer_role, device_name_of, require, token_owner
from votum.service.codec import NegotiatedRoute
from votum.service.v1.ballots import check_names
from votum.service.v1.ceremony import append_once
from votum.service.v1.common import EntryOut, Receipt, entry_out, payload_of, receipt
from votum.service.v1.state import eg21_of, require_2_1, v1_state
from votum.store import (
    Store,
    Tx,
    add_ballots,
    add_ciphertexts,
    add_codes,
    chain_tail,
    check_id,
    ciphertext_owners,
    code_links,
    existing_ballots,
    mark_chained,
    payload_digest,
    record_printed,
)

router = APIRouter(
    prefix="/v1/elections/{election_id}/eg21", tags=["ElectionGuard 2.1"], route_class=NegotiatedRoute
)
device_role = Depends(require("device"))

#: the ballots one request may carry
BATCH = 100
#: the largest ballot weight an election may give a device token (its counts are found by a discrete log
#: whose work grows with the square root of the cast ballots' weights summed)
MAX_WEIGHT = 1_000_000


def chain_owner(token: str, device: str) -> str:
    """Whose chain a 2.1 code is on: the device token and the device (spec/80.11). A ballot of one device that
    chained from another's code would break its own chain in the record (V-EG21-08), and every guardian
    refuses to decrypt such a record, so codes are owned per device, not per token as in 1.0."""
    return hashlib.sha256(f"votum/v1/eg21-chain\0{token}\0{device}".encode()).hexdigest()[:32]


def device_name(name: str) -> str:
    return f"eg21/devices/{name}.json"


def ballot_name(ballot_id: str) -> str:
    return f"eg21/ballots/{ballot_id}.json"


def ballot_box(request: Request, store: Store, election_id: str) -> votum.Eg21BallotBox:
    """The election's ballot checks, from its board (once it is open)."""
    eg21_of(request, election_id)

    def make() -> votum.Eg21BallotBox:
        doc = json.loads(store.require_named(election_id, "election.json", "no election").text())
        guardians = store.entry_named(election_id, "guardians.json")
        if guardians is None:
            raise Conflict(f"election {election_id!r} is not open: its key ceremony is not finished")
        manifest = store.require_named(election_id, "manifest.json", "no manifest")
        return votum.Eg21BallotBox(doc["group"], manifest.payload or b"", guardians.payload or b"")

    return v1_state(request).objects.eg21_box(election_id, make)


class PostDevice(BaseModel):
    #: the device's name S_device (its ballots name it; a named device token's start with `<name>-`)
    device: str = Field(min_length=1, max_length=128)
    simple_chaining: bool = False
    #: a printer of pre-encrypted ballots (§4.2), whose chain hashes with the printer's domain bytes and whose
    #: ballots are all pre-encrypted; otherwise an encryption device, none of whose ballots is
    printer: bool = False


class DeviceOut(BaseModel):
    entries: list[EntryOut]
    #: where its chain starts (hex): H_DI under no chaining, H_0 under simple chaining
    start: str


@router.post("/devices", response_model=DeviceOut, status_code=201, dependencies=[device_role])
def register_device(request: Request, election_id: str, body: PostDevice) -> dict[str, Any]:
    """An encryption device of a 2.1 election: its name and chaining mode. Its ballots may be posted only
    with the device token that registered it."""
    check_id(body.device, "device name")
    check_names(request, device_name_of(bearer_role(request)), [body.device], "device name")
    store = store_of(request)
    box = ballot_box(request, store, election_id)
    start = box.chain_start(body.device, body.simple_chaining, body.printer)
    owner = chain_owner(token_owner(request), body.device)
    doc: dict[str, Any] = {"device": body.device, "mode": int(body.simple_chaining), "start": start}
    if body.printer:
        doc["printer"] = True
    payload = payload_of(doc)
    with store.write(election_id) as tx:
        tx.require_phase("open")
        entry = append_once(tx, "eg21_device", device_name(body.device), payload, f"device {body.device!r}")
        if tx.appended:
            add_codes(tx, [start], owner)
        else:
            link = code_links(tx, [start]).get(start)
            if link is None or not link.extendable_by(owner):
                raise Conflict(f"device {body.device!r} is registered with another device token")
    return {"entries": [entry_out(entry)], "start": start}


class TailOut(BaseModel):
    device: str
    #: the code its next ballot chains from under simple chaining (hex): its last ballot's, or H_0
    tail: str


@router.get("/devices/{device}/tail", response_model=TailOut, dependencies=[device_role])
def device_tail(request: Request, election_id: str, device: str) -> dict[str, Any]:
    """Where a simple-chaining device registered by this token goes on: the code on its chain that no ballot
    chains from yet. A kiosk that lost its state file asks here; a wrong answer only gets its next ballot
    refused (a fork), or fails the record's V-EG21-08."""
    check_id(device, "device name")
    store = store_of(request)
    eg21_of(request, election_id)
    owner = chain_owner(token_owner(request), device)
    with store.write(election_id) as tx:
        registered = tx.named([device_name(device)]).get(device_name(device))
        tail = chain_tail(tx, owner) if registered is not None else None
    if tail is None:
        raise NotFound(f"no device {device!r} of this device token in election {election_id!r}")
    return {"device": device, "tail": tail}


#: the largest ballot taken (a ballot of a manifest with hundreds of contests fits)
MAX_BALLOT = 4 << 20


class PostBallots(BaseModel):
    #: ballots, JSON text each (a line of the record's `ballots.jsonl`), in the order the devices made them
    ballots: list[Annotated[str, Field(max_length=MAX_BALLOT)]] = Field(min_length=1, max_length=BATCH)


class Receipts(BaseModel):
    receipts: list[Receipt]


def _devices(tx: Tx) -> dict[str, dict[str, Any]]:
    docs = (json.loads(e.text()) for e in tx.of_kind("eg21_device"))
    return {d["device"]: d for d in docs}


def _read(
    request: Request, store: Store, election_id: str, body: PostBallots
) -> tuple[str | None, int, list[tuple[dict[str, Any], bytes]]]:
    """Before the lock: the posting token's name and weight, and each ballot checked as the verifier checks
    it (its facts and bytes), its id a valid one."""
    box = ballot_box(request, store, election_id)
    scope = device_name_of(bearer_role(request))
    if any("\n" in text or "\r" in text for text in body.ballots):
        raise InvalidInput("a ballot is one line of JSON")
    payloads = [text.encode() for text in body.ballots]
    read = list(zip(box.check_many(payloads), payloads, strict=True))
    for facts, _ in read:
        check_id(str(facts["id"]), "ballot id")
    return scope, token_weight(v1_state(request).objects.weights(election_id), scope), read


def _require_weight(facts: dict[str, Any], weight: int) -> None:
    """A counted ballot (cast or challenged, or a recording) carries its token's weight."""
    if facts["weight"] != weight:
        raise InvalidInput(
            f"ballot {facts['id']}: weight {facts['weight']}; this device token's ballots weigh {weight} "
            "(the election's weights, fixed when it was created; a device does not choose its own)"
        )


@router.post("/ballots", response_model=Receipts, status_code=201, dependencies=[device_role])
def post_ballots(request: Request, election_id: str, body: PostBallots) -> dict[str, Any]:
    """Ballots, each checked as the verifier checks it, then stored all together or not at all. A ballot
    already stored with the same text is answered with its receipt (a retry after a lost answer). A
    printer's ballots are printed pre-encrypted ballots before any mark (uncast, weight 1), recorded later
    with `POST …/eg21/recorded`."""
    store = store_of(request)
    token = token_owner(request)
    scope, weight, read = _read(request, store, election_id, body)
    checked = []
    for facts, payload in read:
        if facts["pre_encrypted"]:
            if facts["state"] != "challenged" or facts["weight"] != 1:
                raise InvalidInput(
                    f"ballot {facts['id']}: a printed ballot is posted before any mark (uncast, weight 1); "
                    "its recording goes to POST …/eg21/recorded"
                )
        else:
            _require_weight(facts, weight)
        checked.append((facts, payload))
    check_names(request, scope, [f["id"] for f, _ in checked], "ballot id")
    check_names(request, scope, [f["device"] for f, _ in checked], "device name")
    receipts: dict[str, dict[str, Any]] = {}
    with store.write(election_id) as tx:
        tx.require_phase("open")
        ids = [str(f["id"]) for f, _ in checked]
        if len(set(ids)) != len(ids):
            raise InvalidInput("a ballot id appears twice in the request")
        held = existing_ballots(tx, ids)
        fresh = []
        for facts, payload in checked:
            found = held.get(facts["id"])
            if found is None:
                fresh.append((facts, payload))
                continue
            # the entry the first post made (a printed ballot's, even once it is recorded)
            entry = tx.named([ballot_name(facts["id"])])[ballot_name(facts["id"])]
            if entry.digest != payload_digest(payload):
                raise DuplicateBallot(f"ballot {facts['id']!r} is already recorded with other content")
            state = "printed" if facts["pre_encrypted"] else _state(found.state)
            receipts[facts["id"]] = receipt(facts["id"], state, found.code, entry)
        if fresh:
            _store(tx, token, fresh, receipts)
    return {"receipts": [receipts[i] for i in ids]}


@router.get("/ballots/{ballot_id}", response_model=Receipt)
def ballot_receipt(request: Request, election_id: str, ballot_id: str) -> dict[str, Any]:
    """A 2.1 ballot's receipt, as its post answered it: a device whose answer was lost asks here whether its
    ballot arrived before it goes on."""
    require_2_1(request, election_id)
    store = store_of(request)
    b = store.ballot(election_id, ballot_id)
    if b is None:
        raise NotFound(f"no ballot {ballot_id!r} in election {election_id!r}")
    return receipt(b.ballot_id, _state(b.state), b.code, store.entry(election_id, b.seq))


def recorded_name(ballot_id: str) -> str:
    return f"eg21/recorded/{ballot_id}.json"


@router.post("/recorded", response_model=Receipts, status_code=201, dependencies=[device_role])
def post_recorded(request: Request, election_id: str, body: PostBallots) -> dict[str, Any]:
    """Recorded pre-encrypted ballots (§4.3): each the cast form of a printed ballot on the board, checked as
    the verifier checks it, then against its printed ballot (the same id_B, nonce ciphertext, chaining field,
    code, χ and ψ: `Eg21BallotBox.same_paper`), carrying this device token's weight, its selection
    ciphertexts new on this board; stored all together or not at all. A printed ballot is recorded once; the
    same recording again is answered with its receipt."""
    store = store_of(request)
    box = ballot_box(request, store, election_id)
    scope, weight, read = _read(request, store, election_id, body)
    checked = []
    for facts, payload in read:
        if not facts["pre_encrypted"] or facts["state"] != "cast":
            raise InvalidInput(f"ballot {facts['id']}: a recording is a cast pre-encrypted ballot")
        _require_weight(facts, weight)
        checked.append((facts, payload))
    ids = [str(f["id"]) for f, _ in checked]
    check_names(request, scope, ids, "ballot id")
    if len(set(ids)) != len(ids):
        raise InvalidInput("a ballot id appears twice in the request")
    for facts, payload in checked:
        # a board entry never changes once stored, so the printed ballot is read before the lock
        paper = store.entry_named(election_id, ballot_name(facts["id"]))
        if paper is None or paper.kind != "eg21_printed":
            raise NotFound(f"ballot {facts['id']}: no printed ballot {facts['id']!r} is on the board")
        box.same_paper(paper.payload or b"", payload)
    receipts: dict[str, dict[str, Any]] = {}
    with store.write(election_id) as tx:
        tx.require_phase("open")
        held = existing_ballots(tx, ids)
        fresh = []
        for facts, payload in checked:
            found = held.get(facts["id"])
            if found is None:
                raise NotFound(f"ballot {facts['id']}: no printed ballot {facts['id']!r} is on the board")
            if found.state == "cast":
                if found.digest != payload_digest(payload):
                    raise Conflict(f"ballot {facts['id']!r} is already recorded (by another recording)")
                entry = tx.named([recorded_name(facts["id"])])[recorded_name(facts["id"])]
                receipts[facts["id"]] = receipt(facts["id"], "cast", found.code, entry)
                continue
            fresh.append((facts, payload))
        # a recording's id_B and nonce ciphertext are its printed ballot's; its selections are new
        prints = [p for f, _ in fresh for p in f["fingerprints"][2:]]
        if len(set(prints)) != len(prints) or ciphertext_owners(tx, prints):
            raise Conflict("a recorded ballot repeats a selection ciphertext already on the board")
        for facts, payload in fresh:
            entry = tx.append("eg21_recorded", recorded_name(facts["id"]), payload)
            record_printed(tx, facts["id"], entry.seq, entry.digest)
            receipts[facts["id"]] = receipt(facts["id"], "cast", facts["code"], entry)
        add_ciphertexts(tx, [(p, facts["id"]) for facts, _ in fresh for p in facts["fingerprints"][2:]])
        tx.set(
            cast_count=tx.election.cast_count + len(fresh),
            printed_count=tx.election.printed_count - len(fresh),
        )
    return {"receipts": [receipts[i] for i in ids]}


def _state(stored: str) -> str:
    # the ballots table says "spoiled" for a 1.0 spoiled ballot and a 2.1 challenged one alike
    return "challenged" if stored == "spoiled" else stored


def _store(
    tx: Tx, token: str, fresh: list[tuple[dict[str, Any], bytes]], receipts: dict[str, dict[str, Any]]
) -> None:
    """The rules under the lock (device, chain, repeated values), then every fresh ballot appended."""
    devices = _devices(tx)
    prints = [p for f, _ in fresh for p in f["fingerprints"]]
    if len(set(prints)) != len(prints):
        raise Conflict(
            "two ballots of the request share an id_B, a nonce ciphertext or a selection ciphertext"
        )
    owners = ciphertext_owners(tx, prints)
    if owners:
        raise Conflict(
            f"a ballot repeats an id_B, nonce ciphertext or selection ciphertext of ballot "
            f"{next(iter(owners.values()))!r}: a copied ballot"
        )
    links = code_links(tx, [f["after"] for f, _ in fresh])
    chained: list[tuple[str, str]] = []
    new_codes: dict[str, list[str]] = {}
    #: the codes of this request's ballots, each with the chain it is on
    made: dict[str, str] = {}
    taken: set[str] = set()
    for facts, _ in fresh:
        owner = chain_owner(token, facts["device"])
        device = devices.get(facts["device"])
        if device is None:
            raise NotFound(f"ballot {facts['id']}: no device {facts['device']!r} is registered")
        if bool(device.get("printer")) != facts["pre_encrypted"]:
            raise Conflict(
                f"ballot {facts['id']}: a printer's ballots are pre-encrypted and an encryption device's are "
                f"not; device {facts['device']!r} is "
                + ("a printer" if device.get("printer") else "an encryption device")
            )
        if facts["mode"] != device["mode"]:
            raise Conflict(
                f"ballot {facts['id']}: chaining mode {facts['mode']}, its device's is {device['mode']}"
            )
        after = facts["after"]
        if device["mode"] == 0:
            link = links.get(after)
            if after != device["start"] or link is None or not link.extendable_by(owner):
                raise Conflict(
                    f"ballot {facts['id']}: its chaining field is not its device's H_DI on this token"
                )
        else:
            link = links.get(after)
            in_request = after in made
            if (in_request and made[after] != owner) or (
                not in_request and (link is None or not link.extendable_by(owner))
            ):
                raise Conflict(
                    f"ballot {facts['id']}: it chains from a code that is not on its device's chain "
                    "on this token"
                )
            if after in taken or (not in_request and link is not None and link.chained_by is not None):
                raise Conflict(f"ballot {facts['id']}: another ballot chains from the same code (a fork)")
            taken.add(after)
            chained.append((after, facts["id"]))
            new_codes.setdefault(owner, []).append(facts["code"])
            made[facts["code"]] = owner
    for owner, codes in new_codes.items():
        add_codes(tx, codes, owner)
    mark_chained(tx, chained)
    rows = []
    for facts, payload in fresh:
        printed = facts["pre_encrypted"]
        entry = tx.append("eg21_printed" if printed else "eg21_ballot", ballot_name(facts["id"]), payload)
        state = "printed" if printed else "cast" if facts["state"] == "cast" else "spoiled"
        rows.append(
            {
                "ballot_id": facts["id"],
                "state": state,
                "code": facts["code"],
                "seq": entry.seq,
                "digest": entry.digest,
            }
        )
        shown = state if printed else facts["state"]
        receipts[facts["id"]] = receipt(facts["id"], shown, facts["code"], entry)
    add_ballots(tx, rows)
    add_ciphertexts(tx, [(p, facts["id"]) for facts, _ in fresh for p in facts["fingerprints"]])
    cast = sum(1 for f, _ in fresh if f["state"] == "cast" and not f["pre_encrypted"])
    printed = sum(1 for f, _ in fresh if f["pre_encrypted"])
    tx.set(
        cast_count=tx.election.cast_count + cast,
        spoiled_count=tx.election.spoiled_count + len(fresh) - cast - printed,
        printed_count=tx.election.printed_count + printed,
    )


def devices_document(request: Request, store: Store, election_id: str) -> tuple[bytes, int]:
    """`devices.json`: each device's record from the ballots accepted from it, in board order (its chain
    closed with its last code under simple chaining); and how many ballots it covers."""
    box = ballot_box(request, store, election_id)
    ballots: dict[str, list[tuple[str, str]]] = {}
    for e in store.iter_entries(election_id, ["eg21_ballot", "eg21_printed"]):
        doc = json.loads(e.text())
        ballots.setdefault(str(doc["device"]), []).append((str(doc["id"]), str(doc["H_C"])))
    out = []
    for e in store.iter_entries(election_id, ["eg21_device"]):
        d = json.loads(e.text())
        mine = ballots.get(d["device"], [])
        last = mine[-1][1] if mine else None
        ids = [i for i, _ in mine]
        closed = box.close_device(d["device"], bool(d["mode"]), ids, last, bool(d.get("printer")))
        out.append(json.loads(closed))
    return json.dumps(out, separators=(",", ":")).encode(), sum(len(b) for b in ballots.values())
