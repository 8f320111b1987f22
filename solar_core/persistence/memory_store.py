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
from typing import Any, Final, TypeVar

from solar_core.basics.records import Record
from solar_core.basics.types import Decision
from solar_core.basics.validation import FloatVector, check_k, unit_rows
from solar_core.embedders.embedder import Embedder
from solar_core.engine.async_calls import in_worker
from solar_core.engine.extraction import Extraction
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
    shown_scope,
)
from solar_core.policies.admission.evaluator_gate import Evaluator
from solar_core.policies.deletion import DeletionPolicy
from solar_core.policies.presets import DEFAULT_POLICY
from solar_core.policies.salience import prior_for
from solar_core.retrieval.ranking import DEFAULT_RETRIEVAL, check_floor, check_retrieval

_T = TypeVar("_T")

#: texts embedded per call by :meth:`MemoryStore.reembed`
_EMBED_BATCH = 256


class _Omitted(int):
    """An int default the caller did not pass, told from the same value passed by identity."""


#: ``MemoryStore``'s capacity when none is passed: new scopes get 50, existing ones keep theirs
DEFAULT_CAPACITY: Final[int] = _Omitted(50)


def default_capacity(capacity: int) -> int:
    """``capacity`` for new scopes only, as :data:`DEFAULT_CAPACITY` is: existing scopes keep
    their own (``MemoryStore(path, capacity=default_capacity(1000))``)."""
    return _Omitted(check_k(capacity, "capacity"))


#: scopes a ``MemoryStore`` keeps open by default: an open scope of capacity 50 holds ~150-200 KB,
#: and reopening an evicted one loads its snapshot (~3-10 ms)
DEFAULT_MAX_OPEN_SCOPES: Final[int] = 256

#: an evicted scope is snapshotted once its log since the snapshot holds this many steps; a
#: shorter log is cheaper to replay on reopening than a snapshot is to write and store
EVICTED_LOG = 32

#: a scope's parameters that a store given no policy parameters leaves as the scope's own
_POLICY_SETTINGS = frozenset(
    {"eviction", "admission", "trace_size", "importance_weight", "ttl_days", "trace_retention_days"}
    | {"repeats"}
)

#: what a re-embedded memory keeps of the old one besides its items (see ``_reembedded``)
_Carried = tuple[int, int, Mapping[str, Any] | None, float | None]


def check_stored_settings(key: str, text: str) -> dict[str, Any]:
    """A scope's stored settings (its row's JSON text): its memory's parameters (see
    :meth:`SolarMemory.params <solar_core.SolarMemory.params>`), its seed and its embedder's
    fingerprint. The parameters are checked when the memory is built from them; settings
    edited in the database give a :class:`PersistenceError` naming the setting."""
    try:
        stored = json.loads(text)
    except ValueError:
        stored = None
    if (
        not isinstance(stored, dict)
        or not {"params", "seed"} <= stored.keys() <= {"params", "seed", "embedder"}
        or not isinstance(stored["params"], dict)
        or not isinstance(stored["params"].get("dim"), int)
    ):
        raise PersistenceError(
            f"{_named(key)} has no readable settings; the database was edited by hand"
        )
    seed = stored["seed"]
    if isinstance(seed, bool) or not isinstance(seed, int):
        why = f"seed must be an int, got {type(seed).__name__}"
    elif not 0 <= seed < 2**32:
        why = f"seed must be in [0, 2**32), got {seed}"
    else:
        return stored
    raise PersistenceError(
        f"{_named(key)} has seed={seed!r} in its stored settings, which no memory takes "
        f"({why}); the database was edited by hand: restore it, or forget the scope "
        f"({call_for('forget', Scope.from_key(key))}: its items go)"
    )


def _dim(config: Mapping[str, Any]) -> int:
    return int(config["params"]["dim"])


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


def _from_item_rows(rows: list[tuple[Any, ...]]) -> tuple[list[tuple[str, Record]], _Carried]:
    """A scope's items as records, from its item rows (oldest step first), and the id counter
    to carry (new ids never reuse a stored one); importance starts again at the default."""
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
    parts = scope.parts()
    return all(parts.get(p) == v for p, v in where.items())


def _named(key: str) -> str:
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
    """Whether ``memory`` is usable once caught up with other processes (a scope another
    process forgot or erased is noticed here: the store then hands out a new memory)."""
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
    """Snapshot ``memory``'s scope unless its log since the snapshot holds fewer than
    ``unless_below`` steps (see :meth:`Journal.checkpoint`). A scope another process forgot
    is not brought back: the memory is closed, which is no failure."""
    journal = _journal(memory)
    if journal is None or journal.closed:
        return
    try:
        journal.checkpoint(memory, unless_below)
    except PersistenceError:
        if not journal.closed:
            raise  # a real failure: the scope is still there


class MemoryStore:
    """Persistent memories, one per scope (org / project / user / session), in one database.

    ``MemoryStore("agent.db")`` opens (or creates) a SQLite file; a ``postgresql://`` URL uses
    PostgreSQL instead, for many processes and machines. Each scope gets its own
    :class:`~solar_core.SolarMemory` (capacity, policy state, gate state, random generator),
    built from the store's settings on first use: every step is one transaction, and a memory
    reopened later (or in another process) continues exactly where it stopped. No call on one
    scope's memory can return, evict or change another scope's items.

    A scope is *stored* from its first write (an add, a clear, a lifecycle sweep): reading a
    scope that is not stored creates nothing, and neither do a recorded retrieval and its
    feedback (kept in this process and stored with the first write, or dropped if the process
    stops before). :meth:`names`, :meth:`scopes` and ``in`` list the stored scopes.

    At most ``max_open_scopes`` memories stay open (:attr:`open_scopes`, least recently used
    first). Opening one more evicts the least recently used: its response cache is dropped and
    it is snapshotted if its log since the last snapshot holds :data:`EVICTED_LOG` steps or
    more; using it again reopens it exactly as it was. A caller still holding an evicted memory
    keeps using it (every step is logged), and the store hands out that same object again
    while it lives (one live memory per scope and store).

    Args:
        url: a SQLite file path (default ``solar_memory.db``), ``":memory:"``, ``sqlite:///path``
            or a ``postgresql://`` URL.
        backend: instead of ``url``, an open :class:`~solar_core.persistence.Backend`
            (SQLite, PostgreSQL or your own); the store closes it on :meth:`close`.
        policy, capacity, **memory_params: the settings of every *new* scope's memory (as for
            :class:`~solar_core.SolarMemory`; ``capacity`` defaults to 50). A scope keeps the
            settings it was created with: one left out takes the scope's own, one passed must
            be the scope's (else :class:`PersistenceError`, not a silent change).
        k, retrieval, min_score: how every scope's retrievals read (not part of a scope).
        embedder, dim: shared by every scope. A scope records the embedder's fingerprint
            (:mod:`~solar_core.persistence.fingerprint`) and refuses another one;
            :meth:`reembed` migrates it.
        seed: each scope's generator is seeded from it and the scope's key (random if ``None``);
            the seed is stored, so a scope's run is reproducible either way.
        clock, evaluator, extractor, extract: of every scope (see :class:`~solar_core.SolarMemory`).
        deletion: a zero-argument factory of a :class:`~solar_core.policies.deletion.DeletionPolicy`
            (each scope needs its own), e.g. ``lambda: HistoryDeletion()``.
        snapshot_every: steps between full snapshots of a scope (the most a reopening replays).
        durability: SQLite only: ``"normal"`` (survives any process crash) or ``"full"``
            (also an OS crash or power loss; slower).
        default_policy: the policy of new scopes when ``policy`` is not given; unlike
            ``policy``, it asks nothing of existing scopes.
        max_open_scopes: the most scopes kept open (default :data:`DEFAULT_MAX_OPEN_SCOPES`);
            set it above the number of users active at once.

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
        extractor: object = None,
        extract: str = "beside",
        **memory_params: Any,
    ) -> None:
        if deletion is not None and (
            not callable(deletion) or isinstance(deletion, DeletionPolicy)
        ):
            raise TypeError(
                "deletion must be a factory (e.g. lambda: HistoryDeletion()): each scope needs "
                "its own deletion policy"
            )
        self.snapshot_every = check_k(snapshot_every, "snapshot_every")
        self.max_open_scopes = check_k(max_open_scopes, "max_open_scopes")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
            raise ValueError(f"seed must be a non-negative int, got {seed!r}")
        plain_json(memory_params, "memory settings")
        # What the caller left out is only a default for new scopes: an existing scope keeps
        # its own (a database from before a change of the library's defaults keeps working).
        self._resized: set[str] = set()  # scopes this store resized (see _settle)
        self._extraction = Extraction.of(extractor, extract)  # every scope's, a run-time part
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
        self._clock, self._evaluator = clock, evaluator
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
        self.embedder: Embedder | None = probe.embedder
        self.dim = probe.dim
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
        store with ``dim=`` only). Computed when a scope is first opened, not when the store is:
        it embeds a text, which a store opened only to list or erase scopes should not."""
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

    def _built(self, key: str, config: Mapping[str, Any], embedder: object) -> SolarMemory:
        """A new, empty memory with a scope's settings, reading as this store's memories read;
        :class:`PersistenceError` if the constructors (whose checks run before they allocate)
        refuse the settings: another version's, or edited in the database."""
        params = {**config["params"], "k": self.k}
        params.update(retrieval=self.retrieval, min_score=self.min_score)
        try:
            memory = SolarMemory.from_params(
                params,
                embedder=embedder,
                clock=self._clock,
                evaluator=self._evaluator,
                seed=int(config["seed"]),
            )
            memory.extraction = self._extraction
            return memory
        except (TypeError, ValueError) as err:
            raise PersistenceError(
                f"{_named(key)} was created with settings this version of solar-memory cannot "
                f"build ({err}); the database was edited by hand: restore it, or forget the "
                f"scope ({call_for('forget', Scope.from_key(key))}: its items go)"
            ) from err

    def _settle(self, key: str, text: str, embedder: bool = True) -> dict[str, Any]:
        """The settings scope ``key`` was stored with (``text``), once checked against this
        store's: a setting passed to the store must be the scope's, one left out is the
        scope's; the embedder must be the one that made its vectors (unless ``embedder`` is
        false). Else :class:`PersistenceError`, naming the setting and the ways out."""
        stored = check_stored_settings(key, text)
        theirs, mine = stored["params"], self._new_params
        resized = key in self._resized  # by this store: its capacity is the scope's own now
        for name in sorted({*theirs, *mine}):
            if name in ("dim", "rows") or theirs.get(name) == mine.get(name):
                continue  # (the dimension goes with the embedder, below; rows with capacity)
            if resized and name in ("capacity", "eviction"):
                continue
            if self._given.get("params" if name in _POLICY_SETTINGS else name, True):
                raise PersistenceError(self._mismatch(key, name, theirs.get(name), mine.get(name)))
        if embedder:
            self._check_embedder(key, stored)
        return stored

    @staticmethod
    def _mismatch(key: str, name: str, theirs: object, wanted: object) -> str:
        scope = Scope.from_key(key)
        forget = f"forget() the scope to start over ({call_for('forget', scope)}: its items go)"
        if name in ("policy", "capacity"):
            fix = f"Omit {name}= so each scope keeps its own, open it with {name}={theirs!r}, or"
        elif name in _POLICY_SETTINGS:
            fix = "Pass none of these settings so each scope keeps its own, pass the same ones, or"
        else:
            fix = "Open it with the settings it was created with, or"
        return (
            f"{named(scope)} was created with {name}={theirs!r}; this store asks for "
            f"{name}={wanted!r}. {fix} {forget}"
        )

    def _check_embedder(self, key: str, stored: Mapping[str, Any]) -> None:
        """The scope's vectors must be this store's embedder's (same dimension and fingerprint;
        a ``dim=`` store checks the dimension only). A scope that recorded no fingerprint is
        accepted: :meth:`_open` records this store's."""
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

    def _journal_of(
        self, scope: Scope, scope_id: int | None, text: str, config: dict[str, Any], read: bool
    ) -> Journal:
        """A journal of ``scope`` as stored (``text``, read as ``config``); ``read``: one that
        reads it without the embedder (a replay needs none: the log holds vectors)."""
        return Journal(
            self.backend,
            scope,
            scope_id=scope_id,
            config_text=text,
            config=config,
            build=partial(self._built, scope.key, embedder=None if read else self.embedder),
            settle=partial(self._settle, scope.key, embedder=not read),
            locate=partial(self._locate, scope),
            snapshot_every=self.snapshot_every,
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
        """:meth:`scope` (same arguments) for asyncio code, opened in a worker thread."""
        return await in_worker(self.scope, user, **parts)

    async def aclose(self) -> None:
        """:meth:`close` for asyncio code, in a worker thread."""
        await in_worker(self.close)

    def get(self, scope: Scope | Mapping[str, str] | str) -> SolarMemory:
        """The memory of ``scope``: a :class:`Scope`, a mapping of parts, or a session id (a
        ``str`` or an ``int``); it stores nothing: see :class:`MemoryStore`.

        A string is a session id here and in every method that takes a scope, whatever it
        spells, so a session id a client chose can only open that client's session. Open a
        stored scope by the name :meth:`names` lists through :meth:`Scope.from_key
        <solar_core.persistence.Scope.from_key>`.

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
            if memory is None or not _current(memory):
                memory = self._evicted.pop(key, None)  # still held by a caller: handed out again
                if memory is None or not _current(memory):
                    self._drop_cache(key)  # it watched the old memory
                    memory = self._open(wanted)
                self._memories[key] = memory
            self._memories.move_to_end(key)
            self._evict()
            return memory

    @property
    def open_scopes(self) -> list[str]:
        """The keys of the open scopes, least recently used first."""
        with self._lock:
            return list(self._memories)

    def _evict(self) -> None:
        """Let go of the least recently used scopes beyond ``max_open_scopes`` (under the
        store's lock), snapshotting them. A failed snapshot loses nothing (every step is in
        the log): the scope is evicted all the same, and the error raised once the others are."""
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
        """``scope``'s memory if it is stored (``scope in store``), else ``None``; never
        creates one. A scope another process forgot does not exist.

        >>> store = MemoryStore(":memory:", policy="fifo", capacity=3, embedder="hash")
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
        # get() catches up with the database: a memory of a scope forgotten elsewhere (and
        # perhaps stored again since) is replaced by a new one
        return self.get(wanted) if wanted in self else None

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
        key, backend = scope.key, self.backend
        for attempt in range(3):
            with backend.transaction(write=False):
                row = backend.find_scope(key)
            if row is None:  # not stored: a pending memory, stored by its first write
                config, scope_id = self._config(key), None
                text = json.dumps(config)
            else:
                config, text, scope_id = self._settle(key, row.config), row.config, row.id
                if self.fingerprint is not None and "embedder" not in config:
                    # A scope that records no embedder (an older version's, a dim= store's)
                    # is this one's from now on. (Compare and set: if another process changed
                    # the settings meanwhile, attaching reads and checks them.)
                    config = {**config, "embedder": self.fingerprint}
                    pinned = json.dumps(config)
                    with backend.transaction(write=True):
                        if backend.update_config(row.id, row.config, pinned):
                            text = pinned
            memory = self._built(key, config, self.embedder)
            journal = self._journal_of(scope, scope_id, text, config, read=False)
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

        Kept, item by item (in order): the id, text, metadata, category, importance,
        ``created_at`` and ``valid_until``; also the scope's settings and seed, its random
        generator's state, its last decay and its id and retrieval counters. Started over: the
        policy's statistics of every item (as if each had just been stored, in order), the
        gate's state, the counters, the traces and the retrievals awaiting feedback. A chat
        memory's salience prior becomes the default one, and the scope's response cache is
        dropped.

        It also brings back a scope whose snapshot is of the first format (a pickle, never
        read) or one its reader finds inconsistent: the scope is rebuilt from its item rows
        (importance, the random generator and the retrieval counter start over too).

        It is one transaction, like a step; the scope's other settings must fit this store.

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
            stored = self._settle(key, row.config, embedder=False)
            legacy = snapshot is not None and (
                container.format_of(snapshot[1]) != container.FORMAT
                or self._inconsistent(wanted, row, stored, snapshot[1])
            )
            if (
                not legacy
                and _dim(stored) == self.dim
                and same_embedder(stored.get("embedder"), self.fingerprint)
            ):
                return False
            if legacy:
                with self.backend.transaction(write=False):
                    records, carried = _from_item_rows(self.backend.item_rows(row.id))
                base = (row.seq, row.snapshot_seq, row.config)
            else:
                # the scope's memory as stored, read only
                journal = self._journal_of(wanted, row.id, row.config, stored, read=True)
                old = self._built(key, stored, None)
                journal.attach(old)
                journal.forgotten()  # read only: it never writes
                records = old.core.records(past=True)  # past values: re-embedded too
                carried = (*old.core.continuation(), old.lifecycle.last_decay)
                base = (journal.seq, journal.snapshot_seq, journal.config_text)
            params = {**stored["params"], "dim": self.dim}
            # a part made for the old vectors (a salience prior) takes the new embedder's
            params["eviction"] = _default_prior(params["eviction"])
            config = {**stored, "params": params, "embedder": self.fingerprint}
            fresh = self._reembedded(key, records, carried, config, vectors)
            if self._rebuilt(key, row, base, fresh, config):
                return True
        raise PersistenceError(f"{_named(key)} kept changing while it was re-embedded: try again")

    def resize(self, scope: Scope | Mapping[str, str] | str, capacity: int) -> list[Decision]:
        """Change a stored scope's capacity (:meth:`SolarMemory.resize`): growing keeps every
        item, shrinking evicts by the scope's policy, each eviction traced; what was learned of
        the items that stay is kept. Returns the evictions' decisions. One transaction, like a
        step; other processes take the new capacity at their next call. This store opens the
        scope at its new capacity even if it was given another ``capacity=``.

        >>> store = MemoryStore(":memory:", policy="fifo", capacity=3, embedder="hash", seed=0)
        >>> for text in ("tea at five", "jazz on fridays", "a cat named Io"):
        ...     _ = store.scope(user="alice").add(text)
        >>> [d.evicted for d in store.resize({"user": "alice"}, 2)]
        ['m1']
        >>> memory = store.scope(user="alice")
        >>> memory.capacity, [i.text for i in memory.items()]
        (2, ['jazz on fridays', 'a cat named Io'])
        >>> store.close()
        """
        wanted = Scope.of(scope)
        key, capacity = wanted.key, check_k(capacity, "capacity")
        with self._lock:
            self._check_open()
        for _ in range(5):
            with self.backend.transaction(write=False):
                row = self.backend.find_scope(key)
            if row is None:
                raise ValueError(f"{_named(key)} is not stored: there is nothing to resize")
            stored = check_stored_settings(key, row.config)
            journal = self._journal_of(wanted, row.id, row.config, stored, read=True)
            old = self._built(key, stored, None)
            journal.attach(old)
            memory = old.detached()  # the scope as stored, in this process only
            journal.forgotten()  # read only: it never writes
            evicted = memory.resize(capacity)  # (a refused capacity raises: nothing written)
            config = {**stored, "params": _plain(snapshot_params(memory))}
            base = (journal.seq, journal.snapshot_seq, journal.config_text)
            if self._rebuilt(key, row, base, memory, config):
                with self._lock:
                    self._resized.add(key)
                return evicted
        raise PersistenceError(f"{_named(key)} kept changing while it was resized: try again")

    def _rebuilt(
        self,
        key: str,
        row: ScopeRow,
        base: tuple[int, int, str],
        fresh: SolarMemory,
        config: dict[str, Any],
    ) -> bool:
        """Replace scope ``key`` (``row``) with ``fresh`` and its ``config``, only if the scope
        is still at ``base`` (its ``seq``, snapshot ``seq`` and config); whether it was."""
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
            # Written only over the state it was built from: a step logged meanwhile (by any
            # process) would be lost; then it starts again from the new state.
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
                self._drop_cache(key)  # its answers were cached with the old vectors or items
        return unchanged

    def _inconsistent(
        self, scope: Scope, row: ScopeRow, stored: dict[str, Any], blob: bytes
    ) -> bool:
        """Whether the scope's snapshot decodes to a memory that is not consistent. (Only that:
        one unreadable for another reason -- a policy not imported, a forgery -- is refused by
        re-embedding as by opening it, not rebuilt from its items.)"""
        journal = self._journal_of(scope, row.id, row.config, stored, read=True)
        try:
            journal.read_snapshot(blob, f"the snapshot of {_named(scope.key)}")
        except InconsistentSnapshot:
            return True
        except PersistenceError:
            return False
        return False

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
        fresh = self._built(key, config, self.embedder)
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
        :meth:`ResponseCache.watch <solar_core.ResponseCache.watch>`): a fact stored in the
        scope evicts the answers it relates to; an item deleted from it (not an eviction to
        make room) drops every answer; forgetting or erasing the scope drops the cache (this
        method then hands out a new one). Other processes' deletions take effect before the
        cache's next lookup. It lives in this process: it starts cold after a restart."""
        wanted = Scope.of(scope)
        memory = self.get(wanted)  # caught up: a scope forgotten elsewhere has a new memory
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
        here): a caller still holding it finds no answer of a forgotten user there."""
        cache = self._caches.pop(key, None)
        if cache is not None:
            cache.clear()

    def forget(self, scope: Scope | Mapping[str, str] | str) -> bool:
        """Delete ``scope``'s memory and every row of it (items, log, snapshot); returns whether
        it was stored. Its memory object stops working (it would otherwise write it back)."""
        return bool(self._forget_keys([Scope.of(scope).key]))

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
                memory = held if memory is None else memory
                self._drop_cache(key)
                if memory is not None and (journal := _journal(memory)) is not None:
                    # First: a step in flight finishes (it holds the lock), none starts after,
                    # so nothing of this scope can be written once its rows are gone.
                    with memory.lock:
                        journal.forgotten()
                with backend.transaction(write=True):
                    row = backend.find_scope(key, lock=True)
                    if row is not None:
                        backend.delete_scope(row.id)
                        gone.append(key)
        return gone

    def names(self, **parts: str) -> list[str]:
        """The keys of the stored scopes (all, or those with these parts), oldest first. A key
        is a name to keep, not a scope to pass back as it is (a string passed for a scope is a
        session id): ``store.get(Scope.from_key(key))`` opens its scope. A ``SolarStore``
        namespace's key encodes its labels: :meth:`shown_names` shows them readably."""
        where = _where(parts)
        with self._lock:
            self._check_open()
            return self._keys(where)

    def shown_names(self, **parts: str) -> list[str]:
        """:meth:`names` as people read them (and ``solar-memory --scope`` takes them back): a
        ``SolarStore`` namespace as its labels, ``namespace=users.alice``, not its key.

        >>> from solar_core.persistence.scope import namespace_scope
        >>> with MemoryStore(":memory:", policy="fifo", capacity=3, embedder="hash") as store:
        ...     _ = store.get(namespace_scope(("users", "alice"))).add("likes tea")
        ...     keys, shown = store.names(), store.shown_names()
        >>> keys
        ['project=langgraph-store&user=%5B%22users%22%2C%22alice%22%5D']
        >>> shown
        ['namespace=users.alice']
        """
        return [shown_scope(Scope.from_key(key)) for key in self.names(**parts)]

    def names_from(self, prefix: str) -> list[str]:
        """The keys of the stored scopes that begin with ``prefix``, oldest first (a range of
        the key index: as fast among 100,000 scopes as among ten).

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
        return self._read(lambda: self.backend.scope_keys_from(prefix))

    def due(self, now: float | None = None) -> list[str]:
        """The keys of the stored scopes holding an item past its ``valid_until`` at ``now``
        (default: the store's clock), oldest first, found through an index without opening
        any scope."""
        at = float(self._clock() if now is None else now)
        return self._read(lambda: self.backend.due_scope_keys(at))

    def scopes(self, **parts: str) -> list[Scope]:
        """:meth:`names` as :class:`Scope` objects."""
        return [Scope.from_key(k) for k in self.names(**parts)]

    def __contains__(self, scope: object) -> bool:
        """Whether ``scope`` is stored (a string is a session id, as for :meth:`get`)."""
        try:
            key = Scope.of(scope).key
        except (TypeError, ValueError):
            return False
        return self._read(lambda: self.backend.find_scope(key) is not None)

    def _read(self, query: Callable[[], _T]) -> _T:
        """``query()`` in a read transaction of the open store."""
        with self._lock:
            self._check_open()
            with self.backend.transaction(write=False):
                return query()

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
        keys = self.store.names_from(f"{self.part}=")
        return [Scope.from_key(k).parts()[self.part] for k in keys if "&" not in k]

    def __contains__(self, value: object) -> bool:
        try:
            return {self.part: self.check(value)} in self.store
        except (TypeError, ValueError):
            return False

    def __len__(self) -> int:
        return len(self.names())
