"""Secure channels between election parties (spec/95): identities and keystore, mutually authenticated TLS 1.3
connections pinned by fingerprint, signed envelopes, pools, broadcast and sealed boxes."""

from votum.nodes.channel import ChannelSettings, Message
from votum.nodes.errors import NodeError
from votum.nodes.identity import Card, Identity, fingerprint, keygen
from votum.nodes.keystore import Keystore
from votum.nodes.node import Node, NodeSettings, PeerResult, open_node

__all__ = [
    "Card",
    "ChannelSettings",
    "Identity",
    "Keystore",
    "Message",
    "Node",
    "NodeError",
    "NodeSettings",
    "PeerResult",
    "fingerprint",
    "keygen",
    "open_node",
]
