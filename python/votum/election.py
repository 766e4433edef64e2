"""A whole ElectionGuard 1.0 election on embedded defaults: the README's main job.

Key ceremony (n guardians, quorum k, sealed backups checked against commitments), encryption
of seeded random ballots on one device, the ballot box (every ballot verified once, some
spoiled as Benaloh challenges), streaming tally, decryption with some guardians missing
(compensated from their backups), decryption of every spoiled ballot, the election record in
electionguard 1.4.0's layout, and a second pass that re-reads the record from disk and checks
it (ballots, tally and spoiled-ballot decryptions), as a verifier would.

Every step reports progress through a hook and is timed; the caller prints the table.
"""

from __future__ import annotations

import json
import random
import resource
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from votum._native import (
    EgBallotBox,
    EgDecryptionTarget,
    EgDecryptor,
    EgEncryptionDevice,
    EgManifest,
    EgShares,
    Group,
    eg_ballot_check_params,
    eg_constants_json,
    eg_hash_elems,
    eg_to_hex,
    lagrange_coefficient,
)
from votum.eg import (
    candidate_document,
    contest_document,
    encrypted_tally_json,
    manifest_document,
    plaintext_ballot,
    random_choices,
    read_manifest_file,
    run_ceremony,
)
from votum.errors import InvalidInput, VerificationFailed
from votum.record import ArchiveSink, DirectorySink, path_of
from votum.steps import ProgressHook, Step, no_progress, timed, total_seconds
from votum.verifier import VerificationReport, verify

EG = Group("eg-4096")

#: Ballots checked together by the ballot box (one batch verification each, spec/62.4).
BATCH = 256

#: The most ballots one cluster task takes (the verifier's batch, spec/98.3).
MAX_CHUNK = 256

#: Contest shapes of the synthetic manifest, cycled: (number of candidates, votes allowed).
SHAPES = [(4, 1), (5, 2), (2, 1), (3, 1), (6, 3)]


def synthetic_manifest(contests: int) -> dict[str, Any]:
    """An ElectionGuard 1.4 manifest with `contests` contests of varied n-of-m shapes, one style."""
    if contests < 1:
        raise InvalidInput("an election needs at least one contest")
    return manifest_of_shapes([SHAPES[i % len(SHAPES)] for i in range(contests)])


def manifest_of_shapes(shapes: list[tuple[int, int]]) -> dict[str, Any]:
    """An ElectionGuard 1.4 manifest with one contest per `(candidates, votes allowed)`, one style."""
    candidates: list[dict[str, Any]] = []
    contests = []
    for i, (n, k) in enumerate(shapes):
        cid = f"contest-{i + 1}"
        names = [f"{cid}-candidate-{j + 1}" for j in range(n)]
        candidates.extend(candidate_document(c) for c in names)
        contests.append(
            contest_document(i, [(f"{cid}-selection-{j + 1}", c) for j, c in enumerate(names)], k)
        )
    return manifest_document(contests, candidates, [])


@dataclass(frozen=True)
class ElectionConfig:
    ballots: int = 1000
    contests: int = 3
    guardians: int = 5
    quorum: int = 3
    missing: int = 2
    spoil_rate: float = 0.05
    seed: int = 2026
    out: Path = Path("election-record")
    manifest: Path | None = None
    #: "eg14": the ElectionGuard 1.4 directory at `out`; "votum": votum's archive file at `out` (spec/70)
    format: str = "eg14"
    #: a Dask scheduler for encryption and ballot checks (spec/98): local:N, tcp://…, tls://…
    scheduler: str | None = None
    #: ballots per cluster task, and seconds to wait for one
    chunk: int = 64
    task_timeout: float = 600.0
    #: (CA, certificate, key) for a tls:// scheduler
    tls: tuple[str, str, str] | None = None
    #: accept a tcp:// scheduler beyond this machine (`votum.cluster.check_address`)
    plaintext: bool = False

    def check(self) -> None:
        if self.ballots < 1:
            raise InvalidInput("ballots must be at least 1")
        if not 1 <= self.quorum <= self.guardians:
            raise InvalidInput(f"quorum must be in 1..{self.guardians} (the number of guardians)")
        if not 0 <= self.missing <= self.guardians - self.quorum:
            raise InvalidInput(
                f"at most {self.guardians - self.quorum} guardians may be missing "
                f"({self.guardians} guardians, quorum {self.quorum})"
            )
        if not 0.0 <= self.spoil_rate < 1.0:
            raise InvalidInput("spoil rate must be in [0, 1)")
        if self.format not in ("eg14", "votum"):
            raise InvalidInput(f"record format must be 'eg14' or 'votum', not {self.format!r}")
        if not 1 <= self.chunk <= MAX_CHUNK:
            raise InvalidInput(f"chunk must be 1 to {MAX_CHUNK} ballots")
        if self.scheduler is not None:
            from votum.cluster import check_address

            check_address(self.scheduler, plaintext=self.plaintext)


@dataclass
class ElectionResult:
    config: ElectionConfig
    steps: list[Step] = field(default_factory=list)
    expected_counts: dict[str, int] = field(default_factory=dict)
    decrypted_counts: dict[str, int] = field(default_factory=dict)
    cast: int = 0
    spoiled: int = 0
    record_bytes: int = 0
    record: Path = Path()
    #: the process's peak resident memory when the election finished (MiB)
    peak_rss_mib: float = 0.0
    #: the independent verifier's report on the record written (every check passed)
    verification: VerificationReport | None = None

    @property
    def total_seconds(self) -> float:
        return total_seconds(self.steps)


def _text(obj: Any) -> str:
    return obj if isinstance(obj, str) else json.dumps(obj)


def _plaintext(manifest: dict[str, Any], ballot_id: str, rng: random.Random) -> tuple[str, list[str]]:
    style, chosen = random_choices(manifest, rng)
    return plaintext_ballot(manifest, ballot_id, set(chosen), style), chosen


def run_election(
    config: ElectionConfig,
    progress: ProgressHook | None = None,
    *,
    client: Any = None,
    announce: Callable[[str], None] | None = None,
) -> ElectionResult:
    """Runs the election and writes its record under `config.out`; raises on any failed check. With
    `config.scheduler` or a `distributed.Client` as `client`, ballots are encrypted and checked on that
    cluster and the record verified there (spec/98); `announce` is told the dashboard's address."""
    config.check()
    if config.scheduler is None and client is None:
        return _run_election(config, progress, None)
    from votum.cluster import using

    with using(config.scheduler, client, tls=config.tls, announce=announce, plaintext=config.plaintext) as c:
        return _run_election(config, progress, c)


def _run_election(config: ElectionConfig, progress: ProgressHook | None, client: Any) -> ElectionResult:
    hook = progress or no_progress
    rng = random.Random(config.seed)
    result = ElectionResult(config=config, record=config.out)
    out = config.out
    size = 0

    if config.manifest is not None:
        manifest = read_manifest_file(config.manifest)
    else:
        manifest = synthetic_manifest(config.contests)
    em = EgManifest.from_json(json.dumps(manifest))
    # the output is opened only once the configuration and the manifest are known to be good
    sink: DirectorySink | ArchiveSink = ArchiveSink(out) if config.format == "votum" else DirectorySink(out)
    try:
        n, k = config.guardians, config.quorum

        with timed(
            result.steps, f"key ceremony ({n} guardians, quorum {k}, {n * (n - 1)} backups checked)", n
        ):
            # secrets and nonces come from the OS; the seed only chooses the votes
            ceremony = run_ceremony(em, n, k, progress=lambda done, total: hook("key ceremony", done, total))
            guardians, records, context = ceremony.guardians, ceremony.records, ceremony.context
        k_pub, q_ext = context.elgamal_public_key, context.extended_base_hash

        with timed(result.steps, "write manifest, context, guardians", 1):
            size += sink.add("manifest", path_of("manifest"), _text(manifest))
            size += sink.add("context", path_of("context"), context.to_json())
            size += sink.add("constants", path_of("constants"), eg_constants_json())
            for g, rec in zip(guardians, records, strict=True):
                size += sink.add("guardian", path_of("guardian", g.guardian_id), rec)
            device_doc: dict[str, Any] = {
                "device_id": 1,
                "session_id": 1,
                "launch_code": 1,
                "location": "votum-election",
            }
            size += sink.add("device", path_of("device", "1"), _text(device_doc))

        device = EgEncryptionDevice(em, k_pub, q_ext)
        box = EgBallotBox(em, k_pub, q_ext)
        cluster = None
        if client is not None:
            from votum.cluster.election import ClusterBallots

            params = eg_ballot_check_params(em, k_pub, q_ext)
            cluster = ClusterBallots(client, params, chunk=config.chunk, task_timeout=config.task_timeout)
        expected: dict[str, int] = {
            s["object_id"]: 0 for c in manifest["contests"] for s in c["ballot_selections"]
        }
        # The record is written as ballots are accepted: a batch is planned, encrypted on all cores,
        # cast or spoiled (every proof verified once), written and dropped, so memory stays flat as
        # the election grows. Only spoiled ballots, to be decrypted later, are kept.
        spent = {"encrypt": 0.0, "box": 0.0, "write": 0.0}
        spoiled_ballots: list[tuple[str, str]] = []
        # the device's chain of ballot codes starts at the device's hash, as the reference's devices do
        code = eg_hash_elems(
            device_doc["device_id"],
            device_doc["session_id"],
            device_doc["launch_code"],
            device_doc["location"],
        )

        def plan(start: int) -> tuple[list[tuple[str, str, list[str], str]], list[tuple[str, int, str]]]:
            # the votes of one batch, drawn in order from the seeded generator, and the device's items
            plans = []
            for i in range(start, min(start + BATCH, config.ballots)):
                ballot_id = f"ballot-{i:07d}"
                text, chosen = _plaintext(manifest, ballot_id, rng)
                state = "spoiled" if rng.random() < config.spoil_rate else "cast"
                plans.append((ballot_id, text, chosen, state))
            stamps = range(1_795_000_000 + start, 1_795_000_000 + start + len(plans))
            return plans, [(text, ts, state) for ts, (_b, text, _c, state) in zip(stamps, plans, strict=True)]

        plans, items = plan(0)
        # the bar shows from the first ballot on, not after the first batch (issue 42, C.1)
        hook("ballots (encrypt, cast, write)", 0, config.ballots)
        # on a cluster the next batch is being encrypted while this one is chained, checked and written
        sent = cluster.start(items) if cluster is not None else None
        for start in range(0, config.ballots, BATCH):
            t0 = time.perf_counter()
            after = None
            if cluster is not None and sent is not None:
                if start + BATCH < config.ballots:
                    next_plans, next_items = plan(start + BATCH)
                    after = (next_plans, next_items, cluster.start(next_items))
                ballots, verdicts, code = cluster.finish(sent, items, code)
            else:
                ballots, code = device.encrypt_many(items, code)
            encrypted: list[tuple[str, str]] = []
            for ballot, (_t, _ts, state) in zip(ballots, items, strict=True):
                if isinstance(ballot, Exception):
                    raise ballot
                encrypted.append((ballot, state))
            t1 = time.perf_counter()
            if cluster is not None:
                outcomes = box.submit_judged(encrypted, verdicts)
            else:
                outcomes = box.submit_many(encrypted)
            for outcome in outcomes:
                if isinstance(outcome, Exception):
                    raise outcome
            t2 = time.perf_counter()
            for (ballot_id, _plain, chosen, state), (ballot, _s) in zip(plans, encrypted, strict=True):
                size += sink.add("submitted_ballot", path_of("submitted_ballot", ballot_id), ballot)
                if state == "cast":
                    for s in chosen:
                        expected[s] += 1
                else:
                    spoiled_ballots.append((ballot_id, ballot))
            t3 = time.perf_counter()
            spent["encrypt"] += t1 - t0
            spent["box"] += t2 - t1
            spent["write"] += t3 - t2
            hook("ballots (encrypt, cast, write)", start + len(plans), config.ballots)
            if cluster is not None and after is not None:
                plans, items, sent = after
            elif start + BATCH < config.ballots:
                plans, items = plan(start + BATCH)
        result.steps += [
            Step("encrypt ballots (all proofs)", spent["encrypt"], config.ballots),
            Step("cast and spoil, every proof verified once (batches)", spent["box"], config.ballots),
            Step("write the ballots (electionguard 1.4 layout)", spent["write"], config.ballots),
        ]
        result.cast, result.spoiled = box.counts

        present = guardians[: n - config.missing]
        absent = guardians[n - config.missing :]

        absent_records = [m.public_record() for m in absent]

        def shares_for(target: EgDecryptionTarget) -> list[EgShares]:
            # each present guardian's whole part: its own shares and those standing in for the absent
            return [s for g in present for s in g.all_shares(target, q_ext, absent_records)]

        decryptor = EgDecryptor(records, k, q_ext, max_count=max(config.ballots, 1))
        with timed(
            result.steps, f"decrypt tally ({len(present)} present, {len(absent)} missing, proofs checked)", 1
        ):
            tally_target = EgDecryptionTarget.from_ballot_box(box, em)
            plaintext = decryptor.decrypt(tally_target, shares_for(tally_target))
            hook("decrypt tally", 1, 1)
        result.expected_counts = expected
        result.decrypted_counts = plaintext.counts
        if plaintext.counts != expected:
            raise VerificationFailed("the decrypted tally differs from the plaintext votes")

        spoiled_plain = []
        with timed(result.steps, "decrypt spoiled ballots", len(spoiled_ballots)):
            for i, (_ballot_id, ballot) in enumerate(spoiled_ballots):
                target = EgDecryptionTarget.from_ballot_json(ballot)
                spoiled_plain.append(
                    (target.object_id, decryptor.decrypt(target, shares_for(target)).to_json())
                )
                hook("decrypt spoiled", i + 1, len(spoiled_ballots))

        with timed(result.steps, "write tallies and spoiled-ballot decryptions", 1):
            for ballot_id, text in spoiled_plain:
                size += sink.add("spoiled_ballot", path_of("spoiled_ballot", ballot_id), text)
            encrypted_tally = _text(encrypted_tally_json(manifest, em, box.encrypted_tally()))
            size += sink.add("encrypted_tally", path_of("encrypted_tally"), encrypted_tally)
            size += sink.add("tally", path_of("tally"), plaintext.to_json())
            orders = [g.sequence_order for g in present]
            coefficients = {
                g.guardian_id: eg_to_hex(lagrange_coefficient(EG, g.sequence_order, orders).to_int())
                for g in present
            }
            size += sink.add("coefficients", path_of("coefficients"), _text({"coefficients": coefficients}))
            sink.close()
    except BaseException:
        # a failure or Ctrl-C leaves no partial record under `out` (issue 42, C.13)
        sink.abort()
        raise
    result.record_bytes = out.stat().st_size if config.format == "votum" else size

    with timed(result.steps, "verify the record from disk", config.ballots):
        result.verification = checked_record(
            out,
            progress=hook,
            total=config.ballots,
            client=client,
            chunk=config.chunk,
            task_timeout=config.task_timeout,
        )
    result.peak_rss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return result


def verify_record(root: Path, progress: ProgressHook | None = None, **cluster: Any) -> dict[str, int]:
    """Checks an election record, either form (the ElectionGuard 1.4 directory or votum's archive), with
    the independent verifier (`votum.verifier.verify`: every check of spec/50, streaming; `cluster` its
    cluster arguments). Returns the verified counts by selection id; raises
    (`VerificationReport.require`) when any check does not pass."""
    report = checked_record(root, progress, **cluster)
    counts: dict[str, int] = report.intermediates["counts"]
    return {key.split("/", 1)[1]: count for key, count in counts.items()}


def checked_record(
    root: Path, progress: ProgressHook | None = None, total: int = 0, **cluster: Any
) -> VerificationReport:
    """As `verify_record`, returning the whole report (every check passed). `total`: the ballots the
    record holds, when the caller knows (0: unknown, and the bar counts without one)."""
    hook = progress or no_progress
    hook("verify ballots", 0, total)

    def tell(stage: str, n: int) -> None:
        if stage == "ballots":
            hook("verify ballots", n, max(total, n) if total else 0)

    report = verify(root, tell, **cluster)
    report.require()
    return report
