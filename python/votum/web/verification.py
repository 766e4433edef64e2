"""The verifier run by the server on demand, for the verification page (spec/80.9).

A run checks the record as the board stands at one head: the record is exported to a private
temporary file (as `GET /v1/elections/{id}/record` does) and `votum.verifier.verify` reads it. Runs
are kept under `data_dir/verifications/<election>/<head hash>.json`, so every worker of
`votum serve --workers N` (one machine, one data directory) and a restarted server show the same
result, and a head is verified once. A run in progress is a `.running` file made with O_EXCL (one
run per head across workers) holding its process id and start time; one left by a process that
died is taken over. One run at a time per process: the verifier uses every core."""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from votum.store import Store
from votum.verifier import verify

log = logging.getLogger("votum.web")


@dataclass
class State:
    """What the page shows: `none`, `running` (with `started`), or `done` (with the report)."""

    status: str
    started: float = 0.0
    report: dict[str, Any] | None = None


class Verifications:
    def __init__(self, store: Store, data_dir: Path) -> None:
        self.store = store
        self.root = data_dir / "verifications"
        self._one = threading.Semaphore(1)

    def _paths(self, election_id: str, head: str) -> tuple[Path, Path]:
        folder = self.root / election_id
        return folder / f"{head}.json", folder / f"{head}.running"

    def state(self, election_id: str, head: str) -> State:
        done, running = self._paths(election_id, head)
        if done.is_file():
            return State("done", report=json.loads(done.read_text()))
        try:
            marker = json.loads(running.read_text())
        except (OSError, ValueError):
            return State("none")
        if not _alive(int(marker.get("pid", 0))):
            return State("none")
        return State("running", started=float(marker.get("started", 0.0)))

    def start(self, election_id: str, head_seq: int, head: str) -> bool:
        """Starts a run for the record at `head` unless one exists or runs; False when this process
        is already running another (the page says to try again)."""
        done, running = self._paths(election_id, head)
        if done.is_file() or self.state(election_id, head).status == "running":
            return True
        if not self._one.acquire(blocking=False):
            return False
        try:
            running.parent.mkdir(parents=True, exist_ok=True)
            running.unlink(missing_ok=True)  # a dead run's marker (state() said it is not alive)
            fd = os.open(running, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            self._one.release()
            return True  # another worker started it a moment ago
        except BaseException:
            self._one.release()
            raise
        with os.fdopen(fd, "w") as f:
            json.dump({"pid": os.getpid(), "started": time.time()}, f)
        threading.Thread(
            target=self._run, args=(election_id, head_seq, head), name=f"votum-verify-{election_id}"
        ).start()
        return True

    def _run(self, election_id: str, head_seq: int, head: str) -> None:
        from votum.service.v1.elections import export_record

        done, running = self._paths(election_id, head)
        private = Path(tempfile.mkdtemp(prefix="votum-web-verify-"))
        t0 = time.perf_counter()
        try:
            path = private / "record.votum"
            export_record(self.store, election_id, path)
            report = verify(path)
            result: dict[str, Any] = {
                "head": {"seq": head_seq, "hash": head},
                "passed": report.passed,
                "ballots": report.ballots,
                "checks": [
                    {
                        "id": c.id,
                        "title": c.title,
                        "status": c.status,
                        "checked": c.checked,
                        "findings": [f"{obj}: {why}" for obj, why in c.findings[:5]],
                        "more": c.more + max(0, len(c.findings) - 5),
                    }
                    for c in report.checks
                ],
            }
        except Exception as e:  # the page shows it; the server goes on
            log.exception("verification of %s at %s failed to run", election_id, head)
            result = {"head": {"seq": head_seq, "hash": head}, "error": str(e)}
        finally:
            shutil.rmtree(private, ignore_errors=True)
        result["seconds"] = round(time.perf_counter() - t0, 2)
        try:
            tmp = done.with_suffix(".tmp")
            tmp.write_text(json.dumps(result))
            os.replace(tmp, done)
        finally:
            running.unlink(missing_ok=True)
            self._one.release()


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
