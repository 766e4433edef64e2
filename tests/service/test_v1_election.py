"""The stateful election API (`/v1`, spec/80) through the ASGI app, on SQLite and on PostgreSQL: a whole
election to a verified record, the phases and who may act in each, the guardians' disputes and records.

Every refusal is checked three ways: the status, the problem document's `type`, and that nothing was
stored (the board's head and the database's rows are unchanged): `v1service.Service.refused`."""

from __future__ import annotations

import copy
import json
import threading
from pathlib import Path
from typing import Any

import pytest
import votum
from v1service import MANIFEST, Service, opened, service
from votum.client import Client, ServiceError
from votum.client.election import ElectionDriver, run_stateful_election
from votum.election import verify_record
from votum.store import Store


def test_full_election_record_verifies(
    service: Service, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from votum.store import export as record_export

    exported: list[tuple[Path, int, str]] = []
    real_export = record_export.export_record

    def export(store: Store, election_id: str, path: Path, upto: int | None = None) -> int:
        # made inside a directory of the server's own, never in the shared /tmp, on the exports'
        # own thread (not the pool that takes ballots)
        exported.append((path, path.parent.stat().st_mode & 0o7777, threading.current_thread().name))
        return real_export(store, election_id, path, upto)

    monkeypatch.setattr(record_export, "export_record", export)
    run = run_stateful_election(
        service.client,
        service.tokens,
        "full",
        MANIFEST,
        ballots=40,
        quorum=2,
        batch=16,
        spoil_rate=0.15,
        missing=1,
    )
    assert run.counts == run.expected and sum(run.counts.values()) > 0
    assert run.spoiled > 0
    status = service.client.get("/v1/elections/full")
    assert status["phase"] == "published"
    assert status["cast"] + status["spoiled"] == 40
    assert status["head"] == run.head
    # the record exported from the board passes the independent verifier
    archive = tmp_path / "full.votum"
    archive.write_bytes(service.client.get("/v1/elections/full/record"))
    assert verify_record(archive) == run.counts
    [(path, mode, thread)] = exported
    assert mode == 0o700 and thread.startswith("votum-record-export"), (mode, thread)
    assert not path.exists() and path.with_suffix(".votum").is_file(), "written aside, renamed into place"
    # a second reader of the same head gets the same bytes, and nothing is exported again
    again = service.http.get("/v1/elections/full/record")
    assert again.content == archive.read_bytes() and len(exported) == 1
    assert again.headers["x-votum-head"] == run.head["hash"]
    assert int(again.headers["x-votum-head-seq"]) == run.head["seq"]
    service.http.__exit__(None, None, None)  # the server stops: its exports go with it
    assert not path.parent.exists()
    service.http.__enter__()
    results = service.client.get("/v1/elections/full/results")
    assert results["missing"] == ["guardian-3"] and results["present"] == ["guardian-1", "guardian-2"]


def test_phases_and_roles(service: Service) -> None:
    c, tokens = service.client, service.tokens
    body = {"election_id": "p1", "manifest": MANIFEST, "number_of_guardians": 3, "quorum": 2}
    with pytest.raises(ServiceError) as info:
        c.post("/v1/elections", body, token=tokens.device)
    assert (info.value.status, info.value.type) == (403, "forbidden")
    assert service.rows()["elections"] == 0
    bad_quorum = {**body, "quorum": 4}
    with pytest.raises(ServiceError) as info:
        c.post("/v1/elections", bad_quorum, token=tokens.admin)
    assert info.value.status == 422 and service.rows()["elections"] == 0
    c.post("/v1/elections", body, token=tokens.admin)
    s = service
    s.refused("p1", lambda: c.post("/v1/elections", body, token=tokens.admin), 409, "conflict")
    # nothing but the ceremony before opening
    s.refused("p1", lambda: c.post("/v1/elections/p1/close", {}, token=tokens.admin), 409, "wrong_phase")
    s.refused("p1", lambda: c.post("/v1/elections/p1/open", {}, token=tokens.admin), 409, "conflict")
    s.refused(
        "p1",
        lambda: c.post(
            "/v1/elections/p1/devices",
            {"device_id": 1, "session_id": 1, "launch_code": 1, "location": "x"},
            token=tokens.device,
        ),
        409,
        "wrong_phase",
    )
    g1 = votum.EgGuardian("guardian-1", 1, 3, 2)
    record = json.loads(g1.public_record())
    # a guardian posts only as itself
    s.refused(
        "p1",
        lambda: c.post(
            "/v1/elections/p1/guardians/guardian-1", {"record": record}, token=tokens.guardians["guardian-2"]
        ),
        403,
        "forbidden",
    )
    # a forged commitment proof
    forged = copy.deepcopy(record)
    forged["election_proofs"][0]["response"] = votum.eg_to_hex(
        votum.eg_from_hex(forged["election_proofs"][0]["response"]) ^ 1
    )
    s.refused(
        "p1",
        lambda: c.post(
            "/v1/elections/p1/guardians/guardian-1", {"record": forged}, token=tokens.guardians["guardian-1"]
        ),
        422,
        "invalid_proof",
    )
    c.post("/v1/elections/p1/guardians/guardian-1", {"record": record}, token=tokens.guardians["guardian-1"])
    # the same record again is fine; another record for the same guardian is not
    c.post("/v1/elections/p1/guardians/guardian-1", {"record": record}, token=tokens.guardians["guardian-1"])
    other = json.loads(votum.EgGuardian("guardian-1", 1, 3, 2).public_record())
    s.refused(
        "p1",
        lambda: c.post(
            "/v1/elections/p1/guardians/guardian-1", {"record": other}, token=tokens.guardians["guardian-1"]
        ),
        409,
        "conflict",
    )
    # a second guardian may not take sequence order 1
    g2 = json.loads(votum.EgGuardian("guardian-2", 1, 3, 2).public_record())
    s.refused(
        "p1",
        lambda: c.post(
            "/v1/elections/p1/guardians/guardian-2", {"record": g2}, token=tokens.guardians["guardian-2"]
        ),
        409,
        "conflict",
    )
    # guardian-2 posting an exact copy of guardian-1's commitments and proofs (which verify: they do
    # not name the guardian) under its own id and order: refused, or the ceremony could never finish
    copied = {**copy.deepcopy(record), "guardian_id": "guardian-2", "sequence_order": 2}
    problem = s.refused(
        "p1",
        lambda: c.post(
            "/v1/elections/p1/guardians/guardian-2", {"record": copied}, token=tokens.guardians["guardian-2"]
        ),
        409,
        "conflict",
    )
    assert "repeat guardian 'guardian-1'" in str(problem)
    # its own record is taken
    own = json.loads(votum.EgGuardian("guardian-2", 2, 3, 2).public_record())
    c.post("/v1/elections/p1/guardians/guardian-2", {"record": own}, token=tokens.guardians["guardian-2"])
    # reads are open
    assert Client(http=service.http).get("/v1/elections/p1")["phase"] == "ceremony"


def test_disputed_backup_answered_in_public(service: Service) -> None:
    c, tokens = service.client, service.tokens
    c.post(
        "/v1/elections",
        {"election_id": "d1", "manifest": MANIFEST, "number_of_guardians": 2, "quorum": 2},
        token=tokens.admin,
    )
    g1, g2 = votum.EgGuardian("guardian-1", 1, 2, 2), votum.EgGuardian("guardian-2", 2, 2, 2)
    for g in (g1, g2):
        c.post(
            f"/v1/elections/d1/guardians/{g.guardian_id}",
            {"record": json.loads(g.public_record())},
            token=tokens.guardians[g.guardian_id],
        )
    r1, r2 = g1.public_record(), g2.public_record()
    c.post(
        "/v1/elections/d1/guardians/guardian-1/backups",
        {"backups": {"guardian-2": json.loads(g1.backup_for(r2))}},
        token=tokens.guardians["guardian-1"],
    )
    c.post(
        "/v1/elections/d1/guardians/guardian-2/backups",
        {"backups": {"guardian-1": json.loads(g2.backup_for(r1))}},
        token=tokens.guardians["guardian-2"],
    )
    c.post(
        "/v1/elections/d1/guardians/guardian-1/verifications",
        {"sender_id": "guardian-2", "verified": True},
        token=tokens.guardians["guardian-1"],
    )
    # guardian-2 disputes guardian-1's backup; the ceremony cannot open until it is answered
    c.post(
        "/v1/elections/d1/guardians/guardian-2/verifications",
        {"sender_id": "guardian-1", "verified": False},
        token=tokens.guardians["guardian-2"],
    )
    s = service
    err = s.refused("d1", lambda: c.post("/v1/elections/d1/open", {}, token=tokens.admin), 409, "conflict")
    assert "guardian-1→guardian-2" in err.detail
    answer = json.loads(g1.answer_challenge(r2))
    wrong = {**answer, "coordinate": votum.eg_to_hex(votum.eg_from_hex(answer["coordinate"]) + 1)}
    s.refused(
        "d1",
        lambda: c.post(
            "/v1/elections/d1/guardians/guardian-1/answers",
            {"receiver_id": "guardian-2", "answer": wrong},
            token=tokens.guardians["guardian-1"],
        ),
        422,
        "verification_failed",
    )
    c.post(
        "/v1/elections/d1/guardians/guardian-1/answers",
        {"receiver_id": "guardian-2", "answer": answer},
        token=tokens.guardians["guardian-1"],
    )
    assert c.post("/v1/elections/d1/open", {}, token=tokens.admin)["phase"] == "open"


def test_bad_shares_refused(opened: tuple[Service, ElectionDriver]) -> None:
    s, d = opened
    c, tokens = s.client, s.tokens
    d.submit(d.plan(3))
    c.post("/v1/elections/e1/close", {}, token=tokens.admin)
    q_ext = d.context.extended_base_hash  # type: ignore[union-attr]
    target = votum.EgDecryptionTarget.from_tally_json(
        c.get("/v1/elections/e1/board/by-name/encrypted_tally.json")["payload"], d.em
    )
    g1, g2 = d.guardians[0], d.guardians[1]
    good = json.loads(g1.decryption_shares(target, q_ext).to_json())
    tampered = copy.deepcopy(good)
    tampered["shares"][0]["share"] = tampered["shares"][1]["share"]

    def post(body: list[Any], who: str = "guardian-1") -> Any:
        url = f"/v1/elections/e1/guardians/{who}/shares"
        return lambda: c.post(url, {"shares": body}, token=tokens.guardians[who])

    s.refused("e1", post([good, tampered]), 422, "invalid_proof")
    s.refused(
        "e1", post([good], "guardian-2"), 422, "invalid_input"
    )  # guardian-1's shares posted by guardian-2
    s.refused(
        "e1", lambda: c.post("/v1/elections/e1/publish", {}, token=tokens.admin), 409, "conflict"
    )  # no shares yet
    c.post(
        "/v1/elections/e1/guardians/guardian-1/shares",
        {"shares": [good]},
        token=tokens.guardians["guardian-1"],
    )
    c.post(
        "/v1/elections/e1/guardians/guardian-2/shares",
        {"shares": [json.loads(g2.decryption_shares(target, q_ext).to_json())]},
        token=tokens.guardians["guardian-2"],
    )
    # guardian-3 is missing: nobody compensated for it yet, so publishing needs guardian-3 compensations
    s.refused("e1", lambda: c.post("/v1/elections/e1/publish", {}, token=tokens.admin), 422, "invalid_input")
    r3 = d.records["guardian-3"]
    for g in (g1, g2):
        c.post(
            f"/v1/elections/e1/guardians/{g.guardian_id}/shares",
            {"shares": [json.loads(g.compensated_shares(r3, target, q_ext).to_json())]},
            token=tokens.guardians[g.guardian_id],
        )
    c.post("/v1/elections/e1/publish", {}, token=tokens.admin)
    assert c.get("/v1/elections/e1/results")["counts"] == d.expected


def test_guardian_records_are_not_reused_across_elections(service: Service) -> None:
    """Same manifest, same guardian records: the extended base hash would be the same, and a ballot cast
    in one election would be valid in the other. The second election refuses a record already used."""
    c, tokens = service.client, service.tokens
    for election_id in ("first", "second"):
        c.post(
            "/v1/elections",
            {"election_id": election_id, "manifest": MANIFEST, "number_of_guardians": 3, "quorum": 2},
            token=tokens.admin,
        )
    record = json.loads(votum.EgGuardian("guardian-1", 1, 3, 2).public_record())
    token = tokens.guardians["guardian-1"]
    c.post("/v1/elections/first/guardians/guardian-1", {"record": record}, token=token)
    err = service.refused(
        "second",
        lambda: c.post("/v1/elections/second/guardians/guardian-1", {"record": record}, token=token),
        409,
        "conflict",
    )
    assert "already used in election 'first'" in err.detail
    # a fresh record is taken, and the first election's retry of its own record still answers
    fresh = json.loads(votum.EgGuardian("guardian-1", 1, 3, 2).public_record())
    c.post("/v1/elections/second/guardians/guardian-1", {"record": fresh}, token=token)
    c.post("/v1/elections/first/guardians/guardian-1", {"record": record}, token=token)
