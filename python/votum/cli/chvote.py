"""`votum chvote`: a whole CHVote election (spec/92) with the proof of concept's step table."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from votum.chvote import SHAPES, ChvoteConfig, ChvoteResult, run_chvote, run_chvote_processes
from votum.cli._errors import fail, refuse_to_replace
from votum.cli._progress import step_progress
from votum.errors import VotumError


def _table(result: ChvoteResult) -> Table:
    cfg = result.config
    shape = ", ".join(f"{k}-of-{n}" for n, k in result.elections)
    table = Table(
        title=(
            f"votum chvote · {cfg.voters:,} voters · level {cfg.level} (p of {result.p_bits} bits) · "
            f"{cfg.authorities} authorities · {shape}"
        )
    )
    # one style across votum's commands (issue 42, C.10): step, total ms, ms / voter
    table.add_column("step")
    table.add_column("total ms", justify="right")
    table.add_column("ms / voter", justify="right")
    per = max(cfg.voters, 1)
    for s in result.steps:
        table.add_row(s.name, f"{s.seconds * 1000:,.0f}", f"{s.seconds * 1000 / per:,.3f}")
    total = result.total_seconds
    table.add_row("total simulation time", f"{total * 1000:,.0f}", f"{total * 1000 / per:,.3f}", style="bold")
    return table


def chvote(
    voters: Annotated[
        int, typer.Option(help="Number of voters; each casts, confirms and checks its codes.")
    ] = 100,
    level: Annotated[int, typer.Option(help="Security level: 1 (1024-bit p) or 2 (2048-bit p).")] = 2,
    election: Annotated[str, typer.Option(help=f"Election shape: {', '.join(SHAPES)}.")] = "single",
    authorities: Annotated[int, typer.Option(help="Election authorities.")] = 4,
    out: Annotated[
        Path,
        typer.Option(
            help="Where the election's record goes (one file, spec/92.10; an earlier one there is "
            "replaced). Check it again any time with `votum verify FILE`."
        ),
    ] = Path("chvote-record.vchv"),
    sheets: Annotated[
        Path | None,
        typer.Option(help="Write one printable code sheet per voter (HTML) into this directory."),
    ] = None,
    processes: Annotated[
        bool,
        typer.Option(
            "--processes",
            help="Run every authority, the printing authority and the voters' client as a process of its "
            "own over the secure channels (spec/92.12); this process is the board.",
        ),
    ] = False,
    json_out: Annotated[
        bool, typer.Option("--json", help="Print a machine-readable report instead.")
    ] = False,
) -> None:
    """Code sheets, cast-as-intended voting by oblivious transfer, confirmation, finalization, mixing,
    decryption and tallying, timed in the CHVote proof of concept's step names."""
    console = Console(stderr=json_out)
    config = ChvoteConfig(voters=voters, level=level, election=election, authorities=authorities)
    refuse_to_replace(console, out, b"VOTUMCHV", "CHVote")
    try:
        with step_progress(console) as step:
            if processes:
                result = run_chvote_processes(config, step, record=out, sheets=sheets)
            else:
                result = run_chvote(config, step, record=out, sheets=sheets)
    except (VotumError, OSError) as err:
        fail(console, err)
    if json_out:
        report = {
            "config": config.__dict__,
            "p_bits": result.p_bits,
            "steps": [{"name": s.name, "seconds": s.seconds} for s in result.steps],
            "total_seconds": result.total_seconds,
            "tally": result.tally,
            "expected": result.expected,
            "invalid": result.invalid,
            "confirmed": result.confirmed,
            "exact": result.exact,
            "record": str(out),
            "verified": result.verified,
            "not_passed": result.not_passed,
            "head": result.head,
        }
        typer.echo(json.dumps(report))
    else:
        console.print(_table(result))
        # labelled as every count is (issue 42, C.10): candidate: votes
        tally = ", ".join(f"candidate {i + 1}: {v:,}" for i, v in enumerate(result.tally))
        cast = ", ".join(f"candidate {i + 1}: {v:,}" for i, v in enumerate(result.expected))
        console.print(f"tally {tally}; votes cast {cast}; confirmed {result.confirmed:,}")
        console.print(
            f"record {out} (head {result.head}): the independent verifier passed every V-CHV check"
            if result.verified
            else ""
        )
    if not result.exact:
        console.print("[red]error:[/red] the tally is not the votes cast")
        raise typer.Exit(code=1)
    if not result.verified:
        console.print(
            f"[red]error:[/red] the verifier did not pass the record: {', '.join(result.not_passed)}"
        )
        raise typer.Exit(code=1)
