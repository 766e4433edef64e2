"""The channels and the key ceremony across real interfaces: each guardian in its own network namespace,
joined by veth pairs to a bridge, with packet loss, a slow link and a partition made by the kernel, and a
tshark capture of the bridge that holds none of the payloads in clear (spec/95, spec/96)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import socket
import subprocess
import sys
from collections.abc import Awaitable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest
import uvloop
from netlab import Lab, available
from votum import EgManifest
from votum.eg import run_ceremony
from votum.election import synthetic_manifest
from votum.nodes import Identity, Keystore, Node, NodeSettings
from votum.nodes import errors as ne
from votum.nodes.local import make_identities
from votum.parties.ceremony import CeremonyFailed, guardian_seed, run_local

pytestmark = pytest.mark.skipif(available() is not None, reason=f"no network namespaces: {available()}")

T = TypeVar("T")
EM = EgManifest.from_json(json.dumps(synthetic_manifest(2)))


def run(coro: Awaitable[T], timeout: float = 180.0) -> T:
    async def bounded() -> T:
        return await asyncio.wait_for(coro, timeout)

    return uvloop.run(bounded())


@pytest.fixture
def lab() -> Iterator[Lab]:
    made = Lab(3)
    try:
        yield made
    finally:
        made.close()


def _capturing(lab: Lab, path: Path) -> subprocess.Popen[bytes]:
    proc = lab.capture(path)
    assert proc.stderr is not None
    for _ in range(50):  # tshark says when it listens
        line = proc.stderr.readline().decode()
        if "Capturing on" in line or not line:
            break
    return proc


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    proc.wait(20)
    if proc.stderr is not None:
        proc.stderr.close()


def test_a_ceremony_across_namespaces_with_loss_and_a_slow_link_leaves_no_plaintext_on_the_wire(
    lab: Lab, tmp_path: Path
) -> None:
    lab.loss(1, 5)
    lab.slow(2)
    pcap = tmp_path / "bridge.pcapng"
    tshark = _capturing(lab, pcap)
    try:
        done = run(
            run_local(
                3,
                2,
                EM,
                tmp_path / "homes",
                seed=3,
                timeout=60,
                placement=lambda i: (lab.exec_args(i), lab.ip(i)),
            )
        )
        # a control: the same capture does see bytes sent in clear across the bridge
        udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        udp.sendto(b"VOTUM-CONTROL-PLAINTEXT", (lab.ip(3), 9999))
        udp.close()
        run(asyncio.sleep(0.5))
    finally:
        _stop(tshark)
    result = done.result
    assert all(c.address and c.address.startswith(f"10.231.{lab.net}.") for c in result.guardians.values())
    one = run_ceremony(EM, 3, 2, [guardian_seed(3, i) for i in range(1, 4)])
    assert result.context.to_json() == one.context.to_json()

    captured = pcap.read_bytes()
    assert b"VOTUM-CONTROL-PLAINTEXT" in captured
    # what the parties said, were it in clear: record and backup fields, guardian ids, the joint key
    for needle in (b"election_commitments", b"encrypted_coordinate", b"guardian-2", b"ceremony/backup"):
        assert needle not in captured, needle
    assert result.joint_key[:24].encode() not in captured
    summary = subprocess.run(
        ["tshark", "-r", str(pcap), "-Y", "tls.handshake.type == 1", "-T", "fields", "-e", "ip.dst"],
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout.split()
    # TLS client hellos went to each guardian (from the coordinator and from the other guardians)
    assert {lab.ip(i) for i in (1, 2, 3)} <= set(summary)


def test_a_partitioned_guardian_fails_the_ceremony_by_name(lab: Lab, tmp_path: Path) -> None:
    lab.partition(2)
    with pytest.raises(CeremonyFailed) as caught:
        run(
            run_local(
                3,
                2,
                EM,
                tmp_path / "homes",
                timeout=5,
                placement=lambda i: (lab.exec_args(i), lab.ip(i)),
            )
        )
    assert caught.value.guardian == "guardian-2" and caught.value.phase == "start"
    assert not list((tmp_path / "homes").glob("*/*.sealed"))


NODE = """
import asyncio, sys, uvloop
from pathlib import Path
from votum.nodes import open_node
async def echo(m):
    return m.payload
async def main():
    node = open_node(Path(sys.argv[1]))
    node.route("echo", echo)
    await node.start(sys.argv[2], 7800)
    print("up", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    await node.close()
uvloop.run(main())
"""


def test_a_partition_breaks_requests_and_healing_lets_them_through_again(lab: Lab, tmp_path: Path) -> None:
    here, there = make_identities(tmp_path, ["here", "there"])
    far = Identity(there).card
    keys = Keystore([Identity(here).card], there / "peers.json")
    keys.save()
    proc = subprocess.Popen(
        [*lab.exec_args(1), sys.executable, "-c", NODE, str(there), lab.ip(1)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "up"

        async def main() -> None:
            node = Node(Identity(here), Keystore(), NodeSettings(connect_timeout=3.0, validate_after=0.5))
            node.trust(dataclasses.replace(far, address=f"{lab.ip(1)}:7800"), far.fingerprint)
            try:
                assert await node.request("there", "echo", b"before", timeout=10) == b"before"
                lab.partition(1)
                with pytest.raises((ne.PeerUnavailable, asyncio.TimeoutError)):
                    await node.request("there", "echo", b"cut off", timeout=2)
                lab.heal(1)
                answered = None
                for _ in range(30):  # bounded: the pool revalidates, or TCP retransmits what was queued
                    try:
                        answered = await node.request("there", "echo", b"after", timeout=2)
                        break
                    except (ne.PeerUnavailable, asyncio.TimeoutError):
                        await asyncio.sleep(0.5)
                assert answered == b"after"
            finally:
                await node.close()

        run(main())
    finally:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.close()
        proc.wait(10)
        proc.stdout.close()
