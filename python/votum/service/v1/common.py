"""What the `/v1` routers share: the store, per-election objects derived from the board, documents."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field

import votum
from votum.eg import records_in_order
from votum.errors import InvalidInput, NotFound
from votum.service.cache import LruCache
from votum.store import Entry, Store

EG = votum.Group("eg-4096")


def text_of(document: dict[str, Any] | str) -> str:
    """A posted document as the text that goes on the board: a JSON object is written compactly
    (key order kept); a string must already be a JSON object's text."""
    if isinstance(document, str):
        try:
            value = json.loads(document)
        except ValueError as e:
            raise InvalidInput(f"not JSON: {e}") from e
        if not isinstance(value, dict):
            raise InvalidInput("a document must be a JSON object")
        return document
    return json.dumps(document, separators=(",", ":"), ensure_ascii=False)


def payload_of(document: dict[str, Any] | str) -> bytes:
    return text_of(document).encode()


class Head(BaseModel):
    seq: int
    hash: str


class EntryOut(BaseModel):
    seq: int
    kind: str
    name: str
    #: SHA-256 of the payload and the entry's chain hash (spec/80.2), hex
    digest: str
    hash: str
    #: the document exactly as chained (JSON text); absent when listed without payloads
    payload: str | None = None


def entry_out(e: Entry) -> dict[str, Any]:
    return {
        "seq": e.seq,
        "kind": e.kind,
        "name": e.name,
        "digest": e.digest.hex(),
        "hash": e.hash.hex(),
        "payload": e.payload.decode() if e.payload is not None else None,
    }


class Receipt(BaseModel):
    ballot_id: str
    state: str
    #: the ballot's code (its confirmation code), hex as in the record
    code: str
    #: the ballot's board entry and its chain hash
    seq: int
    hash: str


def receipt(ballot_id: str, state: str, code: str, entry: Entry) -> dict[str, Any]:
    """A ballot's receipt (`Receipt`): its board entry and that entry's chain hash."""
    return {"ballot_id": ballot_id, "state": state, "code": code, "seq": entry.seq, "hash": entry.hash.hex()}


class ElectionObjects:
    """What an election's board fixes, built once per process: the manifest, and once the election is
    open its context, guardian records, ballot verifier and decryptor. Everything here is derived
    from committed board entries, which never change, so sharing them across requests is safe."""

    def __init__(self, store: Store, election_id: str) -> None:
        manifest = store.entry_named(election_id, "manifest.json")
        if manifest is None:
            raise NotFound(f"no election {election_id!r}")
        self.election_id = election_id
        self.manifest_text = manifest.text()
        self.manifest_doc: dict[str, Any] = json.loads(self.manifest_text)
        self.manifest = votum.EgManifest.from_json(self.manifest_text)
        self._lock = threading.Lock()
        self._opened: tuple[votum.EgContext, list[str]] | None = None
        self._verifier: votum.EgBallotVerifier | None = None
        self._decryptor: votum.EgDecryptor | None = None
        self._tally_target: votum.EgDecryptionTarget | None = None
        self._store = store

    def _load_opened(self) -> tuple[votum.EgContext, list[str]]:
        with self._lock:
            if self._opened is None:
                context = self._store.entry_named(self.election_id, "context.json")
                if context is None:
                    raise NotFound(f"election {self.election_id!r} has no context yet (not opened)")
                records = records_in_order(
                    e.text() for e in self._store.iter_entries(self.election_id, ["guardian"])
                )
                self._opened = (votum.EgContext.from_json(context.text()), records)
            return self._opened

    @property
    def context(self) -> votum.EgContext:
        return self._load_opened()[0]

    @property
    def records(self) -> list[str]:
        return self._load_opened()[1]

    def verifier(self) -> votum.EgBallotVerifier:
        if self._verifier is None:
            c = self.context
            self._verifier = votum.EgBallotVerifier(self.manifest, c.elgamal_public_key, c.extended_base_hash)
        return self._verifier

    def decryptor(self, max_count: int) -> votum.EgDecryptor:
        if self._decryptor is None:
            c = self.context
            self._decryptor = votum.EgDecryptor(
                self.records, c.quorum, c.extended_base_hash, max_count=max_count
            )
        return self._decryptor

    def tally_target(self) -> votum.EgDecryptionTarget:
        if self._tally_target is None:
            tally = self._store.entry_named(self.election_id, "encrypted_tally.json")
            if tally is None:
                raise NotFound(f"election {self.election_id!r} has no encrypted tally yet (not closed)")
            self._tally_target = votum.EgDecryptionTarget.from_tally_json(tally.text(), self.manifest)
        return self._tally_target


#: the ElectionGuard versions an election on the board runs (spec/80.11)
SPECS = ("1.0", "2.1")


def election_doc(store: Store, election_id: str) -> dict[str, Any]:
    """An election's `election.json` (its first entry, never changed)."""
    entry = store.entry_named(election_id, "election.json")
    if entry is None:
        raise NotFound(f"no election {election_id!r}")
    return dict(json.loads(entry.text()))


class Objects:
    """`ElectionObjects` per election id, for one app; and each election's ElectionGuard version and, for a
    2.1 election, its public ceremony checks (`votum.Eg21Ceremony`)."""

    def __init__(self, store: Store, size: int = 64) -> None:
        self._store = store
        self._cache = LruCache(size)
        self._specs = LruCache(4096)
        self._eg21 = LruCache(size)
        self._boxes = LruCache(size)
        self._rounds = LruCache(8)
        self._weights = LruCache(4096)

    def get(self, election_id: str) -> ElectionObjects:
        return self._cache.get(election_id, lambda: ElectionObjects(self._store, election_id))

    def spec(self, election_id: str) -> str:
        """ "1.0" or "2.1": what `election.json` says (elections made before 2.1 say nothing: 1.0)."""
        return str(
            self._specs.get(election_id, lambda: election_doc(self._store, election_id).get("spec", "1.0"))
        )

    def weights(self, election_id: str) -> dict[str, int]:
        """A 2.1 election's ballot weights per device token name (`election.json`, fixed at creation)."""
        return dict(
            self._weights.get(
                election_id, lambda: dict(election_doc(self._store, election_id).get("weights") or {})
            )
        )

    def eg21(self, election_id: str) -> votum.Eg21Ceremony:
        def make() -> votum.Eg21Ceremony:
            doc = election_doc(self._store, election_id)
            manifest = self._store.require_named(election_id, "manifest.json", f"no election {election_id!r}")
            return votum.Eg21Ceremony(
                doc["group"], manifest.payload or b"", doc["number_of_guardians"], doc["quorum"]
            )

        return self._eg21.get(election_id, make)

    def eg21_round(
        self, election_id: str, available: tuple[int, ...], make: Callable[[], votum.Eg21Round]
    ) -> votum.Eg21Round:
        """A closed 2.1 election's checks of the messages of a decryption round with U = `available`, made
        once (the closed board no longer changes what is decrypted)."""
        return self._rounds.get((election_id, available), make)

    def eg21_box(self, election_id: str, make: Callable[[], votum.Eg21BallotBox]) -> votum.Eg21BallotBox:
        """A 2.1 election's ballot checks, made once it is open (`make` raises before)."""
        return self._boxes.get(election_id, make)


class Page(BaseModel):
    after: int = Field(default=-1, ge=-1)
    limit: int = Field(default=100, ge=1, le=1000)
