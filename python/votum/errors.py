"""The one exception hierarchy of votum. The Rust core's errors arrive as these classes."""

from __future__ import annotations


class VotumError(Exception):
    """Base class of every error votum raises on purpose."""


class InvalidInput(VotumError, ValueError):
    """Malformed or out-of-range input: non-canonical bytes, elements outside the group, bad indices."""


class DuplicateBallot(InvalidInput):
    """A ballot with this id was already submitted; the second submission changed nothing."""


class InvalidProof(VotumError):
    """A zero-knowledge proof does not verify; the message says which check failed."""


class VerificationFailed(VotumError):
    """Evidence does not match what was published (for example a share against its commitments)."""


class DecryptionFailed(VotumError):
    """A ciphertext could not be decrypted: wrong key, altered ciphertext, or a result out of range."""


class RecordFormatError(VotumError):
    """An election record or message does not follow its specified format."""


class UnsupportedVersion(RecordFormatError):
    """A record or message declares a format version this build does not read."""


class NotFound(VotumError, LookupError):
    """No such election, ballot, guardian or board entry."""


class WrongPhase(VotumError):
    """The election is not in the phase this action needs (for example a ballot after closing)."""


class Conflict(VotumError):
    """The action contradicts what is already recorded (for example a second, different key record)."""


class ClusterError(VotumError):
    """Work sent to a Dask cluster did not come back: a task failed on every try, no worker answered in
    time, or a task's answer was malformed (spec/98.5). Nothing was written from the unfinished work."""


__all__ = [
    "ClusterError",
    "Conflict",
    "DecryptionFailed",
    "DuplicateBallot",
    "InvalidInput",
    "InvalidProof",
    "NotFound",
    "RecordFormatError",
    "UnsupportedVersion",
    "VerificationFailed",
    "VotumError",
    "WrongPhase",
]
