"""The web pages (spec/80.9), first through the ASGI test client, then in headless Chromium against a
real `votum serve`, with an election driven through /v1 by `ElectionDriver`.

What the pages must show: the tracker finds a submitted ballot (and a spoiled one's decryption), the
board page re-links the chain in the browser and names an entry altered directly in the database, the
results page shows the decrypted counts, the verifier's report check by check, no console error on any
page, keyboard access. Screenshots go to `target/test-artifacts/web/`."""

from __future__ import annotations

import html
import json
import os
import re
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient
from votum.client import Client
from votum.client.election import ElectionDriver, Plan, Tokens
from votum.eg import manifest_from_names
from votum.eg2 import Eg2Config, run_eg2_election
from votum.election import synthetic_manifest
from votum.fingerprints import fingerprint, grouped, key_fingerprint
from votum.mix import votes_text
from votum.service.app import create_app
from votum.service.local import start_server
from votum.service.settings import Settings
from votum.store import Store
from votum.web import views
from votum.web.catalog import MESSAGES, Messages, catalogue, choose
from votum.web.state import web_state

MANIFEST = manifest_from_names(["Party A", "Party B"], ["Alice", "Bob", "Carol"])
WEB = Path(views.__file__).parent
ARTIFACTS = Path(__file__).resolve().parents[2] / "target" / "test-artifacts" / "web"
#: selection id -> the name the pages show
LABELS = {c.selection_id: c.label for contest in views.contests_of(MANIFEST) for c in contest.choices}


def expected_by_name(driver: ElectionDriver) -> dict[str, int]:
    return {LABELS[selection]: votes for selection, votes in driver.expected.items()}


@dataclass
class Driven:
    driver: ElectionDriver
    plans: list[Plan]
    receipts: list[dict[str, Any]]

    def spoiled(self) -> tuple[Plan, dict[str, Any]]:
        return next((p, r) for p, r in zip(self.plans, self.receipts, strict=True) if p.state == "spoiled")

    def cast(self) -> tuple[Plan, dict[str, Any]]:
        return next((p, r) for p, r in zip(self.plans, self.receipts, strict=True) if p.state == "cast")


def drive(client: Client, tokens: Tokens, election_id: str, publish: bool = True) -> Driven:
    """An election of 3 guardians (quorum 2) with 7 ballots, the second one spoiled."""
    driver = ElectionDriver(client, tokens, election_id, MANIFEST, quorum=2, seed=11)
    driver.ceremony()
    plans = driver.plan(7)
    for i, p in enumerate(plans):
        p.state = "spoiled" if i == 1 else "cast"
    receipts = driver.submit(plans)
    if publish:
        driver.decrypt_and_publish(missing=1)
    return Driven(driver, plans, receipts)


# --- through the ASGI test client ------------------------------------------------------------------


@dataclass
class App:
    http: TestClient
    store: Store
    tokens: Tokens
    data_dir: Path


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[App]:
    data_dir = tmp_path_factory.mktemp("web")
    tokens = Tokens.generate(3)
    store = Store(f"sqlite:///{data_dir / 'votum.db'}")
    application = create_app(Settings(data_dir=data_dir, tokens=tokens.settings_map()), store=store)
    with TestClient(application) as http:
        yield App(http, store, tokens, data_dir)
    store.close()


@pytest.fixture(scope="module")
def driven(app: App) -> Driven:
    return drive(Client(http=app.http), app.tokens, "web")


def page(app: App, path: str, status: int = 200) -> str:
    r = app.http.get(path)
    assert r.status_code == status, (path, r.status_code, r.text[:300])
    assert r.headers["content-type"].startswith("text/html")
    assert "script-src 'self'" in r.headers["content-security-policy"]
    return r.text


def text_of(markup: str) -> str:
    """The page's visible text, tags dropped and entities decoded, whitespace collapsed."""
    no_script = re.sub(r"<script.*?</script>", " ", markup, flags=re.S)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", no_script)).split())


def test_elections_and_election_pages(app: App, driven: Driven) -> None:
    listing = page(app, "/")
    assert 'href="/elections/web"' in listing and "results published" in text_of(listing)
    # each election with its manifest's dates (and name, when it has one)
    assert "2026-11-03" in text_of(listing)
    overview = page(app, "/elections/web")
    text = text_of(overview)
    assert "2 of 3 guardians needed to decrypt" in text
    assert "6 cast, 1 spoiled" in text
    row = app.store.election("web")
    assert grouped(row.head_hash.hex()) in text
    manifest = app.store.entry_named("web", "manifest.json")
    context = app.store.entry_named("web", "context.json")
    assert manifest is not None and context is not None
    assert fingerprint(manifest.payload or b"") in text
    assert fingerprint(context.payload or b"") in text
    # keys in the one form `votum ceremony` prints (votum.fingerprints.key_fingerprint), the spelling aside
    key = json.loads(context.text())["elgamal_public_key"]
    assert key_fingerprint(key) in text and key_fingerprint(key.lower()) == key_fingerprint(key)
    assert key_fingerprint(key) == key_fingerprint(int(key, 16))
    for entry in app.store.iter_entries("web", ["guardian"]):
        record = json.loads(entry.text())
        assert f"{record['guardian_id']} {key_fingerprint(record['election_public_key'])}" in text
    assert 'href="/v1/elections/web/record"' in overview


def test_unknown_election_is_a_page_not_an_error_document(app: App) -> None:
    for path in (
        "/elections/nope",
        "/elections/nope/track?code=00",
        "/elections/nope/board",
        "/elections/nope/results",
        "/elections/nope/verification",
        "/elections/nope/dashboard",
    ):
        assert "There is no election “nope” on this server." in text_of(page(app, path, 404))


def test_tracker_finds_cast_and_spoiled_ballots(app: App, driven: Driven) -> None:
    plan, receipt = driven.cast()
    # as a voter copies it: lower case, in groups of four
    typed = grouped(receipt["code"].lower())
    found = text_of(page(app, f"/elections/web/track?code={typed}"))
    assert "Your ballot is on the board." in found
    assert "cast: it is counted" in found
    assert plan.ballot_id in found
    total = app.store.election("web").head_seq + 1
    assert f"entry {receipt['seq']} of {total}" in found
    assert grouped(receipt["hash"]) in found
    # by ballot id too
    assert "Your ballot is on the board." in text_of(page(app, f"/elections/web/track?code={plan.ballot_id}"))

    spoiled, s_receipt = driven.spoiled()
    markup = page(app, f"/elections/web/track?code={s_receipt['code']}")
    assert "spoiled: it is not counted" in text_of(markup)
    # the Benaloh check: the decryption shows exactly the choices the voter made
    rows = re.findall(r"<td>([^<]+)</td><td class=\"(chosen|not-chosen)\">", markup)
    assert rows and {label for label, kind in rows if kind == "chosen"} == {LABELS[s] for s in spoiled.chosen}


def test_tracker_unknown_code_and_hostile_input(app: App, driven: Driven) -> None:
    unknown = text_of(page(app, "/elections/web/track?code=" + "ab" * 32))
    assert "No ballot with the code or id" in unknown
    hostile = page(app, "/elections/web/track?code=%3Cscript%3Ealert(1)%3C/script%3E")
    assert "<script>alert(1)" not in hostile and "&lt;script&gt;alert(1)" in hostile
    assert app.http.get("/elections/web/track?code=" + "x" * 300).status_code == 422
    # an empty query shows the form only
    assert "No ballot" not in text_of(page(app, "/elections/web/track?code=+"))


def test_spoiled_ballot_before_publication_says_when(app: App) -> None:
    d = drive(Client(http=app.http), app.tokens, "web-open", publish=False)
    _, receipt = d.spoiled()
    text = text_of(page(app, f"/elections/web-open/track?code={receipt['code']}"))
    assert "decrypted with the tally, once the election's results are published" in text
    assert "The results are published once" in text_of(page(app, "/elections/web-open/results"))
    waiting = text_of(page(app, "/elections/web-open/dashboard"))
    assert "Ballots. The official closes the election" in waiting or "Decryption:" in waiting


def test_board_pages_and_downloads(app: App, driven: Driven, monkeypatch: pytest.MonkeyPatch) -> None:
    from votum.web import pages

    monkeypatch.setattr(pages, "BOARD_PAGE", 10)
    head = app.store.election("web").head_seq
    assert head > 20
    first = page(app, "/elections/web/board")
    assert 'id="entry-0"' in first and 'id="entry-9"' in first and 'id="entry-10"' not in first
    assert 'href="/elections/web/board?after=9" rel="next"' in first and 'rel="prev"' not in first
    second = text_of(page(app, "/elections/web/board?after=9"))
    assert f"Entries 10 to 19 of {head + 1}" in second
    last = page(app, f"/elections/web/board?after={head - 1}")
    assert f'id="entry-{head}"' in last and 'rel="next"' not in last and 'rel="prev"' in last
    entry = app.store.entry("web", 3)
    r = app.http.get("/elections/web/board/3/payload")
    assert r.status_code == 200 and r.content == entry.payload
    assert "attachment" in r.headers["content-disposition"]
    assert "has no entry 99999" in text_of(page(app, "/elections/web/board/99999/payload", 404))
    # beyond what the database's integers hold, or negative: refused before any query
    for seq in ("-1", str(2**63), "x"):
        assert app.http.get(f"/elections/web/board/{seq}/payload").status_code == 422, seq
    assert app.http.get("/elections/web/board?after=-5").status_code == 422


RESULT_ROW = re.compile(
    r'<th scope="row">([^<]+?)( <span class="badge">elected</span>)?</th>\s*<td class="num votes">(\d+)</td>'
)


def shown_results(markup: str) -> tuple[dict[str, int], set[str], int]:
    """The results page's choices and votes, the ones marked elected, and its blank and unused votes."""
    rows = RESULT_ROW.findall(markup)
    unused = sum(int(v) for label, _, v in rows if label == "Blank and unused votes")
    shown = {label: int(v) for label, _, v in rows if label != "Blank and unused votes"}
    return shown, {label for label, badge, _ in rows if badge}, unused


def test_results_page_shows_the_published_counts(app: App, driven: Driven) -> None:
    markup = page(app, "/elections/web/results")
    shown, elected, unused = shown_results(markup)
    assert shown == expected_by_name(driven.driver) and 0 < sum(shown.values()) <= 6
    assert "Decrypted by guardian-1, guardian-2; compensated for: guardian-3." in text_of(markup)
    # the numbers add up (issue 42 B): 6 ballots cast, one vote allowed each in this one contest
    cast = app.store.election("web").cast_count
    assert sum(shown.values()) + unused == cast * 1
    assert f"{cast} ballots cast × 1 votes each = {cast} votes" in text_of(markup)
    # the choice with most votes is marked elected, unless the lead is tied (then shown as a tie)
    top = max(shown.values())
    leaders = {label for label, v in shown.items() if v == top}
    if len(leaders) == 1:
        assert elected == leaders
    else:
        assert elected == set() and "Tie for the last seat" in text_of(markup)
    assert "Not verified yet at this board head." in text_of(markup)


def test_verification_runs_once_per_head(app: App, driven: Driven) -> None:
    before = text_of(page(app, "/elections/web/verification"))
    assert "has not been verified yet" in before
    r = app.http.post("/elections/web/verification", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/elections/web/verification"
    deadline = time.monotonic() + 120
    while (
        "running" in (text := text_of(page(app, "/elections/web/verification")))
        and time.monotonic() < deadline
    ):
        time.sleep(0.2)
    assert "Every check passed." in text, text
    for check in ("V-RECORD-01", "V-TALLY-01"):
        assert check in text
    head = app.store.election("web").head_hash.hex()
    stored = app.data_dir / "verifications" / "web" / f"{head}.json"
    report = json.loads(stored.read_text())
    assert report["passed"] and all(c["status"] == "pass" for c in report["checks"])
    # issue 43, item 4: the run took the CPU only as far as intake left it (its own process at the
    # lowest priority, one verifier thread)
    assert report["cpu"] == {"nice": 19, "threads": 1}
    # asked again at the same head: the same report, no second run
    mtime = stored.stat().st_mtime_ns
    app.http.post("/elections/web/verification")
    assert stored.stat().st_mtime_ns == mtime and not stored.with_suffix(".running").exists()
    # the results page now shows the result as verified, with the board head and the record digest
    results = text_of(page(app, "/elections/web/results"))
    assert "Verified ✓" in results
    assert grouped(head) in results and grouped(report["values"]["record_digest"]) in results


def test_verification_while_ballots_arrive_is_rate_limited(app: App) -> None:
    d = drive(Client(http=app.http), app.tokens, "web-interval", publish=False)
    verifications = web_state(app.http.app).verifications  # type: ignore[attr-defined]
    assert app.http.post("/elections/web-interval/verification").status_code == 200

    def settled() -> str:
        deadline = time.monotonic() + 120
        while "running" in (text := text_of(page(app, "/elections/web-interval/verification"))):
            assert time.monotonic() < deadline
            time.sleep(0.2)
        return text

    text = settled()
    assert "Every check that applies before publication passed." in text
    # the tally's and decryptions' checks wait for publication, shown as such
    assert "V-TALLY-01 encrypted tally = product of the cast ballots after publication" in text
    first_head = app.store.election("web-interval").head_seq
    d.driver.submit(d.driver.plan(1))  # the head moves
    text = text_of(page(app, "/elections/web-interval/verification"))
    assert "has not been verified yet" in text and "The latest report, at an earlier board head" in text
    assert f"Record at board entry {first_head} " in text
    r = app.http.post("/elections/web-interval/verification", follow_redirects=False)
    assert r.headers["location"].endswith("?refused=recent")
    assert "a new run may start in" in text_of(page(app, r.headers["location"]))
    reports = list((app.data_dir / "verifications" / "web-interval").glob("*.json"))
    assert len(reports) == 1
    # a long run keeps the next one away for 3 times its length, beyond the interval
    report = json.loads(reports[0].read_text())
    reports[0].write_text(json.dumps({**report, "seconds": 100.0}))
    assert 240 < verifications.wait_seconds("web-interval") <= 300
    reports[0].write_text(json.dumps(report))
    verifications.interval = 0.0
    try:
        app.http.post("/elections/web-interval/verification")
        assert "Every check that applies before publication passed." in settled()
    finally:
        verifications.interval = 60.0
    assert len(list((app.data_dir / "verifications" / "web-interval").glob("*.json"))) == 2


def make_mix_records(folder: Path) -> dict[str, dict[str, Any]]:
    """Two small mixnet elections' records (IRV and STV with 2 seats) and a tampered copy of the first;
    returns each election's outcome as its run counted it."""
    from votum.mix import MixConfig, run_mix_election

    folder.mkdir(parents=True, exist_ok=True)
    outcomes = {}
    for name, config in (
        ("irv", MixConfig(voters=40, candidates=4, rule="irv", seed=5)),
        ("stv", MixConfig(voters=40, candidates=5, rule="stv", seats=2, seed=6)),
    ):
        result = run_mix_election(config, record=folder / f"{name}.vmix")
        assert result.verified
        outcomes[name] = result.outcome
    # a plurality election whose two leaders tie, under a rule that breaks no tie (spec/91.4)
    tie = MixConfig(voters=5, candidates=3, rule="plurality", ties="unresolved", seed=7)
    result = run_mix_election(tie, votes=[[1], [2], [2], [1], [3]], record=folder / "tie.vmix")
    assert result.verified and result.outcome["winners"] == []
    outcomes["tie"] = result.outcome
    data = bytearray((folder / "irv.vmix").read_bytes())
    data[-20] ^= 1  # inside the result entry's winners or tallies
    (folder / "tampered.vmix").write_bytes(bytes(data))
    (folder / "not a record name.vmix").write_bytes(b"ignored: not a valid name")
    # another system's record under a mix name (issue 43, item 5): neither listed nor verified
    (folder / "chvote.vmix").write_bytes(b"VOTUMCHV" + bytes(64))
    return outcomes


def shown_rounds(markup: str) -> list[list[str]]:
    """The rounds table as [round][candidate] texts."""
    rows = re.findall(r"<tr(?: class=\"winner\")?>\s*<th scope=\"row\">.*?</tr>", markup, flags=re.S)
    per_candidate = [re.findall(r'<span class="num votes">([^<]+)</span>', row) for row in rows]
    return [list(col) for col in zip(*per_candidate, strict=True)]


def test_mix_records_are_shown_only_once_verified(tmp_path: Path) -> None:
    outcomes = make_mix_records(tmp_path / "mix")
    settings = Settings(data_dir=tmp_path, tokens={"t" * 20: "admin"}, mix_records=tmp_path / "mix")
    with TestClient(create_app(settings)) as http:

        def get(path: str, status: int = 200) -> str:
            r = http.get(path)
            assert r.status_code == status, (path, r.status_code)
            return r.text

        listing = text_of(get("/mix"))
        assert "irv" in listing and "stv" in listing and "tampered" in listing
        assert "not a record name" not in listing
        assert "chvote" not in listing
        assert http.post("/mix/chvote/verification", follow_redirects=False).status_code == 404
        assert "not verified yet" in listing
        assert "no mixnet election record named “nope”" in text_of(get("/mix/nope", 404))
        assert 'id="rounds"' not in get("/mix/irv"), "no result before the verifier has passed the record"

        def verified(name: str) -> str:
            r = http.post(f"/mix/{name}/verification", follow_redirects=False)
            assert r.status_code == 303 and r.headers["location"] == f"/mix/{name}"
            deadline = time.monotonic() + 120
            while "running" in text_of(markup := get(f"/mix/{name}")):
                assert time.monotonic() < deadline
                time.sleep(0.2)
            return markup

        irv = verified("irv")
        assert "Every check passed." in text_of(irv)
        expected = outcomes["irv"]
        rounds = shown_rounds(irv)
        all_rounds = [expected["tallies"], *expected["rounds"]]
        assert rounds == [
            [views.OUT if k and v == 0 else str(v) for v in r] for k, r in enumerate(all_rounds)
        ]
        head = json.loads(next((tmp_path / "mix-verifications" / "irv").glob("*.json")).read_text())[
            "values"
        ]["head"]
        assert grouped(head) in text_of(irv)
        assert len(rounds) >= 2, "an IRV count of 4 candidates has later rounds"
        assert f"Elected: candidate {', '.join(map(str, expected['winners']))}." in text_of(irv)
        assert "instant-runoff voting: 40 valid ballots" in text_of(irv)
        shown_exhausted = re.findall(r'<td class="round"><span class="num">([^<]+)</span>', irv)
        assert shown_exhausted == [str(x) for x in expected["exhausted"]]
        assert len(shown_exhausted) == len(rounds)

        stv = verified("stv")
        expected = outcomes["stv"]
        scaled = [
            [views.OUT if k and v == 0 else votes_text(v, True, grouped=False) for v in r]
            for k, r in enumerate([expected["tallies"], *expected["rounds"]])
        ]
        assert shown_rounds(stv) == scaled and len(expected["winners"]) == 2
        assert f"Quota: {votes_text(expected['quota'], True, grouped=False)} votes" in text_of(stv)

        tie = text_of(verified("tie"))
        assert "Elected: nobody." in tie
        assert (
            "Tie in round 1 between candidates 1, 2: not broken, as the stated rule (unresolved) says" in tie
        )

        tampered = verified("tampered")
        assert "Some checks did not pass." in text_of(tampered) and 'id="rounds"' not in tampered
        assert "verified" in text_of(get("/mix"))


def test_a_running_verification_shows_its_progress(app: App, driven: Driven) -> None:
    """What a long run shows: the verifier's progress hook writes the stage and count into the run's
    marker (at most twice a second), and the self-refreshing page shows them as a progress bar."""
    from votum.web.verification import Verifications

    verifications: Verifications = web_state(app.http.app).verifications  # type: ignore[attr-defined]
    head = "ab" * 32  # a head no run has touched
    running = verifications.root / "web" / f"{head}.running"
    running.parent.mkdir(parents=True, exist_ok=True)
    marker = {"pid": os.getpid(), "started": time.time() - 3, "total": 7}
    running.write_text(json.dumps(marker))
    try:
        hook = verifications._progress(running, marker)
        hook("ballots", 5)
        hook("ballots", 6)  # within half a second of the last: not written
        state = verifications.state("web", head)
        assert (state.status, state.stage, state.done, state.total) == ("running", "ballots", 5, 7)
        context = {"e": app.store.election("web"), "state": state, "running_for": 3, "refused": "", "wait": 0}
        from votum.web.catalog import Messages
        from votum.web.pages import ENV

        markup = ENV.get_template("verification.html").render(
            t=Messages("en"), lang="en", mix_on=False, **context
        )
        assert '<progress id="verify-progress" max="7" value="5">' in markup
        assert "Ballots checked: 5 of 7" in text_of(markup)
        assert '<meta http-equiv="refresh" content="2">' in markup
    finally:
        running.unlink()
    # a marker left by a process that is gone is not a run
    running.write_text(json.dumps({**marker, "pid": 2**22 + 12345}))
    try:
        assert verifications.state("web", head).status == "none"
    finally:
        running.unlink()


def test_shutdown_stops_a_verification_and_keeps_no_report(app: App, driven: Driven, tmp_path: Path) -> None:
    application = create_app(Settings(data_dir=tmp_path, tokens=app.tokens.settings_map()), store=app.store)
    with TestClient(application):
        verifications = web_state(application).verifications
        assert not verifications.stopping.is_set()
    # the server's shutdown (the lifespan's end) told the runs to stop
    assert verifications.stopping.is_set() and web_state(application).mix_verifications.stopping.is_set()
    row = app.store.election("web")
    assert verifications.start("web", row.head_seq, row.head_hash.hex(), row.phase) == "started"
    folder = tmp_path / "verifications" / "web"
    deadline = time.monotonic() + 60
    while any(folder.glob("*.running")):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    # stopped at the verifier's first progress report: no report, so the next server runs it again
    assert not list(folder.glob("*.json"))
    assert verifications._one.acquire(blocking=False), "the run let go of its slot"


def test_pages_show_no_secret(app: App, driven: Driven) -> None:
    for path in (
        "/",
        "/elections/web",
        "/elections/web/board",
        "/elections/web/results",
        "/elections/web/dashboard",
        "/elections/web/verification",
        f"/elections/web/track?code={driven.receipts[0]['code']}",
    ):
        markup = page(app, path)
        for token in app.tokens.settings_map():
            assert token not in markup, path


def test_pages_can_be_turned_off(tmp_path: Path) -> None:
    application = create_app(Settings(data_dir=tmp_path, tokens={"t" * 20: "admin"}, pages=False))
    with TestClient(application) as http:
        assert http.get("/").status_code == 404
        assert http.get("/static/votum.css").status_code == 404
        assert http.get("/health").status_code == 200


def test_contests_of_names_choices() -> None:
    contests = views.contests_of(synthetic_manifest(2))
    assert [c.contest_id for c in contests] == ["contest-1", "contest-2"]
    assert all(c.choices for c in contests)
    named = views.contests_of(MANIFEST)
    assert [c.label for c in named[0].choices] == ["Alice", "Bob", "Carol"]


def test_message_catalogue_is_complete_and_used() -> None:
    """Every text is in the catalogue: each key the templates, the page code and the scripts ask for
    exists, and each key of the catalogue is asked for (literally or by a known prefix)."""
    keys = set(catalogue("en"))
    sources = [*WEB.glob("templates/*.html"), WEB / "pages.py", *WEB.glob("static/*.js")]
    used: set[str] = set()
    for path in sources:
        text = path.read_text()
        used |= set(re.findall(r"""\bt\(\s*["']([a-z_0-9]+\.[a-z_0-9.]*)["']""", text))
        used |= set(re.findall(r"""\b(?:say|M)\s*[(\[]\s*["']([a-z_0-9]+\.[a-z_0-9.]*)["']""", text))
        used |= set(re.findall(r"""\bt\.label\(\s*["']([a-z_]+\.)["']""", text))
    # `t("phase." ~ row.phase)`: a prefix completed at run time
    dynamic = tuple(k for k in used if k.endswith("."))
    assert dynamic and set(dynamic) <= {
        "phase.",
        "status.",
        "track.state.",
        "rule.",
        "mix.decision.",
        "kind.",
        "eg2.form.",
        "eg2.state.",
    }
    used -= set(dynamic)
    assert used - keys == set(), "asked for but not in the catalogue"
    dynamic += ("nav.",)
    unused = {k for k in keys - used if not k.startswith(dynamic)}
    assert unused == set(), "in the catalogue but never shown"
    # every language file has the same keys as English
    for path in MESSAGES.glob("*.json"):
        assert set(json.loads(path.read_text())) <= keys, path
    assert choose("fr-CH, en;q=0.5") == "en" and Messages("en")("track.found")


def _luminance(colour: str) -> float:
    rgb = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def _contrast(a: str, b: str) -> float:
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def test_stylesheet_contrast() -> None:
    """Every text colour of the stylesheet reads at 7:1 on white and 4.5:1 (WCAG AA) on every
    background the stylesheet sets."""
    css = (WEB / "static" / "votum.css").read_text()
    variables = dict(re.findall(r"--([a-z-]+):\s*(#[0-9a-fA-F]{6})", css))

    def colours(prop: str) -> set[str]:
        found = set()
        for value in re.findall(rf"(?<![-a-z]){prop}:\s*([^;}}]+)", css):
            value = value.strip()
            ref = re.fullmatch(r"var\(--([a-z-]+)\)", value)
            if ref:
                found.add(variables[ref.group(1)])
            elif re.fullmatch(r"#[0-9a-fA-F]{6}", value):
                found.add(value)
        return found

    texts = colours("color") - {"#fff", "#ffffff"}
    backgrounds = colours("background") | {"#ffffff"}
    assert len(texts) >= 5 and len(backgrounds) >= 3
    for text in texts:
        assert _contrast(text, "#ffffff") >= 7, text
        for background in backgrounds:
            if _contrast(text, background) < 4.5:
                # the dark backgrounds (buttons, the skip link) carry white text only
                assert background in (variables["accent"], variables["muted"]), (text, background)
    for dark in (variables["accent"], variables["muted"]):
        assert _contrast("#ffffff", dark) >= 7


# --- in Chromium, against a real server ------------------------------------------------------------


@dataclass
class Live:
    base: str
    db: Path
    driven: Driven
    mix_outcomes: dict[str, dict[str, Any]]
    #: the ElectionGuard 2.1 record the pages show at /eg2/city
    eg2_record: Path


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    data_dir = tmp_path_factory.mktemp("web-live")
    tokens = Tokens.generate(3)
    env = {**os.environ, "VOTUM_TOKENS": tokens.env()}
    outcomes = make_mix_records(data_dir / "mix")
    eg2 = data_dir / "eg2" / "city"
    eg2.parent.mkdir()
    config = Eg2Config(ballots=8, guardians=3, quorum=2, missing=1, challenge_rate=0.25, out=eg2)
    run_eg2_election(config)
    server, base = start_server(
        [
            "--data-dir",
            str(data_dir),
            "--mix-records",
            str(data_dir / "mix"),
            "--eg2-records",
            str(eg2.parent),
        ],
        env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        with Client(base) as client:
            yield Live(base, data_dir / "votum.db", drive(client, tokens, "live"), outcomes, eg2)
    finally:
        server.terminate()
        server.wait(timeout=60)


def visit(browser: Any, url: str, shot: str) -> None:
    """Opens `url`, keeps a screenshot, and fails on any console error the page logged."""
    browser.get(url)
    settle(browser, shot)


def settle(browser: Any, shot: str) -> None:
    browser.save_screenshot(str(ARTIFACTS / f"{shot}.png"))
    errors = [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
    assert errors == [], errors


def wait_for(browser: Any, condition: Any, seconds: float = 120) -> Any:
    """Polls `condition` until it holds; a page reloading under it (the verification page refreshes
    itself) is polled again, not an error."""
    from selenium.common.exceptions import (
        NoSuchElementException,
        StaleElementReferenceException,
        WebDriverException,
    )
    from selenium.webdriver.support.ui import WebDriverWait

    def polled(b: Any) -> Any:
        try:
            return condition(b)
        except WebDriverException as e:
            # an element found just before the page reloaded: Chrome's inspector may say so in these
            # words instead of a stale reference
            if "does not belong to the document" in str(e):
                raise StaleElementReferenceException(str(e)) from e
            raise

    ignored = (NoSuchElementException, StaleElementReferenceException)
    return WebDriverWait(browser, seconds, poll_frequency=0.1, ignored_exceptions=ignored).until(polled)


def test_browser_tracker_results_and_keyboard(browser: Any, live: Live) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    visit(browser, f"{live.base}/", "elections")
    assert browser.find_element(By.LINK_TEXT, "live").get_attribute("href").endswith("/elections/live")
    visit(browser, f"{live.base}/elections/live", "election")
    # keyboard: the first Tab reaches the skip link, which moves the focus to the content
    body = browser.find_element(By.TAG_NAME, "body")
    body.send_keys(Keys.TAB)
    assert browser.switch_to.active_element.get_attribute("class") == "skip"
    browser.switch_to.active_element.send_keys(Keys.ENTER)
    assert browser.switch_to.active_element.get_attribute("id") == "main"

    plan, receipt = live.driven.cast()
    visit(browser, f"{live.base}/elections/live/track", "track-form")
    field = browser.find_element(By.ID, "code")
    assert browser.find_element(By.CSS_SELECTOR, "label[for=code]").text
    field.send_keys(receipt["code"] + Keys.ENTER)
    wait_for(browser, lambda b: b.find_elements(By.ID, "state"))
    settle(browser, "track-found")
    assert browser.find_element(By.ID, "state").text.startswith("cast")
    assert browser.find_element(By.ID, "ballot-id").text == plan.ballot_id

    _, spoiled = live.driven.spoiled()
    visit(browser, f"{live.base}/elections/live/track?code={spoiled['code']}", "track-spoiled")
    assert browser.find_element(By.ID, "decryption").is_displayed()

    visit(browser, f"{live.base}/elections/live/track?code=nothing-like-this", "track-unknown")
    assert "No ballot with the code or id" in browser.find_element(By.ID, "result").text

    visit(browser, f"{live.base}/elections/live/results", "results")
    shown = {
        row.find_element(By.TAG_NAME, "th").text.removesuffix(" elected"): int(
            row.find_element(By.CSS_SELECTOR, "td.votes").text
        )
        for row in browser.find_elements(By.CSS_SELECTOR, "table.results tbody tr:not(.undervotes)")
    }
    assert shown == expected_by_name(live.driven.driver)


def test_browser_dashboard_and_verification(browser: Any, live: Live) -> None:
    from selenium.webdriver.common.by import By

    visit(browser, f"{live.base}/elections/live/dashboard", "dashboard")
    assert browser.find_element(By.ID, "d-cast").text == "6"
    # the script polls: after two polls the rate is measured (no ballots arrive: 0.0)
    wait_for(browser, lambda b: "ballots/s" in b.find_element(By.ID, "d-rate").text, 30)
    settle(browser, "dashboard-live")

    visit(browser, f"{live.base}/elections/live/verification", "verification-before")
    browser.find_element(By.ID, "start-verification").click()
    # the page refreshes itself (no script) until the report is there
    wait_for(
        browser,
        lambda b: (
            "pass" in b.find_element(By.ID, "verification-status").text.lower()
            or "not pass" in b.find_element(By.ID, "verification-status").text
        ),
    )
    settle(browser, "verification-done")
    assert browser.find_element(By.ID, "verification-status").text == "Every check passed."
    statuses = {e.text for e in browser.find_elements(By.CSS_SELECTOR, "table.checks td.status")}
    assert statuses == {"pass"}


def test_browser_mix_record_rounds(browser: Any, live: Live) -> None:
    from selenium.webdriver.common.by import By

    visit(browser, f"{live.base}/mix", "mix-list")
    browser.find_element(By.LINK_TEXT, "irv").click()
    settle(browser, "mix-irv-before")
    browser.find_element(By.ID, "start-verification").click()
    wait_for(browser, lambda b: b.find_elements(By.ID, "rounds"))
    settle(browser, "mix-irv-rounds")
    expected = live.mix_outcomes["irv"]
    rows = browser.find_elements(By.CSS_SELECTOR, "#rounds tbody tr")
    first_round = [int(r.find_elements(By.CSS_SELECTOR, "span.votes")[0].text) for r in rows]
    assert first_round == expected["tallies"]
    winners = [i + 1 for i, r in enumerate(rows) if "winner" in (r.get_attribute("class") or "")]
    assert winners == sorted(expected["winners"])


def test_browser_eg2_record_verified_and_a_challenged_ballot_found(browser: Any, live: Live) -> None:
    """An ElectionGuard 2.1 record at /eg2: verified from the page, its result shown, and a challenged
    ballot's code typed and sent from the keyboard shows the ballot's opening; no console error."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    visit(browser, f"{live.base}/eg2", "eg2-list")
    browser.find_element(By.LINK_TEXT, "city").click()
    settle(browser, "eg2-before")
    browser.find_element(By.ID, "start-verification").click()
    wait_for(browser, lambda b: b.find_elements(By.ID, "eg2-results"))
    settle(browser, "eg2-results")
    assert browser.find_element(By.ID, "verification-status").text == "Every check passed."
    ballots = [json.loads(x) for x in (live.eg2_record / "ballots.jsonl").read_text().splitlines()]
    challenged = next(b for b in ballots if b["state"] == "challenged")
    field = browser.find_element(By.ID, "code")
    field.send_keys(challenged["H_C"].lower(), Keys.ENTER)
    wait_for(browser, lambda b: b.find_elements(By.ID, "opened"))
    settle(browser, "eg2-challenged")
    assert browser.find_element(By.ID, "ballot-id").text == challenged["id"]


def test_browser_relinks_the_board_and_names_an_altered_entry(browser: Any, live: Live) -> None:
    from selenium.webdriver.common.by import By

    def relink() -> tuple[str, str]:
        browser.find_element(By.ID, "relink").click()
        wait_for(browser, lambda b: b.find_element(By.ID, "chain-check").get_attribute("data-result"))
        box = browser.find_element(By.ID, "chain-check")
        return box.get_attribute("data-result"), browser.find_element(By.ID, "relink-status").text

    visit(browser, f"{live.base}/elections/live/board", "board")
    result, status = relink()
    settle(browser, "board-relinked")
    with sqlite3.connect(live.db) as conn:
        (head,) = conn.execute("SELECT head_seq FROM elections WHERE id='live'").fetchone()
    assert result == "ok", status
    assert f"all {head + 1} entries link from genesis" in status
    progress = browser.find_element(By.ID, "relink-progress")
    assert progress.get_attribute("value") == str(head + 1)

    # an entry altered directly in the database (a cast ballot's document, one character changed)
    seq = live.driven.cast()[1]["seq"]
    with sqlite3.connect(live.db) as conn:
        (payload,) = conn.execute(
            "SELECT payload FROM board WHERE election_id='live' AND seq=?", (seq,)
        ).fetchone()
        altered = payload.replace(b'"cast"', b'"CAST"', 1) if b'"cast"' in payload else payload[:-1] + b" }"
        assert altered != payload
        conn.execute("UPDATE board SET payload=? WHERE election_id='live' AND seq=?", (altered, seq))
    visit(browser, f"{live.base}/elections/live/board", "board-altered-before")
    result, status = relink()
    settle(browser, "board-altered")
    assert result == "broken"
    assert status.startswith(f"Entry {seq} (submitted_ballot, submitted_ballots/")
    # the entry's row on this page is marked
    assert "broken" in browser.find_element(By.ID, f"entry-{seq}").get_attribute("class")


def test_the_api_page_is_served_here_without_scripts_or_third_parties(app: App) -> None:
    """The API link opens a page rendered from the app's own OpenAPI document (issue 42, C.9): it works
    offline, loads nothing from elsewhere, and lists every operation the document has."""
    markup = page(app, "/api")
    assert "<script" not in markup and "cdn" not in markup.lower() and "https://" not in markup
    spec = app.http.get("/openapi.json").json()
    listed = set(re.findall(r"<h2><code>([A-Z]+) ([^<]+)</code></h2>", markup))
    wanted = {
        (method.upper(), path)
        for path, item in spec["paths"].items()
        for method in item
        if method in ("get", "post", "put", "delete", "patch")
    }
    assert listed == wanted and ("POST", "/v1/elections") in listed
    assert 'href="/api"' in page(app, "/")


def test_quoted_commands_are_set_as_code_not_backticks(app: App, driven: Driven) -> None:
    """A command quoted in a message is shown as code (issue 42, C.11: the pages showed literal backticks)."""
    for path in ("/elections/web", "/elections/web/board", "/elections/web/verification"):
        markup = page(app, path)
        assert "`" not in text_of(markup), path
    assert "<code>votum verify FILE</code>" in page(app, "/elections/web")
    # the board names each entry's kind in words (its raw name stays in the cell's title)
    board = page(app, "/elections/web/board")
    kinds = re.findall(r'<td title="([a-z_]+)">([^<]+)</td>', board)
    assert kinds and all(shown != raw or "_" not in raw for raw, shown in kinds)
    assert ("context", "election context") in kinds
    # each ballot entry shows its ballot code, linked to the tracker
    codes = re.findall(r'<a class="code" href="/elections/web/track\?code=([0-9A-Fa-f]+)">', board)
    receipts = {r["code"] for r in driven.receipts}
    assert (
        codes
        and set(codes) <= receipts
        and len(codes) == len([k for k, _ in kinds if k == "submitted_ballot"])
    )


def test_the_dashboard_says_what_the_election_waits_for(app: App, driven: Driven) -> None:
    """The officials' dashboard names what is awaited and which guardian posted what (issue 42, C.11)."""
    done = page(app, "/elections/web/dashboard")
    assert "Nothing: the results are published." in text_of(done)
    rows = dict(re.findall(r'<tr><th scope="row">([^<]+)</th><td>posted</td><td>([^<]*)</td></tr>', done))
    # guardians 1 and 2 decrypted, guardian 3 was compensated for
    assert rows == {"guardian-1": "posted", "guardian-2": "posted", "guardian-3": "—"}, rows


def test_browser_facts_stack_at_phone_width(browser: Any, live: Live) -> None:
    """At phone width a fact's label sits above its value, not in a half-width column (issue 42, C.11)."""
    from selenium.webdriver.common.by import By

    size = browser.get_window_size()
    try:
        browser.set_window_size(390, 844)
        _, receipt = live.driven.cast()
        visit(browser, f"{live.base}/elections/live/track?code={receipt['code']}", "track-phone")
        facts = browser.find_elements(By.CSS_SELECTOR, "dl.facts")
        assert facts
        dt = facts[0].find_element(By.TAG_NAME, "dt").rect
        dd = facts[0].find_element(By.TAG_NAME, "dd").rect
        assert abs(dd["x"] - dt["x"]) < 2 and dd["y"] > dt["y"], (dt, dd)
    finally:
        browser.set_window_size(size["width"], size["height"])
