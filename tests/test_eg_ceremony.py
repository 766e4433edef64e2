"""`votum.eg.run_ceremony`: one native call builds the guardians, exchanges and checks the backups,
and builds the context beside them. The context must be the one any reader builds from the published
records, and a seeded ceremony must repeat byte for byte."""

from __future__ import annotations

import json

import pytest
import votum
from votum.eg import run_ceremony
from votum.election import synthetic_manifest
from votum.errors import InvalidInput


def test_the_context_is_the_one_read_from_the_records() -> None:
    em = votum.EgManifest.from_json(json.dumps(synthetic_manifest(2)))
    seeds = [bytes([i + 1]) * 32 for i in range(4)]
    done = run_ceremony(em, 4, 3, seeds)
    assert done.context.to_json() == votum.EgContext(done.records, 3, em).to_json()
    assert all(len(g.backups_held) == 3 for g in done.guardians)
    again = run_ceremony(em, 4, 3, seeds)
    assert again.records == done.records and again.backups == done.backups
    assert again.context.to_json() == done.context.to_json()
    # another manifest: the same keys, another base hash
    other = votum.EgManifest.from_json(json.dumps(synthetic_manifest(1)))
    third = run_ceremony(other, 4, 3, seeds)
    assert third.records == done.records
    assert third.context.to_json() != done.context.to_json()


def test_impossible_ceremonies_are_refused() -> None:
    em = votum.EgManifest.from_json(json.dumps(synthetic_manifest(1)))
    with pytest.raises(InvalidInput):
        run_ceremony(em, 3, 4)
    with pytest.raises(InvalidInput):
        run_ceremony(em, 3, 2, [bytes(32)] * 2)
