"""`votum serve` as a child process on 127.0.0.1, for tests, benchmarks and local runs: a free port,
a bounded wait for `/health`, the child's peak memory."""

from __future__ import annotations

import ssl
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any

import httpx

from votum.errors import VotumError
from votum.localnet import free_port


def start_server(
    options: list[str],
    env: dict[str, str] | None = None,
    stdout: int | IO[Any] | None = None,
    stderr: int | IO[Any] | None = None,
    wait_seconds: float = 30.0,
    tls: ssl.SSLContext | None = None,
) -> tuple[subprocess.Popen[bytes], str]:
    """Starts `python -m votum serve --port <free> OPTIONS` and waits (at most `wait_seconds`) until it
    answers `/health`; returns the process and its base URL. With `tls` (a context that trusts the
    server's certificate; OPTIONS give `--tls-cert`/`--tls-key`) the URL is https. A server that does
    not come up is killed and a VotumError raised."""
    port = free_port()
    cmd = [sys.executable, "-m", "votum", "serve", "--port", str(port), *options]
    server = subprocess.Popen(cmd, env=env, stdout=stdout, stderr=stderr)
    base = f"{'https' if tls else 'http'}://127.0.0.1:{port}"
    deadline = time.monotonic() + wait_seconds
    while time.monotonic() < deadline and server.poll() is None:
        try:
            if httpx.get(f"{base}/health", timeout=1, verify=tls or True).status_code == 200:
                return server, base
        except httpx.TransportError:
            time.sleep(0.1)
    server.kill()
    server.wait(timeout=30)
    raise VotumError(f"votum serve did not start within {wait_seconds:.0f} s (exit code {server.returncode})")


def peak_rss_mib(pid: int) -> float:
    """The process's peak resident memory so far (Linux `VmHWM`), in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0
