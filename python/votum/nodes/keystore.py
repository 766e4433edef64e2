"""The keystore of known peers (spec/95.1): `peers.json`, read once at start with the cards checked in
parallel, kept in memory and indexed by node id and by signing key."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from votum.nodes.errors import KeyFileError, UnknownPeer
from votum.nodes.identity import Card, normalise_fingerprint

PEERS_FILE = "peers.json"


class Keystore:
    """The trusted peers. Only these cards' certificates are trusted in the handshake."""

    def __init__(self, cards: Iterable[Card] = (), path: Path | None = None) -> None:
        self.path = path
        self._by_id: dict[bytes, Card] = {}
        self._by_key: dict[bytes, Card] = {}
        self._by_name: dict[str, Card] = {}
        for card in cards:
            self._put(card)

    def _put(self, card: Card) -> None:
        other = self._by_name.get(card.name)
        if other is not None and other.node_id != card.node_id:
            raise KeyFileError(f"another peer is already called {card.name!r}")
        previous = self._by_id.get(card.node_id)
        if previous is not None:  # the same node again, perhaps renamed or moved
            del self._by_name[previous.name]
        self._by_id[card.node_id] = card
        self._by_key[card.signing_key] = card
        self._by_name[card.name] = card

    @staticmethod
    def load(path: Path) -> Keystore:
        """Reads `path` (absent: an empty keystore); the cards' certificates are checked in parallel."""
        if not path.exists():
            return Keystore(path=path)
        try:
            data = json.loads(path.read_text())
            entries = data["peers"] if isinstance(data, dict) and data.get("version") == 1 else None
        except (OSError, ValueError, KeyError) as e:
            raise KeyFileError(f"cannot read the keystore {path}: {e}") from None
        if not isinstance(entries, list):
            raise KeyFileError(f"{path}: a keystore is {{'version': 1, 'peers': [card, ...]}}")
        with ThreadPoolExecutor(max_workers=min(8, (os.cpu_count() or 1) * 2)) as pool:
            cards = list(pool.map(Card.from_dict, entries))
        return Keystore(cards, path)

    def save(self) -> None:
        if self.path is None:
            return
        tmp = self.path.with_suffix(".tmp")
        body = {"version": 1, "peers": [c.to_dict() for c in self.cards()]}
        tmp.write_text(json.dumps(body, indent=2) + "\n")
        os.replace(tmp, self.path)

    def cards(self) -> list[Card]:
        return sorted(self._by_id.values(), key=lambda c: c.name)

    def __len__(self) -> int:
        return len(self._by_id)

    def add(self, card: Card, fingerprint: str | None = None, yes: bool = False) -> Card:
        """Trusts `card`: the fingerprint the operator compared must match it, unless they said `yes`."""
        if fingerprint is not None:
            if normalise_fingerprint(fingerprint) != card.fingerprint:
                raise KeyFileError(
                    f"the card of {card.name!r} has fingerprint {card.fingerprint}, "
                    f"not {fingerprint}: not trusted"
                )
        elif not yes:
            raise KeyFileError(
                "give the fingerprint you compared with the peer's owner (or say yes to trust it)"
            )
        self._put(card)
        return card

    def remove(self, who: str) -> Card:
        card = self.find(who)
        del self._by_id[card.node_id]
        del self._by_key[card.signing_key]
        del self._by_name[card.name]
        return card

    def find(self, who: str | bytes | Card) -> Card:
        """A peer by card, node id, name or fingerprint; UnknownPeer when it is not trusted."""
        if isinstance(who, Card):
            card = self._by_id.get(who.node_id)
            if card is None:
                raise UnknownPeer(f"{who.name} ({who.fingerprint}) is not in the keystore")
            return card
        if isinstance(who, bytes):
            found = self._by_id.get(who)
            if found is None:
                raise UnknownPeer("no peer with this node id")
            return found
        named = self._by_name.get(who)
        if named is not None:
            return named
        try:
            fp = normalise_fingerprint(who)
        except KeyFileError:
            fp = None
        for card in self._by_id.values():
            if card.fingerprint == fp:
                return card
        raise UnknownPeer(f"no peer called {who!r} in the keystore")

    def by_signing_key(self, key: bytes) -> Card | None:
        return self._by_key.get(key)

    def trusted_pem(self) -> str:
        return "".join(c.certificate for c in self._by_id.values())
