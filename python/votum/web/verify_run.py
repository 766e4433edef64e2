"""One verification run of the verification page, in a process of its own (issue 43, item 4).

`Verifications` starts `python -m votum.web.verify_run` for each run. The process lowers its own
priority to `nice` 19 before it does anything else, and its verifier uses `RAYON_NUM_THREADS`
threads (the parent sets 1): whenever ballot intake wants the CPU, the kernel gives it to intake,
and the verifier has what is left. Anyone may ask for a run, so what a run can take from intake is
bounded by the scheduler, not by how often it is asked. A process of its own also keeps the export
and the verifier off the server's interpreter lock.

It exports the record up to the head named (from the database) or reads a record file, verifies it,
and writes the page's report as JSON to `--out`. Progress goes to stdout as one JSON object per line
(`{"stage": ..., "done": ...}`), at most twice a second. It ends with its parent: Linux sends it
SIGKILL when the server process goes."""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import os
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

#: checks of documents a record has only from a later phase on: before then they are shown as
#: `pending` (with what the verifier said), and the verdict is over the other checks
PENDING = {
    "open": ("V-TALLY-", "V-DECRYPT-", "V-SPOILED-"),
    "closed": ("V-DECRYPT-", "V-SPOILED-"),
}
#: the same for a 2.1 election on the service (spec/80.11): its devices' records come at closing, its tally
#: and openings at publication, and the checks after the ballots' are not run before
PENDING_21 = {
    "open": tuple(f"V-EG21-{n:02d}" for n in range(8, 20)),
    "closed": tuple(f"V-EG21-{n:02d}" for n in range(9, 20)),
}

#: the niceness a run takes (the lowest priority)
NICE = 19


def _end_with_parent(parent: int) -> None:
    """SIGKILL when the parent exits (prctl PR_SET_PDEATHSIG), and exit now if it already has."""
    with contextlib.suppress(OSError, AttributeError):  # not Linux: the parent's stop() kills it
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG = 1
    if os.getppid() != parent:
        sys.exit(3)


def report_of(
    verified: Any, head_seq: int, head: str, phase: str, record_file: bool, spec: str = "1.0"
) -> dict[str, Any]:
    """The page's report from a `votum.verifier.Report`."""
    later = (PENDING_21 if spec == "2.1" else PENDING).get(phase, ())
    result: dict[str, Any] = {
        "head": {"seq": head_seq, "hash": head},
        "phase": phase,
        "passed": all(c.status == "pass" for c in verified.checks if not c.id.startswith(later)),
        "ballots": verified.ballots,
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
            for c in verified.checks
        ],
    }
    # what the results page compares with the published result (spec/50.2): the recomputed counts and the
    # digest naming the record checked
    values = verified.intermediates
    result["values"] = {k: values[k] for k in ("counts", "cast", "spoiled", "record_digest") if k in values}
    if record_file:
        result["values"] = values
        # a record file is named by its own chain head, which the verifier recomputed; an ElectionGuard 2.x
        # record, which has no chain, by its tally's digest
        named = values.get("head") or values.get("tally_sha256") or ""
        result["head"] = {"seq": -1, "hash": str(named)}
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m votum.web.verify_run")
    parser.add_argument("--parent", type=int, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--head-seq", type=int, required=True)
    parser.add_argument("--head", required=True)
    parser.add_argument("--phase", default="published")
    parser.add_argument("--record", type=Path)
    parser.add_argument("--database")
    parser.add_argument("--election")
    args = parser.parse_args(argv)
    os.nice(NICE - os.nice(0))
    _end_with_parent(args.parent)

    from votum.verifier import verify

    last = [0.0]

    def progress(stage: str, n: int) -> None:
        now = time.monotonic()
        if now - last[0] >= 0.5:
            last[0] = now
            print(json.dumps({"stage": stage, "done": n}), flush=True)

    spec = "1.0"
    with tempfile.TemporaryDirectory(prefix="votum-web-verify-") as private:
        if args.record is not None:
            path = args.record
        else:
            from votum.store import Store
            from votum.store.export import export_record, export_record_21

            store = Store(args.database)
            try:
                election = store.entry_named(args.election, "election.json")
                spec = json.loads(election.text()).get("spec", "1.0") if election is not None else "1.0"
                # up to the head the run is filed under, however far the board has moved since
                if spec == "2.1":
                    path = Path(private) / "record"
                    export_record_21(store, args.election, path, upto=args.head_seq)
                else:
                    path = Path(private) / "record.votum"
                    export_record(store, args.election, path, upto=args.head_seq)
            finally:
                store.close()
        try:
            verified = verify(path, progress)
            result = report_of(verified, args.head_seq, args.head, args.phase, args.record is not None, spec)
        except Exception as e:  # the page shows it
            result = {"head": {"seq": args.head_seq, "hash": args.head}, "error": str(e)}
    result["cpu"] = {"nice": os.nice(0), "threads": int(os.environ.get("RAYON_NUM_THREADS", "0"))}
    tmp = args.out.with_suffix(".tmp")
    tmp.write_text(json.dumps(result))
    os.replace(tmp, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
