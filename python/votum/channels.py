"""The native checks behind votum's channels between election parties (spec/95): envelope signatures
and payload digests, node and channel ids, and the envelope signer (`NodeSigner`, which holds a node's
Ed25519 key and zeroizes it when freed) with its counterpart `NodePeerKey` (a peer's key decoded once
for every frame of a connection). Big frames are checked and hashed without the GIL. `votum.nodes` builds
the transport on these."""

from __future__ import annotations

from votum._native import (
    NodePeerKey,
    NodeSigner,
    node_channel_id,
    node_check_frame,
    node_digests,
    node_id,
    node_signed_message,
)


def check_frame(
    signing_key: bytes, header: bytes, signature: bytes, payloads: list[bytes], digests: list[bytes]
) -> str | None:
    """None when the frame's signature and every payload digest hold, else the refusal code of spec/95.4."""
    return node_check_frame(signing_key, header, signature, payloads, digests)


def digests(payloads: list[bytes]) -> list[bytes]:
    """SHA-256 of each payload (native; without the GIL when they total more than 64 KiB)."""
    return node_digests(payloads)


def make_node_id(signing_key: bytes, sealing_key: bytes) -> bytes:
    """A node's 32-byte id from its Ed25519 and X25519 public keys."""
    return node_id(signing_key, sealing_key)


def make_channel_id(dialler: bytes, acceptor: bytes, dialler_nonce: bytes, acceptor_nonce: bytes) -> bytes:
    """The id of one connection, from both node ids and both hello nonces."""
    return node_channel_id(dialler, acceptor, dialler_nonce, acceptor_nonce)


def signed_message(header: bytes) -> bytes:
    """What an envelope signature signs: the domain tag, then the header."""
    return node_signed_message(header)


__all__ = [
    "NodePeerKey",
    "NodeSigner",
    "check_frame",
    "digests",
    "make_channel_id",
    "make_node_id",
    "signed_message",
]
