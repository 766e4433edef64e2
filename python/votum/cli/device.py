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
from votum.errors import InvalidInput, VotumError

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
    he_fingerprint: Annotated[
        str | None,
        typer.Option(
            "--he-fingerprint",
            help="ElectionGuard 2.1: the H_E fingerprint the officials announced (`votum official open` and "
            "every guardian's tool print it). The device encrypts nothing under keys without it.",
        ),
    ] = None,
    simple_chaining: Annotated[
        bool,
        typer.Option(
            "--simple-chaining", help="ElectionGuard 2.1: chain each ballot's code to the previous one's."
        ),
    ] = False,
) -> None:
    """Serve the polling-station kiosk: a voter marks a ballot, the device encrypts it here and shows its
    code, and the voter casts it or spoils it to check the encryption; the receipt page gives the code and
    the tracker's address. An ElectionGuard 2.1 election needs --he-fingerprint."""
    import uvicorn

    from votum.web.kiosk import Kiosk, KioskBase, create_kiosk_app
    from votum.web.kiosk21 import Kiosk21

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
        station = f"{name}-station-{device_id}" if name else f"station-{device_id}"
        prefix = f"{name}-" if name else f"kiosk-{device_id}-"
        spec = client.get(f"/v1/elections/{election}").get("spec", "1.0")
        kiosk: KioskBase
        if spec == "2.1" or he_fingerprint is not None:
            if he_fingerprint is None:
                raise InvalidInput(
                    f"election {election} is an ElectionGuard 2.1 election: give the H_E fingerprint the "
                    "officials announced (--he-fingerprint)"
                )
            kiosk = Kiosk21(
                client, election, device_id, state_dir, public_url or service, station, he_fingerprint,
                ballot_prefix=prefix, style=style, simple_chaining=simple_chaining, token_name=name,
            )  # fmt: skip
            what = f"H_E fingerprint {kiosk.joint_fingerprint} (checked)"
            if kiosk.device.weight != 1:
                what += f"; its ballots weigh {kiosk.device.weight}"
        else:
            if simple_chaining:
                raise InvalidInput("--simple-chaining is ElectionGuard 2.1's; a 1.0 device always chains")
            kiosk = Kiosk(
                client, election, device_id, state_dir, public_url or service, location=station,
                ballot_prefix=prefix, style=style,
            )  # fmt: skip
            what = f"joint key {kiosk.joint_fingerprint}"
    except (VotumError, OSError, httpx.HTTPError) as e:
        fail(console, e)
    console.print(f"device {device_id} of election {election}: {what}")
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
