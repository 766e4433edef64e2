"""`votum paper`: pre-encrypted ballots of an ElectionGuard 2.1 election on the service (spec/80.11, §4): the
printer prints ballots onto the board and keeps their nonces in its store; the recorder records a voter's
marks on a printed ballot with that store."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Any

import httpx
import typer
from rich.console import Console

from votum.cli._errors import fail
from votum.cli._service import DEFAULT_SERVICE, ElectionId, Service, TokenFile, role_and_token
from votum.client import Client
from votum.errors import InvalidInput, VotumError

paper_app = typer.Typer(
    help="Pre-encrypted ballots of an ElectionGuard 2.1 election: print them onto the board, record marks.",
    no_args_is_help=True,
)

Fingerprint = Annotated[
    str,
    typer.Option(
        "--he-fingerprint",
        help="The H_E fingerprint the officials announced (`votum official open` and every guardian's tool "
        "print it). Nothing is printed or recorded under other keys.",
    ),
]
Store = Annotated[
    Path,
    typer.Option(
        "--store",
        help="The printer's store (JSON lines, mode 0600): each printed ballot's nonce and sheet. It opens "
        "every vote recorded on its ballots: give it to the recorder only, destroy it after publication.",
    ),
]


def _client(service: str, token_file: Path | None) -> tuple[Client, str | None]:
    role, token = role_and_token("device*", token_file)
    name = role.split(":", 1)[1] if role and ":" in role else None
    return Client(service, token=token, use_msgpack=False, timeout=120), name


@paper_app.command(name="print")
def print_ballots(
    election: ElectionId,
    he_fingerprint: Fingerprint,
    store: Store,
    count: Annotated[int, typer.Option(min=1, max=100_000, help="How many ballots to print.")],
    style: Annotated[str, typer.Option(help="The ballot style.")],
    out: Annotated[
        Path,
        typer.Option(
            help="Where the sheets go (JSON lines, mode 0600), for the printing press. They are as secret as "
            "the paper: with a recording's short codes a sheet tells the vote. Destroy them once printed."
        ),
    ],
    printer: Annotated[str, typer.Option(help="The printer's name (S_device).")] = "printer",
    first: Annotated[int, typer.Option(min=1, help="The number of the first ballot.")] = 1,
    simple_chaining: Annotated[
        bool, typer.Option("--simple-chaining", help="Chain each ballot's code to the previous one's.")
    ] = False,
    service: Service = DEFAULT_SERVICE,
    token_file: TokenFile = None,
) -> None:
    """Print COUNT ballots of STYLE onto the board: each ballot's nonce and sheet go into the store first, and
    the sheets (per contest, each option with its short code in the manifest's order, then the nulls') are
    written to OUT once the service has taken every ballot. Ballot ids are `<token name>-<printer>-<n>` for
    a named device token, else `<printer>-<n>`."""
    from votum.parties.device21 import Printer21

    console = Console(stderr=True)
    try:
        client, name = _client(service, token_file)
        with client:
            device = f"{name}-{printer}" if name else printer
            p = Printer21(client, election, device, he_fingerprint, store, simple_chaining=simple_chaining)
            p.start()
            try:
                fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                raise InvalidInput(f"{out} exists: the sheets of one run go to a new file") from None
            # each batch's sheets are written once the service took it, so a run cut short keeps them
            with os.fdopen(fd, "w", encoding="utf-8") as sheets:
                for at in range(first, first + count, 100):
                    ids = [f"{device}-{n}" for n in range(at, min(at + 100, first + count))]
                    sheets.writelines(
                        json.dumps(s, separators=(",", ":")) + "\n" for s in p.print(ids, style)
                    )
                    sheets.flush()
                    console.print(f"printed {at + len(ids) - first} of {count}")
    except (VotumError, OSError, httpx.HTTPError) as e:
        fail(console, e)
    console.print(f"{count} ballots of election {election} on the board; sheets in {out}, nonces in {store}")


def _parsed(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as e:
        raise InvalidInput(f"{where} is not JSON: {e}") from None


def _marks(chosen: Any, where: str) -> dict[str, list[int]]:
    """`chosen` as a voter's marks: per contest id a list of 0s and 1s."""
    if not isinstance(chosen, dict) or not all(
        isinstance(v, list) and all(x in (0, 1) for x in v) for v in chosen.values()
    ):
        raise InvalidInput(f"{where} maps each contest id to a list of 0s and 1s")
    return chosen


def _batch(path: Path) -> list[tuple[str, dict[str, list[int]]]]:
    """A marks file's lines, each `{"ballot": ID, "marks": {...}}`, all checked before one is recorded."""
    out = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as e:
        raise InvalidInput(f"--marks-file {path}: {e.strerror or e}") from None
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"--marks-file line {n}"
        item = _parsed(line, where)
        if not isinstance(item, dict) or not isinstance(item.get("ballot"), str) or "marks" not in item:
            raise InvalidInput(f'{where} is not {{"ballot": ID, "marks": {{...}}}}')
        out.append((item["ballot"], _marks(item["marks"], where)))
    ids = [b for b, _ in out]
    if len(set(ids)) != len(ids):
        raise InvalidInput("--marks-file names a ballot twice")
    return out


@paper_app.command(name="record")
def record_marks(
    election: ElectionId,
    he_fingerprint: Fingerprint,
    store: Store,
    ballot: Annotated[str | None, typer.Option(help="The printed ballot's id.")] = None,
    marks: Annotated[
        str | None,
        typer.Option(
            help="The voter's marks, JSON: per contest id, 0 or 1 per option in the manifest's order, e.g. "
            "'{\"mayor\": [1, 0, 0]}'. A contest left out is blank."
        ),
    ] = None,
    marks_file: Annotated[
        Path | None,
        typer.Option(
            help='Many ballots instead of --ballot and --marks: JSON lines {"ballot": ID, "marks": {...}}, '
            "all checked before any is recorded, then recorded one by one; a ballot refused (already "
            "recorded, not printed, …) is reported and the others are still recorded."
        ),
    ] = None,
    service: Service = DEFAULT_SERVICE,
    token_file: TokenFile = None,
) -> None:
    """Record voters' marks on printed ballots: each nonce comes from the store and is checked against the
    printed ballot on the board first; each recording is posted and its receipt printed as a JSON line (a
    refused one as {"ballot_id", "error"}; the exit status is then 1)."""
    from votum.parties.device21 import Recorder21

    console = Console(stderr=True)
    refused = 0
    try:
        if marks_file is not None:
            if ballot is not None or marks is not None:
                raise InvalidInput("give --marks-file, or --ballot and --marks, not both")
            batch = _batch(marks_file)
        elif ballot is None or marks is None:
            raise InvalidInput("give --ballot and --marks, or --marks-file")
        else:
            batch = [(ballot, _marks(_parsed(marks, "--marks"), "--marks"))]
        client, name = _client(service, token_file)
        with client:
            r = Recorder21(client, election, he_fingerprint, store, token_name=name)
            r.start()
            for ballot_id, chosen in batch:
                try:
                    got = r.record(ballot_id, chosen)
                except (VotumError, httpx.HTTPError) as e:
                    if marks_file is None:
                        raise
                    refused += 1
                    print(json.dumps({"ballot_id": ballot_id, "error": str(e)}), flush=True)
                    continue
                receipt = {"ballot_id": got.ballot_id, "state": got.state, "code": got.code, "seq": got.seq}
                print(json.dumps(receipt), flush=True)
    except (VotumError, OSError, httpx.HTTPError) as e:
        fail(console, e)
    if marks_file is not None:
        console.print(f"{len(batch) - refused} recorded, {refused} refused, of {len(batch)} in {marks_file}")
    if refused:
        raise typer.Exit(1)
