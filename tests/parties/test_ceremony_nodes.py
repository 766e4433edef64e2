"""The key ceremony between guardian processes over the channels (spec/96): honest and seeded (equal to the
one-process ceremony), a bad backup disputed and answered in public, a wrong answer, a guardian that vanishes,
an untrusted roster entry and a node posing as the coordinator."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable
from pathlib import Path
from typing import Any, TypeVar

import msgpack  # type: ignore[import-untyped]
import pytest
import uvloop
from typer.testing import CliRunner
from votum import EgManifest
from votum.cli.ceremony import FileBoard, publish
from votum.client import Client, ServiceError
from votum.eg import run_ceremony
from votum.election import synthetic_manifest
from votum.fingerprints import key_fingerprint
from votum.nodes import Identity, Node
from votum.nodes import errors as ne
from votum.nodes.local import make_identities, start_mesh
from votum.parties.ceremony import (
    CeremonyFailed,
    GuardianService,
    coordinate,
    guardian_seed,
    load_guardian_state,
    run_local,
)
from votum.parties.guardian import GuardianTool

T = TypeVar("T")
MANIFEST = synthetic_manifest(2)
EM = EgManifest.from_json(json.dumps(MANIFEST))


def run(coro: Awaitable[T], timeout: float = 120.0) -> T:
    async def bounded() -> T:
        return await asyncio.wait_for(coro, timeout)

    return uvloop.run(bounded())


def _json(d: dict[str, dict[str, str]]) -> dict[str, dict[str, Any]]:
    return {s: {r: json.loads(b) for r, b in v.items()} for s, v in d.items()}


def test_a_seeded_ceremony_across_processes_equals_the_one_process_ceremony(tmp_path: Path) -> None:
    n, k = 5, 3
    done = run(run_local(n, k, EM, tmp_path / "homes", seed=11))
    result = done.result
    one = run_ceremony(EM, n, k, [guardian_seed(11, i) for i in range(1, n + 1)])
    ids = [f"guardian-{i}" for i in range(1, n + 1)]
    assert list(result.records) == ids
    assert [json.loads(result.records[g]) for g in ids] == [json.loads(r) for r in one.records]
    assert _json(result.backups) == _json(one.backups)
    assert result.context.to_json() == one.context.to_json()
    assert result.disputes == []
    assert [p.name for p in result.phases] == ["start", "backups", "reports", "finish"]
    assert sum(p.messages for p in result.phases) == 4 * n + n * (n - 1)

    # every guardian kept only its own secret state, sealed to its own key, mode 0600
    records = [result.records[g] for g in ids]
    for i, gid in enumerate(ids):
        home = tmp_path / "homes" / gid
        sealed = home / f"eg-guardian-{result.ceremony}.sealed"
        assert sealed.stat().st_mode & 0o777 == 0o600
        assert one.guardians[i].expose_secret_state() not in sealed.read_bytes()
        again = load_guardian_state(Identity(home), result.ceremony, records)
        assert again.public_record() == one.guardians[i].public_record()
        assert sorted(again.backups_held) == sorted(g for g in ids if g != gid)
    assert not list((tmp_path / "homes" / "coordinator").glob("*.sealed"))

    # published to a file board through /v1: the board's context is the ceremony's
    board = FileBoard(tmp_path / "board", n)
    try:
        text = publish(board.client, board.tokens, "e", MANIFEST, result)
        assert json.loads(text) == json.loads(one.context.to_json())
        names = [e["name"] for e in board.client.get("/v1/elections/e/board")["entries"]]
        assert sum(x.startswith("ceremony/backups/") for x in names) == n * (n - 1)
        assert sum(x.startswith("ceremony/verified/") for x in names) == n * (n - 1)
        assert board.client.get("/v1/elections/e")["phase"] == "open"
        # after close, a guardian decrypts with `votum guardian decrypt`'s tool from the state this
        # ceremony sealed in its home (spec/80.10), compensating for a missing guardian
        board.client.post("/v1/elections/e/close", {}, token=board.tokens.admin)
        home = tmp_path / "homes" / "guardian-1"
        mine = Client(http=board.client.http, token=board.tokens.guardians["guardian-1"], use_msgpack=False)
        tool = GuardianTool(mine, "e", "guardian-1", Identity(home))
        tool.path = home / f"eg-guardian-{result.ceremony}.sealed"
        assert tool.decrypt(["guardian-5"]).posted == 2  # the tally: its own share and a compensation
    finally:
        board.close()


def test_a_bad_backup_is_disputed_and_answered_in_public(tmp_path: Path) -> None:
    done = run(run_local(4, 2, EM, tmp_path / "homes", seed=5, faults={3: "bad-backup"}))
    result = done.result
    # guardian-3 altered its backup to its first receiver; guardian-1 disputed it, the answer settled it
    assert [(d.sender, d.receiver) for d in result.disputes] == [("guardian-3", "guardian-1")]
    assert "guardian-3" in result.disputes[0].reason
    assert [p.name for p in result.phases] == ["start", "backups", "reports", "disputes", "finish"]
    one = run_ceremony(EM, 4, 2, [guardian_seed(5, i) for i in range(1, 5)])
    assert result.context.to_json() == one.context.to_json()
    board = FileBoard(tmp_path / "board", 4)
    try:
        publish(board.client, board.tokens, "e", MANIFEST, result)
        names = {e["name"] for e in board.client.get("/v1/elections/e/board")["entries"]}
        assert "ceremony/challenges/guardian-1/guardian-3.json" in names
        assert "ceremony/answers/guardian-3/guardian-1.json" in names
        assert "ceremony/verified/guardian-1/guardian-3.json" not in names
        assert board.client.get("/v1/elections/e")["phase"] == "open"
    finally:
        board.close()


def test_a_wrong_answer_to_a_dispute_fails_the_ceremony_naming_its_sender(tmp_path: Path) -> None:
    with pytest.raises(CeremonyFailed) as caught:
        run(run_local(3, 2, EM, tmp_path / "homes", faults={2: "bad-backup,bad-answer"}))
    assert caught.value.guardian == "guardian-2"
    assert caught.value.phase == "disputes"
    assert not list((tmp_path / "homes").glob("*/*.sealed"))  # aborted: nobody kept a state


def test_a_vanished_guardian_fails_the_ceremony_by_name_and_nothing_is_published(tmp_path: Path) -> None:
    runner = CliRunner()
    board = tmp_path / "board"
    args = ["--guardians", "4", "--quorum", "2", "--board", str(board), "--homes", str(tmp_path / "homes")]
    from votum.cli import app

    got = runner.invoke(app, ["ceremony", *args, "--fault", "3:vanish-at-records"])
    assert got.exit_code == 1, got.output
    assert "guardian-3" in got.output and "backups" in got.output
    assert "nothing was published" in got.output
    fb = FileBoard(board, 4)
    try:
        with pytest.raises(ServiceError) as missing:
            fb.client.get("/v1/elections/election")
        assert missing.value.status == 404
        assert fb.client.get("/v1/elections") == []
    finally:
        fb.close()
    assert not list((tmp_path / "homes").glob("*/*.sealed"))

    # the same command, honest, publishes the election; a second run refuses the taken election id
    got = runner.invoke(app, ["ceremony", *args, "--json"])
    assert got.exit_code == 0, got.output
    report = json.loads(got.output)
    assert [p["name"] for p in report["phases"]] == ["start", "backups", "reports", "finish"]
    assert len(report["guardians"]) == 4
    # one fingerprint form everywhere (issue 42 B): the CLI's is the pages' (votum.fingerprints)
    assert report["joint_key_fingerprint"] == key_fingerprint(report["joint_key"])
    again = runner.invoke(app, ["ceremony", *args])
    assert again.exit_code == 2 and "already has an election" in again.output


def _mesh_with_guardians(tmp_path: Path, n: int) -> Any:
    names = ["coordinator"] + [f"g{i}" for i in range(1, n + 1)]
    return start_mesh(make_identities(tmp_path, names))


def test_a_roster_entry_the_guardian_does_not_trust_is_refused(tmp_path: Path) -> None:
    async def main() -> None:
        nodes: list[Node] = await _mesh_with_guardians(tmp_path, 3)
        try:
            coordinator, g1, g2, g3 = nodes
            for g in (g1, g2, g3):
                GuardianService(g, "coordinator")
            g1.keystore.remove("g3")  # g1 never trusted g3: the coordinator cannot make it
            with pytest.raises(CeremonyFailed) as caught:
                await coordinate(coordinator, ["g1", "g2", "g3"], 2, EM, timeout=10)
            assert caught.value.guardian == "guardian-1" and caught.value.phase == "start"
            assert "unknown-peer" in str(caught.value)
        finally:
            for node in nodes:
                await node.close()

    run(main())


def test_only_the_coordinator_drives_a_guardian_and_only_roster_guardians_send_backups(
    tmp_path: Path,
) -> None:
    async def main() -> None:
        nodes: list[Node] = await _mesh_with_guardians(tmp_path, 3)
        try:
            coordinator, g1, g2, g3 = nodes
            for g in (g1, g2):
                GuardianService(g, "coordinator")
            body = msgpack.packb(
                {"ceremony": "x", "n": 1, "quorum": 1, "guardian_id": "guardian-1", "roster": []}
            )
            with pytest.raises(ne.WrongSender):
                await g3.request("g1", "ceremony/start", body)
            # an honest two-guardian ceremony, then g3 (not on the roster) sends g1 a "backup"
            result = await coordinate(coordinator, ["g1", "g2"], 2, EM, timeout=10)
            assert result.disputes == []
            fake = msgpack.packb({"ceremony": result.ceremony, "sender": "guardian-2", "box": b"x"})
            with pytest.raises(ne.NodeError) as caught:
                await g3.request("g1", "ceremony/backup", fake)
            assert caught.value.code in ("wrong-sender", "handler-error")
        finally:
            for node in nodes:
                await node.close()

    run(main())


def test_the_coordinator_joins_guardian_nodes_already_running(tmp_path: Path) -> None:
    import dataclasses
    import re
    import subprocess
    import sys

    from votum.cli import app
    from votum.nodes import Card, Keystore
    from votum.parties.ceremony import prepare_homes

    coordinator, homes = prepare_homes(tmp_path / "nodes", 3)
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "votum", "node", "guardian", "--home", str(h), "--port", "0"],
            stdout=subprocess.PIPE,
            text=True,
        )
        for h in homes
    ]
    try:
        keys = Keystore.load(coordinator / "peers.json")
        for h, p in zip(homes, procs, strict=True):
            assert p.stdout is not None
            line = p.stdout.readline()
            found = re.search(r"listening on (\S+:\d+)", line)
            assert found, line
            card = Card.from_json((h / "card.json").read_text())
            keys.add(dataclasses.replace(card, address=found.group(1)), card.fingerprint)
        keys.save()
        joins = [x for h in homes for x in ("--join", h.name)]
        got = CliRunner().invoke(
            app,
            ["ceremony", "--home", str(coordinator), *joins, "--quorum", "2", "--board", str(tmp_path / "b")],
        )
        assert got.exit_code == 0, got.output
        assert "joint key fingerprint" in got.output
        for p in procs:  # each guardian stops once its ceremony is finished
            assert p.wait(30) == 0
        assert all(list(h.glob("eg-guardian-*.sealed")) for h in homes)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
            if p.stdout is not None:
                p.stdout.close()


@pytest.mark.parametrize(
    "bad",
    [
        ["--guardians", "3", "--quorum", "4"],
        ["--guardians", "0"],
        ["--manifest", "MANIFEST"],
        ["--service", "http://127.0.0.1:9"],
        ["--fault", "three:bad-backup"],
    ],
)
def test_bad_ceremony_input_is_refused_before_anything_is_written(tmp_path: Path, bad: list[str]) -> None:
    from votum.cli import app

    (tmp_path / "manifest.json").write_text("{not json")
    bad = [str(tmp_path / "manifest.json") if a == "MANIFEST" else a for a in bad]
    board, homes = tmp_path / "board", tmp_path / "homes"
    got = CliRunner().invoke(app, ["ceremony", "--board", str(board), "--homes", str(homes), *bad])
    assert got.exit_code == 2, got.output
    assert "error" in got.output
    assert not board.exists() and not homes.exists()
