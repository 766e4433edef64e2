"""`votum demo`: the threshold-ElGamal count, with progress bars and a step table."""

from __future__ import annotations

import json
import os
import platform
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from votum.cli._errors import fail
from votum.cli._progress import progress_hook, step_table
from votum.demo import DemoConfig, DemoResult, run_demo
from votum.errors import VotumError


def _table(result: DemoResult) -> Table:
    cfg = result.config
    title = f"votum demo · {cfg.group} · {cfg.votes:,} votes · {cfg.guardians} guardians, quorum {cfg.quorum}"
    return step_table(title, result.steps, per_item_digits=3)


def demo(
    votes: Annotated[int, typer.Option(help="Number of 0/1 votes to encrypt and count.")] = 10_000,
    guardians: Annotated[int, typer.Option(help="Number of guardians holding key shares.")] = 5,
    quorum: Annotated[int, typer.Option(help="Guardians needed to decrypt.")] = 3,
    group: Annotated[str, typer.Option(help="eg-4096, modp-2048, modp-3072 or ristretto255.")] = "eg-4096",
    seed: Annotated[int, typer.Option(help="Seed for a reproducible run.")] = 2026,
    json_out: Annotated[
        bool, typer.Option("--json", help="Print a machine-readable report instead.")
    ] = False,
) -> None:
    """Key ceremony, encrypted votes with proofs, homomorphic tally, threshold decryption."""
    console = Console(stderr=json_out)
    config = DemoConfig(votes=votes, guardians=guardians, quorum=quorum, group=group, seed=seed)
    try:
        with progress_hook(console) as hook:
            result = run_demo(config, hook)
    except (VotumError, OSError) as err:
        fail(console, err)
    if json_out:
        report = {
            "config": config.__dict__,
            "expected_count": result.expected_count,
            "decrypted_count": result.decrypted_count,
            "steps": [{"name": s.name, "seconds": s.seconds, "items": s.items} for s in result.steps],
            "total_seconds": result.total_seconds,
            "machine": {"nproc": os.cpu_count(), "platform": platform.platform()},
        }
        typer.echo(json.dumps(report, indent=2))
        return
    console.print(_table(result))
    console.print(
        f"[green]count verified:[/green] {result.decrypted_count:,} yes votes of {config.votes:,} "
        f"(plaintext count {result.expected_count:,}); every proof checked."
    )
