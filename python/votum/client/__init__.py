"""The HTTP client of the election service: keep-alive connections, MessagePack both ways, one
method per endpoint, and per-endpoint latencies for the load generator (`votum.client.load`)."""

from __future__ import annotations

import time
from collections import defaultdict
from typing import Any, Protocol

import httpx
import msgpack  # type: ignore[import-untyped]

from votum.errors import VotumError

MSGPACK = "application/msgpack"


class ServiceError(VotumError):
    """The service answered with a problem document: `type` (machine-readable), `status`, `detail`."""

    def __init__(self, status: int, type_: str, detail: str, body: Any = None) -> None:
        super().__init__(f"{status} {type_}: {detail}")
        self.status = status
        self.type = type_
        self.detail = detail
        self.body = body


class _Http(Protocol):
    def request(self, method: str, url: str, *, content: bytes | None = ..., headers: Any = ...) -> Any: ...

    def stream(self, method: str, url: str, *, content: bytes | None = ..., headers: Any = ...) -> Any: ...

    def close(self) -> None: ...


class Client:
    """A client of one service. `http` may be any httpx-like client (tests pass the ASGI test
    client); by default a keep-alive `httpx.Client` to `base_url` with no timeout (a 1,000-ballot
    chunk can take a while)."""

    def __init__(
        self,
        base_url: str = "http://127.0.0.1:8000",
        token: str | None = None,
        use_msgpack: bool = True,
        http: _Http | None = None,
        timeout: float | None = None,
        deadline: float | None = None,
        max_bytes: int | None = None,
    ) -> None:
        self.http: _Http = http or httpx.Client(base_url=base_url, timeout=timeout)
        #: seconds a whole request may take, answer included (`timeout` bounds each read only, so a
        #: server that sends a byte now and then would hold the client forever); `None`: no deadline
        self.deadline = deadline
        #: largest answer read, in bytes; `None`: no bound
        self.max_bytes = max_bytes
        self.token = token
        self.use_msgpack = use_msgpack
        #: endpoint -> seconds of each call (client side: encoding, transport, decoding)
        self.latencies: dict[str, list[float]] = defaultdict(list)

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def call(
        self, method: str, path: str, body: Any = None, name: str | None = None, token: str | None = None
    ) -> Any:
        """One request (with `token`, or the client's); returns the decoded body (bytes for a binary
        one) or raises `ServiceError` for a problem document."""
        media = MSGPACK if self.use_msgpack else "application/json"
        headers = {"Accept": media}
        token = token or self.token
        if token:
            headers["Authorization"] = f"Bearer {token}"
        content = None
        if body is not None:
            headers["Content-Type"] = media
            content = (
                msgpack.packb(body, use_bin_type=True)
                if self.use_msgpack
                else httpx_json(body)  # same bytes the service's JSON reader expects
            )
        t0 = time.perf_counter()
        if self.deadline is None and self.max_bytes is None:
            response: Any = self.http.request(method, path, content=content, headers=headers)
        else:
            response = self._bounded(method, path, content, headers)
        data = _decode(response)
        self.latencies[name or path].append(time.perf_counter() - t0)
        if response.status_code >= 400:
            if isinstance(data, dict) and "type" in data:
                raise ServiceError(response.status_code, str(data["type"]), str(data.get("detail", "")), data)
            raise ServiceError(response.status_code, "http_error", str(data)[:200], data)
        return data

    def _bounded(self, method: str, path: str, content: bytes | None, headers: dict[str, str]) -> Any:
        """One request read as a stream, within `deadline` seconds and `max_bytes` bytes (issue 43,
        item 13); raises `httpx.ReadTimeout` or `AnswerTooLarge`."""
        end = None if self.deadline is None else time.monotonic() + self.deadline
        with self.http.stream(method, path, content=content, headers=headers) as response:
            declared = response.headers.get("content-length")
            if (
                self.max_bytes is not None
                and declared
                and declared.isdigit()
                and int(declared) > self.max_bytes
            ):
                raise AnswerTooLarge(
                    f"the answer is larger than {self.max_bytes} bytes ({declared} declared)"
                )
            body = bytearray()
            for chunk in response.iter_bytes():
                body += chunk
                if self.max_bytes is not None and len(body) > self.max_bytes:
                    raise AnswerTooLarge(f"the answer is larger than {self.max_bytes} bytes")
                if end is not None and time.monotonic() > end:
                    raise httpx.ReadTimeout(f"no whole answer within the deadline of {self.deadline} s")
            return _Answer(response.status_code, response.headers, bytes(body))

    def post(self, path: str, body: Any, token: str | None = None, name: str | None = None) -> Any:
        return self.call("POST", path, body, name=name, token=token)

    def get(self, path: str, name: str | None = None) -> Any:
        return self.call("GET", path, name=name)

    # --- the six seed endpoints ---------------------------------------------------------------

    def setup_guardians(
        self, party_names: list[str], candidate_names: list[str], number_of_guardians: int, quorum: int
    ) -> dict[str, Any]:
        body = {
            "party_names": party_names,
            "candidate_names": candidate_names,
            "number_of_guardians": number_of_guardians,
            "quorum": quorum,
        }
        return dict(self.post("/setup_guardians", body))

    def create_encrypted_ballot(self, election: dict[str, Any], **fields: Any) -> dict[str, Any]:
        return dict(self.post("/create_encrypted_ballot", {**election, **fields}))

    def create_encrypted_tally(self, election: dict[str, Any], ballots: list[Any]) -> dict[str, Any]:
        return dict(self.post("/create_encrypted_tally", {**election, "encrypted_ballots": ballots}))

    def create_partial_decryption(self, election: dict[str, Any], **fields: Any) -> dict[str, Any]:
        return dict(self.post("/create_partial_decryption", {**election, **fields}))

    def create_compensated_decryption(self, election: dict[str, Any], **fields: Any) -> dict[str, Any]:
        return dict(self.post("/create_compensated_decryption", {**election, **fields}))

    def combine_decryption_shares(self, election: dict[str, Any], **fields: Any) -> dict[str, Any]:
        return dict(self.post("/combine_decryption_shares", {**election, **fields}))


def election_key(setup: dict[str, Any], party_names: list[str], candidate_names: list[str]) -> dict[str, Any]:
    """The fields that name an election in every seed call after `setup_guardians`."""
    return {
        "party_names": party_names,
        "candidate_names": candidate_names,
        "joint_public_key": setup["joint_public_key"],
        "commitment_hash": setup["commitment_hash"],
        "number_of_guardians": setup["number_of_guardians"],
        "quorum": setup["quorum"],
    }


def httpx_json(body: Any) -> bytes:
    import json

    return json.dumps(body, separators=(",", ":")).encode()


class AnswerTooLarge(httpx.TransportError):
    """An answer larger than the client's `max_bytes`."""

    def __init__(self, message: str) -> None:
        super().__init__(message)


class _Answer:
    """A whole answer read by `Client._bounded`, as `_decode` reads a response."""

    def __init__(self, status_code: int, headers: Any, content: bytes) -> None:
        self.status_code = status_code
        self.headers = headers
        self.content = content


def _decode(response: Any) -> Any:
    kind = response.headers.get("content-type", "")
    content = response.content
    if not content:
        return None
    if kind.startswith(MSGPACK):
        return msgpack.unpackb(content, raw=False)
    if kind.startswith("application/json"):
        import json

        return json.loads(content)
    if kind.startswith("application/octet-stream"):
        return content
    return content.decode(errors="replace")


__all__ = ["Client", "ServiceError", "election_key"]
