"""Opening a Dask client for a run (spec/98.6): a running scheduler by address, or a LocalCluster."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from votum.errors import ClusterError, InvalidInput

#: seconds to wait for a scheduler to answer when connecting
CONNECT_TIMEOUT = 30.0

_LOCAL = re.compile(r"local:(\d{1,3})")


@dataclass(frozen=True)
class TlsFiles:
    """The client's side of a `tls://` scheduler: the deployment's CA and this client's certificate."""

    ca: str
    cert: str
    key: str

    @classmethod
    def of(cls, files: tuple[str, str, str] | TlsFiles | None) -> TlsFiles | None:
        """From (CA, certificate, key) paths, or as given."""
        if files is None or isinstance(files, TlsFiles):
            return files
        ca, cert, key = files
        return cls(str(ca), str(cert), str(key))


def _security(tls: TlsFiles | None) -> Any:
    if tls is None:
        return None
    from distributed.security import Security

    return Security(  # type: ignore[no-untyped-call]
        tls_ca_file=tls.ca, tls_client_cert=tls.cert, tls_client_key=tls.key, require_encryption=True
    )


def check_address(scheduler: str) -> None:
    """Raises `InvalidInput` unless `scheduler` is `local:N` (1 ≤ N ≤ 256), `tcp://…` or `tls://…`."""
    m = _LOCAL.fullmatch(scheduler)
    if m:
        if not 1 <= int(m.group(1)) <= 256:
            raise InvalidInput(f"--scheduler {scheduler}: a local cluster has 1 to 256 workers")
        return
    if not re.fullmatch(r"(tcp|tls)://[^\s/]+:\d{1,5}", scheduler):
        raise InvalidInput(f"--scheduler {scheduler!r}: expected local:N, tcp://HOST:PORT or tls://HOST:PORT")


@contextmanager
def open_client(
    scheduler: str, *, tls: TlsFiles | None = None, announce: Callable[[str], None] | None = None
) -> Iterator[Any]:
    """A `distributed.Client` for the run, closed after it. `local:N` starts a LocalCluster of N worker
    processes of one thread (and one rayon thread) each, stopped after the run. `announce` is told the
    dashboard's address."""
    check_address(scheduler)
    from distributed import Client, LocalCluster

    m = _LOCAL.fullmatch(scheduler)
    if m:
        with (
            LocalCluster(  # type: ignore[no-untyped-call]
                n_workers=int(m.group(1)),
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                dashboard_address="127.0.0.1:0",
                silence_logs=logging.ERROR,
                # a worker's native code uses one core: the cluster's parallelism is its workers
                env={"RAYON_NUM_THREADS": "1"},
            ) as cluster,
            Client(cluster) as client,  # type: ignore[no-untyped-call]
        ):
            if announce is not None:
                announce(client.dashboard_link)
            yield client
        return
    try:
        client = Client(scheduler, security=_security(tls), timeout=CONNECT_TIMEOUT)  # type: ignore[no-untyped-call]
    except (OSError, TimeoutError) as e:
        raise ClusterError(f"cannot reach the scheduler at {scheduler}: {e}") from e
    with client:
        if announce is not None:
            announce(client.dashboard_link)
        yield client


@contextmanager
def using(
    scheduler: str | None = None,
    client: Any = None,
    *,
    tls: tuple[str, str, str] | TlsFiles | None = None,
    announce: Callable[[str], None] | None = None,
) -> Iterator[Any]:
    """The client a function runs on: `client` as given (left open), a client opened for `scheduler`
    (closed after), or None when neither is given (the work runs in this process)."""
    if client is not None and scheduler is not None:
        raise InvalidInput("give a scheduler or a client, not both")
    if client is not None:
        yield client
    elif scheduler is not None:
        with open_client(scheduler, tls=TlsFiles.of(tls), announce=announce) as c:
            yield c
    else:
        yield None
