"""What the `/v1` routers share on their app, typed (issue 46): the loaded objects, the intake, the named
device tokens and the record exports, set by `v1.install`; read through `v1_state(request)`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from votum.asgi import app_state
from votum.service.v1.common import ElectionObjects, Objects
from votum.service.v1.exports import RecordExports
from votum.service.v1.intake import Intake


@dataclass
class V1State:
    objects: Objects
    intake: Intake
    #: the names of the named device tokens (their ballot ids are theirs alone: `ballots.check_names`)
    device_names: frozenset[str]
    record_exports: RecordExports


def objects_of(request: Any, election_id: str) -> ElectionObjects:
    """An election's loaded objects (manifest, context, ballot box), from the app's cache."""
    return v1_state(request).objects.get(election_id)


def v1_state(holder: Any) -> V1State:
    """The `/v1` state of the app serving a request (or of an app)."""
    return app_state(holder, "v1", V1State, "the /v1 API is not installed on this app")
