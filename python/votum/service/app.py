"""The app factory: `create_app(settings)` builds the FastAPI application of `votum serve`."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI

import votum
from votum.service import problems, seed
from votum.service.auth import TokenBook
from votum.service.codec import OPENAPI_MSGPACK_NOTE, NegotiatedResponse, NegotiatedRoute
from votum.service.limits import BodyLimit
from votum.service.settings import Settings

log = logging.getLogger("votum.service")


def create_app(settings: Settings | None = None) -> FastAPI:
    """The service for `settings` (defaults when None). A body above `max_body_bytes` is refused
    with 413 before any route reads it (`limits.BodyLimit`)."""
    settings = settings or Settings()
    app = FastAPI(
        title="votum election service",
        version=votum.__version__,
        description="End-to-end verifiable elections: ElectionGuard 1.0 compatible. " + OPENAPI_MSGPACK_NOTE,
        default_response_class=NegotiatedResponse,
    )
    app.router.route_class = NegotiatedRoute
    app.state.settings = settings
    app.state.tokens = TokenBook(settings.tokens)
    problems.install(app)
    app.add_middleware(BodyLimit, limit=settings.max_body_bytes)

    health = _health_router()
    app.include_router(health)
    app.include_router(seed.router)
    if settings.seed_endpoints:
        log.warning(
            "the stateless seed endpoints are on: they carry guardian secrets over the wire "
            "(turn them off with VOTUM_SEED_ENDPOINTS=0)"
        )
    return app


def _health_router() -> Any:
    from fastapi import APIRouter

    router = APIRouter(tags=["service"], route_class=NegotiatedRoute)

    @router.get("/health")
    def health() -> dict[str, Any]:
        """Liveness: the version, and whether the seed endpoints are on."""
        return {"status": "ok", "version": votum.__version__}

    return router
