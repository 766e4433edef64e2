"""A whole election with each party in its own process and with only its own secrets (issue 42 A; spec/80.10):
the service; the official's `votum official` steps; three guardians' `votum guardian` (each with its own node
key, its own token and its sealed secret on its own disk); the polling-station kiosk `votum device`, driven
by voters in headless Chromium, casting and spoiling; and an auditor who saves the record and runs `votum
verify`, whose counts must be the Results page's and the voters' own."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from votum.localnet import free_port
from votum.service.local import start_server

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = ROOT / "vectors" / "eg-manifests" / "election_manifest_simple.json"
STYLE = "harrison-township-ballot-style"
GUARDIANS = ["alice", "bob", "carol"]

#: what each voter marks on the kiosk, and whether they cast or spoil (to check the device)
VOTERS = [
    (
        ["john-adams-selection", "benjamin-franklin-selection"],
        "referendum-pineapple-affirmative-selection",
        "cast",
    ),
    (["john-hancock-selection"], "referendum-pineapple-negative-selection", "cast"),
    (["john-adams-selection"], None, "cast"),
    (
        ["benjamin-franklin-selection", "john-hancock-selection"],
        "referendum-pineapple-affirmative-selection",
        "spoil",
    ),
]


def votum(
    *args: str, env: dict[str, str], check: bool = True, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "votum", *args], env=env, capture_output=True, text=True, timeout=timeout
    )
    if check:
        assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done


def _wait_for_page(url: str, log: Path) -> str:
    """The page at `url` once its server answers (bounded wait; the server's log on failure)."""
    deadline = time.monotonic() + 60
    while True:
        try:
            got = httpx.get(url, timeout=1)
            if got.status_code == 200:
                return got.text
        except httpx.TransportError:
            pass
        assert time.monotonic() < deadline, log.read_text()
        time.sleep(0.2)


def start(*args: str, env: dict[str, str], log: Path) -> subprocess.Popen[str]:
    with log.open("w") as out:  # the child keeps its own copy of the descriptor
        return subprocess.Popen(
            [sys.executable, "-m", "votum", *args], env=env, stdout=out, stderr=subprocess.STDOUT, text=True
        )


class Parties:
    """Who holds what: one token file per party, one node home per guardian."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.data = root / "service"
        self.env = {**os.environ, "COLUMNS": "200", "VOTUM_TOKENS": ""}
        self.env.pop("VOTUM_TOKENS")
        self.tokens: dict[str, Path] = {}
        self.processes: list[subprocess.Popen[str]] = []

    def token(self, party: str, role: str) -> Path:
        line = votum("tokens", "new", role, "--data-dir", str(self.data), env=self.env).stdout.strip()
        assert line.startswith(f"{role}=")
        path = self.root / party / "token"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(line + "\n")
        path.chmod(0o600)
        self.tokens[party] = path
        return path

    def home(self, guardian: str) -> Path:
        return self.root / guardian / "node"

    def join_all(self, election: str, service: list[str]) -> list[tuple[Path, subprocess.Popen[str]]]:
        """Each guardian's `votum guardian join` started in its own process (order i for the i-th), with its
        log; the processes are stopped by the fixture if the test does not wait for them."""
        joins = []
        for order, g in enumerate(GUARDIANS, start=1):
            log = self.root / g / "join.log"
            args = ["guardian", "join", "-e", election, "--id", g, "--order", str(order)]
            args += ["--home", str(self.home(g)), *service, "--token-file", str(self.tokens[g])]
            joins.append((log, start(*args, "--wait", "300", "--poll", "0.2", env=self.env, log=log)))
            self.processes.append(joins[-1][1])
        return joins


@pytest.fixture
def parties(tmp_path: Path) -> Iterator[Parties]:
    p = Parties(tmp_path)
    try:
        yield p
    finally:
        for proc in p.processes:
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(timeout=30)


def _choose(
    browser: Any, kiosk: str, justices: list[str], pineapple: str | None, decision: str
) -> tuple[str, str, str]:
    """One voter at the kiosk: returns (code on the review page, code and tracker link on the receipt)."""
    from selenium.webdriver.common.by import By

    browser.get(kiosk)
    for value in [*justices, *([pineapple] if pineapple else [])]:
        browser.find_element(By.CSS_SELECTOR, f'input[value="{value}"]').click()
    browser.find_element(By.ID, "encrypt").click()
    code = _on_page(browser, "cast").find_element(By.ID, "code").text
    browser.find_element(By.ID, decision).click()
    receipt = _on_page(browser, "receipt").find_element(By.ID, "code").text
    tracker = browser.find_element(By.ID, "tracker").get_attribute("href")
    assert browser.find_element(By.ID, "state").text
    return code, receipt, str(tracker)


def _on_page(browser: Any, marker: str) -> Any:
    """Waits until the page that has element `marker` is loaded (a click's navigation is not awaited)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(browser, 60).until(expected_conditions.presence_of_element_located((By.ID, marker)))
    return browser


def _results_page(browser: Any, base: str, election: str) -> dict[str, dict[str, int]]:
    """The Results page's counts: contest id -> choice label -> votes."""
    from selenium.webdriver.common.by import By

    browser.get(f"{base}/elections/{election}/results")
    out: dict[str, dict[str, int]] = {}
    for table in browser.find_elements(By.CSS_SELECTOR, "table.results"):
        rows = {}
        for row in table.find_elements(By.CSS_SELECTOR, "tbody tr:not(.undervotes)"):
            label = row.find_element(By.CSS_SELECTOR, "th").text.replace("elected", "").strip()
            rows[label] = int(row.find_element(By.CSS_SELECTOR, "td.votes").text)
        out[str(table.get_attribute("data-contest"))] = rows
    return out


def test_a_whole_election_each_party_in_its_own_process(parties: Parties, browser: Any) -> None:
    from selenium.webdriver.common.by import By

    env, election = parties.env, "harrison-2026"
    admin = parties.token("official", "admin")
    device = parties.token("kiosk", "device:kiosk")
    for g in GUARDIANS:
        parties.token(g, f"guardian:{g}")
        votum("node", "keygen", "--name", g, "--home", str(parties.home(g)), env=env)
    server, base = start_server(
        ["--data-dir", str(parties.data)], env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    parties.processes.append(server)  # type: ignore[arg-type]
    service = ["--service", base]

    # the official creates the election; each guardian joins from its own process
    created = votum(
        "official",
        "create",
        str(MANIFEST),
        "-e",
        election,
        "--guardians",
        "3",
        "--quorum",
        "2",
        *service,
        "--token-file",
        str(admin),
        env=env,
    )
    assert "Jefferson County Spring Primary" in created.stderr
    joins = parties.join_all(election, service)
    opened = votum(
        "official", "open", "-e", election, *service, "--token-file", str(admin), "--wait", "300", env=env
    )
    joint = opened.stderr.split("joint key fingerprint: ")[1].split("  ")[0].strip()
    for log, proc in joins:
        assert proc.wait(timeout=300) == 0, log.read_text()
        assert f"joint key fingerprint: {joint}" in log.read_text().replace("\n", " ")
    for g in GUARDIANS:
        sealed = parties.home(g) / f"eg-guardian-{election}.sealed"
        assert sealed.stat().st_mode & 0o777 == 0o600

    # the kiosk, with the device token only; voters in the browser
    port = free_port()
    kiosk_log = parties.root / "kiosk" / "kiosk.log"
    parties.processes.append(
        start(
            "device",
            "-e",
            election,
            *service,
            "--token-file",
            str(device),
            "--port",
            str(port),
            "--state-dir",
            str(parties.root / "kiosk" / "state"),
            "--style",
            STYLE,
            env=env,
            log=kiosk_log,
        )
    )
    kiosk = f"http://127.0.0.1:{port}/"
    assert joint in _wait_for_page(kiosk, kiosk_log), "the kiosk shows the joint key the guardians made"
    receipts = []
    for justices, pineapple, decision in VOTERS:
        code, receipt, tracker = _choose(browser, kiosk, justices, pineapple, decision)
        assert code == receipt and tracker.startswith(f"{base}/elections/{election}/track?code=")
        receipts.append((decision, tracker))

    # close; two guardians decrypt, carol is missing and compensated for
    closed = votum("official", "close", "-e", election, *service, "--token-file", str(admin), env=env)
    assert "3 cast, 1 spoiled" in closed.stderr
    decrypts = []
    for g in GUARDIANS[:2]:
        log = parties.root / g / "decrypt.log"
        decrypts.append(
            (
                log,
                start(
                    "guardian",
                    "decrypt",
                    "-e",
                    election,
                    "--id",
                    g,
                    "--home",
                    str(parties.home(g)),
                    *service,
                    "--token-file",
                    str(parties.tokens[g]),
                    "--missing",
                    "carol",
                    env=env,
                    log=log,
                ),
            )
        )
    for log, proc in decrypts:
        assert proc.wait(timeout=300) == 0, log.read_text()
        assert "3 cast ballots verified" in log.read_text().replace("\n", " ")
    published = votum(
        "official",
        "publish",
        "-e",
        election,
        *service,
        "--token-file",
        str(admin),
        "--present",
        "2",
        "--wait",
        "120",
        env=env,
    )
    assert "compensated for: carol" in published.stderr
    # the counts are printed with the manifest's names: the contest's ballot title, the candidates' names
    printed = " ".join(published.stdout.split())
    assert "John Adams" in printed and "Justice of the Supreme Court" in printed

    # the auditor: the public record, verified independently
    record = parties.root / "auditor" / "record.votum"
    record.parent.mkdir()
    votum("official", "record", "-e", election, *service, "--out", str(record), env=env)
    verified = json.loads(votum("verify", "--json", str(record), env=env).stdout)
    by_contest = {
        c["contest_id"]: {s["name"]: s["votes"] for s in c["selections"]}
        for c in verified["result"]["contests"]
    }
    expected_ids: dict[str, int] = {}
    for justices, pineapple, decision in VOTERS:
        if decision == "cast":
            for s in [*justices, *([pineapple] if pineapple else [])]:
                expected_ids[s] = expected_ids.get(s, 0) + 1
    names = {
        "john-adams-selection": "John Adams",
        "benjamin-franklin-selection": "Benjamin Franklin",
        "john-hancock-selection": "John Hancock",
    }
    assert by_contest["justice-supreme-court"]["John Adams"] == expected_ids["john-adams-selection"] == 2
    for sid, name in names.items():
        assert by_contest["justice-supreme-court"][name] == expected_ids.get(sid, 0)
    assert sorted(by_contest["referendum-pineapple"].values()) == [1, 1]
    assert _results_page(browser, base, election) == by_contest, (
        "the Results page shows what the auditor verified"
    )

    # the spoiled ballot's decryption is on the tracker the receipt named: the choices the voter marked
    [(_, spoiled)] = [r for r in receipts if r[0] == "spoil"]
    browser.get(spoiled)
    assert browser.find_element(By.ID, "state").text
    chosen = [
        td.find_element(By.XPATH, "..").find_element(By.TAG_NAME, "td").text
        for td in browser.find_elements(By.CSS_SELECTOR, "#decryption td.chosen")
    ]
    assert len(chosen) == 3, browser.page_source[:2000]


def test_a_2_1_election_each_party_in_its_own_process(parties: Parties) -> None:
    """ElectionGuard 2.1 on the service (spec/80.11), each party in its own process: `votum official create
    --spec 2.1`, each guardian's `votum guardian join` with the others' cards in its keystore, `votum
    official open` (every party prints the same H_E fingerprint), a device's ballots, pre-encrypted ballots
    printed and one recorded (`votum paper`), `votum official close`,
    each guardian's `votum guardian decrypt`, `votum official publish`, `votum official record` and `votum
    verify` on what it wrote."""
    env, election = parties.env, "eg21-ceremony"
    admin = parties.token("official", "admin")
    kiosk = parties.token("kiosk", "device:kiosk")
    mail = parties.token("mail", "device:mail")
    fingerprints = {}
    for g in GUARDIANS:
        parties.token(g, f"guardian:{g}")
        votum("node", "keygen", "--name", g, "--home", str(parties.home(g)), env=env)
        shown = votum("node", "fingerprint", "--home", str(parties.home(g)), env=env).stdout
        fingerprints[g] = shown.split()[1]
    for g in GUARDIANS:
        for other in GUARDIANS:
            if other != g:
                card = parties.home(other) / "card.json"
                fp = fingerprints[other]
                votum(
                    "node",
                    "peers",
                    "add",
                    str(card),
                    "--fingerprint",
                    fp,
                    "--home",
                    str(parties.home(g)),
                    env=env,
                )
    server, base = start_server(
        ["--data-dir", str(parties.data)], env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    parties.processes.append(server)  # type: ignore[arg-type]
    service = ["--service", base]
    # the default manifest with a short-code function, for the pre-encrypted ballots (§4.6)
    default = json.loads((ROOT / "crates" / "votum-eg2" / "src" / "default_manifest.json").read_text())
    manifest = parties.root / "manifest.json"
    manifest.write_text(json.dumps({**default, "short_code": "hex2"}))
    created = votum(
        "official",
        "create",
        str(manifest),
        "-e",
        election,
        "--guardians",
        "3",
        "--quorum",
        "2",
        "--spec",
        "2.1",
        "--group",
        "p256",
        "--weight",
        "kiosk=2",
        *service,
        "--token-file",
        str(admin),
        env=env,
    )
    assert "created election" in created.stderr
    joins = parties.join_all(election, service)
    opened = votum(
        "official", "open", "-e", election, *service, "--token-file", str(admin), "--wait", "300", env=env
    )
    he = opened.stderr.split("H_E fingerprint: ")[1].split("  ")[0].strip()
    for log, proc in joins:
        assert proc.wait(timeout=300) == 0, log.read_text()
        assert f"H_E fingerprint: {he}" in log.read_text().replace("\n", " ")
    status = votum("official", "status", "-e", election, *service, env=env)
    assert f"election {election}: open" in status.stderr

    # the polling-station kiosk (`votum device`), which checks the keys against the H_E fingerprint the
    # official printed; voters mark, cast or challenge over its pages
    port = free_port()
    kiosk_log = parties.root / "kiosk" / "kiosk.log"
    device = ["device", "-e", election, *service, "--token-file", str(kiosk), "--port", str(port)]
    device += ["--state-dir", str(parties.root / "kiosk" / "state"), "--simple-chaining"]
    without = votum(*device, env=env, check=False)
    assert without.returncode != 0 and "--he-fingerprint" in without.stderr
    parties.processes.append(start(*device, "--he-fingerprint", he, env=env, log=kiosk_log))
    page = f"http://127.0.0.1:{port}"
    home = _wait_for_page(page, kiosk_log)
    assert he in home, "the kiosk shows the H_E fingerprint it checked the keys against"
    assert "its ballots weigh 2" in kiosk_log.read_text(), "the kiosk's token has weight 2 (--weight kiosk=2)"
    token = home.split('name="form_token" value="')[1].split('"')[0]
    for i in range(4):
        marked = {"form_token": token, "choice:mayor": f"mayor-option{i % 3 + 1}"}
        review = httpx.post(f"{page}/ballot", data=marked, timeout=60)
        decision = "spoil" if i == 3 else "cast"
        key = re.search(rf'action="/ballot/([^/"]+)/{decision}"', review.text)
        assert key, review.text
        receipt = httpx.post(f"{page}/ballot/{key[1]}/{decision}", data={"form_token": token}, timeout=60)
        assert receipt.status_code == 200 and f"{'spoiled' if i == 3 else 'cast'}-note" in receipt.text
    # pre-encrypted ballots (`votum paper`): three printed onto the board, one recorded, two left uncast
    store, sheets = parties.root / "mail" / "store.jsonl", parties.root / "mail" / "sheets.jsonl"
    paper = [
        "-e",
        election,
        "--he-fingerprint",
        he,
        "--store",
        str(store),
        *service,
        "--token-file",
        str(mail),
    ]
    printed = votum(
        "paper", "print", *paper, "--count", "3", "--style", "ward-1-style", "--out", str(sheets), env=env
    )
    assert "3 ballots of election" in printed.stderr and len(sheets.read_text().splitlines()) == 3
    recorded = votum(
        "paper", "record", *paper, "--ballot", "mail-printer-2",
        "--marks", '{"mayor": [1, 0, 0]}', env=env,
    )  # fmt: skip
    assert json.loads(recorded.stdout)["state"] == "cast"
    # a batch from a marks file (a mail centre's): one ballot recorded, one refused as recorded already (the
    # others still go on; the exit status says something was refused)
    marks_file = parties.root / "mail" / "marks.jsonl"
    lines = [{"ballot": "mail-printer-3", "marks": {"mayor": [0, 0, 1]}}]
    lines += [{"ballot": "mail-printer-2", "marks": {"mayor": [0, 1, 0]}}]
    marks_file.write_text("".join(json.dumps(x) + "\n" for x in lines))
    batch = votum("paper", "record", *paper, "--marks-file", str(marks_file), env=env, check=False)
    assert batch.returncode == 1, (batch.stdout, batch.stderr)
    first, second = map(json.loads, batch.stdout.splitlines())
    assert first["ballot_id"] == "mail-printer-3" and first["state"] == "cast"
    assert second["ballot_id"] == "mail-printer-2" and "already recorded" in second["error"], second
    assert "1 recorded, 1 refused, of 2" in " ".join(batch.stderr.split())
    votum("official", "close", "-e", election, *service, "--token-file", str(admin), env=env)

    # each guardian decrypts in its own process; the official publishes with all three
    decrypts = []
    for g in GUARDIANS:
        log = parties.root / g / "decrypt.log"
        args = ["guardian", "decrypt", "-e", election, "--id", g, "--home", str(parties.home(g))]
        args += [*service, "--token-file", str(parties.tokens[g]), "--wait", "300", "--poll", "0.2"]
        decrypts.append((log, start(*args, env=env, log=log)))
        parties.processes.append(decrypts[-1][1])
    published = votum(
        "official", "publish", "-e", election, *service, "--token-file", str(admin), "--wait", "300", env=env
    )
    for log, proc in decrypts:
        assert proc.wait(timeout=300) == 0, log.read_text()
        assert "answered in decryption round 1" in log.read_text()
    assert "Mayor" in published.stdout
    record = parties.root / "record"
    votum("official", "record", "-e", election, *service, "--out", str(record), env=env)
    verified = votum("verify", str(record), env=env)
    assert verified.returncode == 0
    from votum.verifier import verify

    # three ballots cast, one for each mayor option, each weighing 2; the fourth challenged; two recorded
    # pre-encrypted ballots, for mayor-option1 and mayor-option3, weighing 1; the uncast printed ballot opened
    counts = verify(record).intermediates["counts"]
    assert [counts[f"mayor/mayor-option{j}"] for j in (1, 2, 3)] == [3, 2, 3]
    opened = [json.loads(x) for x in (record / "challenged.jsonl").read_text().splitlines()]
    assert sorted(o["id"] for o in opened if o.get("pre_encrypted")) == ["mail-printer-1"]
