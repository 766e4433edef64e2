"""Graceful shutdown (spec/80.8): SIGTERM while a ballot batch is being served. The server stops
accepting, finishes that request (the client gets its receipts), shuts the application down and exits;
after a restart on the same database every receipted ballot is there and the board re-links."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from votum.client import Client
from votum.client.election import ElectionDriver, Tokens, check_board
from votum.eg import manifest_from_names
from votum.service.local import start_server

MANIFEST = manifest_from_names(["Party A"], ["Alice", "Bob", "Carol"])


def _in_flight(client: Client) -> float:
    text = client.get("/metrics")
    text = text.decode() if isinstance(text, bytes) else str(text)
    for line in text.splitlines():
        if line.startswith("votum_http_requests_in_flight "):
            return float(line.split()[1])
    raise AssertionError("no votum_http_requests_in_flight in /metrics")


def test_sigterm_drains_the_batch_in_flight(tmp_path: Path) -> None:
    tokens = Tokens.generate(3)
    env = {**os.environ, "VOTUM_TOKENS": tokens.env()}
    options = ["--data-dir", str(tmp_path), "--no-seed-endpoints"]
    log = (tmp_path / "server.log").open("w+b")
    server, base = start_server(options, env, stdout=subprocess.DEVNULL, stderr=log)
    client = Client(base, token=tokens.admin, timeout=120)
    outcome: dict[str, Any] = {}
    try:
        driver = ElectionDriver(client, tokens, "drain", MANIFEST, quorum=2, seed=3)
        driver.ceremony()
        driver.submit(driver.plan(4))
        batch = driver.plan(300)

        def send() -> None:
            try:
                outcome["receipts"] = driver.submit(batch)
            except Exception as e:  # reported by the assertion below
                outcome["error"] = e

        sender = threading.Thread(target=send)
        sender.start()
        # the batch is being served once two requests are in flight: it and this scrape
        watcher = Client(base, token=tokens.admin, timeout=30)
        for _ in range(1200):  # bounded: at most ~60 s
            if _in_flight(watcher) >= 2 or not sender.is_alive():
                break
            time.sleep(0.05)
        watcher.close()
        assert sender.is_alive(), "the batch was answered before the signal could be sent"
        server.send_signal(signal.SIGTERM)
        sender.join(timeout=120)
        assert not sender.is_alive()
        assert "error" not in outcome, outcome.get("error")
        assert len(outcome["receipts"]) == 300
        assert server.wait(timeout=60) in (0, -signal.SIGTERM)
        log.seek(0)
        assert b"Application shutdown complete" in log.read()
    finally:
        client.close()
        if server.poll() is None:
            server.kill()
        log.close()

    server, base = start_server(options, env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    client = Client(base, token=tokens.admin, timeout=120)
    try:
        for receipt in outcome["receipts"]:
            stored = client.get(f"/v1/elections/drain/ballots/{receipt['ballot_id']}")
            assert stored["seq"] == receipt["seq"] and stored["hash"] == receipt["hash"]
        assert client.get("/v1/elections/drain")["cast"] + client.get("/v1/elections/drain")["spoiled"] == 304
        check_board(client, "drain")
    finally:
        client.close()
        server.terminate()
        server.wait(timeout=30)
