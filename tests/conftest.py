from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import votum

VECTORS = Path(__file__).resolve().parent.parent / "vectors"
GROUP_NAMES = ["ristretto255", "modp-2048", "eg-4096"]


def pytest_xdist_node_collection_finished(node: Any, ids: list[str]) -> None:
    """Under pytest-xdist (`make test`), a test whose cases share one node id (schemathesis's do) would run
    once and its other cases never: stop such a run rather than lose them unseen."""
    seen: dict[str, int] = {}
    for nodeid in ids:
        seen[nodeid] = seen.get(nodeid, 0) + 1
    twice = sorted(nodeid for nodeid, n in seen.items() if n > 1)
    if twice:
        pytest.exit(
            f"collected more than once, so pytest-xdist would run one case of each: {', '.join(twice)}; "
            "run them without -n (the Makefile's test-python does so for the API fuzz test)",
            returncode=pytest.ExitCode.USAGE_ERROR,
        )


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


# --- headless Chromium, for the pages' tests (tests/web) and the kiosk's (tests/roles) ---------------------

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
#: screenshots the browser tests keep
ARTIFACTS = Path(__file__).resolve().parent.parent / "target" / "test-artifacts" / "web"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    assert Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists(), (
        "headless Chromium is part of the test set-up: `make setup` installs Debian's chromium "
        "and chromium-driver"
    )
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1280,1000",
        "--disable-extensions",
        "--no-first-run",
    ):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    driver.set_page_load_timeout(60)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    try:
        yield driver
    finally:
        driver.quit()
