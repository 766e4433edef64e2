"""The `/v1` service's store (spec/80): atomic writes, and servers starting at once migrate once.

Every refusal is checked three ways: the status, the problem document's `type`, and that nothing was
stored (the board's head and the database's rows are unchanged): `v1service.Service.refused`."""

from __future__ import annotations

import json

import pytest
import votum
from sqlalchemy import select
from votum.store import Store


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
