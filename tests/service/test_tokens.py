"""`votum tokens` and `data_dir/tokens.json` (spec/80.8, issue 42 A.1): a token per role, made by a command,
printed once as role=token and stored as its hash only; the server takes it, and a revoked one no more."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from fastapi.testclient import TestClient
from typer.testing import CliRunner
from votum.cli import app
from votum.service.app import create_app
from votum.service.settings import Settings, tokens_from_env, tokens_from_file
from votum.service.tokenfile import ensure_tokens
from votum.service.tokens import TokenBook, token_hash


def status_with(data_dir: Path, token: str) -> int:
    """What the server answers an admin-only request (its body unread) carrying `token`."""
    settings, _, _ = ensure_tokens(Settings(data_dir=data_dir))
    with TestClient(create_app(settings)) as http:
        return http.post(
            "/v1/elections", content=b"{", headers={"authorization": f"Bearer {token}"}
        ).status_code


def made(data_dir: Path, role: str) -> str:
    out = CliRunner().invoke(app, ["tokens", "new", role, "--data-dir", str(data_dir)])
    assert out.exit_code == 0, out.output
    line = out.stdout.strip().splitlines()[-1]
    assert line.startswith(f"{role}=")
    return line.split("=", 1)[1]


def test_a_made_token_is_printed_once_stored_hashed_and_taken(tmp_path: Path) -> None:
    admin, device = made(tmp_path, "admin"), made(tmp_path, "device")
    file = tmp_path / "tokens.json"
    text = file.read_text()
    assert admin not in text and device not in text, "the file keeps hashes, never tokens"
    assert token_hash(admin) in text and token_hash(device) in text
    assert stat.S_IMODE(file.stat().st_mode) == 0o600
    assert status_with(tmp_path, admin) not in (401, 403), "the admin's token is taken"
    assert status_with(tmp_path, device) == 403, "a device may not create elections"
    assert status_with(tmp_path, "x" * 43) == 401
    listed = CliRunner().invoke(app, ["tokens", "list", "--data-dir", str(tmp_path)], terminal_width=200)
    assert listed.exit_code == 0 and token_hash(admin)[:12] in listed.output and admin not in listed.output
    # revoked: the server (restarted) refuses it
    out = CliRunner().invoke(app, ["tokens", "revoke", "admin", "--data-dir", str(tmp_path)])
    assert out.exit_code == 0, out.output
    assert status_with(tmp_path, admin) == 401
    assert status_with(tmp_path, device) == 403


def test_a_first_start_makes_an_admin_token_and_keeps_its_hash(tmp_path: Path) -> None:
    settings, path, new = ensure_tokens(Settings(data_dir=tmp_path))
    assert new is not None and path == tmp_path / "tokens.json"
    assert new not in path.read_text() and not settings.tokens and len(settings.token_hashes) == 1
    assert status_with(tmp_path, new) not in (401, 403)
    # the next start reads the same file and makes nothing
    _, _, again = ensure_tokens(Settings(data_dir=tmp_path))
    assert again is None


def test_an_earlier_file_of_tokens_in_the_clear_still_reads(tmp_path: Path) -> None:
    token = "t" * 24
    (tmp_path / "tokens.json").write_text(json.dumps({token: "admin"}))
    assert status_with(tmp_path, token) not in (401, 403)
    # new tokens are not mixed into such a file
    out = CliRunner().invoke(app, ["tokens", "new", "device", "--data-dir", str(tmp_path)])
    assert out.exit_code == 2 and "in the clear" in out.output


def test_bad_roles_and_one_token_format() -> None:
    bad = CliRunner().invoke(app, ["tokens", "new", "emperor", "--data-dir", "/tmp/never-made"])
    assert bad.exit_code == 2 and "unknown role" in bad.output
    assert not Path("/tmp/never-made").exists()
    # role=token, in VOTUM_TOKENS and in a file of the lines `votum tokens new` prints
    assert tokens_from_env("admin=" + "a" * 20 + "\ndevice=" + "d" * 20 + "\n") == {
        "a" * 20: "admin",
        "d" * 20: "device",
    }
    book = TokenBook({"p" * 20: "device"}, {token_hash("h" * 20): "admin"})
    assert book.role_of("h" * 20) == "admin" and book.role_of("p" * 20) == "device"
    assert book.role_of("q" * 20) is None and "h" * 20 not in repr(book)


def test_a_client_tokens_file_is_role_token_lines_or_the_earlier_json(tmp_path: Path) -> None:
    lines = tmp_path / "t.txt"
    lines.write_text("admin=" + "a" * 20 + "\nguardian:guardian-1=" + "g" * 20 + "\n")
    assert tokens_from_file(lines) == {"a" * 20: "admin", "g" * 20: "guardian:guardian-1"}
    earlier = tmp_path / "t.json"
    earlier.write_text(json.dumps({"a" * 20: "admin"}))
    assert tokens_from_file(earlier) == {"a" * 20: "admin"}
