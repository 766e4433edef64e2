"""Ballot intake while anonymous clients loop on the record export (issue 43, item 1).

`votum serve` runs on 127.0.0.1 in its own process (SQLite). After a key ceremony, `BENCH_PRELOAD`
ballots (default 1,000) are cast so that the record is not trivial, then one device submits
`BENCH_N` ballots (default 300), one per request, a third in each phase: alone, then while
`BENCH_READERS` anonymous clients (default 40) loop, reading every byte: first on the election's status
(a cheap read: the cost of the request flood itself), then on `GET /v1/elections/{id}/record`. Printed:
the device's request latency (p50, p95) alone and in both floods, and the readers' answers by status
(503: `record_downloads` full).

    BENCH_READERS=40 .venv/bin/python benches/bench_service_attack.py   (make bench-service-attack)
"""

from __future__ import annotations

import os
import statistics
import tempfile
import threading
import time

import httpx
from votum.client import Client
from votum.client.election import ElectionDriver, Plan, Tokens
from votum.eg import manifest_from_names
from votum.service.local import peak_rss_mib, start_server


def percentile(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


def submit(base: str, token: str, election: str, plans: list[Plan], driver: ElectionDriver) -> list[float]:
    latencies = []
    with Client(base, timeout=600) as c:
        for p in plans:
            t0 = time.perf_counter()
            c.post(f"/v1/elections/{election}/ballots", {"ballot": p.ballot, "state": p.state}, token=token)
            latencies.append(time.perf_counter() - t0)
            driver.count([p])
    return latencies


def main() -> None:
    preload = int(os.environ.get("BENCH_PRELOAD", "1000"))
    n = int(os.environ.get("BENCH_N", "300"))
    readers = int(os.environ.get("BENCH_READERS", "40"))
    tokens = Tokens.generate(3)
    manifest = manifest_from_names(["Party"], ["a", "b", "c", "d"])
    with tempfile.TemporaryDirectory() as data:
        options = ["--data-dir", data, "--log-level", "warning", "--no-seed-endpoints"]
        server, base = start_server(options, {**os.environ, "VOTUM_TOKENS": tokens.env()})
        try:
            with Client(base, timeout=600) as admin:
                driver = ElectionDriver(admin, tokens, "attacked", manifest, 2)
                driver.ceremony()
                plans, _ = driver.plan_chain(preload + n, driver.register_device(7))
                for i in range(0, preload, 100):
                    driver.submit(plans[i : i + 100])
                per_phase = n // 3
                alone = submit(base, tokens.device, "attacked", plans[preload : preload + per_phase], driver)
                results: dict[str, tuple[list[float], dict[int, int]]] = {}
                # a cheap public read first (the election's status): what a flood of requests costs
                # whatever they ask; then the record
                for k, path in enumerate(("/v1/elections/attacked", "/v1/elections/attacked/record")):
                    stop = threading.Event()
                    statuses: dict[int, int] = {}
                    lock = threading.Lock()

                    def reader(
                        path: str = path,
                        stop: threading.Event = stop,
                        statuses: dict[int, int] = statuses,
                        lock: threading.Lock = lock,
                    ) -> None:
                        with httpx.Client(base_url=base, timeout=600) as c:
                            while not stop.is_set():
                                with c.stream("GET", path) as r:
                                    for _ in r.iter_bytes(1 << 16):
                                        pass
                                with lock:
                                    statuses[r.status_code] = statuses.get(r.status_code, 0) + 1

                    threads = [threading.Thread(target=reader) for _ in range(readers)]
                    for t in threads:
                        t.start()
                    time.sleep(2)  # the readers are at it before the device starts
                    start = preload + per_phase * (k + 1)
                    lat = submit(base, tokens.device, "attacked", plans[start : start + per_phase], driver)
                    stop.set()
                    for t in threads:
                        t.join()
                    results[path] = (lat, statuses)
            peak = peak_rss_mib(server.pid)
        finally:
            server.terminate()
            server.wait(timeout=60)
    p95a = percentile(alone, 0.95) * 1e3
    print(f"device alone: p50 {statistics.median(alone) * 1e3:.1f} ms, p95 {p95a:.1f} ms", flush=True)
    for path, (lat, statuses) in results.items():
        p95 = percentile(lat, 0.95) * 1e3
        print(
            f"{readers} readers looping on {path}: device p50 {statistics.median(lat) * 1e3:.1f} ms, "
            f"p95 {p95:.1f} ms (p95 {p95 / p95a:.2f}x alone); "
            f"reader answers {dict(sorted(statuses.items()))}",
            flush=True,
        )
    print(f"board of {preload + 3 * (n // 3)} ballots; server peak {peak:.0f} MiB", flush=True)


if __name__ == "__main__":
    main()
