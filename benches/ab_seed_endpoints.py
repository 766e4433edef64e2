"""Same-run A/B of the seed endpoints `/setup_guardians` and `/combine_decryption_shares` on a warm server:
run it once per code base (another tree via PYTHONPATH, with its own native module), alternating, and compare
the printed p50 and minimum. A small seed election (5 guardians, quorum 3, 2 missing, 100 ballots) makes the
combine request; both calls then repeat REPEAT times (30).

    REPEAT=30 .venv/bin/python benches/ab_seed_endpoints.py new
    cd OLD_TREE && PYTHONPATH=OLD_TREE/python VENV/bin/python NEW_TREE/benches/ab_seed_endpoints.py old
"""

import os
import statistics
import sys
import tempfile
import time

from votum.client import Client, election_key
from votum.service.local import start_server

REPEAT = int(os.environ.get("REPEAT", "20"))


def run(label):
    with tempfile.TemporaryDirectory() as data:
        env = {**os.environ, "VOTUM_TOKENS": "admin=bench-admin-token-0123456789"}
        server, url = start_server(["--data-dir", data, "--log-level", "warning"], env)
        try:
            with Client(url) as c:
                parties, names = ["party-1", "party-2"], [f"candidate-{i}" for i in range(1, 5)]
                setup = c.setup_guardians(parties, names, 5, 3)
                key = election_key(setup, parties, names)
                private = {p["guardian_id"]: p["private_key"] for p in setup["private_keys"]}
                data_ = {g["id"]: g for g in setup["guardian_data"]}
                ids = [g["id"] for g in sorted(setup["guardian_data"], key=lambda g: g["sequence_order"])]
                enc = [
                    c.create_encrypted_ballot(
                        key, ballot_id=f"b{i}", candidate_name=names[i % 4], code_seed=None, state="cast"
                    )["encrypted_ballot"]
                    for i in range(100)
                ]
                tally = c.create_encrypted_tally(key, enc)
                common = {
                    "ciphertext_tally": tally["ciphertext_tally"],
                    "spoiled_ballots": tally["spoiled_ballots"],
                }
                answers = [
                    c.create_partial_decryption(key, guardian_id=g, private_key=private[g], **common)
                    for g in ids[:3]
                ]
                for m in ids[3:]:
                    for g in ids[:3]:
                        answers.append(
                            c.create_compensated_decryption(
                                key,
                                available_guardian_id=g,
                                missing_guardian_id=m,
                                private_key=private[g],
                                missing_guardian_data=data_[m],
                                **common,
                            )
                        )
                combine = {
                    **key,
                    "guardian_data": setup["guardian_data"],
                    "tally_shares": [a["tally_share"] for a in answers],
                    "ballot_shares": {},
                    **common,
                }
                out = c.post("/combine_decryption_shares", combine)
                assert sum(v["votes"] for v in out["results"]["candidates"].values()) == 100
                s, k = [], []
                for _ in range(REPEAT):
                    t = time.perf_counter()
                    c.setup_guardians(parties, names, 5, 3)
                    s.append((time.perf_counter() - t) * 1e3)
                    t = time.perf_counter()
                    c.post("/combine_decryption_shares", combine)
                    k.append((time.perf_counter() - t) * 1e3)
        finally:
            server.terminate()
            server.wait(timeout=30)
    print(
        f"{label}: setup p50 {statistics.median(s):.1f} min {min(s):.1f}"
        f" | combine p50 {statistics.median(k):.1f} min {min(k):.1f}",
        flush=True,
    )


run(sys.argv[1])
