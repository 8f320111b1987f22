"""``MemoryReader``: look inside a store another process writes, without changing it.

Unlike a :class:`~solar_core.persistence.MemoryStore` (which creates tables, upgrades schemas
and snapshots on close), a reader opens the database so that it refuses writes (SQLite's
``mode=ro``; read-only PostgreSQL transactions) and rebuilds a scope's memory from its snapshot
and log exactly as a store would, without an embedder: the log holds every vector.

>>> import tempfile, os
>>> from solar_core.persistence import MemoryStore
>>> path = os.path.join(tempfile.mkdtemp(), "agent.db")
>>> with MemoryStore(path, policy="fifo", capacity=2, embedder="hash", seed=0) as store:
...     alice = store.scope(user="alice")
...     for text in ["likes tea", "lives in Lyon", "has a dog"]:
...         _ = alice.add(text)
>>> with MemoryReader(path) as reader:
...     [(s.key, s.policy, s.items) for s in reader.scopes()]
...     memory = reader.memory({"user": "alice"})
...     [item.text for item in memory.items()], memory.trace()[-1].evicted
[('user=alice', 'fifo', 2)]
(['lives in Lyon', 'has a dog'], 'm1')
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any
from urllib.parse import unquote, urlsplit

from solar_core.embedders.hash_embedder import HashEmbedder
from solar_core.embedders.static_embedder import StaticEmbedder
from solar_core.engine.memory import SolarMemory
from solar_core.persistence.backend import Backend, ScopeRow
from solar_core.persistence.errors import PersistenceError
from solar_core.persistence.journal import Journal
from solar_core.persistence.memory_store import check_stored_settings, open_backend
from solar_core.persistence.scope import Scope, check_part_name, scope_namespace, shown_scope


@dataclass(frozen=True, slots=True)
class ScopeSummary:
    """A stored scope as its row says, without opening its memory."""

    key: str
    parts: dict[str, str]
    policy: str
    capacity: int | None
    items: int
    logged_steps: int  # adds, recorded retrievals, ratings, removals, sweeps
    created_at: float
    embedder: str | None


def _embedder_for_replay(config: Mapping[str, Any]) -> object:
    """The embedder a replay must give the memory, loading no model (a replay never embeds):
    the library's MiniLM (built lazily), static or hash embedder the fingerprint names, else
    ``None`` (a vectors-only memory)."""
    recorded = config.get("embedder")
    name = recorded.get("name") if isinstance(recorded, dict) else None
    innermost = str(name).split(" > ")[-1] if name else ""
    if innermost == "MiniLMEmbedder":
        from solar_core.embedders.minilm import MiniLMEmbedder

        return MiniLMEmbedder()
    dim = config["params"]["dim"]
    if innermost == "StaticEmbedder" and dim == StaticEmbedder.DIM:
        return StaticEmbedder()
    if innermost == "HashEmbedder":
        return HashEmbedder(dim=int(dim))
    return None


def redacted(message: str, url: str) -> str:
    """``message`` without the password of the database ``url`` (in the URL's user part or
    its query), as written or percent-decoded: a driver may quote either.

    >>> redacted("cannot connect: bad token 's3cr%zzet'", "postgresql://app:s3cr%zzet@db/agents")
    "cannot connect: bad token '***'"
    """
    try:
        password = urlsplit(url).password
    except ValueError:  # not a URL one can take apart (an odd port, say): its query still is
        password = None
    query = dict(pair.partition("=")[::2] for pair in url.partition("?")[2].split("&") if pair)
    for secret in (password, query.get("password")):
        if secret:
            for form in {secret, unquote(secret)}:
                message = message.replace(form, "***")
    return message


def shown_url(url: str) -> str:
    """``url`` fit to print: a password in it is masked.

    >>> shown_url("postgresql://app:s3cret@db.internal/agents")
    'postgresql://app:***@db.internal/agents'
    >>> shown_url("postgresql:///agents?host=/run/pg&password=s3cret")
    'postgresql:///agents?host=/run/pg&password=***'
    >>> shown_url("agent.db")
    'agent.db'
    """
    return redacted(url, url)


class ScopeNotFound(KeyError):
    """:meth:`MemoryReader.memory` of a scope that is not stored (the message names the
    stored scopes like it)."""

    def __str__(self) -> str:  # KeyError would quote the whole message
        return str(self.args[0])


class _PointInTime(Journal):
    """A journal that reads the scope once: the memory then shows that moment, whatever other
    processes write meanwhile (every view of one command agrees with the others)."""

    def sync(self) -> None:
        pass


class MemoryReader:
    """A read-only view of the store at ``url`` (a SQLite file or a ``postgresql://`` URL).

    :meth:`scopes` lists the stored scopes; :meth:`memory` gives one scope's memory as a store
    would show it, each read catching up with other processes' steps (or, with ``live=False``,
    staying as first read). Any step on it fails: the database refuses to write.
    """

    def __init__(self, url: str | os.PathLike[str]) -> None:
        self.backend: Backend = open_backend(url, read_only=True)
        self.url = self.backend.url
        #: the URL to print (a password masked)
        self.shown_url = shown_url(str(self.url))
        self._memories: dict[tuple[str, bool], SolarMemory] = {}

    def scopes(self, **parts: str) -> list[ScopeSummary]:
        """Every stored scope (those with all of these parts), oldest first."""
        for part in parts:
            check_part_name(part)
        with self.backend.transaction(write=False):
            rows = self.backend.scope_summaries()
        found = []
        for key, config_text, seq, created_at, items in rows:
            scope = Scope.from_key(key)
            if any(scope.parts().get(part) != value for part, value in parts.items()):
                continue
            config = check_stored_settings(key, config_text)
            recorded, params = config.get("embedder"), config["params"]
            found.append(
                ScopeSummary(
                    key=key,
                    parts=scope.parts(),
                    policy=str(params.get("policy")),
                    capacity=params.get("capacity"),
                    items=items,
                    logged_steps=seq,
                    created_at=created_at,
                    embedder=str(recorded.get("name")) if isinstance(recorded, dict) else None,
                )
            )
        return found

    def memory(self, scope: Scope | Mapping[str, str] | str, live: bool = True) -> SolarMemory:
        """The memory of a stored ``scope`` (a :class:`Scope`, a mapping of parts or a session
        id); :class:`ScopeNotFound` (a ``KeyError``) naming stored scopes like it if it is not.
        ``live``: each read first catches up with other processes' steps; ``False``: the
        memory stays as read now."""
        wanted = Scope.of(scope)
        key = wanted.key
        memory = self._memories.get((key, live))
        if memory is not None:
            return memory
        with self.backend.transaction(write=False):
            row = self.backend.find_scope(key)
        if row is None:
            raise ScopeNotFound(self._not_stored(wanted))
        config = check_stored_settings(key, row.config)
        embedder = _embedder_for_replay(config)
        build = partial(self._build, key, embedder)
        journal = (Journal if live else _PointInTime)(
            self.backend,
            wanted,
            scope_id=row.id,
            config_text=row.config,
            config=config,
            build=build,
            settle=partial(check_stored_settings, key),
            locate=partial(self._locate, key),
            snapshot_every=1,  # (never used: a reader writes no snapshot)
        )
        memory = build(config)
        journal.attach(memory)  # a read transaction: the snapshot, then the log on top
        self._memories[(key, live)] = memory
        return memory

    def _not_stored(self, wanted: Scope) -> str:
        labels = scope_namespace(wanted)

        def alike(scope: Scope) -> bool:
            """Shares a part with it; a namespace: its first label (all share the project)."""
            theirs = scope_namespace(scope)
            if labels is not None or theirs is not None:
                return bool(labels and theirs and labels[0] == theirs[0])
            mine = scope.parts()
            return any(mine.get(part) == value for part, value in wanted.parts().items())

        with self.backend.transaction(write=False):
            keys = self.backend.scope_keys()
        near = [shown_scope(s) for s in map(Scope.from_key, keys) if alike(s)]
        hint = f"; stored scopes like it: {', '.join(near[:10])}" if near else ""
        return f"no scope {shown_scope(wanted)!r} is stored in {self.shown_url}{hint}"

    def _build(self, key: str, embedder: object, config: Mapping[str, Any]) -> SolarMemory:
        """A new, empty memory with a scope's settings (its state before its first step)."""
        if config["params"].get("evaluator") is not None:
            raise PersistenceError(
                f"scope {key!r} judges its additions with an evaluator (an LLM call): "
                "replaying its log would call it, which reading must not do"
            )
        try:
            return SolarMemory.from_params(
                config["params"], embedder=embedder, seed=int(config["seed"])
            )
        except (TypeError, ValueError) as err:
            raise PersistenceError(
                f"scope {key!r} was created with settings this version of solar-memory cannot "
                f"build: {err}"
            ) from err

    def _locate(self, key: str, create: bool, config: str) -> tuple[ScopeRow, bool] | None:
        row = self.backend.find_scope(key)
        return None if row is None else (row, False)

    def close(self) -> None:
        """Let go of the database (nothing is written: there is nothing to snapshot)."""
        self._memories.clear()
        self.backend.close()

    def __enter__(self) -> MemoryReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"MemoryReader({self.shown_url!r})"
