"""Paired A/B of the seed endpoints `/setup_guardians` and `/combine_decryption_shares`: two warm
servers run side by side, one from this tree and one from another code base (OLD_PYTHONPATH: its
`python` folder, holding its own native module), and every round sends the same request to both,
one after the other, in alternating order. Both see the same machine noise, so the ratio of each
pair is the figure to read (this machine's speed swings by 2× within minutes). A small seed
election (5 guardians, quorum 3, 2 missing, 100 ballots) makes the combine request.

    OLD_PYTHONPATH=/tmp/oldtree/python REPEAT=40 .venv/bin/python benches/ab_seed_endpoints.py
"""

import os
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack

from votum.client import Client
from votum.client.load import seed_election
from votum.service.local import start_server

REPEAT = int(os.environ.get("REPEAT", "40"))


def timed(f) -> float:
    t = time.perf_counter()
    f()
    return (time.perf_counter() - t) * 1e3


def main() -> None:
    old_path = os.environ.get("OLD_PYTHONPATH")
    if not old_path:
        sys.exit("set OLD_PYTHONPATH to the other tree's python folder")
    parties, names = ["party-1", "party-2"], [f"candidate-{i}" for i in range(1, 5)]
    base = {**os.environ, "VOTUM_TOKENS": "admin=bench-admin-token-0123456789"}
    base.pop("PYTHONPATH", None)
    with ExitStack() as stack:
        clients = {}
        for label, env in (("new", base), ("old", {**base, "PYTHONPATH": old_path})):
            data = stack.enter_context(tempfile.TemporaryDirectory())
            server, url = start_server(["--data-dir", data, "--log-level", "warning"], env)
            stack.callback(server.wait, 30)
            stack.callback(server.terminate)
            clients[label] = stack.enter_context(Client(url))
        # the seed's own run (setup, 100 ballots, shares with 2 guardians missing) makes the request
        run = seed_election(clients["new"], 100, chunk=100, guardians=5, quorum=3, missing=2, candidates=4)
        combine = run.last_requests["/combine_decryption_shares"]
        for c in clients.values():
            out = c.post("/combine_decryption_shares", combine)
            assert sum(v["votes"] for v in out["results"]["candidates"].values()) == 100
        times: dict[tuple[str, str], list[float]] = {}
        calls = {
            "setup": lambda c: c.setup_guardians(parties, names, 5, 3),
            "combine": lambda c: c.post("/combine_decryption_shares", combine),
        }
        for i in range(REPEAT):
            order = ["new", "old"] if i % 2 == 0 else ["old", "new"]
            for name, call in calls.items():
                for label in order:
                    client = clients[label]
                    times.setdefault((name, label), []).append(timed(lambda: call(client)))  # noqa: B023
    for name in calls:
        new, old = times[(name, "new")], times[(name, "old")]
        ratios = sorted(n / o for n, o in zip(new, old, strict=True))
        low, high = ratios[len(ratios) // 4], ratios[3 * len(ratios) // 4]
        print(
            f"{name}: new p50 {statistics.median(new):.1f} min {min(new):.1f} ms | old p50 "
            f"{statistics.median(old):.1f} min {min(old):.1f} ms | paired new/old: median "
            f"{statistics.median(ratios):.3f}, quartiles {low:.3f}-{high:.3f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
