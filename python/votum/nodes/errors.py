"""Typed errors of the channels between election parties (spec/95.4). Each refusal code maps to one class."""

from __future__ import annotations

from votum.errors import InvalidInput, VotumError


class NodeError(VotumError):
    """Base class of every channel error. `code` is the refusal code of spec/95.4 where there is one."""

    code = "node-error"

    def __init__(self, detail: str = "", peer: str | None = None) -> None:
        self.detail = detail
        self.peer = peer
        where = f" ({peer})" if peer else ""
        super().__init__(f"{self.code}{where}: {detail}" if detail else f"{self.code}{where}")


class KeyFileError(NodeError, InvalidInput):
    """A key file, card or keystore is missing, malformed, has the wrong mode or the wrong passphrase."""

    code = "key-file"


class UnknownPeer(NodeError):
    """The peer is not in the keystore, or refused this node's key during the handshake."""

    code = "unknown-peer"


class WrongPeer(NodeError):
    """The node at the address is a known node, but not the one dialled (its fingerprint differs)."""

    code = "wrong-peer"


class PeerUnavailable(NodeError):
    """No connection could be made in time, or it broke: a request in flight then has an unknown effect."""

    code = "peer-unavailable"


class FrameTooLarge(NodeError):
    code = "frame-too-large"


class MalformedFrame(NodeError):
    code = "malformed"


class WrongChannel(NodeError):
    """An envelope for another connection or another recipient (for example replayed from another channel)."""

    code = "wrong-channel"


class WrongSender(NodeError):
    """An envelope signed by, or claiming to come from, a node other than the connection's peer."""

    code = "wrong-sender"


class BadSignature(NodeError):
    code = "bad-signature"


class BadDigest(NodeError):
    code = "bad-digest"


class BadSequence(NodeError):
    """A replayed, repeated, missing or reordered envelope."""

    code = "bad-sequence"


class NoHandler(NodeError):
    code = "no-handler"


class HandlerError(NodeError):
    """The peer's handler raised; the connection stays open."""

    code = "handler-error"


class SealError(NodeError):
    """A sealed box does not open: wrong recipient, purpose or sender, or altered."""

    code = "seal"


_BY_CODE: dict[str, type[NodeError]] = {
    cls.code: cls
    for cls in (
        UnknownPeer,
        WrongPeer,
        PeerUnavailable,
        FrameTooLarge,
        MalformedFrame,
        WrongChannel,
        WrongSender,
        BadSignature,
        BadDigest,
        BadSequence,
        NoHandler,
        HandlerError,
    )
}

#: The codes after which the refusing side closes the connection (spec/95.4); the others keep it.
CLOSING_CODES = frozenset(
    {
        "frame-too-large",
        "malformed",
        "wrong-channel",
        "wrong-sender",
        "bad-signature",
        "bad-digest",
        "bad-sequence",
    }
)


def error_for(code: str, detail: str, peer: str | None = None) -> NodeError:
    """The typed error for a refusal code received from a peer (an unknown code is a NodeError)."""
    cls = _BY_CODE.get(code, NodeError)
    err = cls(detail, peer)
    if cls is NodeError:
        err.code = code
    return err
