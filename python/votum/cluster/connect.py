"""Opening a Dask client for a run (spec/98.6): a running scheduler by address, or a LocalCluster."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from votum.cluster.safe_pickle import restricted
from votum.errors import ClusterError, InvalidInput
from votum.localnet import is_loopback

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


def check_address(scheduler: str, *, plaintext: bool = False) -> None:
    """Raises `InvalidInput` unless `scheduler` is `local:N` (1 ≤ N ≤ 256), `tls://…`, or `tcp://…` on
    a loopback address. `tcp://` beyond this machine is plaintext with no authentication: anyone on
    the network path, or any worker that joins, answers for the cluster (issue 43, item 7); it is
    accepted only with `plaintext` (`--plaintext-scheduler`), and the report then says so."""
    m = _LOCAL.fullmatch(scheduler)
    if m:
        if not 1 <= int(m.group(1)) <= 256:
            raise InvalidInput(f"--scheduler {scheduler}: a local cluster has 1 to 256 workers")
        return
    address = re.fullmatch(r"(tcp|tls)://([^\s/]+):\d{1,5}", scheduler)
    if not address:
        raise InvalidInput(f"--scheduler {scheduler!r}: expected local:N, tcp://HOST:PORT or tls://HOST:PORT")
    if address.group(1) == "tcp" and not plaintext and not is_loopback(address.group(2)):
        raise InvalidInput(
            f"--scheduler {scheduler}: tcp:// is plaintext and unauthenticated, so beyond this machine "
            "anyone on the network, and any worker that joins, can answer for the cluster. Use tls:// with "
            "the deployment's certificates, or accept it with --plaintext-scheduler (the report says so)"
        )


def is_plaintext_remote(scheduler: str) -> bool:
    """Whether `scheduler` is `tcp://` to an address beyond this machine."""
    address = re.fullmatch(r"tcp://([^\s/]+):\d{1,5}", scheduler)
    return address is not None and not is_loopback(address.group(1))


@contextmanager
def open_client(
    scheduler: str,
    *,
    tls: TlsFiles | None = None,
    announce: Callable[[str], None] | None = None,
    plaintext: bool = False,
) -> Iterator[Any]:
    """A `distributed.Client` for the run, closed after it. `local:N` starts a LocalCluster of N worker
    processes of one thread (and one rayon thread) each, stopped after the run. `announce` is told the
    dashboard's address. A running scheduler's client unpickles nothing but plain data and
    exceptions (`safe_pickle`); `plaintext` accepts `tcp://` beyond this machine (`check_address`)."""
    check_address(scheduler, plaintext=plaintext)
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
    with restricted():
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
    plaintext: bool = False,
) -> Iterator[Any]:
    """The client a function runs on: `client` as given (left open), a client opened for `scheduler`
    (closed after), or None when neither is given (the work runs in this process)."""
    if client is not None and scheduler is not None:
        raise InvalidInput("give a scheduler or a client, not both")
    if client is not None:
        yield client
    elif scheduler is not None:
        with open_client(scheduler, tls=TlsFiles.of(tls), announce=announce, plaintext=plaintext) as c:
            yield c
    else:
        yield None
