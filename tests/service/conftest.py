"""Fixtures of the `/v1` service tests: a service on the store under test, and one with an opened election."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from v1service import MANIFEST, Service
from votum.client import Client
from votum.client.election import ElectionDriver, Tokens
from votum.service.app import create_app
from votum.service.settings import Settings
from votum.store import Store


@pytest.fixture
def service(store_url: str, tmp_path: Path) -> Iterator[Service]:
    tokens = Tokens.generate(3)
    store = Store(store_url)
    app = create_app(Settings(data_dir=tmp_path, tokens=tokens.settings_map()), store=store)
    with TestClient(app) as http:
        yield Service(store, tokens, Client(http=http), http)
    store.close()


@pytest.fixture
def opened(service: Service) -> tuple[Service, ElectionDriver]:
    driver = ElectionDriver(service.client, service.tokens, "e1", MANIFEST, quorum=2, seed=7)
    driver.ceremony()
    return service, driver
