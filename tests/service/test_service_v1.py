"""The stateful election API (`/v1`, spec/80) through the ASGI app, on SQLite and on PostgreSQL.

Every refusal is checked three ways: the status, the problem document's `type`, and that nothing was
stored (the board's head and the database's rows are unchanged)."""

from __future__ import annotations

import copy
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgpack  # type: ignore[import-untyped]
import pytest
import votum
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from votum.client import Client, ServiceError
from votum.client.election import ElectionDriver, Tokens, check_board, run_stateful_election
from votum.eg import manifest_from_names, plaintext_ballot
from votum.election import verify_record
from votum.errors import VerificationFailed
from votum.service.app import create_app
from votum.service.settings import Settings
from votum.service.state import service_state
from votum.service.v1.state import v1_state
from votum.store import Store
from votum.store.schema import ballots, board, codes, elections

MANIFEST = manifest_from_names(["Party A", "Party B"], ["Alice", "Bob", "Carol", "Dave"])


class Service:
    def __init__(self, store: Store, tokens: Tokens, client: Client, http: TestClient) -> None:
        self.store = store
        self.tokens = tokens
        self.client = client
        self.http = http

    def rows(self) -> dict[str, int]:
        """Rows per table: a refused request must leave every count as it was."""
        with self.store.engine.connect() as conn:
            return {
                t.name: int(conn.execute(select(func.count()).select_from(t)).scalar_one())
                for t in (elections, board, ballots, codes)
            }

    def snapshot(self, election_id: str) -> tuple[dict[str, int], Any]:
        row = self.store.election(election_id)
        return self.rows(), (
            row.head_seq,
            row.head_hash,
            row.tally,
            row.cast_count,
            row.spoiled_count,
            row.phase,
        )

    def refused(self, election_id: str, call: Any, status: int, type_: str) -> ServiceError:
        before = self.snapshot(election_id)
        with pytest.raises(ServiceError) as info:
            call()
        assert (info.value.status, info.value.type) == (status, type_), info.value
        assert self.snapshot(election_id) == before, "a refused request changed what is stored"
        return info.value


@pytest.fixture
def service(store_url: str, tmp_path: Path) -> Iterator[Service]:
    tokens = Tokens.generate(3)
    store = Store(store_url)
    app = create_app(Settings(data_dir=tmp_path, tokens=tokens.settings_map()), store=store)
    with TestClient(app) as http:
        yield Service(store, tokens, Client(http=http), http)
    store.close()


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


@pytest.fixture
def opened(service: Service) -> tuple[Service, ElectionDriver]:
    driver = ElectionDriver(service.client, service.tokens, "e1", MANIFEST, quorum=2, seed=7)
    driver.ceremony()
    return service, driver


def test_ballots_refused_with_nothing_stored(opened: tuple[Service, ElectionDriver]) -> None:
    s, d = opened
    c, tokens = s.client, s.tokens
    plans = d.plan(4)
    first = d.submit(plans[:2])
    assert [r["ballot_id"] for r in first] == [p.ballot_id for p in plans[:2]]

    # resubmitting the same ballots is answered with the same receipts, and stores nothing
    before = s.snapshot("e1")
    assert d.submit(plans[:2]) == first
    assert s.snapshot("e1") == before
    assert c.get(f"/v1/elections/e1/ballots/{plans[0].ballot_id}") == first[0]

    def batch(*items: dict[str, Any], token: str | None = tokens.device) -> Any:
        body = {"ballots": [{"ballot": i, "state": "cast"} for i in items]}
        return lambda: c.post("/v1/elections/e1/ballots/batch", body, token=token)

    # a tampered proof refuses the whole batch (the good ballot with it)
    bad = copy.deepcopy(plans[3].ballot)
    proof = bad["contests"][0]["ballot_selections"][0]["proof"]
    proof["proof_zero_response"] = votum.eg_to_hex(votum.eg_from_hex(proof["proof_zero_response"]) ^ 1)
    s.refused("e1", batch(plans[2].ballot, bad), 422, "invalid_proof")
    # a different ballot under a recorded id
    selection = MANIFEST["contests"][0]["ballot_selections"][0]["object_id"]
    assert d.device is not None
    text, _code = d.device.encrypt(plaintext_ballot(MANIFEST, plans[0].ballot_id, {selection}), d.code, 1)
    other = json.loads(text)
    err = s.refused("e1", batch(other), 409, "duplicate_ballot")
    assert plans[0].ballot_id in err.detail
    # a ballot chained from a code already chained from: a fork of the device's chain
    fork = d.plan(1)[0]
    fork.ballot["code_seed"] = plans[0].ballot["code_seed"]
    s.refused("e1", batch(fork.ballot), 422, "verification_failed")  # its own code no longer matches
    # tokens and roles
    s.refused("e1", batch(plans[2].ballot, token=None), 401, "unauthorized")
    s.refused("e1", batch(plans[2].ballot, token="x" * 20), 401, "unauthorized")
    s.refused("e1", batch(plans[2].ballot, token=tokens.guardians["guardian-1"]), 403, "forbidden")
    # malformed bodies and wrong types
    for content, media in [(b"\xc1\x00", "application/msgpack"), (b"{not json", "application/json")]:
        before = s.snapshot("e1")
        r = s.http.post(
            "/v1/elections/e1/ballots/batch",
            content=content,
            headers={"Content-Type": media, "Authorization": f"Bearer {tokens.device}"},
        )
        assert r.status_code == 400 and _problem(r)["type"] == "malformed_body"
        assert s.snapshot("e1") == before
    s.refused(
        "e1",
        lambda: c.post("/v1/elections/e1/ballots", {"ballot": [1]}, token=tokens.device),
        422,
        "validation_error",
    )
    s.refused(
        "e1",
        lambda: c.post("/v1/elections/e1/ballots", {"ballot": {"object_id": "../x"}}, token=tokens.device),
        422,
        "invalid_input",
    )
    # unknown election
    with pytest.raises(ServiceError) as info:
        c.post(
            "/v1/elections/nope/ballots/batch",
            {"ballots": [{"ballot": plans[2].ballot}]},
            token=tokens.device,
        )
    assert (info.value.status, info.value.type) == (404, "not_found")
    # the good ballots still go in afterwards, and the chain continues
    d.submit(plans[2:3])
    assert check_board(c, "e1")["seq"] == s.store.election("e1").head_seq


def test_fork_of_a_device_chain_is_refused(opened: tuple[Service, ElectionDriver]) -> None:
    s, d = opened
    # registering the same device again answers with its hash and stores nothing
    before = s.snapshot("e1")
    assert d.register_device(1).to_int() == d.code.to_int()
    assert s.snapshot("e1") == before
    plans = d.plan(2)
    d.submit(plans[:1])
    # a second device session replays the same starting code: its ballot is honest but chains
    # from the code the first ballot already chained from
    d.code = votum.Group("eg-4096").scalar(votum.eg_from_hex(plans[0].ballot["code_seed"]))
    replay = d.plan(1)[0]
    body = {"ballots": [{"ballot": replay.ballot, "state": "cast"}]}
    err = s.refused(
        "e1",
        lambda: s.client.post("/v1/elections/e1/ballots/batch", body, token=s.tokens.device),
        409,
        "conflict",
    )
    assert "fork" in err.detail


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


def test_board_pages_and_tampered_copy(opened: tuple[Service, ElectionDriver]) -> None:
    s, d = opened
    c = s.client
    d.submit(d.plan(5))
    head = check_board(c, "e1", page=3)  # several pages
    assert head == c.get("/v1/elections/e1/board/head")
    entry = c.get("/v1/elections/e1/board/2")
    assert c.get(f"/v1/elections/e1/board/by-name/{entry['name']}") == entry
    with pytest.raises(ServiceError) as info:
        c.get(f"/v1/elections/e1/board/{head['seq'] + 1}")
    assert info.value.type == "not_found"
    # a copy with one changed payload does not re-link
    page = c.get("/v1/elections/e1/board?limit=1000")
    checker = votum.BoardChecker("e1")
    entries = page["entries"]
    entries[3]["payload"] = entries[3]["payload"].replace("1", "2", 1)
    with pytest.raises(VerificationFailed):
        for e in entries:
            checker.push(e["seq"], e["kind"], e["name"], e["payload"].encode(), bytes.fromhex(e["hash"]))
    # and a copy of another election's board does not check as this one's
    with pytest.raises(VerificationFailed):
        votum.BoardChecker("e2").push(
            0,
            entries[0]["kind"],
            entries[0]["name"],
            entries[0]["payload"].encode(),
            bytes.fromhex(entries[0]["hash"]),
        )
    # listing is available as MessagePack too
    r = s.http.get("/v1/elections/e1/board?limit=2&payloads=false", headers={"Accept": "application/msgpack"})
    listed = msgpack.unpackb(r.content)
    assert [e["seq"] for e in listed["entries"]] == [0, 1] and listed["entries"][0]["payload"] is None


def test_a_page_with_payloads_ends_at_the_page_size(opened: tuple[Service, ElectionDriver]) -> None:
    """Issue 43, item 2: `board?limit=1000` with payloads was one answer of 33 MB. A page now ends
    at the entry whose payload reaches `board_page_bytes`, whatever `limit` asks; without payloads
    `limit` alone decides; an auditor reading on from the last entry still checks the whole board."""
    s, d = opened
    c = s.client
    d.submit(d.plan(3))
    everything = c.get("/v1/elections/e1/board?limit=1000")["entries"]
    sizes = [len(e["payload"].encode()) for e in everything]
    state = service_state(s.http.app)  # type: ignore[attr-defined]
    settings = state.settings
    state.settings = settings.model_copy(update={"board_page_bytes": sizes[0] + sizes[1]})
    page = c.get("/v1/elections/e1/board?limit=1000")["entries"]
    assert [e["seq"] for e in page] == [0, 1]
    state.settings = settings.model_copy(update={"board_page_bytes": 1})
    assert [e["seq"] for e in c.get("/v1/elections/e1/board?after=2&limit=1000")["entries"]] == [3]
    listed = c.get("/v1/elections/e1/board?limit=1000&payloads=false")["entries"]
    assert len(listed) == len(everything)
    assert check_board(c, "e1", page=1000) == c.get("/v1/elections/e1/board/head")


def test_a_device_token_cannot_take_a_named_devices_ids_first(store_url: str, tmp_path: Path) -> None:
    """Issue 43, item 15: another device token could take a device id or a ballot id first, and the
    real device's ballots then got 409. A named device token (`device:<name>`) owns every ballot id and
    device location that starts with its name and "-", and its devices are posted under its name: the
    other tokens' attempts are 403 with nothing stored, and the named device's own go through."""
    tokens = Tokens.generate(3)
    poll1, poll2 = "P1" * 16, "P2" * 16
    roles = {**tokens.settings_map(), poll1: "device:poll1", poll2: "device:poll2"}
    store = Store(store_url)
    app = create_app(Settings(data_dir=tmp_path, tokens=roles), store=store)
    with TestClient(app) as http:
        c = Client(http=http, token=tokens.admin)
        d = ElectionDriver(c, tokens, "scoped", MANIFEST, quorum=2, seed=3)
        d.ceremony()
        # the same device id and parameters under another name each: two devices, not one taken
        seed2 = d.register_device(7, poll2, "poll2-booth")
        seed1 = d.register_device(7, poll1, "poll1-booth")
        assert seed1 != seed2
        before = store.election("scoped").head_seq
        for token, location in ((poll2, "poll1-booth"), (tokens.device, "poll1-x"), (poll1, "elsewhere")):
            with pytest.raises(ServiceError) as info:
                d.register_device(8, token, location)
            assert info.value.status == 403
        d.ballot_prefix = "poll1-"
        plans, _ = d.plan_chain(2, seed1)
        for token in (poll2, tokens.device):  # the squatters
            with pytest.raises(ServiceError) as info:
                d.submit(plans[:1], token)
            assert info.value.status == 403
        assert store.election("scoped").head_seq == before
        assert [r["ballot_id"] for r in d.submit(plans, poll1)] == [p.ballot_id for p in plans]
        d.ballot_prefix = "ballot-"
        with pytest.raises(ServiceError) as info:
            d.submit(d.plan(1), poll1)  # its own ballots need its prefix
        assert info.value.status == 403
    store.close()


def test_store_writes_are_atomic(store_url: str) -> None:
    store = Store(store_url)
    with store.create("a1", 1, 1) as tx:
        tx.append("election", "election.json", b"{}")
    before = store.election("a1")
    with pytest.raises(RuntimeError), store.write("a1") as tx:
        tx.append("x", "one.json", b"{}")
        tx.set(cast_count=5)
        raise RuntimeError("fails after appending")
    assert store.election("a1") == before
    assert [e.seq for e in store.entries("a1")] == [0]
    # concurrent writers never leave a gap or a fork in the chain
    import threading

    def writer(k: int) -> None:
        for i in range(10):
            with store.write("a1") as tx:
                tx.append("x", f"w{k}/{i}.json", json.dumps({"k": k, "i": i}).encode())

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    checker = votum.BoardChecker("a1")
    for e in store.iter_entries("a1", page=7):
        checker.push(e.seq, e.kind, e.name, e.payload or b"", e.hash)
    assert len(checker) == 41 and checker.head == store.election("a1").head_hash
    # reopening runs no migration twice
    again = Store(store_url)
    assert again.migrations_applied == []
    again.close()
    store.close()


def test_servers_starting_at_once_migrate_once(store_url: str) -> None:
    """Several servers opening one fresh database at the same moment: exactly one applies the migrations,
    the others wait for it and find nothing to do (spec/80.3)."""
    import threading

    from votum.store.schema import LATEST, schema_version

    start = threading.Barrier(4)
    applied: list[list[int]] = []
    failures: list[BaseException] = []

    def open_store() -> None:
        start.wait(timeout=30)
        try:
            store = Store(store_url)
        except BaseException as e:  # collected and asserted on below
            failures.append(e)
            return
        applied.append(store.migrations_applied)
        store.close()

    threads = [threading.Thread(target=open_store) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not failures, failures
    assert sorted(applied) == [[], [], [], list(range(1, LATEST + 1))]
    store = Store(store_url)
    with store.engine.connect() as conn:
        versions = conn.execute(select(schema_version.c.version)).scalars().all()
    assert sorted(versions) == list(range(1, LATEST + 1))
    store.close()


def _problem(response: Any) -> dict[str, Any]:
    body = (
        response.json()
        if "json" in response.headers.get("content-type", "")
        else msgpack.unpackb(response.content)
    )
    assert isinstance(body, dict)
    return body


def test_group_commit_answers_each_request_on_its_own(opened: tuple[Service, ElectionDriver]) -> None:
    """Requests stored as one group (what the intake does with concurrent submissions): a bad request
    fails alone, the others are stored together, and the tally counts exactly them."""
    from votum.service.auth import owner_of
    from votum.service.v1.intake import _prepare

    s, d = opened
    intake = v1_state(s.http.app).intake  # type: ignore[attr-defined]
    plans = d.plan(4)  # one device's chain: 0 → 1 → 2 → 3
    second, _ = d.plan_chain(2, d.register_device(2))  # another device's chain
    bad = copy.deepcopy(plans[3].ballot)
    proof = bad["contests"][0]["ballot_selections"][1]["proof"]
    proof["challenge"] = votum.eg_to_hex(votum.eg_from_hex(proof["challenge"]) ^ 1)
    replay, _ = d.plan_chain(
        1, votum.Group("eg-4096").scalar(votum.eg_from_hex(plans[0].ballot["code_seed"]))
    )

    def job(*ps: Any) -> Any:
        j = _prepare([(p.ballot, p.state) if hasattr(p, "ballot") else (p, "cast") for p in ps])
        j.owner = owner_of(s.tokens.device)  # as the route sets it from the bearer token
        return j

    jobs = [
        job(plans[0], plans[1]),
        job(bad),  # a tampered proof
        job(plans[2]),  # chained from a ballot of the same group
        job(*second),
        job(plans[0]),  # the same ballot again: the same receipt
        job(replay[0]),  # chained from the device hash plans[0] already used: a fork
    ]
    before = s.store.election("e1").head_seq
    intake.verify("e1", jobs)  # the group's one batch check: the bad proof fails its request alone
    intake.process("e1", jobs)
    outcomes = [j.future.exception() for j in jobs]
    assert [type(e).__name__ if e else None for e in outcomes] == [
        None,
        "InvalidProof",
        None,
        None,
        None,
        "Conflict",
    ]
    assert "fork" in str(outcomes[5])
    first = jobs[0].future.result()
    assert jobs[4].future.result() == first[:1]
    assert s.store.election("e1").head_seq == before + 5  # plans 0-2 and the second device's two
    d.count([plans[0], plans[1], plans[2], *second])
    assert check_board(s.client, "e1")["seq"] == before + 5
    # the rest of the first chain still goes in after the group, and the tally is exactly the stored votes
    d.submit(plans[3:])
    assert d.decrypt_and_publish(missing=1) == d.expected


def test_a_device_token_keeps_to_its_own_chain(store_url: str, tmp_path: Path) -> None:
    """Two device tokens: the second may neither register the first's device again nor chain onto the
    first's newest (public) code, which would make the first device's next ballot a fork."""
    import secrets

    tokens = Tokens.generate(3)
    intruder = secrets.token_urlsafe(24)
    store = Store(store_url)
    app = create_app(
        Settings(data_dir=tmp_path, tokens={**tokens.settings_map(), intruder: "device"}), store=store
    )
    with TestClient(app) as http:
        s = Service(store, tokens, Client(http=http), http)
        d = ElectionDriver(s.client, tokens, "e1", MANIFEST, quorum=2, seed=7)
        d.ceremony()
        first = d.plan(1)
        d.submit(first)
        device = {"device_id": 1, "session_id": 1, "launch_code": 1, "location": "votum-e1"}
        err = s.refused(
            "e1", lambda: s.client.post("/v1/elections/e1/devices", device, token=intruder), 409, "conflict"
        )
        assert "another device token" in err.detail
        # the intruder encrypts an honest ballot chained from the device's newest code
        stolen = d.plan(1)[0]
        body = {"ballots": [{"ballot": stolen.ballot, "state": "cast"}]}
        err = s.refused(
            "e1",
            lambda: s.client.post("/v1/elections/e1/ballots/batch", body, token=intruder),
            409,
            "conflict",
        )
        assert "another device token" in err.detail
        # the device itself goes on with that very ballot, and its own device of its own token works
        d.submit([stolen])
        other = {**device, "device_id": 2}
        s.client.post("/v1/elections/e1/devices", other, token=intruder)
        d.submit(d.plan(2))
        assert check_board(s.client, "e1")["seq"] == store.election("e1").head_seq
    store.close()


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


def test_record_readers_share_one_export_while_ballots_come_in(
    opened: tuple[Service, ElectionDriver], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 43, item 1: every `GET …/record` used to export the whole record again, on the pool
    that takes ballots. Now readers share one export per head, and while the board moves an export
    younger than `record_export_interval` (30 s here) is served with the head it covers: 20 readers
    between ballots cost no export, and the ballots are all taken."""
    from votum.store import export as record_export

    s, d = opened
    exports: list[int | None] = []
    real_export = record_export.export_record

    def export(store: Store, election_id: str, path: Path, upto: int | None = None) -> int:
        exports.append(upto)
        return real_export(store, election_id, path, *([] if upto is None else [upto]))

    monkeypatch.setattr(record_export, "export_record", export)
    first = s.http.get("/v1/elections/e1/record")
    assert first.status_code == 200 and len(exports) == 1
    d.register_device(1)
    plans = d.plan(6)
    answers = []
    for plan in plans:
        d.submit([plan])
        answers += [s.http.get("/v1/elections/e1/record") for _ in range(20 // len(plans) + 1)]
    assert len(exports) == 1, f"{len(exports)} exports for {len(answers) + 1} readers"
    assert all(r.status_code == 200 and r.content == first.content for r in answers)
    seq = int(first.headers["x-votum-head-seq"])
    assert exports == [seq] and all(int(r.headers["x-votum-head-seq"]) == seq for r in answers)
    assert s.store.election("e1").cast_count == len(plans)
    # the export covers its head only: an archive of the entries up to `seq`
    assert s.store.election("e1").head_seq > seq


def test_record_downloads_beyond_the_limit_are_busy(opened: tuple[Service, ElectionDriver]) -> None:
    """At most `record_downloads` archives are sent at once (4 by default); one more reader is
    answered 503 `busy` with Retry-After, and is served once a slot is free."""
    s, _d = opened
    exports = v1_state(s.http.app).record_exports  # type: ignore[attr-defined]
    held = [exports.downloads.acquire(blocking=False) for _ in range(4)]
    assert all(held)
    try:
        r = s.http.get("/v1/elections/e1/record")
        assert r.status_code == 503 and r.json()["type"] == "busy" and r.headers["retry-after"] == "5"
    finally:
        for _ in held:
            exports.downloads.release()
    assert s.http.get("/v1/elections/e1/record").status_code == 200
    # every slot is back once the archives are sent
    assert all(exports.downloads.acquire(blocking=False) for _ in range(4))
    for _ in range(4):
        exports.downloads.release()


def test_plain_device_tokens_are_warned_of_at_start(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Issue 43, item 15, for plain `device` tokens: they keep one first-come space of ids (a named token
    owns its own), so the service says so when it starts with any, and names the way out; a service with
    named device tokens only says nothing."""
    import logging

    tokens = Tokens.generate(3)
    app = create_app
    with (
        caplog.at_level(logging.WARNING, "votum.service"),
        TestClient(app(Settings(data_dir=tmp_path / "a", tokens=tokens.settings_map()))),
    ):
        pass
    warned = [r.getMessage() for r in caplog.records if "plain device token" in r.getMessage()]
    assert len(warned) == 1 and "device:NAME" in warned[0], warned
    caplog.clear()
    named = {k: ("device:poll1" if v == "device" else v) for k, v in tokens.settings_map().items()}
    with (
        caplog.at_level(logging.WARNING, "votum.service"),
        TestClient(app(Settings(data_dir=tmp_path / "b", tokens=named))),
    ):
        pass
    assert not [r for r in caplog.records if "plain device token" in r.getMessage()]
