"""The election official's steps against the service (spec/80.10): create an election from a manifest,
open it once the key ceremony is complete, close it, and publish once the guardians' shares are in;
each step waits (boundedly, with progress) for what it needs, then reports the board head."""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import votum
from votum.client import Client
from votum.client.election import Progress, quiet, write_eg21_record
from votum.client.waiting import Waiter
from votum.eg import read_manifest_file
from votum.eg2 import he_fingerprint
from votum.errors import Conflict, InvalidInput
from votum.fingerprints import key_fingerprint
from votum.results import candidate_names, contest_label


def read_manifest(path: Path, spec: str = "1.0", group: str = "eg2-4096") -> dict[str, Any]:
    """A manifest file, checked before it is sent: an ElectionGuard 1.4 manifest (references, limits,
    styles), or for a 2.1 election a 2.x manifest with a ballot style."""
    doc = read_manifest_file(path)
    if spec == "2.1":
        votum.Eg21Ceremony(group, json.dumps(doc, separators=(",", ":")).encode(), 1, 1)
    else:
        votum.EgManifest.from_json(json.dumps(doc))
    return doc


@dataclass
class Official:
    client: Client
    election_id: str
    waiter: Waiter
    progress: Progress = quiet

    @property
    def base(self) -> str:
        return f"/v1/elections/{self.election_id}"

    def create(
        self,
        manifest: dict[str, Any],
        guardians: int,
        quorum: int,
        spec: str = "1.0",
        group: str | None = None,
        weights: dict[str, int] | None = None,
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "election_id": self.election_id,
            "manifest": manifest,
            "number_of_guardians": guardians,
            "quorum": quorum,
        }
        if spec != "1.0":
            body.update(spec=spec, group=group or "eg2-4096")
        if weights:
            body["weights"] = weights
        return dict(self.client.post("/v1/elections", body))

    def status(self) -> dict[str, Any]:
        return dict(self.client.get(self.base))

    def awaited(self) -> dict[str, Any]:
        return dict(self.client.get(f"{self.base}/awaited"))

    def _wait(self, what: str, ready: Any) -> None:
        def look() -> bool:
            return bool(ready(self.awaited()))

        self.waiter.until(what, look)

    def open(self, wait: bool) -> dict[str, Any]:
        """Opens once every guardian's record is posted and every backup is settled (in a 2.1 election:
        once every guardian has posted the guardians' document it computed, spec/80.11)."""
        if wait and self.status().get("spec") == "2.1":

            def ready_21(a: dict[str, Any]) -> bool:
                c = a["eg21"]
                self.progress("key records posted", c["keys"], a["number_of_guardians"])
                self.progress("shares dealt", c["shares"], c["shares_total"])
                self.progress("guardians' documents posted", c["joint"], a["number_of_guardians"])
                if c["complaints"]:
                    raise Conflict("a guardian complained of a share: the ceremony cannot finish")
                return bool(a["phase"] != "ceremony") or c["joint"] == a["number_of_guardians"]

            self._wait("the guardians' key records, shares and documents", ready_21)
        elif wait:

            def ready(a: dict[str, Any]) -> bool:
                self.progress("guardian records posted", len(a["guardians"]), a["number_of_guardians"])
                self.progress("backups checked", a["backups_settled"], a["backups_total"])
                return bool(a["phase"] != "ceremony") or (
                    len(a["guardians"]) == a["number_of_guardians"]
                    and a["backups_settled"] == a["backups_total"]
                )

            self._wait("the guardians' records and backups", ready)
        return dict(self.client.post(f"{self.base}/open", {}))

    def joint_fingerprint(self) -> str:
        if self.status().get("spec") == "2.1":
            return he_fingerprint(self.client.get(f"{self.base}/board/by-name/guardians.json")["payload"])
        context = votum.EgContext.from_json(
            self.client.get(f"{self.base}/board/by-name/context.json")["payload"]
        )
        return key_fingerprint(context.elgamal_public_key.to_int())

    def close(self) -> dict[str, Any]:
        return dict(self.client.post(f"{self.base}/close", {}))

    def start_round(self, available: list[int]) -> dict[str, Any]:
        """A 2.1 election's decryption round with U = `available` (spec/80.11)."""
        return dict(self.client.post(f"{self.base}/eg21/rounds", {"available": available}))

    def publish(self, present: int | None, wait: bool, available: list[int] | None = None) -> dict[str, Any]:
        """Publishes once `present` guardians (all of them by default) have posted their shares. In a 2.1
        election: starts a decryption round with U = `available` (all guardians by default) unless the
        current round is that U, and publishes once every guardian of it has answered."""
        status = self.status()
        if status.get("spec") == "2.1":
            u = sorted(available or range(1, int(status["number_of_guardians"]) + 1))
            current = self.client.get(f"{self.base}/eg21/rounds")
            if not current or sorted(current["available"]) != u:
                current = self.start_round(u)
            r = current["round"]

            def answered() -> bool:
                now = self.client.get(f"{self.base}/eg21/rounds")
                if not now or now["round"] != r:
                    raise Conflict(f"another decryption round was started after round {r}")
                self.progress("guardians' answers posted", len(now["answer"]), len(u))
                return len(now["answer"]) == len(u)

            if wait:
                self.waiter.until(f"the answers of guardians {u} in round {r}", answered)
            return dict(self.client.post(f"{self.base}/publish", {}))
        if wait:

            def ready(a: dict[str, Any]) -> bool:
                want = present or a["number_of_guardians"]
                posted = sum(a["shares"].values())
                self.progress("guardians' shares posted", posted, want)
                return bool(a["phase"] != "closed" or posted >= want)

            self._wait("the guardians' decryption shares", ready)
        return dict(self.client.post(f"{self.base}/publish", {}))

    def results(self) -> dict[str, Any]:
        return dict(self.client.get(f"{self.base}/results"))

    def named_counts(self, counts: dict[str, int]) -> list[tuple[str, str, int]]:
        """`counts` (votes per selection id) as (contest, choice, votes), named as the manifest on the board
        names them (`votum.results`: the ballot title, the candidate's name), in ballot order."""
        manifest = json.loads(self.client.get(f"{self.base}/board/by-name/manifest.json")["payload"])
        names = candidate_names(manifest)
        rows = []
        for c in sorted(manifest.get("contests", []), key=lambda c: c.get("sequence_order", 0)):
            for sel in sorted(c.get("ballot_selections", []), key=lambda s: s.get("sequence_order", 0)):
                sid = sel["object_id"]
                # 1.0 names a count by its selection id, 2.x by "contest/option"
                count = counts.get(sid, counts.get(f"{c.get('object_id')}/{sid}"))
                if count is not None:
                    choice = names.get(str(sel.get("candidate_id")), sid)
                    rows.append((contest_label(c), choice, int(count)))
        return rows

    def save_record_21(self, out: Path) -> dict[str, Any]:
        """A 2.1 election's record written to the new directory `out` from the whole board, re-linked to the
        head the service publishes (written aside, then renamed); returns that head."""
        if out.exists():
            raise InvalidInput(f"{out} exists: give a new directory")
        part = out.with_name(out.name + ".part")
        if part.exists():
            shutil.rmtree(part)
        head = write_eg21_record(self.client, self.election_id, part)
        os.replace(part, out)
        return head

    def save_record(self, out: Path) -> int:
        """Downloads the record archive to `out` (written aside, then renamed); returns its size."""
        data = self.client.get(f"{self.base}/record")
        if not isinstance(data, bytes):
            raise InvalidInput("the service did not answer with a record archive")
        part = out.with_name(out.name + ".part")
        with open(part, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(part, out)
        return len(data)
