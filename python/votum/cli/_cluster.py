"""The options every command with work for a Dask cluster shares (spec/98.6)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

Scheduler = Annotated[
    str | None,
    typer.Option(
        "--scheduler",
        help="Run the heavy work on a Dask cluster: local:N (a LocalCluster of N workers, started for the "
        "run), tcp://HOST:PORT or tls://HOST:PORT (a running `dask scheduler`). Default: this process.",
        metavar="ADDRESS",
    ),
]
Chunk = Annotated[int, typer.Option("--chunk", help="Ballots per cluster task (1-256).", min=1, max=256)]
TaskTimeout = Annotated[
    float, typer.Option("--task-timeout", help="Seconds to wait for one cluster task.", min=1)
]
Plaintext = Annotated[
    bool,
    typer.Option(
        "--plaintext-scheduler",
        help="Accept a tcp:// scheduler beyond this machine (plaintext, unauthenticated: anyone on the "
        "network can answer for its workers). Refused without this; prefer tls://.",
    ),
]
Recheck = Annotated[
    float | None,
    typer.Option(
        "--recheck",
        help="Share of the cluster's passing answers checked again here, drawn after each answer "
        "(default 1/16; 1: all). The report says what it bounds.",
        min=0.0,
        max=1.0,
    ),
]
TlsCa = Annotated[Path | None, typer.Option("--tls-ca", help="CA of a tls:// scheduler's deployment.")]
TlsCert = Annotated[Path | None, typer.Option("--tls-cert", help="This client's certificate for tls://.")]
TlsKey = Annotated[Path | None, typer.Option("--tls-key", help="This client's private key for tls://.")]


def cluster_options(
    console: Console,
    scheduler: str | None,
    chunk: int,
    task_timeout: float,
    tls_ca: Path | None,
    tls_cert: Path | None,
    tls_key: Path | None,
    plaintext: bool = False,
    recheck: float | None = None,
) -> dict[str, Any]:
    """The keyword arguments for a function with a `scheduler=` argument, the dashboard announced on
    `console`; empty when no scheduler is named. `recheck` only for the verifier."""
    if scheduler is None:
        return {}
    tls_given = [p is not None for p in (tls_ca, tls_cert, tls_key)]
    if any(tls_given) and not all(tls_given):
        raise typer.BadParameter("--tls-ca, --tls-cert and --tls-key go together")
    tls = (str(tls_ca), str(tls_cert), str(tls_key)) if all(tls_given) else None

    def announce(link: str) -> None:
        console.print(f"cluster {scheduler}: dashboard {link}")

    options = {
        "scheduler": scheduler,
        "chunk": chunk,
        "task_timeout": task_timeout,
        "tls": tls,
        "announce": announce,
        "plaintext": plaintext,
    }
    if recheck is not None:
        options["recheck"] = recheck
    return options
