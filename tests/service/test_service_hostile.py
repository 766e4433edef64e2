"""The service against an outsider and against a party misusing its token (issue 19, part D): bodies
refused before they are read, decoders with bounded memory, values JSON cannot carry refused as 4xx,
the seed endpoints' default, tokens that never leak."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgpack  # type: ignore[import-untyped]
import pytest
from fastapi.testclient import TestClient
from votum.client.election import Tokens
from votum.eg import manifest_from_names
from votum.errors import InvalidInput
from votum.service.app import create_app
from votum.service.codec import MAX_BODY_OBJECTS
from votum.service.limits import ANONYMOUS_LIMIT
from votum.service.settings import Settings, load_settings

MANIFEST = manifest_from_names(["Party A"], ["Alice", "Bob"])
MANIFEST_TEXT = json.dumps(MANIFEST)
MSGPACK = {"content-type": "application/msgpack"}


@pytest.fixture
def app(tmp_path: Path) -> Iterator[tuple[TestClient, Tokens]]:
    tokens = Tokens.generate(1)
    with TestClient(create_app(Settings(data_dir=tmp_path, tokens=tokens.settings_map()))) as http:
        yield http, tokens


def _type(response: Any) -> tuple[int, str]:
    body = (
        response.json() if "json" in response.headers["content-type"] else msgpack.unpackb(response.content)
    )
    return response.status_code, body["type"]


def _bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


def test_the_token_is_checked_before_the_body_is_read(app: tuple[TestClient, Tokens]) -> None:
    http, tokens = app
    garbage = b"\xc1" * 100  # not MessagePack at all: reading it would answer 400
    assert _type(http.post("/v1/elections", content=garbage, headers=MSGPACK)) == (401, "unauthorized")
    assert _type(http.post("/v1/elections", content=b"{", headers=_bearer("x" * 20))) == (401, "unauthorized")
    # the wrong role is refused before the body too
    device = {**MSGPACK, **_bearer(tokens.device)}
    assert _type(http.post("/v1/elections", content=garbage, headers=device)) == (403, "forbidden")
    admin = {**MSGPACK, **_bearer(tokens.admin)}
    assert _type(http.post("/v1/elections", content=garbage, headers=admin)) == (400, "malformed_body")


def test_anonymous_bodies_are_small(app: tuple[TestClient, Tokens]) -> None:
    http, _ = app
    big = msgpack.packb([{}] * (ANONYMOUS_LIMIT + 1))
    for path in ("/v1/elections", "/v1/elections/e/ballots", "/nowhere"):
        assert _type(http.post(path, content=big, headers=MSGPACK)) == (413, "body_too_large"), path

    # a streamed body without a length: the token is checked first, nothing of it is read
    def chunks() -> Iterator[bytes]:
        yield big[: len(big) // 2]
        yield big[len(big) // 2 :]

    assert _type(http.post("/v1/elections", content=chunks(), headers=MSGPACK)) == (401, "unauthorized")


def test_a_body_of_millions_of_tiny_objects_is_refused_unread(app: tuple[TestClient, Tokens]) -> None:
    """The attack: ~2.1 MB of empty maps would decode into ~150 MB of Python dicts (an anonymous
    30 MB body reached 2.4 GB). Even with a valid token it is refused before decoding."""
    http, tokens = app
    admin = _bearer(tokens.admin)
    n = MAX_BODY_OBJECTS + 1
    flat = b"\xdd" + n.to_bytes(4, "big") + b"\x80" * n  # array32 of empty maps
    assert _type(http.post("/v1/elections", content=flat, headers={**MSGPACK, **admin})) == (
        400,
        "malformed_body",
    )
    nested = msgpack.packb([[{}] * 60_000] * 40)
    assert _type(http.post("/v1/elections", content=nested, headers={**MSGPACK, **admin})) == (
        400,
        "malformed_body",
    )
    as_json = b"[" + b",".join([b"{}"] * n) + b"]"
    response = http.post(
        "/v1/elections", content=as_json, headers={**admin, "content-type": "application/json"}
    )
    assert _type(response) == (400, "malformed_body")
    # one array longer than any document has
    long_array = b"\xdd" + (70_000).to_bytes(4, "big") + b"\x01" * 70_000
    assert _type(http.post("/v1/elections", content=long_array, headers={**MSGPACK, **admin})) == (
        400,
        "malformed_body",
    )


@pytest.mark.parametrize(
    "value",
    [b"\x00\x01", msgpack.ExtType(5, b"x"), msgpack.Timestamp(1, 0), b""],
    ids=["bin", "ext", "timestamp", "empty-bin"],
)
def test_values_json_cannot_carry_are_4xx(app: tuple[TestClient, Tokens], value: Any) -> None:
    http, tokens = app
    admin = {**MSGPACK, **_bearer(tokens.admin)}
    body = {
        "election_id": "e1",
        "number_of_guardians": 1,
        "quorum": 1,
        "manifest": {**MANIFEST, "election_scope_id": value},
    }
    response = http.post("/v1/elections", content=msgpack.packb(body, use_bin_type=True), headers=admin)
    assert _type(response) == (400, "malformed_body")
    # the same inside a seed-endpoint body (on: this server is on loopback)
    seed = {"party_names": [], "candidate_names": [value], "number_of_guardians": 1, "quorum": 1}
    response = http.post("/setup_guardians", content=msgpack.packb(seed, use_bin_type=True), headers=MSGPACK)
    assert _type(response) == (400, "malformed_body")


def test_lone_surrogates_are_4xx(app: tuple[TestClient, Tokens]) -> None:
    http, tokens = app
    text = MANIFEST_TEXT.replace('"election_scope_id": "', '"election_scope_id": "\\ud800', 1)
    assert "\\ud800" in text
    body = '{"election_id": "e1", "number_of_guardians": 1, "quorum": 1, "manifest": ' + text + "}"
    response = http.post(
        "/v1/elections", content=body, headers={**_bearer(tokens.admin), "content-type": "application/json"}
    )
    assert _type(response) == (400, "malformed_body")
    # a valid pair (an emoji written as two escapes) is fine and reaches the route
    ok = MANIFEST_TEXT.replace('"election_scope_id": "', '"election_scope_id": "\\ud83d\\ude00', 1)
    body = '{"election_id": "e2", "number_of_guardians": 1, "quorum": 1, "manifest": ' + ok + "}"
    response = http.post(
        "/v1/elections", content=body, headers={**_bearer(tokens.admin), "content-type": "application/json"}
    )
    assert response.status_code == 201, response.text


def test_seed_endpoints_default_to_loopback_only(tmp_path: Path) -> None:
    assert Settings(host="127.0.0.1").seed_endpoints_on
    assert Settings(host="::1").seed_endpoints_on
    assert Settings(host="localhost").seed_endpoints_on
    assert not Settings(host="0.0.0.0").seed_endpoints_on
    assert not Settings(host="192.0.2.7").seed_endpoints_on
    assert Settings(host="0.0.0.0", seed_endpoints=True).seed_endpoints_on
    assert not Settings(host="127.0.0.1", seed_endpoints=False).seed_endpoints_on
    tokens = Tokens.generate(1).settings_map()
    with TestClient(create_app(Settings(data_dir=tmp_path, host="0.0.0.0", tokens=tokens))) as http:
        assert http.get("/health").json()["seed_endpoints"] is False
        # refused before the body is read: a huge anonymous body is not even accepted
        assert _type(http.post("/setup_guardians", content=b"\xc1")) == (403, "disabled")
        assert _type(http.post("/setup_guardians", content=b"x" * (ANONYMOUS_LIMIT + 1))) == (
            413,
            "body_too_large",
        )
    with TestClient(create_app(Settings(data_dir=tmp_path, tokens=tokens))) as http:
        assert http.get("/health").json()["seed_endpoints"] is True


def test_token_errors_never_show_a_token() -> None:
    good = "G" * 40
    with pytest.raises(InvalidInput) as info:
        load_settings(env={"VOTUM_TOKENS": f"admin={good},device=short"})
    assert good[:8] not in str(info.value) and "short" not in str(info.value)
    assert "16 characters" in str(info.value)
    with pytest.raises(InvalidInput) as info:
        load_settings(env={"VOTUM_TOKENS": f"admin={good},device={good}"})
    assert "two roles" in str(info.value) and good[:8] not in str(info.value)
    # the same token twice for one role is harmless
    assert load_settings(env={"VOTUM_TOKENS": f"admin={good},admin={good}"}).tokens == {good: "admin"}
    # a token typed where the role goes (issue 43, item 21): the error does not echo it
    swapped = "S" * 40
    for env in (f"{swapped}=admin", f"admin={good},{swapped}={good}"):
        with pytest.raises(InvalidInput) as info:
            load_settings(env={"VOTUM_TOKENS": env})
        assert swapped[:8] not in str(info.value), str(info.value)
    with pytest.raises(InvalidInput) as info:
        load_settings(env={"VOTUM_TOKENS": f"{swapped}={good}"})  # role and token both look like tokens
    assert swapped[:8] not in str(info.value) and "unknown role" in str(info.value), str(info.value)


def _board_gives_up(verb: str, url: str, timeout: float) -> str:
    """Runs `votum board VERB e1` against `url`; asserts it gave up with exit status 2 and returns what
    it said on stderr, its lines joined (the console wraps long messages)."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "votum", "board", verb, "e1", "--url", url, "--timeout", str(timeout)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, (verb, done.stdout, done.stderr)
    return " ".join(done.stderr.split())


def test_audit_tools_give_up_on_a_server_that_never_answers() -> None:
    """A listener that accepts connections and never answers: `votum board check` and `head` stop
    after their timeout with exit status 2 instead of hanging."""
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    url = f"http://127.0.0.1:{listener.getsockname()[1]}"
    try:
        for verb in ("check", "head"):
            said = _board_gives_up(verb, url, 0.5)
            assert "Timeout" in said or "timed out" in said, said
    finally:
        listener.close()


def test_other_methods_get_405_with_allow(app: tuple[TestClient, Tokens]) -> None:
    http, _ = app
    for method in ("OPTIONS", "TRACE", "PUT", "DELETE"):
        response = http.request(method, "/v1/elections")
        assert response.status_code == 405, method
        assert set(response.headers["allow"].split(", ")) >= {"POST"}, method
        assert response.json()["type"] == "method_not_allowed"
    # HEAD is GET without the body, wherever GET is taken (issue 43, item 22: it was 405)
    for path in ("/health", "/v1/elections/nope", "/openapi.json"):
        got, head = http.get(path), http.head(path)
        assert head.status_code == got.status_code and head.content == b"", path
        assert head.headers["content-type"] == got.headers["content-type"], path
    response = http.head("/setup_guardians")  # POST only: still 405
    assert response.status_code == 405 and response.headers["allow"] == "POST"


def test_a_request_head_sent_slowly_is_cut_off(tmp_path: Path) -> None:
    """slowloris: a half-sent request head is closed after the header timeout, and a connection that
    sends nothing at all too; while they are open beyond the connection limit, a new request is
    answered 503 at once; once they are closed, a whole request is answered."""
    import os
    import socket

    from votum.service.local import start_server

    env = {
        **os.environ,
        "VOTUM_TOKENS": f"admin={'A' * 32}",
        "VOTUM_HEADER_TIMEOUT": "1",
        "VOTUM_MAX_CONNECTIONS": "3",
    }
    server, url = start_server(["--data-dir", str(tmp_path), "--log-level", "warning"], env)
    port = int(url.rsplit(":", 1)[1])

    def get_health() -> bytes:
        with socket.create_connection(("127.0.0.1", port)) as whole:
            whole.settimeout(30)
            whole.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            return whole.recv(1024)

    try:
        slow = socket.create_connection(("127.0.0.1", port))
        slow.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")  # no blank line: the head never ends
        idle = socket.create_connection(("127.0.0.1", port))
        assert get_health().startswith(b"HTTP/1.1 503"), "two held connections and this one: the limit"
        for sock in (slow, idle):
            sock.settimeout(30)
            assert sock.recv(1024) == b"", "the server closes the connection without answering"
            sock.close()
        assert get_health().startswith(b"HTTP/1.1 200")
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_one_address_cannot_hold_the_room_of_all(tmp_path: Path) -> None:
    """Issue 43, item 3: one client held about 1,030 idle keep-alive connections and a device's
    ballots were answered 503. One address now holds at most `max_connections_per_address` (2 here,
    loopback included because it is set): the next is answered 503 and closed, while a client at
    another address is served, and the address is served again once one of its connections closes."""
    import os
    import socket

    from votum.service.local import start_server

    env = {
        **os.environ,
        "VOTUM_TOKENS": f"admin={'A' * 32}",
        "VOTUM_MAX_CONNECTIONS_PER_ADDRESS": "2",
    }
    server, url = start_server(["--data-dir", str(tmp_path), "--log-level", "warning"], env)
    port = int(url.rsplit(":", 1)[1])

    def get_health(source: str) -> bytes:
        with socket.create_connection(("127.0.0.1", port), source_address=(source, 0)) as whole:
            whole.settimeout(30)
            whole.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            return whole.recv(1024)

    try:
        held = [
            socket.create_connection(("127.0.0.1", port), source_address=("127.0.0.1", 0)) for _ in range(2)
        ]
        answer = get_health("127.0.0.1")
        assert answer.startswith(b"HTTP/1.1 503") and b"Retry-After: 5" in answer, answer
        assert get_health("127.0.0.2").startswith(b"HTTP/1.1 200"), "another address keeps its room"
        held.pop().close()
        deadline = 50
        while not (answer := get_health("127.0.0.1")).startswith(b"HTTP/1.1 200") and deadline:
            deadline -= 1  # the server sees the close a moment later
            time.sleep(0.05)
        assert answer.startswith(b"HTTP/1.1 200"), answer
        for sock in held:
            sock.close()
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_a_json_integer_of_thousands_of_digits_is_4xx(app: tuple[TestClient, Tokens]) -> None:
    """Issue 43, item 11: Python refuses to convert an integer of more than 4,300 digits, with a
    ValueError the JSON decoder let through as a 500 with a traceback, anonymously on the seed
    endpoints. It is a malformed body (400), and nothing is stored."""
    http, tokens = app
    big = b"1" * 5000
    seed = b'{"party_names": [], "candidate_names": ["a"], "number_of_guardians": ' + big + b', "quorum": 1}'
    response = http.post("/setup_guardians", content=seed, headers={"content-type": "application/json"})
    assert _type(response) == (400, "malformed_body")
    body = b'{"election_id": "e1", "number_of_guardians": ' + big + b', "quorum": 1, "manifest": {}}'
    admin = {**_bearer(tokens.admin), "content-type": "application/json"}
    assert _type(http.post("/v1/elections", content=body, headers=admin)) == (400, "malformed_body")
    assert http.get("/v1/elections/e1").status_code == 404


def test_api_docs_are_off_by_default_and_framed_by_nothing(tmp_path: Path) -> None:
    """Issue 43, item 19: `/docs` and `/redoc` loaded scripts from a CDN onto the election's origin with
    no CSP or frame protection. Both are off by default (`/openapi.json` stays, and the pages link to
    `/api`, which renders it here, issue 42 C.9); turned on, `/docs` carries a CSP that names its CDN
    and lets nothing frame it."""
    tokens = {"A" * 32: "admin"}
    with TestClient(create_app(Settings(data_dir=tmp_path, tokens=tokens))) as http:
        assert http.get("/docs").status_code == 404 and http.get("/redoc").status_code == 404
        assert http.get("/openapi.json").status_code == 200
        # the pages link to /api, rendered here from the OpenAPI document, which it links in turn
        assert 'href="/api"' in http.get("/").text
        assert 'href="/openapi.json"' in http.get("/api").text
    with TestClient(create_app(Settings(data_dir=tmp_path, tokens=tokens, api_docs=True))) as http:
        docs = http.get("/docs")
        assert docs.status_code == 200 and http.get("/redoc").status_code == 404
        csp = docs.headers["content-security-policy"]
        assert "frame-ancestors 'none'" in csp and "connect-src 'self'" in csp
        assert docs.headers["x-frame-options"] == "DENY"
        assert 'href="/docs"' in http.get("/").text


@pytest.mark.parametrize("behaviour", ["trickle", "flood"])
def test_audit_tools_give_up_on_a_trickling_or_flooding_server(behaviour: str) -> None:
    """Issue 43, item 13: `votum board head` and `check` applied their timeout per read, so a server
    that sends a byte now and then held them forever; and they read a page whole, so a server that
    floods ran them out of memory. Each request now has a deadline (the timeout) and each answer a
    size bound: both stop with exit status 2 and say why."""
    import socket
    import threading

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    listener.settimeout(0.2)
    url = f"http://127.0.0.1:{listener.getsockname()[1]}"
    stop = threading.Event()

    def serve() -> None:
        end = time.monotonic() + 90  # bounded whatever happens
        while not stop.is_set() and time.monotonic() < end:
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(5)
                try:
                    conn.recv(65536)
                    status = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    if behaviour == "trickle":
                        conn.sendall(status + b"Content-Length: 1000\r\n\r\n")
                        while not stop.is_set() and time.monotonic() < end:
                            conn.sendall(b" ")
                            time.sleep(0.1)
                    else:
                        conn.sendall(status + b"Content-Length: 99999999999\r\n\r\n")
                        chunk = b" " * (1 << 20)
                        while not stop.is_set() and time.monotonic() < end:
                            conn.sendall(chunk)
                except OSError:
                    pass

    server = threading.Thread(target=serve)
    server.start()
    try:
        for verb in ("head", "check"):
            said = _board_gives_up(verb, url, 1.0)
            assert ("deadline" if behaviour == "trickle" else "larger than") in said, (verb, said)
    finally:
        stop.set()
        server.join()
        listener.close()


def test_a_body_sent_slowly_is_answered_408(tmp_path: Path) -> None:
    """Issue 43, item 16: request bodies had no deadline, so a device token (or anyone, on the
    loopback seed endpoints) could hold a request open by sending its body a byte at a time. A body
    must arrive whole within `body_timeout` seconds (1 here): then the answer is 408 `body_timeout`."""
    import os
    import socket

    from votum.service.local import start_server

    token = "D" * 32
    env = {**os.environ, "VOTUM_TOKENS": f"admin={'A' * 32},device={token}", "VOTUM_BODY_TIMEOUT": "1"}
    server, url = start_server(["--data-dir", str(tmp_path), "--log-level", "warning"], env)
    port = int(url.rsplit(":", 1)[1])
    try:
        with socket.create_connection(("127.0.0.1", port)) as slow:
            slow.settimeout(30)
            slow.sendall(
                b"POST /v1/elections/e1/ballots HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b"Authorization: Bearer " + token.encode() + b"\r\nContent-Length: 1000\r\n\r\n{"
            )
            started = time.monotonic()
            answer = b""
            while b"\r\n\r\n" not in answer and time.monotonic() - started < 20:
                slow.sendall(b" ")  # a byte now and then: each read is quick, the body never ends
                try:
                    slow.settimeout(0.3)
                    answer += slow.recv(4096)
                except TimeoutError:
                    continue
            assert answer.startswith(b"HTTP/1.1 408"), answer
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_an_answer_nobody_reads_is_dropped(tmp_path: Path) -> None:
    """Issue 43, item 2: a client that asked for a big answer and never read it kept the answer in
    the server's memory with no time limit (33 MB per page; 80 such clients exhausted a 3 GiB
    server). An answer that stops draining for `send_timeout` (1 s here) is dropped with its
    connection: the stalled client gets less than the answer and then the end of the connection,
    and the server goes on answering others."""
    import os
    import socket

    from votum.client import Client
    from votum.service.local import start_server

    admin = "A" * 32
    env = {**os.environ, "VOTUM_TOKENS": f"admin={admin}", "VOTUM_SEND_TIMEOUT": "1"}
    server, url = start_server(["--data-dir", str(tmp_path), "--log-level", "warning"], env)
    port = int(url.rsplit(":", 1)[1])
    # a manifest of about 10 MB: one board entry larger than every buffer between server and client
    names = [f"Candidate {i} " + "x" * 600 for i in range(4_000)]
    manifest = manifest_from_names(["Party A"], names)
    try:
        with Client(url, token=admin) as client:
            client.post(
                "/v1/elections",
                {"election_id": "e1", "manifest": manifest, "number_of_guardians": 1, "quorum": 1},
            )
        stalled = socket.socket()
        stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        stalled.connect(("127.0.0.1", port))
        stalled.sendall(b"GET /v1/elections/e1/board/1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        time.sleep(4)  # reads nothing, well past the send timeout
        got = b""
        stalled.settimeout(30)
        try:
            while chunk := stalled.recv(1 << 20):
                got += chunk
        except ConnectionResetError:
            pass  # an abort may reach the client as a reset
        stalled.close()
        head, _, body = got.partition(b"\r\n\r\n")
        length = int(
            next(x for x in head.split(b"\r\n") if x.lower().startswith(b"content-length")).split(b":")[1]
        )
        assert length > 10_000_000 and len(body) < length, (length, len(body))
        with Client(url) as client:
            assert client.get("/health")["status"] == "ok"
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_decoding_takes_memory_in_proportion_to_the_body() -> None:
    """Issue 43, item 17: an authenticated sender's JSON numbers took 7 times their bytes once decoded
    (and MessagePack of empty arrays far more): a body whose decoded values would take more than 4
    times its size (plus 1 MiB) is refused before it is built, and what decodes stays within that."""
    import tracemalloc

    from votum.service.codec import MalformedBody, decode_json, decode_msgpack

    numbers = b"[" + b",".join(str(100_000 + i % 900_000).encode() for i in range(1_000_000)) + b"]"
    with pytest.raises(MalformedBody, match="too many values"):
        decode_json(numbers)
    arrays = msgpack.packb([[[] for _ in range(60_000)] for _ in range(30)])
    with pytest.raises(MalformedBody):
        decode_msgpack(arrays)
    # honest bodies: long strings, a few fields each, in either form
    ballots = [
        {"object_id": f"b-{i}", "state": "cast", "pad": "A1" * 512, "data": "B2" * 512} for i in range(2000)
    ]
    for body, decode in (
        (json.dumps(ballots).encode(), decode_json),
        (msgpack.packb(ballots), decode_msgpack),
    ):
        tracemalloc.start()
        assert decode(body) == ballots
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert peak < 4 * len(body) + (1 << 20), (peak, len(body))


def test_an_authenticated_body_of_numbers_is_refused_and_nothing_stored(
    app: tuple[TestClient, Tokens],
) -> None:
    http, tokens = app
    body = (
        b'{"election_id":"e9","number_of_guardians":1,"quorum":1,"manifest":{"x":['
        + b",".join(b"123456" for _ in range(400_000))
        + b"]}}"
    )
    r = http.post(
        "/v1/elections", content=body, headers={**_bearer(tokens.admin), "content-type": "application/json"}
    )
    assert _type(r) == (400, "malformed_body"), r.text[:200]
    assert http.get("/v1/elections/e9").status_code == 404


def test_anonymous_requests_yield_to_requests_with_a_token() -> None:
    """Issue 43, items 1 and 3: 40 anonymous clients looping on a cheap read raised a device's p95
    about 16 times. Anonymous requests now run at most `anonymous_concurrency` at once (2 here) and wait,
    before they start, while a request with a token is in flight (at most `max_wait`)."""
    import asyncio

    from votum.service.auth import TokenBook
    from votum.service.limits import AnonymousGate

    token = "T" * 32
    entered: list[str] = []
    release: dict[str, asyncio.Event] = {}

    async def inner(scope: Any, receive: Any, send: Any) -> None:
        name = scope["path"]
        entered.append(name)
        await release[name].wait()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    async def main() -> None:
        gate = AnonymousGate(inner, TokenBook({token: "device"}), concurrency=2, max_wait=5.0)

        async def call(name: str, auth: bool) -> None:
            headers = [(b"authorization", b"Bearer " + token.encode())] if auth else []
            release[name] = asyncio.Event()

            async def send(message: Any) -> None:
                pass

            await gate({"type": "http", "path": name, "headers": headers}, None, send)

        device = asyncio.create_task(call("/device", True))
        await asyncio.sleep(0.05)
        readers = [asyncio.create_task(call(f"/read{i}", False)) for i in range(3)]
        await asyncio.sleep(0.2)
        assert entered == ["/device"], "anonymous requests wait while the device's is in flight"
        release["/device"].set()
        await device
        await asyncio.sleep(0.05)
        assert sorted(entered[1:]) == ["/read0", "/read1"], "then two at once, not three"
        release["/read0"].set()
        await asyncio.sleep(0.05)
        assert "/read2" in entered, "the third runs once a slot is free"
        for r in ("/read1", "/read2"):
            release[r].set()
        await asyncio.gather(*readers)

    asyncio.run(asyncio.wait_for(main(), 30))
