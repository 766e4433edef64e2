"""The store's tables and their migrations (spec/80.3).

The schema is versioned: `schema_version` holds the migrations applied, each migration runs once, in
order, in one transaction. Version 1 creates the tables below; a later change adds a function to
`MIGRATIONS` and never edits an applied one.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable

from sqlalchemy import (
    BigInteger,
    Column,
    Connection,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
    UniqueConstraint,
    func,
    inspect,
    select,
    text,
    update,
)

metadata = MetaData()

schema_version = Table(
    "schema_version",
    metadata,
    Column("version", Integer, primary_key=True, autoincrement=False),
    Column("applied_at", Text, nullable=False),
)

#: one row per election: its phase, the board's head and the running encrypted tally, all updated
#: in the transaction that appends to the board
elections = Table(
    "elections",
    metadata,
    Column("id", String(128), primary_key=True),
    Column("phase", String(16), nullable=False),
    Column("number_of_guardians", Integer, nullable=False),
    Column("quorum", Integer, nullable=False),
    Column("head_seq", BigInteger, nullable=False),
    Column("head_hash", LargeBinary, nullable=False),
    Column("tally", LargeBinary, nullable=True),
    Column("cast_count", BigInteger, nullable=False),
    Column("spoiled_count", BigInteger, nullable=False),
    Column("created_at", Text, nullable=False),
    #: 2.1 pre-encrypted ballots printed and not yet recorded (migration 5; before it they counted as spoiled)
    Column("printed_count", BigInteger, nullable=False, server_default="0"),
)

#: the bulletin board: every public document, hash-chained (spec/80.2)
board = Table(
    "board",
    metadata,
    Column("election_id", String(128), nullable=False),
    Column("seq", BigInteger, nullable=False),
    Column("kind", String(32), nullable=False),
    Column("name", String(512), nullable=False),
    Column("payload", LargeBinary, nullable=False),
    Column("digest", LargeBinary, nullable=False),
    Column("hash", LargeBinary, nullable=False),
    PrimaryKeyConstraint("election_id", "seq"),
    UniqueConstraint("election_id", "name", name="board_name_unique"),
    Index("board_kind", "election_id", "kind", "seq"),
)

#: accepted ballots, for receipts, idempotent resubmission and listing by state
ballots = Table(
    "ballots",
    metadata,
    Column("election_id", String(128), nullable=False),
    Column("ballot_id", String(128), nullable=False),
    Column("state", String(8), nullable=False),
    Column("code", String(80), nullable=False),
    Column("seq", BigInteger, nullable=False),
    Column("digest", LargeBinary, nullable=False),
    PrimaryKeyConstraint("election_id", "ballot_id"),
    Index("ballots_state", "election_id", "state", "seq"),
    #: the ballot tracker's lookup by code (migration 3)
    Index("ballots_code", "election_id", "code"),
)

#: codes a ballot may chain from: each device's hash and each accepted ballot's code, each usable
#: once (spec/80.5), so no exported record has a fork in a device's chain
codes = Table(
    "codes",
    metadata,
    Column("election_id", String(128), nullable=False),
    Column("code", String(80), nullable=False),
    Column("chained_by", String(128), nullable=True),
    #: the device token whose chain the code is on (`auth.token_owner`); NULL for codes stored before
    #: migration 2, which any device token may extend
    Column("owner", String(64), nullable=True),
    PrimaryKeyConstraint("election_id", "code"),
)

#: every guardian election public key posted on this database, with where (migration 2): a guardian
#: record is refused in a second election (spec/80.4), since ballots cast under reused keys and the
#: same manifest would be valid in both elections
guardian_keys = Table(
    "guardian_keys",
    metadata,
    Column("key_digest", String(64), nullable=False),
    Column("election_id", String(128), nullable=False),
    Column("guardian_id", String(128), nullable=False),
    PrimaryKeyConstraint("key_digest"),
)

#: every selection ciphertext of every accepted ballot, by fingerprint (migration 4): a ballot that repeats
#: one is a replay of another ballot's encryption, refused (spec/80.5), since a copy submitted as spoiled
#: would be decrypted at publication and show the original's vote
ciphertexts = Table(
    "ciphertexts",
    metadata,
    Column("election_id", String(128), nullable=False),
    Column("fingerprint", LargeBinary, nullable=False),
    Column("ballot_id", String(128), nullable=False),
    PrimaryKeyConstraint("election_id", "fingerprint"),
)

V1_TABLES = [elections, board, ballots, codes]


def fingerprint(pad_hex: str, data_hex: str) -> bytes:
    """A selection ciphertext's fingerprint: BLAKE2b-128 of `votum/eg-ciphertext/v1` and its pad and data as
    canonical hex numbers (spec/80.5)."""
    return hashlib.blake2b(f"votum/eg-ciphertext/v1\0{pad_hex}\0{data_hex}".encode(), digest_size=16).digest()


def ciphertext_fingerprints(ballot: dict[str, object]) -> list[bytes]:
    """The fingerprint of each selection ciphertext (pad and data) of a ballot in votum's canonical
    ElectionGuard 1.4 JSON, placeholders included, in the ballot's order (spec/80.5). Intake takes the same
    from a checked ballot without parsing its JSON (`EgVerifiedBallot.ciphertexts_hex`)."""
    return [
        fingerprint(s["ciphertext"]["pad"], s["ciphertext"]["data"])
        for contest in ballot["contests"]  # type: ignore[attr-defined]
        for s in contest["ballot_selections"]
    ]


def _v1(conn: Connection) -> None:
    metadata.create_all(conn, tables=V1_TABLES)


def _v2(conn: Connection) -> None:
    # codes bound to the token that registered the device (a fresh database has the column from _v1)
    if "owner" not in {c["name"] for c in inspect(conn).get_columns("codes")}:
        conn.execute(text("ALTER TABLE codes ADD COLUMN owner VARCHAR(64)"))
    # guardian keys across elections, filled from the boards of the elections already stored
    metadata.create_all(conn, tables=[guardian_keys])
    rows = conn.execute(select(board.c.election_id, board.c.payload).where(board.c.kind == "guardian"))
    seen: set[str] = set(conn.execute(select(guardian_keys.c.key_digest)).scalars())
    for election_id, payload in rows:
        record = json.loads(payload)
        digest = guardian_key_digest(record.get("election_public_key", ""))
        if digest not in seen:
            seen.add(digest)
            conn.execute(
                guardian_keys.insert().values(
                    key_digest=digest, election_id=election_id, guardian_id=record.get("guardian_id", "")
                )
            )


def _v3(conn: Connection) -> None:
    # the ballot tracker finds a ballot by its code (a fresh database has the index from _v1)
    for index in ballots.indexes:
        if index.name == "ballots_code":
            index.create(conn, checkfirst=True)


def _v4(conn: Connection) -> None:
    # the ciphertexts of the ballots already stored (the first of a repeat keeps the fingerprint)
    metadata.create_all(conn, tables=[ciphertexts])
    rows = conn.execute(
        select(board.c.election_id, board.c.payload)
        .where(board.c.kind == "submitted_ballot")
        .order_by(board.c.election_id, board.c.seq)
    )
    # rows come election by election: the fingerprints seen are one election's, and inserts go in chunks
    current: str | None = None
    seen: set[bytes] = set()
    batch: list[dict[str, object]] = []
    for election_id, payload in rows:
        if election_id != current:
            current, seen = election_id, set()  # a fingerprint repeated across elections is no replay
        ballot = json.loads(payload)
        for fp in ciphertext_fingerprints(ballot):
            if fp not in seen:
                seen.add(fp)
                batch.append(
                    {"election_id": election_id, "fingerprint": fp, "ballot_id": ballot["object_id"]}
                )
        if len(batch) >= 10_000:
            conn.execute(ciphertexts.insert(), batch)
            batch = []
    if batch:
        conn.execute(ciphertexts.insert(), batch)


def _v5(conn: Connection) -> None:
    # printed ballots apart from spoiled ones (a fresh database has the column from _v1): the printed ballots
    # not yet recorded move from spoiled_count, where intake counted them before, to printed_count
    if "printed_count" not in {c["name"] for c in inspect(conn).get_columns("elections")}:
        conn.execute(text("ALTER TABLE elections ADD COLUMN printed_count BIGINT NOT NULL DEFAULT 0"))
    printed = (
        select(func.count())
        .select_from(ballots)
        .where(ballots.c.election_id == elections.c.id, ballots.c.state == "printed")
        .scalar_subquery()
    )
    conn.execute(
        update(elections).values(
            spoiled_count=elections.c.spoiled_count + elections.c.printed_count - printed,
            printed_count=printed,
        )
    )


def guardian_key_digest(election_public_key: str) -> str:
    """How `guardian_keys` names a guardian's election public key (hex; any spelling of one number)."""
    return hashlib.sha256(int(election_public_key or "0", 16).to_bytes(512, "big")).hexdigest()


#: PostgreSQL advisory lock key under which migrations run (the first 8 bytes of SHA-256("votum
#: schema migrations"), as a signed 64-bit integer)
MIGRATION_LOCK = int.from_bytes(hashlib.sha256(b"votum schema migrations").digest()[:8], "big", signed=True)

#: migration number -> function; applied in order, each once, each in one transaction
MIGRATIONS: dict[int, Callable[[Connection], None]] = {1: _v1, 2: _v2, 3: _v3, 4: _v4, 5: _v5}
LATEST = max(MIGRATIONS)


def current_version(conn: Connection) -> int:
    metadata.create_all(conn, tables=[schema_version])
    found = conn.execute(select(schema_version.c.version)).scalars().all()
    return max(found, default=0)


def migrate(conn: Connection) -> list[int]:
    """Applies the migrations `conn`'s database lacks, in the caller's transaction; returns them."""
    applied = []
    for version in sorted(v for v in MIGRATIONS if v > current_version(conn)):
        MIGRATIONS[version](conn)
        conn.execute(
            schema_version.insert().values(
                version=version, applied_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            )
        )
        applied.append(version)
    return applied
