"""Ballot intake while anonymous clients attack the service (issue 43, items 1, 2 and 4).

`votum serve` runs on 127.0.0.1 in its own process (SQLite). After a key ceremony, `BENCH_PRELOAD`
ballots (default 1,000) are cast so that the record is not trivial, then one device submits
`BENCH_N` ballots (default 300), one per request, a fifth in each phase:

1. alone;
2. while `BENCH_READERS` anonymous clients (default 40) loop on the election's status, reading every
   byte (a cheap read: the cost of the request flood itself);
3. while they loop on `GET /v1/elections/{id}/record` (item 1);
4. while they each hold a request for `GET …/board?limit=1000` with payloads and read nothing (item 2:
   the server's resident memory is printed before and during);
5. while an anonymous client asks for "verify the record now" every 2 s (item 4: a verifier run
   overlaps the phase; the page's state at its end is printed).

Printed: the device's request latency (p50, p95) in each phase and the readers' answers by status.

    BENCH_READERS=40 .venv/bin/python benches/bench_service_attack.py   (make bench-service-attack)
"""

from __future__ import annotations

import os
import socket
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

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


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def looping_reader(base: str, path: str, stop: threading.Event, statuses: dict[int, int], lock: Any) -> None:
    with httpx.Client(base_url=base, timeout=600) as c:
        while not stop.is_set():
            with c.stream("GET", path) as r:
                for _ in r.iter_bytes(1 << 16):
                    pass
            with lock:
                statuses[r.status_code] = statuses.get(r.status_code, 0) + 1


def stalled_reader(base: str, path: str, stop: threading.Event, statuses: dict[int, int], lock: Any) -> None:
    """Asks for `path` and reads nothing until told to stop; asks again when the server drops it."""
    port = int(base.rsplit(":", 1)[1])
    while not stop.is_set():
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", port))
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        with lock:
            statuses[0] = statuses.get(0, 0) + 1  # requests left unread
        stop.wait()
        sock.close()


def verify_asker(base: str, path: str, stop: threading.Event, statuses: dict[int, int], lock: Any) -> None:
    with httpx.Client(base_url=base, timeout=600) as c:
        while not stop.is_set():
            r = c.post(path)
            with lock:
                statuses[r.status_code] = statuses.get(r.status_code, 0) + 1
            stop.wait(2.0)


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
                per_phase = n // 5
                alone = submit(base, tokens.device, "attacked", plans[preload : preload + per_phase], driver)
                results: dict[str, tuple[list[float], dict[int, int], str]] = {}
                phases = (
                    ("looping on /v1/elections/attacked", looping_reader, "/v1/elections/attacked", readers),
                    ("looping on …/record", looping_reader, "/v1/elections/attacked/record", readers),
                    (
                        "holding unread …/board?limit=1000",
                        stalled_reader,
                        "/v1/elections/attacked/board?limit=1000",
                        readers,
                    ),
                    ("asking to verify every 2 s", verify_asker, "/elections/attacked/verification", 1),
                )
                for k, (label, attacker, path, count) in enumerate(phases):
                    stop = threading.Event()
                    statuses: dict[int, int] = {}
                    lock = threading.Lock()
                    before = rss_mib(server.pid)
                    threads = [
                        threading.Thread(target=attacker, args=(base, path, stop, statuses, lock))
                        for _ in range(count)
                    ]
                    for t in threads:
                        t.start()
                    time.sleep(2)  # the attackers are at it before the device starts
                    start = preload + per_phase * (k + 1)
                    lat = submit(base, tokens.device, "attacked", plans[start : start + per_phase], driver)
                    during = rss_mib(server.pid)
                    note = f"server RSS {before:.0f} -> {during:.0f} MiB"
                    if attacker is verify_asker:
                        page = httpx.get(f"{base}/elections/attacked/verification").text
                        note += "; a verifier run was " + ("still running" if "running" in page else "done")
                    stop.set()
                    for t in threads:
                        t.join()
                    results[f"{count} {label}"] = (lat, statuses, note)
            peak = peak_rss_mib(server.pid)
        finally:
            server.terminate()
            server.wait(timeout=60)
    p95a = percentile(alone, 0.95) * 1e3
    print(f"device alone: p50 {statistics.median(alone) * 1e3:.1f} ms, p95 {p95a:.1f} ms", flush=True)
    for label, (lat, statuses, note) in results.items():
        p95 = percentile(lat, 0.95) * 1e3
        print(
            f"{label}: device p50 {statistics.median(lat) * 1e3:.1f} ms, "
            f"p95 {p95:.1f} ms (p95 {p95 / p95a:.2f}x alone); "
            f"attackers' answers {dict(sorted(statuses.items()))} (0: left unread); {note}",
            flush=True,
        )
    print(f"board of {preload + 5 * (n // 5)} ballots; server peak {peak:.0f} MiB", flush=True)


if __name__ == "__main__":
    main()
