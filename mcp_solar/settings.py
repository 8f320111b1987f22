"""What ``solar-memory mcp`` serves: the store, whose scope, the policy of new scopes, the
transport, and the bearer tokens of an HTTP server. Read from the command line and the
environment; nothing here imports the MCP SDK, so ``solar-memory --help`` works without it.

>>> settings = settings_from(parse(["mcp", "agent.db", "--scope", "user=alice"]), environ={})
>>> settings.store, shown_scope(settings.scope), settings.http
('agent.db', 'user=alice', False)
>>> parse_scope("user=alice,project=atlas").key
'project=atlas&user=alice'
"""

from __future__ import annotations

import argparse
import getpass
import json
import os
import re
import stat
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from solar_core.persistence.scope import Scope, check_identifier, check_part_name, shown_scope
from solar_core.policies.presets import available_policies

#: the environment variable that names the scope of a stdio server (``user=alice,project=x``)
SCOPE_ENV = "SOLAR_MEMORY_SCOPE"
#: the environment variable that names the store (a file, ``sqlite:///...`` or a PostgreSQL URL)
STORE_ENV = "SOLAR_MEMORY_STORE"
#: the capacity of a new scope when ``--capacity`` is not given (an existing scope keeps its own)
DEFAULT_CAPACITY = 1000
#: the shortest bearer token accepted: 128 bits in ``secrets.token_urlsafe`` characters
MIN_TOKEN_LENGTH = 22
#: how to make a token, for the messages that ask for one
NEW_TOKEN = 'python -c "import secrets; print(secrets.token_urlsafe(32))"'


class SettingsError(ValueError):
    """A setting that cannot be served; the message names the fix."""


@dataclass(frozen=True)
class Settings:
    """One server's settings (``scope`` for stdio, ``tokens`` for HTTP)."""

    store: str
    scope: Scope | None = None
    tokens: Mapping[str, Scope] = field(default_factory=dict)
    policy: str | None = None
    capacity: int | None = None
    embedder: str = "static"
    http: bool = False
    host: str = "127.0.0.1"
    port: int = 8765


def default_store() -> Path:
    """Where the store lives when none is named: the user's data folder.

    ``$XDG_DATA_HOME/solar-memory/memory.db`` (``~/.local/share/...`` without it) on Linux,
    ``~/Library/Application Support/solar-memory/memory.db`` on macOS and
    ``%APPDATA%\\solar-memory\\memory.db`` on Windows.
    """
    if sys.platform == "win32":
        base = Path(os.environ.get("APPDATA") or Path.home() / "AppData" / "Roaming")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    else:
        base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "solar-memory" / "memory.db"


def parse_scope(text: str, where: str = "--scope") -> Scope:
    """``part=value`` pairs separated by commas as a :class:`Scope`.

    >>> parse_scope("user=alice").key
    'user=alice'
    >>> parse_scope("alice")
    Traceback (most recent call last):
    ...
    mcp_solar.settings.SettingsError: --scope takes part=value pairs (...), got 'alice'
    """
    parts: dict[str, str] = {}
    for pair in text.split(","):
        name, sep, value = pair.strip().partition("=")
        if not sep:
            raise SettingsError(
                f"{where} takes part=value pairs (e.g. user=alice,project=atlas), got {text!r}"
            )
        add_part(parts, name, value, where)
    return Scope(**parts)


def add_part(parts: dict[str, str], name: str, value: object, where: str) -> None:
    """Add ``name=value`` to ``parts``, checked (a :class:`SettingsError` naming ``where``)."""
    try:
        name = check_part_name(name.strip())
        value = check_identifier(name, value)
    except (ValueError, TypeError) as err:
        raise SettingsError(f"{where}: {err}") from None
    if name in parts:
        raise SettingsError(f"{where} names the scope part {name!r} twice")
    parts[name] = str(value)


def load_tokens(path: str) -> dict[str, Scope]:
    """The bearer tokens of an HTTP server, each mapped to the one scope it may use.

    The file is a JSON object, ``{"<token>": "user=alice", "<token 2>": {"user": "bob"}}``
    (also taken: that object under a ``"tokens"`` key, or a list of ``{"token": ..., "scope":
    ...}``). A token shorter than :data:`MIN_TOKEN_LENGTH` is served with a warning.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as err:
        raise SettingsError(f"--tokens {path}: cannot read it ({err.strerror or err})") from None
    try:
        given = json.loads(text, object_pairs_hook=_no_repeats)
    except json.JSONDecodeError as err:
        raise SettingsError(
            f"--tokens {path} is not JSON ({err.msg}, line {err.lineno}): write an object "
            'mapping each token to its scope, e.g. {"<token>": "user=alice"}'
        ) from None
    pairs = _token_pairs(given)
    if not pairs:
        raise SettingsError(
            f'--tokens {path} must hold a JSON object of tokens, e.g. {{"<token>": "user=alice"}}'
        )
    tokens: dict[str, Scope] = {}
    for number, (token, scope) in enumerate(pairs, 1):
        where = f"--tokens {path}, token {number}"
        if not isinstance(token, str) or not re.fullmatch(r"[\x21-\x7e]+", token):
            raise SettingsError(
                f"{where} is not a usable bearer token: printable ASCII characters, no spaces; "
                f"make one with: {NEW_TOKEN}"
            )
        if token in tokens:
            raise SettingsError(f"{where} is given twice; give each token once")
        if len(token) < MIN_TOKEN_LENGTH:
            warn(
                f"{where} has {len(token)} characters: a client that guesses it reads and writes "
                f"its scope; use {MIN_TOKEN_LENGTH} or more, made with: {NEW_TOKEN}"
            )
        if isinstance(scope, str):
            tokens[token] = parse_scope(scope, where)
        elif isinstance(scope, dict) and scope:
            parts: dict[str, str] = {}
            for name, value in scope.items():
                add_part(parts, name, value, where)
            tokens[token] = Scope(**parts)
        else:
            raise SettingsError(f'{where}: the scope is "user=alice" or {{"user": "alice"}}')
    if os.name == "posix" and Path(path).stat().st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        warn(f"{path} is readable by other users: chmod 600 {path}")
    return tokens


def _token_pairs(given: object) -> list[tuple[object, object]]:
    """(token, scope) pairs of the shapes :func:`load_tokens` takes (empty: none of them)."""
    if isinstance(given, dict) and set(given) == {"tokens"}:
        given = given["tokens"]
    if isinstance(given, dict):
        return list(given.items())
    if isinstance(given, list) and all(
        isinstance(entry, dict) and set(entry) == {"token", "scope"} for entry in given
    ):
        return [(entry["token"], entry["scope"]) for entry in given]
    return []


def warn(message: str) -> None:
    print(f"solar-memory mcp: warning: {message}", file=sys.stderr)


def _no_repeats(pairs: list[tuple[str, object]]) -> dict[str, object]:
    """A JSON object's pairs as a dict, refusing a key given twice (a token mapped to two
    scopes would silently take the last)."""
    found: dict[str, object] = {}
    for key, value in pairs:
        if key in found:
            raise SettingsError(
                "--tokens: a token (or a scope part) is given twice; give each token once"
            )
        found[key] = value
    return found


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``solar-memory mcp``'s options."""
    parser.add_argument(
        "store",
        nargs="?",
        metavar="STORE",
        help=f"a SQLite file or a postgresql:// URL (default: ${STORE_ENV}, or {default_store()})",
    )
    parser.add_argument(
        "--scope",
        action="append",
        metavar="PART=VALUE",
        help=f"whose memory a stdio server serves, e.g. --scope user=alice (default: ${SCOPE_ENV}, "
        "else user=<your login>)",
    )
    parser.add_argument("--policy", help="the policy of a new scope (default: solar-adaptive)")
    parser.add_argument(
        "--capacity",
        type=int,
        help=f"the most items a new scope keeps (default: {DEFAULT_CAPACITY})",
    )
    parser.add_argument(
        "--embedder",
        choices=("static", "minilm", "hash"),
        default="static",
        help="static (built in), minilm (the minilm extra) or hash (tests only)",
    )
    parser.add_argument("--http", action="store_true", help="serve streamable HTTP, not stdio")
    parser.add_argument("--host", default="127.0.0.1", help="HTTP: the address to listen on")
    parser.add_argument("--port", type=int, default=8765, help="HTTP: the port")
    parser.add_argument(
        "--tokens",
        metavar="FILE",
        help='HTTP: a JSON file mapping each bearer token to its scope, {"<token>": "user=alice"}',
    )


def settings_from(args: argparse.Namespace, environ: Mapping[str, str] | None = None) -> Settings:
    """The settings ``args`` (and the environment) give, checked."""
    env = os.environ if environ is None else environ
    store = args.store or env.get(STORE_ENV) or str(default_store())
    if args.capacity is not None and args.capacity < 1:
        raise SettingsError(f"--capacity must be at least 1, got {args.capacity}")
    if args.policy is not None and args.policy not in available_policies():
        raise SettingsError(
            f"--policy {args.policy!r} is not a policy; one of: {', '.join(available_policies())}"
        )
    common = dict(store=store, policy=args.policy, capacity=args.capacity, embedder=args.embedder)
    if args.http:
        if args.scope:
            raise SettingsError(
                "over HTTP each client's scope comes from its bearer token: drop --scope and "
                'map tokens to scopes in the --tokens file ({"<token>": "user=alice"})'
            )
        if not args.tokens:
            raise SettingsError(
                "--http needs --tokens FILE: a JSON object mapping each client's bearer token to "
                f'its scope, {{"<token>": "user=alice"}}; make a token with: {NEW_TOKEN}'
            )
        if not 0 < args.port < 65536:
            raise SettingsError(f"--port must be 1 to 65535, got {args.port}")
        tokens = load_tokens(args.tokens)
        return Settings(**common, tokens=tokens, http=True, host=args.host, port=args.port)
    if args.tokens:
        raise SettingsError("--tokens is for --http; a stdio server takes --scope")
    if args.scope:
        parts: dict[str, str] = {}
        for given in args.scope:
            for name, value in parse_scope(given).parts().items():
                add_part(parts, name, value, "--scope")
        scope = Scope(**parts)
    elif env.get(SCOPE_ENV, "").strip():
        scope = parse_scope(env[SCOPE_ENV], f"${SCOPE_ENV}")
    else:
        scope = Scope(user=_login())
    return Settings(**common, scope=scope)


def _login() -> str:
    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no login name (a container with no passwd entry)
        return "default"


def parse(argv: Sequence[str]) -> argparse.Namespace:
    """``argv`` (``["mcp", ...]``) parsed as ``solar-memory`` parses it (for the examples)."""
    parser = argparse.ArgumentParser(prog="solar-memory")
    add_arguments(parser.add_subparsers(dest="command").add_parser("mcp"))
    return parser.parse_args(argv)


__all__ = [
    "DEFAULT_CAPACITY",
    "SCOPE_ENV",
    "STORE_ENV",
    "Settings",
    "SettingsError",
    "add_arguments",
    "default_store",
    "load_tokens",
    "parse_scope",
    "settings_from",
    "shown_scope",
]
