#!/usr/bin/env python3
"""Makes vectors/belenios: three Belenios elections held with Debian's belenios-tool 2.0
(tests/belenios_tool.py), each an archive `<uuid>.bel` and a `voters.json` with what the tests need to act as a cheating voter (the test
voters' private credentials), the weights and the counts the result must prove.

    .venv/bin/python scripts/make-belenios-vectors.py

Each run makes new elections (new keys, credentials and nonces); the stored ones are those of vectors/belenios/
README.md's date."""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import belenios_tool as bt  # noqa: E402

VOTES = [[[0, 1, 0], [1, 1, 0]], [[1, 0, 0], [0, 0, 1]], [[0, 0, 1], [0, 1, 0]], [[0, 1, 0], [0, 1, 1]]]
REVOTE = [[0, 0, 1], [1, 0, 0]]
WEIGHTS = (1, 2, 1, 1)


# the mixnet election's votes: Q1 (blank, a, b), Q2 a ranking of x, y, z (bt.MIXNET_QUESTIONS)
MIXNET_VOTES = [
    [[0, 1, 0], [1, 2, 3]],
    [[1, 0, 0], [3, 1, 2]],
    [[0, 0, 1], [2, 3, 1]],
    [[0, 1, 0], [1, 3, 2]],
]
MIXNET_REVOTE = [[0, 0, 1], [3, 2, 1]]


def store(name: str, election: bt.Election, voters: dict) -> None:
    """The election's archive and `voters` (its voters.json) as vectors/belenios/`name`."""
    out = ROOT / "vectors" / "belenios" / name
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    shutil.copy(election.archive, out / election.archive.name)
    (out / "voters.json").write_text(json.dumps(voters, indent=1) + "\n")


def make_mixnet(name: str) -> None:
    """RFC-3526-2048 (the group with an embedding), one single trustee and a 2-of-3 group; every trustee
    shuffles in turn, trustees 1, 2 and 4 decrypt. Weights are 1: Belenios refuses others for mixnet
    questions."""
    weights = (1, 1, 1, 1)
    owners = [1, 2, 4]
    with tempfile.TemporaryDirectory() as scratch:
        election = bt.setup(
            Path(scratch) / name,
            group="RFC-3526-2048",
            weights=weights,
            singles=1,
            threshold=(3, 2),
            questions=bt.MIXNET_QUESTIONS,
        )
        for i, choices in enumerate(MIXNET_VOTES):
            election.vote(i, choices)
        election.vote(0, MIXNET_REVOTE)
        election.tally(owners, shufflers=[1, 2, 3, 4])
        ok, said = election.verify()
        assert ok, said
        final = [MIXNET_REVOTE, *MIXNET_VOTES[1:]]
        store(
            name,
            election,
            {
                "uuid": election.uuid,
                "group": "RFC-3526-2048",
                "credentials": election.credentials,
                "weights": list(weights),
                "owners": owners,
                "shufflers": [1, 2, 3, 4],
                "counts": [[sum(v[0][k] for v in final) for k in range(3)]],
                "rankings": sorted(v[1] for v in final),
            },
        )


def make(name: str, group: str, threshold: tuple[int, int] | None, owners: list[int]) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        election = bt.setup(
            Path(scratch) / name, group=group, weights=WEIGHTS, singles=1, threshold=threshold
        )
        for i, choices in enumerate(VOTES):
            election.vote(i, choices)
        election.vote(0, REVOTE)
        election.tally(owners)
        ok, said = election.verify()
        assert ok, said
        final = [REVOTE, *VOTES[1:]]
        counts = [
            [sum(w * v[q][k] for v, w in zip(final, WEIGHTS, strict=True)) for k in range(len(final[0][q]))]
            for q in range(len(final[0]))
        ]
        store(
            name,
            election,
            {
                "uuid": election.uuid,
                "group": group,
                "credentials": election.credentials,
                "weights": list(WEIGHTS),
                "owners": owners,
                "counts": counts,
            },
        )


if __name__ == "__main__":
    make("threshold-2048", "BELENIOS-2048", (3, 2), [1, 2, 4])
    make("single-3526", "RFC-3526-2048", None, [1])
    make_mixnet("mixnet-3526")
