"""Replay-and-spoil against the ElectionGuard ballot box (issue 45, finding 8; spec/62.5, spec/80.5).

Anyone with a device token can copy a cast ballot's ciphertexts (public on the board) into a ballot of a new
id, re-hash it, chain it on its own device and submit it as spoiled. Spoiled ballots are decrypted at
publication: the copy's decryption would show the victim's vote beside the victim's ballot code. The
service must refuse any ballot that repeats a selection ciphertext already on the board (or in the same
request), and the verifier must flag a record in which two ballots share one."""

from __future__ import annotations

import copy
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from votum import Group, eg_from_hex, eg_hash_elems, eg_to_hex
from votum.client import Client, ServiceError
from votum.client.election import ElectionDriver, Tokens
from votum.eg import manifest_from_names
from votum.service.app import create_app
from votum.service.settings import Settings
from votum.store import Store
from votum.store.schema import LATEST

MANIFEST = manifest_from_names(["Party A", "Party B"], ["Alice", "Bob", "Carol", "Dave"])
EG = Group("eg-4096")


def num(hex_text: str) -> Any:
    return EG.scalar(eg_from_hex(hex_text))


def rehash(ballot: dict[str, Any], object_id: str, code_seed: str) -> dict[str, Any]:
    """`ballot` under a new id, its crypto hash recomputed and its code chained from `code_seed`: what an
    intruder with its own device can do to any ciphertexts it copies."""
    out = copy.deepcopy(ballot)
    out.pop("state", None)
    out["object_id"] = object_id
    contests = sorted(out["contests"], key=lambda c: c["sequence_order"])
    crypto = eg_hash_elems(object_id, num(out["manifest_hash"]), *[num(c["crypto_hash"]) for c in contests])
    code = eg_hash_elems(num(code_seed), int(out["timestamp"]), crypto)
    out["crypto_hash"] = eg_to_hex(crypto.to_int())
    out["code_seed"] = code_seed
    out["code"] = eg_to_hex(code.to_int())
    return out


class Intrusion:
    def __init__(self, client: Client, driver: ElectionDriver, intruder: str, store: Store) -> None:
        self.client, self.driver, self.intruder, self.store = client, driver, intruder, store

    def device(self, device_id: int) -> str:
        doc = {"device_id": device_id, "session_id": 1, "launch_code": 1, "location": "votum-e1"}
        return str(self.client.post("/v1/elections/e1/devices", doc, token=self.intruder)["code_seed"])

    def post(self, ballots: list[dict[str, Any]], state: str = "spoiled") -> Any:
        body = {"ballots": [{"ballot": b, "state": state} for b in ballots]}
        return self.client.post("/v1/elections/e1/ballots/batch", body, token=self.intruder)

    def head(self) -> tuple[int, bytes, int]:
        row = self.store.election("e1")
        return row.head_seq, row.head_hash, row.spoiled_count

    def refused(self, ballots: list[dict[str, Any]]) -> ServiceError:
        before = self.head()
        with pytest.raises(ServiceError) as info:
            self.post(ballots)
        assert (info.value.status, info.value.type) == (409, "conflict"), info.value
        assert self.head() == before, "a refused replay changed the board"
        return info.value


@pytest.fixture
def intrusion(store_url: str, tmp_path: Path) -> Iterator[Intrusion]:
    tokens = Tokens.generate(3)
    intruder = secrets.token_urlsafe(24)
    store = Store(store_url)
    app = create_app(
        Settings(data_dir=tmp_path, tokens={**tokens.settings_map(), intruder: "device"}), store=store
    )
    with TestClient(app) as http:
        client = Client(http=http)
        driver = ElectionDriver(client, tokens, "e1", MANIFEST, quorum=2, seed=7)
        driver.ceremony()
        yield Intrusion(client, driver, intruder, store)
    store.close()


def victim_ballot(x: Intrusion) -> dict[str, Any]:
    """A voter's cast ballot, as anyone reads it from the board."""
    plan = x.driver.plan(1)[0]
    x.driver.submit([plan])
    name = f"submitted_ballots/submitted_ballot_{plan.ballot_id}.json"
    import json

    doc: dict[str, Any] = json.loads(x.client.get(f"/v1/elections/e1/board/by-name/{name}")["payload"])
    return doc


def test_a_cast_ballot_copied_whole_under_a_new_id_is_refused(intrusion: Intrusion) -> None:
    victim = victim_ballot(intrusion)
    seed = intrusion.device(2)
    err = intrusion.refused([rehash(victim, "replay-0001", seed)])
    assert victim["object_id"] in err.detail and "ciphertext" in err.detail


def test_one_contest_copied_into_an_otherwise_fresh_ballot_is_refused(intrusion: Intrusion) -> None:
    victim = victim_ballot(intrusion)
    seed = intrusion.device(2)
    own = intrusion.driver.plan(1)[0].ballot  # an honest encryption, never submitted
    mixed = copy.deepcopy(own)
    mixed["contests"][0] = copy.deepcopy(victim["contests"][0])
    intrusion.refused([rehash(mixed, "replay-0002", seed)])
    # the same fresh ballot without the copied contest goes in
    receipts = intrusion.post([rehash(own, "honest-0003", seed)])["receipts"]
    assert [r["ballot_id"] for r in receipts] == ["honest-0003"]


def test_two_copies_in_one_request_are_refused_as_a_whole(intrusion: Intrusion) -> None:
    """Neither copy is on the board yet: the second repeats the first within the request."""
    own = intrusion.driver.plan(1)[0].ballot
    seed = intrusion.device(2)
    first = rehash(own, "copy-a", seed)
    second = rehash(own, "copy-b", first["code"])
    intrusion.refused([first, second])


def test_a_database_from_before_migration_4_learns_its_ciphertexts(tmp_path: Path) -> None:
    """Migration 4 fills `ciphertexts` from the ballots already on the board, so a replay of a ballot
    accepted before the upgrade is refused after it."""
    import sqlite3

    from sqlalchemy import func, select
    from votum.store.schema import ciphertexts

    url = f"sqlite:///{tmp_path / 'votum.db'}"
    tokens = Tokens.generate(3)
    intruder = secrets.token_urlsafe(24)
    settings = Settings(data_dir=tmp_path, tokens={**tokens.settings_map(), intruder: "device"})
    store = Store(url)
    with TestClient(create_app(settings, store=store)) as http:
        client = Client(http=http)
        driver = ElectionDriver(client, tokens, "e1", MANIFEST, quorum=2, seed=7)
        driver.ceremony()
        x = Intrusion(client, driver, intruder, store)
        victim = victim_ballot(x)
    store.close()
    with sqlite3.connect(tmp_path / "votum.db") as conn:
        conn.execute("DROP TABLE ciphertexts")
        conn.execute("DELETE FROM schema_version WHERE version >= 4")
    store = Store(url)
    assert store.migrations_applied == list(range(4, LATEST + 1))
    with store.engine.connect() as conn:
        stored = conn.execute(select(func.count()).select_from(ciphertexts)).scalar_one()
    selections = sum(len(c["ballot_selections"]) for c in victim["contests"])
    assert stored == selections
    with TestClient(create_app(settings, store=store)) as http:
        client = Client(http=http)
        x = Intrusion(client, driver, intruder, store)
        x.client = client
        err = x.refused([rehash(victim, "replay-after-upgrade", x.device(2))])
        assert victim["object_id"] in err.detail
    store.close()
