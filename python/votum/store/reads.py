"""Reads of the board and the state beside it, each on its own connection (no lock is taken)."""

from __future__ import annotations

from collections.abc import Iterator

from sqlalchemy import Engine, select

from votum.errors import NotFound
from votum.store.rows import BallotRow, ElectionRow, Entry, ballot_row, election_row, entry_row
from votum.store.schema import ballots, board, elections


class Reads:
    """The read side of `Store`: elections, board entries (by number, by name, in pages) and ballots."""

    engine: Engine

    def election(self, election_id: str) -> ElectionRow:
        with self.engine.connect() as conn:
            row = conn.execute(select(elections).where(elections.c.id == election_id)).first()
        if row is None:
            raise NotFound(f"no election {election_id!r}")
        return election_row(row)

    def elections(self) -> list[ElectionRow]:
        """Every election's row, oldest first, without its tally (one query)."""
        cols = [c for c in elections.c if c.name != "tally"]
        with self.engine.connect() as conn:
            rows = conn.execute(select(*cols).order_by(elections.c.created_at))
            return [election_row(row, with_tally=False) for row in rows]

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
        return entry_row(election_id, row, True)

    def entry_named(self, election_id: str, name: str) -> Entry | None:
        with self.engine.connect() as conn:
            row = conn.execute(
                select(board).where(board.c.election_id == election_id, board.c.name == name)
            ).first()
        return None if row is None else entry_row(election_id, row, True)

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
        max_bytes: int | None = None,
    ) -> list[Entry]:
        """Entries with `seq > after`, in order, at most `limit`; with `max_bytes`, the list ends at
        the entry whose payload brings the total to `max_bytes` (always at least one entry), and the
        rows after it are not fetched."""
        cols = [board.c.seq, board.c.kind, board.c.name, board.c.hash, board.c.digest]
        if with_payload:
            cols.append(board.c.payload)
        query = select(*cols).where(board.c.election_id == election_id, board.c.seq > after)
        if kinds:
            query = query.where(board.c.kind.in_(kinds))
        if prefix:
            query = query.where(board.c.name.startswith(prefix, autoescape=True))
        query = query.order_by(board.c.seq).limit(limit)
        if max_bytes is None or not with_payload:
            with self.engine.connect() as conn:
                return [entry_row(election_id, row, with_payload) for row in conn.execute(query)]
        out: list[Entry] = []
        total = 0
        with self.engine.connect().execution_options(stream_results=True, yield_per=16) as conn:
            result = conn.execute(query)
            try:
                for row in result:
                    out.append(entry_row(election_id, row, with_payload))
                    total += len(row.payload)
                    if total >= max_bytes:
                        break
            finally:
                result.close()  # rows not fetched stay in the database (a server-side cursor)
        return out

    def iter_entries(
        self,
        election_id: str,
        kinds: list[str] | None = None,
        page: int = 500,
        prefix: str | None = None,
        with_payload: bool = True,
    ) -> Iterator[Entry]:
        """Every entry (of `kinds`), in order, a page at a time: memory stays flat. Without `with_payload`,
        names and hashes only."""
        after = -1
        while True:
            got = self.entries(election_id, after, page, kinds, with_payload, prefix)
            yield from got
            if len(got) < page:
                return
            after = got[-1].seq

    def ballot(self, election_id: str, ballot_id: str) -> BallotRow | None:
        with self.engine.connect() as conn:
            row = conn.execute(
                select(ballots).where(ballots.c.election_id == election_id, ballots.c.ballot_id == ballot_id)
            ).first()
        return None if row is None else ballot_row(row)

    def ballot_by_code(self, election_id: str, code: str) -> BallotRow | None:
        """The ballot whose code (hex, as in the record) is `code` (index `ballots_code`, migration 3)."""
        with self.engine.connect() as conn:
            row = conn.execute(
                select(ballots).where(ballots.c.election_id == election_id, ballots.c.code == code).limit(1)
            ).first()
        return None if row is None else ballot_row(row)

    def ballots(
        self, election_id: str, state: str | None = None, after: int = -1, limit: int = 1000
    ) -> list[BallotRow]:
        query = select(ballots).where(ballots.c.election_id == election_id, ballots.c.seq > after)
        if state is not None:
            query = query.where(ballots.c.state == state)
        with self.engine.connect() as conn:
            return [ballot_row(r) for r in conn.execute(query.order_by(ballots.c.seq).limit(limit))]

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
