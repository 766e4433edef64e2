"""The web pages of `votum serve` (spec/80.9): elections, the ballot tracker, the bulletin board, the
results, the verification and the officials' dashboard. Every page is rendered on the server from
the store and works without JavaScript, except re-linking the board's chain in the browser and the
dashboard's live figures. No page reads or shows anything that is not on the public board."""

from __future__ import annotations

import json
import math
import re
import time
from pathlib import Path
from typing import Any

from fastapi import APIRouter, FastAPI, Query, Request
from fastapi import Path as PathParam
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.routing import APIRoute
from fastapi.staticfiles import StaticFiles
from jinja2 import Environment, FileSystemLoader, select_autoescape

from votum import results
from votum.asgi import MAX_SEQ, at_shutdown, store_of
from votum.errors import NotFound
from votum.fingerprints import grouped
from votum.store import ElectionRow, Store
from votum.store.awaited import awaited
from votum.web import eg2_records, views
from votum.web.catalog import Messages, choose
from votum.web.eg2_records import BallotIndexes
from votum.web.state import PageOptions, WebState, web_state
from votum.web.verification import Verifications

HERE = Path(__file__).parent
ENV = Environment(
    loader=FileSystemLoader(HERE / "templates"),
    autoescape=select_autoescape(["html"]),
    trim_blocks=True,
    lstrip_blocks=True,
)
ENV.filters["grouped"] = grouped

#: pages load only their own files; nothing inline runs, nothing is framed
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
        "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}

#: entries per page of the board browser
BOARD_PAGE = 50

router = APIRouter(route_class=APIRoute, include_in_schema=False, default_response_class=HTMLResponse)


def install(app: FastAPI, store: Store, options: PageOptions) -> None:
    data_dir = options.data_dir
    state = WebState(
        options=options,
        verifications=Verifications(
            store, data_dir / "verifications", interval=options.verification_interval
        ),
        # a record file does not change under the page: each version is verified once, with no interval
        mix_verifications=Verifications(store, data_dir / "mix-verifications", interval=0.0),
        eg2_verifications=Verifications(store, data_dir / "eg2-verifications", interval=0.0),
        eg2_indexes=BallotIndexes(),
    )
    app.state.web = state
    app.include_router(router)
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")

    # at shutdown a verification in progress stops at once instead of holding the process until it ends
    at_shutdown(app, state.verifications.stop)
    at_shutdown(app, state.mix_verifications.stop)
    at_shutdown(app, state.eg2_verifications.stop)


def render(
    request: Request, template: str, status: int = 200, script: tuple[str, ...] = (), **context: Any
) -> HTMLResponse:
    """`template` in the request's language; `script`: the prefixes of the messages the page's script
    needs, handed to the template as `messages`."""
    t = Messages(choose(request.headers.get("accept-language")))
    settings = web_state(request).options
    mix_on = settings.mix_records is not None
    eg2_on = settings.eg2_records is not None
    # the API page is served from here, without scripts or third parties; Swagger UI only when asked for
    api_docs_href = "/docs" if settings.api_docs else "/api"
    messages = {k: v for prefix in script for k, v in t.subset(prefix).items()}
    html = ENV.get_template(template).render(
        t=t,
        lang=t.lang,
        mix_on=mix_on,
        eg2_on=eg2_on,
        messages=messages,
        api_docs_href=api_docs_href,
        **context,
    )
    return HTMLResponse(html, status_code=status, headers=SECURITY_HEADERS)


def _election(request: Request, election_id: str) -> ElectionRow | HTMLResponse:
    try:
        return store_of(request).election(election_id)
    except NotFound:
        return render(request, "not_found.html", 404, election_id=election_id, what="election")


@router.get("/api")
def api_page(request: Request) -> HTMLResponse:
    """The HTTP API, read from the app's own OpenAPI document and rendered here (issue 42, C.9: the
    interactive page loaded its script from a CDN, blank on an offline server)."""
    return render(request, "api.html", operations=views.api_operations(request.app.openapi()))


@router.get("/")
def elections_page(request: Request) -> HTMLResponse:
    """Every election, with its manifest's title and dates (issue 42, C.11: listed by id alone)."""
    store = store_of(request)
    rows = store.elections()
    titles = {row.id: views.title_of(views.manifest_of(store, row.id)) for row in rows}
    return render(request, "elections.html", elections=rows, titles=titles)


@router.get("/elections/{election_id}")
def election_page(request: Request, election_id: str) -> HTMLResponse:
    row = _election(request, election_id)
    if isinstance(row, HTMLResponse):
        return row
    return render(request, "election.html", e=row, overview=views.overview(store_of(request), election_id))


@router.get("/elections/{election_id}/track")
def track_page(
    request: Request, election_id: str, code: str = Query(default="", max_length=256)
) -> HTMLResponse:
    row = _election(request, election_id)
    if isinstance(row, HTMLResponse):
        return row
    found = views.track(store_of(request), row, code) if code.strip() else None
    return render(request, "track.html", e=row, query=code.strip(), found=found)


@router.get("/elections/{election_id}/board")
def board_page(
    request: Request, election_id: str, after: int = Query(default=-1, ge=-1, le=MAX_SEQ)
) -> HTMLResponse:
    row = _election(request, election_id)
    if isinstance(row, HTMLResponse):
        return row
    entries = store_of(request).entries(election_id, after, BOARD_PAGE, with_payload=False)
    entries = [e for e in entries if e.seq <= row.head_seq]
    # each ballot entry with its ballot code, as the voter's receipt shows it (issue 42, C.11)
    codes: dict[int, str] = {}
    if entries:
        for b in store_of(request).ballots(election_id, after=entries[0].seq - 1, limit=len(entries)):
            if b.seq <= entries[-1].seq:
                codes[b.seq] = b.code
    earlier = max(-1, after - BOARD_PAGE) if after >= 0 else None
    later = entries[-1].seq if entries and entries[-1].seq < row.head_seq else None
    return render(
        request,
        "board.html",
        e=row,
        entries=entries,
        codes=codes,
        earlier=earlier,
        later=later,
        script=("board.",),
    )


@router.get("/elections/{election_id}/board/{seq}/payload", response_class=Response)
def board_payload(request: Request, election_id: str, seq: int = PathParam(ge=0, le=MAX_SEQ)) -> Response:
    """An entry's document exactly as chained, as a download."""
    row = _election(request, election_id)
    if isinstance(row, HTMLResponse):
        return row
    try:
        entry = store_of(request).entry(election_id, seq)
    except NotFound:
        return render(request, "not_found.html", 404, election_id=election_id, what="entry", seq=seq)
    filename = entry.name.replace("/", "_")
    return Response(
        entry.payload,
        media_type="application/json",
        headers={**SECURITY_HEADERS, "Content-Disposition": f'attachment; filename="{filename}"'},
    )


@router.get("/elections/{election_id}/results")
def results_page(request: Request, election_id: str) -> HTMLResponse:
    row = _election(request, election_id)
    if isinstance(row, HTMLResponse):
        return row
    store = store_of(request)
    published = store.entry_named(election_id, "phases/published.json")
    contests = present = missing = verified = None
    if published is not None:
        doc = json.loads(published.text())
        contests = views.results(views.manifest_of(store, election_id), doc["counts"], row.cast_count)
        present, missing = doc["present"], doc["missing"]
        # the latest verification of the board as it stands: the result is shown beside what it found
        head = row.head_hash.hex()
        state = web_state(request).verifications.state(election_id, head)
        if state.status == "done" and state.report is not None:
            verified = views.verified(state.report, head, doc["counts"])
    return render(
        request,
        "results.html",
        e=row,
        contests=contests,
        present=present,
        missing=missing,
        verified=verified,
        head=row.head_hash.hex(),
    )


@router.get("/elections/{election_id}/verification")
def verification_page(request: Request, election_id: str, refused: str = "") -> HTMLResponse:
    row = _election(request, election_id)
    if isinstance(row, HTMLResponse):
        return row
    verifications = web_state(request).verifications
    state = verifications.state(election_id, row.head_hash.hex())
    return render(
        request,
        "verification.html",
        e=row,
        state=state,
        refused=refused if refused in ("busy", "recent") else "",
        wait=math.ceil(verifications.wait_seconds(election_id)),
        running_for=int(time.time() - state.started) if state.status == "running" else 0,
    )


@router.post("/elections/{election_id}/verification", response_model=None)
def start_verification(request: Request, election_id: str) -> HTMLResponse | RedirectResponse:
    """Starts a run for the current head (once per head: a repeated request shows the same run)."""
    row = _election(request, election_id)
    if isinstance(row, HTMLResponse):
        return row
    outcome = "started"
    if row.phase != "ceremony":
        outcome = web_state(request).verifications.start(
            election_id,
            row.head_seq,
            row.head_hash.hex(),
            row.phase,
            ballots=row.cast_count + row.spoiled_count + row.printed_count,
        )
    suffix = "" if outcome == "started" else f"?refused={outcome}"
    return RedirectResponse(f"/elections/{election_id}/verification{suffix}", status_code=303)


@router.get("/elections/{election_id}/dashboard")
def dashboard_page(request: Request, election_id: str) -> HTMLResponse:
    row = _election(request, election_id)
    if isinstance(row, HTMLResponse):
        return row
    waiting = awaited(store_of(request), row)
    return render(request, "dashboard.html", e=row, awaited=waiting, script=("dashboard.", "phase."))


# --- mixnet election records (`mix_records`: a directory of `votum mix --out` files) ----------------------

MIX_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
#: the first bytes of a mixnet election record (spec/91.7): other systems' records under a `.vmix` name
#: are neither listed nor verified here (issue 43, item 5)
MIX_MAGIC = b"VOTUMMIX"


def _is_mix_record(path: Path) -> bool:
    try:
        with path.open("rb") as f:
            return f.read(len(MIX_MAGIC)) == MIX_MAGIC
    except OSError:
        return False


def _mix_files(request: Request) -> dict[str, Path]:
    folder = web_state(request).options.mix_records
    if folder is None or not folder.is_dir():
        return {}
    return {
        p.stem: p
        for p in sorted(folder.glob("*.vmix"))
        if p.is_file() and MIX_NAME.fullmatch(p.stem) and _is_mix_record(p)
    }


def _mix_version(path: Path) -> str:
    """A record file's version as the verification cache keys it: its size and modification time (a
    replaced file is verified again)."""
    st = path.stat()
    return f"{st.st_size}-{st.st_mtime_ns}"


@router.get("/mix")
def mix_list(request: Request) -> HTMLResponse:
    verifications = web_state(request).mix_verifications
    records = [
        (name, path.stat().st_size, verifications.state(name, _mix_version(path)))
        for name, path in _mix_files(request).items()
    ]
    return render(request, "mix_list.html", records=records)


@router.get("/mix/{name}")
def mix_page(request: Request, name: str, refused: str = "") -> HTMLResponse:
    path = _mix_files(request).get(name)
    if path is None:
        return render(request, "not_found.html", 404, election_id=name, what="mix")
    verifications = web_state(request).mix_verifications
    state = verifications.state(name, _mix_version(path))
    outcome = None
    if state.status == "done" and state.report and state.report.get("passed"):
        outcome = views.mix_outcome(state.report.get("values", {}))
    return render(
        request,
        "mix_record.html",
        name=name,
        size=path.stat().st_size,
        state=state,
        outcome=outcome,
        refused=refused if refused == "busy" else "",
        running_for=int(time.time() - state.started) if state.status == "running" else 0,
    )


@router.post("/mix/{name}/verification", response_model=None)
def mix_verify(request: Request, name: str) -> HTMLResponse | RedirectResponse:
    path = _mix_files(request).get(name)
    if path is None:
        return render(request, "not_found.html", 404, election_id=name, what="mix")
    return _verify_file(web_state(request).mix_verifications, name, _mix_version(path), path, f"/mix/{name}")


def _verify_file(
    verifications: Verifications, name: str, version: str, path: Path, page: str
) -> RedirectResponse:
    """Starts the verification of a record file (or directory) at `version` and sends the reader back to its
    page, saying why when none started."""
    outcome = verifications.start(name, -1, version, record=path)
    suffix = "" if outcome == "started" else f"?refused={outcome}"
    return RedirectResponse(f"{page}{suffix}", status_code=303)


# --- ElectionGuard 2.x records (`eg2_records`: a directory of record directories) --------------------------


def _eg2_record(request: Request, name: str) -> tuple[Path, str] | HTMLResponse:
    found = eg2_records.records(web_state(request).options.eg2_records).get(name)
    if found is None:
        return render(request, "not_found.html", 404, election_id=name, what="eg2")
    return found


def _eg2_result(report: dict[str, Any] | None, path: Path) -> list[Any] | None:
    """The contests the verifier recounted, from a verification that passed (else None)."""
    if not report or not report.get("passed"):
        return None
    values = report.get("values", {})
    return results.eg_contests(values, results.record_manifest(path))


@router.get("/eg2")
def eg2_list(request: Request) -> HTMLResponse:
    verifications = web_state(request).eg2_verifications
    listed = [
        (
            eg2_records.overview(name, path, form),
            verifications.state(name, eg2_records.version_of(path)),
        )
        for name, (path, form) in eg2_records.records(web_state(request).options.eg2_records).items()
    ]
    return render(request, "eg2_list.html", records=listed)


@router.get("/eg2/{name}")
def eg2_page(
    request: Request, name: str, refused: str = "", code: str = Query(default="", max_length=256)
) -> HTMLResponse:
    found = _eg2_record(request, name)
    if isinstance(found, HTMLResponse):
        return found
    path, form = found
    state = web_state(request)
    version = eg2_records.version_of(path)
    verification = state.eg2_verifications.state(name, version)
    report = verification.report if verification.status == "done" else None
    tracked = None
    if code.strip() and form == "2.1":
        tracked = eg2_records.track(path, version, state.eg2_indexes, code)
    return render(
        request,
        "eg2_record.html",
        o=eg2_records.overview(name, path, form),
        state=verification,
        contests=_eg2_result(report, path),
        digest=(report or {}).get("values", {}).get("tally_sha256"),
        query=code.strip(),
        tracked=tracked,
        refused=refused if refused == "busy" else "",
        running_for=int(time.time() - verification.started) if verification.status == "running" else 0,
    )


@router.post("/eg2/{name}/verification", response_model=None)
def eg2_verify(request: Request, name: str) -> HTMLResponse | RedirectResponse:
    found = _eg2_record(request, name)
    if isinstance(found, HTMLResponse):
        return found
    path, _ = found
    version = eg2_records.version_of(path)
    return _verify_file(web_state(request).eg2_verifications, name, version, path, f"/eg2/{name}")
