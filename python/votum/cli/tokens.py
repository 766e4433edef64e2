"""`votum tokens`: the service's bearer tokens, one per role, made here and shown once; `data_dir/tokens.json`
keeps only their SHA-256 (spec/80.8). Tokens are written `role=token`, as `VOTUM_TOKENS` and `votum load
--tokens-file` take them."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from votum.cli._errors import fail
from votum.errors import VotumError

tokens_app = typer.Typer(no_args_is_help=True, help="Make, list and revoke the service's tokens (spec/80.8).")

DataDir = Annotated[Path, typer.Option("--data-dir", help="The service's data directory (its tokens.json).")]


@tokens_app.command("new")
def new(
    role: Annotated[str, typer.Argument(help="admin, device, device:<name>, guardian:<id> or metrics.")],
    data_dir: DataDir = Path("votum-data"),
) -> None:
    """Make a token for ROLE: printed once as role=token; the data directory keeps only its hash."""
    from votum.service import tokenfile

    console = Console(stderr=True)
    try:
        token = tokenfile.new(data_dir / "tokens.json", role)
    except (VotumError, OSError) as e:
        fail(console, e)
    console.print(f"a new {role} token, shown this once (its hash is in {data_dir / 'tokens.json'}):")
    typer.echo(f"{role}={token}")


@tokens_app.command("list")
def listed(data_dir: DataDir = Path("votum-data")) -> None:
    """The tokens in the data directory: role, id (the hash's first digits) and when each was made."""
    from votum.service import tokenfile

    console = Console()
    try:
        entries = tokenfile.listed(data_dir / "tokens.json")
    except (VotumError, OSError) as e:
        fail(console, e)
    table = Table(title=f"tokens of {data_dir}")
    for column in ("role", "id", "made"):
        table.add_column(column)
    for entry in entries:
        table.add_row(entry["role"], entry["id"], entry["created"])
    console.print(table)


@tokens_app.command("revoke")
def revoke(
    what: Annotated[
        str, typer.Argument(help="A role (every token of it), or a token's id (8 digits or more).")
    ],
    data_dir: DataDir = Path("votum-data"),
) -> None:
    """Revoke tokens; a running server reads its tokens at start, so restart it."""
    from votum.service import tokenfile

    console = Console()
    try:
        gone = tokenfile.revoke(data_dir / "tokens.json", what)
    except (VotumError, OSError) as e:
        fail(console, e)
    if not gone:
        fail(console, f"no token of role or id {what!r}")
    console.print(f"{gone} token(s) revoked; restart the server for it to read them again")
