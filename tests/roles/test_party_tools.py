"""The parties' tools (spec/80.10) against the /v1 service in this process: the guardian's (a whole
ceremony and decryption, resuming after an interruption, the sealed state, a lying service) and the
polling-station kiosk's."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import votum
from fastapi.testclient import TestClient
from votum.client import Client
from votum.client.election import Tokens
from votum.client.waiting import WaitedTooLong, Waiter
from votum.eg import manifest_from_names, plaintext_ballot
from votum.errors import VerificationFailed
from votum.nodes import keygen
from votum.nodes.identity import Identity
from votum.parties.guardian import GuardianTool, state_path
from votum.service.app import create_app
from votum.service.settings import Settings
from votum.store import Store
from votum.web.kiosk import Kiosk, create_kiosk_app

MANIFEST = manifest_from_names(["P"], ["Ann", "Ben", "Cy"])


class Election:
    def __init__(self, http: TestClient, tokens: Tokens, tmp: Path, store: Store) -> None:
        self.http = http
        self.store = store
        self.tokens = tokens
        self.admin = Client(http=http, token=tokens.admin, use_msgpack=False)
        self.tools = []
        for i in range(1, 4):
            home = tmp / f"guardian-{i}"
            keygen(home, f"guardian-{i}", "127.0.0.1:1", None)
            client = Client(http=http, token=tokens.guardians[f"guardian-{i}"], use_msgpack=False)
            self.tools.append(GuardianTool(client, "e", f"guardian-{i}", Identity(home), Waiter(30, 0.02)))

    def join_all(self) -> None:
        errors: list[BaseException] = []

        def one(i: int, tool: GuardianTool) -> None:
            try:
                tool.join(i + 1, wait_open=False)
            except BaseException as e:
                errors.append(e)

        threads = [threading.Thread(target=one, args=(i, t)) for i, t in enumerate(self.tools)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        assert not errors, errors

    def cast(self, votes: list[tuple[str, str]]) -> None:
        """Ballots (selection, state) encrypted by a device in this process."""
        context = votum.EgContext.from_json(
            self.admin.get("/v1/elections/e/board/by-name/context.json")["payload"]
        )
        device = votum.EgEncryptionDevice(
            votum.EgManifest.from_json(json.dumps(MANIFEST)),
            context.elgamal_public_key,
            context.extended_base_hash,
        )
        doc = {"device_id": 1, "session_id": 1, "launch_code": 1, "location": "here"}
        seed = votum.Group("eg-4096").scalar(
            votum.eg_from_hex(
                self.admin.post("/v1/elections/e/devices", doc, token=self.tokens.device)["code_seed"]
            )
        )
        items = [
            (plaintext_ballot(MANIFEST, f"b-{i}", {choice}), 1_800_000_000 + i, state)
            for i, (choice, state) in enumerate(votes)
        ]
        ballots, _ = device.encrypt_many(items, seed)
        body = {
            "ballots": [
                {"ballot": json.loads(b), "state": s} for b, (_, s) in zip(ballots, votes, strict=True)
            ]
        }
        self.admin.post("/v1/elections/e/ballots/batch", body, token=self.tokens.device)


@pytest.fixture
def election(tmp_path: Path) -> Iterator[Election]:
    tokens = Tokens.generate(3)
    store = Store(f"sqlite:///{tmp_path / 'votum.db'}")
    app = create_app(Settings(data_dir=tmp_path, tokens=tokens.settings_map()), store=store)
    with TestClient(app) as http:
        e = Election(http, tokens, tmp_path, store)
        e.admin.post(
            "/v1/elections", {"election_id": "e", "manifest": MANIFEST, "number_of_guardians": 3, "quorum": 2}
        )
        yield e
    store.close()


VOTES = [
    ("Ann-selection", "cast"),
    ("Ben-selection", "cast"),
    ("Ann-selection", "cast"),
    ("Cy-selection", "spoiled"),
]


def test_whole_election_with_a_missing_guardian(election: Election) -> None:
    election.join_all()
    election.admin.post("/v1/elections/e/open", {})
    joined = election.tools[0].join(1)  # again, once open: it checks the context and prints the joint key
    assert joined.joint_fingerprint and not joined.disputed
    election.cast(VOTES)
    election.admin.post("/v1/elections/e/close", {})
    for tool in election.tools[:2]:
        done = tool.decrypt(["guardian-3"])
        assert (done.cast, done.spoiled, done.posted) == (3, 1, 4)  # own + compensation, tally + spoiled
        assert tool.decrypt(["guardian-3"]).posted == 0, "a second run posts nothing again"
    election.admin.post("/v1/elections/e/publish", {})
    results = election.admin.get("/v1/elections/e/results")
    assert results["counts"] == {"Ann-selection": 2, "Ben-selection": 1, "Cy-selection": 0}
    assert results["missing"] == ["guardian-3"]


def test_the_secret_is_sealed_to_the_node_key_and_a_stopped_join_resumes(
    election: Election, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = election.tools[0]
    calls = {"n": 0}
    original = GuardianTool._send_backups

    def stops_once(self: GuardianTool, *args: Any) -> None:
        if self is first and calls["n"] == 0:
            calls["n"] += 1
            raise KeyboardInterrupt  # the tool is stopped after posting its record
        original(self, *args)

    monkeypatch.setattr(GuardianTool, "_send_backups", stops_once)
    for tool in election.tools:
        tool.waiter = Waiter(1, 0.02)  # the others give up waiting for the stopped one's backups
    with pytest.raises(AssertionError, match="KeyboardInterrupt"):
        election.join_all()
    sealed = state_path(first.identity.home, "e")
    assert sealed.stat().st_mode & 0o777 == 0o600
    secret = votum.EgGuardian.from_secret_state(
        first.identity.open_sealed(first.identity.card, "eg-guardian-state", sealed.read_bytes()), []
    )
    assert secret.expose_secret_state() not in sealed.read_bytes(), "the secret is in the file in the clear"
    # another node key cannot open it
    with pytest.raises(Exception):  # noqa: B017 (the sealing library's own error)
        election.tools[1].identity.open_sealed(
            election.tools[1].identity.card, "eg-guardian-state", sealed.read_bytes()
        )
    # run again: the same secret (its record is accepted as the same bytes), the ceremony completes
    first.join(1, wait_open=False)
    for order, tool in enumerate(election.tools[1:], start=2):
        tool.join(order, wait_open=False)
    assert election.admin.post("/v1/elections/e/open", {})["phase"] == "open"


def test_a_guardian_refuses_a_tally_that_is_not_the_product_of_the_cast_ballots(
    election: Election, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A lying service closes with a tally whose first two candidates' totals are swapped (the board's chain
    is intact): decrypting it would publish a false result. The guardian posts nothing."""
    election.join_all()
    election.admin.post("/v1/elections/e/open", {})
    election.cast(VOTES)
    import votum.service.v1.elections as elections

    honest = elections.encrypted_tally_json

    def swapped(manifest: Any, em: Any, tally: dict[str, dict[str, Any]], *rest: Any) -> Any:
        [(contest, selections)] = tally.items()
        lying = dict(selections)
        lying["Ann-selection"], lying["Ben-selection"] = (
            selections["Ben-selection"],
            selections["Ann-selection"],
        )
        return honest(manifest, em, {contest: lying}, *rest)

    monkeypatch.setattr(elections, "encrypted_tally_json", swapped)
    election.admin.post("/v1/elections/e/close", {})
    before = election.admin.get("/v1/elections/e/board/head")
    with pytest.raises(VerificationFailed, match="not the product of the cast ballots"):
        election.tools[0].decrypt([])
    assert election.admin.get("/v1/elections/e/board/head") == before, "the guardian posted shares"


def test_a_guardian_refuses_a_record_whose_proofs_fail(
    election: Election, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A lying service lets a record with a broken Schnorr proof in; the honest guardian's tool checks every
    record itself and stops before sending any backup."""
    import votum.service.v1.ceremony as ceremony

    class Lax:
        """The service's view of `votum`, with the record check gone (the tool's own is untouched)."""

        def __getattr__(self, name: str) -> Any:
            return (lambda *a: None) if name == "eg_verify_guardian_record" else getattr(votum, name)

    monkeypatch.setattr(ceremony, "votum", Lax())
    bad = json.loads(votum.EgGuardian("guardian-3", 3, 3, 2).public_record())
    proof = bad["election_proofs"][0]
    proof["response"] = proof["challenge"]
    other = json.loads(votum.EgGuardian("guardian-2", 2, 3, 2).public_record())
    for gid, record in (("guardian-2", other), ("guardian-3", bad)):
        election.admin.post(
            f"/v1/elections/e/guardians/{gid}", {"record": record}, token=election.tokens.guardians[gid]
        )
    honest = election.tools[0]
    with pytest.raises(VerificationFailed, match="guardian-3"):
        honest.join(1, wait_open=False)
    assert election.admin.get("/v1/elections/e/guardians/guardian-3/backups")["backups"] == {}


def test_join_waits_boundedly(election: Election) -> None:
    tool = election.tools[0]
    tool.waiter = Waiter(0.2, 0.05)
    with pytest.raises(WaitedTooLong, match="run the command again"):
        tool.join(1, wait_open=False)


# --- the polling-station kiosk (votum.web.kiosk) ----------------------------------------------------------


def _kiosk(election: Election, tmp: Path, **options: Any) -> tuple[Kiosk, TestClient, str]:
    device = Client(http=election.http, token=election.tokens.device, use_msgpack=False)
    kiosk = Kiosk(device, "e", 1, tmp, "https://votes.example", "station-1", **options)
    page = TestClient(create_kiosk_app(kiosk))
    token = re.search(r'name="form_token" value="([^"]+)"', page.get("/").text)
    assert token
    return kiosk, page, token.group(1)


def _mark(page: TestClient, token: str, *choices: str) -> Any:
    return page.post("/ballot", data={"form_token": token, "choice:0": list(choices)})


def _decide(page: TestClient, token: str, review: Any, decision: str) -> Any:
    key = re.search(rf'action="/ballot/([^/"]+)/{decision}"', review.text)
    assert key, review.text
    return page.post(f"/ballot/{key.group(1)}/{decision}", data={"form_token": token})


@pytest.fixture
def opened(election: Election) -> Election:
    election.join_all()
    election.admin.post("/v1/elections/e/open", {})
    return election


def test_kiosk_casts_and_spoils_and_its_receipts_name_the_board_entries(
    opened: Election, tmp_path: Path
) -> None:
    kiosk, page, token = _kiosk(opened, tmp_path)
    home = page.get("/").text
    assert "Ann" in home and kiosk.joint_fingerprint in home
    # the kiosk's own page: its name, no link to the service's pages
    assert "· votum polling-station device</title>" in home and "/elections/" not in home
    review = _mark(page, token, "Ann-selection")
    assert review.status_code == 200
    code = re.search(r'id="code">([^<]+)<', review.text).group(1)  # type: ignore[union-attr]
    receipt = _decide(page, token, review, "cast")
    assert receipt.status_code == 200 and code in receipt.text and "cast-note" in receipt.text
    tracker = re.search(r'id="tracker" href="([^"]+)"', receipt.text).group(1)  # type: ignore[union-attr]
    assert tracker.startswith("https://votes.example/elections/e/track?code=")
    spoiled = _decide(page, token, _mark(page, token, "Ben-selection"), "spoil")
    assert "spoiled-note" in spoiled.text
    ballots = opened.admin.get("/v1/elections/e/ballots")["ballots"]
    assert [b["state"] for b in ballots] == ["cast", "spoiled"]
    assert ballots[0]["code"].upper() == tracker.rsplit("=", 1)[1].upper()
    # the decision cannot be replayed: the ballot is no longer in progress
    again = page.post(tracker.replace("https://votes.example", ""), data={"form_token": token})
    assert again.status_code in (404, 405)


def test_kiosk_refuses_bad_forms_and_overvotes_and_sends_nothing(opened: Election, tmp_path: Path) -> None:
    _, page, token = _kiosk(opened, tmp_path)
    head = opened.admin.get("/v1/elections/e/board/head")
    forged = page.post("/ballot", data={"form_token": "not-this-one", "choice:0": "Ann-selection"})
    assert forged.status_code == 400 and "not sent by this device" in forged.text
    over = _mark(page, token, "Ann-selection", "Ben-selection")
    assert over.status_code == 400 and "at most 1 allowed" in over.text
    unknown = _mark(page, token, "Zed-selection")
    assert unknown.status_code == 400 and "not on this ballot" in unknown.text
    assert opened.admin.get("/v1/elections/e/board/head") == head


def test_an_abandoned_ballot_is_spoiled_and_the_chain_survives_a_restart(
    opened: Election, tmp_path: Path
) -> None:
    _, page, token = _kiosk(opened, tmp_path)
    abandoned = _mark(page, token, "Cy-selection")  # the voter walks away
    _decide(page, token, _mark(page, token, "Ann-selection"), "cast")
    assert [b["state"] for b in opened.admin.get("/v1/elections/e/ballots")["ballots"]] == ["spoiled", "cast"]
    assert _decide(page, token, abandoned, "cast").status_code == 200  # redirected: no longer in progress
    # a new kiosk process on the same state continues the chain (a fork would be refused by the service)
    _, page2, token2 = _kiosk(opened, tmp_path)
    assert _decide(page2, token2, _mark(page2, token2, "Ben-selection"), "cast").status_code == 200
    assert len(opened.admin.get("/v1/elections/e/ballots")["ballots"]) == 3


def test_kiosk_believes_neither_a_wrong_device_hash_nor_a_wrong_receipt(
    opened: Election, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    device = Client(http=opened.http, token=opened.tokens.device, use_msgpack=False)
    real_post = Client.post

    def lying_hash(self: Client, path: str, body: Any, **kw: Any) -> Any:
        answer = real_post(self, path, body, **kw)
        if path.endswith("/devices"):
            answer["code_seed"] = "1" + answer["code_seed"][1:]
        return answer

    monkeypatch.setattr(Client, "post", lying_hash)
    with pytest.raises(VerificationFailed, match="device hash"):
        Kiosk(device, "e", 1, tmp_path, "https://votes.example", "station-1")
    monkeypatch.setattr(Client, "post", real_post)
    kiosk, _, _ = _kiosk(opened, tmp_path)

    def lying_receipt(self: Client, path: str, body: Any, **kw: Any) -> Any:
        answer = real_post(self, path, body, **kw)
        if path.endswith("/ballots"):
            answer["code"] = "00" + answer["code"][2:]
        return answer

    monkeypatch.setattr(Client, "post", lying_receipt)
    with pytest.raises(VerificationFailed, match="another code"):
        kiosk.decide(kiosk.encrypt(["Ann-selection"]).key, "cast")


def test_a_guardian_refuses_to_decrypt_a_cast_ballots_copy_posted_as_spoiled(election: Election) -> None:
    """A lying service (it holds the board) appends a copy of a voter's cast ballot marked spoiled: decrypting
    it would reveal that voter's choices. The guardian finds its ciphertexts repeated and posts nothing."""
    election.join_all()
    election.admin.post("/v1/elections/e/open", {})
    election.cast(VOTES[:2])
    cast = json.loads(
        election.admin.get("/v1/elections/e/board/by-name/submitted_ballots/submitted_ballot_b-0.json")[
            "payload"
        ]
    )
    copy = json.dumps({**cast, "state": 2}).encode()
    with election.store.write("e") as tx:
        tx.append("submitted_ballot", "submitted_ballots/submitted_ballot_b-0-again.json", copy)
    election.admin.post("/v1/elections/e/close", {})
    before = election.admin.get("/v1/elections/e/board/head")
    with pytest.raises(VerificationFailed, match="repeats the ciphertexts"):
        election.tools[0].decrypt([])
    assert election.admin.get("/v1/elections/e/board/head") == before


def test_a_dispute_is_answered_only_when_the_guardian_says_so(
    election: Election, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Answering a dispute publishes the disputed share. A dispute on the board may be the service's
    invention (it holds the board), so the tool answers one only when its guardian names the receiver, who
    confirmed it out of band."""
    honest = election.tools[0]
    original = GuardianTool._check_backups

    def first_disputes(self: GuardianTool, guardian: Any, records: dict[str, str]) -> list[str]:
        if self.guardian_id != "guardian-2":
            return original(self, guardian, records)
        # guardian-2 (or a service in its name) disputes guardian-1's backup
        received = self.client.get(f"{self.base}/guardians/guardian-2/backups")["backups"]
        while "guardian-1" not in received:
            received = self.client.get(f"{self.base}/guardians/guardian-2/backups")["backups"]
        self._post(
            f"{self.base}/guardians/guardian-2/verifications", {"sender_id": "guardian-1", "verified": False}
        )
        return ["guardian-1"]

    monkeypatch.setattr(GuardianTool, "_check_backups", first_disputes)
    election.join_all()
    names = lambda: {e["name"] for e in election.admin.get("/v1/elections/e/board?limit=1000")["entries"]}  # noqa: E731
    assert "ceremony/challenges/guardian-2/guardian-1.json" in names()
    honest.waiter = Waiter(0.5, 0.05)
    with pytest.raises(WaitedTooLong):
        honest.join(1)  # it waits for the opening, and does not answer
    assert "ceremony/answers/guardian-1/guardian-2.json" not in names()
    assert any("guardian-2 disputes" in d for d in honest.notices)
    honest.answer = {"guardian-2"}
    with pytest.raises(WaitedTooLong):
        honest.join(1)
    assert "ceremony/answers/guardian-1/guardian-2.json" in names()


def test_kiosk_survives_a_lost_answer_and_an_unreachable_service(
    opened: Election, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cast ballot arrives but its answer is lost: the voter walks away, and the next voter's ballot (which
    spoils the one left waiting) must not be refused for it. While the service does not answer, the voter
    gets a page saying so, and the ballot stays in progress to try again."""
    kiosk, page, token = _kiosk(opened, tmp_path)
    pending = kiosk.encrypt(["Ann-selection"])
    real_post = Client.post
    calls = {"n": 0}

    def answer_lost(self: Client, path: str, body: Any, **kw: Any) -> Any:
        real_post(self, path, body, **kw)
        calls["n"] += 1
        raise httpx.ReadError("the answer was lost")

    monkeypatch.setattr(Client, "post", answer_lost)
    failed = page.post(f"/ballot/{pending.key}/cast", data={"form_token": token})
    assert failed.status_code == 503 and "did not answer as it should" in failed.text and calls["n"] == 1
    monkeypatch.setattr(Client, "post", real_post)
    # the next voter: the waiting ballot is resolved from the service (it was cast), the chain goes on
    receipt = _decide(page, token, _mark(page, token, "Ben-selection"), "cast")
    assert receipt.status_code == 200
    ballots = opened.admin.get("/v1/elections/e/ballots")["ballots"]
    assert [b["state"] for b in ballots] == ["cast", "cast"]
