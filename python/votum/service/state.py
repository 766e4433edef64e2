"""What an app built by `create_app` holds, typed (issue 46): the checked settings, the token book and the
metrics, set once by `create_app`; read through `service_state(request)`, never as loose `app.state`
attributes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from votum.asgi import app_state
from votum.service.observe import Metrics
from votum.service.settings import Settings
from votum.service.tokens import TokenBook


@dataclass
class ServiceState:
    settings: Settings
    tokens: TokenBook
    metrics: Metrics


def service_state(holder: Any) -> ServiceState:
    """The state of the app serving a request (or of an app)."""
    return app_state(holder, "service", ServiceState, "not an app built by votum.service.create_app")
