"""What the parties' commands share when they talk to a running service (`votum official`, `votum
guardian`, `votum device`): its URL and the party's token.

A token is never an option's value (a command line is visible to every user of the machine in `ps`):
it comes from a file of `role=token` lines, as `votum tokens new` prints them, or from `VOTUM_TOKEN`."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from votum.client import Client
from votum.errors import InvalidInput
from votum.service.settings import tokens_from_file

Service = Annotated[
    str, typer.Option("--service", envvar="VOTUM_SERVICE", help="The election service's base URL.")
]
DEFAULT_SERVICE = "http://127.0.0.1:8000"
TokenFile = Annotated[
    Path | None,
    typer.Option(
        "--token-file",
        envvar="VOTUM_TOKEN_FILE",
        help="A file with this party's token as `votum tokens new` printed it (role=token); "
        "default: the VOTUM_TOKEN environment variable.",
    ),
]
ElectionId = Annotated[str, typer.Option("--election", "-e", help="The election's id.")]


def token_for(role: str, token_file: Path | None) -> str:
    """The token of `role` (a role pattern ending in `*` matches any role it starts with) from the file,
    or `VOTUM_TOKEN`. A file may hold several roles' tokens; the one of this role is taken."""
    return role_and_token(role, token_file)[1]


def role_and_token(role: str, token_file: Path | None) -> tuple[str | None, str]:
    """`token_for`, with the token's role when the file or `VOTUM_TOKEN` (as role=token) says it."""
    if token_file is None:
        given = os.environ.get("VOTUM_TOKEN", "").strip()
        if not given:
            raise InvalidInput(f"no token: give --token-file, or set VOTUM_TOKEN to the {role} token")
        if "=" in given:
            named, token = given.split("=", 1)
            return named, token
        return None, given
    found = [
        (r, token)
        for token, r in tokens_from_file(token_file).items()
        if r == role or (role.endswith("*") and r.startswith(role[:-1]))
    ]
    if len(found) != 1:
        raise InvalidInput(
            f"{token_file} has {len(found)} tokens of role {role}; it needs exactly one "
            "(lines role=token, as `votum tokens new` prints them)"
        )
    return found[0]


def client_for(service: str, role: str, token_file: Path | None, timeout: float = 120.0) -> Client:
    """A JSON client of the service, with the token of `role`."""
    return Client(service, token=token_for(role, token_file), use_msgpack=False, timeout=timeout)
