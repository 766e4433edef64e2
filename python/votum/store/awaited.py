"""What an election waits for in its phase, read from its board (spec/80.10): the officials' dashboard and
`votum official status` show the same thing, from `GET /v1/elections/{id}/awaited`.

- ceremony: the guardians' records, and the backups settled (reported checked by their receiver, or
  disputed and answered in public) out of n·(n−1);
- closed: whose own decryption shares are posted (an entry `decryption/<guardian>/<target>.json`; a
  fourth part names a guardian it compensates for).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from votum.store.reads import Reads
from votum.store.rows import ElectionRow


@dataclass
class Awaited:
    phase: str
    #: guardians whose public records are on the board, and how many the election has
    guardians: list[str]
    number_of_guardians: int
    quorum: int
    #: backups reported checked or answered in public, of n·(n−1)
    backups_settled: int
    #: guardian id -> whether it posted its own decryption shares (the closed phase)
    shares: dict[str, bool]

    @property
    def shares_posted(self) -> int:
        return sum(self.shares.values())

    @property
    def backups_total(self) -> int:
        return self.number_of_guardians * (self.number_of_guardians - 1)


def awaited(store: Reads, row: ElectionRow) -> Awaited:
    guardians = [
        str(json.loads(e.text()).get("guardian_id", e.name)) for e in store.iter_entries(row.id, ["guardian"])
    ]
    settled = sum(
        1 for _ in store.iter_entries(row.id, ["backup_verified", "challenge_answer"], with_payload=False)
    )
    posted = set()
    for e in store.iter_entries(row.id, ["shares"], with_payload=False):  # names only
        parts = e.name.removesuffix(".json").split("/")
        if len(parts) == 3 and parts[0] == "decryption":
            posted.add(parts[1])
    return Awaited(
        row.phase,
        guardians,
        row.number_of_guardians,
        row.quorum,
        settled,
        {g: g in posted for g in guardians},
    )
