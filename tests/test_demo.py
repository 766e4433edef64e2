from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner
from votum.cli import app
from votum.demo import DemoConfig, run_demo
from votum.errors import InvalidInput


@pytest.mark.parametrize("group", ["ristretto255", "eg-4096"])
def test_demo_counts_correctly(group: str) -> None:
    seen: list[str] = []
    result = run_demo(
        DemoConfig(votes=60, guardians=4, quorum=2, group=group, seed=7, batch=25),
        lambda name, _d, _t: seen.append(name),
    )
    assert result.ok
    assert result.decrypted_count == result.expected_count
    assert 0 < result.expected_count < 60
    assert {"encrypt", "verify", "decrypt"} <= set(seen)
    assert next(s.name for s in result.steps) == "key ceremony"


def test_demo_rejects_bad_configuration() -> None:
    with pytest.raises(InvalidInput, match="quorum"):
        run_demo(DemoConfig(guardians=3, quorum=4))
    with pytest.raises(InvalidInput, match="group"):
        run_demo(DemoConfig(group="p-256"))
    with pytest.raises(InvalidInput, match="votes"):
        run_demo(DemoConfig(votes=0))


def test_cli_json_report() -> None:
    runner = CliRunner()
    out = runner.invoke(app, ["demo", "--votes", "40", "--group", "ristretto255", "--json"])
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout)
    assert report["expected_count"] == report["decrypted_count"]
    assert {s["name"] for s in report["steps"]} >= {"key ceremony", "homomorphic tally"}


def test_cli_bad_option_exits_nonzero() -> None:
    out = CliRunner().invoke(app, ["demo", "--quorum", "9"])
    assert out.exit_code == 2
    assert "quorum" in out.output
