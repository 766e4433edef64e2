"""`votum load`: the seed's scalability run against a running `votum serve`."""

from __future__ import annotations

import json
import resource
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from votum.cli._progress import progress_hook
from votum.client import Client
from votum.client.load import doubling, latency_rows, seed_election
from votum.errors import VotumError


def load(
    url: Annotated[str, typer.Option(help="The service's base URL.")] = "http://127.0.0.1:8000",
    start: Annotated[int, typer.Option(help="First ballot count.")] = 32,
    stop: Annotated[int, typer.Option(help="Last ballot count (doubling from --start).")] = 131_072,
    chunk: Annotated[int, typer.Option(help="Ballots per tally chunk.")] = 1000,
    guardians: Annotated[int, typer.Option(help="Number of guardians.")] = 5,
    quorum: Annotated[int, typer.Option(help="Guardians needed to decrypt.")] = 3,
    missing: Annotated[int, typer.Option(help="Guardians absent at decryption (compensated).")] = 2,
    candidates: Annotated[int, typer.Option(help="Candidates of the one contest.")] = 4,
    spoil_rate: Annotated[float, typer.Option(help="Share of ballots spoiled.")] = 0.0,
    use_json: Annotated[bool, typer.Option("--json-transport", help="JSON instead of MessagePack.")] = False,
    report: Annotated[str | None, typer.Option(help="Write the figures as JSON to this file.")] = None,
) -> None:
    """The seed's scalability run: for each N in start, 2·start, …, stop a whole election through the six
    seed endpoints (chunks of --chunk ballots), checking the decrypted counts against the generated votes;
    then a per-endpoint latency table (p50, p95, max) and the totals."""
    console = Console(stderr=True)
    summary = Table(title=f"votum load · {url} · {guardians} guardians, quorum {quorum}, {missing} missing")
    for col in ("ballots", "chunks", "seconds", "ballots/s", "client peak MiB", "counts match"):
        summary.add_column(col, justify="right")
    figures = []
    all_latencies: dict[str, list[float]] = {}
    try:
        for n in doubling(start, stop):
            with Client(url, use_msgpack=not use_json) as client, progress_hook(console) as hook:

                def tell(stage: str, done: int, total: int, n: int = n) -> None:
                    hook(f"N={n:,} {stage}", done, total)

                run = seed_election(
                    client,
                    n,
                    chunk=chunk,
                    guardians=guardians,
                    quorum=quorum,
                    missing=missing,
                    candidates=candidates,
                    spoil_rate=spoil_rate,
                    progress=tell,
                )
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            summary.add_row(
                f"{n:,}",
                f"{run.chunks}",
                f"{run.seconds:,.1f}",
                f"{n / run.seconds:,.1f}",
                f"{peak:,.0f}",
                "yes",
            )
            for k, v in run.latencies.items():
                all_latencies.setdefault(k, []).extend(v)
            figures.append(
                {"ballots": n, "seconds": run.seconds, "client_peak_mib": peak, "counts": run.counts}
            )
    except VotumError as e:
        console.print(f"[red]votum load: {e}[/red]")
        raise typer.Exit(1) from e
    latency = Table(title="per endpoint (client side)")
    for col in ("endpoint", "calls", "p50 ms", "p95 ms", "max ms", "total s"):
        latency.add_column(col, justify="right" if col != "endpoint" else "left")
    rows = latency_rows(all_latencies)
    for name, calls, p50, p95, mx, total in rows:
        latency.add_row(name, f"{calls:,}", f"{p50:,.1f}", f"{p95:,.1f}", f"{mx:,.1f}", f"{total:,.1f}")
    out = Console()
    out.print(summary)
    out.print(latency)
    if report:
        with open(report, "w") as f:
            json.dump({"runs": figures, "latency": rows}, f, indent=1)
