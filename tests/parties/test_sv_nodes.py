"""Split-value elections with every party in its own process over the secure channels (issue 23,
spec/97.13): exact tallies and a record the verifier passes; a server that dies mid-phase fails the run by
name and posts no result; a packet that does not open its commitments is refused and nothing is posted; the
board appends only the entry it was told to expect; and the servers in separate network namespaces, with a
capture of the bridge that holds no vote share in clear."""

from __future__ import annotations

import asyncio
import dataclasses
import subprocess
from collections import Counter
from collections.abc import Awaitable
from pathlib import Path
from typing import TypeVar

import pytest
import uvloop
from netlab import Lab, available
from votum import SvParams, sv_cast
from votum.errors import WrongPhase
from votum.nodes import errors as ne
from votum.nodes.local import make_identities, start_mesh
from votum.parties.sv import BOARD, CONTROLLER, VOTERS, Party, SvFailed, _blob, _pack, run_local
from votum.sv import Race, SvConfig, run_sv_processes
from votum.verifier import verify

T = TypeVar("T")


def run(coro: Awaitable[T], timeout: float = 240.0) -> T:
    async def bounded() -> T:
        return await asyncio.wait_for(coro, timeout)

    return uvloop.run(bounded())


def _params() -> SvParams:
    return SvParams(
        [("Mayor", ["Ann", "Bob"], 6), ("Measure", ["Yes", "No"], 0)], n_fail=1, n_leak=1, copies=132
    )


def test_an_election_across_processes_counts_exactly_and_verifies(tmp_path: Path) -> None:
    votes: list[list[int | str]] = [[1 + i % 2, 1 + i % 3 % 2] for i in range(40)]
    votes += [["Zed", 0], [0, 2], ["Zed", 1]]
    config = SvConfig(
        voters=len(votes), races=(Race("Mayor", ("Ann", "Bob"), 6), Race("Measure", ("Yes", "No"))), n_fail=1,
        n_leak=1, copies=132, seed=5,
    )  # fmt: skip
    result = run_sv_processes(config, tmp_path / "r.vsv", tmp_path / "homes", timeout=60, votes=votes)
    assert result.verified, result.not_passed
    assert result.grid == (4, 2, 3)
    for ri, race in enumerate(config.races):
        want = Counter(v[ri] for v in votes)
        got = result.tallies[ri]
        assert [tuple(c) for c in got["counts"]] == [(n, want[i + 1]) for i, n in enumerate(race.candidates)]
        assert got["blank"] == want[0]
        assert [tuple(w) for w in got["write_ins"]] == sorted(
            (k, c) for k, c in want.items() if isinstance(k, str)
        )
    assert {s.name for s in result.steps} >= {
        "setup",
        "casting",
        "mixing",
        "proving",
        "tallying",
        "verifying",
    }


@pytest.mark.parametrize(
    ("fault", "party", "phase"),
    [("die-in-mix", "server-2-2", "mixing"), ("die-posting", "server-3-2", "mixing")],
)
def test_a_server_that_dies_fails_the_run_by_name_and_no_result_is_posted(
    fault: str, party: str, phase: str, tmp_path: Path
) -> None:
    record = tmp_path / "r.vsv"
    with pytest.raises(SvFailed) as caught:
        run(run_local(_params(), 30, record, tmp_path / "homes", seed=1, faults={party: fault}, timeout=20))
    assert caught.value.party == party
    assert caught.value.phase == phase
    report = verify(record)
    assert not report.passed
    assert report.check("V-SV-01").status == "error"  # incomplete: no tally was posted
    assert b"tally" not in record.read_bytes()


def test_a_packet_that_does_not_open_its_commitments_is_refused_and_nothing_is_posted(tmp_path: Path) -> None:
    record = tmp_path / "r.vsv"
    with pytest.raises(SvFailed) as caught:
        run(run_local(_params(), 30, record, tmp_path / "homes", faults={VOTERS: "bad-packet"}, timeout=20))
    assert caught.value.phase == "casting"
    assert "does not open" in str(caught.value)
    assert b"ballots-0" not in record.read_bytes()


def test_the_board_appends_only_the_announced_entry_from_the_announced_poster(tmp_path: Path) -> None:
    homes = make_identities(tmp_path, [CONTROLLER, BOARD, VOTERS])

    async def go() -> None:
        controller, board, voters = await start_mesh(homes)
        Party(board)
        try:
            params = _params()
            record = tmp_path / "r.vsv"
            ask = controller.request
            await ask(
                BOARD,
                "sv/setup",
                _pack({"election": "e1", "role": BOARD, "params": params.encode(), "record": str(record)}),
            )
            head = await ask(BOARD, "sv/head", _pack({"election": "e1"}))
            await ask(
                BOARD,
                "sv/expect",
                _pack({"election": "e1", "kind": "seal", "name": "seal", "poster": CONTROLLER}),
            )
            ballots, _ = sv_cast(params, 0, count=3)
            for who, kind, name in (
                (voters, "seal", "seal"),
                (controller, "ballots", "ballots-0"),
                (controller, "seal", "x"),
            ):
                with pytest.raises(ne.NodeError):
                    await who.stream(BOARD, "sv/entry", _blob({"kind": kind, "name": name}, ballots))
                assert await ask(BOARD, "sv/head", _pack({"election": "e1"})) == head
            # the announced one goes in
            new = await controller.stream(
                BOARD, "sv/entry", _blob({"kind": "seal", "name": "seal"}, bytes(8))
            )
            assert new != head
            with pytest.raises(ne.NodeError):  # another election's message
                await ask(BOARD, "sv/head", _pack({"election": "e2"}))
        finally:
            for n in (controller, board, voters):
                await n.close()

    run(go(), 60)


@pytest.mark.skipif(available() is not None, reason=f"no network namespaces: {available()}")
def test_servers_in_separate_namespaces_leave_no_share_in_clear_on_the_wire(tmp_path: Path) -> None:
    lab = Lab(4)
    try:
        pcap = tmp_path / "bridge.pcapng"
        tshark = lab.capture(pcap)
        assert tshark.stderr is not None
        for _ in range(50):
            line = tshark.stderr.readline().decode()
            if "Capturing on" in line or not line:
                break
        names = [
            "board",
            "voters",
            "server-1-1",
            "server-1-2",
            "server-2-1",
            "server-2-2",
            "server-3-1",
            "server-3-2",
            "server-4-1",
            "server-4-2",
        ]
        host = {n: 1 + i % 4 for i, n in enumerate(names)}
        try:
            done = run(
                run_local(
                    _params(), 50, tmp_path / "r.vsv", tmp_path / "homes", seed=2, timeout=60,
                    placement=lambda n: (lab.exec_args(host[n]), lab.ip(host[n])),
                )
            )  # fmt: skip
        finally:
            tshark.terminate()
            tshark.wait(20)
            tshark.stderr.close()
        assert verify(tmp_path / "r.vsv").passed
        captured = pcap.read_bytes()
        # the record's own bytes (ballots' commitments, opened lists) never cross the wire in clear
        record = (tmp_path / "r.vsv").read_bytes()
        assert record[20:60] not in captured
        assert b"sv/packets" not in captured and b"sv/list" not in captured
        summary = subprocess.run(
            ["tshark", "-r", str(pcap), "-Y", "tls.handshake.type == 1", "-T", "fields", "-e", "ip.dst"],
            capture_output=True, text=True, timeout=60,
        ).stdout.split()  # fmt: skip
        assert {lab.ip(i) for i in (1, 2, 3, 4)} <= set(summary)
        assert sum(done.tallies[1]["counts"][i][1] for i in range(2)) + done.tallies[1]["blank"] == 50
    finally:
        lab.close()


def test_a_failed_election_is_rerun_from_its_sealed_ballots(tmp_path: Path) -> None:
    votes: list[list[int | str]] = [[1 + i % 2, 2 - i % 2] for i in range(25)] + [["Kim", 0]]
    config = SvConfig(
        voters=len(votes), races=(Race("Mayor", ("Ann", "Bob"), 6), Race("Measure", ("Yes", "No"))), n_fail=1,
        n_leak=1, copies=132, seed=8,
    )  # fmt: skip
    first = tmp_path / "first.vsv"
    homes = tmp_path / "homes"
    with pytest.raises(SvFailed) as caught:
        run(
            run_local(
                _params(),
                len(votes),
                first,
                homes,
                votes=votes,
                faults={"server-2-2": "die-in-mix"},
                timeout=20,
            )
        )
    assert caught.value.party == "server-2-2"
    # the first-column servers kept their packets, sealed to themselves, readable only by their owner
    kept = sorted(homes.glob("server-*-1/sv-packets-*.sealed"))
    assert len(kept) == 4 and all(k.stat().st_mode & 0o077 == 0 for k in kept)
    again = run_sv_processes(config, tmp_path / "again.vsv", homes, timeout=60, rerun_from=first)
    assert again.verified, again.not_passed
    assert again.ballots == len(votes)
    counts = {name: c for name, c in again.tallies[0]["counts"]}
    assert counts == {"Ann": 13, "Bob": 12} and dict(map(tuple, again.tallies[0]["write_ins"])) == {"Kim": 1}
    # the same ballots (their commitments), re-chained under the rerun's election
    assert first.read_bytes().count(b"ballots-0") == 1
    # the election is over: nothing kept to rerun from
    assert not list(homes.glob("server-*-1/sv-packets-*.sealed"))
    # a finished election's record reached its sides: no rerun (its input halves are public)
    with pytest.raises(WrongPhase):
        run_sv_processes(config, tmp_path / "third.vsv", homes, timeout=60, rerun_from=tmp_path / "again.vsv")


def test_the_controller_joins_parties_already_running(tmp_path: Path) -> None:
    from votum.parties.sv import PartyProcess, party_names, prepare_homes

    params = SvParams([("Q", ["Yes", "No"], 0)], n_fail=0, n_leak=1, copies=132)
    controller_home, homes = prepare_homes(tmp_path / "homes", party_names(params.rows, params.columns))
    procs = [PartyProcess(h) for h in homes]
    try:
        from votum.nodes.keystore import PEERS_FILE, Keystore

        store = Keystore.load(controller_home / PEERS_FILE)
        for h, proc in zip(homes, procs, strict=True):
            card = store.find(h.name)
            store.add(dataclasses.replace(card, address=proc.address(30)), card.fingerprint)
        store.save()
        config = SvConfig(voters=20, races=(Race("Q", ("Yes", "No")),), n_leak=1, copies=132)
        result = run_sv_processes(config, tmp_path / "r.vsv", tmp_path / "homes", timeout=60, join=True)
        assert result.verified and result.ballots == 20
    finally:
        for p in procs:
            p.stop()


def test_a_server_that_stops_answering_is_named_when_the_phase_times_out(tmp_path: Path) -> None:
    record = tmp_path / "r.vsv"
    with pytest.raises(SvFailed) as caught:
        run(
            run_local(
                _params(), 20, record, tmp_path / "homes", faults={"server-3-2": "hang-in-mix"}, timeout=4
            )
        )
    assert caught.value.party == "server-3-2" and caught.value.phase == "mixing"
    assert b"tally" not in record.read_bytes()
