"""One write transaction on one election (spec/80.3): entries appended to the hash chain from the
locked head, and the changes to the election's row, flushed together before the commit."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, select, update

from votum import board_link, board_payload_digest
from votum.errors import InvalidInput, WrongPhase
from votum.store.rows import ElectionRow, Entry, chunks, entry_row
from votum.store.schema import board, elections

#: SHA-256 of a payload: what the chain absorbs (spec/80.2) and what resubmissions are compared by.
#: One implementation, in votum-hash, for the store, the chain and the checkers.
payload_digest = board_payload_digest


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

    def append(self, kind: str, name: str, payload: bytes, digest: bytes | None = None) -> Entry:
        """The next entry; `digest` is `payload_digest(payload)` when the caller has it already."""
        seq = self._seq + 1
        if digest is None:
            digest = payload_digest(payload)
        new = board_link(self._hash, seq, kind, name, digest)
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
        for chunk in chunks(names):
            rows = self.conn.execute(
                select(board.c.seq, board.c.kind, board.c.name, board.c.hash, board.c.digest).where(
                    board.c.election_id == self.election.id, board.c.name.in_(chunk)
                )
            )
            for row in rows:
                out[row.name] = entry_row(self.election.id, row, False)
        return out

    def of_kind(self, kind: str) -> list[Entry]:
        """Every committed entry of `kind`, with payloads, in board order (for the small kinds)."""
        rows = self.conn.execute(
            select(board)
            .where(board.c.election_id == self.election.id, board.c.kind == kind)
            .order_by(board.c.seq)
        )
        return [entry_row(self.election.id, row, True) for row in rows]

    def set(self, **changes: Any) -> None:
        """Changes to the election's row: `phase`, `tally`, `cast_count`, `spoiled_count`, `printed_count`."""
        unknown = set(changes) - {"phase", "tally", "cast_count", "spoiled_count", "printed_count"}
        if unknown:
            raise InvalidInput(f"not an election field: {sorted(unknown)}")
        self._changes.update(changes)

    def flush(self) -> None:
        """Writes the appended entries and the new head (called by the store before the commit)."""
        if self._rows:
            self.conn.execute(board.insert(), self._rows)
        if self._rows or self._changes:
            values = dict(self._changes)
            values.update(head_seq=self._seq, head_hash=self._hash)
            self.conn.execute(update(elections).where(elections.c.id == self.election.id).values(**values))
