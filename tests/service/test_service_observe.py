"""What an operator sees (spec/80.8): request ids on answers and log lines, JSON log lines without
secrets, and the Prometheus metrics."""

from __future__ import annotations

import io
import json
import logging
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from votum.election import synthetic_manifest
from votum.service import Settings, create_app
from votum.service.observe import JsonFormatter, RequestIdFilter, TextFormatter

ADMIN = "observe-admin-token-0123456789"
DEVICE = "observe-device-token-0123456789"
SCRAPER = "observe-metrics-token-0123456789"


@pytest.fixture()
def client(tmp_path: Path) -> TestClient:
    app = create_app(
        Settings(data_dir=tmp_path, tokens={ADMIN: "admin", DEVICE: "device", SCRAPER: "metrics"})
    )
    return TestClient(app)


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_request_ids_are_echoed_and_on_the_access_line(
    client: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="votum.access")
    r = client.get("/v1/elections/nope", headers={**_auth(ADMIN), "X-Request-Id": "req-42.a_b"})
    assert r.status_code == 404 and r.headers["x-request-id"] == "req-42.a_b"
    line = [rec for rec in caplog.records if rec.name == "votum.access"][-1]
    assert line.request_id == "req-42.a_b"  # type: ignore[attr-defined]
    assert line.fields["status"] == 404 and line.fields["route"] == "/v1/elections/{election_id}"  # type: ignore[attr-defined]
    # an id that is not a plain token (spaces, too long) is replaced by a fresh one
    for bad in ("has space", "x" * 65, "semi;colon"):
        r = client.get("/health", headers={"X-Request-Id": bad})
        fresh = r.headers["x-request-id"]
        assert fresh != bad and len(fresh) == 32 and int(fresh, 16) >= 0
    # two requests without an id get different ids
    assert client.get("/health").headers["x-request-id"] != client.get("/health").headers["x-request-id"]


def test_json_lines_carry_the_request_id_and_no_secret(client: TestClient) -> None:
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.addFilter(RequestIdFilter())
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.addHandler(handler)
    old = root.level
    root.setLevel(logging.INFO)
    try:
        body = {"election_id": "bad id!", "manifest": {}, "number_of_guardians": 1, "quorum": 1}
        r = client.post("/v1/elections", json=body, headers={**_auth(ADMIN), "X-Request-Id": "trace-7"})
        assert r.status_code == 422
    finally:
        root.removeHandler(handler)
        root.setLevel(old)
    lines = [json.loads(x) for x in out.getvalue().splitlines()]
    access = [x for x in lines if x["logger"] == "votum.access"]
    assert access and access[-1]["request_id"] == "trace-7" and access[-1]["status"] == 422
    assert access[-1]["route"] == "/v1/elections" and access[-1]["method"] == "POST"
    assert {"ts", "level", "msg", "ms"} <= set(access[-1])
    text = out.getvalue()
    assert ADMIN not in text and "bad id!" not in text  # neither the token nor the body is logged


def test_text_lines_name_the_request() -> None:
    record = logging.LogRecord("votum.x", logging.WARNING, __file__, 1, "slow %s", ("disk",), None)
    record.request_id = "r1"
    record.fields = {"ms": 12}
    assert TextFormatter().format(record) == "WARNING votum.x [r1]: slow disk ms=12"


def test_metrics_need_a_token_and_report_the_board(client: TestClient) -> None:
    assert client.get("/metrics").status_code == 401
    assert client.get("/metrics", headers=_auth(DEVICE)).status_code == 403
    body = {"election_id": "m1", "manifest": synthetic_manifest(1), "number_of_guardians": 1, "quorum": 1}
    assert client.post("/v1/elections", json=body, headers=_auth(ADMIN)).status_code == 201
    client.get("/v1/elections/m1", headers=_auth(ADMIN))
    r = client.get("/metrics", headers=_auth(SCRAPER))
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    text = r.text
    assert 'votum_board_entries{election="m1"} 2.0' in text  # the parameters and the manifest
    assert 'votum_elections{phase="ceremony"} 1.0' in text
    assert 'votum_ballots_total{election="m1",state="cast"} 0.0' in text
    count = "votum_http_request_duration_seconds_count"
    assert f'{count}{{method="GET",route="/v1/elections/{{election_id}}",status="200"}} 1.0' in text
    assert 'route="/v1/elections",status="201"' in text
    assert client.get("/metrics", headers=_auth(ADMIN)).status_code == 200
