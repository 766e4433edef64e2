"""`votum serve --workers N`: N server processes on one port and one database (spec/80.8). Whichever
worker answers sees the same elections; `/metrics` sums every worker's request counts; SIGTERM stops
them all."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import httpx
from votum.election import synthetic_manifest
from votum.service.local import start_server

ADMIN = "workers-admin-token-0123456789ab"


def _workers(parent: int) -> list[int]:
    """Child processes of `parent` that run a multiprocessing worker (not its resource tracker)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            cmdline = (entry / "cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            continue
        if ppid == parent and b"spawn_main" in cmdline:
            found.append(int(entry.name))
    return found


def test_two_workers_share_the_database_and_the_metrics(tmp_path: Path) -> None:
    env = {**os.environ, "VOTUM_TOKENS": f"admin={ADMIN}"}
    options = ["--data-dir", str(tmp_path), "--workers", "2"]
    server, base = start_server(options, env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    auth = {"Authorization": f"Bearer {ADMIN}"}
    try:
        assert len(_workers(server.pid)) == 2
        body = {"election_id": "w1", "manifest": synthetic_manifest(1), "number_of_guardians": 1, "quorum": 1}
        assert httpx.post(f"{base}/v1/elections", json=body, headers=auth, timeout=30).status_code == 201
        # a new connection each time: the kernel hands them to either worker
        for _ in range(30):
            r = httpx.get(f"{base}/v1/elections/w1", headers=auth, timeout=30)
            assert r.status_code == 200 and r.json()["phase"] == "ceremony"
        text = httpx.get(f"{base}/metrics", headers=auth, timeout=30).text
        count = "votum_http_request_duration_seconds_count"
        line = count + '{method="GET",route="/v1/elections/{election_id}",status="200"}'
        counted = [float(x.rsplit(" ", 1)[1]) for x in text.splitlines() if x.startswith(line)]
        assert counted == [30.0], counted  # both workers' counts, summed
        assert 'votum_board_entries{election="w1"} 2.0' in text
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
    assert _workers(server.pid) == []
