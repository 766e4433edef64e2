"""Loopback helpers shared by the local server launcher, the throwaway PostgreSQL server, the
service's address checks and the cluster's."""

from __future__ import annotations

import ipaddress
import socket


def is_loopback(host: str) -> bool:
    """Whether `host` (an address or `localhost`) is only reachable from this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def free_port() -> int:
    """A TCP port nobody listens on at the moment, on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
