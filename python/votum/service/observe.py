"""What an operator sees of a running service: one structured log line per request, with a request
id, and metrics in the Prometheus text format at `/metrics` (spec/80.8).

- Every request gets an id: the client's `X-Request-Id` when it is a plain token (1-64 of
  `A-Za-z0-9._-`), a fresh one otherwise. It is sent back in `X-Request-Id` and is on every log line
  written while the request is served (a context variable), so an operator can follow one request
  from the access line to the error behind it. Logged: method, path, route, status, duration,
  request id; never a header value, a token or a body.
- `--log-format json` writes each line as one JSON object (`JsonFormatter`).
- Metrics: request latency histograms by route template and status (summed over the workers of
  `votum serve --workers N`), and from the database, so every server on one database reports the
  same values: ballots recorded per election
  and state (counters: their rate is the intake rate), board entries per election, elections per
  phase.
"""

from __future__ import annotations

import contextvars
import json
import logging
import os
import re
import time
import uuid
from typing import Any

from prometheus_client import CollectorRegistry, Gauge, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector

from votum.store import PHASES, Store

REQUEST_ID: contextvars.ContextVar[str | None] = contextvars.ContextVar("votum_request_id", default=None)
_CLIENT_ID = re.compile(rb"[A-Za-z0-9._-]{1,64}")
access_log = logging.getLogger("votum.access")

#: seconds; the seed endpoints answer in tens of milliseconds, a 1,000-ballot batch in seconds
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time (UTC, ISO 8601), level, logger, message, the request id when
    the line was written while serving a request, and the fields a call passed in `extra={"fields":
    {...}}`; an exception's traceback as `exc`."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        request_id = getattr(record, "request_id", None) or REQUEST_ID.get()
        if request_id is not None:
            out["request_id"] = request_id
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            out.update(fields)
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return json.dumps(out, separators=(",", ":"), default=str)


class TextFormatter(logging.Formatter):
    """`LEVEL logger [request id]: message key=value …` for a terminal."""

    def format(self, record: logging.LogRecord) -> str:
        request_id = getattr(record, "request_id", None) or REQUEST_ID.get()
        line = f"{record.levelname} {record.name}"
        if request_id is not None:
            line += f" [{request_id}]"
        line += f": {record.getMessage()}"
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            line += "".join(f" {k}={v}" for k, v in fields.items())
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


class RequestIdFilter(logging.Filter):
    """Stamps each record with the id of the request being served when it was written."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "request_id", None) is None:
            record.request_id = REQUEST_ID.get()
        return True


def configure_logging(level: str, fmt: str) -> None:
    """The root logger's one handler (stderr) with the chosen format: `json` or `text`."""
    handler = logging.StreamHandler()
    handler.addFilter(RequestIdFilter())
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())


class Metrics:
    """The service's metrics registry: its own (not the process-global one), so several apps in one
    process (tests) do not collide."""

    def __init__(self, store: Store) -> None:
        self.registry = CollectorRegistry()
        # several workers (`votum serve --workers N` sets PROMETHEUS_MULTIPROC_DIR): each process
        # writes its values to files there, and a scrape of any worker sums them
        shared = bool(os.environ.get("PROMETHEUS_MULTIPROC_DIR"))
        self.latency = Histogram(
            "votum_http_request_duration_seconds",
            "Time to answer a request, by route template, method and status",
            ["method", "route", "status"],
            buckets=LATENCY_BUCKETS,
            registry=None if shared else self.registry,
        )
        self.in_flight = Gauge(
            "votum_http_requests_in_flight",
            "Requests being served (a draining server counts down to 0)",
            registry=None if shared else self.registry,
            multiprocess_mode="livesum",
        )
        if shared:
            MultiProcessCollector(self.registry)  # type: ignore[no-untyped-call]
        self.registry.register(StoreCollector(store))


class StoreCollector(Collector):
    """Figures read from the database at each scrape (one query), the same from every worker."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def collect(self) -> Any:
        ballots = CounterMetricFamily(
            "votum_ballots", "Ballots recorded, by election and state", labels=["election", "state"]
        )
        entries = GaugeMetricFamily("votum_board_entries", "Entries on the board", labels=["election"])
        printed = GaugeMetricFamily(
            "votum_printed_ballots",
            "2.1 pre-encrypted ballots printed and not yet recorded (each leaves for cast when recorded)",
            labels=["election"],
        )
        phases = GaugeMetricFamily("votum_elections", "Elections by phase", labels=["phase"])
        counts = dict.fromkeys(PHASES, 0)
        for row in self.store.elections():
            ballots.add_metric([row.id, "cast"], row.cast_count)
            ballots.add_metric([row.id, "spoiled"], row.spoiled_count)
            printed.add_metric([row.id], row.printed_count)
            entries.add_metric([row.id], row.head_seq + 1)
            counts[row.phase] = counts.get(row.phase, 0) + 1
        for phase, n in counts.items():
            phases.add_metric([phase], n)
        yield ballots
        yield entries
        yield printed
        yield phases


class RequestLog:
    """Pure ASGI middleware: request ids, the access log line and the latency histogram."""

    def __init__(self, app: Any, metrics: Metrics | None = None) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = None
        for name, value in scope.get("headers", []):
            if name == b"x-request-id" and _CLIENT_ID.fullmatch(value):
                request_id = value.decode()
        request_id = request_id or uuid.uuid4().hex
        token = REQUEST_ID.set(request_id)
        if self.metrics is not None:
            self.metrics.in_flight.inc()
        start = time.perf_counter()
        status = 500  # what the client sees when the app fails before it starts a response

        async def send_with_id(message: dict[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                headers = list(message.get("headers", []))
                headers.append((b"x-request-id", request_id.encode()))
                message = {**message, "headers": headers}
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            seconds = time.perf_counter() - start
            route = getattr(scope.get("route"), "path", None) or "unmatched"
            if self.metrics is not None:
                self.metrics.latency.labels(scope["method"], route, str(status)).observe(seconds)
                self.metrics.in_flight.dec()
            access_log.info(
                "%s %s %d",
                scope["method"],
                scope["path"],
                status,
                extra={
                    "request_id": request_id,
                    "fields": {
                        "method": scope["method"],
                        "path": scope["path"],
                        "route": route,
                        "status": status,
                        "ms": round(seconds * 1000, 2),
                    },
                },
            )
            REQUEST_ID.reset(token)
