"""Hosts on one machine for tests across real interfaces: network namespaces joined by veth pairs to a bridge
in the root namespace (which has an address on it too), with faults made by the kernel: nftables for loss and
partitions, a token bucket (tc tbf) for a slow link. This kernel has no netem, so latency is not simulated.
Everything made is removed by `close`, also after a failure."""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

#: what the lab needs from the system (installed by scripts/setup.sh)
TOOLS = ("ip", "tc", "nft", "tshark")


def available() -> str | None:
    """Why the lab cannot run here, or None."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    missing = [t for t in TOOLS if shutil.which(t) is None]
    return f"missing {', '.join(missing)} (scripts/setup.sh installs them)" if missing else None


def sh(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(list(args), capture_output=True, text=True, timeout=30)
    if check and done.returncode != 0:
        raise RuntimeError(f"{' '.join(args)}: exit {done.returncode}: {done.stderr.strip()}")
    return done


_made = itertools.count(1)
_nets = itertools.count(0)


def _subnet() -> int:
    """The third octet of a new lab's subnet. Labs of one process take turns through their own range; when
    pytest runs in two worker processes (`make test`), each worker has half of 20…219, so two labs alive at
    once in the two workers never share a subnet (two bridges with one subnet would cross their routes)."""
    return 20 + 100 * _worker() + next(_nets) % 100


def _worker() -> int:
    """0 or 1: which of pytest's two worker processes this is (0 outside pytest-xdist)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    return int(worker) % 2 if worker.isdigit() else 0


@dataclass
class Lab:
    """`hosts` namespaces, host i at 10.231.<net>.i on its eth0; the root namespace at 10.231.<net>.254."""

    hosts: int
    #: unique per lab (the kernel removes a deleted namespace's veth pairs a little later)
    tag: str = field(default_factory=lambda: f"{os.getpid() % 1000}{_worker()}{next(_made) % 100:02d}")

    def __post_init__(self) -> None:
        self.net = _subnet()
        self.bridge = f"vbr{self.tag}"
        self.names = [f"vn{self.tag}x{i}" for i in range(1, self.hosts + 1)]
        self.made: list[tuple[str, ...]] = []
        try:
            sh("ip", "link", "add", self.bridge, "type", "bridge")
            self.made.append(("ip", "link", "del", self.bridge))
            sh("ip", "addr", "add", f"{self.root_ip}/24", "dev", self.bridge)
            sh("ip", "link", "set", self.bridge, "up")
            for i, ns in enumerate(self.names, start=1):
                sh("ip", "netns", "add", ns)
                self.made.append(("ip", "netns", "del", ns))
                sh("ip", "link", "add", f"{ns}h", "type", "veth", "peer", "name", "eth0", "netns", ns)
                sh("ip", "-n", ns, "addr", "add", f"{self.ip(i)}/24", "dev", "eth0")
                sh("ip", "-n", ns, "link", "set", "eth0", "up")
                sh("ip", "-n", ns, "link", "set", "lo", "up")
                sh("ip", "link", "set", f"{ns}h", "master", self.bridge, "up")
        except BaseException:
            self.close()
            raise

    @property
    def root_ip(self) -> str:
        return f"10.231.{self.net}.254"

    def ip(self, host: int) -> str:
        return f"10.231.{self.net}.{host}"

    def ns(self, host: int) -> str:
        return self.names[host - 1]

    def exec_args(self, host: int) -> list[str]:
        return ["ip", "netns", "exec", self.ns(host)]

    def loss(self, host: int, percent: int) -> None:
        """Drops `percent`% of the packets host `host` receives, at random."""
        ns = self.ns(host)
        sh("ip", "netns", "exec", ns, "nft", "add", "table", "inet", "lab")
        sh("ip", "netns", "exec", ns, "nft", "add", "chain", "inet", "lab", "loss",
           "{ type filter hook input priority 0 ; }")  # fmt: skip
        sh("ip", "netns", "exec", ns, "nft", "add", "rule", "inet", "lab", "loss",
           "numgen", "random", "mod", "100", "<", str(percent), "drop")  # fmt: skip

    def partition(self, host: int) -> None:
        """Cuts host `host` off: everything in and out is dropped (connections stay open, silently)."""
        ns = self.ns(host)
        sh("ip", "netns", "exec", ns, "nft", "add", "table", "inet", "cut")
        for hook in ("input", "output"):
            sh("ip", "netns", "exec", ns, "nft", "add", "chain", "inet", "cut", hook,
               f"{{ type filter hook {hook} priority 0 ; policy drop ; }}")  # fmt: skip

    def heal(self, host: int) -> None:
        sh("ip", "netns", "exec", self.ns(host), "nft", "delete", "table", "inet", "cut")

    def slow(self, host: int, rate: str = "20mbit") -> None:
        """Limits what host `host` sends to `rate` (a token bucket on its eth0)."""
        sh("tc", "-n", self.ns(host), "qdisc", "add", "dev", "eth0", "root", "tbf",
           "rate", rate, "burst", "32kbit", "latency", "400ms")  # fmt: skip

    def capture(self, path: Path) -> subprocess.Popen[bytes]:
        """tshark writing everything crossing the bridge to `path` (pcapng) until terminated."""
        return subprocess.Popen(
            ["tshark", "-q", "-i", self.bridge, "-w", str(path)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )

    def close(self) -> None:
        for cmd in reversed(self.made):
            sh(*cmd, check=False)
        self.made.clear()
