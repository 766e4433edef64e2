"""`votum serve --tls-cert --tls-key`: the service over TLS, with a certificate from a throwaway CA
(trustme). A client that trusts the CA gets answers; one that does not, or that speaks plain HTTP,
gets none. Half a key pair is refused at start with a clear message."""

from __future__ import annotations

import os
import signal
import ssl
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
import trustme
from votum.service.local import start_server

ADMIN = "tls-admin-token-0123456789abcdef"


@pytest.fixture(scope="module")
def ca() -> trustme.CA:
    return trustme.CA()


def _pair(ca: trustme.CA, where: Path) -> tuple[Path, Path]:
    cert = ca.issue_cert("127.0.0.1", "localhost")
    chain, key = where / "chain.pem", where / "key.pem"
    chain.write_bytes(b"".join(blob.bytes() for blob in cert.cert_chain_pems))
    key.write_bytes(cert.private_key_pem.bytes())
    key.chmod(0o600)
    return chain, key


def test_https_with_a_trusted_certificate_only(ca: trustme.CA, tmp_path: Path) -> None:
    chain, key = _pair(ca, tmp_path)
    trusting = ssl.create_default_context()
    ca.configure_trust(trusting)
    env = {**os.environ, "VOTUM_TOKENS": f"admin={ADMIN}"}
    options = ["--data-dir", str(tmp_path / "data"), "--tls-cert", str(chain), "--tls-key", str(key)]
    log = (tmp_path / "server.log").open("w+b")
    server, base = start_server(options, env, stdout=subprocess.DEVNULL, stderr=log, tls=trusting)
    try:
        assert base.startswith("https://")
        with httpx.Client(base_url=base, verify=trusting) as client:
            assert client.get("/health").json()["status"] == "ok"
            r = client.get("/v1/elections", headers={"Authorization": f"Bearer {ADMIN}"})
            assert r.status_code == 200 and r.json() == []
        # a client that does not trust the CA refuses the server
        with pytest.raises(httpx.ConnectError):
            httpx.get(f"{base}/health", verify=ssl.create_default_context(), timeout=5)
        # plain HTTP to the TLS port gets no answer
        with pytest.raises(httpx.TransportError):
            httpx.get(base.replace("https://", "http://") + "/health", timeout=5)
    finally:
        server.send_signal(signal.SIGTERM)
        # uvicorn stops accepting, finishes what is in flight, shuts the app down, then re-raises
        # the signal: the exit status says SIGTERM, the log says the shutdown completed
        assert server.wait(timeout=30) in (0, -signal.SIGTERM)
        log.seek(0)
        assert b"Application shutdown complete" in log.read()
        log.close()


@pytest.mark.parametrize("which", ["--tls-cert", "--tls-key"])
def test_half_a_pair_is_refused_at_start(ca: trustme.CA, tmp_path: Path, which: str) -> None:
    chain, key = _pair(ca, tmp_path)
    given = chain if which == "--tls-cert" else key
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "votum",
            "serve",
            "--data-dir",
            str(tmp_path),
            "--port",
            "0",
            which,
            str(given),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "give both tls_cert and tls_key" in done.stderr, done.stderr


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "nope.pem"
    serve = [sys.executable, "-m", "votum", "serve", "--data-dir", str(tmp_path), "--port", "0"]
    done = subprocess.run(
        [*serve, "--tls-cert", str(missing), "--tls-key", str(missing)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and f"{missing}: no such file" in done.stderr, done.stderr
