"""The election service (`votum serve`): FastAPI app factory, settings, one router per resource,
one error mapping. See docs/service.md.

`create_app`, `Settings` and `load_settings` are imported on first use: a command that only reads a token
file (`votum.service.settings`) should not pay for FastAPI and the routers at start-up."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from votum.service.app import create_app
    from votum.service.settings import Settings, load_settings

__all__ = ["Settings", "create_app", "load_settings"]


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from votum.service.app import create_app

        return create_app
    if name in ("Settings", "load_settings"):
        from votum.service import settings

        return getattr(settings, name)
    raise AttributeError(f"module 'votum.service' has no attribute {name!r}")
