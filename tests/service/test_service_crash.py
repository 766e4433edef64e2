"""Crash safety (spec/80.3): kill -9 a real `votum serve` in the middle of a ballot load, restart it on
the same database: every acknowledged ballot is there, the batch in flight is there entirely or not at
all, the board re-links from genesis, and the published tally equals the acknowledged votes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
from sqlalchemy import select, update
from votum.client import Client, ServiceError
from votum.client.election import ElectionDriver, Plan, Tokens, check_board
from votum.eg import manifest_from_names
from votum.service.local import start_server
from votum.store import Store
from votum.store.schema import board

MANIFEST = manifest_from_names(["Party A"], ["Alice", "Bob", "Carol"])


def _serve(url: str, tokens: Tokens, data_dir: Path) -> tuple[subprocess.Popen[bytes], str]:
    options = [
        "--data-dir",
        str(data_dir),
        "--database-url",
        url,
        "--log-level",
        "warning",
        "--no-seed-endpoints",
    ]
    env = {**os.environ, "VOTUM_TOKENS": tokens.env()}
    return start_server(options, env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def test_kill_9_during_load_loses_no_acknowledged_ballot(store_url: str, tmp_path: Path) -> None:
    tokens = Tokens.generate(3)
    server, base = _serve(store_url, tokens, tmp_path)
    first = Client(base, timeout=60)
    try:
        driver = ElectionDriver(first, tokens, "crash", MANIFEST, quorum=2, seed=11)
        driver.ceremony()
        batches = [driver.plan(8, spoil_rate=0.1) for _ in range(30)]
        acked: list[list[Plan]] = []
        in_flight: list[list[Plan]] = []

        def load() -> None:
            for b in batches:
                in_flight[:] = [b]
                try:
                    driver.submit(b)
                except (ServiceError, httpx.TransportError):
                    return
                acked.append(b)
                in_flight.clear()

        loader = threading.Thread(target=load)
        loader.start()
        for _ in range(600):  # bounded: at most ~60 s
            if len(acked) >= 3:
                break
            time.sleep(0.1)
        os.kill(server.pid, signal.SIGKILL)
        server.wait(timeout=30)
        loader.join(timeout=120)
        assert not loader.is_alive()
        assert 3 <= len(acked) < len(batches), "the kill did not land in the middle of the load"
    finally:
        first.close()
        if server.poll() is None:
            server.kill()

    server, base = _serve(store_url, tokens, tmp_path)
    client = Client(base, timeout=60)
    try:
        driver.client = client
        for batch in acked:
            for p in batch:
                receipt = client.get(f"/v1/elections/crash/ballots/{p.ballot_id}")
                assert receipt["state"] == p.state
        # the batch in flight is stored entirely or not at all
        if in_flight:
            present = []
            for p in in_flight[0]:
                try:
                    client.get(f"/v1/elections/crash/ballots/{p.ballot_id}")
                    present.append(True)
                except ServiceError as e:
                    assert e.type == "not_found"
                    present.append(False)
            assert all(present) or not any(present)
            driver.submit(in_flight[0])  # idempotent if it was stored; stored now if it was not
        status = client.get("/v1/elections/crash")
        assert status["cast"] + status["spoiled"] == 8 * (len(acked) + len(in_flight))
        check_board(client, "crash")
        # the election goes on after the restart (the device's chain continues where the ballots
        # that reached the board left it), and its tally is the acknowledged votes
        for batch in batches[len(acked) + len(in_flight) :]:
            driver.submit(batch)
        driver.submit(driver.plan(4))
        assert driver.decrypt_and_publish(missing=1) == driver.expected
        check_board(client, "crash")
    finally:
        client.close()
        server.terminate()
        server.wait(timeout=30)


def test_two_servers_on_one_database(store_url: str, tmp_path: Path) -> None:
    """Two `votum serve` processes on one database, each taking ballots from its own device at the same
    time: every ballot is stored once, the board has no gap or fork, and the tally counts them all."""
    tokens = Tokens.generate(3)
    one, base_one = _serve(store_url, tokens, tmp_path)
    two, base_two = _serve(store_url, tokens, tmp_path)
    c_one, c_two = Client(base_one, timeout=60), Client(base_two, timeout=60)
    try:
        driver = ElectionDriver(c_one, tokens, "shared", MANIFEST, quorum=2, seed=5)
        driver.ceremony()
        first = [driver.plan(6, spoil_rate=0.2) for _ in range(8)]
        chain, _ = driver.plan_chain(6 * 8, driver.register_device(2), spoil_rate=0.2)
        second = [chain[i : i + 6] for i in range(0, len(chain), 6)]
        failures: list[BaseException] = []

        def device(client: Client, batches: list[list[Plan]]) -> None:
            try:
                for b in batches:
                    client.post(
                        "/v1/elections/shared/ballots/batch",
                        {"ballots": [{"ballot": p.ballot, "state": p.state} for p in b]},
                        token=tokens.device,
                    )
                    driver.count(b)
            except BaseException as e:  # collected and asserted on below
                failures.append(e)

        threads = [
            threading.Thread(target=device, args=(c_one, first)),
            threading.Thread(target=device, args=(c_two, second)),
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=300)
        assert not failures, failures
        # both servers see the same board, whole
        assert check_board(c_one, "shared") == check_board(c_two, "shared")
        status = c_two.get("/v1/elections/shared")
        assert status["cast"] + status["spoiled"] == 2 * 6 * 8
        for p in first[0] + second[-1]:
            assert c_one.get(f"/v1/elections/shared/ballots/{p.ballot_id}")["state"] == p.state
        # decryption through the second server counts the ballots the first one took, and vice versa
        driver.client = c_two
        assert driver.decrypt_and_publish(missing=1) == driver.expected
        assert c_one.get("/v1/elections/shared/results")["counts"] == driver.expected
        check_board(c_one, "shared")
    finally:
        c_one.close()
        c_two.close()
        for s in (one, two):
            s.terminate()
            s.wait(timeout=30)


def test_votum_load_runs_the_stateful_api(tmp_path: Path) -> None:
    tokens = Tokens.generate(3)
    server, base = _serve(f"sqlite:///{tmp_path / 'votum.db'}", tokens, tmp_path)
    try:
        roles = tmp_path / "tokens.json"
        roles.write_text(json.dumps(tokens.settings_map()))
        report = tmp_path / "report.json"
        cmd = [sys.executable, "-m", "votum", "load", "--api", "stateful", "--url", base, "--start", "8"]
        cmd += ["--stop", "16", "--batch", "5", "--guardians", "3", "--quorum", "2", "--missing", "1"]
        cmd += ["--spoil-rate", "0.2", "--tokens-file", str(roles), "--report", str(report)]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
        assert done.returncode == 0, done.stderr[-2000:]
        runs = json.loads(report.read_text())["runs"]
        assert [r["ballots"] for r in runs] == [8, 16]
        assert all(sum(r["counts"].values()) >= 0 and r["head"]["seq"] > 0 for r in runs)
        assert "POST ballots/batch" in done.stdout
        assert not any(t in done.stdout + done.stderr for t in tokens.settings_map())
        # a missing guardian token is a clear error, not a traceback
        roles.write_text(json.dumps({tokens.admin: "admin"}))
        bad = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
        assert bad.returncode == 2 and "guardian-1" in bad.stderr
        # an auditor checks a board with `votum board check`, from the service alone …
        store = Store(f"sqlite:///{tmp_path / 'votum.db'}")
        election = store.election_ids()[0]
        head = store.election(election).head_seq
        board_check = [
            sys.executable,
            "-m",
            "votum",
            "board",
            "check",
            election,
            "--url",
            base,
            "--page",
            "7",
        ]
        ok = subprocess.run(board_check, capture_output=True, text=True, timeout=300, check=False)
        assert ok.returncode == 0, ok.stderr[-2000:]
        assert f"{head + 1} entries chain to head {store.election(election).head_hash.hex()}" in ok.stdout
        # … and finds an entry changed behind the service's back, by its number
        with store.engine.begin() as conn:
            row = conn.execute(
                select(board.c.payload).where(board.c.election_id == election, board.c.seq == 9)
            )
            payload = bytearray(row.scalar_one())
            payload[len(payload) // 2] ^= 1
            conn.execute(
                update(board)
                .where(board.c.election_id == election, board.c.seq == 9)
                .values(payload=bytes(payload))
            )
        store.close()
        broken = subprocess.run(board_check, capture_output=True, text=True, timeout=300, check=False)
        assert broken.returncode == 1 and "entry 9:" in broken.stderr, broken.stderr[-2000:]
        unknown = subprocess.run(
            [*board_check[:5], "no-such-election", *board_check[6:]],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert unknown.returncode == 2 and "not_found" in unknown.stderr
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_devices_sending_one_ballot_each_are_checked_and_stored_in_groups(
    store_url: str, tmp_path: Path
) -> None:
    """Four devices at once, one ballot per request, through one `votum serve` (the intake's pipeline:
    requests checked together, groups stored together, the running tally kept in memory between
    commits). One device also sends a copy of its next ballot with a broken proof: that request alone
    is refused, with the proof named; its real ballot goes in after it. Every other ballot is stored
    once, the board is whole, and the published counts are exactly the stored votes."""
    tokens = Tokens.generate(3)
    server, base = _serve(store_url, tokens, tmp_path)
    admin = Client(base, timeout=60)
    try:
        driver = ElectionDriver(admin, tokens, "singles", MANIFEST, quorum=2, seed=11)
        driver.ceremony()
        chains = [driver.plan_chain(6, driver.register_device(10 + d), spoil_rate=0.2)[0] for d in range(4)]
        bad = json.loads(json.dumps(chains[1][3].ballot))
        proof = bad["contests"][0]["ballot_selections"][0]["proof"]
        proof["proof_one_response"] = proof["proof_zero_response"]
        failures: list[BaseException] = []
        refused: list[ServiceError] = []

        def device(plans: list[Plan], tamper: bool) -> None:
            try:
                with Client(base, timeout=60) as c:
                    for i, p in enumerate(plans):
                        if tamper and i == 3:
                            try:
                                c.post("/v1/elections/singles/ballots", {"ballot": bad}, token=tokens.device)
                            except ServiceError as e:
                                refused.append(e)
                        c.post(
                            "/v1/elections/singles/ballots",
                            {"ballot": p.ballot, "state": p.state},
                            token=tokens.device,
                        )
                        driver.count([p])
            except BaseException as e:  # collected and asserted on below
                failures.append(e)

        threads = [threading.Thread(target=device, args=(chain, d == 1)) for d, chain in enumerate(chains)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=300)
        assert not failures, failures
        assert len(refused) == 1 and refused[0].status == 422, refused
        assert "invalid_proof" in str(refused[0]) and "g^v1" in str(refused[0])
        status = admin.get("/v1/elections/singles")
        assert status["cast"] + status["spoiled"] == 4 * 6
        head = check_board(admin, "singles")  # re-links the whole board from genesis
        assert head["seq"] >= 4 * 6
        assert driver.decrypt_and_publish(missing=1) == driver.expected
    finally:
        admin.close()
        server.terminate()
        server.wait(timeout=30)
