"""Ballot intake with group commit (spec/80.5).

A request's ballots are parsed in the request's own thread, then the request queues up for its
election's two worker threads, a pipeline:

1. the checker takes everything waiting (up to `GROUP_BALLOTS` ballots) and checks every proof of
   the group in one batch verification (the native code spreads it over the cores). Checking a
   group together matters for devices that send one ballot per request: a batch's fixed costs
   (squaring chains, the powers of g and K) are paid once per group, not once per ballot;
2. the writer takes every checked group waiting and stores it in one transaction: one lock of the
   election's row, one commit, one fsync. It keeps the running tally it last committed in memory,
   so a transaction parses the stored tally only when another process changed it.

While the writer stores one group, the checker checks the next. Each request is still all or
nothing and is answered on its own: a bad proof, a duplicate or a fork fails its own request, never
a neighbour's.
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
    add_ciphertexts,
    add_codes,
    check_id,
    ciphertext_owners,
    code_links,
    existing_ballots,
    fingerprint,
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
    #: the fingerprint of each selection ciphertext (a replay repeats one, spec/80.5)
    fingerprints: list[bytes] = field(default_factory=list)
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
    """The queues and the two workers of one election (see the module's doc)."""

    def __init__(self, intake: Intake, election_id: str) -> None:
        self.intake = intake
        self.election_id = election_id
        self.cond = threading.Condition()
        #: parsed requests, to check
        self.queue: deque[_Job] = deque()
        #: checked groups, to store
        self.checked: deque[list[_Job]] = deque()
        self.checker: threading.Thread | None = None
        self.writer: threading.Thread | None = None

    def _start(self, role: str, target: Any) -> threading.Thread:
        thread = threading.Thread(target=target, name=f"votum-{role}-{self.election_id}", daemon=True)
        thread.start()
        return thread

    def put(self, job: _Job) -> None:
        with self.cond:
            self.queue.append(job)
            if self.checker is None:
                self.checker = self._start("check", self._check_loop)
            self.cond.notify_all()

    def _take(self, source: deque[Any], size: Any) -> list[Any] | None:
        """Waits (at most IDLE_SECONDS) for `source`; takes its first item and what follows it up
        to GROUP_BALLOTS ballots (`size` of an item). Called with the lock held. (Both workers wait
        on the one condition, so a wake-up may be for the other's queue: `wait_for` waits on.)"""
        if not self.cond.wait_for(lambda: bool(source), IDLE_SECONDS):
            return None
        items = [source.popleft()]
        total = size(items[0])
        while source and total + size(source[0]) <= GROUP_BALLOTS:
            total += size(source[0])
            items.append(source.popleft())
        return items

    def _check_loop(self) -> None:
        while True:
            with self.cond:
                jobs = self._take(self.queue, lambda job: len(job.ballots))
                if jobs is None:
                    self.checker = None
                    return
            try:
                self.intake.verify(self.election_id, jobs)
            except BaseException as e:  # every waiting request is answered, whatever happened
                for job in jobs:
                    job.error = job.error or e
            with self.cond:
                self.checked.append(jobs)
                if self.writer is None:
                    self.writer = self._start("write", self._write_loop)
                self.cond.notify_all()

    def _write_loop(self) -> None:
        while True:
            with self.cond:
                groups = self._take(self.checked, lambda group: sum(len(j.ballots) for j in group))
                if groups is None:
                    self.writer = None
                    return
            jobs = [job for group in groups for job in group]
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
        #: per election, the running tally its writer last committed: (its stored bytes, the object);
        #: taken out while a transaction uses it, put back once that transaction has committed
        self._tallies: dict[str, tuple[bytes, votum.EgTally]] = {}

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
        with self._lock:
            election = self._elections.get(election_id)
            if election is None:
                election = self._elections[election_id] = _Election(self, election_id)
        election.put(job)
        return job.future.result()

    def verify(self, election_id: str, jobs: list[_Job]) -> None:
        """Checks every ballot of every job in one batch; in each job, its first failure becomes
        the job's error (the batch names each bad ballot, so other jobs are not affected)."""
        objects = self.objects.get(election_id)
        ballots = [b for job in jobs for b in job.ballots]
        outcomes = iter(objects.verifier().verify_many([(b.text, b.state) for b in ballots]))
        for job in jobs:
            mine = [next(outcomes) for _ in job.ballots]
            job.error = next((o for o in mine if isinstance(o, Exception)), None)
            if job.error is None:
                for b, outcome in zip(job.ballots, mine, strict=True):
                    self._accept(b, outcome)

    @staticmethod
    def _accept(b: _Ballot, outcome: votum.EgVerifiedBallot) -> None:
        """Keeps what the verifier accepted for `b`: its canonical payload, state and codes."""
        b.verified = outcome
        b.state = _state_name(outcome.state)
        b.code, b.seed = outcome.code_hex, outcome.code_seed_hex
        b.payload = outcome.json.encode()
        b.digest = payload_digest(b.payload)
        b.fingerprints = [fingerprint(pad, data) for pad, data in outcome.ciphertexts_hex]

    def process(self, election_id: str, jobs: list[_Job]) -> None:
        """Stores the checked requests of a group (`verify` ran on them) in one transaction and
        answers each."""
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
        job: _Job, taken: dict[str, bytes], links: dict[str, CodeLink], owners: dict[bytes, str]
    ) -> tuple[list[_Ballot], dict[str, CodeLink]]:
        """The request's new ballots, and its changes to the code links (code -> the ballot chained
        from it and whose chain it is on), given what the database and the group's earlier requests
        hold (`owners`: ciphertext fingerprint -> the accepted ballot holding it)."""
        fresh: list[_Ballot] = []
        for b in job.ballots:
            if b.ballot_id in taken:
                if taken[b.ballot_id] != b.digest:
                    raise DuplicateBallot(
                        f"ballot {b.ballot_id!r} is already recorded with different content"
                    )
                continue
            fresh.append(b)
        mine: dict[bytes, str] = {}
        for b in fresh:
            for f in b.fingerprints:
                other = owners.get(f) or mine.get(f)
                if other is not None:
                    raise Conflict(
                        f"ballot {b.ballot_id!r} repeats a selection ciphertext of ballot {other!r}: "
                        "a replayed encryption is refused"
                    )
                mine[f] = b.ballot_id
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
        committed: tuple[bytes, votum.EgTally] | None = None
        with self.store.write(election_id) as tx:
            tx.require_phase("open")
            ids = list({b.ballot_id for job in jobs for b in job.ballots})
            have = existing_ballots(tx, ids)
            links = code_links(tx, list({b.seed for job in jobs for b in job.ballots}))
            owners = ciphertext_owners(
                tx,
                list(
                    {
                        f
                        for job in jobs
                        for b in job.ballots
                        if b.ballot_id not in have
                        for f in b.fingerprints
                    }
                ),
            )
            taken: dict[str, bytes] = {i: r.digest for i, r in have.items()}
            accepted: list[_Ballot] = []
            for job in jobs:
                try:
                    fresh, overlay = self._check(job, taken, links, owners)
                except VotumError as e:
                    job.error = e  # this request alone fails; the group's state is untouched
                    continue
                taken.update((b.ballot_id, b.digest) for b in fresh)
                links.update(overlay)
                owners.update((f, b.ballot_id) for b in fresh for f in b.fingerprints)
                accepted += fresh
                add_codes(tx, [b.code for b in fresh], job.owner)
            if accepted:
                mark_chained(tx, [(b.seed, b.ballot_id) for b in accepted])
                add_ciphertexts(tx, [(f, b.ballot_id) for b in accepted for f in b.fingerprints])
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
                    stored = tx.election.tally
                    assert stored is not None
                    # parse the stored tally only if it is not the one this writer last committed
                    # (another process changed it); taken out, so a failed transaction leaves none
                    kept = self._tallies.pop(election_id, None)
                    if kept is not None and kept[0] == stored:
                        tally = kept[1]
                    else:
                        tally = votum.EgTally.from_bytes(objects.manifest, stored)
                    tally.add_verified([_verified(b) for b in cast])
                    data = tally.to_bytes()
                    tx.set(tally=data)
                    committed = (data, tally)
                tx.set(
                    cast_count=tx.election.cast_count + len(cast),
                    spoiled_count=tx.election.spoiled_count + len(accepted) - len(cast),
                )
            if have:
                names = {f"submitted_ballots/submitted_ballot_{i}.json": i for i in have}
                for name, found in tx.named(list(names)).items():
                    r = have[names[name]]
                    receipts[r.ballot_id] = receipt(r.ballot_id, r.state, r.code, found)
        if committed is not None:
            self._tallies[election_id] = committed
