"""`votum device --he-fingerprint …`: an ElectionGuard 2.1 encryption device as a kiosk page (spec/80.10,
80.11). The pages are the 1.0 kiosk's (`votum.web.kiosk.create_kiosk_app`); what is behind them is 2.1's.

The kiosk believes the service only what `Device21` checks: the guardians' document on the board is the one
the key records on the board make, and its H_E has the fingerprint the officials gave the poll worker out of
band; its chain starts where this device computes it; each receipt carries the ballot's own code.

A voter's ballot is encrypted once, here, as soon as it is marked; the voter then casts it or challenges it
(Benaloh). The two forms differ only in their `state`, which no hash of the specification covers, so the
code shown before the choice is the code of either. Under simple chaining the chain's tail is kept in a
state file after each acknowledged ballot; a ballot being submitted is noted there first, so a kiosk that
stops mid-submission asks the service whether that ballot arrived before it goes on. One ballot is in
progress at a time: starting another challenges the first, as ElectionGuard does for a ballot never cast.
"""

from __future__ import annotations

import hmac
import json
import os
import secrets
import threading
from pathlib import Path
from typing import Any
from urllib.parse import quote

from votum.client import Client, ServiceError
from votum.eg import contests_on_style
from votum.errors import Conflict, InvalidInput, VerificationFailed
from votum.parties.device21 import Device21
from votum.web.kiosk import Pending
from votum.web.views import contests_of, title_of


class Kiosk21:
    """A 2.1 device behind the kiosk's pages: its keys checked against the officials' fingerprint, its
    chain, and the ballot in progress. It answers the pages as `votum.web.kiosk.Kiosk` does."""

    def __init__(
        self,
        client: Client,
        election_id: str,
        device_id: int,
        state_dir: Path,
        public_url: str,
        device_name: str,
        he_fingerprint: str,
        ballot_prefix: str = "kiosk-",
        style: str | None = None,
        simple_chaining: bool = False,
        token_name: str | None = None,
    ) -> None:
        self.client = client
        self.election_id = election_id
        self.device_id = device_id
        self.public_url = public_url.rstrip("/")
        self.ballot_prefix = ballot_prefix
        self.base = f"/v1/elections/{election_id}"
        self.lock = threading.Lock()
        status = client.get(self.base)
        if status["phase"] != "open":
            raise Conflict(f"election {election_id!r} is {status['phase']}; a device needs it open")
        self.device = Device21(client, election_id, device_name, he_fingerprint, simple_chaining, token_name)
        self.device.start()
        self.spec = "2.1"
        #: shown in the footer: the H_E fingerprint the keys were checked against
        self.joint_fingerprint = self.device.expected_he
        self.manifest = json.loads(self.device.entry("manifest.json"))
        styles = [s["object_id"] for s in self.manifest.get("ballot_styles", [])]
        self.style = style or (styles[0] if styles else "")
        if self.style not in styles:
            raise InvalidInput(
                f"the manifest has no ballot style {self.style!r} (it has {', '.join(styles)})"
            )
        self.on_style = contests_on_style(self.manifest, self.style)
        ids = {c["object_id"] for c in self.on_style}
        self.contests = [c for c in contests_of(self.manifest) if c.contest_id in ids]
        self.title = title_of(self.manifest)
        self.form_token = secrets.token_urlsafe(24)
        self.pending: Pending | None = None
        state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.state_path = state_dir / f"kiosk21-{election_id}-{device_name}.json"
        self.device.tail = self._resume()

    # -- the chain of codes (simple chaining) -------------------------------------------------------------

    def _resume(self) -> str | None:
        """The chain's tail from the state file, after asking the service about a ballot that was being
        submitted; None for a new device (and always under no chaining, where every ballot names H_DI)."""
        if not self.state_path.exists():
            self._save(None)
            return None
        state = json.loads(self.state_path.read_text())
        tail = state.get("tail")
        sending = state.get("sending")
        if sending:
            got = self._receipt_of(sending["ballot_id"])
            if got is not None:
                if got["code"].lower() != sending["code"].lower():
                    raise VerificationFailed(
                        f"ballot {sending['ballot_id']} is on the board with another code"
                    )
                tail = sending["code"] if self.device.simple_chaining else None
            self._save(tail)
        return str(tail) if tail else None

    def _save(self, tail: str | None, sending: dict[str, str] | None = None) -> None:
        part = self.state_path.with_name(self.state_path.name + ".part")
        part.write_text(json.dumps({"tail": tail, "sending": sending}))
        with open(part, "rb") as f:
            os.fsync(f.fileno())
        os.replace(part, self.state_path)

    # -- a voter's ballot --------------------------------------------------------------------------------

    def check_choices(self, chosen: list[str]) -> None:
        """Every choice is a selection of this style's contests, at most once, and no contest gets more
        votes than it allows."""
        known = {ch.selection_id for c in self.contests for ch in c.choices}
        if len(set(chosen)) != len(chosen):
            raise InvalidInput("a choice is marked twice")
        if any(s not in known for s in chosen):
            raise InvalidInput("a choice is not on this ballot")
        for c in self.contests:
            marked = sum(1 for ch in c.choices if ch.selection_id in chosen)
            if marked > c.votes_allowed:
                raise InvalidInput(f"{c.label}: {marked} marked, at most {c.votes_allowed} allowed")

    def _plain(self, ballot_id: str, chosen: set[str]) -> dict[str, Any]:
        """The 2.1 plaintext ballot: per contest of the style, one 0/1 vote per option in the manifest's
        order."""
        contests = {}
        for c in self.on_style:
            options = sorted(c.get("ballot_selections", []), key=lambda s: s.get("sequence_order", 0))
            contests[c["object_id"]] = {"votes": [int(s["object_id"] in chosen) for s in options]}
        return {"id": ballot_id, "style": self.style, "contests": contests}

    def encrypt(self, chosen: list[str]) -> Pending:
        """Encrypts a ballot with these choices (challenging one left waiting)."""
        self.check_choices(chosen)
        with self.lock:
            if self.pending is not None:
                self._submit(self.pending, "challenged")
            ballot_id = f"{self.ballot_prefix}{secrets.token_hex(8)}"
            text = self.device.encrypt(self._plain(ballot_id, set(chosen)), "cast")
            cast = json.loads(text)
            challenged = {**cast, "state": "challenged"}
            forms = {"cast": cast, "challenged": challenged}
            code = str(cast["H_C"])
            nxt = code if self.device.simple_chaining else None
            self.pending = Pending(secrets.token_urlsafe(16), ballot_id, forms, code, nxt)
            return self.pending

    def decide(self, key: str, state: str) -> dict[str, Any]:
        """The voter's choice for the ballot in progress: `cast`, or `spoiled` (the pages' word), which is
        2.1's `challenged`. Returns the receipt."""
        with self.lock:
            p = self.pending
            if p is None or not hmac.compare_digest(p.key, key):
                raise Conflict("this ballot is no longer in progress: start again")
            return self._submit(p, "cast" if state == "cast" else "challenged")

    def _submit(self, p: Pending, state: str) -> dict[str, Any]:
        """Sends the ballot in `state`, or, when an earlier try's answer was lost, takes the service's
        receipt of what arrived then (so the chain goes on and nothing is sent twice in two states)."""
        self._save(self.device.tail, {"ballot_id": p.ballot_id, "code": p.code})
        receipt = self._receipt_of(p.ballot_id) if p.tried else None
        if receipt is None:
            p.tried = True
            text = json.dumps(p.forms[state], separators=(",", ":"))
            got = self.client.post(f"{self.base}/eg21/ballots", {"ballots": [text]})["receipts"][0]
            receipt = dict(got)
        if receipt["code"].lower() != p.code.lower():
            raise VerificationFailed("the service's receipt names another code than this ballot's")
        self.device.tail = p.next_seed
        self._save(self.device.tail)
        self.pending = None
        # the pages (and 1.0's board) call a ballot not cast "spoiled"
        return {**receipt, "state": "cast" if receipt["state"] == "cast" else "spoiled"}

    def _receipt_of(self, ballot_id: str) -> dict[str, Any] | None:
        """The service's receipt of this ballot if it is on the board, else None."""
        try:
            return dict(self.client.get(f"{self.base}/eg21/ballots/{quote(ballot_id)}"))
        except ServiceError as e:
            if e.status == 404:
                return None
            raise

    def tracker(self, code: str) -> str:
        return f"{self.public_url}/elections/{quote(self.election_id)}/track?code={quote(code)}"
