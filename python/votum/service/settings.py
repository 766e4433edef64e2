"""The service's settings: defaults, then a TOML file, then environment variables (`VOTUM_*`)."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]

from votum.errors import InvalidInput
from votum.localnet import is_loopback

#: Roles a bearer token can have: `admin`, `device` (encryption devices and ballot submission),
#: `guardian:<guardian id>`.
ROLE_PREFIX_GUARDIAN = "guardian:"
#: a named device token (`device:<name>`): its ballot ids start with `<name>-`, no other token may use
#: such ids, and its devices are its own (spec/80.5; issue 43, item 15)
ROLE_PREFIX_DEVICE = "device:"
DEVICE_NAME = re.compile(r"[A-Za-z0-9._]{1,64}")


def check_role(role: str) -> None:
    """Raises ValueError unless `role` is one the service knows (the value is not shown: a token typed
    where a role goes must not reach a log)."""
    named_device = role.startswith(ROLE_PREFIX_DEVICE) and DEVICE_NAME.fullmatch(
        role[len(ROLE_PREFIX_DEVICE) :]
    )
    if (
        role not in ("admin", "device", "metrics")
        and not named_device
        and not (role.startswith(ROLE_PREFIX_GUARDIAN) and len(role) > len(ROLE_PREFIX_GUARDIAN))
    ):
        raise ValueError(
            "unknown role (a role is admin, device, device:<name> with a name of 1-64 letters, "
            "digits, '.' or '_', metrics or guardian:<id>)"
        )


class Settings(BaseModel):
    """Everything `votum serve` can be told. Immutable once the app is built."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    #: where the SQLite file (and a generated token file) live
    data_dir: Path = Path("votum-data")
    #: SQLAlchemy URL; `None` means SQLite at `data_dir/votum.db`. PostgreSQL: `postgresql+psycopg://...`
    database_url: str | None = None
    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=0, le=65535)
    #: the six stateless seed endpoints carry guardian secrets over the wire and need no token.
    #: `None` (the default): on only when `host` is a loopback address, so only local programs
    #: reach them; `True`/`False` (`VOTUM_SEED_ENDPOINTS=1/0`, `--[no-]seed-endpoints`) decide
    seed_endpoints: bool | None = None
    #: largest accepted request body, in bytes (a 1,000-ballot tally chunk in JSON is about 40 MB)
    max_body_bytes: int = Field(default=128 * 1024 * 1024, ge=1024)
    #: token -> role; see `ROLE_PREFIX_GUARDIAN`. Empty: a random admin token is generated at start
    #: and written to `data_dir/tokens.json` (mode 0600)
    tokens: dict[str, str] = Field(default_factory=dict, repr=False)
    #: SHA-256 hex of a token -> role: tokens made by `votum tokens new`, of which only the hash is kept
    #: (`data_dir/tokens.json`, spec/80.8)
    token_hashes: dict[str, str] = Field(default_factory=dict, repr=False)
    #: seconds a client has to send a whole request head, from connecting or from the previous
    #: response; then the connection is closed (`votum.service.http`)
    header_timeout: float = Field(default=10.0, gt=0)
    #: seconds a client has to send a whole request body, from its request head (a 1,000-ballot batch
    #: is about 40 MB: a minute at 5 Mbit/s); then it is answered 408 `body_timeout`
    body_timeout: float = Field(default=120.0, gt=0)
    #: seconds an answer may stop draining (the client not reading, its socket full) before the
    #: connection is aborted and the answer's buffered bytes dropped (`votum.service.http`)
    send_timeout: float = Field(default=60.0, gt=0)
    #: payload bytes in one page of the board read with payloads (`GET …/board`): a page ends at the
    #: entry that reaches this (at least one entry), whatever `limit` asked for, so no page is a big answer
    board_page_bytes: int = Field(default=2 * 1024 * 1024, ge=1)
    #: requests without a token built at once; each also waits (up to 1 s) while requests with a token
    #: are in flight, so anonymous readers cannot take the CPU that ballot intake needs
    anonymous_concurrency: int = Field(default=2, ge=1)
    #: connections and requests served at once; more are answered 503 at once (uvicorn's
    #: `limit_concurrency`), so slow clients cannot pile up without bound
    max_connections: int = Field(default=1024, ge=1)
    #: connections one client address may hold at once; more are answered 503 and closed, so that one
    #: client cannot take the room of `max_connections` from the others. `None` (the default): 64 for
    #: every address but loopback (behind a proxy on this machine every client is the proxy: the proxy
    #: caps them, docs/deploy.md); a number: that cap for every address, loopback included
    max_connections_per_address: int | None = Field(default=None, ge=1)
    #: largest count a decryption looks for (discrete log table bound)
    max_count: int = Field(default=1_000_000, ge=1)
    #: TLS: the server's certificate chain and private key (PEM), both or neither
    tls_cert: Path | None = None
    tls_key: Path | None = None
    #: the web pages for voters, auditors and officials (`votum.web`, spec/80.9) at `/`; off: the API only
    pages: bool = True
    #: a directory of mixnet election records (`*.vmix`, written by `votum mix --out`) shown by the pages
    #: at `/mix`: each verified on demand, its outcome and counting rounds shown from the verifier's recount
    mix_records: Path | None = None
    #: a directory of ElectionGuard 2.x records (directories written by `votum election --spec 2.1`, in 2.1's
    #: own form or egk-ec's) shown by the pages at `/eg2`: each verified on demand, its result shown from the
    #: verifier's recount, a 2.1 record's ballots looked up by confirmation code
    eg2_records: Path | None = None
    #: while an election's board moves, a record export (`GET …/record`) younger than this many seconds is
    #: served as it is instead of exporting again: readers cost at most one export per election per
    #: interval (0: export at every new head)
    record_export_interval: float = Field(default=30.0, ge=0)
    #: record archives sent at once; more readers are answered 503 `busy` with Retry-After, so readers
    #: cannot take the CPU that ballot intake needs (a proxy in front can cache the archive instead)
    record_downloads: int = Field(default=4, ge=1)
    #: the verification page's runs of one election start at least this many seconds apart (and at
    #: least 3 times the last run's length after it), each at the lowest CPU priority with one thread
    verification_interval: float = Field(default=60.0, ge=0)
    #: the interactive API documentation at `/docs` (Swagger UI), which loads its script from a CDN onto
    #: the election's origin: off by default (issue 43, item 19); `/openapi.json` is always served
    api_docs: bool = False
    #: log lines as `text` (a terminal) or `json` (one object per line, for a log collector)
    log_format: Literal["text", "json"] = "text"

    @field_validator("token_hashes")
    @classmethod
    def _hashed_roles(cls, hashed: dict[str, str]) -> dict[str, str]:
        for digest, role in hashed.items():
            if not re.fullmatch(r"[0-9a-f]{64}", digest):
                raise ValueError("a token hash is 64 lower-case hex digits (SHA-256)")
            check_role(role)
        return hashed

    @field_validator("tokens")
    @classmethod
    def _roles(cls, tokens: dict[str, str]) -> dict[str, str]:
        for token, role in tokens.items():
            if len(token) < 16:
                raise ValueError("tokens must be at least 16 characters")
            check_role(role)
        return tokens

    @model_validator(mode="after")
    def _tls_pair(self) -> Settings:
        if (self.tls_cert is None) != (self.tls_key is None):
            raise ValueError("give both tls_cert and tls_key, or neither")
        for path in (self.tls_cert, self.tls_key):
            if path is not None and not path.is_file():
                raise ValueError(f"{path}: no such file")
        return self

    @property
    def seed_endpoints_on(self) -> bool:
        """Whether the seed endpoints answer (see `seed_endpoints`)."""
        if self.seed_endpoints is not None:
            return self.seed_endpoints
        return is_loopback(self.host)

    def url(self) -> str:
        return self.database_url or f"sqlite:///{self.data_dir / 'votum.db'}"

    def __repr__(self) -> str:  # tokens never printed
        shown = self.model_dump(exclude={"tokens", "token_hashes"})
        return f"Settings({shown}, tokens=<{len(self.tokens)} configured>)"

    __str__ = __repr__


_ENV = {
    "VOTUM_DATA_DIR": "data_dir",
    "VOTUM_DATABASE_URL": "database_url",
    "VOTUM_HOST": "host",
    "VOTUM_PORT": "port",
    "VOTUM_SEED_ENDPOINTS": "seed_endpoints",
    "VOTUM_MAX_BODY_BYTES": "max_body_bytes",
    "VOTUM_MAX_COUNT": "max_count",
    "VOTUM_HEADER_TIMEOUT": "header_timeout",
    "VOTUM_BODY_TIMEOUT": "body_timeout",
    "VOTUM_SEND_TIMEOUT": "send_timeout",
    "VOTUM_ANONYMOUS_CONCURRENCY": "anonymous_concurrency",
    "VOTUM_BOARD_PAGE_BYTES": "board_page_bytes",
    "VOTUM_MAX_CONNECTIONS": "max_connections",
    "VOTUM_MAX_CONNECTIONS_PER_ADDRESS": "max_connections_per_address",
    "VOTUM_RECORD_EXPORT_INTERVAL": "record_export_interval",
    "VOTUM_RECORD_DOWNLOADS": "record_downloads",
    "VOTUM_LOG_FORMAT": "log_format",
    "VOTUM_TLS_CERT": "tls_cert",
    "VOTUM_TLS_KEY": "tls_key",
    "VOTUM_PAGES": "pages",
    "VOTUM_MIX_RECORDS": "mix_records",
    "VOTUM_EG2_RECORDS": "eg2_records",
    "VOTUM_API_DOCS": "api_docs",
    "VOTUM_VERIFICATION_INTERVAL": "verification_interval",
}


def tokens_from_env(text: str) -> dict[str, str]:
    """`VOTUM_TOKENS="admin=TOKEN,device=TOKEN,guardian:g1=TOKEN"`: role=token items, separated by commas or
    new lines (a file of the lines `votum tokens new` prints reads the same)."""
    out: dict[str, str] = {}
    for n, item in enumerate(filter(None, (x.strip() for x in re.split(r"[,\n]", text))), 1):
        role, sep, token = item.partition("=")
        if not sep:
            raise InvalidInput(f"VOTUM_TOKENS item {n} is not role=token")
        token, role = token.strip(), role.strip()
        if token in out and out[token] != role:
            # never print the token itself, nor the roles: a token typed where a role goes would show
            raise InvalidInput(f"VOTUM_TOKENS item {n}: one token given for two roles")
        out[token] = role
    return out


def tokens_from_file(path: Path) -> dict[str, str]:
    """A client's tokens file: one `role=token` a line, as `votum tokens new` prints them (or, the earlier
    form, JSON `{token: role}`). Returns token -> role."""
    try:
        text = path.read_text()
    except OSError as e:
        raise InvalidInput(f"tokens file {path}: {e.strerror or e}") from None
    if text.lstrip().startswith("{"):
        try:
            doc = json.loads(text)
        except ValueError as e:
            raise InvalidInput(f"tokens file {path}: not JSON ({e})") from None
        if not isinstance(doc, dict):
            raise InvalidInput(f"tokens file {path}: not token -> role")
        return {str(k): str(v) for k, v in doc.items()}
    return tokens_from_env(text)


def load_settings(file: Path | None = None, env: dict[str, str] | None = None, **overrides: Any) -> Settings:
    """Defaults, then `file` (TOML; `VOTUM_CONFIG` names one when `file` is None), then the
    environment, then `overrides` (the command line's options)."""
    env = dict(os.environ if env is None else env)
    values: dict[str, Any] = {}
    path = file or (Path(env["VOTUM_CONFIG"]) if env.get("VOTUM_CONFIG") else None)
    if path is not None:
        try:
            values.update(tomllib.loads(path.read_text()))
        except (OSError, tomllib.TOMLDecodeError) as e:
            raise InvalidInput(f"settings file {path}: {e}") from e
    for var, name in _ENV.items():
        if var in env:
            values[name] = env[var]
    if "VOTUM_TOKENS" in env:
        values["tokens"] = tokens_from_env(env["VOTUM_TOKENS"])
    values.update({k: v for k, v in overrides.items() if v is not None})
    try:
        return Settings(**values)
    except ValidationError as e:
        # the errors without their input: a token must never reach a log or a terminal
        detail = "; ".join(
            f"{'.'.join(str(x) for x in err['loc']) or 'settings'}: {err['msg']}"
            for err in e.errors(include_input=False, include_url=False)
        )
        raise InvalidInput(f"settings: {detail}") from None
