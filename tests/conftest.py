from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
import votum

VECTORS = Path(__file__).resolve().parent.parent / "vectors"
GROUP_NAMES = ["ristretto255", "modp-2048", "eg-4096"]


def seed(label: str) -> bytes:
    return hashlib.sha256(label.encode()).digest()


def load_eg14(name: str) -> Any:
    return json.loads((VECTORS / "eg-1.4" / name).read_text())


@pytest.fixture(params=GROUP_NAMES)
def group(request: pytest.FixtureRequest) -> votum.Group:
    return votum.Group(request.param)


@pytest.fixture(scope="session")
def postgres() -> Any:
    """One throwaway PostgreSQL server for the whole session (`votum.store.tempdb`)."""
    from votum.store.tempdb import TemporaryPostgres

    with TemporaryPostgres() as pg:
        yield pg


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh, empty database of each kind the service supports."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'votum.db'}"
    pg = request.getfixturevalue("postgres")
    return str(pg.new_database())
