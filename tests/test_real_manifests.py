"""electionguard-python's own sample manifests (vectors/eg-manifests, from its 1.4.0 tag): several
ballot styles and geopolitical units, write-ins, n-of-m contests. votum accepts each, runs a whole
election on each (ballots of every style, undervotes included), through the library, the /v1 API and
both record forms, and its verifier reports the oddities the reference tolerates as warnings."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pytest
import votum
from fastapi.testclient import TestClient
from votum.client import Client
from votum.client.election import Tokens, run_stateful_election
from votum.eg import contests_on_style, random_choices
from votum.election import ElectionConfig, run_election, verify_record
from votum.service.app import create_app
from votum.service.settings import Settings
from votum.verifier import verify

MANIFESTS = Path(__file__).resolve().parent.parent / "vectors" / "eg-manifests"
NAMES = sorted(p.name for p in MANIFESTS.glob("*.json"))


def test_the_samples_are_here() -> None:
    assert len(NAMES) == 5 and "manifest-hamilton-general.json" in NAMES


@pytest.mark.parametrize("name", NAMES)
def test_every_sample_manifest_is_accepted(name: str) -> None:
    votum.EgManifest.from_json((MANIFESTS / name).read_text())


def test_random_choices_keep_to_the_style() -> None:
    manifest = json.loads((MANIFESTS / "manifest-hamilton-general.json").read_text())
    rng = random.Random(5)
    styles: Counter[str] = Counter()
    undervotes = 0
    for _ in range(300):
        style, chosen = random_choices(manifest, rng)
        styles[style] += 1
        allowed = {s["object_id"] for c in contests_on_style(manifest, style) for s in c["ballot_selections"]}
        assert set(chosen) <= allowed
        undervotes += any(
            not {s["object_id"] for s in c["ballot_selections"]} & set(chosen)
            for c in contests_on_style(manifest, style)
        )
    assert len(styles) == len(manifest["ballot_styles"]), "every style is drawn"
    assert undervotes > 0


@pytest.mark.parametrize(
    "name", ["manifest-hamilton-general.json", "manifest-small.json", "manifest-full.json"]
)
@pytest.mark.parametrize("form", ["eg14", "votum"])
def test_a_whole_election_on_a_multi_style_manifest(name: str, form: str, tmp_path: Path) -> None:
    out = tmp_path / ("record.votum" if form == "votum" else "record")
    config = ElectionConfig(
        ballots=24,
        guardians=3,
        quorum=2,
        missing=1,
        spoil_rate=0.1,
        seed=11,
        out=out,
        manifest=MANIFESTS / name,
        format=form,
    )
    result = run_election(config)
    assert result.decrypted_counts == result.expected_counts
    assert sum(result.expected_counts.values()) > 0
    report = verify(out)
    assert report.passed, report.not_passed()
    warnings = report.check("V-PARAM-02").warnings
    if name == "manifest-hamilton-general.json":
        # write-in selections refer to a candidate "write-in" that is not among the candidates
        assert any("write-in" in reason for _, reason in warnings), warnings
    else:
        assert warnings == []


def test_the_stateful_api_runs_the_hamilton_manifest(tmp_path: Path) -> None:
    manifest = json.loads((MANIFESTS / "manifest-hamilton-general.json").read_text())
    tokens = Tokens.generate(3)
    with TestClient(create_app(Settings(data_dir=tmp_path, tokens=tokens.settings_map()))) as http:
        client = Client(http=http)
        run = run_stateful_election(
            client, tokens, "hamilton", manifest, ballots=20, quorum=2, batch=8, missing=1
        )
        assert run.counts == run.expected and sum(run.counts.values()) > 0
        archive = tmp_path / "hamilton.votum"
        archive.write_bytes(client.get("/v1/elections/hamilton/record"))
    assert verify_record(archive) == run.counts
