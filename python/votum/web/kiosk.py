"""`votum device`: the encryption device of a polling station, as a kiosk page (spec/80.10; ElectionGuard's
"encryption device").

The kiosk runs on the polling-station machine and holds only public values: the manifest, the joint key
and the extended base hash, read from the board at start and checked there (the context must be the one
the guardians' records on the board make). A voter marks a ballot; the kiosk encrypts it here, shows its
ballot code, and the voter casts it or spoils it to challenge the encryption (Benaloh). Only then is the
encrypted ballot sent to the service, with the device token; the receipt page gives the code and the
tracker's address.

The device's chain of ballot codes starts at its own hash, computed here from its registration (not taken
from the service's answer, which must agree). The chain's tail is kept in a state file after each
acknowledged ballot; a ballot being submitted is noted there first, so a kiosk that stops mid-submission
asks the service whether that ballot arrived before it goes on.

One ballot is in progress at a time. Starting another while one awaits the voter's choice spoils the
first, as ElectionGuard does for a ballot that was never cast: its chain link is used, and its decryption
is published like any spoiled ballot's.
"""

from __future__ import annotations

import hmac
import json
import os
import secrets
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote

import httpx
from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles

import votum
from votum.client import Client, ServiceError
from votum.eg import contests_on_style, plaintext_ballot, records_in_order
from votum.errors import Conflict, InvalidInput, VerificationFailed
from votum.fingerprints import key_fingerprint
from votum.web.catalog import Messages, choose
from votum.web.pages import ENV, HERE, SECURITY_HEADERS
from votum.web.views import contests_of, title_of

#: the largest form a voter's ballot can make (every selection id of a large manifest fits)
MAX_FORM_BYTES = 256 * 1024


@dataclass
class Pending:
    """An encrypted ballot awaiting the voter's choice: cast or spoil. It is written in both submitted
    forms at once (the same encryption, so the same code; only the state differs), so no nonce is kept
    while the voter decides."""

    key: str
    ballot_id: str
    #: "cast" and "spoiled" -> the submitted ballot in that state
    forms: dict[str, dict[str, Any]]
    code: str
    #: the chain's next seed once this ballot is on the board (its code)
    next_seed: Any
    #: a submission was tried: whether it arrived is asked of the service before trying again
    tried: bool = False


class KioskBase:
    """The device behind the kiosk's pages, whatever its ElectionGuard version: the election it serves (open),
    its ballot style, the ballot in progress, and the state file that keeps its chain across restarts with
    the ballot being sent. `Kiosk` (1.0) and `kiosk21.Kiosk21` (2.1) add the keys, the encryption, how a
    ballot is posted and what the chain's tail is. The templates read `title`, `election_id`, `device_id`,
    `spec`, `joint_fingerprint` and `contests`."""

    spec = ""
    #: where a ballot is asked for by id, under the election's routes (`ballots` for 1.0)
    ballots_route = "ballots"
    #: the fingerprint the pages' footer shows: what the device checked its keys against
    joint_fingerprint: str

    def __init__(
        self,
        client: Client,
        election_id: str,
        device_id: int,
        public_url: str,
        ballot_prefix: str,
        state_path: Path,
    ) -> None:
        self.client = client
        self.election_id = election_id
        self.device_id = device_id
        self.public_url = public_url.rstrip("/")
        #: ballot ids are this prefix and random digits (a named device token's ids start with its name)
        self.ballot_prefix = ballot_prefix
        self.base = f"/v1/elections/{election_id}"
        self.lock = threading.Lock()
        status = client.get(self.base)
        if status["phase"] != "open":
            raise Conflict(f"election {election_id!r} is {status['phase']}; a device needs it open")
        self.form_token = secrets.token_urlsafe(24)
        self.pending: Pending | None = None
        state_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.state_path = state_path

    def _named(self, name: str) -> str:
        return str(self.client.get(f"{self.base}/board/by-name/{name}")["payload"])

    def _use_style(self, manifest: dict[str, Any], style: str | None) -> None:
        """The manifest and the ballot style this kiosk shows (the manifest's first by default)."""
        self.manifest = manifest
        styles = [s["object_id"] for s in manifest.get("ballot_styles", [])]
        self.style = style or (styles[0] if styles else "")
        if self.style not in styles:
            raise InvalidInput(
                f"the manifest has no ballot style {self.style!r} (it has {', '.join(styles)})"
            )
        self.on_style = contests_on_style(manifest, self.style)
        ids = {c["object_id"] for c in self.on_style}
        self.contests = [c for c in contests_of(manifest) if c.contest_id in ids]
        self.title = title_of(manifest)

    # -- the state file ---------------------------------------------------------------------------------

    def _chain_state(self) -> dict[str, Any]:
        """The chain's tail as the state file keeps it."""
        raise NotImplementedError

    def _move_on(self, p: Pending) -> None:
        """The chain's tail after `p` is on the board."""
        raise NotImplementedError

    def _save(self, sending: dict[str, str] | None = None) -> None:
        """The state file replaced whole: the chain's tail, and the ballot being sent if one is."""
        part = self.state_path.with_name(self.state_path.name + ".part")
        part.write_text(json.dumps({**self._chain_state(), "sending": sending}))
        with open(part, "rb") as f:
            os.fsync(f.fileno())
        os.replace(part, self.state_path)

    def _arrived(self, sending: dict[str, str]) -> bool:
        """Whether the ballot the state file says was being sent is on the board (with its own code)."""
        got = self._receipt_of(sending["ballot_id"])
        if got is None:
            return False
        if got["code"].upper() != sending["code"].upper():
            raise VerificationFailed(f"ballot {sending['ballot_id']} is on the board with another code")
        return True

    # -- a voter's ballot ------------------------------------------------------------------------------

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

    def encrypt(self, chosen: list[str]) -> Pending:
        raise NotImplementedError

    def decide(self, key: str, state: str) -> dict[str, Any]:
        """The voter's choice for the ballot in progress: `cast` or `spoiled`. Returns the receipt."""
        with self.lock:
            p = self.pending
            if p is None or not hmac.compare_digest(p.key, key):
                raise Conflict("this ballot is no longer in progress: start again")
            return self._submit(p, state)

    def _post(self, p: Pending, state: str) -> dict[str, Any]:
        """Sends `p` in `state`; the service's receipt."""
        raise NotImplementedError

    def _submit(self, p: Pending, state: str) -> dict[str, Any]:
        """Sends the ballot in `state`, or, when an earlier try's answer was lost, takes the service's
        receipt of what arrived then (so the chain goes on and nothing is sent twice in two states)."""
        self._save({"ballot_id": p.ballot_id, "code": p.code})
        receipt = self._receipt_of(p.ballot_id) if p.tried else None
        if receipt is None:
            p.tried = True
            receipt = self._post(p, state)
        if receipt["code"].upper() != p.code.upper():
            raise VerificationFailed("the service's receipt names another code than this ballot's")
        self._move_on(p)
        self._save()
        self.pending = None
        # the pages (and the ballots table) call a ballot not cast "spoiled", 2.1's challenged ones too
        return {**receipt, "state": "cast" if receipt["state"] == "cast" else "spoiled"}

    def _receipt_of(self, ballot_id: str) -> dict[str, Any] | None:
        """The service's receipt of this ballot if it is on the board, else None."""
        try:
            return dict(self.client.get(f"{self.base}/{self.ballots_route}/{quote(ballot_id)}"))
        except ServiceError as e:
            if e.status == 404:
                return None
            raise

    def tracker(self, code: str) -> str:
        return f"{self.public_url}/elections/{quote(self.election_id)}/track?code={quote(code)}"


class Kiosk(KioskBase):
    """The 1.0 device: its public keys, its chain of codes, and the ballot in progress."""

    spec = "1.0"

    def __init__(
        self,
        client: Client,
        election_id: str,
        device_id: int,
        state_dir: Path,
        public_url: str,
        location: str,
        ballot_prefix: str = "kiosk-",
        style: str | None = None,
    ) -> None:
        state_path = state_dir / f"kiosk-{election_id}-{device_id}.json"
        super().__init__(client, election_id, device_id, public_url, ballot_prefix, state_path)
        manifest = json.loads(self._named("manifest.json"))
        em = votum.EgManifest.from_json(json.dumps(manifest))
        records = client.get(f"{self.base}/guardians")["records"]
        context = votum.EgContext.from_json(self._named("context.json"))
        context.check(records_in_order(records.values()))
        if context.manifest_hash.to_int() != em.crypto_hash().to_int():
            raise VerificationFailed("the context on the board is not of the manifest on the board")
        self.joint_fingerprint = key_fingerprint(context.elgamal_public_key.to_int())
        self.device = votum.EgEncryptionDevice(em, context.elgamal_public_key, context.extended_base_hash)
        self._use_style(manifest, style)
        self._start(location)

    # -- the chain of codes ----------------------------------------------------------------------------

    def _start(self, location: str) -> None:
        """The chain's tail: from the state file (after asking the service about a ballot that was being
        submitted), else a new registration, whose hash is computed here."""
        if self.state_path.exists():
            state = json.loads(self.state_path.read_text())
            self.seed = _scalar(votum.eg_from_hex(state["seed"]))
            sending = state.get("sending")
            if sending:
                if self._arrived(sending):
                    self.seed = _scalar(votum.eg_from_hex(sending["code"]))
                self._save()
            return
        doc = {"device_id": self.device_id, "session_id": 1, "launch_code": 1, "location": location}
        ours = votum.eg_hash_elems(self.device_id, 1, 1, location)
        theirs = self.client.post(f"{self.base}/devices", doc)["code_seed"]
        if votum.eg_from_hex(theirs) != ours.to_int():
            raise VerificationFailed(
                "the service answered another device hash than this device's registration"
            )
        self.seed = ours
        self._save()

    def _chain_state(self) -> dict[str, Any]:
        return {"seed": votum.eg_to_hex(self.seed.to_int())}

    def _move_on(self, p: Pending) -> None:
        self.seed = p.next_seed

    # -- a voter's ballot ------------------------------------------------------------------------------

    def encrypt(self, chosen: list[str]) -> Pending:
        """Encrypts a ballot with these choices (spoiling one left waiting)."""
        self.check_choices(chosen)
        with self.lock:
            if self.pending is not None:
                self._submit(self.pending, "spoiled")
            ballot_id = f"{self.ballot_prefix}{secrets.token_hex(8)}"
            plaintext = plaintext_ballot(self.manifest, ballot_id, set(chosen), self.style)
            nonce, now = GROUP.random_scalar(), int(time.time())
            forms, codes = {}, set()
            for state in ("cast", "spoiled"):
                text, code = self.device.encrypt(plaintext, self.seed, now, nonce, form=state)
                forms[state] = json.loads(text)
                codes.add(forms[state]["code"])
            del nonce
            if len(codes) != 1:
                raise VerificationFailed("the two forms of one encryption have different codes")
            self.pending = Pending(secrets.token_urlsafe(16), ballot_id, forms, codes.pop(), code)
            return self.pending

    def _post(self, p: Pending, state: str) -> dict[str, Any]:
        return dict(self.client.post(f"{self.base}/ballots", {"ballot": p.forms[state], "state": state}))


GROUP = votum.Group("eg-4096")


def _scalar(value: int) -> Any:
    return GROUP.scalar(value)


def create_kiosk_app(kiosk: KioskBase) -> FastAPI:
    """The kiosk's pages: the ballot, its review (cast or spoil), and the receipt."""
    app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")

    def render(request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
        t = Messages(choose(request.headers.get("accept-language")))
        html = ENV.get_template(template).render(t=t, lang=t.lang, k=kiosk, **context)
        return HTMLResponse(
            html, status_code=status, headers={**SECURITY_HEADERS, "Cache-Control": "no-store"}
        )

    async def form_of(request: Request) -> dict[str, list[str]] | None:
        body = await request.body()
        if len(body) > MAX_FORM_BYTES:
            return None
        form = parse_qs(body.decode("utf-8", "replace"), keep_blank_values=False)
        given = (form.get("form_token") or [""])[0]
        return form if hmac.compare_digest(given, kiosk.form_token) else None

    @app.get("/")
    def ballot_page(request: Request) -> HTMLResponse:
        return render(request, "kiosk_ballot.html", error=None, chosen=set())

    @app.post("/ballot")
    async def encrypt(request: Request) -> Response:
        form = await form_of(request)
        if form is None:
            return render(request, "kiosk_ballot.html", 400, error="form", chosen=set())
        chosen = [v for name, values in form.items() if name.startswith("choice:") for v in values if v]
        try:
            pending = await _in_thread(kiosk.encrypt, chosen)
        except InvalidInput as e:
            return render(request, "kiosk_ballot.html", 400, error=str(e), chosen=set(chosen))
        except UNANSWERED as e:
            return render(request, "kiosk_ballot.html", 503, service_error=unanswered(e), chosen=set(chosen))
        return render(request, "kiosk_review.html", p=pending)

    @app.post("/ballot/{key}/{decision}")
    async def decide(request: Request, key: str, decision: str) -> Response:
        form = await form_of(request)
        if form is None or decision not in ("cast", "spoil"):
            return render(request, "kiosk_ballot.html", 400, error="form", chosen=set())
        try:
            receipt = await _in_thread(kiosk.decide, key, "cast" if decision == "cast" else "spoiled")
        except Conflict:
            return RedirectResponse("/", status_code=303)
        except UNANSWERED as e:
            # the ballot stays in progress: the voter tries again (nothing arrives twice, see _submit)
            return render(request, "kiosk_review.html", 503, p=kiosk.pending, service_error=unanswered(e))
        return render(request, "kiosk_receipt.html", r=receipt, tracker=kiosk.tracker(receipt["code"]))

    return app


#: what the service's failures look like to the kiosk: no answer, a refusal, an answer it cannot believe
UNANSWERED = (httpx.HTTPError, ServiceError, VerificationFailed)


def unanswered(e: BaseException) -> str:
    """The failure's detail, for the poll worker (the page says the rest)."""
    return f"{type(e).__name__}: {e}"


async def _in_thread(fn: Any, *args: Any) -> Any:
    import anyio

    return await anyio.to_thread.run_sync(fn, *args)
