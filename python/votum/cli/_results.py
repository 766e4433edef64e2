"""The result a verification checked, printed under the checks (spec/50.2): one table per contest, with who
is elected, and the value that names the record checked."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from votum.results import VerifiedResult


def print_result(console: Console, result: VerifiedResult, *, verified: bool) -> None:
    """Prints `result`; `verified` says whether every check passed (otherwise the numbers are what the
    record posts, and the table says they are not verified)."""
    state = "verified" if verified else "[red]NOT verified[/red]: some checks did not pass"
    for contest in result.contests:
        table = Table(title=f"result: {escape(contest.name)} ({state})", title_justify="left")
        table.add_column("selection", overflow="fold")
        table.add_column("votes", justify="right")
        table.add_column("", justify="left")
        for s in contest.selections:
            table.add_row(escape(s.name), s.shown, "[green]elected[/green]" if s.elected else "")
        console.print(table)
        for note in contest.notes:
            console.print(f"  {escape(note)}")
    console.print(f"{result.label} {result.digest}: compare it with the one the election published")
