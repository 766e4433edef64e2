"""The `/v1` board and record downloads (spec/80): pages, a tampered copy caught, one shared export while
ballots come in, and downloads beyond the limit answered busy.

Every refusal is checked three ways: the status, the problem document's `type`, and that nothing was
stored (the board's head and the database's rows are unchanged): `v1service.Service.refused`."""

from __future__ import annotations

from pathlib import Path

import msgpack  # type: ignore[import-untyped]
import pytest
import votum
from v1service import Service, opened, service
from votum.client import ServiceError
from votum.client.election import ElectionDriver, check_board
from votum.errors import VerificationFailed
from votum.service.state import service_state
from votum.service.v1.state import v1_state
from votum.store import Store


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
