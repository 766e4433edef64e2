"""`votum device`: a polling station's encryption device, as a kiosk page served on this machine (spec/80.10).
It holds only public keys; ballots are encrypted here and sent to the service with the device token."""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Annotated

import httpx
import typer
from rich.console import Console

from votum.cli._errors import fail
from votum.cli._service import DEFAULT_SERVICE, ElectionId, Service, TokenFile, role_and_token
from votum.client import Client
from votum.errors import VotumError

DEFAULT_STATE = Path.home() / ".votum" / "device"


def device(
    election: ElectionId,
    device_id: Annotated[int, typer.Option("--device-id", min=0, help="This device's number.")] = 1,
    service: Service = DEFAULT_SERVICE,
    token_file: TokenFile = None,
    host: Annotated[
        str, typer.Option(help="Address the kiosk page listens on (keep it local).")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port of the kiosk page.")] = 8080,
    state_dir: Annotated[
        Path, typer.Option(help="Where the device keeps its chain of ballot codes between runs.")
    ] = DEFAULT_STATE,
    public_url: Annotated[
        str | None, typer.Option(help="The public pages' address, for the tracker link (default: --service).")
    ] = None,
    style: Annotated[
        str | None, typer.Option(help="The ballot style (default: the manifest's first).")
    ] = None,
) -> None:
    """Serve the polling-station kiosk: a voter marks a ballot, the device encrypts it here and shows its
    code, and the voter casts it or spoils it to check the encryption; the receipt page gives the code and
    the tracker's address."""
    import uvicorn

    from votum.web.kiosk import Kiosk, create_kiosk_app

    console = Console(stderr=True)
    if not _local(host):
        console.print(
            f"[yellow]the kiosk listens on {host}: anyone who reaches it can cast ballots with its token[/]"
        )
    try:
        role, token = role_and_token("device*", token_file)
        name = role.split(":", 1)[1] if role and ":" in role else None
        state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        client = Client(service, token=token, use_msgpack=False, timeout=60)
        kiosk = Kiosk(
            client,
            election,
            device_id,
            state_dir,
            public_url or service,
            location=f"{name}-station-{device_id}" if name else f"station-{device_id}",
            ballot_prefix=f"{name}-" if name else f"kiosk-{device_id}-",
            style=style,
        )
    except (VotumError, OSError, httpx.HTTPError) as e:
        fail(console, e)
    console.print(f"device {device_id} of election {election}: joint key {kiosk.joint_fingerprint}")
    console.print(f"kiosk page: http://{host}:{port}/", soft_wrap=True)
    try:
        uvicorn.run(create_kiosk_app(kiosk), host=host, port=port, log_level="warning")
    finally:
        client.close()


def _local(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"
