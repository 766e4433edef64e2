"""What the store hands out: board entries, election and ballot rows, and the id rule (spec/80.1)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

from votum.errors import InvalidInput

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
    #: 2.1 printed ballots not yet recorded (neither cast nor spoiled)
    printed_count: int = 0


@dataclass(frozen=True)
class BallotRow:
    ballot_id: str
    state: str
    code: str
    seq: int
    digest: bytes


def election_row(row: Any, with_tally: bool = True) -> ElectionRow:
    return ElectionRow(
        id=row.id,
        phase=row.phase,
        number_of_guardians=row.number_of_guardians,
        quorum=row.quorum,
        head_seq=row.head_seq,
        head_hash=bytes(row.head_hash),
        cast_count=row.cast_count,
        spoiled_count=row.spoiled_count,
        printed_count=row.printed_count,
        created_at=row.created_at,
        tally=bytes(row.tally) if with_tally and row.tally is not None else None,
    )


def entry_row(election_id: str, row: Any, with_payload: bool) -> Entry:
    return Entry(
        election_id=election_id,
        seq=row.seq,
        kind=row.kind,
        name=row.name,
        hash=bytes(row.hash),
        digest=bytes(row.digest),
        payload=bytes(row.payload) if with_payload else None,
    )


def ballot_row(row: Any) -> BallotRow:
    return BallotRow(row.ballot_id, row.state, row.code, row.seq, bytes(row.digest))


def chunks(values: list[T], size: int = 500) -> Iterator[list[T]]:
    """`values` in slices small enough for one `IN (…)` list."""
    for start in range(0, len(values), size):
        yield values[start : start + size]
