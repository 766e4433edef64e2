"""A whole ElectionGuard 2.x election: the Rust core's guardians, encryption device, tally and decryption
write an egk-ec record (spec/65.7–65.8, 2.0's cryptography) or a record of ElectionGuard 2.1 itself
(spec/66), which the independent verifier then checks from disk."""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from votum import _native
from votum.errors import InvalidInput
from votum.fingerprints import grouped
from votum.steps import Step, total_seconds
from votum.verifier import VerificationReport, verify

#: the groups a 2.x election runs on (spec/65.1); `eg2-toy`, the specification's toy parameters (spec/66.1),
#: is for tests only: its record passes the verifier only as a test's (`allow_toy_parameters`)
GROUPS = ("p256", "eg2-4096", "eg2-3072", "eg2-toy")
#: the groups written in the 2.1 record only
ONLY_21 = ("eg2-3072", "eg2-toy")
#: the records a 2.x election writes: egk-ec's form (spec/65.3) or 2.1 itself (spec/66.3)
RECORDS = ("egk-ec", "2.1")
#: contest data in a 2.1 election (spec/66.11)
CONTEST_DATA = ("manifest", "encrypted", "decrypted")


# -- what a 2.1 guardian signs about what it posts to the service's board (spec/80.11): votum.eg21_signing


def he_fingerprint(guardians_doc: str) -> str:
    """How a 2.1 election's H_E is shown for comparing by eye (the official's `open` and every guardian's
    tool print it): its first 128 bits in groups of four hex digits."""
    return grouped(str(json.loads(guardians_doc)["H_E"]).lower()[:32])


def token_weight(weights: dict[str, Any], token_name: str | None) -> int:
    """The weight every ballot of the device token named `token_name` carries in a 2.1 election on the
    service (spec/80.11): election.json's `weights` (set when the election was created, public before any
    ballot), 1 for a token it does not list or a plain `device` token. The service enforces it; the devices
    read it."""
    return int(weights.get(token_name, 1)) if token_name is not None else 1


#: the 2.1 record's files written whole from one board entry each (spec/80.11)
EG21_DOCUMENTS = ("parameters.json", "manifest.json", "guardians.json", "devices.json", "tally.json")


class Eg21RecordWriter:
    """A 2.1 election's record written from its board (spec/80.11), one entry at a time in board order (a
    reader of the whole board hands each entry to `take`): the documents, the ballots as `ballots.jsonl` and
    the opened challenged ballots as `challenged.jsonl`, each line the entry's payload as chained.

    A printed pre-encrypted ballot (`eg21_printed`) is in the record once: as its recording
    (`eg21_recorded`, cast) when it was recorded, else as printed (uncast, opened by the guardians). Printed
    lines wait in a spool file until the end, so memory holds only their ids and offsets."""

    def __init__(self, out: Path) -> None:
        out.mkdir(parents=True, exist_ok=True)
        self.out = out
        self._ballots = (out / "ballots.jsonl").open("wb")
        self._challenged: Any = None
        self._spool: Any = None
        #: printed ballot id -> (offset, length) in the spool, in board (print) order
        self._printed: dict[str, tuple[int, int]] = {}
        self._recorded: set[str] = set()

    def take(self, kind: str, name: str, payload: bytes) -> None:
        if kind == "eg21_ballot":
            self._ballots.write(payload + b"\n")
        elif kind == "eg21_printed":
            if self._spool is None:
                # closed in `close`, like the record's own files
                self._spool = tempfile.TemporaryFile(dir=self.out)  # noqa: SIM115
            self._printed[_entry_id(name)] = (self._spool.tell(), len(payload))
            self._spool.write(payload)
        elif kind == "eg21_recorded":
            self._ballots.write(payload + b"\n")
            self._recorded.add(_entry_id(name))
        elif kind == "eg21_challenged":
            if self._challenged is None:
                self._challenged = (self.out / "challenged.jsonl").open("wb")
            self._challenged.write(payload + b"\n")
        elif name in EG21_DOCUMENTS:
            (self.out / name).write_bytes(payload)

    def close(self) -> None:
        if self._spool is not None:
            for ballot_id, (offset, length) in self._printed.items():
                if ballot_id not in self._recorded:
                    self._spool.seek(offset)
                    self._ballots.write(self._spool.read(length) + b"\n")
            self._spool.close()
        self._ballots.close()
        if self._challenged is None and (self.out / "tally.json").exists():
            # published with no challenged ballot: the record holds the file, empty
            self._challenged = (self.out / "challenged.jsonl").open("wb")
        if self._challenged is not None:
            self._challenged.close()


def _entry_id(name: str) -> str:
    """The ballot id of a board name `eg21/<kind>/<id>.json`."""
    return name.rsplit("/", 1)[-1].removesuffix(".json")


@dataclass(frozen=True)
class Eg2Config:
    ballots: int = 1000
    guardians: int = 5
    quorum: int = 3
    missing: int = 2
    #: share of ballots challenged (each decrypted by the guardians and published)
    challenge_rate: float = 0.05
    seed: int = 2026
    group: str = "p256"
    out: Path = Path("election-record-2.1")
    #: an egk-ec manifest (JSON); the embedded one when None
    manifest: Path | None = None
    device: str = "votum-device"
    #: each guardian in its own process over the channels (spec/65.9), the coordinator holding no secret
    processes: bool = False
    #: ElectionGuard 2.1's own record (spec/66.3), or egk-ec's (spec/65.3: 2.0's cryptography)
    record: str = "2.1"
    #: with the 2.1 record: simple chaining of the confirmation codes (spec/66.5), no chaining otherwise
    chaining: bool = False
    #: with the 2.1 record: ballots printed in advance besides `ballots` (spec/66.10); the share
    #: `challenge_rate` of them left uncast and opened, the others marked by a voter and recorded
    pre_encrypted: int = 0
    #: with the 2.1 record: contest data (spec/66.11) only where the manifest asks for it ("manifest"), in
    #: every contest ("encrypted"), or in every contest and decrypted on every cast ballot ("decrypted")
    contest_data: str = "manifest"


@dataclass
class Eg2Result:
    config: Eg2Config
    steps: list[Step] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    cast: int = 0
    challenged: int = 0
    record: Path = Path()
    record_bytes: int = 0
    verification: VerificationReport | None = None

    @property
    def total_seconds(self) -> float:
        return total_seconds(self.steps)


def _check(config: Eg2Config) -> None:
    if config.group not in GROUPS:
        raise InvalidInput(f"group {config.group!r}: a 2.x election runs on {' or '.join(GROUPS)}")
    if config.ballots < 1:
        raise InvalidInput("an election needs at least one ballot")
    if not 1 <= config.quorum <= config.guardians:
        raise InvalidInput(f"quorum {config.quorum} of {config.guardians} guardians")
    if not 0 <= config.missing <= config.guardians - config.quorum:
        raise InvalidInput(
            f"{config.missing} guardians missing leaves fewer than the quorum of {config.quorum} "
            f"of {config.guardians}"
        )
    if config.record not in RECORDS:
        raise InvalidInput(f"record {config.record!r}: a 2.x election writes {' or '.join(RECORDS)}")
    if config.group in ONLY_21 and config.record != "2.1":
        raise InvalidInput(
            f"{config.group}, 2.1's reduced or toy parameters, is written in the 2.1 record only (spec/66.1)"
        )
    if config.pre_encrypted and config.record != "2.1":
        raise InvalidInput("pre-encrypted ballots are written in the 2.1 record only (spec/66.10)")
    if config.contest_data not in CONTEST_DATA:
        raise InvalidInput(
            f"contest data {config.contest_data!r}: one of {', '.join(CONTEST_DATA)} (spec/66.11)"
        )
    if config.contest_data != "manifest" and config.record != "2.1":
        raise InvalidInput("contest data is asked for in the 2.1 record only (spec/66.11)")
    if config.pre_encrypted < 0:
        raise InvalidInput("a count of pre-encrypted ballots is not negative")
    if not 0.0 <= config.challenge_rate < 1.0:
        raise InvalidInput("the challenge rate is a share of the ballots, below 1")


def run_eg2_election(config: Eg2Config) -> Eg2Result:
    """Runs the election, writes its record to `config.out` (an earlier record there is replaced) and
    verifies it with the independent verifier."""
    _check(config)
    manifest = None if config.manifest is None else config.manifest.read_bytes()
    if config.out.exists():
        shutil.rmtree(config.out)
    present = list(range(1, config.guardians - config.missing + 1))
    every = 0 if config.challenge_rate == 0 else max(1, round(1 / config.challenge_rate))
    if config.processes:
        summary = _with_guardian_processes(config, manifest, every)
    else:
        summary = _native.eg2_election(
            str(config.out),
            config.group,
            manifest,
            config.ballots,
            config.guardians,
            config.quorum,
            present,
            every,
            config.seed,
            config.device,
            record=config.record,
            simple_chaining=config.chaining,
            pre_encrypted=config.pre_encrypted,
            contest_data=config.contest_data,
        )
    result = Eg2Result(config=config, record=config.out)
    items = {
        "key ceremony": config.guardians,
        "encryption": config.ballots,
        "pre-encrypted ballots": config.pre_encrypted,
    }
    for name, seconds in summary["seconds"]:
        result.steps.append(Step(name, seconds, items.get(name, 1)))
    result.cast = summary["cast"]
    result.challenged = summary["challenged"]
    result.counts = dict(summary["counts"])
    result.record_bytes = sum(f.stat().st_size for f in config.out.rglob("*") if f.is_file())
    start = time.perf_counter()
    # a toy-parameter record is a test's (spec/66.1): checked as one, its V-EG21-01 warning says so
    result.verification = verify(config.out, allow_toy_parameters=config.group == "eg2-toy")
    result.steps.append(Step("verification", time.perf_counter() - start, result.cast + result.challenged))
    return result


def _with_guardian_processes(config: Eg2Config, manifest: bytes | None, every: int) -> dict[str, Any]:
    """The election with each guardian a process of its own on loopback (spec/65.9, 66.12); their node
    identities are made for this run in a scratch directory and removed after it."""
    import asyncio
    import tempfile

    from votum.parties.eg2 import Eg2Plan, run_local

    plan = Eg2Plan(
        group=config.group,
        manifest=manifest,
        quorum=config.quorum,
        out=config.out,
        ballots=config.ballots,
        challenge_every=every,
        seed=config.seed,
        decrypting=config.guardians - config.missing,
        version=config.record,
        chaining=config.chaining,
        pre_encrypted=config.pre_encrypted,
        contest_data=config.contest_data,
    )
    with tempfile.TemporaryDirectory(prefix="votum-eg2-guardians-") as homes:
        run = asyncio.run(run_local(config.guardians, plan, Path(homes)))
    summary = dict(run.summary)
    # the guardians' phases (seconds each) before the coordinator's own steps
    own = [(name, s) for name, s in summary["seconds"] if name not in ("key ceremony", "decryption")]
    guardians = [(f"guardians: {name}", s) for name, s in run.phases.items()]
    summary["seconds"] = guardians + own
    return summary
