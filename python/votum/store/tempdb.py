"""A throwaway PostgreSQL server in a temporary directory, for tests and benchmarks.

Uses Debian's `postgresql` binaries (`/usr/lib/postgresql/<version>/bin`, installed by
`scripts/setup.sh`): `initdb` a cluster, start it on 127.0.0.1 and a free port with a private socket
directory, hand out fresh databases, stop it and remove everything on exit. As root the server runs
as the `postgres` user (PostgreSQL refuses to run as root).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path
from types import TracebackType

from votum.errors import VotumError
from votum.localnet import free_port


class PostgresUnavailable(VotumError):
    """No PostgreSQL server binaries on this machine (run `make setup`)."""


def find_bindir() -> Path:
    candidates = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: int(p.parts[-3]))
    if candidates:
        return candidates[-1].parent
    found = shutil.which("initdb")
    if found:
        return Path(found).parent
    raise PostgresUnavailable(
        "PostgreSQL's initdb was not found; `make setup` installs the postgresql package"
    )


class TemporaryPostgres:
    """`with TemporaryPostgres() as pg: url = pg.new_database()`."""

    def __init__(self) -> None:
        self.bindir = find_bindir()
        self.root = Path(tempfile.mkdtemp(prefix="votum-pg-"))
        self.data = self.root / "data"
        self.port = free_port()
        self.user = "votum"
        self._as_root = os.geteuid() == 0
        self._started = False

    def _run(self, *args: str) -> None:
        cmd = [str(self.bindir / args[0]), *args[1:]]
        if self._as_root:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
        if done.returncode != 0:
            raise PostgresUnavailable(f"{args[0]} failed: {done.stderr.strip()[-2000:]}")

    def start(self) -> TemporaryPostgres:
        if self._as_root:
            shutil.chown(self.root, "postgres")
            self.root.chmod(0o700)
        self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", self.user, "-E", "UTF8", "--no-sync")
        options = f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.root} -c max_connections=200"
        self._run(
            "pg_ctl",
            "-D",
            str(self.data),
            "-o",
            options,
            "-l",
            str(self.root / "log"),
            "-w",
            "-t",
            "60",
            "start",
        )
        self._started = True
        return self

    def stop(self) -> None:
        if self._started:
            try:
                self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
            finally:
                self._started = False
        shutil.rmtree(self.root, ignore_errors=True)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://{self.user}@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        """A fresh, empty database on this server; its URL."""
        import psycopg

        name = "votum_" + uuid.uuid4().hex[:12]
        with psycopg.connect(
            f"host=127.0.0.1 port={self.port} user={self.user} dbname=postgres", autocommit=True
        ) as c:
            c.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def __enter__(self) -> TemporaryPostgres:
        return self.start()

    def __exit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
