"""Board files (spec/91.7) taken apart and put together by hand, for tests that write hostile records."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

Entry = tuple[bytes, bytes, bytes]

# a hole of 2 GiB in a sparse file: no disk, but that many zero bytes to whoever reads it
HOLE = 2 << 30


def entries(data: bytes) -> tuple[bytes, list[Entry]]:
    """A board file's header and its entries (kind, name, payload)."""
    header_len = 13 + data[12]
    at, out = header_len, []
    while at < len(data):
        kind = data[at + 1 : at + 1 + data[at]]
        at += 1 + data[at]
        name = data[at + 1 : at + 1 + data[at]]
        at += 1 + data[at]
        n = int.from_bytes(data[at : at + 8], "big")
        out.append((kind, name, data[at + 8 : at + 8 + n]))
        at += 8 + n
    return data[:header_len], out


def entry(kind: bytes, name: bytes, payload: bytes, length: int | None = None) -> bytes:
    """One entry's bytes; `length` claims another payload length than the payload's."""
    n = len(payload) if length is None else length
    return bytes([len(kind)]) + kind + bytes([len(name)]) + name + n.to_bytes(8, "big") + payload


def verify_with_a_hole(
    path: Path, header: bytes, before: list[Entry], where: tuple[bytes, bytes], check: str
) -> tuple[str, str, int]:
    """Writes `header`, the entries `before`, then an entry `where` (kind, name) whose payload is a
    2 GiB hole, and verifies it in a child process: the check's status, its first finding and the
    child's peak memory in KiB (VmHWM of its own address space: rusage would count the parent's pages
    it held between fork and exec)."""
    prefix = header + b"".join(entry(*e) for e in before) + entry(*where, b"", HOLE)
    with path.open("wb") as f:
        f.write(prefix)
        f.truncate(len(prefix) + HOLE)
    code = (
        "import json, sys; from votum.verifier import verify; r = verify(sys.argv[1]); "
        f"c = r.check({check!r}); "
        "peak = next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmHWM:')); "
        "print(json.dumps([c.status, c.findings[0][1] if c.findings else '', peak]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    status, finding, peak = json.loads(done.stdout)
    return str(status), str(finding), int(peak)


def assert_refused_unread(record: Path, kind: str, check: str) -> None:
    """`record` written again up to its first entry of `kind`, that entry's payload a 2 GiB hole: the
    verifier must refuse it under `check` (an Error naming the length) without reading it (its peak
    memory under 512 MiB)."""
    header, all_entries = entries(record.read_bytes())
    at = next(i for i, e in enumerate(all_entries) if e[0] == kind.encode())
    hole = record.with_name("hole" + record.suffix)
    status, finding, peak_kib = verify_with_a_hole(hole, header, all_entries[:at], all_entries[at][:2], check)
    assert status == "error" and f"payload of {HOLE} bytes" in finding, finding
    assert peak_kib < 512 * 1024, f"the verifier took {peak_kib // 1024} MiB"
