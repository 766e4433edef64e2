"""Reading an election record in electionguard 1.4.0's layout with the reference's own deserializer
(`from_file`), one file at a time. Shared by the record check (tests/peer/eg14_check_record.py) and the
reference side of `make bench-verify` (benches/peer_verify_record.py). Python 3.10, the peer's."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from electionguard.ballot import SubmittedBallot
from electionguard.election import CiphertextElectionContext
from electionguard.guardian import GuardianRecord
from electionguard.serialize import from_file
from electionguard.tally import PlaintextTally


def context(root: Path) -> CiphertextElectionContext:
    return from_file(CiphertextElectionContext, str(root / "context.json"))


def guardian_records(root: Path) -> Iterator[tuple[Path, GuardianRecord]]:
    for path in sorted((root / "guardians").glob("*.json")):
        yield path, from_file(GuardianRecord, str(path))


def submitted_ballots(root: Path) -> Iterator[tuple[Path, SubmittedBallot]]:
    for path in sorted((root / "submitted_ballots").glob("*.json")):
        yield path, from_file(SubmittedBallot, str(path))


def tally(root: Path) -> PlaintextTally:
    return from_file(PlaintextTally, str(root / "tally.json"))


def spoiled_ballots(root: Path) -> Iterator[tuple[Path, PlaintextTally]]:
    """The decrypted spoiled ballots (none when the record has no `spoiled_ballots` folder)."""
    folder = root / "spoiled_ballots"
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        yield path, from_file(PlaintextTally, str(path))
