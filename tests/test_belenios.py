"""Belenios elections checked by `votum verify` (issue 41, item 2; spec/94, V-BEL-01..10).

Each election is held in the test itself with Debian's belenios-tool 2.0: trustees (single and a threshold
group), credentials with weights, ballots, a revote, the tally and its partial decryptions, on both of
Belenios' groups. Each archive, honest or tampered, gets votum's verdict and belenios-tool's own
(`belenios-tool election verify`), and the two must agree, except where belenios-tool 2.0 is known to accept a
forged record (spec/94.5)."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import belenios_tool as bt
import pytest
from typer.testing import CliRunner
from votum.cli import app
from votum.verifier import verify

# voter i's choices: Q1 = [blank, a, b], Q2 = [x, y, z] (1 to 2 of them)
VOTES = [[[0, 1, 0], [1, 1, 0]], [[1, 0, 0], [0, 0, 1]], [[0, 0, 1], [0, 1, 0]], [[0, 1, 0], [0, 1, 1]]]
REVOTE = [[0, 0, 1], [1, 0, 0]]  # voter 0 changes their mind
WEIGHTS = (1, 2, 1, 1)


def expected_counts(votes: list[list[list[int]]], weights: tuple[int, ...]) -> list[list[int]]:
    return [
        [sum(w * v[q][k] for v, w in zip(votes, weights, strict=True)) for k in range(len(votes[0][q]))]
        for q in range(len(votes[0]))
    ]


@dataclass
class Held:
    election: bt.Election
    counts: list[list[int]]


def hold(dir: Path, group: str, threshold: tuple[int, int] | None, owners: list[int]) -> Held:
    election = bt.setup(dir, group=group, weights=WEIGHTS, singles=1, threshold=threshold)
    for i, choices in enumerate(VOTES):
        election.vote(i, choices)
    election.vote(0, REVOTE)
    election.tally(owners)
    final = [REVOTE, *VOTES[1:]]
    return Held(election, expected_counts(final, WEIGHTS))


@pytest.fixture(scope="module")
def threshold_2048(tmp_path_factory: pytest.TempPathFactory) -> Held:
    """BELENIOS-2048: one single trustee and a 2-of-3 group, of which trustees 2 and 4 decrypt."""
    return hold(tmp_path_factory.mktemp("bel") / "t2048", "BELENIOS-2048", (3, 2), [1, 2, 4])


@pytest.fixture(scope="module")
def single_3526(tmp_path_factory: pytest.TempPathFactory) -> Held:
    """RFC-3526-2048 (the group for mixnet questions, here with homomorphic ones): one single trustee."""
    return hold(tmp_path_factory.mktemp("bel") / "s3526", "RFC-3526-2048", None, [1])


def votum_failing(archive: Path) -> list[str]:
    return verify(archive).not_passed()


@pytest.mark.parametrize("which", ["threshold_2048", "single_3526"])
def test_an_election_held_with_belenios_tool_passes_with_its_counts(
    which: str, request: pytest.FixtureRequest
) -> None:
    held: Held = request.getfixturevalue(which)
    ok, said = held.election.verify()
    assert ok, said
    out = CliRunner().invoke(app, ["verify", "--json", str(held.election.archive)])
    assert out.exit_code == 0, out.output
    shown = json.loads(out.stdout)
    assert all(c["status"] == "pass" for c in shown["checks"]), shown["checks"]
    contests = shown["result"]["contests"]
    # Q1 allows blank: its first count is the blank one, shown as a note
    q1, q2 = held.counts
    assert [s["votes"] for s in contests[0]["selections"]] == q1[1:]
    assert contests[0]["notes"] == [f"blank: {q1[0]}"]
    assert [s["votes"] for s in contests[1]["selections"]] == q2
    assert [s["name"] for s in contests[1]["selections"]] == ["x", "y", "z"]


def edit_json(change: Callable[[dict], None] | Callable[[list], None]) -> Callable[[bytes], bytes]:
    def run(data: bytes) -> bytes:
        doc = json.loads(data)
        change(doc)
        return json.dumps(doc, separators=(",", ":")).encode()

    return run


def resigned(held: Held, voter: int, change: Callable[[dict], None]) -> Callable[[bytes], bytes]:
    """A ballot changed and signed again with its voter's credential: a cheating voting client."""

    def run(data: bytes) -> bytes:
        ballot = json.loads(data)
        change(ballot)
        return bt.resign(ballot, held.election.credentials[voter], held.election.uuid, held.election.group)

    return run


def flip_last_byte(data: bytes) -> bytes:
    return data[:-2] + bytes([data[-2] ^ 1]) + data[-1:]


def bump_response(ballot: dict) -> None:
    proof = ballot["answers"][1]["individual_proofs"][0][0]
    proof["response"] = bt.bump(proof["response"])


def two_is_one(ballot: dict, group: str) -> None:
    """The first ciphertext squared (it now holds 2 or 0), its proofs left as they were."""
    c = ballot["answers"][1]["choices"][0]
    p = bt.GROUPS[group]["p"]
    c["alpha"], c["beta"] = str(pow(int(c["alpha"]), 2, p)), str(pow(int(c["beta"]), 2, p))


# (name, role of the entry changed, which one, the change, re-hash, the check votum fails,
#  belenios-tool's verdict)
TAMPERS: list[tuple[str, str, int, Callable[[Held], Callable[[bytes], bytes]], bool, str, bool]] = [
    ("byte changed, names kept", "ballot", 1, lambda h: flip_last_byte, False, "V-BEL-01", False),
    (
        "unknown group",
        "election",
        0,
        lambda h: edit_json(lambda e: e.update(group="P-256")),
        True,
        "V-BEL-02",
        False,
    ),
    (
        "trustee's proof of knowledge",
        "trustees",
        0,
        lambda h: edit_json(lambda t: t[0][1]["pok"].update(response=bt.bump(t[0][1]["pok"]["response"]))),
        True,
        "V-BEL-03",
        False,
    ),
    (
        "credential listed twice",
        "credentials",
        0,
        lambda h: edit_json(lambda c: c.append(c[0])),
        True,
        "V-BEL-04",
        False,
    ),
    (
        "ballot changed after signing",
        "ballot",
        2,
        lambda h: edit_json(
            lambda b: b["answers"][0]["choices"][0].update(alpha=b["answers"][0]["choices"][1]["alpha"])
        ),
        True,
        "V-BEL-05",
        False,
    ),
    (
        "proof response changed, signed again",
        "ballot",
        1,
        lambda h: resigned(h, 1, bump_response),
        True,
        "V-BEL-06",
        False,
    ),
    (
        "a choice worth two, signed again",
        "ballot",
        3,
        lambda h: resigned(h, 3, lambda b: two_is_one(b, h.election.group)),
        True,
        "V-BEL-06",
        False,
    ),
    (
        "published tally not the ballots'",
        "tally",
        0,
        lambda h: edit_json(lambda t: t[1].reverse()),
        True,
        "V-BEL-07",
        True,  # belenios-tool 2.0 recomputes the tally and never reads the published one
    ),
    (
        "decryption factor changed",
        "partial",
        0,
        lambda h: edit_json(
            lambda d: d["decryption_factors"][1].__setitem__(0, d["decryption_factors"][1][1])
        ),
        True,
        "V-BEL-08",
        False,
    ),
    (
        "count changed",
        "result",
        0,
        lambda h: edit_json(lambda r: r["result"][1].__setitem__(0, r["result"][1][0] + 1)),
        True,
        "V-BEL-09",
        False,
    ),
]


@pytest.mark.parametrize(
    ("name", "role", "nth", "change", "rehash", "check", "belenios_accepts"),
    TAMPERS,
    ids=[t[0] for t in TAMPERS],
)
def test_each_tampering_fails_its_check_with_belenios_tools_verdict(
    threshold_2048: Held,
    tmp_path: Path,
    name: str,
    role: str,
    nth: int,
    change: Callable[[Held], Callable[[bytes], bytes]],
    rehash: bool,
    check: str,
    belenios_accepts: bool,
) -> None:
    copy = threshold_2048.election.copy(tmp_path / "copy")
    bt.tamper(threshold_2048.election.archive, copy.archive, role, change(threshold_2048), nth, rehash)
    ok, said = copy.verify()
    assert ok == belenios_accepts, said
    failing = votum_failing(copy.archive)
    assert failing and failing[0] == check, failing
    out = CliRunner().invoke(app, ["verify", str(copy.archive)])
    assert out.exit_code == 1 and check in out.output


def test_a_ballot_for_another_election_is_refused_by_both(threshold_2048: Held, tmp_path: Path) -> None:
    """A ballot made for another election (another uuid and key), cast into this one's archive by a server
    that does not check it."""
    other = bt.setup(tmp_path / "other", weights=(1,))
    copy = threshold_2048.election.copy(tmp_path / "copy")
    entries = bt.read_archive(copy.archive)
    # the archive up to the last ballot, then the foreign ballot
    end = next(i for i, (n, d, _) in enumerate(entries) if n.endswith(".event.json") and b'"EndBallots"' in d)
    bt.write_archive(copy.archive, entries[:end])
    copy.add("Ballot", other.ballot(0, VOTES[0]))
    ok, said = copy.verify()
    assert not ok, said
    assert votum_failing(copy.archive) == ["V-BEL-05"]


def test_an_election_in_progress_passes_what_it_holds(tmp_path: Path) -> None:
    """An archive read during the voting phase: the setup and the ballots are checked, the tally's checks are
    not run, and the whole passes (as belenios-tool says, with its warning that there is no result)."""
    election = bt.setup(tmp_path / "open", weights=(1, 1))
    election.vote(0, VOTES[0])
    ok, said = election.verify()
    assert ok and "no result" in said
    report = verify(election.archive)
    assert report.passed
    tally = report.check("V-BEL-07")
    assert report.check("V-BEL-06").checked == 1
    assert tally.checked == 0 and "ends before the tally" in tally.warnings[0][1]


def test_the_kind_is_detected_from_the_bytes_or_named_with_format(tmp_path: Path) -> None:
    """Issue 41, item 4: a Belenios archive is recognised by its first entry whatever its file name;
    `--format` names the kind instead, and a record that is not of the kind named fails that kind's
    readability check; an unknown kind is a usage error."""
    stored = next(
        (Path(__file__).resolve().parent.parent / "vectors" / "belenios" / "single-3526").glob("*.bel")
    )
    renamed = tmp_path / "archive-without-extension"
    renamed.write_bytes(stored.read_bytes())
    assert verify(renamed).readable == "V-BEL-01"
    assert verify(renamed).passed
    out = CliRunner().invoke(app, ["verify", "--format", "belenios", str(renamed)])
    assert out.exit_code == 0, out.output
    forced = verify(renamed, format="ivxv")
    assert forced.readable == "V-IVXV-01" and forced.check("V-IVXV-01").status == "error"
    out = CliRunner().invoke(app, ["verify", "--format", "ivxv", str(renamed)])
    assert out.exit_code == 1 and "V-IVXV-01" in out.output
    out = CliRunner().invoke(app, ["verify", "--format", "belenio", str(renamed)])
    assert out.exit_code == 2 and "one of electionguard" in out.output
    with pytest.raises(ValueError, match="unknown record format"):
        verify(renamed, format="belenio")


MIXNET = {
    "description": "d",
    "name": "mixnet",
    "questions": [
        {"question": "Q1", "answers": ["a", "b"], "min": 0, "max": 1},
        {"type": "NonHomomorphic", "value": {"question": "rank", "answers": ["x", "y", "z"]}},
    ],
}
MIXNET_VOTES = [[[1, 0], [1, 2, 3]], [[0, 1], [3, 1, 2]], [[0, 1], [2, 3, 1]]]


def mixnet_election(dir: Path) -> bt.Election:
    """RFC-3526-2048, two single trustees, three voters, a homomorphic question and a ranking (mixnet)
    question; the ballots are in, the tally is not."""
    election = bt.setup(dir, group="RFC-3526-2048", weights=(1, 1, 1), singles=2, questions=MIXNET)
    for i, choices in enumerate(MIXNET_VOTES):
        election.vote(i, choices)
    return election


@pytest.fixture(scope="module")
def mixnet_3526(tmp_path_factory: pytest.TempPathFactory) -> bt.Election:
    """Both trustees shuffle in turn, both decrypt."""
    election = mixnet_election(tmp_path_factory.mktemp("bel") / "mixnet")
    election.tally(shufflers=[1, 2])
    return election


def test_a_mixnet_election_passes_with_its_rankings(mixnet_3526: bt.Election) -> None:
    """The shuffles' proofs (V-BEL-10), the answers' proofs, the sorted tally and the decrypted rankings
    (spec/94.6), as belenios-tool verifies them too."""
    ok, said = mixnet_3526.verify()
    assert ok, said
    report = verify(mixnet_3526.archive)
    assert report.passed, report.not_passed()
    assert report.check("V-BEL-10").checked == 2 and not report.check("V-BEL-10").findings
    values = report.intermediates
    assert values["result"][0] == ["1", "2"]
    assert sorted(values["result"][1]) == sorted(v[1] for v in MIXNET_VOTES)
    assert values["questions"][1]["kind"] == "mixnet"
    out = CliRunner().invoke(app, ["verify", str(mixnet_3526.archive)])
    assert out.exit_code == 0, out.output
    assert "rank" in out.output and "x 1, y 2, z 3" in out.output


def swap_outputs(data: bytes) -> bytes:
    shuffle = json.loads(data)
    shuffle["ciphertexts"][0][0], shuffle["ciphertexts"][0][1] = (
        shuffle["ciphertexts"][0][1],
        shuffle["ciphertexts"][0][0],
    )
    return json.dumps(shuffle, separators=(",", ":")).encode()


def bump_shuffle_response(data: bytes) -> bytes:
    shuffle = json.loads(data)
    shuffle["proofs"][0][1][3] = bt.bump(shuffle["proofs"][0][1][3])
    return json.dumps(shuffle, separators=(",", ":")).encode()


@pytest.mark.parametrize(
    ("role", "nth", "change", "check"),
    [
        ("shuffle", 0, swap_outputs, "V-BEL-10"),
        ("shuffle", 1, bump_shuffle_response, "V-BEL-10"),
        ("owned_shuffle", 1, lambda d: d.replace(b'"owner":2', b'"owner":1'), "V-BEL-10"),
        ("result", 0, edit_json(lambda r: r["result"][1][0].reverse()), "V-BEL-09"),
    ],
    ids=["outputs swapped", "a response changed", "a trustee shuffles twice", "a ranking reversed"],
)
def test_each_mixnet_tampering_fails_its_check(
    mixnet_3526: bt.Election,
    tmp_path: Path,
    role: str,
    nth: int,
    change: Callable[[bytes], bytes],
    check: str,
) -> None:
    """A server that rewrites the archive (every hash remade): votum names the check; belenios-tool refuses
    the same archive, except a trustee shuffling twice, which it does not look at."""
    copy = mixnet_3526.copy(tmp_path / "copy")
    bt.tamper(mixnet_3526.archive, copy.archive, role, change, nth)
    ok, said = copy.verify()
    assert ok == (role == "owned_shuffle"), said
    assert votum_failing(copy.archive)[0] == check


def partial_by_hand(election: bt.Election, owner: int) -> str:
    """Trustee `owner`'s honest partial decryption of the tally as published (factors α^x and their
    proofs, spec/94.5), made here because belenios-tool refuses to decrypt mixnet answers that no one
    shuffled; returns the owned entry's JSON and posts the partial decryption's data."""
    group = bt.GROUPS[election.group]
    p, g, q = group["p"], group["g"], group["q"]
    x = int(json.loads(election.singles[owner - 1].read_text()))
    entries = bt.read_archive(election.archive)
    role = bt.roles(entries)
    election_bytes = next(d for n, d, _ in entries if role.get(n.split(".")[0]) == "election")
    tally = json.loads(next(d for n, d, _ in entries if role.get(n.split(".")[0]) == "tally"))
    phi = bt.b64(hashlib.sha256(election_bytes).digest())
    big_x = pow(g, x, p)
    factors, proofs = [], []
    for question in tally:
        fs, ps = [], []
        for c in question:
            alpha = int(c["alpha"])
            w = int.from_bytes(os.urandom(64), "big") % q
            a, b = pow(g, w, p), pow(alpha, w, p)
            challenge = int(hashlib.sha256(f"decrypt|{phi}|{big_x}|{a},{b}".encode()).hexdigest(), 16) % q
            fs.append(str(pow(alpha, x, p)))
            ps.append({"challenge": str(challenge), "response": str((w - x * challenge) % q)})
        factors.append(fs)
        proofs.append(ps)
    return json.dumps({"decryption_factors": factors, "decryption_proofs": proofs}, separators=(",", ":"))


def test_mixnet_answers_decrypted_with_no_shuffle_fail_v_bel_10(tmp_path: Path) -> None:
    """Every trustee decrypts the tally's mixnet ciphertexts as the ballots hold them: each ranking is then
    linked to its ballot. belenios-tool's own decrypt refuses to do it, but its verify passes the record;
    votum fails it under V-BEL-10 (spec/94.6), and still checks the decryption and the result."""
    election = mixnet_election(tmp_path / "noshuffle")
    election.add("EndBallots")
    election.add("EncryptedTally", election.encrypted_tally())
    refused = bt.run(
        ["election", "decrypt", "--privkey", str(election.singles[0]), "--trustee-id", "1"],
        election.dir,
        check=False,
    )
    assert refused.returncode != 0 and "no shuffles" in refused.stderr
    for owner in (1, 2):
        partial = partial_by_hand(election, owner)
        data = hashlib.sha256(partial.encode()).hexdigest()
        entries = bt.read_archive(election.archive)
        bt.write_archive(
            election.archive, [*entries, (f"{data}.data.json", partial.encode(), entries[-1][2])]
        )
        election.add(
            "PartialDecryption", json.dumps({"owner": owner, "payload": data}, separators=(",", ":"))
        )
    election.add("Result", election.result())
    ok, said = election.verify()
    assert ok, said
    report = verify(election.archive)
    assert report.not_passed() == ["V-BEL-10"]
    assert "no shuffle" in report.check("V-BEL-10").findings[0][1]
    assert sorted(report.intermediates["result"][1]) == sorted(v[1] for v in MIXNET_VOTES)


def test_fewer_shufflers_than_trustees_pass_with_a_warning(tmp_path: Path) -> None:
    """Belenios' server lets the administrator skip a trustee's shuffle: the record passes, and V-BEL-10 says
    whose shuffles the answers' privacy rests on."""
    election = mixnet_election(tmp_path / "one")
    election.tally(shufflers=[2])
    ok, said = election.verify()
    assert ok, said
    report = verify(election.archive)
    assert report.passed, report.not_passed()
    assert "1 of 2 trustees shuffled" in report.check("V-BEL-10").warnings[0][1]
