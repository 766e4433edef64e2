"""The `votum` command.

Each command's module is imported only when that command runs: `votum node fingerprint` loads the node
commands and what they need, not the service, the pages and every protocol (0.5 s of imports before). `votum`,
`votum --help` and an unknown name load them all, so that the help lists every command. `app` is the whole
command, for tests that run it in-process."""

from __future__ import annotations

import importlib
import sys
from typing import Any

import typer

HELP = "votum: verifiable elections at national scale."

# name: (module, attribute, whether it is a group of commands), in the order the help lists them
COMMANDS: dict[str, tuple[str, str, bool]] = {
    "election": ("votum.cli.election", "election", False),
    "verify": ("votum.cli.election", "verify", False),
    "demo": ("votum.cli.demo", "demo", False),
    "serve": ("votum.cli.serve", "serve", False),
    "load": ("votum.cli.load", "load", False),
    "mix": ("votum.cli.mix", "mix", False),
    "sv": ("votum.cli.sv", "sv", False),
    "chvote": ("votum.cli.chvote", "chvote", False),
    "ceremony": ("votum.cli.ceremony", "ceremony", False),
    "device": ("votum.cli.device", "device", False),
    "record": ("votum.cli.election", "record_app", True),
    "board": ("votum.cli.board", "board_app", True),
    "node": ("votum.cli.node", "node_app", True),
    "tokens": ("votum.cli.tokens", "tokens_app", True),
    "guardian": ("votum.cli.guardian", "guardian_app", True),
    "official": ("votum.cli.official", "official_app", True),
    "paper": ("votum.cli.paper", "paper_app", True),
}


def version() -> None:
    """Print votum's version."""
    from votum import __version__

    typer.echo(__version__)


def build(only: str | None = None) -> typer.Typer:
    """The command with every subcommand, or with `only` (and `version`) when it names one."""
    cli = typer.Typer(no_args_is_help=True, add_completion=False, help=HELP)

    @cli.callback()
    def _root() -> None:
        # a group even when one subcommand is registered (typer would run a lone command without its name)
        pass

    for name, (module, attribute, group) in COMMANDS.items():
        if only is not None and name != only:
            continue
        target = getattr(importlib.import_module(module), attribute)
        if group:
            cli.add_typer(target, name=name)
        else:
            cli.command(name=name)(target)
    cli.command(name="version")(version)
    return cli


def __getattr__(name: str) -> Any:
    # `from votum.cli import app`: the whole command, built on first use
    if name == "app":
        whole = build()
        globals()["app"] = whole
        return whole
    raise AttributeError(name)


def main() -> None:
    args = sys.argv[1:]
    build(args[0] if args and args[0] in COMMANDS else None)()
