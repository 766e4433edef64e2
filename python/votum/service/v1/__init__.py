"""The stateful election API under `/v1` (spec/80): one router per resource, over `votum.store`."""

from __future__ import annotations

from fastapi import FastAPI

from votum.asgi import at_shutdown, set_store
from votum.service.auth import device_name_of
from votum.service.state import service_state
from votum.service.v1 import (
    ballots,
    board,
    ceremony,
    decryption,
    eg21,
    eg21_ballots,
    eg21_decryption,
    elections,
    links,
)
from votum.service.v1.common import Objects
from votum.service.v1.exports import RecordExports
from votum.service.v1.intake import Intake
from votum.service.v1.state import V1State
from votum.store import Store, export


def install(app: FastAPI, store: Store) -> None:
    set_store(app, store)
    settings = service_state(app).settings
    objects = Objects(store)
    # looked up at each export, so a test can watch `votum.store.export.export_record`
    exports = RecordExports(
        settings.record_export_interval,
        lambda *args: export.export_record(*args),
        settings.record_downloads,
    )
    app.state.v1 = V1State(
        objects=objects,
        intake=Intake(store, objects),
        device_names=frozenset(
            name for role in settings.tokens.values() if (name := device_name_of(role)) is not None
        ),
        record_exports=exports,
    )
    at_shutdown(app, exports.close)  # the exports' files go with the server
    for module in (elections, ceremony, eg21, eg21_ballots, eg21_decryption, ballots, decryption, board):
        app.include_router(module.router)
    links.install(app)
