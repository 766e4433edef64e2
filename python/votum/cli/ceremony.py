"""`votum ceremony`: the ElectionGuard key ceremony between guardian processes over the channels (spec/96),
and its publication to a board (a running service, or a file board: the service's code in this process)."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from votum import EgContext, EgManifest
from votum.client import Client, ServiceError
from votum.client.election import Tokens
from votum.errors import InvalidInput, VotumError
from votum.fingerprints import key_fingerprint
from votum.parties.ceremony import CeremonyFailed, CeremonyResult, coordinate, run_local

out = Console()
err = Console(stderr=True)


def publish(
    client: Client, tokens: Tokens, election_id: str, manifest: dict[str, Any], result: CeremonyResult
) -> str:
    """Posts a finished ceremony to a board through the /v1 routes (spec/80.6, spec/96.3 step 6): the
    election, every record, every backup, every verdict or dispute with its answer, then opens it. Each
    guardian's material is posted with that guardian's token. Returns the board's context.json, whose joint
    key and commitment hash must equal the ceremony's (else `CeremonyFailed`)."""
    base = f"/v1/elections/{election_id}"
    n = len(result.guardians)
    client.post(
        "/v1/elections",
        {"election_id": election_id, "manifest": manifest, "number_of_guardians": n, "quorum": result.quorum},
        token=tokens.admin,
    )
    for gid, record in result.records.items():
        client.post(f"{base}/guardians/{gid}", {"record": json.loads(record)}, token=tokens.guardians[gid])
    for gid, sent in result.backups.items():
        if sent:
            body = {"backups": {r: json.loads(b) for r, b in sent.items()}}
            client.post(f"{base}/guardians/{gid}/backups", body, token=tokens.guardians[gid])
    disputed = {(d.sender, d.receiver) for d in result.disputes}
    for receiver in result.guardians:
        for sender in result.guardians:
            if sender != receiver:
                client.post(
                    f"{base}/guardians/{receiver}/verifications",
                    {"sender_id": sender, "verified": (sender, receiver) not in disputed},
                    token=tokens.guardians[receiver],
                )
    for d in result.disputes:
        client.post(
            f"{base}/guardians/{d.sender}/answers",
            {"receiver_id": d.receiver, "answer": json.loads(d.answer)},
            token=tokens.guardians[d.sender],
        )
    client.post(f"{base}/open", {}, token=tokens.admin)
    text = str(client.get(f"{base}/board/by-name/context.json")["payload"])
    posted = EgContext.from_json(text)
    if (
        posted.elgamal_public_key.to_int() != result.context.elgamal_public_key.to_int()
        or posted.commitment_hash.to_int() != result.context.commitment_hash.to_int()
    ):
        raise CeremonyFailed("publish", "the board's context differs from the ceremony's")
    return text


class FileBoard:
    """A board in a directory: the service's own code and checks, in this process, on a SQLite database
    (`votum serve --data-dir DIR` serves the same board later). Its tokens are in DIR/tokens.json (0600)."""

    def __init__(self, root: Path, number_of_guardians: int) -> None:
        from starlette.testclient import TestClient

        from votum.service.app import create_app
        from votum.service.settings import Settings

        root.mkdir(parents=True, exist_ok=True)
        path = root / "tokens.json"
        if path.exists():
            roles = json.loads(path.read_text())
        else:
            roles = Tokens.generate(number_of_guardians).settings_map()
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as f:
                json.dump(roles, f, indent=1)
        self.tokens = Tokens.from_roles(roles, number_of_guardians)
        self._http = TestClient(create_app(Settings(data_dir=root, tokens=roles)))
        self._http.__enter__()
        self.client = Client(http=self._http)

    def close(self) -> None:
        self._http.__exit__(None, None, None)


def _tables(result: CeremonyResult, launch: float | None) -> list[Table]:
    who = Table(title=f"guardians (quorum {result.quorum} of {len(result.guardians)})")
    for col in ("guardian", "node", "fingerprint", "address"):
        who.add_column(col, overflow="fold")
    for gid, card in result.guardians.items():
        who.add_row(gid, card.name, card.fingerprint, card.address or "")
    phases = Table(title=f"ceremony {result.ceremony}: messages and timings")
    phases.add_column("phase")
    phases.add_column("messages", justify="right")
    phases.add_column("seconds", justify="right")
    if launch is not None:
        phases.add_row("launch guardian processes", "", f"{launch:.3f}")
    for p in result.phases:
        phases.add_row(p.name, str(p.messages), f"{p.seconds:.3f}")
    phases.add_row("total (ceremony)", str(sum(p.messages for p in result.phases)), f"{result.seconds:.3f}")
    return [who, phases]


def _require_free(client: Client, election_id: str) -> None:
    try:
        client.get(f"/v1/elections/{election_id}")
    except ServiceError as e:
        if e.status == 404:
            return
        raise
    raise InvalidInput(f"the board already has an election {election_id!r}: choose another --election-id")


def _run(
    n: int,
    quorum: int,
    em: EgManifest,
    homes: Path,
    seed: int | None,
    timeout: float,
    join: list[str] | None,
    home: Path | None,
    faults: dict[int, str],
) -> tuple[CeremonyResult, float | None]:
    if join:
        if home is None:
            raise InvalidInput("--join needs --home (the coordinator's node directory)")
        from votum.nodes.node import open_node

        async def joined() -> CeremonyResult:
            node = open_node(home)
            try:
                return await coordinate(node, join, quorum, em, timeout)
            finally:
                await node.close()

        return asyncio.run(joined()), None
    run = asyncio.run(run_local(n, quorum, em, homes, seed, faults, timeout))
    return run.result, run.launch_seconds


def ceremony(
    guardians: Annotated[int, typer.Option(help="Number of guardians (processes on loopback).")] = 5,
    quorum: Annotated[int, typer.Option(help="Guardians needed to decrypt.")] = 3,
    manifest: Annotated[Path | None, typer.Option(help="An ElectionGuard 1.4 manifest.")] = None,
    contests: Annotated[
        int, typer.Option(help="Contests of the built-in manifest (without --manifest).")
    ] = 3,
    election_id: Annotated[str, typer.Option(help="The election's id on the board.")] = "election",
    board: Annotated[
        Path,
        typer.Option(help="A file board: a directory the service can serve later (votum serve --data-dir)."),
    ] = Path("ceremony-board"),
    service: Annotated[
        str | None, typer.Option(help="Post to a running service's /v1 routes instead of a file board.")
    ] = None,
    tokens: Annotated[
        Path | None,
        typer.Option(
            help="With --service: a tokens file, one role=token a line (as votum tokens new prints)."
        ),
    ] = None,
    homes: Annotated[
        Path, typer.Option(help="Where the loopback nodes' identities and sealed guardian states live.")
    ] = Path("ceremony-nodes"),
    home: Annotated[Path | None, typer.Option(help="With --join: the coordinator's node directory.")] = None,
    join: Annotated[
        list[str] | None,
        typer.Option(help="Guardian nodes already running elsewhere (names in --home's keystore, in order)."),
    ] = None,
    seed: Annotated[
        int | None, typer.Option(help="Reproducible guardians (tests only: the secrets follow from it).")
    ] = None,
    timeout: Annotated[float, typer.Option(help="Seconds a guardian may take to answer.")] = 60.0,
    json_out: Annotated[bool, typer.Option("--json", help="Print a machine-readable report.")] = False,
    fault: Annotated[
        list[str] | None,
        typer.Option(hidden=True, help="Tests only: ORDER:FAULT makes a guardian misbehave."),
    ] = None,
) -> None:
    """Runs the key ceremony with each guardian in its own node process, exchanging sealed backups point to
    point and resolving disputes in public, then posts the records to a board and prints the joint key."""
    from votum.election import synthetic_manifest

    n = len(join) if join else guardians
    # the input is checked before anything is written, and the board opened (the election id checked free)
    # before any guardian is started
    try:
        if n < 1 or not 1 <= quorum <= n:
            raise InvalidInput(f"quorum must be in 1..{n} (the number of guardians), and n at least 1")
        if service is not None and tokens is None:
            raise InvalidInput("--service needs --tokens (the service's token file)")
        faults: dict[int, str] = {}
        for f in fault or []:
            order, _, what = f.partition(":")
            if not order.isdigit() or not what:
                raise InvalidInput(f"--fault is ORDER:FAULT, not {f!r}")
            faults[int(order)] = what
        doc: dict[str, Any] = json.loads(manifest.read_text()) if manifest else synthetic_manifest(contests)
        em = EgManifest.from_json(json.dumps(doc))
    except (VotumError, OSError, ValueError) as e:
        err.print(f"[red]error:[/] {type(e).__name__}: {e}")
        raise typer.Exit(2) from None
    try:
        if tokens is not None and service is not None:
            from votum.service.settings import tokens_from_file

            keys = Tokens.from_roles(tokens_from_file(tokens), n)
            poster = Client(service, timeout=timeout)
            close = poster.close
            where = f"{service}/v1/elections/{election_id}"
        else:
            file_board = FileBoard(board, n)
            poster, keys, close = file_board.client, file_board.tokens, file_board.close
            where = f"{board} (election {election_id!r}; votum serve --data-dir {board} serves it)"
    except (VotumError, OSError, ValueError) as e:
        err.print(f"[red]error:[/] cannot use the board: {type(e).__name__}: {e}")
        raise typer.Exit(2) from None
    try:
        _require_free(poster, election_id)
        result, launch = _run(guardians, quorum, em, homes, seed, timeout, join, home, faults)
        publish(poster, keys, election_id, doc, result)
    except CeremonyFailed as e:
        err.print(f"[red]the key ceremony failed:[/] {e}")
        err.print("nothing was published.")
        raise typer.Exit(1) from None
    except (VotumError, OSError) as e:
        err.print(f"[red]error:[/] {type(e).__name__}: {e}")
        raise typer.Exit(2) from None
    finally:
        close()

    if json_out:
        report = {
            "ceremony": result.ceremony,
            "joint_key": result.joint_key,
            "joint_key_fingerprint": key_fingerprint(result.joint_key),
            "commitment_hash": f"{result.context.commitment_hash.to_int():X}",
            "guardians": {
                g: {"node": c.name, "fingerprint": c.fingerprint} for g, c in result.guardians.items()
            },
            "disputes": [{"sender": d.sender, "receiver": d.receiver} for d in result.disputes],
            "phases": [{"name": p.name, "messages": p.messages, "seconds": p.seconds} for p in result.phases],
            "launch_seconds": launch,
            "board": where,
        }
        typer.echo(json.dumps(report, indent=1))
        return
    for table in _tables(result, launch):
        out.print(table)
    for d in result.disputes:
        out.print(
            f"dispute: {d.receiver} could not check {d.sender}'s backup; answered in public and accepted"
        )
    for gid, record in sorted(result.records.items()):
        out.print(
            f"guardian {gid} key fingerprint: {key_fingerprint(json.loads(record)['election_public_key'])}"
        )
    out.print(
        f"joint key fingerprint: {key_fingerprint(result.joint_key)} (compare it with the election's page)"
    )
    out.print(f"published to {where}")
