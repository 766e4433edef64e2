"""The load generator: the seed's scalability run (shared/seeds/000: 32 → 131,072 ballots, doubling,
tally chunks of 1,000) through the six seed endpoints. Ballots are encrypted, tallied and decrypted
chunk by chunk, so the client's memory does not grow with N; the final counts must equal the
counts of the votes the generator chose."""

from __future__ import annotations

import random
import statistics
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from votum.client import Client, election_key
from votum.client.election import Progress, quiet
from votum.errors import VerificationFailed


@dataclass
class SeedRun:
    ballots: int
    chunks: int
    seconds: float
    expected: dict[str, int]
    counts: dict[str, int]
    spoiled: int = 0
    spoiled_decrypted: int = 0
    latencies: dict[str, list[float]] = field(default_factory=dict)
    #: the last chunk's decryption requests (endpoint -> body), for timing them again on a warm server
    last_requests: dict[str, dict[str, Any]] = field(default_factory=dict, repr=False)


def latency_rows(latencies: dict[str, list[float]]) -> list[tuple[str, int, float, float, float, float]]:
    """(endpoint, calls, p50 ms, p95 ms, max ms, total s) for each endpoint."""
    rows = []
    for name, xs in sorted(latencies.items()):
        ordered = sorted(xs)
        p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
        rows.append((name, len(xs), statistics.median(xs) * 1e3, p95 * 1e3, ordered[-1] * 1e3, sum(xs)))
    return rows


def seed_election(
    client: Client,
    ballots: int,
    chunk: int = 1000,
    guardians: int = 5,
    quorum: int = 3,
    missing: int = 2,
    candidates: int = 4,
    spoil_rate: float = 0.0,
    seed: int = 2026,
    progress: Progress = quiet,
) -> SeedRun:
    """One election through the seed endpoints; raises VerificationFailed when the decrypted counts
    differ from the generated votes."""
    rng = random.Random(seed)
    parties = ["party-1", "party-2"]
    names = [f"candidate-{i + 1}" for i in range(candidates)]
    t0 = time.perf_counter()
    setup = client.setup_guardians(parties, names, guardians, quorum)
    key = election_key(setup, parties, names)
    private = {p["guardian_id"]: p["private_key"] for p in setup["private_keys"]}
    data = {g["id"]: g for g in setup["guardian_data"]}
    ids = [g["id"] for g in sorted(setup["guardian_data"], key=lambda g: g["sequence_order"])]
    present, absent = ids[: guardians - missing], ids[guardians - missing :]
    expected: Counter[str] = Counter()
    totals: Counter[str] = Counter()
    code: str | None = None
    done = 0
    chunks = spoiled_total = spoiled_decrypted = 0
    last_requests: dict[str, dict[str, Any]] = {}
    while done < ballots:
        size = min(chunk, ballots - done)
        encrypted = []
        for i in range(done, done + size):
            choice = rng.choice(names)
            state = "spoiled" if rng.random() < spoil_rate else "cast"
            if state == "cast":
                expected[choice] += 1
            out = client.create_encrypted_ballot(
                key, ballot_id=f"ballot-{i:07d}", candidate_name=choice, code_seed=code, state=state
            )
            code = out["ballot_code"]
            encrypted.append(out["encrypted_ballot"])
            progress("encrypt", i + 1, ballots)
        tally = client.create_encrypted_tally(key, encrypted)
        del encrypted
        spoiled = tally["spoiled_ballots"]
        common = {"ciphertext_tally": tally["ciphertext_tally"], "spoiled_ballots": spoiled}
        answers = [
            client.create_partial_decryption(key, guardian_id=gid, private_key=private[gid], **common)
            for gid in present
        ]
        for mid in absent:
            for gid in present:
                answers.append(
                    client.create_compensated_decryption(
                        key,
                        available_guardian_id=gid,
                        missing_guardian_id=mid,
                        private_key=private[gid],
                        missing_guardian_data=data[mid],
                        **common,
                    )
                )
        shares = [a["tally_share"] for a in answers]
        ballot_shares: dict[str, list[Any]] = {}
        for a in answers:
            for ballot_id, message in a["ballot_shares"].items():
                ballot_shares.setdefault(ballot_id, []).append(message)
        combine = {
            "guardian_data": setup["guardian_data"],
            "tally_shares": shares,
            "ballot_shares": ballot_shares,
            **common,
        }
        result = client.combine_decryption_shares(key, **combine)
        last_requests = {"/combine_decryption_shares": {**key, **combine}}
        for name, info in result["results"]["candidates"].items():
            totals[name] += int(info["votes"])
        spoiled_total += len(spoiled)
        spoiled_decrypted += len(result["spoiled_ballots"])
        done += size
        chunks += 1
        progress("chunks", done, ballots)
    counts = {n: totals[n] for n in names}
    want = {n: expected[n] for n in names}
    run = SeedRun(
        ballots=ballots,
        chunks=chunks,
        seconds=time.perf_counter() - t0,
        expected=want,
        counts=counts,
        spoiled=spoiled_total,
        spoiled_decrypted=spoiled_decrypted,
        latencies={k: list(v) for k, v in client.latencies.items()},
        last_requests=last_requests,
    )
    if counts != want:
        raise VerificationFailed(f"decrypted counts {counts} differ from the generated votes {want}")
    if spoiled_decrypted != spoiled_total:
        raise VerificationFailed(f"{spoiled_total} ballots spoiled, {spoiled_decrypted} decrypted")
    return run


def doubling(start: int, stop: int) -> list[int]:
    """32, 64, ..., stop (the seed's ballot counts)."""
    sizes = []
    n = start
    while n <= stop:
        sizes.append(n)
        n *= 2
    return sizes
