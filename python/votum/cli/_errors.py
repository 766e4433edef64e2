"""One line for a user's mistake, with the usage exit code (2), never a traceback (issue 42, C.2): what the
error is in words a user reads, and the file it is about."""

from __future__ import annotations

import errno
from pathlib import Path
from typing import NoReturn

import typer
from rich.console import Console
from rich.markup import escape

from votum.errors import VotumError


def describe(err: BaseException) -> str:
    """The error in one line: an OS error by what happened and to which file, votum's by its kind."""
    if isinstance(err, OSError):
        where = f": {err.filename}" if err.filename else ""
        if isinstance(err, FileNotFoundError):
            return f"no such file or directory{where}"
        if isinstance(err, PermissionError):
            return f"permission denied{where}"
        if isinstance(err, IsADirectoryError):
            return f"a directory, where a file is needed{where}"
        if isinstance(err, NotADirectoryError):
            return f"not a directory{where}"
        if err.errno == errno.EADDRINUSE:
            return "the address is in use: another process listens on that port; choose another with --port"
        return f"{err.strerror or err}{where}"
    if isinstance(err, VotumError):
        return f"{type(err).__name__}: {err}"
    return str(err)


def refuse_to_replace(console: Console, out: Path, magic: bytes, kind: str) -> None:
    """`--out` may replace an earlier record of the same kind, nothing else (issue 42, C.6)."""
    if not out.exists():
        return
    head = b""
    if out.is_file():
        try:
            with out.open("rb") as f:
                head = f.read(len(magic))
        except OSError as err:
            fail(console, err)
    if head != magic:
        fail(console, f"{out} exists and is not a {kind} record: choose another --out, or move it away first")


def fail(console: Console, err: BaseException | str) -> NoReturn:
    """Prints the error on one line and exits with status 2 (a usage error, as click's own)."""
    text = err if isinstance(err, str) else describe(err)
    console.print(f"[red]error:[/red] {escape(text)}", soft_wrap=True)
    raise typer.Exit(code=2)
