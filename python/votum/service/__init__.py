"""The election service (`votum serve`): FastAPI app factory, settings, one router per resource,
one error mapping. See docs/service.md."""

from votum.service.app import create_app
from votum.service.settings import Settings, load_settings

__all__ = ["Settings", "create_app", "load_settings"]
