"""The six stateless endpoints of the ElectionGuard API in shared/seeds/000.

Each call carries everything it needs: the manifest is built from party and candidate names,
the election from its joint key and commitment hash, a guardian from its secret state. Nothing is
stored. Manifests, contexts, encryption devices (with their fixed-base tables), ballot verifiers
and decryptors are cached per election, so only the first call of an election pays for them.

Guardian secrets travel in these requests by the seed's design; `Settings.seed_endpoints = False`
turns the whole router off (every call then answers 403 `disabled`).
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any, TypeVar

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, Field

import votum
from votum.eg import encrypted_tally_json, manifest_from_names, plaintext_ballot, run_ceremony, selection_id
from votum.service.cache import LruCache
from votum.service.codec import AUTH_MARK, NegotiatedRoute
from votum.service.problems import ApiError
from votum.service.state import service_state

EG = votum.Group("eg-4096")
T = TypeVar("T")


_manifests = LruCache()
_elections = LruCache()
_decryptors = LruCache(8)


#: Headers a reverse proxy adds: a request that carries one came from beyond this machine, whatever
#: address it reached the server from.
PROXY_HEADERS = ("forwarded", "x-forwarded-for", "x-real-ip")


def not_through_a_proxy(request: Request) -> None:
    """On by default (a loopback server), the endpoints serve this machine's programs only: a request
    relayed by a reverse proxy on this machine is refused (docs/adr/0003), unless the operator turned
    the endpoints on explicitly. Headers only, so it runs before the body is read."""
    explicit = service_state(request).settings.seed_endpoints is not None
    if not explicit and any(h in request.headers for h in PROXY_HEADERS):
        raise ApiError(
            403,
            "disabled",
            "the stateless seed endpoints carry guardian secrets and are on by default only for "
            "programs on this machine; this request came through a proxy (turn them on explicitly "
            "with --seed-endpoints or VOTUM_SEED_ENDPOINTS=1, or off with VOTUM_SEED_ENDPOINTS=0)",
        )


setattr(not_through_a_proxy, AUTH_MARK, True)

router = APIRouter(
    tags=["seed endpoints (stateless)"],
    route_class=NegotiatedRoute,
    dependencies=[Depends(not_through_a_proxy)],
)

#: The six endpoints' paths.
PATHS = (
    "/setup_guardians",
    "/create_encrypted_ballot",
    "/create_encrypted_tally",
    "/create_partial_decryption",
    "/create_compensated_decryption",
    "/combine_decryption_shares",
)


def disabled_router() -> APIRouter:
    """What answers on the six paths when the endpoints are off: 403 at once, the body unread."""
    off = APIRouter(include_in_schema=False, route_class=NegotiatedRoute)

    def refuse() -> None:
        raise ApiError(
            403,
            "disabled",
            "the stateless seed endpoints are off: they carry guardian secrets, so they are on by "
            "default only for a server bound to a loopback address (turn them on with "
            "--seed-endpoints or VOTUM_SEED_ENDPOINTS=1)",
        )

    for path in PATHS:
        off.add_api_route(path, refuse, methods=["POST"])
    return off


# --- request and response documents -----------------------------------------------------------


class Names(BaseModel):
    party_names: list[str] = Field(max_length=256)
    candidate_names: list[str] = Field(min_length=1, max_length=256)


class SetupGuardiansRequest(Names):
    #: the whole ceremony runs inside one request (n·(n−1) backups sealed and checked), so n is
    #: kept small here; larger ceremonies go through the stateful API, one guardian at a time
    number_of_guardians: int = Field(ge=1, le=12)
    quorum: int = Field(ge=1, le=12)


class GuardianData(BaseModel):
    id: str
    sequence_order: int
    #: the guardian's public record (electionguard's GuardianRecord)
    election_public_key: dict[str, Any]
    #: backups this guardian sealed to each other guardian: receiver id -> sealed backup
    backups: dict[str, dict[str, Any]] = Field(default_factory=dict)


class PrivateKey(BaseModel):
    guardian_id: str
    #: the guardian's whole secret state (spec/63.6): whoever holds it is this guardian
    private_key: dict[str, Any]


class SetupGuardiansResponse(BaseModel):
    number_of_guardians: int
    quorum: int
    joint_public_key: str
    commitment_hash: str
    manifest: dict[str, Any]
    context: dict[str, Any]
    guardian_data: list[GuardianData]
    private_keys: list[PrivateKey]


class ElectionKey(Names):
    joint_public_key: str = Field(max_length=1100)
    commitment_hash: str = Field(max_length=70)
    number_of_guardians: int = Field(ge=1, le=32)
    quorum: int = Field(ge=1, le=32)


class EncryptBallotRequest(ElectionKey):
    ballot_id: str = Field(min_length=1, max_length=256)
    #: the candidate voted for; `None` for a blank ballot
    candidate_name: str | None = None
    #: the previous ballot code of this device (hex); the device's start hash when absent
    code_seed: str | None = Field(default=None, max_length=70)
    timestamp: int | None = Field(default=None, ge=0)
    state: str = Field(default="cast", pattern="^(cast|spoiled)$")


class EncryptBallotResponse(BaseModel):
    ballot_id: str
    ballot_code: str
    #: the ballot as electionguard's SubmittedBallot (no nonces)
    encrypted_ballot: dict[str, Any]


class TallyRequest(ElectionKey):
    encrypted_ballots: list[dict[str, Any]] = Field(max_length=10_000)


class TallyResponse(BaseModel):
    ciphertext_tally: dict[str, Any]
    cast: int
    spoiled: int
    #: the spoiled ballots, to be decrypted individually
    spoiled_ballots: list[dict[str, Any]]


class PartialDecryptionRequest(ElectionKey):
    guardian_id: str
    private_key: dict[str, Any]
    ciphertext_tally: dict[str, Any]
    spoiled_ballots: list[dict[str, Any]] = Field(default_factory=list, max_length=10_000)


class CompensatedDecryptionRequest(ElectionKey):
    available_guardian_id: str
    missing_guardian_id: str
    #: the available guardian's secret state
    private_key: dict[str, Any]
    missing_guardian_data: GuardianData
    ciphertext_tally: dict[str, Any]
    spoiled_ballots: list[dict[str, Any]] = Field(default_factory=list, max_length=10_000)


class SharesResponse(BaseModel):
    guardian_id: str
    missing_guardian_id: str | None
    #: share message (spec/64.7) for the tally
    tally_share: dict[str, Any]
    #: ballot id -> share message, for each spoiled ballot
    ballot_shares: dict[str, dict[str, Any]]


class CombineRequest(ElectionKey):
    guardian_data: list[GuardianData] = Field(min_length=1, max_length=32)
    ciphertext_tally: dict[str, Any]
    #: every present guardian's tally share and every compensated tally share
    tally_shares: list[dict[str, Any]] = Field(max_length=1024)
    spoiled_ballots: list[dict[str, Any]] = Field(default_factory=list, max_length=10_000)
    #: ballot id -> the same kinds of share messages for that spoiled ballot
    ballot_shares: dict[str, list[dict[str, Any]]] = Field(default_factory=dict)


class CandidateResult(BaseModel):
    votes: int


class CombineResponse(BaseModel):
    #: {"candidates": {candidate name: {"votes": n}}}, the seed's shape
    results: dict[str, dict[str, CandidateResult]]
    #: the plaintext tally (electionguard's PlaintextTally, with every share and proof)
    tally: dict[str, Any]
    #: ballot id -> plaintext of each spoiled ballot
    spoiled_ballots: dict[str, dict[str, Any]]


# --- per-election objects ----------------------------------------------------------------------


class _Names:
    def __init__(self, names: Names) -> None:
        self.candidates = list(names.candidate_names)
        self.document = manifest_from_names(list(names.party_names), self.candidates)
        self.manifest = votum.EgManifest.from_json(json.dumps(self.document))


def _names(body: Names) -> _Names:
    key = (tuple(body.party_names), tuple(body.candidate_names))
    return _manifests.get(key, lambda: _Names(body))


class _Election:
    def __init__(self, names: _Names, body: ElectionKey) -> None:
        self.names = names
        key = EG.element_from_int(votum.eg_from_hex(body.joint_public_key))
        commitment = EG.scalar(votum.eg_from_hex(body.commitment_hash))
        self.context = votum.EgContext.from_joint_key(
            names.manifest, body.number_of_guardians, body.quorum, key, commitment
        )
        self.q = self.context.extended_base_hash
        self._device: votum.EgEncryptionDevice | None = None
        self._verifier: votum.EgBallotVerifier | None = None
        self._lock = threading.Lock()

    @property
    def device(self) -> votum.EgEncryptionDevice:
        with self._lock:
            if self._device is None:
                self._device = votum.EgEncryptionDevice(
                    self.names.manifest, self.context.elgamal_public_key, self.q
                )
            return self._device

    @property
    def verifier(self) -> votum.EgBallotVerifier:
        with self._lock:
            if self._verifier is None:
                self._verifier = votum.EgBallotVerifier(
                    self.names.manifest, self.context.elgamal_public_key, self.q
                )
            return self._verifier


def _election(body: ElectionKey) -> _Election:
    names = _names(body)
    key = (
        tuple(body.party_names),
        tuple(body.candidate_names),
        body.joint_public_key.upper(),
        body.commitment_hash.upper(),
        body.number_of_guardians,
        body.quorum,
    )
    return _elections.get(key, lambda: _Election(names, body))


def _decryptor(election: _Election, records: list[str], max_count: int) -> votum.EgDecryptor:
    key = (election.q.to_bytes(), tuple(records), max_count)

    def make() -> votum.EgDecryptor:
        context = votum.EgContext(records, election.context.quorum, election.names.manifest)
        if context.to_json() != election.context.to_json():
            raise votum.VerificationFailed(
                "the guardian records do not give this election's joint key and commitment hash"
            )
        return votum.EgDecryptor(records, election.context.quorum, election.q, max_count)

    return _decryptors.get(key, make)


def _guardian(private_key: dict[str, Any], guardian_id: str, known: list[str]) -> votum.EgGuardian:
    guardian = votum.EgGuardian.from_secret_state(json.dumps(private_key).encode(), known)
    if guardian.guardian_id != guardian_id:
        raise votum.InvalidInput(
            f"the private key is guardian {guardian.guardian_id!r}'s, not {guardian_id!r}'s"
        )
    return guardian


def _targets(
    election: _Election, tally: dict[str, Any], spoiled: list[dict[str, Any]]
) -> tuple[votum.EgDecryptionTarget, list[votum.EgDecryptionTarget]]:
    target = votum.EgDecryptionTarget.from_tally_json(json.dumps(tally), election.names.manifest)
    ballots = [votum.EgDecryptionTarget.from_ballot_json(json.dumps(b)) for b in spoiled]
    return target, ballots


# --- the endpoints -----------------------------------------------------------------------------


@router.post("/setup_guardians", response_model=SetupGuardiansResponse)
def setup_guardians(body: SetupGuardiansRequest) -> dict[str, Any]:
    """Runs a whole key ceremony for the election named by its parties and candidates: every
    guardian's polynomial, Schnorr-proven commitments, backups sealed to each other guardian and
    checked by the receiver; returns the public data, the context and each guardian's secret state."""
    if body.quorum > body.number_of_guardians:
        raise votum.InvalidInput("quorum must not exceed the number of guardians")
    names = _names(body)
    ceremony = run_ceremony(names.manifest, body.number_of_guardians, body.quorum)
    context = json.loads(ceremony.context.to_json())
    return {
        "number_of_guardians": body.number_of_guardians,
        "quorum": body.quorum,
        "joint_public_key": context["elgamal_public_key"],
        "commitment_hash": context["commitment_hash"],
        "manifest": names.document,
        "context": context,
        "guardian_data": [
            {
                "id": g.guardian_id,
                "sequence_order": g.sequence_order,
                "election_public_key": json.loads(record),
                "backups": {r: json.loads(b) for r, b in ceremony.backups[g.guardian_id].items()},
            }
            for g, record in zip(ceremony.guardians, ceremony.records, strict=True)
        ],
        "private_keys": [
            {"guardian_id": g.guardian_id, "private_key": json.loads(g.expose_secret_state())}
            for g in ceremony.guardians
        ],
    }


@router.post("/create_encrypted_ballot", response_model=EncryptBallotResponse)
def create_encrypted_ballot(body: EncryptBallotRequest) -> dict[str, Any]:
    """Encrypts a ballot voting for one candidate (or none), with every proof."""
    election = _election(body)
    chosen: set[str] = set()
    if body.candidate_name is not None:
        if body.candidate_name not in election.names.candidates:
            raise votum.InvalidInput(f"unknown candidate {body.candidate_name!r}")
        chosen.add(selection_id(body.candidate_name))
    plaintext = plaintext_ballot(election.names.document, body.ballot_id, chosen)
    seed = (
        EG.scalar(votum.eg_from_hex(body.code_seed))
        if body.code_seed is not None
        else votum.eg_hash_elems(1, 1, 1, "votum-seed-endpoint")
    )
    timestamp = body.timestamp if body.timestamp is not None else int(time.time())
    ballot, code = election.device.encrypt(plaintext, seed, timestamp, None, body.state)
    return {
        "ballot_id": body.ballot_id,
        "ballot_code": votum.eg_to_hex(code.to_int()),
        "encrypted_ballot": json.loads(ballot),
    }


@router.post("/create_encrypted_tally", response_model=TallyResponse)
def create_encrypted_tally(body: TallyRequest) -> dict[str, Any]:
    """Checks every ballot of the chunk (in one batch) and sums the cast ones. One bad or
    repeated ballot refuses the whole chunk, naming it."""
    # the cheap refusal first: a repeated id is found before any proof is checked (1,000 copies of
    # one ballot cost seconds of CPU when the ids were compared after the proofs)
    seen: set[Any] = set()
    for b in body.encrypted_ballots:
        ballot_id = b.get("object_id")
        if not isinstance(ballot_id, str):
            raise votum.InvalidInput("every ballot needs an object_id")
        if ballot_id in seen:
            raise votum.DuplicateBallot(f"ballot {ballot_id!r} appears twice in this chunk")
        seen.add(ballot_id)
    election = _election(body)
    items = []
    for b in body.encrypted_ballots:
        state = "spoiled" if b.get("state") in (2, "SPOILED", "spoiled") else "cast"
        items.append((json.dumps(b), state))
    results = election.verifier.verify_many(items)
    accepted: list[tuple[votum.EgVerifiedBallot, str]] = []
    for r, (_, state) in zip(results, items, strict=True):
        if isinstance(r, Exception):
            raise r
        accepted.append((r, state))
    tally = votum.EgTally(election.names.manifest)
    tally.add_verified([b for b, state in accepted if state == "cast"])
    cast = sum(1 for _, state in accepted if state == "cast")
    return {
        "ciphertext_tally": encrypted_tally_json(
            election.names.document, election.names.manifest, tally.ciphertexts()
        ),
        "cast": cast,
        "spoiled": len(accepted) - cast,
        "spoiled_ballots": [json.loads(b.json) for b, state in accepted if state == "spoiled"],
    }


def _shares_response(guardian_id: str, missing: str | None, shares: list[votum.EgShares]) -> dict[str, Any]:
    tally, *ballots = shares
    return {
        "guardian_id": guardian_id,
        "missing_guardian_id": missing,
        "tally_share": json.loads(tally.to_json()),
        "ballot_shares": {s.object_id: json.loads(s.to_json()) for s in ballots},
    }


@router.post("/create_partial_decryption", response_model=SharesResponse)
def create_partial_decryption(body: PartialDecryptionRequest) -> dict[str, Any]:
    """One guardian's decryption shares, with Chaum–Pedersen proofs, of the tally and of each
    spoiled ballot."""
    election = _election(body)
    guardian = _guardian(body.private_key, body.guardian_id, [])
    target, ballots = _targets(election, body.ciphertext_tally, body.spoiled_ballots)
    shares = [guardian.decryption_shares(t, election.q) for t in [target, *ballots]]
    return _shares_response(body.guardian_id, None, shares)


@router.post("/create_compensated_decryption", response_model=SharesResponse)
def create_compensated_decryption(body: CompensatedDecryptionRequest) -> dict[str, Any]:
    """An available guardian's shares standing in for a missing one, from the backup it holds
    (checked against the missing guardian's commitments), proven against the recovery key."""
    election = _election(body)
    missing = body.missing_guardian_data
    if missing.id != body.missing_guardian_id:
        raise votum.InvalidInput("missing_guardian_data is not the missing guardian's")
    record = json.dumps(missing.election_public_key)
    guardian = _guardian(body.private_key, body.available_guardian_id, [record])
    target, ballots = _targets(election, body.ciphertext_tally, body.spoiled_ballots)
    shares = [guardian.compensated_shares(record, t, election.q) for t in [target, *ballots]]
    return _shares_response(body.available_guardian_id, body.missing_guardian_id, shares)


@router.post("/combine_decryption_shares", response_model=CombineResponse)
def combine_decryption_shares(request: Request, body: CombineRequest) -> dict[str, Any]:
    """Checks every share's proof and combines them (Lagrange over the present guardians for the
    missing ones) into counts per candidate, and decrypts each spoiled ballot the same way."""
    election = _election(body)
    records = [
        json.dumps(g.election_public_key) for g in sorted(body.guardian_data, key=lambda g: g.sequence_order)
    ]
    decryptor = _decryptor(election, records, service_state(request).settings.max_count)
    target, ballots = _targets(election, body.ciphertext_tally, body.spoiled_ballots)

    def shares_of(messages: list[dict[str, Any]], object_id: str) -> list[votum.EgShares]:
        out = [votum.EgShares.from_json(json.dumps(m)) for m in messages]
        for s in out:
            if s.object_id != object_id:
                raise votum.InvalidInput(f"a share for {s.object_id!r} was given for {object_id!r}")
        return out

    plaintext = decryptor.decrypt(target, shares_of(body.tally_shares, target.object_id))
    counts = plaintext.counts
    results = {name: {"votes": counts.get(selection_id(name), 0)} for name in election.names.candidates}
    spoiled = {}
    for b in ballots:
        messages = body.ballot_shares.get(b.object_id)
        if messages is None:
            raise votum.InvalidInput(f"no shares for spoiled ballot {b.object_id!r}")
        spoiled[b.object_id] = json.loads(decryptor.decrypt(b, shares_of(messages, b.object_id)).to_json())
    return {
        "results": {"candidates": results},
        "tally": json.loads(plaintext.to_json()),
        "spoiled_ballots": spoiled,
    }
