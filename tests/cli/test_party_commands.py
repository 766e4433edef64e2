"""The parties' commands (spec/80.10) fail in one line with the usage exit code, never a traceback: a manifest
that is not JSON, no token, a token file without the role, a service that does not answer, a guardian without
a node key; and a token is never read from the command line."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner
from votum.cli import app
from votum.localnet import free_port


def invoke(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    out = CliRunner().invoke(app, list(args), env={"VOTUM_TOKEN": "", "VOTUM_TOKEN_FILE": "", **(env or {})})
    return out.exit_code, out.output


@pytest.fixture
def nowhere() -> str:
    return f"http://127.0.0.1:{free_port()}"


def one_line_error(code: int, text: str, words: str) -> None:
    assert code == 2, text
    assert "Traceback" not in text
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and words in text, text


def test_official_errors(tmp_path: Path, nowhere: str) -> None:
    bad = tmp_path / "manifest.json"
    bad.write_text('{"contests": [,]}')
    token = tmp_path / "admin.tok"
    token.write_text("admin=abc\n")
    one_line_error(
        *invoke(
            "official",
            "create",
            str(bad),
            "-e",
            "e",
            "--guardians",
            "3",
            "--quorum",
            "2",
            "--service",
            nowhere,
            "--token-file",
            str(token),
        ),
        "is not valid JSON",
    )
    one_line_error(*invoke("official", "close", "-e", "e", "--service", nowhere), "no token")
    device_only = tmp_path / "device.tok"
    device_only.write_text("device=abc\n")
    one_line_error(
        *invoke("official", "close", "-e", "e", "--service", nowhere, "--token-file", str(device_only)),
        "tokens of role admin",
    )
    one_line_error(
        *invoke("official", "close", "-e", "e", "--service", nowhere, "--token-file", str(token)),
        "refused",
    )
    one_line_error(*invoke("official", "status", "-e", "e", "--service", nowhere), "refused")
    # a token is never an option's value
    code, text = invoke("official", "close", "-e", "e", "--token", "abc")
    assert code == 2 and "No such option" in text


def test_guardian_and_device_errors(tmp_path: Path, nowhere: str) -> None:
    one_line_error(
        *invoke(
            "guardian",
            "join",
            "-e",
            "e",
            "--id",
            "g",
            "--order",
            "1",
            "--home",
            str(tmp_path / "none"),
            "--service",
            nowhere,
            env={"VOTUM_TOKEN": "guardian:g=abc"},
        ),
        "votum node keygen",
    )
    one_line_error(
        *invoke(
            "device",
            "-e",
            "e",
            "--service",
            nowhere,
            "--state-dir",
            str(tmp_path / "s"),
            env={"VOTUM_TOKEN": "device=abc"},
        ),
        "refused",
    )
