"""Rich progress bars behind the (step, done, total) hook that votum's long jobs report to, and the
table of timed steps they print at the end."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from votum.steps import ProgressHook, Step, total_seconds


@contextmanager
def progress_hook(console: Console) -> Iterator[ProgressHook]:
    """Yields a hook that shows one bar per step name; the bars vanish when the job ends."""
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as progress:
        tasks: dict[str, TaskID] = {}

        def hook(name: str, done: int, total: int) -> None:
            # a total of 0 is not known yet: the bar pulses and the count runs, with the clock
            if name not in tasks:
                tasks[name] = progress.add_task(name, total=total or None)
            progress.update(tasks[name], completed=done, total=total or None)

        yield hook


@contextmanager
def step_progress(console: Console) -> Iterator[Callable[[str], None]]:
    """For jobs that report only the name of the step they start (`votum mix`, `votum chvote`): each
    name starts a bar and completes the one before."""
    with progress_hook(console) as hook:
        current: list[str] = []

        def step(name: str) -> None:
            if current:
                hook(current[0], 1, 1)
                current.clear()
            current.append(name)
            hook(name, 0, 1)

        yield step


def step_table(title: str, steps: list[Step], per_item_digits: int) -> Table:
    """One row a step (items, total ms, ms per item) and a bold total row."""
    table = Table(title=title)
    table.add_column("step")
    table.add_column("items", justify="right")
    table.add_column("total ms", justify="right")
    table.add_column("ms / item", justify="right")
    for s in steps:
        per = s.seconds * 1000 / s.items if s.items else 0.0
        table.add_row(s.name, f"{s.items:,}", f"{s.seconds * 1000:,.1f}", f"{per:,.{per_item_digits}f}")
    table.add_row("total", "", f"{total_seconds(steps) * 1000:,.1f}", "", style="bold")
    return table
