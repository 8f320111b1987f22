"""``MemoryStore``: one persistent :class:`~solar_core.SolarMemory` per scope."""

from __future__ import annotations

import json
import os
import secrets
import threading
import time
import weakref
import zlib
from collections import OrderedDict
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any, Final

from solar_core.basics.records import Record
from solar_core.basics.validation import FloatVector, check_k, unit_rows
from solar_core.embedders.embedder import Embedder
from solar_core.engine.async_calls import in_worker
from solar_core.engine.memory import SolarMemory
from solar_core.engine.response_cache import ResponseCache
from solar_core.persistence import container
from solar_core.persistence.backend import Backend, ItemChange, ScopeRow
from solar_core.persistence.errors import PersistenceError
from solar_core.persistence.fingerprint import describe, fingerprint, same_embedder
from solar_core.persistence.journal import (
    InconsistentSnapshot,
    Journal,
    plain_json,
    snapshot_params,
)
from solar_core.persistence.scope import (
    PARTS,
    Scope,
    call_for,
    check_identifier,
    check_part_name,
    named,
)
from solar_core.policies.admission.evaluator_gate import Evaluator
from solar_core.policies.deletion import DeletionPolicy
from solar_core.policies.presets import DEFAULT_POLICY
from solar_core.policies.salience import prior_for
from solar_core.retrieval.ranking import DEFAULT_RETRIEVAL, check_floor, check_retrieval

#: texts embedded per call by :meth:`MemoryStore.reembed`
_EMBED_BATCH = 256


class _Omitted(int):
    """An int default the caller did not pass, told from the same value passed by identity."""


#: ``MemoryStore``'s capacity when none is passed: new scopes get 50, existing ones keep theirs
DEFAULT_CAPACITY: Final[int] = _Omitted(50)

#: scopes a ``MemoryStore`` keeps open by default. An open scope of capacity 50 holds ~150-200 KB
#: (its vectors, policy state and traces): 256 of them ~50 MB, and a process serving any number
#: of users plateaus at ~170 MB over its baseline (an evicted memory nobody holds is freed at
#: once: it holds no reference cycle). Reopening an evicted scope loads its snapshot (~3-10 ms
#: at capacity 50), which a working set of up to 256 active users never pays.
DEFAULT_MAX_OPEN_SCOPES: Final[int] = 256


#: a scope's seed: ``MemoryStore``'s seed plus a hash of its key, or random bits, modulo this
_SEEDS = 2**32


def _stored_seed(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"seed must be an int, got {type(value).__name__}")
    if not 0 <= value < _SEEDS:
        raise ValueError(f"seed must be in [0, 2**32), got {value}")
    return value


def check_stored_settings(key: str, stored: object) -> dict[str, Any]:
    """A scope's stored settings (its row's text, read as JSON): its memory's parameters (see
    :meth:`SolarMemory.params <solar_core.SolarMemory.params>`), its seed and the fingerprint
    of the embedder that made its vectors. What the parameters say is checked when the memory
    is built from them (by its parts' constructors, before they allocate); settings edited in
    the database give a :class:`PersistenceError` naming the setting."""
    if (
        not isinstance(stored, dict)
        or not {"params", "seed"} <= stored.keys() <= {"params", "seed", "embedder"}
        or not isinstance(stored["params"], dict)
        or not isinstance(stored["params"].get("dim"), int)
    ):
        raise PersistenceError(
            f"{_named(key)} has no readable settings; the database was edited by hand"
        )
    try:
        _stored_seed(stored["seed"])
    except (TypeError, ValueError) as err:
        raise PersistenceError(
            f"{_named(key)} has seed={stored['seed']!r} in its stored settings, which no "
            f"memory takes ({err}); the database was edited by hand: restore it, or forget "
            f"the scope ({call_for('forget', Scope.from_key(key))}: its items go)"
        ) from None
    return stored


def _dim(config: Mapping[str, Any]) -> int:
    """The dimension of a scope's vectors, from its settings."""
    return int(config["params"]["dim"])


#: a scope's parameters that a store given no policy parameters leaves as the scope's own
_POLICY_SETTINGS = frozenset(
    {"eviction", "admission", "trace_size", "importance_weight", "ttl_days"}
    | {"trace_retention_days"}
)


def _check_max_open_scopes(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(
            f"max_open_scopes must be an int (how many scopes to keep open in memory), got "
            f"{value!r}: pass e.g. max_open_scopes={DEFAULT_MAX_OPEN_SCOPES}"
        )
    if value < 1:
        raise ValueError(
            f"max_open_scopes must be at least 1, got {value}: pass the number of scopes to "
            f"keep open, e.g. max_open_scopes={DEFAULT_MAX_OPEN_SCOPES} (more than the users "
            "active at once)"
        )
    return value


def _default_prior(part: Any) -> Any:
    """A chat policy's part with the default salience prior (what a re-embedded scope takes:
    the prior it had may read the old embedder's vectors); any other part as it is."""
    if isinstance(part, dict) and part.get("class") == "SalienceEviction":
        return {**part, "params": {**part["params"], "prior": prior_for(None, 0).name}}
    return part


def _plain(value: object) -> Any:
    """``value`` as it reads back from the database (JSON: tuples become lists...)."""
    return json.loads(json.dumps(value))


def open_backend(
    url: str | os.PathLike[str], durability: str = "normal", read_only: bool = False
) -> Backend:
    """The backend for ``url``: ``postgresql://...`` or ``postgres://...`` -> PostgreSQL;
    ``sqlite:///path``, a path or ``":memory:"`` -> SQLite. ``read_only``: an existing store,
    opened so that the database refuses every write (see :class:`~.reader.MemoryReader`)."""
    if isinstance(url, str) and url.startswith(("postgresql://", "postgres://")):
        from solar_core.persistence.postgres_backend import PostgresBackend

        return PostgresBackend(url, read_only=read_only)
    if not isinstance(url, str | os.PathLike):
        raise TypeError(f"url must be a path or a database URL, got {type(url).__name__}")
    path = os.fspath(url)
    if path.startswith("sqlite:///"):
        path = path[len("sqlite:///") :] or ":memory:"
    elif "://" in path:
        raise ValueError(f"unsupported database URL {path!r}: use a file path or postgresql://")
    if not path:
        raise ValueError("url must name a database file")
    from solar_core.persistence.sqlite_backend import SQLiteBackend

    return SQLiteBackend(path, durability=durability, read_only=read_only)


def _given_backend(url: str | os.PathLike[str] | None, backend: object, durability: str) -> Backend:
    """The database of a new store: opened from ``url`` (default ``solar_memory.db``), or the
    open ``backend`` given instead."""
    if backend is None:
        return open_backend("solar_memory.db" if url is None else url, durability)
    if url is not None:
        raise TypeError(
            "give MemoryStore a url or a backend, not both: the backend is the database "
            f"already opened (url={url!r})"
        )
    if not isinstance(backend, Backend):
        raise TypeError(
            "backend must be a solar_core.persistence.Backend (SQLiteBackend, PostgresBackend "
            f"or a subclass of yours), got {type(backend).__name__}; or pass a url"
        )
    if backend.taken:
        raise ValueError(
            "this backend already serves a MemoryStore: open one backend per store (two stores "
            "on one connection would not see each other's steps)"
        )
    if durability != "normal":
        raise TypeError(
            "durability is a setting of SQLiteBackend(durability=...) when a backend is given"
        )
    backend.taken = True
    return backend


#: what a re-embedded memory keeps of the old one besides its items (see ``_reembedded``)
_Carried = tuple[int, int, Mapping[str, Any] | None, float | None]


def _from_item_rows(rows: list[tuple[Any, ...]]) -> tuple[list[tuple[str, Record]], _Carried]:
    """A scope's items as records, from its item rows (oldest step first), and what can be
    carried from them: the id counter (new ids never reuse a stored one). Importance is not in
    the rows: each item starts again at the default."""
    records = [
        (
            str(item_id),
            Record(
                text=str(text),
                metadata=json.loads(metadata),
                step=int(step),
                created_at=float(created_at),
                category=str(category),
                valid_until=None if valid_until is None else float(valid_until),
            ),
        )
        for item_id, text, metadata, _, category, created_at, valid_until, step in rows
    ]
    ids = [int(i[1:]) for i, _ in records if i[:1] == "m" and i[1:].isdigit()]
    return records, (max(ids, default=0), 0, None, None)


def _where(parts: Mapping[str, object]) -> dict[str, str]:
    """Parts to select scopes by, checked (names and values)."""
    return {check_part_name(p): check_identifier(p, v) for p, v in parts.items()}


def _has(scope: Scope, where: Mapping[str, str]) -> bool:
    """Whether ``scope`` has every part of ``where``."""
    parts = scope.parts()
    return all(parts.get(p) == v for p, v in where.items())


def _named(key: str) -> str:
    """The scope of ``key`` as a message names it (see :func:`.scope.named`)."""
    return named(Scope.from_key(key))


def _journal(memory: SolarMemory) -> Journal | None:
    """The journal ``memory`` runs its steps through, if it is persisted."""
    runner = memory.runner
    return runner if isinstance(runner, Journal) else None


def _usable(memory: SolarMemory) -> bool:
    """Whether ``memory`` is still attached to its scope (not closed, not forgotten)."""
    journal = _journal(memory)
    return journal is not None and not journal.closed


def _current(memory: SolarMemory) -> bool:
    """Whether ``memory`` is usable once caught up with other processes: a scope another
    process forgot or erased is noticed here, so the store hands out a new, empty memory for
    it instead of one whose next step would fail (a few microseconds on SQLite when nobody
    else wrote)."""
    if not _usable(memory):
        return False
    try:
        with memory.lock:
            memory.runner.sync()
    except PersistenceError:
        if _usable(memory):
            raise
    return _usable(memory)


def _snapshot(memory: SolarMemory, unless_below: int = 0) -> None:
    """Snapshot ``memory``'s scope (see :meth:`Journal.checkpoint`), unless its log since the
    snapshot holds fewer than ``unless_below`` steps. A scope another process forgot has nothing
    to snapshot, and is not brought back: that is no failure (the memory is closed, as it would
    be by its next step); any other error is raised."""
    journal = _journal(memory)
    if journal is None or journal.closed:
        return
    try:
        journal.checkpoint(memory, unless_below)
    except PersistenceError:
        if not journal.closed:
            raise  # a real failure: the scope is still there


#: an evicted scope is snapshotted once its log since the snapshot holds this many steps; a
#: shorter log is cheaper to replay on reopening than a snapshot is to write (and to store: a
#: snapshot is the whole state, a step its inputs), so it stays as it is
EVICTED_LOG = 32


class MemoryStore:
    """Persistent memories, one per scope (org / project / user / session), in one database.

    ``MemoryStore("agent.db")`` opens (or creates) a SQLite file; a ``postgresql://`` URL uses
    PostgreSQL instead, for many processes and machines. Each scope gets its own
    :class:`~solar_core.SolarMemory` -- its own capacity, policy state, gate state and random
    generator -- built from the store's settings the first time it is used and persisted from
    then on: every step is one transaction, and a memory reopened later (or in another process)
    continues exactly where it stopped. No call on one scope's memory can return, evict or
    change another scope's items.

    A scope is *stored* from its first write (an add, a clear, a lifecycle sweep): reading a
    scope that is not stored -- ``len``, ``items``, ``get``, ``stats``, a look -- creates
    nothing, and neither do a recorded retrieval and its feedback on it (they return nothing
    from an empty memory; they are kept in this process and stored with the first write --
    merged into the scope if another process stores it first -- or dropped if the process stops
    before). :meth:`names`, :meth:`scopes` and ``in`` list the stored scopes.

    At most ``max_open_scopes`` memories are kept open (:attr:`open_scopes`, least recently
    used first), so the process's memory stays flat however many users it serves over its
    life. Opening one more evicts the least recently used: its response cache is dropped, the
    store lets go of it, and it is snapshotted as :meth:`close` does if its log since the last
    snapshot holds :data:`EVICTED_LOG` steps or more (a shorter log is replayed on reopening:
    cheaper than writing, and storing, the whole state for a user served once); using the
    scope again reopens it from the database exactly as it was (same items, statistics and
    next random draws). A caller still holding an evicted memory object keeps
    using it: every step is logged as usual, and while the object lives the store hands out
    that same object again (one live memory per scope and store). An evicted scope that is not
    stored yet stores nothing, as on :meth:`close`: the retrievals and ratings it kept stay
    with the memory object while someone holds it, and are gone once nobody does.

    Args:
        url: a SQLite file path (default ``solar_memory.db``), ``":memory:"``, ``sqlite:///path``
            or a ``postgresql://`` URL.
        backend: instead of ``url``, an open database: a
            :class:`~solar_core.persistence.SQLiteBackend`, a
            :class:`~solar_core.persistence.PostgresBackend`, or a
            :class:`~solar_core.persistence.Backend` of your own (it implements
            ``transaction``, ``execute`` and ``close``). The store closes it on :meth:`close`.
        policy, capacity, **memory_params: the settings of every *new* scope's memory (as for
            :class:`~solar_core.SolarMemory`; ``policy`` defaults to
            :data:`~solar_core.policies.presets.DEFAULT_POLICY`, ``capacity`` to 50). A scope keeps
            the settings it was created with: one of these left out takes the scope's own (a scope
            created under another default policy keeps it), one passed must be the scope's
            (else :class:`PersistenceError`, not a silent change).
        k: the default number of hits of every scope's retrievals.
        retrieval, min_score: how every scope's retrievals rank and their relevance floor (as
            for :class:`~solar_core.SolarMemory`; how a store reads, not part of a scope: a
            scope opened by another store reads as that store says).
        embedder, dim: shared by every scope (loaded once). A scope records the embedder's
            fingerprint (:mod:`~solar_core.persistence.fingerprint`) and refuses to be opened
            with another one; :meth:`reembed` migrates it.
        seed: each scope's generator is seeded from it and the scope's key (random if ``None``);
            the seed is stored, so a scope's run is reproducible either way.
        clock: the time source of every scope (``time.time``).
        evaluator: an addition evaluator for every scope (see ``SolarMemory(evaluator=)``).
        deletion: a zero-argument factory of a :class:`~solar_core.policies.deletion.DeletionPolicy`
            (each scope needs its own), e.g. ``lambda: HistoryDeletion()``.
        snapshot_every: steps between full snapshots of a scope (reopening replays at most
            this many logged steps).
        durability: SQLite only: ``"normal"`` (survives any process crash) or ``"full"``
            (also an OS crash or power loss; slower).
        default_policy: the policy of new scopes when ``policy`` is not given (the chat
            adapters pass :data:`~solar_core.policies.presets.CHAT_POLICY`); unlike ``policy``, it
            asks nothing of existing scopes, which keep their own.
        max_open_scopes: the most scopes kept open in memory (default
            :data:`DEFAULT_MAX_OPEN_SCOPES`, 256: ~50 MB of open memories at capacity 50);
            set it above the number of users active at once, else their memories are reopened
            (a snapshot load, a few ms) on each use; lower it to use less memory.

    Example:
        >>> store = MemoryStore(":memory:", policy="fifo", capacity=5, embedder="hash", seed=0)
        >>> alice = store.scope(user="alice")
        >>> _ = alice.add("my locker code is 1234")
        >>> [h.text for h in alice.retrieve("locker code", k=1)]
        ['my locker code is 1234']
        >>> bob = store.scope(user="bob")
        >>> len(bob), bob.retrieve("locker code"), store.names()   # reads store nothing
        (0, [], ['user=alice'])
        >>> _ = bob.add("prefers tea")                              # the first write does
        >>> store.names()
        ['user=alice', 'user=bob']
        >>> store.close()
    """

    def __init__(
        self,
        url: str | os.PathLike[str] | None = None,
        *,
        backend: Backend | None = None,
        policy: str | None = None,
        capacity: int | None = DEFAULT_CAPACITY,
        embedder: object = None,
        dim: int | None = None,
        k: int = 3,
        retrieval: str = DEFAULT_RETRIEVAL,
        min_score: float | str | None = "auto",
        seed: int | None = None,
        clock: Callable[[], float] = time.time,
        evaluator: Evaluator | None = None,
        deletion: Callable[[], DeletionPolicy] | None = None,
        snapshot_every: int = 1000,
        durability: str = "normal",
        max_open_scopes: int = DEFAULT_MAX_OPEN_SCOPES,
        default_policy: str = DEFAULT_POLICY,
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
        #: the most scopes kept open (see the class docs)
        self.max_open_scopes = _check_max_open_scopes(max_open_scopes)
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
            raise ValueError(f"seed must be a non-negative int, got {seed!r}")
        plain_json(memory_params, "memory settings")
        # What the caller left out is only a default for new scopes: an existing scope keeps
        # its own (a database from before a change of the library's defaults keeps working).
        self._given = {
            "policy": policy is not None,
            "capacity": type(capacity) is not _Omitted,
            "params": bool(memory_params),
        }
        #: the policy of new scopes (an existing scope keeps the one it was created with)
        self.policy = (default_policy or DEFAULT_POLICY) if policy is None else policy
        #: the capacity of new scopes
        self.capacity = int(capacity) if type(capacity) is _Omitted else capacity
        self.k, self.seed = k, seed
        self.retrieval, self.min_score = check_retrieval(retrieval), check_floor(min_score)
        self._clock = clock
        self._evaluator = evaluator
        self._deletion = deletion
        self._params = dict(memory_params)
        self.embedder: Embedder | None = embedder  # type: ignore[assignment]  # resolved below
        self.dim = dim
        # One probe memory checks every setting now and resolves the embedder to share.
        try:
            probe = SolarMemory(
                self.policy,
                self.capacity,
                embedder=embedder,
                dim=dim,
                k=k,
                retrieval=retrieval,
                min_score=min_score,
                clock=clock,
                evaluator=evaluator,
                deletion=deletion() if deletion is not None else None,
                **memory_params,
            )
        except TypeError as err:
            if policy is None and memory_params:  # parameters of the earlier default, say
                raise TypeError(
                    f"{err}. These parameters are checked against the policy new scopes get "
                    f"({self.policy!r}): pass the policy they are for, e.g. policy='solar'"
                ) from err
            raise
        self.embedder, self.dim = probe.embedder, probe.dim
        # Every scope will be snapshotted: find out now if something in it cannot be (a policy
        # class of your own that is not registered, a parameter that is not a JSON value).
        try:
            container.dumps(snapshot_params(probe), probe.state())
        except TypeError as err:
            raise TypeError(
                f"these settings cannot be persisted: {err} (a policy class of your own is "
                "registered with solar_core.register_policy)"
            ) from err
        self._fingerprint: dict[str, Any] | None = None  # computed on first need: see below
        #: the parameters of every new scope's memory (its recorded settings)
        self._new_params: dict[str, Any] = _plain(snapshot_params(probe))
        self.backend = _given_backend(url, backend, durability)
        self.url = self.backend.url
        # the open scopes, least recently used first
        self._memories: OrderedDict[str, SolarMemory] = OrderedDict()
        # evicted memories a caller still holds (they keep working: handed out again)
        self._evicted: weakref.WeakValueDictionary[str, SolarMemory] = weakref.WeakValueDictionary()
        self._caches: dict[str, ResponseCache] = {}
        self._lock = threading.RLock()
        self._closed = False

    # -- a scope's settings -------------------------------------------------------------------
    @property
    def fingerprint(self) -> dict[str, Any] | None:
        """The embedder's fingerprint, recorded in every scope this store creates (``None`` for a
        store with ``dim=`` only: its vectors come from the caller, unchecked). Computed when a
        scope is first opened, not when the store is: it embeds a text, and a store opened only
        to list or erase scopes should not load a model for that."""
        if self._fingerprint is None and self.embedder is not None:
            self._fingerprint = fingerprint(self.embedder)
        return self._fingerprint

    def _config(self, key: str) -> dict[str, Any]:
        seed = (
            (self.seed + zlib.crc32(key.encode())) % 2**32
            if self.seed is not None
            else secrets.randbits(32)  # stored with the scope: a replay uses the same
        )
        config: dict[str, Any] = {"params": self._new_params, "seed": seed}
        if self.fingerprint is not None:
            config["embedder"] = self.fingerprint
        plain: dict[str, Any] = _plain(config)  # as it will read back: one memory either way
        return plain

    def _memory(self, config: Mapping[str, Any], embedder: object) -> SolarMemory:
        """A new, empty memory with a scope's settings (its state before its first step),
        reading as this store's memories read."""
        params = {**config["params"], "k": self.k}
        params.update(retrieval=self.retrieval, min_score=self.min_score)
        return SolarMemory.from_params(
            params,
            embedder=embedder,
            clock=self._clock,
            evaluator=self._evaluator,
            seed=int(config["seed"]),
        )

    def _build(self, key: str, config: Mapping[str, Any]) -> SolarMemory:
        return self._built(key, config, self.embedder)

    def _built(self, key: str, config: Mapping[str, Any], embedder: object) -> SolarMemory:
        """:meth:`_memory`, or :class:`PersistenceError` if its settings are not ones the
        constructors take: a scope of another version of the library, or settings edited in
        the database (the constructors' checks, bounds included, run before they allocate)."""
        try:
            return self._memory(config, embedder)
        except (TypeError, ValueError) as err:
            raise PersistenceError(
                f"{_named(key)} was created with settings this version of solar-memory cannot "
                f"build ({err}); the database was edited by hand: restore it, or forget the "
                f"scope ({call_for('forget', Scope.from_key(key))}: its items go)"
            ) from err

    def _settle(self, key: str, text: str, embedder: bool = True) -> dict[str, Any]:
        """The settings scope ``key`` runs with -- those it was stored with (``text``) -- once
        checked against this store's: a setting passed to the store must be the scope's, one
        left out (policy, capacity, memory params) is the scope's; the embedder must be the
        one that made its vectors (``embedder=False``: not checked). Else
        :class:`PersistenceError`, naming the setting and the ways out."""
        try:
            stored = check_stored_settings(key, json.loads(text))
        except ValueError:
            stored = check_stored_settings(key, None)
        theirs, mine = stored["params"], self._new_params
        for name in sorted({*theirs, *mine}):
            if name == "dim" or theirs.get(name) == mine.get(name):
                continue  # (the dimension goes with the embedder, below)
            given = "params" if name in _POLICY_SETTINGS else name
            if not self._given.get(given, True):
                continue  # left out: the scope keeps its own
            raise PersistenceError(self._mismatch(key, name, theirs.get(name), mine.get(name)))
        if embedder:
            self._check_embedder(key, stored)
        return stored

    @staticmethod
    def _mismatch(key: str, name: str, theirs: object, wanted: object) -> str:
        scope = Scope.from_key(key)
        forget = call_for("forget", scope)
        if name in ("policy", "capacity"):
            fix = (
                f"Omit {name}= so each scope keeps its own, open it with {name}={theirs!r}, or "
                f"forget() the scope to start over ({forget}: its items go)"
            )
        elif name in _POLICY_SETTINGS:
            fix = (
                "Pass none of these settings so each scope keeps its own, pass the same ones, "
                f"or forget() the scope to start over ({forget}: its items go)"
            )
        else:
            fix = (
                "Open it with the settings it was created with, or forget() it to start over "
                f"({forget}: its items go)"
            )
        return (
            f"{named(scope)} was created with {name}={theirs!r}; this store asks for "
            f"{name}={wanted!r}. {fix}"
        )

    def _check_embedder(self, key: str, stored: Mapping[str, Any]) -> None:
        """The scope's vectors must be this store's embedder's (same dimension, same
        fingerprint). A scope with no fingerprint (an older version's, or a ``dim=`` store's)
        is accepted: :meth:`_open` records this store's. A ``dim=`` store checks the
        dimension only."""
        theirs, mine = stored.get("embedder"), self.fingerprint
        same_dim = _dim(stored) == self.dim
        if mine is None:
            if not same_dim:
                raise PersistenceError(self._mismatch(key, "dim", _dim(stored), self.dim))
            return
        if same_dim and (theirs is None or same_embedder(theirs, mine)):
            return
        made_by = describe(theirs) if theirs is not None else "an embedder it did not record"
        scope = Scope.from_key(key)
        raise PersistenceError(
            f"{named(scope)} holds {_dim(stored)}-dimensional vectors made by {made_by}; this "
            f"store's embedder is {describe(mine)}, whose queries would not find them. Open "
            "the store with the embedder the scope was created with, or "
            f"re-embed the scope's items with this one: {call_for('reembed', scope)} (it keeps "
            "their texts and metadata; their policy statistics start over)"
        )

    # -- scopes -------------------------------------------------------------------------------
    def scope(
        self,
        user: str | None = None,
        *,
        org: str | None = None,
        project: str | None = None,
        session: str | None = None,
        **parts: str | None,
    ) -> SolarMemory:
        """The memory of this scope (empty until its first write stores it; reopened after);
        ``parts``: parts of your own, e.g. ``scope(user="alice", team="billing")``."""
        return self.get(Scope(org=org, project=project, user=user, session=session, **parts))

    async def ascope(self, user: str | None = None, **parts: str | None) -> SolarMemory:
        """:meth:`scope` (same arguments) for asyncio code: opened in a worker thread (opening
        may read the database and replay its log); the memory's own ``a``-calls do the same
        per step."""
        return await in_worker(self.scope, user, **parts)

    async def aclose(self) -> None:
        """:meth:`close` for asyncio code, in a worker thread."""
        await in_worker(self.close)

    def get(self, scope: Scope | Mapping[str, str] | str) -> SolarMemory:
        """The memory of ``scope``: a :class:`Scope`, a mapping of parts, or a session id (a
        ``str`` or an ``int``); it stores nothing: see :class:`MemoryStore`.

        A string is a session id here and in every method that takes a scope, whatever it
        spells: ``get("user=alice")`` is the session named ``user=alice``, never Alice's
        memory, so a session id a client chose can only open that client's session. Open a
        stored scope by the name :meth:`names` lists through :meth:`Scope.from_key
        <solar_core.persistence.Scope.from_key>` (or take the :class:`Scope` objects of
        :meth:`scopes`).

        >>> store = MemoryStore(":memory:", policy="fifo", capacity=3, embedder="hash")
        >>> _ = store.scope(user="alice").add("my locker code is 1234")
        >>> store.names(), len(store.get("user=alice"))          # a session of that name
        (['user=alice'], 0)
        >>> [i.text for i in store.get(Scope.from_key("user=alice")).items()]
        ['my locker code is 1234']
        >>> store.close()
        """
        wanted = Scope.of(scope)
        key = wanted.key
        with self._lock:
            self._check_open()
            memory = self._memories.get(key)
            if memory is not None and _current(memory):
                self._memories.move_to_end(key)
                return memory
            held = self._evicted.pop(key, None)
            if held is not None and _current(held):
                memory = held  # evicted, still held by a caller: the scope's live memory
            else:
                self._drop_cache(key)  # it watched the old memory
                memory = self._open(wanted)
            self._memories[key] = memory
            self._memories.move_to_end(key)
            self._evict()
            return memory

    @property
    def open_scopes(self) -> list[str]:
        """The keys of the open scopes, least recently used first (at most
        ``max_open_scopes``)."""
        with self._lock:
            return list(self._memories)

    def _live(self, key: str) -> SolarMemory | None:
        """This store's memory of ``key``: open, or evicted but still held by a caller."""
        memory = self._memories.get(key)
        return memory if memory is not None else self._evicted.get(key)

    def _evict(self) -> None:
        """Let go of the least recently used scopes beyond ``max_open_scopes`` (under the
        store's lock): each is snapshotted and its response cache dropped. A failed snapshot
        loses nothing (every step is in the log): the scope is evicted all the same, and the
        error raised once the others are."""
        failures: list[tuple[str, Exception]] = []
        while len(self._memories) > self.max_open_scopes:
            key, memory = self._memories.popitem(last=False)
            self._drop_cache(key)
            if not _usable(memory):
                continue
            try:
                _snapshot(memory, EVICTED_LOG)
            except Exception as err:
                failures.append((key, err))
            if _usable(memory):  # a caller may still hold it: it is handed out again
                self._evicted[key] = memory
        if len(self._caches) > self.max_open_scopes:  # a cache made for a scope evicted since
            for key in [key for key in self._caches if key not in self._memories]:
                self._drop_cache(key)
        if failures:
            failed, error = failures[0]
            raise PersistenceError(
                f"{_named(failed)} could not be snapshotted when it was evicted from the open "
                f"scopes: {error} (its steps are all stored: it reopens from its log)"
            ) from error

    def existing(self, scope: Scope | Mapping[str, str] | str) -> SolarMemory | None:
        """``scope``'s memory if it exists, else ``None``; never creates one.

        It exists if it is stored (``scope in store``). A scope another process forgot is
        noticed here (its memory object is then closed) and does not exist.

        >>> store = MemoryStore(":memory:", policy="fifo", capacity=3, embedder="hash")
        >>> store.existing({"user": "alice"}) is None
        True
        >>> alice = store.scope(user="alice")        # handed out: nothing stored
        >>> alice.retrieve("my plan?"), store.existing({"user": "alice"}) is None
        ([], True)
        >>> _ = alice.add("I am on the Team plan")     # the first write stores the scope
        >>> store.existing(Scope(user="alice")) is alice, store.names()
        (True, ['user=alice'])
        >>> store.forget({"user": "alice"}), store.existing({"user": "alice"}) is None
        (True, True)
        >>> store.close()
        """
        wanted = Scope.of(scope)
        with self._lock:
            self._check_open()
        for _ in range(2):
            if wanted not in self:
                return None
            memory = self.get(wanted)
            try:
                len(memory)  # catches up with the database: a forget elsewhere closes it
            except PersistenceError:
                journal = _journal(memory)
                if journal is None or not journal.closed:
                    raise
                continue  # forgotten elsewhere (perhaps recreated since): look again
            return memory
        return None

    def _locate(self, scope: Scope, create: bool, config: str) -> tuple[ScopeRow, bool] | None:
        """Scope's row (in the caller's transaction), created with ``config`` if ``create``:
        ``(row, whether this call created it)``, or ``None``."""
        backend, key = self.backend, scope.key
        row = backend.find_scope(key, lock=create)
        if row is not None:
            return row, False
        if not create:
            return None
        created = backend.create_scope(key, scope.parts(), config, time.time())
        row = backend.find_scope(key, lock=True)  # ours, or another's that won the race
        if row is None:
            raise PersistenceError(f"{_named(key)} could not be created")
        return row, created

    def _open(self, scope: Scope) -> SolarMemory:
        key = scope.key
        backend = self.backend
        for attempt in range(3):
            with backend.transaction(write=False):
                row = backend.find_scope(key)
            if row is None:  # not stored: a pending memory, stored by its first write
                config, scope_id = self._config(key), None
                text = json.dumps(config)
            else:
                config, text, scope_id = self._settle(key, row.config), row.config, row.id
                if self.fingerprint is not None and "embedder" not in config:
                    # A scope of an older version (or of a dim= store) records no embedder:
                    # it is this one's from now on. (Compare and set: if another process
                    # changed the settings meanwhile, attaching reads and checks them.)
                    config = {**config, "embedder": self.fingerprint}
                    pinned = json.dumps(config)
                    with backend.transaction(write=True):
                        if backend.update_config(row.id, row.config, pinned):
                            text = pinned
            memory = self._build(key, config)
            journal = Journal(
                backend,
                scope,
                scope_id=scope_id,
                config_text=text,
                config=config,
                build=partial(self._build, key),
                settle=partial(self._settle, key),
                locate=partial(self._locate, scope),
                snapshot_every=self.snapshot_every,
            )
            try:
                journal.attach(memory)
            except PersistenceError:
                if not journal.closed or attempt == 2:
                    raise
                continue  # forgotten by another process since we looked: look again
            return memory
        raise AssertionError("unreachable")  # pragma: no cover

    # -- migrations ---------------------------------------------------------------------------
    def reembed(self, scope: Scope | Mapping[str, str] | str) -> bool:
        """Re-embed ``scope``'s items with this store's embedder and record its fingerprint:
        the migration for a scope created with another embedder (which this store refuses to
        open). Returns ``False``, changing nothing, if the scope already has this embedder.

        Kept, item by item (in their order): the id, text, metadata, category, importance,
        ``created_at`` and ``valid_until``; also the scope's settings and seed, its random
        generator's state, the time of its last decay, and its id and retrieval counters (new
        items never reuse an id; an old retrieval cannot be rated). Started over: the policy's
        statistics of every item (as if each had just been stored, in order: posteriors,
        recency, frequency), the admission gate's state, the counters (``steps`` =
        ``admitted`` = the number of items), the decision and retrieval traces, and the
        retrievals awaiting feedback; each item's ``created_step`` is its new position. Items
        stored with ``embedding=`` are re-embedded from their text. A chat memory's salience
        prior becomes the default one, and the scope's response cache is dropped (ask the
        store for it again: it embeds with the new embedder).

        It also brings back a scope whose snapshot is of the first format (a pickle, which this
        version never reads, whatever the embedder), or whose snapshot its reader refuses (one
        written before snapshots were read back before writing, of a memory copied while
        stored): the scope is rebuilt from its item rows,
        which keep each item's id, text, metadata, category, ``created_at``, ``valid_until``
        and step; importance, the random generator and the retrieval counter start over too.

        It is one transaction, like a step: other processes using the scope continue from the
        new state (or refuse it, if their embedder is the old one). The scope's other settings
        must fit this store, as when opening it.

        >>> import tempfile, os
        >>> from solar_core import HashEmbedder
        >>> path = os.path.join(tempfile.mkdtemp(), "m.db")
        >>> old = MemoryStore(path, policy="fifo", embedder="hash", seed=0)
        >>> _ = old.scope(user="alice").add("prefers green tea", category="identity")
        >>> old.close()
        >>> new = MemoryStore(path, policy="fifo", embedder=HashEmbedder(dim=64), seed=0)
        >>> new.scope(user="alice")
        Traceback (most recent call last):
        ...
        solar_core.persistence.errors.PersistenceError: scope 'user=alice' holds 256-dimensional ...
        >>> new.reembed({"user": "alice"}), new.reembed({"user": "alice"})
        (True, False)
        >>> [(i.text, i.category) for i in new.scope(user="alice").items()]
        [('prefers green tea', 'identity')]
        >>> new.close()
        """
        wanted = Scope.of(scope)
        key = wanted.key
        with self._lock:
            self._check_open()
        if self.embedder is None or self.fingerprint is None:
            raise ValueError("reembed() needs a store with an embedder; this one has dim= only")
        vectors: dict[str, FloatVector] = {}  # by text: a retry embeds only what is new
        for _ in range(5):
            with self.backend.transaction(write=False):
                row = self.backend.find_scope(key)
                snapshot = None if row is None else self.backend.read_snapshot(row.id)
            if row is None:
                raise ValueError(f"{_named(key)} is not stored: there is nothing to re-embed")
            # A snapshot of the first format is never read, nor one its reader refuses: the
            # scope is rebuilt from its items.
            stored = self._settle(key, row.config, embedder=False)
            legacy = snapshot is not None and (
                container.format_of(snapshot[1]) != container.FORMAT
                or self._inconsistent(wanted, row, stored, snapshot)
            )
            embedded = stored.get("embedder")
            if (
                not legacy
                and _dim(stored) == self.dim
                and same_embedder(embedded, self.fingerprint)
            ):
                return False
            if legacy:
                with self.backend.transaction(write=False):
                    records, carried = _from_item_rows(self.backend.item_rows(row.id))
                base = (row.seq, row.snapshot_seq, row.config)
            else:
                old, journal = self._as_stored(wanted, row, stored)
                records = old.core.records()
                carried = (*old.core.continuation(), old.lifecycle.last_decay)
                base = (journal.seq, journal.snapshot_seq, journal.config_text)
            params = {**stored["params"], "dim": self.dim}
            # its statistics start over; a part made for the old vectors (a salience prior of
            # another embedder) takes the new embedder's
            params["eviction"] = _default_prior(params["eviction"])
            config = {**stored, "params": params, "embedder": self.fingerprint}
            fresh = self._reembedded(key, records, carried, config, vectors)
            blob = container.dumps(snapshot_params(fresh), fresh.state())
            items: list[ItemChange] = [
                (
                    "put",
                    item_id,
                    record.text,
                    json.dumps(record.metadata),
                    fresh.vector(item_id).tobytes(),
                    record.category,
                    float(record.created_at),
                    None if record.valid_until is None else float(record.valid_until),
                    record.step,
                )
                for item_id, record in fresh.core.records()
            ]
            with self.backend.transaction(write=True):
                now = self.backend.scope_seqs(row.id, key, lock=True)
                # Written only over the state it was built from: a step logged meanwhile (by
                # any process) would be lost; then it starts again from the new state.
                unchanged = base[2] == row.config and now == (base[0], base[1], row.config)
                if unchanged:
                    self.backend.rebuild_scope(
                        row.id, base[0] + 1, blob, json.dumps(config), items, time.time()
                    )
            if unchanged:
                with self._lock:
                    memory = self._memories.get(key)
                    live = None if memory is None else _journal(memory)
                    if live is not None:
                        live.recheck()  # our own commit: its token did not move
                    # its answers were cached with the old embedder's vectors: a new cache
                    # (store.response_cache) embeds with the scope's new one
                    self._drop_cache(key)
                return True
        raise PersistenceError(f"{_named(key)} kept changing while it was re-embedded: try again")

    def _inconsistent(
        self, scope: Scope, row: ScopeRow, stored: dict[str, Any], snapshot: tuple[int, bytes]
    ) -> bool:
        """Whether the scope's ``snapshot`` decodes to a memory that is not consistent. (Only
        that: one this process cannot read for another reason -- a policy of your own not
        imported, another build, a forgery -- is no reason to rebuild the scope from its
        items; re-embedding reads it as before, and refuses it as opening it would.)"""
        journal = self._reader(scope, row, stored)
        try:
            journal.read_snapshot(snapshot[1], f"the snapshot of {_named(scope.key)}")
        except InconsistentSnapshot:
            return True
        except PersistenceError:
            return False
        return False

    def _as_stored(
        self, scope: Scope, row: ScopeRow, stored: dict[str, Any]
    ) -> tuple[SolarMemory, Journal]:
        """The scope's memory as stored, without its embedder (a replay needs none: the log
        holds vectors), read-only, and the journal that read it (its seq and config)."""
        journal = self._reader(scope, row, stored)
        memory = self._vectors_only(scope.key, stored)
        journal.attach(memory)
        journal.forgotten()  # read only: it never writes
        return memory, journal

    def _vectors_only(self, key: str, config: Mapping[str, Any]) -> SolarMemory:
        return self._built(key, config, None)

    def _reader(self, scope: Scope, row: ScopeRow, stored: dict[str, Any]) -> Journal:
        """A journal that reads the scope as stored, without its embedder."""
        return Journal(
            self.backend,
            scope,
            scope_id=row.id,
            config_text=row.config,
            config=stored,
            build=partial(self._vectors_only, scope.key),
            settle=partial(self._settle, scope.key, embedder=False),
            locate=partial(self._locate, scope),
            snapshot_every=self.snapshot_every,
        )

    def _reembedded(
        self,
        key: str,
        records: list[tuple[str, Record]],
        carried: _Carried,
        config: dict[str, Any],
        vectors: dict[str, FloatVector],
    ) -> SolarMemory:
        """A new memory with ``config`` holding ``records`` (in order), embedded by this store;
        ``carried``: the old memory's id and retrieval counters, random generator state and last
        decay (``None``: the new memory's own)."""
        assert self.embedder is not None and self.dim is not None
        todo = list(dict.fromkeys(r.text for _, r in records if r.text not in vectors))
        for start in range(0, len(todo), _EMBED_BATCH):
            texts = todo[start : start + _EMBED_BATCH]
            rows = unit_rows(self.embedder.embed(texts), self.dim, len(texts))
            vectors.update(zip(texts, rows, strict=True))
        fresh = self._build(key, config)
        id_counter, retrieval_seq, rng_state, last_decay = carried
        items = [(item_id, record, vectors[record.text]) for item_id, record in records]
        try:
            fresh.core.put_back(items, (id_counter, retrieval_seq, rng_state))
        except ValueError as err:  # pragma: no cover - capacity and ids are the old ones
            raise PersistenceError(f"{_named(key)}: {err}") from None
        if last_decay is not None:
            fresh.lifecycle.last_decay = last_decay  # importance is decayed to then
        fresh.check_invariants()
        return fresh

    def response_cache(
        self, scope: Scope | Mapping[str, str] | str, **settings: Any
    ) -> ResponseCache:
        """The scope's semantic response cache (created on first use with ``settings``, as for
        :class:`~solar_core.ResponseCache`), watching the scope's memory (see
        :meth:`ResponseCache.watch <solar_core.ResponseCache.watch>`):

        - a fact stored in the scope evicts the answers it relates to;
        - an item deleted from it (``remove``, ``clear``, lifecycle expiry, a deletion policy;
          not an eviction to make room) drops every answer of the scope;
        - forgetting or erasing the scope drops the cache: one handed out before answers and
          caches nothing any more, and this method hands out a new one.

        Deletions in this process take effect before the deleting call returns; those of other
        processes (and a forget or erase there) before this cache's next lookup, which first
        brings the scope's memory up to date. This method does too, so after another process
        forgot the scope it returns the new scope's cache, not the dead one. It lives in this
        process: a cache starts cold after a restart, by design."""
        wanted = Scope.of(scope)
        memory = self.get(wanted)  # checks the scope, and that the store is open
        journal = _journal(memory)
        if journal is not None:
            try:
                with memory.lock:
                    journal.sync()  # notices a forget or erase by another process
            except PersistenceError:
                if not journal.closed:
                    raise
                memory = self.get(wanted)  # forgotten elsewhere: its memory and cache are new
        with self._lock:
            cache = self._caches.get(wanted.key)
            if cache is None:
                embedder = memory.embedder  # the scope's (MiniLM for a scope MiniLM made)
                if embedder is None:
                    raise ValueError("a response cache needs an embedder; this store has dim= only")
                cache = ResponseCache(embedder, **settings)
                cache.watch(memory)
                self._caches[wanted.key] = cache
            elif settings:
                raise ValueError(f"the response cache of {wanted.key!r} exists already")
            return cache

    def _drop_cache(self, key: str) -> None:
        """Empty and let go of a scope's response cache (its memory is gone or no longer open
        here): a caller still holding it finds no answer of a forgotten user there (and, its
        memory being closed by the forget, gets none cached there again)."""
        cache = self._caches.pop(key, None)
        if cache is not None:
            cache.clear()

    def forget(self, scope: Scope | Mapping[str, str] | str) -> bool:
        """Delete ``scope``'s memory and every row of it (items, log, snapshot); returns whether
        it existed (as for :meth:`existing`: steps this store kept of a scope not stored yet
        go too). Its memory object stops working (it would otherwise write it back)."""
        key = Scope.of(scope).key
        return bool(self._forget_keys([key]))

    def erase(
        self,
        *,
        user: str | None = None,
        org: str | None = None,
        project: str | None = None,
        session: str | None = None,
        **parts: str | None,
    ) -> list[str]:
        """Forget every scope with these parts (e.g. ``erase(user="alice")``: all of Alice's
        memories, in every org, project, session and part of your own); returns their keys."""
        given = {"user": user, "org": org, "project": project, "session": session, **parts}
        where = _where({p: v for p, v in given.items() if v is not None})
        if not where:
            raise ValueError(
                f"erase() needs at least one of {', '.join(PARTS)} (or a part of your own)"
            )
        with self._lock:
            self._check_open()
            keys = self._keys(where)
            # and this process's memories of such scopes not stored yet: what they kept
            # (queries, ratings) is theirs too
            keys += [
                key
                for key in [*self._memories, *self._evicted]
                if key not in keys and _has(Scope.from_key(key), where)
            ]
        return self._forget_keys(keys)

    def _keys(self, where: Mapping[str, str]) -> list[str]:
        """The stored scopes' keys with these parts (the four of :data:`PARTS` are columns;
        parts of your own live in the key only)."""
        columns = {p: v for p, v in where.items() if p in PARTS}
        with self.backend.transaction(write=False):
            keys = self.backend.scope_keys(columns)
        if len(columns) < len(where):
            keys = [k for k in keys if _has(Scope.from_key(k), where)]
        return keys

    def _forget_keys(self, keys: list[str]) -> list[str]:
        gone = []
        with self._lock:
            self._check_open()
            backend = self.backend
            for key in keys:
                memory = self._memories.pop(key, None)
                held = self._evicted.pop(key, None)
                if memory is None:
                    memory = held
                self._drop_cache(key)
                journal = None if memory is None else _journal(memory)
                if memory is not None and journal is not None:
                    # First: a step in flight finishes (it holds the lock), none starts after,
                    # so nothing of this scope can be written once its rows are gone.
                    with memory.lock:
                        journal.forgotten()
                with backend.transaction(write=True):
                    row = backend.find_scope(key, lock=True)
                    if row is not None:
                        backend.delete_scope(row.id)
                if row is not None:
                    gone.append(key)
        return gone

    def names(self, **parts: str) -> list[str]:
        """The keys of the stored scopes (all, or those with these parts, yours included),
        oldest first. A key is a name to show or keep, not a scope to pass back as it is (a
        string passed for a scope is a session id): ``store.get(Scope.from_key(key))`` opens
        its scope, and :meth:`scopes` lists them as :class:`Scope` objects."""
        where = _where(parts)
        with self._lock:
            self._check_open()
            return self._keys(where)

    def names_from(self, prefix: str) -> list[str]:
        """The keys of the stored scopes that begin with ``prefix``, oldest first: a range of
        the key index, so it takes as long among 100,000 scopes as among ten.

        >>> store = MemoryStore(":memory:", policy="fifo", capacity=3, embedder="hash")
        >>> for user in ("ann", "anna", "bob"):
        ...     _ = store.scope(user=user).add("hello")
        >>> store.names_from("user=ann")
        ['user=ann', 'user=anna']
        >>> store.close()
        """
        if not isinstance(prefix, str):
            raise TypeError(f"prefix must be a str, got {type(prefix).__name__}")
        if not prefix.isascii():  # keys are percent-encoded: no other key begins with it
            return []
        with self._lock:
            self._check_open()
            with self.backend.transaction(write=False):
                return self.backend.scope_keys_from(prefix)

    def due(self, now: float | None = None) -> list[str]:
        """The keys of the stored scopes holding an item past its ``valid_until`` at ``now``
        (default: the store's clock), oldest first: what a sweep must visit, found through an
        index, without opening any scope."""
        at = self._clock() if now is None else now
        with self._lock:
            self._check_open()
            with self.backend.transaction(write=False):
                return self.backend.due_scope_keys(float(at))

    def scopes(self, **parts: str) -> list[Scope]:
        """:meth:`names` as :class:`Scope` objects."""
        return [Scope.from_key(k) for k in self.names(**parts)]

    def __contains__(self, scope: object) -> bool:
        """Whether ``scope`` is stored (as for :meth:`get`, a string is a session id: ask
        ``Scope.from_key(name) in store`` of a name :meth:`names` lists)."""
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
        """Snapshot every open memory (so reopening replays nothing) and close the database;
        evicted memories a caller still holds are snapshotted and closed too. A scope another
        process forgot meanwhile has nothing to snapshot: it is closed, not brought back."""
        with self._lock:
            if self._closed:
                return
            errors: list[Exception] = []
            try:
                for memory in [*self._memories.values(), *self._evicted.values()]:
                    try:  # one scope's trouble spares the others
                        _snapshot(memory)
                    except Exception as err:
                        errors.append(err)
                    finally:
                        journal = _journal(memory)
                        if journal is not None:
                            journal.close(memory, snapshot=False)
            finally:
                self._closed = True
                self._memories.clear()
                self._evicted.clear()
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

    def __copy__(self) -> MemoryStore:
        raise self._refused("copy.copy()")

    def __deepcopy__(self, memo: dict[int, Any]) -> MemoryStore:
        raise self._refused("copy.deepcopy()")

    def __getstate__(self) -> Any:
        raise self._refused("pickling")

    def _refused(self, how: str) -> TypeError:
        # A copy would share (or lose) the connection, the open scopes and their journals: the
        # copy's close() would close the original's database under it.
        return TypeError(
            f"{how} of a MemoryStore is refused: it holds a database connection and its open "
            "scopes. Open the same database again with MemoryStore(path_or_url) for a second "
            "store (each scope's steps reach both), or take a scope's memory.detached() copy"
        )

    def __repr__(self) -> str:
        return (
            f"MemoryStore({self.url!r}, policy={self.policy!r}, capacity={self.capacity}, "
            f"open_scopes={len(self._memories)}/{self.max_open_scopes})"
        )


class ScopeView:
    """A :class:`MemoryStore` seen through one scope part (what framework adapters use: a
    LangGraph ``thread_id`` or ``user_id``, a LlamaIndex ``session_id``)."""

    def __init__(self, store: MemoryStore, part: str) -> None:
        self.store, self.part = store, check_part_name(part)
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
            Scope.from_key(k).parts()[self.part]
            for k in self.store.names_from(prefix)
            if "&" not in k
        ]

    def __contains__(self, value: object) -> bool:
        try:
            return {self.part: self.check(value)} in self.store
        except (TypeError, ValueError):
            return False

    def __len__(self) -> int:
        return len(self.names())
