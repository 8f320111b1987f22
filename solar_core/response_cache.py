"""A scoped semantic response cache: answer again what was answered before, never across scopes.

How the response cache answers, in three tiers:

- tier 1: the exact (normalised) query was answered before in this scope;
- tier 2: a stored query is more similar than ``threshold`` (cosine, 0.95 by default);
- tier 3: nothing cached, so ``generate`` answers and the answer is stored.

Each scope (e.g. ``{"user": "alice", "org": "acme"}``) has its own entries, at most ``capacity``
(5,000), evicting the oldest first. A session that already has turns skips tiers 1 and 2 and does
not seed the cache: its answers depend on the transcript. There is no flush verb. When a new fact
lands in a scope (:meth:`ResponseCache.learn`, or automatically from a memory connected with
:meth:`ResponseCache.watch`), the entries it relates to are evicted. An entry is related when
the fact's cosine to the entry's query or to its response is at least ``relate`` (0.5).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from .embedder import Embedder, resolve_embedder
from .store import VectorStore
from .validation import check_k, check_text, unit_rows

F32 = npt.NDArray[np.float32]
ScopeKey = tuple[tuple[str, str], ...]


def normalise(query: str) -> str:
    """The tier-1 key: lower case, single spaces, no trailing punctuation.

    >>> normalise("  What plan am I on? ")
    'what plan am i on'
    """
    return " ".join(query.lower().split()).rstrip(" ?!.")


def scope_key(scope: Mapping[str, str] | None) -> ScopeKey:
    """A hashable, order-independent key for ``scope`` (str keys and values only).

    >>> scope_key({"user": "a", "org": "x"}) == scope_key({"org": "x", "user": "a"})
    True
    """
    if scope is None:
        return ()
    if not isinstance(scope, Mapping):
        raise TypeError(f"scope must be a mapping of str to str, got {type(scope).__name__}")
    for k, v in scope.items():
        if not isinstance(k, str) or not isinstance(v, str):
            raise TypeError(f"scope keys and values must be str, got {k!r}: {v!r}")
    return tuple(sorted(scope.items()))


@dataclass(frozen=True)
class Resolution:
    """How a query was answered: ``tier`` 1, 2 (``cached``) or 3 (generated), the similarity of
    the cached query that answered it (1.0 for tier 1, ``None`` for tier 3)."""

    query: str
    response: Any
    tier: int
    cached: bool
    similarity: float | None
    cached_query: str | None = None


@dataclass
class _Entry:
    query: str
    response: Any


@dataclass
class _Scope:
    queries: VectorStore
    responses: VectorStore
    exact: dict[str, str] = field(default_factory=dict)  # normalised query -> entry id
    order: OrderedDict[str, None] = field(default_factory=OrderedDict)  # oldest first


class ResponseCache:
    """The scoped semantic response cache (see the module docstring).

    Args:
        embedder: as for :class:`~solar_core.SolarMemory` (``None`` = MiniLM, ``"hash"``, ...).
        threshold: tier-2 cosine similarity a stored query must exceed.
        capacity: most entries per scope; the oldest go first.
        enabled: ``False`` takes the cache out of the path (every query is generated).
        relate: a new fact evicts the entries whose query or response it is at least this
            similar to.

    >>> cache = ResponseCache("hash", relate=0.3)   # word-hash vectors: a lower bar than MiniLM's
    >>> alice = {"user": "alice"}
    >>> cache.resolve("What plan am I on?", lambda q: "Enterprise", scope=alice).tier
    3
    >>> cache.resolve("what plan am i on", lambda q: "?", scope=alice).response   # tier 1
    'Enterprise'
    >>> cache.resolve("What plan am I on?", lambda q: "Free", scope={"user": "bob"}).response
    'Free'
    >>> cache.learn("Alice's favourite colour is green", scope=alice)   # unrelated: kept
    0
    >>> cache.learn("I am on the Team plan now", scope=alice)   # related: her entry goes
    1
    >>> cache.resolve("What plan am I on?", lambda q: "Team", scope=alice).tier
    3
    """

    def __init__(
        self,
        embedder: object = None,
        *,
        threshold: float = 0.95,
        capacity: int = 5000,
        enabled: bool = True,
        relate: float = 0.5,
        trace_size: int = 1000,
        clock: Callable[[], float] = time.time,
        trace_retention_days: float = 30.0,
    ) -> None:
        for name, value in (("threshold", threshold), ("relate", relate)):
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise TypeError(f"{name} must be a number, got {type(value).__name__}")
            if not -1.0 <= float(value) <= 1.0:
                raise ValueError(f"{name} must be a cosine in [-1, 1], got {value}")
        if not isinstance(enabled, bool):
            raise TypeError(f"enabled must be a bool, got {enabled!r}")
        self._embedder: Embedder = resolve_embedder(embedder)
        self.dim = self._embedder.dim
        self.threshold = float(threshold)
        self.capacity = check_k(capacity, "capacity")
        self.enabled = enabled
        self.relate = float(relate)
        self._scopes: dict[ScopeKey, _Scope] = {}
        self._lock = threading.RLock()
        self._ids = 0
        self._trace: deque[dict[str, Any]] = deque(maxlen=check_k(trace_size, "trace_size"))
        if not callable(clock):
            raise TypeError(f"clock must be callable, got {type(clock).__name__}")
        self._clock = clock
        if isinstance(trace_retention_days, bool) or not isinstance(
            trace_retention_days, int | float
        ):
            raise TypeError("trace_retention_days must be a number")
        if not trace_retention_days > 0:
            raise ValueError(f"trace_retention_days must be > 0, got {trace_retention_days}")
        self.trace_retention_days = float(trace_retention_days)

    # -- embedding ----------------------------------------------------------------------------
    def _embed(self, text: str) -> F32:
        row: F32 = unit_rows(self._embedder.embed([text]), self.dim, 1)[0]
        return row

    def _unit(self, text: str, vector: object) -> F32:
        if vector is None:
            return self._embed(text)
        row: F32 = unit_rows(np.asarray(vector, dtype=np.float32)[None, :], self.dim, 1)[0]
        return row

    def _scope(self, key: ScopeKey) -> _Scope:
        scope = self._scopes.get(key)
        if scope is None:
            # Unbounded stores that grow on demand (the cache enforces its own cap): a bounded
            # store would allocate all 5,000 rows for a scope holding one entry.
            scope = _Scope(
                VectorStore(self.dim, None, initial_slots=16),
                VectorStore(self.dim, None, initial_slots=16),
            )
            self._scopes[key] = scope
        return scope

    # -- the tiers ----------------------------------------------------------------------------
    def lookup(
        self,
        query: str,
        *,
        scope: Mapping[str, str] | None = None,
        session_turns: int = 0,
        vector: object = None,
    ) -> Resolution | None:
        """A cached answer for ``query`` in ``scope`` (tier 1 or 2), or ``None``. ``vector`` is
        the query's embedding when the caller already has it."""
        query = check_text(query, "query")
        key = scope_key(scope)
        if not self.enabled or session_turns:
            return None
        given = None if vector is None else self._unit(query, vector)  # checked on every path
        with self._lock:
            found = self._scopes.get(key)
            if found is None or len(found.queries) == 0:
                return None
            entry_id = found.exact.get(normalise(query))
            if entry_id is not None:
                entry: _Entry = found.queries.payload_at(found.queries.slot_of(entry_id))
                return Resolution(query, entry.response, 1, True, 1.0, entry.query)
        unit = given if given is not None else self._embed(query)  # outside the lock: slow part
        with self._lock:
            found = self._scopes.get(key)
            if found is None or len(found.queries) == 0:
                return None
            slots, scores = found.queries.nearest(unit, 1)
            if not scores or scores[0] <= self.threshold:
                return None
            entry = found.queries.payload_at(int(slots[0]))
            return Resolution(query, entry.response, 2, True, float(scores[0]), entry.query)

    def store(
        self,
        query: str,
        response: Any,
        *,
        scope: Mapping[str, str] | None = None,
        session_turns: int = 0,
        response_text: str | None = None,
        vector: object = None,
    ) -> bool:
        """Cache ``response`` for ``query`` in ``scope``; ``False`` when it is not cached
        (disabled, or a session with turns). ``response_text`` (default ``str(response)``) is
        what invalidation compares new facts with."""
        query = check_text(query, "query")
        key = scope_key(scope)
        if not self.enabled or session_turns:
            return False
        if response_text is not None and not isinstance(response_text, str):
            raise TypeError(f"response_text must be a str, got {type(response_text).__name__}")
        text = response_text if response_text is not None else str(response)
        q_vec = self._unit(query, vector)
        # A response with no text is related to what its query is related to.
        r_vec = self._embed(text) if text.strip() else q_vec
        with self._lock:
            found = self._scope(key)
            norm = normalise(query)
            old = found.exact.get(norm)
            if old is not None:
                self._drop(found, old)
            while len(found.queries) >= self.capacity:
                self._drop(found, next(iter(found.order)))
            self._ids += 1
            entry_id = f"c{self._ids}"
            found.queries.insert(entry_id, q_vec, _Entry(query, response))
            found.responses.insert(entry_id, r_vec, None)
            found.exact[norm] = entry_id
            found.order[entry_id] = None
            return True

    def resolve(
        self,
        query: str,
        generate: Callable[..., Any] | Any,
        *,
        scope: Mapping[str, str] | None = None,
        session_turns: int = 0,
        memory: Any = None,
        k: int | None = None,
    ) -> Resolution:
        """Answer ``query``: tier 1, else tier 2, else tier 3, which generates and caches the
        answer unless the session has turns.

        ``generate`` is a callable or any object with ``invoke`` (e.g. a LangChain runnable).
        Without ``memory`` it gets the query. With a ``memory`` (tier 3 is then "retrieval +
        generate"), it gets ``(query, hits)`` as a callable, or ``{"query": ..., "hits": ...}``
        through ``invoke``. Every resolution is traced (:meth:`trace`), with the ids of the hits
        of a tier-3 answer.
        """
        hit = self.lookup(query, scope=scope, session_turns=session_turns)
        ids: list[str] = []
        if hit is None:
            if memory is not None:
                hits = memory.retrieve(query, k=k)
                ids = [h.id for h in hits]
                answer = (
                    generate.invoke({"query": query, "hits": hits})
                    if hasattr(generate, "invoke")
                    else generate(query, hits)
                )
            else:
                answer = generate.invoke(query) if hasattr(generate, "invoke") else generate(query)
            self.store(query, answer, scope=scope, session_turns=session_turns)
            hit = Resolution(query, answer, 3, False, None)
        with self._lock:
            self._trace.append(
                {
                    "kind": "response",
                    "at": self._clock(),
                    "scope": dict(scope_key(scope)),
                    "query": query,
                    "tier": hit.tier,
                    "cached": hit.cached,
                    "similarity": hit.similarity,
                    "response": hit.response,
                    "ids": ids,
                }
            )
        return hit

    # -- invalidation -------------------------------------------------------------------------
    def learn(
        self, fact: str, *, scope: Mapping[str, str] | None = None, vector: object = None
    ) -> int:
        """A new fact landed in ``scope``: evict the entries it relates to, in ``scope`` and in
        every narrower scope (``{"user": "alice"}`` reaches ``{"user": "alice", "llm": ...}``);
        returns how many.

        ``vector`` is the fact's embedding when the caller has it (a connected memory does).
        """
        key = set(scope_key(scope))
        unit = self._unit(check_text(fact, "fact"), vector)
        evicted = 0
        with self._lock:
            for scope_items, found in self._scopes.items():
                if not key <= set(scope_items) or len(found.queries) == 0:
                    continue
                doomed = set()
                for store in (found.queries, found.responses):
                    sims = store.similarities(unit)
                    for slot in np.flatnonzero(sims >= self.relate).tolist():
                        doomed.add(store.id_at(slot))
                for entry_id in doomed:
                    self._drop(found, entry_id)
                evicted += len(doomed)
        return evicted

    def watch(self, memory: Any, *, scope: Mapping[str, str] | None = None) -> None:
        """Invalidate this cache's ``scope`` (and narrower ones) automatically whenever
        ``memory`` stores an item. Every stored item counts as a fact, conversation turns
        included: store turns in a memory the cache does not watch if they should not
        invalidate answers. A pickled memory does not keep the connection: watch it again."""
        key = scope_key(scope)
        if memory.dim != self.dim:
            raise ValueError(f"memory dim {memory.dim} differs from the cache's {self.dim}")

        def on_store(item_id: str, text: str, vector: F32, metadata: Mapping[str, Any]) -> None:
            self.learn(text, scope=dict(key), vector=vector)

        memory.subscribe(on_store)

    def _drop(self, found: _Scope, entry_id: str) -> None:
        entry: _Entry = found.queries.payload_at(found.queries.slot_of(entry_id))
        found.queries.remove(found.queries.slot_of(entry_id))
        found.responses.remove(found.responses.slot_of(entry_id))
        found.order.pop(entry_id, None)
        norm = normalise(entry.query)
        if found.exact.get(norm) == entry_id:
            del found.exact[norm]

    # -- inspection ---------------------------------------------------------------------------
    def size(self, scope: Mapping[str, str] | None = None) -> int:
        """Entries cached in ``scope``."""
        with self._lock:
            found = self._scopes.get(scope_key(scope))
            return 0 if found is None else len(found.queries)

    def clear(self) -> None:
        """Forget every entry of every scope (for LangChain's ``BaseCache.clear``)."""
        with self._lock:
            self._scopes.clear()

    def sweep_traces(self) -> int:
        """Drop the response traces older than ``trace_retention_days``; returns how many."""
        with self._lock:
            limit = self._clock() - self.trace_retention_days * 86_400.0
            n = 0
            while self._trace and self._trace[0]["at"] < limit:
                self._trace.popleft()
                n += 1
            return n

    def trace(self) -> list[dict[str, Any]]:
        """The latest resolutions, oldest first."""
        with self._lock:
            return list(self._trace)
