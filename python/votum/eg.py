"""ElectionGuard 1.0 building blocks shared by the command line, the service and the client.

Everything cryptographic happens in the Rust core; this module only shapes documents: manifests
built from names (as the ElectionGuard API of shared/seeds/000 builds them), the in-process key
ceremony, plaintext ballots, and the encrypted tally in electionguard 1.4.0's JSON layout.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from votum._native import Ciphertext, EgContext, EgGuardian, EgManifest, eg_key_ceremony, eg_to_hex
from votum.errors import InvalidInput, VotumError

#: The one contest of a manifest built from candidate names.
NAMES_CONTEST = "contest-1"
NAMES_STYLE = "style-1"
NAMES_DISTRICT = "district-1"


def selection_id(candidate: str) -> str:
    """The selection id of `candidate` in a manifest built by `manifest_from_names`."""
    return f"{candidate}-selection"


def candidate_document(
    object_id: str, name: str | None = None, party_id: str | None = None
) -> dict[str, Any]:
    """An EG 1.4 candidate; `name` (English) is optional."""
    text = [{"value": name, "language": "en"}] if name is not None else []
    return {
        "object_id": object_id,
        "name": {"text": text},
        "party_id": party_id,
        "image_uri": None,
        "is_write_in": None,
    }


def contest_document(index: int, selections: list[tuple[str, str]], votes_allowed: int) -> dict[str, Any]:
    """The EG 1.4 contest `contest-{index + 1}` in the one district, with `(selection id,
    candidate id)` selections, vote for `votes_allowed`."""
    return {
        "object_id": f"contest-{index + 1}",
        "sequence_order": index,
        "electoral_district_id": NAMES_DISTRICT,
        "vote_variation": "one_of_m" if votes_allowed == 1 else "n_of_m",
        "number_elected": votes_allowed,
        "votes_allowed": votes_allowed,
        "name": f"Contest {index + 1}",
        "ballot_selections": [
            {"object_id": sid, "sequence_order": j, "candidate_id": cid}
            for j, (sid, cid) in enumerate(selections)
        ],
        "ballot_title": None,
        "ballot_subtitle": None,
    }


def manifest_document(
    contests: list[dict[str, Any]], candidates: list[dict[str, Any]], parties: list[dict[str, Any]]
) -> dict[str, Any]:
    """An EG 1.4 manifest of one district and one ballot style holding `contests`."""
    return {
        "election_scope_id": "votum-election",
        "spec_version": "1.0",
        "type": "general",
        "start_date": "2026-11-03T07:00:00-05:00",
        "end_date": "2026-11-03T20:00:00-05:00",
        "geopolitical_units": [
            {"object_id": NAMES_DISTRICT, "name": "District 1", "type": "county", "contact_information": None}
        ],
        "parties": parties,
        "candidates": candidates,
        "contests": contests,
        "ballot_styles": [
            {
                "object_id": NAMES_STYLE,
                "geopolitical_unit_ids": [NAMES_DISTRICT],
                "party_ids": None,
                "image_uri": None,
            }
        ],
        "name": None,
        "contact_information": None,
    }


def manifest_from_names(party_names: list[str], candidate_names: list[str]) -> dict[str, Any]:
    """An ElectionGuard 1.4 manifest with one vote-for-one contest whose candidates are
    `candidate_names`, candidate i belonging to party i modulo the number of parties (the shape
    of the seed's `create_election_manifest`). Names are also the object ids, so they must be
    distinct and non-empty."""
    if not candidate_names:
        raise InvalidInput("a manifest needs at least one candidate")
    for what, names in (("candidate", candidate_names), ("party", party_names)):
        if len(set(names)) != len(names):
            raise InvalidInput(f"{what} names must be distinct")
        if any(not isinstance(n, str) or not n.strip() for n in names):
            raise InvalidInput(f"{what} names must be non-empty strings")
    parties = [
        {
            "object_id": p,
            "name": {"text": [{"value": p, "language": "en"}]},
            "abbreviation": p[:8],
            "color": None,
            "logo_uri": None,
        }
        for p in party_names
    ]
    candidates = [
        candidate_document(c, c, party_names[i % len(party_names)] if party_names else None)
        for i, c in enumerate(candidate_names)
    ]
    contest = contest_document(0, [(selection_id(c), c) for c in candidate_names], 1)
    return manifest_document([contest], candidates, parties)


def contests_on_style(manifest: dict[str, Any], style_id: str) -> list[dict[str, Any]]:
    """The contests a ballot of style `style_id` carries: those whose electoral district is one of
    the style's geopolitical units (as electionguard 1.4.0's `get_contests_for`)."""
    for style in manifest["ballot_styles"]:
        if style["object_id"] == style_id:
            units = set(style.get("geopolitical_unit_ids") or [])
            return [c for c in manifest["contests"] if c["electoral_district_id"] in units]
    raise InvalidInput(f"unknown ballot style {style_id!r}")


def random_choices(manifest: dict[str, Any], rng: random.Random) -> tuple[str, list[str]]:
    """A random voter's choices: a ballot style, and in each of its contests from 0 (an undervote)
    up to the votes allowed of its selections. Returns (style id, chosen selection ids)."""
    styles = manifest["ballot_styles"]
    # one style: no draw, so seeded runs on single-style manifests give the ballots they always did
    style = (styles[0] if len(styles) == 1 else rng.choice(styles))["object_id"]
    chosen: list[str] = []
    for c in contests_on_style(manifest, style):
        ids = [s["object_id"] for s in c["ballot_selections"]]
        chosen.extend(rng.sample(ids, rng.randint(0, min(c.get("votes_allowed", 1), len(ids)))))
    return style, chosen


def plaintext_ballot(
    manifest: dict[str, Any], ballot_id: str, chosen: set[str], style_id: str | None = None
) -> str:
    """A plaintext ballot (EG 1.4 JSON) of style `style_id` (the manifest's first when None) voting
    for the selection ids in `chosen` (every other selection of the style's contests 0). Whether it
    respects the limits is the device's check."""
    style = style_id if style_id is not None else manifest["ballot_styles"][0]["object_id"]
    contests = [
        {
            "object_id": c["object_id"],
            "ballot_selections": [
                {"object_id": s["object_id"], "vote": int(s["object_id"] in chosen)}
                for s in c["ballot_selections"]
            ],
        }
        for c in contests_on_style(manifest, style)
    ]
    return json.dumps({"object_id": ballot_id, "style_id": style, "contests": contests})


def records_in_order(records: Iterable[str]) -> list[str]:
    """Guardian records (JSON text) in sequence order, as the context and electionguard take them."""
    return sorted(records, key=lambda r: json.loads(r)["sequence_order"])


def read_manifest_file(path: Path) -> dict[str, Any]:
    """A manifest file's JSON object; a syntax error or another JSON value is `InvalidInput` naming the file
    (its checks against the ElectionGuard rules are `EgManifest.from_json`'s)."""
    try:
        doc = json.loads(path.read_text())
    except json.JSONDecodeError as e:
        where = f"line {e.lineno}, column {e.colno}"
        raise InvalidInput(f"the manifest {path} is not valid JSON: {e.msg} ({where})") from None
    if not isinstance(doc, dict):
        raise InvalidInput(f"the manifest {path} is not a JSON object")
    return doc


def share_name(guardian_id: str, target_id: str, missing: str | None = None) -> str:
    """The board name of a guardian's decryption shares of a target (the tally or a spoiled ballot), or of
    its compensation for guardian `missing` (spec/80.4)."""
    return f"decryption/{guardian_id}/{target_id}" + (f"/{missing}" if missing else "") + ".json"


#: the object id of an election's encrypted tally (and of its decryption)
TALLY_OBJECT_ID = "election-results"


def encrypted_tally_json(
    manifest: dict[str, Any],
    em: EgManifest,
    tally: dict[str, dict[str, Ciphertext]],
    object_id: str = TALLY_OBJECT_ID,
) -> dict[str, Any]:
    """electionguard 1.4.0's `CiphertextTally` JSON from {contest: {selection: Ciphertext}} (a
    ballot box's or an `EgTally`'s); selections absent from `tally` are the encryption of 0."""
    c_hash = em.contest_hashes()
    s_hash = em.selection_hashes()
    contests = {}
    for c in manifest["contests"]:
        sels = {}
        for s in c["ballot_selections"]:
            ct = tally.get(c["object_id"], {}).get(s["object_id"])
            pad, data = (ct.pad.to_int(), ct.data.to_int()) if ct is not None else (1, 1)
            sels[s["object_id"]] = {
                "object_id": s["object_id"],
                "sequence_order": s["sequence_order"],
                "description_hash": eg_to_hex(s_hash[s["object_id"]].to_int()),
                "ciphertext": {"pad": eg_to_hex(pad), "data": eg_to_hex(data)},
            }
        contests[c["object_id"]] = {
            "object_id": c["object_id"],
            "sequence_order": c["sequence_order"],
            "description_hash": eg_to_hex(c_hash[c["object_id"]].to_int()),
            "selections": sels,
        }
    return {"object_id": object_id, "contests": contests}


@dataclass
class Ceremony:
    """The outcome of an in-process key ceremony: the guardians (holding their secrets), their
    public records, and the sealed backups each sent (sender id -> receiver id -> backup JSON)."""

    guardians: list[EgGuardian]
    records: list[str]
    backups: dict[str, dict[str, str]]
    context: EgContext


def run_ceremony(
    manifest: EgManifest,
    number_of_guardians: int,
    quorum: int,
    seeds: list[bytes] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Ceremony:
    """Runs the whole key ceremony in one process: n guardians, each backup sealed to its receiver
    and checked by it against the sender's commitments, then the context. `seeds` (32 bytes per
    guardian) make it reproducible, for tests only; `progress(n, n)` is told when every backup
    has been delivered and checked (the guardians work in parallel in one native call)."""
    n = number_of_guardians
    if n < 1:
        raise InvalidInput("an election needs at least one guardian")
    if not 1 <= quorum <= n:
        raise InvalidInput(f"quorum must be in 1..{n} (the number of guardians)")
    if seeds is not None and len(seeds) != n:
        raise InvalidInput(f"{n} seeds expected, got {len(seeds)}")
    # one native call: guardians work in parallel, and the context is built from the records (read
    # and checked as EgContext(records, quorum, manifest) would) while the backups are exchanged
    # (eg_key_ceremony draws exactly as EgGuardian(…, seed) followed by backup_for in sequence order)
    guardians, backups, context = eg_key_ceremony(n, quorum, seeds, manifest)
    records = [g.public_record() for g in guardians]
    if progress is not None:
        progress(n, n)
    if context is None:  # not reached: a manifest was given
        raise VotumError("the key ceremony returned no context")
    return Ceremony(guardians, records, backups, context)
