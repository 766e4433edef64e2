"""Property-based API tests from the OpenAPI schema (schemathesis): whatever the input, the service
answers without a 5xx, and every error is a typed problem document."""

from __future__ import annotations

import msgpack  # type: ignore[import-untyped]
import schemathesis
from hypothesis import HealthCheck, settings
from votum.service import Settings, create_app

APP = create_app(Settings(tokens={"fuzz-admin-token-0123456789": "admin"}, max_body_bytes=1 << 20))
SCHEMA = schemathesis.openapi.from_asgi("/openapi.json", APP)


@SCHEMA.parametrize()
@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
def test_no_input_makes_the_service_fail(case: schemathesis.Case) -> None:
    response = case.call()
    assert response.status_code < 500, response.text[:500]
    if response.status_code >= 400:
        kind = response.headers.get("content-type", "")
        body = msgpack.unpackb(response.content) if "msgpack" in kind else response.json()
        assert isinstance(body.get("type"), str) and body["status"] == response.status_code
