"""`votum board`: an auditor's view of a running service's bulletin board (spec/80.7)."""

from __future__ import annotations

from typing import Annotated

import httpx
import typer
from rich.console import Console

from votum.cli._progress import progress_hook
from votum.client import Client, ServiceError
from votum.client.election import check_board
from votum.errors import VerificationFailed

board_app = typer.Typer(no_args_is_help=True, help="Read and check a service's bulletin board.")

URL = Annotated[str, typer.Option(help="The service's base URL.")]
TIMEOUT = Annotated[
    float,
    typer.Option(min=0.1, help="Seconds to wait for the service to connect or answer, per request."),
]


#: the largest answer a page may be, per entry asked for (a ballot entry is about 40 KB), and the head
PAGE_BYTES = 1 << 20
HEAD_BYTES = 1 << 16


@board_app.command("check")
def check(
    election_id: Annotated[str, typer.Argument(help="The election whose board to check.")],
    url: URL = "http://127.0.0.1:8000",
    page: Annotated[int, typer.Option(min=1, max=1000, help="Entries per request.")] = 100,
    use_json: Annotated[bool, typer.Option("--json-transport", help="JSON instead of MessagePack.")] = False,
    timeout: TIMEOUT = 60.0,
) -> None:
    """Reads the election's whole board and re-links every entry from genesis to the head the service
    publishes (one page in memory at a time). Exit status 0: the board chains and ends at the head;
    1: it does not (the first entry that breaks the chain is named); 2: the board could not be read."""
    console = Console(stderr=True)
    try:
        # a deadline per request and a bound per page, not only per read (issue 43, item 13)
        client = Client(
            url, use_msgpack=not use_json, timeout=timeout, deadline=timeout, max_bytes=PAGE_BYTES * page
        )
        with client, progress_hook(console) as hook:
            head = check_board(client, election_id, page=page, progress=hook)
    except VerificationFailed as e:
        console.print(f"[red]votum board check: {e}[/red]")
        raise typer.Exit(1) from e
    except ServiceError as e:
        console.print(f"[red]votum board check: {e}[/red]")
        raise typer.Exit(2) from e
    except (OSError, httpx.TransportError) as e:  # refused, DNS, no answer within the timeout, …
        console.print(f"[red]votum board check: cannot reach {url}: {e or type(e).__name__}[/red]")
        raise typer.Exit(2) from e
    typer.echo(f"board of {election_id}: {head['seq'] + 1} entries chain to head {head['hash']}")


@board_app.command("head")
def head(
    election_id: Annotated[str, typer.Argument(help="The election.")],
    url: URL = "http://127.0.0.1:8000",
    timeout: TIMEOUT = 60.0,
) -> None:
    """Prints the board's head (sequence number and hash): the commitment to everything published so far."""
    try:
        with Client(url, timeout=timeout, deadline=timeout, max_bytes=HEAD_BYTES) as client:
            got = client.get(f"/v1/elections/{election_id}/board/head")
    except (ServiceError, OSError, httpx.TransportError) as e:
        Console(stderr=True).print(f"[red]votum board head: {e or type(e).__name__}[/red]")
        raise typer.Exit(2) from e
    typer.echo(f"{got['seq']} {got['hash']}")
