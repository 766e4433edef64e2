"""ElectionGuard 2.x records on the pages (spec/80.9, `/eg2`): records written by `votum election --spec 2.1`
in 2.1's own form and in egk-ec's are listed, verified on demand and their results shown only from a
verification that passed, as the verifier recounted them; a 2.1 record's ballots are looked up by
confirmation code or id, with a challenged ballot's opening, a cast pre-encrypted ballot's short codes and an
uncast one's printed sheet, each compared here with the record's own files."""

from __future__ import annotations

import hashlib
import html
import json
import re
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient
from votum.eg2 import Eg2Config, Eg2Result, run_eg2_election
from votum.service.app import create_app
from votum.service.settings import Settings
from votum.web.eg2_records import BallotIndexes, track, version_of


@dataclass
class Site:
    http: TestClient
    folder: Path
    runs: dict[str, Eg2Result]


def text_of(markup: str) -> str:
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", markup)))


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    root = tmp_path_factory.mktemp("eg2-pages")
    folder = root / "records"
    folder.mkdir()
    runs = {
        # 2.1 with challenged ballots, pre-encrypted ballots (some left uncast) and write-ins decrypted
        "city": run_eg2_election(
            Eg2Config(
                ballots=24,
                guardians=3,
                quorum=2,
                missing=1,
                challenge_rate=0.25,
                pre_encrypted=8,
                contest_data="decrypted",
                out=folder / "city",
            )
        ),
        "egk": run_eg2_election(
            Eg2Config(ballots=10, guardians=3, quorum=2, missing=1, record="egk-ec", out=folder / "egk")
        ),
    }
    for r in runs.values():
        assert r.verification is not None and r.verification.passed
    # a copy whose tally says one more vote for the first option than its ballots hold
    shutil.copytree(folder / "city", folder / "tampered")
    tally = json.loads((folder / "tampered" / "tally.json").read_text())
    tally["values"][0]["t"] += 1
    (folder / "tampered" / "tally.json").write_text(json.dumps(tally))
    (folder / "notes").mkdir()
    (folder / "notes" / "readme.txt").write_text("not a record")
    shutil.copytree(folder / "egk", folder / "bad name")
    settings = Settings(data_dir=root / "data", tokens={"t" * 20: "admin"}, eg2_records=folder)
    with TestClient(create_app(settings)) as http:
        yield Site(http, folder, runs)


def get(site: Site, path: str, status: int = 200, **params: str) -> str:
    r = site.http.get(path, params=params)
    assert r.status_code == status, (path, r.status_code)
    return r.text


def verified(site: Site, name: str) -> str:
    r = site.http.post(f"/eg2/{name}/verification", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == f"/eg2/{name}"
    deadline = time.monotonic() + 180
    while "being verified" in text_of(markup := get(site, f"/eg2/{name}")) or "running" in markup:
        assert time.monotonic() < deadline
        time.sleep(0.2)
    return markup


def shown_counts(markup: str) -> dict[str, dict[str, int]]:
    """Per contest id, the votes shown per choice."""
    out: dict[str, dict[str, int]] = {}
    for contest, body in re.findall(
        r'<table class="results" data-contest="([^"]+)">(.*?)</table>', markup, re.S
    ):
        rows = re.findall(
            r'<th scope="row">([^<]+?)(?: <span class="badge">[^<]*</span>)?</th>\s*'
            r'<td class="num votes">([^<]+)</td>',
            body,
        )
        out[contest] = {html.unescape(name): int(v.replace(",", "")) for name, v in rows}
    return out


def test_listing_and_unknown_records(site: Site) -> None:
    listing = text_of(get(site, "/eg2"))
    for name in ("city", "egk", "tampered"):
        assert name in listing
    assert "ElectionGuard 2.1" in listing and "egk-ec (2.0 cryptography)" in listing
    assert "notes" not in listing and "bad name" not in listing
    assert "not verified yet" in listing
    assert "no ElectionGuard 2.x record named “nope”" in text_of(get(site, "/eg2/nope", 404))
    get(site, "/eg2/notes", 404)
    assert site.http.post("/eg2/notes/verification", follow_redirects=False).status_code == 404
    # the navigation names the records on every page
    assert 'href="/eg2"' in get(site, "/")


def test_no_result_before_a_verification_passes(site: Site) -> None:
    page = get(site, "/eg2/city")
    assert 'id="eg2-results"' not in page and "Verify the record now" in text_of(page)
    guardians = json.loads((site.folder / "city" / "guardians.json").read_text())
    assert guardians["H_E"].upper() in text_of(page).replace(" ", "")
    tampered = verified(site, "tampered")
    assert "Some checks did not pass." in text_of(tampered)
    assert 'id="eg2-results"' not in tampered, "a record that failed shows no result"


def test_results_are_the_verifiers_recount(site: Site) -> None:
    page = verified(site, "city")
    assert "Every check passed." in text_of(page)
    digest = hashlib.sha256((site.folder / "city" / "tally.json").read_bytes()).hexdigest()
    assert re.sub(r"\s", "", re.search(r'id="tally-digest">([^<]+)<', page)[1]) == digest  # type: ignore[index]
    manifest = json.loads((site.folder / "city" / "manifest.json").read_text())
    names = {c["object_id"]: c["object_id"] for c in manifest.get("candidates", [])}
    expected: dict[str, dict[str, int]] = {}
    for contest in manifest["contests"]:
        for s in contest["ballot_selections"]:
            key = f"{contest['object_id']}/{s['object_id']}"
            expected.setdefault(contest["object_id"], {})[names.get(s["candidate_id"], s["candidate_id"])] = (
                site.runs["city"].counts[key]
            )
    assert shown_counts(page) == expected
    # the write-ins the guardians decrypted, listed under their contests
    report = site.runs["city"].verification
    assert report is not None
    write_ins = report.intermediates["write_ins"]
    assert write_ins, "every cast ballot's contest data is decrypted"
    for contest in write_ins.values():
        for text in contest:
            assert repr(text) in text_of(page)
    # the egk-ec form is verified and counted too
    egk = verified(site, "egk")
    assert "Every check passed." in text_of(egk) and shown_counts(egk)
    assert 'id="code"' not in egk, "the tracker is for 2.1's own record"


def test_tracker_shows_each_kind_of_ballot_as_the_record_holds_it(site: Site) -> None:
    record = site.folder / "city"
    ballots = lines(record / "ballots.jsonl")
    opened = {b["id"]: b for b in lines(record / "challenged.jsonl")}
    kinds = {"cast": 0, "challenged": 0, "pre-cast": 0, "pre-uncast": 0}
    for position, b in enumerate(ballots, 1):
        code = b["H_C"].lower()
        typed = " ".join(code[i : i + 4] for i in range(0, 64, 4))  # as printed, in groups, any case
        page = get(site, "/eg2/city", code=typed)
        shown = text_of(page)
        assert f"Ballot id {b['id']} " in shown and f"line {position} of {len(ballots)}" in shown
        state = re.search(r'id="state">([a-z]+):', page)[1]  # type: ignore[index]
        assert state == b["state"]
        by_id = get(site, "/eg2/city", code=b["id"])
        assert by_id.split('id="result"')[1] == page.split('id="result"')[1], "the id finds the same ballot"
        if b.get("pre_encrypted") and b["state"] == "cast":
            kinds["pre-cast"] += 1
            rows = re.findall(r"<td><code>([^<]*)</code></td>", page.split('id="short-codes"')[1])
            assert rows == [" ".join(v["short_code"] for v in c["chosen"]) for c in b["contests"]]
        elif b.get("pre_encrypted"):
            kinds["pre-uncast"] += 1
            sheet = page.split('id="sheet"')[1].split("</table>")[0]
            shorts = re.findall(r"<td><code>([^<]*)</code></td>", sheet)
            assert shorts == [v["short_code"] for c in opened[b["id"]]["contests"] for v in c["vectors"]]
            assert "no option: the contest's null vector" in text_of(sheet)
        elif b["state"] == "challenged":
            kinds["challenged"] += 1
            table = page.split('id="opened"')[1].split("</table>")[0]
            votes = [int(v) for v in re.findall(r'<td class="num (?:chosen|not-chosen)">(\d+)</td>', table)]
            assert votes == [s["vote"] for c in opened[b["id"]]["contests"] for s in c["selections"]]
        else:
            kinds["cast"] += 1
            assert 'id="opened"' not in page and 'id="sheet"' not in page
    assert all(kinds.values()), kinds


def test_tracker_unknown_and_hostile_input(site: Site) -> None:
    unknown = text_of(get(site, "/eg2/city", code="ab" * 32))
    assert "No ballot with the code or id" in unknown
    hostile = get(site, "/eg2/city", code="<script>alert(1)</script>")
    assert "<script>alert(1)</script>" not in hostile and "&lt;script&gt;" in hostile
    # an id that looks like 64 characters of something else is looked up as an id, not refused
    assert "No ballot with the code or id" in text_of(get(site, "/eg2/city", code="z" * 64))
    get(site, "/eg2/city", 422, code="x" * 257)


def test_a_replaced_record_is_verified_again(site: Site, tmp_path: Path) -> None:
    """A record's version is its top-level files' names, sizes and times: a replaced tally is a record not
    yet verified, and the ballot index follows the file it reads."""
    copy = tmp_path / "copy"
    shutil.copytree(site.folder / "city", copy)
    before = version_of(copy)
    indexes = BallotIndexes()
    first = lines(copy / "ballots.jsonl")[0]
    found = track(copy, before, indexes, first["H_C"])
    assert found is not None and found.ballot_id == first["id"]
    tally = copy / "tally.json"
    tally.write_text(tally.read_text() + "\n")
    assert version_of(copy) != before


def test_the_quick_index_never_shows_another_ballot(site: Site, tmp_path: Path) -> None:
    """The index finds lines by a quick scan for `"id"` and `"H_C"`; a record whose line carries a nested
    `"id"` before its own (another writer's key order) must not answer a query for that nested value with
    this ballot. The line read whole is compared with the query."""
    copy = tmp_path / "copy"
    shutil.copytree(site.folder / "city", copy)
    ballots = lines(copy / "ballots.jsonl")
    first = {"aa": {"id": "decoy"}, **ballots[0]}
    text = "".join(json.dumps(b, separators=(",", ":")) + "\n" for b in [first, *ballots[1:]])
    (copy / "ballots.jsonl").write_text(text)
    indexes = BallotIndexes()
    version = version_of(copy)
    assert track(copy, version, indexes, "decoy") is None
    by_code = track(copy, version, indexes, ballots[0]["H_C"])
    assert by_code is not None and by_code.ballot_id == ballots[0]["id"]
    second = track(copy, version, indexes, ballots[1]["id"])
    assert second is not None and second.ballot_id == ballots[1]["id"]
