"""The verifier run by the server on demand, for the verification page (spec/80.9).

A run checks the record as the board stands at one head: the record is exported to a private
temporary file (as `GET /v1/elections/{id}/record` does) and `votum.verifier.verify` reads it. Runs
are kept under `data_dir/verifications/<election>/<head hash>.json`, so every worker of
`votum serve --workers N` (one machine, one data directory) and a restarted server show the same
result, and a head is verified once. A run in progress is a `.running` file made with O_EXCL (one
run per head across workers) holding its process id and start time; one left by a process that
died is taken over. One run at a time per process: the verifier uses every core. While ballots arrive
the head moves with each one, so a new run for an election starts at most once per `interval` seconds
(anyone may ask for a run: this bounds what asking can cost); the page shows the latest report, with
the head it was made at, meanwhile."""

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

#: checks of documents a record has only from a later phase on: before then they are shown as
#: `pending` (with what the verifier said), and the verdict is over the other checks
PENDING = {
    "open": ("V-TALLY-", "V-DECRYPT-", "V-SPOILED-"),
    "closed": ("V-DECRYPT-", "V-SPOILED-"),
}


@dataclass
class State:
    """What the page shows: `none`, `running` (with `started`), or `done` (with the report)."""

    status: str
    started: float = 0.0
    #: while running: the verifier's last reported stage and count, and the ballots expected (0: unknown)
    stage: str = ""
    done: int = 0
    total: int = 0
    report: dict[str, Any] | None = None
    #: with status `none`: the election's latest report at an earlier head, if any
    earlier: dict[str, Any] | None = None


class Verifications:
    def __init__(self, store: Store, root: Path, interval: float = 60.0) -> None:
        self.store = store
        self.root = root
        self.interval = interval
        self._one = threading.Semaphore(1)
        #: set when the server shuts down: a run in progress stops at the verifier's next progress
        #: report and leaves no report behind (the next server runs it again)
        self.stopping = threading.Event()

    def stop(self) -> None:
        self.stopping.set()

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
            marker = {}
        if marker and _alive(int(marker.get("pid", 0))):
            return State(
                "running",
                started=float(marker.get("started", 0.0)),
                stage=str(marker.get("stage", "")),
                done=int(marker.get("done", 0)),
                total=int(marker.get("total", 0)),
            )
        latest = self._latest(election_id)
        return State("none", earlier=json.loads(latest.read_text()) if latest else None)

    def _latest(self, election_id: str) -> Path | None:
        reports = list((self.root / election_id).glob("*.json"))
        return max(reports, key=lambda p: p.stat().st_mtime) if reports else None

    def wait_seconds(self, election_id: str) -> float:
        """How long until a new run of `election_id` may start (0: now)."""
        latest = self._latest(election_id)
        if latest is None:
            return 0.0
        return max(0.0, latest.stat().st_mtime + self.interval - time.time())

    def start(
        self,
        election_id: str,
        head_seq: int,
        head: str,
        phase: str = "published",
        record: Path | None = None,
        ballots: int = 0,
    ) -> str:
        """Starts a run for the record at `head` unless one exists or runs (`started`); `busy` when
        this process is running another, `recent` when the election's last run ended less than
        `interval` seconds ago (the page says when to ask again). With `record`, that file is checked
        (a mix record, named by `election_id`, at the version `head`) instead of the election's export,
        and the verifier's recomputed values are kept in the report."""
        done, running = self._paths(election_id, head)
        if done.is_file() or self.state(election_id, head).status == "running":
            return "started"
        if self.wait_seconds(election_id) > 0:
            return "recent"
        if not self._one.acquire(blocking=False):
            return "busy"
        try:
            running.parent.mkdir(parents=True, exist_ok=True)
            running.unlink(missing_ok=True)  # a dead run's marker (state() said it is not alive)
            fd = os.open(running, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            self._one.release()
            return "started"  # another worker started it a moment ago
        except BaseException:
            self._one.release()
            raise
        marker = {"pid": os.getpid(), "started": time.time(), "total": ballots}
        with os.fdopen(fd, "w") as f:
            json.dump(marker, f)
        threading.Thread(
            target=self._run,
            args=(election_id, head_seq, head, phase, record, marker),
            name=f"votum-verify-{election_id}",
        ).start()
        return "started"

    def _run(
        self,
        election_id: str,
        head_seq: int,
        head: str,
        phase: str,
        record: Path | None,
        marker: dict[str, Any],
    ) -> None:
        from votum.service.v1.elections import export_record

        done, running = self._paths(election_id, head)
        private = Path(tempfile.mkdtemp(prefix="votum-web-verify-"))
        t0 = time.perf_counter()
        try:
            if record is None:
                path = private / "record.votum"
                export_record(self.store, election_id, path)
            else:
                path = record
            report = verify(path, self._progress(running, marker))
            later = PENDING.get(phase, ())
            result: dict[str, Any] = {
                "head": {"seq": head_seq, "hash": head},
                "phase": phase,
                "passed": all(c.status == "pass" for c in report.checks if not c.id.startswith(later)),
                "ballots": report.ballots,
                "checks": [
                    {
                        "id": c.id,
                        "title": c.title,
                        "status": "pending" if later and c.id.startswith(later) else c.status,
                        "verifier_status": c.status,
                        "checked": c.checked,
                        "findings": [f"{obj}: {why}" for obj, why in c.findings[:5]],
                        "more": c.more + max(0, len(c.findings) - 5),
                    }
                    for c in report.checks
                ],
            }
            if record is not None:
                result["values"] = report.intermediates
                # a record file is named by its own chain head, which the verifier recomputed
                result["head"] = {"seq": -1, "hash": str(report.intermediates.get("head", ""))}
        except Exception as e:  # the page shows it; the server goes on
            if self.stopping.is_set():
                log.info("verification of %s at %s stopped: the server is shutting down", election_id, head)
            else:
                log.exception("verification of %s at %s failed to run", election_id, head)
            result = {"head": {"seq": head_seq, "hash": head}, "error": str(e)}
        finally:
            shutil.rmtree(private, ignore_errors=True)
        result["seconds"] = round(time.perf_counter() - t0, 2)
        try:
            if not self.stopping.is_set():
                tmp = done.with_suffix(".tmp")
                tmp.write_text(json.dumps(result))
                os.replace(tmp, done)
        finally:
            running.unlink(missing_ok=True)
            self._one.release()

    def _progress(self, running: Path, marker: dict[str, Any]) -> Any:
        """The verifier's progress hook: the stage and count go into the run's marker, at most twice a
        second (the page shows them)."""
        last = [0.0]

        def hook(stage: str, n: int) -> None:
            if self.stopping.is_set():
                raise InterruptedError("the server is shutting down")
            now = time.monotonic()
            if now - last[0] < 0.5:
                return
            last[0] = now
            tmp = running.with_suffix(".progress")
            try:
                tmp.write_text(json.dumps({**marker, "stage": stage, "done": n}))
                os.replace(tmp, running)
            except OSError:
                pass  # progress is a courtesy; the run goes on

        return hook


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
