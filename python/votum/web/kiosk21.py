"""`votum device --he-fingerprint …`: an ElectionGuard 2.1 encryption device as a kiosk page (spec/80.10,
80.11). The pages are the 1.0 kiosk's (`votum.web.kiosk.create_kiosk_app`); what is behind them is 2.1's.

The kiosk believes the service only what `Device21` checks: the guardians' document on the board is the one
the key records on the board make, and its H_E has the fingerprint the officials gave the poll worker out of
band; its chain starts where this device computes it; each receipt carries the ballot's own code.

A voter's ballot is encrypted once, here, as soon as it is marked; the voter then casts it or challenges it
(Benaloh). The two forms differ only in their `state`, which no hash of the specification covers, so the
code shown before the choice is the code of either. Under simple chaining the chain's tail is kept in a
state file after each acknowledged ballot; a ballot being submitted is noted there first, so a kiosk that
stops mid-submission asks the service whether that ballot arrived before it goes on. A kiosk with no state
file (new, or its file lost) asks the service where its chain ends. One ballot is in
progress at a time: starting another challenges the first, as ElectionGuard does for a ballot never cast.
"""

from __future__ import annotations

import json
import secrets
from pathlib import Path
from typing import Any

from votum.client import Client
from votum.parties.device21 import Device21
from votum.web.kiosk import KioskBase, Pending


class Kiosk21(KioskBase):
    """A 2.1 device behind the kiosk's pages: its keys checked against the officials' fingerprint, its
    chain, and the ballot in progress."""

    spec = "2.1"
    ballots_route = "eg21/ballots"

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
        state_path = state_dir / f"kiosk21-{election_id}-{device_name}.json"
        super().__init__(client, election_id, device_id, public_url, ballot_prefix, state_path)
        self.device = Device21(client, election_id, device_name, he_fingerprint, simple_chaining, token_name)
        self.device.start()
        #: shown in the footer: the H_E fingerprint the keys were checked against
        self.joint_fingerprint = self.device.expected_he
        self._use_style(json.loads(self.device.entry("manifest.json")), style)
        self._resume()

    # -- the chain of codes (simple chaining) -------------------------------------------------------------

    def _resume(self) -> None:
        """The chain's tail from the state file, after asking the service about a ballot that was being
        submitted; with no state file (a new device, or its file lost) where the service says the chain ends;
        always None under no chaining, where every ballot names H_DI."""
        if not self.state_path.exists():
            if self.device.simple_chaining:
                self.device.tail = self.device.board_tail()
            self._save()
            return
        state = json.loads(self.state_path.read_text())
        self.device.tail = state.get("tail") or None
        sending = state.get("sending")
        if sending:
            if self._arrived(sending):
                self.device.tail = sending["code"] if self.device.simple_chaining else None
            self._save()

    def _chain_state(self) -> dict[str, Any]:
        return {"tail": self.device.tail}

    def _move_on(self, p: Pending) -> None:
        self.device.tail = p.next_seed

    # -- a voter's ballot --------------------------------------------------------------------------------

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
        """The voter's choice: `cast`, or `spoiled` (the pages' word), which is 2.1's `challenged`."""
        return super().decide(key, "cast" if state == "cast" else "challenged")

    def _post(self, p: Pending, state: str) -> dict[str, Any]:
        text = json.dumps(p.forms[state], separators=(",", ":"))
        return dict(self.client.post(f"{self.base}/eg21/ballots", {"ballots": [text]})["receipts"][0])
