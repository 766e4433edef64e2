"""The stateful election API under `/v1` (spec/80): one router per resource, over `votum.store`."""

from __future__ import annotations

from fastapi import FastAPI

from votum.asgi import at_shutdown
from votum.service.auth import device_name_of
from votum.service.v1 import ballots, board, ceremony, decryption, elections, links
from votum.service.v1.common import Objects
from votum.service.v1.exports import RecordExports
from votum.service.v1.intake import Intake
from votum.store import Store, export


def install(app: FastAPI, store: Store) -> None:
    app.state.store = store
    app.state.objects = Objects(store)
    app.state.intake = Intake(store, app.state.objects)
    settings = app.state.settings
    #: the names of the named device tokens (their ballot ids are theirs alone: `ballots.check_scope`)
    app.state.device_names = frozenset(
        name for role in settings.tokens.values() if (name := device_name_of(role)) is not None
    )
    # looked up at each export, so a test can watch `votum.store.export.export_record`
    app.state.record_exports = RecordExports(
        settings.record_export_interval,
        lambda *args: export.export_record(*args),
        settings.record_downloads,
    )
    at_shutdown(app, app.state.record_exports.close)  # the exports' files go with the server
    for module in (elections, ceremony, ballots, decryption, board):
        app.include_router(module.router)
    links.install(app)
