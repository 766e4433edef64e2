"""ElectionGuard 2.x records on the pages (spec/80.9): the records of an `eg2_records` folder, each a
directory written by `votum election --spec 2.1` (2.1's own form, spec/66.3, or egk-ec's, spec/65) or by
another 2.x implementation. The pages list them, verify them on demand and show a result only as the verifier
recounted it; a 2.1 record's ballots are looked up by confirmation code or id, a challenged ballot with its
opening and a pre-encrypted ballot with its short codes. Nothing here checks a proof: what a page shows of a
ballot is what the record says, beside whether the verifier passed that record."""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from votum.fingerprints import fingerprint
from votum.web.views import CODE, Labels2x, Title, normalise, title_of

#: a record's name (its directory's name), as 80.1's identifiers
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
#: the largest small document read to describe a record (parameters, configuration, manifest, guardians)
SMALL = 8 << 20
#: records whose ballot index is kept in memory at once (an index costs about 200 bytes a ballot)
INDEXED = 4


def _small_json(path: Path) -> Any:
    """A record's small JSON document, or None when it is absent, too large or not JSON."""
    try:
        with path.open("rb") as f:
            data = f.read(SMALL + 1)
        return json.loads(data) if len(data) <= SMALL else None
    except (OSError, ValueError):
        return None


def form_of(path: Path) -> str | None:
    """`2.1` for 2.1's own record (`parameters.json` says `v2.1.0`), `egk-ec` for a record in egk-ec's form
    (`election_config.json` whose `config_version` starts `2.`), else None: as the verifier tells them."""
    if not path.is_dir():
        return None
    params = _small_json(path / "parameters.json")
    if isinstance(params, dict) and params.get("version") == "v2.1.0":
        return "2.1"
    config = _small_json(path / "election_config.json")
    if isinstance(config, dict) and str(config.get("config_version", "")).startswith("2."):
        return "egk-ec"
    return None


def version_of(path: Path) -> str:
    """A record's version as the verification cache keys it: the name, size and modification time of each of
    its top-level files and folders (a record whose top-level files are replaced is verified again)."""
    h = hashlib.sha256()
    for p in sorted(path.iterdir()):
        st = p.stat()
        h.update(f"{p.name}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()[:32]


def records(folder: Path | None) -> dict[str, tuple[Path, str]]:
    """The folder's 2.x records by name, with their forms; other directories and files are left out."""
    if folder is None or not folder.is_dir():
        return {}
    out = {}
    for p in sorted(folder.iterdir()):
        if NAME.fullmatch(p.name) and (form := form_of(p)) is not None:
            out[p.name] = (p, form)
    return out


@dataclass(frozen=True)
class Overview:
    """What a record says of itself, for its page: not checked here (its verification says whether it
    holds)."""

    name: str
    form: str
    title: Title
    group: str | None = None
    guardians: int | None = None
    quorum: int | None = None
    #: the guardians who decrypted (U), from the tally
    available: list[int] = field(default_factory=list)
    #: the fingerprints of the joint vote key K and of H_E (2.1)
    joint_key: str | None = None
    extended_hash: str | None = None
    manifest: str | None = None
    devices: int | None = None


def overview(name: str, path: Path, form: str) -> Overview:
    try:  # read once: its fingerprint is of these bytes, its title from them when they are small
        raw: bytes | None = (path / "manifest.json").read_bytes()
    except OSError:
        raw = None
    manifest: Any = None
    if raw is not None and len(raw) <= SMALL:
        try:
            manifest = json.loads(raw)
        except ValueError:
            manifest = None
    title = title_of(manifest if isinstance(manifest, dict) else {})
    manifest_print = fingerprint(raw) if raw is not None else None
    if form != "2.1":
        return Overview(name, form, title, manifest=manifest_print)
    params = _small_json(path / "parameters.json") or {}
    guardians = _small_json(path / "guardians.json") or {}
    tally = _small_json(path / "tally.json") or {}
    devices = _small_json(path / "devices.json")

    def hexed(value: Any) -> str | None:
        return fingerprint(value.upper().encode()) if isinstance(value, str) and value else None

    def number(value: Any) -> int | None:
        return value if isinstance(value, int) else None

    available = tally.get("available") if isinstance(tally, dict) else None
    return Overview(
        name,
        form,
        title,
        group=str(params.get("group")) if isinstance(params, dict) and params.get("group") else None,
        guardians=number(params.get("n")) if isinstance(params, dict) else None,
        quorum=number(params.get("k")) if isinstance(params, dict) else None,
        available=[i for i in available if isinstance(i, int)] if isinstance(available, list) else [],
        joint_key=hexed(guardians.get("K")) if isinstance(guardians, dict) else None,
        extended_hash=guardians.get("H_E") if isinstance(guardians, dict) else None,
        manifest=manifest_print,
        devices=len(devices) if isinstance(devices, list) else None,
    )


# --- looking a ballot up in a 2.1 record -------------------------------------------------------------------

_CODE = re.compile(rb'"H_C"\s*:\s*"([0-9A-Fa-f]{64})"')
_ID = re.compile(rb'"id"\s*:\s*"([A-Za-z0-9._-]{1,128})"')


@dataclass
class _Index:
    #: ballot code (32 bytes) or ballot id (text) -> (line number from 1, byte offset) in `ballots.jsonl`
    ballots: dict[bytes | str, tuple[int, int]]
    lines: int
    #: ballot id -> byte offset in `challenged.jsonl`
    challenged: dict[str, int]


def _keys_of(line: bytes) -> tuple[bytes | None, str | None]:
    code, ident = _CODE.search(line), _ID.search(line)
    if code is None or ident is None:  # another writer's spacing or order: read the line whole
        try:
            doc = json.loads(line)
        except ValueError:
            return None, None
        c, i = (doc.get("H_C"), doc.get("id")) if isinstance(doc, dict) else (None, None)
        try:
            raw = bytes.fromhex(c) if isinstance(c, str) and len(c) == 64 else None
        except ValueError:
            raw = None
        return raw, i if isinstance(i, str) else None
    return bytes.fromhex(code.group(1).decode()), ident.group(1).decode()


def _build(path: Path) -> _Index:
    ballots: dict[bytes | str, tuple[int, int]] = {}
    lines = 0
    with (path / "ballots.jsonl").open("rb") as f:
        offset = 0
        for line in f:
            if line.strip():
                lines += 1
                code, ident = _keys_of(line)
                # the first ballot holding a code or id is the one shown (a record holding one twice fails
                # the verifier's checks, which the page shows beside it)
                if code is not None:
                    ballots.setdefault(code, (lines, offset))
                if ident is not None:
                    ballots.setdefault(ident, (lines, offset))
            offset += len(line)
    challenged: dict[str, int] = {}
    opened = path / "challenged.jsonl"
    if opened.is_file():
        with opened.open("rb") as f:
            offset = 0
            for line in f:
                ident = _id_only(line)
                if ident is not None:
                    challenged.setdefault(ident, offset)
                offset += len(line)
    return _Index(ballots, lines, challenged)


def _id_only(line: bytes) -> str | None:
    found = _ID.search(line)
    if found is not None:
        return found.group(1).decode()
    try:
        doc = json.loads(line)
    except ValueError:
        return None
    ident = doc.get("id") if isinstance(doc, dict) else None
    return ident if isinstance(ident, str) else None


class BallotIndexes:
    """Each 2.1 record's ballots by code and id, built on the first lookup of a record's version (one pass
    over its ballots) and kept for the last `INDEXED` versions looked up."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._built: OrderedDict[tuple[str, str], _Index] = OrderedDict()
        self._building: dict[tuple[str, str], threading.Lock] = {}

    def index(self, path: Path, version: str) -> _Index:
        key = (str(path), version)
        with self._lock:
            if key in self._built:
                self._built.move_to_end(key)
                return self._built[key]
            one = self._building.setdefault(key, threading.Lock())
        with one:  # one build per version, whoever asks while it runs waits for it
            with self._lock:
                if key in self._built:
                    return self._built[key]
            built = _build(path)
            with self._lock:
                self._built[key] = built
                while len(self._built) > INDEXED:
                    self._built.popitem(last=False)
                self._building.pop(key, None)
            return built


@dataclass
class Tracked:
    """A ballot of a 2.1 record, as the record gives it."""

    ballot_id: str
    code: str
    state: str
    style: str
    device: str
    weight: int
    pre_encrypted: bool
    position: int
    total: int
    #: a challenged ballot opened: per contest, its label and (option label, vote) pairs
    opened: list[tuple[str, list[tuple[str, int]]]] | None = None
    #: a cast pre-encrypted ballot: per contest, its label and the short codes of the vectors chosen
    chosen: list[tuple[str, list[str]]] = field(default_factory=list)
    #: an uncast pre-encrypted ballot opened: per contest, its label and (option label, short code) pairs as
    #: printed; the label None is the contest's null vector
    sheet: list[tuple[str, list[tuple[str | None, str]]]] = field(default_factory=list)


def _read_at(path: Path, offset: int) -> dict[str, Any] | None:
    try:
        with path.open("rb") as f:
            f.seek(offset)
            doc = json.loads(f.readline())
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def track(path: Path, version: str, indexes: BallotIndexes, query: str) -> Tracked | None:
    """The ballot of the 2.1 record at `path` whose confirmation code (hex, any case, spaces and dashes
    ignored) or id is `query`, or None."""
    index = indexes.index(path, version)
    code = normalise(query)
    found = None
    if len(code) == 64 and CODE.fullmatch(code):
        found = index.ballots.get(bytes.fromhex(code))
    if found is None:
        found = index.ballots.get(query.strip())
    if found is None:
        return None
    position, offset = found
    ballot = _read_at(path / "ballots.jsonl", offset)
    # the index found the line by a quick scan (the first `"id"` of a line: a record whose lines nest one
    # before their own is found by code only): the ballot read whole must be the one asked for
    if ballot is None or (
        str(ballot.get("H_C", "")).upper() != code.upper() and ballot.get("id") != query.strip()
    ):
        return None
    manifest = _small_json(path / "manifest.json")
    labels = Labels2x(manifest if isinstance(manifest, dict) else {})
    weight = ballot.get("weight")
    tracked = Tracked(
        ballot_id=str(ballot.get("id", "")),
        code=str(ballot.get("H_C", "")).upper(),
        state=str(ballot.get("state", "")),
        style=str(ballot.get("style", "")),
        device=str(ballot.get("device", "")),
        weight=weight if isinstance(weight, int) else 1,
        pre_encrypted=ballot.get("pre_encrypted") is True,
        position=position,
        total=index.lines,
    )
    if tracked.pre_encrypted and tracked.state == "cast":
        tracked.chosen = labels.chosen(ballot)
    at = index.challenged.get(tracked.ballot_id)
    opening = _read_at(path / "challenged.jsonl", at) if at is not None else None
    if tracked.state == "challenged" and opening is not None:
        if opening.get("pre_encrypted") is True:
            tracked.sheet = labels.sheet(opening)
        else:
            tracked.opened = labels.opened(opening)
    return tracked
