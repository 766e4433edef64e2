"""The seed endpoints over real HTTP: `votum serve` on 127.0.0.1 in its own process, the load
client (MessagePack, keep-alive) running the seed's election with tally chunks of 1,000 ballots,
5 guardians, quorum 3, 2 missing, one contest of 4 candidates. Prints p50/p95/max per endpoint
(client side), the total time, and the peak memory of server and client.

    BENCH_N=2000 .venv/bin/python benches/bench_service_seed.py      (make bench-service)

Then `/setup_guardians` and `/combine_decryption_shares` again, BENCH_REPEAT times each (20), on the warm
server: their p50 is the figure the seed's targets compare with.
"""

from __future__ import annotations

import os
import resource
import statistics
import tempfile
import time

from votum.client import Client
from votum.client.load import latency_rows, seed_election
from votum.service.local import peak_rss_mib, start_server


def main() -> None:
    n = int(os.environ.get("BENCH_N", "2000"))
    chunk = int(os.environ.get("BENCH_CHUNK", "1000"))
    repeat = int(os.environ.get("BENCH_REPEAT", "20"))
    with tempfile.TemporaryDirectory() as data:
        env = {**os.environ, "VOTUM_TOKENS": "admin=bench-admin-token-0123456789"}
        server, url = start_server(["--data-dir", data, "--log-level", "warning"], env)
        try:
            with Client(url) as client:
                run = seed_election(client, n, chunk=chunk, guardians=5, quorum=3, missing=2, candidates=4)
                # the run calls setup once, on a cold server, and combine once per chunk; then
                # `repeat` more of each on the warm server (combine: the last chunk's request again)
                warm: dict[str, list[float]] = {"/setup_guardians": [], "/combine_decryption_shares": []}
                combine = run.last_requests["/combine_decryption_shares"]
                for _ in range(repeat):
                    t0 = time.perf_counter()
                    client.setup_guardians(
                        ["party-1", "party-2"], [f"candidate-{i}" for i in range(1, 5)], 5, 3
                    )
                    warm["/setup_guardians"].append((time.perf_counter() - t0) * 1e3)
                    t0 = time.perf_counter()
                    client.post("/combine_decryption_shares", combine)
                    warm["/combine_decryption_shares"].append((time.perf_counter() - t0) * 1e3)
            server_peak = peak_rss_mib(server.pid)
        finally:
            server.terminate()
            server.wait(timeout=30)
    client_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"N={n} chunk={chunk}: {run.seconds:.1f} s, {n / run.seconds:.1f} ballots/s, counts match")
    print(f"peak RSS: server {server_peak:.0f} MiB, client {client_peak:.0f} MiB")
    print(f"{'endpoint':34} {'calls':>6} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'total s':>8}")
    for name, calls, p50, p95, mx, total in latency_rows(run.latencies):
        print(f"{name:34} {calls:6d} {p50:8.1f} {p95:8.1f} {mx:8.1f} {total:8.1f}")
    for name, xs in warm.items():
        xs.sort()
        print(
            f"{name} on the warm server, {len(xs)} calls: p50 {statistics.median(xs):.1f} ms, "
            f"min {xs[0]:.1f}, max {xs[-1]:.1f}"
        )


if __name__ == "__main__":
    main()
