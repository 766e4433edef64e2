"""How fast `votum serve` answers its web pages with a large board (issue 26: every page under 200 ms
with 10^5 ballots on the board).

A whole election runs through `/v1` first (3 guardians, quorum 2, one contest of 4 candidates, ballots
encrypted by the client and submitted 500 at a time, about 1 in 1,000 spoiled; closed, decrypted and
published), or an earlier run's data directory is reused. Then each page is fetched over HTTP from
this process, 5 times to warm up and BENCH_REPEAT times measured, one request at a time on a
keep-alive connection; the figure is the whole response (status line to last byte) as the client
sees it.

    BENCH_N=100000 .venv/bin/python benches/bench_web.py        (make bench-web)
    BENCH_WEB_DATA=DIR …   keep (or reuse) the server's data directory in DIR
    BENCH_BROWSER=1 …      also re-link the whole board in headless Chromium (the board page's button)
    BENCH_VERIFY=1 …       first run the verification page's verifier over the record (and time the page
                           with its report)
"""

from __future__ import annotations

import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import httpx
from votum.client import Client
from votum.client.election import Tokens, run_stateful_election
from votum.eg import manifest_from_names
from votum.service.local import start_server
from votum.store import Store

ELECTION = "bench-web"


def main() -> None:
    n = int(os.environ.get("BENCH_N", "100000"))
    repeat = int(os.environ.get("BENCH_REPEAT", "30"))
    data = Path(os.environ.get("BENCH_WEB_DATA") or tempfile.mkdtemp(prefix="votum-bench-web-"))
    data.mkdir(parents=True, exist_ok=True)
    tokens_file = data / "bench-tokens.env"
    fresh = not (data / "votum.db").exists()
    tokens = Tokens.generate(3)
    if not fresh:
        tokens = Tokens.from_roles(_roles(tokens_file.read_text()), 3)
    else:
        tokens_file.write_text(tokens.env())
    options = ["--data-dir", str(data), "--log-level", "warning", "--no-seed-endpoints"]
    server, base = start_server(options, {**os.environ, "VOTUM_TOKENS": tokens.env()}, wait_seconds=120)
    try:
        if fresh:
            t0 = time.perf_counter()
            manifest = manifest_from_names(["Party"], ["a", "b", "c", "d"])
            with Client(base, timeout=900) as client:
                run_stateful_election(
                    client, tokens, ELECTION, manifest, n, 2, batch=500, spoil_rate=0.001, missing=1
                )
            print(f"election of {n} ballots through /v1: {time.perf_counter() - t0:.0f} s")
        store = Store(f"sqlite:///{data / 'votum.db'}")
        row = store.election(ELECTION)
        cast = next(iter(store.ballots(ELECTION, "cast", after=row.head_seq // 2, limit=1)))
        spoiled = store.ballots(ELECTION, "spoiled", limit=1)
        store.close()
        print(
            f"board: {row.head_seq + 1} entries, {row.cast_count} cast, {row.spoiled_count} spoiled; "
            f"database {(data / 'votum.db').stat().st_size / 2**30:.2f} GiB"
        )
        e = f"/elections/{ELECTION}"
        if os.environ.get("BENCH_VERIFY") == "1":
            t0 = time.perf_counter()
            httpx.post(f"{base}{e}/verification", timeout=60)
            while "is running" in (page := httpx.get(f"{base}{e}/verification", timeout=60).text):
                time.sleep(1)
            passed = "Every check passed." in page
            print(f"verification page's run: {time.perf_counter() - t0:.0f} s, every check passed: {passed}")
        pages = {
            "elections": "/",
            "election": e,
            "tracker (form)": f"{e}/track",
            "tracker (cast, by code)": f"{e}/track?code={cast.code.lower()}",
            **({"tracker (spoiled + decryption)": f"{e}/track?code={spoiled[0].code}"} if spoiled else {}),
            "tracker (unknown code)": f"{e}/track?code={'0' * 64}",
            "board (first page)": f"{e}/board",
            "board (middle page)": f"{e}/board?after={row.head_seq // 2}",
            "board (last page)": f"{e}/board?after={row.head_seq - 10}",
            "entry download (ballot)": f"{e}/board/{cast.seq}/payload",
            "results": f"{e}/results",
            "verification": f"{e}/verification",
            "dashboard": f"{e}/dashboard",
            "board.js": "/static/board.js",
        }
        with httpx.Client(base_url=base, timeout=60) as http:
            print(f"{'page':34} {'min ms':>8} {'median':>8} {'p95':>8} {'max':>8} {'bytes':>9}")
            for name, path in pages.items():
                times = []
                size = 0
                for i in range(5 + repeat):
                    t0 = time.perf_counter()
                    r = http.get(path)
                    elapsed = time.perf_counter() - t0
                    assert r.status_code == 200, (path, r.status_code)
                    size = len(r.content)
                    if i >= 5:
                        times.append(elapsed * 1e3)
                times.sort()
                p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]
                print(
                    f"{name:34} {times[0]:8.1f} {statistics.median(times):8.1f} {p95:8.1f} "
                    f"{times[-1]:8.1f} {size:9d}"
                )
        if os.environ.get("BENCH_BROWSER") == "1":
            relink_in_browser(base, row.head_seq + 1)
    finally:
        server.terminate()
        server.wait(timeout=60)
    print(f"data directory: {data}")


def relink_in_browser(base: str, entries: int) -> None:
    """Clicks the board page's "Re-link the chain" in headless Chromium and times it to the verdict."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(arg)
    driver = webdriver.Chrome(options=options, service=Service("/usr/bin/chromedriver"))
    try:
        driver.get(f"{base}/elections/{ELECTION}/board")
        t0 = time.perf_counter()
        driver.find_element(By.ID, "relink").click()
        WebDriverWait(driver, 3600, poll_frequency=0.5).until(
            lambda d: d.find_element(By.ID, "chain-check").get_attribute("data-result")
        )
        elapsed = time.perf_counter() - t0
        result = driver.find_element(By.ID, "chain-check").get_attribute("data-result")
        status = driver.find_element(By.ID, "relink-status").text
        print(
            f"browser re-link of {entries} entries: {elapsed:.1f} s "
            f"({entries / elapsed:.0f} entries/s), {result}"
        )
        print(f"  {status}")
    finally:
        driver.quit()


def _roles(env: str) -> dict[str, str]:
    from votum.service.settings import tokens_from_env

    return tokens_from_env(env)


if __name__ == "__main__":
    subprocess.run(["nproc"], check=False)
    main()
