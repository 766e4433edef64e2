"""The result a verification checked (spec/50.2), in one form for every record kind: contests of selections
with names and votes, who is elected, what else adds up the count, and the value that names the record checked
(its board head or record digest). `votum verify` prints it under the checks and gives it as `result` in
`--json`; it is read from the verifier's report alone (and, for an ElectionGuard record, the names in its
manifest), never recomputed here."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from votum._native import RecordReader
from votum.errors import VotumError
from votum.mix import votes_text
from votum.verifier import VerificationReport


@dataclass(frozen=True)
class Selection:
    name: str
    #: votes (STV: in units of 10^-9 of a vote, spec/91.4)
    votes: int
    #: the same, as shown (STV: in votes, to three places)
    shown: str
    elected: bool = False


@dataclass(frozen=True)
class Contest:
    name: str
    selections: list[Selection]
    #: what else the count says, one line each: blank and invalid ballots, exhausted ballots, the quota,
    #: a tie and how it was decided
    notes: list[str] = field(default_factory=list)
    #: the manifest's id of the contest (ElectionGuard records)
    contest_id: str | None = None


@dataclass(frozen=True)
class VerifiedResult:
    #: "board head" (mix, split-value, CHVote records) or "record digest" (ElectionGuard, spec/50.2)
    label: str
    digest: str
    contests: list[Contest]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def verified_result(report: VerificationReport, record: Path) -> VerifiedResult | None:
    """The result `report` verified, or None when the report holds none (an unreadable record)."""
    values = report.intermediates
    # ElectionGuard 1.x and 2.x: counts by "contest/option", named from the record's manifest
    eg_digest = {
        "V-RECORD-01": ("record_digest", "record digest"),
        "V-EG2-01": ("tally_sha256", "tally.json SHA-256"),
        "V-EG21-01": ("tally_sha256", "tally.json SHA-256"),
    }
    if report.readable in eg_digest:
        key, label = eg_digest[report.readable]
        digest = values.get(key)
        contests = eg_contests(values, record_manifest(record))
        if not isinstance(digest, str) or contests is None:
            return None
        return VerifiedResult(label, digest, contests)
    if report.readable == "V-IVXV-01":
        digest = values.get("proof_file_sha256")
        counts = values.get("counts")
        if not isinstance(digest, str) or not isinstance(counts, dict):
            return None
        return VerifiedResult("proof file SHA-256", digest, [_ivxv_contest(values)])
    if report.readable == "V-VMN-01":
        digest = values.get("protinfo_sha256")
        sessions = values.get("sessions")
        if not isinstance(digest, str) or not isinstance(sessions, list):
            return None
        contests = [_vmn_contest(s) for s in sessions if isinstance(s, dict) and s.get("counts")]
        return VerifiedResult("protInfo.xml SHA-256", digest, contests)
    head = values.get("head")
    if not isinstance(head, str):
        return None
    if report.readable == "V-BEL-01":
        contests = _belenios_contests(values) if "result" in values else []
    elif report.readable == "V-MIX-01":
        contests = [_mix_contest(values)] if "tallies" in values else []
    elif report.readable == "V-SV-01":
        contests = [_sv_contest(t) for t in values.get("tallies", [])]
    else:
        contests = [_chv_contest(values)] if "counts" in values else []
    return VerifiedResult("board head", head, contests)


def eg_contests(values: dict[str, Any], manifest: dict[str, Any]) -> list[Contest] | None:
    """An ElectionGuard record's contests from the verifier's recomputed values (`counts` by "contest/option",
    named from `manifest`), or None when the values hold no counts."""
    if not isinstance(values.get("counts"), dict):
        return None
    cast = values.get("cast")
    # a 2.x record says how many cast ballots hold each contest (a contest is on its styles' ballots only)
    per_contest = values.get("contest_ballots")
    # a 2.1 record whose guardians decrypted the contest data: the write-ins, each with its ballots
    write_ins = values.get("write_ins")
    return _eg_contests(
        values["counts"],
        manifest,
        cast if isinstance(cast, int) else None,
        per_contest if isinstance(per_contest, dict) else {},
        write_ins if isinstance(write_ins, dict) else {},
    )


def record_manifest(record: Path) -> dict[str, Any]:
    """The record's manifest (its first document in either form); {} when it cannot be read."""
    try:
        if record.is_dir():
            return dict(json.loads((record / "manifest.json").read_text()))
        for _kind, _path, text in RecordReader(record):
            return dict(json.loads(text))
    except (OSError, ValueError, TypeError, VotumError):
        pass  # the names are a courtesy: without them the ids are shown
    return {}


def _text(value: Any, fallback: str) -> str:
    """An ElectionGuard internationalized text's first value (a plain string is taken as it is)."""
    if isinstance(value, str) and value:
        return value
    try:
        return str(value["text"][0]["value"])
    except (KeyError, IndexError, TypeError):
        return fallback


def contest_label(contest: dict[str, Any]) -> str:
    """How a manifest's contest is named to people, in the verifier's output, on the pages and on the
    kiosk alike: its ballot title (what the voter read), else its name, else its id."""
    fallback = str(contest.get("name") or contest.get("object_id", ""))
    return _text(contest.get("ballot_title"), fallback)


def candidate_names(manifest: dict[str, Any]) -> dict[str, str]:
    """Candidate id -> the candidate's name (its id when the manifest gives none)."""
    return {
        str(c.get("object_id")): _text(c.get("name"), str(c.get("object_id")))
        for c in manifest.get("candidates", [])
    }


def elected_of(votes: list[tuple[str, int]], seats: int) -> tuple[set[str], list[str]]:
    """Who a count of `votes` (choice, votes) elects to `seats`: the choices with most votes, at least one
    each. A tie for the last seat(s) elects nobody at its edge: it returns those tied, in order, beside
    the elected."""
    ranked = sorted((v for _, v in votes), reverse=True)
    edge = ranked[min(seats, len(ranked)) - 1] if ranked else 0
    above = [c for c, v in votes if v > edge]
    level = [c for c, v in votes if v == edge > 0]
    if len(above) + len(level) <= seats:
        return set(above + level), []
    return set(above), level


def _eg_contests(
    counts: dict[str, int],
    manifest: dict[str, Any],
    cast: int | None,
    per_contest: dict[str, int],
    write_ins: dict[str, dict[str, int]] | None = None,
) -> list[Contest]:
    names = candidate_names(manifest)
    described = {c.get("object_id"): c for c in manifest.get("contests", [])}
    by_contest: dict[str, list[tuple[str, int]]] = {}
    for key, votes in counts.items():
        contest, _, selection = key.partition("/")
        by_contest.setdefault(contest, []).append((selection, int(votes)))
    out = []
    for contest_id, selections in by_contest.items():
        desc = described.get(contest_id, {})
        listed = sorted(desc.get("ballot_selections", []), key=lambda s: int(s.get("sequence_order", 0)))
        candidate_of = {s.get("object_id"): s.get("candidate_id") for s in listed}
        place = {s.get("object_id"): i for i, s in enumerate(listed)}
        selections.sort(key=lambda sv: (place.get(sv[0], len(place)), sv[0]))
        seats = int(desc.get("number_elected", 1) or 1)
        elected, level = elected_of(selections, seats)
        notes = []
        if level:
            tied = ", ".join(names.get(str(candidate_of.get(s)), s) for s in level)
            votes = dict(selections)[level[0]]
            notes.append(f"tie for the last seat between {tied} ({votes:,} votes each)")
        holding = per_contest.get(contest_id, cast)
        if isinstance(holding, int):
            # each cast ballot holding the contest holds `votes_allowed` votes in it, unused ones included
            allowed = int(desc.get("votes_allowed", seats) or seats)
            unused = holding * allowed - sum(v for _, v in selections)
            notes.insert(0, f"{holding:,} ballots cast × {allowed} votes allowed: undervotes {unused:,}")
        written = (write_ins or {}).get(contest_id)
        if written:
            ranked = sorted(written.items(), key=lambda tv: (-int(tv[1]), tv[0]))
            listed_ins = ", ".join(f"{text!r} {int(n):,}" for text, n in ranked)
            notes.append(f"write-ins (decrypted contest data, {sum(written.values()):,}): {listed_ins}")
        name = contest_label(desc) if desc else contest_id
        out.append(
            Contest(
                f"{name} ({seats} to elect)" if seats > 1 else name,
                [
                    Selection(names.get(str(candidate_of.get(s)), s), v, f"{v:,}", s in elected)
                    for s, v in selections
                ],
                notes,
                contest_id,
            )
        )
    return out


def _belenios_contests(values: dict[str, Any]) -> list[Contest]:
    """A Belenios election's questions with the counts its result proves (spec/94.5), by weight; a question
    that allows blank has its blank count as a note, since Belenios counts it in its own place. A mixnet
    question (spec/94.6) shows each distinct decrypted answer with how many ballots gave it."""
    contests = []
    for question, counts in zip(values.get("questions", []), values["result"], strict=False):
        if question.get("kind") == "mixnet":
            contests.append(_belenios_mixnet(question, counts))
            continue
        counts = [int(c) for c in counts]
        notes = []
        if question.get("blank"):
            notes.append(f"blank: {counts[0]}")
            counts = counts[1:]
        names = question.get("answers", [])
        rows = [Selection(str(n), c, str(c)) for n, c in zip(names, counts, strict=False)]
        contests.append(Contest(str(question.get("question", "")), rows, notes))
    return contests


def _belenios_mixnet(question: dict[str, Any], answers: list[list[int]]) -> Contest:
    names = [str(n) for n in question.get("answers", [])]
    tally: dict[str, int] = {}
    for answer in answers:
        text = ", ".join(f"{n} {v}" for n, v in zip(names, answer, strict=False))
        tally[text] = tally.get(text, 0) + 1
    rows = [Selection(t, n, str(n)) for t, n in sorted(tally.items(), key=lambda kv: (-kv[1], kv[0]))]
    notes = [
        f"mixnet question: {len(answers)} answers decrypted after the shuffles; no counting method applied"
    ]
    return Contest(str(question.get("question", "")), rows, notes)


def _ivxv_contest(values: dict[str, Any]) -> Contest:
    """The votes an IVXV proof file proves (spec/93.3: `district.choice`, party or question, candidate or
    answer, joined by 0x1F), most votes first; IVXV's seats are not in the file, so nobody is marked."""
    rows = []
    for vote, n in values["counts"].items():
        parts = str(vote).split("\x1f")
        name = f"{parts[2]} ({parts[1]}, {parts[0]})" if len(parts) == 3 else str(vote)
        rows.append(Selection(name, int(n), f"{int(n):,}"))
    rows.sort(key=lambda s: (-s.votes, s.name))
    return Contest(f"{values.get('election', 'IVXV')}: votes proven by the decryption proofs", rows)


def _vmn_contest(session: dict[str, Any]) -> Contest:
    """What a Verificatum session's plaintexts decode to (spec/99.7, VMN's encoding of bytes into group
    elements), each distinct one a row, most first: VMN fixes no ballot format, so nothing more is counted."""
    rows = [
        Selection(text if text else "(nothing encoded)", int(n), f"{int(n):,}")
        for text, n in session["counts"].items()
    ]
    rows.sort(key=lambda s: (-s.votes, s.name))
    notes = [
        f"{session.get('ciphertexts', 0):,} ciphertexts, {session.get('valid_shuffles', 0)} valid shuffles; "
        "each distinct plaintext is a row (VMN fixes no ballot format)"
    ]
    return Contest(f"nizkp/{session.get('auxsid', '')}: the decrypted plaintexts", rows, notes)


def _mix_contest(values: dict[str, Any]) -> Contest:
    stv = values.get("rule") == "stv"

    def shown(v: int) -> str:
        return votes_text(v, stv)

    rounds = [values["tallies"], *values.get("rounds", [])]
    winners = set(values.get("winners", []))
    last = rounds[-1]
    notes = [f"valid {values.get('valid', 0):,}, invalid {values.get('invalid', 0):,}"]
    if len(rounds) > 1:
        notes.append(f"{len(rounds)} rounds; votes shown are the last round's")
    if values.get("exhausted"):
        notes.append("exhausted per round: " + ", ".join(shown(int(x)) for x in values["exhausted"]))
    if values.get("rule") == "stv":
        notes.append(f"quota {shown(int(values.get('quota', 0)))}")
    rule = values.get("tie_rule", "lower-number")
    for t in values.get("ties", []):
        among = ", ".join(map(str, t["among"]))
        verb = {"elect": "elected", "eliminate": "eliminated"}.get(str(t["decision"]), str(t["decision"]))
        chosen = ", ".join(map(str, t["chosen"]))
        decided = f"candidate {chosen} {verb} by the rule {rule}" if chosen else f"not broken (rule {rule})"
        notes.append(f"tie in round {int(t['round']) + 1} between {among}: {decided}")
    if not winners:
        notes.append("nobody elected")
    return Contest(
        f"{values.get('rule', 'count')}",
        [
            Selection(f"candidate {i + 1}", int(v), shown(int(v)), i + 1 in winners)
            for i, v in enumerate(last)
        ],
        notes,
    )


def _sv_contest(tally: dict[str, Any]) -> Contest:
    names = list(tally.get("candidates", []))
    counts = [int(c) for c in tally.get("counts", [])]
    labels = [names[i] if i < len(names) else f"candidate {i + 1}" for i in range(len(counts))]
    elected, tied = elected_of(list(zip(labels, counts, strict=True)), 1)
    notes = [f"blank {int(tally.get('blank', 0)):,}, invalid {int(tally.get('invalid', 0)):,}"]
    if tied:
        notes.append("tie for the lead between " + ", ".join(tied))
    return Contest(
        str(tally.get("race", "race")),
        [Selection(label, c, f"{c:,}", label in elected) for label, c in zip(labels, counts, strict=True)],
        notes,
    )


def _chv_contest(values: dict[str, Any]) -> Contest:
    counts = [int(c) for c in values.get("counts", [])]
    return Contest(
        "votes per candidate",
        [Selection(f"candidate {i + 1}", c, f"{c:,}") for i, c in enumerate(counts)],
        [f"invalid {int(values.get('invalid', 0)):,}"],
    )
