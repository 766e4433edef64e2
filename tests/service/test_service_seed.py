"""The six stateless seed endpoints, through the ASGI app and against a real uvicorn on 127.0.0.1:
a whole chunked election in MessagePack and in JSON, and every kind of bad input answered with a
typed 4xx problem document."""

from __future__ import annotations

import copy
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import msgpack  # type: ignore[import-untyped]
import pytest
from fastapi.testclient import TestClient
from votum.client import Client, ServiceError, election_key
from votum.client.load import latency_rows, seed_election
from votum.service import Settings, create_app
from votum.service.local import start_server

TOKEN = "test-admin-token-0123456789"
PARTIES = ["party-1", "party-2"]
NAMES = ["alice", "bob", "carol", "dave"]


@pytest.fixture(scope="module")
def http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    with TestClient(
        create_app(
            Settings(
                data_dir=tmp_path_factory.mktemp("svc"),
                tokens={TOKEN: "admin"},
                max_body_bytes=8 * 1024 * 1024,
            )
        )
    ) as c:
        yield c


@pytest.fixture(scope="module")
def election(http: TestClient) -> dict[str, Any]:
    """One small election: setup, 4 ballots (one spoiled) and their tally."""
    client = Client(http=http)
    setup = client.setup_guardians(PARTIES, NAMES, 3, 2)
    key = election_key(setup, PARTIES, NAMES)
    ballots, code = [], None
    for i, (name, state) in enumerate(
        [("alice", "cast"), ("bob", "cast"), ("alice", "cast"), ("dave", "spoiled")]
    ):
        out = client.create_encrypted_ballot(
            key, ballot_id=f"b{i}", candidate_name=name, code_seed=code, state=state
        )
        code = out["ballot_code"]
        ballots.append(out["encrypted_ballot"])
    tally = client.create_encrypted_tally(key, ballots)
    return {"setup": setup, "key": key, "ballots": ballots, "tally": tally}


def problem(response: httpx.Response, status: int, kind: str) -> dict[str, Any]:
    assert response.status_code == status, response.content[:500]
    body = (
        response.json() if "json" in response.headers["content-type"] else msgpack.unpackb(response.content)
    )
    assert body["type"] == kind, body
    assert body["status"] == status and isinstance(body["detail"], str)
    return dict(body)


def test_a_chunked_election_decrypts_to_the_generated_votes_in_msgpack(http: TestClient) -> None:
    client = Client(http=http)
    run = seed_election(client, ballots=7, chunk=4, guardians=3, quorum=2, missing=1, spoil_rate=0.3, seed=5)
    assert run.chunks == 2 and sum(run.counts.values()) + run.spoiled == 7
    assert run.counts == run.expected and run.spoiled == run.spoiled_decrypted
    rows = {r[0]: r for r in latency_rows(run.latencies)}
    assert rows["/create_compensated_decryption"][1] == 2 * 2  # 2 chunks x 2 present x 1 missing


def test_the_same_in_json(http: TestClient) -> None:
    client = Client(http=http, use_msgpack=False)
    run = seed_election(client, ballots=3, chunk=3, guardians=2, quorum=2, missing=0, seed=6)
    assert run.counts == run.expected


def test_media_types_are_negotiated(http: TestClient, election: dict[str, Any]) -> None:
    body = {**election["key"], "ballot_id": "x", "candidate_name": "bob"}
    r = http.post("/create_encrypted_ballot", json=body, headers={"Accept": "application/msgpack"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/msgpack")
    assert msgpack.unpackb(r.content)["ballot_id"] == "x"
    r = http.post(
        "/create_encrypted_ballot",
        content=msgpack.packb(body),
        headers={"Content-Type": "application/msgpack", "Accept": "application/json"},
    )
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
    # without an Accept preference, a MessagePack request gets MessagePack back (the seed's clients)
    r = http.post(
        "/create_encrypted_ballot",
        content=msgpack.packb(body),
        headers={"Content-Type": "application/msgpack"},
    )
    assert r.headers["content-type"].startswith("application/msgpack")


def test_malformed_bodies_and_wrong_types(http: TestClient, election: dict[str, Any]) -> None:
    problem(
        http.post("/setup_guardians", content=b"\xc1\xff", headers={"Content-Type": "application/msgpack"}),
        400,
        "malformed_body",
    )
    problem(
        http.post("/setup_guardians", content=b"{not json", headers={"Content-Type": "application/json"}),
        400,
        "malformed_body",
    )
    body = problem(
        http.post("/setup_guardians", json={"party_names": "x", "candidate_names": [], "quorum": "two"}),
        422,
        "validation_error",
    )
    assert {tuple(e["loc"]) for e in body["errors"]} >= {("body", "quorum"), ("body", "number_of_guardians")}
    problem(
        http.post(
            "/setup_guardians",
            json={"party_names": [], "candidate_names": ["a", "a"], "number_of_guardians": 2, "quorum": 1},
        ),
        422,
        "invalid_input",
    )
    problem(
        http.post(
            "/setup_guardians",
            json={"party_names": [], "candidate_names": ["a"], "number_of_guardians": 2, "quorum": 3},
        ),
        422,
        "invalid_input",
    )
    key = election["key"]
    problem(
        http.post("/create_encrypted_ballot", json={**key, "ballot_id": "z", "candidate_name": "mallory"}),
        422,
        "invalid_input",
    )
    problem(
        http.post("/create_encrypted_ballot", json={**key, "ballot_id": "z", "joint_public_key": "0G"}),
        422,
        "invalid_input",
    )
    problem(http.get("/no/such/thing"), 404, "not_found")


def test_oversize_bodies_are_refused_before_reading(tmp_path: Path) -> None:
    with TestClient(
        create_app(Settings(data_dir=tmp_path, tokens={TOKEN: "admin"}, max_body_bytes=2048))
    ) as small:
        body = json.dumps(
            {"party_names": ["x" * 4000], "candidate_names": ["a"], "number_of_guardians": 1, "quorum": 1}
        )
        problem(
            small.post("/setup_guardians", content=body, headers={"Content-Type": "application/json"}),
            413,
            "body_too_large",
        )

        def stream() -> Iterator[bytes]:  # no Content-Length: counted as it arrives
            yield body[:1500].encode()
            yield body[1500:].encode()

        r = small.post("/setup_guardians", content=stream(), headers={"Content-Type": "application/json"})
        problem(r, 413, "body_too_large")


def test_bad_ballots_refuse_the_whole_chunk(http: TestClient, election: dict[str, Any]) -> None:
    key, ballots = election["key"], election["ballots"]
    tampered = copy.deepcopy(ballots[0])
    proof = tampered["contests"][0]["ballot_selections"][0]["proof"]
    proof["proof_zero_response"] = proof["proof_one_response"]
    body = problem(
        http.post("/create_encrypted_tally", json={**key, "encrypted_ballots": [ballots[1], tampered]}),
        422,
        "invalid_proof",
    )
    assert "b0" in body["detail"] or "selection" in body["detail"]
    problem(
        http.post("/create_encrypted_tally", json={**key, "encrypted_ballots": [ballots[1], ballots[1]]}),
        409,
        "duplicate_ballot",
    )
    # a repeated id is refused before any proof is checked: copies of a ballot with a bad proof are
    # a duplicate, not an invalid proof
    problem(
        http.post("/create_encrypted_tally", json={**key, "encrypted_ballots": [tampered] * 50}),
        409,
        "duplicate_ballot",
    )
    other = {**key, "candidate_names": ["alice", "bob", "carol", "erin"]}  # another election
    problem(
        http.post("/create_encrypted_tally", json={**other, "encrypted_ballots": [ballots[1]]}),
        422,
        "invalid_input",
    )
    restyled = copy.deepcopy(ballots[1])
    restyled["style_id"] = "style-9"
    problem(
        http.post("/create_encrypted_tally", json={**key, "encrypted_ballots": [restyled]}),
        422,
        "invalid_input",
    )


def _shares(
    client: Client, e: dict[str, Any], present: list[str], missing: list[str]
) -> list[dict[str, Any]]:
    private = {p["guardian_id"]: p["private_key"] for p in e["setup"]["private_keys"]}
    data = {g["id"]: g for g in e["setup"]["guardian_data"]}
    common = {"ciphertext_tally": e["tally"]["ciphertext_tally"], "spoiled_ballots": []}
    out = [
        client.create_partial_decryption(e["key"], guardian_id=g, private_key=private[g], **common)
        for g in present
    ]
    for m in missing:
        for g in present:
            out.append(
                client.create_compensated_decryption(
                    e["key"],
                    available_guardian_id=g,
                    missing_guardian_id=m,
                    private_key=private[g],
                    missing_guardian_data=data[m],
                    **common,
                )
            )
    return [a["tally_share"] for a in out]


def test_bad_keys_and_shares_are_refused_with_their_error(http: TestClient, election: dict[str, Any]) -> None:
    client = Client(http=http)
    e = election
    key, setup = e["key"], e["setup"]
    private = {p["guardian_id"]: p["private_key"] for p in setup["private_keys"]}
    common = {"ciphertext_tally": e["tally"]["ciphertext_tally"], "spoiled_ballots": []}
    # a private key given under another guardian's id
    with pytest.raises(ServiceError) as err:
        client.create_partial_decryption(
            key, guardian_id="guardian-2", private_key=private["guardian-1"], **common
        )
    assert err.value.status == 422 and err.value.type == "invalid_input"
    # a secret coefficient that does not match its commitment
    forged = copy.deepcopy(private["guardian-1"])
    forged["coefficients"][0] = "0A"
    with pytest.raises(ServiceError) as err:
        client.create_partial_decryption(key, guardian_id="guardian-1", private_key=forged, **common)
    assert err.value.status == 422
    # a backup not on the missing guardian's polynomial
    forged = copy.deepcopy(private["guardian-1"])
    forged["backups"]["guardian-3"] = "0B"
    missing = next(g for g in setup["guardian_data"] if g["id"] == "guardian-3")
    with pytest.raises(ServiceError) as err:
        client.create_compensated_decryption(
            key,
            available_guardian_id="guardian-1",
            missing_guardian_id="guardian-3",
            private_key=forged,
            missing_guardian_data=missing,
            **common,
        )
    assert err.value.status == 422 and err.value.type == "verification_failed"

    shares = _shares(client, e, ["guardian-1", "guardian-2"], ["guardian-3"])
    combine = {**key, "guardian_data": setup["guardian_data"], **common}
    result = client.combine_decryption_shares(
        key, guardian_data=setup["guardian_data"], tally_shares=shares, **common
    )
    assert result["results"]["candidates"] == {
        "alice": {"votes": 2},
        "bob": {"votes": 1},
        "carol": {"votes": 0},
        "dave": {"votes": 0},
    }
    # a tampered share
    bad = copy.deepcopy(shares)
    bad[0]["shares"][0]["proof"]["response"] = bad[0]["shares"][1]["proof"]["response"]
    problem(
        http.post("/combine_decryption_shares", json={**combine, "tally_shares": bad}), 422, "invalid_proof"
    )
    # a share from a guardian the election does not have
    bad = copy.deepcopy(shares)
    bad[0]["guardian_id"] = "guardian-9"
    problem(
        http.post("/combine_decryption_shares", json={**combine, "tally_shares": bad}),
        422,
        "invalid_input",
    )
    # below the quorum: one guardian alone, nobody compensating
    problem(
        http.post("/combine_decryption_shares", json={**combine, "tally_shares": shares[:1]}),
        422,
        "invalid_input",
    )
    # guardian records of another key ceremony (same names): not this election's joint key
    other = client.setup_guardians(PARTIES, NAMES, 3, 2)["guardian_data"]
    problem(
        http.post(
            "/combine_decryption_shares", json={**combine, "guardian_data": other, "tally_shares": shares}
        ),
        422,
        "verification_failed",
    )


def test_the_seed_endpoints_can_be_turned_off(tmp_path: Path) -> None:
    with TestClient(
        create_app(Settings(data_dir=tmp_path, tokens={TOKEN: "admin"}, seed_endpoints=False))
    ) as off:
        problem(
            off.post(
                "/setup_guardians",
                json={"party_names": [], "candidate_names": ["a"], "number_of_guardians": 1, "quorum": 1},
            ),
            403,
            "disabled",
        )
        assert off.get("/health").json()["status"] == "ok"


@pytest.mark.parametrize(
    "header",
    [("X-Forwarded-For", "203.0.113.7"), ("Forwarded", "for=203.0.113.7"), ("X-Real-IP", "203.0.113.7")],
)
def test_a_request_through_a_proxy_is_refused_unless_turned_on(
    tmp_path: Path, header: tuple[str, str]
) -> None:
    """Behind a reverse proxy on this machine every request arrives from loopback: on by default, the
    seed endpoints refuse a relayed request before reading its body (docs/adr/0003)."""
    body = {"party_names": ["p"], "candidate_names": ["a", "b"], "number_of_guardians": 1, "quorum": 1}
    with TestClient(create_app(Settings(data_dir=tmp_path / "auto", tokens={TOKEN: "admin"}))) as auto:
        problem(auto.post("/setup_guardians", json=body, headers=dict([header])), 403, "disabled")
        # a malformed body is not read either: the refusal comes first
        problem(
            auto.post(
                "/setup_guardians",
                content=b"{",
                headers={**dict([header]), "Content-Type": "application/json"},
            ),
            403,
            "disabled",
        )
        assert auto.post("/setup_guardians", json=body).status_code == 200
    settings = Settings(data_dir=tmp_path / "on", tokens={TOKEN: "admin"}, seed_endpoints=True)
    with TestClient(create_app(settings)) as on:
        assert on.post("/setup_guardians", json=body, headers=dict([header])).status_code == 200


def test_a_real_uvicorn_serves_an_election(tmp_path: Path) -> None:
    env = {**os.environ, "VOTUM_TOKENS": f"admin={TOKEN}"}
    options = ["--data-dir", str(tmp_path), "--log-level", "warning"]
    server, url = start_server(options, env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        with Client(url, timeout=60) as client:
            run = seed_election(client, ballots=3, chunk=2, guardians=2, quorum=1, missing=1, seed=7)
        assert run.counts == run.expected and run.chunks == 2
    finally:
        server.terminate()
        output = server.communicate(timeout=30)[0].decode(errors="replace")
    assert TOKEN not in output
