"""Opening a database: SQLite (one file, WAL, `synchronous=FULL`) or PostgreSQL (psycopg 3), and the
write connections whose transactions take the database's write lock at BEGIN (spec/80.3)."""

from __future__ import annotations

import fcntl
import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event, make_url

from votum.errors import InvalidInput


def dialect_of(url: str) -> tuple[str, str]:
    """The dialect (`sqlite` or `postgresql`) and the URL SQLAlchemy should open."""
    dialect = url.split(":", 1)[0].split("+", 1)[0]
    if dialect not in ("sqlite", "postgresql"):
        raise InvalidInput(f"database URL {url.split(':', 1)[0]!r}: use sqlite:/// or postgresql+psycopg://")
    if dialect == "postgresql" and url.startswith("postgresql://"):
        url = "postgresql+psycopg://" + url[len("postgresql://") :]
    return dialect, url


def open_engine(dialect: str, url: str) -> Engine:
    if dialect == "postgresql":
        return create_engine(url, pool_size=8, max_overflow=8, pool_pre_ping=True)
    ensure_wal(make_url(url).database)
    engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 60})

    @event.listens_for(engine, "connect")
    def _connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # transactions are begun below, not by the driver
        cur = dbapi_conn.cursor()
        # no journal_mode here: WAL is a property of the file, set once by ensure_wal
        cur.execute("PRAGMA synchronous=FULL")
        cur.execute("PRAGMA busy_timeout=60000")
        cur.close()

    @event.listens_for(engine, "begin")
    def _begin(conn: Connection) -> None:
        # writers take the write lock at BEGIN, so the head they read is the head they extend
        mode = "BEGIN IMMEDIATE" if conn.get_execution_options().get("votum_write") else "BEGIN"
        conn.exec_driver_sql(mode)

    return engine


class Writer:
    """Write transactions on an engine. SQLite allows one writer: a process-wide lock keeps this
    process's writers from spinning on the busy timeout (other processes still wait on the database's
    own lock), and BEGIN IMMEDIATE takes the write lock before the first read."""

    def __init__(self, dialect: str, engine: Engine) -> None:
        self.engine = engine
        self._lock = threading.Lock() if dialect == "sqlite" else None

    @contextmanager
    def transaction(self) -> Iterator[Connection]:
        if self._lock is not None:
            with self._lock, self.engine.connect() as conn:
                conn = conn.execution_options(votum_write=True)
                with conn.begin():
                    yield conn
        else:
            with self.engine.begin() as conn:
                yield conn


def ensure_wal(path: str | None) -> None:
    """Put the SQLite file at `path` in WAL mode, once, under an exclusive lock on `path.lock`.

    Switching a file to WAL takes a read transaction and then upgrades it to a write; when several
    connections do that at once (servers starting together on a fresh file), the losers get
    SQLITE_BUSY at once, without the busy handler, since they already hold a read lock. So the
    switch is made by one connection at a time, before any other connection of this store exists;
    WAL is stored in the file, and later connections open in it without asking.
    """
    if not path or path == ":memory:" or path.startswith("file:"):
        return
    with open(path + ".lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file is closed
        conn = sqlite3.connect(path, timeout=60, isolation_level=None)
        try:
            mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        finally:
            conn.close()
    if mode != "wal":
        raise InvalidInput(f"{os.path.basename(path)}: SQLite could not use WAL mode (got {mode!r})")
