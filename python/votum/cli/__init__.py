"""The `votum` command."""

from __future__ import annotations

import typer

from votum.cli.board import board_app
from votum.cli.ceremony import ceremony
from votum.cli.chvote import chvote
from votum.cli.demo import demo
from votum.cli.device import device
from votum.cli.election import election, record_app, verify
from votum.cli.guardian import guardian_app
from votum.cli.load import load
from votum.cli.mix import mix
from votum.cli.node import node_app
from votum.cli.official import official_app
from votum.cli.paper import paper_app
from votum.cli.serve import serve
from votum.cli.sv import sv
from votum.cli.tokens import tokens_app

app = typer.Typer(
    no_args_is_help=True, add_completion=False, help="votum: verifiable elections at national scale."
)
app.command(name="election")(election)
app.command(name="verify")(verify)
app.command(name="demo")(demo)
app.command(name="serve")(serve)
app.command(name="load")(load)
app.command(name="mix")(mix)
app.command(name="sv")(sv)
app.command(name="chvote")(chvote)
app.command(name="ceremony")(ceremony)
app.command(name="device")(device)
app.add_typer(record_app, name="record")
app.add_typer(board_app, name="board")
app.add_typer(node_app, name="node")
app.add_typer(tokens_app, name="tokens")
app.add_typer(guardian_app, name="guardian")
app.add_typer(official_app, name="official")
app.add_typer(paper_app, name="paper")


@app.command()
def version() -> None:
    """Print votum's version."""
    from votum import __version__

    typer.echo(__version__)


def main() -> None:
    app()
