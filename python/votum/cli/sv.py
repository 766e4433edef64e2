"""`votum sv`: a whole split-value election (spec/97) with the thesis's phases in a table."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from votum.cli._errors import fail, refuse_to_replace
from votum.cli._progress import progress_hook
from votum.errors import VotumError
from votum.sv import DEFAULT_RACE, Race, SvConfig, SvResult, run_sv_election, run_sv_processes


def _table(result: SvResult) -> Table:
    cfg = result.config
    rows, cols, threshold = result.grid
    table = Table(
        title=(
            f"votum sv · {result.ballots:,} voters · {rows}×{cols} grid (threshold {threshold}) · "
            f"2m = {cfg.copies} · {len(cfg.races)} race(s)"
        )
    )
    # one style across votum's commands (issue 42, C.10): step, total ms, ms / voter
    table.add_column("step")
    table.add_column("total ms", justify="right")
    table.add_column("ms / voter", justify="right")
    total = 0.0
    for s in result.steps:
        total += s.seconds
        table.add_row(s.name, f"{s.seconds * 1000:,.0f}", f"{s.seconds * 1000 / max(result.ballots, 1):,.3f}")
    table.add_row(
        "total", f"{total * 1000:,.0f}", f"{total * 1000 / max(result.ballots, 1):,.3f}", style="bold"
    )
    return table


def _race(spec: str) -> Race:
    """`ID:NAME,NAME[:WRITE_IN]`."""
    parts = spec.split(":")
    if len(parts) not in (2, 3) or not parts[0]:
        raise typer.BadParameter(f"{spec!r}: ID:NAME,NAME[:WRITE_IN_LENGTH]")
    names = tuple(n for n in parts[1].split(",") if n)
    try:
        write_in = int(parts[2]) if len(parts) == 3 else 0
    except ValueError as err:
        raise typer.BadParameter(f"{spec!r}: the write-in length is a number") from err
    return Race(parts[0], names, write_in)


def sv(
    voters: Annotated[int, typer.Option(help="Number of voters (random votes from the seed).")] = 1000,
    race: Annotated[
        list[str] | None,
        typer.Option(
            help="A race as ID:NAME,NAME[:WRITE_IN_LENGTH]; repeat for several. "
            "Default: President:Smith,Jones:16 (the thesis's election)."
        ),
    ] = None,
    n_fail: Annotated[int, typer.Option(help="Servers that may fail (extra rows).")] = 0,
    n_leak: Annotated[int, typer.Option(help="Servers that may leak (columns = n_leak + 1).")] = 2,
    copies: Annotated[
        int,
        typer.Option(
            help="2m: copies mixed; half are opened, half checked. Below 132 the cut gives under 128 "
            "bits and `votum verify` refuses the record (spec/97.10)."
        ),
    ] = 132,
    seed: Annotated[
        int | None,
        typer.Option(help="Makes every secret reproducible (tests and benchmarks only; default: fresh)."),
    ] = None,
    out: Annotated[
        Path,
        typer.Option(
            help="Where the record goes (one file, spec/97.8; an earlier one there is replaced). "
            "Check it again any time with `votum verify FILE`."
        ),
    ] = Path("sv-record.vsv"),
    processes: Annotated[
        bool,
        typer.Option(
            "--processes",
            help="Run the board, the voters' client and every mix server as separate processes talking over "
            "the secure channels (spec/97.13), on loopback; the controller is this process.",
        ),
    ] = False,
    homes: Annotated[
        Path | None,
        typer.Option(help="With --processes: where the parties' identities live (default: a temporary one)."),
    ] = None,
    timeout: Annotated[float, typer.Option(help="With --processes: seconds a phase may take.")] = 600.0,
    rerun_from: Annotated[
        Path | None,
        typer.Option(
            help="With --processes and --homes: rerun a failed election from its record's sealed ballots "
            "(refused once its sides were drawn, spec/97.12); its parameters replace --race and the grid."
        ),
    ] = None,
    join: Annotated[
        bool,
        typer.Option(
            "--join",
            help="With --processes and --homes: drive parties already running (`votum node sv-party`) "
            "whose addresses the keystore of HOMES/controller holds, instead of starting them here.",
        ),
    ] = False,
    json_out: Annotated[
        bool, typer.Option("--json", help="Print a machine-readable report instead.")
    ] = False,
) -> None:
    """Casting, mixing in a grid of servers, the cut-and-choose proof, tallying, verification."""
    console = Console(stderr=json_out)
    races = tuple(_race(r) for r in race) if race else (DEFAULT_RACE,)
    config = SvConfig(voters=voters, races=races, n_fail=n_fail, n_leak=n_leak, copies=copies, seed=seed)
    refuse_to_replace(console, out, b"VOTUMSVR", "split-value")
    try:
        with progress_hook(console) as hook:
            if processes:
                result = run_sv_processes(config, out, homes, timeout, hook, rerun_from=rerun_from, join=join)
            else:
                result = run_sv_election(config, hook, record=out)
    except (VotumError, OSError) as err:
        fail(console, err)
    if not result.verified:
        console.print(
            f"[red]error:[/red] the verifier did not pass the record: {', '.join(result.not_passed)}"
        )
        raise typer.Exit(code=1)
    if json_out:
        report = {
            "voters": result.ballots,
            "grid": {"rows": result.grid[0], "columns": result.grid[1], "threshold": result.grid[2]},
            "copies": config.copies,
            "phases": [{"name": s.name, "seconds": s.seconds} for s in result.steps],
            "tallies": result.tallies,
            "board_head": result.board_head.hex(),
            "board_entries": result.board_entries,
            "record": str(out),
            "record_bytes": result.record_bytes,
            "verified": result.verified,
        }
        typer.echo(json.dumps(report, indent=1))
        return
    console.print(_table(result))
    for t in result.tallies:
        counts = ", ".join(f"{name}: {c:,}" for name, c in t["counts"])
        write_ins = ", ".join(f"{name!r}: {c:,}" for name, c in t["write_ins"])
        console.print(
            f"{t['race']}: {counts}"
            + (f"; write-ins {write_ins}" if write_ins else "")
            + f"; blank {t['blank']:,}, invalid {t['invalid']:,}"
        )
    console.print(
        f"record {out} ({result.record_bytes / 1e6:,.1f} MB, {result.board_entries} board entries, head "
        f"{result.board_head.hex()[:16]}…) verified from disk by the independent verifier (V-SV-01…12)."
    )
