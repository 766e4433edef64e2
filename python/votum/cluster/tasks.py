"""The pure functions a cluster's workers run (spec/98.1), on canonical bytes and strings.

Each worker keeps the per-election objects it builds from the ballot-check parameters (spec/98.2): the
ballot verifier (whose fixed-base table of K is then built once per worker) and the encryption device (its
tables of g and K), at most `KEEP` elections each, by the SHA-256 of the parameters. Tasks take only
bytes and strings and answer only booleans and strings, so a task run twice (a lost worker, spec/98.5)
answers the same.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import TypeVar

import msgpack  # type: ignore[import-untyped]

from votum import (
    BeleniosBallotChecker,
    Eg2BallotChecker,
    EgBallotChecker,
    EgEncryptionDevice,
    Group,
    IvxvProofChecker,
    MixPowTables,
    mix_check_shuffle,
    sv_check_task,
)

_EG = Group("eg-4096")

#: elections whose objects a worker keeps
KEEP = 4

T = TypeVar("T")


class _Kept:
    """A small least-recently-used cache of per-election objects, shared by a worker's threads."""

    def __init__(self, build: Callable[[bytes], T]) -> None:
        self._build = build
        self._items: OrderedDict[bytes, object] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, params: bytes) -> object:
        key = hashlib.sha256(params).digest()
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        built = self._build(params)  # outside the lock: building takes a while
        with self._lock:
            self._items[key] = built
            self._items.move_to_end(key)
            while len(self._items) > KEEP:
                self._items.popitem(last=False)
        return built


_checkers = _Kept(EgBallotChecker)
_belenios = _Kept(BeleniosBallotChecker)
_eg2 = _Kept(Eg2BallotChecker)
_ivxv = _Kept(IvxvProofChecker)
_tables = _Kept(lambda params: MixPowTables(*msgpack.unpackb(params)))
_devices = _Kept(EgEncryptionDevice.from_check_params)


def check_ballots(params: bytes, ballots: list[str]) -> list[bool]:
    """Whether each ballot passes every check of spec/62.4 (one batch), in order (spec/98.3); for a Belenios
    archive's parameters, V-BEL-05 and V-BEL-06 (spec/94.4); for an ElectionGuard 2.x record's, V-EG2-05…07
    (spec/65.4); for an IVXV record's, each decryption proof's V-IVXV-04 (spec/93)."""
    if Eg2BallotChecker.is_params(params):
        eg2 = _eg2.get(params)
        assert isinstance(eg2, Eg2BallotChecker)
        return eg2.check(ballots)
    if IvxvProofChecker.is_params(params):
        ivxv = _ivxv.get(params)
        assert isinstance(ivxv, IvxvProofChecker)
        return ivxv.check(ballots)
    if BeleniosBallotChecker.is_params(params):
        belenios = _belenios.get(params)
        assert isinstance(belenios, BeleniosBallotChecker)
        return belenios.check(ballots)
    checker = _checkers.get(params)
    assert isinstance(checker, EgBallotChecker)
    return checker.check(ballots)


def encrypt_ballots(
    params: bytes, items: list[tuple[str, int, str]], nonces: list[int] | None
) -> tuple[list[tuple[str, str] | Exception], list[bool]]:
    """Encrypts a chunk of plaintext ballots (JSON, timestamp, form) with their proofs and checks them
    as the ballot box would (spec/98.4): each accepted ballot as (JSON, crypto hash) chained from an
    arbitrary seed (the client sets the real chain), and a verdict per accepted ballot. Master nonces
    are the integers given, or drawn from this worker's operating system. A refused ballot is its
    exception."""
    device = _devices.get(params)
    assert isinstance(device, EgEncryptionDevice)
    master = None if nonces is None else [_EG.scalar(n) for n in nonces]
    ballots, _last = device.encrypt_many(items, _EG.scalar(1), master, hashes=True)
    done = [b for b in ballots if isinstance(b, tuple)]
    checker = _checkers.get(params)
    assert isinstance(checker, EgBallotChecker)
    return ballots, checker.check([text for text, _hash in done])


def check_shuffle(params: bytes, context: bytes, input: bytes, payload: bytes) -> tuple[str, str | None]:
    """One mix record's shuffle proof (spec/98.3): `params` is the scattered (parameters payload, joint
    key) pair, `input` the encoded list the `mix` entry `payload` shuffles under `context`. Answers ("pass",
    None), ("fail", reason) as V-MIX-04 reports it, or ("error", reason)."""
    parameters, joint = msgpack.unpackb(params)
    return mix_check_shuffle(parameters, joint, context, input, payload)


def check_sv(parameters: bytes, record: str, job: bytes) -> tuple[str, bytes | str]:
    """One job of a split-value record's checks (spec/98.3): the entries it names are read from the
    record at `record` on this worker and checked against the client's chain. Answers ("ok", answer)
    or ("error", reason)."""
    return sv_check_task(parameters, record, job)


def record_size(record: str) -> int | str:
    """The size of the file at `record` on this worker, or why it cannot be read (spec/98.3)."""
    try:
        return os.path.getsize(record)
    except OSError as e:
        return str(e)


def pow_fixed(params: bytes, base: str, exps: bytes) -> bytes:
    """A mixer's batch of powers (spec/98.7): `base` ("g", "pk" or "h") raised to each scalar of `exps`
    (canonical encodings, concatenated), answered likewise. `params` is the scattered (group, key, h);
    the worker builds the three tables once per key."""
    tables = _tables.get(params)
    assert isinstance(tables, MixPowTables)
    return tables.fixed(base, exps)


def pow_multi(params: bytes, bases: bytes, exps: bytes) -> bytes:
    """A piece of a mixer's multi-exponentiation (spec/98.7): the product of `bases` raised to `exps`."""
    tables = _tables.get(params)
    assert isinstance(tables, MixPowTables)
    return tables.multi(bases, exps)
