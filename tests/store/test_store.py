"""The service's store on its own (spec/80.2, 80.3): opening one fresh SQLite file from many places at
once; the chain the store appends is the chain a checker recomputes."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest
import votum
from votum.errors import InvalidInput, VotumError
from votum.store import Store
from votum.store.schema import LATEST


def _open_together(path: Path, n: int) -> tuple[list[list[int]], list[BaseException]]:
    start = threading.Barrier(n)
    applied: list[list[int]] = []
    failures: list[BaseException] = []

    def open_store() -> None:
        start.wait(timeout=30)
        try:
            store = Store(f"sqlite:///{path}")
        except BaseException as e:  # collected and asserted on below
            failures.append(e)
            return
        applied.append(store.migrations_applied)
        store.close()

    threads = [threading.Thread(target=open_store) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    return applied, failures


def test_many_stores_opening_fresh_files_at_once(tmp_path: Path) -> None:
    """Switching a fresh file to WAL from several connections at once made some of them fail at once
    with 'database is locked' (SQLite does not call the busy handler for a connection that holds a
    read lock and wants to write): about one round in twenty failed before the switch was made once,
    under a lock. 40 rounds of 6 stores each, every one must open and exactly one must migrate."""
    for round_ in range(40):
        path = tmp_path / f"round-{round_}.db"
        applied, failures = _open_together(path, 6)
        assert not failures, (round_, failures)
        assert sorted(applied) == [[]] * 5 + [list(range(1, LATEST + 1))]
        with sqlite3.connect(path) as conn:
            assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_store_waits_for_a_writer_on_a_fresh_file(tmp_path: Path) -> None:
    """Another process's write transaction on the file: a store opening meanwhile waits for it (the busy
    handler) rather than failing, and finds the file in WAL mode when it has opened."""
    path = tmp_path / "votum.db"
    Store(f"sqlite:///{path}").close()
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    opened = threading.Event()

    def open_store() -> None:
        Store(f"sqlite:///{path}").close()
        opened.set()

    t = threading.Thread(target=open_store)
    t.start()
    assert not opened.wait(0.5), "the store must wait for the write lock"
    other.execute("COMMIT")
    other.close()
    t.join(timeout=60)
    assert opened.is_set()


def test_a_version_1_database_gains_code_owners(tmp_path: Path) -> None:
    """Migration 2 adds the owner of each ballot code to a database made before it (spec/80.5)."""
    from sqlalchemy import inspect, text

    path = tmp_path / "votum.db"
    Store(f"sqlite:///{path}").close()
    with sqlite3.connect(path) as conn:
        conn.execute("ALTER TABLE codes DROP COLUMN owner")
        conn.execute("DELETE FROM schema_version WHERE version >= 2")
    store = Store(f"sqlite:///{path}")
    assert store.migrations_applied == list(range(2, LATEST + 1))
    with store.engine.connect() as conn:
        assert "owner" in {c["name"] for c in inspect(conn).get_columns("codes")}
        assert "guardian_keys" in inspect(conn).get_table_names()
        assert conn.execute(text("SELECT max(version) FROM schema_version")).scalar_one() == LATEST
    store.close()


def test_migration_5_moves_printed_ballots_out_of_the_spoiled_count(tmp_path: Path) -> None:
    """Before migration 5 a 2.1 printed ballot not yet recorded counted as spoiled; the migration counts
    it as printed, in each election, and leaves the others' counts alone (spec/80.11)."""
    path = tmp_path / "votum.db"
    store = Store(f"sqlite:///{path}")
    for election in ("paper", "other"):
        with store.create(election, 3, 2):
            pass
    store.close()
    rows = [("paper", "p1", "printed"), ("paper", "p2", "printed"), ("paper", "s1", "spoiled")]
    rows += [("paper", "c1", "cast"), ("other", "s1", "spoiled"), ("other", "p9", "cast")]
    with sqlite3.connect(path) as conn:
        for i, (election, ballot, state) in enumerate(rows):
            values = (election, ballot, state, f"code-{i}", i, b"d")
            conn.execute("INSERT INTO ballots VALUES (?, ?, ?, ?, ?, ?)", values)
        # the counts as intake kept them before: printed ballots among the spoiled
        conn.execute("UPDATE elections SET cast_count = 1, spoiled_count = 3 WHERE id = 'paper'")
        conn.execute("UPDATE elections SET cast_count = 1, spoiled_count = 1 WHERE id = 'other'")
        conn.execute("ALTER TABLE elections DROP COLUMN printed_count")
        conn.execute("DELETE FROM schema_version WHERE version >= 5")
    store = Store(f"sqlite:///{path}")
    assert store.migrations_applied == [5]
    got = {row.id: (row.cast_count, row.spoiled_count, row.printed_count) for row in store.elections()}
    assert got == {"paper": (1, 1, 2), "other": (1, 1, 0)}
    store.close()


def test_appended_entries_chain_as_the_checker_recomputes(tmp_path: Path) -> None:
    """The store hashes each payload once and hands the digest to `board_link`; a checker that hashes
    the payloads itself must reach the same head, a digest that is not the payload's must not."""
    store = Store(f"sqlite:///{tmp_path / 'b.db'}")
    payloads = [b"{}", b'{"a":1}', bytes(range(256))]
    with store.create("e1", 3, 2) as tx:
        for i, p in enumerate(payloads):
            tx.append("k", f"n{i}.json", p)
    checker = votum.BoardChecker("e1")
    for entry in store.iter_entries("e1"):
        assert entry.digest == votum.board_payload_digest(entry.payload or b"")
        checker.push(entry.seq, entry.kind, entry.name, entry.payload, entry.hash)
    assert checker.head == store.election("e1").head_hash
    # a stored digest that is not the payload's breaks the chain for the checker
    with store.write("e1") as tx:
        tx.append("k", "lie.json", b"one", votum.board_payload_digest(b"two"))
    last = store.entry("e1", 3)
    with pytest.raises(VotumError):
        checker.push(last.seq, last.kind, last.name, last.payload, last.hash)
    with pytest.raises((InvalidInput, ValueError)):
        votum.board_link(b"\0" * 32, 0, "k", "n", b"short")
    store.close()
