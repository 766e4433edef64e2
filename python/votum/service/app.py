"""The app factory: `create_app(settings)` builds the FastAPI application of `votum serve`."""

from __future__ import annotations

import json
import logging
import os
import threading
from typing import Any

from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.responses import PlainTextResponse
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

import votum
from votum.localnet import is_loopback
from votum.service import problems, seed, v1
from votum.service.auth import require
from votum.service.codec import OPENAPI_MSGPACK_NOTE, NegotiatedResponse, NegotiatedRoute
from votum.service.http import ChunkedBodies, HeaderDeadlineProtocol
from votum.service.limits import AnonymousGate, BodyLimit
from votum.service.observe import Metrics, RequestLog, configure_logging
from votum.service.settings import Settings
from votum.service.state import ServiceState, service_state
from votum.service.tokens import TokenBook
from votum.store import Store

log = logging.getLogger("votum.service")


#: headers of the interactive documentation: its script comes from the CDN FastAPI names, nothing
#: frames it, and it talks to this origin only
DOCS_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src https://cdn.jsdelivr.net 'unsafe-inline'; "
        "style-src https://cdn.jsdelivr.net; img-src https://fastapi.tiangolo.com data:; "
        "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


class DocsHeaders:
    """`DOCS_HEADERS` on `/docs` and its OAuth redirect page (issue 43, item 19)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not scope["path"].startswith("/docs"):
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Any) -> None:
            if message["type"] == "http.response.start":
                headers = [
                    (k, v) for k, v in message.get("headers", []) if k.decode().lower() not in _DOCS_NAMES
                ]
                headers += [(k.lower().encode(), v.encode()) for k, v in DOCS_HEADERS.items()]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, with_headers)


_DOCS_NAMES = {k.lower() for k in DOCS_HEADERS}


class HeadAsGet:
    """HEAD answered as GET without the body, for every route that takes GET (RFC 9110 9.3.2); the
    routes themselves declare GET only (issue 43, item 22: HEAD was 405)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return

        async def without_body(message: Any) -> None:
            if message["type"] == "http.response.body":
                message = {**message, "body": b""}
            await send(message)

        await self.app({**scope, "method": "GET"}, receive, without_body)


def create_app(settings: Settings | None = None, store: Store | None = None) -> FastAPI:
    """The service for `settings` (defaults when None) over `store` (by default the database of
    `settings.url()`: SQLite under `data_dir`, or PostgreSQL). A body above `max_body_bytes` is
    refused with 413 before any route reads it (`limits.BodyLimit`)."""
    settings = settings or Settings()
    if store is None:
        if settings.database_url is None:
            settings.data_dir.mkdir(parents=True, exist_ok=True)
        store = Store(settings.url())
    app = FastAPI(
        title="votum election service",
        version=votum.__version__,
        description="End-to-end verifiable elections: ElectionGuard 1.0 compatible. " + OPENAPI_MSGPACK_NOTE,
        default_response_class=NegotiatedResponse,
        docs_url="/docs" if settings.api_docs else None,
        redoc_url=None,
    )
    app.router.route_class = NegotiatedRoute
    tokens = TokenBook(settings.tokens, settings.token_hashes)
    problems.install(app)
    seed_on = settings.seed_endpoints_on
    # innermost: HEAD is answered as GET without the body (logged as HEAD)
    app.add_middleware(HeadAsGet)
    if settings.api_docs:
        app.add_middleware(DocsHeaders)
    app.add_middleware(
        BodyLimit,
        limit=settings.max_body_bytes,
        tokens=tokens,
        open_paths=frozenset(seed.PATHS) if seed_on else frozenset(),
        body_timeout=settings.body_timeout,
    )

    # anonymous requests yield to those with a token, and at most `anonymous_concurrency` run at once
    app.add_middleware(
        AnonymousGate,
        tokens=tokens,
        concurrency=settings.anonymous_concurrency,
        open_paths=frozenset(seed.PATHS) if seed_on else frozenset(),
    )

    # outermost: the request id and the access line cover every answer, refusals by the limit too
    metrics = Metrics(store)
    app.state.service = ServiceState(settings=settings, tokens=tokens, metrics=metrics)
    app.add_middleware(RequestLog, metrics=metrics)
    # outside even that: every answer leaves in pieces uvicorn waits to drain (issue 43, item 2)
    app.add_middleware(ChunkedBodies)

    app.include_router(_health_router(seed_on))
    app.include_router(seed.router if seed_on else seed.disabled_router())
    v1.install(app, store)
    if settings.pages:
        from votum import web

        web.install(
            app,
            store,
            web.PageOptions(
                data_dir=settings.data_dir,
                verification_interval=settings.verification_interval,
                mix_records=settings.mix_records,
                eg2_records=settings.eg2_records,
                api_docs=settings.api_docs,
            ),
        )
    # the generator's tables (~0.4 s) are built in the background, not by the first request. Not a
    # daemon: the interpreter joins it at exit. A daemon thread still in native code (GIL released)
    # when the interpreter finalizes is ended by a forced unwind through Rust frames, which aborts
    # the process ("FATAL: exception not rethrown", exit 134): short test runs and quick restarts did
    threading.Thread(target=votum.Group("eg-4096").warm, name="votum-warm-tables").start()
    plain = sum(1 for role in settings.tokens.values() if role == "device")
    if plain:
        log.warning(
            "%d plain device token(s) configured: they share one first-come space of ballot ids and "
            "device locations, so one device can take another's ids first; give each device a named "
            "token (device:NAME), which owns the ids starting NAME- (docs/deploy.md)",
            plain,
        )
    if seed_on and not is_loopback(settings.host):
        log.warning(
            "the stateless seed endpoints are on at %s, beyond this machine: they carry guardian "
            "secrets over the wire and need no token (turn them off with VOTUM_SEED_ENDPOINTS=0)",
            settings.host,
        )
    return app


#: the environment variable through which `votum serve --workers N` hands its checked settings to
#: each worker process (tokens included: the environment of one's own processes, as `VOTUM_TOKENS`)
SETTINGS_ENV = "VOTUM_SERVE_SETTINGS"


def settings_for_workers(settings: Settings, log_level: str) -> str:
    return json.dumps({"settings": settings.model_dump(mode="json"), "log_level": log_level})


def app_from_environment() -> FastAPI:
    """The app of one worker of `votum serve --workers N` (uvicorn calls it in each process)."""
    given = json.loads(os.environ[SETTINGS_ENV])
    settings = Settings.model_validate(given["settings"])
    configure_logging(given["log_level"], settings.log_format)
    HeaderDeadlineProtocol.seconds = settings.header_timeout  # uvicorn loads it as `http.IMPORT_NAME`
    HeaderDeadlineProtocol.per_address = settings.max_connections_per_address
    HeaderDeadlineProtocol.send_seconds = settings.send_timeout
    return create_app(settings)


def _health_router(seed_on: bool) -> Any:

    router = APIRouter(tags=["service"], route_class=NegotiatedRoute)

    @router.get("/health")
    def health() -> dict[str, Any]:
        """Liveness: the version, and whether the seed endpoints are on."""
        return {"status": "ok", "version": votum.__version__, "seed_endpoints": seed_on}

    @router.get(
        "/metrics",
        dependencies=[Depends(require("admin", "metrics"))],
        response_class=PlainTextResponse,
        responses={200: {"content": {CONTENT_TYPE_LATEST: {}}}},
    )
    def metrics(request: Request) -> PlainTextResponse:
        """Prometheus text format (spec/80.8): request latency by route (this process), ballots and
        board entries per election and elections per phase (from the database). Token role `admin` or
        `metrics`."""
        body = generate_latest(service_state(request).metrics.registry)
        return PlainTextResponse(body, media_type=CONTENT_TYPE_LATEST)

    return router
