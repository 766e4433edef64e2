"""The stateful election API under `/v1` (spec/80): one router per resource, over `votum.store`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI

from votum.service.v1 import ballots, board, ceremony, decryption, elections, links
from votum.service.v1.common import Objects
from votum.service.v1.exports import RecordExports
from votum.service.v1.intake import Intake
from votum.store import Store


def install(app: FastAPI, store: Store) -> None:
    app.state.store = store
    app.state.objects = Objects(store)
    app.state.intake = Intake(store, app.state.objects)
    settings = getattr(app.state, "settings", None)
    interval = settings.record_export_interval if settings is not None else 30.0
    downloads = settings.record_downloads if settings is not None else 4
    # looked up at each export, so a test can watch `elections.export_record`
    app.state.record_exports = RecordExports(
        interval, lambda *args: elections.export_record(*args), downloads
    )
    exports = app.state.record_exports
    previous = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(application: Any) -> AsyncIterator[Any]:
        async with previous(application) as state:
            yield state
        exports.close()  # the exports' files go with the server

    app.router.lifespan_context = lifespan
    for module in (elections, ceremony, ballots, decryption, board):
        app.include_router(module.router)
    links.install(app)
