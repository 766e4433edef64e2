"""An ElectionGuard 2.1 election through the /v1 service (spec/80.11), timed by stage.

`votum serve` runs on 127.0.0.1 in its own process over SQLite; three guardians' tools (threads of this
process, each with its node key and the others' cards) run the key ceremony; one device encrypts N ballots
(timed apart: the client's work) and submits them 100 per request, each checked by the server as the verifier
checks it and stored with its chain and fingerprints; then close, a decryption round of guardians 1 and 2
(each writes the record from the board and checks it before announcing), publish (the server combines and
opens), and the record written from the board verified.

    BENCH_N=2000 BENCH_GROUP=p256 .venv/bin/python benches/bench_eg21_service.py   (make bench-eg21-service)
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from votum.client import Client
from votum.client.election import Tokens
from votum.client.official import Official
from votum.client.waiting import Waiter
from votum.nodes import Keystore, keygen
from votum.nodes.identity import Identity
from votum.parties.device21 import Device21
from votum.parties.guardian21 import GuardianTool21
from votum.service.local import peak_rss_mib, start_server
from votum.verifier import verify

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = json.loads((ROOT / "crates/votum-eg2/src/default_manifest.json").read_text())
BATCH = 100


def plain(i: int) -> dict[str, Any]:
    return {
        "id": f"b-{i}",
        "style": "ward-1-style",
        "contests": {
            "mayor": {"votes": [1 if i % 3 == j else 0 for j in range(3)]},
            "council": {"votes": [1 if i % 4 == j else 0 for j in range(4)]},
        },
    }


def in_threads(work: list[Any]) -> None:
    errors: list[BaseException] = []

    def one(f: Any) -> None:
        try:
            f()
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=one, args=(f,)) for f in work]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def main() -> None:
    n = int(os.environ.get("BENCH_N", "2000"))
    group = os.environ.get("BENCH_GROUP", "p256")
    tokens = Tokens.generate(3)
    with tempfile.TemporaryDirectory(prefix="votum-bench-eg21-") as tmp:
        root = Path(tmp)
        ids = []
        for i in range(1, 4):
            keygen(root / f"g{i}", f"guardian-{i}", "127.0.0.1:1", None)
            ids.append(Identity(root / f"g{i}"))
        options = ["--data-dir", str(root / "data"), "--log-level", "warning", "--no-seed-endpoints"]
        server, base = start_server(options, {**os.environ, "VOTUM_TOKENS": tokens.env()})
        try:
            stages: dict[str, float] = {}
            admin = Client(base, token=tokens.admin, use_msgpack=False, timeout=600)
            body = {"election_id": "e", "manifest": MANIFEST, "number_of_guardians": 3, "quorum": 2}
            admin.post("/v1/elections", {**body, "spec": "2.1", "group": group})

            def tool(i: int) -> GuardianTool21:
                client = Client(base, token=tokens.guardians[f"guardian-{i}"], use_msgpack=False, timeout=600)
                others = Keystore([x.card for j, x in enumerate(ids, 1) if j != i])
                return GuardianTool21(
                    client, "e", f"guardian-{i}", ids[i - 1], Waiter(600, 0.05), keystore=others
                )

            t0 = time.perf_counter()
            in_threads([lambda i=i: tool(i).join(i, wait_open=False) for i in (1, 2, 3)])
            official = Official(admin, "e", Waiter(600, 0.05))
            official.open(wait=True)
            stages["key ceremony (3 guardians, HTTP)"] = time.perf_counter() - t0
            he = official.joint_fingerprint()
            device = Device21(
                Client(base, token=tokens.device, use_msgpack=False, timeout=600), "e", "d-1", he
            )
            device.start()
            t0 = time.perf_counter()
            ballots = [device.encrypt(plain(i)) for i in range(n)]
            stages["encryption (client, one thread)"] = time.perf_counter() - t0
            t0 = time.perf_counter()
            for k in range(0, n, BATCH):
                device.client.post("/v1/elections/e/eg21/ballots", {"ballots": ballots[k : k + BATCH]})
            intake = time.perf_counter() - t0
            stages["intake (each ballot checked and stored)"] = intake
            t0 = time.perf_counter()
            admin.post("/v1/elections/e/close", {})
            stages["close (devices.json)"] = time.perf_counter() - t0
            t0 = time.perf_counter()
            official.start_round([1, 2])
            in_threads([lambda i=i: tool(i).decrypt() for i in (1, 2)])
            stages["decryption round (2 guardians, each checks the record)"] = time.perf_counter() - t0
            t0 = time.perf_counter()
            official.publish(None, wait=True, available=[1, 2])
            stages["publish (combine, open)"] = time.perf_counter() - t0
            t0 = time.perf_counter()
            official.save_record_21(root / "record")
            report = verify(root / "record")
            assert report.passed, report.not_passed()
            stages["record from the board + verify"] = time.perf_counter() - t0
            peak = peak_rss_mib(server.pid)
        finally:
            server.terminate()
            server.wait(timeout=60)
    print(
        f"2.1 on the service, {group}, N={n}: intake {n / intake:.1f} ballots/s; server peak {peak:.0f} MiB"
    )
    for name, seconds in stages.items():
        print(f"  {name:58} {seconds:8.2f} s")


if __name__ == "__main__":
    main()
