"""The uniqueness rules checked inside a write transaction, under the election's lock: ballot ids,
ballot codes and the chains devices extend, selection ciphertexts (spec/80.5), and guardian keys
(spec/80.4)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import bindparam, select, update

from votum.errors import Conflict
from votum.store import schema
from votum.store.rows import BallotRow, ballot_row, chunks
from votum.store.schema import ballots, ciphertexts, codes, guardian_keys
from votum.store.transaction import Tx


def existing_ballots(tx: Tx, ballot_ids: list[str]) -> dict[str, BallotRow]:
    out: dict[str, BallotRow] = {}
    for chunk in chunks(ballot_ids):
        for row in tx.conn.execute(
            select(ballots).where(ballots.c.election_id == tx.election.id, ballots.c.ballot_id.in_(chunk))
        ):
            out[row.ballot_id] = ballot_row(row)
    return out


def add_ballots(tx: Tx, rows: list[dict[str, Any]]) -> None:
    if rows:
        tx.conn.execute(ballots.insert(), [{"election_id": tx.election.id, **r} for r in rows])


def record_printed(tx: Tx, ballot_id: str, seq: int, digest: bytes) -> None:
    """A printed 2.1 ballot (state `printed`) now recorded as cast: its row points at the recording's entry
    (spec/80.11). Checked `printed` by the caller under the lock; a row in another state is a conflict."""
    done = tx.conn.execute(
        update(ballots)
        .where(
            ballots.c.election_id == tx.election.id,
            ballots.c.ballot_id == ballot_id,
            ballots.c.state == "printed",
        )
        .values(state="cast", seq=seq, digest=digest)
    )
    if done.rowcount != 1:
        raise Conflict(f"ballot {ballot_id!r} is not a printed ballot waiting to be recorded")


def ciphertext_owners(tx: Tx, fingerprints: list[bytes]) -> dict[bytes, str]:
    """For each of `fingerprints` that an accepted ballot of this election holds: that ballot's id."""
    found: dict[bytes, str] = {}
    for chunk in chunks(fingerprints):
        for fingerprint, ballot_id in tx.conn.execute(
            select(ciphertexts.c.fingerprint, ciphertexts.c.ballot_id).where(
                ciphertexts.c.election_id == tx.election.id, ciphertexts.c.fingerprint.in_(chunk)
            )
        ):
            found[bytes(fingerprint)] = ballot_id
    return found


def add_ciphertexts(tx: Tx, owners: list[tuple[bytes, str]]) -> None:
    """Records the selection ciphertexts (fingerprint, ballot id) of newly accepted ballots."""
    if owners:
        tx.conn.execute(
            ciphertexts.insert(),
            [{"election_id": tx.election.id, "fingerprint": f, "ballot_id": b} for f, b in owners],
        )


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
    for chunk in chunks(seeds):
        for code, chained_by, owner in tx.conn.execute(
            select(codes.c.code, codes.c.chained_by, codes.c.owner).where(
                codes.c.election_id == tx.election.id, codes.c.code.in_(chunk)
            )
        ):
            found[code] = CodeLink(chained_by, owner)
    return found


def chain_tail(tx: Tx, owner: str) -> str | None:
    """The code at the end of the chain `owner` extends: its one code no ballot has chained from (the
    service refuses forks), or None if it has none. Scans the election's codes: for a device that lost its
    own record of its tail, not for every ballot."""
    found = tx.conn.execute(
        select(codes.c.code)
        .where(codes.c.election_id == tx.election.id, codes.c.owner == owner, codes.c.chained_by.is_(None))
        .limit(2)
    ).all()
    if len(found) > 1:
        raise Conflict("the chain has two free codes: it forked")
    return found[0].code if found else None


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
