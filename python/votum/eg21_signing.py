"""What a 2.1 guardian's node signs about what it posts or deals (spec/80.11, 66.12): statements in the node's
record domain (spec/95.3), and their check. Apart from `votum.eg2` so that the parties' code can use them
without importing the election runner."""

from __future__ import annotations

import hashlib

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

#: the record domain's tag (spec/95.3), before every statement a node signs about what it posts
RECORD_TAG = b"votum-node/record/v1\0"
KEY_STATEMENT = b"votum/v1/eg21-key"
JOINT_STATEMENT = b"votum/v1/eg21-joint"
#: a share ciphertext (its JSON names the dealer and the receiver): signed so that a complaint of it can be
#: judged against what the dealer really dealt, and a share the service made up is seen by its receiver
SHARE_STATEMENT = b"votum/v1/eg21-share"


def statement(kind: bytes, election_id: str, i: int, document: str) -> bytes:
    """What guardian i's node signs about a document it posts (spec/80.11)."""
    return (
        kind
        + b"\0"
        + election_id.encode()
        + b"\0"
        + i.to_bytes(4, "big")
        + hashlib.sha256(document.encode()).digest()
    )


def signature_holds(signing_key: bytes, message: bytes, signature: bytes) -> bool:
    """Whether `signature` is the node `signing_key`'s record-domain signature on `message`."""
    try:
        Ed25519PublicKey.from_public_bytes(signing_key).verify(signature, RECORD_TAG + message)
    except (InvalidSignature, ValueError):
        return False
    return True


def round_statement(step: str, election_id: str, r: int, i: int, message: str) -> bytes:
    """What guardian i's node signs about its `step` (announce, reveal or answer) in decryption round r."""
    return statement(f"votum/v1/eg21-{step}/{r}".encode(), election_id, i, message)
