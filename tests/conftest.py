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
