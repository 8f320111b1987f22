"""``MemoryStore``: one persistent :class:`~solar_core.SolarMemory` per scope."""

from __future__ import annotations

import json
import os
import secrets
import threading
import time
import zlib
from collections.abc import Callable, Mapping
from typing import Any

from ..admission.evaluator_gate import Evaluator
from ..deletion import DeletionPolicy
from ..embedder import Embedder
from ..memory import SolarMemory
from ..response_cache import ResponseCache
from ..validation import check_k
from . import codec
from .backend import Backend
from .errors import PersistenceError
from .journal import Journal, plain_json, snapshot_state
from .scope import PARTS, Scope, check_identifier

#: settings that shape a memory's decisions: a scope keeps the ones it was created with
_SHAPING = ("policy", "capacity", "dim", "params", "deletion", "evaluator")


def _deletion_settings(policy: DeletionPolicy | None) -> dict[str, Any] | None:
    """A deletion policy's class and public parameters (a scope keeps the ones it began with)."""
    if policy is None:
        return None
    params = {
        name: value
        for name, value in vars(policy).items()
        if not name.startswith("_") and isinstance(value, bool | int | float | str | None)
    }
    return {"class": type(policy).__name__, "params": params}


def open_backend(url: str | os.PathLike[str], durability: str = "normal") -> Backend:
    """The backend for ``url``: ``postgresql://...`` or ``postgres://...`` -> PostgreSQL;
    ``sqlite:///path``, a path or ``":memory:"`` -> SQLite."""
    if isinstance(url, str) and url.startswith(("postgresql://", "postgres://")):
        from .postgres_backend import PostgresBackend

        return PostgresBackend(url)
    if not isinstance(url, str | os.PathLike):
        raise TypeError(f"url must be a path or a database URL, got {type(url).__name__}")
    path = os.fspath(url)
    if path.startswith("sqlite:///"):
        path = path[len("sqlite:///") :] or ":memory:"
    elif "://" in path:
        raise ValueError(f"unsupported database URL {path!r}: use a file path or postgresql://")
    if not path:
        raise ValueError("url must name a database file")
    from .sqlite_backend import SQLiteBackend

    return SQLiteBackend(path, durability=durability)


class MemoryStore:
    """Persistent memories, one per scope (org / project / user / session), in one database.

    ``MemoryStore("agent.db")`` opens (or creates) a SQLite file; a ``postgresql://`` URL uses
    PostgreSQL instead, for many processes and machines. Each scope gets its own
    :class:`~solar_core.SolarMemory` -- its own capacity, policy state, gate state and random
    generator -- built from the store's settings the first time it is used and persisted from
    then on: every step is one transaction, and a memory reopened later (or in another process)
    continues exactly where it stopped. No call on one scope's memory can return, evict or
    change another scope's items.

    Args:
        url: a SQLite file path (default ``solar_memory.db``), ``":memory:"``, ``sqlite:///path``
            or a ``postgresql://`` URL.
        policy, capacity, k, **memory_params: the settings of every scope's memory (as for
            :class:`~solar_core.SolarMemory`). A scope keeps the settings it was created with;
            opening it with different ones is an error, not a silent change.
        embedder, dim: shared by every scope (loaded once).
        seed: each scope's generator is seeded from it and the scope's key (random if ``None``);
            the seed is stored, so a scope's run is reproducible either way.
        clock: the time source of every scope (``time.time``).
        evaluator: an addition evaluator for every scope (see ``SolarMemory(evaluator=)``).
        deletion: a zero-argument factory of a :class:`~solar_core.deletion.DeletionPolicy`
            (each scope needs its own), e.g. ``lambda: HistoryDeletion()``.
        snapshot_every: steps between full snapshots of a scope (reopening replays at most
            this many logged steps).
        durability: SQLite only: ``"normal"`` (survives any process crash) or ``"full"``
            (also an OS crash or power loss; slower).

    Example:
        >>> store = MemoryStore(":memory:", policy="fifo", capacity=5, embedder="hash", seed=0)
        >>> alice = store.scope(user="alice")
        >>> _ = alice.add("my locker code is 1234")
        >>> [h.text for h in alice.retrieve("locker code", k=1)]
        ['my locker code is 1234']
        >>> len(store.scope(user="bob")), store.names()
        (0, ['user=alice', 'user=bob'])
        >>> store.close()
    """

    def __init__(
        self,
        url: str | os.PathLike[str] = "solar_memory.db",
        *,
        policy: str = "solar",
        capacity: int | None = 50,
        embedder: object = None,
        dim: int | None = None,
        k: int = 3,
        seed: int | None = None,
        clock: Callable[[], float] = time.time,
        evaluator: Evaluator | None = None,
        deletion: Callable[[], DeletionPolicy] | None = None,
        snapshot_every: int = 1000,
        durability: str = "normal",
        **memory_params: Any,
    ) -> None:
        factory = deletion is None or (
            callable(deletion) and not isinstance(deletion, DeletionPolicy)
        )
        if not factory:
            raise TypeError(
                "deletion must be a factory (e.g. lambda: HistoryDeletion()): each scope needs "
                "its own deletion policy"
            )
        self.snapshot_every = check_k(snapshot_every, "snapshot_every")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
            raise ValueError(f"seed must be a non-negative int, got {seed!r}")
        plain_json(memory_params, "memory settings")
        self.policy, self.capacity, self.k, self.seed = policy, capacity, k, seed
        self._clock = clock
        self._evaluator = evaluator
        self._deletion = deletion
        self._params = dict(memory_params)
        self.embedder: Embedder | None = embedder  # type: ignore[assignment]  # resolved below
        self.dim = dim
        # One probe memory checks every setting now and resolves the embedder to share.
        probe = self._new_memory(seed=0)
        self.embedder, self.dim = probe.embedder, probe.dim
        self._deletion_settings = _deletion_settings(probe._deletion)
        # Every scope will be snapshotted: find out now if something in it cannot be (a policy
        # class of your own is not among the classes a snapshot may rebuild).
        try:
            codec.loads(codec.dumps(snapshot_state(probe)), "a snapshot of this store's memories")
        except PersistenceError as err:
            raise TypeError(
                f"these settings cannot be persisted: {err} (MemoryStore persists the library's "
                "own policies; custom policy classes need a plain SolarMemory)"
            ) from err
        self.backend = open_backend(url, durability)
        self.url = self.backend.url
        self._memories: dict[str, SolarMemory] = {}
        self._caches: dict[str, ResponseCache] = {}
        self._lock = threading.RLock()
        self._closed = False

    def _new_memory(self, seed: int) -> SolarMemory:
        """A new, empty memory with this store's settings (a scope's state before its log)."""
        return SolarMemory(
            self.policy,
            self.capacity,
            embedder=self.embedder,
            dim=self.dim,
            k=self.k,
            seed=seed,
            clock=self._clock,
            evaluator=self._evaluator,
            deletion=self._deletion() if self._deletion is not None else None,
            **self._params,
        )

    # -- scopes -------------------------------------------------------------------------------
    def scope(
        self,
        user: str | None = None,
        *,
        org: str | None = None,
        project: str | None = None,
        session: str | None = None,
    ) -> SolarMemory:
        """The memory of this scope (created empty on first use, reopened after)."""
        return self.get(Scope(org=org, project=project, user=user, session=session))

    def get(self, scope: Scope | Mapping[str, str] | str) -> SolarMemory:
        """The memory of ``scope``: a :class:`Scope`, a mapping of parts, or a session id."""
        wanted = Scope.of(scope)
        key = wanted.key
        with self._lock:
            self._check_open()
            memory = self._memories.get(key)
            if memory is None or memory._journal is None or memory._journal.closed:
                self._drop_cache(key)  # it watched the old memory
                memory = self._open(wanted)
                self._memories[key] = memory
            return memory

    def existing(self, scope: Scope | Mapping[str, str] | str) -> SolarMemory | None:
        """``scope``'s memory if the scope exists, else ``None``; never creates one. A scope
        another process forgot is noticed here (its memory object is then closed).

        >>> store = MemoryStore(":memory:", policy="fifo", capacity=3, embedder="hash")
        >>> store.existing({"user": "alice"}) is None
        True
        >>> store.scope(user="alice") is store.existing({"user": "alice"})
        True
        >>> store.close()
        """
        wanted = Scope.of(scope)
        for _ in range(2):
            if wanted not in self:
                return None
            memory = self.get(wanted)
            try:
                len(memory)  # catches up with the database: a forget elsewhere closes it
            except PersistenceError:
                if memory._journal is None or not memory._journal.closed:
                    raise
                continue  # forgotten elsewhere (perhaps recreated since): look again
            return memory
        return None

    def _config(self, key: str) -> dict[str, Any]:
        seed = (
            (self.seed + zlib.crc32(key.encode())) % 2**32
            if self.seed is not None
            else secrets.randbits(32)  # stored with the scope: a replay uses the same
        )
        return {
            "policy": self.policy,
            "capacity": self.capacity,
            "dim": self.dim,
            "params": self._params,
            "deletion": self._deletion_settings,
            "evaluator": self._evaluator is not None,
            "seed": seed,
        }

    def _open(self, scope: Scope) -> SolarMemory:
        key = scope.key
        backend = self.backend
        wanted = self._config(key)
        with backend.transaction(write=True):
            row = backend.find_scope(key)
            if row is None:
                backend.create_scope(key, scope.parts(), json.dumps(wanted), time.time())
                row = backend.find_scope(key)
        assert row is not None
        config = json.loads(row.config)
        for name in _SHAPING:
            if config.get(name) != json.loads(json.dumps(wanted[name])):
                raise PersistenceError(
                    f"scope {key!r} was created with {name}={config.get(name)!r}; this store "
                    f"asks for {name}={wanted[name]!r}. Open it with the settings it was created "
                    "with, or forget() it to start over"
                )
        seed = int(config["seed"])

        def blank() -> SolarMemory:
            return self._new_memory(seed)

        memory = blank()
        journal = Journal(
            backend,
            row.id,
            scope,
            blank,
            snapshot_every=self.snapshot_every,
            runtime={"embedder": self.embedder, "evaluator": self._evaluator},
        )
        journal.attach(memory)
        return memory

    def response_cache(
        self, scope: Scope | Mapping[str, str] | str, **settings: Any
    ) -> ResponseCache:
        """The scope's semantic response cache (created on first use with ``settings``, as for
        :class:`~solar_core.ResponseCache`), watching the scope's memory: a fact stored there
        -- by this process or, once it catches up, another -- evicts the answers it relates to.
        It lives in this process: a cache starts cold after a restart, by design."""
        wanted = Scope.of(scope)
        memory = self.get(wanted)  # checks the scope, and that the store is open
        with self._lock:
            cache = self._caches.get(wanted.key)
            if cache is None:
                if self.embedder is None:
                    raise ValueError("a response cache needs an embedder; this store has dim= only")
                cache = ResponseCache(self.embedder, **settings)
                cache.watch(memory)
                self._caches[wanted.key] = cache
            elif settings:
                raise ValueError(f"the response cache of {wanted.key!r} exists already")
            return cache

    def _drop_cache(self, key: str) -> None:
        """Empty and let go of a scope's response cache (its memory is gone): a caller still
        holding it finds no answer of a forgotten user there."""
        cache = self._caches.pop(key, None)
        if cache is not None:
            cache.clear()

    def forget(self, scope: Scope | Mapping[str, str] | str) -> bool:
        """Delete ``scope``'s memory and every row of it (items, log, snapshot); returns whether
        it existed. Its memory object stops working (it would otherwise write it back)."""
        key = Scope.of(scope).key
        return bool(self._forget_keys([key]))

    def erase(
        self,
        *,
        user: str | None = None,
        org: str | None = None,
        project: str | None = None,
        session: str | None = None,
    ) -> list[str]:
        """Forget every scope with these parts (e.g. ``erase(user="alice")``: all of Alice's
        memories, in every org, project and session); returns their keys."""
        given = {"user": user, "org": org, "project": project, "session": session}
        where = {p: check_identifier(p, v) for p, v in given.items() if v is not None}
        if not where:
            raise ValueError(f"erase() needs at least one of {', '.join(PARTS)}")
        with self._lock:
            self._check_open()
            with self.backend.transaction(write=False):
                keys = self.backend.scope_keys(where)
        return self._forget_keys(keys)

    def _forget_keys(self, keys: list[str]) -> list[str]:
        gone = []
        with self._lock:
            self._check_open()
            backend = self.backend
            for key in keys:
                memory = self._memories.pop(key, None)
                self._drop_cache(key)
                if memory is not None and memory._journal is not None:
                    # First: a step in flight finishes (it holds the lock), none starts after,
                    # so nothing of this scope can be written once its rows are gone.
                    with memory._lock:
                        memory._journal.forgotten()
                with backend.transaction(write=True):
                    row = backend.find_scope(key, lock=True)
                    if row is not None:
                        backend.delete_scope(row.id)
                        gone.append(key)
        return gone

    def names(self, **parts: str) -> list[str]:
        """The keys of the stored scopes (all, or those with these parts), oldest first."""
        unknown = set(parts) - set(PARTS)
        if unknown:
            raise ValueError(f"unknown scope parts {sorted(unknown)}; use {', '.join(PARTS)}")
        where = {p: check_identifier(p, v) for p, v in parts.items()}
        with self._lock:
            self._check_open()
            with self.backend.transaction(write=False):
                return self.backend.scope_keys(where)

    def scopes(self, **parts: str) -> list[Scope]:
        """:meth:`names` as :class:`Scope` objects."""
        return [Scope.from_key(k) for k in self.names(**parts)]

    def __contains__(self, scope: object) -> bool:
        try:
            key = Scope.of(scope).key
        except (TypeError, ValueError):
            return False
        with self._lock:
            self._check_open()
            with self.backend.transaction(write=False):
                return self.backend.find_scope(key) is not None

    def view(self, part: str) -> ScopeView:
        """The scopes keyed by one part, as adapters name them: ``view("user").get("alice")``
        is ``scope(user="alice")``."""
        return ScopeView(self, part)

    # -- lifetime -----------------------------------------------------------------------------
    def _check_open(self) -> None:
        if self._closed:
            raise PersistenceError("this MemoryStore is closed")

    def close(self) -> None:
        """Snapshot every open memory (so reopening replays nothing) and close the database."""
        with self._lock:
            if self._closed:
                return
            errors: list[Exception] = []
            try:
                for memory in self._memories.values():
                    if memory._journal is not None:
                        try:  # one scope's trouble (forgotten elsewhere) spares the others
                            memory._journal.close(memory)
                        except Exception as err:
                            errors.append(err)
            finally:
                self._closed = True
                self._memories.clear()
                self._caches.clear()
                self.backend.close()
            if errors:
                raise PersistenceError(
                    f"{len(errors)} scope(s) could not be snapshotted on close: {errors[0]}"
                ) from errors[0]

    def __enter__(self) -> MemoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return (
            f"MemoryStore({self.url!r}, policy={self.policy!r}, capacity={self.capacity}, "
            f"open_scopes={len(self._memories)})"
        )


class ScopeView:
    """A :class:`MemoryStore` seen through one scope part (what framework adapters use: a
    LangGraph ``thread_id`` or ``user_id``, a LlamaIndex ``session_id``)."""

    def __init__(self, store: MemoryStore, part: str) -> None:
        if part not in PARTS:
            raise ValueError(f"part must be one of {', '.join(PARTS)}, got {part!r}")
        self.store, self.part = store, part
        self.policy, self.capacity, self.embedder = store.policy, store.capacity, store.embedder

    def check(self, value: object) -> str:
        return check_identifier(self.part, value)

    def get(self, value: str) -> SolarMemory:
        return self.store.get({self.part: self.check(value)})

    def forget(self, value: str) -> None:
        self.store.forget({self.part: self.check(value)})

    def names(self) -> list[str]:
        """The values of this part among the stored scopes that have only this part."""
        prefix = f"{self.part}="
        return [
            getattr(Scope.from_key(k), self.part)
            for k in self.store.names()
            if k.startswith(prefix) and "&" not in k
        ]

    def __contains__(self, value: object) -> bool:
        try:
            return {self.part: self.check(value)} in self.store
        except (TypeError, ValueError):
            return False

    def __len__(self) -> int:
        return len(self.names())
