"""`votum guardian`: one guardian's tool, on the guardian's own machine (spec/80.10). `join` takes part in
the key ceremony and keeps the secret sealed to the guardian's node key; `decrypt`, after the election is
closed, checks the board and the tally and posts this guardian's decryption shares."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import httpx
import typer
from rich.console import Console
from rich.markup import escape

from votum.cli._errors import fail
from votum.cli._progress import progress_hook
from votum.cli._service import DEFAULT_SERVICE, ElectionId, Service, TokenFile, client_for
from votum.cli.node import passphrase_of
from votum.client.waiting import Waiter
from votum.errors import VotumError
from votum.nodes.errors import NodeError
from votum.nodes.identity import KEY_FILE, Identity
from votum.parties.guardian import GuardianTool
from votum.parties.guardian21 import Decrypted21, GuardianTool21, Joined21

guardian_app = typer.Typer(
    no_args_is_help=True, help="A guardian's tool: join the key ceremony, then decrypt (spec/80.10)."
)

GuardianId = Annotated[
    str, typer.Option("--id", help="This guardian's id (its token's role is guardian:<id>).")
]
Home = Annotated[
    Path,
    typer.Option(
        envvar="VOTUM_NODE_HOME",
        help="This guardian's node directory (`votum node keygen`): the sealed secret is kept here.",
    ),
]
DEFAULT_HOME = Path.home() / ".votum" / "node"
Wait = Annotated[float, typer.Option(help="Seconds to wait for the other parties (0: forever).")]


def _identity(home: Path) -> Identity:
    if not (home / KEY_FILE).exists():
        raise NodeError(f"no node key in {home}: make one with `votum node keygen --home {home}`")
    return Identity(home, passphrase_of(home))


def _with_tool(
    console: Console,
    election: str,
    guardian_id: str,
    home: Path,
    service: str,
    token_file: Path | None,
    act: Callable[[GuardianTool], Any],
) -> tuple[GuardianTool, Any]:
    """Runs `act` on this guardian's tool (its node key, its token, progress bars); a refusal, a check
    that fails or an unreachable service is one line and exit code 2."""
    try:
        identity = _identity(home)
        with (
            client_for(service, f"guardian:{guardian_id}", token_file) as client,
            progress_hook(console) as hook,
        ):
            tool = GuardianTool(client, election, guardian_id, identity, progress=hook)
            return tool, act(tool)
    except (VotumError, OSError, httpx.HTTPError) as e:
        fail(console, e)


@guardian_app.command("join")
def join(
    election: ElectionId,
    guardian_id: GuardianId,
    order: Annotated[
        int,
        typer.Option(
            help="This guardian's sequence order, 1…n, as the official gave it (in 2.1: its index i)."
        ),
    ],
    home: Home = DEFAULT_HOME,
    service: Service = DEFAULT_SERVICE,
    token_file: TokenFile = None,
    wait: Wait = 600.0,
    poll: Annotated[float, typer.Option(help="Seconds between looks at the service.")] = 1.0,
    answer: Annotated[
        list[str] | None,
        typer.Option(
            help="A guardian whose dispute of your backup you confirmed with it: answer it in public "
            "(this publishes that share)."
        ),
    ] = None,
) -> None:
    """Join the key ceremony: make this guardian's secret (sealed at once in HOME), post its public record,
    back it up to the other guardians, check their backups to it, and wait for the official to open the
    election. Run it again after an interruption: it goes on where it stopped. In an ElectionGuard 2.1
    election (spec/80.11) the key records are signed by the guardians' nodes: HOME's keystore must hold the
    other guardians' cards (`votum node peers add`), and the shares go to them encrypted."""
    console = Console(stderr=True)

    def act(tool: GuardianTool) -> Any:
        tool.waiter = Waiter(wait or None, poll)
        if tool.client.get(tool.base).get("spec") == "2.1":
            # ElectionGuard 2.1 (spec/80.11): ORDER is the guardian's index i
            tool21 = GuardianTool21(
                tool.client, election, guardian_id, tool.identity, tool.waiter, tool.progress
            )
            return tool21, tool21.join(order)
        tool.answer = set(answer or [])
        tool.tell = lambda notice: console.print(f"[yellow]{escape(notice)}[/]")
        return tool, tool.join(order)

    _, (tool, joined) = _with_tool(console, election, guardian_id, home, service, token_file, act)
    if isinstance(joined, Joined21):
        console.print(
            f"guardian {joined.guardian_id} (index {joined.i}) joined 2.1 election {election}; its key seed "
            f"is sealed in {tool.path}"
        )
        console.print(f"H_E fingerprint: {joined.he_fingerprint}  (compare it with the official's)")
        return
    console.print(
        f"guardian {joined.guardian_id} joined election {election}; its secret is sealed in {tool.path}"
    )
    console.print(f"this guardian's key fingerprint: {joined.key_fingerprint}")
    if joined.disputed:
        console.print(
            f"[yellow]you disputed the backups of {', '.join(joined.disputed)}: each must answer in public[/]"
        )
    console.print(f"joint key fingerprint: {joined.joint_fingerprint}  (compare it with the official's)")


@guardian_app.command("decrypt")
def decrypt(
    election: ElectionId,
    guardian_id: GuardianId,
    home: Home = DEFAULT_HOME,
    service: Service = DEFAULT_SERVICE,
    token_file: TokenFile = None,
    missing: Annotated[
        list[str] | None,
        typer.Option(help="A guardian who will not decrypt, compensated for from this guardian's backup."),
    ] = None,
    wait: Wait = 600.0,
    poll: Annotated[float, typer.Option(help="Seconds between looks at the service (2.1).")] = 1.0,
    state: Annotated[
        Path | None,
        typer.Option(
            help="The sealed secret state, if not HOME/eg-guardian-<election>.sealed (a ceremony over the "
            "channels, `votum node guardian`, keeps it as HOME/eg-guardian-<ceremony>.sealed)."
        ),
    ] = None,
) -> None:
    """After the election is closed: read and re-link the whole board, check every cast ballot and that the
    encrypted tally is their product, then post this guardian's shares of the tally and of each spoiled
    ballot (and compensations for each --missing guardian). In a 2.1 election (spec/80.11): write the record
    from the board, check it as far as the ballots, and take part in the official's decryption round."""
    console = Console(stderr=True)

    def act(tool: GuardianTool) -> Any:
        if tool.client.get(tool.base).get("spec") == "2.1":
            tool21 = GuardianTool21(tool.client, election, guardian_id, tool.identity, progress=tool.progress)
            tool21.waiter = Waiter(wait or None, poll)
            return tool21.decrypt()
        if state is not None:
            tool.path = state
        return tool.decrypt(missing or [])

    _, done = _with_tool(console, election, guardian_id, home, service, token_file, act)
    if isinstance(done, Decrypted21):
        console.print(f"board read and re-linked to head {done.head['seq']} {done.head['hash']}")
        if done.answered:
            console.print(
                f"guardian {guardian_id} (index {done.i}) answered in decryption round {done.round}"
            )
        else:
            console.print(
                f"decryption round {done.round} does not name guardian {guardian_id} (index {done.i})"
            )
        return
    console.print(
        f"board checked to head {done.head['seq']} {done.head['hash']}: {done.cast} cast ballots verified, "
        f"the encrypted tally is their product; {done.spoiled} spoiled ballots"
    )
    console.print(
        f"guardian {guardian_id} posted {done.posted} share messages"
        + (" (all were posted before)" if not done.posted else "")
    )
