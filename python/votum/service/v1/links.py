"""OpenAPI links of the `/v1` API (spec/80.6): which response gives which later call its path
parameters. A client generator, a reader of the schema and a stateful fuzzer (schemathesis) follow
them from creating an election to its guardians, ballots, board entries and results.

The links are derived from the routes, not written per route: a response that names an election
links to every operation whose path needs only `election_id`; a guardian's posted record links to
every operation on that guardian; a receipt links to the ballot; the board head links to its entry.
"""

from __future__ import annotations

import re
from typing import Any

from fastapi import FastAPI

_PARAM = re.compile(r"\{([^}]+)\}")

#: (method, path, status) of a response -> the path parameters it gives, as OpenAPI runtime expressions
SOURCES: dict[tuple[str, str, str], dict[str, str]] = {
    ("post", "/v1/elections", "201"): {"election_id": "$response.body#/election_id"},
    ("get", "/v1/elections/{election_id}", "200"): {"election_id": "$response.body#/election_id"},
    ("post", "/v1/elections/{election_id}/guardians/{guardian_id}", "201"): {
        "election_id": "$request.path.election_id",
        "guardian_id": "$request.path.guardian_id",
    },
    ("post", "/v1/elections/{election_id}/ballots", "201"): {
        "election_id": "$request.path.election_id",
        "ballot_id": "$response.body#/ballot_id",
    },
    ("get", "/v1/elections/{election_id}/board/head", "200"): {
        "election_id": "$request.path.election_id",
        "seq": "$response.body#/seq",
    },
}


def add_links(schema: dict[str, Any]) -> dict[str, Any]:
    """Adds the links to an OpenAPI document (in place) and returns it."""
    paths: dict[str, dict[str, Any]] = schema.get("paths", {})
    for (method, path, status), given in SOURCES.items():
        response = paths.get(path, {}).get(method, {}).get("responses", {}).get(status)
        if response is None:
            continue
        links: dict[str, Any] = {}
        for target, operations in paths.items():
            needed = _PARAM.findall(target)
            if not needed or not set(needed) <= set(given):
                continue  # nothing to fill, or something this response does not give
            for target_method, operation in operations.items():
                if (target, target_method) == (path, method) or "operationId" not in operation:
                    continue
                links[operation["operationId"]] = {
                    "operationId": operation["operationId"],
                    "parameters": {name: given[name] for name in needed},
                }
        if links:
            response["links"] = links
    return schema


def install(app: FastAPI) -> None:
    """Makes `app.openapi()` return the schema with the links."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = add_links(build())
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
