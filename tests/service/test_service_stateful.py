"""Stateful fuzzing of `/v1` (schemathesis, following the OpenAPI links of `service/v1/links.py`):
sequences of calls that create elections, post guardian records, open, submit, close, read the board
and so on, with the ids each response gives the next call. Whatever the sequence:

- no call answers 5xx, and every refusal is a typed problem document;
- a refused write changes nothing stored: the election's board head is the same after it as before;
- at the end of every scenario each election's board still chains from its genesis to its head.

Elections are created with a valid manifest (random manifests would all be refused, and the links
after creation would never be followed: the stateless test covers random bodies), with one guardian
`g1` whose valid record is posted when the fuzzer posts a record, so scenarios can open elections. Each
scenario's first election starts with that record already posted."""

from __future__ import annotations

import atexit
import functools
import hashlib
import itertools
import json
import shutil
import tempfile
import zlib
from collections import Counter
from pathlib import Path
from typing import Any

import msgpack  # type: ignore[import-untyped]
import pytest
import schemathesis
import votum
from hypothesis import HealthCheck, settings
from schemathesis.core.transport import Response
from starlette.testclient import TestClient
from votum.asgi import set_store
from votum.client import Client
from votum.client.election import check_board
from votum.election import synthetic_manifest
from votum.errors import NotFound
from votum.service import Settings, create_app
from votum.service.v1.common import Objects
from votum.service.v1.intake import Intake
from votum.service.v1.state import v1_state
from votum.store import Store

ADMIN = "stateful-admin-token-0123456789"
GUARDIAN = "stateful-guardian-token-0123456789"
DEVICE = "stateful-device-token-0123456789"
DIR = Path(tempfile.mkdtemp(prefix="votum-stateful-"))
atexit.register(shutil.rmtree, DIR, True)
STORE = Store(f"sqlite:///{DIR / 'votum.db'}")
APP = create_app(
    Settings(
        data_dir=DIR,
        tokens={ADMIN: "admin", GUARDIAN: "guardian:g1", DEVICE: "device"},
        max_body_bytes=1 << 20,
    ),
    STORE,
)
SCHEMA = schemathesis.openapi.from_asgi("/openapi.json", APP).include(path_regex="^/v1/")
MANIFEST = synthetic_manifest(1)
CLIENT = Client(http=TestClient(APP), token=ADMIN)
GUARDIAN_CLIENT = Client(http=TestClient(APP), token=GUARDIAN)
_ids = itertools.count()
#: (method, path, status) of every call the scenarios made
SEEN: Counter[tuple[str, str, int]] = Counter()


@functools.cache
def _record(election_id: str) -> dict[str, Any]:
    """Guardian g1's record for one election (a guardian makes new keys for every election)."""
    seed = hashlib.sha256(election_id.encode()).digest()
    return json.loads(votum.EgGuardian("g1", 1, 1, 1, seed).public_record())


def _new_election() -> dict[str, Any]:
    return {"election_id": f"st{next(_ids)}", "manifest": MANIFEST, "number_of_guardians": 1, "quorum": 1}


def _head(election_id: Any) -> tuple[int, bytes] | None:
    if not isinstance(election_id, str):
        return None
    try:
        row = STORE.election(election_id)
    except NotFound:
        return None
    return row.head_seq, row.head_hash


_scenarios = itertools.count()


def _fresh_board() -> None:
    """A new, empty store behind the app, and election ids counted from 0 again. What a scenario draws
    depends on what the service answers (the links), so the answers must not depend on earlier scenarios:
    with one shared store, Hypothesis saw the same choices draw different values when it replayed a
    scenario (FlakyStrategyDefinition), and the test failed by chance."""
    global STORE, _ids
    STORE.close()
    STORE = Store(f"sqlite:///{DIR / f'votum-{next(_scenarios)}.db'}")
    set_store(APP, STORE)
    state = v1_state(APP)
    state.objects = Objects(STORE)
    state.intake = Intake(STORE, state.objects)
    _ids = itertools.count()


class V1Machine(SCHEMA.as_state_machine()):  # type: ignore[misc]
    def setup(self) -> None:
        _fresh_board()
        self.before: tuple[int, bytes] | None = None
        self.calls: Counter[tuple[str, str, int]] = Counter()
        # every scenario starts with one election of its own in phase ceremony, with g1's record posted, so
        # the first `open` aimed at it succeeds. Which calls Hypothesis draws is the same in every
        # standalone run but was seen to differ inside the full suite (a different sequence, no election
        # opened in 30 scenarios); with this election ready, reaching an opened election no longer depends on
        # drawing a record and an open for the same election in the right order.
        first = _new_election()
        CLIENT.call("POST", "/v1/elections", first)
        election_id = first["election_id"]
        GUARDIAN_CLIENT.call(
            "POST", f"/v1/elections/{election_id}/guardians/g1", {"record": _record(election_id)}
        )
        self.elections: set[str] = {election_id}

    def before_call(self, case: schemathesis.Case) -> None:
        path = case.operation.path
        params = case.path_parameters or {}
        if case.method == "POST" and path == "/v1/elections":
            case.body = _new_election()
        election_id = params.get("election_id")
        if self.elections and isinstance(election_id, str) and _head(election_id) is None:
            # a made-up id: most of the time, aim at one of the scenario's elections instead (chosen
            # from the made-up id, so Hypothesis replays the same call); the rest still probe 404s
            pick = zlib.crc32(election_id.encode())
            if pick % 4:
                params["election_id"] = sorted(self.elections)[pick % len(self.elections)]
        if "guardian_id" in params:
            params["guardian_id"] = "g1"  # the one guardian whose token the fuzzer holds
        if case.method == "POST" and path == "/v1/elections/{election_id}/guardians/{guardian_id}":
            case.body = {"record": _record(params["election_id"])}
        self.before = _head(params.get("election_id"))

    def get_call_kwargs(self, case: schemathesis.Case) -> dict[str, Any]:
        path = case.operation.path
        token = ADMIN
        if "{guardian_id}" in path:
            token = GUARDIAN
        elif path.endswith(("/devices", "/ballots", "/ballots/batch")) and case.method == "POST":
            token = DEVICE
        return {"headers": {"Authorization": f"Bearer {token}"}}

    def validate_response(self, response: Response, case: schemathesis.Case, **kwargs: Any) -> None:
        assert response.status_code < 500, response.text[:500]
        election_id = (case.path_parameters or {}).get("election_id")
        if response.status_code >= 400:
            kind = response.headers.get("content-type", [""])
            kind = kind[0] if isinstance(kind, list) else kind
            body = msgpack.unpackb(response.content) if "msgpack" in kind else json.loads(response.content)
            assert isinstance(body.get("type"), str) and body["status"] == response.status_code, body
            if case.method != "GET":
                assert _head(election_id) == self.before, (
                    f"a refused {case.method} {case.path} changed the board"
                )
        if isinstance(election_id, str) and _head(election_id) is not None:
            self.elections.add(election_id)
        if case.method == "POST" and case.operation.path == "/v1/elections" and response.status_code == 201:
            self.elections.add(case.body["election_id"])
        self.calls[(case.method, case.operation.path, response.status_code)] += 1

    def teardown(self) -> None:
        for election_id in sorted(self.elections):
            check_board(CLIENT, election_id)  # raises on a gap, a fork or a changed entry
        SEEN.update(self.calls)


@pytest.mark.timeout(900)
def test_v1_sequences_keep_the_board_whole() -> None:
    V1Machine.run(
        settings=settings(
            max_examples=30,
            stateful_step_count=8,
            deadline=None,
            derandomize=True,  # the same sequences every run: the depth asserted below cannot vary
            suppress_health_check=list(HealthCheck),
        )
    )
    # the links were followed past creation: a record was accepted and an election opened
    assert SEEN[("POST", "/v1/elections/{election_id}/guardians/{guardian_id}", 201)] > 0, SEEN
    assert SEEN[("POST", "/v1/elections/{election_id}/open", 200)] > 0, SEEN
    assert SEEN[("POST", "/v1/elections", 201)] > 0, SEEN


def test_the_schema_links_each_id_to_its_consumers() -> None:
    paths = APP.openapi()["paths"]
    created = paths["/v1/elections"]["post"]["responses"]["201"]["links"]
    targets = {link["operationId"]: link["parameters"] for link in created.values()}
    status = paths["/v1/elections/{election_id}"]["get"]["operationId"]
    assert targets[status] == {"election_id": "$response.body#/election_id"}
    # nothing is linked that the response cannot fill (a guardian id is not in an election's status)
    record = paths["/v1/elections/{election_id}/guardians/{guardian_id}"]["post"]["operationId"]
    assert record not in targets
    posted = paths["/v1/elections/{election_id}/guardians/{guardian_id}"]["post"]["responses"]["201"]["links"]
    shares = paths["/v1/elections/{election_id}/guardians/{guardian_id}/shares"]["post"]["operationId"]
    assert posted[shares]["parameters"]["guardian_id"] == "$request.path.guardian_id"
    head = paths["/v1/elections/{election_id}/board/head"]["get"]["responses"]["200"]["links"]
    entry = paths["/v1/elections/{election_id}/board/{seq}"]["get"]["operationId"]
    assert head[entry]["parameters"]["seq"] == "$response.body#/seq"
