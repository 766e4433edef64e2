"""The `/v1` service under test (spec/80): the app on a store, its tokens, a client, and what every refusal
is checked against: the status, the problem document's `type`, and that nothing was stored."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgpack  # type: ignore[import-untyped]
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from votum.client import Client, ServiceError
from votum.client.election import ElectionDriver, Tokens
from votum.eg import manifest_from_names
from votum.service.app import create_app
from votum.service.settings import Settings
from votum.store import Store
from votum.store.schema import ballots, board, codes, elections

MANIFEST = manifest_from_names(["Party A", "Party B"], ["Alice", "Bob", "Carol", "Dave"])


class Service:
    def __init__(self, store: Store, tokens: Tokens, client: Client, http: TestClient) -> None:
        self.store = store
        self.tokens = tokens
        self.client = client
        self.http = http

    def rows(self) -> dict[str, int]:
        """Rows per table: a refused request must leave every count as it was."""
        with self.store.engine.connect() as conn:
            return {
                t.name: int(conn.execute(select(func.count()).select_from(t)).scalar_one())
                for t in (elections, board, ballots, codes)
            }

    def snapshot(self, election_id: str) -> tuple[dict[str, int], Any]:
        row = self.store.election(election_id)
        return self.rows(), (
            row.head_seq,
            row.head_hash,
            row.tally,
            row.cast_count,
            row.spoiled_count,
            row.phase,
        )

    def refused(self, election_id: str, call: Any, status: int, type_: str) -> ServiceError:
        before = self.snapshot(election_id)
        with pytest.raises(ServiceError) as info:
            call()
        assert (info.value.status, info.value.type) == (status, type_), info.value
        assert self.snapshot(election_id) == before, "a refused request changed what is stored"
        return info.value


def problem(response: Any) -> dict[str, Any]:
    """A problem document, from JSON or msgpack."""
    body = (
        response.json()
        if "json" in response.headers.get("content-type", "")
        else msgpack.unpackb(response.content)
    )
    assert isinstance(body, dict)
    return body


# the fixtures, imported by name into each test module (a conftest.py here would shadow tests/conftest.py,
# which other modules import as `conftest`)
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
