"""Issue 45, finding 7, against the real processes: a cheating voting client.

CHVote's ballot proof shows knowledge of the queries' randomness and of the credential, not that each
query encodes a candidate prime. A client that sends Γ(c)²·pk^r for the voter's choice c gets candidate
c's point all the same (it takes the square root of its OT key), so the return codes and the finalization
code are the card's and the voter sees nothing wrong; the vote decrypts to no valid vote. Before this fix
the run and its record said only "1 invalid", and nothing could name the voter after the mix. Now every
authority, last first, opens the rows of its shuffle that the invalid vote leads back to, deriving them
itself (spec/92.8): the record names the voter, and the verifier checks each opened row."""

from __future__ import annotations

import asyncio
from pathlib import Path

from votum.parties.chvote import run_local
from votum.verifier import verify


def test_a_cheating_clients_invalid_vote_is_traced_to_its_voter(tmp_path: Path) -> None:
    choices = [[2], [1], [3], [1], [2]]
    run = asyncio.run(
        run_local(
            level=1,
            shape="single",
            voters=5,
            authorities=3,
            record=tmp_path / "record.vchv",
            homes=tmp_path / "homes",
            timeout=60.0,
            choices=choices,
            faults={"voters": "cheating-client"},
        )
    )
    # voter 0's codes matched, its vote counts invalid
    assert run.invalid == 1
    assert [name for name, _ in run.phases][-2:] == ["tallying", "tracing invalid votes"]
    assert run.tally == [2, 1, 1]
    report = verify(tmp_path / "record.vchv")
    assert report.passed, report.not_passed()
    traced = report.check("V-CHV-10")
    assert traced.status == "pass" and traced.checked == 3, traced
    assert [w[0] for w in traced.warnings] == ["voter-0"], traced.warnings
    assert "cheating" in traced.warnings[0][1]
    # every shuffle, share and trace is signed by its authority's node key, named in the parameters
    assert report.check("V-CHV-11").checked == 9
