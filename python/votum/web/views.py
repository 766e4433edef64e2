"""What the pages show, read from the store: a manifest's contests with readable names, fingerprints,
a ballot's place on the board, a spoiled ballot's decryption, the published counts. Each function
reads only public board entries; none reads anything a guardian or a device keeps."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from votum.fingerprints import fingerprint, key_fingerprint
from votum.mix import votes_text
from votum.results import candidate_names, contest_label, elected_of
from votum.store import ElectionRow, Entry, Store


def _is_hex(text: str) -> bool:
    return bool(text) and all(c in "0123456789abcdefABCDEF" for c in text)


def _text(name: Any) -> str | None:
    """The first value of an ElectionGuard `InternationalizedText` (or None)."""
    if isinstance(name, dict):
        for t in name.get("text") or []:
            if isinstance(t, dict) and t.get("value"):
                return str(t["value"])
    if isinstance(name, list):  # 2.x manifests: a list of {language, value}
        for t in name:
            if isinstance(t, dict) and t.get("value"):
                return str(t["value"])
    if isinstance(name, str) and name:
        return name
    return None


@dataclass
class Choice:
    selection_id: str
    label: str


@dataclass
class Contest:
    contest_id: str
    label: str
    votes_allowed: int
    choices: list[Choice] = field(default_factory=list)
    #: seats the contest fills
    number_elected: int = 1


def contests_of(manifest: dict[str, Any]) -> list[Contest]:
    """The manifest's contests in ballot order, each with its choices named by candidate (the
    candidate's name when the manifest gives one, else its id)."""
    names = candidate_names(manifest)
    out = []
    for c in sorted(manifest.get("contests", []), key=lambda c: c.get("sequence_order", 0)):
        contest = Contest(
            c["object_id"],
            contest_label(c),
            int(c.get("votes_allowed") or c.get("number_elected") or 1),
            number_elected=int(c.get("number_elected") or 1),
        )
        for s in sorted(c.get("ballot_selections", []), key=lambda s: s.get("sequence_order", 0)):
            contest.choices.append(Choice(s["object_id"], names.get(s.get("candidate_id"), s["object_id"])))
        out.append(contest)
    return out


@dataclass
class Title:
    """What a manifest says of its election, for lists: its name and dates (ISO text), when given."""

    name: str | None
    start: str | None
    end: str | None


def title_of(manifest: dict[str, Any]) -> Title:
    def day(value: Any) -> str | None:
        return str(value)[:10] if isinstance(value, str) and value else None

    return Title(_text(manifest.get("name")), day(manifest.get("start_date")), day(manifest.get("end_date")))


def manifest_of(store: Store, election_id: str) -> dict[str, Any]:
    entry = store.entry_named(election_id, "manifest.json")
    return json.loads(entry.text()) if entry is not None else {}


@dataclass
class Overview:
    #: each guardian who posted a record, with its election public key's fingerprint
    guardians: list[tuple[str, str]]
    manifest: str | None
    context: str | None
    joint_key: str | None
    manifest_hash: str | None


def overview(store: Store, election_id: str) -> Overview:
    """The guardians who posted records with their keys' fingerprints, and the fingerprints of the manifest,
    the context and the joint key (the last two once the election is open); keys in `key_fingerprint`'s form,
    the one `votum ceremony` prints."""
    guardians = []
    for e in store.iter_entries(election_id, ["guardian"]):
        doc = json.loads(e.text())
        key = doc.get("election_public_key")
        shown = key_fingerprint(key) if isinstance(key, str) and _is_hex(key) else "—"
        guardians.append((str(doc.get("guardian_id", e.name)), shown))
    manifest = store.entry_named(election_id, "manifest.json")
    context = store.entry_named(election_id, "context.json")
    joint = manifest_hash = None
    if context is not None:
        doc = json.loads(context.text())
        key = doc.get("elgamal_public_key")
        joint = key_fingerprint(key) if isinstance(key, str) and _is_hex(key) else None
        manifest_hash = doc.get("manifest_hash")
    return Overview(
        guardians=guardians,
        manifest=fingerprint(manifest.payload or b"") if manifest is not None else None,
        context=fingerprint(context.payload or b"") if context is not None else None,
        joint_key=joint,
        manifest_hash=manifest_hash,
    )


@dataclass
class Tracked:
    ballot_id: str
    state: str
    code: str
    entry: Entry
    previous_hash: str | None
    head_seq: int
    #: for a spoiled ballot once published: (contest label, [(choice label, decrypted value)])
    decryption: list[tuple[str, list[tuple[str, int]]]] | None
    #: for a 2.1 printed ballot never recorded, once published: (contest label, [(option label or None for
    #: a null vector, short code)]) in printed order
    sheet: list[tuple[str, list[tuple[str | None, str]]]] | None = None
    #: for a 2.1 pre-encrypted ballot recorded: (contest label, [short codes of the vectors chosen])
    chosen: list[tuple[str, list[str]]] | None = None


#: what can be a ballot code once spaces and dashes are gone: hex, at least 64 bits of it
CODE = re.compile(r"[0-9a-fA-F]{16,}")


def normalise(query: str) -> str:
    """What a voter typed, without spaces or the dashes a printed code may carry (a ballot id is only
    trimmed)."""
    compact = "".join(query.split()).replace("-", "")
    return compact if CODE.fullmatch(compact) else query.strip()


def track(store: Store, election: ElectionRow, query: str) -> Tracked | None:
    """The ballot whose code (any case, spaces ignored) or id is `query`, or None."""
    election_id = election.id
    query = normalise(query)
    if not query or len(query) > 128:
        return None
    # 1.0's codes and 2.1's are both stored in upper-case hex, as their records write them
    row = store.ballot_by_code(election_id, query.upper()) if CODE.fullmatch(query) else None
    if row is None:
        row = store.ballot(election_id, query)
    if row is None:
        return None
    entry = store.entry(election_id, row.seq)
    previous = store.entry(election_id, row.seq - 1).hash.hex() if row.seq > 0 else None
    decryption = None
    if row.state == "spoiled":
        spoiled = store.entry_named(election_id, f"spoiled_ballots/spoiled_ballot_{row.ballot_id}.json")
        # a 2.1 challenged ballot's opening, on the board once the election is published (spec/80.11)
        opened = store.entry_named(election_id, f"eg21/challenged/{row.ballot_id}.json")
        if spoiled is not None:
            decryption = _decrypted(manifest_of(store, election_id), json.loads(spoiled.text()))
        elif opened is not None:
            decryption = Labels2x(manifest_of(store, election_id)).opened(json.loads(opened.text()))
    sheet = chosen = None
    if entry.kind == "eg21_recorded":
        # a recorded pre-encrypted ballot: its marks' short codes, for the voter to compare with the paper
        chosen = Labels2x(manifest_of(store, election_id)).chosen(json.loads(entry.text()))
    if row.state == "printed":
        # never recorded: uncast, and opened once the election is published (spec/80.11)
        opened = store.entry_named(election_id, f"eg21/challenged/{row.ballot_id}.json")
        if opened is not None:
            sheet = Labels2x(manifest_of(store, election_id)).sheet(json.loads(opened.text()))
    return Tracked(
        row.ballot_id, row.state, row.code, entry, previous, election.head_seq, decryption, sheet, chosen
    )


class Labels2x:
    """Contests and options of a 2.x manifest by their sequence numbers, named as the results name them."""

    def __init__(self, manifest: dict[str, Any]) -> None:
        names = candidate_names(manifest)
        self.contests: dict[Any, str] = {}
        self.options: dict[tuple[Any, Any], str] = {}
        self.by_id: dict[str, str] = {}
        for c in manifest.get("contests", []) if isinstance(manifest.get("contests"), list) else []:
            if not isinstance(c, dict):
                continue
            index = c.get("sequence_order")
            self.contests[index] = contest_label(c)
            for s in c.get("ballot_selections", []) or []:
                if isinstance(s, dict):
                    label = names.get(str(s.get("candidate_id")), str(s.get("object_id")))
                    self.options[(index, s.get("sequence_order"))] = label
                    self.by_id[str(s.get("object_id"))] = label

    def contest(self, index: Any) -> str:
        return self.contests.get(index, str(index))

    def option(self, contest: Any, option: Any) -> str:
        return self.options.get((contest, option), str(option))

    def chosen(self, ballot: dict[str, Any]) -> list[tuple[str, list[str]]]:
        """A recorded pre-encrypted ballot (a line of `ballots.jsonl`): per contest, its label and the short
        codes of the vectors chosen."""
        return [
            (
                self.contest(c.get("index")),
                [str(v.get("short_code")) for v in c.get("chosen", []) if isinstance(v, dict)],
            )
            for c in ballot.get("contests", [])
            if isinstance(c, dict)
        ]

    def sheet(self, opening: dict[str, Any]) -> list[tuple[str, list[tuple[str | None, str]]]]:
        """An uncast pre-encrypted ballot's opening: per contest, its label and (option label, or None for a
        null vector; the short code printed beside it), in printed order."""
        return [
            (
                self.contest(c.get("index")),
                [
                    (
                        self.by_id.get(str(v.get("label")), str(v.get("label")))
                        if v.get("label") is not None
                        else None,
                        str(v.get("short_code")),
                    )
                    for v in c.get("vectors", [])
                    if isinstance(v, dict)
                ],
            )
            for c in opening.get("contests", [])
            if isinstance(c, dict)
        ]

    def opened(self, opening: dict[str, Any]) -> list[tuple[str, list[tuple[str, int]]]]:
        """A 2.1 challenged ballot's opening (a line of `challenged.jsonl`): per contest, its label and
        (option label, vote) pairs."""
        contests = [c for c in opening.get("contests", []) if isinstance(c, dict)]
        return [
            (
                self.contest(c.get("index")),
                [
                    (self.option(c.get("index"), s.get("option")), int(s["vote"]))
                    for s in c.get("selections", [])
                    if isinstance(s, dict) and isinstance(s.get("vote"), int)
                ],
            )
            for c in contests
        ]


def _decrypted(
    manifest: dict[str, Any], plaintext: dict[str, Any]
) -> list[tuple[str, list[tuple[str, int]]]]:
    """A decrypted ballot (an ElectionGuard 1.4 PlaintextTally of one ballot), contest by contest in
    the manifest's order, each choice with its decrypted value."""
    contests = plaintext.get("contests", {})
    out = []
    for contest in contests_of(manifest):
        selections = (contests.get(contest.contest_id) or {}).get("selections", {})
        values = []
        for choice in contest.choices:
            sel = selections.get(choice.selection_id)
            if sel is not None:
                values.append((choice.label, int(sel.get("tally", 0))))
        if values:
            out.append((contest.label, values))
    return out


@dataclass
class ContestResult:
    contest: Contest
    #: each choice: its label, votes, share of the contest's votes (undervotes included) and whether elected
    rows: list[tuple[str, int, float, bool]]
    total: int
    #: the votes the cast ballots left unused (cast × allowed − votes); None when the cast count is unknown
    undervotes: int | None = None
    #: the choices tied for the last seat(s), none of them marked elected
    tied: list[str] = field(default_factory=list)


def results(manifest: dict[str, Any], counts: dict[str, int], cast: int | None = None) -> list[ContestResult]:
    """The published counts by contest: each choice's votes, its share of every vote the `cast` ballots
    held (so that votes and undervotes add up to cast × votes allowed), and who is elected: the
    `number_elected` choices with most votes, at least one each; a tie for the last seat is shown as one
    and decides nothing."""
    out = []
    for contest in contests_of(manifest):
        votes = [(c.label, int(counts.get(c.selection_id, 0))) for c in contest.choices]
        total = sum(v for _, v in votes)
        undervotes = None if cast is None else max(cast * contest.votes_allowed - total, 0)
        whole = total + (undervotes or 0)
        elected, tied = elected_of(votes, contest.number_elected)
        rows = [(label, v, v / whole if whole else 0.0, label in elected) for label, v in votes]
        out.append(ContestResult(contest, rows, total, undervotes, tied))
    return out


@dataclass
class Verified:
    """What the latest verification of an election says of its published result."""

    #: every check passed on the record at `head`
    passed: bool
    head: str
    #: the record's digest as the verifier computed it (spec/50.2), if it reported one
    digest: str | None
    #: the verifier's recomputed counts are the published ones
    same_counts: bool


def verified(report: dict[str, Any], head: str, published: dict[str, int]) -> Verified:
    """Reads a verification report (the web's run, `votum.web.verify_run`) against the published counts."""
    values = report.get("values", {})
    passed = bool(report.get("passed")) and bool(report.get("checks"))
    counts = values.get("counts")
    same = isinstance(counts, dict) and {k.split("/", 1)[-1]: int(v) for k, v in counts.items()} == {
        k: int(v) for k, v in published.items()
    }
    digest = values.get("record_digest")
    return Verified(passed, head, digest if isinstance(digest, str) else None, same)


#: how a later round shows a candidate who is out of the count
OUT = "—"


@dataclass
class MixOutcome:
    rule: str
    candidates: int
    valid: int
    invalid: int
    winners: list[int]
    #: per round (the first is the first-preference count): each candidate's votes, shown as text
    rounds: list[list[str]]
    #: the same, as shares of the largest figure of the count (0–100), for the bars
    widths: list[list[float]]
    #: per round, the ballots (STV: votes) with no continuing candidate left, shown; empty for unranked rules
    exhausted: list[str] = field(default_factory=list)
    #: the STV quota, shown; None under the other rules
    quota: str | None = None
    #: the rule that broke ties, as the parameters state it
    tie_rule: str = "lower-number"
    #: every tie that decided something: round (1-based here), decision, tied candidates, the ones chosen
    ties: list[dict[str, Any]] = field(default_factory=list)


def mix_outcome(values: dict[str, Any]) -> MixOutcome | None:
    """The outcome of a mixnet election as the verifier recounted it (its recomputed values), every
    round of a ranked count (IRV, STV) included; None when the values lack it."""
    try:
        rule = str(values["rule"])
        raw = [list(map(int, values["tallies"]))] + [list(map(int, r)) for r in values.get("rounds", [])]
        candidates = int(values["candidates"])
    except (KeyError, TypeError, ValueError):
        return None
    stv = rule == "stv"
    top = max((v for r in raw for v in r), default=0) or 1
    # after the first round a candidate without votes is out of the count (eliminated, or never had any)
    shown = [
        [OUT if k and v == 0 else votes_text(v, stv, grouped=False) for v in r] for k, r in enumerate(raw)
    ]
    widths = [[round(100 * v / top, 2) for v in r] for r in raw]
    ties = [
        {
            "round": int(t["round"]) + 1,
            "decision": str(t["decision"]),
            "among": ", ".join(str(int(c)) for c in t["among"]),
            "chosen": ", ".join(str(int(c)) for c in t["chosen"]),
        }
        for t in values.get("ties", [])
    ]
    return MixOutcome(
        rule,
        candidates,
        int(values.get("valid", 0)),
        int(values.get("invalid", 0)),
        [int(w) for w in values.get("winners", [])],
        shown,
        widths,
        exhausted=[votes_text(int(x), stv, grouped=False) for x in values.get("exhausted", [])],
        quota=votes_text(int(values["quota"]), stv, grouped=False) if stv and "quota" in values else None,
        tie_rule=str(values.get("tie_rule", "lower-number")),
        ties=ties,
    )


@dataclass
class Operation:
    """One operation of the HTTP API as the API page lists it."""

    method: str
    path: str
    summary: str
    description: str
    #: (name, where: path/query/header, required, type)
    parameters: list[tuple[str, str, bool, str]]
    #: the request body's schema name, if any
    body: str | None
    #: (status, description)
    responses: list[tuple[str, str]]
    tag: str


def api_operations(spec: dict[str, Any]) -> list[Operation]:
    """Every operation of an OpenAPI document, by tag and path."""
    out = []
    for path, item in spec.get("paths", {}).items():
        for method, op in item.items():
            if method not in ("get", "post", "put", "delete", "patch"):
                continue
            params = [
                (
                    str(p.get("name")),
                    str(p.get("in")),
                    bool(p.get("required")),
                    str(
                        p.get("schema", {}).get(
                            "type", p.get("schema", {}).get("$ref", "").rsplit("/", 1)[-1]
                        )
                    ),
                )
                for p in op.get("parameters", [])
            ]
            body = None
            for media in op.get("requestBody", {}).get("content", {}).values():
                ref = media.get("schema", {}).get("$ref")
                body = ref.rsplit("/", 1)[-1] if ref else str(media.get("schema", {}).get("type", "body"))
                break
            responses = [
                (code, str(r.get("description", ""))) for code, r in sorted(op.get("responses", {}).items())
            ]
            out.append(
                Operation(
                    method.upper(),
                    path,
                    str(op.get("summary", "")),
                    str(op.get("description", "")).strip(),
                    params,
                    body,
                    responses,
                    str((op.get("tags") or ["other"])[0]),
                )
            )
    out.sort(key=lambda o: (o.tag, o.path, o.method))
    return out
