"""The verifier run by the server on demand, for the verification page (spec/80.9).

A run checks the record as the board stands at one head: in a process of its own at the lowest CPU
priority with one verifier thread (`verify_run`: intake gets the CPU whenever it wants it, issue 43,
item 4), the record up to that head is exported to a private temporary file (as
`GET /v1/elections/{id}/record` does) and `votum.verifier.verify` reads it. Runs
are kept under `data_dir/verifications/<election>/<head hash>.json`, so every worker of
`votum serve --workers N` (one machine, one data directory) and a restarted server show the same
result, and a head is verified once. A run in progress is a `.running` file made with O_EXCL (one
run per head across workers) holding its process id and start time; one left by a process that
died is taken over. One run at a time per server process. While ballots arrive the head moves with
each one, so a new run for an election starts at most once per `interval` seconds, and not before
`idle_factor` times the last run's length has passed since it ended (anyone may ask for a run: this
bounds what asking can cost); the page shows the latest report, with the head it was made at,
meanwhile."""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from votum.store import Store

log = logging.getLogger("votum.web")


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
    def __init__(
        self, store: Store, root: Path, interval: float = 60.0, threads: int = 1, idle_factor: float = 3.0
    ) -> None:
        self.store = store
        self.root = root
        self.interval = interval
        #: the verifier's threads in its process (which runs at nice 19, `verify_run`)
        self.threads = threads
        #: after a run of s seconds, the election's next run waits at least `idle_factor` × s: runs
        #: asked for back to back take at most 1 / (1 + idle_factor) of the time
        self.idle_factor = idle_factor
        self._one = threading.Semaphore(1)
        self._lock = threading.Lock()
        self._children: set[subprocess.Popen[str]] = set()
        #: set when the server shuts down: a run in progress stops at the verifier's next progress
        #: report and leaves no report behind (the next server runs it again)
        self.stopping = threading.Event()

    def stop(self) -> None:
        self.stopping.set()
        with self._lock:
            for child in self._children:
                child.kill()

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
        try:
            took = float(json.loads(latest.read_text()).get("seconds", 0.0))
        except (OSError, ValueError, AttributeError):
            took = 0.0
        pause = max(self.interval, self.idle_factor * took) if self.interval else 0.0
        return max(0.0, latest.stat().st_mtime + pause - time.time())

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
        done, running = self._paths(election_id, head)
        private = Path(tempfile.mkdtemp(prefix="votum-web-verify-"))
        out = private / "report.json"
        t0 = time.perf_counter()
        command = [
            sys.executable, "-m", "votum.web.verify_run", "--parent", str(os.getpid()), "--out", str(out),
            "--head-seq", str(head_seq), "--head", head, "--phase", phase,
        ]  # fmt: skip
        if record is None:
            command += ["--database", self.store.url, "--election", election_id]
        else:
            command += ["--record", str(record)]
        result: dict[str, Any]
        try:
            env = {**os.environ, "RAYON_NUM_THREADS": str(self.threads)}
            with subprocess.Popen(command, stdout=subprocess.PIPE, env=env, text=True) as child:
                with self._lock:
                    self._children.add(child)
                try:
                    if self.stopping.is_set():
                        child.kill()
                    hook = self._progress(running, marker)
                    assert child.stdout is not None
                    for line in child.stdout:
                        try:
                            step = json.loads(line)
                            hook(str(step["stage"]), int(step["done"]))
                        except (ValueError, KeyError, TypeError, InterruptedError):
                            continue
                    code = child.wait()
                finally:
                    with self._lock:
                        self._children.discard(child)
            if code != 0 or not out.is_file():
                raise RuntimeError(f"the verification process ended with status {code}")
            result = json.loads(out.read_text())
            if "error" in result:
                log.error("verification of %s at %s failed to run: %s", election_id, head, result["error"])
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
