"""`votum mix`: a whole mixnet election (spec/91) with a step table in CHVote's step names and
nVotes-style votes per hour."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from votum.cli._cluster import Plaintext, Scheduler, TaskTimeout, TlsCa, TlsCert, TlsKey, cluster_options
from votum.cli._errors import fail, refuse_to_replace
from votum.cli._progress import step_progress
from votum.errors import VotumError
from votum.mix import (
    GROUPS,
    RULES,
    MixConfig,
    MixResult,
    run_mix_election,
    run_mix_processes,
    votes_text,
)


def _table(result: MixResult) -> Table:
    cfg = result.config
    table = Table(
        title=(
            f"votum mix · {cfg.voters:,} voters · {cfg.group} · {cfg.mixers} mixers, "
            f"{cfg.trustees} trustees (quorum {cfg.quorum}) · {cfg.rule}, {cfg.candidates} candidates, "
            f"width {cfg.ballot_width()}"
        )
    )
    table.add_column("step")
    table.add_column("total ms", justify="right")
    table.add_column("ms / voter", justify="right")
    for s in result.steps:
        style = "bold" if s.name == "total simulation time" else None
        table.add_row(
            s.name, f"{s.seconds * 1000:,.0f}", f"{s.seconds * 1000 / cfg.voters:,.3f}", style=style
        )
    return table


def _outcome(result: MixResult) -> str:
    o = result.outcome
    stv = o["rule"] == "stv"
    tallies = ", ".join(f"{i + 1}: {votes_text(t, stv)}" for i, t in enumerate(o["tallies"]))
    winners = ", ".join(str(w) for w in o["winners"]) or "nobody"
    rounds = f"; {len(o['rounds'])} later rounds" if o["rounds"] else ""
    lines = [
        f"first round {tallies}{rounds}; valid {o['valid']:,}, invalid {o['invalid']:,}; elected: {winners}"
    ]
    if stv:
        lines.append(f"quota {votes_text(o['quota'], True)} votes")
    if o.get("exhausted"):
        lines.append("exhausted per round: " + ", ".join(votes_text(x, stv) for x in o["exhausted"]))
    lines.extend(_tie(t) for t in o.get("ties", []))
    return "\n".join(lines)


def _tie(t: dict[str, Any]) -> str:
    among = ", ".join(str(c) for c in t["among"])
    chosen = ", ".join(str(c) for c in t["chosen"])
    verb = "elected" if t["decision"] == "elect" else "eliminated"
    what = f"{chosen} {verb} by the tie rule" if chosen else "left undecided (the rule breaks no tie)"
    return f"tie in round {t['round'] + 1} between {among}: {what}"


def mix(
    voters: Annotated[int, typer.Option(help="Number of voters (one ballot each).")] = 1000,
    group: Annotated[str, typer.Option(help=f"Group: {', '.join(GROUPS)}.")] = "ristretto255",
    mixers: Annotated[int, typer.Option(help="Mix servers in the cascade.")] = 3,
    trustees: Annotated[int, typer.Option(help="Trustees holding shares of the decryption key.")] = 3,
    quorum: Annotated[int, typer.Option(help="Trustees needed to decrypt.")] = 2,
    candidates: Annotated[int, typer.Option(help="Number of candidates.")] = 3,
    rule: Annotated[str, typer.Option(help=f"Counting rule: {', '.join(RULES)}.")] = "plurality",
    width: Annotated[
        int, typer.Option(help="Ciphertexts per ballot (0: 1 for plurality, k for k-of-n, else candidates).")
    ] = 0,
    seats: Annotated[int, typer.Option(help="Seats (k-of-n, approval, stv).")] = 1,
    k: Annotated[int, typer.Option(help="Choices per ballot for k-of-n.")] = 2,
    ties: Annotated[
        str,
        typer.Option(
            help="How a tie is broken: lower-number (the lower candidate number is preferred) or unresolved "
            "(a tied seat stays empty and a ranked count stops; the officials decide). Written in the record."
        ),
    ] = "lower-number",
    seed: Annotated[int, typer.Option(help="Seed choosing the votes (keys and nonces are random).")] = 2026,
    out: Annotated[
        Path,
        typer.Option(
            help="Where the mix record goes (one file, spec/91.7; an earlier one there is replaced). "
            "Check it again any time with `votum verify FILE`."
        ),
    ] = Path("mix-record.vmix"),
    json_out: Annotated[
        bool, typer.Option("--json", help="Print a machine-readable report instead.")
    ] = False,
    processes: Annotated[
        bool,
        typer.Option(
            "--processes",
            help="Run every authority (trustee and mixer) and the voters' client as a process of its own "
            "over the secure channels, each checking its own copy of the board and signing its entries "
            "(spec/91.9); this process is the board.",
        ),
    ] = False,
    scheduler: Scheduler = None,
    task_timeout: TaskTimeout = 600.0,
    tls_ca: TlsCa = None,
    tls_cert: TlsCert = None,
    tls_key: TlsKey = None,
    plaintext_scheduler: Plaintext = False,
) -> None:
    """Voting, a mix cascade with shuffle proofs, threshold decryption with proofs, counting, verification.
    With --scheduler, the trustees' checks of every shuffle and the verifier's run on a Dask cluster
    (spec/98)."""
    console = Console(stderr=json_out)
    on_cluster = cluster_options(
        console, scheduler, 64, task_timeout, tls_ca, tls_cert, tls_key, plaintext_scheduler
    )
    on_cluster.pop("chunk", None)
    config = MixConfig(
        voters=voters,
        group=group,
        candidates=candidates,
        rule=rule,
        width=width,
        seats=seats,
        k=k,
        ties=ties,
        mixers=mixers,
        trustees=trustees,
        quorum=quorum,
        seed=seed,
    )
    if processes and on_cluster:
        fail(console, "--processes runs each party in its own process; drop --scheduler")
    refuse_to_replace(console, out, b"VOTUMMIX", "mix")
    try:
        with step_progress(console) as step:
            if processes:
                result = run_mix_processes(config, step, record=out)
            else:
                result = run_mix_election(config, step, record=out, **on_cluster)
    except (VotumError, OSError) as err:
        fail(console, err)
    if not result.multiset_ok:
        console.print("[red]error:[/red] the decrypted ballots are not the ballots cast")
        raise typer.Exit(code=1)
    if not result.verified:
        console.print(
            f"[red]error:[/red] the verifier did not pass the record: {', '.join(result.not_passed)}"
        )
        raise typer.Exit(code=1)
    if json_out:
        report = {
            "config": config.__dict__,
            "steps": [{"name": s.name, "seconds": s.seconds} for s in result.steps],
            "outcome": result.outcome,
            "shuffle_checks": result.shuffle_checks,
            "multiset_ok": result.multiset_ok,
            "board_head": result.board_head.hex(),
            "record": str(out),
            "record_bytes": result.record_bytes,
            "verified": result.verified,
            "votes_per_hour": {
                "mixing": result.votes_per_hour("mixing"),
                "full_cycle": result.votes_per_hour("total simulation time"),
            },
        }
        typer.echo(json.dumps(report, indent=1))
        return
    console.print(_table(result))
    console.print(_outcome(result))
    console.print(
        f"votes per hour: mixing {result.votes_per_hour('mixing'):,.0f}, full cycle "
        f"{result.votes_per_hour('total simulation time'):,.0f}; {result.shuffle_checks} shuffle checks by "
        f"the trustees before decrypting; decrypted ballots equal the ballots cast; record {out} "
        f"({result.record_bytes / 1024:,.0f} KiB, {result.board_entries} board entries, head "
        f"{result.board_head.hex()[:16]}…) verified from disk by the independent verifier."
    )
