"""`make bench-cluster-netns` (root): the one point of docs/cluster.md's projection this machine can check.
Two Dask workers, each alone in its own network namespace behind a veth pair and a bridge, the scheduler
and the client in the root namespace, verify the same ElectionGuard record (BENCH_N ballots, default 4,096,
made with `votum election` if missing under BENCH_DIR), with every connection to or between workers carrying
an added one-way delay of each of BENCH_DELAYS milliseconds (default "direct,0,5,25": `direct` without
relays, `0` through the relays with no delay). The kernel has no `sch_netem`, so the delay is added by
`benches/delay_relay.py` in the root namespace: each worker reaches the scheduler through a relay, and
advertises a relay in front of itself as its contact address, so the scheduler, the client and the other
worker all reach it delayed.

Per setting: the task round trip (an empty task, one at a time) and the verification's time, BENCH_REPEAT
times (default 2); every report must equal the in-process one. One JSON object per measurement; figures go
to BENCHMARKS.md by hand.
"""

from __future__ import annotations

import json
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benches"))

from netlab import Lab, available  # noqa: E402
from votum.localnet import free_port  # noqa: E402
from votum.verifier import verify  # noqa: E402

BIN = Path(sys.executable).parent


def emit(**row: Any) -> None:
    print(json.dumps(row), flush=True)


def noop(x: int) -> int:
    return x


def start(args: list[str], ready: str | None = None) -> subprocess.Popen[str]:
    p = subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
    )
    if ready is not None:
        assert p.stdout is not None
        deadline = time.monotonic() + 30
        for line in p.stdout:
            if ready in line:
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"{args[0]} did not say {ready!r}")
    return p


def stop(procs: list[subprocess.Popen[str]]) -> None:
    for p in procs:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGTERM)
    for p in procs:
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()


def one_setting(lab: Lab, record: Path, delay: str, repeat: int, reference: dict[str, Any]) -> None:
    from distributed import Client

    procs: list[subprocess.Popen[str]] = []
    try:
        sched = free_port()
        direct = delay == "direct"
        procs.append(
            start(
                [str(BIN / "dask"), "scheduler", "--host", "0.0.0.0" if direct else "127.0.0.1",
                 "--port", str(sched), "--no-dashboard"],
                ready="Scheduler at",
            )
        )  # fmt: skip
        pairs: list[str] = []
        workers = []
        for i in (1, 2):
            port = free_port()
            if direct:
                to_sched, contact = f"tcp://{lab.root_ip}:{sched}", f"tcp://{lab.ip(i)}:{port}"
            else:
                s_i, c_i = free_port(), free_port()
                pairs += [f"{lab.root_ip}:{s_i}=127.0.0.1:{sched}", f"{lab.root_ip}:{c_i}={lab.ip(i)}:{port}"]
                to_sched, contact = f"tcp://{lab.root_ip}:{s_i}", f"tcp://{lab.root_ip}:{c_i}"
            workers.append(
                [*lab.exec_args(i), "env", "RAYON_NUM_THREADS=1", str(BIN / "dask"), "worker", to_sched,
                 "--nthreads", "1", "--no-nanny", "--no-dashboard", "--listen-address",
                 f"tcp://{lab.ip(i)}:{port}", "--contact-address", contact]
            )  # fmt: skip
        if not direct:
            relay = [sys.executable, str(ROOT / "benches" / "delay_relay.py"), delay, *pairs]
            procs.append(start(relay, "ready"))
        procs += [start(w) for w in workers]
        with Client(f"tcp://127.0.0.1:{sched}", timeout=30) as client:
            client.wait_for_workers(2, timeout=60)
            rtts = []
            for k in range(20):
                t = time.perf_counter()
                client.submit(noop, k, pure=False).result()
                rtts.append(time.perf_counter() - t)
            rtt = round(1000 * statistics.median(rtts), 2)
            emit(bench="netns task round trip", delay_ms=delay, median_ms=rtt)
            times = []
            for _ in range(repeat):
                t = time.perf_counter()
                report = verify(record, client=client)
                times.append(time.perf_counter() - t)
                assert report.raw == reference, "the report across namespaces differs"
                emit(bench="netns verify", delay_ms=delay, seconds=round(times[-1], 2))
            emit(bench="netns verify summary", delay_ms=delay, min_s=round(min(times), 2),
                 median_s=round(statistics.median(times), 2))  # fmt: skip
    finally:
        stop(procs)


def main() -> None:
    reason = available()
    if reason is not None:
        sys.exit(f"bench-cluster-netns: {reason}")
    repeat = int(os.environ.get("BENCH_REPEAT", "2"))
    n = int(os.environ.get("BENCH_N", "4096"))
    base = Path(os.environ.get("BENCH_DIR", "/tmp/votum-bench-cluster"))
    record = base / f"record-{n}"
    if not record.exists():
        base.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [str(BIN / "votum"), "election", "--ballots", str(n), "--contests", "1", "--spoil-rate", "0.001",
             "--out", str(record), "--json"],
            check=True, stdout=subprocess.DEVNULL,
        )  # fmt: skip
    t = time.perf_counter()
    here = verify(record)
    emit(bench="netns in process", ballots=n, seconds=round(time.perf_counter() - t, 2))
    assert here.passed, here.not_passed()
    lab = Lab(2)
    try:
        for delay in os.environ.get("BENCH_DELAYS", "direct,0,5,25").split(","):
            one_setting(lab, record, delay.strip(), repeat, here.raw)
    finally:
        lab.close()


if __name__ == "__main__":
    main()
