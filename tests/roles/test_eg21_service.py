"""An ElectionGuard 2.1 election's key ceremony on the /v1 service (spec/80.11): the guardians' tools against
the service in this process, and what a lying service, a cheating guardian or a bad request gets."""

from __future__ import annotations

import itertools
import json
import os
import re
import secrets
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import votum
from fastapi.testclient import TestClient
from votum.client import Client, ServiceError
from votum.client.election import Tokens
from votum.client.official import Official
from votum.client.waiting import WaitedTooLong, Waiter
from votum.eg2 import Eg21RecordWriter, he_fingerprint
from votum.eg21_signing import JOINT_STATEMENT, KEY_STATEMENT, SHARE_STATEMENT, round_statement, statement
from votum.errors import Conflict, VerificationFailed
from votum.nodes import Keystore, keygen
from votum.nodes.identity import Identity
from votum.parties.device21 import Device21, Printer21, Recorder21
from votum.parties.guardian21 import GuardianTool21, state_path_21
from votum.service.app import create_app
from votum.service.settings import Settings
from votum.store import Store
from votum.verifier import verify
from votum.web.kiosk import create_kiosk_app
from votum.web.kiosk21 import Kiosk21

MANIFEST = json.loads((Path(__file__).parents[2] / "crates/votum-eg2/src/default_manifest.json").read_text())
N, K = 3, 2


class Election21:
    def __init__(self, http: TestClient, tokens: Tokens, tmp: Path, store: Store) -> None:
        self.http = http
        self.store = store
        self.tokens = tokens
        self.tmp = tmp
        self.admin = Client(http=http, token=tokens.admin, use_msgpack=False)
        self.identities = []
        for i in range(1, N + 1):
            home = tmp / f"guardian-{i}"
            keygen(home, f"guardian-{i}", "127.0.0.1:1", None)
            self.identities.append(Identity(home))
        self.tools = [self.tool(i) for i in range(1, N + 1)]
        self.other_device = ""

    def client(self, i: int) -> Client:
        return Client(http=self.http, token=self.tokens.guardians[f"guardian-{i}"], use_msgpack=False)

    def tool(self, i: int, election_id: str = "e") -> GuardianTool21:
        """Guardian i's tool; its keystore holds the other guardians' cards (`votum node peers add`)."""
        others = [x.card for j, x in enumerate(self.identities, 1) if j != i]
        return GuardianTool21(
            self.client(i),
            election_id,
            f"guardian-{i}",
            self.identities[i - 1],
            Waiter(60, 0.02),
            keystore=Keystore(others),
        )

    def join_all(self, tools: list[GuardianTool21] | None = None) -> list[BaseException]:
        errors: list[BaseException] = []

        def one(i: int, tool: GuardianTool21) -> None:
            try:
                tool.join(i, wait_open=False)
            except BaseException as e:
                errors.append(e)

        threads = [threading.Thread(target=one, args=(i, t)) for i, t in enumerate(tools or self.tools, 1)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        return errors

    def post_key_only(self, i: int) -> None:
        """Guardian i's tool posts its signed key record and nothing more."""
        tool = self.tools[i - 1]
        election = json.loads(tool._entry("election.json"))
        trustee = tool._trustee(i, "ceremony", election, tool._entry("manifest.json").encode())
        tool._post("keys", tool._signed_key(i, trustee.public_record()))

    def entries(self, prefix: str) -> dict[str, str]:
        return {e.name: e.text() for e in self.store.iter_entries("e") if e.name.startswith(prefix)}


def _create(
    admin: Client,
    election_id: str = "e",
    group: str = "p256",
    weights: dict[str, int] | None = None,
    manifest: dict[str, Any] | None = None,
) -> dict[str, Any]:
    body = {
        "election_id": election_id,
        "manifest": manifest or MANIFEST,
        "number_of_guardians": N,
        "quorum": K,
        "spec": "2.1",
        "group": group,
        **({"weights": weights} if weights else {}),
    }
    return dict(admin.post("/v1/elections", body))


@contextmanager
def _election(
    tmp_path: Path,
    url: str,
    weights: dict[str, int] | None = None,
    roles: dict[str, str] | None = None,
    manifest: dict[str, Any] | None = None,
) -> Iterator[Election21]:
    """An election on a service in this process; `roles` adds tokens (token -> role)."""
    tokens = Tokens.generate(N)
    other_device = secrets.token_urlsafe(24)
    store = Store(url)
    everyone = {**tokens.settings_map(), other_device: "device", **(roles or {})}
    app = create_app(Settings(data_dir=tmp_path, tokens=everyone), store=store)
    try:
        with TestClient(app) as http:
            e = Election21(http, tokens, tmp_path, store)
            e.other_device = other_device
            _create(e.admin, weights=weights, manifest=manifest)
            yield e
    finally:
        store.close()


@pytest.fixture
def election(tmp_path: Path) -> Iterator[Election21]:
    with _election(tmp_path, f"sqlite:///{tmp_path / 'votum.db'}") as e:
        yield e


@pytest.fixture
def election_on_each_store(tmp_path: Path, store_url: str) -> Iterator[Election21]:
    """As `election`, on SQLite and on PostgreSQL."""
    with _election(tmp_path, store_url) as e:
        yield e


def _problem(call: Any) -> tuple[int, str, str]:
    with pytest.raises(ServiceError) as caught:
        call()
    return caught.value.status, caught.value.type, caught.value.detail


def _kind(call: Any) -> tuple[int, str]:
    status, kind, _ = _problem(call)
    return status, kind


def test_a_2_1_ceremony_on_the_service_opens_on_what_every_guardian_computed(election: Election21) -> None:
    status = election.admin.get("/v1/elections/e")
    assert (status["spec"], status["phase"]) == ("2.1", "ceremony")
    official = Official(election.admin, "e", Waiter(60, 0.02))
    assert election.join_all() == []
    awaited = election.admin.get("/v1/elections/e/awaited")
    assert awaited["eg21"] == {"keys": 3, "shares": 6, "shares_total": 6, "complaints": 0, "joint": 3}
    assert official.open(wait=True)["phase"] == "open"
    guardians = election.admin.get("/v1/elections/e/board/by-name/guardians.json")["payload"]
    # every guardian's own document is on the board, signed, and equal to what opened the election
    joint = election.entries("eg21/joint/")
    assert len(joint) == 3
    for payload in joint.values():
        assert json.loads(json.loads(payload)["guardians"]) == json.loads(guardians)
    # a run after the opening remakes the same keys from the sealed seed and checks what opened
    fingerprints = {election.tools[i - 1].join(i).he_fingerprint for i in range(1, N + 1)}
    assert fingerprints == {official.joint_fingerprint()} == {he_fingerprint(guardians)}
    path = state_path_21(election.identities[0].home, "e")
    assert path.stat().st_mode & 0o777 == 0o600
    assert b"key_seed" not in path.read_bytes()  # sealed, not in the clear
    params = json.loads(election.admin.get("/v1/elections/e/board/by-name/parameters.json")["payload"])
    assert (params["group"], params["n"], params["k"]) == ("P-256", 3, 2)


def test_a_stopped_join_resumes_with_the_same_keys_and_posts_nothing_twice(
    election: Election21, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Guardian 1's tool stops after dealing; run again, it remakes the same keys from its sealed seed, its
    key record is taken as a retry, it deals nothing twice, and the ceremony finishes."""
    tool = election.tools[0]

    def stop(*args: Any) -> None:
        raise RuntimeError("stopped before receiving")

    monkeypatch.setattr(tool, "_receive", stop)
    errors = election.join_all()
    assert [str(e) for e in errors] == ["stopped before receiving"]
    first = election.entries("eg21/")
    assert len([n for n in first if n.startswith("eg21/shares/")]) == 6
    monkeypatch.undo()
    fresh = election.tool(1)
    fresh.join(1, wait_open=False)
    after = election.entries("eg21/")
    assert {n: p for n, p in after.items() if n in first} == first
    assert set(after) - set(first) == {"eg21/joint/1.json"}
    assert election.admin.post("/v1/elections/e/open", {})["phase"] == "open"


def test_a_guardian_deals_no_share_on_a_key_record_the_service_made(
    election: Election21, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A lying service shows guardian 1 a key record of its own making in guardian 2's place (made by a node
    that guardian 1 does not trust): guardian 1 stops before encrypting any share to it."""
    mallory_home = election.tmp / "mallory"
    keygen(mallory_home, "mallory", "127.0.0.1:1", None)
    mallory = Identity(mallory_home)
    manifest = json.dumps(MANIFEST, separators=(",", ":")).encode()
    forged = votum.Eg21Trustee("p256", manifest, N, K, 2).public_record()
    signed = {
        "guardian_id": "guardian-2",
        "i": 2,
        "record": forged,
        "signing_key": mallory.card.signing_key.hex(),
        "signature": mallory.sign_record(statement(KEY_STATEMENT, "e", 2, forged)).hex(),
    }
    tool = election.tools[0]
    real = tool._ceremony

    def lying(to: int | None = None) -> dict[str, Any]:
        out = real(to)
        if 2 in {int(j) for j in out["keys"]}:
            out["keys"] = {**out["keys"], "2": json.dumps(signed)}
        return out

    monkeypatch.setattr(tool, "_ceremony", lying)
    election.post_key_only(2)
    election.post_key_only(3)
    with pytest.raises(VerificationFailed, match="keystore"):
        tool.join(1, wait_open=False)
    assert not [name for name in election.entries("eg21/shares/") if name.startswith("eg21/shares/1/")]


def test_one_node_signs_for_one_guardian_only(election: Election21) -> None:
    """Two records signed by one node: the service refuses the second, and a guardian shown both (the
    service lying) refuses them before dealing."""
    manifest = json.dumps(MANIFEST, separators=(",", ":")).encode()
    node = election.identities[0]

    def post(i: int, client: Client) -> Any:
        record = votum.Eg21Trustee("p256", manifest, N, K, i).public_record()
        body = {
            "i": i,
            "record": record,
            "signing_key": node.card.signing_key.hex(),
            "signature": node.sign_record(statement(KEY_STATEMENT, "e", i, record)).hex(),
        }
        return client.post("/v1/elections/e/eg21/keys", body)

    post(1, election.client(1))
    assert _kind(lambda: post(2, election.client(2))) == (409, "conflict")
    # the same guardian id may not take a second index, nor another guardian id the first
    assert _kind(lambda: post(3, election.client(1))) == (409, "conflict")
    assert _kind(lambda: post(1, election.client(3))) == (409, "conflict")


def test_the_service_checks_what_anyone_can_and_changes_nothing_on_bad_input(election: Election21) -> None:
    manifest = json.dumps(MANIFEST, separators=(",", ":")).encode()
    node = election.identities[0]
    trustee = votum.Eg21Trustee("p256", manifest, N, K, 1)
    record = trustee.public_record()
    sign = node.sign_record(statement(KEY_STATEMENT, "e", 1, record)).hex()
    good = {"i": 1, "record": record, "signing_key": node.card.signing_key.hex(), "signature": sign}
    head = election.store.election("e").head_seq
    url = "/v1/elections/e/eg21/keys"
    c1 = election.client(1)
    # a signature on another index, a record whose proof fails, another guardian's index, not JSON
    assert _kind(lambda: c1.post(url, {**good, "i": 2})) == (422, "invalid_input")
    broken = json.loads(record)
    broken["proof_vote"]["c"] = broken["proof_data"]["c"]
    bad_record = json.dumps(broken)
    resigned = node.sign_record(statement(KEY_STATEMENT, "e", 1, bad_record)).hex()
    assert _kind(lambda: c1.post(url, {**good, "record": bad_record, "signature": resigned}))[0] == 422
    assert _kind(lambda: c1.post(url, {**good, "signature": "00" * 64})) == (422, "invalid_input")
    assert _kind(lambda: c1.post(url, {**good, "signing_key": "zz"})) == (422, "invalid_input")
    # a device or admin token is not a guardian's; shares before every key record are refused
    assert _kind(lambda: election.admin.post(url, good))[0] == 403
    assert election.store.election("e").head_seq == head
    c1.post(url, good)
    c1.post(url, good)  # a retry is answered with the same entry
    assert _kind(lambda: c1.post("/v1/elections/e/eg21/shares", {"shares": ["{}"]}))[0] == 422
    # the toy parameters are for tests: refused on the service
    body = {"election_id": "toy", "manifest": MANIFEST, "number_of_guardians": 3, "quorum": 2}
    assert (
        _kind(lambda: election.admin.post("/v1/elections", {**body, "spec": "2.1", "group": "eg2-toy"}))[0]
        == 422
    )
    assert (
        _kind(lambda: election.admin.post("/v1/elections", {**body, "spec": "2.1", "manifest": {}}))[0] == 422
    )


def test_shares_are_checked_and_a_bad_one_is_complained_of_and_stops_the_opening(
    election: Election21, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Guardian 3 cheats: its shares are made from other keys than its key record's. Each share's proof of
    its nonce holds (the service takes it), but the receivers find its values wrong against guardian 3's
    commitments, complain, and the election cannot open."""
    manifest = json.dumps(MANIFEST, separators=(",", ":")).encode()
    cheat = election.tools[2]
    other = votum.Eg21Trustee("p256", manifest, N, K, 3)

    def cheating_deal(trustee: Any, i: int, n: int) -> None:
        records = cheat._await_keys(n)
        other.agree([json.loads(records[j])["record"] for j in (1, 2)] + [other.public_record()])
        GuardianTool21._deal(cheat, other, i, n)

    monkeypatch.setattr(cheat, "_deal", cheating_deal)
    errors = election.join_all()
    named = [e for e in errors if isinstance(e, VerificationFailed) and "guardian 3's share" in str(e)]
    assert len(named) == 2, errors
    complaints = election.entries("eg21/complaints/")
    assert set(complaints) == {"eg21/complaints/1/3.json", "eg21/complaints/2/3.json"}
    # each complaint stands on its opening: the service opened the share and found it bad itself
    for text in complaints.values():
        assert "eq. 28" in json.loads(text)["fault"]
    # a retry of a complaint (its opening's proof drawn afresh) is answered with the first
    tool = election.tools[0]
    trustee = tool._trustee(
        1, "ceremony", json.loads(tool._entry("election.json")), tool._entry("manifest.json").encode()
    )
    keys = election.entries("eg21/keys/")
    trustee.agree([json.loads(keys[f"eg21/keys/{j}.json"])["record"] for j in (1, 2, 3)])
    dealt = json.loads(election.entries("eg21/shares/3/1.json")["eg21/shares/3/1.json"])["share"]
    opening = trustee.open_share(3, dealt.encode())
    first = election.store.entry_named("e", "eg21/complaints/1/3.json")
    again = election.client(1).post(
        "/v1/elections/e/eg21/complaints", {"dealer": 3, "reason": "again", "opening": opening}
    )
    assert again["entries"][0]["seq"] == first.seq
    # a share with its proof broken is refused by the service itself
    share = json.loads(json.loads(election.entries("eg21/shares/3/1.json")["eg21/shares/3/1.json"])["share"])
    share["C1"] = "00" * 64
    text = json.dumps(share)
    signed = election.identities[2].sign_record(statement(SHARE_STATEMENT, "e", 3, text)).hex()
    url = "/v1/elections/e/eg21/shares"
    status, kind, detail = _problem(
        lambda: election.client(3).post(url, {"shares": [text], "signatures": [signed]})
    )
    assert status == 422 and "eq. 22" in detail, detail
    # a share that is not signed by its dealer's node is refused too
    good = election.entries("eg21/shares/3/1.json")["eg21/shares/3/1.json"]
    other = election.identities[0].sign_record(statement(SHARE_STATEMENT, "e", 3, json.loads(good)["share"]))
    body = {"shares": [json.loads(good)["share"]], "signatures": [other.hex()]}
    assert _kind(lambda: election.client(3).post(url, body)) == (422, "invalid_input")
    # the two honest guardians posted no document; give them one each to see the complaints stop the opening
    status, kind, detail = _problem(lambda: election.admin.post("/v1/elections/e/open", {}))
    assert (status, kind) == (409, "conflict") and "complained" in detail
    assert election.store.election("e").phase == "ceremony"


def test_a_share_the_service_made_up_is_refused_and_never_complained_of(
    election: Election21, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The service shows guardian 1 a share in guardian 3's name that guardian 3 never dealt (one of its own
    making, which guardian 1 would find bad): guardian 1 finds that guardian 3's node did not sign it and
    stops without complaining, so the service cannot have an honest dealer blamed."""
    tool = election.tools[0]
    real = tool._ceremony
    manifest = json.dumps(MANIFEST, separators=(",", ":")).encode()
    made_up = votum.Eg21Trustee("p256", manifest, N, K, 3)
    forged: list[str] = []

    def lying(to: int | None = None) -> dict[str, Any]:
        doc = real(to)
        if to == 1 and "3" in doc["to"]:
            if not forged:
                records = [json.loads(real()["keys"][str(j)])["record"] for j in (1, 2)]
                made_up.agree([*records, made_up.public_record()])
                share = made_up.share_for(1).decode()
                forged.append(json.dumps({"share": share, "signature": "00" * 64}))
            doc["to"]["3"] = forged[0]
        return doc

    monkeypatch.setattr(tool, "_ceremony", lying)
    errors = election.join_all()
    assert any(isinstance(e, VerificationFailed) and "did not sign" in str(e) for e in errors), errors
    assert not election.entries("eg21/complaints/")


def test_a_false_complaint_is_refused_and_the_election_opens(election: Election21) -> None:
    """Guardian 1 complains of guardian 2's share, which is good, and opens it as a complaint must: the
    service decrypts it with the opening, finds the values match guardian 2's commitments and refuses the
    complaint. Without this one guardian could stop any election with a false complaint. An opening not made
    with guardian 1's ζ for that share, or none at all, is refused too, and nothing is stored."""
    assert election.join_all() == []
    tool = election.tools[0]
    trustee = tool._trustee(
        1, "ceremony", json.loads(tool._entry("election.json")), tool._entry("manifest.json").encode()
    )
    keys = election.entries("eg21/keys/")
    trustee.agree([json.loads(keys[f"eg21/keys/{j}.json"])["record"] for j in (1, 2, 3)])
    shares = {name: json.loads(text)["share"] for name, text in election.entries("eg21/shares/").items()}
    opening = trustee.open_share(2, shares["eg21/shares/2/1.json"].encode())
    head = election.store.election("e").head_seq
    url = "/v1/elections/e/eg21/complaints"

    def complain(opening: str) -> tuple[int, str, str]:
        return _problem(
            lambda: election.client(1).post(url, {"dealer": 2, "reason": "no", "opening": opening})
        )

    status, kind, detail = complain(opening)
    assert (status, kind) == (422, "invalid_proof") and "the complaint is false" in detail, detail
    # the opening of guardian 3's share handed in for guardian 2's
    status, kind, detail = complain(trustee.open_share(3, shares["eg21/shares/3/1.json"].encode()))
    assert (status, kind) == (422, "invalid_proof") and "does not verify" in detail, detail
    assert complain("{}")[:2] == (422, "invalid_input")
    # guardian 1 cannot open a share that is not addressed to it
    with pytest.raises(votum.InvalidProof):
        trustee.open_share(2, shares["eg21/shares/2/3.json"].encode())
    assert election.store.election("e").head_seq == head
    assert election.admin.post("/v1/elections/e/open", {})["phase"] == "open"


def test_a_guardians_document_other_than_the_records_make_is_refused(
    election: Election21, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Guardian 1 posts, signed, a guardians' document with another H_E than the key records make: refused,
    and nothing of it is stored."""
    tool = election.tools[0]
    node = election.identities[0]
    post = tool._post

    def altered(path: str, body: Any) -> Any:
        if path == "joint":
            doc = json.loads(body["guardians"])
            doc["H_E"] = "00" * 32
            text = json.dumps(doc)
            body = {
                "guardians": text,
                "signature": node.sign_record(statement(JOINT_STATEMENT, "e", 1, text)).hex(),
            }
        return post(path, body)

    monkeypatch.setattr(tool, "_post", altered)
    errors = election.join_all()
    assert [(e.status, e.type) for e in errors if isinstance(e, ServiceError)] == [(409, "conflict")], errors
    assert set(election.entries("eg21/joint/")) == {"eg21/joint/2.json", "eg21/joint/3.json"}
    assert _kind(lambda: election.admin.post("/v1/elections/e/open", {})) == (409, "conflict")


def test_the_1_0_routes_refuse_a_2_1_election_and_the_2_1_routes_a_1_0_one(election: Election21) -> None:
    admin = election.admin
    g1 = election.client(1)
    calls = [
        lambda: g1.post("/v1/elections/e/guardians/guardian-1", {"record": {}}),
        lambda: admin.post("/v1/elections/e/ballots", {"ballot": {}, "state": "cast"}),
        lambda: admin.get("/v1/elections/e/record"),
    ]
    for call in calls:
        assert _kind(call) == (409, "wrong_spec")
    for phased in (
        lambda: admin.post("/v1/elections/e/close", {}),
        lambda: admin.post("/v1/elections/e/publish", {}),
        lambda: admin.get("/v1/elections/e/results"),
    ):
        assert _kind(phased) == (409, "wrong_phase")
    manifest_10 = votum.eg.manifest_from_names(["P"], ["Ann", "Ben"])
    admin.post(
        "/v1/elections",
        {"election_id": "old", "manifest": manifest_10, "number_of_guardians": 3, "quorum": 2},
    )
    assert admin.get("/v1/elections/old")["spec"] == "1.0"
    assert _kind(lambda: admin.get("/v1/elections/old/eg21")) == (409, "wrong_spec")
    complaint = {"dealer": 2, "reason": "x", "opening": "{}"}
    assert _kind(lambda: g1.post("/v1/elections/old/eg21/complaints", complaint)) == (409, "wrong_spec")
    # the pages list both elections and show neither with an error
    for path in ("/", "/elections/e", "/elections/old"):
        response = election.http.get(path)
        assert response.status_code < 500, (path, response.status_code)


def test_a_guardians_key_is_refused_in_a_second_election(election: Election21) -> None:
    assert election.join_all() == []
    _create(election.admin, "again")
    node = election.identities[0]
    record = json.loads(election.entries("eg21/keys/1.json")["eg21/keys/1.json"])["record"]
    body = {
        "i": 1,
        "record": record,
        "signing_key": node.card.signing_key.hex(),
        "signature": node.sign_record(statement(KEY_STATEMENT, "again", 1, record)).hex(),
    }
    assert _kind(lambda: election.client(1).post("/v1/elections/again/eg21/keys", body)) == (409, "conflict")


# -- ballots (spec/80.11) ------------------------------------------------------------------------------------


def _open(election: Election21) -> str:
    """The ceremony run and the election opened; its H_E fingerprint."""
    assert election.join_all() == []
    election.admin.post("/v1/elections/e/open", {})
    return he_fingerprint(election.admin.get("/v1/elections/e/board/by-name/guardians.json")["payload"])


def _device(election: Election21, name: str, he: str, simple: bool = False) -> Device21:
    client = Client(http=election.http, token=election.tokens.device, use_msgpack=False)
    device = Device21(client, "e", name, he, simple)
    device.start()
    return device


def _plain(i: int) -> dict[str, Any]:
    mayor = [0, 0, 0]
    mayor[i % 3] = 1
    council = [0, 0, 0, 0]
    council[i % 4] = 1
    return {
        "id": f"b-{i}",
        "style": "ward-1-style",
        "contests": {"mayor": {"votes": mayor}, "council": {"votes": council}},
    }


def _record(election: Election21, out: Path) -> Path:
    """The closed election's record as far as its ballots, exported from the board."""
    out.mkdir()
    for name in ("parameters.json", "manifest.json", "guardians.json", "devices.json"):
        (out / name).write_bytes(election.store.entry_named("e", name).payload or b"")
    lines = [e.text() for e in election.store.iter_entries("e", ["eg21_ballot"])]
    (out / "ballots.jsonl").write_text("".join(line + "\n" for line in lines))
    return out


def _decrypting_trustee(election: Election21, i: int) -> votum.Eg21Trustee:
    """Guardian i's trustee, remade from its sealed seed and the board: what its decryption will use."""
    tool = election.tool(i)
    doc = json.loads(tool._entry("election.json"))
    trustee = tool._trustee(i, "open", doc, tool._entry("manifest.json").encode())
    keys = tool._ceremony()["keys"]
    trustee.agree([json.loads(keys[str(j)])["record"] for j in range(1, N + 1)])
    for dealer, share in tool._ceremony(to=i)["to"].items():
        trustee.receive(int(dealer), json.loads(share)["share"].encode())
    trustee.joint()
    return trustee


def test_2_1_ballots_on_the_service_make_a_record_the_guardians_accept(
    election: Election21, tmp_path: Path
) -> None:
    he = _open(election)
    plain_device = _device(election, "station-1", he)
    chained = _device(election, "station-2", he, simple=True)
    receipts = []
    for i in range(1, 7):
        device = plain_device if i % 2 else chained
        receipts.append(device.cast(_plain(i), "challenged" if i == 5 else "cast"))
    assert [r.state for r in receipts].count("challenged") == 1
    # a retry of a ballot already stored is answered with its receipt; nothing is appended
    head = election.store.election("e").head_seq
    ballot = election.entries("eg21/ballots/b-1.json")["eg21/ballots/b-1.json"]
    again = plain_device.send(ballot)
    assert (again.seq, election.store.election("e").head_seq) == (receipts[0].seq, head)
    closed = election.admin.post("/v1/elections/e/close", {})
    assert (closed["phase"], closed["cast"], closed["spoiled"]) == ("closed", 5, 1)
    devices = json.loads(election.admin.get("/v1/elections/e/board/by-name/devices.json")["payload"])
    assert [d["ballots"] for d in devices] == [["b-1", "b-3", "b-5"], ["b-2", "b-4", "b-6"]]
    record = _record(election, tmp_path / "record")
    # each guardian checks the record as far as its ballots (V-EG21-01…08, no repeats) before decrypting
    for i in (1, 2):
        announced = json.loads(_decrypting_trustee(election, i).announce(record, [1, 2]))
        assert announced
    with pytest.raises(ServiceError):
        plain_device.cast(_plain(9))  # closed


def test_the_service_refuses_a_2_1_ballot_that_would_stop_the_decryption_or_break_a_chain(
    election: Election21,
) -> None:
    he = _open(election)
    device = _device(election, "station-1", he)
    chained = _device(election, "station-2", he, simple=True)
    first = device.encrypt(_plain(1))
    device.send(first)
    head = election.store.election("e").head_seq
    post = device.client.post
    url = "/v1/elections/e/eg21/ballots"
    # a copy under another id (the same id_B and ciphertexts): the guardians would refuse the whole record
    copy = json.loads(first)
    copy["id"] = "b-copy"
    status, kind, detail = _problem(lambda: post(url, {"ballots": [json.dumps(copy)]}))
    assert (status, kind) == (409, "conflict") and "copied ballot" in detail
    # another ballot under a stored id
    other = device.encrypt(_plain(1))
    assert _kind(lambda: post(url, {"ballots": [other]})) == (409, "duplicate_ballot")
    # a broken proof, a weight of 2, a device not registered
    broken = json.loads(device.encrypt(_plain(2)))
    broken["contests"][0]["selections"][0]["proof"][0]["c"] = broken["contests"][0]["selections"][1]["proof"][
        0
    ]["c"]
    assert _kind(lambda: post(url, {"ballots": [json.dumps(broken)]}))[0] == 422
    heavy = device.device.encrypt(json.dumps(_plain(3)), "cast", 2, None)  # type: ignore[union-attr]
    assert _kind(lambda: post(url, {"ballots": [heavy]}))[0] == 422
    # simple chaining: two ballots chaining from one code (a fork) are refused, the second
    a = chained.encrypt(_plain(4))
    b = chained.encrypt(_plain(5))
    chained.send(a)
    assert _kind(lambda: post(url, {"ballots": [b]})) == (409, "conflict")
    head = election.store.election("e").head_seq
    # nothing refused was stored
    c = chained.encrypt(_plain(6))
    chained.send(c)
    assert election.store.election("e").head_seq == head + 1
    assert set(election.entries("eg21/ballots/")) == {
        "eg21/ballots/b-1.json",
        "eg21/ballots/b-4.json",
        "eg21/ballots/b-6.json",
    }


def test_another_device_token_cannot_use_a_devices_chain(election: Election21) -> None:
    he = _open(election)
    device = _device(election, "station-1", he)
    ballot = device.encrypt(_plain(1))
    url = "/v1/elections/e/eg21/ballots"
    # the admin token is not a device's
    assert _kind(lambda: election.admin.post(url, {"ballots": [ballot]}))[0] == 403
    other = Client(http=election.http, token=election.other_device, use_msgpack=False)
    # another device token can neither register the device again nor post on its chain
    assert _kind(lambda: other.post("/v1/elections/e/eg21/devices", {"device": "station-1"})) == (
        409,
        "conflict",
    )
    assert _kind(lambda: other.post(url, {"ballots": [ballot]})) == (409, "conflict")
    assert device.send(ballot).state == "cast"


def test_a_device_refuses_keys_the_officials_did_not_announce(election: Election21) -> None:
    he = _open(election)
    client = Client(http=election.http, token=election.tokens.device, use_msgpack=False)
    wrong = "0" * 32
    with pytest.raises(VerificationFailed, match="H_E fingerprint"):
        Device21(client, "e", "station-1", wrong).start()
    assert not election.entries("eg21/devices/")
    assert Device21(client, "e", "station-1", he).start()


# -- decryption and publication (spec/80.11) -----------------------------------------------------------------


def _cast_and_close(election: Election21, challenge: bool = True) -> dict[str, int]:
    """Six ballots on two devices (ballot 5 challenged unless not `challenge`), the election closed; the cast
    votes per option."""
    he = _open(election)
    devices = [_device(election, "station-1", he), _device(election, "station-2", he, simple=True)]
    expected: dict[str, int] = {}
    for i in range(1, 7):
        plain = _plain(i)
        state = "challenged" if i == 5 and challenge else "cast"
        devices[i % 2].cast(plain, state)
        if state == "cast":
            for contest, c in plain["contests"].items():
                ids = [
                    s["object_id"]
                    for s in next(x for x in MANIFEST["contests"] if x["object_id"] == contest)[
                        "ballot_selections"
                    ]
                ]
                for sid, v in zip(ids, c["votes"], strict=True):
                    expected[f"{contest}/{sid}"] = expected.get(f"{contest}/{sid}", 0) + v
    election.admin.post("/v1/elections/e/close", {})
    return expected


def _decrypt(election: Election21, guardians: list[int]) -> list[Any]:
    out: list[Any] = []

    def one(i: int) -> None:
        try:
            out.append(election.tool(i).decrypt())
        except BaseException as e:
            out.append(e)

    threads = [threading.Thread(target=one, args=(i,)) for i in guardians]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    return out


def _publish_and_verify(election: Election21, record: Path) -> dict[str, int]:
    """The election closed, decrypted by guardians 1 and 2 and published; its record written to `record`,
    which must verify with the counts the service published. Those counts."""
    election.admin.post("/v1/elections/e/close", {})
    official = Official(election.admin, "e", Waiter(60, 0.02))
    official.start_round([1, 2])
    done = _decrypt(election, [1, 2])
    assert all(not isinstance(d, BaseException) for d in done), done
    official.publish(None, wait=True, available=[1, 2])
    counts = dict(election.admin.get("/v1/elections/e/results")["counts"])
    official.save_record_21(record)
    report = verify(record)
    assert report.passed, report.not_passed()
    assert report.intermediates["counts"] == counts
    return counts


def test_a_2_1_election_on_the_service_is_decrypted_published_and_verifies(
    election_on_each_store: Election21, tmp_path: Path
) -> None:
    election = election_on_each_store
    expected = _cast_and_close(election)
    official = Official(election.admin, "e", Waiter(60, 0.02))
    official.start_round([1, 3])
    done = _decrypt(election, [1, 2, 3])
    assert sorted((d.i, d.answered) for d in done) == [(1, True), (2, False), (3, True)], done
    published = official.publish(None, wait=True, available=[1, 3])
    assert published["phase"] == "published"
    results = election.admin.get("/v1/elections/e/results")
    assert {k: v for k, v in results["counts"].items() if k in expected} == expected
    assert (results["present"], results["missing"]) == (["1", "3"], ["2"])
    record = tmp_path / "record"
    official.save_record_21(record)
    report = verify(record)
    assert report.passed, report.not_passed()
    assert report.intermediates["counts"] == results["counts"]
    assert len((record / "challenged.jsonl").read_text().splitlines()) == 1


def test_a_guardian_gone_in_a_round_is_replaced_by_a_new_round(election: Election21, tmp_path: Path) -> None:
    """Guardian 2 never answers round 1; the official starts round 2 with guardians 1 and 3, who announce
    again (for the same values) and the election publishes; with no challenged ballot, its record holds an
    empty challenged.jsonl."""
    _cast_and_close(election, challenge=False)
    official = Official(election.admin, "e", Waiter(60, 0.02))
    official.start_round([1, 2])
    quick = election.tool(1)
    quick.waiter = Waiter(1.5, 0.02)
    with pytest.raises(WaitedTooLong):
        quick.decrypt()
    official.start_round([1, 3])
    done = _decrypt(election, [1, 3])
    assert all(d.answered for d in done), done
    assert official.publish(None, wait=True, available=[1, 3])["phase"] == "published"
    record = tmp_path / "record"
    official.save_record_21(record)
    assert verify(record).passed


def test_the_service_takes_round_messages_in_order_from_the_round_guardians_only(
    election: Election21,
) -> None:
    _cast_and_close(election)
    official = Official(election.admin, "e", Waiter(60, 0.02))
    url = "/v1/elections/e/eg21/rounds"
    # U must be a quorum of 1…n, each once; rounds are the admin's
    for bad in ([1], [1, 1], [0, 1], [1, 4]):
        assert _kind(lambda bad=bad: election.admin.post(url, {"available": bad}))[0] == 422
    assert _kind(lambda: election.client(1).post(url, {"available": [1, 2]}))[0] == 403
    official.start_round([1, 2])
    node = election.identities[0]

    def signed(step: str, r: int, message: str, who: Identity = node) -> dict[str, str]:
        return {
            "message": message,
            "signature": who.sign_record(round_statement(step, "e", r, 1, message)).hex(),
        }

    # a reveal before every announcement, a round that is not the current one, a guardian outside U,
    # a signature of another node or another round
    assert _kind(lambda: election.client(1).post(f"{url}/1/reveal", signed("reveal", 1, "{}")))[0] == 409
    assert _kind(lambda: election.client(1).post(f"{url}/2/announce", signed("announce", 2, "{}")))[0] == 409
    assert _kind(lambda: election.client(3).post(f"{url}/1/announce", signed("announce", 1, "{}")))[0] in (
        409,
        422,
    )
    assert _kind(lambda: election.client(1).post(f"{url}/1/announce", signed("announce", 2, "{}")))[0] == 422
    other = election.identities[1]
    assert (
        _kind(lambda: election.client(1).post(f"{url}/1/announce", signed("announce", 1, "{}", other)))[0]
        == 422
    )
    # publishing before every answer of U is refused; nothing was stored by the refusals
    assert _kind(lambda: election.admin.post("/v1/elections/e/publish", {})) == (409, "conflict")
    assert not election.entries("eg21/rounds/1/")


def test_a_message_that_would_stall_a_round_is_refused_and_names_its_guardian(
    election: Election21, tmp_path: Path
) -> None:
    """Guardian 3, of U, posts (signed) an announcement for other values, one with a value missing, one
    holding another guardian's nonce parts, and a reveal that does not open its d. Each would make guardian
    1 stop before it reveals or answers, stalling the round with no one named. The service checks each as
    guardian 1 would and refuses it, naming guardian 3; nothing is stored, and the honest messages finish
    the round."""
    _cast_and_close(election)
    official = Official(election.admin, "e", Waiter(60, 0.02))
    official.start_round([1, 3])
    record = _record(election, tmp_path / "record")
    t1, t3 = _decrypting_trustee(election, 1), _decrypting_trustee(election, 3)
    a1, a3 = t1.announce(record, [1, 3]), t3.announce(record, [1, 3])
    url = "/v1/elections/e/eg21/rounds/1"

    def post(i: int, step: str, message: str) -> Any:
        signature = election.identities[i - 1].sign_record(round_statement(step, "e", 1, i, message))
        return election.client(i).post(f"{url}/{step}", {"message": message, "signature": signature.hex()})

    def refused(i: int, step: str, message: str) -> str:
        status, kind, detail = _problem(lambda: post(i, step, message))
        assert (status, kind) == (422, "invalid_proof") and f"guardian {i}" in detail, detail
        return detail

    head = election.store.election("e").head_seq
    doc = json.loads(a3)
    assert "other values" in refused(3, "announce", json.dumps({**doc, "digest": "00" * 32}))
    assert "values of" in refused(3, "announce", json.dumps({**doc, "values": doc["values"][1:]}))
    parts = json.loads(a1)["nonce_parts"]
    assert parts
    assert "does not verify" in refused(3, "announce", json.dumps({**doc, "nonce_parts": parts}))
    assert election.store.election("e").head_seq == head
    post(1, "announce", a1)
    post(3, "announce", a3)
    r1, r3 = t1.reveal([a1, a3]), t3.reveal([a1, a3])
    swapped = json.loads(r3)
    swapped["pairs"][0], swapped["pairs"][1] = swapped["pairs"][1], swapped["pairs"][0]
    assert "does not match its d" in refused(3, "reveal", json.dumps(swapped))
    post(1, "reveal", r1)
    post(3, "reveal", r3)
    post(1, "answer", t1.answer([r1, r3]))
    post(3, "answer", t3.answer([r1, r3]))
    assert official.publish(None, wait=True, available=[1, 3])["phase"] == "published"


def test_a_guardian_decrypts_one_record_across_runs(
    election: Election21, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A service that shows a guardian another set of ballots in a later run (to decrypt two tallies that
    differ in one ballot) is refused: the first run sealed the digest of the ballots it announced for."""
    _cast_and_close(election)
    official = Official(election.admin, "e", Waiter(60, 0.02))
    official.start_round([1, 2])
    first = election.tool(1)
    first.waiter = Waiter(1.5, 0.02)
    with pytest.raises(WaitedTooLong):
        first.decrypt()  # announced; guardian 2 never came
    official.start_round([1, 3])
    again = election.tool(1)
    real = Eg21RecordWriter.take

    def one_ballot_fewer(self: Eg21RecordWriter, kind: str, name: str, payload: bytes) -> None:
        if name != "eg21/ballots/b-1.json":
            real(self, kind, name, payload)

    monkeypatch.setattr(Eg21RecordWriter, "take", one_ballot_fewer)
    with pytest.raises(VerificationFailed, match="one record"):
        again.decrypt()


def test_a_wrong_answer_names_its_guardian_and_a_forged_message_is_refused(
    election: Election21, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Guardian 3 posts, signed, an answer with one response changed: publishing names it and stores
    nothing. A message the service makes up in a guardian's place (not its node's signature) is refused by
    the other guardians before they use it."""
    _cast_and_close(election)
    official = Official(election.admin, "e", Waiter(60, 0.02))
    official.start_round([1, 3])
    cheat = election.tool(3)
    post = cheat._post_step

    def wrong_answer(r: int, step: str, i: int, message: str) -> None:
        if step == "answer":
            doc = json.loads(message)
            doc["answers"][0] = doc["answers"][1]
            message = json.dumps(doc)
        post(r, step, i, message)

    monkeypatch.setattr(cheat, "_post_step", wrong_answer)
    errors: list[BaseException] = []

    def run(tool: GuardianTool21) -> None:
        try:
            tool.decrypt()
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=run, args=(t,)) for t in (election.tool(1), cheat)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert errors == []
    head = election.store.election("e").head_seq
    status, _, detail = _problem(lambda: election.admin.post("/v1/elections/e/publish", {}))
    assert status == 422 and "guardian 3" in detail, detail
    assert election.store.election("e").head_seq == head and election.store.election("e").phase == "closed"
    # a new round; the service shows guardian 1 an announcement of guardian 3 signed by another node
    official.start_round([1, 3])
    tool = election.tool(1)
    real = tool._current
    mallory_home = election.tmp / "mallory"
    keygen(mallory_home, "mallory", "127.0.0.1:1", None)
    mallory = Identity(mallory_home)

    def lying() -> dict[str, Any] | None:
        current = real()
        if current is not None:
            forged = "{}"
            current["announce"]["3"] = json.dumps(
                {
                    "i": 3,
                    "message": forged,
                    "signature": mallory.sign_record(
                        round_statement("announce", "e", current["round"], 3, forged)
                    ).hex(),
                }
            )
        return current

    monkeypatch.setattr(tool, "_current", lying)
    with pytest.raises(VerificationFailed, match="signature"):
        tool.decrypt()


def test_the_pages_verification_reads_a_2_1_election_from_its_board(
    election: Election21, tmp_path: Path
) -> None:
    """The pages' "verify now" child (votum.web.verify_run) writes a 2.1 election's record from the board up
    to the head it is filed under and verifies it: after closing, the tally's checks are pending and the rest
    passes; once published, everything passes and the recount is the published one."""
    _cast_and_close(election)

    def run(phase: str) -> dict[str, Any]:
        row = election.store.election("e")
        out = tmp_path / f"{phase}.json"
        args = ["--parent", str(os.getpid()), "--out", str(out), "--head-seq", str(row.head_seq)]
        args += [
            "--head",
            row.head_hash.hex(),
            "--phase",
            phase,
            "--database",
            election.store.url,
            "--election",
            "e",
        ]
        done = subprocess.run(
            [sys.executable, "-m", "votum.web.verify_run", *args], capture_output=True, timeout=300
        )
        assert done.returncode == 0, done.stderr
        return dict(json.loads(out.read_text()))

    closed = run("closed")
    assert closed["passed"], closed
    statuses = {c["id"]: c["status"] for c in closed["checks"]}
    assert statuses["V-EG21-08"] == "pass" and statuses["V-EG21-10"] == "pending"
    official = Official(election.admin, "e", Waiter(60, 0.02))
    official.start_round([1, 2])
    assert all(d.answered for d in _decrypt(election, [1, 2]))
    official.publish(None, wait=True, available=[1, 2])
    published = run("published")
    assert published["passed"] and all(c["status"] == "pass" for c in published["checks"]), published
    assert published["values"]["counts"] == election.admin.get("/v1/elections/e/results")["counts"]


def test_a_ballot_cannot_chain_from_another_devices_code(election: Election21) -> None:
    """One device token, two devices with simple chaining: a ballot of device B sealed after device A's last
    code would break B's chain in the record (V-EG21-08), and every guardian refuses to decrypt such a record;
    the service refuses it."""
    he = _open(election)
    a = _device(election, "station-a", he, simple=True)
    b = _device(election, "station-b", he, simple=True)
    a.cast(_plain(1))
    assert b.device is not None and a.tail is not None
    crossed = b.device.encrypt(json.dumps(_plain(2)), "cast", 1, a.tail)
    status, kind, detail = _problem(
        lambda: b.client.post("/v1/elections/e/eg21/ballots", {"ballots": [crossed]})
    )
    assert (status, kind) == (409, "conflict"), detail
    b.cast(_plain(3))
    a.cast(_plain(4))
    election.admin.post("/v1/elections/e/close", {})
    devices = json.loads(election.admin.get("/v1/elections/e/board/by-name/devices.json")["payload"])
    assert [d["ballots"] for d in devices] == [["b-1", "b-4"], ["b-3"]]


# -- the polling-station kiosk on a 2.1 election (`votum device --he-fingerprint`, votum.web.kiosk21) -------


def _kiosk21(election: Election21, tmp: Path, he: str, **options: Any) -> tuple[Kiosk21, TestClient, str]:
    client = Client(http=election.http, token=election.tokens.device, use_msgpack=False)
    kiosk = Kiosk21(client, "e", 1, tmp / "kiosk", "https://votes.example", "station-1", he, **options)
    page = TestClient(create_kiosk_app(kiosk))
    token = re.search(r'name="form_token" value="([^"]+)"', page.get("/").text)
    assert token
    return kiosk, page, token.group(1)


def _mark(page: TestClient, token: str, **choices: str) -> Any:
    return page.post("/ballot", data={"form_token": token, **{f"choice:{c}": s for c, s in choices.items()}})


def _decide(page: TestClient, token: str, review: Any, decision: str) -> Any:
    key = re.search(rf'action="/ballot/([^/"]+)/{decision}"', review.text)
    assert key, review.text
    return page.post(f"/ballot/{key.group(1)}/{decision}", data={"form_token": token})


def test_the_kiosk_casts_and_challenges_2_1_ballots_that_are_counted_and_verify(
    election: Election21, tmp_path: Path
) -> None:
    """The kiosk's pages on a 2.1 device: the keys checked against the officials' H_E fingerprint, a ballot
    encrypted once and cast or challenged with the code shown before the choice, the chain (simple chaining)
    carried across a restart of the kiosk and rebuilt from the service when its state file is lost, the
    tracker finding the ballot by its code; the record verifies with the cast choices counted and the
    challenged ballot opened."""
    he = _open(election)
    _, page, token = _kiosk21(election, tmp_path, he, simple_chaining=True)
    home = page.get("/").text
    assert he in home and "Mayor" in home and "/elections/" not in home
    review = _mark(page, token, mayor="mayor-option2", council="council-option1")
    assert review.status_code == 200, review.text
    code = re.search(r'id="code">([^<]+)<', review.text).group(1)  # type: ignore[union-attr]
    cast = _decide(page, token, review, "cast")
    assert cast.status_code == 200 and "cast-note" in cast.text
    assert code.replace(" ", "") in cast.text.replace(" ", "")
    challenged = _decide(page, token, _mark(page, token, mayor="mayor-option1"), "spoil")
    assert "spoiled-note" in challenged.text
    # a new kiosk process on the same state goes on with the chain (a wrong tail would be refused as a fork)
    _, page2, token2 = _kiosk21(election, tmp_path, he, simple_chaining=True)
    assert "cast-note" in _decide(page2, token2, _mark(page2, token2, mayor="mayor-option3"), "cast").text
    # one whose state file was lost goes on from where the service says its chain ends: before, it started
    # again from H_0 and every ballot it made was refused as a fork
    for lost in (tmp_path / "kiosk").glob("kiosk21-*.json"):
        lost.unlink()
    _, page3, token3 = _kiosk21(election, tmp_path, he, simple_chaining=True)
    assert "cast-note" in _decide(page3, token3, _mark(page3, token3, mayor="mayor-option3"), "cast").text
    # only the token that registered the device is told its tail: another device token finds no such device
    tail = "/v1/elections/e/eg21/devices/station-1/tail"
    other = Client(http=election.http, token=election.other_device, use_msgpack=False)
    assert _kind(lambda: other.get(tail)) == (404, "not_found")
    assert _kind(lambda: election.admin.get(tail))[0] == 403
    stored = [json.loads(e.text()) for e in election.store.iter_entries("e", ["eg21_ballot"])]
    assert [b["state"] for b in stored] == ["cast", "challenged", "cast", "cast"]
    # each ballot chains from the one before it, across the restart
    for before, after in itertools.pairwise(stored):
        assert after["B_C"].lower().endswith(before["H_C"].lower())
    first_code = stored[0]["H_C"]
    tracked = election.http.get("/elections/e/track", params={"code": first_code.lower()})
    assert tracked.status_code == 200 and stored[0]["id"] in tracked.text
    challenged_code = stored[1]["H_C"]
    before = election.http.get("/elections/e/track", params={"code": challenged_code}).text
    assert stored[1]["id"] in before and 'id="decryption"' not in before
    record = tmp_path / "record"
    counts = _publish_and_verify(election, record)
    assert (counts["mayor/mayor-option2"], counts["mayor/mayor-option3"]) == (1, 2)
    assert counts["mayor/mayor-option1"] == 0 and counts["council/council-option1"] == 1
    opened = [json.loads(line) for line in (record / "challenged.jsonl").read_text().splitlines()]
    assert len(opened) == 1 and opened[0]["id"] == stored[1]["id"]
    # the voter who challenged finds the opening by the code the kiosk gave: what was marked, and only that
    after = election.http.get("/elections/e/track", params={"code": challenged_code}).text
    rows = re.findall(r"<td>([^<]+)</td><td class=\"(chosen|not-chosen)\"", after)
    assert ("mayor-candidate1", "chosen") in rows, after
    assert [label for label, mark in rows if mark == "chosen"] == ["mayor-candidate1"]


def test_the_kiosk_believes_no_other_keys_no_other_receipt_and_survives_a_lost_answer(
    election: Election21, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 2.1 kiosk started with another H_E fingerprint than the election's encrypts nothing and registers
    nothing; a receipt with another code is refused and the chain does not move until the board shows the
    ballot's own; a cast ballot whose answer was lost is taken from the board when the next voter starts,
    not sent again as challenged."""
    he = _open(election)
    with pytest.raises(VerificationFailed, match="H_E fingerprint"):
        _kiosk21(election, tmp_path, "f" * 32)
    assert not election.entries("eg21/devices/")
    kiosk, page, token = _kiosk21(election, tmp_path, he, simple_chaining=True)
    real_post = Client.post

    def other_code(self: Client, path: str, body: Any, **kw: Any) -> Any:
        got = real_post(self, path, body, **kw)
        if path.endswith("/eg21/ballots"):
            got["receipts"][0]["code"] = "0" * 64
        return got

    monkeypatch.setattr(Client, "post", other_code)
    pending = kiosk.encrypt(["mayor-option1"])
    with pytest.raises(VerificationFailed, match="another code"):
        kiosk.decide(pending.key, "cast")
    assert kiosk.device.tail is None and kiosk.pending is pending
    monkeypatch.setattr(Client, "post", real_post)
    # the poll worker tries again: the ballot is found on the board with its own code, and the chain moves
    again = page.post(f"/ballot/{pending.key}/cast", data={"form_token": token})
    assert again.status_code == 200 and "cast-note" in again.text
    assert kiosk.device.tail == pending.code

    def answer_lost(self: Client, path: str, body: Any, **kw: Any) -> Any:
        real_post(self, path, body, **kw)
        raise httpx.ReadError("the answer was lost")

    review = _mark(page, token, mayor="mayor-option3")
    monkeypatch.setattr(Client, "post", answer_lost)
    failed = _decide(page, token, review, "cast")
    assert failed.status_code == 503 and "did not answer as it should" in failed.text
    monkeypatch.setattr(Client, "post", real_post)
    # the next voter: the ballot left waiting is on the board as cast, so it is not sent again as challenged
    receipt = _decide(page, token, _mark(page, token, mayor="mayor-option2"), "cast")
    assert receipt.status_code == 200 and "cast-note" in receipt.text
    stored = [json.loads(e.text()) for e in election.store.iter_entries("e", ["eg21_ballot"])]
    assert [b["state"] for b in stored] == ["cast", "cast", "cast"]
    overvote = page.post(
        "/ballot", data={"form_token": token, "choice:mayor": ["mayor-option1", "mayor-option2"]}
    )
    assert overvote.status_code == 400 and "at most 1 allowed" in overvote.text
    assert len(election.entries("eg21/ballots/")) == 3


def test_points_past_the_number_of_ballots_are_counted_on_the_service(
    election: Election21, tmp_path: Path
) -> None:
    """A contest whose options take up to 2 points each (the manifest's budget, `option_selection_limit` 2):
    two ballots give one option 4 points. The service's publication looked each count up among K^0…K^W, W the
    cast ballots' weights (2 here), and found no count; its bound is now W times the largest option limit."""
    he = _open(election)
    device = _device(election, "station-1", he)
    for i, budget in enumerate(([2, 2, 0, 0], [2, 0, 1, 0])):
        plain = _plain(i)
        plain["contests"]["budget"] = {"votes": budget}
        device.cast(plain)
    counts = _publish_and_verify(election, tmp_path / "record")
    assert [counts[f"budget/budget-option{j}"] for j in range(1, 5)] == [4, 2, 1, 0]


def test_ballot_weights_are_the_elections_per_device_token_and_a_device_cannot_choose_its_own(
    tmp_path: Path,
) -> None:
    """A 2.1 election created with weights {"faculty": 3}: the faculty token's ballots weigh 3, every
    other token's 1. The tally is weighted (eq. 80) and the record verifies. A ballot whose weight is not its
    token's is refused and nothing is stored: before, the service took weight 1 only, and a device choosing
    its own weight would count its ballots as often as it liked."""
    faculty, student = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
    roles = {faculty: "device:faculty", student: "device:student"}
    with _election(tmp_path, f"sqlite:///{tmp_path / 'votum.db'}", {"faculty": 3}, roles) as election:
        election_doc = json.loads(
            election.admin.get("/v1/elections/e/board/by-name/election.json")["payload"]
        )
        assert election_doc["weights"] == {"faculty": 3}
        he = _open(election)

        def device(token: str, name: str | None, station: str) -> Device21:
            client = Client(http=election.http, token=token, use_msgpack=False)
            d = Device21(client, "e", station, he, token_name=name)
            d.start()
            return d

        f = device(faculty, "faculty", "faculty-station-1")
        s = device(student, "student", "student-station-1")
        plain = device(election.tokens.device, None, "station-1")
        assert (f.weight, s.weight, plain.weight) == (3, 1, 1)
        f.cast({**_plain(0), "id": "faculty-1"})
        s.cast({**_plain(1), "id": "student-1"})
        plain.cast({**_plain(1), "id": "plain-1"})
        head = election.store.election("e").head_seq
        url = "/v1/elections/e/eg21/ballots"
        assert f.device is not None and s.device is not None and plain.device is not None
        light = f.device.encrypt(json.dumps({**_plain(2), "id": "faculty-2"}), "cast", 1, None)
        heavy = s.device.encrypt(json.dumps({**_plain(2), "id": "student-2"}), "cast", 3, None)
        sneaky = plain.device.encrypt(json.dumps({**_plain(2), "id": "plain-2"}), "cast", 3, None)
        for client, ballot in ((f.client, light), (s.client, heavy), (plain.client, sneaky)):
            status, kind, detail = _problem(lambda c=client, b=ballot: c.post(url, {"ballots": [b]}))
            assert (status, kind) == (422, "invalid_input") and "weigh" in detail, detail
        assert election.store.election("e").head_seq == head
        record = tmp_path / "record"
        counts = _publish_and_verify(election, record)
        # ballot 0 marks mayor-option1 (weight 3); ballots 1 mark mayor-option2 (weight 1 each)
        assert [counts[f"mayor/mayor-option{j}"] for j in (1, 2, 3)] == [3, 2, 0]
        weights = sorted(
            json.loads(line)["weight"] for line in (record / "ballots.jsonl").read_text().splitlines()
        )
        assert weights == [1, 1, 3]


def test_weights_are_refused_on_a_1_0_election_and_out_of_range(election: Election21) -> None:
    body = {"election_id": "w", "manifest": MANIFEST, "number_of_guardians": N, "quorum": K}
    assert _kind(lambda: election.admin.post("/v1/elections", {**body, "weights": {"a": 2}}))[0] == 422
    twenty_one = {**body, "spec": "2.1", "group": "p256"}
    for bad in ({"a": 0}, {"a": 1_000_001}, {"bad name": 2}):
        assert (
            _kind(lambda b=bad: election.admin.post("/v1/elections", {**twenty_one, "weights": b}))[0] == 422
        )
    assert election.admin.get("/v1/elections") == ["e"]


# -- pre-encrypted ballots (spec/80.11, §4) ------------------------------------------------------------------

#: the default manifest with a short-code function (§4.6), which pre-encrypted ballots need
PAPER_MANIFEST = {**MANIFEST, "short_code": "hex2"}


@pytest.fixture
def paper_election(tmp_path: Path) -> Iterator[Election21]:
    with _election(tmp_path, f"sqlite:///{tmp_path / 'votum.db'}", manifest=PAPER_MANIFEST) as e:
        yield e


def _paper(election: Election21, he: str, simple: bool = True) -> tuple[Printer21, Recorder21]:
    """A printer and a recorder on the plain device token, sharing the printer's store."""
    client = Client(http=election.http, token=election.tokens.device, use_msgpack=False)
    store = election.tmp / "paper-store.jsonl"
    printer = Printer21(client, "e", "mail-printer", he, store, simple_chaining=simple)
    printer.start()
    recorder = Recorder21(client, "e", he, store)
    recorder.start()
    return printer, recorder


def test_pre_encrypted_ballots_are_printed_recorded_counted_and_the_uncast_opened(
    paper_election: Election21, tmp_path: Path
) -> None:
    """A printer prints four ballots onto the board before any mark; the recorder records the voters' marks
    on two; the other two are uncast and the guardians open them. The counts are the marks (with one ballot
    of an encryption device beside them), the record verifies, and each opening shows the short codes the
    paper showed, in its order."""
    election = paper_election
    he = _open(election)
    printer, recorder = _paper(election, he)
    ids = [f"pre-{i}" for i in range(1, 5)]
    sheets = {
        s["id"]: s for s in printer.print(ids[:3], "ward-1-style") + printer.print(ids[3:], "ward-1-style")
    }
    store = (election.tmp / "paper-store.jsonl").stat()
    assert store.st_mode & 0o077 == 0, "the printer's store is its owner's only"
    for i in ids:
        assert election.admin.get(f"/v1/elections/e/eg21/ballots/{i}")["state"] == "printed"

    def counts_now() -> tuple[int, int, int]:
        status = election.admin.get("/v1/elections/e")
        return status["cast"], status["spoiled"], status.get("printed", 0)

    # a printed ballot is neither cast nor challenged until it is recorded
    assert counts_now() == (0, 0, 4)
    marks = {
        "pre-1": {"mayor": [1, 0, 0], "council": [0, 1, 1, 0]},
        "pre-3": {"mayor": [0, 0, 1], "council": [0, 1, 0, 0], "budget": [1, 0, 0, 1]},
    }
    for ballot_id, m in marks.items():
        got = recorder.record(ballot_id, m)
        assert got.state == "cast"
        assert election.admin.get(f"/v1/elections/e/eg21/ballots/{ballot_id}")["state"] == "cast"
    with pytest.raises(Conflict, match="already recorded"):
        recorder.record("pre-1", {"mayor": [0, 1, 0]})
    assert counts_now() == (2, 0, 2)
    # the tracker shows a recording's short codes, for the voter to compare with the marks on the paper
    page = election.http.get("/elections/e/track", params={"code": "pre-1"}).text
    mayor = next(c for c in sheets["pre-1"]["contests"] if c["contest"] == "mayor")
    assert mayor["options"][0][0] == "mayor-option1"
    assert 'id="short-codes"' in page and f"<code>{mayor['options'][0][1]}</code>" in page
    _device(election, "station-1", he).cast(_plain(0))
    assert counts_now() == (3, 0, 2)
    before = election.http.get("/elections/e/track", params={"code": "pre-2"}).text
    assert 'id="state"' in before and 'id="sheet"' not in before
    record = tmp_path / "record"
    counts = _publish_and_verify(election, record)
    assert [counts[f"mayor/mayor-option{j}"] for j in (1, 2, 3)] == [2, 0, 1]
    assert [counts[f"council/council-option{j}"] for j in (1, 2, 3, 4)] == [1, 2, 1, 0]
    assert [counts[f"budget/budget-option{j}"] for j in (1, 2, 3, 4)] == [1, 0, 0, 1]
    lines = [json.loads(x) for x in (record / "ballots.jsonl").read_text().splitlines()]
    states = {b["id"]: b["state"] for b in lines if b.get("pre_encrypted")}
    assert states == {"pre-1": "cast", "pre-2": "challenged", "pre-3": "cast", "pre-4": "challenged"}
    opened = {o["id"]: o for o in map(json.loads, (record / "challenged.jsonl").read_text().splitlines())}
    assert set(opened) == {"pre-2", "pre-4"}
    for ballot_id, o in opened.items():
        printed = [[list(pair) for pair in c["options"]] for c in sheets[ballot_id]["contests"]]
        shown = [[[v["label"], v["short_code"]] for v in c["vectors"]] for c in o["contests"]]
        assert shown == printed
    # the tracker shows an uncast ballot's sheet as opened, for the voter to compare with the paper
    after = election.http.get("/elections/e/track", params={"code": "pre-2"}).text
    assert 'id="sheet"' in after
    assert all(
        f"<code>{code}</code>" in after for c in sheets["pre-2"]["contests"] for _, code in c["options"]
    )
    devices = json.loads((record / "devices.json").read_text())
    assert [d["ballots"] for d in devices if d.get("pre_encrypted")] == [ids]


def test_a_recording_is_its_printed_ballot_once_and_a_printer_prints_only_paper(
    paper_election: Election21,
) -> None:
    """What a lying recorder or printer gets (each refused, nothing stored):
    - a recording of ballot pre-1 posted as pre-2 (the same id_B, nonce, chaining field and code under the
      other id). Before the check against the printed ballot, the service took it: the record then held
      pre-1's id_B twice and pre-2's chain link broken, and every guardian refuses such a record, so one
      recorder stopped the election's decryption;
    - a recording of a ballot never printed, a second recording with other marks, a recording with a weight
      its token does not have, and a printed ballot posted already marked;
    - an encryption device's ballot posted as the printer's, a printed ballot as an encryption device's."""
    election = paper_election
    he = _open(election)
    printer, recorder = _paper(election, he)
    sheets = printer.print(["pre-1", "pre-2"], "ward-1-style")
    assert len(sheets) == 2
    store = {
        json.loads(x)["id"]: json.loads(x)
        for x in (election.tmp / "paper-store.jsonl").read_text().splitlines()
    }
    paper = votum.Eg21Recorder(
        "p256",
        json.dumps(PAPER_MANIFEST).encode(),
        election.admin.get("/v1/elections/e/board/by-name/guardians.json")["payload"].encode(),
    )

    def recording(ballot_id: str, mayor: list[int], weight: int = 1) -> str:
        item = store[ballot_id]
        plain = {"id": ballot_id, "style": "ward-1-style", "contests": {"mayor": {"votes": mayor}}}
        return paper.record(item["printed"], item["sheet"], item["nonce"], json.dumps(plain), weight)

    post = recorder.client.post
    url = "/v1/elections/e/eg21/recorded"
    head = election.store.election("e").head_seq
    moved = json.loads(recording("pre-1", [1, 0, 0]))
    moved["id"] = "pre-2"
    status, kind, detail = _problem(lambda: post(url, {"ballots": [json.dumps(moved)]}))
    assert (status, kind) == (422, "invalid_input") and "not the printed ballot's" in detail, detail
    never = json.loads(recording("pre-1", [1, 0, 0]))
    never["id"] = "pre-9"
    assert _kind(lambda: post(url, {"ballots": [json.dumps(never)]})) == (404, "not_found")
    assert _kind(lambda: post(url, {"ballots": [recording("pre-1", [1, 0, 0], weight=2)]}))[0] == 422
    marked = json.loads(recording("pre-1", [1, 0, 0]))
    assert _kind(lambda: post("/v1/elections/e/eg21/ballots", {"ballots": [json.dumps(marked)]}))[0] == 422
    assert election.store.election("e").head_seq == head
    first = recorder.record("pre-1", {"mayor": [0, 1, 0]})
    head = election.store.election("e").head_seq
    again = post(url, {"ballots": [election.entries("eg21/recorded/")["eg21/recorded/pre-1.json"]]})
    assert again["receipts"][0]["seq"] == first.seq
    assert _kind(lambda: post(url, {"ballots": [recording("pre-1", [0, 0, 1])]})) == (409, "conflict")
    # a printer posts paper only; an encryption device none
    assert printer.printer is not None
    ordinary = _device(election, "station-1", he)
    head = election.store.election("e").head_seq
    ballot = ordinary.encrypt(_plain(1))
    as_printer = json.loads(ballot)
    as_printer["device"] = "mail-printer"
    line, _, _ = printer.printer.print(["pre-3"], "ward-1-style", None)[0]
    from_station = json.loads(line)
    from_station["device"] = "station-1"
    for wrong in (as_printer, from_station):
        status, kind, detail = _problem(
            lambda w=wrong: post("/v1/elections/e/eg21/ballots", {"ballots": [json.dumps(w)]})
        )
        # (their chains differ too: a printer's hashes take other domain bytes, §4.1.4)
        assert (status, kind) == (409, "conflict") and "pre-encrypted" in detail, detail
    assert election.store.election("e").head_seq == head
    election.admin.post("/v1/elections/e/close", {})
    status, kind = _kind(lambda: recorder.record("pre-2", {"mayor": [1, 0, 0]}))
    assert status == 409, kind


def test_a_printer_restarted_after_a_lost_post_goes_on_from_the_last_ballot_the_service_took(
    paper_election: Election21, tmp_path: Path
) -> None:
    """Under simple chaining, a printer whose last batch went into its store but never reached the service
    (the post failed) starts again from the last ballot the board holds, not the store's last: before, it
    chained from a code the service never took and every later ballot was refused as off its chain."""
    election = paper_election
    he = _open(election)
    printer, _ = _paper(election, he)
    printer.print(["pre-1", "pre-2"], "ward-1-style")
    assert printer.printer is not None
    lost = printer.printer.print(["pre-3"], "ward-1-style", printer.tail)
    printer.store.add(
        [
            {
                "id": "pre-3",
                "code": json.loads(lost[0][0])["H_C"],
                "printed": lost[0][0],
                "nonce": "",
                "sheet": "",
            }
        ]
    )
    again, recorder = _paper(election, he)
    assert again.tail == printer.tail
    again.print(["pre-4"], "ward-1-style")
    recorder.record("pre-4", {"mayor": [0, 0, 1]})
    counts = _publish_and_verify(election, tmp_path / "record")
    assert [counts[f"mayor/mayor-option{j}"] for j in (1, 2, 3)] == [0, 0, 1]
