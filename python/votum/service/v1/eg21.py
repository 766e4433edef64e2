"""`/v1/elections/{id}/eg21`: an ElectionGuard 2.1 election's key ceremony on the board (spec/80.11).

Each guardian posts only public material: its key record and its guardians' document, both signed by its
node key, and its shares, each encrypted to its receiver's κ. The service checks what anyone can check (the
records' proofs, each share's proof of its nonce, the signatures, the guardians' document recomputed from
the records) and holds no secret; the guardians check everything else themselves, since the service may lie.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, Field
from sqlalchemy import select

from votum.asgi import store_of
from votum.eg21_signing import JOINT_STATEMENT, KEY_STATEMENT, SHARE_STATEMENT, signature_holds, statement
from votum.errors import Conflict, InvalidInput
from votum.service.auth import guardian_of, require
from votum.service.codec import NegotiatedRoute
from votum.service.v1.ceremony import append_once
from votum.service.v1.common import EntryOut, entry_out, payload_of
from votum.service.v1.state import eg21_of
from votum.store import Store, Tx
from votum.store.schema import guardian_keys

router = APIRouter(
    prefix="/v1/elections/{election_id}/eg21", tags=["ElectionGuard 2.1"], route_class=NegotiatedRoute
)
guardian_role = Depends(require("guardian:*"))


def key_name(i: int) -> str:
    return f"eg21/keys/{i}.json"


def share_name(dealer: int, receiver: int) -> str:
    return f"eg21/shares/{dealer}/{receiver}.json"


def complaint_name(receiver: int, dealer: int) -> str:
    return f"eg21/complaints/{receiver}/{dealer}.json"


def joint_name(i: int) -> str:
    return f"eg21/joint/{i}.json"


def _hex(value: str, what: str, size: int) -> bytes:
    try:
        out = bytes.fromhex(value)
    except ValueError:
        out = b""
    if len(out) != size:
        raise InvalidInput(f"{what} is {size} bytes in hex")
    return out


def _own_index(store: Store, election_id: str, guardian_id: str) -> tuple[int, dict[str, Any]]:
    """The index and key record payload of the guardian whose token this is (its key record posted)."""
    for e in store.iter_entries(election_id, ["eg21_key"]):
        doc = json.loads(e.text())
        if doc["guardian_id"] == guardian_id:
            return int(doc["i"]), doc
    raise Conflict(f"guardian {guardian_id!r} has posted no key record in election {election_id!r}")


def _key_claim(record: dict[str, Any]) -> str:
    """How `guardian_keys` names a 2.1 guardian's K_i,0 (spec/80.11: never in two elections)."""
    return hashlib.sha256(b"votum/v1/eg21-key\0" + str(record["K"][0]).upper().encode()).hexdigest()


def _claim_key(tx: Tx, record: dict[str, Any], guardian_id: str) -> None:
    digest = _key_claim(record)
    found = tx.conn.execute(
        select(guardian_keys.c.election_id).where(guardian_keys.c.key_digest == digest)
    ).first()
    if found is not None:
        if found.election_id != tx.election.id:
            raise Conflict(
                f"guardian {guardian_id!r}'s key is already used in election {found.election_id!r}: "
                "a guardian makes new keys for every election"
            )
        return
    tx.conn.execute(
        guardian_keys.insert().values(key_digest=digest, election_id=tx.election.id, guardian_id=guardian_id)
    )


class Posted(BaseModel):
    entries: list[EntryOut]


class PostKey(BaseModel):
    #: this guardian's index, 1…n
    i: int = Field(ge=1, le=64)
    #: the trustee's key record, JSON text (`Eg21Trustee.public_record`)
    record: str = Field(max_length=1 << 20)
    #: the guardian's node signing key (Ed25519, hex) and its record-domain signature (hex) on the statement
    signing_key: str = Field(max_length=64)
    signature: str = Field(max_length=128)


@router.post("/keys", response_model=Posted, status_code=201)
def post_key(request: Request, election_id: str, body: PostKey, role: str = guardian_role) -> dict[str, Any]:
    """Guardian i's key record (Verification 2 checked here), signed by its node (spec/80.11)."""
    guardian_id = guardian_of(role) or ""
    store = store_of(request)
    ceremony = eg21_of(request, election_id)
    n = store.election(election_id).number_of_guardians
    if body.i > n:
        raise InvalidInput(f"i must be in 1..{n}")
    signing_key = _hex(body.signing_key, "signing_key", 32)
    signature = _hex(body.signature, "signature", 64)
    if not signature_holds(
        signing_key, statement(KEY_STATEMENT, election_id, body.i, body.record), signature
    ):
        raise InvalidInput("the signature is not the signing key's on this key record")
    try:
        record = json.loads(body.record)
    except ValueError as e:
        raise InvalidInput(f"the key record is not JSON: {e}") from e
    if not isinstance(record, dict) or ceremony.check_key(body.record.encode()) != body.i:
        raise InvalidInput(f"the key record is not guardian {body.i}'s")
    payload = payload_of(
        {
            "guardian_id": guardian_id,
            "i": body.i,
            "record": body.record,
            "signing_key": signing_key.hex(),
            "signature": signature.hex(),
        }
    )
    with store.write(election_id) as tx:
        tx.require_phase("ceremony")
        name = key_name(body.i)
        posted = {e.name: json.loads(e.text()) for e in tx.of_kind("eg21_key")}
        if name in posted:
            if posted[name]["guardian_id"] != guardian_id:
                raise Conflict(f"guardian {body.i} is guardian id {posted[name]['guardian_id']!r}")
        else:
            for other_name, other in posted.items():
                if other["guardian_id"] == guardian_id:
                    raise Conflict(
                        f"guardian {guardian_id!r} is guardian {other['i']} of this election already"
                    )
                if other["signing_key"] == signing_key.hex():
                    raise Conflict(f"this signing key signed {other_name} already: one node per guardian")
            _claim_key(tx, record, guardian_id)
        entry = append_once(tx, "eg21_key", name, payload, f"guardian {body.i}'s key record")
    return {"entries": [entry_out(entry)]}


class PostShares(BaseModel):
    #: share ciphertexts, JSON text each (`Eg21Trustee.share_for`), from this guardian
    shares: list[str] = Field(min_length=1, max_length=63)
    #: its node's signature (hex) on each share's statement, in the same order
    signatures: list[str] = Field(min_length=1, max_length=63)


@router.post("/shares", response_model=Posted, status_code=201)
def post_shares(
    request: Request, election_id: str, body: PostShares, role: str = guardian_role
) -> dict[str, Any]:
    """This guardian's shares, each encrypted to its receiver's κ (the proof of its nonce checked here, eq.
    22), once every key record is in. One share per (dealer, receiver)."""
    store = store_of(request)
    ceremony = eg21_of(request, election_id)
    i, key = _own_index(store, election_id, guardian_of(role) or "")
    if len(body.signatures) != len(body.shares):
        raise InvalidInput(f"{len(body.shares)} shares and {len(body.signatures)} signatures")
    checked = []
    for text, signature in zip(body.shares, body.signatures, strict=True):
        dealer, receiver = ceremony.check_share(text.encode())
        if dealer != i:
            raise InvalidInput(f"a share from guardian {dealer}, posted by guardian {i}")
        if not signature_holds(
            bytes.fromhex(key["signing_key"]),
            statement(SHARE_STATEMENT, election_id, i, text),
            _hex(signature, "signature", 64),
        ):
            raise InvalidInput(
                f"the signature on the share for guardian {receiver} is not guardian {i}'s node's"
            )
        checked.append((share_name(dealer, receiver), payload_of({"share": text, "signature": signature})))
    entries = []
    with store.write(election_id) as tx:
        tx.require_phase("ceremony")
        n = tx.election.number_of_guardians
        if len(tx.of_kind("eg21_key")) != n:
            raise Conflict(f"shares are dealt once all {n} key records are in")
        for name, payload in checked:
            entries.append(append_once(tx, "eg21_share", name, payload, name))
    return {"entries": [entry_out(e) for e in entries]}


class PostComplaint(BaseModel):
    #: the guardian whose share to this guardian failed its checks
    dealer: int = Field(ge=1, le=64)
    reason: str = Field(min_length=1, max_length=1000)
    #: this guardian's opening of that share (`Eg21Trustee.open_share`, JSON text): β = C₀^ζ with its proof
    opening: str = Field(min_length=1, max_length=1 << 14)


@router.post("/complaints", response_model=Posted, status_code=201)
def post_complaint(
    request: Request, election_id: str, body: PostComplaint, role: str = guardian_role
) -> dict[str, Any]:
    """This guardian says the share dealt to it by `dealer` failed its checks, and opens it (spec/80.11): the
    service decrypts it with the opening and keeps the complaint only when the share fails the dealer's
    commitments, naming why. A false complaint, or an opening that is not this guardian's, is refused and
    changes nothing. A complaint that stands stops the ceremony."""
    store = store_of(request)
    ceremony = eg21_of(request, election_id)
    i, receiver = _own_index(store, election_id, guardian_of(role) or "")
    share = store.entry_named(election_id, share_name(body.dealer, i))
    dealer = store.entry_named(election_id, key_name(body.dealer))
    if share is None or dealer is None:
        raise Conflict(f"guardian {body.dealer} has dealt no share to guardian {i}")
    fault = ceremony.judge_complaint(
        json.loads(dealer.text())["record"].encode(),
        receiver["record"].encode(),
        str(json.loads(share.text())["share"]).encode(),
        body.opening.encode(),
    )
    payload = payload_of(
        {"receiver": i, "dealer": body.dealer, "reason": body.reason, "opening": body.opening, "fault": fault}
    )
    name = complaint_name(i, body.dealer)
    with store.write(election_id) as tx:
        tx.require_phase("ceremony")
        # one complaint per receiver and dealer: a retry (its opening's proof drawn afresh) gets the first
        entry = tx.named([name]).get(name) or tx.append("eg21_complaint", name, payload)
    return {"entries": [entry_out(entry)]}


class PostJoint(BaseModel):
    #: the guardians' document this guardian computed (`Eg21Trustee.joint`), JSON text
    guardians: str = Field(max_length=1 << 22)
    #: its node's signature (hex) on the statement, by the key record's signing key
    signature: str = Field(max_length=128)


def joint_of(request: Request, store: Store, election_id: str) -> str:
    """The guardians' document the service computes from the n key records (the ceremony's object)."""
    records = [json.loads(e.text()) for e in store.iter_entries(election_id, ["eg21_key"])]
    n = store.election(election_id).number_of_guardians
    if len(records) != n:
        raise Conflict(f"{len(records)} of {n} key records are posted")
    ordered = [r["record"] for r in sorted(records, key=lambda r: int(r["i"]))]
    return eg21_of(request, election_id).joint(ordered)


@router.post("/joint", response_model=Posted, status_code=201)
def post_joint(
    request: Request, election_id: str, body: PostJoint, role: str = guardian_role
) -> dict[str, Any]:
    """The guardians' document (K, K̂, H_G, H_E) as this guardian computed it, signed: it must be the one
    the service computes from the n key records."""
    store = store_of(request)
    eg21_of(request, election_id)
    guardian_id = guardian_of(role) or ""
    i, key = _own_index(store, election_id, guardian_id)
    signature = _hex(body.signature, "signature", 64)
    message = statement(JOINT_STATEMENT, election_id, i, body.guardians)
    if not signature_holds(bytes.fromhex(key["signing_key"]), message, signature):
        raise InvalidInput("the signature is not this guardian's node's on this document")
    try:
        mine = json.loads(body.guardians)
    except ValueError as e:
        raise InvalidInput(f"the guardians' document is not JSON: {e}") from e
    if mine != json.loads(joint_of(request, store, election_id)):
        raise Conflict(
            f"guardian {i}'s guardians' document is not the one computed from the key records on the board"
        )
    payload = payload_of(
        {"guardian_id": guardian_id, "i": i, "guardians": body.guardians, "signature": signature.hex()}
    )
    with store.write(election_id) as tx:
        tx.require_phase("ceremony")
        entry = append_once(tx, "eg21_joint", joint_name(i), payload, f"guardian {i}'s guardians' document")
    return {"entries": [entry_out(entry)]}


class CeremonyOut(BaseModel):
    #: index -> the key record's payload (JSON text exactly as on the board)
    keys: dict[int, str]
    #: names of the shares, complaints and joint documents posted
    shares: list[str]
    complaints: list[str]
    joint: list[str]
    #: with `?to=ℓ`: dealer -> its share to ℓ (JSON text)
    to: dict[int, str]


@router.get("", response_model=CeremonyOut)
def ceremony_state(request: Request, election_id: str, to: int | None = None) -> dict[str, Any]:
    """The key ceremony as the board holds it (public)."""
    store = store_of(request)
    eg21_of(request, election_id)
    out: dict[str, Any] = {"keys": {}, "shares": [], "complaints": [], "joint": [], "to": {}}
    kinds = {"eg21_share": "shares", "eg21_complaint": "complaints", "eg21_joint": "joint"}
    for e in store.iter_entries(election_id, ["eg21_key", *kinds]):
        if e.kind == "eg21_key":
            out["keys"][int(json.loads(e.text())["i"])] = e.text()
            continue
        out[kinds[e.kind]].append(e.name)
        if e.kind == "eg21_share" and to is not None:
            dealer, receiver = (int(x) for x in e.name.removesuffix(".json").split("/")[2:4])
            if receiver == to:
                out["to"][dealer] = e.text()
    return out


def awaited_21(store: Store, election_id: str) -> dict[str, int]:
    """What a 2.1 ceremony waits for (`GET …/awaited`'s `eg21`)."""
    n = store.election(election_id).number_of_guardians
    counts = {"eg21_key": 0, "eg21_share": 0, "eg21_complaint": 0, "eg21_joint": 0}
    for e in store.iter_entries(election_id, list(counts), with_payload=False):
        counts[e.kind] += 1
    return {
        "keys": counts["eg21_key"],
        "shares": counts["eg21_share"],
        "shares_total": n * (n - 1),
        "complaints": counts["eg21_complaint"],
        "joint": counts["eg21_joint"],
    }


def open_21(request: Request, store: Store, election_id: str) -> list[tuple[str, str, bytes]]:
    """What `open` appends for a 2.1 election, once its ceremony is complete: the parameters and the
    guardians' document (every guardian's own equal to the service's)."""
    row = store.election(election_id)
    n = row.number_of_guardians
    a = awaited_21(store, election_id)
    if a["complaints"]:
        names = [e.name for e in store.iter_entries(election_id, ["eg21_complaint"], with_payload=False)]
        raise Conflict(f"a guardian complained of a share: {', '.join(names)}; the ceremony cannot finish")
    if a["keys"] != n or a["shares"] != a["shares_total"] or a["joint"] != n:
        raise Conflict(
            f"{a['keys']} of {n} key records, {a['shares']} of {a['shares_total']} shares and "
            f"{a['joint']} of {n} guardians' documents are posted"
        )
    doc = joint_of(request, store, election_id)
    for e in store.iter_entries(election_id, ["eg21_joint"]):
        if json.loads(json.loads(e.text())["guardians"]) != json.loads(doc):
            raise Conflict(f"{e.name} is not the guardians' document of the key records")
    return [
        ("parameters", "parameters.json", eg21_of(request, election_id).parameters.encode()),
        ("guardians", "guardians.json", doc.encode()),
    ]
