"""What a newcomer stumbled on in the command line (issue 42, C): a user's mistake is one line and exit 2,
never a traceback; a mistyped record path is a usage error, not a record that failed; `--out` replaces only a
record of its own kind; an interrupted election leaves no partial record; a progress bar with no known total
keeps counting."""

from __future__ import annotations

import io
import socket
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner
from votum.cli import app

RUNNER = CliRunner()


def one_line_error(result: Any, *needles: str) -> None:
    """Exit 2, one `error:` line holding every needle, and no traceback."""
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.split())
    assert "Traceback" not in result.output and 'File "' not in result.output, result.output
    assert text.startswith("error:"), result.output
    for needle in needles:
        assert needle in text, result.output


def test_a_record_path_that_does_not_exist_is_a_usage_error(tmp_path: Path) -> None:
    one_line_error(RUNNER.invoke(app, ["verify", str(tmp_path / "no-such-record")]), "no record at")


def test_a_file_that_is_no_record_is_a_usage_error(tmp_path: Path) -> None:
    stray = tmp_path / "notes.txt"
    stray.write_text("not an election record at all\n")
    one_line_error(RUNNER.invoke(app, ["verify", str(stray)]), "is not an election record votum reads")


def test_a_manifest_with_a_json_syntax_error_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "manifest.json"
    bad.write_text('{"election_scope_id": "x",')
    out = tmp_path / "record"
    result = RUNNER.invoke(app, ["election", "--manifest", str(bad), "--ballots", "3", "--out", str(out)])
    one_line_error(result, "not valid JSON", str(bad))
    assert not out.exists()


def test_a_missing_manifest_names_the_file_not_a_python_class(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.json"
    result = RUNNER.invoke(app, ["election", "--manifest", str(missing), "--ballots", "3"])
    one_line_error(result, "no such file or directory", str(missing))
    assert "FileNotFoundError" not in result.output


def test_listening_on_a_port_in_use_is_one_line(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert RUNNER.invoke(app, ["node", "keygen", "--home", str(home), "--name", "a"]).exit_code == 0
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = RUNNER.invoke(
            app, ["node", "listen", "--home", str(home), "--port", str(port), "--seconds", "1"]
        )
    one_line_error(result, "address is in use")


@pytest.mark.parametrize(
    ("command", "kind"),
    [
        (["mix", "--voters", "3"], "mix"),
        (["sv", "--voters", "3", "--copies", "2"], "split-value"),
        (["chvote", "--voters", "2", "--level", "1", "--authorities", "2"], "CHVote"),
    ],
)
def test_out_replaces_only_a_record_of_its_own_kind(tmp_path: Path, command: list[str], kind: str) -> None:
    precious = tmp_path / "thesis.txt"
    precious.write_text("three years of work\n")
    result = RUNNER.invoke(app, [*command, "--out", str(precious)])
    one_line_error(result, "exists and is not a", f"{kind} record")
    assert precious.read_text() == "three years of work\n"


def test_an_interrupted_election_leaves_no_partial_record(tmp_path: Path, monkeypatch: Any) -> None:
    """Ctrl-C while ballots are written: nothing at `--out`, and no hidden partial directory left."""
    import votum.election as election

    real = election.DirectorySink.add
    calls = 0

    def interrupted(self: Any, kind: str, path: str, text: str) -> int:
        nonlocal calls
        calls += 1
        if kind == "submitted_ballot":
            raise KeyboardInterrupt
        return real(self, kind, path, text)

    monkeypatch.setattr(election.DirectorySink, "add", interrupted)
    out = tmp_path / "record"
    config = election.ElectionConfig(ballots=4, out=out, seed=1)
    with pytest.raises(KeyboardInterrupt):
        election.run_election(config)
    assert calls > 0
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_an_election_replaces_an_earlier_record_only_when_whole(tmp_path: Path) -> None:
    import votum.election as election

    out = tmp_path / "record"
    election.run_election(election.ElectionConfig(ballots=3, out=out, seed=1))
    first = sorted(p.name for p in (out / "submitted_ballots").iterdir())
    election.run_election(election.ElectionConfig(ballots=4, out=out, seed=2))
    assert len(list((out / "submitted_ballots").iterdir())) == 4 != len(first)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["record"]


def test_a_bar_without_a_known_total_keeps_counting(monkeypatch: Any) -> None:
    """`votum verify` does not know how many ballots a record holds before the end: its bar had the first
    batch as its total, so it showed 1000/256, full, with the clock stopped."""
    from rich.console import Console
    from votum.cli import _progress

    seen: list[Any] = []

    class Recorder(_progress.Progress):  # type: ignore[misc]
        def update(self, task_id: Any, **kw: Any) -> None:
            super().update(task_id, **kw)
            task = self._tasks[task_id]
            seen.append((task.total, task.completed, task.finished))

    monkeypatch.setattr(_progress, "Progress", Recorder)
    with _progress.progress_hook(Console(file=io.StringIO())) as hook:
        hook("ballots checked", 256, 0)
        hook("ballots checked", 1000, 0)
    assert seen == [(None, 256, False), (None, 1000, False)]


@pytest.mark.parametrize("weight", ["faculty", "faculty=", "faculty=two", "=3", "faculty=-1"])
def test_a_malformed_weight_is_one_line_before_anything_is_sent(tmp_path: Path, weight: str) -> None:
    """`votum official create --weight NAME=W`: a malformed one is refused before the service is asked
    (the service here does not exist)."""
    manifest = tmp_path / "m.json"
    manifest.write_text("{}")
    run = CliRunner().invoke(
        app,
        ["official", "create", str(manifest), "-e", "x", "--guardians", "3", "--quorum", "2", "--spec", "2.1",
         "--weight", weight, "--service", "http://127.0.0.1:9"],
    )  # fmt: skip
    one_line_error(run, "--weight", "NAME=W")


@pytest.mark.parametrize(
    "lines",
    [
        ['{"ballot": "b", "marks": {"mayor": [1]}}', "{"],
        ['{"ballot": "b", "marks": {"mayor": [2]}}'],
        ['{"marks": {"mayor": [1]}}'],
        ['{"ballot": "b", "marks": {"mayor": [1]}}', '{"ballot": "b", "marks": {}}'],
    ],
)
def test_a_malformed_marks_file_is_one_line_before_anything_is_sent(tmp_path: Path, lines: list[str]) -> None:
    """`votum paper record --marks-file`: every line is checked before the service is asked (a bad line,
    bad marks, no ballot id, a ballot twice), and named."""
    marks = tmp_path / "marks.jsonl"
    marks.write_text("\n".join(lines) + "\n")
    run = CliRunner().invoke(
        app,
        ["paper", "record", "-e", "x", "--he-fingerprint", "0" * 32, "--store", str(tmp_path / "s"),
         "--marks-file", str(marks), "--service", "http://127.0.0.1:9"],
    )  # fmt: skip
    one_line_error(run, "--marks-file")


@pytest.mark.parametrize("marks", ["{", "[1, 0]", '{"mayor": [2]}', '{"mayor": 1}'])
def test_malformed_marks_are_one_line_before_anything_is_sent(tmp_path: Path, marks: str) -> None:
    """`votum paper record --marks`: not JSON, or not 0s and 1s per contest, is refused before the service
    is asked (the service here does not exist)."""
    run = CliRunner().invoke(
        app,
        ["paper", "record", "-e", "x", "--he-fingerprint", "0" * 32, "--store", str(tmp_path / "s"),
         "--ballot", "b", "--marks", marks, "--service", "http://127.0.0.1:9"],
    )  # fmt: skip
    one_line_error(run, "--marks")
