"""Property-based API tests from the OpenAPI schema (schemathesis): whatever the input, the service
answers without a 5xx, and every error is a typed problem document."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

import msgpack  # type: ignore[import-untyped]
import schemathesis
from hypothesis import HealthCheck, settings
from votum.service import Settings, create_app

TOKEN = "fuzz-admin-token-0123456789"
DIR = Path(tempfile.mkdtemp(prefix="votum-fuzz-"))
atexit.register(shutil.rmtree, DIR, True)
APP = create_app(Settings(data_dir=DIR, tokens={TOKEN: "admin"}, max_body_bytes=1 << 20))
SCHEMA = schemathesis.openapi.from_asgi("/openapi.json", APP)


@SCHEMA.parametrize()
@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
def test_no_input_makes_the_service_fail(case: schemathesis.Case) -> None:
    # with the admin token, writes get past authentication to their own checks
    response = case.call(headers={"Authorization": f"Bearer {TOKEN}"})
    assert response.status_code < 500, response.text[:500]
    if response.status_code >= 400:
        kind = response.headers.get("content-type", "")
        body = msgpack.unpackb(response.content) if "msgpack" in kind else response.json()
        assert isinstance(body.get("type"), str) and body["status"] == response.status_code
