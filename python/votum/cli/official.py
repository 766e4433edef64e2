"""`votum official`: the election official's steps against a running service (spec/80.10): create an
election from a manifest, open it, close it, publish, see what it waits for, and save its record. Each
step prints the board head it left."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import httpx
import typer
from rich.console import Console
from rich.table import Table

from votum.cli._errors import fail, refuse_to_replace
from votum.cli._progress import progress_hook
from votum.cli._service import DEFAULT_SERVICE, ElectionId, Service, TokenFile, client_for
from votum.client import Client
from votum.client.official import Official, read_manifest
from votum.client.waiting import Waiter
from votum.errors import InvalidInput, VotumError
from votum.record import MAGIC

official_app = typer.Typer(
    no_args_is_help=True, help="The election official's steps against a running service (spec/80.10)."
)
Wait = Annotated[float, typer.Option(help="Seconds to wait for the guardians first (0: do not wait).")]
err = Console(stderr=True)


def _head(status: dict[str, Any]) -> str:
    return f"board head {status['head']['seq']} {status['head']['hash']}"


def _step(service: str, token_file: Path | None, election: str, wait: float, act: Any) -> None:
    """Runs one step with the admin token and progress bars; a refusal or an unreachable service is one
    line and exit code 2."""
    try:
        with client_for(service, "admin", token_file) as client, progress_hook(err) as hook:
            act(Official(client, election, Waiter(wait or None, 1.0), hook))
    except (VotumError, OSError, httpx.HTTPError) as e:
        fail(err, e)


def _print_status(s: dict[str, Any]) -> None:
    printed = f", {s['printed']} printed not recorded" if s.get("printed") else ""
    err.print(
        f"election {s['election_id']}: {s['phase']} · {s['cast']} cast, {s['spoiled']} spoiled{printed} · "
        f"{_head(s)}"
    )


@official_app.command("create")
def create(
    manifest: Annotated[
        Path, typer.Argument(help="The election's manifest (ElectionGuard 1.4 JSON, or 2.x for --spec 2.1).")
    ],
    election: ElectionId,
    guardians: Annotated[int, typer.Option(help="Number of guardians.")],
    quorum: Annotated[int, typer.Option(help="Guardians needed to decrypt.")],
    service: Service = DEFAULT_SERVICE,
    token_file: TokenFile = None,
    spec: Annotated[
        str,
        typer.Option(
            help="The ElectionGuard version: 1.0, or 2.1 (its key ceremony and opening; spec/80.11)."
        ),
    ] = "1.0",
    group: Annotated[
        str, typer.Option(help="A 2.1 election's group: eg2-4096, eg2-3072 or p256.")
    ] = "eg2-4096",
    weight: Annotated[
        list[str] | None,
        typer.Option(
            help="A 2.1 election's ballot weight for a named device token, NAME=W (repeat it): every "
            "ballot that token posts weighs W; other tokens' weigh 1."
        ),
    ] = None,
) -> None:
    """Create an election from MANIFEST: it starts in the key-ceremony phase."""

    try:
        weights = _weights(weight or [])
    except InvalidInput as e:
        fail(err, e)

    def act(o: Official) -> None:
        if spec not in ("1.0", "2.1"):
            raise InvalidInput(f"--spec {spec}: use 1.0 or 2.1")
        doc = read_manifest(manifest, spec, group)
        s = o.create(doc, guardians, quorum, spec, group, weights)
        title = f" ({_title(doc)})" if _title(doc) else ""
        err.print(f"created election {election}{title} with {guardians} guardians, quorum {quorum}")
        err.print(
            "each guardian now runs `votum guardian join` with its id, its order (1…"
            f"{guardians}) and its token (role guardian:<id>)"
        )
        _print_status(s)

    _step(service, token_file, election, 0, act)


def _weights(given: list[str]) -> dict[str, int]:
    """`--weight NAME=W` options as a map; a malformed or repeated one is an error."""
    out: dict[str, int] = {}
    for item in given:
        name, sep, value = item.partition("=")
        if not sep or not name or not value.strip().isdigit():
            raise InvalidInput(f"--weight {item!r}: give NAME=W, W a whole number of at least 1")
        if name in out:
            raise InvalidInput(f"--weight: {name!r} is given twice")
        out[name] = int(value)
    return out


def _title(doc: dict[str, Any]) -> str:
    name = doc.get("name")
    # 1.4 manifests: {"text": [{language, value}]}; 2.x manifests: [{language, value}]
    texts = name if isinstance(name, list) else (name or {}).get("text") or []
    return str(texts[0].get("value", "")) if texts else ""


@official_app.command("open")
def open_(
    election: ElectionId,
    service: Service = DEFAULT_SERVICE,
    token_file: TokenFile = None,
    wait: Wait = 600.0,
) -> None:
    """Open the election once every guardian's record is in and every backup is checked; prints the joint
    key's fingerprint, which every guardian's tool prints too."""

    def act(o: Official) -> None:
        s = o.open(wait > 0)
        what = "H_E" if s.get("spec") == "2.1" else "joint key"
        err.print(f"{what} fingerprint: {o.joint_fingerprint()}  (the guardians compare it with theirs)")
        _print_status(s)

    _step(service, token_file, election, wait, act)


@official_app.command("close")
def close(election: ElectionId, service: Service = DEFAULT_SERVICE, token_file: TokenFile = None) -> None:
    """Close the election: no more ballots; the encrypted tally goes on the board for the guardians."""
    _step(service, token_file, election, 0, lambda o: _print_status(o.close()))


@official_app.command("publish")
def publish(
    election: ElectionId,
    service: Service = DEFAULT_SERVICE,
    token_file: TokenFile = None,
    wait: Wait = 600.0,
    present: Annotated[
        int | None,
        typer.Option(help="Guardians whose shares to wait for (default: all; at least the quorum)."),
    ] = None,
    available: Annotated[
        str | None,
        typer.Option(
            help="In a 2.1 election: the guardians that decrypt, by index (1,3,4; default: all). Another "
            "list starts a new decryption round (a guardian of the last one gone)."
        ),
    ] = None,
) -> None:
    """Combine the guardians' shares and publish the tally and the spoiled ballots; prints the counts."""

    def act(o: Official) -> None:
        try:
            u = [int(x) for x in available.split(",")] if available else None
        except ValueError:
            raise InvalidInput(f"--available {available!r}: guardian indices separated by commas") from None
        s = o.publish(present, wait > 0, u)
        results = o.results()
        table = Table(title=f"published counts of {election}")
        for column in ("contest", "choice", "votes"):
            table.add_column(column, justify="right" if column == "votes" else "left")
        for contest, choice, votes in o.named_counts(results["counts"]):
            table.add_row(contest, choice, f"{votes:,}")
        Console().print(table)
        if results["missing"]:
            err.print(f"compensated for: {', '.join(results['missing'])}")
        _print_status(s)

    _step(service, token_file, election, wait, act)


@official_app.command("status")
def status(election: ElectionId, service: Service = DEFAULT_SERVICE) -> None:
    """The election's phase, ballots and board head, and what it waits for (public; no token needed)."""
    try:
        with Client(service, use_msgpack=False, timeout=60) as client:
            o = Official(client, election, Waiter())
            s, a = o.status(), o.awaited()
    except (VotumError, OSError, httpx.HTTPError) as e:
        fail(err, e)
    _print_status(s)
    n = a["number_of_guardians"]
    if a["phase"] == "ceremony":
        err.print(
            f"awaiting: guardian records {len(a['guardians'])}/{n}, backups checked "
            f"{a['backups_settled']}/{a['backups_total']}"
        )
    elif a["phase"] == "closed":
        waiting = [g for g, posted in a["shares"].items() if not posted]
        err.print(
            f"awaiting: decryption shares from {', '.join(waiting) or 'nobody'} "
            f"({sum(a['shares'].values())} of {n} posted; quorum {a['quorum']})"
        )


@official_app.command("record")
def record(
    election: ElectionId,
    out: Annotated[
        Path,
        typer.Option(help="Where to save the record archive (.votum; a new directory for a 2.1 election)."),
    ],
    service: Service = DEFAULT_SERVICE,
) -> None:
    """Save the election's record (public) for `votum verify`: a votum archive, or for a 2.1 election its
    record directory, written from the whole board re-linked to its head (spec/80.11)."""
    try:
        with Client(service, use_msgpack=False, timeout=600) as client:
            o = Official(client, election, Waiter())
            if o.status().get("spec") == "2.1":
                head = o.save_record_21(out)
                err.print(
                    f"saved the record of {election} to {out}/ (board head {head['seq']}); check it with "
                    f"`votum verify {out}`"
                )
                return
            refuse_to_replace(err, out, MAGIC, "votum archive")
            size = o.save_record(out)
    except (VotumError, OSError, httpx.HTTPError) as e:
        fail(err, e)
    err.print(f"saved the record of {election} to {out} ({size:,} bytes); check it with `votum verify {out}`")
