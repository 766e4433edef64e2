"""Ballot intake with group commit (spec/80.5).

Each request's ballots are checked in the request's own thread (one batch verification per request;
requests check in parallel, the native code releasing the GIL). Checked requests then queue up for
their election's one writer thread, which takes everything waiting (up to `GROUP_BALLOTS` ballots) and
stores it in one transaction: one lock of the election's row, one commit, one fsync for the group.
Each request is still all or nothing and is answered on its own: a duplicate or a fork fails its own
request, never a neighbour's.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

import votum
from votum.eg import TALLY_OBJECT_ID
from votum.errors import Conflict, DuplicateBallot, InvalidInput, VotumError, WrongPhase
from votum.service.v1.common import receipt
from votum.store import (
    CodeLink,
    Store,
    add_ballots,
    add_codes,
    check_id,
    code_links,
    existing_ballots,
    mark_chained,
    payload_digest,
)

#: the most ballots one group checks and commits (a larger request is a group of its own)
GROUP_BALLOTS = 1000
#: a worker with nothing to do for this long exits (the next submission starts another)
IDLE_SECONDS = 5.0


@dataclass
class _Ballot:
    ballot_id: str
    text: str
    state: str
    # filled once checked
    code: str = ""
    seed: str = ""
    payload: bytes = b""
    digest: bytes = b""
    #: what the verifier accepted, for the running tally
    verified: votum.EgVerifiedBallot | None = None


@dataclass
class _Job:
    ballots: list[_Ballot]
    #: the request's ballot ids in its order (repeats included), for the receipts
    order: list[str]
    future: Future[list[dict[str, Any]]] = field(default_factory=Future)
    error: BaseException | None = None
    #: the submitting device token (`auth.token_owner`): the codes it chains from must be on its chain
    owner: str | None = None


def _verified(b: _Ballot) -> votum.EgVerifiedBallot:
    """What the verifier accepted for `b`: set for every ballot of a job that passed `verify`."""
    assert b.verified is not None, f"ballot {b.ballot_id!r} reached the store unverified"
    return b.verified


def _prepare(items: list[tuple[dict[str, Any], str]]) -> _Job:
    """Ids checked and repeats within the request folded; raises for a malformed request."""
    ballots: list[_Ballot] = []
    seen: dict[str, str] = {}
    order = []
    for ballot, state in items:
        ballot_id = ballot.get("object_id")
        if not isinstance(ballot_id, str):
            raise InvalidInput("a ballot needs an object_id")
        check_id(ballot_id, "ballot id")
        # spoiled ballots and the tally share one namespace of decryption targets
        if ballot_id == TALLY_OBJECT_ID:
            raise InvalidInput(f"ballot id {TALLY_OBJECT_ID!r} is the tally's")
        text = json.dumps(ballot, separators=(",", ":"))
        order.append(ballot_id)
        if ballot_id in seen:
            if seen[ballot_id] != text:
                raise DuplicateBallot(
                    f"ballot {ballot_id!r} appears twice in this request with different content"
                )
            continue
        seen[ballot_id] = text
        ballots.append(_Ballot(ballot_id, text, state))
    return _Job(ballots, order)


def _state_name(code: Any) -> str:
    # electionguard 1.4 writes BallotBoxState as 1 (cast) or 2 (spoiled)
    return {1: "cast", 2: "spoiled", "CAST": "cast", "SPOILED": "spoiled"}[code]


class _Election:
    """The queue and worker of one election."""

    def __init__(self, intake: Intake, election_id: str) -> None:
        self.intake = intake
        self.election_id = election_id
        self.queue: deque[_Job] = deque()
        self.cond = threading.Condition()
        self.worker: threading.Thread | None = None

    def put(self, job: _Job) -> None:
        with self.cond:
            self.queue.append(job)
            if self.worker is None:
                self.worker = threading.Thread(
                    target=self._run, name=f"votum-intake-{self.election_id}", daemon=True
                )
                self.worker.start()
            self.cond.notify()

    def _take(self) -> list[_Job] | None:
        with self.cond:
            if not self.queue:
                self.cond.wait(IDLE_SECONDS)
            if not self.queue:
                self.worker = None
                return None
            jobs = [self.queue.popleft()]
            size = len(jobs[0].ballots)
            while self.queue and size + len(self.queue[0].ballots) <= GROUP_BALLOTS:
                job = self.queue.popleft()
                size += len(job.ballots)
                jobs.append(job)
            return jobs

    def _run(self) -> None:
        while True:
            jobs = self._take()
            if jobs is None:
                return
            try:
                self.intake.process(self.election_id, jobs)
            except BaseException as e:  # answer every waiting request, whatever happened
                for job in jobs:
                    if not job.future.done():
                        job.future.set_exception(e)


class Intake:
    """Group commit of ballot submissions, per election (see the module's doc)."""

    def __init__(self, store: Store, objects: Any) -> None:
        self.store = store
        self.objects = objects
        self._elections: dict[str, _Election] = {}
        self._lock = threading.Lock()

    def submit(
        self, election_id: str, items: list[tuple[dict[str, Any], str]], owner: str | None = None
    ) -> list[dict[str, Any]]:
        """Receipts for `items` ((CiphertextBallot, "cast" | "spoiled") pairs) sent by the device token
        `owner`, once they are durable; or the request's error, with nothing of it stored."""
        row = self.store.election(election_id)
        if row.phase != "open":
            raise WrongPhase(f"election {election_id!r} is in phase {row.phase!r}; ballots need open")
        job = _prepare(items)
        job.owner = owner
        # the proofs are checked here, in the request's own thread: requests check in parallel
        # (the native code releases the GIL), and only storing is grouped
        self.verify(election_id, job)
        if job.error is not None:
            raise job.error
        with self._lock:
            election = self._elections.get(election_id)
            if election is None:
                election = self._elections[election_id] = _Election(self, election_id)
        election.put(job)
        return job.future.result()

    def verify(self, election_id: str, job: _Job) -> None:
        """Checks every ballot of `job` in one batch; the first failure becomes the job's error."""
        objects = self.objects.get(election_id)
        outcomes = objects.verifier().verify_many([(b.text, b.state) for b in job.ballots])
        for b, outcome in zip(job.ballots, outcomes, strict=True):
            if isinstance(outcome, Exception):
                job.error = outcome
                return
            b.verified = outcome
            canonical = outcome.json
            doc = json.loads(canonical)
            b.state = _state_name(doc["state"])
            b.code, b.seed = doc["code"], doc["code_seed"]
            b.payload = canonical.encode()
            b.digest = payload_digest(b.payload)

    def process(self, election_id: str, jobs: list[_Job]) -> None:
        """Stores a group of checked requests in one transaction and answers each."""
        objects = self.objects.get(election_id)
        live = [job for job in jobs if job.error is None]
        receipts: dict[str, dict[str, Any]] = {}
        if live:
            try:
                self._store(election_id, objects, live, receipts)
            except VotumError as e:
                for job in live:
                    if job.error is None:
                        job.error = e
        for job in jobs:
            if job.error is not None:
                job.future.set_exception(job.error)
            else:
                job.future.set_result([receipts[b] for b in job.order])

    @staticmethod
    def _check(
        job: _Job, taken: dict[str, bytes], links: dict[str, CodeLink]
    ) -> tuple[list[_Ballot], dict[str, CodeLink]]:
        """The request's new ballots, and its changes to the code links (code -> the ballot chained
        from it and whose chain it is on), given what the database and the group's earlier requests
        hold."""
        fresh: list[_Ballot] = []
        for b in job.ballots:
            if b.ballot_id in taken:
                if taken[b.ballot_id] != b.digest:
                    raise DuplicateBallot(
                        f"ballot {b.ballot_id!r} is already recorded with different content"
                    )
                continue
            fresh.append(b)
        overlay: dict[str, CodeLink] = {b.code: CodeLink(None, job.owner) for b in fresh}
        for b in fresh:
            if b.seed in overlay:
                link = overlay[b.seed]
            elif b.seed in links:
                link = links[b.seed]
            else:
                raise Conflict(
                    f"ballot {b.ballot_id!r}: its code_seed is neither a registered device's hash "
                    "nor the code of an accepted ballot"
                )
            if not link.extendable_by(job.owner):
                raise Conflict(f"ballot {b.ballot_id!r}: its code_seed is on a chain of another device token")
            if link.chained_by is not None:
                raise Conflict(
                    f"ballot {b.ballot_id!r}: its code_seed was already chained from by "
                    f"{link.chained_by!r} (a fork)"
                )
            overlay[b.seed] = CodeLink(b.ballot_id, link.owner)
        return fresh, overlay

    def _store(
        self, election_id: str, objects: Any, jobs: list[_Job], receipts: dict[str, dict[str, Any]]
    ) -> None:
        with self.store.write(election_id) as tx:
            tx.require_phase("open")
            ids = list({b.ballot_id for job in jobs for b in job.ballots})
            have = existing_ballots(tx, ids)
            links = code_links(tx, list({b.seed for job in jobs for b in job.ballots}))
            taken: dict[str, bytes] = {i: r.digest for i, r in have.items()}
            accepted: list[_Ballot] = []
            for job in jobs:
                try:
                    fresh, overlay = self._check(job, taken, links)
                except VotumError as e:
                    job.error = e  # this request alone fails; the group's state is untouched
                    continue
                taken.update((b.ballot_id, b.digest) for b in fresh)
                links.update(overlay)
                accepted += fresh
                add_codes(tx, [b.code for b in fresh], job.owner)
            if accepted:
                mark_chained(tx, [(b.seed, b.ballot_id) for b in accepted])
                rows = []
                for b in accepted:
                    entry = tx.append(
                        "submitted_ballot",
                        f"submitted_ballots/submitted_ballot_{b.ballot_id}.json",
                        b.payload,
                        b.digest,
                    )
                    rows.append(
                        {
                            "ballot_id": b.ballot_id,
                            "state": b.state,
                            "code": b.code,
                            "seq": entry.seq,
                            "digest": entry.digest,
                        }
                    )
                    receipts[b.ballot_id] = receipt(b.ballot_id, b.state, b.code, entry)
                add_ballots(tx, rows)
                cast = [b for b in accepted if b.state == "cast"]
                if cast:
                    assert tx.election.tally is not None
                    tally = votum.EgTally.from_bytes(objects.manifest, tx.election.tally)
                    tally.add_verified([_verified(b) for b in cast])
                    tx.set(tally=tally.to_bytes())
                tx.set(
                    cast_count=tx.election.cast_count + len(cast),
                    spoiled_count=tx.election.spoiled_count + len(accepted) - len(cast),
                )
            if have:
                names = {f"submitted_ballots/submitted_ballot_{i}.json": i for i in have}
                for name, found in tx.named(list(names)).items():
                    r = have[names[name]]
                    receipts[r.ballot_id] = receipt(r.ballot_id, r.state, r.code, found)
