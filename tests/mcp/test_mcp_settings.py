"""``solar-memory mcp``'s command line: a setting that cannot be served stops the command before
it serves anything, with exit status 2 and a message that names the fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcp_solar.settings import default_store, parse, settings_from
from solar_core.cli.main import main

GOOD = "t" * 32


@pytest.mark.parametrize(
    ("args", "tokens", "fix"),
    [
        (["--http"], None, "--http needs --tokens FILE"),
        (["--http", "--tokens", "{file}", "--scope", "user=a"], {GOOD: "user=a"}, "drop --scope"),
        (["--tokens", "{file}"], {GOOD: "user=a"}, "--tokens is for --http"),
        (["--http", "--tokens", "{file}"], {"two words": "user=a"}, "secrets.token_urlsafe"),
        (["--http", "--tokens", "{file}"], {GOOD: "alice"}, "part=value pairs"),
        (["--http", "--tokens", "{file}"], {GOOD: {"User": "a"}}, "lowercase letters"),
        (["--http", "--tokens", "{file}"], {}, "JSON object of tokens"),
        (["--http", "--tokens", "{file}"], "not json", "is not JSON"),
        (["--http", "--tokens", "{missing}"], None, "cannot read it"),
        (["--http", "--tokens", "{file}", "--port", "0"], {GOOD: "user=a"}, "--port must be"),
        (["--scope", "alice"], None, "part=value pairs"),
        (["--scope", "user=a", "--scope", "user=b"], None, "twice"),
        (["--capacity", "0"], None, "--capacity must be at least 1"),
        (["--policy", "nosuch"], None, "is not a policy; one of: arc, fifo"),
        (["--http", "--tokens", "{file}"], f'{{"{GOOD}": "user=a", "{GOOD}": "user=b"}}', "twice"),
    ],
)
def test_a_setting_that_cannot_be_served_is_refused_with_the_fix(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    tokens: object,
    fix: str,
) -> None:
    file = tmp_path / "tokens.json"
    if tokens is not None:
        file.write_text(tokens if isinstance(tokens, str) else json.dumps(tokens))
    given = [a.format(file=file, missing=tmp_path / "nope.json") for a in args]
    assert main(["mcp", str(tmp_path / "m.db"), *given]) == 2
    error = capsys.readouterr().err
    assert error.startswith("solar-memory mcp: error:") and fix in error, error
    assert not (tmp_path / "m.db").exists()


def test_the_scope_comes_from_the_flags_then_the_environment_then_the_login() -> None:
    env = {"SOLAR_MEMORY_SCOPE": "user=bob"}
    flags = settings_from(parse(["mcp", "--scope", "user=al", "--scope", "project=x"]), env)
    assert flags.scope is not None and flags.scope.key == "project=x&user=al"
    from_env = settings_from(parse(["mcp"]), env).scope
    assert from_env is not None and from_env.key == "user=bob"
    login = settings_from(parse(["mcp"]), {}).scope
    assert login is not None and list(login.parts()) == ["user"]


def test_the_default_store_is_in_the_users_data_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", "/data/home")
    if default_store().parts[:3] == ("/", "data", "home"):  # Linux and the other Unixes
        assert default_store() == Path("/data/home/solar-memory/memory.db")
    assert settings_from(parse(["mcp"]), {}).store == str(default_store())
    assert settings_from(parse(["mcp"]), {"SOLAR_MEMORY_STORE": "x.db"}).store == "x.db"


def test_the_tokens_file_takes_an_object_a_wrapped_one_or_a_list(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / "tokens.json"
    shapes = [
        {GOOD: "user=a", "short-token": {"user": "b"}},
        {"tokens": {GOOD: "user=a", "short-token": {"user": "b"}}},
        [{"token": GOOD, "scope": "user=a"}, {"token": "short-token", "scope": {"user": "b"}}],
    ]
    for shape in shapes:
        file.write_text(json.dumps(shape))
        file.chmod(0o600)
        tokens = settings_from(parse(["mcp", "--http", "--tokens", str(file)]), {}).tokens
        assert {t: s.key for t, s in tokens.items()} == {GOOD: "user=a", "short-token": "user=b"}
        # a short token is served, with a warning that says how to make a better one
        assert "token 2 has 11 characters" in capsys.readouterr().err
