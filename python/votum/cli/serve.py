"""`votum serve`: the election service on uvicorn."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path
from typing import Annotated, Any

import typer

from votum.errors import VotumError


def serve(
    host: Annotated[str | None, typer.Option(help="Address to listen on (default 127.0.0.1).")] = None,
    port: Annotated[int | None, typer.Option(help="Port (default 8000; 0 picks a free one).")] = None,
    data_dir: Annotated[
        Path | None, typer.Option(help="Data directory: the SQLite file and generated tokens.")
    ] = None,
    database_url: Annotated[
        str | None, typer.Option(help="SQLAlchemy URL, e.g. postgresql+psycopg://user@host/db.")
    ] = None,
    config: Annotated[Path | None, typer.Option(help="Settings file (TOML).")] = None,
    seed_endpoints: Annotated[
        bool | None,
        typer.Option(
            "--seed-endpoints/--no-seed-endpoints",
            help="The six stateless seed endpoints (they carry guardian secrets; off for real elections).",
        ),
    ] = None,
    tls_cert: Annotated[
        Path | None, typer.Option(help="TLS certificate chain (PEM); with --tls-key.")
    ] = None,
    tls_key: Annotated[Path | None, typer.Option(help="TLS private key (PEM); with --tls-cert.")] = None,
    log_level: Annotated[str, typer.Option(help="Log level (debug, info, warning, error).")] = "info",
    log_format: Annotated[
        str | None, typer.Option(help="Log lines as text or json (one object per line, with request ids).")
    ] = None,
    mix_records: Annotated[
        Path | None,
        typer.Option(help="A directory of mixnet election records (*.vmix) the web pages show at /mix."),
    ] = None,
    eg2_records: Annotated[
        Path | None,
        typer.Option(
            help="A directory of ElectionGuard 2.x records (one directory each) the web pages show at /eg2."
        ),
    ] = None,
    workers: Annotated[
        int, typer.Option(min=1, max=64, help="Server processes on one port and one database.")
    ] = 1,
) -> None:
    """Serve the election API (settings: defaults < --config file < VOTUM_* environment < options)."""
    import uvicorn

    from votum.service import create_app, http, load_settings
    from votum.service.app import SETTINGS_ENV, settings_for_workers
    from votum.service.observe import configure_logging
    from votum.service.tokenfile import ensure_tokens
    from votum.store import Store

    configure_logging(log_level, "text")
    try:
        settings = load_settings(
            config,
            host=host,
            port=port,
            data_dir=data_dir,
            database_url=database_url,
            seed_endpoints=seed_endpoints,
            log_format=log_format,
            tls_cert=tls_cert,
            tls_key=tls_key,
            mix_records=mix_records,
            eg2_records=eg2_records,
        )
        configure_logging(log_level, settings.log_format)
        settings, token_file, made = ensure_tokens(settings)
        if workers == 1:
            app: Any = create_app(settings)
        else:
            # the workers are fresh interpreters that build their own app from these settings; the
            # database is opened (and migrated) here first, so a bad URL fails now, once
            if settings.database_url is None:
                settings.data_dir.mkdir(parents=True, exist_ok=True)
            Store(settings.url()).close()
            app = "votum.service.app:app_from_environment"
            os.environ[SETTINGS_ENV] = settings_for_workers(settings, log_level)
            # request metrics of every worker, summed at each scrape (prometheus_client's multiprocess
            # mode: each process writes its values to files in this directory)
            metrics_dir = tempfile.mkdtemp(prefix="votum-metrics-")
            atexit.register(shutil.rmtree, metrics_dir, True)
            os.environ["PROMETHEUS_MULTIPROC_DIR"] = metrics_dir
    except VotumError as e:
        typer.echo(f"votum serve: {e}", err=True)
        raise typer.Exit(2) from e
    if made is not None:
        # shown this once: the file keeps only its hash (spec/80.8)
        typer.echo(
            f"no tokens configured: a new admin token, shown once (its hash is in {token_file}):", err=True
        )
        typer.echo(f"admin={made}", err=True)
    elif token_file is not None:
        typer.echo(f"tokens from {token_file}", err=True)
    uvicorn.run(
        app,
        factory=workers > 1,
        workers=workers if workers > 1 else None,
        host=settings.host,
        port=settings.port,
        log_level=log_level,
        access_log=False,  # votum.access writes one line per request, with its id
        log_config=None,  # uvicorn's loggers go through the handler configured above
        http=(
            http.with_limits(
                settings.header_timeout, settings.max_connections_per_address, settings.send_timeout
            )
            if workers == 1
            else http.IMPORT_NAME
        ),
        limit_concurrency=settings.max_connections,
        ssl_certfile=settings.tls_cert,
        ssl_keyfile=settings.tls_key,
    )
