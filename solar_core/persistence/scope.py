"""``Scope``: whose memory a step belongs to (an org, a project, a user, a session)."""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
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


def check_part_name(name: object) -> str:
    """A scope part's name: one of :data:`PARTS`, or a part of your own (``team``, ``tenant``,
    ``agent_id``): lowercase letters, digits and ``_``, starting with a letter, at most 32.

    >>> check_part_name("team")
    'team'
    >>> check_part_name("Team!")
    Traceback (most recent call last):
    ...
    ValueError: a scope part's name is lowercase letters, digits and _ ... got 'Team!': ...
    """
    if not isinstance(name, str) or not re.fullmatch(_PART_NAME, name):
        raise ValueError(
            "a scope part's name is lowercase letters, digits and _ (starting with a letter, "
            f"at most 32), got {name!r}: e.g. team=..."
        )
    return name


#: a part name (a pattern applied with re.fullmatch; re's cache keeps it compiled)
_PART_NAME = r"[a-z][a-z0-9_]{0,31}"


@dataclass(frozen=True, slots=True, init=False)
class Scope:
    """Whose memory: any non-empty subset of ``org``, ``project``, ``user``, ``session``, and
    parts of your own (``Scope(user="alice", team="billing")``; see :func:`check_part_name`).

    Two scopes are the same memory iff every part is equal: ``Scope(user="alice")`` and
    ``Scope(user="alice", session="s1")`` are two memories. :attr:`key` is the scope as one
    string (parts percent-encoded, so no two scopes share a key; the four parts above in that
    order, then your own by name).

    >>> Scope(user="alice", org="acme").key
    'org=acme&user=alice'
    >>> Scope.from_key("org=acme&user=a%26b").user
    'a&b'
    >>> Scope(user="alice", team="billing").key, Scope(tenant="t1", team="b").parts()
    ('user=alice&team=billing', {'team': 'b', 'tenant': 't1'})
    >>> Scope()
    Traceback (most recent call last):
    ...
    ValueError: a scope names at least one of org, project, user, session (or a part of your own)
    """

    org: str | None
    project: str | None
    user: str | None
    session: str | None
    #: the parts of your own, sorted by name
    extra: tuple[tuple[str, str], ...]

    def __init__(
        self,
        org: str | None = None,
        project: str | None = None,
        user: str | None = None,
        session: str | None = None,
        **extra: str | None,
    ) -> None:
        named = {"org": org, "project": project, "user": user, "session": session}
        for part, value in named.items():
            checked = None if value is None else check_identifier(part, value)
            object.__setattr__(self, part, checked)
        own = tuple(
            (check_part_name(part), check_identifier(part, value))
            for part, value in sorted(extra.items())
            if value is not None
        )
        object.__setattr__(self, "extra", own)
        if not own and all(value is None for value in named.values()):
            raise ValueError(
                f"a scope names at least one of {', '.join(PARTS)} (or a part of your own)"
            )

    @property
    def key(self) -> str:
        return "&".join(f"{part}={quote(value, safe='')}" for part, value in self._pairs())

    def _pairs(self) -> list[tuple[str, str]]:
        standard = [(p, v) for p in PARTS if (v := getattr(self, p)) is not None]
        return standard + list(self.extra)

    def parts(self) -> dict[str, str]:
        """The parts that are set."""
        return dict(self._pairs())

    @classmethod
    def of(cls, scope: object) -> Scope:
        """``scope`` as a :class:`Scope`: a Scope, a mapping of parts, or a str (a session id)."""
        if isinstance(scope, Scope):
            return scope
        if isinstance(scope, Mapping):
            for part in scope:
                check_part_name(part)
            return cls(**scope)
        if isinstance(scope, str | int) and not isinstance(scope, bool):
            return cls(session=check_identifier("session", scope))
        raise TypeError(
            f"a scope is a Scope, a mapping of parts ({', '.join(PARTS)} or your own) or a "
            f"session id, got {type(scope).__name__}"
        )

    @classmethod
    def from_key(cls, key: str) -> Scope:
        """The scope whose :attr:`key` is ``key``."""
        parts: dict[str, str] = {}
        for piece in key.split("&"):
            name, sep, value = piece.partition("=")
            if not sep or not re.fullmatch(_PART_NAME, name) or name in parts:
                raise ValueError(f"not a scope key: {key!r}")
            parts[name] = unquote(value)
        return cls(**parts)

    def __str__(self) -> str:
        return self.key


#: the project of the scopes that hold LangGraph store namespaces (``langchain_solar.SolarStore``)
NAMESPACE_PROJECT = "langgraph-store"


def namespace_scope(labels: Sequence[str]) -> Scope:
    """The scope holding a LangGraph store namespace: its labels as a JSON list (one to one,
    whatever the labels and depth), under :data:`NAMESPACE_PROJECT`. Non-ASCII characters are
    ``\\u``-escaped when that fits in :data:`MAX_LENGTH`, else written as they are (only control
    and format characters escaped); a namespace too long even so gets a ``ValueError``.

    >>> namespace_scope(("users", "alice")).user
    '["users","alice"]'
    >>> scope_namespace(namespace_scope(("users", "alice")))
    ('users', 'alice')
    >>> label = "日本語のラベル" * 6
    >>> namespace_scope(("users", label)).user == f'["users","{label}"]'
    True
    """
    if isinstance(labels, str) or not all(isinstance(label, str) for label in labels):
        # a str is a sequence of its characters: "42" would name the namespace ("4", "2")
        raise ValueError(
            f"a namespace is a tuple of str labels, got {labels!r}: pass e.g. "
            f"{(labels,) if isinstance(labels, str) else ('users', 'alice')!r}"
        )
    listed = list(labels)
    text = _namespace_json(listed, readable=False)
    if len(text) > MAX_LENGTH:
        text = _namespace_json(listed, readable=True)
    if len(text) > MAX_LENGTH:
        shown = tuple(label if len(label) <= 40 else label[:40] + "..." for label in listed)
        raise ValueError(
            f"namespace {shown!r} is too long to store: its labels take {len(text)} "
            f"characters (quoted, comma-separated, in brackets), at most {MAX_LENGTH}; use "
            "shorter labels, e.g. an id rather than a text"
        )
    return Scope(project=NAMESPACE_PROJECT, user=text)


def _namespace_json(labels: list[str], *, readable: bool) -> str:
    """``labels`` as a JSON list: every non-ASCII character escaped, or (``readable``) only
    the control and format characters, which no scope identifier holds."""
    text = json.dumps(labels, separators=(",", ":"), ensure_ascii=not readable)
    if not readable:
        return text
    return "".join(
        json.dumps(c)[1:-1] if unicodedata.category(c).startswith("C") else c for c in text
    )


def namespace_key_prefix(labels: Sequence[str], *, readable: bool = False) -> str:
    """What the keys of the scopes of ``labels`` and of every namespace under it begin with,
    for the namespaces written with ``\\u`` escapes, or (``readable``) those too long for
    them (see :func:`namespace_scope`; the two prefixes differ only for labels holding a
    character JSON escapes).

    >>> namespace_key_prefix(("users",))
    'project=langgraph-store&user=%5B%22users%22'
    >>> namespace_scope(("users", "alice")).key.startswith(namespace_key_prefix(("users",)))
    True
    """
    # the JSON list without its "]": a label ends at its closing quote, so "users" is no
    # prefix of "users2"
    text = _namespace_json(list(labels), readable=readable)
    assert text.endswith("]")
    return f"{Scope(project=NAMESPACE_PROJECT).key}&user={quote(text[:-1], safe='')}"


def scope_namespace(scope: Scope) -> tuple[str, ...] | None:
    """The namespace a scope holds, or ``None`` if it is no store namespace's scope."""
    if scope.project != NAMESPACE_PROJECT or scope.user is None or len(scope.parts()) != 2:
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


def named(scope: Scope) -> str:
    """A scope as a message names it: a LangGraph store namespace by its labels (its key is
    an encoding nobody typed), any other scope by its key.

    >>> named(namespace_scope(["users", "alice"])), named(Scope(user="bob"))
    ("namespace ('users', 'alice')", "scope 'user=bob'")
    """
    labels = scope_namespace(scope)
    return f"namespace {labels!r}" if labels is not None else f"scope {scope.key!r}"


def call_for(method: str, scope: Scope) -> str:
    """The call of ``method`` that acts on ``scope``, as a fix in a message names it: a
    namespace through the LangGraph store (whose methods take its labels), any other scope
    through the ``MemoryStore`` (whose methods take its parts).

    >>> call_for("reembed", namespace_scope(["users", "alice"]))
    "store.reembed(('users', 'alice'))"
    >>> call_for("forget", Scope(user="bob"))
    "store.forget({'user': 'bob'})"
    """
    labels = scope_namespace(scope)
    return f"store.{method}({labels if labels is not None else scope.parts()!r})"


def scope_named(text: str) -> Scope:
    """The scope ``text`` names: a key, or ``namespace=`` and dot-joined labels.

    >>> scope_named("namespace=users.alice") == namespace_scope(["users", "alice"])
    True
    """
    if text.startswith("namespace="):
        return namespace_scope(text[len("namespace=") :].split("."))
    return Scope.from_key(text)
