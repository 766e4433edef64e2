"""Sustained ballot submissions through the stateful API (`/v1`), on SQLite and on PostgreSQL.

`votum serve` runs on 127.0.0.1 in its own process over each store (SQLite WAL in a temporary
directory; PostgreSQL from `votum.store.tempdb`); the driver runs a whole election (3 guardians,
quorum 2, one contest of 4 candidates): ballots are encrypted by the client, then submitted, every
proof verified by the server and every batch committed durably with its board entries and the
running tally. The rate counts only the time spent in submission requests (the client's encryption
is timed apart). Then the election is closed, decrypted, published and its board re-linked.

    BENCH_N=2000 BENCH_SINGLE=300 .venv/bin/python benches/bench_service_v1.py   (make bench-service-v1)
    BENCH_WORKERS=2 …                                                            (two server processes)
    BENCH_LARGE=131072 .venv/bin/python benches/bench_service_v1.py             (one long run on SQLite)
    BENCH_LARGE=131072 BENCH_STORE=postgresql .venv/bin/python benches/bench_service_v1.py   (on PostgreSQL)
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from votum.client import Client
from votum.client.election import ElectionDriver, Plan, Tokens, check_board, run_stateful_election
from votum.eg import manifest_from_names
from votum.service.local import peak_rss_mib, start_server
from votum.store.tempdb import TemporaryPostgres


def serve(url: str, tokens: Tokens, data: str) -> tuple[subprocess.Popen[bytes], str]:
    options = ["--data-dir", data, "--database-url", url, "--log-level", "warning", "--no-seed-endpoints"]
    options += ["--workers", os.environ.get("BENCH_WORKERS", "1")]
    return start_server(options, {**os.environ, "VOTUM_TOKENS": tokens.env()})


def run(store: str, url: str, data: str, n: int, batch: int) -> None:
    tokens = Tokens.generate(3)
    manifest = manifest_from_names(["Party"], ["a", "b", "c", "d"])
    server, base = serve(url, tokens, data)
    try:
        with Client(base, timeout=600) as client:
            r = run_stateful_election(
                client, tokens, f"bench-{batch}", manifest, n, 2, batch=batch, missing=1
            )
        peak = peak_rss_mib(server.pid)
    finally:
        server.terminate()
        server.wait(timeout=60)
    calls = sorted(r.latencies["POST ballots/batch"])
    p95 = calls[min(len(calls) - 1, round(0.95 * (len(calls) - 1)))]
    print(
        f"{store:10} batch={batch:4d} N={n:6d}: {r.ballots_per_second:7.1f} ballots/s stored "
        f"(request p50 {statistics.median(calls) * 1e3:7.1f} ms, p95 {p95 * 1e3:7.1f} ms); "
        f"client encryption {r.stages['encryption (client)']:.1f} s; "
        f"ceremony {r.stages['key ceremony']:.2f} s; close+shares+publish {r.stages['decryption']:.2f} s; "
        f"board head {r.head['seq']}; server peak {peak:.0f} MiB",
        flush=True,
    )
    print(
        f"{'':10} board check {r.stages['board check']:.1f} s; client peak MiB after each stage: "
        + ", ".join(f"{k} {v:.0f}" for k, v in r.peak_mib.items()),
        flush=True,
    )


def concurrent(store: str, url: str, data: str, per_device: int, devices: int) -> None:
    """`devices` devices, each on its own connection and its own chain of ballot codes, submitting one
    ballot per request at the same time (ballots encrypted before the clock starts)."""
    tokens = Tokens.generate(3)
    manifest = manifest_from_names(["Party"], ["a", "b", "c", "d"])
    server, base = serve(url, tokens, data)
    try:
        with Client(base, timeout=600) as admin:
            driver = ElectionDriver(admin, tokens, f"bench-concurrent-{devices}", manifest, 2)
            driver.ceremony()
            chains = []
            for d in range(devices):
                plans, _ = driver.plan_chain(per_device, driver.register_device(100 + d))
                chains.append(plans)
            latencies: list[float] = []
            lock = threading.Lock()

            def device(plans: list[Plan]) -> None:
                with Client(base, timeout=600) as c:
                    for p in plans:
                        t0 = time.perf_counter()
                        c.post(
                            f"/v1/elections/{driver.election_id}/ballots",
                            {"ballot": p.ballot, "state": p.state},
                            token=tokens.device,
                        )
                        with lock:
                            latencies.append(time.perf_counter() - t0)
                        driver.count([p])

            t0 = time.perf_counter()
            threads = [threading.Thread(target=device, args=(plans,)) for plans in chains]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            seconds = time.perf_counter() - t0
            counts = driver.decrypt_and_publish(missing=1)
            assert counts == driver.expected, "published counts differ from the votes cast"
            head = check_board(admin, driver.election_id)
        peak = peak_rss_mib(server.pid)
    finally:
        server.terminate()
        server.wait(timeout=60)
    latencies.sort()
    n = devices * per_device
    p95 = latencies[min(len(latencies) - 1, round(0.95 * (len(latencies) - 1)))]
    print(
        f"{store:10} {devices} devices x 1 ballot/request, N={n:5d}: {n / seconds:7.1f} ballots/s stored "
        f"(request p50 {statistics.median(latencies) * 1e3:6.1f} ms, p95 {p95 * 1e3:6.1f} ms); "
        f"board head {head['seq']}; server peak {peak:.0f} MiB",
        flush=True,
    )


def main() -> None:
    large = int(os.environ.get("BENCH_LARGE", "0"))
    if large:
        # one long run (BENCH_LARGE=131072: the seed's largest N through /v1), batches of 500, on SQLite
        # or, with BENCH_STORE=postgresql, on PostgreSQL; the client's peak memory is this process's
        store = os.environ.get("BENCH_STORE", "sqlite")
        with tempfile.TemporaryDirectory() as data:
            if store == "postgresql":
                with TemporaryPostgres() as pg:
                    run(store, pg.new_database(), data, large, 500)
                    size = sum(f.stat().st_size for f in pg.data.rglob("*") if f.is_file())
            else:
                run(store, f"sqlite:///{data}/votum.db", data, large, 500)
                size = Path(data, "votum.db").stat().st_size + sum(
                    p.stat().st_size for p in Path(data).glob("votum.db-*")
                )
        client = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"database {size / 2**30:.2f} GiB; client peak {client:.0f} MiB", flush=True)
        return
    n = int(os.environ.get("BENCH_N", "2000"))
    single = int(os.environ.get("BENCH_SINGLE", "300"))
    with tempfile.TemporaryDirectory() as data:
        run("sqlite", f"sqlite:///{data}/votum.db", data, n, 100)
        run("sqlite", f"sqlite:///{data}/votum.db", data, single, 1)
        concurrent("sqlite", f"sqlite:///{data}/votum.db", data, single // 4, 4)
        with TemporaryPostgres() as pg:
            url = pg.new_database()
            run("postgresql", url, data, n, 100)
            run("postgresql", url, data, single, 1)
            concurrent("postgresql", url, data, single // 4, 4)


if __name__ == "__main__":
    main()
