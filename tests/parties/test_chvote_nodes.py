"""CHVote between separate processes (spec/92.12): every authority, the printing authority and the voters'
client in a process of its own, over the channels; the controller is the board. Honest runs count exactly
and their records pass the independent verifier; a bad response is blamed on its authority; a party that dies
fails the run with its name and leaves no record."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
import votum
from votum.parties.chvote import ChvoteFailed, joined, run_local
from votum.verifier import verify


def _run(tmp_path: Path, **kw: object) -> object:
    args: dict[str, object] = {
        "level": 1,
        "shape": "single",
        "voters": 8,
        "authorities": 3,
        "record": tmp_path / "record.vchv",
        "homes": tmp_path / "homes",
        "timeout": 60.0,
    }
    args.update(kw)
    return asyncio.run(run_local(**args))  # type: ignore[arg-type]


def _left(tmp_path: Path) -> list[str]:
    return sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("record"))


def test_an_election_between_processes_counts_exactly_and_its_record_verifies(tmp_path: Path) -> None:
    choices = [[1], [2], [2], [3], [1], [1], [3], [1]]
    steps: list[str] = []
    run = _run(tmp_path, choices=choices, sheets=tmp_path / "sheets", progress=steps.append)
    assert run.tally == [4, 2, 2] == run.expected  # type: ignore[attr-defined]
    assert run.exact and run.invalid == 0  # type: ignore[attr-defined]
    assert steps[-4:] == ["voting phase", "mixing", "decryption", "tallying"]
    report = verify(tmp_path / "record.vchv")
    assert report.passed, report.not_passed()
    assert len(list((tmp_path / "sheets").glob("voter-*.html"))) == 8
    assert _left(tmp_path) == ["record.vchv"]


def test_simple_sample_at_level_2_between_processes(tmp_path: Path) -> None:
    run = _run(tmp_path, level=2, shape="simple-sample", voters=12, authorities=2)
    assert run.exact  # type: ignore[attr-defined]
    assert sum(run.tally[:3]) == 12  # type: ignore[attr-defined]
    assert verify(tmp_path / "record.vchv").passed


def test_a_bad_response_is_blamed_on_its_authority_and_nothing_is_recorded(tmp_path: Path) -> None:
    with pytest.raises(ChvoteFailed) as err:
        _run(tmp_path, faults={"authority-1": "bad-response"})
    assert err.value.phase == "voting phase"
    assert err.value.party == "authority-1"
    assert _left(tmp_path) == []


def test_an_unsigned_answer_fails_the_run_naming_its_authority(tmp_path: Path) -> None:
    """Issue 45, finding 2: the board posts each shuffle with its authority's signature; an answer without
    one is not posted, and the run fails naming the authority, leaving no record."""
    with pytest.raises(ChvoteFailed) as err:
        _run(tmp_path, faults={"authority-1": "unsigned-answer"})
    assert err.value.phase == "mixing"
    assert err.value.party == "authority-1"
    assert "not a signed answer" in str(err.value)
    assert _left(tmp_path) == []


@pytest.mark.parametrize(
    ("party", "fault", "phase"),
    [("authority-2", "die-in-shuffle", "mixing"), ("voters", "die-voting", "voting phase")],
)
def test_a_party_that_dies_fails_the_run_by_name_and_leaves_no_record(
    tmp_path: Path, party: str, fault: str, phase: str
) -> None:
    with pytest.raises(ChvoteFailed) as err:
        _run(tmp_path, voters=40, faults={party: fault})
    assert err.value.phase == phase
    assert err.value.party == party
    assert _left(tmp_path) == []


def test_the_parties_refuse_bad_input_and_change_nothing() -> None:
    keys = [bytes([j + 1]) * 32 for j in range(2)]
    parameters = votum.chvote_parameters(1, "single", 2, 2, election_id="nodes-test", signers=keys)
    authorities = [votum.ChvoteAuthority(parameters, j, keys[j]) for j in range(2)]
    with pytest.raises(votum.InvalidInput):
        votum.ChvoteAuthority(parameters, 2, keys[0])
    # parameters that name another signing key in an authority's slot are refused by it
    with pytest.raises(votum.InvalidInput, match="another signing key"):
        votum.ChvoteAuthority(parameters, 1, keys[0])
    shares = [a.key_share() for a in authorities]
    made = [a.electoral_data() for a in authorities]
    data = [public for _, public in made]
    for a in authorities:
        a.attach(parameters, shares, data)
    # a board that does not hold an authority's own key share is refused
    other = votum.ChvoteAuthority(parameters, 0, keys[0])
    with pytest.raises(votum.InvalidInput):
        other.attach(parameters, shares, data)
    cards = votum.chvote_print_cards(parameters, [secret for secret, _ in made])
    client = votum.ChvoteVoters(parameters, shares, data)
    assert [client.add_card(c) for c in cards] == [0, 1]
    ballot = client.ballot(0, [2])
    with pytest.raises(votum.InvalidInput):
        authorities[0].ballot(0, ballot[:-1])  # truncated
    with pytest.raises(votum.InvalidInput):
        authorities[0].ballot(1, ballot)  # another voter's credential
    with pytest.raises(votum.InvalidInput):
        authorities[0].confirmation(0, b"\0" * 8)  # not a confirmation
    responses = [a.ballot(0, ballot) for a in authorities]
    with pytest.raises(votum.WrongPhase):
        authorities[0].ballot(0, ballot)  # a second ballot
    confirmation = client.confirm(0, responses)
    finals = [a.confirmation(0, confirmation) for a in authorities]
    assert client.finalize(0, finals) == [2]
    with pytest.raises(votum.WrongPhase):
        authorities[0].confirmation(1, confirmation)  # voter 1 has cast no ballot
    with pytest.raises(votum.WrongPhase):
        authorities[1].confirmation(0, confirmation)  # confirmed already
    # a record's list of every authority's item is the count, then each one's item
    assert joined(responses)[:8] == (2).to_bytes(8, "big")
    assert len(joined(responses)) == sum(len(r) - 8 for r in responses) + 8
    assert "redacted" in repr(client) and "redacted" in repr(authorities[0])


def test_cli_runs_the_parties_as_processes(tmp_path: Path) -> None:
    import json

    from typer.testing import CliRunner
    from votum.cli import app

    record = tmp_path / "cli.vchv"
    args = [
        "chvote",
        "--processes",
        "--voters",
        "5",
        "--level",
        "1",
        "--authorities",
        "2",
        "--out",
        str(record),
    ]
    out = CliRunner().invoke(app, [*args, "--json"])
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["exact"] and report["verified"] and report["confirmed"] == 5
    assert [s["name"] for s in report["steps"]][-1] == "tallying"
    assert verify(record).passed


def test_an_election_too_large_for_the_channels_frames_is_refused_before_anything_starts(
    tmp_path: Path,
) -> None:
    from votum.parties.chvote import largest_message

    # the bound: eight elements per voter (a shuffle and its proof, the largest message not streamed)
    assert largest_message(1, 8, 3) < 1 << 20
    with pytest.raises(ChvoteFailed) as err:
        _run(tmp_path, level=2, voters=100_000, authorities=4)
    assert "frame" in str(err.value) and "without --processes" in str(err.value)
    assert not (tmp_path / "homes").exists()  # no identity made, no process started
    assert _left(tmp_path) == []


def test_requests_too_big_for_one_frame_go_as_streams(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:

    import votum.parties.common as common

    monkeypatch.setattr(common, "STREAM_ABOVE", 0)  # every request from the controller as a stream
    run = _run(tmp_path, voters=6, choices=[[1], [3], [3], [2], [3], [1]])
    assert run.tally == [2, 1, 3] == run.expected  # type: ignore[attr-defined]
    assert verify(tmp_path / "record.vchv").passed


def test_a_killed_controller_leaves_no_party_and_no_home(tmp_path: Path) -> None:
    """Issue 43, item 10: after `kill -9` of a process-mode controller every party kept running, and
    their temporary homes (private keys beside sealed state) stayed on disk. Each party now stops when
    its standard input, a pipe only the controller holds, ends; a reaper removes the scratch homes. The
    controller is killed mid-election: once it is connected to every party (killed before that, the old
    parties happened to exit; after it, they ran on)."""
    import signal
    import subprocess
    import sys
    import time

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    controller = subprocess.Popen(
        [sys.executable, "-m", "votum", "chvote", "--processes", "--voters", "1000", "--level", "1",
         "--out", str(tmp_path / "record.vchv")],
        env={**os.environ, "TMPDIR": str(scratch)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip

    def parties() -> list[int]:
        found = []
        for proc in Path("/proc").iterdir():
            try:
                cmd = (proc / "cmdline").read_bytes()
            except OSError:
                continue
            if b"votum.parties.chvote" in cmd and str(scratch).encode() in cmd:
                found.append(int(proc.name))
        return found

    def sockets(pid: int) -> int:
        try:
            return sum(os.readlink(fd).startswith("socket:") for fd in Path(f"/proc/{pid}/fd").iterdir())
        except OSError:
            return 0

    try:
        deadline = time.monotonic() + 120
        # 4 authorities, the printing authority and the voters' client, each with a connection beside
        # its listening socket
        while time.monotonic() < deadline and not (
            len(found := parties()) == 6 and all(sockets(pid) >= 2 for pid in found)
        ):
            time.sleep(0.02)
        assert len(parties()) == 6 and controller.poll() is None, "the election runs with its parties"
        assert any(scratch.iterdir()), "the parties' homes are on disk"
        controller.send_signal(signal.SIGKILL)
        controller.wait(timeout=30)
        deadline = time.monotonic() + 30
        while (parties() or any(scratch.iterdir())) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert parties() == [], "every party stops when its controller is gone"
        assert list(scratch.iterdir()) == [], "no home is left behind"
    finally:
        if controller.poll() is None:
            controller.kill()
            controller.wait()
        for pid in parties():
            os.kill(pid, signal.SIGKILL)
