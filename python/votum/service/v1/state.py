"""What the `/v1` routers share on their app, typed (issue 46): the loaded objects, the intake, the named
device tokens and the record exports, set by `v1.install`; read through `v1_state(request)`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fastapi import Depends, Request

import votum
from votum.asgi import app_state
from votum.errors import NotFound
from votum.service.codec import AUTH_MARK
from votum.service.problems import ApiError
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


def spec_of(request: Any, election_id: str) -> str:
    """The ElectionGuard version election `election_id` runs ("1.0" or "2.1", spec/80.11)."""
    return v1_state(request).objects.spec(election_id)


def require_2_1(request: Any, election_id: str) -> None:
    """`wrong_spec` (409) unless election `election_id` runs ElectionGuard 2.1."""
    if spec_of(request, election_id) != "2.1":
        raise ApiError(409, "wrong_spec", f"election {election_id!r} runs ElectionGuard 1.0, not 2.1")


def eg21_of(request: Any, election_id: str) -> votum.Eg21Ceremony:
    """A 2.1 election's public ceremony checks; `wrong_spec` (409) for a 1.0 election."""
    require_2_1(request, election_id)
    return v1_state(request).objects.eg21(election_id)


def only_1_0(request: Request) -> None:
    """A dependency of the routes that run ElectionGuard 1.0 only: `wrong_spec` (409) for a 2.1 election,
    before the body is read (an unknown election is left to the route)."""
    election_id = request.path_params.get("election_id")
    try:
        spec = spec_of(request, str(election_id))
    except NotFound:
        return
    if spec != "1.0":
        raise ApiError(
            409,
            "wrong_spec",
            f"election {election_id!r} runs ElectionGuard 2.1: this route is for 1.0 elections "
            "(a 2.1 election's key ceremony is under /eg21, spec/80.11)",
        )


setattr(only_1_0, AUTH_MARK, True)


def v1_state(holder: Any) -> V1State:
    """The `/v1` state of the app serving a request (or of an app)."""
    return app_state(holder, "v1", V1State, "the /v1 API is not installed on this app")


one_point_zero = Depends(only_1_0)
