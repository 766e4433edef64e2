"""The election official's steps against the service (spec/80.10): create an election from a manifest,
open it once the key ceremony is complete, close it, and publish once the guardians' shares are in;
each step waits (boundedly, with progress) for what it needs, then reports the board head."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import votum
from votum.client import Client
from votum.client.election import Progress, quiet
from votum.client.waiting import Waiter
from votum.eg import read_manifest_file
from votum.errors import InvalidInput
from votum.fingerprints import key_fingerprint
from votum.results import candidate_names, contest_label


def read_manifest(path: Path) -> dict[str, Any]:
    """An ElectionGuard 1.4 manifest file, checked (references, limits, styles) before it is sent."""
    doc = read_manifest_file(path)
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

    def create(self, manifest: dict[str, Any], guardians: int, quorum: int) -> dict[str, Any]:
        body = {
            "election_id": self.election_id,
            "manifest": manifest,
            "number_of_guardians": guardians,
            "quorum": quorum,
        }
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
        """Opens once every guardian's record is posted and every backup is settled."""
        if wait:

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
        context = votum.EgContext.from_json(
            self.client.get(f"{self.base}/board/by-name/context.json")["payload"]
        )
        return key_fingerprint(context.elgamal_public_key.to_int())

    def close(self) -> dict[str, Any]:
        return dict(self.client.post(f"{self.base}/close", {}))

    def publish(self, present: int | None, wait: bool) -> dict[str, Any]:
        """Publishes once `present` guardians (all of them by default) have posted their shares."""
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
                if sid in counts:
                    choice = names.get(str(sel.get("candidate_id")), sid)
                    rows.append((contest_label(c), choice, int(counts[sid])))
        return rows

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
