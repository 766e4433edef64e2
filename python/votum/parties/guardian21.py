"""A guardian's own tool in an ElectionGuard 2.1 election on the service (spec/80.11): the key ceremony.

The guardian's secret keys are made from a 32-byte seed, which is sealed at once to the guardian's own node
key (spec/95.6, purpose `STATE_PURPOSE_21`) before anything is posted; a tool that stops half-way makes the
same keys again from it, posts the same signed key record, deals only the shares not yet on the board and
computes the same guardians' document. Every nonce after the keys comes fresh from the operating system.

The service is one more party that may lie, so the tool believes only what it can check:
- every key record it deals a share on is signed by a node in this guardian's keystore (the other
  guardians' cards, compared out of band) or by this guardian, each by a different node: a record of the
  service's making would otherwise receive this guardian's share (spec/80.11, "why signed");
- every record's proofs (Verification 2), and this guardian's own record unchanged;
- every share addressed to it, against its dealer's commitments; a bad one is answered with a complaint;
- the guardians' document it computes itself, which the board's must equal once the election is open.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import votum
from votum.client import Client
from votum.client.election import Progress, quiet, write_eg21_record
from votum.client.waiting import Waiter
from votum.eg2 import he_fingerprint
from votum.eg21_signing import (
    JOINT_STATEMENT,
    KEY_STATEMENT,
    SHARE_STATEMENT,
    round_statement,
    signature_holds,
    statement,
)
from votum.errors import Conflict, InvalidInput, VerificationFailed, VotumError
from votum.nodes.identity import Identity
from votum.nodes.keystore import PEERS_FILE, Keystore

#: what the sealed seed is for (spec/95.6)
STATE_PURPOSE_21 = "eg21-guardian-state"


def state_path_21(home: Path, election_id: str) -> Path:
    """Where this guardian keeps its sealed key seed for the 2.1 election `election_id`."""
    return home / f"eg21-guardian-{election_id}.sealed"


@dataclass
class Joined21:
    guardian_id: str
    i: int
    #: H_E's fingerprint, once the election is open (`None` if the tool did not wait for it)
    he_fingerprint: str | None


class GuardianTool21:
    """One guardian of one 2.1 election: its identity (the node key its seed is sealed to and its posts are
    signed with), its keystore (the other guardians' cards), its token and the service."""

    def __init__(
        self,
        client: Client,
        election_id: str,
        guardian_id: str,
        identity: Identity,
        waiter: Waiter | None = None,
        progress: Progress = quiet,
        keystore: Keystore | None = None,
    ) -> None:
        self.client = client
        self.election_id = election_id
        self.guardian_id = guardian_id
        self.identity = identity
        self.keystore = keystore if keystore is not None else Keystore.load(identity.home / PEERS_FILE)
        self.waiter = waiter or Waiter()
        self.progress = progress
        self.base = f"/v1/elections/{election_id}"
        self.path = state_path_21(identity.home, election_id)
        #: each guardian's node signing key, as its key record was checked against the keystore
        self.signers: dict[int, bytes] = {}

    def __repr__(self) -> str:
        return f"GuardianTool21({self.election_id!r}, {self.guardian_id!r})"

    def _entry(self, name: str) -> str:
        return str(self.client.get(f"{self.base}/board/by-name/{name}")["payload"])

    def _ceremony(self, to: int | None = None) -> dict[str, Any]:
        return dict(self.client.get(f"{self.base}/eg21" + (f"?to={to}" if to is not None else "")))

    def _post(self, path: str, body: Any) -> Any:
        return self.client.post(f"{self.base}/eg21/{path}", body, name=path)

    # -- the seed, sealed ----------------------------------------------------------------------------------

    def _seal(self, state: dict[str, Any]) -> None:
        box = self.identity.seal_for(self.identity.card, STATE_PURPOSE_21, json.dumps(state).encode())
        part = self.path.with_name(self.path.name + ".part")
        fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(box)
            f.flush()
            os.fsync(f.fileno())
        os.replace(part, self.path)

    def _unseal(self) -> dict[str, Any]:
        opened = self.identity.open_sealed(self.identity.card, STATE_PURPOSE_21, self.path.read_bytes())
        return dict(json.loads(opened))

    def _trustee(self, i: int, phase: str, election: dict[str, Any], manifest: bytes) -> votum.Eg21Trustee:
        """This guardian's trustee, its keys made from the sealed seed (made and sealed first if absent)."""
        if self.path.exists():
            state = self._unseal()
            if state["election_id"] != self.election_id or state["i"] != i:
                raise InvalidInput(
                    f"{self.path} holds guardian {state['i']} of election {state['election_id']!r}, "
                    f"not guardian {i} of {self.election_id!r}"
                )
            if state["base_hash"] != election["base_hash"]:
                raise VerificationFailed(
                    "the board's election is not the one this guardian's seed was made for (another H_B)"
                )
        else:
            if phase != "ceremony":
                raise Conflict(f"election {self.election_id!r} is {phase}; its key ceremony is over")
            state = {
                "election_id": self.election_id,
                "i": i,
                "base_hash": election["base_hash"],
                "key_seed": secrets.token_hex(32),
            }
            self._seal(state)
        seed = bytes.fromhex(state.pop("key_seed"))
        return votum.Eg21Trustee(
            election["group"],
            manifest,
            election["number_of_guardians"],
            election["quorum"],
            i,
            key_seed=seed,
        )

    # -- the key ceremony ----------------------------------------------------------------------------------

    def join(self, i: int, wait_open: bool = True) -> Joined21:
        """Makes (or remakes from its seed) this guardian's keys, posts its signed key record, checks every
        guardian's, deals its shares, checks the shares dealt to it, posts its signed guardians' document,
        and (with `wait_open`) waits until the official opens the election and checks what opened it."""
        election = json.loads(self._entry("election.json"))
        if election.get("spec") != "2.1":
            raise Conflict(f"election {self.election_id!r} runs ElectionGuard 1.0: use `votum guardian join`")
        n, k = int(election["number_of_guardians"]), int(election["quorum"])
        if not 1 <= i <= n:
            raise InvalidInput(f"the guardian's index must be in 1..{n}")
        manifest = self._entry("manifest.json").encode()
        base = votum.Eg21Ceremony(election["group"], manifest, n, k).base_hash
        if base != election["base_hash"]:
            raise VerificationFailed("the board's H_B is not the one its manifest and parameters make")
        phase = str(self.client.get(self.base)["phase"])
        trustee = self._trustee(i, phase, election, manifest)
        record = trustee.public_record()
        if phase == "ceremony":
            self._post("keys", self._signed_key(i, record))
        records = self._await_keys(n)
        self._check_keys(i, records, record)
        trustee.agree([json.loads(records[j])["record"] for j in range(1, n + 1)])
        joint: str | None = None
        if phase == "ceremony":
            self._deal(trustee, i, n)
            self._receive(trustee, i, n)
            joint = trustee.joint()
            signature = self.identity.sign_record(statement(JOINT_STATEMENT, self.election_id, i, joint))
            self._post("joint", {"guardians": joint, "signature": signature.hex()})
        if not wait_open:
            return Joined21(self.guardian_id, i, None)
        self.waiter.until("the official to open the election", lambda: self._status_phase() != "ceremony")
        return Joined21(self.guardian_id, i, self._check_opened(trustee, joint, n, k, i))

    def _status_phase(self) -> str:
        return str(self.client.get(self.base)["phase"])

    def _signed_key(self, i: int, record: str) -> dict[str, Any]:
        signature = self.identity.sign_record(statement(KEY_STATEMENT, self.election_id, i, record))
        return {
            "i": i,
            "record": record,
            "signing_key": self.identity.card.signing_key.hex(),
            "signature": signature.hex(),
        }

    def _await_keys(self, n: int) -> dict[int, str]:
        got: dict[int, str] = {}

        def ready() -> bool:
            got.clear()
            got.update({int(j): text for j, text in self._ceremony()["keys"].items()})
            self.progress("key records posted", len(got), n)
            return all(j in got for j in range(1, n + 1))

        self.waiter.until(f"the key records of all {n} guardians", ready)
        return got

    def _check_keys(self, i: int, records: dict[int, str], mine: str) -> None:
        """Every key record signed by this guardian's node (its own) or by a different node of its keystore,
        each on its index; its own record unchanged. Nothing is dealt before this holds."""
        own_key = self.identity.card.signing_key
        signers: dict[bytes, int] = {}
        self.signers.clear()
        for j, text in sorted(records.items()):
            doc = json.loads(text)
            signing_key = bytes.fromhex(str(doc["signing_key"]))
            if int(doc["i"]) != j:
                raise VerificationFailed(f"the board's key record {j} says it is guardian {doc['i']}'s")
            if j == i:
                if signing_key != own_key or doc["record"] != mine:
                    raise VerificationFailed(
                        f"the board shows another key record as guardian {i}'s than the one made here"
                    )
            elif signing_key == own_key or self.keystore.by_signing_key(signing_key) is None:
                raise VerificationFailed(
                    f"guardian {j}'s key record is signed by a node that is not in this guardian's keystore: "
                    "no share is dealt on it (add the other guardians' cards with `votum node peers add`)"
                )
            if signing_key in signers:
                raise VerificationFailed(
                    f"guardians {signers[signing_key]} and {j} are signed by one node: one node per guardian"
                )
            signers[signing_key] = j
            message = statement(KEY_STATEMENT, self.election_id, j, str(doc["record"]))
            if not signature_holds(signing_key, message, bytes.fromhex(str(doc["signature"]))):
                raise VerificationFailed(f"guardian {j}'s key record does not carry its node's signature")
            self.signers[j] = signing_key

    def _deal(self, trustee: votum.Eg21Trustee, i: int, n: int) -> None:
        """A share for each other guardian that has none from this one on the board yet (a retried run
        deals only those: each is encrypted with a fresh nonce, so a second one would differ)."""
        posted = set(self._ceremony()["shares"])
        shares = [
            trustee.share_for(j).decode()
            for j in range(1, n + 1)
            if j != i and f"eg21/shares/{i}/{j}.json" not in posted
        ]
        if shares:
            signatures = [
                self.identity.sign_record(statement(SHARE_STATEMENT, self.election_id, i, s)).hex()
                for s in shares
            ]
            self._post("shares", {"shares": shares, "signatures": signatures})

    def _shares_to(self, i: int) -> dict[int, str]:
        """The shares on the board addressed here, by dealer, each signed by its dealer's node (the one its
        key record was checked against): a share the service made up is refused, never complained of."""
        out: dict[int, str] = {}
        for j, text in self._ceremony(to=i)["to"].items():
            doc = json.loads(text)
            share, dealer = str(doc["share"]), int(j)
            message = statement(SHARE_STATEMENT, self.election_id, dealer, share)
            key = self.signers.get(dealer)
            if key is None or not signature_holds(key, message, bytes.fromhex(str(doc["signature"]))):
                raise VerificationFailed(
                    f"the board shows a share to guardian {i} as guardian {dealer}'s that its node did not "
                    "sign: the service made it up; no complaint is posted"
                )
            out[dealer] = share
        return out

    def _receive(self, trustee: votum.Eg21Trustee, i: int, n: int) -> None:
        """Takes the n − 1 shares addressed here, each checked; a bad one is complained of, and stops."""
        dealers = [j for j in range(1, n + 1) if j != i]
        got: dict[int, str] = {}

        def ready() -> bool:
            got.clear()
            got.update(self._shares_to(i))
            self.progress("shares received", len(got), len(dealers))
            return all(j in got for j in dealers)

        self.waiter.until(f"the shares of guardians {dealers}", ready)
        for j in dealers:
            try:
                trustee.receive(j, got[j].encode())
            except (VotumError, ValueError) as e:
                opening = trustee.open_share(j, got[j].encode())
                self._post("complaints", {"dealer": j, "reason": str(e)[:1000], "opening": opening})
                raise VerificationFailed(
                    f"guardian {j}'s share to guardian {i} failed its checks ({e}); a complaint is posted "
                    "and the ceremony cannot finish"
                ) from e

    def _check_opened(self, trustee: votum.Eg21Trustee, joint: str | None, n: int, k: int, i: int) -> str:
        """The board's guardians' document and parameters must be the ones this guardian computes."""
        if joint is None:
            # the ceremony ended before this run: compute the document again from the shares on the board
            self._receive(trustee, i, n)
            joint = trustee.joint()
        if json.loads(self._entry("guardians.json")) != json.loads(joint):
            raise VerificationFailed(
                "the opened election's guardians.json is not the guardians' document this guardian computed"
            )
        election = json.loads(self._entry("election.json"))
        manifest = self._entry("manifest.json").encode()
        parameters = votum.Eg21Ceremony(election["group"], manifest, n, k).parameters
        if json.loads(self._entry("parameters.json")) != json.loads(parameters):
            raise VerificationFailed("the opened election's parameters.json is not its group, n and k")
        return he_fingerprint(joint)

    # -- decryption ----------------------------------------------------------------------------------------

    def decrypt(self) -> Decrypted21:
        """After close: reads the whole board and re-links it to the head the service publishes, writes the
        record from it into a private folder, remakes this guardian's keys from its sealed seed and the board
        (the key records checked as at the ceremony, the shares dealt to it, the guardians' document its
        own), and takes part in the official's current decryption round if it names this guardian: its
        announcement (what it decrypts computed from its copy, checked by the verifier as far as the
        ballots), its reveal once every announcement of U is in, its answer once every reveal is in, each
        signed, each other guardian's checked for its node's signature. A newer round replaces the one it
        was in: it announces again, for the same values only."""
        election = json.loads(self._entry("election.json"))
        if election.get("spec") != "2.1":
            raise Conflict(
                f"election {self.election_id!r} runs ElectionGuard 1.0: use `votum guardian decrypt`"
            )
        n, k = int(election["number_of_guardians"]), int(election["quorum"])
        if not self.path.exists():
            raise InvalidInput(f"{self.path}: no sealed key seed for election {self.election_id!r}")
        i = int(self._unseal()["i"])
        manifest = self._entry("manifest.json").encode()
        if self._status_phase() != "closed":
            raise Conflict(f"election {self.election_id!r} is not closed")
        trustee = self._trustee(i, "closed", election, manifest)
        records = self._await_keys(n)
        self._check_keys(i, records, trustee.public_record())
        trustee.agree([json.loads(records[j])["record"] for j in range(1, n + 1)])
        self._receive(trustee, i, n)
        joint = trustee.joint()
        if json.loads(self._entry("guardians.json")) != json.loads(joint):
            raise VerificationFailed(
                "the board's guardians.json is not the guardians' document computed here"
            )
        signers = {j: bytes.fromhex(json.loads(records[j])["signing_key"]) for j in range(1, n + 1)}
        private = Path(tempfile.mkdtemp(prefix="votum-eg21-record-", dir=self.identity.home))
        try:
            head = write_eg21_record(self.client, self.election_id, private / "record")
            return self._rounds(trustee, i, private / "record", signers, head, k)
        finally:
            shutil.rmtree(private, ignore_errors=True)

    def _current(self) -> dict[str, Any] | None:
        got = self.client.get(f"{self.base}/eg21/rounds")
        return dict(got) if got else None

    def _rounds(
        self,
        trustee: votum.Eg21Trustee,
        i: int,
        record: Path,
        signers: dict[int, bytes],
        head: dict[str, Any],
        k: int,
    ) -> Decrypted21:
        state: dict[str, Any] = {"round": None}

        self.waiter.until("the official to start a decryption round", lambda: self._current() is not None)
        while True:
            current = self._current()
            assert current is not None
            r, u = int(current["round"]), [int(j) for j in current["available"]]
            if i not in u:
                return Decrypted21(i, head, r, answered=False)
            if state["round"] != r:
                state["round"] = r
                self._one_record(record)
                announce = trustee.announce(record, u)
                self._post_step(r, "announce", i, announce)
            announces = self._await_step(r, "announce", u, signers)
            if announces is None:
                continue  # a newer round
            reveal = trustee.reveal(announces)
            self._post_step(r, "reveal", i, reveal)
            reveals = self._await_step(r, "reveal", u, signers)
            if reveals is None:
                continue
            answer = trustee.answer(reveals)
            self._post_step(r, "answer", i, answer)
            return Decrypted21(i, head, r, answered=True)

    def _one_record(self, record: Path) -> None:
        """This guardian decrypts one record, whichever run of its tool and whatever round: the first time
        it announces, the SHA-256 of the ballots it decrypts from is sealed with its seed, and a later run
        shown other ballots stops (a service that had it decrypt two records differing in one ballot would
        learn that ballot's vote from the difference of the tallies, spec/66.12)."""
        h = hashlib.sha256()
        with (record / "ballots.jsonl").open("rb") as f:
            while chunk := f.read(1 << 20):
                h.update(chunk)
        digest = h.hexdigest()
        state = self._unseal()
        if state.get("decrypting") not in (None, digest):
            raise VerificationFailed(
                "the board's ballots are not those this guardian announced for before: it decrypts one record"
            )
        if state.get("decrypting") is None:
            state["decrypting"] = digest
            self._seal(state)

    def _post_step(self, r: int, step: str, i: int, message: str) -> None:
        signature = self.identity.sign_record(round_statement(step, self.election_id, r, i, message))
        self.client.post(
            f"{self.base}/eg21/rounds/{r}/{step}",
            {"message": message, "signature": signature.hex()},
            name=f"eg21 {step}",
        )

    def _await_step(self, r: int, step: str, u: list[int], signers: dict[int, bytes]) -> list[str] | None:
        """Each guardian of U's `step` in round r, signed by its node; None once a newer round started."""
        got: dict[str, Any] = {}

        def ready() -> bool:
            current = self._current()
            got.clear()
            if current is None or int(current["round"]) != r:
                got["newer"] = True
                return True
            got.update({str(j): text for j, text in current[step].items()})
            self.progress(f"{step}s posted", len(got), len(u))
            return all(str(j) in got for j in u)

        self.waiter.until(f"every guardian of {u} to post its {step} in round {r}", ready)
        if got.get("newer"):
            return None
        out = []
        for j in u:
            doc = json.loads(got[str(j)])
            message = str(doc["message"])
            if int(doc["i"]) != j or not signature_holds(
                signers[j],
                round_statement(step, self.election_id, r, j, message),
                bytes.fromhex(doc["signature"]),
            ):
                raise VerificationFailed(
                    f"guardian {j}'s {step} in round {r} does not carry its node's signature"
                )
            out.append(message)
        return out


@dataclass
class Decrypted21:
    i: int
    #: the board's head the record was read to
    head: dict[str, Any]
    round: int
    #: whether this guardian answered in that round (False: the round does not name it)
    answered: bool
