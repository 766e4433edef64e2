"""Fingerprints as people compare them, in one form everywhere (the CLI, the pages, the guardians' tools): the
first 128 bits of a SHA-256, in groups of four hex digits (`3f2a 9c01 …`). A key's fingerprint is taken over
its canonical electionguard hex (upper case, an even number of digits, no leading zero byte), so the same key
gives the same fingerprint however a document spelled it."""

from __future__ import annotations

import hashlib


def fingerprint(data: bytes | str) -> str:
    """The fingerprint of `data` (text is taken as UTF-8)."""
    raw = data.encode() if isinstance(data, str) else data
    digest = hashlib.sha256(raw).hexdigest()[:32]
    return grouped(digest)


def grouped(hex_text: str) -> str:
    """A hash written in groups of four digits (for reading it aloud or comparing it by eye)."""
    return " ".join(hex_text[i : i + 4] for i in range(0, len(hex_text), 4))


def key_fingerprint(key: str | int) -> str:
    """The fingerprint of a public key (the joint key, a guardian's key), given as hex text in any case or
    as an integer: the fingerprint of its canonical electionguard hex."""
    value = key if isinstance(key, int) else int(key, 16)
    text = format(value, "X")
    return fingerprint(text if len(text) % 2 == 0 else "0" + text)
