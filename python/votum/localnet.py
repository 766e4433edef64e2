"""Loopback helpers shared by the local server launcher and the throwaway PostgreSQL server."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A TCP port nobody listens on at the moment, on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
