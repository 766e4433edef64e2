"""The pages' message catalogue: every text a page shows, by key, one JSON file per language
(`messages/<lang>.json`). A translation is a copy of `en.json` with the values translated; a key
missing from it falls back to English. Templates call `t(key, **values)`; scripts get the catalogue
as a JSON block and use the same keys."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

from markupsafe import Markup, escape

MESSAGES = Path(__file__).with_name("messages")
DEFAULT = "en"


@cache
def catalogue(lang: str) -> dict[str, str]:
    """The messages of `lang` over the English ones (unknown languages give English)."""
    english: dict[str, str] = json.loads((MESSAGES / f"{DEFAULT}.json").read_text(encoding="utf-8"))
    if lang == DEFAULT or not (MESSAGES / f"{lang}.json").is_file():
        return english
    return {**english, **json.loads((MESSAGES / f"{lang}.json").read_text(encoding="utf-8"))}


def languages() -> list[str]:
    return sorted(p.stem for p in MESSAGES.glob("*.json"))


def choose(accept_language: str | None) -> str:
    """The first language of an `Accept-Language` header that has a catalogue (English otherwise)."""
    have = set(languages())
    for part in (accept_language or "").split(","):
        tag = part.split(";")[0].strip().lower()
        for candidate in (tag, tag.split("-")[0]):
            if candidate in have:
                return candidate
    return DEFAULT


#: a command or name quoted in a message with backticks
CODE = re.compile(r"`([^`]+)`")


class Messages:
    """`t(key, **values)` for one language. An unknown key is a bug in a template: it raises."""

    def __init__(self, lang: str) -> None:
        self.lang = lang
        self.table = catalogue(lang)

    def __call__(self, key: str, **values: Any) -> Markup:
        """The message, HTML-escaped, its `quoted` commands set as code (issue 42, C.11: the pages showed the
        backticks), and `values` escaped into it."""
        text = Markup(CODE.sub(r"<code>\1</code>", str(escape(self.table[key]))))
        return text.format(**values) if values else text

    def label(self, prefix: str, name: str) -> Markup:
        """The message `prefix + name` when the catalogue has one, else `name` made readable (a board
        entry's kind, issue 42, C.11: the board showed raw names such as `backup_verified`)."""
        key = prefix + name
        return self(key) if key in self.table else Markup(escape(name.replace("_", " ")))

    def subset(self, prefix: str) -> dict[str, str]:
        """The messages whose keys start with `prefix` (what one page's script needs)."""
        return {k: v for k, v in self.table.items() if k.startswith(prefix)}
