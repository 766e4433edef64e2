"""`/v1/elections`: create, status, the phase transitions (open, close, publish), results, the record."""

from __future__ import annotations

import asyncio
import json
from dataclasses import asdict
from typing import Annotated, Any, Literal
from urllib.parse import quote

import anyio
from fastapi import APIRouter, Depends, Request
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, Field

import votum
from votum.asgi import store_of
from votum.eg import encrypted_tally_json, records_in_order
from votum.errors import Conflict, InvalidInput, WrongPhase
from votum.service.auth import require
from votum.service.codec import NegotiatedRoute
from votum.service.problems import ApiError
from votum.service.v1.common import EG, Head, payload_of
from votum.service.v1.eg21 import awaited_21, open_21
from votum.service.v1.eg21_ballots import MAX_WEIGHT, devices_document
from votum.service.v1.eg21_decryption import publish_21
from votum.service.v1.exports import chunks
from votum.service.v1.state import objects_of, one_point_zero, spec_of, v1_state
from votum.store import ElectionRow, Tx, check_id
from votum.store.awaited import awaited

router = APIRouter(prefix="/v1/elections", tags=["elections"], route_class=NegotiatedRoute)
admin = Depends(require("admin"))

BOARD_FORMAT = "votum-board/1"


class CreateElection(BaseModel):
    election_id: str = Field(min_length=1, max_length=128)
    #: an ElectionGuard 1.4 manifest, or a 2.x manifest for a 2.1 election
    manifest: dict[str, Any]
    number_of_guardians: int = Field(ge=1, le=64)
    quorum: int = Field(ge=1, le=64)
    #: the ElectionGuard version the election runs (spec/80.11)
    spec: Literal["1.0", "2.1"] = "1.0"
    #: a 2.1 election's group
    group: Literal["eg2-4096", "eg2-3072", "p256"] | None = None
    #: a 2.1 election's ballot weights W (eq. 80) by named device token (`device:<name>`): each ballot a
    #: token posts must carry its weight; a token not listed, and a plain `device` token, post weight 1
    weights: dict[str, Annotated[int, Field(ge=1, le=MAX_WEIGHT)]] | None = Field(
        default=None, max_length=1000
    )


class Status(BaseModel):
    election_id: str
    #: the ElectionGuard version it runs
    spec: str = "1.0"
    phase: str
    number_of_guardians: int
    quorum: int
    head: Head
    cast: int
    #: 1.0 spoiled and 2.1 challenged ballots
    spoiled: int
    #: 2.1 pre-encrypted ballots printed and not (yet) recorded: neither cast nor challenged (spec/80.11)
    printed: int = 0
    created_at: str


def status_of(row: ElectionRow, spec: str) -> dict[str, Any]:
    return {
        "election_id": row.id,
        "spec": spec,
        "phase": row.phase,
        "number_of_guardians": row.number_of_guardians,
        "quorum": row.quorum,
        "head": {"seq": row.head_seq, "hash": row.head_hash.hex()},
        "cast": row.cast_count,
        "spoiled": row.spoiled_count,
        "printed": row.printed_count,
        "created_at": row.created_at,
    }


def _phase_entry(tx: Tx, phase: str, extra: dict[str, Any] | None = None) -> None:
    tx.append("phase", f"phases/{phase}.json", payload_of({"phase": phase, **(extra or {})}))
    tx.set(phase=phase)


@router.post("", response_model=Status, status_code=201, dependencies=[admin])
def create_election(request: Request, body: CreateElection) -> dict[str, Any]:
    """A new election in phase `ceremony`: its board starts with the election's parameters and the
    manifest (checked here: references, selection limits, ballot styles)."""
    if body.quorum > body.number_of_guardians:
        raise InvalidInput(f"quorum {body.quorum} is more than the {body.number_of_guardians} guardians")
    manifest = payload_of(body.manifest)
    params: dict[str, Any] = {
        "format": BOARD_FORMAT,
        "election_id": body.election_id,
        "number_of_guardians": body.number_of_guardians,
        "quorum": body.quorum,
    }
    if body.weights is not None and body.spec != "2.1":
        raise InvalidInput("ballot weights are ElectionGuard 2.1's: a 1.0 election weighs every ballot 1")
    for name in body.weights or {}:
        check_id(name, "device token name")
    if body.spec == "2.1":
        group = body.group or "eg2-4096"
        # the manifest's bytes as chained are H_B's input; a 2.x manifest with a ballot style
        ceremony = votum.Eg21Ceremony(group, manifest, body.number_of_guardians, body.quorum)
        params = {
            "format": BOARD_FORMAT,
            "spec": "2.1",
            "group": group,
            **{k: v for k, v in params.items() if k != "format"},
            "base_hash": ceremony.base_hash,
        }
        if body.weights:
            params["weights"] = dict(sorted(body.weights.items()))
    else:
        if body.group is not None:
            raise InvalidInput("an ElectionGuard 1.0 election runs on its one group: give no group")
        votum.EgManifest.from_json(manifest.decode())
    store = store_of(request)
    with store.create(body.election_id, body.number_of_guardians, body.quorum) as tx:
        tx.append("election", "election.json", payload_of(params))
        tx.append("manifest", "manifest.json", manifest)
    return status_of(store.election(body.election_id), body.spec)


@router.get("", response_model=list[str])
def list_elections(request: Request) -> list[str]:
    return store_of(request).election_ids()


@router.get("/{election_id}", response_model=Status)
def election_status(request: Request, election_id: str) -> dict[str, Any]:
    row = store_of(request).election(election_id)
    return status_of(row, spec_of(request, election_id))


class AwaitedOut(BaseModel):
    phase: str
    #: guardians whose public records are posted
    guardians: list[str]
    number_of_guardians: int
    quorum: int
    #: backups reported checked by their receiver or answered in public, of `backups_total`
    backups_settled: int
    backups_total: int
    #: guardian id -> whether it has posted its own decryption shares
    shares: dict[str, bool]
    #: a 2.1 election's key ceremony (spec/80.11): key records, shares (of shares_total), complaints and
    #: guardians' documents posted
    eg21: dict[str, int] | None = None


@router.get("/{election_id}/awaited", response_model=AwaitedOut)
def awaited_of(request: Request, election_id: str) -> dict[str, Any]:
    """What the election waits for in its phase (spec/80.10): the records and backups of the key
    ceremony, or the guardians' decryption shares; the officials' dashboard shows the same."""
    store = store_of(request)
    a = awaited(store, store.election(election_id))
    out = {**asdict(a), "backups_total": a.backups_total}
    if spec_of(request, election_id) == "2.1":
        out["eg21"] = awaited_21(store, election_id)
        out["guardians"] = [
            json.loads(e.text())["guardian_id"] for e in store.iter_entries(election_id, ["eg21_key"])
        ]
    return out


@router.post("/{election_id}/open", response_model=Status, dependencies=[admin])
def open_election(request: Request, election_id: str) -> dict[str, Any]:
    """Ends the key ceremony: every guardian's record is in and every backup was reported checked by
    its receiver (or disputed and answered correctly). The context (joint key, commitment hash,
    extended base hash) and the constants go on the board; ballots are accepted from now on."""
    store = store_of(request)
    row = store.election(election_id)
    if row.phase != "ceremony":
        raise WrongPhase(f"election {election_id!r} is in phase {row.phase!r}; open needs ceremony")
    if spec_of(request, election_id) == "2.1":
        entries = open_21(request, store, election_id)
        with store.write(election_id) as tx:
            tx.require_phase("ceremony")
            for kind, name, payload in entries:
                tx.append(kind, name, payload)
            _phase_entry(tx, "open")
        return status_of(store.election(election_id), "2.1")
    objects = objects_of(request, election_id)
    records = {
        json.loads(e.text())["guardian_id"]: e.text() for e in store.iter_entries(election_id, ["guardian"])
    }
    n = row.number_of_guardians
    if len(records) != n:
        raise Conflict(f"{len(records)} of {n} guardian records are posted")
    settled = {e.name for e in store.iter_entries(election_id, ["backup_verified", "challenge_answer"])}
    missing = []
    for sender in records:
        for receiver in records:
            if sender != receiver and (
                f"ceremony/verified/{receiver}/{sender}.json" not in settled
                and f"ceremony/answers/{sender}/{receiver}.json" not in settled
            ):
                missing.append(f"{sender}→{receiver}")
    if missing:
        raise Conflict(
            f"{len(missing)} backups are neither checked by their receiver nor answered: "
            + ", ".join(missing[:5])
        )
    ordered = records_in_order(records.values())
    context = votum.EgContext(ordered, row.quorum, objects.manifest)
    with store.write(election_id) as tx:
        tx.require_phase("ceremony")
        tx.append("context", "context.json", context.to_json().encode())
        tx.append("constants", "constants.json", votum.eg_constants_json().encode())
        _phase_entry(tx, "open")
        tx.set(tally=votum.EgTally(objects.manifest).to_bytes())
    return status_of(store.election(election_id), "1.0")


@router.post("/{election_id}/close", response_model=Status, dependencies=[admin])
def close_election(request: Request, election_id: str) -> dict[str, Any]:
    """No more ballots: the encrypted tally (the product of every cast ballot, kept up to date with each
    accepted ballot) goes on the board for the guardians to decrypt. In a 2.1 election, each device's
    record (its ballots in order, its chain closed) goes on the board as `devices.json` (spec/80.11)."""
    store = store_of(request)
    if spec_of(request, election_id) == "2.1":
        phase = store.election(election_id).phase
        if phase != "open":
            raise WrongPhase(f"election {election_id!r} is in phase {phase!r}; close needs open")
        devices, covered = devices_document(request, store, election_id)
        with store.write(election_id) as tx:
            tx.require_phase("open")
            if covered != tx.election.cast_count + tx.election.spoiled_count + tx.election.printed_count:
                raise Conflict("ballots arrived while the devices' records were written: close again")
            tx.append("devices", "devices.json", devices)
            _phase_entry(tx, "closed")
        return status_of(store.election(election_id), "2.1")
    objects = objects_of(request, election_id)
    with store.write(election_id) as tx:
        tx.require_phase("open")
        assert tx.election.tally is not None
        tally = votum.EgTally.from_bytes(objects.manifest, tx.election.tally)
        doc = encrypted_tally_json(objects.manifest_doc, objects.manifest, tally.ciphertexts())
        tx.append("encrypted_tally", "encrypted_tally.json", payload_of(doc))
        _phase_entry(tx, "closed")
    return status_of(store.election(election_id), "1.0")


@router.post("/{election_id}/publish", response_model=Status, dependencies=[admin])
def publish_results(request: Request, election_id: str) -> dict[str, Any]:
    """Combines the guardians' posted shares: guardians who posted shares of every target are present;
    each other guardian is compensated for by the quorum of present guardians' compensated shares.
    Every proof was checked when it was posted and is checked again here. The plaintext tally, the
    spoiled ballots' plaintexts and the Lagrange coefficients go on the board. In a 2.1 election: the last
    decryption round's answers combined (each checked), the tally and the challenged ballots opened
    (spec/80.11)."""
    store = store_of(request)
    if spec_of(request, election_id) == "2.1":
        entries, published = publish_21(request, store, election_id)
        with store.write(election_id) as tx:
            tx.require_phase("closed")
            for kind, name, payload in entries:
                tx.append(kind, name, payload)
            _phase_entry(tx, "published", published)
        return status_of(store.election(election_id), "2.1")
    objects = objects_of(request, election_id)
    row = store.election(election_id)
    if row.phase != "closed":
        raise WrongPhase(f"election {election_id!r} is in phase {row.phase!r}; publish needs closed")
    decryptor = objects.decryptor(max(row.cast_count, 1))
    targets: dict[str, votum.EgDecryptionTarget] = {}
    tally = objects.tally_target()
    targets[tally.object_id] = tally
    spoiled = []
    for b in store.iter_ballots(election_id, "spoiled"):
        spoiled.append(b.ballot_id)
        targets[b.ballot_id] = votum.EgDecryptionTarget.from_ballot_json(
            store.entry(election_id, b.seq).text()
        )

    messages: dict[str, list[votum.EgShares]] = {t: [] for t in targets}
    for e in store.iter_entries(election_id, ["shares"]):
        s = votum.EgShares.from_json(e.text())
        messages[s.object_id].append(s)
    # guardian id -> sequence order, in sequence order
    orders = {d["guardian_id"]: d["sequence_order"] for d in map(json.loads, objects.records)}
    ids = list(orders)
    present = [
        g
        for g in ids
        if all(
            any(m.guardian_id == g and m.missing_guardian_id is None for m in messages[t]) for t in targets
        )
    ]
    if len(present) < row.quorum:
        raise Conflict(f"{len(present)} guardians posted shares of every target; the quorum is {row.quorum}")
    absent = set(ids) - set(present)

    def usable(t: str) -> list[votum.EgShares]:
        # present guardians' own shares, and their compensations for the absent (not for the present)
        return [
            m
            for m in messages[t]
            if m.guardian_id in present and (m.missing_guardian_id is None or m.missing_guardian_id in absent)
        ]

    plaintexts = {t: decryptor.decrypt(target, usable(t)) for t, target in targets.items()}
    counts = plaintexts[tally.object_id].counts
    present_orders = [orders[g] for g in present]
    coefficients = {
        g: votum.eg_to_hex(votum.lagrange_coefficient(EG, orders[g], present_orders).to_int())
        for g in present
    }
    with store.write(election_id) as tx:
        tx.require_phase("closed")
        for ballot_id in spoiled:
            tx.append(
                "spoiled_ballot",
                f"spoiled_ballots/spoiled_ballot_{ballot_id}.json",
                plaintexts[ballot_id].to_json().encode(),
            )
        tx.append("tally", "tally.json", plaintexts[tally.object_id].to_json().encode())
        tx.append("coefficients", "coefficients.json", payload_of({"coefficients": coefficients}))
        _phase_entry(tx, "published", {"present": present, "missing": sorted(absent), "counts": counts})
    return status_of(store.election(election_id), "1.0")


class Results(BaseModel):
    election_id: str
    #: votes per selection id
    counts: dict[str, int]
    present: list[str]
    missing: list[str]
    cast: int
    #: 1.0 spoiled and 2.1 challenged ballots
    spoiled: int
    #: 2.1 pre-encrypted ballots printed and not (yet) recorded: neither cast nor challenged (spec/80.11)
    printed: int = 0


@router.get("/{election_id}/results", response_model=Results)
def results(request: Request, election_id: str) -> dict[str, Any]:
    store = store_of(request)
    row = store.election(election_id)
    entry = store.entry_named(election_id, "phases/published.json")
    if entry is None:
        raise WrongPhase(f"election {election_id!r} is in phase {row.phase!r}; results come once published")
    doc = json.loads(entry.text())
    return {
        "election_id": election_id,
        "counts": doc["counts"],
        "present": doc["present"],
        "missing": doc["missing"],
        "cast": row.cast_count,
        "spoiled": row.spoiled_count,
        "printed": row.printed_count,
    }


@router.get(
    "/{election_id}/record",
    dependencies=[one_point_zero],
    response_class=StreamingResponse,
    responses={200: {"content": {"application/octet-stream": {}}, "description": "a votum record archive"}},
)
async def record(request: Request, election_id: str) -> StreamingResponse:
    """The election record (a votum archive, spec/70) exported from the board; `votum verify` reads it,
    and `votum record unpack` turns it into electionguard 1.4's directory layout. Exported once per
    board head and shared by every reader (`exports`); while ballots come in, an export up to
    `record_export_interval` seconds old is served. `X-Votum-Head` and `X-Votum-Head-Seq` name the head
    the archive covers."""
    store = store_of(request)
    exports = v1_state(request).record_exports
    row = await anyio.to_thread.run_sync(store.election, election_id)
    if row.phase == "ceremony":
        raise WrongPhase(f"election {election_id!r} has no record before it is opened")
    if not exports.downloads.acquire(blocking=False):
        raise ApiError(
            503,
            "busy",
            "as many record archives are being sent as this server allows (record_downloads); retry",
            headers={"Retry-After": "5"},
        )
    try:
        export = exports.cached(row)
        if export is None:
            # the export itself runs on the exports' own thread, never on the pool that takes ballots
            export = await asyncio.wrap_future(exports.pool.submit(exports.build, store, election_id))
    except BaseException:
        exports.downloads.release()
        raise
    return StreamingResponse(
        chunks(export, exports.downloads.release),
        media_type="application/octet-stream",
        headers={
            "Content-Length": str(export.size),
            "Content-Disposition": f'attachment; filename="{quote(election_id)}.votum"',
            "X-Votum-Head": export.head,
            "X-Votum-Head-Seq": str(export.head_seq),
        },
    )
