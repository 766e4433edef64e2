"""Storage of the election service: the bulletin board and the state beside it (spec/80).

One layer over SQLAlchemy Core serves SQLite (the default: one file, WAL, `synchronous=FULL`) and
PostgreSQL (psycopg 3, by URL). Every write is one transaction that locks the election's row first
(`Store.write`), appends its entries to the hash chain from the locked head and updates the head in
the same commit, so there is never a half-stored ballot or a gap in the chain, and an answered write
is durable.

The package by job: `engine` opens the database and begins write transactions, `transaction` is the
write transaction on one election (`Tx`), `reads` the read side, `rules` the uniqueness rules checked
under the lock (ballot ids, ballot codes, guardian keys), `rows` the rows handed out, `schema` the
tables and their migrations.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict

from sqlalchemy import Engine, select, text
from sqlalchemy.exc import IntegrityError

from votum import board_genesis
from votum.errors import Conflict, NotFound
from votum.store import schema
from votum.store.engine import Writer, dialect_of, open_engine
from votum.store.reads import Reads
from votum.store.rows import PHASES, BallotRow, ElectionRow, Entry, check_id, election_row
from votum.store.rules import (
    CodeLink,
    add_ballots,
    add_ciphertexts,
    add_codes,
    chain_tail,
    ciphertext_owners,
    claim_guardian_key,
    code_links,
    existing_ballots,
    mark_chained,
    record_printed,
)
from votum.store.schema import ciphertext_fingerprints, elections, fingerprint
from votum.store.transaction import Tx, payload_digest

__all__ = [
    "PHASES",
    "BallotRow",
    "CodeLink",
    "ElectionRow",
    "Entry",
    "Store",
    "Tx",
    "add_ballots",
    "add_ciphertexts",
    "add_codes",
    "chain_tail",
    "check_id",
    "ciphertext_fingerprints",
    "ciphertext_owners",
    "claim_guardian_key",
    "code_links",
    "existing_ballots",
    "fingerprint",
    "mark_chained",
    "payload_digest",
    "record_printed",
]


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class Store(Reads):
    """The service's database. `url` is an SQLAlchemy URL: `sqlite:///path/votum.db` or
    `postgresql+psycopg://user@host/db`. The schema is migrated on open."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.dialect, url = dialect_of(url)
        self.engine: Engine = open_engine(self.dialect, url)
        self._writer = Writer(self.dialect, self.engine)
        # several servers may start at once on one database: the migration runs under the database's
        # write lock (SQLite: BEGIN IMMEDIATE; PostgreSQL: an advisory lock held to the commit), so one
        # migrates and the others wait, then find nothing left to apply
        with self._writer.transaction() as conn:
            if self.dialect == "postgresql":
                conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": schema.MIGRATION_LOCK})
            self.migrations_applied = schema.migrate(conn)

    def close(self) -> None:
        self.engine.dispose()

    def __repr__(self) -> str:
        return f"Store({self.engine.url.render_as_string(hide_password=True)!r})"

    @contextmanager
    def create(self, election_id: str, number_of_guardians: int, quorum: int) -> Iterator[Tx]:
        """A new election in phase `ceremony` with an empty board; the block appends its first entries.
        An id already taken fails `Conflict`."""
        check_id(election_id, "election id")
        try:
            with self._writer.transaction() as conn:
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
                tx.flush()
        except IntegrityError as e:
            raise Conflict(f"election {election_id!r} exists") from e

    @contextmanager
    def write(self, election_id: str) -> Iterator[Tx]:
        """A write transaction on `election_id`, its row locked for the block (spec/80.3)."""
        try:
            with self._writer.transaction() as conn:
                query = select(elections).where(elections.c.id == election_id)
                if self.dialect == "postgresql":
                    query = query.with_for_update()
                row = conn.execute(query).first()
                if row is None:
                    raise NotFound(f"no election {election_id!r}")
                tx = Tx(conn, election_row(row))
                yield tx
                tx.flush()
        except IntegrityError as e:
            # a uniqueness race the checks inside the transaction did not see: nothing was stored
            raise Conflict(f"a concurrent write on election {election_id!r} conflicts with this one") from e
