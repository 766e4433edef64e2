"""The `/v1` ballot intake (spec/80): refused ballots store nothing, each device keeps to its own chain, and
group commit answers each request on its own.

Every refusal is checked three ways: the status, the problem document's `type`, and that nothing was
stored (the board's head and the database's rows are unchanged): `v1service.Service.refused`."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import votum
from fastapi.testclient import TestClient
from v1service import MANIFEST, Service, opened, problem, service
from votum.client import Client, ServiceError
from votum.client.election import ElectionDriver, Tokens, check_board
from votum.eg import plaintext_ballot
from votum.service.app import create_app
from votum.service.settings import Settings
from votum.service.v1.state import v1_state
from votum.store import Store


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
        assert r.status_code == 400 and problem(r)["type"] == "malformed_body"
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
