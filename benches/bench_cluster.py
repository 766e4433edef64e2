"""`make bench-cluster`: votum's batch work on a Dask LocalCluster against the same work in one process,
same record, same run (spec/98).

1. Task overhead: BENCH_TASKS (default 400) empty tasks, one at a time (round trip) and all at once
   (throughput), then the same with a 64-ballot chunk as the argument (bytes moved per task).
2. Scatter: the ballot-check parameters sent to every worker (`Work` setup), BENCH_REPEAT times.
3. Verification: the record at BENCH_RECORD (default: made here with `votum election --ballots BENCH_N
   --contests 1 --spoil-rate 0.001`, BENCH_N default 16,384, kept under BENCH_DIR) verified in this process
   (rayon, all cores) and on `LocalCluster(BENCH_WORKERS workers of one thread)`, started once before,
   BENCH_REPEAT times each (default 3), alternating; the cluster's reports must equal the in-process one
   (BENCH_LOCAL=0: the cluster only).
4. A mix record's shuffle proofs (spec/98.3): an nVotes-shaped modp-2048 record of BENCH_MIX voters (default
   2,000; 0 skips; 4 mixers, 4 trustees, kept under BENCH_DIR) verified in this process and with its proofs on
   the cluster, BENCH_REPEAT times each, alternating, the reports equal; then the same election run in one
   process and with the trustees' shuffle checks and the verifier's on the cluster, alternating.
4a. A split-value record (spec/98.3): the thesis's election shape with BENCH_SV voters (default 200,000; 0
   skips; kept under BENCH_DIR) verified in this process and with its heavy checks on the cluster, the jobs
   reading the record where it lies, BENCH_REPEAT times each, alternating, the reports equal.
4b. What the client alone costs per ballot (workers that answer at once; BENCH_CLIENT_ALONE=0 skips).
5. The election's encryption and ballot checks (BENCH_ELECTION ballots, default 2,048; 0 skips) in one
   process and on the cluster.

Prints one JSON object per measurement and a summary; the figures go to BENCHMARKS.md by hand.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from votum.cluster import open_client
from votum.cluster.work import Work
from votum.election import ElectionConfig, run_election
from votum.verifier import verify

ROOT = Path(__file__).resolve().parent.parent


def noop(params: Any, x: Any = None) -> int:
    return 0


def emit(**row: Any) -> None:
    print(json.dumps(row), flush=True)


def summary(xs: list[float]) -> dict[str, float]:
    return {"min": round(min(xs), 3), "median": round(statistics.median(xs), 3)}


def task_overhead(client: Any, record: Path) -> None:
    n = int(os.environ.get("BENCH_TASKS", "400"))
    work = Work(client, b"x" * 4096)
    chunk = [p.read_text() for p in sorted((record / "submitted_ballots").iterdir())[:64]]
    for label, arg in (("empty", None), ("64 ballots", chunk)):
        t = time.perf_counter()
        for _ in range(n // 4):
            work.result(work.submit(noop, arg, what="a no-op"))
        one = (time.perf_counter() - t) / (n // 4)
        t = time.perf_counter()
        tasks = [work.submit(noop, arg, what="a no-op") for _ in range(n)]
        for task in tasks:
            work.result(task)
        many = (time.perf_counter() - t) / n
        size = sum(map(len, chunk)) if arg else 0
        emit(
            bench="task overhead",
            argument=label,
            bytes=size,
            round_trip_ms=one * 1e3,
            pipelined_ms=many * 1e3,
        )


def scatter(client: Any, params: bytes, repeat: int) -> None:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        Work(client, params)
        times.append(time.perf_counter() - t)
    emit(bench="scatter", bytes=len(params), seconds=summary(times))


class AllPass:
    """Workers that answer every ballot "passed" at once: what the client alone costs per ballot (reading,
    parsing, merging into its ballot box), the serial part of a verification on any cluster."""

    def setup(self, params: bytes) -> None:
        self.pending: list[int] = []

    def submit(self, ballots: list[str]) -> None:
        self.pending.append(len(ballots))

    def collect(self) -> list[bool]:
        return [True] * self.pending.pop(0)

    def window(self) -> int:
        return 2


def client_alone(record: Path, repeat: int) -> None:
    from votum._native import verify_record_report

    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        verify_record_report(record, None, AllPass())
        times.append(time.perf_counter() - t)
    emit(bench="client alone (verdicts free)", seconds=summary(times))


def mix_record_rows(client: Any, base: Path, voters: int, repeat: int) -> None:
    """An nVotes-shaped mix record (modp-2048, 4 mixers, 4 trustees) verified in process and with its shuffle
    proofs on the cluster (spec/98.3), alternating, with equal reports."""
    from votum.mix import MixConfig, run_mix_election

    path = base / f"mix-modp2048-{voters}.vmix"
    if not path.exists():
        base.mkdir(parents=True, exist_ok=True)
        config = MixConfig(voters=voters, group="modp-2048", candidates=4, mixers=4, trustees=4, quorum=3)
        t = time.perf_counter()
        run_mix_election(config, record=path)
        emit(bench="mix record made", voters=voters, seconds=time.perf_counter() - t)
    compare_verify(client, path, "mix", voters, repeat)


def sv_record_rows(client: Any, base: Path, voters: int, repeat: int) -> None:
    """The thesis-shaped split-value record (one race of two candidates and a 16-character write-in, 3×3
    grid, 2m = 24) verified in process and with its heavy checks on the cluster (spec/98.3), alternating,
    with equal reports."""
    from votum.sv import SvConfig, run_sv_election

    path = base / f"sv-{voters}.vsv"
    if not path.exists():
        base.mkdir(parents=True, exist_ok=True)
        t = time.perf_counter()
        run_sv_election(SvConfig(voters=voters, seed=1), record=path)
        emit(bench="sv record made", voters=voters, seconds=time.perf_counter() - t)
    compare_verify(client, path, "sv", voters, repeat)


def compare_verify(client: Any, path: Path, kind: str, voters: int, repeat: int) -> None:
    local_t: list[float] = []
    cluster_t: list[float] = []
    for _ in range(repeat):
        t = time.perf_counter()
        here = verify(path)
        local_t.append(time.perf_counter() - t)
        t = time.perf_counter()
        there = verify(path, client=client)
        cluster_t.append(time.perf_counter() - t)
        assert here.passed and there.raw == here.raw, "the cluster's report differs"
        emit(bench=f"{kind} verify", voters=voters, in_process_s=local_t[-1], cluster_s=cluster_t[-1])
    emit(
        bench=f"{kind} verify summary",
        voters=voters,
        in_process_s=summary(local_t),
        cluster_s=summary(cluster_t),
        ratio_min=round(min(cluster_t) / min(local_t), 3),
    )


def mix_election_rows(client: Any, base: Path, voters: int, repeat: int) -> None:
    """An nVotes-shaped mixnet election (modp-2048, 4 mixers, 4 trustees) in one process and with the
    trustees' shuffle checks and the verifier's on the cluster (spec/98.3), alternating."""
    from votum.mix import MixConfig, run_mix_election

    config = MixConfig(voters=voters, group="modp-2048", candidates=4, mixers=4, trustees=4, quorum=3)
    for _ in range(repeat):
        for where, kw in (("in process", {}), ("cluster", {"client": client})):
            result = run_mix_election(config, record=base / "mix-election.vmix", **kw)
            assert result.verified and result.multiset_ok
            steps = {s.name: round(s.seconds, 2) for s in result.steps}
            emit(bench="mix election", where=where, voters=voters, steps=steps)


def main() -> None:
    repeat = int(os.environ.get("BENCH_REPEAT", "3"))
    workers = int(os.environ.get("BENCH_WORKERS", "2"))
    n = int(os.environ.get("BENCH_N", "16384"))
    base = Path(os.environ.get("BENCH_DIR", "/tmp/votum-bench-cluster"))
    record = Path(os.environ.get("BENCH_RECORD", base / f"record-{n}"))
    if not record.exists():
        base.mkdir(parents=True, exist_ok=True)
        t = time.perf_counter()
        subprocess.run(
            [Path(sys.executable).with_name("votum"), "election", "--ballots", str(n), "--contests", "1",
             "--spoil-rate", "0.001", "--out", str(record), "--json"],
            check=True, stdout=subprocess.DEVNULL,
        )  # fmt: skip
        emit(bench="record made", ballots=n, seconds=time.perf_counter() - t)
    ballots = len(list((record / "submitted_ballots").iterdir()))
    if os.environ.get("BENCH_CLIENT_ONLY") == "1":
        client_alone(record, repeat)
        return
    with open_client(f"local:{workers}") as client:
        task_overhead(client, record)
        from votum import EgManifest, eg_ballot_check_params
        from votum.eg import run_ceremony

        manifest = EgManifest.from_json((record / "manifest.json").read_text())
        ctx = run_ceremony(manifest, 3, 2).context
        scatter(
            client, eg_ballot_check_params(manifest, ctx.elgamal_public_key, ctx.extended_base_hash), repeat
        )

        local_t: list[float] = []
        cluster_t: list[float] = []
        reference = None
        local = os.environ.get("BENCH_LOCAL", "1") == "1"
        for _ in range(repeat):
            if local:
                t = time.perf_counter()
                report = verify(record)
                local_t.append(time.perf_counter() - t)
                assert report.passed, report.not_passed()
                reference = report.raw
            t = time.perf_counter()
            on_cluster = verify(record, client=client)
            cluster_t.append(time.perf_counter() - t)
            assert on_cluster.passed, on_cluster.not_passed()
            assert reference is None or on_cluster.raw == reference, "the cluster's report differs"
            emit(
                bench="verify",
                ballots=ballots,
                in_process_s=local_t[-1] if local else None,
                cluster_s=cluster_t[-1],
            )
        if local:
            emit(
                bench="verify summary",
                ballots=ballots,
                workers=workers,
                in_process_s=summary(local_t),
                cluster_s=summary(cluster_t),
                ratio_median=round(statistics.median(cluster_t) / statistics.median(local_t), 3),
                ratio_min=round(min(cluster_t) / min(local_t), 3),
            )

        mix = int(os.environ.get("BENCH_MIX", "2000"))
        if mix:
            mix_record_rows(client, base, mix, repeat)
            mix_election_rows(client, base, mix, repeat)
        sv = int(os.environ.get("BENCH_SV", "200000"))
        if sv:
            sv_record_rows(client, base, sv, repeat)
        if os.environ.get("BENCH_CLIENT_ALONE", "1") == "1":
            client_alone(record, repeat)
        m = int(os.environ.get("BENCH_ELECTION", "2048"))
        for label, kw in [] if m == 0 else (("in process", {}), ("cluster", {"client": client})):
            out = base / f"election-{label.replace(' ', '-')}"
            result = run_election(ElectionConfig(ballots=m, contests=1, spoil_rate=0.001, out=out), **kw)
            steps = {s.name: round(s.seconds, 2) for s in result.steps}
            emit(
                bench="election", where=label, ballots=m, steps=steps, total_s=round(result.total_seconds, 2)
            )


if __name__ == "__main__":
    main()
