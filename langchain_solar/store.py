"""LangGraph's long-term memory API (``BaseStore``), every namespace a SOLAR-curated memory.

``create_agent(model, tools, store=SolarStore(...))`` and tools that use ``runtime.store`` get
what LangGraph's ``InMemoryStore`` / ``PostgresStore`` give (namespaces, ``put``/``get``/
``search``/``delete``/``list_namespaces``, ``batch``/``abatch``, semantic ``search(query=...)``
with an ``index``), plus a bound: each namespace is one persistent scope of a
:class:`~solar_core.persistence.MemoryStore` (SQLite by default, or a PostgreSQL URL) holding at
most ``capacity`` items, whose policy decides what a ``put`` keeps and what it evicts.

- ``put`` is an offer: the policy may refuse it, or evict another item of the namespace to make
  room. Each put has its own verdict: :attr:`SolarStore.last_decision` is the latest put's of
  the calling thread or asyncio task (so concurrent tools never read each other's), and
  :meth:`SolarStore.decision` the latest put's of one key; the scope's trace keeps every one.
  ``put(..., pinned=True)`` stores the item as an ``identity`` item: never refused for being
  weak, never evicted. Updating a key replaces its value and keeps its place and ``created_at``.
- ``search(query=...)`` is a retrieval: the items it returns are credited, and
  :meth:`SolarStore.feedback` rates them (a like keeps them, a dislike exposes them).
- With ``capacity=None`` nothing is refused or evicted, and results are those of
  ``InMemoryStore`` (same keys, values, namespaces, filters and orders; scores differ only by
  float rounding), checked by a property test.
- TTL as in LangGraph's ``PostgresStore`` (``supports_ttl``): ``put(..., ttl=minutes)``,
  ``SolarStore(ttl={"default_ttl": ..., "refresh_on_read": ...})``, ``refresh_ttl`` on reads,
  :meth:`SolarStore.sweep_ttl` and :meth:`SolarStore.start_ttl_sweeper`. It is the item's
  lifecycle: an item put with a TTL has ``valid_until = now + ttl`` (minutes, on the store's
  clock) and its TTL in its metadata; a read that refreshes it is a :meth:`Lifecycle.renew
  <solar_core.engine.lifecycle.Lifecycle.renew>` step, and removing the expired ones a
  :meth:`Lifecycle.lapse <solar_core.engine.lifecycle.Lifecycle.lapse>` step (logged, as every step
  of a persisted memory: another process sees the same deadlines). An expired item is never
  returned, even before a sweep, and never takes room: a ``put`` first removes the expired
  items of its namespace.

Differences from ``InMemoryStore``, on purpose: an item has one vector (its indexed texts
joined by newlines; ``InMemoryStore`` keeps one per field and ranks by the best); a ``get`` or
a ``delete`` never creates a namespace (``InMemoryStore`` lists a namespace a ``get`` touched);
TTL is supported (``InMemoryStore`` has none); a namespace is bounded: its labels, in any script,
quoted and joined as a JSON list, may take 256 characters (a longer one is refused with an error
naming it; ``InMemoryStore`` has no bound); a search filter's range operators compare numbers
exactly, however large (``InMemoryStore``'s ``float()`` overflows on ``10**400``), and a filter
nested too deep or inside itself is refused (see :func:`_search_filter`); a value is JSON data
(``InMemoryStore`` keeps any object; a date is refused, in memory as in a file).

>>> from langchain_core.embeddings import DeterministicFakeEmbedding
>>> store = SolarStore(index={"dims": 32, "embed": DeterministicFakeEmbedding(size=32)})
>>> store.put(("users", "alice"), "food", {"text": "I like pizza"})
>>> store.get(("users", "alice"), "food").value
{'text': 'I like pizza'}
>>> [item.key for item in store.search(("users",), query="pizza")]
['food']
>>> store.list_namespaces()
[('users', 'alice')]

With a TTL (minutes; the clock is injected here, so the example does not wait):

>>> now = [0.0]
>>> store = SolarStore(index={"dims": 32, "embed": DeterministicFakeEmbedding(size=32)},
...                    ttl={"default_ttl": 10}, clock=lambda: now[0])
>>> store.put(("users", "bob"), "mood", {"text": "sleepy"})     # the default TTL: 10 minutes
>>> now[0] += 9 * 60
>>> store.get(("users", "bob"), "mood").value                   # a read refreshes it: 10 more
{'text': 'sleepy'}
>>> now[0] += 9 * 60
>>> store.get(("users", "bob"), "mood", refresh_ttl=False).value
{'text': 'sleepy'}
>>> now[0] += 2 * 60                                              # 11 minutes since the read
>>> store.get(("users", "bob"), "mood") is None, store.sweep_ttl()
(True, 1)
"""

from __future__ import annotations

import concurrent.futures
import contextvars
import decimal
import json
import logging
import math
import numbers
import operator
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timezone
from fractions import Fraction
from typing import Any, NoReturn, SupportsIndex

from langgraph.store.base import (
    NOT_PROVIDED,
    BaseStore,
    GetOp,
    IndexConfig,
    Item,
    ListNamespacesOp,
    MatchCondition,
    NotProvided,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
    _ensure_ttl,
    _validate_namespace,
    ensure_embeddings,
    get_text_at_path,
    tokenize_path,
)

from solar_core import SolarMemory
from solar_core.basics.records import METADATA_DEPTH, Record, copy_metadata
from solar_core.basics.types import Decision, Hits, MemoryItem, UnknownItemError
from solar_core.basics.validation import check_feedback
from solar_core.engine.async_calls import in_worker
from solar_core.integrations.copies import refused_copy
from solar_core.persistence import DEFAULT_CAPACITY, MemoryStore
from solar_core.persistence.logged_steps import storable
from solar_core.persistence.scope import (
    Scope,
    namespace_key_prefix,
    namespace_scope,
    scope_namespace,
)
from solar_core.retrieval.filters import number, plain, shown
from solar_core.retrieval.ranking import DEFAULT_RETRIEVAL, check_floor, check_retrieval

from .embeddings import LangChainEmbedder, to_embedder

# metadata keys of a stored item (TTL: its ttl in minutes, only on an item put with one)
VALUE, CREATED, UPDATED, POSITION, INDEXED, TTL = (
    "value",
    "created_at",
    "updated_at",
    "position",
    "indexed",
    "ttl",
)
#: the keys of LangGraph's ``TTLConfig``
TTL_KEYS = ("default_ttl", "refresh_on_read", "sweep_interval_minutes", "omit_expired")
#: minutes between two sweeps of :meth:`SolarStore.start_ttl_sweeper` (as in ``PostgresStore``)
DEFAULT_SWEEP_MINUTES = 5.0
#: how many keys' verdicts :meth:`SolarStore.decision` remembers (the least recently put go)
DECISIONS_KEPT = 10_000

logger = logging.getLogger(__name__)


def check_ttl(ttl: object, what: str = "ttl") -> float | None:
    """``ttl`` as a store keeps it: ``None`` (no expiry) or minutes, a finite number > 0.

    >>> check_ttl(1.5), check_ttl(None)
    (1.5, None)
    >>> check_ttl(-5)
    Traceback (most recent call last):
    ...
    ValueError: ttl must be a finite number of minutes > 0 (or None: no expiry), got -5
    """
    if ttl is None:
        return None
    if isinstance(ttl, bool) or not isinstance(ttl, numbers.Real | decimal.Decimal):
        raise TypeError(
            f"{what} must be a number of minutes (or None: no expiry), got {ttl!r}; "
            "e.g. ttl=60 for an hour"
        )
    try:
        seconds = float(ttl) * 60.0
    except OverflowError:  # an int too large for a float
        seconds = math.inf
    if not (seconds > 0 and math.isfinite(seconds)):
        raise ValueError(
            f"{what} must be a finite number of minutes > 0 (or None: no expiry), got {ttl!r}"
        )
    return float(ttl)


def check_ttl_config(ttl: object) -> TTLConfig | None:
    """LangGraph's ``TTLConfig`` checked: known keys, ``default_ttl`` as :func:`check_ttl`,
    ``refresh_on_read`` and ``omit_expired`` booleans, ``sweep_interval_minutes`` ``None`` or
    a number > 0."""
    if ttl is None:
        return None
    if not isinstance(ttl, Mapping):
        raise TypeError(
            f"ttl must be a TTLConfig dict such as {{'default_ttl': 60}}, got {type(ttl).__name__}"
        )
    unknown = sorted(str(k) for k in ttl if k not in TTL_KEYS)
    if unknown:
        raise ValueError(f"unknown ttl setting(s) {unknown}: the settings are {list(TTL_KEYS)}")
    check_ttl(ttl.get("default_ttl"), "ttl['default_ttl']")
    for flag in ("refresh_on_read", "omit_expired"):
        if flag in ttl and type(ttl[flag]) is not bool:
            raise TypeError(f"ttl[{flag!r}] must be True or False, got {ttl[flag]!r}")
    if ttl.get("sweep_interval_minutes") is not None:
        check_ttl(ttl["sweep_interval_minutes"], "ttl['sweep_interval_minutes']")
    config: TTLConfig = dict(ttl)  # type: ignore[assignment]
    return config


def _lapsed(item: MemoryItem | Record, now: float) -> bool:
    """Past its ``valid_until``: the rule of the lifecycle's expiry, applied to a read."""
    return item.valid_until is not None and now >= item.valid_until


class SearchResults(list[SearchItem]):
    """What :meth:`SolarStore.search` returns: LangGraph's list of ``SearchItem`` and, in
    ``retrievals``, the retrieval the search made in each namespace (a query search credits
    what it returns), which :meth:`SolarStore.feedback` rates with ``retrieval=``."""

    def __init__(
        self,
        items: Iterable[SearchItem] = (),
        retrievals: Sequence[tuple[tuple[str, ...], Hits]] = (),
    ) -> None:
        super().__init__(items)
        self.retrievals: tuple[tuple[tuple[str, ...], Hits], ...] = tuple(retrievals)


class SolarStore(BaseStore):
    """A LangGraph ``BaseStore`` whose namespaces are SOLAR-curated memories (module docstring).

    Args:
        store: a SQLite path, a ``postgresql://`` URL or an open
            :class:`~solar_core.persistence.MemoryStore`; ``None``: an in-memory SQLite
            database (gone with the process, like ``InMemoryStore``).
        index: LangGraph's index config: ``{"dims": ..., "embed": ..., "fields": [...]}``
            (``embed``: any LangChain ``Embeddings``, an embedding function, or a
            ``"provider:model"`` string; without it, ``embedder``: MiniLM by default). Without
            an index, ``search`` ignores ``query`` (as LangGraph's stores do) and items are
            embedded with ``embedder`` for curation only.
        capacity: items kept per namespace (``None``: unbounded, nothing ever evicted).
        policy: the policy of every namespace (default: the library's default; ``unlimited``
            when ``capacity`` is ``None``).
        embedder: without ``index``, what embeds items for curation (default: MiniLM).
        seed: seeds every namespace's policy.
        retrieval: how ``search(query=...)`` ranks (:mod:`solar_core.retrieval.ranking`):
        ``"hybrid"``
            (default: cosine plus a keyword match on the indexed text), ``"vector"`` (cosine,
            as ``InMemoryStore``) or ``"lexical"`` (only items holding a query word); with an
            open ``MemoryStore``, its own ``retrieval``.
        min_score: leave out of a query search the items scoring below it (``None``, the
            default: none left out, as LangGraph's stores return every matching item).
        ttl: LangGraph's ``TTLConfig``: ``default_ttl`` (minutes; for a ``put`` that does not
            say ``ttl=``; ``ttl=None`` there means no expiry), ``refresh_on_read`` (the default
            of ``refresh_ttl`` on reads: ``True``), ``sweep_interval_minutes`` (for
            :meth:`start_ttl_sweeper`, which runs only once called, as in ``PostgresStore``).
            ``omit_expired`` is accepted; expired items are always omitted here.
        clock: the time source (``time.time``), in seconds, of the ``MemoryStore`` this opens:
            the items' times and TTL deadlines. With an open ``MemoryStore``, its own clock is
            used (pass ``clock=`` to it).
    """

    supports_ttl = True

    def __init__(
        self,
        store: str | os.PathLike[str] | MemoryStore | None = None,
        *,
        index: IndexConfig | None = None,
        capacity: int | None = DEFAULT_CAPACITY,
        policy: str | None = None,
        embedder: object = None,
        seed: int | None = None,
        ttl: TTLConfig | None = None,
        clock: Callable[[], float] | None = None,
        retrieval: str | None = None,
        min_score: float | None = None,
    ) -> None:
        self.ttl_config = check_ttl_config(ttl)
        if retrieval is not None:
            check_retrieval(retrieval)
            if isinstance(store, MemoryStore) and retrieval != store.retrieval:
                raise ValueError(
                    "retrieval= is for the MemoryStore that SolarStore opens: pass it to the "
                    "MemoryStore you give instead"
                )
        #: the score below which ``search(query=...)`` leaves items out (``None``: none)
        self.min_score = check_floor(min_score)
        if self.min_score == "auto":
            raise ValueError(
                "SolarStore's min_score is a number or None: a store search returns every "
                "matching item (as LangGraph's stores do) unless you set a floor"
            )
        if clock is not None and not callable(clock):
            raise TypeError(f"clock must be callable, got {type(clock).__name__}")
        if clock is not None and isinstance(store, MemoryStore):
            raise ValueError(
                "clock= is for the MemoryStore that SolarStore opens: pass it to the "
                "MemoryStore you give instead (the memories read the time from it)"
            )
        self.index_config: dict[str, Any] | None = dict(index) if index else None
        if self.index_config is not None:
            if "embed" in self.index_config:
                if "dims" not in self.index_config:
                    raise ValueError('index with "embed" needs "dims", as in LangGraph\'s stores')
                embeddings = ensure_embeddings(self.index_config["embed"])
                embedder = LangChainEmbedder(embeddings, dim=int(self.index_config["dims"]))
            else:  # no model named: ``embedder`` (MiniLM by default)
                embedder = to_embedder(embedder)
            fields = self.index_config.get("fields") or ["$"]
            self._fields: list[tuple[str, Any]] = [
                (p, tokenize_path(p)) if p != "$" else (p, p) for p in fields
            ]
        else:
            embedder = to_embedder(embedder)
            self._fields = []
        if capacity is None and policy is None:
            policy = "unlimited"  # unbounded: keep everything, as LangGraph's stores do
        if isinstance(store, MemoryStore):
            self.store, self._owned = store, False
        else:
            self.store = MemoryStore(
                ":memory:" if store is None else store,
                policy=policy,
                capacity=capacity,
                embedder=embedder,
                seed=seed,
                clock=time.time if clock is None else clock,
                retrieval=DEFAULT_RETRIEVAL if retrieval is None else retrieval,
                min_score=None,  # the store's own floor applies (min_score above)
            )
            self._owned = True
        self._lock = threading.RLock()
        self._closed = False
        # The verdict of each put: the latest of each thread / asyncio task (a context
        # variable: concurrent tools each read their own), the store's latest (for a caller
        # that made no put), and the latest of each key (a bounded map, oldest dropped).
        self._mine: contextvars.ContextVar[Decision | None] = contextvars.ContextVar(
            "solar_store_last_decision", default=None
        )
        self._latest_decision: Decision | None = None
        self._decisions: OrderedDict[tuple[tuple[str, ...], str], Decision] = OrderedDict()
        self._decisions_lock = threading.Lock()
        # each namespace's latest query search through this store, for feedback(namespace=)
        self._latest: dict[tuple[str, ...], Hits] = {}
        self._sweeper: threading.Thread | None = None
        self._stop_sweeping = threading.Event()

    def __copy__(self) -> SolarStore:
        """A second handle on the same namespaces that owns neither the ``MemoryStore`` nor the
        TTL sweeper: closing the copy leaves both running for the original."""
        twin = type(self).__new__(type(self))
        twin.__dict__.update(self.__dict__)
        twin._owned, twin._sweeper, twin._stop_sweeping = False, None, threading.Event()
        return twin

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> NoReturn:
        raise refused_copy(self, "copy.deepcopy()")

    def __reduce_ex__(self, protocol: SupportsIndex) -> NoReturn:
        raise refused_copy(self, "pickling")

    @property
    def last_decision(self) -> Decision | None:
        """The verdict on the latest ``put`` of the calling thread or asyncio task (stored? what
        it evicted, and why): a tool reads its own put's, whatever other tools put meanwhile.
        In a thread or task that made no put: the store's latest put's. ``None`` before any."""
        mine = self._mine.get()
        return mine if mine is not None else self._latest_decision

    @last_decision.setter
    def last_decision(self, decision: Decision | None) -> None:
        self._mine.set(decision)
        self._latest_decision = decision

    def decision(self, namespace: Sequence[str], key: str) -> Decision | None:
        """The verdict on the latest ``put`` of ``key`` in ``namespace`` through this store
        object (``None``: none since it was opened, or the key was deleted since). It is the
        verdict when the item was put: whether it is still stored (a later put may have
        evicted it), ``get`` says. The last :data:`DECISIONS_KEPT` keys put are remembered.

        >>> from langchain_core.embeddings import DeterministicFakeEmbedding
        >>> index = {"dims": 8, "embed": DeterministicFakeEmbedding(size=8), "fields": ["text"]}
        >>> store = SolarStore(index=index, capacity=1, policy="fifo")
        >>> store.put(("alice",), "tea", {"text": "green tea"})
        >>> store.put(("alice",), "empty", {"text": ""})  # nothing to remember, no free room
        >>> store.decision(("alice",), "tea").admitted, store.decision(("alice",), "empty").reason
        (True, 'no text: stored only into free room')
        >>> store.close()
        """
        with self._decisions_lock:
            return self._decisions.get((_labels(namespace), key))

    def _decided(self, namespace: tuple[str, ...], key: str, decision: Decision | None) -> None:
        """Keep ``decision`` as the verdict of ``key``'s latest put (``None``: it was deleted)."""
        with self._decisions_lock:
            self._decisions.pop((namespace, key), None)
            if decision is None:
                return
            self._decisions[(namespace, key)] = decision
            self._latest_decision = decision
            while len(self._decisions) > DECISIONS_KEPT:
                self._decisions.popitem(last=False)

    @property
    def retrieval(self) -> str:
        """How ``search(query=...)`` ranks items (the ``MemoryStore``'s ``retrieval``)."""
        return self.store.retrieval

    # -- namespaces -----------------------------------------------------------------------------
    def namespaces(self, prefix: Sequence[str] = ()) -> list[tuple[str, ...]]:
        """Every namespace written to (or those under ``prefix``), oldest first. Looked up
        through the store's key index: the namespaces under a prefix are found in time that
        does not grow with the number of other namespaces."""
        prefix = tuple(prefix)
        escaped = namespace_key_prefix(prefix)
        keys = self.store.names_from(escaped)
        readable = namespace_key_prefix(prefix, readable=True)
        if readable != escaped and self.store.names_from(readable):
            # Namespaces under it in both forms (a long one is written without \u escapes):
            # the range both lie in, read once, keeps them oldest first.
            keys = self.store.names_from(os.path.commonprefix([escaped, readable]))
        # (a scope of the same project made by hand, not by a store, is no namespace: skipped)
        found = (scope_namespace(Scope.from_key(key)) for key in keys)
        return [ns for ns in found if ns is not None and ns[: len(prefix)] == prefix]

    def memory_for(self, namespace: Sequence[str]) -> SolarMemory | None:
        """The SOLAR memory of ``namespace`` (``None`` if nothing was ever put there: a read
        never creates a namespace), as the chat adapters' ``memory_for(scope)``: its items,
        trace and stats, for inspection (expired items stay there until a sweep or the
        namespace's next ``put`` removes them).

        >>> from langchain_core.embeddings import DeterministicFakeEmbedding
        >>> store = SolarStore(index={"dims": 8, "embed": DeterministicFakeEmbedding(size=8)})
        >>> store.put(("users", "alice"), "tea", {"text": "green tea"})
        >>> [item.id for item in store.memory_for(("users", "alice")).items()]
        ['tea']
        >>> store.memory_for(("users", "bob")) is None
        True
        >>> store.close()
        """
        return self.memory(_labels(namespace))

    def memory(self, namespace: tuple[str, ...]) -> SolarMemory | None:
        """:meth:`memory_for`, under its earlier name (the namespace unchecked)."""
        return self.store.existing(namespace_scope(namespace))

    def forget(self, namespace: Sequence[str]) -> bool:
        """Delete ``namespace`` and everything in it (items, statistics, log); whether it was
        stored. What a settings error names to start a namespace over.

        >>> from langchain_core.embeddings import DeterministicFakeEmbedding
        >>> store = SolarStore(index={"dims": 8, "embed": DeterministicFakeEmbedding(size=8)})
        >>> store.put(("users", "alice"), "tea", {"text": "green tea"})
        >>> store.forget(("users", "alice")), store.forget(("users", "alice"))
        (True, False)
        >>> store.list_namespaces()
        []
        >>> store.close()
        """
        labels = _labels(namespace)
        _validate_namespace(labels)
        with self._lock:
            self._latest.pop(labels, None)
            with self._decisions_lock:  # its items are gone: so are their verdicts
                for put in [put for put in self._decisions if put[0] == labels]:
                    del self._decisions[put]
            return self.store.forget(namespace_scope(labels))

    def resize(self, namespace: Sequence[str], capacity: int) -> list[Decision]:
        """Change ``namespace``'s capacity in place: growing keeps every item, shrinking evicts
        by the policy (each eviction traced); returns the evictions' decisions (see
        :meth:`MemoryStore.resize <solar_core.persistence.MemoryStore.resize>`). A namespace
        never written to is a ``ValueError``.

        >>> from langchain_core.embeddings import DeterministicFakeEmbedding
        >>> store = SolarStore(
        ...     index={"dims": 8, "embed": DeterministicFakeEmbedding(size=8)}, policy="fifo"
        ... )
        >>> for key in ("tea", "jazz", "cat"):
        ...     store.put(("users", "alice"), key, {"text": key})
        >>> [d.evicted for d in store.resize(("users", "alice"), 2)]
        ['tea']
        >>> sorted(item.key for item in store.search(("users", "alice")))
        ['cat', 'jazz']
        >>> store.close()
        """
        labels = _labels(namespace)
        _validate_namespace(labels)
        with self._lock:
            self._latest.pop(labels, None)  # a search's hits may be evicted: none to rate
            return self.store.resize(namespace_scope(labels), capacity)

    def reembed(self, namespace: Sequence[str]) -> bool:
        """Re-embed ``namespace``'s items with this store's embedder: the migration for a
        namespace written with another embedder, which this store refuses to open (the error
        names this call). Keeps each item's key, value and times; the policy's statistics start
        over. ``False``, changing nothing, if it already has this embedder (see
        :meth:`MemoryStore.reembed <solar_core.persistence.MemoryStore.reembed>`)."""
        labels = _labels(namespace)
        _validate_namespace(labels)
        with self._lock:
            self._latest.pop(labels, None)
            return self.store.reembed(namespace_scope(labels))

    # -- batches --------------------------------------------------------------------------------
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ``ops`` in order, every read seeing the store as it was before the batch (as in
        LangGraph's stores); the batch's puts are applied last, the last put of a key wins."""
        results, decision = self._batch(list(ops))
        if decision is not None:
            self._mine.set(decision)
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        # the batch runs in a worker thread, in a copy of this task's context: the verdict is
        # set here, in the task's own, for this task's last_decision
        results, decision = await in_worker(self._batch, list(ops))
        if decision is not None:
            self._mine.set(decision)
        return results

    def _batch(self, ops: list[Op]) -> tuple[list[Result], Decision | None]:
        """:meth:`batch`'s results, and the verdict of its last put (``None``: no put)."""
        tests: dict[int, Callable[[Mapping[str, Any]], bool]] = {}  # each search's filter
        for op in ops:  # bad input fails here, before any op changes anything
            if not isinstance(op, GetOp | SearchOp | ListNamespacesOp | PutOp):
                raise ValueError(f"Unknown operation type: {type(op)}")
            if isinstance(op, PutOp):
                _check_put(op)
            elif isinstance(op, GetOp):
                _labels(op.namespace)
            elif isinstance(op, SearchOp):
                _labels(op.namespace_prefix, prefix=True)
                if op.filter:
                    tests[id(op)] = _search_filter(op.filter)
        with self._lock:
            results: list[Result] = []
            puts: dict[tuple[tuple[str, ...], str], PutOp] = {}
            for op in ops:
                if isinstance(op, GetOp):
                    results.append(self._get(op))
                elif isinstance(op, SearchOp):
                    results.append(self._search(op, tests.get(id(op))))
                elif isinstance(op, ListNamespacesOp):
                    results.append(self._list(op))
                elif isinstance(op, PutOp):
                    puts[(op.namespace, op.key)] = op
                    results.append(None)
                else:
                    raise ValueError(f"Unknown operation type: {type(op)}")
            decision = None
            for op in puts.values():
                made = self._put(op, pinned=False)
                decision = made if made is not None else decision
            return results, decision

    def put(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: Mapping[str, Any],
        index: Any = None,
        *,
        ttl: float | None | NotProvided = NOT_PROVIDED,
        pinned: bool = False,
    ) -> None:
        """``BaseStore.put``; ``pinned=True`` keeps the item whatever the policy says.

        ``ttl``: minutes until the item expires (refreshed by reads: see the class docs);
        ``None``: never; not given: the ``default_ttl`` of the store's ``ttl`` config, if any.
        """
        if not pinned:
            super().put(namespace, key, value, index, ttl=ttl)
            return
        _validate_namespace(namespace)  # what BaseStore.put checks, then its TTL rule
        op = PutOp(namespace, str(key), value, index, ttl=_ensure_ttl(self.ttl_config, ttl))
        _check_put(op)
        with self._lock:
            decision = self._put(op, pinned=True)
        if decision is not None:  # (a delete has none)
            self._mine.set(decision)

    def feedback(
        self,
        *,
        like: bool | None = None,
        score: float | None = None,
        retrieval: SearchResults | None = None,
        namespace: tuple[str, ...] | None = None,
    ) -> None:
        """Rate a ``search(query=...)``: the items it returned, in each namespace it searched.

        Name the search, as one store serves many users: ``retrieval=`` what ``search`` (or
        ``asearch``) returned, or ``namespace=`` for the latest query search this store made in
        that namespace (only that namespace's items are rated). A rating never reaches another
        namespace: results of another store are refused, as is rating one search twice.

        >>> from langchain_core.embeddings import DeterministicFakeEmbedding
        >>> store = SolarStore(index={"dims": 8, "embed": DeterministicFakeEmbedding(size=8)})
        >>> store.put(("alice",), "tea", {"text": "green tea"})
        >>> found = store.search(("alice",), query="tea")
        >>> store.feedback(like=True, retrieval=found)
        >>> store.feedback(like=True)
        Traceback (most recent call last):
        ...
        ValueError: name the search: feedback(retrieval=<search results>) or feedback(namespace=...)
        >>> store.close()
        """
        check_feedback(like, score)  # bad input fails before any namespace is rated
        if (retrieval is None) == (namespace is None):
            raise ValueError(
                "name the search: feedback(retrieval=<search results>) or feedback(namespace=...)"
            )
        with self._lock:
            if retrieval is not None:
                if not isinstance(retrieval, SearchResults):
                    raise TypeError(
                        "retrieval= takes what SolarStore.search() returned, got "
                        f"{type(retrieval).__name__}"
                    )
                if not retrieval.retrievals:
                    raise ValueError(
                        "that search made no retrieval to rate: only a search(query=...) "
                        "that returned items can be rated"
                    )
                rated = list(retrieval.retrievals)
            else:
                assert namespace is not None
                _validate_namespace(namespace)
                latest = self._latest.get(tuple(namespace))
                if latest is None:
                    raise ValueError(
                        f"no search(query=...) of this store returned items in {namespace!r}: "
                        "search first, or rate with retrieval=<what search() returned>"
                    )
                rated = [(tuple(namespace), latest)]
            memories = []
            for ns, hits in rated:  # every rating checked before any is made
                memory = self.memory(ns)
                if memory is None:
                    raise ValueError(f"namespace {ns!r} has been deleted: nothing to rate")
                memory.check_rating(hits)
                memories.append((memory, hits))
            for memory, hits in memories:
                memory.feedback(like=like, score=score, retrieval=hits)

    def close(self) -> None:
        """Stop the TTL sweeper, close the underlying store (if this object opened it; a
        ``MemoryStore`` passed in is its owner's to close). Safe to call twice."""
        self._closed = True
        self.stop_ttl_sweeper()
        if self._owned:
            self.store.close()

    # -- TTL ------------------------------------------------------------------------------------
    def sweep_ttl(self) -> int:
        """Remove the expired items of every namespace now (in each, one
        :meth:`Lifecycle.lapse <solar_core.engine.lifecycle.Lifecycle.lapse>` step, if any expired);
        returns how many went. Reads never return expired items anyway: a sweep frees room.

        Only the namespaces holding an expired item are visited (the store's index of
        deadlines says which), one step each under that namespace's own lock, not the store's:
        a call made meanwhile waits for one namespace's step at most, and only in that
        namespace. (A sweep changes nothing a read sees: reads leave expired items out.)"""
        gone = 0
        for key in self.store.due():
            namespace = scope_namespace(Scope.from_key(key))
            if namespace is None:
                continue  # a scope made by hand, not by a store: not the store's to sweep
            memory = self.memory(namespace)
            if memory is not None:
                gone += len(self._lapse(memory))
        return gone

    def start_ttl_sweeper(
        self, sweep_interval_minutes: float | None = None
    ) -> concurrent.futures.Future[None]:
        """Run :meth:`sweep_ttl` every ``sweep_interval_minutes`` (default: the ``ttl`` config's,
        else 5) in a daemon thread until :meth:`stop_ttl_sweeper` or :meth:`close`, as
        ``PostgresStore.start_ttl_sweeper`` does (a store without a ``ttl`` config sweeps
        nothing: the future is already done). Cancelling the future stops it too."""
        if self._closed:
            raise RuntimeError("this SolarStore is closed: a sweeper would have nothing to sweep")
        done: concurrent.futures.Future[None] = concurrent.futures.Future()
        if not self.ttl_config:
            done.set_result(None)
            return done
        if self._sweeper is not None and self._sweeper.is_alive():
            done.add_done_callback(lambda f: self._stop_sweeping.set() if f.cancelled() else None)
            return done
        minutes = check_ttl(
            sweep_interval_minutes
            or self.ttl_config.get("sweep_interval_minutes")
            or DEFAULT_SWEEP_MINUTES,
            "sweep_interval_minutes",
        )
        assert minutes is not None
        interval = min(minutes * 60.0, threading.TIMEOUT_MAX)
        self._stop_sweeping.clear()

        def loop() -> None:
            try:
                while not self._stop_sweeping.wait(interval):
                    try:
                        gone = self.sweep_ttl()
                        if gone:
                            logger.info("SolarStore swept %d expired items", gone)
                    except Exception:  # keep sweeping: a failed sweep is retried next time
                        logger.exception("SolarStore TTL sweep failed")
                if not done.done():  # (a cancelled future already is)
                    done.set_result(None)
            except BaseException as err:  # the thread ends: say why through the future
                if not done.done():
                    done.set_exception(err)

        self._sweeper = threading.Thread(target=loop, name="solar-store-ttl", daemon=True)
        self._sweeper.start()
        done.add_done_callback(lambda f: self._stop_sweeping.set() if f.cancelled() else None)
        return done

    def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        """Stop the sweeper thread; whether it stopped (or was not running) within
        ``timeout`` seconds (``None``: wait as long as it takes)."""
        sweeper = self._sweeper
        if sweeper is None or not sweeper.is_alive():
            return True
        self._stop_sweeping.set()
        sweeper.join(timeout)
        if sweeper.is_alive():
            return False
        self._sweeper = None
        return True

    def _lapse(self, memory: SolarMemory) -> list[str]:
        """Remove ``memory``'s expired items (a logged step, only if some expired)."""
        now = memory.now()
        # The records, not items(): no policy statistics to build on every put.
        due = any(_lapsed(record, now) for _, record in memory.records())
        return memory.lifecycle.lapse() if due else []

    def _refresh(self, memory: SolarMemory, items: Sequence[MemoryItem]) -> None:
        """Restart the TTL of ``items`` returned by a read: ``valid_until = now + ttl``, one
        logged renewal step for them all (items without a TTL are left as they are)."""
        # `seen`: the deadline read, renewed only if nobody re-put or renewed the item since
        seen = {
            i.id: i.valid_until for i in items if i.metadata.get(TTL) and i.valid_until is not None
        }
        if seen:
            lifetimes = {i.id: i.metadata[TTL] * 60.0 for i in items if i.id in seen}
            memory.lifecycle.renew(lifetimes, seen=seen)

    # -- operations -----------------------------------------------------------------------------
    def _get(self, op: GetOp) -> Item | None:
        memory = self.memory(op.namespace)
        if memory is None:
            return None
        try:
            stored = memory.get(op.key)
        except UnknownItemError:
            return None
        if _lapsed(stored, memory.now()):
            return None  # expired: gone for readers, even before a sweep removes it
        if op.refresh_ttl:
            self._refresh(memory, [stored])
        item: Item = _item(op.namespace, stored)
        return item

    def _texts(self, op: PutOp) -> list[str]:
        if not self._fields or op.index is False or op.value is None:
            return []
        paths = self._fields if op.index is None else [(p, tokenize_path(p)) for p in op.index]
        texts: list[str] = []
        for _, field in paths:
            texts += get_text_at_path(op.value, field)
        return [t for t in texts if t.strip()]  # a blank text says nothing: not indexed

    def _put(self, op: PutOp, *, pinned: bool) -> Decision | None:
        """Apply one put; its verdict (``None`` for a delete)."""
        namespace, key = op.namespace, op.key
        if op.value is None:
            memory = self.memory(namespace)
            if memory is not None and key in memory:
                try:
                    memory.remove(key)
                except UnknownItemError:  # gone meanwhile (another writer, an expiry): done
                    pass
            self._decided(namespace, key, None)
            return None
        minutes = check_ttl(op.ttl)
        memory = self.store.get(namespace_scope(namespace))
        # Expired items take no room (and an expired key is put anew, as a new item): the
        # namespace's expired items go first.
        self._lapse(memory)
        now = datetime.now(timezone.utc).isoformat()
        created, position = now, None
        try:  # an update keeps the item's place and creation time
            old = memory.get(key).metadata
            created, position, update = old[CREATED], old[POSITION], True
        except UnknownItemError:  # not stored (or gone meanwhile): put anew
            update = False
        if position is None:
            held = [r.metadata[POSITION] for _, r in memory.records()]  # the scope's latest
            position = 1 + max(held, default=-1)
        texts = self._texts(op)
        text = "\n".join(texts) if texts else json.dumps(op.value, sort_keys=True, default=str)
        wordless = not texts if self._fields and op.index is not False else not _says(op.value)
        capacity = memory.capacity
        if wordless and not update and capacity is not None and len(memory) >= capacity:
            # Nothing to remember ({}, {"text": ""}, no indexed field): it may take free room,
            # never a memory's (an offer could evict one to make room for it).
            refused = Decision(
                memory.stats()["steps"], False, None, None, "no text: stored only into free room"
            )
            self._decided(namespace, key, refused)
            return refused
        meta = {
            VALUE: dict(op.value),
            CREATED: created,
            UPDATED: now,
            POSITION: position,
            INDEXED: bool(texts),
        }
        valid_until = None
        if minutes is not None:
            meta[TTL] = minutes
            valid_until = memory.now() + minutes * 60.0
        category = "identity" if pinned else "context"
        # An update replaces the stored item in one logged step: a crash leaves the old value
        # or the new one, never neither (a remove and an add were two). update=True whatever
        # was read above: whether the key is stored is decided when the step runs, as another
        # writer may have put or removed it meanwhile (a plain offer if it is not there).
        decision = memory.add(
            text,
            item_id=key,
            metadata=meta,
            category=category,
            valid_until=valid_until,
            update=True,
        )
        self._decided(namespace, key, decision)
        return decision

    def _candidates(
        self, op: SearchOp, wanted: Callable[[Mapping[str, Any]], bool] | None
    ) -> list[tuple[tuple[str, ...], SolarMemory, Any]]:
        out = []
        for namespace in self.namespaces(op.namespace_prefix):
            memory = self.memory(namespace)
            if memory is None:
                continue
            now = memory.now()
            items = sorted(memory.items(), key=lambda i: i.metadata[POSITION])
            for item in items:
                if _lapsed(item, now):
                    continue  # expired: gone for readers, even before a sweep removes it
                if wanted is None:
                    out.append((namespace, memory, item))
                    continue
                try:
                    kept = wanted(item.metadata[VALUE])
                except TypeError as error:  # a range on a value that is no number: name it
                    raise TypeError(f"{error} (item {item.id!r} of {namespace!r})") from None
                if kept:
                    out.append((namespace, memory, item))
        return out

    def _search(
        self, op: SearchOp, wanted: Callable[[Mapping[str, Any]], bool] | None
    ) -> list[SearchItem]:
        candidates = self._candidates(op, wanted)
        if not (op.query and self._fields):
            page = candidates[op.offset : op.offset + op.limit]
            if op.refresh_ttl:
                self._refresh_all(page)
            return SearchResults([_item(ns, item, cls=SearchItem) for ns, _, item in page])
        scored: list[tuple[float, int]] = []
        scoreless: list[int] = []
        vectors: dict[int, Any] = {}
        for n, (_, memory, item) in enumerate(candidates):
            if not item.metadata[INDEXED]:
                scoreless.append(n)
                continue
            key = id(memory)
            if key not in vectors:
                query = memory.embed_query(op.query)
                look = memory.retrieve(
                    op.query,
                    embedding=query,
                    k=max(1, len(memory)),
                    record=False,
                    min_score=self.min_score,
                )
                vectors[key] = (query, {h.id: h.score for h in look})
            score = vectors[key][1].get(item.id)
            if score is not None:  # else below the floor
                scored.append((score, n))
        ranked = sorted(scored, key=lambda s: -s[0])  # stable: candidate order on ties
        kept = ranked[op.offset : op.offset + op.limit]
        chosen: list[tuple[float | None, int]] = [(s, n) for s, n in kept]
        if scoreless and len(chosen) < op.limit:
            chosen += [(None, n) for n in scoreless[: op.limit - len(chosen)]]
        made = self._record([candidates[n] for s, n in chosen if s is not None], vectors, op.query)
        if op.refresh_ttl:
            self._refresh_all([candidates[n] for _, n in chosen])
        found = [
            _item(candidates[n][0], candidates[n][2], cls=SearchItem, score=s) for s, n in chosen
        ]
        return SearchResults(found, made)

    def _record(
        self,
        returned: Sequence[tuple[tuple[str, ...], SolarMemory, Any]],
        vectors: dict[int, Any],
        query: str,
    ) -> list[tuple[tuple[str, ...], Hits]]:
        """A search is a retrieval: each namespace credits the items it returned. Returns
        each namespace's retrieval (what ``feedback`` rates)."""
        by_memory: dict[int, tuple[tuple[str, ...], SolarMemory, list[str]]] = {}
        for namespace, memory, item in returned:
            by_memory.setdefault(id(memory), (namespace, memory, []))[2].append(item.id)
        made = []
        for key, (namespace, memory, ids) in by_memory.items():
            wanted = set(ids)
            others = [i.id for i in memory.items() if i.id not in wanted]
            hits = memory.retrieve(
                query, embedding=vectors[key][0], k=len(ids), exclude=others, min_score=None
            )
            self._latest[namespace] = hits
            made.append((namespace, hits))
        return made

    def _refresh_all(self, returned: Sequence[tuple[tuple[str, ...], SolarMemory, Any]]) -> None:
        """Restart the TTL of what a search returned: one renewal per namespace."""
        by_memory: dict[int, tuple[SolarMemory, list[MemoryItem]]] = {}
        for _, memory, item in returned:
            by_memory.setdefault(id(memory), (memory, []))[1].append(item)
        for memory, items in by_memory.values():
            self._refresh(memory, items)

    def _list(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        # a prefix condition's labels before its first "*" narrow the lookup to a key range
        known: tuple[str, ...] = ()
        for condition in op.match_conditions or ():
            if condition.match_type == "prefix":
                labels = tuple(condition.path)
                fixed = labels[: labels.index("*")] if "*" in labels else labels
                known = max(known, fixed, key=len)
        namespaces = self.namespaces(known)
        if op.match_conditions:
            namespaces = [
                ns for ns in namespaces if all(_matches(c, ns) for c in op.match_conditions)
            ]
        if op.max_depth is not None:
            namespaces = sorted({ns[: op.max_depth] for ns in namespaces})
        else:
            namespaces = sorted(namespaces)
        return namespaces[op.offset : op.offset + op.limit]


def _says(value: Any) -> bool:
    """Whether a value holds anything to remember: a non-blank string or a number somewhere.

    >>> _says({}), _says({"text": " ", "tags": []}), _says({"n": 0}), _says({"a": ["x"]})
    (False, False, True, True)
    """
    if isinstance(value, str):
        return bool(value.strip())
    if isinstance(value, Mapping):
        return any(_says(v) for v in value.values())
    if isinstance(value, list | tuple):
        return any(_says(v) for v in value)
    return value is not None


def _labels(namespace: object, *, prefix: bool = False) -> tuple[str, ...]:
    """``namespace`` as a tuple of labels, or a ``ValueError`` naming the fix: a str is refused
    (it is a sequence of its characters, so ``"42"`` would name ``("4", "2")``), and so is an
    empty namespace (an empty search prefix is every namespace)."""
    if (
        isinstance(namespace, str)
        or not isinstance(namespace, tuple | list)
        or not (namespace or prefix)
        or not all(isinstance(label, str) for label in namespace)
    ):
        fix = (namespace,) if isinstance(namespace, str) else ("users", "alice")
        raise ValueError(
            f"a namespace is a tuple of str labels, got {namespace!r}: pass e.g. {fix!r}"
        )
    return tuple(namespace)


def _check_put(op: PutOp) -> None:
    """Refuse a put the store could not apply, before any op of its batch runs (a read's TTL
    refresh or a put's sweep of expired items would otherwise be done already)."""
    labels = _labels(op.namespace)
    if not isinstance(op.key, str):
        raise TypeError(f"an item key is a str, got {type(op.key).__name__}: pass str(key)")
    if not op.key.strip():
        raise ValueError(f"an item key must not be empty or blank, got {op.key!r}")
    for text in (op.key, *labels):
        storable(text, "a namespace label or item key")
    namespace_scope(labels)  # a namespace too long to store is refused here, naming it
    if op.value is None:
        return
    if not isinstance(op.value, Mapping):
        raise TypeError(
            f"an item's value is a dict, got {type(op.value).__name__}: wrap it, e.g. "
            '{"value": ...}'
        )
    # As the item stores it (its value beside its four fields and a TTL): refused here, before
    # JSON spells out a list held many times over, if it holds more than the memory takes.
    held = {VALUE: dict(op.value), CREATED: "", UPDATED: "", POSITION: 0, INDEXED: False, TTL: 0.0}
    copy_metadata(held, "an item's value")
    try:
        json.dumps({"value": dict(op.value)}, allow_nan=True)
    except RecursionError:  # nested past what JSON encodes; the memory takes far less anyway
        raise ValueError(
            f"an item's value nests deeper than {METADATA_DEPTH} levels: store it flatter"
        ) from None
    except (TypeError, ValueError) as err:
        raise TypeError(
            f"an item's value must be JSON data (str, numbers, bools, None, lists, dicts): {err}. "
            "A SolarStore holds values as JSON, in memory too (an in-memory SolarStore is an "
            "in-memory database, so a value behaves as it will in a file): store it as such "
            "data, e.g. a date as date.isoformat()"
        ) from None
    check_ttl(op.ttl)


def _item(
    namespace: tuple[str, ...], item: Any, cls: type[Item] = Item, score: float | None = None
) -> Any:
    meta = item.metadata
    fields = dict(
        value=dict(meta[VALUE]),
        key=item.id,
        namespace=namespace,
        created_at=datetime.fromisoformat(meta[CREATED]),
        updated_at=datetime.fromisoformat(meta[UPDATED]),
    )
    if cls is SearchItem:
        return SearchItem(**fields, score=score)
    return Item(**fields)


def _matches(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    """A namespace against a prefix or suffix condition (``"*"`` matches any label)."""
    path = condition.path
    if len(namespace) < len(path):
        return False
    if condition.match_type == "prefix":
        pairs = zip(namespace, path, strict=False)
    elif condition.match_type == "suffix":
        pairs = zip(reversed(namespace), reversed(path), strict=False)
    else:
        raise ValueError(f"Unsupported match type: {condition.match_type}")
    return all(p == "*" or label == p for label, p in pairs)


def _search_filter(wanted: object) -> Callable[[Mapping[str, Any]], bool]:
    """``search(filter=...)`` checked and compiled into a test of an item's value, by
    LangGraph's rule (``InMemoryStore``'s, kept on purpose: not
    :func:`solar_core.retrieval.filters.matches`):

    - a plain value, or a list matched element by element, compares by ``==`` (``1 == 1.0 ==
      True``, ``"5" != 5``), exactly for any number (``10**400`` is not ``1e308``);
    - a dict with ``$`` keys holds operators: ``$eq``/``$ne`` compare by ``==``, and
      ``$gt``/``$gte``/``$lt``/``$lte`` compare numbers as ``float()`` reads them (ints, floats,
      bools, numeric strings such as ``"5"`` or ``"1e3"``), exactly, however large;
    - any other dict matches a nested dict key by key.

    The filter is data (str, numbers, bools, ``None``, lists, dicts with str keys), at most
    :data:`~solar_core.retrieval.filters.MAX_DEPTH` levels deep with at most
    :data:`~solar_core.retrieval.filters.MAX_VALUES` values, its range operands numbers: anything
    else (a filter inside itself, an object, an unknown operator) is refused with a
    ``TypeError``/``ValueError`` before the search does anything. Matching an item costs at
    most the filter's size. As in ``InMemoryStore``, a range operator on an item whose field is
    missing or holds no number is an error, not a miss: a ``TypeError`` naming the field.

    >>> test = _search_filter({"n": {"$gt": 2}, "tag": "a"})
    >>> test({"n": 10**400, "tag": "a"}), test({"n": "5", "tag": "a"}), test({"n": 1, "tag": "a"})
    (True, True, False)
    >>> _search_filter({"n": {"$in": [1]}})
    Traceback (most recent call last):
    ...
    ValueError: Unsupported operator: $in at 'n' (use one of $eq, $ne, $gt, $gte, $lt, $lte)
    """
    if not isinstance(wanted, Mapping):
        raise TypeError(
            "a search filter is a mapping of value keys to what they must be, e.g. "
            f"{{'topic': 'billing'}}, got {type(wanted).__name__}"
        )
    checked = plain(wanted, "")  # data, not too deep nor too big, not inside itself: a copy
    fields = [(key, _value_test(value, key)) for key, value in checked.items()]

    def test(value: Mapping[str, Any]) -> bool:
        get = value.get
        return all(field(get(key)) for key, field in fields)

    return test


#: the filter operators of LangGraph's stores
_OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")
_ORDER: dict[str, Callable[[Any, Any], bool]] = {
    "$gt": operator.gt,
    "$gte": operator.ge,
    "$lt": operator.lt,
    "$lte": operator.le,
}


#: the plain values a checked filter holds besides lists and dicts
_SCALARS = frozenset({str, int, float, bool, type(None), Fraction})


def _value_test(wanted: Any, where: str) -> Callable[[Any], bool]:
    """The test of a checked (plain, acyclic, shallow) filter value at the path ``where``."""
    if isinstance(wanted, dict):
        if any(key.startswith("$") for key in wanted):
            for key in wanted:
                if key not in _OPERATORS:
                    raise ValueError(
                        f"Unsupported operator: {key} at {where!r} (use one of "
                        f"{', '.join(_OPERATORS)})"
                    )
            tests = [_operator_test(op, operand, where) for op, operand in wanted.items()]
            return lambda value: all(test(value) for test in tests)
        fields = [(key, _value_test(w, f"{where}.{key}")) for key, w in wanted.items()]
        return lambda value: (
            isinstance(value, dict) and all(test(value.get(key)) for key, test in fields)
        )
    if isinstance(wanted, list):
        n = len(wanted)
        if all(type(w) in _SCALARS for w in wanted):  # the usual list: no test per element
            return lambda value: (
                isinstance(value, list | tuple)
                and len(value) == n
                and all(v == w for v, w in zip(value, wanted, strict=False))
            )
        tests = [_value_test(w, f"{where}[{i}]") for i, w in enumerate(wanted)]
        return lambda value: (
            isinstance(value, list | tuple)
            and len(value) == n
            and all(test(v) for test, v in zip(tests, value, strict=False))
        )
    return lambda value: bool(value == wanted)


def _operator_test(op: str, operand: Any, where: str) -> Callable[[Any], bool]:
    if op == "$eq":
        return lambda value: bool(value == operand)
    if op == "$ne":
        return lambda value: bool(value != operand)
    bound = _real(operand)
    if bound is None:
        raise ValueError(
            f"filter operator {op!r} at {where!r} compares numbers, got {shown(operand)}: "
            "pass a number (or a str float() reads, such as '5')"
        )
    compare = _ORDER[op]

    def in_range(value: Any) -> bool:
        kind = type(value)
        if kind is int or kind is float:  # the usual case, compared exactly
            return compare(value, bound)
        real = _real(value)
        if real is None:
            raise TypeError(
                f"filter operator {op!r} at {where!r} compares numbers, but an item holds "
                f"{shown(value)} there: filter by range only on a field every item searched "
                "holds as a number, or use $eq/$ne (a range on a missing or non-numeric value "
                "is an error, as in LangGraph's InMemoryStore)"
            )
        return compare(real, bound)

    return in_range


def _real(value: object) -> int | float | Fraction | None:
    """``value`` as the number LangGraph's range operators read with ``float()`` (a bool is
    0 or 1, a str is parsed), but exact: an int stays an int, so ``10**400`` compares rightly
    instead of overflowing. ``None`` if ``float()`` would refuse it."""
    if type(value) is bool:
        return int(value)
    real = number(value)
    if real is not None:
        return real
    if isinstance(value, str):
        try:
            return float(str.__str__(value))  # never overflows: "1e400" is inf
        except ValueError:
            return None
    return None
