"""`votum load`: the seed's scalability run against a running `votum serve`."""

from __future__ import annotations

import json
import os
import resource
import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

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
    api: Annotated[
        str, typer.Option(help="seed: the six stateless endpoints; stateful: the /v1 election API.")
    ] = "seed",
    batch: Annotated[int, typer.Option(help="Ballots per submission (stateful API).")] = 100,
    tokens_file: Annotated[
        Path | None,
        typer.Option(
            help="Tokens of the stateful run, one role=token a line as `votum tokens new` prints them "
            "(admin, device, guardian:guardian-<i>); default: VOTUM_TOKENS (role=token,…)."
        ),
    ] = None,
) -> None:
    """The seed's scalability run: for each N in start, 2·start, …, stop a whole election through the six
    seed endpoints (chunks of --chunk ballots), or through the stateful API (--api stateful: key ceremony,
    ballots in batches, shares, results, the board re-linked), checking the decrypted counts against the
    generated votes; then a per-endpoint latency table (p50, p95, max) and the totals."""
    console = Console(stderr=True)
    if api not in ("seed", "stateful"):
        console.print("[red]votum load: --api is seed or stateful[/red]")
        raise typer.Exit(2)
    if api == "seed":
        summary = Table(
            title=f"votum load · {url} · {guardians} guardians, quorum {quorum}, {missing} missing"
        )
        columns = ("ballots", "chunks", "seconds", "ballots/s", "client peak MiB", "counts match")

        def one(client: Client, n: int, tell: Progress) -> tuple[list[str], dict[str, Any], Latencies]:
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
            cells = [f"{run.chunks}", f"{run.seconds:,.1f}", f"{n / run.seconds:,.1f}"]
            return cells, {"seconds": run.seconds, "counts": run.counts}, run.latencies

    else:
        from votum.client.election import Tokens, run_stateful_election
        from votum.eg import manifest_from_names
        from votum.service.settings import tokens_from_env, tokens_from_file

        try:
            if tokens_file is not None:
                roles = tokens_from_file(tokens_file)
            else:
                roles = tokens_from_env(os.environ.get("VOTUM_TOKENS", ""))
            tokens = Tokens.from_roles(roles, guardians)
        except (OSError, ValueError, VotumError) as e:
            console.print(f"[red]votum load: {e}[/red]")
            raise typer.Exit(2) from e
        manifest = manifest_from_names(["Party"], [f"candidate-{i}" for i in range(1, candidates + 1)])
        summary = Table(title=f"votum load --api stateful · {url} · {guardians} guardians, quorum {quorum}")
        columns = ("ballots", "seconds", "ballots/s stored", "board head", "client peak MiB", "counts match")
        stamp = time.strftime("%Y%m%d-%H%M%S")

        def one(client: Client, n: int, tell: Progress) -> tuple[list[str], dict[str, Any], Latencies]:
            run = run_stateful_election(
                client,
                tokens,
                f"load-{stamp}-{n}",
                manifest,
                n,
                quorum,
                batch=batch,
                spoil_rate=spoil_rate,
                missing=missing,
                progress=tell,
            )
            cells = [f"{run.seconds:,.1f}", f"{run.ballots_per_second:,.1f}", f"{run.head['seq']:,}"]
            figure = {
                "seconds": run.seconds,
                "stages": run.stages,
                "ballots_per_second": run.ballots_per_second,
                "counts": run.counts,
                "head": run.head,
                "client_peak_mib_by_stage": run.peak_mib,
            }
            return cells, figure, run.latencies

    for col in columns:
        summary.add_column(col, justify="right")
    _runs(console, url, use_json, doubling(start, stop), summary, one, report)


Progress = Callable[[str, int, int], None]
Latencies = dict[str, list[float]]


def _runs(
    console: Console,
    url: str,
    use_json: bool,
    sizes: list[int],
    summary: Table,
    one: Callable[[Client, int, Progress], tuple[list[str], dict[str, Any], Latencies]],
    report: str | None,
) -> None:
    """One election per size through `one`, a summary row each (ballots, `one`'s cells, client peak,
    counts match), then the per-endpoint latencies; a failed run ends the command with status 1."""
    figures = []
    latencies: Latencies = {}
    try:
        for n in sizes:
            with Client(url, use_msgpack=not use_json) as client, progress_hook(console) as hook:

                def tell(stage: str, done: int, total: int, n: int = n) -> None:
                    hook(f"N={n:,} {stage}", done, total)

                cells, figure, run_latencies = one(client, n, tell)
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            summary.add_row(f"{n:,}", *cells, f"{peak:,.0f}", "yes")
            for k, v in run_latencies.items():
                latencies.setdefault(k, []).extend(v)
            figures.append({"ballots": n, **figure, "client_peak_mib": peak})
    except VotumError as e:
        console.print(f"[red]votum load: {e}[/red]")
        raise typer.Exit(1) from e
    table = Table(title="per endpoint (client side)")
    for col in ("endpoint", "calls", "p50 ms", "p95 ms", "max ms", "total s"):
        table.add_column(col, justify="right" if col != "endpoint" else "left")
    rows = latency_rows(latencies)
    for name, calls, p50, p95, mx, total in rows:
        table.add_row(name, f"{calls:,}", f"{p50:,.1f}", f"{p95:,.1f}", f"{mx:,.1f}", f"{total:,.1f}")
    out = Console()
    out.print(summary)
    out.print(table)
    if report:
        with open(report, "w") as f:
            json.dump({"runs": figures, "latency": rows}, f, indent=1)
