"""Storage of the election service: the bulletin board and the state beside it (spec/80).

One layer over SQLAlchemy Core serves SQLite (the default: one file, WAL, `synchronous=FULL`) and
PostgreSQL (psycopg 3, by URL). Every write is one transaction that locks the election's row first
(`Store.write`), appends its entries to the hash chain from the locked head and updates the head in
the same commit, so there is never a half-stored ballot or a gap in the chain, and an answered write
is durable.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine, bindparam, create_engine, event, make_url, select, text, update
from sqlalchemy.exc import IntegrityError

from votum import board_genesis, board_link
from votum.errors import Conflict, InvalidInput, NotFound, WrongPhase
from votum.store import schema
from votum.store.schema import ballots, board, codes, elections, guardian_keys

__all__ = ["BallotRow", "CodeLink", "ElectionRow", "Entry", "Store", "Tx", "check_id"]

PHASES = ("ceremony", "open", "closed", "published")
T = TypeVar("T")
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def check_id(value: str, what: str) -> str:
    """An identifier that becomes part of a board name (spec/80.1)."""
    if not isinstance(value, str) or not _ID.fullmatch(value) or ".." in value:
        raise InvalidInput(
            f"{what} {value!r}: use 1-128 of A-Z a-z 0-9 . _ - (starting with a letter or digit)"
        )
    return value


@dataclass(frozen=True)
class Entry:
    election_id: str
    seq: int
    kind: str
    name: str
    hash: bytes
    digest: bytes
    payload: bytes | None = field(default=None, repr=False)

    def text(self) -> str:
        if self.payload is None:
            raise InvalidInput(f"entry {self.seq} was read without its payload")
        return self.payload.decode()


@dataclass(frozen=True)
class ElectionRow:
    id: str
    phase: str
    number_of_guardians: int
    quorum: int
    head_seq: int
    head_hash: bytes
    cast_count: int
    spoiled_count: int
    created_at: str
    tally: bytes | None = field(default=None, repr=False)


@dataclass(frozen=True)
class BallotRow:
    ballot_id: str
    state: str
    code: str
    seq: int
    digest: bytes


def _election(row: Any) -> ElectionRow:
    return ElectionRow(
        id=row.id,
        phase=row.phase,
        number_of_guardians=row.number_of_guardians,
        quorum=row.quorum,
        head_seq=row.head_seq,
        head_hash=bytes(row.head_hash),
        cast_count=row.cast_count,
        spoiled_count=row.spoiled_count,
        created_at=row.created_at,
        tally=bytes(row.tally) if row.tally is not None else None,
    )


def _entry(election_id: str, row: Any, with_payload: bool) -> Entry:
    return Entry(
        election_id=election_id,
        seq=row.seq,
        kind=row.kind,
        name=row.name,
        hash=bytes(row.hash),
        digest=bytes(row.digest),
        payload=bytes(row.payload) if with_payload else None,
    )


class Tx:
    """One write transaction on one election, its row locked: append entries, move the phase, update
    the tally and counts. Nothing is visible to others until `Store.write`'s block ends without error."""

    def __init__(self, conn: Connection, election: ElectionRow) -> None:
        self.conn = conn
        self.election = election
        self._seq = election.head_seq
        self._hash = election.head_hash
        self._rows: list[dict[str, Any]] = []
        self._changes: dict[str, Any] = {}
        self.appended: list[Entry] = []

    def require_phase(self, *phases: str) -> None:
        if self.election.phase not in phases:
            raise WrongPhase(
                f"election {self.election.id!r} is in phase {self.election.phase!r}; "
                f"this needs {' or '.join(phases)}"
            )

    def append(self, kind: str, name: str, payload: bytes) -> Entry:
        seq = self._seq + 1
        new = board_link(self._hash, seq, kind, name, payload)
        digest = payload_digest(payload)
        self._rows.append(
            {
                "election_id": self.election.id,
                "seq": seq,
                "kind": kind,
                "name": name,
                "payload": payload,
                "digest": digest,
                "hash": new,
            }
        )
        self._seq, self._hash = seq, new
        entry = Entry(self.election.id, seq, kind, name, new, digest)
        self.appended.append(entry)
        return entry

    def named(self, names: list[str]) -> dict[str, Entry]:
        """Entries already on the board (committed) under any of `names`, without payloads."""
        out: dict[str, Entry] = {}
        for chunk in _chunks(names):
            rows = self.conn.execute(
                select(board.c.seq, board.c.kind, board.c.name, board.c.hash, board.c.digest).where(
                    board.c.election_id == self.election.id, board.c.name.in_(chunk)
                )
            )
            for row in rows:
                out[row.name] = _entry(self.election.id, row, False)
        return out

    def of_kind(self, kind: str) -> list[Entry]:
        """Every committed entry of `kind`, with payloads, in board order (for the small kinds)."""
        rows = self.conn.execute(
            select(board)
            .where(board.c.election_id == self.election.id, board.c.kind == kind)
            .order_by(board.c.seq)
        )
        return [_entry(self.election.id, row, True) for row in rows]

    def set(self, **changes: Any) -> None:
        """Changes to the election's row: `phase`, `tally`, `cast_count`, `spoiled_count`."""
        unknown = set(changes) - {"phase", "tally", "cast_count", "spoiled_count"}
        if unknown:
            raise InvalidInput(f"not an election field: {sorted(unknown)}")
        self._changes.update(changes)

    def _flush(self) -> None:
        if self._rows:
            self.conn.execute(board.insert(), self._rows)
        if self._rows or self._changes:
            values = dict(self._changes)
            values.update(head_seq=self._seq, head_hash=self._hash)
            self.conn.execute(update(elections).where(elections.c.id == self.election.id).values(**values))


def payload_digest(payload: bytes) -> bytes:
    """SHA-256 of a payload: what the chain absorbs (spec/80.2) and what resubmissions are compared by."""
    return hashlib.sha256(payload).digest()


def _chunks(values: list[T], size: int = 500) -> Iterator[list[T]]:
    """`values` in slices small enough for one `IN (…)` list."""
    for start in range(0, len(values), size):
        yield values[start : start + size]


def _ensure_wal(path: str | None) -> None:
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


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class Store:
    """The service's database. `url` is an SQLAlchemy URL: `sqlite:///path/votum.db` or
    `postgresql+psycopg://user@host/db`. The schema is migrated on open."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.dialect = url.split(":", 1)[0].split("+", 1)[0]
        if self.dialect not in ("sqlite", "postgresql"):
            raise InvalidInput(
                f"database URL {url.split(':', 1)[0]!r}: use sqlite:/// or postgresql+psycopg://"
            )
        if self.dialect == "postgresql" and url.startswith("postgresql://"):
            url = "postgresql+psycopg://" + url[len("postgresql://") :]
        self.engine: Engine = self._engine(url)
        # SQLite allows one writer; this lock keeps this process's writers from spinning on its
        # busy timeout (other processes still wait on the database's own lock)
        self._write_lock = threading.Lock() if self.dialect == "sqlite" else None
        # several servers may start at once on one database: the migration runs under the database's
        # write lock (SQLite: BEGIN IMMEDIATE; PostgreSQL: an advisory lock held to the commit), so one
        # migrates and the others wait, then find nothing left to apply
        with self._writing() as conn:
            if self.dialect == "postgresql":
                conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": schema.MIGRATION_LOCK})
            self.migrations_applied = schema.migrate(conn)

    def _engine(self, url: str) -> Engine:
        if self.dialect == "postgresql":
            return create_engine(url, pool_size=8, max_overflow=8, pool_pre_ping=True)
        _ensure_wal(make_url(url).database)
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 60})

        @event.listens_for(engine, "connect")
        def _connect(dbapi_conn: Any, _record: Any) -> None:
            dbapi_conn.isolation_level = None  # transactions are begun below, not by the driver
            cur = dbapi_conn.cursor()
            # no journal_mode here: WAL is a property of the file, set once by _ensure_wal
            cur.execute("PRAGMA synchronous=FULL")
            cur.execute("PRAGMA busy_timeout=60000")
            cur.close()

        @event.listens_for(engine, "begin")
        def _begin(conn: Connection) -> None:
            # writers take the write lock at BEGIN, so the head they read is the head they extend
            mode = "BEGIN IMMEDIATE" if conn.get_execution_options().get("votum_write") else "BEGIN"
            conn.exec_driver_sql(mode)

        return engine

    def close(self) -> None:
        self.engine.dispose()

    def __repr__(self) -> str:
        return f"Store({self.engine.url.render_as_string(hide_password=True)!r})"

    # --- writes ---------------------------------------------------------------------------------

    @contextmanager
    def _writing(self) -> Iterator[Connection]:
        if self._write_lock is not None:
            with self._write_lock, self.engine.connect() as conn:
                conn = conn.execution_options(votum_write=True)
                with conn.begin():
                    yield conn
        else:
            with self.engine.begin() as conn:
                yield conn

    @contextmanager
    def create(self, election_id: str, number_of_guardians: int, quorum: int) -> Iterator[Tx]:
        """A new election in phase `ceremony` with an empty board; the block appends its first entries.
        An id already taken fails `Conflict`."""
        check_id(election_id, "election id")
        try:
            with self._writing() as conn:
                if conn.execute(select(elections.c.id).where(elections.c.id == election_id)).first():
                    raise Conflict(f"election {election_id!r} exists")
                row = ElectionRow(
                    id=election_id,
                    phase="ceremony",
                    number_of_guardians=number_of_guardians,
                    quorum=quorum,
                    head_seq=-1,
                    head_hash=board_genesis(election_id),
                    cast_count=0,
                    spoiled_count=0,
                    created_at=_now(),
                )
                conn.execute(elections.insert().values(**asdict(row)))
                tx = Tx(conn, row)
                yield tx
                tx._flush()
        except IntegrityError as e:
            raise Conflict(f"election {election_id!r} exists") from e

    @contextmanager
    def write(self, election_id: str) -> Iterator[Tx]:
        """A write transaction on `election_id`, its row locked for the block (spec/80.3)."""
        try:
            with self._writing() as conn:
                query = select(elections).where(elections.c.id == election_id)
                if self.dialect == "postgresql":
                    query = query.with_for_update()
                row = conn.execute(query).first()
                if row is None:
                    raise NotFound(f"no election {election_id!r}")
                tx = Tx(conn, _election(row))
                yield tx
                tx._flush()
        except IntegrityError as e:
            # a uniqueness race the checks inside the transaction did not see: nothing was stored
            raise Conflict(f"a concurrent write on election {election_id!r} conflicts with this one") from e

    # --- reads ------------------------------------------------------------------------------------

    def election(self, election_id: str) -> ElectionRow:
        with self.engine.connect() as conn:
            row = conn.execute(select(elections).where(elections.c.id == election_id)).first()
        if row is None:
            raise NotFound(f"no election {election_id!r}")
        return _election(row)

    def election_ids(self) -> list[str]:
        with self.engine.connect() as conn:
            return list(conn.execute(select(elections.c.id).order_by(elections.c.created_at)).scalars())

    def entry(self, election_id: str, seq: int) -> Entry:
        with self.engine.connect() as conn:
            row = conn.execute(
                select(board).where(board.c.election_id == election_id, board.c.seq == seq)
            ).first()
        if row is None:
            self.election(election_id)
            raise NotFound(f"election {election_id!r} has no board entry {seq}")
        return _entry(election_id, row, True)

    def entry_named(self, election_id: str, name: str) -> Entry | None:
        with self.engine.connect() as conn:
            row = conn.execute(
                select(board).where(board.c.election_id == election_id, board.c.name == name)
            ).first()
        return None if row is None else _entry(election_id, row, True)

    def require_named(self, election_id: str, name: str, missing: str) -> Entry:
        """The entry under `name`; NotFound saying `missing` when there is none (or saying there is no
        such election)."""
        entry = self.entry_named(election_id, name)
        if entry is None:
            self.election(election_id)
            raise NotFound(missing)
        return entry

    def entries(
        self,
        election_id: str,
        after: int = -1,
        limit: int = 100,
        kinds: list[str] | None = None,
        with_payload: bool = True,
        prefix: str | None = None,
    ) -> list[Entry]:
        """Entries with `seq > after`, in order, at most `limit`."""
        cols = [board.c.seq, board.c.kind, board.c.name, board.c.hash, board.c.digest]
        if with_payload:
            cols.append(board.c.payload)
        query = select(*cols).where(board.c.election_id == election_id, board.c.seq > after)
        if kinds:
            query = query.where(board.c.kind.in_(kinds))
        if prefix:
            query = query.where(board.c.name.startswith(prefix, autoescape=True))
        query = query.order_by(board.c.seq).limit(limit)
        with self.engine.connect() as conn:
            return [_entry(election_id, row, with_payload) for row in conn.execute(query)]

    def iter_entries(
        self, election_id: str, kinds: list[str] | None = None, page: int = 500, prefix: str | None = None
    ) -> Iterator[Entry]:
        """Every entry (of `kinds`), in order, a page at a time: memory stays flat."""
        after = -1
        while True:
            got = self.entries(election_id, after, page, kinds, True, prefix)
            yield from got
            if len(got) < page:
                return
            after = got[-1].seq

    def ballot(self, election_id: str, ballot_id: str) -> BallotRow | None:
        with self.engine.connect() as conn:
            row = conn.execute(
                select(ballots).where(ballots.c.election_id == election_id, ballots.c.ballot_id == ballot_id)
            ).first()
        return None if row is None else _ballot(row)

    def ballots(
        self, election_id: str, state: str | None = None, after: int = -1, limit: int = 1000
    ) -> list[BallotRow]:
        query = select(ballots).where(ballots.c.election_id == election_id, ballots.c.seq > after)
        if state is not None:
            query = query.where(ballots.c.state == state)
        with self.engine.connect() as conn:
            return [_ballot(r) for r in conn.execute(query.order_by(ballots.c.seq).limit(limit))]

    def iter_ballots(
        self, election_id: str, state: str | None = None, page: int = 1000
    ) -> Iterator[BallotRow]:
        """Every ballot (in `state`), in board order, a page at a time."""
        after = -1
        while True:
            got = self.ballots(election_id, state, after, page)
            yield from got
            if len(got) < page:
                return
            after = got[-1].seq


def _ballot(row: Any) -> BallotRow:
    return BallotRow(row.ballot_id, row.state, row.code, row.seq, bytes(row.digest))


# --- ballot bookkeeping inside a write transaction ---------------------------------------------------


def existing_ballots(tx: Tx, ballot_ids: list[str]) -> dict[str, BallotRow]:
    out: dict[str, BallotRow] = {}
    for chunk in _chunks(ballot_ids):
        for row in tx.conn.execute(
            select(ballots).where(ballots.c.election_id == tx.election.id, ballots.c.ballot_id.in_(chunk))
        ):
            out[row.ballot_id] = _ballot(row)
    return out


def add_codes(tx: Tx, new_codes: list[str], owner: str | None) -> None:
    """Codes ballots may chain from, on the chain of the device token `owner` (spec/80.5)."""
    if new_codes:
        tx.conn.execute(
            codes.insert(),
            [
                {"election_id": tx.election.id, "code": c, "chained_by": None, "owner": owner}
                for c in new_codes
            ],
        )


@dataclass(frozen=True)
class CodeLink:
    #: the ballot already chained from the code, None while it is free
    chained_by: str | None
    #: the device token whose chain it is on (None: any, for codes older than the binding)
    owner: str | None

    def extendable_by(self, owner: str | None) -> bool:
        """Whether the device token `owner` may chain from this code, or register its device again."""
        return self.owner is None or self.owner == owner


def code_links(tx: Tx, seeds: list[str]) -> dict[str, CodeLink]:
    """For each of `seeds` that is a code ballots may chain from (a device's hash or an accepted ballot's
    code): who chained from it and whose chain it is on. Unknown seeds are absent."""
    found: dict[str, CodeLink] = {}
    for chunk in _chunks(seeds):
        for code, chained_by, owner in tx.conn.execute(
            select(codes.c.code, codes.c.chained_by, codes.c.owner).where(
                codes.c.election_id == tx.election.id, codes.c.code.in_(chunk)
            )
        ):
            found[code] = CodeLink(chained_by, owner)
    return found


def mark_chained(tx: Tx, links: list[tuple[str, str]]) -> None:
    """Records each (code_seed, ballot id): the code is used (checked free by the caller, under the lock)."""
    if links:
        tx.conn.execute(
            update(codes)
            .where(codes.c.election_id == tx.election.id, codes.c.code == bindparam("seed"))
            .values(chained_by=bindparam("ballot")),
            [{"seed": seed, "ballot": ballot_id} for seed, ballot_id in links],
        )


def claim_guardian_key(tx: Tx, record: dict[str, Any], guardian_id: str) -> None:
    """Records that this election uses the guardian's election public key; refuses a key already used
    in another election on this database (spec/80.4: ElectionGuard ballots commit to the extended
    base hash, which the same manifest and the same guardian records would repeat, so a ballot of
    one election would be valid in the other)."""
    digest = schema.guardian_key_digest(str(record.get("election_public_key", "")))
    found = tx.conn.execute(
        select(guardian_keys.c.election_id, guardian_keys.c.guardian_id).where(
            guardian_keys.c.key_digest == digest
        )
    ).first()
    if found is not None:
        if found.election_id != tx.election.id:
            raise Conflict(
                f"guardian {guardian_id!r}'s election public key is already used in election "
                f"{found.election_id!r}: a guardian makes new keys for every election"
            )
        return
    tx.conn.execute(
        guardian_keys.insert().values(key_digest=digest, election_id=tx.election.id, guardian_id=guardian_id)
    )


def add_ballots(tx: Tx, rows: list[dict[str, Any]]) -> None:
    if rows:
        tx.conn.execute(ballots.insert(), [{"election_id": tx.election.id, **r} for r in rows])
