"""``Scope``: whose memory a step belongs to (an org, a project, a user, a session)."""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from urllib.parse import quote, unquote

#: the parts of a scope, in the order its key lists them
PARTS = ("org", "project", "user", "session")
#: longest accepted identifier: ids are names, not documents
MAX_LENGTH = 256


def check_identifier(part: str, value: object) -> str:
    """``value`` as a scope identifier, else a ``ValueError``/``TypeError`` naming the part."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise TypeError(f"scope {part} must be a str, got {type(value).__name__}")
    text = str(value)
    if not text or not text.strip():
        raise ValueError(f"scope {part} must be a non-empty str, got {value!r}")
    if len(text) > MAX_LENGTH:
        raise ValueError(f"scope {part} is {len(text)} characters long; at most {MAX_LENGTH}")
    for char in text:
        # Control, format, surrogate and unassigned code points: never in an id, and the
        # classic way to smuggle a lookalike or a terminal escape into logs.
        if unicodedata.category(char).startswith("C"):
            raise ValueError(f"scope {part} {text!r} contains the control character {char!r}")
    return text


@dataclass(frozen=True, slots=True)
class Scope:
    """Whose memory: any non-empty subset of ``org``, ``project``, ``user``, ``session``.

    Two scopes are the same memory iff every part is equal: ``Scope(user="alice")`` and
    ``Scope(user="alice", session="s1")`` are two memories. :attr:`key` is the scope as one
    string (parts percent-encoded, so no two scopes share a key).

    >>> Scope(user="alice", org="acme").key
    'org=acme&user=alice'
    >>> Scope.from_key("org=acme&user=a%26b").user
    'a&b'
    >>> Scope()
    Traceback (most recent call last):
    ...
    ValueError: a scope names at least one of org, project, user, session
    """

    org: str | None = None
    project: str | None = None
    user: str | None = None
    session: str | None = None

    def __post_init__(self) -> None:
        present = False
        for f in fields(self):
            value = getattr(self, f.name)
            if value is not None:
                object.__setattr__(self, f.name, check_identifier(f.name, value))
                present = True
        if not present:
            raise ValueError(f"a scope names at least one of {', '.join(PARTS)}")

    @property
    def key(self) -> str:
        return "&".join(
            f"{part}={quote(value, safe='')}"
            for part in PARTS
            if (value := getattr(self, part)) is not None
        )

    def parts(self) -> dict[str, str]:
        """The parts that are set."""
        return {p: v for p in PARTS if (v := getattr(self, p)) is not None}

    @classmethod
    def of(cls, scope: object) -> Scope:
        """``scope`` as a :class:`Scope`: a Scope, a mapping of parts, or a str (a session id)."""
        if isinstance(scope, Scope):
            return scope
        if isinstance(scope, Mapping):
            unknown = set(scope) - set(PARTS)
            if unknown:
                raise ValueError(
                    f"unknown scope parts {sorted(map(str, unknown))}; use {', '.join(PARTS)}"
                )
            return cls(**scope)
        if isinstance(scope, str | int) and not isinstance(scope, bool):
            return cls(session=check_identifier("session", scope))
        raise TypeError(
            f"a scope is a Scope, a mapping of {', '.join(PARTS)} or a session id, "
            f"got {type(scope).__name__}"
        )

    @classmethod
    def from_key(cls, key: str) -> Scope:
        """The scope whose :attr:`key` is ``key``."""
        parts: dict[str, str] = {}
        for piece in key.split("&"):
            name, sep, value = piece.partition("=")
            if not sep or name not in PARTS or name in parts:
                raise ValueError(f"not a scope key: {key!r}")
            parts[name] = unquote(value)
        return cls(**parts)

    def __str__(self) -> str:
        return self.key


#: the project of the scopes that hold LangGraph store namespaces (``langchain_solar.SolarStore``)
NAMESPACE_PROJECT = "langgraph-store"


def namespace_scope(labels: Sequence[str]) -> Scope:
    """The scope holding a LangGraph store namespace: its labels as a JSON list (so labels of
    any text and namespaces of any depth map one to one), under :data:`NAMESPACE_PROJECT`.

    >>> namespace_scope(("users", "alice")).user
    '["users","alice"]'
    >>> scope_namespace(namespace_scope(("users", "alice")))
    ('users', 'alice')
    """
    return Scope(project=NAMESPACE_PROJECT, user=json.dumps(list(labels), separators=(",", ":")))


def scope_namespace(scope: Scope) -> tuple[str, ...] | None:
    """The namespace a scope holds, or ``None`` if it is no store namespace's scope."""
    if scope.project != NAMESPACE_PROJECT or scope.user is None or scope.org or scope.session:
        return None
    try:
        labels = json.loads(scope.user)
    except ValueError:
        return None
    if not isinstance(labels, list) or not all(isinstance(x, str) for x in labels):
        return None
    return tuple(labels)


def shown_scope(scope: Scope) -> str:
    """A scope as people read it (and :func:`scope_named` takes back): its key, or for a
    LangGraph store namespace ``namespace=`` and its labels joined by dots.

    >>> shown_scope(namespace_scope(["users", "alice"])), shown_scope(Scope(user="bob"))
    ('namespace=users.alice', 'user=bob')
    """
    labels = scope_namespace(scope)
    if labels is not None and labels and all(label and "." not in label for label in labels):
        return "namespace=" + ".".join(labels)
    return scope.key


def scope_named(text: str) -> Scope:
    """The scope ``text`` names: a key, or ``namespace=`` and dot-joined labels.

    >>> scope_named("namespace=users.alice") == namespace_scope(["users", "alice"])
    True
    """
    if text.startswith("namespace="):
        return namespace_scope(text[len("namespace=") :].split("."))
    return Scope.from_key(text)
