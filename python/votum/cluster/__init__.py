"""votum's heavy batch work on a Dask cluster (spec/98).

One party's compute, inside that party's trust domain: a Dask client runs arbitrary code on its workers,
so a cluster is never the channel between election parties. A run on a cluster gives the same record,
report and recomputed values as the same run in one process.

- `connect`: `open_client(scheduler)` (`local:N`, `tcp://…`, `tls://…`), `using(scheduler, client)`;
- `tasks`: the pure functions the workers run, on bytes and strings, with per-worker caches;
- `ballots`: an ElectionGuard record's ballot checks as the verifier's `BallotWorkers`;
- `election`: an election's encryption and ballot checks in chunks.
"""

from __future__ import annotations

from votum.cluster.ballots import DaskBallotWorkers
from votum.cluster.connect import TlsFiles, check_address, open_client, using

__all__ = ["DaskBallotWorkers", "TlsFiles", "check_address", "open_client", "using"]
