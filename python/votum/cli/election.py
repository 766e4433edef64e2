"""`votum election`: a whole ElectionGuard 1.0 election with progress bars and a step table."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from votum import record_pack, record_unpack
from votum.cli._cluster import (
    Chunk,
    Plaintext,
    Recheck,
    Scheduler,
    TaskTimeout,
    TlsCa,
    TlsCert,
    TlsKey,
    cluster_options,
)
from votum.cli._errors import fail
from votum.cli._progress import progress_hook, step_table
from votum.cli._results import print_result
from votum.eg2 import Eg2Config, run_eg2_election
from votum.election import ElectionConfig, ElectionResult, run_election
from votum.errors import VotumError
from votum.results import verified_result
from votum.verifier import FORMATS
from votum.verifier import verify as check_record


def _table(result: ElectionResult) -> Table:
    cfg = result.config
    title = (
        f"votum election · {cfg.ballots:,} ballots ({result.cast:,} cast, {result.spoiled:,} spoiled) · "
        f"{cfg.guardians} guardians, quorum {cfg.quorum}, {cfg.missing} missing"
    )
    return step_table(title, result.steps, per_item_digits=2)


def _election_2x(console: Console, config: Eg2Config, json_out: bool) -> None:
    """`votum election --spec 2.1`: the 2.1 election of spec/66 (or, with `--eg2-record egk-ec`, the 2.x
    election of spec/65.7–65.8 written as an egk-ec record)."""
    try:
        result = run_eg2_election(config)
    except (VotumError, OSError) as err:
        fail(console, err)
    report = result.verification
    shown = None if report is None else verified_result(report, result.record)
    if json_out:
        out = {
            "spec": "2.1",
            "config": {k: str(v) if isinstance(v, Path) else v for k, v in config.__dict__.items()},
            "cast": result.cast,
            "challenged": result.challenged,
            "counts": result.counts,
            "steps": [{"name": s.name, "seconds": s.seconds, "items": s.items} for s in result.steps],
            "total_seconds": result.total_seconds,
            "record_bytes": result.record_bytes,
            "verified": report is not None and report.passed,
            "result": None if shown is None else shown.to_dict(),
        }
        typer.echo(json.dumps(out, indent=1))
    else:
        title = (
            f"votum election --spec 2.1 · {config.group} · {config.ballots:,} ballots ({result.cast:,} cast, "
            f"{result.challenged:,} challenged) · {config.guardians} guardians, quorum {config.quorum}, "
            f"{config.missing} missing"
        )
        console.print(step_table(title, result.steps, per_item_digits=2))
        if shown is not None:
            print_result(console, shown, verified=report is not None and report.passed)
        form = "egk-ec's JSON form, spec/65.8"
        if config.record == "2.1":
            form = "ElectionGuard 2.1's own, spec/66.3"
        console.print(
            f"record: {result.record} ({result.record_bytes / 1024:,.0f} KiB, {form}); "
            "decrypted counts equal the plaintext votes; record verified from disk."
        )
    if report is None or not report.passed:
        fail(console, "the record written did not pass the independent verifier")


def election(
    ballots: Annotated[int, typer.Option(help="Number of ballots.")] = 1000,
    contests: Annotated[int, typer.Option(help="Contests of the built-in manifest (varied n-of-m).")] = 3,
    manifest: Annotated[
        Path | None, typer.Option(help="An ElectionGuard 1.4 manifest to use instead (first style).")
    ] = None,
    guardians: Annotated[int, typer.Option(help="Number of guardians.")] = 5,
    quorum: Annotated[int, typer.Option(help="Guardians needed to decrypt.")] = 3,
    missing: Annotated[int, typer.Option(help="Guardians absent at decryption (compensated).")] = 2,
    spoil_rate: Annotated[float, typer.Option(help="Share of ballots spoiled (Benaloh challenge).")] = 0.05,
    seed: Annotated[int, typer.Option(help="Seed choosing the votes (keys and nonces are random).")] = 2026,
    out: Annotated[
        Path | None,
        typer.Option(
            help="Where the record goes: a directory (eg14) or a file (votum); an earlier record there is "
            "replaced. Default: election-record or election-record.votum."
        ),
    ] = None,
    record_format: Annotated[
        str,
        typer.Option(
            "--format",
            help="Record form: eg14 (the ElectionGuard 1.4 directory) or votum (one archive file, spec/70).",
        ),
    ] = "eg14",
    json_out: Annotated[
        bool, typer.Option("--json", help="Print a machine-readable report instead.")
    ] = False,
    scheduler: Scheduler = None,
    chunk: Chunk = 64,
    task_timeout: TaskTimeout = 600.0,
    tls_ca: TlsCa = None,
    tls_cert: TlsCert = None,
    tls_key: TlsKey = None,
    plaintext_scheduler: Plaintext = False,
    spec: Annotated[
        str,
        typer.Option(
            help="ElectionGuard version: 1.0 (electionguard 1.4.0's record) or 2.1 (spec/66, or egk-ec's 2.x "
            "record with --eg2-record egk-ec; --manifest is then an egk-ec manifest, --spoil-rate the share "
            "challenged)."
        ),
    ] = "1.0",
    group: Annotated[
        str,
        typer.Option(
            help="With --spec 2.1: p256, eg2-4096 (the 2.x 4096-bit group) or, with --eg2-record 2.1, "
            "eg2-3072 (2.1's reduced parameters) or eg2-toy (the specification's toy parameters, q of 64 "
            "bits: for tests only, never an election; its record passes only `votum verify "
            "--allow-toy-parameters`)."
        ),
    ] = "p256",
    guardian_processes: Annotated[
        bool,
        typer.Option(
            help="With --spec 2.1: each guardian in its own process over the channels, the coordinator "
            "holding no secret (spec/65.9; with --eg2-record 2.1, spec/66.12)."
        ),
    ] = False,
    eg2_record: Annotated[
        str,
        typer.Option(
            help="With --spec 2.1: 2.1 (ElectionGuard 2.1 itself: K̂, id_B, the commitment round, nonces "
            "released, spec/66) or egk-ec (egk-ec's record, 2.0's cryptography, spec/65)."
        ),
    ] = "2.1",
    chaining: Annotated[
        bool, typer.Option(help="With --eg2-record 2.1: simple chaining of the confirmation codes.")
    ] = False,
    pre_encrypted: Annotated[
        int,
        typer.Option(
            min=0,
            help="With --eg2-record 2.1: ballots printed in advance besides --ballots (spec/66.10); the "
            "--spoil-rate share of them left uncast and opened, the others marked and recorded.",
        ),
    ] = 0,
    contest_data: Annotated[
        str,
        typer.Option(
            help="With --eg2-record 2.1: contest data (spec/66.11) where the manifest asks for it "
            "(manifest), in every contest (encrypted), or in every contest and decrypted by the guardians "
            "on every cast ballot (decrypted: each ballot's write-ins and status are published).",
        ),
    ] = "manifest",
) -> None:
    """Ceremony, encryption, ballot box, tally, decryption with missing guardians, record, verification.
    With --scheduler, ballots are encrypted and checked on a Dask cluster (spec/98)."""
    console = Console(stderr=json_out)
    if spec not in ("1.0", "2.1"):
        fail(console, f"--spec {spec}: votum runs ElectionGuard 1.0 and 2.1")
    if guardian_processes and spec != "2.1":
        fail(console, "--guardian-processes runs the 2.1 election's guardians (`votum ceremony` runs 1.0's)")
    if (eg2_record != "2.1" or chaining or pre_encrypted) and spec != "2.1":
        fail(console, "--eg2-record, --chaining and --pre-encrypted belong to --spec 2.1")
    if pre_encrypted and eg2_record != "2.1":
        fail(console, "--pre-encrypted writes the 2.1 record (--eg2-record 2.1), not egk-ec's")
    if contest_data != "manifest" and eg2_record != "2.1":
        fail(console, "--contest-data writes the 2.1 record (--eg2-record 2.1), not egk-ec's")
    if spec == "2.1":
        if scheduler is not None or record_format != "eg14":
            fail(console, "--spec 2.1 writes its record on this machine: no --scheduler or --format")
        config_2x = Eg2Config(
            ballots=ballots,
            guardians=guardians,
            quorum=quorum,
            missing=missing,
            challenge_rate=spoil_rate,
            seed=seed,
            group=group,
            out=out or Path("election-record-2.1"),
            manifest=manifest,
            processes=guardian_processes,
            record=eg2_record,
            chaining=chaining,
            pre_encrypted=pre_encrypted,
            contest_data=contest_data,
        )
        _election_2x(console, config_2x, json_out)
        return
    on_cluster = cluster_options(
        console, scheduler, chunk, task_timeout, tls_ca, tls_cert, tls_key, plaintext_scheduler
    )
    announce = on_cluster.pop("announce", None)
    config = ElectionConfig(
        ballots=ballots,
        contests=contests,
        guardians=guardians,
        quorum=quorum,
        missing=missing,
        spoil_rate=spoil_rate,
        seed=seed,
        out=out or Path("election-record.votum" if record_format == "votum" else "election-record"),
        manifest=manifest,
        format=record_format,
        **on_cluster,
    )
    try:
        with progress_hook(console) as hook:
            result = run_election(config, hook, announce=announce)
    except (VotumError, OSError) as err:
        fail(console, err)
    shown = None if result.verification is None else verified_result(result.verification, result.record)
    if json_out:
        report = {
            "config": {k: str(v) if isinstance(v, Path) else v for k, v in config.__dict__.items()},
            "cast": result.cast,
            "spoiled": result.spoiled,
            "counts": result.decrypted_counts,
            "steps": [{"name": s.name, "seconds": s.seconds, "items": s.items} for s in result.steps],
            "total_seconds": result.total_seconds,
            "record_bytes": result.record_bytes,
            "peak_rss_mib": result.peak_rss_mib,
            "result": None if shown is None else shown.to_dict(),
        }
        typer.echo(json.dumps(report, indent=1))
        return
    console.print(_table(result))
    if shown is not None:
        print_result(console, shown, verified=True)
    console.print(
        f"record: {result.record} ({result.record_bytes / 1024:,.0f} KiB, "
        f"{result.record_bytes / 1024 / max(result.cast + result.spoiled, 1):,.1f} KiB per ballot); "
        f"peak memory {result.peak_rss_mib:,.0f} MiB; "
        "decrypted counts equal the plaintext votes; record verified from disk."
    )


#: the first bytes of each kind of record file votum reads (an ElectionGuard 1.4 record is a directory)
RECORD_MAGICS = {
    b"VOTUMREC": "votum archive",
    b"VOTUMMIX": "mix",
    b"VOTUMSVR": "split-value",
    b"VOTUMCHV": "CHVote",
    b"BELENIOS": "Belenios archive",
}


def refuse_unless_record(console: Console, record: Path) -> None:
    """A path that does not exist, or a file that is no record of any kind votum reads, is a usage error
    (exit 2, one line), not a record that failed its checks (issue 42, C.3)."""
    if not record.exists():
        fail(console, f"no record at {record}: no such file or directory")
    if record.is_dir():
        return
    try:
        with record.open("rb") as f:
            head = f.read(8)
    except OSError as err:
        fail(console, err)
    if head not in RECORD_MAGICS:
        fail(
            console,
            f"{record} is not an election record votum reads (an ElectionGuard 1.4 directory, a votum "
            "archive, a mix, split-value or CHVote record file, a Belenios archive, or an IVXV proof "
            "directory)",
        )


def verify(
    record: Annotated[
        Path,
        typer.Argument(
            help="An election record: an ElectionGuard 1.4 directory, a votum archive (spec/70), a mix, "
            "split-value or CHVote record file, a Belenios election's archive `<uuid>.bel` (spec/94), a "
            "directory of IVXV decryption proofs (spec/93), a Verificatum session (spec/99) or an "
            "ElectionGuard 2.x record as egk-ec writes it (spec/65), electionguard-rust's key-ceremony "
            "artifacts (spec/65.10), or an ElectionGuard 2.1 record as votum writes it (spec/66)."
        ),
    ],
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    record_format: Annotated[
        str | None,
        typer.Option(
            "--format",
            help="The record's kind, when not detected from its files: electionguard, mix, split-value, "
            "chvote, ivxv, belenios, verificatum, electionguard2, electionguard-rust or electionguard2.1.",
            metavar="KIND",
        ),
    ] = None,
    dump_intermediates: Annotated[
        Path | None,
        typer.Option(
            "--dump-intermediates",
            help="Write the recomputed hashes, joint key, encrypted tally and counts to "
            "DIR/intermediates.json.",
            metavar="DIR",
        ),
    ] = None,
    allow_toy_parameters: Annotated[
        bool,
        typer.Option(
            "--allow-toy-parameters",
            help="Take an ElectionGuard 2.1 record on the specification's toy parameters (q of 64 bits) as a "
            "test's: V-EG21-01 passes it with a warning instead of failing it.",
        ),
    ] = False,
    scheduler: Scheduler = None,
    chunk: Chunk = 64,
    task_timeout: TaskTimeout = 600.0,
    tls_ca: TlsCa = None,
    tls_cert: TlsCert = None,
    tls_key: TlsKey = None,
    plaintext_scheduler: Plaintext = False,
    recheck: Recheck = None,
) -> None:
    """Check an election record from the record alone, every check of spec/50 (exit 0 only if all pass).
    With --scheduler, an ElectionGuard record's or a Belenios archive's ballots are checked on a Dask
    cluster (spec/98)."""
    console = Console(stderr=as_json)
    if record_format is not None and record_format not in FORMATS:
        fail(console, f"--format {record_format!r}: one of {', '.join(FORMATS)}")
    if record_format is None:
        refuse_unless_record(console, record)
    elif not record.exists():
        fail(console, f"no record at {record}: no such file or directory")
    on_cluster = cluster_options(
        console, scheduler, chunk, task_timeout, tls_ca, tls_cert, tls_key, plaintext_scheduler, recheck
    )
    try:
        with progress_hook(console) as hook:

            def tell(stage: str, n: int) -> None:
                if stage == "ballots":
                    hook("ballots checked", n, 0)  # how many in all is not known before the end

            report = check_record(
                record, tell, format=record_format, allow_toy_parameters=allow_toy_parameters, **on_cluster
            )
    except (VotumError, OSError) as err:
        fail(console, err)
    if dump_intermediates is not None:
        dump_intermediates.mkdir(parents=True, exist_ok=True)
        (dump_intermediates / "intermediates.json").write_text(json.dumps(report.intermediates, indent=2))
    result = verified_result(report, record)
    if as_json:
        shown = json.loads(report.to_json())
        shown["result"] = None if result is None else result.to_dict()
        typer.echo(json.dumps(shown, indent=2))
    else:
        colours = {"pass": "green", "fail": "red", "error": "red", "not_run": "yellow"}
        table = Table(title=f"{record} ({report.form}, {report.ballots:,} ballots)")
        for column, justify in (
            ("check", "left"),
            ("status", "left"),
            ("checked", "right"),
            ("what", "left"),
        ):
            table.add_column(column, justify=justify)  # type: ignore[arg-type]
        for c in report.checks:
            table.add_row(c.id, f"[{colours[c.status]}]{c.status}[/]", f"{c.checked:,}", c.title)
        console.print(table)
        # findings and warnings below the table, one per line and never cut: a ballot's file name or a
        # reason is read whole at any width (issue 42, C.4)
        for c in report.checks:
            for obj, reason in c.findings:
                console.print(f"{c.id} [red]{escape(obj)}[/red]: {escape(reason)}", soft_wrap=True)
            if c.more:
                console.print(f"{c.id} … and {c.more:,} more", soft_wrap=True)
            for obj, reason in c.warnings:
                console.print(
                    f"{c.id} [yellow]warning[/yellow] {escape(obj)}: {escape(reason)}", soft_wrap=True
                )
        for level in report.soundness:
            floor = f" (floor {level.floor:g} bits)" if level.floor is not None else ""
            colour = "green" if level.floor is None or level.bits >= level.floor else "red"
            console.print(f"soundness: {escape(level.what)}: [{colour}]{level.bits:.1f} bits[/]{floor}")
        if result is not None:
            print_result(console, result, verified=report.passed)
        if report.cluster is not None:
            colour = "yellow" if report.cluster["recheck"] < 1 else "green"
            console.print(f"cluster: [{colour}]{escape(report.cluster['statement'])}[/]")
        if report.passed:
            console.print("[green]every check passed[/green]")
        else:
            console.print(
                f"[red]{len(report.not_passed())} check(s) did not pass:[/red] "
                + ", ".join(report.not_passed())
            )
    if not report.passed:
        raise typer.Exit(code=1)


record_app = typer.Typer(no_args_is_help=True, help="Convert election records between their two forms.")


@record_app.command("pack")
def pack(
    directory: Annotated[Path, typer.Argument(help="An ElectionGuard 1.4 record directory.")],
    archive: Annotated[Path, typer.Argument(help="The archive file to write (spec/70).")],
) -> None:
    """Pack an ElectionGuard 1.4 record directory into one votum archive file."""
    console = Console()
    try:
        summary = record_pack(directory, archive)
    except (VotumError, OSError) as err:
        fail(console, err)
    console.print(
        f"{archive}: {summary['frames']:,} documents, {summary['bytes'] / 1024:,.0f} KiB, "
        f"chain {summary['chain']}"
    )


@record_app.command("unpack")
def unpack(
    archive: Annotated[Path, typer.Argument(help="A votum archive file.")],
    directory: Annotated[Path, typer.Argument(help="An absent or empty directory to write.")],
) -> None:
    """Unpack a votum archive into the ElectionGuard 1.4 layout (the whole archive is checked)."""
    console = Console()
    try:
        summary = record_unpack(archive, directory)
    except (VotumError, OSError) as err:
        fail(console, err)
    console.print(f"{directory}: {summary['frames']:,} documents; chain {summary['chain']}")
