"""What the service's API and its web pages share, below both: the store a request's app holds, a hook at
the app's shutdown, and the largest board sequence number a request may name. (`votum.service` builds the
app and mounts `votum.web`; neither the API nor the pages import the other.)"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

from fastapi import FastAPI, Request

from votum.store import Store

#: the largest board sequence number a request may name (the databases' 64-bit integers)
MAX_SEQ = 2**62


T = TypeVar("T")


def app_state(holder: Any, name: str, kind: type[T], missing: str) -> T:
    """The typed part `name` of the state of `holder` (a request, or the app itself), or TypeError with
    `missing` when the app holds none of that type. Each layer's accessor (`service_state`, `v1_state`,
    `web_state`, `store_of`) is this with its own name and type."""
    app = getattr(holder, "app", holder)
    state = getattr(app.state, name, None)
    if not isinstance(state, kind):
        raise TypeError(missing)
    return state


def set_store(app: FastAPI, store: Store) -> None:
    """Gives `app` its store: the one the API and the pages both read (`store_of`)."""
    app.state.store = store


def store_of(request: Request) -> Store:
    """The store of the app serving `request`."""
    return app_state(request, "store", Store, "an app without a store (votum.asgi.set_store)")


def at_shutdown(app: FastAPI, stop: Callable[[], None]) -> None:
    """Runs `stop` when the app's lifespan ends, after whatever ran there before."""
    previous = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(application: Any) -> AsyncIterator[Any]:
        async with previous(application) as state:
            yield state
        stop()

    app.router.lifespan_context = lifespan
